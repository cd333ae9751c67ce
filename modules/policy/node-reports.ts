/**
 * Who may report a job's result (seed 5.6). The controller looks the job and the
 * original node's liveness up; this module decides.
 */
import { Effect } from "effect"
import { PermissionDenied } from "./errors.ts"

export type JobState = "pending" | "running" | "finished"

export interface ReportedJob {
  readonly id: string
  readonly tenantId: string
  readonly state: JobState
  /** Node the job was handed to by `PullWork`; undefined while pending. */
  readonly assignedNodeId: string | undefined
}

export interface Reporter {
  readonly nodeId: string
  /** Tenant of the token that registered the reporting node's session. */
  readonly tenantId: string
}

/** `record`: store the result. `unchanged`: a repeated final report of a finished job; succeed, change nothing. */
export type ReportDecision = "record" | "unchanged"

/**
 * Accepts a report for a job assigned to the reporter, or for a running job of the
 * same tenant whose node has no live session any more (a node that registered again
 * after a restart reports what it finished before). Everything else — another
 * tenant's job, a pending job, a job of a live node, an unknown job — is refused
 * without naming the owner.
 */
export const decideReport = (
  job: ReportedJob | undefined,
  reporter: Reporter,
  jobId: string,
  isFinal: boolean,
  isNodeLive: (nodeId: string) => boolean
): Effect.Effect<ReportDecision, PermissionDenied> => {
  const refuse = Effect.fail(PermissionDenied.jobNotAssigned(jobId, reporter.nodeId))
  if (job === undefined || job.tenantId !== reporter.tenantId || job.assignedNodeId === undefined) return refuse
  const mayReport = job.assignedNodeId === reporter.nodeId || !isNodeLive(job.assignedNodeId)
  if (!mayReport) return refuse
  switch (job.state) {
    case "pending":
      return refuse
    case "running":
      return Effect.succeed("record")
    case "finished":
      return isFinal ? Effect.succeed("unchanged") : refuse
  }
}
