/**
 * The file job: a pair of raw YUV / Y4M inputs, already opened and checked by modules/inputs,
 * read by the native library from their descriptors on its own threads; this side starts, polls
 * and collects. Interrupting a score cancels it.
 */
import { Duration, Effect } from "effect"
import type { ScoreError } from "./errors.ts"
import type { ScoreHooks } from "./hooks.ts"
import type { NativeScorerLibrary } from "./library.ts"
import { acquireModels, type ModelSet } from "./model-set.ts"
import type { ModelStore } from "./models.ts"
import { cString, errorBuffer, handleSlot, type NativeSymbols, NativeStatus, type Pointer } from "./native.ts"
import { failureFor, nativeError, nextDelay, optionsArray } from "./native-job.ts"
import { collectResult } from "./collect.ts"
import type { ScoreResult } from "./result.ts"
import type { RawGeometry, ScoreJob } from "./request.ts"

/**
 * The two inputs of a file job, each opened once and checked by modules/inputs: only their
 * descriptors reach the native library. `referenceSize`: the reference's frame size as its
 * header says (a Y4M's), for `model: "auto"` when the request gives no geometry.
 */
export interface FilePair {
  readonly reference: { readonly fd: number }
  readonly distorted: { readonly fd: number }
  readonly referenceSize?: Pick<RawGeometry, "width" | "height">
}

export const makeFileScoring = (
  symbols: NativeSymbols,
  models: ModelStore,
  info: NativeScorerLibrary["info"],
  frameLimit: number
) => {
  /** A native job on the two descriptors, validating them on a library thread; freed with the scope. */
  const openJob = (job: ScoreJob, set: ModelSet, pair: FilePair) =>
    Effect.acquireRelease(
      Effect.suspend(() => {
        const slot = handleSlot()
        const error = errorBuffer()
        const options = optionsArray(job, frameLimit)
        const status = symbols.svc_job_open_fd(
          set.handle,
          pair.reference.fd,
          cString(job.reference),
          pair.distorted.fd,
          cString(job.distorted),
          options,
          options.length,
          slot.slot,
          error.buffer,
          error.length
        )
        const handle = slot.pointer()
        if (status !== NativeStatus.ok || handle === null) return Effect.fail(failureFor(status, error.text()))
        return Effect.succeed(handle)
      }),
      (handle) => Effect.sync(() => symbols.svc_job_free(handle))
    )

  /** Waits (polling, backing off) while the library validates the inputs on its own thread. */
  const awaitOpened = (handle: Pointer): Effect.Effect<void, ScoreError> =>
    Effect.gen(function* () {
      let delay = 1
      for (;;) {
        const opened = symbols.svc_job_opened(handle)
        if (opened === 1) return
        if (opened < 0) return yield* Effect.fail(failureFor(opened, nativeError(symbols, handle)))
        yield* Effect.sleep(Duration.millis(delay))
        delay = nextDelay(delay)
      }
    })

  const run = (handle: Pointer) =>
    Effect.suspend(() => {
      const error = errorBuffer()
      const status = symbols.svc_job_run(handle, error.buffer, error.length)
      return status === NativeStatus.ok ? Effect.void : Effect.fail(failureFor(status, error.text()))
    })

  const awaitDone = <E>(handle: Pointer, hooks: ScoreHooks<E>): Effect.Effect<void, ScoreError> =>
    Effect.gen(function* () {
      let delay = 1
      let reported = -1
      for (;;) {
        const state = symbols.svc_job_poll(handle)
        if (state === 1) return
        if (state < 0) return yield* Effect.fail(failureFor(state, nativeError(symbols, handle)))
        const done = symbols.svc_job_frames_done(handle)
        if (hooks.onProgress && done !== reported) {
          reported = done
          yield* hooks.onProgress(done)
        }
        yield* Effect.sleep(Duration.millis(delay))
        delay = nextDelay(delay)
      }
    }).pipe(Effect.onInterrupt(() => Effect.sync(() => symbols.svc_job_cancel(handle))))

  /**
   * Scores a validated request on its opened pair; the result follows the request's precision
   * (no thumbnails: modules/inputs renders them from the inputs). The job's memory is admitted
   * before anything per frame is allocated.
   */
  const score = <E = never>(
    job: ScoreJob,
    pair: FilePair,
    hooks: ScoreHooks<E> = {}
  ): Effect.Effect<ScoreResult, ScoreError | E> =>
    Effect.scoped(
      Effect.gen(function* () {
        const set = yield* acquireModels(symbols, models, job, pair.referenceSize)
        const handle = yield* openJob(job, set, pair)
        yield* awaitOpened(handle)
        if (hooks.admitMemory) yield* hooks.admitMemory(Number(symbols.svc_job_memory(handle)))
        yield* run(handle)
        yield* awaitDone(handle, hooks)
        return { ...collectResult(symbols, handle, job, set, info), thumbnails: [] }
      })
    ).pipe(Effect.withSpan("scorer.score"))

  /**
   * Frames a file job of `job` would score (after the skips and frame_cnt), its inputs checked
   * as a score checks them: a segment job's plan of raw and Y4M inputs.
   */
  const countFrames = (job: ScoreJob, pair: FilePair): Effect.Effect<number, ScoreError> =>
    Effect.scoped(
      Effect.gen(function* () {
        const set = yield* acquireModels(symbols, models, job, pair.referenceSize)
        const handle = yield* openJob(job, set, pair)
        yield* awaitOpened(handle)
        return Number(symbols.svc_job_input_frames(handle))
      })
    )

  return { score, countFrames }
}
