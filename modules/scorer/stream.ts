import { ptr } from "bun:ffi"
import { Duration, Effect, Option, type Scope, Stream } from "effect"
import type { ScoreError } from "./errors.ts"
import type { ScoreHooks } from "./hooks.ts"
import type { NativeScorerLibrary } from "./library.ts"
import { acquireModels, checkFrameSize } from "./model-set.ts"
import type { ModelStore } from "./models.ts"
import { cString, errorBuffer, NativeInputKind, type NativeSymbols, NativeStatus, type Pointer } from "./native.ts"
import { acquireStream, failureFor, firstScoredFrame, nativeError, nextDelay } from "./native-job.ts"
import { applyPrecision } from "./precision.ts"
import type { ScoreJob } from "./request.ts"
import type { FrameScore, ScoreResult } from "./result.ts"
import { collectResult, segmentCutsOf } from "./collect.ts"
import { segmentCutMetric } from "./shots.ts"

// ---------------------------------------------------------------------------------------------
// Streams (gRPC ScoreStream): frame pairs pushed from memory, per-frame scores out as they
// become final, then the aggregate. Same native job underneath, so the numbers equal a file
// score of the same frames. Fed streams (modules/inputs: encoded inputs) are the same stream
// read by the library's own thread from descriptors: no frame byte passes through JavaScript.
// ---------------------------------------------------------------------------------------------

/** One frame of each input, every plane in raw planar layout (16-bit LE above 8 bits). */
export interface FramePair {
  readonly reference: Uint8Array
  readonly distorted: Uint8Array
}

export type StreamEvent =
  | { readonly _tag: "Frame"; readonly frame: FrameScore }
  | { readonly _tag: "Aggregate"; readonly result: ScoreResult }

/** One side of a fed stream or ladder: a descriptor the library reads on its own thread. */
export interface FedSide {
  readonly fd: number
  /** "raw" / "y4m": a regular file read with pread; "pipe": raw frames of the job's geometry, in order. */
  readonly kind: "raw" | "y4m" | "pipe"
  /** The input as the request names it, for messages ("A has N frames after skipping, B has more"). */
  readonly name: string
  /** Frames skipped at its start (a pipe's are read and discarded). */
  readonly skip: number
  /**
   * A "raw" / "y4m" side's index pipe (read end): the frames it gives, each a little-endian
   * uint32 frame index after `skip`, increasing; its end is the side's end. Without it the file
   * is read in order. The caller chooses the frames and passes none of their bytes.
   */
  readonly index?: number
}

/**
 * Judges a fed stream's outcome before it is accepted: `ends[k]` is side k's end as the library
 * saw it (-1: not read to its end; else the bytes of a partial last frame, 0 on a frame
 * boundary), `failure` the library's error, if any, and `framesRead` the frames read of every
 * side after its skip. Failing replaces the outcome: a pipe's end is the clip's end only if its
 * writer (a decoder) exited cleanly and wrote no more than its container declares.
 */
export type FeedVerdict = (
  ends: ReadonlyArray<number>,
  failure: ScoreError | undefined,
  framesRead: number
) => Effect.Effect<void, ScoreError>

/** The sides of a fed stream (the reference first) and the verdict on their ends. */
export interface Feed {
  readonly sides: ReadonlyArray<FedSide>
  readonly verdict: FeedVerdict
  /** Memory of the sides' writers (decoders), admitted with the stream's own before they start. */
  readonly memory?: number
  /** Starts the sides' writers, once the memory is admitted; they live as long as the scope. */
  readonly start?: Effect.Effect<void, ScoreError, Scope.Scope>
}

const fedKind = { raw: NativeInputKind.raw, y4m: NativeInputKind.y4m, pipe: NativeInputKind.pipe } as const

/** Starts the library's reading thread on the feed's sides (it reads its own duplicates). */
export const startFeed = (symbols: NativeSymbols, handle: Pointer, feed: Feed): Effect.Effect<void, ScoreError> =>
  Effect.suspend(() => {
    const names = feed.sides.map((side) => cString(side.name))
    const error = errorBuffer()
    const status = symbols.svc_stream_feed_indexed(
      handle,
      feed.sides.length,
      Int32Array.from(feed.sides, (side) => side.fd),
      Int32Array.from(feed.sides, (side) => fedKind[side.kind]),
      Int32Array.from(feed.sides, (side) => side.skip),
      Int32Array.from(feed.sides, (side) => side.index ?? -1),
      new BigUint64Array(names.map((name) => BigInt(ptr(name)))),
      error.buffer,
      error.length
    )
    return status === NativeStatus.ok ? Effect.void : Effect.fail(failureFor(status, error.text()))
  })

/** A fed stream's final state (1 or a failure), judged by the feed's verdict before it stands. */
export const judgeFeed = (
  symbols: NativeSymbols,
  handle: Pointer,
  view: Pointer,
  feed: Feed,
  state: number
): Effect.Effect<void, ScoreError> => {
  const ends = feed.sides.map((_, side) => Number(symbols.svc_stream_feed_end(handle, side)))
  const failure = state < 0 ? failureFor(state, nativeError(symbols, view)) : undefined
  const framesRead = Number(symbols.svc_stream_frames_read(handle))
  return Effect.zipRight(feed.verdict(ends, failure, framesRead), failure ? Effect.fail(failure) : Effect.void)
}

/** Creates a pipe for a fed stream (read end, write end; both close-on-exec, about 1 MiB). */
export const makePipe = (symbols: NativeSymbols): Effect.Effect<{ read: number; write: number }, ScoreError> =>
  Effect.suspend(() => {
    const fds = new Int32Array(2)
    const error = errorBuffer()
    const status = symbols.svc_pipe(fds, error.buffer, error.length)
    return status === NativeStatus.ok
      ? Effect.succeed({ read: fds[0] ?? -1, write: fds[1] ?? -1 })
      : Effect.fail(failureFor(status, error.text()))
  })

export const makeStreamScoring = (
  symbols: NativeSymbols,
  models: ModelStore,
  info: NativeScorerLibrary["info"],
  frameLimit: number
) => {
  /** The job's native stream, its memory admitted, and how its final frames are read out. */
  const openStream = <H>(job: ScoreJob, hooks: Pick<ScoreHooks<H>, "admitMemory">, writersMemory = 0) =>
    Effect.gen(function* () {
      if (job.geometry) yield* checkFrameSize(models, job, job.geometry)
      const set = yield* acquireModels(symbols, models, job)
      const { handle, view } = yield* acquireStream(symbols, (options, out) =>
        symbols.svc_stream_create(set.handle, options, options.length, out.slot, out.error, out.errorLength)
      )(job, frameLimit)
      if (hooks.admitMemory) yield* hooks.admitMemory(Number(symbols.svc_job_memory(view)) + writersMemory)
      const round = applyPrecision(job.precision)
      const names = Array.from({ length: symbols.svc_job_metric_count(view) }, (_, i) =>
        String(symbols.svc_job_metric_name(view, i))
      )
      let emitted = 0

      /** Frames final since the last call; only those are copied out. */
      const newlyFinal = (): ReadonlyArray<StreamEvent> => {
        const ready = symbols.svc_stream_frames_ready(handle)
        if (ready <= emitted) return []
        const columns = names.map((_, i) => {
          const values = new Float64Array(ready - emitted)
          symbols.svc_job_frame_values_from(view, i, emitted, values, values.length)
          return values
        })
        const cuts = segmentCutsOf(symbols, view, job, emitted, ready - emitted)
        const events: Array<StreamEvent> = []
        for (let frame = emitted; frame < ready; frame++) {
          const metrics = Object.fromEntries(
            names.map((name, i) => [name, round(columns[i]?.[frame - emitted] ?? Number.NaN)])
          )
          if (cuts) metrics[segmentCutMetric] = cuts[frame - emitted] ?? 0
          events.push({ _tag: "Frame", frame: { frame: firstScoredFrame(job) + frame * job.subsample, metrics } })
        }
        emitted = ready
        return events
      }

      /** After the input ends: poll (backing off like file jobs) until every frame is final. */
      const drain =
        (judge: (state: number) => Effect.Effect<void, ScoreError>) =>
        (delay: number): Effect.Effect<readonly [ReadonlyArray<StreamEvent>, Option.Option<number>], ScoreError> =>
          Effect.suspend(() => {
            const state = symbols.svc_stream_poll(handle)
            if (state < 0)
              return Effect.zipRight(judge(state), Effect.fail(failureFor(state, nativeError(symbols, view))))
            if (state === 1) {
              const result = collectResult(
                symbols,
                view,
                {
                  precision: job.precision,
                  perFrame: false,
                  subsample: job.subsample,
                  segment: job.segment,
                  shots: job.shots
                },
                set,
                info
              )
              return Effect.as(judge(state), [[...newlyFinal(), { _tag: "Aggregate", result }], Option.none()] as const)
            }
            return Effect.as(Effect.sleep(Duration.millis(delay)), [
              newlyFinal(),
              Option.some(nextDelay(delay))
            ] as const)
          })
      return { handle, view, newlyFinal, drain }
    })

  /**
   * Scores `frames` with the job's raw geometry (required); the last event is the aggregate. The
   * stream's memory is admitted (`hooks.admitMemory`) before its first picture is allocated.
   */
  const scoreStream = <E, R, H = never>(
    job: ScoreJob,
    frames: Stream.Stream<FramePair, E, R>,
    hooks: Pick<ScoreHooks<H>, "admitMemory"> = {}
  ): Stream.Stream<StreamEvent, ScoreError | E | H, R> =>
    Stream.unwrapScoped(
      Effect.gen(function* () {
        const { handle, newlyFinal, drain } = yield* openStream(job, hooks)

        // Backpressure: at most `window` pushed frames wait to be scored, so memory stays a few
        // frames whatever the clip's length and a producer (a decoder, a client) waits instead.
        // Pushes past frame_cnt are dropped by the library at once and never wait.
        const window = job.threads * 2 + 4
        let pushed = 0
        const waitForRoom: Effect.Effect<void> = Effect.suspend(() =>
          pushed - symbols.svc_stream_frames_ready(handle) * job.subsample < window ||
          (job.frameCount > 0 && pushed >= job.frameCount) ||
          symbols.svc_stream_poll(handle) < 0
            ? Effect.void
            : Effect.zipRight(Effect.sleep(Duration.millis(1)), waitForRoom)
        )

        const push = (pair: FramePair): Effect.Effect<ReadonlyArray<StreamEvent>, ScoreError> =>
          Effect.suspend(() => {
            pushed++
            const error = errorBuffer()
            const status = symbols.svc_stream_push(
              handle,
              pair.reference,
              pair.reference.byteLength,
              pair.distorted,
              pair.distorted.byteLength,
              error.buffer,
              error.length
            )
            return status === NativeStatus.ok ? Effect.sync(newlyFinal) : Effect.fail(failureFor(status, error.text()))
          })

        const finish = Effect.sync(() => symbols.svc_stream_finish(handle))
        return Stream.concat(
          frames.pipe(
            Stream.mapEffect((pair) => Effect.zipRight(waitForRoom, push(pair))),
            Stream.flattenIterables
          ),
          Stream.fromEffect(finish).pipe(
            Stream.flatMap(() =>
              Stream.paginateEffect(
                1,
                drain(() => Effect.void)
              )
            ),
            Stream.flattenIterables
          )
        )
      }).pipe(Effect.withSpan("scorer.scoreStream"))
    )

  /**
   * Scores a pair read by the library from descriptors (`feed.sides`: the reference, then the
   * distorted input), with the job's raw geometry (required); events as `scoreStream`'s. The
   * outcome stands only once `feed.verdict` accepts the sides' ends.
   */
  const scoreFed = <H = never>(
    job: ScoreJob,
    feed: Feed,
    hooks: Pick<ScoreHooks<H>, "admitMemory"> = {}
  ): Stream.Stream<StreamEvent, ScoreError | H> =>
    Stream.unwrapScoped(
      Effect.gen(function* () {
        const { handle, view, drain } = yield* openStream(job, hooks, feed.memory)
        if (feed.start) yield* feed.start
        yield* startFeed(symbols, handle, feed)
        return Stream.paginateEffect(
          1,
          drain((state) => judgeFeed(symbols, handle, view, feed, state))
        ).pipe(Stream.flattenIterables)
      }).pipe(Effect.withSpan("scorer.scoreFed"))
    )

  return { scoreStream, scoreFed }
}
