/**
 * Scoring a request's two inputs as users have them. Each input is opened once and recognised
 * by its bytes: a pair of raw YUV / Y4M files goes to the scorer's file job on the same two
 * descriptors (never opened again by path); anything with an
 * encoded side is scored through the scorer's fed stream, each side a frame source the library
 * reads on its own thread (a raw or Y4M file on the descriptor, or the pipe an ffmpeg child
 * decodes it into), paired in decode order.
 *
 * Decoded the way the reference is scored: the reference's size, chroma subsampling and bit
 * depth are the target; a distorted video of another size is scaled to it (`options.scale`,
 * bicubic by default). Frame skips, frame_cnt and subsample mean what they mean for raw files.
 */
import { Effect, Either, Exit, Option, Scope, Stream } from "effect"
import { fstat } from "node:fs"
import { promisify } from "node:util"
import {
  type AlignmentReport,
  autoModel,
  type ColorMatrix,
  type FedSide,
  type Feed,
  type InputInfo,
  InvalidGeometry,
  InvalidScoreRequest,
  type InputChange,
  type Provenance,
  type RawGeometry,
  rawGeometryRequired,
  type ScoreError,
  type ScoreHooks,
  type ScoreJob,
  type Scorer,
  type ScoreResult,
  ScoreTooLarge,
  segmentReadFrames,
  segmentReadStart,
  segmentThumbnailFrames,
  UnreadableInput,
  worstShotFrames
} from "../scorer/index.ts"
import { decoderBaseBytes, decoderLimits, decoderMemory, headerProbeLimits } from "./decoder-memory.ts"
import {
  type Child,
  type DecoderFailed,
  type DecoderMissing,
  type DecodeTarget,
  Ffmpeg,
  type ProbedStream,
  type RawInputFormat,
  type ShapeRun,
  type SourceShape
} from "./ffmpeg.ts"
import {
  checkLanding,
  decoderPipe,
  decoderVerdict,
  type FrameCap,
  frameCapOf,
  type Landing,
  type VerdictSide
} from "./frames.ts"
import { type InputGuard, type OpenedInput, type OpenInputError, openChecked, unguarded } from "./open.ts"
import { type DecoderTooLarge, ffmpegPixelFormat, type InputFormat, layoutOf, probeInput } from "./probe.ts"
import { filePictures, pairThumbnails, renderThumbnails, thumbnailOf } from "./thumbnails.ts"
import { lumaPlaneBytes } from "./luma-thumbnails.ts"
import { frameBytes, readY4mHeader, type UnusableInput, y4mFrameCount, y4mFrameOffset } from "./y4m.ts"
import {
  type Alignment,
  inputFramesOf,
  type SidePairing,
  type SideThumbnails,
  searchBytes,
  thumbnailBytes,
  thumbnailHeight,
  thumbnailWidth,
  unpaired
} from "./alignment.ts"
import { findAlignment, oneRate, type SearchSide, searchThumbnails, thumbnailsBytes } from "./alignment-search.ts"
import { type HeldSide, heldBytes, heldFeed, holdDecoded, ownedPipe } from "./alignment-once.ts"
import {
  readDecoded,
  type SideIndex,
  type StreamFailure,
  StreamingPair,
  streamFileThumbnails,
  streamHeldFrames,
  writeSide
} from "./alignment-stream.ts"

/** A score's hooks (scorer/hooks.ts) and what opening and probing its inputs needs. */
export type InputHooks<E = never> = ScoreHooks<E> & {
  /** The caller's scoring roots, applied to each open; default `unguarded`. */
  readonly guard?: InputGuard<E>
  /**
   * The whole memory budget (SVC_MAX_SCORE_MEMORY), for refusals decided before `admitMemory`
   * can be asked (an input whose decoding can never fit, known from its headers).
   */
  readonly memoryBudget?: number
}

/** The provenance fields of the inputs. */
type InputsProvenance = Required<Pick<Provenance, "decoder" | "reference_input" | "distorted_input" | "scaling">>

const describeGeometry = (geometry: RawGeometry) =>
  `${geometry.width}x${geometry.height} ${geometry.pixelFormat} ${geometry.bitdepth}-bit`

const sameGeometry = (a: RawGeometry, b: RawGeometry) =>
  a.width === b.width && a.height === b.height && a.pixelFormat === b.pixelFormat && a.bitdepth === b.bitdepth

const fstatAsync = promisify(fstat)

const isY4mName = (path: string) => /\.y4m$/i.test(path)

type InputError = OpenInputError | UnusableInput | DecoderTooLarge | DecoderMissing | DecoderFailed

/** The scorer's typed errors for failures of opening, probing and decoding. */
export const asScoreError =
  (path: string) =>
  (error: InputError): ScoreError => {
    switch (error._tag) {
      case "InputMissing":
        return new UnreadableInput({ message: `input "${path}" does not exist` })
      case "InputUnopenable":
        return new UnreadableInput({ message: `input "${path}" cannot be opened (${error.reason})` })
      case "UnusableInput":
        return new InvalidGeometry({ message: error.message })
      case "DecoderTooLarge":
        return new ScoreTooLarge({ needed: error.needed, budget: error.budget })
      case "DecoderMissing":
        return new InvalidScoreRequest({
          message: `input "${path}" is encoded video, which needs ffmpeg to decode: ${error.reason}`
        })
      case "DecoderFailed":
        return new UnreadableInput({ message: `input "${path}" is not a video ffmpeg can read: ${error.detail}` })
    }
  }

/**
 * An input without geometry whose bytes are neither Y4M nor a video ffprobe recognises: not a
 * video, unless it is raw YUV, which needs its geometry.
 */
export const notAVideo = (path: string) =>
  new InvalidScoreRequest({
    message: `input "${path}" is not a video: neither Y4M nor a format ffmpeg recognises (raw YUV needs options.width and options.height)`
  })

export interface Side {
  readonly input: OpenedInput
  readonly format: InputFormat
}

/** Opens an input once through the caller's scoring-roots guard (regular files only), then probes its bytes. */
export const openAndProbe = <E>(path: string, rawAllowed: boolean, hooks: InputHooks<E>, shown: string = path) =>
  Effect.gen(function* () {
    const input = yield* openChecked(path, hooks.guard ?? unguarded, shown)
    const format = yield* probeInput(input.fd, path, rawAllowed, hooks.memoryBudget).pipe(
      Effect.mapError(asScoreError(path))
    )
    return { input, format }
  })

export const provenanceOf = (side: Side, geometry: RawGeometry | undefined): InputInfo => {
  switch (side.format._tag) {
    case "Encoded": {
      const { stream } = side.format
      return {
        container: stream.container,
        codec: stream.codec,
        width: stream.width,
        height: stream.height,
        pixel_format: stream.pixelFormat
      }
    }
    case "Y4m":
    case "Raw": {
      const layout = side.format._tag === "Y4m" ? side.format.geometry : geometry
      return {
        container: side.format._tag === "Y4m" ? "y4m" : "raw",
        codec: "rawvideo",
        width: layout?.width ?? 0,
        height: layout?.height ?? 0,
        pixel_format: layout ? ffmpegPixelFormat(layout) : ""
      }
    }
  }
}

export const scoreInputs = <E = never>(
  scorer: Scorer,
  job: ScoreJob,
  hooks: InputHooks<E> = {}
): Effect.Effect<ScoreResult, ScoreError | E, Ffmpeg> =>
  Effect.scoped(
    Effect.gen(function* () {
      const rawAllowed = job.geometry !== undefined
      const ref: Side = yield* openAndProbe(job.reference, rawAllowed, hooks, job.referenceAsSent)
      const dis: Side = yield* openAndProbe(job.distorted, rawAllowed, hooks, job.distortedAsSent)
      if (job.geometry === undefined) {
        if (ref.format._tag === "Raw") return yield* notAVideo(job.reference)
        if (dis.format._tag === "Raw") return yield* notAVideo(job.distorted)
      }
      // The reference's size is what is scored: refused here when a feature cannot take it,
      // before anything is read or decoded.
      const target = geometryOf(ref, job.geometry)
      if (target) yield* scorer.checkFrame(job, target)
      // The file job tells Y4M from raw by the name; it takes a pair whose names agree with their bytes.
      const fileJobReads = (side: Side, path: string) =>
        (side.format._tag === "Y4m" && isY4mName(path)) || (side.format._tag === "Raw" && !isY4mName(path))
      if (fileJobReads(ref, job.reference) && fileJobReads(dis, job.distorted)) {
        const alignment =
          job.alignment ??
          (job.sync === undefined || target === undefined
            ? undefined
            : yield* alignPair(job, job.sync.window, ref, dis, target, hooks))
        // An alignment that cuts frames out is fed (it decides which frames the library reads),
        // as is a segment's (it counts pairs); one that only moves the starts is the hand cut
        // the file job reads with frame skips.
        if (alignment !== undefined && (job.segment !== undefined || !onlyStarts(alignment)))
          return yield* scoreFrames(scorer, job, hooks, ref, dis, alignment)
        // The descriptors opened and checked above: each input is opened and checked once.
        const result = yield* scoreFileJob(scorer, handCut(job, alignment), hooks, ref.input, dis.input, target)
        return withInputs(alignment === undefined ? result : { ...result, alignment }, {
          decoder: "",
          reference_input: provenanceOf(ref, job.geometry),
          distorted_input: provenanceOf(dis, job.geometry),
          scaling: "none"
        })
      }
      return yield* scoreFrames(scorer, job, hooks, ref, dis)
    })
  )

/** An alignment that cuts nothing out between its first and last pair. */
const onlyStarts = (alignment: Alignment) =>
  alignment.reference_frames_dropped.length === 0 && alignment.distorted_frames_inserted.length === 0

/**
 * The job as its hand cut: the alignment's starts added to the frame skips, frame_cnt counting
 * the aligned pairs (at most the overlap).
 */
const handCut = (job: ScoreJob, alignment: Alignment | undefined): ScoreJob =>
  alignment === undefined
    ? job
    : {
        ...job,
        frameSkipRef: job.frameSkipRef + alignment.reference_start,
        frameSkipDist: job.frameSkipDist + alignment.distorted_start,
        frameCount: job.frameCount > 0 ? Math.min(job.frameCount, alignment.frames) : alignment.frames
      }

/**
 * The scored frames a result renders thumbnails of: the worst shots' worst frames, or a
 * segment's candidates for them (the merge keeps the title's; merge.ts).
 */
const thumbnailFramesOf = (result: ScoreResult, job: ScoreJob): ReadonlyArray<number> =>
  job.segment ? segmentThumbnailFrames(result, job) : worstShotFrames(result.shots, result.worst_shots)

/**
 * The scorer's file job on a pair opened and checked once (raw YUV / Y4M, named as their bytes
 * are), with the thumbnails of its worst shots read back from the same descriptors.
 * `geometry`: the frames' layout (the request's, or the reference's Y4M header).
 */
const scoreFileJob = <E>(
  scorer: Scorer,
  job: ScoreJob,
  hooks: ScoreHooks<E>,
  reference: OpenedInput,
  distorted: OpenedInput,
  geometry: RawGeometry | undefined
): Effect.Effect<ScoreResult, ScoreError | E> =>
  Effect.gen(function* () {
    const result = yield* scorer.score(job, { reference, distorted, referenceSize: geometry }, hooks)
    if (!job.shots || geometry === undefined) return result
    const thumbnails = yield* renderThumbnails(
      {
        reference: { fd: reference.fd, y4m: isY4mName(job.reference), skip: job.frameSkipRef },
        distorted: { fd: distorted.fd, y4m: isY4mName(job.distorted), skip: job.frameSkipDist }
      },
      geometry,
      job.subsample,
      thumbnailFramesOf(result, job)
    )
    return { ...result, thumbnails }
  })

/**
 * Scores a pair of raw YUV / Y4M files with the scorer's file job, as named (the library reads
 * and validates them: no probing), each opened once through the caller's guard: the way in for
 * the native scorer's own tests and measurements.
 */
export const scoreFiles = <E = never>(
  scorer: Scorer,
  job: ScoreJob,
  hooks: InputHooks<E> = {}
): Effect.Effect<ScoreResult, ScoreError | E> =>
  Effect.scoped(
    Effect.gen(function* () {
      const guard: InputGuard<E> = hooks.guard ?? unguarded
      if (job.geometry) yield* scorer.checkFrame(job, job.geometry)
      const reference = yield* openChecked(job.reference, guard, job.referenceAsSent)
      const distorted = yield* openChecked(job.distorted, guard, job.distortedAsSent)
      // The reference's Y4M header gives "auto" its size and the thumbnails their layout.
      const needsHeader = job.models.includes(autoModel) || job.shots !== undefined
      const geometry =
        job.geometry ??
        (needsHeader && isY4mName(job.reference)
          ? (yield* readY4mHeader(reference.fd, job.reference).pipe(
              Effect.mapError((error) => new InvalidGeometry({ message: error.message }))
            )).geometry
          : undefined)
      return yield* scoreFileJob(scorer, job, hooks, reference, distorted, geometry)
    })
  )

const withInputs = (result: ScoreResult, inputs: InputsProvenance): ScoreResult => ({
  ...result,
  provenance: { ...result.provenance, ...inputs }
})

/**
 * The raw layout a side is scored in: the options' geometry for raw YUV, the header's for Y4M,
 * and for encoded video its size with its pixel format's subsampling and depth.
 */
/** The reference's frames per second as its header or container says; 0 when it does not (raw). */
export const frameRateOf = (side: Side): number =>
  side.format._tag === "Y4m" ? side.format.frameRate : side.format._tag === "Encoded" ? side.format.stream.frameRate : 0

/** The input's Y'CbCr matrix from its colour metadata (ffprobe's color_space); BT.709 when unknown. */
export const colorMatrixOf = (side: Side): ColorMatrix => {
  if (side.format._tag !== "Encoded") return "bt709"
  const space = side.format.stream.colorSpace
  if (["smpte170m", "bt470bg", "fcc"].includes(space)) return "bt601"
  if (space.startsWith("bt2020")) return "bt2020"
  return "bt709"
}

export const geometryOf = (side: Side, options: RawGeometry | undefined): RawGeometry | undefined => {
  switch (side.format._tag) {
    case "Raw":
      return options
    case "Y4m":
      return side.format.geometry
    case "Encoded": {
      const { stream } = side.format
      return { width: stream.width, height: stream.height, ...layoutOf(stream.pixelFormat) }
    }
  }
}

/** The shape a decoded stream keeps: its size and its chroma subsampling factors. */
const shapeOf = (stream: ProbedStream): SourceShape => {
  const { pixelFormat } = layoutOf(stream.pixelFormat)
  return {
    width: stream.width,
    height: stream.height,
    hsub: pixelFormat === 444 ? 1 : 2,
    vsub: pixelFormat === 420 ? 2 : 1
  }
}

/** How one side is read by the library, and how it was scaled and decoded. */
export interface FrameSource {
  /** The side as the library's reading thread reads it (raw/Y4M file, or the decoder's pipe). */
  readonly side: FedSide
  /** The ffmpeg child writing the side's pipe once started; its exit decides whether the pipe's end is the clip's. */
  readonly child: () => Child | undefined
  /** The refusal of a decode that changed shape at a frame (undefined for a file, or a side whose changes are scaled). */
  readonly changed: ((frame: number) => string) | undefined
  /** The index of the side's frame at a time its decoder logged. */
  readonly frameAt: (seconds: number) => Effect.Effect<number>
  /** After a segment's seek: where its first frame must come out (undefined: no seek). */
  readonly landing?: Landing | undefined
  /** The decoder's admitted memory (0 for a file the library reads). */
  readonly memory: number
  /** Starts the decoder (after admission), for the scope of the score. */
  readonly start: Effect.Effect<void, ScoreError, Scope.Scope>
  /** The decoder's frame cap (undefined for a file). */
  readonly frames: FrameCap | undefined
  /** "bicubic 960x540 -> 1920x1080" when the side is scaled; undefined otherwise. */
  readonly scaling: string | undefined
  /** After the decode: the frames where a scaled side changed size or pixel format (none for a file). */
  readonly shapeChanges: Effect.Effect<ReadonlyArray<InputChange>>
  /** `ffmpeg -version`'s first line when an ffmpeg child decodes the side. */
  readonly decoder: string | undefined
}

/** How a side is decoded for scoring (the request's settings for it). */
interface DecodeSettings {
  readonly isDistorted: boolean
  /** The request's raw geometry for this side. */
  readonly geometry: RawGeometry | undefined
  readonly scale: ScoreJob["scale"]
  /** The decoder's threads (the request's). */
  readonly threads: number
}

/**
 * A side's scoring decoder: the stream it decodes, the filters' target (scaled to the reference's
 * size where allowed, else kept and checked), its threads, memory estimate and frame cap, and how
 * a change of shape is refused. The same for a decode into the library's pipe and for one whose
 * frames are held while the alignment is searched (alignment-once.ts).
 */
const scoringDecodeOf = (side: Side, path: string, settings: DecodeSettings, target: RawGeometry) =>
  Effect.gen(function* () {
    const ffmpeg = yield* Ffmpeg
    const geometry = geometryOf(side, settings.geometry)
    if (geometry === undefined) return yield* notAVideo(path)
    const stream = side.format._tag === "Encoded" ? side.format.stream : fileStream(side, geometry)
    const raw = side.format._tag === "Raw" ? rawInputOf(geometry) : undefined
    const resize = stream.width !== target.width || stream.height !== target.height
    if (resize && settings.isDistorted && settings.scale === "none")
      return yield* new InvalidScoreRequest({
        message: `options.scale is "none" but ${path} is ${stream.width}x${stream.height} and the reference is ${target.width}x${target.height}`
      })
    const algorithm = resize && settings.scale !== "none" ? settings.scale : undefined
    const threads = Math.max(1, settings.threads)
    // A distorted side that may be scaled is scaled frame by frame, also after a change, and
    // its changes are listed; any other side must keep its shape.
    const scaleTo = settings.isDistorted && settings.scale !== "none" ? settings.scale : undefined
    const listsChanges = scaleTo !== undefined
    return {
      stream,
      raw,
      threads,
      memory: decoderMemory(stream, layoutOf(stream.pixelFormat), target, threads),
      frames: frameCapOf(stream.declaredFrames, ffmpeg.limits.maxFrames),
      target: {
        width: target.width,
        height: target.height,
        pixelFormat: ffmpegPixelFormat(target),
        scale: scaleTo,
        source: shapeOf(stream),
        shapeChanges: listsChanges ? "list" : "stop"
      } satisfies DecodeTarget,
      scaling: algorithm
        ? `${algorithm} ${stream.width}x${stream.height} -> ${target.width}x${target.height}`
        : undefined,
      changed: listsChanges
        ? undefined
        : (frame: number) =>
            settings.isDistorted
              ? `input "${path}" changes its resolution or pixel format at frame ${frame} and options.scale is "none"`
              : `reference "${path}" changes its resolution or pixel format at frame ${frame}; a reference must keep one`
    }
  })

/**
 * One side as raw frames of `target` (the reference's layout): read from the descriptor (raw
 * YUV, Y4M; their geometry must be the target's) or decoded, and scaled if it is a distorted
 * side of another size, by its own ffmpeg child (killed with the scope) into a pipe the library
 * reads.
 */
export const frameSource = (
  scorer: Scorer,
  side: Side,
  path: string,
  settings: {
    readonly skip: number
    readonly isDistorted: boolean
    /** The request's raw geometry for this side. */
    readonly geometry: RawGeometry | undefined
    readonly scale: ScoreJob["scale"]
    readonly reference: string
    /** The decoder's threads (the request's). */
    readonly threads: number
    /**
     * A segment's frames of this side: `skip` is where they start in the input (the side's skip
     * and the segment's start), `frames` how many are read (context frames included). An encoded
     * side seeks there instead of decoding from its start.
     */
    readonly window?: { readonly frames: number } | undefined
    /** Alignment: input frames left out of the side (indices from the input's start). */
    readonly drop?: ReadonlyArray<number> | undefined
  },
  target: RawGeometry
) =>
  Effect.gen(function* () {
    const ffmpeg = yield* Ffmpeg
    const { fd } = side.input
    // A raw or Y4M side with frames cut out is decoded by ffmpeg like an encoded one (the
    // library reads a file's frames in order).
    const cutFile = side.format._tag !== "Encoded" && (settings.drop?.length ?? 0) > 0
    switch (cutFile ? "Cut" : side.format._tag) {
      case "Raw":
      case "Y4m": {
        const geometry = geometryOf(side, settings.geometry)
        if (geometry === undefined) return yield* notAVideo(path)
        if (!sameGeometry(geometry, target))
          return yield* new InvalidGeometry({
            message: `geometry differs: ${settings.reference} is ${describeGeometry(target)}, ${path} is ${describeGeometry(geometry)}`
          })
        const kind = side.format._tag === "Raw" ? "raw" : "y4m"
        return {
          side: { fd, kind, name: path, skip: settings.skip },
          child: () => undefined,
          changed: undefined,
          frameAt: () => Effect.succeed(0),
          memory: 0,
          start: Effect.void,
          frames: undefined,
          scaling: undefined,
          shapeChanges: Effect.succeed([]),
          decoder: undefined
        } satisfies FrameSource
      }
      default: {
        const plan = yield* scoringDecodeOf(side, path, settings, target)
        const { stream, raw, memory, frames, threads } = plan
        const decoder = (yield* ffmpeg.tools).version
        const pipe = yield* decoderPipe(scorer)
        const seekTo =
          settings.window === undefined
            ? undefined
            : yield* seekPoint(ffmpeg, fd, settings.skip, stream.container).pipe(Effect.mapError(asScoreError(path)))
        const seek = seekTo?.seconds
        const { cpuSeconds } = ffmpeg.limits
        const frameAt = yield* frameIndexer(ffmpeg, fd, seek ?? 0, stream.frameRate)
        // Frames left out (alignment) are counted by the filters from their first frame: after a
        // seek the landing frame (`skip`); without one, the input's first, and the library then
        // skips what the filters let through before `skip`.
        const drop = settings.drop ?? []
        const filterDrop =
          seek === undefined
            ? drop
            : drop.filter((frame) => frame >= settings.skip).map((frame) => frame - settings.skip)
        const pipeSkip = settings.skip - drop.filter((frame) => frame < settings.skip).length
        let child: Child | undefined
        const start = ffmpeg
          .decode(
            fd,
            plan.target,
            pipe.write,
            // One frame past the cap: an overrun shows as a frame too many, and stops there.
            { ...decoderLimits(memory, cpuSeconds), threads, maxFrames: frames.allowed + settings.skip + 1 },
            // A segment: from its seek point (or the start), just its frames and context.
            settings.window === undefined
              ? undefined
              : {
                  seekSeconds: seek,
                  keepFromSeconds: seekTo?.keepFromSeconds,
                  frames: settings.window.frames + (seek === undefined ? pipeSkip : 0)
                },
            settings.drop === undefined && raw === undefined ? undefined : { drop: filterDrop, raw }
          )
          .pipe(
            Effect.tap((started) => {
              child = started
              return ffmpeg.watch(started, memory)
            }),
            Effect.ensuring(pipe.handOver),
            Effect.asVoid,
            Effect.mapError(asScoreError(path))
          )
        return {
          side: { fd: pipe.read, kind: "pipe", name: path, skip: seek === undefined ? pipeSkip : 0 },
          child: () => child,
          changed: plan.changed,
          frameAt,
          landing: seekTo?.landing,
          memory,
          start,
          frames,
          scaling: plan.scaling,
          shapeChanges: Effect.suspend(() =>
            child === undefined ? Effect.succeed([]) : changesOf(ffmpeg, stream, child.shapeRuns(), frameAt)
          ),
          decoder
        } satisfies FrameSource
      }
    }
  }).pipe(Effect.mapError((error) => (error._tag === "DecoderMissing" ? asScoreError(path)(error) : error)))

/** A raw or Y4M file as ffmpeg sees it, for decoding it like an encoded input (alignment's cuts). */
export const fileStream = (side: Side, geometry: RawGeometry): ProbedStream => ({
  container: side.format._tag === "Y4m" ? "yuv4mpegpipe" : "rawvideo",
  codec: "rawvideo",
  width: geometry.width,
  height: geometry.height,
  pixelFormat: ffmpegPixelFormat(geometry),
  durationSeconds: 0,
  heldFrames: 1,
  declaredFrames: undefined,
  frameRate: frameRateOf(side),
  colorSpace: ""
})

/** How ffmpeg reads a raw YUV side of `geometry`. */
export const rawInputOf = (geometry: RawGeometry): RawInputFormat => ({
  width: geometry.width,
  height: geometry.height,
  pixelFormat: ffmpegPixelFormat(geometry)
})

/**
 * A scored side's provenance: what it was, the changes of shape its decoder scaled or converted,
 * and its scaling ("none" when no frame was scaled), which names every size scaled.
 */
export const scoredInput = (
  side: Side,
  geometry: RawGeometry | undefined,
  source: FrameSource,
  target: RawGeometry,
  scale: ScoreJob["scale"]
): Effect.Effect<{ readonly input: InputInfo; readonly scaling: string | undefined }> =>
  Effect.map(source.shapeChanges, (changes) => {
    const input = provenanceOf(side, geometry)
    if (changes.length === 0) return { input, scaling: source.scaling }
    const sizes = [input, ...changes]
      .map((shape) => `${shape.width}x${shape.height}`)
      .filter((size, index, all) => size !== `${target.width}x${target.height}` && all.indexOf(size) === index)
    return {
      input: { ...input, changes },
      scaling: sizes.length === 0 ? source.scaling : `${scale} ${sizes.join(", ")} -> ${target.width}x${target.height}`
    }
  })

/**
 * The index (decode order, from 0) of an input's frame at a presentation time its decoder logged
 * (`seconds` after the decode's start, which is `offset` seconds into the input): the nearest of
 * the container's packet times, listed once when first needed; by the frame rate without them.
 */
const frameIndexer = (ffmpeg: Ffmpeg, fd: number, offset: number, frameRate: number) =>
  Effect.map(
    Effect.cached(Effect.option(ffmpeg.frameTimes(fd, headerProbeLimits))),
    (listed) =>
      (seconds: number): Effect.Effect<number> =>
        Effect.map(listed, (found) => {
          const times = Option.getOrUndefined(found)
          const at = seconds + offset + (times?.startSeconds ?? 0)
          if (times?.times === undefined || times.times.length === 0)
            return Math.max(0, Math.round((seconds + offset) * frameRate))
          let nearest = 0
          for (const [index, time] of times.times.entries())
            if (Math.abs(time - at) < Math.abs((times.times[nearest] ?? 0) - at)) nearest = index
          return nearest
        })
  )

/**
 * A scaled side's changes of shape, from its decoder's runs of changed frames: where each run
 * starts, and where the stream returns to its first shape (a gap before the next run, or frames
 * after the last).
 */
const changesOf = (
  ffmpeg: Ffmpeg,
  stream: ProbedStream,
  runs: ReadonlyArray<ShapeRun>,
  frameAt: (seconds: number) => Effect.Effect<number>
): Effect.Effect<ReadonlyArray<InputChange>> =>
  Effect.gen(function* () {
    if (runs.length === 0) return []
    const first = { width: stream.width, height: stream.height, pixel_format: stream.pixelFormat }
    const starts = yield* Effect.forEach(runs, (run) => frameAt(run.firstSeconds))
    // A return after the last run is listed only where the container says how many frames follow.
    const total = stream.declaredFrames ?? 0
    const changes: Array<InputChange> = []
    for (const [index, run] of runs.entries()) {
      const start = starts[index] ?? 0
      const name = yield* Effect.orElseSucceed(ffmpeg.pixelFormatName(run.format), () => `format ${run.format}`)
      changes.push({ frame: start, width: run.width, height: run.height, pixel_format: name })
      const end = start + run.frames
      const next = starts[index + 1]
      if ((next === undefined && end < total) || (next !== undefined && next > end))
        changes.push({ frame: end, ...first })
    }
    return changes
  })

/**
 * MPEG-TS seeks by byte position and its decoder starts at the first keyframe after it, which can
 * be past the time asked for; its frames kept their own times after a seek (MPEG-2 and H.264,
 * open GOPs and B-frames, at every start frame tried), so it is seeked a GOP earlier and its
 * frames are dropped by time. Others keep the seek to the keyframe at or before the time (MPEG-PS
 * is not seeked earlier: after a seek its parser gave a frame the time of another, which no check
 * of times could catch, while the seek to the time is refused by the landing check).
 */
const seeksEarlier = (container: string) => container.split(",").includes("mpegts")

/**
 * Where a segment's decode of an encoded input starts, in seconds after the input's start. Most
 * containers: the time halfway between the frame before `first` and `first` itself, in
 * presentation order, so the decoder seeks to the keyframe at or before it (IDR or closed-GOP
 * point; an open GOP's leading frames, shown before their keyframe, fall before it) and drops the
 * frames before that time. MPEG-TS (`seeksEarlier`): the time of the keyframe before the last
 * keyframe at or before `first`, so the first keyframe after the byte position the demuxer finds
 * is at the latest that last one (a GOP is longer than the decoder's reordering), and the frames
 * presented before halfway to `first` are dropped by time (`keepFromSeconds`): at most about two
 * GOPs are decoded before the segment. Either way the first frame out is frame `first`, whatever B-frames
 * reorder or an edit list shifts. Undefined: decode from the start (a segment starting the input,
 * or frames without times).
 */
const seekPoint = (ffmpeg: Ffmpeg, fd: number, first: number, container: string) =>
  Effect.gen(function* () {
    if (first === 0) return undefined
    const { times, keyframeTimes = [], startSeconds } = yield* ffmpeg.frameTimes(fd, headerProbeLimits)
    const before = times?.[first - 1]
    const at = times?.[first]
    if (before === undefined || at === undefined) return undefined
    const halfway = (before + at) / 2 - startSeconds
    const keyframes = keyframeTimes.filter((time) => time <= at)
    const indexed = !seeksEarlier(container) || keyframes.length === 0
    // MPEG-TS: the keyframe before the last one at or before `first` (none: the start).
    const previousKeyframe = keyframes.at(-2) ?? startSeconds
    const seconds = Math.max(0, indexed ? halfway : previousKeyframe - startSeconds)
    // Frame `first` comes out at its time after the seek point; its neighbours a frame away.
    const landing: Landing = { frame: first, afterSeek: at - startSeconds - seconds, tolerance: (at - before) / 2 }
    return { seconds, landing, keepFromSeconds: indexed ? undefined : halfway - seconds }
  })

/**
 * The library's feed of sources (the reference first), judged by their decoders' exits and frame
 * caps; the decoders' memory is admitted with the scorer's before any of them starts.
 */
export const feedOf = (
  sources: ReadonlyArray<FrameSource>,
  target: RawGeometry,
  /** An aligned ladder's renditions: the frames read each one pairs (VerdictSide's `reads`). */
  reads?: ReadonlyArray<VerdictSide["reads"]>
): Feed => ({
  sides: sources.map((source) => source.side),
  verdict: decoderVerdict(
    sources.map((source, index) => ({
      reads: reads?.[index],
      path: source.side.name,
      child: source.child,
      changed: source.changed,
      frameAt: source.frameAt,
      landing: source.landing,
      skip: source.side.skip,
      frames: source.frames
    })),
    frameBytes(target)
  ),
  memory: sources.reduce((sum, source) => sum + source.memory, 0),
  start: Effect.forEach(sources, (source) => source.start, { discard: true })
})

/**
 * The thumbnails of scored frames `frames` (shots.ts's worst shots) of a pair scored through a
 * fed stream: a raw/Y4M side read from its descriptor, an encoded side decoded again by ffmpeg
 * (only those frames come out, scaled to the reference's size as when scored), one frame held at
 * a time. Each side reads the input frames the score paired (its skip, its `pairing`, subsample).
 * Best effort: a side that cannot give them leaves the result without thumbnails.
 */
export const sidePictures = <E>(
  job: ScoreJob,
  target: RawGeometry,
  frames: ReadonlyArray<number>,
  sides: ReadonlyArray<{
    readonly side: Side
    /** The side's frame skip. */
    readonly skip: number
    /** Where its pairs start after the skip and the frames cut out (an alignment's); none: pair k is frame k. */
    readonly pairing?: SidePairing | undefined
    readonly isDistorted: boolean
  }>,
  admitMemory: ScoreHooks<E>["admitMemory"]
) =>
  Effect.gen(function* () {
    const ffmpeg = yield* Ffmpeg
    const pictures = yield* Effect.forEach(sides, ({ side, skip, pairing, isDistorted }) => {
      const { fd } = side.input
      // Scored frame k is pair k x subsample, read where the aligned score read it.
      const inputFrames = inputFramesOf(
        pairing ?? unpaired,
        frames.map((frame) => frame * job.subsample)
      )
      if (side.format._tag !== "Encoded")
        return Effect.promise(() =>
          filePictures({ fd, y4m: side.format._tag === "Y4m", skip }, target, frames, inputFrames)
        )
      const { stream } = side.format
      const resize = stream.width !== target.width || stream.height !== target.height
      const byFrame = new Map<number, string>()
      // The thumbnails' decoder is admitted and walled in like the score's (after the score's
      // memory was given back): one that does not fit now leaves the result without thumbnails.
      const threads = Math.max(1, job.threads)
      const memory = decoderMemory(stream, layoutOf(stream.pixelFormat), target, threads)
      const indices = inputFrames.map((frame) => skip + frame)
      const frameOfIndex = new Map(indices.map((index, k) => [index, frames[k] as number]))
      return Effect.scoped(
        Effect.gen(function* () {
          // A segment's frames are read as its score reads them: from the seek point of the
          // first one wanted, landing checked (a title's one pass decodes from the start).
          const seekTo =
            job.segment === undefined || indices.length === 0
              ? undefined
              : yield* seekPoint(ffmpeg, fd, Math.min(...indices), stream.container)
          if (admitMemory) yield* admitMemory(memory)
          const first = yield* ffmpeg.decodeSelected(
            fd,
            {
              width: target.width,
              height: target.height,
              pixelFormat: ffmpegPixelFormat(target),
              scale: resize && isDistorted && job.scale !== "none" ? job.scale : undefined
            },
            indices,
            frameBytes(target),
            { ...decoderLimits(memory, ffmpeg.limits.cpuSeconds), threads, memory },
            async (index, raw) => {
              const url = await thumbnailOf(raw, target)
              const frame = frameOfIndex.get(index)
              if (url && frame !== undefined) byFrame.set(frame, url)
            },
            seekTo && {
              seconds: seekTo.seconds,
              first: seekTo.landing.frame,
              keepFromSeconds: seekTo.keepFromSeconds
            }
          )
          yield* checkLanding(side.input.path, seekTo?.landing, first)
          return byFrame as ReadonlyMap<number, string>
        })
      )
    })
    const [reference = new Map(), distorted = new Map()] = pictures
    return pairThumbnails(frames, reference, distorted)
  }).pipe(
    Effect.orElseSucceed(() => []),
    Effect.catchAllDefect(() => Effect.succeed([]))
  )

/**
 * Scores through a fed stream (the library reads both sides on its own thread): at least one
 * side is decoded, or a name disagrees with its bytes.
 */
const scoreFrames = <E>(
  scorer: Scorer,
  job: ScoreJob,
  hooks: ScoreHooks<E>,
  ref: Side,
  dis: Side,
  /** The alignment already found (a file pair's search ran before choosing the way in). */
  found?: Alignment
) =>
  found === undefined && job.alignment === undefined && job.sync !== undefined
    ? // Held frames stay admitted through the score: where the budget then refuses a later
      // admission (the search's, the score's), they are given back and the pair is searched and
      // scored by two decodes, as it would have been without them. A streaming attempt given up
      // is scored the same way.
      Effect.suspend(() => {
        const shown = monotoneProgress(hooks)
        const twoDecodes = scoreFramesWith(scorer, job, shown, ref, dis, undefined, undefined)
        const holding = { held: false }
        const attempt = Effect.scoped(streamFrames(scorer, job, shown, ref, dis, job.sync?.window ?? 0, holding))
        return attempt.pipe(
          Effect.catchTag("StreamAbandoned", () => Effect.succeed(undefined)),
          Effect.catchIf(
            (error) => holding.held && isAdmissionRefusal(error),
            () => Effect.succeed(undefined)
          ),
          Effect.flatMap((streamed) =>
            streamed !== undefined
              ? Effect.succeed(streamed)
              : Effect.suspend(() => {
                  const held = { held: false }
                  return Effect.scoped(scoreFramesWith(scorer, job, shown, ref, dis, undefined, held)).pipe(
                    Effect.catchIf(
                      (error) => held.held && isAdmissionRefusal(error),
                      () => twoDecodes
                    )
                  )
                })
          )
        )
      })
    : scoreFramesWith(scorer, job, hooks, ref, dis, found, undefined)

/**
 * Progress that never goes back: a score given up and scored again (two decodes) reports its
 * frames again only past the most reported.
 */
const monotoneProgress = <E>(hooks: ScoreHooks<E>): ScoreHooks<E> => {
  const report = hooks.onProgress
  if (report === undefined) return hooks
  let shown = 0
  return {
    ...hooks,
    onProgress: (done) => {
      if (done <= shown) return Effect.void
      shown = done
      return report(done)
    }
  }
}

/** A refusal of the memory budget (its room now, or its size), not of the request. */
const isAdmissionRefusal = (error: unknown): boolean =>
  typeof error === "object" &&
  error !== null &&
  "_tag" in error &&
  (error._tag === "ScoreMemoryBusy" || error._tag === "ScoreTooLarge")

const scoreFramesWith = <E>(
  scorer: Scorer,
  job: ScoreJob,
  hooks: ScoreHooks<E>,
  ref: Side,
  dis: Side,
  found: Alignment | undefined,
  /** `options.sync: "auto"` searched here: an encoded side within the window is decoded once, its frames held (`held` tells). */
  holding: { held: boolean } | undefined
) =>
  Effect.gen(function* () {
    const target = geometryOf(ref, job.geometry)
    if (target === undefined) return yield* new InvalidScoreRequest({ message: rawGeometryRequired })
    const settings = { geometry: job.geometry, scale: job.scale, reference: job.reference, threads: job.threads }
    // options.sync "auto" searched here: an encoded side is decoded once, for the search and the score.
    const searched = holding !== undefined && found === undefined && job.alignment === undefined ? job.sync : undefined
    const hold = (side: Side, path: string, isDistorted: boolean, skip: number) =>
      searched === undefined
        ? Effect.succeed(undefined)
        : holdSide(scorer, side, path, { ...settings, isDistorted }, skip, target, hooks, searched.window)
    const [heldRef, heldDis] = yield* Effect.all(
      [hold(ref, job.reference, false, job.frameSkipRef), hold(dis, job.distorted, true, job.frameSkipDist)],
      { concurrency: 2 }
    )
    if (holding !== undefined) holding.held = heldRef !== undefined || heldDis !== undefined
    const alignment =
      found ??
      job.alignment ??
      (job.sync === undefined
        ? undefined
        : yield* alignPair(
            job,
            job.sync.window,
            ref,
            dis,
            target,
            hooks,
            heldRef?.held.thumbnails,
            heldDis?.held.thumbnails
          ))
    // Aligned: frame_cnt counts pairs, and the overlap ends where the pairs do.
    const frameCount =
      alignment === undefined
        ? job.frameCount
        : job.frameCount > 0
          ? Math.min(job.frameCount, alignment.frames)
          : alignment.frames
    // A segment reads its context frames and its own: an encoded side seeks to them.
    const readFrames = segmentReadFrames(job)
    const window = readFrames === undefined ? undefined : { frames: readFrames }
    const readStart = segmentReadStart(job)
    const refRead = sideRead(
      job.frameSkipRef,
      alignment?.reference_start,
      alignment?.reference_frames_dropped,
      readStart
    )
    const refSource = heldRef
      ? yield* heldSource(scorer, heldRef, job.reference, refRead, job.frameSkipRef, frameCount)
      : yield* frameSource(scorer, ref, job.reference, { ...settings, ...refRead, isDistorted: false, window }, target)
    const disRead = sideRead(
      job.frameSkipDist,
      alignment?.distorted_start,
      alignment?.distorted_frames_inserted,
      readStart
    )
    const disSource = heldDis
      ? yield* heldSource(scorer, heldDis, job.distorted, disRead, job.frameSkipDist, frameCount)
      : yield* frameSource(scorer, dis, job.distorted, { ...settings, ...disRead, isDistorted: true, window }, target)
    return yield* scoreSources(scorer, job, hooks, ref, dis, target, refSource, disSource, frameCount, alignment)
  })

/**
 * The library's score of the pair's two sources, and the result. `found`: the alignment, known
 * before the score, or (streaming, alignment-stream.ts) found while the library reads, whose
 * failure (`streamFailure`) outranks the library's.
 */
const scoreSources = <E, F = never>(
  scorer: Scorer,
  job: ScoreJob,
  hooks: ScoreHooks<E>,
  ref: Side,
  dis: Side,
  target: RawGeometry,
  refSource: FrameSource,
  disSource: FrameSource,
  frameCount: number,
  found: Alignment | undefined | Effect.Effect<Alignment, F>,
  streamFailure: () => F | undefined = () => undefined
) =>
  Effect.gen(function* () {
    const decoder = refSource.decoder ?? disSource.decoder ?? ""
    // The skips (and a segment's start) are the sides' own; frame_cnt and subsample apply to the stream. The library reads
    // no header of a fed side: the reference's rate (xpsnr) and matrix (ssimulacra2) come from here.
    const streamJob: ScoreJob = {
      ...job,
      geometry: target,
      frameSkipRef: 0,
      frameSkipDist: 0,
      frameCount,
      frameRate: job.frameRate || frameRateOf(ref),
      colorMatrix: colorMatrixOf(ref)
    }
    const frames: Array<ScoreResult["frames"][number]> = []
    let done = 0
    let aggregate: ScoreResult | undefined
    const scored = scorer
      .scoreFed(streamJob, feedOf([refSource, disSource], target), {
        ...(hooks.admitMemory ? { admitMemory: hooks.admitMemory } : {})
      })
      .pipe(
        Stream.runForEach((event) => {
          if (event._tag === "Aggregate") {
            aggregate = event.result
            return Effect.void
          }
          if (job.perFrame) frames.push(event.frame)
          done++
          return hooks.onProgress ? hooks.onProgress(done) : Effect.void
        })
      )
    // Streaming: the alignment is found while the library reads; a failure of the attempt
    // outranks the library's (its inputs were cut short by it).
    const alignment =
      found === undefined || !Effect.isEffect(found)
        ? yield* Effect.as(scored, found)
        : (yield* Effect.all([Effect.catchAll(scored, (error) => Effect.fail(streamFailure() ?? error)), found], {
            concurrency: 2
          }))[1]
    if (aggregate === undefined) return yield* new InvalidGeometry({ message: "no frames to score after the skips" })
    const thumbnails = job.shots
      ? yield* sidePictures(
          job,
          target,
          thumbnailFramesOf({ ...aggregate, frames }, job),
          [
            { side: ref, skip: job.frameSkipRef, pairing: referencePairing(alignment), isDistorted: false },
            { side: dis, skip: job.frameSkipDist, pairing: distortedPairing(alignment), isDistorted: true }
          ],
          hooks.admitMemory
        )
      : []
    const distorted = yield* scoredInput(dis, job.geometry, disSource, target, job.scale)
    return withInputs(
      { ...aggregate, frames, thumbnails, ...(alignment === undefined ? {} : { alignment }) },
      {
        decoder,
        reference_input: provenanceOf(ref, job.geometry),
        distorted_input: distorted.input,
        scaling: distorted.scaling ?? refSource.scaling ?? "none"
      }
    )
  })

/**
 * `options.sync: "auto"` where an encoded side is longer than the window (the held path does not
 * apply): both sides read once, the alignment found while the library scores the pairs already
 * certain (alignment-stream.ts). Admitted first, for the score's scope: each decoded side's cap of
 * held frames, the search's thumbnails and band, and a file side's luma plane (its frames are
 * read by the library, from the indices written into its index pipe).
 * Undefined (nothing started) where it does not apply (no such side, a file side of another
 * geometry than the reference's, a segment) or the budget has no room; fails with
 * `StreamAbandoned` where it was given up. Either way the caller scores the pair by two decodes.
 */
const streamFrames = <E>(
  scorer: Scorer,
  job: ScoreJob,
  hooks: ScoreHooks<E>,
  ref: Side,
  dis: Side,
  window: number,
  /** Set once something is admitted: a later refusal of the budget is then this attempt's. */
  holding: { held: boolean }
) =>
  Effect.gen(function* () {
    const target = geometryOf(ref, job.geometry)
    if (target === undefined || job.segment !== undefined) return undefined
    const ffmpeg = yield* Ffmpeg
    const settings = { geometry: job.geometry, scale: job.scale, reference: job.reference, threads: job.threads }
    const sides = [
      { side: ref, path: job.reference, skip: job.frameSkipRef, isDistorted: false },
      { side: dis, path: job.distorted, skip: job.frameSkipDist, isDistorted: true }
    ] as const
    // An encoded side's scoring decoder (a refusal of it is left to the usual path to report).
    const planOf = ({ side, path, isDistorted }: (typeof sides)[SideIndex]) =>
      side.format._tag === "Encoded"
        ? Effect.map(Effect.option(scoringDecodeOf(side, path, { ...settings, isDistorted }, target)), Option.getOrNull)
        : Effect.succeed(null)
    const plans = yield* Effect.all([planOf(sides[0]), planOf(sides[1])])
    const longer = sides.some(({ skip }, k) => {
      const declared = plans[k]?.frames.declared
      return plans[k] != null && (declared === undefined || declared - skip > window)
    })
    const usable = sides.every(({ side }, k) => {
      if (side.format._tag === "Encoded") return plans[k] != null
      const geometry = geometryOf(side, job.geometry)
      return geometry !== undefined && sameGeometry(geometry, target)
    })
    if (!longer || !usable) return undefined
    const searchOf = ({ side, path, skip }: (typeof sides)[SideIndex]) => searchSideOf(job, side, path, skip, target)
    const searchSides = yield* Effect.all([searchOf(sides[0]), searchOf(sides[1])])
    const [refSearch, disSearch] = searchSides
    yield* oneRate(refSearch, disSearch)
    // Each decoded side's cap of held frames: the most its container allows after its skip, at most 3 x window + 64.
    const capOf = (index: SideIndex) => {
      const plan = plans[index]
      return plan == null ? 0 : streamHeldFrames(window, Math.max(1, plan.frames.allowed - sides[index].skip))
    }
    const caps = [capOf(0), capOf(1)] as const
    const bytes = frameBytes(target)
    const memory =
      searchBytes(refSearch.frames, disSearch.frames, window) +
      (refSearch.frames + disSearch.frames) * thumbnailBytes +
      searchSides.reduce(
        (sum, side, k) => sum + (plans[k] != null ? caps[k === 0 ? 0 : 1] * (bytes + thumbnailBytes) : side.memory),
        0
      )
    if (!(yield* admits(hooks, memory))) return undefined
    holding.held = true
    const pair = new StreamingPair(window, [plans[0] != null, plans[1] != null], job.frameCount, caps, refSearch.frames)
    const decoder = (yield* Effect.mapError(ffmpeg.tools, asScoreError(job.distorted))).version
    const sourceOf = (index: SideIndex) => {
      const { path, skip } = sides[index]
      const plan = plans[index]
      const search = searchSides[index]
      return Effect.gen(function* () {
        const library = yield* ownedPipe(scorer, "write")
        const common = {
          frameAt: () => Effect.succeed(0),
          frames: undefined,
          shapeChanges: Effect.succeed([])
        } as const
        if (plan == null) {
          const file = search.file
          if (file === undefined) return yield* notAVideo(path)
          // The library preads the file's frames whose indices (after the skip) the writer gives it.
          const kind = sides[index].side.format._tag === "Y4m" ? "y4m" : "raw"
          return {
            ...common,
            side: { fd: file.fd, kind, name: path, skip, index: library.other },
            child: () => undefined,
            changed: undefined,
            memory: 0,
            start: Effect.zipRight(
              streamFileThumbnails(pair, index, file, skip),
              Effect.sync(() => {
                void writeSide(pair, index, library, "indices")
              })
            ),
            scaling: undefined,
            decoder: undefined
          } satisfies FrameSource
        }
        const thumbnails = yield* ownedPipe(scorer, "read")
        let child: Child | undefined
        const start = Effect.gen(function* () {
          const started = yield* ffmpeg
            .decodeWithThumbnails(
              search.fd,
              plan.target,
              { width: thumbnailWidth, height: thumbnailHeight },
              thumbnails.other,
              {
                ...decoderLimits(plan.memory, ffmpeg.limits.cpuSeconds),
                threads: plan.threads,
                // One frame past the cap: an overrun shows.
                maxFrames: plan.frames.allowed + 1
              }
            )
            .pipe(Effect.ensuring(thumbnails.handOver), Effect.mapError(asScoreError(path)))
          child = started
          yield* ffmpeg.watch(started, plan.memory)
          void readDecoded(pair, index, started, thumbnails, skip, bytes, plan.frames.allowed).catch(() =>
            pair.abandon("a decoder's output could not be read")
          )
          void writeSide(pair, index, library, "frames")
        })
        return {
          ...common,
          side: { fd: library.other, kind: "pipe", name: path, skip: 0 },
          child: () => child,
          changed: plan.changed,
          memory: plan.memory,
          start,
          scaling: plan.scaling,
          decoder
        } satisfies FrameSource
      })
    }
    const [refSource, disSource] = yield* Effect.all([sourceOf(0), sourceOf(1)])
    const found = Effect.async<Alignment, StreamFailure>((resume) =>
      pair.outcome((outcome) => resume("_tag" in outcome ? Effect.fail(outcome) : Effect.succeed(outcome)))
    )
    return yield* scoreSources(
      scorer,
      job,
      hooks,
      ref,
      dis,
      target,
      refSource,
      disSource,
      job.frameCount,
      found,
      () => pair.failure
    )
  })

/** An encoded side decoded once (alignment-once.ts), with its scoring decoder's settings. */
interface HeldDecode {
  readonly held: HeldSide
  readonly plan: Effect.Effect.Success<ReturnType<typeof scoringDecodeOf>>
  readonly decoder: string
}

/** Admits `bytes` for the enclosing scope: false (nothing admitted) where the budget has no room. */
const admits = <E>(hooks: ScoreHooks<E>, bytes: number) =>
  hooks.admitMemory === undefined
    ? Effect.succeed(true)
    : Effect.map(Effect.either(hooks.admitMemory(bytes)), Either.isRight)

/**
 * `options.sync: "auto"` on an encoded side whose container declares at most `sync_window` frames
 * after its skip: decoded once by its scoring decoder, the frames held for the
 * score and the thumbnails made for the search (alignment-once.ts). The held frames are admitted
 * for the score's scope, the decoder while it runs, before it starts. Undefined, and nothing
 * held, where it does not apply, the budget has no room, or the decode was not clean: the side is
 * then searched and scored by two decodes, as ever.
 */
const holdSide = <E>(
  scorer: Scorer,
  side: Side,
  path: string,
  settings: DecodeSettings,
  skip: number,
  target: RawGeometry,
  hooks: ScoreHooks<E>,
  window: number
) =>
  Effect.gen(function* () {
    if (side.format._tag !== "Encoded") return undefined
    const ffmpeg = yield* Ffmpeg
    const plan = yield* scoringDecodeOf(side, path, settings, target)
    const { declared, allowed } = plan.frames
    // Judged on the frames the container declares; admitted for the most it may decode to.
    if (declared === undefined || declared <= skip || declared - skip > window) return undefined
    const heldFrames = allowed - skip
    const scope = yield* Scope.make()
    const held = yield* Effect.gen(function* () {
      if (!(yield* admits(hooks, heldBytes(heldFrames, frameBytes(target))))) return undefined
      return yield* Effect.scoped(
        Effect.gen(function* () {
          if (!(yield* admits(hooks, plan.memory))) return undefined
          return yield* holdDecoded(
            scorer,
            side.input.fd,
            plan.target,
            {
              ...decoderLimits(plan.memory, ffmpeg.limits.cpuSeconds),
              threads: plan.threads,
              maxFrames: plan.frames.allowed
            },
            plan.memory,
            skip,
            frameBytes(target)
          ).pipe(
            Effect.mapError((error) =>
              error._tag === "DecoderMissing" || error._tag === "DecoderFailed" ? asScoreError(path)(error) : error
            )
          )
        })
      )
    }).pipe(Scope.extend(scope))
    if (held === undefined) {
      yield* Scope.close(scope, Exit.void)
      return undefined
    }
    yield* Effect.addFinalizer(() => Scope.close(scope, Exit.void))
    const decoder = (yield* Effect.mapError(ffmpeg.tools, asScoreError(path))).version
    return { held, plan, decoder } satisfies HeldDecode
  })

/**
 * A held side as the library reads it: its pipe, written from the held frames (its start, its cut
 * frames left out, the `count` pairs the score reads) once the score starts; judged by the
 * decoder that made them (which exited cleanly, whole frames, within its cap).
 */
const heldSource = (
  scorer: Scorer,
  { held, plan, decoder }: HeldDecode,
  path: string,
  read: { readonly skip: number; readonly drop: ReadonlyArray<number> | undefined },
  frameSkip: number,
  count: number
) =>
  Effect.map(
    heldFeed(
      scorer,
      held,
      read.skip - frameSkip,
      (read.drop ?? []).map((frame) => frame - frameSkip),
      count
    ),
    (feed): FrameSource => ({
      side: { fd: feed.read, kind: "pipe", name: path, skip: 0 },
      child: () => held.child,
      changed: plan.changed,
      frameAt: () => Effect.succeed(0),
      memory: 0,
      start: feed.start,
      frames: undefined,
      scaling: plan.scaling,
      shapeChanges: Effect.succeed([]),
      decoder
    })
  )

/** The reference's pairing in an alignment (none: unaligned). */
const referencePairing = (alignment: Alignment | undefined): SidePairing | undefined =>
  alignment && { start: alignment.reference_start, cut: alignment.reference_frames_dropped }

/** The distorted side's pairing in an alignment (none: unaligned). */
const distortedPairing = (alignment: Alignment | undefined): SidePairing | undefined =>
  alignment && { start: alignment.distorted_start, cut: alignment.distorted_frames_inserted }

/**
 * Where one side's read starts in its input (`skip`) and the input frames it leaves out
 * (`drop`): its frame skip, then for an aligned pair its start, and for a segment the input frame
 * of the first pair it reads (the title of an aligned pair counts pairs), cut frames skipped.
 */
export const sideRead = (
  frameSkip: number,
  start: number | undefined,
  cut: ReadonlyArray<number> | undefined,
  readStart: number
): { readonly skip: number; readonly drop: ReadonlyArray<number> | undefined } => {
  if (start === undefined || cut === undefined) return { skip: frameSkip + readStart, drop: undefined }
  const [first = start] = inputFramesOf({ start, cut }, [readStart])
  return { skip: frameSkip + first, drop: cut.map((frame) => frame + frameSkip) }
}

/** `options.sync: "auto"`: the search pass over both inputs (alignment-search.ts). */
export const alignPair = <E>(
  job: ScoreJob,
  window: number,
  ref: Side,
  dis: Side,
  target: RawGeometry,
  hooks: ScoreHooks<E>,
  referenceThumbnails?: SideThumbnails,
  /** The distorted side's thumbnails, made by its scoring decoder (alignment-once.ts). */
  distortedThumbnails?: SideThumbnails
) =>
  Effect.gen(function* () {
    return yield* findAlignment(
      yield* searchSideOf(job, ref, job.reference, job.frameSkipRef, target),
      yield* searchSideOf(job, dis, job.distorted, job.frameSkipDist, target),
      window,
      asScoreError,
      hooks,
      { reference: referenceThumbnails, distorted: distortedThumbnails }
    )
  })

/** One input as the alignment's search reads it: a file side from its descriptor, an encoded side through a decoder. */
const searchSideOf = (job: ScoreJob, side: Side, path: string, skip: number, target: RawGeometry) =>
  Effect.gen(function* () {
    const ffmpeg = yield* Ffmpeg
    const geometry = geometryOf(side, job.geometry) ?? target
    const common = { fd: side.input.fd, path, skip, frameRate: frameRateOf(side) }
    if (side.format._tag === "Encoded")
      return {
        ...common,
        frames: frameCapOf(side.format.stream.declaredFrames, ffmpeg.limits.maxFrames).allowed,
        file: undefined,
        memory: decoderMemory(side.format.stream, geometry, geometry, 1)
      } satisfies SearchSide
    const { size } = yield* Effect.promise(() => fstatAsync(side.input.fd))
    const { format } = side
    const firstFrame = format._tag === "Y4m" ? y4mFrameOffset(format, 0) : 0
    const frameStride = format._tag === "Y4m" ? y4mFrameOffset(format, 1) - firstFrame : frameBytes(geometry)
    const whole = format._tag === "Y4m" ? y4mFrameCount(format, size) : Math.floor(size / frameStride)
    const frames = Math.min(ffmpeg.limits.maxFrames, whole)
    return {
      ...common,
      frames,
      file: {
        fd: side.input.fd,
        geometry: format._tag === "Y4m" ? format.geometry : geometry,
        firstFrame,
        frameStride,
        frames
      },
      memory: lumaPlaneBytes(geometry)
    } satisfies SearchSide
  })

/**
 * The reference's thumbnails, made once for a ladder's renditions: admitted (its search decoder
 * and thumbnails) for the caller's scope.
 */
export const referenceThumbnails = <E>(job: ScoreJob, ref: Side, target: RawGeometry, hooks: ScoreHooks<E>) =>
  Effect.gen(function* () {
    const side = yield* searchSideOf(job, ref, job.reference, job.frameSkipRef, target)
    if (hooks.admitMemory) yield* hooks.admitMemory(side.memory + thumbnailsBytes(side))
    return yield* searchThumbnails(side, asScoreError)
  })

/**
 * The plan of a segment job with `options.sync: "auto"`: the alignment of the whole inputs (the
 * search pass alone, each input opened once through the caller's guard). Its pairs are the title
 * the segments cut; each segment is scored with it (`ScoreJob.alignment`), not searched again.
 */
export const alignTitle = <E = never>(
  job: ScoreJob,
  window: number,
  hooks: InputHooks<E> = {}
): Effect.Effect<AlignmentReport, ScoreError | E, Ffmpeg> =>
  Effect.scoped(
    Effect.gen(function* () {
      const rawAllowed = job.geometry !== undefined
      const ref: Side = yield* openAndProbe(job.reference, rawAllowed, hooks, job.referenceAsSent)
      const dis: Side = yield* openAndProbe(job.distorted, rawAllowed, hooks, job.distortedAsSent)
      const target = geometryOf(ref, job.geometry)
      if (target === undefined) return yield* new InvalidScoreRequest({ message: rawGeometryRequired })
      return yield* alignPair(job, window, ref, dis, target, hooks)
    })
  )

/**
 * The memory a plan's count of one input is admitted with: an encoded input's packet counter
 * (ffprobe reading packets, no frame decoded: a decoder's base, its hard limit
 * `headerProbeLimits`); a raw or Y4M input starts no decoder (the scorer reads its headers), 0.
 */
export const countingMemory = (side: Side): number => (side.format._tag === "Encoded" ? decoderBaseBytes : 0)

/**
 * The frames of one input after `skip`, as a segment job's plan counts them: an encoded input by
 * its packets (ffprobe), a raw or Y4M input by the scorer as a score would read it (the input as
 * both sides of a file job). `job` gives the input's raw geometry and the scorer's settings.
 * The count's memory (`countingMemory`) is admitted first through `hooks.admitMemory`, held while
 * it runs.
 */
export const countInputFrames = <E = never>(
  scorer: Scorer,
  job: ScoreJob,
  side: Side,
  path: string,
  skip: number,
  hooks: Pick<ScoreHooks<E>, "admitMemory"> = {}
) =>
  Effect.scoped(
    Effect.gen(function* () {
      if (hooks.admitMemory) yield* hooks.admitMemory(countingMemory(side))
      return yield* countAdmitted(scorer, job, side, path, skip)
    })
  )

const countAdmitted = (scorer: Scorer, job: ScoreJob, side: Side, path: string, skip: number) =>
  Effect.gen(function* () {
    const ffmpeg = yield* Ffmpeg
    if (side.format._tag === "Encoded") {
      const times = yield* ffmpeg.frameTimes(side.input.fd, headerProbeLimits).pipe(Effect.mapError(asScoreError(path)))
      return Math.max(0, times.frames - skip)
    }
    return yield* scorer.countFrames(
      {
        ...job,
        reference: path,
        distorted: path,
        frameSkipRef: skip,
        frameSkipDist: skip,
        frameCount: 0,
        subsample: 1,
        segment: undefined
      },
      { reference: side.input, distorted: side.input, referenceSize: geometryOf(side, job.geometry) }
    )
  })

/**
 * The frames a title of inputs counted `counts` scores, as one pass would: frame_cnt when every
 * input has that many, else their common length; inputs of different lengths are refused as a
 * score refuses them (`describe` names the input and its count).
 */
export const titleFrames = (
  frameCount: number,
  counts: ReadonlyArray<number>,
  describe: (index: number) => string
): Effect.Effect<number, InvalidGeometry> => {
  const shortest = Math.min(...counts)
  if (frameCount > 0 && shortest >= frameCount) return Effect.succeed(frameCount)
  const differs = counts.findIndex((count) => count !== counts[0])
  if (differs > 0)
    return Effect.fail(new InvalidGeometry({ message: `${describe(0)}, ${describe(differs)}: lengths differ` }))
  if (shortest === 0) return Effect.fail(new InvalidGeometry({ message: "no frames to score after the skips" }))
  return Effect.succeed(shortest)
}

/**
 * The plan of a segment job: the frames the whole title scores (after the frame skips and
 * frame_cnt), each input opened once through the caller's guard. Raw and Y4M inputs are counted
 * by the scorer as a score would read them; encoded inputs by their packets (ffprobe). Inputs of
 * different lengths are refused as a score refuses them.
 */
export const countTitleFrames = <E = never>(
  scorer: Scorer,
  job: ScoreJob,
  hooks: InputHooks<E> = {}
): Effect.Effect<number, ScoreError | E, Ffmpeg> =>
  Effect.scoped(
    Effect.gen(function* () {
      const rawAllowed = job.geometry !== undefined
      const ref: Side = yield* openAndProbe(job.reference, rawAllowed, hooks)
      const dis: Side = yield* openAndProbe(job.distorted, rawAllowed, hooks)
      if ((ref.format._tag === "Raw" || dis.format._tag === "Raw") && job.geometry === undefined)
        return yield* new InvalidScoreRequest({ message: rawGeometryRequired })
      const counts = [
        yield* countInputFrames(scorer, job, ref, job.reference, job.frameSkipRef, hooks),
        yield* countInputFrames(scorer, job, dis, job.distorted, job.frameSkipDist, hooks)
      ]
      const skips = [job.frameSkipRef, job.frameSkipDist]
      const paths = [job.reference, job.distorted]
      return yield* titleFrames(
        job.frameCount,
        counts,
        (index) => `${paths[index]} has ${counts[index]} frames after skipping ${skips[index]}`
      )
    })
  )
