/**
 * The ladder request (one reference, many renditions) and its response, proto field names.
 * Options that decide which reference frames are read (`frame_skip_ref`, `frame_cnt`,
 * `subsample`), the model(s) and the features are the whole ladder's (`options`); each
 * rendition may only set what keeps the one shared reference pass intact: the geometry of a
 * raw rendition, how it is scaled, and its own `frame_skip_dist`.
 */
import { Effect, Either, ParseResult, Schema } from "effect"
import { InvalidScoreRequest } from "./errors.ts"
import { component, documented, field, fieldRules, optionalField } from "./contract.ts"
import {
  inputPath,
  parseScoreRequest,
  pathText,
  type RawGeometry,
  ScoreOptions,
  type ScoreJob,
  shown,
  valueAt
} from "./request.ts"
import type { FrameScore, InputInfo, Provenance, ScoreResult } from "./result.ts"

/** Renditions of one ladder (a ladder is usually 6 to 12). */
export const maxRenditions = 16
/** A label names a rendition in tables, files and reports: short, no spaces or path signs. */
export const labelPattern = /^[A-Za-z0-9][A-Za-z0-9._+-]{0,63}$/
export const labelRule = 'is not a label (1 to 64 letters, digits, ".", "_", "+", "-"; starting with a letter or digit)'
/** Worst frames listed in a rendition's summary. */
export const worstFrameCount = 10

/** What one rendition may set for itself (same meanings and values as in ScoreOptions). */
export const RenditionOptions = component(
  Schema.Struct({
    width: ScoreOptions.fields.width,
    height: ScoreOptions.fields.height,
    pixel_format: ScoreOptions.fields.pixel_format,
    bitdepth: ScoreOptions.fields.bitdepth,
    scale: ScoreOptions.fields.scale,
    frame_skip_dist: ScoreOptions.fields.frame_skip_dist
  }),
  "RenditionOptions",
  "What one rendition may set for itself; values as in ScoreOptions."
)
export type RenditionOptions = typeof RenditionOptions.Type

export const Rendition = component(
  Schema.Struct({
    label: field(Schema.String, {
      doc: "Unique name of the rendition in the ladder.",
      rule: { text: labelRule },
      openapi: { pattern: labelPattern.source }
    }),
    distorted: field(Schema.String, {
      doc: "Path to the rendition's video.",
      rule: { note: "(a path to the rendition's video)" }
    }),
    options: optionalField(Schema.NullOr(RenditionOptions), { rule: { text: "is not an object of rendition options" } })
  }),
  "Rendition"
)
export type Rendition = typeof Rendition.Type

export const LadderRequest = component(
  Schema.Struct({
    reference: field(Schema.String, {
      doc: "Path to the reference video, read once for the whole ladder.",
      rule: { note: "(a path to the reference video)" }
    }),
    renditions: field(
      Schema.Array(documented(Rendition, { rule: { text: "is not a rendition ({label, distorted, options?})" } })),
      {
        doc: "The renditions, each scored against the reference; results in this order.",
        rule: { text: `is not a list of 1 to ${maxRenditions} renditions` },
        openapi: { minItems: 1, maxItems: maxRenditions }
      }
    ),
    model: optionalField(Schema.String, { doc: "Model name (as in ScoreRequest).", rule: { note: "(a model name)" } }),
    models: optionalField(Schema.Array(documented(Schema.String, { rule: { note: "(a model name)" } })), {
      doc: "Several models over one extraction (as in ScoreRequest), instead of model.",
      rule: { text: "is not a list of model names" }
    }),
    options: optionalField(Schema.NullOr(ScoreOptions), {
      doc: "The whole ladder's options: frame_skip_ref, frame_cnt, subsample, features, precision, backend, threads, per_frame, and the raw reference's geometry (a raw rendition without its own geometry takes it too).",
      rule: { text: "is not an object of score options" }
    })
  }),
  "ScoreLadderRequest",
  "svc.v1.ScoreLadderRequest."
)
export type LadderRequest = typeof LadderRequest.Type

/** One rendition of a validated ladder: its label and its pair as a score job would score it. */
export interface LadderRenditionJob {
  readonly label: string
  /** The pair exactly as `Score` would take it (ladder-wide options merged with the rendition's). */
  readonly job: ScoreJob
}

/** A validated ladder: the reference, its raw geometry (ladder-wide options) and every rendition. */
export interface LadderJob {
  readonly reference: string
  /** The reference as the request wrote it (a file:// URL), where that differs: refusals quote it. */
  readonly referenceAsSent?: string
  /** Geometry of a raw reference (the ladder-wide options' width/height/pixel_format/bitdepth). */
  readonly referenceGeometry: RawGeometry | undefined
  readonly renditions: ReadonlyArray<LadderRenditionJob>
}

/** What a ladder user reads first about one rendition. */
export interface RenditionSummary {
  /** Nearest-rank 1st and 5th percentiles of the per-frame score (first model). */
  readonly p1: number
  readonly p5: number
  /** The lowest-scoring frames (at most 10), lowest first, ties by frame index. */
  readonly worst_frames: ReadonlyArray<{ readonly frame: number; readonly score: number }>
  /** Resolution and codec from the decoder's stream information ("rawvideo" for raw/Y4M). */
  readonly width: number
  readonly height: number
  readonly codec: string
  /** File size x 8 / duration (0 when the duration is unknown). */
  readonly bitrate_bps: number
  readonly duration_s: number
  /** On the upper convex hull of (bitrate, score) over the ladder. */
  readonly on_hull: boolean
}

export interface LadderRenditionResult extends ScoreResult {
  readonly label: string
  readonly summary: RenditionSummary
}

/** What the one pass over the reference did (the proof that it was one). */
export interface LadderProvenance {
  /**
   * Passes over the reference's frames: 1, or with sync "auto" one per group of renditions that
   * drop the same reference frames where they overlap (modules/inputs/ladder.ts).
   */
  readonly reference_passes: number
  /** Decoder processes that served the reference (0 for raw/Y4M, 1 per pass for an encoded one). */
  readonly reference_decoders: number
  /** Reference frames read (each once, whatever the number of renditions and of passes). */
  readonly reference_frames: number
  /** Reference-side quantities computed once per frame and shared by every rendition. */
  readonly shared: ReadonlyArray<string>
  readonly reference_input?: InputInfo
  readonly decoder?: string
  readonly library: Provenance["library"]
  readonly model: string
  readonly model_sha256: string
  readonly models?: Provenance["models"]
  readonly backend_used: string
  readonly precision: string
}

export interface LadderResult {
  readonly renditions: ReadonlyArray<LadderRenditionResult>
  readonly provenance: LadderProvenance
}

export type { FrameScore }

const decodeLadder = Schema.decodeUnknownEither(LadderRequest, { onExcessProperty: "error", errors: "first" })

/** What each field of a ladder accepts, in words, derived from the schema (a rendition's options as `options.*`). */
const RULES: Readonly<Record<string, string>> = fieldRules(LadderRequest)

const FIELDS: Readonly<Record<string, ReadonlyArray<string>>> = {
  "": Object.keys(LadderRequest.fields),
  "renditions[]": Object.keys(Rendition.fields),
  "renditions[].options": Object.keys(RenditionOptions.fields),
  options: Object.keys(ScoreOptions.fields)
}

const describeIssue = (error: ParseResult.ParseError, input: unknown): string => {
  const [issue] = ParseResult.ArrayFormatter.formatErrorSync(error)
  if (!issue) return "invalid request"
  const path = pathText(issue.path)
  if (issue._tag === "Unexpected") {
    const parent = pathText(issue.path.slice(0, -1)).replace(/\[\d+\]/g, "[]")
    const known = FIELDS[parent]
    // A ladder-wide option set on one rendition says where it belongs.
    const key = String(issue.path[issue.path.length - 1])
    if (parent === "renditions[].options" && key in ScoreOptions.fields) {
      return `${path}: is the whole ladder's (set it in options): a rendition may set ${(known ?? []).join(", ")}`
    }
    return `${path}: is not a field of the request (known: ${(known ?? []).join(", ")})`
  }
  if (issue._tag === "Missing") return `${path}: is required`
  const general = path.replace(/\[\d+\]/g, "[]")
  // Option values are checked as the score request checks them (a rendition's as `options.*`).
  const rule = RULES[general]
  return rule === undefined ? `${path}: ${issue.message}` : `${path}: ${shown(valueAt(input, issue.path))} ${rule}`
}

const refuse = (message: string) => Effect.fail(new InvalidScoreRequest({ message }))

/** The score request one rendition stands for: ladder-wide options, then the rendition's own. */
const pairRequest = (request: LadderRequest, rendition: Rendition) => {
  const own = rendition.options ?? {}
  const merged: Record<string, unknown> = { ...(request.options ?? {}) }
  for (const [key, value] of Object.entries(own)) if (value !== undefined) merged[key] = value
  return {
    reference: request.reference,
    distorted: rendition.distorted,
    ...(request.model === undefined ? {} : { model: request.model }),
    ...(request.models === undefined ? {} : { models: request.models }),
    options: merged
  }
}

/** Prefixes a pair's refusal with the rendition it is about (`renditions[2] (720p): ...`). */
const inRendition = (index: number, label: string) => (error: InvalidScoreRequest) =>
  new InvalidScoreRequest({ message: `renditions[${index}] (${label}): ${error.message}` })

/**
 * Validates an untrusted ladder body (JSON or a decoded gRPC message): the same field checks
 * and message style as `parseScoreRequest`, and each rendition's pair is validated as the
 * `Score` request it stands for, so a ladder accepts exactly what separate scores would.
 */
export const parseLadderRequest = (input: unknown): Effect.Effect<LadderJob, InvalidScoreRequest> =>
  Either.match(decodeLadder(input), {
    onLeft: (error) => refuse(describeIssue(error, input)),
    onRight: (request) =>
      Effect.gen(function* () {
        if (request.reference.trim() === "") return yield* refuse("reference: is required")
        if (request.renditions.length === 0) return yield* refuse(`renditions: ${RULES.renditions} (none given)`)
        if (request.renditions.length > maxRenditions) {
          return yield* refuse(`renditions: at most ${maxRenditions} renditions (${request.renditions.length} given)`)
        }
        const seen = new Set<string>()
        const renditions: Array<LadderRenditionJob> = []
        for (const [index, rendition] of request.renditions.entries()) {
          if (!labelPattern.test(rendition.label)) {
            return yield* refuse(`renditions[${index}].label: ${shown(rendition.label)} ${labelRule}`)
          }
          if (seen.has(rendition.label)) {
            return yield* refuse(`renditions[${index}].label: "${rendition.label}" names two renditions`)
          }
          seen.add(rendition.label)
          if (rendition.distorted.trim() === "") return yield* refuse(`renditions[${index}].distorted: is required`)
          const job = yield* parseScoreRequest(pairRequest(request, rendition)).pipe(
            Effect.mapError(inRendition(index, rendition.label))
          )
          renditions.push({ label: rendition.label, job })
        }
        const shared = yield* parseScoreRequest({
          ...pairRequest(request, { label: "", distorted: request.reference })
        })
        const reference = inputPath(request.reference)
        return {
          reference,
          ...(reference === request.reference ? {} : { referenceAsSent: request.reference }),
          referenceGeometry: shared.geometry,
          renditions
        }
      })
  })
