import { Duration, Effect, Stream } from "effect"
import { type ScoreError, ScorerInternal } from "./errors.ts"
import type { ScoreHooks } from "./hooks.ts"
import type { NativeScorerLibrary } from "./library.ts"
import { acquireModels } from "./model-set.ts"
import type { ModelStore } from "./models.ts"
import { errorBuffer, type NativeSymbols, NativeStatus } from "./native.ts"
import { acquireStream, failureFor, nativeError, nextDelay } from "./native-job.ts"
import type { ScoreResult } from "./result.ts"
import type { ScoreJob } from "./request.ts"
import { collectResult } from "./collect.ts"
import { type Feed, judgeFeed, startFeed } from "./stream.ts"

// ---------------------------------------------------------------------------------------------
// Ladders: frames of one reference picture and N renditions' pictures pushed to (or read by) one
// native ladder; the reference is loaded and its motion computed once per frame
// (modules/inputs/ladder.ts opens and decodes the inputs).
// ---------------------------------------------------------------------------------------------

/** One reference frame and the same frame of every rendition, back to back in `distorted`. */
export interface LadderFrame {
  readonly reference: Uint8Array
  readonly distorted: Uint8Array
}

/** Every rendition's result, and what the native pass did (the proof that it was one). */
export interface LadderScores {
  readonly results: ReadonlyArray<ScoreResult>
  /** Reference frames loaded by the native pass (once each, whatever the number of renditions). */
  readonly referenceLoads: number
  /** Motion differences of consecutive reference frames computed (once each). */
  readonly motionDiffs: number
  /** Reference-side analyses of the extractors that share them (VIF's and ADM's statistics of the
   * reference picture): once per frame per such extractor, whatever the number of renditions. */
  readonly referenceAnalyses: number
  /** Frames pushed (reference frames read). */
  readonly framesPushed: number
}

/**
 * The title frames one rendition pairs, [first, first + frames): an aligned ladder's rendition is
 * read and scored over its own overlap with the reference only (svc_ladder_range).
 */
export interface LadderRange {
  readonly first: number
  readonly frames: number
}

/**
 * How a rendition's results are numbered and cut: its own frames count from its first, so a
 * segment's piece of it starts at its own index of the segment's first frame it pairs (none: it
 * pairs no frame of the segment, its piece is empty).
 */
const renditionJob = (job: ScoreJob, range: LadderRange | undefined): ScoreJob => {
  const { segment } = job
  if (range === undefined || segment === undefined) return job
  const first = Math.max(segment.first, range.first) - range.first
  const end = Math.min(segment.first + segment.frames, range.first + range.frames) - range.first
  return { ...job, segment: { ...segment, first, frames: Math.max(0, end - first) } }
}

/** Ladder progress hooks; `onFramesRead`: frames of every input read so far (a fed ladder's reading thread). */
type LadderHooks<H> = Pick<ScoreHooks<H>, "admitMemory" | "onProgress"> & {
  readonly onFramesRead?: (frames: number) => Effect.Effect<void>
}

export const makeLadderScoring =
  (symbols: NativeSymbols, models: ModelStore, info: NativeScorerLibrary["info"], frameLimit: number) =>
  /**
   * Scores `input` (the job's raw geometry, required, is every picture's) as a ladder of
   * `renditions`: frames pushed from a stream, or a feed the library reads (the reference, then
   * each rendition). The ladder's memory is admitted before its first picture is allocated.
   * `ranges`: the title frames each rendition pairs (none: every rendition pairs every frame).
   */
  <E, R, H = never>(
    job: ScoreJob,
    renditions: number,
    input: Stream.Stream<LadderFrame, E, R> | Feed,
    hooks: LadderHooks<H> = {},
    ranges?: ReadonlyArray<LadderRange>
  ): Effect.Effect<LadderScores, ScoreError | E | H, R> =>
    Effect.scoped(
      Effect.gen(function* () {
        const set = yield* acquireModels(symbols, models, job)
        const { handle, view } = yield* acquireStream(symbols, (options, out) =>
          symbols.svc_ladder_create(
            set.handle,
            renditions,
            options,
            options.length,
            out.slot,
            out.error,
            out.errorLength
          )
        )(job, frameLimit)
        for (const [r, range] of (ranges ?? []).entries()) {
          const error = errorBuffer()
          const status = symbols.svc_ladder_range(handle, r, range.first, range.frames, error.buffer, error.length)
          if (status !== NativeStatus.ok) return yield* Effect.fail(failureFor(status, error.text()))
        }
        // A ladder's frame is N+1 pictures and takes a worker N times longer than a pair: a
        // window of a frame per worker and two more keeps the workers fed. The queued frames (in
        // the library and the one being assembled here) are admitted with the library's estimate.
        const window = job.threads + 2
        const queued = (window + 2) * (renditions + 1) * Number(symbols.svc_stream_frame_bytes(handle))
        const feed = "verdict" in input ? input : undefined
        if (hooks.admitMemory)
          yield* hooks.admitMemory(Number(symbols.svc_job_memory(view)) + queued + (feed?.memory ?? 0))
        if (feed?.start) yield* feed.start
        let reported = -1
        let readReported = -1
        const progress = Effect.suspend(() => {
          const read = feed ? Number(symbols.svc_stream_frames_read(handle)) : -1
          const ready = symbols.svc_stream_frames_ready(handle)
          const reads = feed && hooks.onFramesRead && read !== readReported ? hooks.onFramesRead(read) : Effect.void
          readReported = read
          if (!hooks.onProgress || ready === reported) return reads
          reported = ready
          return Effect.zipRight(reads, hooks.onProgress(ready))
        })
        let pushed = 0
        if (feed) yield* startFeed(symbols, handle, feed)
        else {
          const frames = input as Stream.Stream<LadderFrame, E, R>
          const waitForRoom: Effect.Effect<void> = Effect.suspend(() =>
            pushed - symbols.svc_stream_frames_ready(handle) * job.subsample < window ||
            symbols.svc_stream_poll(handle) < 0
              ? Effect.void
              : Effect.zipRight(Effect.sleep(Duration.millis(1)), waitForRoom)
          )
          const push = (frame: LadderFrame): Effect.Effect<void, ScoreError> =>
            Effect.suspend(() => {
              pushed++
              const error = errorBuffer()
              const status = symbols.svc_stream_push(
                handle,
                frame.reference,
                frame.reference.byteLength,
                frame.distorted,
                frame.distorted.byteLength,
                error.buffer,
                error.length
              )
              return status === NativeStatus.ok ? progress : Effect.fail(failureFor(status, error.text()))
            })
          yield* frames.pipe(Stream.runForEach((frame) => Effect.zipRight(waitForRoom, push(frame))))
          symbols.svc_stream_finish(handle)
        }
        let delay = 1
        for (;;) {
          const state = symbols.svc_stream_poll(handle)
          if (feed && state !== 0) yield* judgeFeed(symbols, handle, view, feed, state)
          if (state === 1) break
          if (state < 0) return yield* Effect.fail(failureFor(state, nativeError(symbols, view)))
          yield* progress
          yield* Effect.sleep(Duration.millis(delay))
          delay = nextDelay(delay)
        }
        yield* progress
        const results: Array<ScoreResult> = []
        for (let r = 0; r < renditions; r++) {
          const rendition = symbols.svc_ladder_rendition(handle, r)
          if (typeof rendition !== "number")
            return yield* Effect.fail(new ScorerInternal({ detail: `svc_ladder_rendition(${r}) returned no results` }))
          results.push(collectResult(symbols, rendition, renditionJob(job, ranges?.[r]), set, info))
        }
        return {
          results,
          referenceLoads: Number(symbols.svc_ladder_reference_loads(handle)),
          motionDiffs: Number(symbols.svc_ladder_motion_diffs(handle)),
          referenceAnalyses: Number(symbols.svc_ladder_reference_analyses(handle)),
          framesPushed: feed ? Number(symbols.svc_stream_frames_read(handle)) : pushed
        }
      })
    ).pipe(Effect.withSpan("scorer.scoreLadder"))
