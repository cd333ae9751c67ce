/**
 * JobService: the job and node logic the gRPC handlers call, each method taking the caller's
 * `Principal` (already authenticated and role-checked by the transport). Tenant isolation of
 * seed 000, 5.5 lives here; the store scopes every query by the caller's tenant, so a mistake here
 * still cannot reach another tenant's row. The ReportResult rule of 5.6 is policy's
 * `decideReport`, applied by the store inside the report's write transaction (report.ts).
 */
import { Clock, type ConfigError, Context, Effect, Either, Layer, Option, Schedule, Stream } from "effect"
import { PermissionDenied, type Unavailable } from "../policy/errors.ts"
import type { RootSet } from "../policy/scoring-roots.ts"
import type { ScorerNotReady } from "../scoring-api/errors.ts"
import {
  maxSegmentFrames,
  maxSegmentsPerJob,
  mergeLadderSegments,
  mergeSegmentResults,
  minSegmentFrames,
  parsePrecision,
  primaryModel,
  shotOptionsOf,
  type UnknownModel
} from "../scorer/index.ts"
import { defaultSegmentFrames } from "./config.ts"
import type { Principal } from "../policy/principal.ts"
import { InvalidJobRequest, JobNotFound, type JobStoreError, NodeSessionNotLive } from "./errors.ts"
import {
  DEFAULT_LIST_LIMIT,
  isLadderRequest,
  isLadderResult,
  type Job,
  type JobRequest,
  type JobFilter,
  type JobState,
  MAX_LIST_LIMIT,
  type PulledJob,
  type RenditionProgress,
  type ResultReport
} from "./model.ts"
import { type NodeInfo, NodeSessions, type Registration, type SessionView } from "./sessions.ts"
import {
  ANY_MEMORY,
  type Claimed,
  type JobLookup,
  JobStore,
  type MemoryNeed,
  type PlanContext,
  type PullerMemory,
  type ReportOutcome,
  type ReportResults,
  type RunningUpdate,
  type SegmentCut,
  type SegmentKey,
  type SegmentReportContext,
  type StoreHealth
} from "./store.ts"

/** Most jobs one PullWork hands out; larger requests are cut to this. */
export const MAX_PULL = 64

/** Longest wait of a long-polling PullWork (well below a gRPC client's usual deadline). */
export const MAX_PULL_WAIT_MILLIS = 20_000

/**
 * Port: the scoring roots of a tenant (auth registry or SVC_SCORING_ROOTS), the one source of them
 * for the job service: SubmitJob checks its inputs against them, PullWork hands their texts out.
 */
export class TenantRoots extends Context.Tag("svc/jobs/TenantRoots")<
  TenantRoots,
  { readonly rootsFor: (tenantId: string) => Effect.Effect<RootSet, Unavailable> }
>() {}

/** Why SubmitJob refuses a model: the controller's scorer does not know it, or is not up yet. */
export type ModelRefusal = UnknownModel | ScorerNotReady

/** Port: the models the controller's scorer can load, checked at SubmitJob. */
export class JobModels extends Context.Tag("svc/jobs/JobModels")<
  JobModels,
  { readonly check: (model: string) => Effect.Effect<void, ModelRefusal> }
>() {}

/** Sample hooks the controller binds to its prom-client histograms (seconds). */
export interface JobMetricsHooksShape {
  /** Submission to hand-out by PullWork. */
  readonly observeQueueWait: (seconds: number) => void
  /** Hand-out to the final report, by outcome. */
  readonly observeJobDuration: (seconds: number, outcome: "finished" | "failed") => void
}

export class JobMetricsHooks extends Context.Tag("svc/jobs/JobMetricsHooks")<JobMetricsHooks, JobMetricsHooksShape>() {
  static readonly none: Layer.Layer<JobMetricsHooks> = Layer.succeed(JobMetricsHooks, {
    observeQueueWait: () => undefined,
    observeJobDuration: () => undefined
  })
}

/** Values for the controller's gauges. */
export interface JobGauges {
  /** Jobs by state over every tenant (legacy empty-tenant rows excluded). */
  readonly jobsByState: Readonly<Record<JobState, number>>
  readonly liveNodes: number
}

export interface JobServiceShape {
  /** SubmitJob: stores a pending job of the caller's tenant; durable when this succeeds. */
  readonly submit: (
    principal: Principal,
    request: JobRequest,
    idempotencyKey?: string
  ) => Effect.Effect<Job, ModelRefusal | PermissionDenied | Unavailable | InvalidJobRequest | JobStoreError>
  /** ListNodes: the caller's tenant's node sessions with the running jobs assigned to each. */
  readonly nodes: (principal: Principal) => Effect.Effect<ReadonlyArray<NodeView>, JobStoreError>
  /** GetJob. */
  readonly get: (
    principal: Principal,
    jobId: string
  ) => Effect.Effect<Job, PermissionDenied | JobNotFound | JobStoreError>
  /** CancelJob: pending or running → cancelled; a final job is returned unchanged. */
  readonly cancel: (
    principal: Principal,
    jobId: string
  ) => Effect.Effect<Job, PermissionDenied | JobNotFound | JobStoreError>
  /** The caller's tenant's jobs, newest first. */
  readonly list: (
    principal: Principal,
    filter: JobFilter
  ) => Effect.Effect<ReadonlyArray<Job>, InvalidJobRequest | JobStoreError>
  /** StreamJobs: the listing, then (with follow) every change of the tenant's jobs in the filter. */
  readonly stream: (
    principal: Principal,
    filter: JobFilter & { readonly follow: boolean }
  ) => Stream.Stream<Job, InvalidJobRequest | JobStoreError>
  /** RegisterNode: a fresh session of the caller's tenant. */
  readonly register: (
    principal: Principal,
    info: NodeInfo
  ) => Effect.Effect<Registration, InvalidJobRequest | JobStoreError>
  /**
   * Heartbeat: false for an unknown or expired session, or one of another tenant. A live node
   * lists the jobs it has (`runningJobIds`); a job claimed for it more than a session TTL ago
   * that it does not list never reached it (its PullWork answer was lost) and is re-queued. With
   * `handBackUnlisted` every running job of the node it does not list is re-queued at once: jobs
   * it pulled but cannot start yet (memory), handed back for another node or later. Segments
   * alike: a running segment is kept when named in `runningSegments` (or, when the node names
   * none, when its job is listed); one
   * handed back with its need is pending again, the hand-back not counted as an attempt.
   */
  readonly heartbeat: (
    principal: Principal,
    nodeId: string,
    runningJobIds: ReadonlyArray<string>,
    handBackUnlisted?: boolean,
    /** With `handBackUnlisted`: the memory each handed-back job or segment needs, recorded on it for later claims. */
    memoryNeeds?: ReadonlyArray<MemoryNeed>,
    runningSegments?: ReadonlyArray<SegmentKey>
  ) => Effect.Effect<boolean, JobStoreError>
  /**
   * PullWork: up to `maxJobs` (0: 1) of the tenant's oldest pending jobs, now running on the node.
   * With `waitMillis` (at most MAX_PULL_WAIT_MILLIS) and none pending, waits until a job arrives
   * or the time is up (then answers with none). A job whose recorded memory need exceeds the
   * node's free memory (`memory`) is left for a node with more, or for this one once it has more
   * (its next PullWork says so).
   */
  readonly pullWork: (
    principal: Principal,
    nodeId: string,
    maxJobs: number,
    waitMillis?: number,
    memory?: PullerMemory
  ) => Effect.Effect<
    ReadonlyArray<PulledJob>,
    PermissionDenied | NodeSessionNotLive | InvalidJobRequest | JobStoreError
  >
  /**
   * ReportResults: several reports of one node in one call, each decided as `reportResult`; the
   * outcomes in the order given. Refusals are per report and change nothing.
   */
  readonly reportResults: (
    principal: Principal,
    nodeId: string,
    reports: ReadonlyArray<{ readonly jobId: string; readonly report: ResultReport }>
  ) => Effect.Effect<ReportResults, JobStoreError>
  /** ReportResult (seed 5.6). */
  readonly reportResult: (
    principal: Principal,
    nodeId: string,
    jobId: string,
    report: ResultReport
  ) => Effect.Effect<Job, PermissionDenied | InvalidJobRequest | JobStoreError>
  /**
   * One re-queue sweep (the layer runs it every sweep interval) under the store's maintenance
   * lock; returns the re-queued jobs (none when another replica holds the lock).
   */
  readonly requeueOrphans: Effect.Effect<ReadonlyArray<Job>, JobStoreError>
  readonly gauges: Effect.Effect<JobGauges, JobStoreError>
  /** Whether the store's database answers (readiness). */
  readonly storeHealth: Effect.Effect<StoreHealth>
}

/** A node session with the ids of the tenant's running jobs assigned to it. */
export interface NodeView extends SessionView {
  readonly runningJobIds: ReadonlyArray<string>
  readonly sessionTtlMillis: number
}

/** Longest SubmitJobRequest.idempotency_key accepted. */
export const MAX_IDEMPOTENCY_KEY_LENGTH = 256

export class JobService extends Context.Tag("svc/jobs/JobService")<JobService, JobServiceShape>() {}

const found = (lookup: JobLookup, jobId: string): Effect.Effect<Job, PermissionDenied | JobNotFound> => {
  switch (lookup._tag) {
    case "Found":
      return Effect.succeed(lookup.job)
    case "OtherTenant":
      return Effect.fail(PermissionDenied.otherTenant())
    case "Missing":
      return Effect.fail(new JobNotFound({ jobId }))
  }
}

const checkFilter = (
  filter: JobFilter
): Effect.Effect<{ readonly states: ReadonlyArray<JobState>; readonly limit: number }, InvalidJobRequest> => {
  const limit = filter.limit === undefined || filter.limit === 0 ? DEFAULT_LIST_LIMIT : filter.limit
  return Number.isSafeInteger(limit) && limit > 0 && limit <= MAX_LIST_LIMIT
    ? Effect.succeed({ states: filter.states ?? [], limit })
    : Effect.fail(
        new InvalidJobRequest({
          message: `limit must be a whole number from 0 to ${MAX_LIST_LIMIT}; got ${filter.limit}`
        })
      )
}

// No token can carry the empty tenant; refusing it here keeps unreachable rows from being written.
// A NUL character cannot be stored by PostgreSQL, so such a tenant is refused by every store alike.
const ownTenant = (principal: Principal): Effect.Effect<string, InvalidJobRequest> =>
  principal.tenantId === ""
    ? Effect.fail(new InvalidJobRequest({ message: "the caller's token carries no tenant" }))
    : principal.tenantId.includes("\u0000")
      ? Effect.fail(new InvalidJobRequest({ message: "the caller's tenant contains a NUL character" }))
      : Effect.succeed(principal.tenantId)

/** `page` continuing `before` from `offset` (a page never starts beyond the frames so far). */
const continued = <F>(
  before: ReadonlyArray<F>,
  page: ReadonlyArray<F>,
  offset: number
): Either.Either<ReadonlyArray<F>, InvalidJobRequest> =>
  before.length < offset
    ? Either.left(
        new InvalidJobRequest({
          message: `frames_offset ${offset} is beyond the ${before.length} frames reported so far`
        })
      )
    : Either.right([...before.slice(0, offset), ...page])

/**
 * A page of per-frame results appended at `framesOffset` to the frames stored so far; a
 * ladder's page continues every rendition's frames from that offset.
 */
const withPage = (stored: Job["result"], report: ResultReport): Either.Either<Job["result"], InvalidJobRequest> => {
  const offset = report.framesOffset ?? 0
  if (!Number.isSafeInteger(offset) || offset < 0) {
    return Either.left(new InvalidJobRequest({ message: `frames_offset must be a whole number ≥ 0; got ${offset}` }))
  }
  const result = report.result
  if (result === undefined || offset === 0) return Either.right(result)
  if (!isLadderResult(result)) {
    const before = stored !== undefined && !isLadderResult(stored) ? stored.frames : []
    return Either.map(continued(before, result.frames, offset), (frames) => ({ ...result, frames }))
  }
  const storedRenditions = stored !== undefined && isLadderResult(stored) ? stored.renditions : []
  return Either.map(
    Either.all(
      result.renditions.map((rendition, index) =>
        Either.map(continued(storedRenditions[index]?.frames ?? [], rendition.frames, offset), (frames) => ({
          ...rendition,
          frames
        }))
      )
    ),
    (renditions) => ({ ...result, renditions })
  )
}

/**
 * A ladder job's per-rendition progress after a report: the reported labels (each one of the
 * job's renditions, at most once) replace their stored counts, the others keep theirs; a final
 * ladder result fills a rendition not reported with its frame_count (a node that sends no
 * per-rendition progress still ends with it complete). Request order. A pair job has none.
 */
const withRenditionProgress = (
  job: Job,
  report: ResultReport
): Either.Either<ReadonlyArray<RenditionProgress>, InvalidJobRequest> => {
  const reported = report.renditionProgress ?? []
  const refuse = (message: string) => Either.left(new InvalidJobRequest({ message: `rendition_progress: ${message}` }))
  if (!isLadderRequest(job.request))
    return reported.length === 0 ? Either.right([]) : refuse("only a ladder job reports progress per rendition")
  const labels = job.request.ladder.renditions.map((rendition) => rendition.label)
  const counts = new Map(job.renditionProgress.map((entry) => [entry.label, entry.framesDone]))
  const seen = new Set<string>()
  for (const entry of reported) {
    if (!labels.includes(entry.label)) return refuse(`"${entry.label.slice(0, 64)}" is not a rendition of this job`)
    if (seen.has(entry.label)) return refuse(`"${entry.label}" is given twice`)
    if (!Number.isSafeInteger(entry.framesDone) || entry.framesDone < 0)
      return refuse(`frames_done of "${entry.label}" must be a whole number ≥ 0; got ${entry.framesDone}`)
    seen.add(entry.label)
    counts.set(entry.label, entry.framesDone)
  }
  if (report.final && report.result !== undefined && isLadderResult(report.result))
    for (const rendition of report.result.renditions)
      if (!seen.has(rendition.label) && labels.includes(rendition.label))
        counts.set(rendition.label, rendition.frame_count)
  return Either.right(
    labels.flatMap((label) => {
      const framesDone = counts.get(label)
      return framesDone === undefined ? [] : [{ label, framesDone }]
    })
  )
}

/** The write of an accepted report, on the job stored so far (pure: the store calls it in its transaction). */
const toUpdate = (nodeId: string, report: ResultReport, job: Job): Either.Either<RunningUpdate, InvalidJobRequest> => {
  const stored = job.result
  if (!Number.isSafeInteger(report.framesDone) || report.framesDone < 0) {
    return Either.left(
      new InvalidJobRequest({ message: `frames_done must be a whole number ≥ 0; got ${report.framesDone}` })
    )
  }
  const error = report.error === undefined || report.error === "" ? undefined : report.error
  if (report.final && error === undefined && report.result === undefined) {
    return Either.left(new InvalidJobRequest({ message: "a final report needs a result or an error" }))
  }
  return Either.map(
    Either.all([withPage(stored, report), withRenditionProgress(job, report)]),
    ([result, progress]) => ({
      nodeId,
      result,
      framesDone: report.framesDone,
      renditionProgress: progress,
      outcome: report.final ? { state: error === undefined ? "finished" : "failed", error } : undefined
    })
  )
}

/** A job's `options.segment_frames` (0: one piece), a pair's or a ladder's (the whole ladder's option). */
export const segmentFramesOf = (request: JobRequest): number =>
  (isLadderRequest(request) ? request.ladder.options?.segment_frames : request.options?.segment_frames) ?? 0

/** The job's request with `options.segment_frames` set (a ladder's in its ladder-wide options). */
const withSegmentFrames = (request: JobRequest, segmentFrames: number): JobRequest =>
  isLadderRequest(request)
    ? { ladder: { ...request.ladder, options: { ...request.ladder.options, segment_frames: segmentFrames } } }
    : { ...request, options: { ...request.options, segment_frames: segmentFrames } }

/**
 * The segments of a title of `frames` frames cut every `segmentFrames` (longer when that would
 * make more than maxSegmentsPerJob), the last one taking the rest.
 */
export const cutTitle = (frames: number, segmentFrames: number): ReadonlyArray<SegmentCut> => {
  const size = Math.max(segmentFrames, Math.ceil(frames / maxSegmentsPerJob))
  return Array.from({ length: Math.ceil(frames / size) }, (_, k) => ({
    firstFrame: k * size,
    frameCount: Math.min(size, frames - k * size)
  }))
}

/** The merge of a segment job's results: exact, in segment order, with the job's output options. */
const mergeJob = (
  job: Job,
  results: ReadonlyArray<NonNullable<Job["result"]>>
): Either.Either<Job["result"], string> => {
  const ladder = isLadderRequest(job.request)
  const pairs = results.flatMap((result) => (isLadderResult(result) ? [] : [result]))
  const ladders = results.flatMap((result) => (isLadderResult(result) ? [result] : []))
  if ((ladder ? ladders : pairs).length !== results.length)
    return Either.left(
      ladder ? "a segment of a ladder job reported a pair's result" : "a segment reported a ladder result"
    )
  const options = (isLadderRequest(job.request) ? job.request.ladder.options : job.request.options) ?? {}
  const output = {
    precision: parsePrecision(String(options.precision ?? "")),
    // A job's result always carries its per-frame values (a node scores every job with them, and
    // describe_worst_frames reads them), whatever options.per_frame says: so does the merge.
    perFrame: true,
    shots: shotOptionsOf(options)
  }
  // A merge that cannot be exact (xpsnr on a layout it does not know) fails the job, saying why.
  return Either.try({
    try: (): Job["result"] => (ladder ? mergeLadderSegments(ladders, output) : mergeSegmentResults(pairs, output)),
    catch: (error) => (error instanceof Error ? error.message : String(error))
  }).pipe(
    Either.flatMap((merged) =>
      merged === undefined
        ? Either.left("the segments hold no frames")
        : // A sync job's result carries the alignment its plan found (every segment was scored with
          // it); a ladder's, each rendition's own.
          Either.right(withPlanAlignment(job, merged))
    )
  )
}

/** A merged result with the alignment its job's plan found (a ladder: each rendition's, in request order). */
const withPlanAlignment = (job: Job, merged: NonNullable<Job["result"]>): NonNullable<Job["result"]> => {
  if (isLadderResult(merged)) {
    const alignments = job.planRenditionAlignments
    return alignments === undefined
      ? merged
      : {
          ...merged,
          renditions: merged.renditions.map((rendition, index) => {
            const alignment = alignments[index]
            return alignment === undefined ? rendition : { ...rendition, alignment }
          })
        }
  }
  return job.planAlignment === undefined ? merged : { ...merged, alignment: job.planAlignment }
}

/** Where a node's plan or segment report is decided: the store's session-bound calls, or with sessions read first. */
interface SegmentTarget {
  readonly nodeId: string
  readonly plan: (
    cuts: PlanContext["cuts"],
    alignment: PlanContext["alignment"]
  ) => Effect.Effect<ReportOutcome, PermissionDenied | InvalidJobRequest | JobStoreError>
  readonly report: (
    index: number,
    context: Pick<SegmentReportContext, "update" | "merge">
  ) => Effect.Effect<ReportOutcome, PermissionDenied | InvalidJobRequest | JobStoreError>
}

/**
 * Why a plan report's alignment does not fit its job (undefined: it fits): a pair job with
 * options.sync "auto" carries plan_alignment, a ladder one plan_rendition_alignments (one per
 * rendition), any other job neither; plan_frames counts a pair's pairs, a ladder's frames (the reference
 * frames any rendition pairs).
 */
const planAlignmentCheck = (
  jobId: string,
  request: Job["request"],
  planFrames: number,
  report: Pick<ResultReport, "planAlignment" | "planRenditionAlignments">
): string | undefined => {
  const ladder = isLadderRequest(request)
  const sync = (ladder ? request.ladder.options?.sync : request.options?.sync) === "auto"
  const field = ladder ? "plan_rendition_alignments" : "plan_alignment"
  const stray = ladder ? report.planAlignment : report.planRenditionAlignments
  if (stray !== undefined)
    return `job "${jobId}" is a ${ladder ? "ladder" : "pair"} job: its plan carries no ${ladder ? "plan_alignment" : "plan_rendition_alignments"}`
  const alignments = ladder
    ? report.planRenditionAlignments
    : report.planAlignment === undefined
      ? undefined
      : [report.planAlignment]
  if (sync !== (alignments !== undefined))
    return sync
      ? `job "${jobId}" aligns (options.sync "auto"): its plan carries ${field}`
      : `job "${jobId}" does not align: its plan carries no ${field}`
  if (alignments === undefined) return undefined
  if (ladder && alignments.length !== request.ladder.renditions.length)
    return `${field}: ${alignments.length} alignments for ${request.ladder.renditions.length} renditions`
  if (!ladder) {
    const pairs = alignments[0]?.frames ?? 0
    return planFrames > pairs ? `plan_frames ${planFrames} is more than ${field}'s ${pairs} pairs` : undefined
  }
  // A ladder's title is the reference frames any rendition pairs (each rendition over its own):
  // at most those from the earliest start to the latest end.
  const first = Math.min(...alignments.map((alignment) => alignment.reference_start))
  const end = Math.max(
    ...alignments.map(
      (alignment) => alignment.reference_start + alignment.frames + alignment.reference_frames_dropped.length
    )
  )
  return planFrames > end - first
    ? `plan_frames ${planFrames} is more than the ${end - first} reference frames ${field} spans`
    : undefined
}

/** A plan or a segment's report (decided on the segment tables), not the job's own. */
const isSegmentReport = (report: ResultReport) => (report.planFrames ?? 0) !== 0 || report.segmentIndex !== undefined

const seconds = (from: number | undefined, to: number | undefined) =>
  from === undefined || to === undefined ? undefined : Math.max(0, to - from) / 1000

export const makeJobService = Effect.gen(function* () {
  const store = yield* JobStore
  const sessions = yield* NodeSessions
  const roots = yield* TenantRoots
  const models = yield* JobModels
  const hooks = yield* JobMetricsHooks
  const segmentDefault = yield* defaultSegmentFrames(minSegmentFrames, maxSegmentFrames)
  /** A plan or a segment's report (issue 30), decided on the segment tables by `target`. */
  const segmentReport = (jobId: string, report: ResultReport, target: SegmentTarget) =>
    Effect.gen(function* () {
      const planFrames = report.planFrames ?? 0
      if (planFrames !== 0) {
        if (!Number.isSafeInteger(planFrames) || planFrames < 0 || report.final)
          return yield* new InvalidJobRequest({
            message: `plan_frames must be a whole number ≥ 0 on a progress report; got ${planFrames}`
          })
        const { planAlignment, planRenditionAlignments } = report
        return yield* target.plan((held) => {
          const size = segmentFramesOf(held.request)
          if (size === 0) return Either.left(new InvalidJobRequest({ message: `job "${jobId}" is not a segment job` }))
          // A sync job's segments are ranges of the pairs its plan found: the plan carries them,
          // a pair's alignment, or a ladder's, one per rendition.
          const checked = planAlignmentCheck(jobId, held.request, planFrames, report)
          return checked === undefined
            ? Either.right(cutTitle(planFrames, size))
            : Either.left(new InvalidJobRequest({ message: checked }))
        }, planRenditionAlignments ?? planAlignment)
      }
      const index = report.segmentIndex ?? 0
      if (!Number.isSafeInteger(index) || index < 0)
        return yield* new InvalidJobRequest({ message: `segment_index must be a whole number ≥ 0; got ${index}` })
      const segmentReport = { ...report, renditionProgress: [] }
      return yield* target.report(index, {
        update: (stored) => toUpdate(target.nodeId, segmentReport, stored),
        merge: mergeJob
      })
    })

  /** A refusal is that report's outcome; a store failure fails the call. */
  const settle = (
    applied: Effect.Effect<ReportOutcome, PermissionDenied | InvalidJobRequest | JobStoreError>
  ): Effect.Effect<ReportResults[number], JobStoreError> =>
    applied.pipe(
      Effect.map((outcome) => Either.right(outcome)),
      Effect.catchIf(
        (error): error is PermissionDenied | InvalidJobRequest =>
          error instanceof PermissionDenied || error instanceof InvalidJobRequest,
        (refusal) => Effect.succeed(Either.left(refusal))
      )
    )

  // The rule is decided by the store on the job as its write holds it (report.ts); here only
  // what is not the job: the reporting session and the tenant's live sessions. A store holding
  // the sessions (PostgreSQL) reads them with the jobs, in its own calls.
  const reportResults: JobServiceShape["reportResults"] = (principal, nodeId, reports) =>
    Effect.gen(function* () {
      const tenantId = principal.tenantId
      const bound = store.sessionBound
      const segmentStore = store.segments
      const outcomes: ReportResults =
        bound !== undefined
          ? yield* Effect.gen(function* () {
              // Job reports in one batch; plans and segments' reports one by one.
              const plain = reports.flatMap((entry, index) =>
                isSegmentReport(entry.report) ? [] : [{ ...entry, index }]
              )
              const applied =
                plain.length === 0
                  ? []
                  : yield* bound.report(
                      tenantId,
                      nodeId,
                      plain.map(({ jobId, report }) => ({
                        jobId,
                        update: (stored: Job) => toUpdate(nodeId, report, stored)
                      }))
                    )
              const byIndex = new Map(plain.map(({ index }, k) => [index, applied[k]]))
              return yield* Effect.forEach(reports, ({ jobId, report }, index) => {
                const done = byIndex.get(index)
                if (done !== undefined) return Effect.succeed(done)
                return settle(
                  segmentReport(jobId, report, {
                    nodeId,
                    plan: (cuts, alignment) => bound.plan(tenantId, nodeId, jobId, cuts, alignment),
                    report: (segment, context) => bound.segmentReport(tenantId, nodeId, jobId, segment, context)
                  })
                )
              })
            })
          : yield* Effect.gen(function* () {
              const reporter = yield* sessions.state(nodeId)
              if (reporter.tenantId !== tenantId)
                return reports.map(({ jobId }) => Either.left(PermissionDenied.jobNotAssigned(jobId, nodeId)))
              const live = yield* sessions.ofTenant(tenantId)
              const context = {
                reporter: { nodeId, sessionTenantId: reporter.tenantId, live: reporter._tag === "Live" },
                liveNodeIds: new Set(live.filter((session) => session.live).map((session) => session.nodeId))
              }
              return yield* Effect.forEach(reports, ({ jobId, report }) =>
                settle(
                  !isSegmentReport(report)
                    ? store.report(tenantId, jobId, {
                        ...context,
                        update: (stored) => toUpdate(nodeId, report, stored)
                      })
                    : segmentStore === undefined
                      ? Effect.fail(
                          new InvalidJobRequest({
                            message: "this controller's store does not split jobs into segments"
                          })
                        )
                      : segmentReport(jobId, report, {
                          nodeId,
                          plan: (cuts, alignment) =>
                            segmentStore.plan(tenantId, jobId, { ...context, cuts, alignment }),
                          report: (segment, segmentContext) =>
                            segmentStore.report(tenantId, jobId, segment, { ...context, ...segmentContext })
                        })
                )
              )
            })
      for (const outcome of outcomes) {
        if (Either.isLeft(outcome)) continue
        const { job, written } = outcome.right
        if (written && (job.state === "finished" || job.state === "failed")) {
          const duration = seconds(job.startedAt, job.finishedAt)
          if (duration !== undefined) hooks.observeJobDuration(duration, job.state)
        }
      }
      return outcomes
    })

  const reportResult: JobServiceShape["reportResult"] = (principal, nodeId, jobId, report) =>
    Effect.flatMap(reportResults(principal, nodeId, [{ jobId, report }]), ([outcome]) =>
      outcome === undefined
        ? Effect.die(new Error("a report without an outcome"))
        : Either.match(outcome, {
            onLeft: (error) => Effect.fail(error),
            onRight: ({ job }) => Effect.succeed(job)
          })
    )

  /**
   * One claim: the session must be the caller's tenant's and live. A node whose session says it
   * scores segments (RegisterNode scores_segments, kept with the session where every replica
   * sees it) gets a segment job's plan, then its segments, fairly; any other node gets jobs whole
   * (a segment job not yet planned is scored in one piece).
   */
  const claimOnce = (principal: Principal, nodeId: string, max: number, memory: PullerMemory) =>
    Effect.gen(function* () {
      const bound = store.sessionBound
      if (bound !== undefined) {
        const claimed = yield* bound.claim(principal.tenantId, nodeId, max, memory)
        if (claimed._tag === "OtherTenant") return yield* PermissionDenied.otherTenant()
        if (claimed._tag === "NotLive") return yield* new NodeSessionNotLive({ nodeId })
        return { units: claimed.units, scoresSegments: claimed.scoresSegments }
      }
      const session = yield* sessions.state(nodeId)
      // Another tenant's session (live or not) is refused without naming its tenant.
      if (session.tenantId !== undefined && session.tenantId !== principal.tenantId)
        return yield* PermissionDenied.otherTenant()
      if (session._tag !== "Live") return yield* new NodeSessionNotLive({ nodeId })
      const segmentStore = store.segments
      if (segmentStore !== undefined && session.scoresSegments)
        return { units: yield* segmentStore.claim(session.tenantId, nodeId, max, memory), scoresSegments: true }
      const jobs = yield* store.claim(session.tenantId, nodeId, max, memory)
      return { units: jobs.map((job): Claimed => ({ job })), scoresSegments: false }
    })

  /**
   * Claims; with nothing pending and time left, waits for a wake-up and claims again. The wait
   * is subscribed before each claim, so a job that arrives in between wakes it.
   */
  const claimWaiting = (principal: Principal, nodeId: string, max: number, waitMillis: number, memory: PullerMemory) =>
    Effect.gen(function* () {
      const deadline = (yield* Clock.currentTimeMillis) + waitMillis
      for (;;) {
        const outcome = yield* Effect.scoped(
          Effect.gen(function* () {
            const woken = yield* store.awaitWork(principal.tenantId)
            const claimed = yield* claimOnce(principal, nodeId, max, memory)
            const left = deadline - (yield* Clock.currentTimeMillis)
            if (claimed.units.length > 0 || left <= 0) return Option.some(claimed)
            const wakeUp = yield* Effect.timeout(woken, left).pipe(Effect.option)
            return Option.isSome(wakeUp) ? Option.none() : Option.some(claimed)
          })
        )
        if (Option.isSome(outcome)) return outcome.value
      }
    })

  // Safe if two replicas run it at once: a dead session never becomes live again, and
  // `requeueNode` only moves rows still assigned to it.
  const sweep = Effect.gen(function* () {
    const now = yield* Clock.currentTimeMillis
    const assignments = yield* store.runningAssignments
    const requeued = yield* Effect.forEach(assignments, ({ nodeId, tenantId }) =>
      Effect.flatMap(sessions.state(nodeId), (state) =>
        state._tag === "Live" || now - state.since < sessions.settings.requeueGraceMillis
          ? Effect.succeed([])
          : store.requeueNode(tenantId, nodeId)
      )
    )
    yield* sessions.prune
    return requeued.flat()
  })
  const requeueOrphans: JobServiceShape["requeueOrphans"] = Effect.map(
    store.exclusive(sweep),
    Option.getOrElse((): ReadonlyArray<Job> => [])
  )

  const service: JobServiceShape = {
    submit: (principal, request, idempotencyKey) =>
      Effect.gen(function* () {
        // Validated whole, as Score validates: a model this controller's scorer does not know is
        // refused now rather than failing later on a node (a ladder's renditions share its model).
        yield* models.check(primaryModel(isLadderRequest(request) ? request.ladder : request))
        // Inputs are read by a node, so they are checked as written here (5.5.5); a ladder's
        // reference and every rendition's path.
        const tenantRoots = yield* roots.rootsFor(principal.tenantId)
        const inputs = isLadderRequest(request)
          ? [request.ladder.reference, ...request.ladder.renditions.map((rendition) => rendition.distorted)]
          : [request.reference, request.distorted]
        for (const input of inputs) yield* tenantRoots.check(input)
        const tenantId = yield* ownTenant(principal)
        const key = idempotencyKey === undefined || idempotencyKey === "" ? undefined : idempotencyKey
        if (key !== undefined && key.length > MAX_IDEMPOTENCY_KEY_LENGTH) {
          return yield* new InvalidJobRequest({
            message: `idempotency_key is longer than ${MAX_IDEMPOTENCY_KEY_LENGTH} characters`
          })
        }
        // A job with options.sync "auto" (a pair or a ladder) aligns once, in its plan, and its
        // segments are ranges of aligned pairs: the controller's default applies to any job that
        // does not set it.
        const stored =
          segmentDefault > 0 && segmentFramesOf(request) === 0 ? withSegmentFrames(request, segmentDefault) : request
        return yield* store.insert({
          id: crypto.randomUUID(),
          tenantId,
          request: stored,
          submittedBy: principal.subject,
          idempotencyKey: key
        })
      }),

    nodes: (principal) =>
      Effect.gen(function* () {
        const views = yield* sessions.ofTenant(principal.tenantId)
        const running = views.length === 0 ? [] : yield* store.list(principal.tenantId, ["running"], MAX_LIST_LIMIT)
        return views
          .map((view) => ({
            ...view,
            sessionTtlMillis: sessions.settings.ttlMillis,
            runningJobIds: running.filter((job) => job.nodeId === view.nodeId).map((job) => job.id)
          }))
          .sort((a, b) => a.name.localeCompare(b.name) || a.nodeId.localeCompare(b.nodeId))
      }),

    get: (principal, jobId) =>
      Effect.flatMap(store.lookup(principal.tenantId, jobId), (lookup) => found(lookup, jobId)),

    cancel: (principal, jobId) =>
      Effect.flatMap(store.cancel(principal.tenantId, jobId), (lookup) => found(lookup, jobId)),

    list: (principal, filter) =>
      Effect.flatMap(checkFilter(filter), ({ states, limit }) => store.list(principal.tenantId, states, limit)),

    stream: (principal, filter) =>
      Stream.unwrapScoped(
        Effect.gen(function* () {
          const { states, limit } = yield* checkFilter(filter)
          // Subscribe before listing, so no change between the two is missed (one may come twice).
          const changes = filter.follow ? yield* store.changes(principal.tenantId) : Stream.empty
          const initial = yield* store.list(principal.tenantId, states, limit)
          const wanted = (job: Job) => states.length === 0 || states.includes(job.state)
          return Stream.concat(Stream.fromIterable(initial), Stream.filter(changes, wanted))
        })
      ),

    register: (principal, info) =>
      Effect.flatMap(ownTenant(principal), (tenantId) => sessions.register(tenantId, info)),

    heartbeat: (principal, nodeId, runningJobIds, handBackUnlisted = false, memoryNeeds = [], runningSegments = []) =>
      Effect.gen(function* () {
        const ok = yield* sessions.heartbeat(principal.tenantId, nodeId)
        if (!ok) return false
        // A claim older than a session TTL has had time to reach the node, however slow: one the
        // node does not list is as lost as the jobs of a node silent for that long. A node handing
        // jobs back has no PullWork in flight, so it lists every claim it holds, however recent
        // (any claim time, whatever a replica's clock says).
        const now = yield* Clock.currentTimeMillis
        const lost = yield* store.requeueUnlisted(
          principal.tenantId,
          nodeId,
          runningJobIds,
          handBackUnlisted ? Number.MAX_SAFE_INTEGER : now - sessions.settings.ttlMillis,
          handBackUnlisted ? memoryNeeds : [],
          runningSegments
        )
        if (lost.length > 0)
          yield* handBackUnlisted
            ? Effect.logInfo(`node ${nodeId} handed back ${lost.map((job) => job.id).join(", ")}; re-queued`)
            : Effect.logWarning(
                `node ${nodeId} does not have ${lost.map((job) => job.id).join(", ")}: its claim never reached it; re-queued`
              )
        return true
      }),

    pullWork: (principal, nodeId, maxJobs, waitMillis = 0, memory = ANY_MEMORY) =>
      Effect.gen(function* () {
        if (!Number.isSafeInteger(maxJobs) || maxJobs < 0) {
          return yield* new InvalidJobRequest({ message: `max_jobs must be a whole number ≥ 0; got ${maxJobs}` })
        }
        if (!Number.isSafeInteger(waitMillis) || waitMillis < 0 || waitMillis > MAX_PULL_WAIT_MILLIS) {
          return yield* new InvalidJobRequest({
            message: `wait_ms must be a whole number from 0 to ${MAX_PULL_WAIT_MILLIS}; got ${waitMillis}`
          })
        }
        const max = Math.min(Math.max(maxJobs, 1), MAX_PULL)
        const { units: jobs, scoresSegments } =
          waitMillis === 0
            ? yield* claimOnce(principal, nodeId, max, memory)
            : yield* claimWaiting(principal, nodeId, max, waitMillis, memory)
        if (jobs.length === 0) return []
        // A stale tenant set cannot reach here (the gateway refuses first); if it did, no roots
        // means the node refuses the job.
        const scoringRoots = yield* roots.rootsFor(principal.tenantId).pipe(
          Effect.map((set) => set.texts),
          Effect.orElseSucceed((): ReadonlyArray<string> => [])
        )
        for (const { job, segment } of jobs) {
          const wait = segment === undefined ? seconds(job.createdAt, job.startedAt) : undefined
          if (wait !== undefined) hooks.observeQueueWait(wait)
        }
        return jobs.map(({ job, segment }) => ({
          ...job,
          scoringRoots,
          segment,
          plan: segment === undefined && scoresSegments && segmentFramesOf(job.request) > 0
        }))
      }),

    reportResult,
    reportResults,
    requeueOrphans,

    storeHealth: store.health,

    gauges: Effect.all({ jobsByState: store.countByState, liveNodes: Effect.map(sessions.live, (live) => live.length) })
  }

  // Background re-queue sweep for the layer's lifetime; a failed round is logged and retried next time.
  yield* Effect.forkScoped(
    Effect.repeat(
      Effect.catchAll(requeueOrphans, (error) => Effect.logWarning(`job re-queue sweep failed: ${error.message}`)),
      Schedule.spaced(sessions.settings.sweepIntervalMillis)
    )
  )
  return service
})

/** JobService over the JobStore, NodeSessions, TenantRoots, JobModels and JobMetricsHooks it is given. */
export const jobServiceLayer: Layer.Layer<
  JobService,
  ConfigError.ConfigError,
  JobStore | NodeSessions | TenantRoots | JobModels | JobMetricsHooks
> = Layer.scoped(JobService, makeJobService)
