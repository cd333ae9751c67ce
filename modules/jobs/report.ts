/**
 * A node's result report as both stores apply it (seed 000 §5.6). The store reads the job inside
 * its write transaction (SQLite: the `BEGIN IMMEDIATE` transaction; PostgreSQL: `SELECT … FOR
 * UPDATE`), runs `planReport` on that row and writes what it returns in the same transaction, so
 * the rule (`decideReport` of policy/node-reports.ts) and the write see the same job.
 */
import { Either } from "effect"
import { PermissionDenied } from "../policy/errors.ts"
import { decideReport } from "../policy/node-reports.ts"
import type { InvalidJobRequest } from "./errors.ts"
import type { Job, JobSegment } from "./model.ts"
import type { Lease, ReportContext, RunningUpdate } from "./store.ts"

/** `Write`: apply `update` to the running job under `expected`. `Unchanged`: the job is already final. */
export type ReportPlan =
  | { readonly _tag: "Write"; readonly expected: Lease; readonly update: RunningUpdate }
  | { readonly _tag: "Unchanged"; readonly job: Job }

/** The decision on `job` (undefined: not the tenant's, or no such job) as the store holds it. */
export const planReport = (
  tenantId: string,
  jobId: string,
  job: Job | undefined,
  context: ReportContext
): Either.Either<ReportPlan, PermissionDenied | InvalidJobRequest> => {
  const owner = job?.nodeId
  const decision = decideReport({
    callerTenantId: tenantId,
    jobId,
    job: job && { id: job.id, tenantId: job.tenantId, state: job.state, assignedNodeId: owner },
    reporter: context.reporter,
    assignedNodeLive: owner !== undefined && context.liveNodeIds.has(owner)
  })
  return Either.flatMap(decision, (verdict): Either.Either<ReportPlan, PermissionDenied | InvalidJobRequest> => {
    // decideReport accepts only a job it was given that has a node; the guard is for the types.
    if (job === undefined) return Either.left(PermissionDenied.jobNotAssigned(jobId, context.reporter.nodeId))
    if (owner === undefined || verdict === "unchanged") return Either.right({ _tag: "Unchanged", job })
    return Either.map(context.update(job), (update) => ({
      _tag: "Write",
      expected: { nodeId: owner, fence: job.fence },
      update
    }))
  })
}

/**
 * The decision on a segment's report, with the segment's lease in the job's place: the same
 * rule (`decideReport`), refusals naming the job. A job already final (cancelled, failed by
 * another segment, finished) returns it unchanged, so the node stops.
 */
export const planSegmentReport = (
  tenantId: string,
  jobId: string,
  job: Job | undefined,
  segment: JobSegment | undefined,
  /** The segment's result so far (its pages), on which the report's page is built. */
  segmentResult: Job["result"],
  context: ReportContext
): Either.Either<ReportPlan, PermissionDenied | InvalidJobRequest> => {
  const refuse = Either.left(PermissionDenied.jobNotAssigned(jobId, context.reporter.nodeId))
  if (job === undefined || segment === undefined) return refuse
  const owner = segment.nodeId
  const decision = decideReport({
    callerTenantId: tenantId,
    jobId,
    job: { id: job.id, tenantId: job.tenantId, state: segment.state, assignedNodeId: owner },
    reporter: context.reporter,
    assignedNodeLive: owner !== undefined && context.liveNodeIds.has(owner)
  })
  return Either.flatMap(decision, (verdict): Either.Either<ReportPlan, PermissionDenied | InvalidJobRequest> => {
    if (owner === undefined || verdict === "unchanged" || job.state !== "running")
      return Either.right({ _tag: "Unchanged", job })
    const view: Job = { ...job, result: segmentResult, framesDone: segment.framesDone, renditionProgress: [] }
    return Either.map(context.update(view), (update) => ({
      _tag: "Write",
      expected: { nodeId: owner, fence: segment.fence },
      update
    }))
  })
}
