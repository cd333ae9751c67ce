/**
 * Segment jobs on the PostgreSQL store (issue 30; `job_segments`, migration 7, row-level security
 * like `jobs`): the SQLite store's rules (sqlite-segments.ts) as calls of migration 9's functions,
 * so no BEGIN is sent for them either (issue 35):
 *
 * - A claim is one call (`svc_claim_units`): the node's session is checked, and a node whose
 *   session says it scores segments gets the tenant's units fairly (pending jobs and pending
 *   segments, the job with the fewest units running first), each with its job and segments.
 * - A plan or a segment's report reads what it is decided on in one call (`svc_segment_read`:
 *   the reporter's session, the job with its revision, its segments, the segment's stored result
 *   and its node's session), decides with the same rule as a job's report (report.ts), and writes
 *   in one call as a compare-and-set on the lease and revision it decided on; a row that changed
 *   in between is read and decided again. The last segment's final report merges first (the
 *   other segments' results, one call) and writes its segment and the job's result in one call,
 *   so the job never rests with every segment finished and no result.
 * - Every function that writes a job's segments locks the job row first, inside its one
 *   statement: writes of one job run one after another, claims skip a job being written.
 *
 * `withPostgresSegments` wraps the job store: reads carry each job's segments, cancel, re-queue
 * and the sweep cover them, and it adds the session-bound claim, plan and segment report to the
 * store's session-bound job reports (`boundReport`).
 */
import { Clock, Effect, Either, Stream } from "effect"
import { PermissionDenied } from "../../policy/errors.ts"
import { InvalidJobRequest, JobStoreFailure, type JobStoreError } from "../errors.ts"
import {
  decodeStoredResult,
  encodePlanAlignment,
  encodeResult,
  type Job,
  type JobSegment,
  MAX_SEGMENT_ATTEMPTS
} from "../model.ts"
import { planReport, planSegmentReport } from "../report.ts"
import { type JobRow, segmentKeysJson, segmentNeedsJson, toJob } from "../rows.ts"
import { toSegment } from "../segment-rows.ts"
import type {
  Claimed,
  JobLookup,
  JobStoreShape,
  MemoryNeed,
  PlanContext,
  ReportContext,
  ReportOutcome,
  SegmentKey,
  SegmentReportContext,
  SegmentStoreShape,
  SessionBoundStore
} from "../store.ts"
import { query, type Row, type Sql } from "./client.ts"

/** Reads and compare-and-set writes of one plan or segment report before it gives up (the row kept changing). */
const MAX_ROUNDS = 50

const hasNul = (...texts: ReadonlyArray<string>) => texts.some((text) => text.includes("\u0000"))

/** What a plan or a segment's report is decided on (svc_segment_read). */
interface SegmentRead {
  readonly reporter: ReportContext["reporter"]
  /** The job's node and the segment's node, where their sessions are live. */
  readonly liveNodeIds: ReadonlySet<string>
  readonly job: Job | undefined
  readonly revision: number
  readonly segmentResult: string | null
  readonly segmentRevision: number
}

type Refusal = PermissionDenied | InvalidJobRequest

/**
 * The job store with segment jobs. `toRow` is the store's job row reader, so a job read here
 * decodes exactly as the store's own.
 */
export const withPostgresSegments = (
  sql: Sql,
  toRow: (row: Row) => JobRow,
  store: JobStoreShape,
  boundReport: SessionBoundStore["report"]
): JobStoreShape => {
  /** A job row of a function (JSON) with its segments (JSON, without results). */
  const decodeJob = (operation: string, raw: unknown, segments: unknown): Effect.Effect<Job, JobStoreFailure> =>
    Either.match(toJob(toRow(raw as Row)), {
      onLeft: (detail) => Effect.fail(new JobStoreFailure({ operation, detail })),
      onRight: (job) =>
        Effect.succeed({
          ...job,
          segments: Array.isArray(segments) ? segments.map((segment) => toSegment(segment as Row)) : []
        })
    })

  /** The segments of a tenant's jobs, by job: one function call (migration 8). */
  const segmentsOf = async (tenantId: string, ids: ReadonlyArray<string>) => {
    const byJob = new Map<string, Array<JobSegment>>()
    if (ids.length === 0) return byJob
    const rows = await sql`SELECT * FROM svc_segments_of(${tenantId}, ${JSON.stringify(ids)})`
    for (const row of rows) {
      const id = String(row["job_id"])
      byJob.set(id, [...(byJob.get(id) ?? []), toSegment(row)])
    }
    return byJob
  }

  /** The jobs with their segments (one read per tenant). */
  const attach = (jobs: ReadonlyArray<Job>): Effect.Effect<ReadonlyArray<Job>, JobStoreError> =>
    jobs.length === 0
      ? Effect.succeed(jobs)
      : Effect.gen(function* () {
          const found = new Map<string, ReadonlyArray<JobSegment>>()
          for (const tenantId of new Set(jobs.map((job) => job.tenantId))) {
            const ids = jobs.filter((job) => job.tenantId === tenantId).map((job) => job.id)
            const byJob = yield* query("segments", () => segmentsOf(tenantId, ids))
            for (const [id, list] of byJob) found.set(id, list)
          }
          return jobs.map((job) => ({ ...job, segments: found.get(job.id) ?? [] }))
        })
  const attachOne = (job: Job) => Effect.map(attach([job]), (jobs) => jobs[0] ?? job)
  const attachLookup = (lookup: JobLookup): Effect.Effect<JobLookup, JobStoreError> =>
    lookup._tag === "Found"
      ? Effect.map(attachOne(lookup.job), (job): JobLookup => ({ _tag: "Found", job }))
      : Effect.succeed(lookup)

  const readJob = (tenantId: string, jobId: string) =>
    Effect.map(store.lookup(tenantId, jobId), (lookup) => (lookup._tag === "Found" ? lookup.job : undefined)).pipe(
      Effect.flatMap((job) => (job === undefined ? Effect.succeed(undefined) : attachOne(job)))
    )

  /** One call: the job, its segments, segment `index` (-1: none) and the sessions involved. */
  const readFor = (tenantId: string, jobId: string, reporterNodeId: string, index: number) =>
    Effect.gen(function* () {
      const now = yield* Clock.currentTimeMillis
      const [row] = yield* query(
        "segments",
        () => sql`SELECT * FROM svc_segment_read(${tenantId}, ${jobId}, ${reporterNodeId}, ${index})`
      )
      const reporterTenant = row?.["reporter_tenant"]
      const raw = row?.["job"]
      const job = raw === null || raw === undefined ? undefined : yield* decodeJob("segments", raw, row?.["segments"])
      const live = (nodeId: string | undefined, expires: unknown) =>
        nodeId !== undefined && Number(expires ?? 0) > now ? [nodeId] : []
      const segment = job?.segments.find((one) => one.index === index)
      const read: SegmentRead = {
        reporter: {
          nodeId: reporterNodeId,
          sessionTenantId: typeof reporterTenant === "string" ? reporterTenant : undefined,
          live: Number(row?.["reporter_expires"] ?? 0) > now
        },
        liveNodeIds: new Set([
          ...live(job?.nodeId, row?.["owner_expires"]),
          ...live(segment?.nodeId, row?.["segment_owner_expires"])
        ]),
        job,
        revision: Number((raw as Row | null | undefined)?.["revision"] ?? 0),
        segmentResult: typeof row?.["segment_result"] === "string" ? row["segment_result"] : null,
        segmentRevision: Number(row?.["segment_revision"] ?? 0)
      }
      return read
    })

  /** The written job of a plan or segment write (its row and segments), or undefined: read again. */
  const writtenJob = (operation: string, row: Row | undefined) =>
    row === undefined || row["job"] === null || row["job"] === undefined
      ? Effect.succeed(undefined)
      : decodeJob(operation, row["job"], row["segments"])

  const tooManyRounds = (operation: string) =>
    new JobStoreFailure({ operation, detail: "the job kept changing under the report" })

  /** A plan report, decided on the read and written as a compare-and-set on it. */
  const planOn = (
    tenantId: string,
    jobId: string,
    reporterNodeId: string,
    contextOf: (read: SegmentRead) => PlanContext
  ): Effect.Effect<ReportOutcome, Refusal | JobStoreError> =>
    Effect.gen(function* () {
      for (let round = 0; round < MAX_ROUNDS; round++) {
        const read = yield* readFor(tenantId, jobId, reporterNodeId, -1)
        const context = contextOf(read)
        const plan = planReport(tenantId, jobId, read.job, {
          reporter: context.reporter,
          liveNodeIds: context.liveNodeIds,
          update: (current) =>
            current.segments.length > 0
              ? Either.left(new InvalidJobRequest({ message: `job "${jobId}" is already planned` }))
              : Either.right({
                  nodeId: context.reporter.nodeId,
                  result: undefined,
                  framesDone: 0,
                  renditionProgress: [],
                  outcome: undefined
                })
        })
        if (Either.isLeft(plan)) return yield* plan.left
        if (plan.right._tag === "Unchanged") return { job: plan.right.job, written: false }
        if (read.job === undefined) return yield* PermissionDenied.jobNotAssigned(jobId, reporterNodeId)
        const cuts = context.cuts(read.job)
        if (Either.isLeft(cuts)) return yield* cuts.left
        const { expected } = plan.right
        const cutsJson = JSON.stringify(
          cuts.right.map((cut) => ({ first_frame: cut.firstFrame, frame_count: cut.frameCount }))
        )
        const [row] = yield* query(
          "plan",
          () => sql`SELECT * FROM svc_segment_plan(${tenantId}, ${jobId}, ${expected.nodeId}, ${expected.fence},
            ${read.revision}, ${cutsJson}, ${encodePlanAlignment(context.alignment)})`
        )
        const job = yield* writtenJob("plan", row)
        if (job !== undefined) return { job, written: true }
      }
      return yield* tooManyRounds("plan")
    })

  /**
   * The job's ending when segment `index` finishes last with `result`: the merge of every
   * segment's result in order (the others read in one call). Undefined: a segment is not
   * finished any more (the job failed meanwhile: read again).
   */
  const endingOf = (
    tenantId: string,
    job: Job,
    index: number,
    result: Job["result"],
    merge: SegmentReportContext["merge"]
  ) =>
    Effect.gen(function* () {
      const rows = yield* query(
        "report",
        () => sql`SELECT * FROM svc_segment_results(${tenantId}, ${job.id}, ${index})`
      )
      if (rows.some((row) => row["state"] !== "finished")) return undefined
      const results: Array<NonNullable<Job["result"]>> = []
      const corrupt = new JobStoreFailure({ operation: "report", detail: "a finished segment has no readable result" })
      for (const row of rows) {
        const text = row["result"]
        const decoded = typeof text === "string" ? decodeStoredResult(text) : undefined
        if (decoded === undefined || Either.isLeft(decoded)) return yield* corrupt
        results.push(decoded.right)
      }
      if (result === undefined) return yield* corrupt
      results.splice(rows.filter((row) => Number(row["idx"]) < index).length, 0, result)
      const merged = merge(job, results)
      return Either.isLeft(merged) || merged.right === undefined
        ? {
            state: "failed",
            result: null,
            error: `merging the segments failed: ${Either.isLeft(merged) ? merged.left : "no frames"}`
          }
        : { state: "finished", result: encodeResult(merged.right), error: null }
    })

  /** A segment's report, decided on the read and written as a compare-and-set on it. */
  const reportOn = (
    tenantId: string,
    jobId: string,
    index: number,
    reporterNodeId: string,
    contextOf: (read: SegmentRead) => SegmentReportContext
  ): Effect.Effect<ReportOutcome, Refusal | JobStoreError> =>
    Effect.gen(function* () {
      for (let round = 0; round < MAX_ROUNDS; round++) {
        const read = yield* readFor(tenantId, jobId, reporterNodeId, index)
        const context = contextOf(read)
        const stored = read.segmentResult === null ? Either.right(undefined) : decodeStoredResult(read.segmentResult)
        if (Either.isLeft(stored))
          return yield* new JobStoreFailure({ operation: "report", detail: `segment ${index}: ${stored.left.message}` })
        const segment = read.job?.segments.find((one) => one.index === index)
        const plan = planSegmentReport(tenantId, jobId, read.job, segment, stored.right, context)
        if (Either.isLeft(plan)) return yield* plan.left
        if (plan.right._tag === "Unchanged") return { job: plan.right.job, written: false }
        const { expected, update } = plan.right
        const now = yield* Clock.currentTimeMillis
        const write = JSON.stringify({
          expected_node: expected.nodeId,
          expected_fence: expected.fence,
          expected_revision: read.segmentRevision,
          node_id: update.nodeId,
          result: update.result === undefined ? null : encodeResult(update.result),
          frames_done: update.framesDone,
          state: update.outcome?.state ?? null,
          error: update.outcome?.error ?? null
        })
        let [row] = yield* query(
          "report",
          () => sql`SELECT * FROM svc_segment_write(${tenantId}, ${jobId}, ${index}, ${write}, NULL, ${now})`
        )
        if (row?.["status"] === "merge" && read.job !== undefined) {
          const ending = yield* endingOf(tenantId, read.job, index, update.result ?? stored.right, context.merge)
          if (ending === undefined) continue
          const end = JSON.stringify(ending)
          ;[row] = yield* query(
            "report",
            () => sql`SELECT * FROM svc_segment_write(${tenantId}, ${jobId}, ${index}, ${write}, ${end}, ${now})`
          )
        }
        const job = yield* writtenJob("report", row)
        if (job !== undefined) return { job, written: true }
      }
      return yield* tooManyRounds("report")
    })

  /** Units of a claim's rows (after the session row): each job with its segments, and the segment claimed. */
  const unitsOf = (rows: ReadonlyArray<Row>) =>
    Effect.forEach(rows, (row) =>
      Effect.map(
        decodeJob("claim", row["job"], row["segments"]),
        (job): Claimed => ({
          job,
          segment:
            row["segment"] === null || row["segment"] === undefined ? undefined : toSegment(row["segment"] as Row)
        })
      )
    )

  const segments: SegmentStoreShape = {
    // For a node the caller checked and knows to score segments (the session-bound claim checks both).
    claim: (tenantId, nodeId, max, memory) =>
      hasNul(tenantId, nodeId)
        ? Effect.succeed([])
        : Effect.gen(function* () {
            const now = yield* Clock.currentTimeMillis
            const [, ...rows] = yield* query(
              "claim",
              () => sql`SELECT * FROM svc_claim_units(${tenantId}, ${nodeId}, ${now}, ${max}, false,
                ${memory.freeBytes}, ${memory.budgetBytes})`
            )
            return yield* unitsOf(rows)
          }),
    plan: (tenantId, jobId, context) =>
      hasNul(tenantId, jobId, context.reporter.nodeId)
        ? Effect.fail(PermissionDenied.jobNotAssigned(jobId, context.reporter.nodeId))
        : planOn(tenantId, jobId, context.reporter.nodeId, () => context),
    report: (tenantId, jobId, index, context) =>
      hasNul(tenantId, jobId, context.reporter.nodeId)
        ? Effect.fail(PermissionDenied.jobNotAssigned(jobId, context.reporter.nodeId))
        : reportOn(tenantId, jobId, index, context.reporter.nodeId, () => context)
  }

  const sessionBound: SessionBoundStore = {
    report: boundReport,
    claim: (tenantId, nodeId, max, memory) =>
      hasNul(tenantId, nodeId)
        ? Effect.succeed({ _tag: "NotLive" })
        : Effect.gen(function* () {
            const now = yield* Clock.currentTimeMillis
            const [session, ...rows] = yield* query(
              "claim",
              () => sql`SELECT * FROM svc_claim_units(${tenantId}, ${nodeId}, ${now}, ${max}, true,
                ${memory.freeBytes}, ${memory.budgetBytes})`
            )
            const sessionTenant = session?.["session_tenant"]
            if (typeof sessionTenant === "string" && sessionTenant !== tenantId) return { _tag: "OtherTenant" } as const
            if (typeof sessionTenant !== "string" || Number(session?.["session_expires"]) <= now)
              return { _tag: "NotLive" } as const
            return {
              _tag: "Claimed",
              units: yield* unitsOf(rows),
              scoresSegments: session?.["scores_segments"] === true
            } as const
          }),
    plan: (tenantId, nodeId, jobId, cuts, alignment) =>
      hasNul(tenantId, nodeId, jobId)
        ? Effect.fail(PermissionDenied.jobNotAssigned(jobId, nodeId))
        : planOn(tenantId, jobId, nodeId, (read) => ({
            reporter: read.reporter,
            liveNodeIds: read.liveNodeIds,
            cuts,
            alignment
          })),
    segmentReport: (tenantId, nodeId, jobId, index, context) =>
      hasNul(tenantId, nodeId, jobId)
        ? Effect.fail(PermissionDenied.jobNotAssigned(jobId, nodeId))
        : reportOn(tenantId, jobId, index, nodeId, (read) => ({
            ...context,
            reporter: read.reporter,
            liveNodeIds: read.liveNodeIds
          }))
  }

  /**
   * A lost node's running segments: back to pending, or the job failed after MAX_SEGMENT_ATTEMPTS;
   * those with a need handed back for want of memory, not counted as an attempt (one call).
   */
  const requeueSegments = (
    tenantId: string,
    nodeId: string,
    claimedBefore?: number,
    listed?: ReadonlyArray<string>,
    listedSegments: ReadonlyArray<SegmentKey> = [],
    needs: ReadonlyArray<MemoryNeed> = []
  ) =>
    Effect.gen(function* () {
      const now = yield* Clock.currentTimeMillis
      const changed = yield* query(
        "requeue",
        () => sql`SELECT svc_segments_requeue(${tenantId}, ${nodeId}, ${claimedBefore ?? null},
          ${listed === undefined ? null : JSON.stringify(listed)}, ${segmentKeysJson(listedSegments)},
          ${segmentNeedsJson(needs)}, ${now}, ${MAX_SEGMENT_ATTEMPTS}) AS job_id`
      )
      const jobs: Array<Job> = []
      for (const id of new Set(changed.map((row) => String(row["job_id"])))) {
        const job = yield* readJob(tenantId, id)
        if (job !== undefined) jobs.push(job)
      }
      return jobs
    })

  return {
    ...store,
    segments,
    sessionBound,
    lookup: (tenantId, jobId) => Effect.flatMap(store.lookup(tenantId, jobId), attachLookup),
    list: (tenantId, states, limit) => Effect.flatMap(store.list(tenantId, states, limit), attach),
    claim: (tenantId, nodeId, max, memory) => Effect.flatMap(store.claim(tenantId, nodeId, max, memory), attach),
    cancel: (tenantId, jobId) =>
      Effect.gen(function* () {
        const lookup = yield* store.cancel(tenantId, jobId)
        if (lookup._tag === "Found" && lookup.job.state === "cancelled")
          yield* query("cancel", () => sql`SELECT svc_segments_cancel(${tenantId}, ${jobId})`)
        return yield* attachLookup(lookup)
      }),
    report: (tenantId, jobId, context) =>
      Effect.flatMap(store.report(tenantId, jobId, context), (reported) =>
        Effect.map(attachOne(reported.job), (job) => ({ ...reported, job }))
      ),
    requeueNode: (tenantId, nodeId) =>
      hasNul(tenantId, nodeId)
        ? store.requeueNode(tenantId, nodeId)
        : Effect.gen(function* () {
            const jobs = yield* Effect.flatMap(store.requeueNode(tenantId, nodeId), attach)
            return [...jobs, ...(yield* requeueSegments(tenantId, nodeId))]
          }),
    requeueUnlisted: (tenantId, nodeId, listed, claimedBefore, needs, listedSegments = []) =>
      hasNul(tenantId, nodeId, ...listed, ...listedSegments.map((segment) => segment.jobId))
        ? store.requeueUnlisted(tenantId, nodeId, listed, claimedBefore, needs)
        : Effect.gen(function* () {
            const jobs = yield* Effect.flatMap(
              store.requeueUnlisted(tenantId, nodeId, listed, claimedBefore, needs),
              attach
            )
            return [
              ...jobs,
              ...(yield* requeueSegments(tenantId, nodeId, claimedBefore, listed, listedSegments, needs))
            ]
          }),
    runningAssignments: Effect.gen(function* () {
      const jobs = yield* store.runningAssignments
      const rows = yield* query("assignments", () => sql`SELECT * FROM svc_segment_assignments()`)
      const all = [
        ...jobs,
        ...rows.map((row) => ({ tenantId: String(row["tenant_id"]), nodeId: String(row["node_id"]) }))
      ]
      return [...new Map(all.map((entry) => [`${entry.tenantId}\n${entry.nodeId}`, entry])).values()]
    }),
    changes: (tenantId) =>
      Effect.map(store.changes(tenantId), (stream) => Stream.mapEffect(stream, (job) => attachOne(job)))
  }
}
