/**
 * The job domain's data: a job as stored and as the transports map it to `svc.v1.Job`, and the
 * schemas that decode the JSON columns back (a corrupt row is a typed store failure, not a crash).
 */
import { Schema } from "effect"
import { ScoreRequest } from "../scorer/request.ts"
import type { ScoreResult } from "../scorer/scorer.ts"

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
  readonly request: ScoreRequest
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
  readonly result: ScoreResult | undefined
  readonly error: string | undefined
  readonly framesDone: number
  /** `sub` of the submitting token. */
  readonly submittedBy: string | undefined
}

/** A job handed to a node by PullWork: it carries its tenant's scoring roots (seed 5.5.5). */
export interface PulledJob extends Job {
  readonly scoringRoots: ReadonlyArray<string>
}

/** What StreamJobs/list select: states (empty or absent: all) and the size of the initial listing. */
export interface JobFilter {
  readonly states?: ReadonlyArray<JobState> | undefined
  /** At most this many jobs, newest first (0 or absent: DEFAULT_LIST_LIMIT). */
  readonly limit?: number | undefined
}

export const DEFAULT_LIST_LIMIT = 1000
export const MAX_LIST_LIMIT = 10_000

/**
 * Per-frame results travel in pages of at most this many frames (ReportResult from a node, Job
 * messages to callers), so a full-length title never needs one message of its whole result.
 */
export const MAX_FRAMES_PER_MESSAGE = 2000

/** A node's progress or final report (svc.v1.ReportResultRequest without the ids). */
export interface ResultReport {
  readonly final: boolean
  readonly result?: ScoreResult | undefined
  /** `result.frames` continue the stored frames from this index (0 or absent: they replace them). */
  readonly framesOffset?: number | undefined
  /** Non-empty on a final report: the job failed. */
  readonly error?: string | undefined
  readonly framesDone: number
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
  pixel_format: Schema.String
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
    feature_backends: Schema.Array(Schema.Struct({ extractor: Schema.String, backend: Schema.String })),
    precision: Schema.String,
    decoder: Schema.optional(Schema.String),
    reference_input: Schema.optionalWith(InputInfoSchema, { nullable: true }),
    distorted_input: Schema.optionalWith(InputInfoSchema, { nullable: true }),
    scaling: Schema.optional(Schema.String)
  }),
  frames: Schema.Array(Schema.Struct({ frame: Schema.Number, metrics: NumberMap })),
  frame_count: Schema.Number,
  pooled: Schema.Struct({ min: NumberMap, max: NumberMap, harmonic_mean: NumberMap })
})

// Compile-time proof that the schema decodes exactly the scorer's result type.
const resultSchema: Schema.Schema<ScoreResult, typeof ScoreResultSchema.Encoded> = ScoreResultSchema

/** JSON text of a result; non-finite numbers become the strings `StoredNumber` reads back. */
export const encodeResult = (result: ScoreResult): string =>
  JSON.stringify(result, (_key, value: unknown) =>
    typeof value === "number" && !Number.isFinite(value) ? nonFiniteName(value) : value
  )

export const decodeStoredRequest = Schema.decodeUnknownEither(Schema.parseJson(ScoreRequest))
export const decodeStoredResult = Schema.decodeUnknownEither(Schema.parseJson(resultSchema))
