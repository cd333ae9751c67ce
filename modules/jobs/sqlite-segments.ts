/**
 * Segment jobs on the SQLite store (issue 30; table `job_segments`, migration 7). Every statement
 * is scoped by tenant like the job statements (`tenant_id = ?1 AND ?1 <> ''`); each operation is
 * one IMMEDIATE transaction, so the 5.6 decision and the write see the same rows.
 */
import type { Database } from "bun:sqlite"
import { Clock, Effect, Either } from "effect"
import { InvalidJobRequest, JobStoreFailure } from "./errors.ts"
import {
  decodeStoredResult,
  encodePlanAlignment,
  encodeResult,
  type Job,
  type JobSegment,
  MAX_SEGMENT_ATTEMPTS
} from "./model.ts"
import { planReport, planSegmentReport } from "./report.ts"
import { fits, fitsPuller, freeAfter, type JobRow, toJob } from "./rows.ts"
import { SEGMENT_COLUMNS, type SegmentRow, type SegmentStep, segmentOutcome, toSegment } from "./segment-rows.ts"
import type { Claimed, MemoryNeed, SegmentKey, SegmentStoreShape } from "./store.ts"

const OWN = "tenant_id = ?1 AND ?1 <> ''"
/**
 * The segment half of the SQLite store. `decodeJob` reads a job row with its segments (the
 * store's own decoding), `publish` sends changed jobs to followers.
 */
export const makeSqliteSegments = (
  db: Database,
  columns: string,
  readJob: (tenantId: string, jobId: string) => Effect.Effect<Job | undefined, JobStoreFailure>,
  publish: (jobs: ReadonlyArray<Job>) => Effect.Effect<unknown>
) => {
  const selectSegments = db.query<SegmentRow, [string, string]>(
    `SELECT ${SEGMENT_COLUMNS} FROM job_segments WHERE ${OWN} AND job_id IN (SELECT value FROM json_each(?2))
     ORDER BY job_id, idx`
  )
  const selectSegment = db.query<SegmentRow, [string, string, number]>(
    `SELECT ${SEGMENT_COLUMNS} FROM job_segments WHERE ${OWN} AND job_id = ?2 AND idx = ?3`
  )
  const selectJobRow = db.query<JobRow, [string, string]>(`SELECT ${columns} FROM jobs WHERE ${OWN} AND id = ?2`)
  const insertSegment = db.query<never, [string, string, number, number, number]>(
    `INSERT INTO job_segments (tenant_id, job_id, idx, first_frame, frame_count, state)
     VALUES (?1, ?2, ?3, ?4, ?5, 'pending')`
  )
  const releaseJob = db.query<{ id: string }, [string, string, string, number, string | null]>(
    `UPDATE jobs SET node_id = NULL, fence = fence + 1, frames_done = 0, result = NULL, plan_alignment = ?5
     WHERE ${OWN} AND id = ?2 AND state = 'running' AND node_id = ?3 AND fence = ?4 RETURNING id`
  )
  // The claim candidates: pending jobs (plans or whole jobs) and running jobs with a pending segment.
  const candidates = db.query<
    { seq: number; id: string; state: string; busy: number; need: number | null },
    [string, number, number, number]
  >(
    `SELECT seq, id, state, 0 AS busy, memory_need AS need FROM jobs
       WHERE ${OWN} AND state = 'pending' AND ${fitsPuller("memory_need", "?3", "?4")}
     UNION ALL
     SELECT j.seq, j.id, j.state, NULL AS need,
       (SELECT count(*) FROM job_segments r WHERE r.${OWN} AND r.job_id = j.id AND r.state = 'running') AS busy
     FROM jobs j WHERE j.${OWN} AND j.state = 'running'
       AND EXISTS (SELECT 1 FROM job_segments p WHERE p.${OWN} AND p.job_id = j.id AND p.state = 'pending'
         AND ${fitsPuller("p.memory_need", "?3", "?4")})
     ORDER BY seq LIMIT ?2`
  )
  const claimJob = db.query<{ id: string }, [string, string, string, number]>(
    `UPDATE jobs SET state = 'running', node_id = ?3, started_at = ?4, fence = fence + 1
     WHERE ${OWN} AND id = ?2 AND state = 'pending' RETURNING id`
  )
  // The first pending segment the puller has room for (by its recorded need, as jobs are skipped).
  const claimSegment = db.query<
    SegmentRow & { readonly need: number | null },
    [string, string, string, number, number, number]
  >(
    `UPDATE job_segments SET state = 'running', node_id = ?3, claimed_at = ?4, fence = fence + 1,
       attempts = attempts + 1, frames_done = 0, result = NULL
     WHERE ${OWN} AND job_id = ?2 AND idx = (SELECT min(idx) FROM job_segments WHERE ${OWN} AND job_id = ?2
       AND state = 'pending' AND ${fitsPuller("memory_need", "?5", "?6")})
     RETURNING ${SEGMENT_COLUMNS}, memory_need AS need`
  )
  const markStarted = db.query<never, [string, string, number]>(
    `UPDATE jobs SET started_at = coalesce(started_at, ?3) WHERE ${OWN} AND id = ?2`
  )
  const writeSegment = db.query<
    SegmentRow,
    [string, string, number, string, string, string | null, number, string | null, string | null, number]
  >(
    `UPDATE job_segments SET node_id = ?5, result = coalesce(?6, result), frames_done = ?7,
       state = coalesce(?8, state), error = ?9,
       fence = CASE WHEN ?5 = ?4 THEN fence ELSE fence + 1 END
     WHERE ${OWN} AND job_id = ?2 AND idx = ?3 AND state = 'running' AND node_id = ?4 AND fence = ?10
     RETURNING ${SEGMENT_COLUMNS}`
  )
  const segmentTotals = db.query<{ done: number; finished: number; n: number }, [string, string]>(
    `SELECT coalesce(sum(frames_done), 0) AS done, coalesce(sum(state = 'finished'), 0) AS finished, count(*) AS n
     FROM job_segments WHERE ${OWN} AND job_id = ?2`
  )
  const segmentResults = db.query<{ result: string | null }, [string, string]>(
    `SELECT result FROM job_segments WHERE ${OWN} AND job_id = ?2 ORDER BY idx`
  )
  const progressJob = db.query<never, [string, string, number]>(
    `UPDATE jobs SET frames_done = ?3 WHERE ${OWN} AND id = ?2 AND state = 'running'`
  )
  const endJob = db.query<never, [string, string, string, string | null, string | null, number, number]>(
    `UPDATE jobs SET state = ?3, result = coalesce(?4, result), error = ?5, frames_done = ?6, finished_at = ?7
     WHERE ${OWN} AND id = ?2 AND state = 'running'`
  )
  const cancelOthers = db.query<never, [string, string]>(
    `UPDATE job_segments SET state = 'cancelled' WHERE ${OWN} AND job_id = ?2 AND state IN ('pending', 'running')`
  )
  const runningOfNode = db.query<SegmentRow, [string, string]>(
    `SELECT ${SEGMENT_COLUMNS} FROM job_segments WHERE ${OWN} AND node_id = ?2 AND state = 'running'`
  )
  const requeueSegment = db.query<never, [string, string, number]>(
    `UPDATE job_segments SET state = 'pending', node_id = NULL, claimed_at = NULL, result = NULL, frames_done = 0,
       fence = fence + 1
     WHERE ${OWN} AND job_id = ?2 AND idx = ?3 AND state = 'running'`
  )
  // Handed back for want of memory: pending with its need, the claim not counted as an attempt.
  const handBackSegment = db.query<never, [string, string, number, number]>(
    `UPDATE job_segments SET state = 'pending', node_id = NULL, claimed_at = NULL, result = NULL, frames_done = 0,
       fence = fence + 1, attempts = max(attempts - 1, 0), memory_need = ?4
     WHERE ${OWN} AND job_id = ?2 AND idx = ?3 AND state = 'running'`
  )

  /** The segments of the tenant's jobs `ids`, by job id. */
  const segmentsOf = (tenantId: string, ids: ReadonlyArray<string>): Map<string, Array<JobSegment>> => {
    const byJob = new Map<string, Array<JobSegment>>()
    if (ids.length === 0) return byJob
    for (const row of selectSegments.all(tenantId, JSON.stringify(ids))) {
      const list = byJob.get(row.job_id) ?? []
      list.push(toSegment(row))
      byJob.set(row.job_id, list)
    }
    return byJob
  }

  const attempt = <A>(operation: string, run: () => A): Effect.Effect<A, JobStoreFailure> =>
    Effect.try({
      try: run,
      catch: (cause) =>
        new JobStoreFailure({ operation, detail: cause instanceof Error ? cause.message : String(cause) })
    })

  /** Ends a running segment job in the transaction: failed (its other segments cancelled) or finished. */
  const end = (
    tenantId: string,
    jobId: string,
    state: "failed" | "finished",
    result: string | null,
    error: string | null,
    done: number,
    now: number
  ) => {
    if (state === "failed") cancelOthers.run(tenantId, jobId)
    endJob.run(tenantId, jobId, state, result, error, done, now)
  }

  /** A job's frames done: the sum of its segments'. */
  const totals = (tenantId: string, jobId: string) =>
    segmentTotals.get(tenantId, jobId) ?? { done: 0, finished: 0, n: 0 }

  /** The outcome of a transaction as the committed job (published when written). */
  const outcome = segmentOutcome(readJob, (job) => publish([job]))

  const jobIn = (tenantId: string, jobId: string): Either.Either<Job | undefined, string> => {
    const row = selectJobRow.get(tenantId, jobId)
    if (row === null) return Either.right(undefined)
    return Either.map(toJob(row), (job) => ({ ...job, segments: segmentsOf(tenantId, [jobId]).get(jobId) ?? [] }))
  }

  const shape: SegmentStoreShape = {
    claim: (tenantId, nodeId, max, memory) =>
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        const picked = yield* attempt("claim", () =>
          db
            .transaction(() => {
              // Enough candidates for `max` picks: each job gives one per pick.
              const pool = candidates
                .all(tenantId, Math.max(64, max * 4), memory.freeBytes, memory.budgetBytes)
                .map((row) => ({ ...row }))
              const claims: Array<{ jobId: string; segment?: JobSegment }> = []
              // The free memory left for the next pick: the known needs of those claimed before.
              let free = memory.freeBytes
              while (claims.length < max && pool.length > 0) {
                // The job with the fewest units running; the oldest first among equals.
                pool.sort((a, b) => a.busy - b.busy || a.seq - b.seq)
                const next = pool[0]
                if (next === undefined) break
                if (next.state === "pending") {
                  pool.shift()
                  if (!fits(next.need, free, memory.budgetBytes)) continue
                  if (claimJob.get(tenantId, next.id, nodeId, now) === null) continue
                  claims.push({ jobId: next.id })
                  free = freeAfter(free, next.need, memory.budgetBytes)
                  continue
                }
                const segment = claimSegment.get(tenantId, next.id, nodeId, now, free, memory.budgetBytes)
                if (segment === null) {
                  pool.shift()
                  continue
                }
                free = freeAfter(free, segment.need, memory.budgetBytes)
                markStarted.run(tenantId, next.id, now)
                next.busy++
                claims.push({ jobId: next.id, segment: toSegment(segment) })
              }
              return claims
            })
            .immediate()
        )
        const claimed: Array<Claimed> = []
        for (const { jobId, segment } of picked) {
          const job = yield* readJob(tenantId, jobId)
          if (job !== undefined) claimed.push({ job, segment })
        }
        yield* publish([...new Map(claimed.map((entry) => [entry.job.id, entry.job])).values()])
        return claimed
      }),

    plan: (tenantId, jobId, context) =>
      Effect.gen(function* () {
        const step = yield* attempt("plan", () =>
          db
            .transaction((): SegmentStep => {
              const job = jobIn(tenantId, jobId)
              if (Either.isLeft(job)) return { _tag: "Corrupt", detail: job.left }
              const plan = planReport(tenantId, jobId, job.right, {
                reporter: context.reporter,
                liveNodeIds: context.liveNodeIds,
                update: (held) =>
                  Either.right({
                    nodeId: context.reporter.nodeId,
                    result: undefined,
                    framesDone: 0,
                    renditionProgress: [],
                    outcome: undefined
                  }).pipe(
                    Either.filterOrLeft(
                      () => held.segments.length === 0,
                      () => new InvalidJobRequest({ message: `job "${jobId}" is already planned` })
                    )
                  )
              })
              if (Either.isLeft(plan)) return { _tag: "Refused", error: plan.left }
              if (plan.right._tag === "Unchanged") return { _tag: "Unchanged", jobId }
              const held = job.right
              if (held === undefined) return { _tag: "Corrupt", detail: "no job" }
              const cuts = context.cuts(held)
              if (Either.isLeft(cuts)) return { _tag: "Refused", error: cuts.left }
              const { expected } = plan.right
              const alignment = encodePlanAlignment(context.alignment)
              if (releaseJob.get(tenantId, jobId, expected.nodeId, expected.fence, alignment) === null)
                return { _tag: "Corrupt", detail: "the job changed inside its plan transaction" }
              for (const [index, cut] of cuts.right.entries())
                insertSegment.run(tenantId, jobId, index, cut.firstFrame, cut.frameCount)
              return { _tag: "Written", jobId }
            })
            .immediate()
        )
        return yield* outcome(tenantId, "plan", step)
      }),

    report: (tenantId, jobId, index, context) =>
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        const step = yield* attempt("report", () =>
          db
            .transaction((): SegmentStep => {
              const job = jobIn(tenantId, jobId)
              if (Either.isLeft(job)) return { _tag: "Corrupt", detail: job.left }
              const row = selectSegment.get(tenantId, jobId, index)
              const stored = row?.result == null ? Either.right(undefined) : decodeStoredResult(row.result)
              if (Either.isLeft(stored)) return { _tag: "Corrupt", detail: `segment ${index}: ${stored.left.message}` }
              const plan = planSegmentReport(
                tenantId,
                jobId,
                job.right,
                row === null ? undefined : toSegment(row),
                stored.right,
                context
              )
              if (Either.isLeft(plan)) return { _tag: "Refused", error: plan.left }
              if (plan.right._tag === "Unchanged") return { _tag: "Unchanged", jobId }
              const { expected, update } = plan.right
              const written = writeSegment.get(
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
              )
              if (written === null)
                return { _tag: "Corrupt", detail: "the segment changed inside its report transaction" }
              const sums = totals(tenantId, jobId)
              if (update.outcome?.state === "failed") {
                end(
                  tenantId,
                  jobId,
                  "failed",
                  null,
                  `segment ${index}: ${update.outcome.error ?? "failed"}`,
                  sums.done,
                  now
                )
                return { _tag: "Written", jobId }
              }
              if (sums.finished < sums.n) {
                progressJob.run(tenantId, jobId, sums.done)
                return { _tag: "Written", jobId }
              }
              // The last segment finished: the job's result is the exact merge of every segment's.
              const results: Array<NonNullable<Job["result"]>> = []
              for (const entry of segmentResults.all(tenantId, jobId)) {
                const decoded = entry.result === null ? undefined : decodeStoredResult(entry.result)
                if (decoded === undefined || Either.isLeft(decoded))
                  return { _tag: "Corrupt", detail: "a finished segment has no readable result" }
                results.push(decoded.right)
              }
              const held = job.right
              if (held === undefined) return { _tag: "Corrupt", detail: "no job" }
              const merged = context.merge(held, results)
              if (Either.isLeft(merged) || merged.right === undefined) {
                const why = Either.isLeft(merged) ? merged.left : "no frames"
                end(tenantId, jobId, "failed", null, `merging the segments failed: ${why}`, sums.done, now)
                return { _tag: "Written", jobId }
              }
              end(tenantId, jobId, "finished", encodeResult(merged.right), null, sums.done, now)
              return { _tag: "Written", jobId }
            })
            .immediate()
        )
        return yield* outcome(tenantId, "report", step)
      })
  }

  /**
   * Inside the store's re-queue of a lost node: its running segments go back to pending, or fail
   * their job once handed out MAX_SEGMENT_ATTEMPTS times. With `claimedBefore`, only those claimed
   * before it and not listed (by name in `listedSegments` when the node names any segment, else
   * by their job in `listed`, as an older node lists them); one
   * with a need in `needs` (keyed "<job id>#<index>") was handed back for want of memory: pending
   * with its need, not counted as an attempt. Returns the jobs changed and whether a need was
   * handed back (every waiting PullWork is woken).
   */
  const requeueNode = (
    tenantId: string,
    nodeId: string,
    claimedBefore?: number,
    listed?: ReadonlyArray<string>,
    listedSegments: ReadonlyArray<SegmentKey> = [],
    needs: ReadonlyArray<MemoryNeed> = []
  ) =>
    Effect.gen(function* () {
      const now = yield* Clock.currentTimeMillis
      const keep = new Set(listedSegments.map((segment) => `${segment.jobId}#${segment.index}`))
      const needOf = new Map(
        needs.flatMap((need) =>
          need.segment !== undefined && need.bytes > 0 ? [[`${need.jobId}#${need.segment}`, need.bytes] as const] : []
        )
      )
      let handedBack = false
      const changed = yield* attempt("requeue", () =>
        db
          .transaction(() => {
            const ids = new Set<string>()
            for (const row of runningOfNode.all(tenantId, nodeId)) {
              if (claimedBefore !== undefined && (row.claimed_at ?? 0) >= claimedBefore) continue
              if (keep.size > 0 ? keep.has(`${row.job_id}#${row.idx}`) : listed?.includes(row.job_id)) continue
              ids.add(row.job_id)
              const need = needOf.get(`${row.job_id}#${row.idx}`)
              if (need !== undefined) {
                handBackSegment.run(tenantId, row.job_id, row.idx, need)
                progressJob.run(tenantId, row.job_id, totals(tenantId, row.job_id).done)
                handedBack = true
                continue
              }
              if (row.attempts >= MAX_SEGMENT_ATTEMPTS) {
                end(
                  tenantId,
                  row.job_id,
                  "failed",
                  null,
                  `segment ${row.idx} was lost with its node ${row.attempts} times (at most ${MAX_SEGMENT_ATTEMPTS} attempts)`,
                  totals(tenantId, row.job_id).done,
                  now
                )
                continue
              }
              requeueSegment.run(tenantId, row.job_id, row.idx)
              progressJob.run(tenantId, row.job_id, totals(tenantId, row.job_id).done)
            }
            return [...ids]
          })
          .immediate()
      )
      const jobs: Array<Job> = []
      for (const id of changed) {
        const job = yield* readJob(tenantId, id)
        if (job !== undefined) jobs.push(job)
      }
      yield* publish(jobs)
      return { jobs, handedBack }
    })

  const runningAssignments = db.query<{ tenant_id: string; node_id: string }, []>(
    "SELECT DISTINCT tenant_id, node_id FROM job_segments WHERE state = 'running' AND tenant_id <> '' AND node_id IS NOT NULL"
  )

  return {
    shape,
    segmentsOf,
    requeueNode,
    /** Inside the store's cancel transaction: the job's unfinished segments are cancelled (nodes kept). */
    cancelSegments: (tenantId: string, jobId: string) => cancelOthers.run(tenantId, jobId),
    runningAssignments: () => runningAssignments.all()
  }
}
