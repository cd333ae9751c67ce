/**
 * svc.v1 messages of the Jobs and Nodes services ↔ the job domain (modules/jobs). Requests
 * arrive as proto-loader plain objects (proto field names, enums as names, defaults filled);
 * each is decoded here into a typed value or an `InvalidJobRequest` / `InvalidScoreRequest`.
 */
import { Effect, Either, ParseResult, Schema } from "effect"
import { MAX_REPORTS_PER_CALL } from "../config/pages.ts"
import {
  decodeStoredLadderResult,
  decodeAlignment,
  decodeStoredResult,
  encodeResult,
  framesPerRenditionPage,
  isLadderRequest,
  isLadderResult,
  type LadderJobRequest,
  InvalidJobRequest,
  type Job,
  type JobSegment,
  JOB_STATES,
  type PulledJob,
  type JobState,
  MAX_FRAMES_PER_MESSAGE,
  type NodeView,
  type ResultReport
} from "../jobs/index.ts"
import {
  InvalidScoreRequest,
  type LadderJob,
  LadderRequest,
  type LadderResult,
  maxRenditions,
  parseLadderRequest,
  parseScoreRequest,
  type ScoreJob,
  ScoreRequest,
  type ScoreResult
} from "../scorer/index.ts"
import { WIRE_JOB_STATES } from "../transport/grpc/job-states.ts"

// The job service's states are the wire's short names: a state missing from either fails the type check.
const WIRE_STATE: Readonly<Record<JobState, string>> = WIRE_JOB_STATES

const stateOfWire = (name: string): JobState | undefined => JOB_STATES.find((state) => WIRE_STATE[state] === name)

const timestamp = (millis: number | undefined) =>
  millis === undefined ? null : { seconds: Math.floor(millis / 1000), nanos: (millis % 1000) * 1_000_000 }

/** Which page of a job's per-frame results a Job message carries. */
export interface FramesWindow {
  readonly offset: number
  readonly limit: number
}

export const FIRST_FRAMES: FramesWindow = { offset: 0, limit: MAX_FRAMES_PER_MESSAGE }

/**
 * `svc.v1.Job`; `scoringRoots` only in jobs handed out by PullWork. The result's per-frame values
 * are one page (`window`, by default the first), so no message grows with the clip's length.
 */
export const jobMessage = (job: Job, scoringRoots: ReadonlyArray<string> = [], window = FIRST_FRAMES) => ({
  id: job.id,
  tenant_id: job.tenantId,
  state: WIRE_STATE[job.state],
  request: isLadderRequest(job.request) ? null : job.request,
  ladder: isLadderRequest(job.request) ? job.request.ladder : null,
  scoring_roots: scoringRoots,
  created_at: timestamp(job.createdAt),
  started_at: timestamp(job.startedAt),
  finished_at: timestamp(job.finishedAt),
  node_id: job.nodeId ?? "",
  result:
    job.result === undefined || isLadderResult(job.result)
      ? null
      : { ...job.result, frames: job.result.frames.slice(window.offset, window.offset + window.limit) },
  ladder_result: job.result !== undefined && isLadderResult(job.result) ? ladderPage(job.result, window) : null,
  error: job.error ?? "",
  frames_done: job.framesDone,
  rendition_progress: job.renditionProgress.map((entry) => ({ label: entry.label, frames_done: entry.framesDone })),
  submitted_by: job.submittedBy ?? "",
  idempotency_key: job.idempotencyKey ?? "",
  segments: job.segments.map(segmentMessage),
  plan_alignment: job.planAlignment ?? null,
  plan_rendition_alignments: job.planRenditionAlignments ?? []
})

/** svc.v1.JobSegment. */
export const segmentMessage = (segment: JobSegment) => ({
  index: segment.index,
  first_frame: segment.firstFrame,
  frame_count: segment.frameCount,
  state: WIRE_STATE[segment.state],
  node_id: segment.nodeId ?? "",
  attempts: segment.attempts,
  frames_done: segment.framesDone
})

/** A job as PullWork hands it out: its roots, and the segment to score or the plan to make. */
export const pulledJobMessage = (job: PulledJob) => ({
  ...jobMessage(job, job.scoringRoots),
  segment: job.segment === undefined ? null : segmentMessage(job.segment),
  plan: job.plan === true
})

/** A ladder result with one page of every rendition's frames (at most MAX_FRAMES_PER_MESSAGE in all). */
const ladderPage = (result: LadderResult, window: FramesWindow): LadderResult => {
  const limit = Math.min(window.limit, framesPerRenditionPage(result.renditions.length))
  return {
    ...result,
    renditions: result.renditions.map((rendition) => ({
      ...rendition,
      frames: rendition.frames.slice(window.offset, window.offset + limit)
    }))
  }
}

const describe = (error: ParseResult.ParseError): string => {
  const [issue] = ParseResult.ArrayFormatter.formatErrorSync(error)
  return issue === undefined ? "invalid request" : `${issue.path.join(".")}: ${issue.message}`
}

const decoder = <A, I>(schema: Schema.Schema<A, I>) => {
  const decode = Schema.decodeUnknownEither(schema)
  return (input: unknown): Effect.Effect<A, InvalidJobRequest> =>
    Either.match(decode(input), {
      onLeft: (error) => Effect.fail(new InvalidJobRequest({ message: describe(error) })),
      onRight: Effect.succeed
    })
}

/** Job and node ids are UUIDs; anything much longer is refused without being echoed whole. */
export const maxIdLength = 128

/** An id field: at most `maxIdLength` characters; the refusal (prefixed with the field) quotes only its start. */
/** A string of at most `max` characters; the refusal quotes only its start. */
const bounded = (max: number) =>
  Schema.String.pipe(
    Schema.filter((text) => text.length <= max, {
      message: (issue) => {
        const text = String(issue.actual)
        return `"${text.slice(0, 32)}…" (${text.length} characters) is longer than ${max} characters`
      }
    })
  )

const Id = bounded(maxIdLength)

/** RegisterNodeRequest.name and version: shown in ListNodes and as SvcNode names (DNS names: 253). */
export const maxNodeNameLength = 253
export const maxNodeVersionLength = 64

export const decodeJobId = decoder(Schema.Struct({ id: Id }))

const NonNegative = Schema.Number.pipe(Schema.int(), Schema.nonNegative())

// Request schemas are built once: a decoder made per call compiles its parser every time.
const decodeGetJobRequest = decoder(
  Schema.Struct({
    id: Id,
    frames_offset: Schema.optionalWith(NonNegative, { default: () => 0 }),
    frames_limit: Schema.optionalWith(NonNegative, { default: () => 0 })
  })
)

/** GetJobRequest → the id and the page of per-frame results to return (limit 0 or too large: the most). */
export const decodeGetJob = (input: unknown) =>
  Effect.map(decodeGetJobRequest(input), ({ id, frames_offset, frames_limit }) => ({
    id,
    window: {
      offset: frames_offset,
      limit: frames_limit === 0 ? MAX_FRAMES_PER_MESSAGE : Math.min(frames_limit, MAX_FRAMES_PER_MESSAGE)
    }
  }))

const StreamJobsRequest = Schema.Struct({
  states: Schema.Array(Schema.String),
  follow: Schema.Boolean,
  limit: Schema.Number
})

/** StreamJobsRequest → the store's filter; an unknown or unspecified state is refused. */
export const decodeStreamJobs = (input: unknown) =>
  Effect.flatMap(decoder(StreamJobsRequest)(input), (request) =>
    Effect.map(
      Effect.forEach(request.states, (name) => {
        const state = stateOfWire(name)
        return state === undefined
          ? Effect.fail(new InvalidJobRequest({ message: `states: ${name} is not a job state` }))
          : Effect.succeed(state)
      }),
      (states) => ({ states, follow: request.follow, limit: request.limit })
    )
  )

/** What a submitted job scores, validated: the request to store and the jobs a node will run. */
export type SubmittedJob =
  | { readonly _tag: "Score"; readonly request: ScoreRequest; readonly job: ScoreJob }
  | { readonly _tag: "Ladder"; readonly request: LadderJobRequest; readonly ladder: LadderJob }

/**
 * SubmitJobRequest → the request to store (a pair's ScoreRequest, or a ladder), validated like a
 * score (so a job that can never run is refused at submission with the scoring path's message).
 */
const decodeSubmitJobRequest = decoder(
  Schema.Struct({
    request: Schema.NullOr(Schema.Unknown),
    ladder: Schema.optionalWith(Schema.NullOr(Schema.Unknown), { default: () => null })
  })
)

export const decodeSubmitJob = (input: unknown): Effect.Effect<SubmittedJob, InvalidJobRequest | InvalidScoreRequest> =>
  Effect.gen(function* () {
    const { request, ladder } = yield* decodeSubmitJobRequest(input)
    if (request !== null && ladder !== null)
      return yield* new InvalidScoreRequest({ message: "request and ladder: give one or the other" })
    if (ladder !== null) {
      const parsed = yield* parseLadderRequest(ladder)
      const stored = yield* Either.match(Schema.decodeUnknownEither(LadderRequest)(ladder), {
        onLeft: (error) => Effect.fail(new InvalidScoreRequest({ message: `ladder.${describe(error)}` })),
        onRight: Effect.succeed
      })
      return { _tag: "Ladder", request: { ladder: stored }, ladder: parsed } as const
    }
    if (request === null) return yield* new InvalidScoreRequest({ message: "request: is required" })
    const job = yield* parseScoreRequest(request)
    const stored = yield* Either.match(Schema.decodeUnknownEither(ScoreRequest)(request), {
      onLeft: (error) => Effect.fail(new InvalidScoreRequest({ message: describe(error) })),
      onRight: Effect.succeed
    })
    return { _tag: "Score", request: stored, job } as const
  })

const decodeRegisterNodeRequest = decoder(
  Schema.Struct({
    name: bounded(maxNodeNameLength),
    slots: Schema.Number,
    version: bounded(maxNodeVersionLength),
    scores_segments: Schema.optionalWith(Schema.Boolean, { default: () => false })
  })
)

export const decodeRegisterNode = (input: unknown) =>
  Effect.map(decodeRegisterNodeRequest(input), ({ scores_segments, ...info }) => ({
    ...info,
    scoresSegments: scores_segments
  }))

export const decodeHeartbeat = decoder(
  Schema.Struct({
    node_id: Id,
    running_job_ids: Schema.optionalWith(Schema.Array(Id), { default: () => [] }),
    hand_back_unlisted: Schema.optionalWith(Schema.Boolean, { default: () => false }),
    memory_needs: Schema.optionalWith(
      Schema.Array(
        Schema.Struct({
          job_id: Id,
          memory_bytes: Schema.optionalWith(NonNegative, { default: () => 0 }),
          segment: Schema.optionalWith(Schema.Boolean, { default: () => false }),
          segment_index: Schema.optionalWith(NonNegative, { default: () => 0 })
        })
      ),
      { default: () => [] }
    ),
    running_segments: Schema.optionalWith(
      Schema.Array(Schema.Struct({ job_id: Id, index: Schema.optionalWith(NonNegative, { default: () => 0 }) })),
      { default: () => [] }
    )
  })
)

export const decodePullWork = decoder(
  Schema.Struct({
    node_id: Id,
    max_jobs: Schema.Number,
    wait_ms: Schema.optionalWith(Schema.Number, { default: () => 0 }),
    free_memory_bytes: Schema.optionalWith(NonNegative, { default: () => 0 }),
    memory_budget_bytes: Schema.optionalWith(NonNegative, { default: () => 0 })
  })
)

/** ReportResultsRequest → the node and its raw reports (each decoded as a ReportResultRequest). */
export const decodeReportResults = decoder(
  Schema.Struct({ node_id: Id, reports: Schema.Array(Schema.Unknown).pipe(Schema.maxItems(MAX_REPORTS_PER_CALL)) })
)

const ReportResultRequest = Schema.Struct({
  node_id: Id,
  job_id: Id,
  final: Schema.Boolean,
  result: Schema.NullOr(Schema.Unknown),
  ladder_result: Schema.optionalWith(Schema.NullOr(Schema.Unknown), { default: () => null }),
  error: Schema.String,
  frames_done: Schema.Number,
  frames_offset: Schema.optionalWith(Schema.Number, { default: () => 0 }),
  // Bounded by the ladder's own limit (the service checks the labels).
  rendition_progress: Schema.optionalWith(
    Schema.Array(Schema.Struct({ label: Schema.String, frames_done: Schema.Number })).pipe(
      Schema.maxItems(maxRenditions)
    ),
    { default: () => [] }
  ),
  segment: Schema.optionalWith(Schema.Boolean, { default: () => false }),
  segment_index: Schema.optionalWith(Schema.Number, { default: () => 0 }),
  plan_frames: Schema.optionalWith(Schema.Number, { default: () => 0 }),
  plan_alignment: Schema.optionalWith(Schema.NullOr(Schema.Unknown), { default: () => null }),
  // Bounded by the ladder's own limit (the service checks there is one per rendition).
  plan_rendition_alignments: Schema.optionalWith(Schema.Array(Schema.Unknown).pipe(Schema.maxItems(maxRenditions)), {
    default: () => []
  })
})

const decodeReportResultRequest = decoder(ReportResultRequest)

// The domain's own result schemas (through their JSON form, which keeps NaN scores) check the shape.
const decodeResult = (result: unknown): Effect.Effect<ScoreResult, InvalidJobRequest> =>
  Either.match(decodeStoredResult(encodeResult(result as ScoreResult)), {
    onLeft: (error) => Effect.fail(new InvalidJobRequest({ message: `result: ${describe(error)}` })),
    onRight: (decoded) =>
      isLadderResult(decoded)
        ? Effect.fail(new InvalidJobRequest({ message: "result: a ladder's result belongs in ladder_result" }))
        : Effect.succeed(decoded)
  })
const decodeLadderResult = (result: unknown): Effect.Effect<LadderResult, InvalidJobRequest> =>
  Either.match(decodeStoredLadderResult(encodeResult(result as LadderResult)), {
    onLeft: (error) => Effect.fail(new InvalidJobRequest({ message: `ladder_result: ${describe(error)}` })),
    onRight: Effect.succeed
  })

/** ReportResultRequest → the ids and the report. */
export const decodeReportResult = (input: unknown) =>
  Effect.gen(function* () {
    const request = yield* decodeReportResultRequest(input)
    if (request.result !== null && request.ladder_result !== null)
      return yield* new InvalidJobRequest({ message: "result and ladder_result: give one or the other" })
    const result =
      request.ladder_result !== null
        ? yield* decodeLadderResult(request.ladder_result)
        : request.result === null
          ? undefined
          : yield* decodeResult(request.result)
    const planAlignment =
      request.plan_alignment === null
        ? undefined
        : yield* Either.match(decodeAlignment(request.plan_alignment), {
            onLeft: (message) => Effect.fail(new InvalidJobRequest({ message: `plan_alignment: ${message}` })),
            onRight: Effect.succeed
          })
    // proto3 has no absent list: none is empty (a ladder has at least one rendition).
    const planRenditionAlignments =
      request.plan_rendition_alignments.length === 0
        ? undefined
        : yield* Effect.forEach(request.plan_rendition_alignments, (alignment, index) =>
            Either.match(decodeAlignment(alignment), {
              onLeft: (message) =>
                Effect.fail(new InvalidJobRequest({ message: `plan_rendition_alignments[${index}]: ${message}` })),
              onRight: Effect.succeed
            })
          )
    const report: ResultReport = {
      final: request.final,
      result,
      error: request.error,
      framesDone: request.frames_done,
      framesOffset: request.frames_offset,
      renditionProgress: request.rendition_progress.map((entry) => ({
        label: entry.label,
        framesDone: entry.frames_done
      })),
      segmentIndex: request.segment ? request.segment_index : undefined,
      planFrames: request.plan_frames === 0 ? undefined : request.plan_frames,
      planAlignment,
      planRenditionAlignments
    }
    return { nodeId: request.node_id, jobId: request.job_id, report }
  })

/** SubmitJobRequest.idempotency_key ("" when absent). */
const decodeIdempotencyKeyField = decoder(Schema.Struct({ idempotency_key: Schema.optional(Schema.String) }))

export const decodeIdempotencyKey = (input: unknown): Effect.Effect<string, InvalidJobRequest> =>
  Effect.map(decodeIdempotencyKeyField(input), (request) => request.idempotency_key ?? "")

/** svc.v1.NodeSession of ListNodes. */
export const nodeSessionMessage = (node: NodeView) => ({
  node_id: node.nodeId,
  name: node.name,
  slots: node.slots,
  version: node.version,
  last_heartbeat: timestamp(node.lastHeartbeat),
  live: node.live,
  running_job_ids: node.runningJobIds,
  session_ttl_ms: node.sessionTtlMillis
})
