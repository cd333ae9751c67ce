/**
 * One process's memory budget for scores (SVC_MAX_SCORE_MEMORY): a score is admitted on the
 * native library's estimate of its needs, before anything per frame is allocated, and holds its
 * share until its scope closes. The server, the controller and the local `svc` share this rule.
 */
import { Effect, Ref, type Scope } from "effect"
import { ScoreMemoryBusy, ScoreTooLarge } from "./errors.ts"

/** Admits `bytes` for the enclosing scope, or refuses: more than the whole budget, or no room now. */
export type AdmitMemory = (bytes: number) => Effect.Effect<void, ScoreTooLarge | ScoreMemoryBusy, Scope.Scope>

/** A budget's admission, and the bytes it has free now (svc-node tells the controller when it pulls). */
export interface MemoryLedger {
  readonly admit: AdmitMemory
  readonly free: Effect.Effect<number>
}

/** A budget of `budget` bytes shared by every score admitted through the returned function. */
export const memoryBudget = (budget: number): Effect.Effect<AdmitMemory> =>
  Effect.map(memoryLedger(budget), (ledger) => ledger.admit)

/** `memoryBudget` with the bytes free now. */
export const memoryLedger = (budget: number): Effect.Effect<MemoryLedger> =>
  Effect.map(
    Ref.make(0),
    (inUse): MemoryLedger => ({
      free: Effect.map(Ref.get(inUse), (used) => budget - used),
      admit: (bytes) =>
        bytes > budget
          ? Effect.fail(new ScoreTooLarge({ needed: bytes, budget }))
          : Effect.acquireRelease(
              Effect.flatMap(
                Ref.modify(inUse, (used): readonly [boolean, number] =>
                  used + bytes <= budget ? [true, used + bytes] : [false, used]
                ),
                (admitted) => (admitted ? Effect.void : Effect.fail(new ScoreMemoryBusy({ needed: bytes, budget })))
              ),
              () => Ref.update(inUse, (used) => used - bytes)
            )
    })
  )
