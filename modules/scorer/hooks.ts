/** What a caller of the scorer hooks into a score: progress, memory admission, the memory budget. */
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
  /**
   * The whole memory budget (SVC_MAX_SCORE_MEMORY), for refusals decided before `admitMemory`
   * can be asked (an input whose decoding can never fit, known from its headers).
   */
  readonly memoryBudget?: number
}
