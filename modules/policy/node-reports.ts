/**
 * Who may report a job's result (seed 5.6): one pure rule. It depends on the job's state when
 * the write commits, so it is no gate in front of the handler: each job store calls it (through
 * jobs/report.ts) on the job row it holds inside the report's write transaction (SQLite: the
 * IMMEDIATE transaction; PostgreSQL: `SELECT … FOR UPDATE`) and writes what it decides there.
 */
import { Either } from "effect"
import { PermissionDenied } from "./errors.ts"

export type JobState = "pending" | "running" | "finished" | "cancelled" | "failed"

export interface ReportedJob {
  readonly id: string
  readonly tenantId: string
  readonly state: JobState
  /** Node the job was handed to by `PullWork` (or last taken over by); undefined while pending. */
  readonly assignedNodeId: string | undefined
}

export interface Reporter {
  readonly nodeId: string
  /** Tenant of the token that registered the reporting session; undefined for a session never registered. */
  readonly sessionTenantId: string | undefined
  /** Whether the reporting session is live now. */
  readonly live: boolean
}

/**
 * `record`: apply the report to the running job (the reporter takes it over when it was another
 * node's). `unchanged`: the job is already final (a repeated final report, or a late one after a
 * cancel): succeed, change nothing.
 */
export type ReportDecision = "record" | "unchanged"

/**
 * Accepts a report for a job assigned to the reporter, or for a running job of the same tenant
 * whose node has no live session any more, by a live session (a node that registered again after
 * a restart reports what it finished before). Everything else — a session of another tenant or
 * never registered, another tenant's job, a pending job, a job of a live node, an unknown job —
 * is refused without naming the owner. `assignedNodeLive` is only consulted when the job is
 * another node's.
 */
export const decideReport = (input: {
  readonly callerTenantId: string
  readonly jobId: string
  readonly job: ReportedJob | undefined
  readonly reporter: Reporter
  readonly assignedNodeLive: boolean
}): Either.Either<ReportDecision, PermissionDenied> => {
  const { callerTenantId, job, reporter } = input
  const refuse = Either.left(PermissionDenied.jobNotAssigned(input.jobId, reporter.nodeId))
  if (reporter.sessionTenantId !== callerTenantId) return refuse
  if (job === undefined || job.tenantId !== callerTenantId) return refuse
  if (job.state === "pending" || job.assignedNodeId === undefined) return refuse
  if (job.assignedNodeId !== reporter.nodeId && (input.assignedNodeLive || !reporter.live)) return refuse
  return job.state === "running" ? Either.right("record") : Either.right("unchanged")
}
