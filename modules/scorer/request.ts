/**
 * The score request of seed 001 (ScoreRequest / ScoreOptions, proto field names), decoded
 * strictly: unknown fields are refused at every level, every option value is checked. Zero
 * values ("" and 0) mean "not set", as in proto3, so gRPC and JSON requests decode alike.
 */
import { Effect, Either, ParseResult, Schema } from "effect"
import { component, documented, field, fieldRules, optionalField } from "./contract.ts"
import type { AlignmentReport } from "./alignment-report.ts"
import { InvalidScoreRequest } from "./errors.ts"
import { requestableFeatures } from "./native-features.ts"
import { parsePrecision, type Precision, precisionPattern, precisionRule } from "./precision.ts"
import { defaultShotMinFrames, defaultShotThreshold, type ShotOptions } from "./shots.ts"

export const defaultModel = "vmaf_v0.6.1"
/** `model: "auto"`: the 4K model for a reference of at least 3840x2160, else the default. */
export const autoModel = "auto"
export const autoModel4k = "vmaf_4k_v0.6.1"
export const autoModel4kSize = { width: 3840, height: 2160 } as const
/** Models of one `models` request (each extracted once over the union of their features). */
export const maxModelsPerRequest = 16
export const maxThreads = 64
/** `options.sync_window` when not set: the largest start offset (and drift) searched, in frames. */
export const defaultSyncWindow = 120
export const maxSyncWindow = 10_000
/**
 * `options.segment_frames`: 0 scores the title in one piece; otherwise at least this many frames
 * per segment (shorter segments spend more of their time on the context frames and, for encoded
 * input, on decoding from the seek point).
 */
export const minSegmentFrames = 24
export const maxSegmentFrames = 1_000_000_000
/** Most segments of one job: a longer title gets longer segments (frames / this, rounded up). */
export const maxSegmentsPerJob = 10_000

const between = (min: number, max: number) =>
  Schema.Int.pipe(Schema.greaterThanOrEqualTo(min), Schema.lessThanOrEqualTo(max))

// The library's feature list (native-features.ts, generated from the registry at build time).
export const ExtraFeature = Schema.Literal(...requestableFeatures)
export type ExtraFeature = typeof ExtraFeature.Type

/** Frames per second xpsnr's temporal term assumes for raw input when the request gives none (FFmpeg's rawvideo default). */
export const defaultFrameRate = 25
export const maxFrameRate = 1000

/** Y'CbCr matrices ssimulacra2's RGB conversion knows (the input's colour metadata; BT.709 when it has none). */
export type ColorMatrix = "bt709" | "bt601" | "bt2020"

const rawInput = "(required for raw input, ignored for Y4M and encoded input)"
const notSet = { note: "(0: not set)" }

export const ScoreOptions = component(
  Schema.Struct({
    width: optionalField(between(0, 16384), { doc: `Width of raw input in pixels ${rawInput}.`, rule: notSet }),
    height: optionalField(between(0, 16384), { doc: `Height of raw input in pixels ${rawInput}.`, rule: notSet }),
    pixel_format: optionalField(Schema.Literal("", "420", "422", "444"), {
      doc: "Chroma subsampling of raw input. Default 420.",
      rule: { note: '("": 420)' }
    }),
    bitdepth: optionalField(Schema.Literal(0, 8, 10, 12, 16), {
      doc: "Bits per sample of raw input (above 8: 16-bit little-endian words). Default 8.",
      rule: { note: "(0: 8)" }
    }),
    backend: optionalField(Schema.Literal("", "auto", "cpu", "scalar", "avx2", "avx512"), {
      doc: "CPU backend: auto (default, best supported), cpu (same as auto), scalar (reference path), avx2 (refused on a CPU without AVX2), avx512 (AVX-512 kernels where an extractor has them, AVX2 for the others; refused on a CPU without AVX-512 F/BW/VL/DQ/CD). Every backend gives identical numbers.",
      rule: { note: '("": auto)' }
    }),
    threads: optionalField(between(0, maxThreads), {
      doc: "Worker threads for this score; results do not depend on it. 0: 1 thread."
    }),
    features: optionalField(Schema.Array(ExtraFeature), {
      doc: 'Extra extractors besides the model\'s features; each at most once. "xpsnr": xpsnr_y, xpsnr_u, xpsnr_v as FFmpeg 7.1\'s xpsnr filter computes them (the reference first; identical planes are infinite, written null in JSON), pooled as the filter\'s summary. "ssimulacra2": SSIMULACRA 2.1 on the frames converted to full-range 8-bit RGB (100: identical). GET /v1/models lists them with their outputs.',
      rule: { text: "is not a list of features" },
      openapi: { uniqueItems: true }
    }),
    subsample: optionalField(between(0, 1000), { doc: "Score every Nth frame (0 or 1: every frame)." }),
    frame_cnt: optionalField(between(0, 1_000_000_000), {
      doc: "Score at most this many frames (0: all).",
      rule: { note: "(0: every frame)" }
    }),
    frame_skip_ref: optionalField(between(0, 1_000_000_000), { doc: "Frames to skip at the start of the reference." }),
    frame_skip_dist: optionalField(between(0, 1_000_000_000), {
      doc: "Frames to skip at the start of the distorted video."
    }),
    // A number of decimals may be given as a number too (JSON clients write 6, not "6").
    precision: optionalField(
      Schema.Union(Schema.String, Schema.Int).pipe(
        Schema.filter((value) => precisionPattern.test(String(value)), { message: () => precisionRule })
      ),
      {
        doc: 'Number format of the scores: "" or lossless (default: every number is the double the scorer computed, in shortest round-trip form), 1..17 (that many decimals), or legacy (6 decimals, like the reference command-line tool); a number of decimals may also be given as a JSON number.',
        rule: { text: `is not "lossless", "legacy" or a number of decimals from 1 to 17 ("": lossless)` },
        openapi: {
          oneOf: [
            { type: "string", pattern: precisionPattern.source },
            { type: "integer", minimum: 1, maximum: 17 }
          ]
        }
      }
    ),
    per_frame: optionalField(Schema.Boolean, { doc: "Include the per-frame values in ScoreResponse.frames." }),
    scale: optionalField(Schema.Literal("", "bicubic", "lanczos", "bilinear", "neighbor", "none"), {
      doc: 'How a decoded distorted video of another size than the reference is scaled to the reference size (ffmpeg\'s scale filter flags). "" means bicubic; "none" refuses a size mismatch.',
      rule: { note: '("": bicubic)' }
    }),
    // Segment jobs (issue 30): frames per segment; 0 one piece. Only the controller's jobs split.
    segment_frames: optionalField(
      between(0, maxSegmentFrames).pipe(Schema.filter((value) => value === 0 || value >= minSegmentFrames)),
      {
        doc: `Jobs only (the controller's SubmitJob; a single score ignores it): split the title into segments of this many frames, scored in parallel by the tenant's nodes and merged exactly. 0 (default): one piece. Otherwise at least ${minSegmentFrames}; at most ${maxSegmentsPerJob} segments per job (longer segments for a longer title).`,
        rule: { text: `is not 0 (one piece) or a whole number from ${minSegmentFrames} to ${maxSegmentFrames}` }
      }
    ),
    shots: optionalField(Schema.Boolean, {
      doc: "Find the reference's hard cuts (the histogram distance of consecutive reference lumas) and score each shot with the first model: shots and worst_shots in the response."
    }),
    shot_threshold: optionalField(
      Schema.Number.pipe(Schema.greaterThanOrEqualTo(0), Schema.lessThanOrEqualTo(1), Schema.finite()),
      {
        doc: `Histogram distance (0..1) a cut must reach; it must also be 1.5 times every measure within two frames of it. 0: ${defaultShotThreshold}.`,
        rule: { note: `(0: ${defaultShotThreshold})` }
      }
    ),
    shot_min_frames: optionalField(between(0, 100_000), {
      doc: `The shortest shot in scored frames: a shorter stretch between two cuts is a flash and stays in the shot around it. 0: ${defaultShotMinFrames}.`,
      rule: { note: `(0: ${defaultShotMinFrames})` }
    }),
    // xpsnr's temporal term: frames per second (whole frames count, as FFmpeg's filter sees it).
    frame_rate: optionalField(
      Schema.Number.pipe(Schema.greaterThanOrEqualTo(0), Schema.lessThanOrEqualTo(maxFrameRate)),
      {
        doc: `Frames per second for xpsnr's temporal term (whole frames count: 29.97 is 29; at 32 and above a second-order term). 0 or absent: the reference Y4M's F tag or the container's rate, raw input ${defaultFrameRate}.`,
        rule: { unit: "of frames per second", note: `(0: the input's own, else ${defaultFrameRate})` }
      }
    ),
    // Alignment (issue 31, inputs/alignment.ts): "auto" finds where each side starts and the frames
    // dropped or inserted mid-clip; sync_window is the largest offset searched, in frames.
    sync: optionalField(Schema.Literal("", "off", "auto"), {
      doc: '"auto": find where each input starts (a late start, a slate or leader) and the reference frames dropped or distorted frames inserted mid-clip, then score only the paired frames; frame_skip_ref/frame_skip_dist apply first, frame_cnt and subsample count pairs; the response\'s alignment says what was found. "" or "off" (default): frames are paired in order.',
      rule: { note: '("": off)' }
    }),
    sync_window: optionalField(between(0, maxSyncWindow), {
      doc: `With sync "auto": the largest offset searched, in frames (start offsets and the drift of drops and inserts). 0: ${defaultSyncWindow}.`,
      rule: { unit: "of frames", note: `(0: ${defaultSyncWindow})` }
    })
  }),
  "ScoreOptions",
  'svc.v1.ScoreOptions. Zero values (0, "") mean not set, as in proto3. Any other value outside the rules below is refused (400).'
)
export type ScoreOptions = typeof ScoreOptions.Type

/** Model names are file names in SVC_MODEL_DIR without ".json": no paths. */
export const maxModelNameLength = 128
export const modelNamePattern = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/
/** A model name in a list (`models`): checked against the pattern after decoding. */
const modelName = documented(Schema.String, {
  rule: { note: "(a model name)" },
  openapi: { pattern: modelNamePattern.source }
})
/**
 * Longest reference or distorted input (PATH_MAX). Inputs are echoed in refusals (seed 000 5.5's
 * message names the input), so a longer one is refused first, without echoing it: a refusal's
 * text travels in one HTTP/2 header, and a megabyte there ends the call with RST_STREAM.
 */
export const maxInputLength = 4096

export const ScoreRequest = component(
  Schema.Struct({
    reference: field(Schema.String, {
      doc: "Path (or file:// URL) of the pristine reference video: raw planar YUV, Y4M, or any video ffmpeg decodes (.mp4, .mkv, .webm, .ivf, .265, ...), recognised by its bytes.",
      rule: { note: "(a path to the reference video)" },
      openapi: { minLength: 1 }
    }),
    distorted: field(Schema.String, {
      doc: "Path (or file:// URL) of the compressed distorted video: raw YUV or Y4M of the reference's geometry, or encoded video (decoded to the reference's layout, scaled to its size).",
      rule: { note: "(a path to the distorted video)" },
      openapi: { minLength: 1 }
    }),
    model: optionalField(Schema.String, {
      doc: `Model name: a built-in model (GET /v1/models lists them) or the file <model>.json in SVC_MODEL_DIR, which overrides a built-in of the same name. Empty or absent: ${defaultModel}. "${autoModel}": ${autoModel4k} for a reference of at least ${autoModel4kSize.width}x${autoModel4kSize.height}, else ${defaultModel} (provenance.model says which).`,
      rule: { note: "(a model name)" },
      openapi: { pattern: `^(|${modelNamePattern.source.slice(1, -1)})$` }
    }),
    options: optionalField(Schema.NullOr(ScoreOptions), {
      doc: "Scoring options; null or absent: all defaults.",
      rule: { text: "is not an object of score options" }
    }),
    /** Several models in one pass, results keyed by model name (instead of `model`). */
    models: optionalField(Schema.Array(modelName), {
      doc: "Several models scored over one extraction of the union of their features, instead of model. Results are keyed by model name: scores, and each model's score under its name in features and frames.",
      rule: { text: "is not a list of model names" },
      openapi: { maxItems: maxModelsPerRequest }
    })
  }),
  "ScoreRequest",
  "svc.v1.ScoreRequest. Fields the contract does not know are refused (400)."
)
export type ScoreRequest = typeof ScoreRequest.Type

export type Backend = "auto" | "scalar" | "avx2" | "avx512"

/** How a decoded distorted video of another size is brought to the reference's ("none": refused). */
export type ScaleMode = "bicubic" | "lanczos" | "bilinear" | "neighbor" | "none"

export interface RawGeometry {
  readonly width: number
  readonly height: number
  readonly pixelFormat: 420 | 422 | 444
  readonly bitdepth: 8 | 10 | 12 | 16
}

/** A validated request in the scorer's terms. */
export interface ScoreJob {
  readonly reference: string
  readonly distorted: string
  /** The inputs as the request wrote them (a file:// URL), where that differs from the path: refusals quote these. */
  readonly referenceAsSent?: string
  readonly distortedAsSent?: string
  readonly model: string
  /** Every model asked for (`models`, or just `model`), in request order; "auto" unresolved. */
  readonly models: ReadonlyArray<string>
  /** Geometry of raw input from the options; undefined when they give no width and height. */
  readonly geometry: RawGeometry | undefined
  readonly backend: Backend
  readonly threads: number
  readonly features: ReadonlyArray<ExtraFeature>
  readonly subsample: number
  readonly frameCount: number
  readonly frameSkipRef: number
  readonly frameSkipDist: number
  readonly precision: Precision
  readonly perFrame: boolean
  readonly scale: ScaleMode
  /** Frames per segment of a controller job (0: one piece); a single score ignores it. */
  readonly segmentFrames: number
  /** One segment of the title (a segment job's piece); absent: the whole title. */
  readonly segment?: Segment | undefined
  /** `options.shots`: how cuts are found (shots.ts); undefined: no shots. */
  readonly shots: ShotOptions | undefined
  /**
   * Frames per second for xpsnr's temporal term (options.frame_rate); 0 or absent: the reference
   * Y4M's F tag or the container's rate, else 25.
   */
  readonly frameRate?: number
  /** The inputs' Y'CbCr matrix from their colour metadata (ssimulacra2); absent: BT.709. */
  readonly colorMatrix?: ColorMatrix
  /** `options.sync: "auto"`: the largest offset searched (frames); undefined: no alignment. */
  readonly sync?: { readonly window: number } | undefined
  /**
   * The pairing already found (a segment job's plan searches once for all its segments): scored
   * as given, without searching again; `segment` then counts aligned pairs.
   */
  readonly alignment?: AlignmentReport | undefined
}

/**
 * Frames [first, first + frames) of the title (after the frame skips), scored so that their
 * values equal the same frames of one pass: the reference frame before and after are read as
 * motion's context (none at the title's ends), subsampling follows the title's frame index.
 */
export interface Segment {
  readonly first: number
  readonly frames: number
  /** Whether the segment ends the title (it then has no context frame after it). */
  readonly last: boolean
}

/** The refusal of a raw input (known by its bytes) without geometry in the options. */
export const rawGeometryRequired = "options.width and options.height are required for raw (non-.y4m) input"

const decodeRequest = Schema.decodeUnknownEither(ScoreRequest, { onExcessProperty: "error", errors: "first" })

/**
 * What each field accepts, in words, derived from the schema (contract.ts): the one source of
 * validation messages, which all read `<field path>: <value given> <rule>` with the complete
 * allowed set or range.
 */
export const FIELD_RULES: Readonly<Record<string, string>> = fieldRules(ScoreRequest)

const FIELDS: Readonly<Record<string, ReadonlyArray<string>>> = {
  "": Object.keys(ScoreRequest.fields),
  options: Object.keys(ScoreOptions.fields)
}

/** A value as the caller wrote it, shortened: `9`, `"x"`, `[]`. */
export const shown = (value: unknown): string => {
  const text = value === undefined ? "undefined" : JSON.stringify(value)
  return text.length > 60 ? `${text.slice(0, 57)}…` : text
}

/** The value at a decode issue's path in the caller's input. */
export const valueAt = (input: unknown, path: ReadonlyArray<PropertyKey>): unknown =>
  path.reduce<unknown>(
    (value, key) =>
      typeof value === "object" && value !== null ? (value as Record<PropertyKey, unknown>)[key] : undefined,
    input
  )

/** A decode issue's path as a field path: `options.features[2]`. */
export const pathText = (path: ReadonlyArray<PropertyKey>) =>
  path.map((key, i) => (typeof key === "number" ? `[${key}]` : i === 0 ? String(key) : `.${String(key)}`)).join("")

const describeIssue = (error: ParseResult.ParseError, input: unknown): string => {
  const [issue] = ParseResult.ArrayFormatter.formatErrorSync(error)
  if (!issue) return "invalid request"
  const path = pathText(issue.path)
  if (issue._tag === "Unexpected") {
    const parent = issue.path.slice(0, -1).map(String).join(".")
    return `${path}: is not a field of the request (known: ${(FIELDS[parent] ?? []).join(", ")})`
  }
  if (issue._tag === "Missing") return `${path}: is required`
  const rule = FIELD_RULES[path.replace(/\[\d+\]/g, "[]")]
  return rule === undefined ? `${path}: ${issue.message}` : `${path}: ${shown(valueAt(input, issue.path))} ${rule}`
}

/** A file:// URL names a local path; anything else is taken as a path. */
export const inputPath = (input: string): string => {
  if (!/^file:\/\//i.test(input)) return input
  try {
    return decodeURIComponent(new URL(input).pathname)
  } catch {
    return input
  }
}

const isY4m = (path: string) => /\.y4m$/i.test(path)
const isYuv = (path: string) => /\.yuv$/i.test(path)

const refuse = (message: string) => Either.left(new InvalidScoreRequest({ message }))

/**
 * The model a request scores first (`ScoreJob.model`): the first listed in `models`, else `model`,
 * else the default. A ladder's renditions share its `model` and `models`.
 */
export const primaryModel = (request: { readonly model?: string; readonly models?: ReadonlyArray<string> }) =>
  request.models?.[0] ?? (request.model === undefined || request.model === "" ? defaultModel : request.model)

/** Turns decoded fields into a ScoreJob, applying defaults and the cross-field rules. */
const toJob = (request: ScoreRequest): Either.Either<ScoreJob, InvalidScoreRequest> => {
  for (const field of ["reference", "distorted"] as const) {
    if (request[field].length > maxInputLength)
      return refuse(`${field}: is longer than ${maxInputLength} characters (${request[field].length} given)`)
  }
  if (request.reference.trim() === "") return refuse("reference: is required")
  if (request.distorted.trim() === "") return refuse("distorted: is required")
  const listed = request.models ?? []
  if (listed.length > 0 && request.model !== undefined && request.model !== "") {
    return refuse("model and models: give one or the other")
  }
  if (listed.length > maxModelsPerRequest) return refuse(`models: at most ${maxModelsPerRequest} models`)
  if (new Set(listed).size !== listed.length) return refuse("models: lists a model twice")
  const models =
    listed.length > 0 ? listed : [request.model === undefined || request.model === "" ? defaultModel : request.model]
  const model = primaryModel(request)
  for (const name of models) {
    // The name is shown shortened: it may be megabytes long.
    if (!modelNamePattern.test(name)) {
      return refuse(
        `model: ${shown(name)} is not a model name (1 to ${maxModelNameLength} letters, digits, ".", "_", "-"; no paths)`
      )
    }
  }
  const options = request.options ?? {}
  const reference = inputPath(request.reference)
  const distorted = inputPath(request.distorted)
  // Whether an input is raw is known from its bytes when it is opened, and geometry is checked
  // then; a ".yuv" name declares raw YUV, so it is refused at once (before a node opens it).
  const bothY4m = isY4m(reference) && isY4m(distorted)
  const width = options.width ?? 0
  const height = options.height ?? 0
  if ((isYuv(reference) || isYuv(distorted)) && (width === 0 || height === 0)) return refuse(rawGeometryRequired)
  const features = options.features ?? []
  if (new Set(features).size !== features.length) return refuse("options.features: lists a feature twice")
  const pixelFormat =
    options.pixel_format === undefined || options.pixel_format === "" ? 420 : Number(options.pixel_format)
  const bitdepth = options.bitdepth === undefined || options.bitdepth === 0 ? 8 : options.bitdepth
  const backend =
    options.backend === undefined || options.backend === "" || options.backend === "cpu" ? "auto" : options.backend
  return Either.right({
    reference,
    distorted,
    ...(reference === request.reference ? {} : { referenceAsSent: request.reference }),
    ...(distorted === request.distorted ? {} : { distortedAsSent: request.distorted }),
    model,
    models,
    geometry:
      !bothY4m && width > 0 && height > 0
        ? { width, height, pixelFormat: pixelFormat as RawGeometry["pixelFormat"], bitdepth }
        : undefined,
    backend,
    threads: Math.max(1, options.threads ?? 0),
    features,
    subsample: Math.max(1, options.subsample ?? 0),
    frameCount: options.frame_cnt ?? 0,
    frameSkipRef: options.frame_skip_ref ?? 0,
    frameSkipDist: options.frame_skip_dist ?? 0,
    precision: parsePrecision(String(options.precision ?? "")),
    perFrame: options.per_frame ?? false,
    scale: options.scale === undefined || options.scale === "" ? "bicubic" : options.scale,
    segmentFrames: options.segment_frames ?? 0,
    shots: shotOptionsOf(options),
    frameRate: options.frame_rate ?? 0,
    sync: options.sync === "auto" ? { window: options.sync_window || defaultSyncWindow } : undefined
  })
}

/** How `options.shots` finds cuts (0 or absent: the defaults); undefined without shots. */
export const shotOptionsOf = (options: {
  readonly shots?: boolean | undefined
  readonly shot_threshold?: number | undefined
  readonly shot_min_frames?: number | undefined
}): ShotOptions | undefined =>
  options.shots
    ? {
        threshold: options.shot_threshold || defaultShotThreshold,
        minFrames: options.shot_min_frames || defaultShotMinFrames
      }
    : undefined

/** Validates an untrusted request body (JSON or a decoded gRPC message). */
export const parseScoreRequest = (input: unknown): Effect.Effect<ScoreJob, InvalidScoreRequest> =>
  Either.match(decodeRequest(input), {
    onLeft: (error) => Effect.fail(new InvalidScoreRequest({ message: describeIssue(error, input) })),
    onRight: (request) => Either.match(toJob(request), { onLeft: Effect.fail, onRight: Effect.succeed })
  })
