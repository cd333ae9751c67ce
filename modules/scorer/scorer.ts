/**
 * The Scorer service: validated requests in, ScoreResponse-shaped results out. Scoring runs on
 * the native library's own threads; this side only starts, polls and collects, so the event
 * loop keeps answering probes while a long clip scores. Interrupting a score cancels it.
 */
import { implementationOf } from "./extra-features.ts"
import { ptr } from "bun:ffi"
import { Duration, Effect, Option, type Scope, Stream } from "effect"
import { read } from "node:fs"
import { integerIn } from "../config/env.ts"
import { type LocatedInput, locateInput, type OpenedInput, openLocated } from "../inputs/open.ts"
import {
  InputNotFound,
  InvalidGeometry,
  InvalidScoreRequest,
  type ScoreError,
  ScorerInternal,
  UnreadableInput,
  UnsupportedInput
} from "./errors.ts"
import { NativeScorerLibrary } from "./library.ts"
import { type LoadedModel, ModelStore } from "./models.ts"
import {
  cString,
  errorBuffer,
  handleSlot,
  NativeCpu,
  NativeFeature,
  NativeInputKind,
  NativeColorMatrix,
  NativeOption,
  NativePool,
  NativeSegmentContext,
  type NativeSymbols,
  NativeStatus,
  type Pointer
} from "./native.ts"
import { extractorOfModelFeature, type FeatureUse, frameTooSmall } from "./frame-minimum.ts"
import { type PercentileName, percentileNames, percentilesOf, xpsnrPlanes, xpsnrPooled } from "./pooling.ts"
import { applyPrecision, precisionLabel } from "./precision.ts"
import { roundShots, type Shot, scoreShots, segmentCutMetric, shotStarts, worstShots } from "./shots.ts"
import { renderThumbnails, type Thumbnail, thumbnailFrames } from "./thumbnails.ts"
import { autoModel, autoModel4k, autoModel4kSize, defaultModel, type RawGeometry, type ScoreJob } from "./request.ts"

export interface FrameScore {
  readonly frame: number
  readonly metrics: Readonly<Record<string, number>>
}

export interface Provenance {
  readonly library: {
    readonly abi_minor: number
    readonly abi_patch: number
    readonly active_backend: string
    readonly n_extractors: number
    readonly version: string
  }
  readonly model: string
  readonly model_sha256: string
  /** "builtin", or the model file's path in SVC_MODEL_DIR. */
  readonly model_source?: string
  /** Every model scored (one, or those of `models`), in request order. */
  readonly models?: ReadonlyArray<ModelProvenance>
  readonly backend_used: string
  /** Each extractor run, its backend, and for an extra feature the implementation it follows ("SSIMULACRA 2.1"). */
  readonly feature_backends: ReadonlyArray<{
    readonly extractor: string
    readonly backend: string
    readonly implementation?: string
  }>
  readonly precision: string
  /** First line of `ffmpeg -version` when an input was decoded; "" when none was (modules/inputs). */
  readonly decoder?: string
  readonly reference_input?: InputInfo
  readonly distorted_input?: InputInfo
  /** "none", or how the distorted video was scaled: "bicubic 960x540 -> 1920x1080". */
  readonly scaling?: string
}

/** What an input was, recognised by its bytes (set by modules/inputs, absent for pushed frames). */
export interface InputInfo {
  /** "raw", "y4m", or ffmpeg's demuxer name(s) ("mov,mp4,m4a,3gp,3g2,mj2", "matroska,webm"). */
  readonly container: string
  /** "rawvideo" for raw and Y4M, else ffmpeg's codec name ("h264", "hevc", "ffv1"). */
  readonly codec: string
  readonly width: number
  readonly height: number
  /** ffmpeg's name of the input's pixel format ("yuv420p", "yuv420p10le"). */
  readonly pixel_format: string
}

export interface ModelProvenance {
  readonly model: string
  readonly model_sha256: string
  readonly model_source: string
}

/** The models a score runs: one loaded model, or several bundled over one extraction. */
export interface ModelSet {
  readonly handle: Pointer
  readonly models: ReadonlyArray<LoadedModel>
}

/** The ScoreResponse of the contract (proto field names). */
export interface ScoreResult {
  readonly score: number
  readonly features: Readonly<Record<string, number>>
  /** The pooled score of each model by name (several with `models`; the first is `score`). */
  readonly scores?: Readonly<Record<string, number>>
  readonly provenance: Provenance
  readonly frames: ReadonlyArray<FrameScore>
  readonly frame_count: number
  readonly pooled: PooledFeatures
  /** With `options.shots`: the reference's shots in frame order, scored with the first model (else empty). */
  readonly shots?: ReadonlyArray<Shot>
  /** Indices into `shots` of the (at most 5) lowest-scoring shots, lowest first. */
  readonly worst_shots?: ReadonlyArray<number>
  /** With shots, for raw/Y4M inputs: small pictures of the worst shots' worst frames (thumbnails.ts). */
  readonly thumbnails?: ReadonlyArray<Thumbnail>
}

/** The poolings besides the mean (`features`): min, max, harmonic mean, and the percentiles p1..p99. */
export type PooledFeatures = {
  readonly min: Readonly<Record<string, number>>
  readonly max: Readonly<Record<string, number>>
  readonly harmonic_mean: Readonly<Record<string, number>>
} & { readonly [name in PercentileName]?: Readonly<Record<string, number>> }

/**
 * Who may be read: the scoring roots of the caller, applied around the one open of each input.
 * `beforeOpen` sees the input as written (nothing outside the roots is even located), `opened`
 * sees where the located (`O_PATH`, not yet opened) descriptor really points, `missing` decides
 * what a missing input reports.
 */
export interface InputGuard<E> {
  /** `shown`: the input as the request wrote it (a file:// URL), quoted by refusals; default the path. */
  readonly beforeOpen: (path: string, shown?: string) => Effect.Effect<void, E>
  readonly opened: (input: LocatedInput, shown?: string) => Effect.Effect<void, E>
  readonly missing: (path: string, shown?: string) => Effect.Effect<never, E | InputNotFound>
}

/** No roots (svc-server without SVC_INPUT_ROOTS): any path, a missing one reported as missing. */
export const unguarded: InputGuard<never> = {
  beforeOpen: () => Effect.void,
  opened: () => Effect.void,
  missing: (path, shown = path) => Effect.fail(new InputNotFound({ path: shown }))
}

/** A pair of inputs opened (and checked) once, for the scope of their score. */
export interface OpenedPair {
  readonly reference: OpenedInput
  readonly distorted: OpenedInput
}

export interface ScoreHooks<E = never> {
  /** Called as frames complete (for job progress). */
  readonly onProgress?: (framesDone: number) => Effect.Effect<void>
  /** The scoring roots; default `unguarded`. */
  readonly guard?: InputGuard<E>
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

/** The score's own feature name in the reference library's output. */
export const scoreFeature = "vmaf"

/** The feature holding a model's score: "vmaf" alone, its own name among several (as the reference). */
const scoreFeatureOf = (set: ModelSet, model: LoadedModel) => (set.models.length > 1 ? model.name : scoreFeature)

const failureFor = (status: number, message: string): ScoreError => {
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

/** Earlier reference frames an extractor reads besides the current one (xpsnr's temporal term). */
const featureHistory = (features: ScoreJob["features"]) => (features.includes("xpsnr") ? 2 : 0)

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
const optionsArray = (job: ScoreJob, maxFrames = 0, fileJob = true): Int32Array => {
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

/** The cut measure of scored frames first..first+count-1 of a job measured with SVC_OPT_SHOTS. */
const cutsOf = (symbols: NativeSymbols, handle: Pointer, first = 0, count = symbols.svc_job_frame_count(handle)) => {
  const cuts = new Float64Array(count)
  if (symbols.svc_job_frame_cuts(handle, first, cuts, count) !== count) {
    throw new Error("the scorer measured no cuts for a job with shots")
  }
  return cuts
}

/**
 * A segment's shots are the title's, found by the merge: with shots, each of a segment's frames
 * carries its cut measure (`segmentCutMetric`), read here for frames first..first+count-1.
 */
const segmentCutsOf = (
  symbols: NativeSymbols,
  handle: Pointer,
  job: Pick<ScoreJob, "segment" | "shots">,
  first: number,
  count: number
): Float64Array | undefined => (job.segment && job.shots ? cutsOf(symbols, handle, first, count) : undefined)

/** The shots of a finished job measured with SVC_OPT_SHOTS, scored with `scores` (the first model's). */
const shotsOf = (
  symbols: NativeSymbols,
  handle: Pointer,
  options: NonNullable<ScoreJob["shots"]>,
  scores: Float64Array | undefined
): ReadonlyArray<Shot> => {
  if (!scores) throw new Error("the scorer measured no score for a job with shots")
  return scoreShots(shotStarts(cutsOf(symbols, handle), options), scores)
}

/** Reads every result of a finished native job (a file job or a stream's job view). */
export const collectResult = (
  symbols: NativeSymbols,
  handle: Pointer,
  job: Pick<ScoreJob, "precision" | "perFrame" | "subsample" | "segment" | "shots">,
  set: ModelSet,
  library: NativeScorerLibrary["info"]
): ScoreResult => {
  const [model] = set.models
  if (!model) throw new Error("a score without a model")
  const round = applyPrecision(job.precision)
  const frameCount = symbols.svc_job_frame_count(handle)
  const metricCount = symbols.svc_job_metric_count(handle)
  const names = Array.from({ length: metricCount }, (_, i) => String(symbols.svc_job_metric_name(handle, i)))
  const pooled = (pool: number) => {
    const out = new Float64Array(1)
    return Object.fromEntries(
      names.map((name, i) => {
        symbols.svc_job_pooled(handle, i, pool, out)
        return [name, round(out[0] ?? Number.NaN)]
      })
    )
  }
  // Every metric's per-frame values: the percentiles need them all, the frames when asked for.
  const columns = names.map((_, i) => {
    const values = new Float64Array(frameCount)
    symbols.svc_job_frame_values(handle, i, values, frameCount)
    return values
  })
  const geometry = new Int32Array(4)
  symbols.svc_job_geometry(handle, geometry)
  const [width = 0, height = 0, pixelFormat = 420, bitdepth = 8] = geometry
  // xpsnr's mean is its filter's summary, from the one function a segment job's merge uses too.
  const features = Object.fromEntries(
    Object.entries(pooled(NativePool.mean)).map(([name, value]) => {
      const plane = xpsnrPlanes[name]
      const values = columns[names.indexOf(name)]
      return plane === undefined || values === undefined
        ? [name, value]
        : [name, round(xpsnrPooled(values, { width, height, pixelFormat, bitdepth }, plane))]
    })
  )
  const ranked = columns.map((values) => percentilesOf(values))
  const percentilePools = Object.fromEntries(
    percentileNames.map((p) => [
      p,
      Object.fromEntries(names.map((name, i) => [name, round(ranked[i]?.[p] ?? Number.NaN)]))
    ])
  ) as Record<PercentileName, Record<string, number>>
  const frames: Array<FrameScore> = []
  const segmentCuts = segmentCutsOf(symbols, handle, job, 0, frameCount)
  if (job.perFrame) {
    const firstFrame = firstScoredFrame(job)
    for (let frame = 0; frame < frameCount; frame++) {
      // With subsample N the k-th scored frame is input frame k·N (after the skips), as the reference numbers it.
      const metrics = Object.fromEntries(names.map((name, i) => [name, round(columns[i]?.[frame] ?? Number.NaN)]))
      if (segmentCuts) metrics[segmentCutMetric] = segmentCuts[frame] ?? 0
      frames.push({ frame: firstFrame + frame * job.subsample, metrics })
    }
  }
  const shots =
    job.shots && !job.segment
      ? shotsOf(symbols, handle, job.shots, columns[names.indexOf(scoreFeatureOf(set, model))])
      : []
  const extractorCount = symbols.svc_job_extractor_count(handle)
  const featureBackends = Array.from({ length: extractorCount }, (_, i) => {
    const extractor = String(symbols.svc_job_extractor_name(handle, i))
    return {
      extractor,
      backend: String(symbols.svc_job_extractor_backend(handle, i)),
      implementation: implementationOf(extractor)
    }
  })
  return {
    score: features[scoreFeatureOf(set, model)] ?? Number.NaN,
    features,
    scores: Object.fromEntries(
      set.models.map((entry) => [entry.name, features[scoreFeatureOf(set, entry)] ?? Number.NaN])
    ),
    frames,
    frame_count: frameCount,
    pooled: {
      min: pooled(NativePool.min),
      max: pooled(NativePool.max),
      harmonic_mean: pooled(NativePool.harmonic_mean),
      ...percentilePools
    },
    // Always present, as proto3 repeated fields are (empty without options.shots).
    shots: roundShots(shots, round),
    worst_shots: worstShots(shots),
    provenance: {
      library: { ...library, n_extractors: extractorCount },
      model: model.name,
      model_sha256: model.sha256,
      model_source: model.source,
      models: set.models.map((entry) => ({
        model: entry.name,
        model_sha256: entry.sha256,
        model_source: entry.source
      })),
      backend_used: widestBackend(featureBackends.map((entry) => entry.backend)),
      feature_backends: featureBackends,
      precision: precisionLabel(job.precision)
    }
  }
}

/**
 * Width and height of a Y4M file from its header line ("YUV4MPEG2 W<w> H<h> ..."), read from the
 * descriptor the scorer opened and checked (never the path again).
 */
const y4mSize = (path: string, fd: number): Effect.Effect<{ width: number; height: number }, ScoreError> =>
  Effect.async<string, ScoreError>((resume) => {
    const buffer = Buffer.alloc(256)
    read(fd, buffer, 0, buffer.length, 0, (error, bytesRead) =>
      resume(
        error
          ? Effect.fail(new UnreadableInput({ message: `${path} cannot be read` }))
          : Effect.succeed(buffer.toString("latin1", 0, bytesRead).split("\n")[0] ?? "")
      )
    )
  }).pipe(
    Effect.flatMap((header) => {
      const width = /\sW(\d+)/.exec(header)?.[1]
      const height = /\sH(\d+)/.exec(header)?.[1]
      return header.startsWith("YUV4MPEG2") && width && height
        ? Effect.succeed({ width: Number(width), height: Number(height) })
        : Effect.fail(new InvalidGeometry({ message: `${path}: not a Y4M header with W and H` }))
    })
  )

/** `model: "auto"`: the 4K model for a reference of at least 3840x2160, else the default. */
const resolveAuto = (
  job: ScoreJob,
  name: string,
  referenceFd: number | undefined
): Effect.Effect<string, ScoreError> => {
  if (name !== autoModel) return Effect.succeed(name)
  const size =
    job.geometry || referenceFd === undefined
      ? Effect.succeed(job.geometry ?? { width: 0, height: 0 })
      : y4mSize(job.reference, referenceFd)
  return Effect.map(size, ({ width, height }) =>
    width >= autoModel4kSize.width && height >= autoModel4kSize.height ? autoModel4k : defaultModel
  )
}

/**
 * Refuses a frame of `geometry` smaller than a feature of the job accepts (its models' features
 * and options.features; "auto" resolved for that size), naming the feature and its minimum.
 */
const checkFrameSize = (models: ModelStore, job: ScoreJob, geometry: RawGeometry): Effect.Effect<void, ScoreError> =>
  Effect.gen(function* () {
    const names = yield* Effect.forEach(job.models, (name) => resolveAuto({ ...job, geometry }, name, undefined))
    const loaded = yield* Effect.forEach(names, (name) => models.load(name))
    const uses: Array<FeatureUse> = loaded.flatMap((model) =>
      model.features.flatMap((name) => {
        const feature = extractorOfModelFeature(name)
        return feature ? [{ feature, usedBy: `model "${model.name}"` }] : []
      })
    )
    for (const feature of job.features) uses.push({ feature, usedBy: "options.features" })
    const refusal = frameTooSmall(geometry, uses)
    if (refusal) return yield* new InvalidGeometry({ message: refusal })
  })

/** The job's models, loaded; several are bundled for one extraction (freed with the scope). */
const acquireModels = (
  symbols: NativeSymbols,
  models: ModelStore,
  job: ScoreJob,
  /** The opened reference, for `model: "auto"` on a Y4M (streams carry raw geometry). */
  referenceFd?: number
): Effect.Effect<ModelSet, ScoreError, Scope.Scope> =>
  Effect.gen(function* () {
    const names = yield* Effect.forEach(job.models, (name) => resolveAuto(job, name, referenceFd))
    if (new Set(names).size !== names.length) {
      return yield* Effect.fail(new InvalidScoreRequest({ message: `models: "auto" resolves to a model listed too` }))
    }
    const loaded = yield* Effect.forEach(names, (name) => models.load(name))
    const [single] = loaded
    if (single && loaded.length === 1) return { handle: single.handle, models: loaded }
    const handle = yield* Effect.acquireRelease(
      Effect.suspend(() => {
        const handles = new BigUint64Array(loaded.map((model) => BigInt(model.handle)))
        const nameBuffers = loaded.map((model) => cString(model.name))
        const namePointers = new BigUint64Array(nameBuffers.map((buffer) => BigInt(ptr(buffer))))
        const slot = handleSlot()
        const error = errorBuffer()
        const status = symbols.svc_model_bundle(
          handles,
          namePointers,
          loaded.length,
          slot.slot,
          error.buffer,
          error.length
        )
        const bundle = slot.pointer()
        if (status !== NativeStatus.ok || bundle === null) return Effect.fail(failureFor(status, error.text()))
        return Effect.succeed(bundle)
      }),
      (bundle) => Effect.sync(() => symbols.svc_model_free(bundle))
    )
    return { handle, models: loaded }
  })

/** The widest SIMD path any extractor ran on (AVX-512 runs some extractors on AVX2 kernels). */
const widestBackend = (backends: ReadonlyArray<string>): string =>
  backends.includes("avx512") ? "avx512" : backends.includes("avx2") ? "avx2" : "scalar"

const nativeError = (symbols: NativeSymbols, handle: Pointer): string => {
  const error = errorBuffer()
  symbols.svc_job_error(handle, error.buffer, error.length)
  return error.text()
}

/** Out-parameters of a native stream constructor: the handle slot and the error buffer. */
interface StreamOut {
  readonly slot: BigUint64Array
  readonly error: Buffer
  readonly errorLength: number
}

/**
 * A native stream (frame pairs or a ladder) made by `create` for the job, freed when the scope
 * closes, and the view of its job.
 */
const acquireStream =
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
const nextDelay = (current: number) => Math.min(current * 2, 50)

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
const startFeed = (symbols: NativeSymbols, handle: Pointer, feed: Feed): Effect.Effect<void, ScoreError> =>
  Effect.suspend(() => {
    const names = feed.sides.map((side) => cString(side.name))
    const error = errorBuffer()
    const status = symbols.svc_stream_feed(
      handle,
      feed.sides.length,
      Int32Array.from(feed.sides, (side) => side.fd),
      Int32Array.from(feed.sides, (side) => fedKind[side.kind]),
      Int32Array.from(feed.sides, (side) => side.skip),
      new BigUint64Array(names.map((name) => BigInt(ptr(name)))),
      error.buffer,
      error.length
    )
    return status === NativeStatus.ok ? Effect.void : Effect.fail(failureFor(status, error.text()))
  })

/** A fed stream's final state (1 or a failure), judged by the feed's verdict before it stands. */
const judgeFeed = (
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
const makePipe = (symbols: NativeSymbols): Effect.Effect<{ read: number; write: number }, ScoreError> =>
  Effect.suspend(() => {
    const fds = new Int32Array(2)
    const error = errorBuffer()
    const status = symbols.svc_pipe(fds, error.buffer, error.length)
    return status === NativeStatus.ok
      ? Effect.succeed({ read: fds[0] ?? -1, write: fds[1] ?? -1 })
      : Effect.fail(failureFor(status, error.text()))
  })

const makeStreamScoring = (
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

/** Ladder progress hooks; `onFramesRead`: frames of every input read so far (a fed ladder's reading thread). */
type LadderHooks<H> = Pick<ScoreHooks<H>, "admitMemory" | "onProgress"> & {
  readonly onFramesRead?: (frames: number) => Effect.Effect<void>
}

const makeLadderScoring =
  (symbols: NativeSymbols, models: ModelStore, info: NativeScorerLibrary["info"], frameLimit: number) =>
  /**
   * Scores `input` (the job's raw geometry, required, is every picture's) as a ladder of
   * `renditions`: frames pushed from a stream, or a feed the library reads (the reference, then
   * each rendition). The ladder's memory is admitted before its first picture is allocated.
   */
  <E, R, H = never>(
    job: ScoreJob,
    renditions: number,
    input: Stream.Stream<LadderFrame, E, R> | Feed,
    hooks: LadderHooks<H> = {}
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
          results.push(collectResult(symbols, rendition, job, set, info))
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

/** Clips with more frames are refused before anything per frame is allocated (SVC_MAX_FRAMES). */
export const maxFrames = integerIn("SVC_MAX_FRAMES", 1_000_000, 1, 2_000_000_000)

/**
 * Opens an input once, for the scope, and checks it on its descriptor: the guard before and
 * after the open, then its kind (only regular files are scored; a FIFO or device is never read).
 */
export const openChecked = <E>(
  path: string,
  guard: InputGuard<E>,
  shown: string = path
): Effect.Effect<OpenedInput, E | InputNotFound | UnreadableInput | UnsupportedInput, Scope.Scope> =>
  Effect.gen(function* () {
    yield* guard.beforeOpen(path, shown)
    const unopenable = {
      InputMissing: () => guard.missing(path, shown),
      InputUnopenable: (error: { readonly reason: string }) =>
        Effect.fail(new UnreadableInput({ message: `input "${path}" cannot be opened: ${error.reason}` }))
    }
    // Located, not opened: its real path and kind are checked before anything is opened for reading.
    const located = yield* locateInput(path).pipe(Effect.catchTags(unopenable))
    yield* guard.opened(located, shown)
    if (located.kind !== "regular file") {
      const article = located.kind === "other" ? "not a regular file" : `a ${located.kind}`
      return yield* new UnsupportedInput({
        message: `input "${path}" is ${article}; only regular files are scored`
      })
    }
    return yield* openLocated(located).pipe(Effect.catchTags(unopenable))
  })

export class Scorer extends Effect.Service<Scorer>()("svc/Scorer", {
  effect: Effect.gen(function* () {
    const library = yield* NativeScorerLibrary
    const models = yield* ModelStore
    const frameLimit = yield* maxFrames
    const { symbols } = library

    /** A native job on the two descriptors, validating them on a library thread; freed with the scope. */
    const openJob = (job: ScoreJob, set: ModelSet, reference: OpenedInput, distorted: OpenedInput) =>
      Effect.acquireRelease(
        Effect.suspend(() => {
          const slot = handleSlot()
          const error = errorBuffer()
          const options = optionsArray(job, frameLimit)
          const status = symbols.svc_job_open_fd(
            set.handle,
            reference.fd,
            cString(job.reference),
            distorted.fd,
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
     * Scores a validated request; the result follows the request's precision. Each input is
     * opened once and only its descriptor reaches the native library; the job's memory is
     * admitted before anything per frame is allocated. `opened`: the inputs already opened and
     * checked by the caller (modules/inputs/score.ts), so they are neither opened nor checked again.
     */
    const score = <E = never>(
      job: ScoreJob,
      hooks: ScoreHooks<E> = {},
      opened?: OpenedPair
    ): Effect.Effect<ScoreResult, ScoreError | E> =>
      Effect.scoped(
        Effect.gen(function* () {
          const guard: InputGuard<E> = hooks.guard ?? unguarded
          if (job.geometry) yield* checkFrameSize(models, job, job.geometry)
          const reference = opened?.reference ?? (yield* openChecked(job.reference, guard, job.referenceAsSent))
          const distorted = opened?.distorted ?? (yield* openChecked(job.distorted, guard, job.distortedAsSent))
          const set = yield* acquireModels(symbols, models, job, reference.fd)
          const handle = yield* openJob(job, set, reference, distorted)
          yield* awaitOpened(handle)
          if (hooks.admitMemory) yield* hooks.admitMemory(Number(symbols.svc_job_memory(handle)))
          yield* run(handle)
          yield* awaitDone(handle, hooks)
          const result = collectResult(symbols, handle, job, set, library.info)
          if (!job.shots) return { ...result, thumbnails: [] }
          const layout = new Int32Array(4)
          symbols.svc_job_geometry(handle, layout)
          const [width = 0, height = 0, pixelFormat = 420, bitdepth = 8] = layout
          const worst = thumbnailFrames(result.shots, result.worst_shots)
          const thumbnails = yield* renderThumbnails(
            {
              reference: { fd: reference.fd, y4m: isY4m(job.reference), skip: job.frameSkipRef },
              distorted: { fd: distorted.fd, y4m: isY4m(job.distorted), skip: job.frameSkipDist }
            },
            {
              width,
              height,
              pixelFormat: pixelFormat as RawGeometry["pixelFormat"],
              bitdepth: bitdepth as RawGeometry["bitdepth"]
            },
            job.subsample,
            worst
          )
          return { ...result, thumbnails }
        })
      ).pipe(Effect.withSpan("scorer.score"))

    /**
     * Frames a file job of `job` would score (after the skips and frame_cnt), its inputs checked
     * as a score checks them: a segment job's plan of raw and Y4M inputs.
     */
    const countFrames = (job: ScoreJob, opened: OpenedPair): Effect.Effect<number, ScoreError> =>
      Effect.scoped(
        Effect.gen(function* () {
          const set = yield* acquireModels(symbols, models, job, opened.reference.fd)
          const handle = yield* openJob(job, set, opened.reference, opened.distorted)
          yield* awaitOpened(handle)
          return Number(symbols.svc_job_input_frames(handle))
        })
      )

    const { scoreStream, scoreFed } = makeStreamScoring(symbols, models, library.info, frameLimit)
    const scoreLadder = makeLadderScoring(symbols, models, library.info, frameLimit)
    /** A pipe for a fed stream's decoder: the library reads `read`; `write` goes to the child. */
    const pipe = makePipe(symbols)

    /** Refuses a frame of `geometry` below what a feature of the job accepts (frame-minimum.ts). */
    const checkFrame = (job: ScoreJob, geometry: RawGeometry) => checkFrameSize(models, job, geometry)

    return {
      score,
      countFrames,
      scoreStream,
      scoreFed,
      scoreLadder,
      pipe,
      checkFrame,
      library: library.info,
      models
    } as const
  }),
  dependencies: [ModelStore.Default, NativeScorerLibrary.Default]
}) {}
