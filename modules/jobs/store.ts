/**
 * The JobStore port: durable jobs, every read and write scoped by tenant. The default
 * implementation is embedded SQLite (sqlite-store.ts); a networked database for several
 * controller replicas implements the same interface.
 *
 * Every method that touches a job takes the tenant and matches `tenant_id = tenant AND tenant <> ''`,
 * so no caller reaches another tenant's row and nobody reaches a legacy row of the empty tenant.
 * The only cross-tenant methods are the maintenance reads `runningAssignments` and `countByState`,
 * which return ids and counts for the re-queue sweep and metrics, never job contents.
 */
import { Context, type Effect, type Either, type Option, type Scope, type Stream } from "effect"
import type { PermissionDenied } from "../policy/errors.ts"
import type { Reporter } from "../policy/node-reports.ts"
import type { InvalidJobRequest, JobStoreError } from "./errors.ts"
import type { Job, JobSegment, JobState, PlanAlignment, RenditionProgress } from "./model.ts"

/** A tenant-scoped lookup: the job, or why there is none (another tenant's id is never shown). */
export type JobLookup =
  | { readonly _tag: "Found"; readonly job: Job }
  | { readonly _tag: "OtherTenant" }
  | { readonly _tag: "Missing" }

export interface NewJob {
  readonly id: string
  readonly tenantId: string
  readonly request: Job["request"]
  readonly submittedBy: string | undefined
  /**
   * Unique per tenant when set: inserting a second job with the key stores nothing and returns
   * the job the first insert created.
   */
  readonly idempotencyKey?: string | undefined
}

/** The lease a report is applied under: the job's node and its fencing counter in the report's transaction. */
export interface Lease {
  readonly nodeId: string
  readonly fence: number
}

/** An applied report: the job as committed, and whether this report wrote it (false: already final). */
export interface ReportOutcome {
  readonly job: Job
  readonly written: boolean
}

/** Whether the store (its database) answers: readiness fails while it does not. */
export interface StoreHealth {
  readonly ready: boolean
  readonly reason?: string | undefined
}

/** A report applied to a running job: the reporting node takes the job over. */
export interface RunningUpdate {
  readonly nodeId: string
  readonly result: Job["result"]
  readonly framesDone: number
  /** A ladder job's whole per-rendition progress after this report (written as it is; empty: none). */
  readonly renditionProgress: ReadonlyArray<RenditionProgress>
  /** Present on a final report: the job leaves `running`. */
  readonly outcome: { readonly state: "finished" | "failed"; readonly error: string | undefined } | undefined
}

/** What a report is decided on besides the job itself. */
export interface ReportContext {
  readonly reporter: Reporter
  /**
   * The tenant's node sessions live when the report arrived. A session that stopped being live
   * never becomes live again, so "not live" here still holds at commit; a holder that expired
   * since only refuses a take-over that the node's next report gets.
   */
  readonly liveNodeIds: ReadonlySet<string>
  /** The write for an accepted report, built on the job as the transaction holds it. */
  readonly update: (job: Job) => Either.Either<RunningUpdate, InvalidJobRequest>
}

/**
 * What the pulling node has room for (PullWorkRequest.free_memory_bytes, memory_budget_bytes).
 * A pending job whose recorded memory need (`MemoryNeed`) exceeds `freeBytes` is skipped, unless
 * it exceeds `budgetBytes` too: the node can never fit it and fails it with the reason. 0: unknown
 * (`freeBytes` 0: nothing is skipped, as for a node that does not say).
 */
export interface PullerMemory {
  readonly freeBytes: number
  readonly budgetBytes: number
}

/** Any job fits: the claim of a node that does not say its memory. */
export const ANY_MEMORY: PullerMemory = { freeBytes: 0, budgetBytes: 0 }

/** A handed-back job's (or segment's) memory need as its node estimated it from the probe (decoders and scorer). */
export interface MemoryNeed {
  readonly jobId: string
  readonly bytes: number
  /** The segment's index when the need is one segment's (recorded on the segment). */
  readonly segment?: number | undefined
}

/** A segment a node says it holds (HeartbeatRequest.running_segments). */
export interface SegmentKey {
  readonly jobId: string
  readonly index: number
}

/** A job handed out to a segment-capable node: the job (its plan, or whole) or one of its segments. */
export interface Claimed {
  readonly job: Job
  readonly segment?: JobSegment | undefined
}

/** A segment of a plan: frames [firstFrame, firstFrame + frameCount) of the title. */
export interface SegmentCut {
  readonly firstFrame: number
  readonly frameCount: number
}

/** What a plan report is decided and written on besides the job (the 5.6 rule, as a report). */
export interface PlanContext {
  readonly reporter: Reporter
  readonly liveNodeIds: ReadonlySet<string>
  /** The segments of the job as it is held (refused: not a segment job, or already planned). */
  readonly cuts: (job: Job) => Either.Either<ReadonlyArray<SegmentCut>, InvalidJobRequest>
  /** A sync job's plan: the alignment its segments are scored with (a ladder's: per rendition; kept with the job). */
  readonly alignment?: PlanAlignment | undefined
}

/** What a segment's report is decided and written on (the 5.6 rule with the segment's lease). */
export interface SegmentReportContext extends ReportContext {
  /** The job's result from its segments' results (in segment order), once every one finished. */
  readonly merge: (job: Job, results: ReadonlyArray<NonNullable<Job["result"]>>) => Either.Either<Job["result"], string>
}

/**
 * Segment jobs (issue 30): a store that has them hands segments to segment-capable nodes. The
 * job is `running` with no node of its own once planned; each segment carries its own lease.
 */
export interface SegmentStoreShape {
  /**
   * Up to `max` units for a segment-capable node, fairly within the tenant: each pick is the
   * pending job or the next pending segment of the job with the fewest units running now (ties:
   * the oldest job), so a title's many segments do not hold back the tenant's short jobs.
   */
  readonly claim: (
    tenantId: string,
    nodeId: string,
    max: number,
    memory: PullerMemory
  ) => Effect.Effect<ReadonlyArray<Claimed>, JobStoreError>
  /**
   * A plan report on a job handed out to be planned: decided as a report (5.6) on the job, then
   * the segments are written pending and the job keeps running without a node.
   */
  readonly plan: (
    tenantId: string,
    jobId: string,
    context: PlanContext
  ) => Effect.Effect<ReportOutcome, PermissionDenied | InvalidJobRequest | JobStoreError>
  /**
   * A segment's report: 5.6 decided on the segment's lease (its node; refusals name the job).
   * A final error fails the job and cancels its other segments; the last segment to finish
   * merges the job's result (`context.merge`) and finishes it.
   */
  readonly report: (
    tenantId: string,
    jobId: string,
    index: number,
    context: SegmentReportContext
  ) => Effect.Effect<ReportOutcome, PermissionDenied | InvalidJobRequest | JobStoreError>
}

/** A claim that checked the node's session in the same statement. */
export type SessionClaim =
  /** The units handed out, and whether the node scores segments (its session says so). */
  | { readonly _tag: "Claimed"; readonly units: ReadonlyArray<Claimed>; readonly scoresSegments: boolean }
  /** The session belongs to another tenant. */
  | { readonly _tag: "OtherTenant" }
  /** Unknown or expired session of the caller's tenant. */
  | { readonly _tag: "NotLive" }

/** One report of a node's batch: the job, and the write an accepted report makes on it as stored. */
export interface NodeReport {
  readonly jobId: string
  readonly update: (job: Job) => Either.Either<RunningUpdate, InvalidJobRequest>
}

/** Each report's outcome, in the order given: applied (or already final), or refused. */
export type ReportResults = ReadonlyArray<Either.Either<ReportOutcome, PermissionDenied | InvalidJobRequest>>

/**
 * A store that keeps the node sessions in the same database (PostgreSQL) checks them inside the
 * call that claims or reports, instead of the service reading sessions first (round trips).
 */
export interface SessionBoundStore {
  /** PullWork's claim: the session must be the tenant's and live. */
  readonly claim: (
    tenantId: string,
    nodeId: string,
    max: number,
    memory: PullerMemory
  ) => Effect.Effect<SessionClaim, JobStoreError>
  /** ReportResult(s) of one node (seed 000 §5.6), the sessions read with the jobs. */
  readonly report: (
    tenantId: string,
    nodeId: string,
    reports: ReadonlyArray<NodeReport>
  ) => Effect.Effect<ReportResults, JobStoreError>
  /** A plan report of the node (`SegmentStoreShape.plan`), the sessions read with the job. */
  readonly plan: (
    tenantId: string,
    nodeId: string,
    jobId: string,
    cuts: PlanContext["cuts"],
    alignment?: PlanAlignment | undefined
  ) => Effect.Effect<ReportOutcome, PermissionDenied | InvalidJobRequest | JobStoreError>
  /** A segment's report of the node (`SegmentStoreShape.report`), the sessions read with the job. */
  readonly segmentReport: (
    tenantId: string,
    nodeId: string,
    jobId: string,
    index: number,
    context: Pick<SegmentReportContext, "update" | "merge">
  ) => Effect.Effect<ReportOutcome, PermissionDenied | InvalidJobRequest | JobStoreError>
}

export interface JobStoreShape {
  /** Segment jobs; absent: this store hands every job out whole. */
  readonly segments?: SegmentStoreShape | undefined
  /**
   * Stores a pending job; it is durable when the effect succeeds. With an idempotency key already
   * used by the tenant, stores nothing and returns that key's job.
   */
  readonly insert: (job: NewJob) => Effect.Effect<Job, JobStoreError>
  readonly lookup: (tenantId: string, jobId: string) => Effect.Effect<JobLookup, JobStoreError>
  /** The tenant's jobs, newest first. */
  readonly list: (
    tenantId: string,
    states: ReadonlyArray<JobState>,
    limit: number
  ) => Effect.Effect<ReadonlyArray<Job>, JobStoreError>
  /** Pending or running → cancelled; a final job is returned unchanged. */
  readonly cancel: (tenantId: string, jobId: string) => Effect.Effect<JobLookup, JobStoreError>
  /**
   * Oldest pending jobs of the tenant (FIFO) that fit `memory` → running, assigned to the node,
   * fence + 1.
   */
  readonly claim: (
    tenantId: string,
    nodeId: string,
    max: number,
    memory: PullerMemory
  ) => Effect.Effect<ReadonlyArray<Job>, JobStoreError>
  /**
   * ReportResult (seed 000 §5.6): reads the job inside the write transaction, decides with
   * `planReport` of report.ts (policy's `decideReport`) on that row and applies the decision in the same
   * transaction, so the rule sees the state the write commits on. A take-over by another node
   * sets the node and fence + 1. Refusals are `PermissionDenied`; a report the rule accepts but
   * cannot apply (`context.update`) is `InvalidJobRequest`; both change nothing.
   */
  readonly report: (
    tenantId: string,
    jobId: string,
    context: ReportContext
  ) => Effect.Effect<ReportOutcome, PermissionDenied | InvalidJobRequest | JobStoreError>
  /** Running jobs of the tenant assigned to the node → pending, unassigned, progress cleared, fence + 1. */
  readonly requeueNode: (tenantId: string, nodeId: string) => Effect.Effect<ReadonlyArray<Job>, JobStoreError>
  /**
   * Running jobs of the tenant assigned to the node, claimed before `claimedBefore`, whose ids are
   * not in `listed` (the jobs the node says it has) → pending, as `requeueNode`: claims whose
   * PullWork answer never reached the node. A job in `needs` (handed back for want of memory)
   * gets its memory need recorded, so later claims skip it for nodes without that much free.
   * Running segments of the node likewise, kept when named in `listedSegments` (a node that names
   * any segment names every one it holds) or, when none is named, when their job is in `listed`
   * (an older node); a segment with a need in `needs` is handed back: pending with its need
   * recorded, and the hand-back not counted as an attempt. Re-queued needs wake every waiting
   * PullWork of the tenant.
   */
  readonly requeueUnlisted: (
    tenantId: string,
    nodeId: string,
    listed: ReadonlyArray<string>,
    claimedBefore: number,
    needs: ReadonlyArray<MemoryNeed>,
    listedSegments?: ReadonlyArray<SegmentKey>
  ) => Effect.Effect<ReadonlyArray<Job>, JobStoreError>
  /** Maintenance: the (tenant, node) pairs that have running jobs (for the re-queue sweep). */
  readonly runningAssignments: Effect.Effect<
    ReadonlyArray<{ readonly tenantId: string; readonly nodeId: string }>,
    JobStoreError
  >
  /** Maintenance: jobs by state over every tenant (legacy rows excluded), for metrics. */
  readonly countByState: Effect.Effect<Readonly<Record<JobState, number>>, JobStoreError>
  /**
   * Runs `task` only while holding the store-wide maintenance lock (the re-queue sweep: one
   * replica at a time); None when another process holds it. The task must be safe to run twice.
   */
  readonly exclusive: <A, E>(task: Effect.Effect<A, E>) => Effect.Effect<Option.Option<A>, E | JobStoreError>
  /** Whether the database answers now (readiness probes). */
  readonly health: Effect.Effect<StoreHealth>
  /**
   * The tenant's job changes from now on. Subscribes when run (so a listing made afterwards
   * misses nothing); the subscription ends with the scope. It fails (UNAVAILABLE) when changes
   * may have been missed, so the follower lists again.
   */
  readonly changes: (tenantId: string) => Effect.Effect<Stream.Stream<Job, JobStoreError>, never, Scope.Scope>
  /**
   * A long-polling PullWork's wake-up: subscribes when run; the effect it returns completes once
   * a job of the tenant may have become pending since (a submit or re-queue on any replica). It
   * may also complete without one (then the claim finds nothing and waits again).
   */
  readonly awaitWork: (tenantId: string) => Effect.Effect<Effect.Effect<void>, never, Scope.Scope>
  /** Present when node sessions live in the store's database (see `SessionBoundStore`). */
  readonly sessionBound?: SessionBoundStore | undefined
}

export class JobStore extends Context.Tag("svc/jobs/JobStore")<JobStore, JobStoreShape>() {}
