/**
 * Segment jobs on the PostgreSQL store (issue 30; `job_segments`, migration 7, row-level security
 * like `jobs`): the SQLite store's rules (sqlite-segments.ts) in PostgreSQL transactions. A plan
 * and a segment's report lock their job row (`SELECT … FOR UPDATE`), so replicas decide and write
 * on the same state; claims lock candidate rows with SKIP LOCKED. `withPostgresSegments` wraps
 * the job store: reads carry each job's segments, cancel, re-queue and the sweep cover them.
 */
import { Clock, Effect, Either, Stream } from "effect"
import type postgres from "postgres"
import { InvalidJobRequest, type JobStoreError } from "../errors.ts"
import { decodeStoredResult, encodeResult, type Job, type JobSegment, MAX_SEGMENT_ATTEMPTS } from "../model.ts"
import { planReport, planSegmentReport } from "../report.ts"
import { type JobRow, toJob } from "../rows.ts"
import { SEGMENT_COLUMNS, type SegmentStep, segmentOutcome, toSegment } from "../segment-rows.ts"
import type { Claimed, JobLookup, JobStoreShape, SegmentStoreShape } from "../store.ts"
import { query, type Row, type Sql, transaction } from "./client.ts"

const OWN = "tenant_id = $1 AND $1 <> ''"

/**
 * The job store with segment jobs. `columns` and `toRow` are the store's job columns and row
 * reader, so a job read here decodes exactly as the store's own.
 */
export const withPostgresSegments = (
  sql: Sql,
  columns: string,
  toRow: (row: Row) => JobRow,
  store: JobStoreShape
): JobStoreShape => {
  const inTenant = <A>(tenantId: string, body: (tx: postgres.TransactionSql) => Promise<A>) =>
    transaction(sql, async (tx) => {
      await tx`SELECT set_config('svc.tenant', ${tenantId}, true), set_config('svc.maintenance', 'off', true)`
      return body(tx)
    })

  const segmentsIn = async (tx: postgres.TransactionSql, tenantId: string, ids: ReadonlyArray<string>) => {
    const byJob = new Map<string, Array<JobSegment>>()
    if (ids.length === 0) return byJob
    const rows = await tx.unsafe(
      `SELECT ${SEGMENT_COLUMNS} FROM job_segments WHERE ${OWN}
       AND job_id IN (SELECT jsonb_array_elements_text($2::text::jsonb)) ORDER BY job_id, idx`,
      [tenantId, JSON.stringify(ids)]
    )
    for (const row of rows) {
      const id = String(row["job_id"])
      byJob.set(id, [...(byJob.get(id) ?? []), toSegment(row)])
    }
    return byJob
  }

  /** The segments of a tenant's jobs, by job: one function call (migration 8), no transaction. */
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

  const outcome = segmentOutcome(readJob, () => Effect.void)

  /** The job row locked for the transaction, with its segments. */
  const lockedJob = async (tx: postgres.TransactionSql, tenantId: string, jobId: string) => {
    const [row] = await tx.unsafe(`SELECT ${columns} FROM jobs WHERE ${OWN} AND id = $2 FOR UPDATE`, [tenantId, jobId])
    if (row === undefined) return Either.right(undefined)
    const job = toJob(toRow(row))
    if (Either.isLeft(job)) return job
    const segments = (await segmentsIn(tx, tenantId, [jobId])).get(jobId) ?? []
    return Either.right({ ...job.right, segments })
  }

  const totals = async (tx: postgres.TransactionSql, tenantId: string, jobId: string) => {
    const [row] = await tx.unsafe(
      `SELECT coalesce(sum(frames_done), 0) AS done, count(*) FILTER (WHERE state = 'finished') AS finished,
         count(*) AS n FROM job_segments WHERE ${OWN} AND job_id = $2`,
      [tenantId, jobId]
    )
    return { done: Number(row?.["done"] ?? 0), finished: Number(row?.["finished"] ?? 0), n: Number(row?.["n"] ?? 0) }
  }

  const end = async (
    tx: postgres.TransactionSql,
    tenantId: string,
    jobId: string,
    state: "failed" | "finished",
    result: string | null,
    error: string | null,
    done: number,
    now: number
  ) => {
    if (state === "failed")
      await tx.unsafe(
        `UPDATE job_segments SET state = 'cancelled' WHERE ${OWN} AND job_id = $2 AND state IN ('pending', 'running')`,
        [tenantId, jobId]
      )
    await tx.unsafe(
      `UPDATE jobs SET state = $3, result = coalesce($4, result), error = $5, frames_done = $6, finished_at = $7
       WHERE ${OWN} AND id = $2 AND state = 'running'`,
      [tenantId, jobId, state, result, error, done, now]
    )
  }

  const segments: SegmentStoreShape = {
    claim: (tenantId, nodeId, max) =>
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        const picked = yield* query("claim", () =>
          inTenant(tenantId, async (tx) => {
            const pool = (
              await tx.unsafe(
                `SELECT seq, id, state, 0 AS busy FROM jobs WHERE ${OWN} AND state = 'pending'
                 UNION ALL
                 SELECT j.seq, j.id, j.state,
                   (SELECT count(*) FROM job_segments r WHERE r.tenant_id = $1 AND r.job_id = j.id AND r.state = 'running')
                 FROM jobs j WHERE j.tenant_id = $1 AND $1 <> '' AND j.state = 'running'
                   AND EXISTS (SELECT 1 FROM job_segments p WHERE p.tenant_id = $1 AND p.job_id = j.id AND p.state = 'pending')
                 ORDER BY seq LIMIT $2`,
                [tenantId, Math.max(64, max * 4)]
              )
            ).map((row) => ({
              seq: Number(row["seq"]),
              id: String(row["id"]),
              state: String(row["state"]),
              busy: Number(row["busy"])
            }))
            const claims: Array<{ jobId: string; segment?: JobSegment }> = []
            while (claims.length < max && pool.length > 0) {
              pool.sort((a, b) => a.busy - b.busy || a.seq - b.seq)
              const next = pool[0]
              if (next === undefined) break
              if (next.state === "pending") {
                pool.shift()
                const claimed = await tx.unsafe(
                  `UPDATE jobs SET state = 'running', node_id = $3, started_at = $4, fence = fence + 1
                   WHERE ${OWN} AND id = $2 AND state = 'pending' RETURNING id`,
                  [tenantId, next.id, nodeId, now]
                )
                if (claimed.length > 0) claims.push({ jobId: next.id })
                continue
              }
              const [segment] = await tx.unsafe(
                `UPDATE job_segments SET state = 'running', node_id = $3, claimed_at = $4, fence = fence + 1,
                   attempts = attempts + 1, frames_done = 0, result = NULL
                 WHERE ${OWN} AND job_id = $2 AND idx = (
                   SELECT idx FROM job_segments WHERE ${OWN} AND job_id = $2 AND state = 'pending'
                   ORDER BY idx LIMIT 1 FOR UPDATE SKIP LOCKED)
                 RETURNING ${SEGMENT_COLUMNS}`,
                [tenantId, next.id, nodeId, now]
              )
              if (segment === undefined) {
                pool.shift()
                continue
              }
              await tx.unsafe(`UPDATE jobs SET started_at = coalesce(started_at, $3) WHERE ${OWN} AND id = $2`, [
                tenantId,
                next.id,
                now
              ])
              next.busy++
              claims.push({ jobId: next.id, segment: toSegment(segment) })
            }
            return claims
          })
        )
        const claimed: Array<Claimed> = []
        for (const { jobId, segment } of picked) {
          const job = yield* readJob(tenantId, jobId)
          if (job !== undefined) claimed.push({ job, segment })
        }
        return claimed
      }),

    plan: (tenantId, jobId, context) =>
      Effect.flatMap(
        query("plan", () =>
          inTenant(tenantId, async (tx): Promise<SegmentStep> => {
            const job = await lockedJob(tx, tenantId, jobId)
            if (Either.isLeft(job)) return { _tag: "Corrupt", detail: job.left }
            const held = job.right
            const plan = planReport(tenantId, jobId, held, {
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
            if (Either.isLeft(plan)) return { _tag: "Refused", error: plan.left }
            if (plan.right._tag === "Unchanged" || held === undefined) return { _tag: "Unchanged", jobId }
            const cuts = context.cuts(held)
            if (Either.isLeft(cuts)) return { _tag: "Refused", error: cuts.left }
            const { expected } = plan.right
            const released = await tx.unsafe(
              `UPDATE jobs SET node_id = NULL, fence = fence + 1, frames_done = 0, result = NULL
               WHERE ${OWN} AND id = $2 AND state = 'running' AND node_id = $3 AND fence = $4 RETURNING id`,
              [tenantId, jobId, expected.nodeId, expected.fence]
            )
            if (released.length === 0) return { _tag: "Corrupt", detail: "the job changed under its row lock" }
            for (const [index, cut] of cuts.right.entries())
              await tx.unsafe(
                `INSERT INTO job_segments (tenant_id, job_id, idx, first_frame, frame_count, state)
                 VALUES ($1, $2, $3, $4, $5, 'pending')`,
                [tenantId, jobId, index, cut.firstFrame, cut.frameCount]
              )
            return { _tag: "Written", jobId }
          })
        ),
        (step) => outcome(tenantId, "plan", step)
      ),

    report: (tenantId, jobId, index, context) =>
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        const step = yield* query("report", () =>
          inTenant(tenantId, async (tx): Promise<SegmentStep> => {
            const job = await lockedJob(tx, tenantId, jobId)
            if (Either.isLeft(job)) return { _tag: "Corrupt", detail: job.left }
            const [row] = await tx.unsafe(
              `SELECT ${SEGMENT_COLUMNS} FROM job_segments WHERE ${OWN} AND job_id = $2 AND idx = $3 FOR UPDATE`,
              [tenantId, jobId, index]
            )
            const text = row?.["result"]
            const stored =
              text === null || text === undefined ? Either.right(undefined) : decodeStoredResult(String(text))
            if (Either.isLeft(stored)) return { _tag: "Corrupt", detail: `segment ${index}: ${stored.left.message}` }
            const plan = planSegmentReport(
              tenantId,
              jobId,
              job.right,
              row === undefined ? undefined : toSegment(row),
              stored.right,
              context
            )
            if (Either.isLeft(plan)) return { _tag: "Refused", error: plan.left }
            if (plan.right._tag === "Unchanged") return { _tag: "Unchanged", jobId }
            const { expected, update } = plan.right
            const written = await tx.unsafe(
              `UPDATE job_segments SET node_id = $5, result = coalesce($6, result), frames_done = $7,
                 state = coalesce($8, state), error = $9,
                 fence = CASE WHEN $5 = $4 THEN fence ELSE fence + 1 END
               WHERE ${OWN} AND job_id = $2 AND idx = $3 AND state = 'running' AND node_id = $4 AND fence = $10
               RETURNING idx`,
              [
                tenantId,
                jobId,
                index,
                expected.nodeId,
                update.nodeId,
                update.result === undefined ? null : encodeResult(update.result),
                update.framesDone,
                update.outcome?.state ?? null,
                update.outcome?.error ?? null,
                expected.fence
              ]
            )
            if (written.length === 0) return { _tag: "Corrupt", detail: "the segment changed under its row lock" }
            const sums = await totals(tx, tenantId, jobId)
            if (update.outcome?.state === "failed") {
              const why = `segment ${index}: ${update.outcome.error ?? "failed"}`
              await end(tx, tenantId, jobId, "failed", null, why, sums.done, now)
              return { _tag: "Written", jobId }
            }
            if (sums.finished < sums.n) {
              await tx.unsafe(`UPDATE jobs SET frames_done = $3 WHERE ${OWN} AND id = $2 AND state = 'running'`, [
                tenantId,
                jobId,
                sums.done
              ])
              return { _tag: "Written", jobId }
            }
            const results: Array<NonNullable<Job["result"]>> = []
            for (const entry of await tx.unsafe(
              `SELECT result FROM job_segments WHERE ${OWN} AND job_id = $2 ORDER BY idx`,
              [tenantId, jobId]
            )) {
              const value = entry["result"]
              const decoded = value === null || value === undefined ? undefined : decodeStoredResult(String(value))
              if (decoded === undefined || Either.isLeft(decoded))
                return { _tag: "Corrupt", detail: "a finished segment has no readable result" }
              results.push(decoded.right)
            }
            const held = job.right
            if (held === undefined) return { _tag: "Corrupt", detail: "no job" }
            const merged = context.merge(held, results)
            if (Either.isLeft(merged) || merged.right === undefined) {
              const why = `merging the segments failed: ${Either.isLeft(merged) ? merged.left : "no frames"}`
              await end(tx, tenantId, jobId, "failed", null, why, sums.done, now)
              return { _tag: "Written", jobId }
            }
            await end(tx, tenantId, jobId, "finished", encodeResult(merged.right), null, sums.done, now)
            return { _tag: "Written", jobId }
          })
        )
        return yield* outcome(tenantId, "report", step)
      })
  }

  /** A lost node's running segments: back to pending, or the job failed after MAX_SEGMENT_ATTEMPTS. */
  const requeueSegments = (tenantId: string, nodeId: string, claimedBefore?: number, listed?: ReadonlyArray<string>) =>
    Effect.gen(function* () {
      const now = yield* Clock.currentTimeMillis
      // Most nodes hold no segment: one call tells, and only a node that does takes the transaction.
      const holds = yield* query("requeue", () => sql`SELECT svc_node_has_segments(${tenantId}, ${nodeId}) AS holds`)
      if (holds[0]?.["holds"] !== true) return []
      const changed = yield* query("requeue", () =>
        inTenant(tenantId, async (tx) => {
          const ids = new Set<string>()
          const rows = await tx.unsafe(
            `SELECT ${SEGMENT_COLUMNS} FROM job_segments WHERE ${OWN} AND node_id = $2 AND state = 'running' FOR UPDATE`,
            [tenantId, nodeId]
          )
          for (const row of rows) {
            const jobId = String(row["job_id"])
            if (claimedBefore !== undefined && Number(row["claimed_at"] ?? 0) >= claimedBefore) continue
            if (listed?.includes(jobId)) continue
            ids.add(jobId)
            const attempts = Number(row["attempts"])
            if (attempts >= MAX_SEGMENT_ATTEMPTS) {
              const why = `segment ${Number(row["idx"])} was lost with its node ${attempts} times (at most ${MAX_SEGMENT_ATTEMPTS} attempts)`
              await end(tx, tenantId, jobId, "failed", null, why, (await totals(tx, tenantId, jobId)).done, now)
              continue
            }
            await tx.unsafe(
              `UPDATE job_segments SET state = 'pending', node_id = NULL, claimed_at = NULL, result = NULL,
                 frames_done = 0, fence = fence + 1
               WHERE ${OWN} AND job_id = $2 AND idx = $3 AND state = 'running'`,
              [tenantId, jobId, Number(row["idx"])]
            )
            await tx.unsafe(`UPDATE jobs SET frames_done = $3 WHERE ${OWN} AND id = $2 AND state = 'running'`, [
              tenantId,
              jobId,
              (await totals(tx, tenantId, jobId)).done
            ])
          }
          return [...ids]
        })
      )
      const jobs: Array<Job> = []
      for (const id of changed) {
        const job = yield* readJob(tenantId, id)
        if (job !== undefined) jobs.push(job)
      }
      return jobs
    })

  return {
    ...store,
    segments,
    lookup: (tenantId, jobId) => Effect.flatMap(store.lookup(tenantId, jobId), attachLookup),
    list: (tenantId, states, limit) => Effect.flatMap(store.list(tenantId, states, limit), attach),
    claim: (tenantId, nodeId, max) => Effect.flatMap(store.claim(tenantId, nodeId, max), attach),
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
      Effect.gen(function* () {
        const jobs = yield* Effect.flatMap(store.requeueNode(tenantId, nodeId), attach)
        return [...jobs, ...(yield* requeueSegments(tenantId, nodeId))]
      }),
    requeueUnlisted: (tenantId, nodeId, listed, claimedBefore) =>
      Effect.gen(function* () {
        const jobs = yield* Effect.flatMap(store.requeueUnlisted(tenantId, nodeId, listed, claimedBefore), attach)
        return [...jobs, ...(yield* requeueSegments(tenantId, nodeId, claimedBefore, listed))]
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
