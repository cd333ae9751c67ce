/**
 * The native job's plumbing shared by file jobs, streams and ladders: a job's options array, the
 * typed error of a native status, a native stream's construction and the poll back-off.
 */
import { Effect, type Scope } from "effect"
import { InvalidGeometry, InvalidScoreRequest, type ScoreError, ScorerInternal, UnreadableInput } from "./errors.ts"
import {
  errorBuffer,
  handleSlot,
  NativeColorMatrix,
  NativeCpu,
  NativeFeature,
  NativeInputKind,
  NativeOption,
  NativeSegmentContext,
  type NativeSymbols,
  NativeStatus,
  type Pointer
} from "./native.ts"
import { nativeFeatures } from "./native-features.ts"
import type { ScoreJob } from "./request.ts"

export const failureFor = (status: number, message: string): ScoreError => {
  switch (status) {
    case NativeStatus.io:
      return new UnreadableInput({ message })
    case NativeStatus.geometry:
      return new InvalidGeometry({ message })
    case NativeStatus.invalidArgument:
      return new InvalidScoreRequest({ message })
    default:
      return new ScorerInternal({ detail: `status ${status}: ${message}` })
  }
}

const isY4m = (path: string) => /\.y4m$/i.test(path)

/** Earlier reference frames the features read besides the current one, as their registry rows state (xpsnr 2, motion 1). */
const featureHistory = (features: ScoreJob["features"]) =>
  Math.max(0, ...features.map((name) => nativeFeatures.find((facts) => facts.name === name)?.temporal ?? 0))

/**
 * The reference context frames a segment reads before its first own frame, so its values are one
 * pass's: one for motion, two for xpsnr's history, and with shots the subsample frames since the
 * previous scored frame (a cut measure spans them); never more than the title has before it.
 */
export const segmentLead = (job: Pick<ScoreJob, "segment" | "features" | "shots" | "subsample">): number =>
  job.segment
    ? Math.min(job.segment.first, Math.max(1, featureHistory(job.features), job.shots ? job.subsample : 0))
    : 0

/** Frames of the title before the first frame a segment reads (its context frames, if any). */
export const segmentReadStart = (job: Pick<ScoreJob, "segment" | "features" | "shots" | "subsample">): number =>
  job.segment ? job.segment.first - segmentLead(job) : 0

/** Frames a segment reads: its lead context, its own frames and one after it (none at the title's end). */
export const segmentReadFrames = (
  job: Pick<ScoreJob, "segment" | "features" | "shots" | "subsample">
): number | undefined => (job.segment ? segmentLead(job) + job.segment.frames + (job.segment.last ? 0 : 1) : undefined)

/**
 * The native options of a job. A file job skips to its segment's first frame read in the options;
 * a stream's sides skip there themselves (a stream takes no skips), `fileJob` false.
 */
export const optionsArray = (job: ScoreJob, maxFrames = 0, fileJob = true): Int32Array => {
  const options = new Int32Array(NativeOption.count)
  options[NativeOption.inputKind] = 0 // by file suffix (path jobs), by signature (descriptors)
  // By suffix, as the request's geometry rule decides (raw unless .y4m).
  options[NativeOption.referenceKind] = isY4m(job.reference) ? NativeInputKind.y4m : NativeInputKind.raw
  options[NativeOption.distortedKind] = isY4m(job.distorted) ? NativeInputKind.y4m : NativeInputKind.raw
  options[NativeOption.maxFrames] = maxFrames
  options[NativeOption.width] = job.geometry?.width ?? 0
  options[NativeOption.height] = job.geometry?.height ?? 0
  options[NativeOption.pixelFormat] = job.geometry?.pixelFormat ?? 0
  options[NativeOption.bitdepth] = job.geometry?.bitdepth ?? 0
  options[NativeOption.threads] = job.threads
  options[NativeOption.cpu] = NativeCpu[job.backend]
  options[NativeOption.features] = job.features.reduce((mask, feature) => mask | NativeFeature[feature], 0)
  options[NativeOption.subsample] = job.subsample
  options[NativeOption.frameCount] = job.frameCount
  options[NativeOption.frameSkipRef] = job.frameSkipRef
  options[NativeOption.frameSkipDist] = job.frameSkipDist
  options[NativeOption.shots] = job.shots ? 1 : 0
  // Whole frames per second, as FFmpeg's xpsnr filter divides the rate (29.97 is 29).
  options[NativeOption.frameRate] = Math.floor(job.frameRate ?? 0)
  options[NativeOption.colorMatrix] = NativeColorMatrix[job.colorMatrix ?? "bt709"]
  const { segment } = job
  if (segment) {
    // The frames read start at the context frame before the segment (none at the title's start).
    const start = fileJob ? segmentReadStart(job) : 0
    options[NativeOption.frameCount] = 0
    options[NativeOption.frameSkipRef] = job.frameSkipRef + start
    options[NativeOption.frameSkipDist] = job.frameSkipDist + start
    options[NativeOption.segmentFirst] = segment.first
    options[NativeOption.segmentFrames] = segment.frames
    options[NativeOption.segmentContext] =
      (segment.first > 0 ? NativeSegmentContext.before : 0) | (segment.last ? 0 : NativeSegmentContext.after)
    options[NativeOption.segmentLead] = segmentLead(job)
  }
  return options
}

/** The title's index of the k-th scored frame is `first + k * subsample` (after the frame skips). */
export const firstScoredFrame = (job: Pick<ScoreJob, "subsample" | "segment">): number => {
  const first = job.segment?.first ?? 0
  return first + ((job.subsample - (first % job.subsample)) % job.subsample)
}

/** The widest SIMD path any extractor ran on (AVX-512 runs some extractors on AVX2 kernels). */
export const widestBackend = (backends: ReadonlyArray<string>): string =>
  backends.includes("avx512") ? "avx512" : backends.includes("avx2") ? "avx2" : "scalar"

export const nativeError = (symbols: NativeSymbols, handle: Pointer): string => {
  const error = errorBuffer()
  symbols.svc_job_error(handle, error.buffer, error.length)
  return error.text()
}

/** Out-parameters of a native stream constructor: the handle slot and the error buffer. */
export interface StreamOut {
  readonly slot: BigUint64Array
  readonly error: Buffer
  readonly errorLength: number
}

/**
 * A native stream (frame pairs or a ladder) made by `create` for the job, freed when the scope
 * closes, and the view of its job.
 */
export const acquireStream =
  (symbols: NativeSymbols, create: (options: Int32Array, out: StreamOut) => number) =>
  (job: ScoreJob, frameLimit: number): Effect.Effect<{ handle: Pointer; view: Pointer }, ScoreError, Scope.Scope> =>
    Effect.gen(function* () {
      const handle = yield* Effect.acquireRelease(
        Effect.suspend(() => {
          const slot = handleSlot()
          const error = errorBuffer()
          const status = create(optionsArray(job, frameLimit, false), {
            slot: slot.slot,
            error: error.buffer,
            errorLength: error.length
          })
          const created = slot.pointer()
          if (status !== NativeStatus.ok || created === null) return Effect.fail(failureFor(status, error.text()))
          return Effect.succeed(created)
        }),
        (created) => Effect.sync(() => symbols.svc_stream_free(created))
      )
      const view = symbols.svc_stream_job(handle)
      // bun:ffi types a returned pointer as Pointer | bigint | null; a live stream gives a Pointer.
      if (typeof view !== "number")
        return yield* Effect.fail(new ScorerInternal({ detail: "svc_stream_job returned no job view" }))
      return { handle, view }
    })

/** Poll interval: quick for tiny clips, relaxed for long ones. */
export const nextDelay = (current: number) => Math.min(current * 2, 50)
