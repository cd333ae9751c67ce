/**
 * The job domain's data: a job as stored and as the transports map it to `svc.v1.Job`, and the
 * schemas that decode the JSON columns back (a corrupt row is a typed store failure, not a crash).
 */
import { Either, Schema } from "effect"
import {
  type AlignmentReport,
  LadderRequest,
  type LadderResult,
  type PercentileName,
  percentileNames,
  ScoreRequest,
  type ScoreResult
} from "../scorer/index.ts"

/** A ladder job's request: one reference, many renditions (stored as `{"ladder": ...}`). */
export interface LadderJobRequest {
  readonly ladder: LadderRequest
}

/** What a job scores: one pair (a ScoreRequest, as every job before ladders) or a ladder. */
export type JobRequest = ScoreRequest | LadderJobRequest

export const isLadderRequest = (request: JobRequest): request is LadderJobRequest => "ladder" in request

/** A job's result: a pair's ScoreResult, or a ladder's result (one per rendition). */
export type JobResult = ScoreResult | LadderResult

export const isLadderResult = (result: JobResult): result is LadderResult => "renditions" in result

export const JOB_STATES = ["pending", "running", "finished", "cancelled", "failed"] as const
export type JobState = (typeof JOB_STATES)[number]

/** States a job never leaves. */
export const FINAL_STATES: ReadonlySet<JobState> = new Set(["finished", "cancelled", "failed"])

/** One job. Times are milliseconds since the epoch (the transport makes Timestamps of them). */
export interface Job {
  readonly id: string
  /** Tenant of the submitter; every store read and write is scoped by it. */
  readonly tenantId: string
  readonly state: JobState
  /** The request as validated by the transport. */
  readonly request: JobRequest
  readonly createdAt: number
  readonly startedAt: number | undefined
  readonly finishedAt: number | undefined
  /** Node session the job is (or was last) assigned to: with `fence`, the job's lease. */
  readonly nodeId: string | undefined
  /**
   * Fencing counter: + 1 at every hand-out, take-over and re-queue, so a report decided on an
   * older read of the job cannot be applied (the store's compare-and-set checks it).
   */
  readonly fence: number
  /** Latest result: partial while running, final once finished. */
  readonly result: JobResult | undefined
  readonly error: string | undefined
  readonly framesDone: number
  /**
   * A ladder job's frames scored per rendition (request order), as its node last reported them;
   * empty for a pair job and before the first report.
   */
  readonly renditionProgress: ReadonlyArray<RenditionProgress>
  /** `sub` of the submitting token. */
  readonly submittedBy: string | undefined
  /** A segment job's segments in frame order, once planned (segments.ts); empty otherwise. */
  readonly segments: ReadonlyArray<JobSegment>
  /** SubmitJobRequest.idempotency_key (svc-operator: the SvcJob's uid), so a client can prove a job is its own. */
  readonly idempotencyKey?: string | undefined
  /** A segment job with options.sync "auto", once planned: the pairing its plan found; segments count its pairs. */
  readonly planAlignment?: AlignmentReport | undefined
  /**
   * A ladder segment job with options.sync "auto", once planned: each rendition's pairing with the
   * reference (request order), as its plan found it; segments count the ladder's frames (the
   * reference frames any rendition pairs).
   */
  readonly planRenditionAlignments?: ReadonlyArray<AlignmentReport> | undefined
}

/**
 * One segment of a segment job: frames [firstFrame, firstFrame + frameCount) of the title, with
 * a lease of its own (node and fence) while running.
 */
export interface JobSegment {
  readonly index: number
  readonly firstFrame: number
  readonly frameCount: number
  readonly state: JobState
  readonly nodeId: string | undefined
  readonly fence: number
  /** Hand-outs so far; a segment lost this many times fails its job (MAX_SEGMENT_ATTEMPTS). */
  readonly attempts: number
  readonly framesDone: number
}

/** Hand-outs of one segment at most: a segment whose node is lost this many times fails the job. */
export const MAX_SEGMENT_ATTEMPTS = 3

/** A job handed to a node by PullWork: it carries its tenant's scoring roots (seed 5.5.5). */
export interface PulledJob extends Job {
  readonly scoringRoots: ReadonlyArray<string>
  /** The segment handed out (a segment-capable node); absent: the whole job or its plan. */
  readonly segment?: JobSegment | undefined
  /** The node counts the job's frames and reports them (the plan of a segment job). */
  readonly plan?: boolean | undefined
}

/** What StreamJobs/list select: states (empty or absent: all) and the size of the initial listing. */
export interface JobFilter {
  readonly states?: ReadonlyArray<JobState> | undefined
  /** At most this many jobs, newest first (0 or absent: DEFAULT_LIST_LIMIT). */
  readonly limit?: number | undefined
}

export const DEFAULT_LIST_LIMIT = 1000
export const MAX_LIST_LIMIT = 10_000

// The page sizes of per-frame results are shared with the compute node (config/pages.ts).
export { framesPerRenditionPage, MAX_FRAMES_PER_MESSAGE } from "../config/pages.ts"

/** One rendition's progress in a ladder job (svc.v1.RenditionProgress). */
export interface RenditionProgress {
  readonly label: string
  readonly framesDone: number
}

/** A node's progress or final report (svc.v1.ReportResultRequest without the ids). */
export interface ResultReport {
  readonly final: boolean
  readonly result?: JobResult | undefined
  /** `result.frames` (a ladder: every rendition's) continue the stored frames from this index (0 or absent: they replace them). */
  readonly framesOffset?: number | undefined
  /** Non-empty on a final report: the job failed. */
  readonly error?: string | undefined
  readonly framesDone: number
  /** A ladder job's frames scored per rendition label (absent or empty: unchanged). */
  readonly renditionProgress?: ReadonlyArray<RenditionProgress> | undefined
  /** The segment reported on (its frames_offset and frames_done count within it); absent: the job. */
  readonly segmentIndex?: number | undefined
  /** A plan: the title's frames to score, reported on a job handed out with `plan`. */
  readonly planFrames?: number | undefined
  /** A plan of a job with options.sync "auto": the alignment over the whole inputs (planFrames counts its pairs). */
  readonly planAlignment?: AlignmentReport | undefined
  /** A plan of a ladder job with options.sync "auto": each rendition's alignment (request order). */
  readonly planRenditionAlignments?: ReadonlyArray<AlignmentReport> | undefined
}

// JSON has no NaN or infinities, yet pooled features can be NaN: they are stored as these strings.
const nonFiniteName = (value: number) => (Number.isNaN(value) ? "NaN" : value > 0 ? "Infinity" : "-Infinity")
const NonFiniteNumber = Schema.transform(Schema.Literal("NaN", "Infinity", "-Infinity"), Schema.Number, {
  strict: true,
  decode: (text) => Number(text),
  encode: nonFiniteName
})
const StoredNumber = Schema.Union(Schema.Number, NonFiniteNumber)
const NumberMap = Schema.Record({ key: Schema.String, value: StoredNumber })

const InputInfoSchema = Schema.Struct({
  container: Schema.String,
  codec: Schema.String,
  width: Schema.Number,
  height: Schema.Number,
  pixel_format: Schema.String,
  changes: Schema.optional(
    Schema.Array(
      Schema.Struct({ frame: Schema.Number, width: Schema.Number, height: Schema.Number, pixel_format: Schema.String })
    )
  )
})

/** What options.sync "auto" found (AlignmentReport): in a result, and a sync segment job's plan. */
const AlignmentSchema = Schema.Struct({
  reference_start: Schema.Number,
  distorted_start: Schema.Number,
  frames: Schema.Number,
  reference_frames_dropped: Schema.Array(Schema.Number),
  distorted_frames_inserted: Schema.Array(Schema.Number),
  distorted_frames_repeated: Schema.Array(Schema.Number),
  confidence: Schema.Number,
  window: Schema.Number,
  warning: Schema.optional(Schema.String)
})

/** ScoreResponse as written by this module; checked against the scorer's `ScoreResult` type below. */
const ScoreResultSchema = Schema.Struct({
  score: StoredNumber,
  features: NumberMap,
  scores: Schema.optional(NumberMap),
  provenance: Schema.Struct({
    library: Schema.Struct({
      abi_minor: Schema.Number,
      abi_patch: Schema.Number,
      active_backend: Schema.String,
      n_extractors: Schema.Number,
      version: Schema.String
    }),
    model: Schema.String,
    model_sha256: Schema.String,
    model_source: Schema.optional(Schema.String),
    models: Schema.optional(
      Schema.Array(Schema.Struct({ model: Schema.String, model_sha256: Schema.String, model_source: Schema.String }))
    ),
    backend_used: Schema.String,
    feature_backends: Schema.Array(
      Schema.Struct({
        extractor: Schema.String,
        backend: Schema.String,
        implementation: Schema.optional(Schema.String)
      })
    ),
    precision: Schema.String,
    decoder: Schema.optional(Schema.String),
    reference_input: Schema.optionalWith(InputInfoSchema, { nullable: true }),
    distorted_input: Schema.optionalWith(InputInfoSchema, { nullable: true }),
    scaling: Schema.optional(Schema.String)
  }),
  frames: Schema.Array(Schema.Struct({ frame: Schema.Number, metrics: NumberMap })),
  frame_count: Schema.Number,
  pooled: Schema.Struct({
    min: NumberMap,
    max: NumberMap,
    harmonic_mean: NumberMap,
    ...Object.fromEntries(percentileNames.map((name) => [name, Schema.optional(NumberMap)]))
  } as {
    min: typeof NumberMap
    max: typeof NumberMap
    harmonic_mean: typeof NumberMap
  } & { [name in PercentileName]: Schema.optional<typeof NumberMap> }),
  shots: Schema.optional(
    Schema.Array(
      Schema.Struct({
        first_frame: Schema.Number,
        frame_count: Schema.Number,
        score: StoredNumber,
        harmonic_mean: StoredNumber,
        min: StoredNumber,
        p5: StoredNumber,
        worst_frame: Schema.Number
      })
    )
  ),
  worst_shots: Schema.optional(Schema.Array(Schema.Number)),
  thumbnails: Schema.optional(
    Schema.Array(Schema.Struct({ frame: Schema.Number, reference: Schema.String, distorted: Schema.String }))
  ),
  // options.sync "auto": what the alignment found (a node's report over gRPC carries null when absent).
  alignment: Schema.optionalWith(AlignmentSchema, { nullable: true })
})

// Compile-time proof that the schema decodes exactly the scorer's result type.
const resultSchema: Schema.Schema<ScoreResult, typeof ScoreResultSchema.Encoded> = ScoreResultSchema

const provenanceFields = ScoreResultSchema.fields.provenance.fields

/** A ladder's result (ScoreLadderResponse) as written by this module. */
const LadderResultSchema = Schema.Struct({
  renditions: Schema.Array(
    Schema.Struct({
      ...ScoreResultSchema.fields,
      label: Schema.String,
      summary: Schema.Struct({
        p1: StoredNumber,
        p5: StoredNumber,
        worst_frames: Schema.Array(Schema.Struct({ frame: Schema.Number, score: StoredNumber })),
        width: Schema.Number,
        height: Schema.Number,
        codec: Schema.String,
        bitrate_bps: StoredNumber,
        duration_s: StoredNumber,
        on_hull: Schema.Boolean
      })
    })
  ),
  provenance: Schema.Struct({
    reference_passes: Schema.Number,
    reference_decoders: Schema.Number,
    reference_frames: Schema.Number,
    shared: Schema.Array(Schema.String),
    reference_input: Schema.optionalWith(InputInfoSchema, { exact: true }),
    decoder: Schema.optionalWith(Schema.String, { exact: true }),
    library: provenanceFields.library,
    model: Schema.String,
    model_sha256: Schema.String,
    models: Schema.optionalWith(provenanceFields.models.from, { exact: true }),
    backend_used: Schema.String,
    precision: Schema.String
  })
})

// The same proof for a ladder's result.
const ladderResultSchema: Schema.Schema<LadderResult, typeof LadderResultSchema.Encoded> = LadderResultSchema

/** JSON text of a result; non-finite numbers become the strings `StoredNumber` reads back. */
export const encodeResult = (result: JobResult): string =>
  JSON.stringify(result, (_key, value: unknown) =>
    typeof value === "number" && !Number.isFinite(value) ? nonFiniteName(value) : value
  )

/** A plan report's alignment as a node sends it. */
export const decodeAlignment = (value: unknown): Either.Either<AlignmentReport, string> =>
  Either.mapLeft(Schema.decodeUnknownEither(AlignmentSchema)(value), (error) => error.message)

/**
 * A sync segment job's plan as its store keeps it: a pair's alignment, or a ladder's, one per
 * rendition in request order.
 */
export type PlanAlignment = AlignmentReport | ReadonlyArray<AlignmentReport>

/** A pair's plan alignment (not a ladder's list). */
const isPairAlignment = (alignment: PlanAlignment): alignment is AlignmentReport => !Array.isArray(alignment)

/** A stored plan alignment as a job's fields. */
export const planAlignmentFields = (
  alignment: PlanAlignment | undefined
): Pick<Job, "planAlignment" | "planRenditionAlignments"> =>
  alignment === undefined
    ? {}
    : isPairAlignment(alignment)
      ? { planAlignment: alignment }
      : { planRenditionAlignments: alignment }

/**
 * The `plan_alignment` column: a sync segment job's plan (NULL: none), a pair's alignment as a
 * JSON object or a ladder's as a JSON array of them (no migration: the column is JSON text).
 */
export const encodePlanAlignment = (alignment: PlanAlignment | undefined): string | null =>
  alignment === undefined ? null : JSON.stringify(alignment)
const StoredPlanAlignment = Schema.parseJson(Schema.Union(AlignmentSchema, Schema.Array(AlignmentSchema)))
export const decodePlanAlignment = (text: string | null): Either.Either<PlanAlignment | undefined, string> =>
  text === null
    ? Either.right(undefined)
    : Either.mapLeft(Schema.decodeUnknownEither(StoredPlanAlignment)(text), (error) => error.message)

/** A stored request: a pair's ScoreRequest, or `{"ladder": LadderRequest}`. */
const StoredRequest = Schema.Union(ScoreRequest, Schema.Struct({ ladder: LadderRequest }))

export const decodeStoredRequest = Schema.decodeUnknownEither(Schema.parseJson(StoredRequest))
export const decodeStoredResult = Schema.decodeUnknownEither(
  Schema.parseJson(Schema.Union(resultSchema, ladderResultSchema))
)
/** A ladder's result only (a node's ladder report). */
export const decodeStoredLadderResult = Schema.decodeUnknownEither(Schema.parseJson(ladderResultSchema))

/** The `rendition_progress` column: `[{"label": …, "frames_done": …}]` (NULL: none reported). */
const StoredRenditionProgress = Schema.Array(
  Schema.Struct({ label: Schema.String, frames_done: Schema.Number.pipe(Schema.int(), Schema.nonNegative()) })
)
const decodeProgressJson = Schema.decodeUnknownEither(Schema.parseJson(StoredRenditionProgress))

export const encodeRenditionProgress = (progress: ReadonlyArray<RenditionProgress>): string | null =>
  progress.length === 0
    ? null
    : JSON.stringify(progress.map((entry) => ({ label: entry.label, frames_done: entry.framesDone })))

export const decodeRenditionProgress = (
  text: string | null
): Either.Either<ReadonlyArray<RenditionProgress>, string> =>
  text === null
    ? Either.right([])
    : Either.match(decodeProgressJson(text), {
        onLeft: (error) => Either.left(error.message),
        onRight: (entries) =>
          Either.right(entries.map((entry) => ({ label: entry.label, framesDone: entry.frames_done })))
      })
