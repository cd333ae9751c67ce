/**
 * JobStore and NodeSessions on PostgreSQL, for several controller replicas in front of one
 * database (SVC_STORE_URL). Every replica can serve every call:
 *
 * - Jobs: the SQLite store's statements, tenant-scoped the same way (`tenant_id = $1 AND $1 <> ''`).
 * - Claims: `SELECT … FOR UPDATE SKIP LOCKED` picks the tenant's oldest pending jobs, so replicas
 *   claiming at once never hand one job out twice and never wait on each other. A claim sets the
 *   lease (node, whose session row carries the expiry its heartbeats extend) and increments the
 *   fencing counter. A report locks its job row (`SELECT … FOR UPDATE`), is decided by the seed
 *   5.6 rule on that row and written in the same transaction (`report`).
 * - Node sessions are rows (`node_sessions`), live while `expires_at` lies ahead.
 * - The re-queue sweep runs under a lease row (`sweep_lease`), so one replica at a time sweeps;
 *   the sweep is also safe when two run. Time when the database was unreachable does not count
 *   against node sessions (`controller_clock`, see `bridgeOutage`).
 * - Transactions run on a reserved connection that is never written to again once it failed
 *   (see `transaction`): a dropped connection is a `JobStoreUnavailable`, never an uncaught error.
 * - Change feed: an AFTER INSERT OR UPDATE trigger sends `NOTIFY svc_jobs '<tenant>\n<id>'` at
 *   commit; every replica LISTENs, reads the job and publishes it to its followers. A follower
 *   therefore sees changes made on any replica, in commit order, within a round trip.
 *
 * Times are the replicas' clocks (Effect `Clock`), as in the SQLite store: replicas need
 * synchronised clocks (NTP), well within the 30 s session TTL.
 * PostgreSQL text cannot hold NUL: an id or tenant containing one matches nothing.
 */
import { Clock, Context, Effect, Either, Layer, Option, PubSub, Queue, Ref, type Scope, Stream } from "effect"
import { STORE_URL_VARIABLE, type PostgresSettings } from "../config.ts"
import { PermissionDenied } from "../../policy/errors.ts"
import {
  type InvalidJobRequest,
  JobStoreFailure,
  JobStoreStartupError,
  type JobStoreError,
  JobStoreUnavailable
} from "../errors.ts"
import type { Job, JobState } from "../model.ts"
import { isState, type JobRow, runningUpdateParams, toJob } from "../rows.ts"
import { NodeSessions, type NodeSessionsShape, type SessionSettings, type SessionState } from "../sessions.ts"
import { CHANGE_FEED_CAPACITY } from "../sqlite-store.ts"
import { planReport } from "../report.ts"
import { type JobLookup, JobStore, type JobStoreShape, type NewJob } from "../store.ts"
import type postgres from "postgres"
import { openPool, query, redactedUrl, type Row, type Sql, transaction } from "./client.ts"
import { CHANGE_CHANNEL, migratePostgres, PG_MIGRATIONS } from "./migrations.ts"
import { withPostgresSegments } from "./segments.ts"

const COLUMNS =
  "seq, id, tenant_id, state, request, created_at, started_at, finished_at, node_id, result, error, frames_done, submitted_by, fence, rendition_progress, idempotency_key"

/** A feed entry saying that changes may have been missed. */
const INTERRUPTED = Symbol("change feed interrupted")

/** A replica notes in `controller_clock` that it reached the database at most this often (or a quarter of the outage threshold). */
const CLOCK_TICK_MILLIS = 1_000

/** How long a sweep lease lasts when its holder dies before giving it back. */
const SWEEP_LEASE_MILLIS = 30_000

/** Health probe: a database that does not answer within this is "not ready". */
const HEALTH_TIMEOUT_MILLIS = 2_000

const hasNul = (...texts: ReadonlyArray<string>) => texts.some((text) => text.includes("\u0000"))

/** What a report's transaction did. */
type ReportStep =
  | { readonly _tag: "Corrupt"; readonly detail: string }
  | { readonly _tag: "Refused"; readonly error: PermissionDenied | InvalidJobRequest }
  | { readonly _tag: "Unchanged"; readonly job: Job }
  | { readonly _tag: "Written"; readonly row: Row }

/** Whose rows a transaction may touch under row-level security: one tenant's, or all (maintenance). */
type RowScope = { readonly tenantId: string } | "maintenance"

const num = (value: unknown): number => Number(value)
const numOrNull = (value: unknown): number | null => (value === null || value === undefined ? null : Number(value))
const textOrNull = (value: unknown): string | null => (value === null || value === undefined ? null : String(value))

const toRow = (row: Row): JobRow => ({
  seq: num(row["seq"]),
  id: String(row["id"]),
  tenant_id: String(row["tenant_id"]),
  state: String(row["state"]),
  request: String(row["request"]),
  created_at: num(row["created_at"]),
  started_at: numOrNull(row["started_at"]),
  finished_at: numOrNull(row["finished_at"]),
  node_id: textOrNull(row["node_id"]),
  result: textOrNull(row["result"]),
  error: textOrNull(row["error"]),
  frames_done: num(row["frames_done"]),
  submitted_by: textOrNull(row["submitted_by"]),
  fence: num(row["fence"]),
  rendition_progress: textOrNull(row["rendition_progress"]),
  idempotency_key: textOrNull(row["idempotency_key"])
})

const decodeRows = (operation: string, rows: ReadonlyArray<Row>): Effect.Effect<ReadonlyArray<Job>, JobStoreFailure> =>
  Effect.forEach(
    rows.map(toRow).sort((a, b) => a.seq - b.seq),
    (row) => Either.mapLeft(toJob(row), (detail) => new JobStoreFailure({ operation, detail }))
  )

const decodeOne = (operation: string, row: Row): Effect.Effect<Job, JobStoreFailure> =>
  Either.mapLeft(toJob(toRow(row)), (detail) => new JobStoreFailure({ operation, detail }))

/** Connects, migrates (under the advisory lock) and returns the pool; a failure stops start-up. */
export const openPostgres = (settings: PostgresSettings): Effect.Effect<Sql, JobStoreStartupError, Scope.Scope> =>
  Effect.gen(function* () {
    const sql = yield* openPool(settings)
    const now = yield* Clock.currentTimeMillis
    yield* Effect.tryPromise({
      try: () => migratePostgres(sql, PG_MIGRATIONS, now),
      catch: (cause) =>
        new JobStoreStartupError({
          message: `${STORE_URL_VARIABLE}: cannot open the job store "${redactedUrl(settings.url)}": ${
            cause instanceof Error ? cause.message : String(cause)
          }`
        })
    })
    const bypass = yield* Effect.either(
      query(
        "role",
        () =>
          sql`SELECT rolsuper OR rolbypassrls AS bypass, current_user AS name FROM pg_roles WHERE rolname = current_user`
      )
    )
    if (Either.isRight(bypass) && bypass.right[0]?.["bypass"] === true) {
      yield* Effect.logWarning(
        `${STORE_URL_VARIABLE}: the database user "${String(bypass.right[0]?.["name"])}" is a superuser or has BYPASSRLS, so ` +
          "row-level security (the second tenant wall) does not apply to it; connect as an ordinary role"
      )
    }
    return sql
  })

/** The PostgreSQL JobStore over an open, migrated pool. */
export const makePostgresJobStore = (sql: Sql): Effect.Effect<JobStoreShape, JobStoreStartupError, Scope.Scope> =>
  Effect.gen(function* () {
    // `Interrupted`: changes may have been missed (the LISTEN connection was lost, or a changed
    // job could not be read); followers then end with UNAVAILABLE and list again.
    const feed = yield* Effect.acquireRelease(
      PubSub.sliding<Job | typeof INTERRUPTED>(CHANGE_FEED_CAPACITY),
      PubSub.shutdown
    )
    const notifications = yield* Effect.acquireRelease(Queue.unbounded<string | typeof INTERRUPTED>(), Queue.shutdown)

    /**
     * Runs `statement` in a transaction that first tells row-level security whose rows it may see
     * (migration v2): a second wall behind the tenant clause of every statement.
     */
    const scoped = (scope: RowScope, statement: (tx: postgres.TransactionSql) => Promise<ReadonlyArray<Row>>) =>
      transaction(sql, async (tx) => {
        const tenant = scope === "maintenance" ? "" : scope.tenantId
        const maintenance = scope === "maintenance" ? "on" : "off"
        await tx`SELECT set_config('svc.tenant', ${tenant}, true), set_config('svc.maintenance', ${maintenance}, true)`
        return statement(tx)
      }) as Promise<ReadonlyArray<Row>>

    /** Who holds the sweep lease: this replica (a fresh id per process). */
    const replicaId = crypto.randomUUID()

    const own = (tenantId: string, jobId: string) =>
      scoped({ tenantId }, (tx) =>
        tx.unsafe(`SELECT ${COLUMNS} FROM jobs WHERE tenant_id = $1 AND $1 <> '' AND id = $2`, [tenantId, jobId])
      )

    const lookupNow = (tenantId: string, jobId: string): Effect.Effect<JobLookup, JobStoreError> =>
      hasNul(tenantId, jobId)
        ? Effect.succeed({ _tag: "Missing" })
        : Effect.gen(function* () {
            const [row] = yield* query("lookup", () => own(tenantId, jobId))
            if (row !== undefined) return { _tag: "Found", job: yield* decodeOne("lookup", row) } as const
            const [other] = yield* query("lookup", () =>
              scoped(
                "maintenance",
                (tx) => tx`SELECT EXISTS (SELECT 1 FROM jobs WHERE id = ${jobId} AND tenant_id <> ${tenantId}) AS other`
              )
            )
            return other?.["other"] === true ? ({ _tag: "OtherTenant" } as const) : ({ _tag: "Missing" } as const)
          })

    // Notifications → the job as committed → followers. One fiber, so followers see commit order.
    yield* Effect.forkScoped(
      Effect.forever(
        Effect.gen(function* () {
          const payload = yield* Queue.take(notifications)
          if (payload === INTERRUPTED) {
            yield* Effect.logWarning("change feed: LISTEN reconnected; followers end so that they list again")
            return yield* PubSub.publish(feed, INTERRUPTED)
          }
          const split = payload.indexOf("\n")
          const lookup = yield* Effect.either(lookupNow(payload.slice(0, split), payload.slice(split + 1)))
          if (Either.isRight(lookup) && lookup.right._tag === "Found") yield* PubSub.publish(feed, lookup.right.job)
          else if (Either.isLeft(lookup)) {
            yield* Effect.logWarning(`change feed: ${lookup.left.message}`)
            yield* PubSub.publish(feed, INTERRUPTED)
          }
        })
      )
    )
    yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: () => {
          // The client LISTENs again by itself after a lost connection and calls back each time.
          let listens = 0
          return sql.listen(
            CHANGE_CHANNEL,
            (payload) => Queue.unsafeOffer(notifications, payload),
            () => {
              listens += 1
              if (listens > 1) Queue.unsafeOffer(notifications, INTERRUPTED)
            }
          )
        },
        catch: (cause) =>
          new JobStoreStartupError({
            message: `${STORE_URL_VARIABLE}: cannot LISTEN for job changes: ${String(cause)}`
          })
      }),
      (listener) => Effect.promise(() => listener.unlisten().catch(() => undefined))
    )

    const store: JobStoreShape = {
      insert: (job: NewJob) =>
        Effect.gen(function* () {
          if (hasNul(job.tenantId, job.id)) {
            return yield* new JobStoreFailure({ operation: "insert", detail: "a tenant id cannot contain NUL" })
          }
          const now = yield* Clock.currentTimeMillis
          const key = job.idempotencyKey ?? null
          if (key !== null && hasNul(key)) {
            return yield* new JobStoreFailure({ operation: "insert", detail: "an idempotency key cannot contain NUL" })
          }
          // A key the tenant already used inserts nothing; that key's job is read in the same transaction.
          const [row] = yield* query("insert", () =>
            scoped({ tenantId: job.tenantId }, async (tx) => {
              const inserted = await tx.unsafe(
                `INSERT INTO jobs (id, tenant_id, state, request, created_at, submitted_by, idempotency_key)
               VALUES ($2, $1, 'pending', $3, $4, $5, $6)
               ON CONFLICT (tenant_id, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
               RETURNING ${COLUMNS}`,
                [job.tenantId, job.id, JSON.stringify(job.request), now, job.submittedBy ?? null, key]
              )
              if (inserted.length > 0 || key === null) return inserted
              return tx.unsafe(`SELECT ${COLUMNS} FROM jobs WHERE tenant_id = $1 AND idempotency_key = $2`, [
                job.tenantId,
                key
              ])
            })
          )
          if (row === undefined) return yield* new JobStoreFailure({ operation: "insert", detail: "no row returned" })
          return yield* decodeOne("insert", row)
        }),

      lookup: lookupNow,

      list: (tenantId, states, limit) =>
        hasNul(tenantId)
          ? Effect.succeed([])
          : Effect.flatMap(
              query("list", () =>
                scoped({ tenantId }, (tx) =>
                  states.length === 0
                    ? tx.unsafe(
                        `SELECT ${COLUMNS} FROM jobs WHERE tenant_id = $1 AND $1 <> '' ORDER BY seq DESC LIMIT $2`,
                        [tenantId, limit]
                      )
                    : tx.unsafe(
                        `SELECT ${COLUMNS} FROM jobs WHERE tenant_id = $1 AND $1 <> '' AND state = ANY(string_to_array($2, ','))
                       ORDER BY seq DESC LIMIT $3`,
                        // States are the closed set of job states (no comma); the client binds no
                        // array without fetching array types (off: see the pool).
                        [tenantId, states.join(","), limit]
                      )
                )
              ),
              (rows) => Effect.map(decodeRows("list", rows), (jobs) => [...jobs].reverse())
            ),

      cancel: (tenantId, jobId) =>
        hasNul(tenantId, jobId)
          ? Effect.succeed({ _tag: "Missing" })
          : Effect.gen(function* () {
              const now = yield* Clock.currentTimeMillis
              const [row] = yield* query("cancel", () =>
                scoped({ tenantId: tenantId }, (tx) =>
                  tx.unsafe(
                    `UPDATE jobs SET state = 'cancelled', finished_at = $3
                   WHERE tenant_id = $1 AND $1 <> '' AND id = $2 AND state IN ('pending', 'running')
                   RETURNING ${COLUMNS}`,
                    [tenantId, jobId, now]
                  )
                )
              )
              if (row !== undefined) return { _tag: "Found", job: yield* decodeOne("cancel", row) } as const
              return yield* lookupNow(tenantId, jobId)
            }),

      claim: (tenantId, nodeId, max) =>
        hasNul(tenantId, nodeId)
          ? Effect.succeed([])
          : Effect.gen(function* () {
              const now = yield* Clock.currentTimeMillis
              const rows = yield* query("claim", () =>
                scoped({ tenantId: tenantId }, (tx) =>
                  tx.unsafe(
                    `WITH picked AS (
                     SELECT seq FROM jobs WHERE tenant_id = $1 AND $1 <> '' AND state = 'pending'
                     ORDER BY seq LIMIT $4 FOR UPDATE SKIP LOCKED)
                   UPDATE jobs SET state = 'running', node_id = $2, started_at = $3, fence = jobs.fence + 1
                   FROM picked WHERE jobs.seq = picked.seq AND jobs.tenant_id = $1
                   RETURNING ${COLUMNS.split(", ")
                     .map((column) => `jobs.${column}`)
                     .join(", ")}`,
                    [tenantId, nodeId, now, max]
                  )
                )
              )
              return yield* decodeRows("claim", rows)
            }),

      report: (tenantId, jobId, context) =>
        hasNul(tenantId, jobId, context.reporter.nodeId)
          ? Effect.fail(PermissionDenied.jobNotAssigned(jobId, context.reporter.nodeId))
          : Effect.gen(function* () {
              const now = yield* Clock.currentTimeMillis
              // The row is locked (FOR UPDATE) from the read the rule decides on to the write's commit.
              const outcome = yield* query("report", () =>
                transaction(sql, async (tx): Promise<ReportStep> => {
                  await tx`SELECT set_config('svc.tenant', ${tenantId}, true), set_config('svc.maintenance', 'off', true)`
                  const [row] = await tx.unsafe(
                    `SELECT ${COLUMNS} FROM jobs WHERE tenant_id = $1 AND $1 <> '' AND id = $2 FOR UPDATE`,
                    [tenantId, jobId]
                  )
                  const job = row === undefined ? Either.right(undefined) : toJob(toRow(row))
                  if (Either.isLeft(job)) return { _tag: "Corrupt", detail: job.left }
                  const plan = planReport(tenantId, jobId, job.right, context)
                  if (Either.isLeft(plan)) return { _tag: "Refused", error: plan.left }
                  if (plan.right._tag === "Unchanged") return { _tag: "Unchanged", job: plan.right.job }
                  const { expected, update } = plan.right
                  const [written] = await tx.unsafe(
                    `UPDATE jobs SET node_id = $4, result = coalesce($5, result), frames_done = $6, rendition_progress = $11,
                     state = coalesce($7, state), error = CASE WHEN $7::text IS NULL THEN error ELSE $8 END,
                     finished_at = CASE WHEN $7::text IS NULL THEN finished_at ELSE $9 END,
                     fence = CASE WHEN $4 = $3 THEN fence ELSE fence + 1 END
                   WHERE tenant_id = $1 AND $1 <> '' AND id = $2 AND state = 'running' AND node_id = $3 AND fence = $10
                   RETURNING ${COLUMNS}`,
                    runningUpdateParams(tenantId, jobId, expected, update, now)
                  )
                  return written === undefined
                    ? { _tag: "Corrupt", detail: "the job changed under its row lock" }
                    : { _tag: "Written", row: written }
                })
              )
              switch (outcome._tag) {
                case "Corrupt":
                  return yield* new JobStoreFailure({ operation: "report", detail: outcome.detail })
                case "Refused":
                  return yield* outcome.error
                case "Unchanged":
                  return { job: outcome.job, written: false }
                case "Written":
                  return { job: yield* decodeOne("report", outcome.row), written: true }
              }
            }),

      requeueNode: (tenantId, nodeId) =>
        hasNul(tenantId, nodeId)
          ? Effect.succeed([])
          : Effect.flatMap(
              query("requeue", () =>
                scoped({ tenantId: tenantId }, (tx) =>
                  tx.unsafe(
                    `UPDATE jobs SET state = 'pending', node_id = NULL, started_at = NULL, result = NULL,
                     frames_done = 0, rendition_progress = NULL, fence = fence + 1
                   WHERE tenant_id = $1 AND $1 <> '' AND node_id = $2 AND state = 'running' RETURNING ${COLUMNS}`,
                    [tenantId, nodeId]
                  )
                )
              ),
              (rows) => decodeRows("requeue", rows)
            ),

      requeueUnlisted: (tenantId, nodeId, listed, claimedBefore) =>
        hasNul(tenantId, nodeId, ...listed)
          ? Effect.succeed([])
          : Effect.flatMap(
              query("requeue", () =>
                scoped({ tenantId: tenantId }, (tx) =>
                  tx.unsafe(
                    `UPDATE jobs SET state = 'pending', node_id = NULL, started_at = NULL, result = NULL,
                     frames_done = 0, rendition_progress = NULL, fence = fence + 1
                   WHERE tenant_id = $1 AND $1 <> '' AND node_id = $2 AND state = 'running' AND started_at < $3
                     AND id NOT IN (SELECT jsonb_array_elements_text($4::text::jsonb)) RETURNING ${COLUMNS}`,
                    [tenantId, nodeId, claimedBefore, JSON.stringify(listed)]
                  )
                )
              ),
              (rows) => decodeRows("requeue", rows)
            ),

      runningAssignments: Effect.map(
        query("assignments", () =>
          scoped(
            "maintenance",
            (tx) => tx`SELECT DISTINCT tenant_id, node_id FROM jobs
                WHERE state = 'running' AND tenant_id <> '' AND node_id IS NOT NULL`
          )
        ),
        (rows) => rows.map((row) => ({ tenantId: String(row["tenant_id"]), nodeId: String(row["node_id"]) }))
      ),

      countByState: Effect.map(
        query("count", () =>
          scoped("maintenance", (tx) => tx`SELECT state, count(*) AS n FROM jobs WHERE tenant_id <> '' GROUP BY state`)
        ),
        (rows) => {
          const counts: Record<JobState, number> = { pending: 0, running: 0, finished: 0, cancelled: 0, failed: 0 }
          for (const row of rows) {
            const state = String(row["state"])
            if (isState(state)) counts[state] = Number(row["n"])
          }
          return counts
        }
      ),

      // A lease row (migration v3) taken and given back by single statements on the pool. A
      // session-level advisory lock would need a reserved connection kept across the task, and
      // its unlock written to that connection after the database restarted is the client's
      // uncaught null-socket write; a lease of a replica that died lapses by itself.
      exclusive: <A, E>(task: Effect.Effect<A, E>) =>
        Effect.gen(function* () {
          const now = yield* Clock.currentTimeMillis
          const taken = yield* query(
            "lock",
            () => sql`UPDATE sweep_lease SET holder = ${replicaId}, expires_at = ${now + SWEEP_LEASE_MILLIS}
              WHERE id = 1 AND (expires_at <= ${now} OR holder = ${replicaId}) RETURNING id`
          )
          if (taken.length === 0) return Option.none<A>()
          return yield* Effect.ensuring(
            Effect.map(task, Option.some),
            Effect.ignore(
              query("unlock", () => sql`UPDATE sweep_lease SET expires_at = 0 WHERE id = 1 AND holder = ${replicaId}`)
            )
          )
        }),

      health: query("health", () => sql`SELECT 1 AS one`).pipe(
        Effect.timeoutFail({
          duration: HEALTH_TIMEOUT_MILLIS,
          onTimeout: () =>
            new JobStoreUnavailable({ operation: "health", detail: "the database did not answer within 2 s" })
        }),
        Effect.as({ ready: true }),
        Effect.catchAll((error) => Effect.succeed({ ready: false, reason: error.message }))
      ),

      changes: (tenantId) =>
        Effect.map(PubSub.subscribe(feed), (queue) =>
          Stream.fromQueue(queue).pipe(
            Stream.mapEffect((change) =>
              change === INTERRUPTED
                ? Effect.fail(
                    new JobStoreUnavailable({
                      operation: "follow",
                      detail:
                        "the change feed lost its database connection and may have missed changes; list the jobs again"
                    })
                  )
                : Effect.succeed(change)
            ),
            Stream.filter((job) => tenantId !== "" && job.tenantId === tenantId)
          )
        )
    }
    // Segment jobs (issue 30): reads carry segments, and the segment operations (segments.ts).
    return withPostgresSegments(sql, COLUMNS, toRow, store)
  })

/** Node sessions as rows of `node_sessions`, shared by every replica. */
export const makePostgresNodeSessions = (sql: Sql, settings: SessionSettings): Effect.Effect<NodeSessionsShape> =>
  Effect.gen(function* () {
    const bootTime = yield* Clock.currentTimeMillis
    // Normally some replica reaches the database at least every heartbeat or sweep interval.
    const outageThreshold = settings.heartbeatIntervalMillis + settings.sweepIntervalMillis
    const tickEvery = Math.min(CLOCK_TICK_MILLIS, outageThreshold / 4)
    const lastTick = yield* Ref.make(0)
    /**
     * Liveness counts only time when the database could record heartbeats. Each replica notes
     * in `controller_clock` when it reached the database (at most once a second); when the
     * previous note is older than any normal gap, the database was unreachable (or no replica
     * ran) meanwhile, and every session live at that note is extended by the gap: its heartbeats
     * could not be recorded, so the sweep must not expire it and re-queue jobs its node is still
     * running. A concurrent note waits on the row lock and then finds the fresh note: the gap
     * is bridged once.
     */
    const bridgeOutage = (now: number) =>
      Effect.flatMap(Ref.get(lastTick), (last) =>
        now - last < tickEvery
          ? Effect.void
          : query(
              "clock",
              () => sql`WITH previous AS (
                  SELECT last_seen FROM controller_clock WHERE id = 1 AND last_seen < ${now} FOR UPDATE),
                tick AS (
                  UPDATE controller_clock SET last_seen = ${now} FROM previous WHERE controller_clock.id = 1
                  RETURNING previous.last_seen AS last_seen)
                UPDATE node_sessions SET expires_at = node_sessions.expires_at + (${now}::bigint - tick.last_seen)
                FROM tick WHERE tick.last_seen > 0 AND ${now}::bigint - tick.last_seen > ${outageThreshold}
                  AND node_sessions.expires_at > tick.last_seen`
            ).pipe(Effect.zipRight(Ref.set(lastTick, now)))
      )
    const sessions: NodeSessionsShape = {
      settings,
      register: (tenantId, info) =>
        Effect.gen(function* () {
          if (hasNul(tenantId, info.name, info.version)) {
            return yield* new JobStoreFailure({ operation: "register", detail: "a tenant id cannot contain NUL" })
          }
          const now = yield* Clock.currentTimeMillis
          const nodeId = crypto.randomUUID()
          yield* query(
            "register",
            () => sql`INSERT INTO node_sessions
              (node_id, tenant_id, name, slots, version, registered_at, last_heartbeat, expires_at)
              VALUES (${nodeId}, ${tenantId}, ${info.name}, ${info.slots}, ${info.version}, ${now}, ${now},
                      ${now + settings.ttlMillis})`
          )
          return {
            nodeId,
            heartbeatIntervalMillis: settings.heartbeatIntervalMillis,
            sessionTtlMillis: settings.ttlMillis
          }
        }),

      // An expired session is not revived: its jobs may already be re-queued.
      heartbeat: (tenantId, nodeId) =>
        hasNul(tenantId, nodeId)
          ? Effect.succeed(false)
          : Effect.flatMap(Clock.currentTimeMillis, (now) =>
              Effect.map(
                Effect.zipRight(
                  bridgeOutage(now),
                  query(
                    "heartbeat",
                    () => sql`UPDATE node_sessions SET last_heartbeat = ${now}, expires_at = ${now + settings.ttlMillis}
                    WHERE node_id = ${nodeId} AND tenant_id = ${tenantId} AND expires_at > ${now} RETURNING node_id`
                  )
                ),
                (rows) => rows.length === 1
              )
            ),

      state: (nodeId) =>
        hasNul(nodeId)
          ? Effect.succeed({ _tag: "NotLive", tenantId: undefined, since: bootTime })
          : Effect.gen(function* () {
              const now = yield* Clock.currentTimeMillis
              yield* bridgeOutage(now)
              const [row] = yield* query(
                "session",
                () => sql`SELECT tenant_id, expires_at FROM node_sessions WHERE node_id = ${nodeId}`
              )
              if (row === undefined) return { _tag: "NotLive", tenantId: undefined, since: bootTime } as SessionState
              const tenantId = String(row["tenant_id"])
              const expires = Number(row["expires_at"])
              return now < expires
                ? ({ _tag: "Live", tenantId } as const)
                : ({ _tag: "NotLive", tenantId, since: expires } as const)
            }),

      live: Effect.flatMap(Clock.currentTimeMillis, (now) =>
        Effect.map(
          Effect.zipRight(
            bridgeOutage(now),
            query(
              "sessions",
              () => sql`SELECT node_id, tenant_id, name, slots, version FROM node_sessions
              WHERE expires_at > ${now} ORDER BY registered_at, node_id`
            )
          ),
          (rows) =>
            rows.map((row) => ({
              nodeId: String(row["node_id"]),
              tenantId: String(row["tenant_id"]),
              name: String(row["name"]),
              slots: Number(row["slots"]),
              version: String(row["version"])
            }))
        )
      ),

      ofTenant: (tenantId) =>
        hasNul(tenantId) || tenantId === ""
          ? Effect.succeed([])
          : Effect.flatMap(Clock.currentTimeMillis, (now) =>
              Effect.map(
                query(
                  "sessions",
                  () => sql`SELECT node_id, tenant_id, name, slots, version, last_heartbeat, expires_at
                    FROM node_sessions WHERE tenant_id = ${tenantId} ORDER BY registered_at, node_id`
                ),
                (rows) =>
                  rows.map((row) => ({
                    nodeId: String(row["node_id"]),
                    tenantId: String(row["tenant_id"]),
                    name: String(row["name"]),
                    slots: Number(row["slots"]),
                    version: String(row["version"]),
                    lastHeartbeat: Number(row["last_heartbeat"]),
                    live: now < Number(row["expires_at"])
                  }))
              )
            ),

      prune: Effect.flatMap(Clock.currentTimeMillis, (now) =>
        Effect.asVoid(
          Effect.zipRight(
            bridgeOutage(now),
            query(
              "prune",
              () => sql`DELETE FROM node_sessions WHERE expires_at + ${settings.requeueGraceMillis} <= ${now}`
            )
          )
        )
      )
    }
    return sessions
  })

/** JobStore and NodeSessions on the database SVC_STORE_URL names (one pool for both). */
export const postgresBackend = (
  settings: PostgresSettings,
  sessionSettings: SessionSettings
): Layer.Layer<JobStore | NodeSessions, JobStoreStartupError> =>
  Layer.scopedContext(
    Effect.gen(function* () {
      const sql = yield* openPostgres(settings)
      const store = yield* makePostgresJobStore(sql)
      const sessions = yield* makePostgresNodeSessions(sql, sessionSettings)
      return Context.make(JobStore, store).pipe(Context.add(NodeSessions, sessions))
    })
  )
