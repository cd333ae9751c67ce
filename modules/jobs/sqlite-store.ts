/**
 * JobStore on embedded SQLite (`bun:sqlite`), one file at SVC_STORE_PATH.
 *
 * Durability: WAL journal with `synchronous = FULL`. Every write is one SQLite transaction whose
 * commit fsyncs the WAL before the statement returns, and callers acknowledge (answer the RPC)
 * only after that. A `kill -9` of the controller therefore loses no acknowledged job; FULL (rather
 * than NORMAL, which only survives a process crash) also keeps them across a power loss of the
 * host, at the price of one fsync per job write, which job rates easily afford.
 * `busy_timeout` makes a writer wait for another connection's lock instead of failing at once.
 */
import { Database } from "bun:sqlite"
import { closeSync, existsSync, fstatSync, openSync, readSync, renameSync, rmSync } from "node:fs"
import { basename, dirname, join } from "node:path"
import { Clock, Effect, Either, Layer, Option, PubSub, type Scope, Stream } from "effect"
import { STORE_PATH_VARIABLE, storePath } from "./config.ts"
import { type InvalidJobRequest, JobStoreFailure, JobStoreStartupError } from "./errors.ts"
import { MIGRATIONS, migrate } from "./migrations.ts"
import type { Job, JobState } from "./model.ts"
import type { PermissionDenied } from "../policy/errors.ts"
import {
  fitsPuller,
  isState,
  type JobRow,
  needsJson,
  type RunningUpdateParams,
  runningUpdateParams,
  toJob
} from "./rows.ts"
import { planReport } from "./report.ts"
import { makeSqliteSegments } from "./sqlite-segments.ts"
import { makeWorkSignal } from "./work-signal.ts"
import { type JobLookup, JobStore, type JobStoreShape, type NewJob } from "./store.ts"

export const BUSY_TIMEOUT_MILLIS = 5_000
/** Changes a `follow` subscriber may lag behind before the oldest are dropped for it. */
export const CHANGE_FEED_CAPACITY = 4_096

const COLUMNS =
  "seq, id, tenant_id, state, request, created_at, started_at, finished_at, node_id, result, error, frames_done, submitted_by, fence, rendition_progress, idempotency_key, plan_alignment"
// ?1 is always the caller's tenant; the second clause keeps legacy empty-tenant rows out of reach.
const OWN = "tenant_id = ?1 AND ?1 <> ''"

const describe = (cause: unknown): string => (cause instanceof Error ? cause.message : String(cause))

/** What a report's transaction did, carried out of the synchronous transaction. */
type ReportStep =
  | { readonly _tag: "Corrupt"; readonly detail: string }
  | { readonly _tag: "Refused"; readonly error: PermissionDenied | InvalidJobRequest }
  | { readonly _tag: "Unchanged"; readonly job: Job }
  | { readonly _tag: "Written"; readonly row: JobRow }

/** The first 16 bytes of every SQLite database file. */
const SQLITE_HEADER = "SQLite format 3\0"

/** Opens a database in WAL mode with FULL sync and the schema migrated. */
const openMigrated = (path: string, now: number, create: boolean): Database => {
  const db = new Database(path, { create, readwrite: true, strict: true })
  try {
    // busy_timeout first, so switching the journal mode also waits for other connections.
    db.run(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MILLIS}`)
    const mode = db.query<{ journal_mode: string }, []>("PRAGMA journal_mode = WAL").get()?.journal_mode
    if (mode !== "wal") throw new Error(`cannot use WAL journal mode (got "${mode}")`)
    db.run("PRAGMA synchronous = FULL")
    // A damaged page is found now, at start-up, not by the first request that reads it.
    const problems = db
      .query<{ quick_check: string }, []>("PRAGMA quick_check")
      .all()
      .map((row) => row.quick_check)
    if (problems.length !== 1 || problems[0] !== "ok")
      throw new Error(`the integrity check failed: ${problems.slice(0, 3).join("; ")}`)
    migrate(db, MIGRATIONS, now)
    return db
  } catch (error) {
    db.close()
    throw error
  }
}

/**
 * Why an existing store file cannot be a job store (empty, or not an SQLite database), or
 * undefined when it may be one, or when there is no file yet. Never "repaired": an empty or
 * foreign file in place of the store means the jobs are elsewhere or lost, which an operator
 * must see rather than find an empty store.
 */
const refusedStoreFile = (path: string): string | undefined => {
  if (!existsSync(path)) return undefined
  const fd = openSync(path, "r")
  try {
    if (!fstatSync(fd).isFile()) return "is not a regular file"
    const header = Buffer.alloc(SQLITE_HEADER.length)
    const read = readSync(fd, header, 0, header.length, 0)
    if (read === 0) return "is empty, not a job store (restore it from a backup, or remove it to start with no jobs)"
    if (header.toString("latin1", 0, read) !== SQLITE_HEADER)
      return "is not an SQLite database (restore it from a backup, or remove it to start with no jobs)"
    return undefined
  } finally {
    closeSync(fd)
  }
}

/**
 * A new store is made under a temporary name beside its final path and renamed into place once
 * its schema is written, so a crash during the very first start leaves no empty file behind.
 */
const createStore = (path: string, now: number): void => {
  const partial = join(dirname(path), `.${basename(path)}.creating-${process.pid}`)
  rmSync(partial, { force: true })
  const db = openMigrated(partial, now, true)
  db.close()
  renameSync(partial, path)
}

/**
 * Opens (creating if needed) and migrates the store file; closes it when the scope ends. A file
 * that is empty, not a database, or fails the integrity check stops the start with a message
 * naming it. (Start-up only: these few synchronous calls happen before any request is served.)
 */
export const openDatabase = (path: string): Effect.Effect<Database, JobStoreStartupError, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.flatMap(Clock.currentTimeMillis, (now) =>
      Effect.try({
        try: () => {
          const refused = refusedStoreFile(path)
          if (refused !== undefined) throw new Error(refused)
          if (!existsSync(path)) createStore(path, now)
          return openMigrated(path, now, false)
        },
        catch: (cause) =>
          new JobStoreStartupError({
            message: `${STORE_PATH_VARIABLE}: cannot open the job store "${path}": ${describe(cause)}`
          })
      })
    ),
    (db) => Effect.sync(() => db.close())
  )

/** The SQLite JobStore over an open, migrated database. */
export const makeSqliteJobStore = (db: Database): Effect.Effect<JobStoreShape, never, Scope.Scope> =>
  Effect.gen(function* () {
    const feed = yield* Effect.acquireRelease(PubSub.sliding<Job>(CHANGE_FEED_CAPACITY), PubSub.shutdown)

    const attempt = <A>(operation: string, run: () => A): Effect.Effect<A, JobStoreFailure> =>
      Effect.try({ try: run, catch: (cause) => new JobStoreFailure({ operation, detail: describe(cause) }) })

    // Jobs are read with their segments (segment jobs, issue 30): one query per batch of rows.
    let segments: ReturnType<typeof makeSqliteSegments> | undefined
    const decode = (
      operation: string,
      rows: ReadonlyArray<JobRow>
    ): Effect.Effect<ReadonlyArray<Job>, JobStoreFailure> =>
      Effect.flatMap(
        Effect.forEach(rows, (row) =>
          Either.mapLeft(toJob(row), (detail) => new JobStoreFailure({ operation, detail }))
        ),
        (jobs) =>
          Effect.try({
            try: () => {
              const byTenant = new Map<string, Array<string>>()
              for (const job of jobs) byTenant.set(job.tenantId, [...(byTenant.get(job.tenantId) ?? []), job.id])
              const found = new Map<string, ReadonlyArray<Job["segments"][number]>>()
              for (const [tenantId, ids] of byTenant)
                for (const [id, list] of segments?.segmentsOf(tenantId, ids) ?? []) found.set(id, list)
              return jobs.map((job) => ({ ...job, segments: found.get(job.id) ?? [] }))
            },
            catch: (cause) => new JobStoreFailure({ operation, detail: describe(cause) })
          })
      )

    const decodeOne = (operation: string, row: JobRow): Effect.Effect<Job, JobStoreFailure> =>
      Effect.flatMap(decode(operation, [row]), (jobs) =>
        jobs[0] === undefined
          ? Effect.fail(new JobStoreFailure({ operation, detail: "no row" }))
          : Effect.succeed(jobs[0])
      )

    const work = makeWorkSignal()
    const publish = (jobs: ReadonlyArray<Job>) =>
      Effect.zipRight(
        Effect.sync(() => {
          // A pending job, or a segment job's pending segments (after its plan or a re-queue).
          for (const job of jobs) {
            const units =
              job.state === "pending" ? 1 : job.segments.filter((segment) => segment.state === "pending").length
            if (units > 0) work.notify(job.tenantId, units)
          }
        }),
        PubSub.publishAll(feed, jobs)
      )

    // A used idempotency key inserts nothing (no row returned); the key's job is then read.
    const insertJob = db.query<JobRow, [string, string, string, number, string | null, string | null]>(
      `INSERT INTO jobs (id, tenant_id, state, request, created_at, submitted_by, idempotency_key)
       VALUES (?2, ?1, 'pending', ?3, ?4, ?5, ?6)
       ON CONFLICT (tenant_id, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
       RETURNING ${COLUMNS}`
    )
    const selectByKey = db.query<JobRow, [string, string]>(
      `SELECT ${COLUMNS} FROM jobs WHERE ${OWN} AND idempotency_key = ?2`
    )
    const selectOwn = db.query<JobRow, [string, string]>(`SELECT ${COLUMNS} FROM jobs WHERE ${OWN} AND id = ?2`)
    // Only a yes/no: whether the id exists outside the caller's tenant (GetJob must say so).
    const existsElsewhere = db.query<{ other: number }, [string, string]>(
      "SELECT EXISTS (SELECT 1 FROM jobs WHERE id = ?2 AND tenant_id <> ?1) AS other"
    )
    const selectList = db.query<JobRow, [string, string | null, number]>(
      `SELECT ${COLUMNS} FROM jobs WHERE ${OWN} AND (?2 IS NULL OR state IN (SELECT value FROM json_each(?2)))
       ORDER BY seq DESC LIMIT ?3`
    )
    const cancelOwn = db.query<JobRow, [string, string, number]>(
      `UPDATE jobs SET state = 'cancelled', finished_at = ?3 WHERE ${OWN} AND id = ?2 AND state IN ('pending', 'running')
       RETURNING ${COLUMNS}`
    )
    const claimOldest = db.query<JobRow, [string, string, number, number, number, number]>(
      `UPDATE jobs SET state = 'running', node_id = ?2, started_at = ?3, fence = fence + 1
       WHERE ${OWN} AND seq IN (SELECT seq FROM jobs WHERE ${OWN} AND state = 'pending' AND ${fitsPuller("memory_need", "?5", "?6")}
         ORDER BY seq LIMIT ?4)
       RETURNING ${COLUMNS}`
    )
    const updateOwnRunning = db.query<JobRow, RunningUpdateParams>(
      `UPDATE jobs SET node_id = ?4, result = coalesce(?5, result), frames_done = ?6, rendition_progress = ?11,
         state = coalesce(?7, state), error = CASE WHEN ?7 IS NULL THEN error ELSE ?8 END,
         finished_at = CASE WHEN ?7 IS NULL THEN finished_at ELSE ?9 END,
         fence = CASE WHEN ?4 = ?3 THEN fence ELSE fence + 1 END
       WHERE ${OWN} AND id = ?2 AND state = 'running' AND node_id = ?3 AND fence = ?10
       RETURNING ${COLUMNS}`
    )
    const requeueOwn = db.query<JobRow, [string, string]>(
      `UPDATE jobs SET state = 'pending', node_id = NULL, started_at = NULL, result = NULL, frames_done = 0, rendition_progress = NULL,
         fence = fence + 1
       WHERE ${OWN} AND node_id = ?2 AND state = 'running' RETURNING ${COLUMNS}`
    )
    const requeueUnlisted = db.query<JobRow, [string, string, number, string, string]>(
      `UPDATE jobs SET state = 'pending', node_id = NULL, started_at = NULL, result = NULL, frames_done = 0, rendition_progress = NULL,
         fence = fence + 1, memory_need = coalesce((SELECT value FROM json_each(?5) WHERE key = jobs.id), memory_need)
       WHERE ${OWN} AND node_id = ?2 AND state = 'running' AND started_at < ?3
         AND id NOT IN (SELECT value FROM json_each(?4)) RETURNING ${COLUMNS}`
    )
    const selectAssignments = db.query<{ tenant_id: string; node_id: string }, []>(
      "SELECT DISTINCT tenant_id, node_id FROM jobs WHERE state = 'running' AND tenant_id <> '' AND node_id IS NOT NULL"
    )
    const selectCounts = db.query<{ state: string; n: number }, []>(
      "SELECT state, count(*) AS n FROM jobs WHERE tenant_id <> '' GROUP BY state"
    )

    const lookupNow = (tenantId: string, jobId: string): JobLookup | JobRow => {
      const row = selectOwn.get(tenantId, jobId)
      if (row !== null) return row
      return existsElsewhere.get(tenantId, jobId)?.other === 1 ? { _tag: "OtherTenant" } : { _tag: "Missing" }
    }
    const resolve = (operation: string, found: JobLookup | JobRow): Effect.Effect<JobLookup, JobStoreFailure> =>
      "_tag" in found
        ? Effect.succeed(found)
        : Effect.map(decodeOne(operation, found), (job) => ({ _tag: "Found", job }) as const)

    const bySeq = (rows: ReadonlyArray<JobRow>) => [...rows].sort((a, b) => a.seq - b.seq)

    segments = makeSqliteSegments(
      db,
      COLUMNS,
      (tenantId, jobId) =>
        Effect.flatMap(
          attempt("lookup", () => selectOwn.get(tenantId, jobId)),
          (row) => (row === null ? Effect.succeed(undefined) : decodeOne("lookup", row))
        ),
      publish
    )
    const segmentStore = segments

    const store: JobStoreShape = {
      segments: segmentStore.shape,

      insert: (job: NewJob) =>
        Effect.gen(function* () {
          const now = yield* Clock.currentTimeMillis
          const key = job.idempotencyKey ?? null
          const inserted = yield* attempt("insert", () =>
            db
              .transaction(() => {
                const row = insertJob.get(
                  job.tenantId,
                  job.id,
                  JSON.stringify(job.request),
                  now,
                  job.submittedBy ?? null,
                  key
                )
                return { row: row ?? (key === null ? null : selectByKey.get(job.tenantId, key)), fresh: row !== null }
              })
              .immediate()
          )
          if (inserted.row === null)
            return yield* new JobStoreFailure({ operation: "insert", detail: "no row returned" })
          const stored = yield* decodeOne("insert", inserted.row)
          if (!inserted.fresh) return stored
          yield* publish([stored])
          return stored
        }),

      lookup: (tenantId, jobId) =>
        Effect.flatMap(
          attempt("lookup", () => lookupNow(tenantId, jobId)),
          (found) => resolve("lookup", found)
        ),

      list: (tenantId, states, limit) =>
        Effect.flatMap(
          attempt("list", () => selectList.all(tenantId, states.length === 0 ? null : JSON.stringify(states), limit)),
          (rows) => decode("list", rows)
        ),

      cancel: (tenantId, jobId) =>
        Effect.gen(function* () {
          const now = yield* Clock.currentTimeMillis
          // One transaction: the state read afterwards is the one the update left.
          const found = yield* attempt("cancel", () =>
            db
              .transaction(() => {
                const cancelled = cancelOwn.get(tenantId, jobId, now)
                if (cancelled === null) return lookupNow(tenantId, jobId)
                segmentStore.cancelSegments(tenantId, jobId)
                return cancelled
              })
              .immediate()
          )
          const lookup = yield* resolve("cancel", found)
          if (!("_tag" in found) && lookup._tag === "Found") yield* publish([lookup.job])
          return lookup
        }),

      claim: (tenantId, nodeId, max, memory) =>
        Effect.gen(function* () {
          const now = yield* Clock.currentTimeMillis
          const rows = yield* attempt("claim", () =>
            claimOldest.all(tenantId, nodeId, now, max, memory.freeBytes, memory.budgetBytes)
          )
          const jobs = yield* decode("claim", bySeq(rows))
          yield* publish(jobs)
          return jobs
        }),

      report: (tenantId, jobId, context) =>
        Effect.gen(function* () {
          const now = yield* Clock.currentTimeMillis
          // One IMMEDIATE transaction: the row decided on is the row written (no other writer between).
          const outcome = yield* attempt("report", () =>
            db
              .transaction((): ReportStep => {
                const row = selectOwn.get(tenantId, jobId)
                const job = row === null ? Either.right(undefined) : toJob(row)
                if (Either.isLeft(job)) return { _tag: "Corrupt", detail: job.left }
                const plan = planReport(tenantId, jobId, job.right, context)
                if (Either.isLeft(plan)) return { _tag: "Refused", error: plan.left }
                if (plan.right._tag === "Unchanged") return { _tag: "Unchanged", job: plan.right.job }
                const { expected, update } = plan.right
                const written = updateOwnRunning.get(...runningUpdateParams(tenantId, jobId, expected, update, now))
                return written === null
                  ? { _tag: "Corrupt", detail: "the job changed inside its write transaction" }
                  : { _tag: "Written", row: written }
              })
              .immediate()
          )
          switch (outcome._tag) {
            case "Corrupt":
              return yield* new JobStoreFailure({ operation: "report", detail: outcome.detail })
            case "Refused":
              return yield* outcome.error
            case "Unchanged":
              return { job: outcome.job, written: false }
            case "Written": {
              const job = yield* decodeOne("report", outcome.row)
              yield* publish([job])
              return { job, written: true }
            }
          }
        }),

      requeueNode: (tenantId, nodeId) =>
        Effect.gen(function* () {
          const rows = yield* attempt("requeue", () => requeueOwn.all(tenantId, nodeId))
          const jobs = yield* decode("requeue", bySeq(rows))
          yield* publish(jobs)
          const segments = yield* segmentStore.requeueNode(tenantId, nodeId)
          return [...jobs, ...segments.jobs]
        }),

      requeueUnlisted: (tenantId, nodeId, listed, claimedBefore, needs, listedSegments = []) =>
        Effect.gen(function* () {
          const rows = yield* attempt("requeue", () =>
            requeueUnlisted.all(tenantId, nodeId, claimedBefore, JSON.stringify(listed), needsJson(needs))
          )
          const jobs = yield* decode("requeue", bySeq(rows))
          yield* publish(jobs)
          const segments = yield* segmentStore.requeueNode(
            tenantId,
            nodeId,
            claimedBefore,
            listed,
            listedSegments,
            needs
          )
          // Handed back for want of memory: every waiting node may try (the first woken may lack
          // the room). Only when a job or segment with a need did go back to pending.
          const needed = new Set(
            needs.flatMap((need) => (need.bytes > 0 && need.segment === undefined ? [need.jobId] : []))
          )
          if (segments.handedBack || jobs.some((job) => needed.has(job.id))) work.notifyTenant(tenantId)
          return [...jobs, ...segments.jobs]
        }),

      runningAssignments: Effect.map(
        attempt("assignments", () => [...selectAssignments.all(), ...segmentStore.runningAssignments()]),
        (rows) => [
          ...new Map(
            rows.map((row) => [`${row.tenant_id}\n${row.node_id}`, { tenantId: row.tenant_id, nodeId: row.node_id }])
          ).values()
        ]
      ),

      countByState: Effect.map(
        attempt("count", () => selectCounts.all()),
        (rows) => {
          const counts: Record<JobState, number> = { pending: 0, running: 0, finished: 0, cancelled: 0, failed: 0 }
          for (const row of rows) if (isState(row.state)) counts[row.state] = row.n
          return counts
        }
      ),

      // One process owns the file: nobody else can run the sweep.
      exclusive: (task) => Effect.map(task, Option.some),

      // A read of every job's state: a file damaged or removed under a running controller fails it.
      health: Effect.sync(() => {
        try {
          selectCounts.all()
          return { ready: true }
        } catch (cause) {
          return {
            ready: false,
            reason: `job store failing: ${cause instanceof Error ? cause.message : String(cause)}`
          }
        }
      }),

      changes: (tenantId) =>
        Effect.map(PubSub.subscribe(feed), (queue) =>
          Stream.fromQueue(queue).pipe(Stream.filter((job) => tenantId !== "" && job.tenantId === tenantId))
        ),

      awaitWork: work.awaitWork
    }
    return store
  })

/** The SQLite store of the file at `path`. */
export const sqliteJobStoreAt = (path: string): Layer.Layer<JobStore, JobStoreStartupError> =>
  Layer.scoped(JobStore, Effect.flatMap(openDatabase(path), makeSqliteJobStore))

/** The SQLite store at SVC_STORE_PATH (default /data/jobs.sqlite). */
export const SqliteJobStoreLive = Layer.unwrapEffect(Effect.map(storePath, sqliteJobStoreAt))
