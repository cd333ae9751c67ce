/** What a caller of the scorer hooks into a score: progress and memory admission. */
import type { Effect, Scope } from "effect"
import type { ScoreError } from "./errors.ts"

export interface ScoreHooks<E = never> {
  /** Called as frames complete (for job progress). */
  readonly onProgress?: (framesDone: number) => Effect.Effect<void>
  /**
   * Admits a score needing `bytes` of memory (an upper estimate made before anything per frame
   * is allocated) for as long as the scope lasts, or refuses it.
   */
  readonly admitMemory?: (bytes: number) => Effect.Effect<void, E | ScoreError, Scope.Scope>
}
