/**
 * JobStore and NodeSessions on PostgreSQL, for several controller replicas in front of one
 * database (SVC_STORE_URL). Every replica can serve every call:
 *
 * - One statement per operation: each is a call of a migration-8 function that sets the tenant
 *   for row-level security and runs the statement in the same implicit transaction. No BEGIN or
 *   COMMIT is ever sent while serving, so the client's transaction race (postgres 3.4.9 could
 *   send BEGIN on a connection it had not reserved, leaving a transaction open on a shared
 *   connection) cannot occur, and a call answers only after its statement committed. Tagged
 *   statements are prepared once per connection: one round trip per call.
 * - Jobs: the SQLite store's statements, tenant-scoped the same way (`tenant_id = $1 AND $1 <> ''`).
 * - Claims: `SELECT … FOR UPDATE SKIP LOCKED` picks the tenant's oldest pending jobs, so replicas
 *   claiming at once never hand one job out twice and never wait on each other. The claim checks
 *   the node's session in the same call (`sessionBound`). It sets the lease (node, whose session
 *   row carries the expiry its heartbeats extend) and increments the fencing counter.
 * - Reports: one call reads the jobs with the reporter's and the owners' sessions; the seed 5.6
 *   rule decides on those rows; one call writes every accepted report as a compare-and-set on the
 *   lease and `revision` it was decided on. A row that changed in between is read and decided
 *   again, so the decision always holds for the state the write commits on.
 * - Node sessions are rows (`node_sessions`), live while `expires_at` lies ahead.
 * - The re-queue sweep runs under a lease row (`sweep_lease`), so one replica at a time sweeps;
 *   the sweep is also safe when two run. Time when the database was unreachable does not count
 *   against node sessions (`controller_clock`, see `bridgeOutage`).
 * - Change feed: statement-level triggers send `NOTIFY svc_jobs` with `[tenant, id, state,
 *   fence]` lines at commit, and only while some replica has a `change_listeners` row: a replica
 *   LISTENs and keeps its row while it has followers (StreamJobs) or waiting PullWork calls, and
 *   for a while after; while no replica has followers, only jobs that became pending are sent
 *   (migration 12). A follower reads the jobs its tenant's notes name; its queue is bounded.
 *
 * Times are the replicas' clocks (Effect `Clock`), as in the SQLite store: replicas need
 * synchronised clocks (NTP), well within the 30 s session TTL.
 * PostgreSQL text cannot hold NUL: an id or tenant containing one matches nothing.
 */
import {
  Clock,
  Context,
  Effect,
  Either,
  Layer,
  Option,
  Queue,
  Ref,
  Runtime,
  Schedule,
  type Scope,
  Stream
} from "effect"
import { STORE_URL_VARIABLE, type PostgresSettings } from "../config.ts"
import { PermissionDenied } from "../../policy/errors.ts"
import {
  type InvalidJobRequest,
  JobStoreFailure,
  JobStoreStartupError,
  type JobStoreError,
  JobStoreUnavailable
} from "../errors.ts"
import { encodeRenditionProgress, encodeResult, type Job, type JobState } from "../model.ts"
import { isState, type JobRow, needsJson, toJob } from "../rows.ts"
import { NodeSessions, type NodeSessionsShape, type SessionSettings, type SessionState } from "../sessions.ts"
import { CHANGE_FEED_CAPACITY } from "../sqlite-store.ts"
import { planReport } from "../report.ts"
import {
  type JobLookup,
  JobStore,
  type JobStoreShape,
  type Lease,
  type NewJob,
  type ReportContext,
  type ReportOutcome,
  type ReportResults,
  type RunningUpdate,
  type SessionBoundStore
} from "../store.ts"
import { makeWorkSignal } from "../work-signal.ts"
import { openPool, query, redactedUrl, type Row, type Sql } from "./client.ts"
import { CHANGE_CHANNEL, migratePostgres, PG_MIGRATIONS } from "./migrations.ts"
import { withPostgresSegments } from "./segments.ts"

/** A feed entry saying that changes may have been missed. */
const INTERRUPTED = Symbol("change feed interrupted")

/** The state of a note by which a replica hands wake-ups on to the others (see `deliver`). */
const WAKE = "wake"

/** A NOTIFY payload stays under PostgreSQL's 8000 bytes. */
const MAX_PAYLOAD_BYTES = 7_000

/** Lines joined into payloads of at most MAX_PAYLOAD_BYTES (the lines are short). */
const chunkLines = (lines: ReadonlyArray<string>): ReadonlyArray<string> => {
  const payloads: Array<string> = []
  let current = ""
  for (const line of lines) {
    if (current !== "" && current.length + line.length + 1 > MAX_PAYLOAD_BYTES) {
      payloads.push(current)
      current = ""
    }
    current += `${line}\n`
  }
  return current === "" ? payloads : [...payloads, current]
}

/** A replica notes in `controller_clock` that it reached the database at most this often (or a quarter of the outage threshold). */
const CLOCK_TICK_MILLIS = 1_000

/** How long a sweep lease lasts when its holder dies before giving it back. */
const SWEEP_LEASE_MILLIS = 30_000

/** Health probe: a database that does not answer within this is "not ready". */
const HEALTH_TIMEOUT_MILLIS = 2_000

/** A change_listeners row lapses this long after its last refresh (a replica that died). */
const LISTENER_TTL_SECONDS = 60
/** How often a listening replica refreshes its row and checks whether it is still wanted. */
const LISTENER_REFRESH_MILLIS = 10_000
/** A replica stops listening once nobody followed or waited for this long. */
const LISTENER_LINGER_MILLIS = 30_000

/** Longest wait for the writes in progress when a replica starts listening (see `startListening`). */
const LISTEN_BARRIER_MILLIS = 1_000

/** Reads and compare-and-set writes of one report before it gives up (the row kept changing). */
const MAX_REPORT_ROUNDS = 50

const hasNul = (...texts: ReadonlyArray<string>) => texts.some((text) => text.includes("\u0000"))

/** What a report's read says about the sessions it is decided with. */
interface ReportRead {
  readonly reporterTenantId: string | undefined
  readonly reporterLive: boolean
  /** Nodes of the read jobs whose sessions are live. */
  readonly liveOwners: ReadonlySet<string>
}

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
  idempotency_key: textOrNull(row["idempotency_key"]),
  plan_alignment: textOrNull(row["plan_alignment"])
})

const decodeRows = (operation: string, rows: ReadonlyArray<Row>): Effect.Effect<ReadonlyArray<Job>, JobStoreFailure> =>
  Effect.forEach(
    rows.map(toRow).sort((a, b) => a.seq - b.seq),
    (row) => Either.mapLeft(toJob(row), (detail) => new JobStoreFailure({ operation, detail }))
  )

const decodeOne = (operation: string, row: Row): Effect.Effect<Job, JobStoreFailure> =>
  Either.mapLeft(toJob(toRow(row)), (detail) => new JobStoreFailure({ operation, detail }))

/** The application_name of a replica's connections: migration 15's notes name the replica by it. */
const applicationNameOf = (replicaId: string) => `svc-controller ${replicaId}`

/** Connects, migrates (under the advisory lock) and returns the pool; a failure stops start-up. */
export const openPostgres = (
  settings: PostgresSettings,
  replicaId: string
): Effect.Effect<Sql, JobStoreStartupError, Scope.Scope> =>
  Effect.gen(function* () {
    const sql = yield* openPool(settings, applicationNameOf(replicaId))
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

/**
 * One change as the notification carries it (migration 8): enough to wake and to route. State
 * `segments` (migration 9): `count` segments of the job became pending (a plan, a re-queue); it
 * only wakes waiting PullWork calls (the job's own row change reaches followers). State `memory`
 * (migration 10): jobs were handed back for want of memory; wakes every waiting call of the tenant.
 */
interface ChangeNote {
  readonly tenantId: string
  readonly id: string
  readonly state: string
  readonly count: number
  /** The replica that owns the note's wake-ups (migration 15), or "" (every replica wakes one). */
  readonly origin: string
}

/** A follower's queue of changes; `behind` once a change could not be queued (it lists again). */
interface Follower {
  readonly tenantId: string
  readonly queue: Queue.Queue<ChangeNote | typeof INTERRUPTED>
  behind: boolean
}

/** A job row of migration 8's functions (JSON or a plain row), with its report revision. */
const revisionOf = (row: Row): number => Number(row["revision"] ?? 0)

/** The write of a report decided on `expected`, as svc_report_write takes it. */
const reportWrite = (jobId: string, expected: Lease & { readonly revision: number }, update: RunningUpdate) => ({
  id: jobId,
  expected_node: expected.nodeId,
  expected_fence: expected.fence,
  expected_revision: expected.revision,
  node_id: update.nodeId,
  result: update.result === undefined ? null : encodeResult(update.result),
  frames_done: update.framesDone,
  rendition_progress: encodeRenditionProgress(update.renditionProgress),
  state: update.outcome?.state ?? null,
  error: update.outcome?.error ?? null
})

/** Lines of JSON `[tenant, id, state, fence or count, origin]`; a line that does not parse is skipped. */
const parseNotes = (payload: string): ReadonlyArray<ChangeNote> =>
  payload.split("\n").flatMap((line) => {
    if (line === "") return []
    try {
      const [tenantId, id, state, count, origin] = JSON.parse(line) as [unknown, unknown, unknown, unknown, unknown]
      return typeof tenantId === "string" && typeof id === "string" && typeof state === "string"
        ? [
            {
              tenantId,
              id,
              state,
              count: typeof count === "number" ? count : 0,
              origin: typeof origin === "string" ? origin : ""
            }
          ]
        : []
    } catch {
      return []
    }
  })

/**
 * The PostgreSQL JobStore over an open, migrated pool. `replicaId` (a fresh id per process, the
 * one its pool's application_name carries) holds the sweep lease and the change_listeners row.
 */
export const makePostgresJobStore = (
  sql: Sql,
  replicaId: string
): Effect.Effect<JobStoreShape, JobStoreStartupError, Scope.Scope> =>
  Effect.gen(function* () {
    /** Whether a job of this id belongs to a tenant other than `tenantId` (which has no NUL). */
    const otherTenant = (tenantId: string, jobId: string): Effect.Effect<JobLookup, JobStoreError> =>
      Effect.map(
        query("lookup", () => sql`SELECT svc_other_tenant(${tenantId}, ${jobId}) AS other`),
        ([other]) => (other?.["other"] === true ? ({ _tag: "OtherTenant" } as const) : ({ _tag: "Missing" } as const))
      )

    // PostgreSQL text holds no NUL: no job id has one, and a tenant id with one owns no job, so
    // any job of that id is another tenant's (as SQLite answers).
    const lookupNow = (tenantId: string, jobId: string): Effect.Effect<JobLookup, JobStoreError> =>
      hasNul(jobId)
        ? Effect.succeed({ _tag: "Missing" })
        : hasNul(tenantId)
          ? otherTenant("", jobId)
          : Effect.gen(function* () {
              const [row] = yield* query("lookup", () => sql`SELECT * FROM svc_lookup(${tenantId}, ${jobId})`)
              if (row !== undefined) return { _tag: "Found", job: yield* decodeOne("lookup", row) } as const
              return yield* otherTenant(tenantId, jobId)
            })

    // Change notifications, only while this replica has followers or waiting PullWork calls:
    // LISTEN and a change_listeners row (without any row no trigger sends anything).
    const followers = new Set<Follower>()
    const runtime = yield* Effect.runtime<never>()
    // Wake-ups this replica owns but has no waiter for, by tenant, sent together at the next tick.
    const handingOn = new Map<string, number>()
    /** Tells the other replicas to wake waiters: lines [tenant, "", "wake", count, this replica] (tenant "": all). */
    const wakeOthers = (lines: ReadonlyArray<string>) =>
      Effect.forEach(
        chunkLines(lines),
        (payload) => Effect.ignoreLogged(query("wake", () => sql`SELECT pg_notify(${CHANGE_CHANNEL}, ${payload})`)),
        { discard: true }
      )
    const work = makeWorkSignal((tenantId, count) => {
      if (handingOn.size === 0)
        queueMicrotask(() => {
          const lines = [...handingOn].map(([tenant, wakes]) => JSON.stringify([tenant, "", WAKE, wakes, replicaId]))
          handingOn.clear()
          Runtime.runFork(runtime)(wakeOthers(lines))
        })
      handingOn.set(tenantId, (handingOn.get(tenantId) ?? 0) + count)
    })
    /** Every waiter on the other replicas: notes this replica owned may have gone unseen. */
    const wakeAllOthers = wakeOthers([JSON.stringify(["", "", WAKE, 0, replicaId])])
    const demand = () => followers.size + work.waiting()
    // `followers`: the change_listeners row asks for every change, not only jobs that became pending.
    const listening = yield* Ref.make<
      { readonly unlisten: () => Promise<void>; readonly followers: boolean } | undefined
    >(undefined)
    const lastDemand = yield* Ref.make(0)
    const listenLock = yield* Effect.makeSemaphore(1)

    const deliver = (note: ChangeNote | typeof INTERRUPTED) => {
      if (note !== INTERRUPTED && note.state === WAKE) {
        // Wake-ups another replica handed on (none of its own waiters took them).
        if (note.origin === replicaId) return
        if (note.tenantId === "") work.notifyAll()
        else work.notify(note.tenantId, note.count)
        return
      }
      if (note !== INTERRUPTED && note.state === "segments") {
        work.notify(note.tenantId, note.count)
        return
      }
      if (note !== INTERRUPTED && note.state === "memory") {
        work.notifyTenant(note.tenantId)
        return
      }
      for (const follower of followers) {
        if (note !== INTERRUPTED && note.tenantId !== follower.tenantId) continue
        if (!Queue.unsafeOffer(follower.queue, note)) follower.behind = true
      }
      if (note === INTERRUPTED) work.notifyAll()
      else if (note.state === "pending") {
        // One replica wakes a waiter per pending job: the note's origin if it names one (it
        // hands on what it has no waiter for), else every replica (one waiter each).
        if (note.origin === "") work.notify(note.tenantId, 1)
        else if (note.origin === replicaId) work.notifyOwned(note.tenantId, 1)
      }
    }

    const registerListener = (forFollowers: boolean) =>
      query(
        "listen",
        () => sql`INSERT INTO change_listeners (replica, expires_at, followers)
          VALUES (${replicaId}, now() + make_interval(secs => ${LISTENER_TTL_SECONDS}), ${forFollowers})
          ON CONFLICT (replica) DO UPDATE SET expires_at = excluded.expires_at, followers = excluded.followers`
      )

    /**
     * Waits until the writes in progress now have ended (at most LISTEN_BARRIER_MILLIS: store
     * writes are single statements). Real time (not the Effect clock, which a test may hold still).
     */
    const writesInProgressEnded = Effect.gen(function* () {
      const [mark] = yield* query("listen", () => sql`SELECT txid_snapshot_xmax(txid_current_snapshot())::text AS xmax`)
      const xmax = String(mark?.["xmax"] ?? "0")
      const giveUp = performance.now() + LISTEN_BARRIER_MILLIS
      for (;;) {
        const [ended] = yield* query(
          "listen",
          () => sql`SELECT txid_snapshot_xmin(txid_current_snapshot()) >= ${xmax}::bigint AS done`
        )
        if (ended?.["done"] === true || performance.now() > giveUp) return
        yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 2)))
      }
    })

    /**
     * Writes the row, then waits out the writes in progress at its commit: their triggers may
     * have run before the row was there and notified nothing (or only pending jobs), so a listing
     * made after this sees them.
     */
    const announce = (forFollowers: boolean) => Effect.zipRight(registerListener(forFollowers), writesInProgressEnded)

    /** Starts listening: LISTEN, then the row (`announce`). */
    const startListening = (forFollowers: boolean) =>
      Effect.gen(function* () {
        let listens = 0
        const listener = yield* query("listen", () =>
          sql.listen(
            CHANGE_CHANNEL,
            (payload) => {
              for (const note of parseNotes(payload)) deliver(note)
            },
            () => {
              // The client LISTENs again by itself after a lost connection and calls back each time.
              listens += 1
              if (listens > 1) {
                deliver(INTERRUPTED)
                // Notes whose wake-ups this replica owned may have been lost with the connection.
                Runtime.runFork(runtime)(wakeAllOthers)
              }
            }
          )
        )
        // Listening only counts once the row is in: otherwise the next follower tries again.
        yield* Effect.tapError(announce(forFollowers), () =>
          Effect.promise(() => listener.unlisten().catch(() => undefined))
        )
        yield* Ref.set(listening, { unlisten: () => listener.unlisten(), followers: forFollowers })
      })

    /**
     * Listening when this returns, for every change when `forFollowers` (a replica listening for
     * pending jobs only asks for more, waiting out the writes in progress again); or the
     * database did not answer: followers then end at once.
     */
    const ensureListening = (forFollowers: boolean) =>
      listenLock.withPermits(1)(
        Effect.flatMap(Ref.get(listening), (current) =>
          current === undefined
            ? startListening(forFollowers)
            : forFollowers && !current.followers
              ? Effect.zipRight(announce(true), Ref.set(listening, { ...current, followers: true }))
              : Effect.void
        )
      )

    /**
     * Deletes the row (no note names this replica after), waits out the writes that may have
     * named it, then wakes every waiter on the other replicas before the UNLISTEN: a note this
     * replica owned may arrive after it stopped reading them.
     */
    const stopListening = Effect.flatMap(Ref.getAndSet(listening, undefined), (current) =>
      current === undefined
        ? Effect.void
        : Effect.gen(function* () {
            yield* Effect.ignore(
              query("unlisten", () => sql`DELETE FROM change_listeners WHERE replica = ${replicaId}`)
            )
            yield* Effect.ignore(writesInProgressEnded)
            yield* wakeAllOthers
            yield* Effect.promise(() => current.unlisten().catch(() => undefined))
          })
    )

    // Keeps the row fresh while wanted (asking only for pending jobs once no follower is left);
    // stops listening once nobody wanted it for a while.
    yield* Effect.forkScoped(
      Effect.repeat(
        listenLock.withPermits(1)(
          Effect.gen(function* () {
            const now = yield* Clock.currentTimeMillis
            if (demand() > 0) yield* Ref.set(lastDemand, now)
            const current = yield* Ref.get(listening)
            if (current === undefined) return
            if (now - (yield* Ref.get(lastDemand)) > LISTENER_LINGER_MILLIS) yield* stopListening
            else {
              const forFollowers = current.followers && followers.size > 0
              yield* Effect.ignore(registerListener(forFollowers))
              yield* Ref.set(listening, { ...current, followers: forFollowers })
            }
          })
        ),
        Schedule.spaced(LISTENER_REFRESH_MILLIS)
      )
    )
    yield* Effect.addFinalizer(() => stopListening)

    // Followers that could not start the notifications end at once (UNAVAILABLE: they list
    // again); a waiting PullWork keeps its bounded wait (waking it would turn into a busy loop).
    const wanted = <A, R>(acquire: Effect.Effect<A, never, R>, forFollowers: boolean) =>
      Effect.tap(acquire, () =>
        Effect.zipRight(
          Effect.flatMap(Clock.currentTimeMillis, (now) => Ref.set(lastDemand, now)),
          Effect.catchAll(ensureListening(forFollowers), (error) =>
            Effect.zipRight(
              Effect.logWarning(`change feed: cannot listen: ${error.message}`),
              Effect.sync(() => {
                for (const follower of followers)
                  if (!Queue.unsafeOffer(follower.queue, INTERRUPTED)) follower.behind = true
              })
            )
          )
        )
      )

    /** Reports of one node, each decided on the job it read and written if it is unchanged since. */
    const applyReports = (
      tenantId: string,
      reporterNodeId: string,
      items: ReadonlyArray<{ readonly jobId: string; readonly context: (read: ReportRead) => ReportContext }>
    ): Effect.Effect<ReportResults, JobStoreError> =>
      Effect.gen(function* () {
        const results: Array<ReportResults[number] | undefined> = items.map(() => undefined)
        let pending = items.map((_, index) => index)
        for (let round = 0; pending.length > 0; round++) {
          if (round === MAX_REPORT_ROUNDS) {
            return yield* new JobStoreFailure({ operation: "report", detail: "the job kept changing under the report" })
          }
          const now = yield* Clock.currentTimeMillis
          const ids = [...new Set(pending.map((index) => items[index]?.jobId ?? ""))]
          const rows = yield* query(
            "report",
            () => sql`SELECT * FROM svc_report_read(${tenantId}, ${JSON.stringify(ids)}, ${reporterNodeId})`
          )
          const [session, ...found] = rows
          const sessionTenant = session?.["session_tenant"]
          const read: ReportRead = {
            reporterTenantId: typeof sessionTenant === "string" ? sessionTenant : undefined,
            reporterLive: Number(session?.["session_expires"] ?? 0) > now,
            liveOwners: new Set(
              found.flatMap((row) => {
                const job = row["job"] as Row
                return Number(row["session_expires"] ?? 0) > now && typeof job["node_id"] === "string"
                  ? [job["node_id"]]
                  : []
              })
            )
          }
          const stored = new Map<string, { readonly job: Job; readonly revision: number }>()
          for (const row of found) {
            const raw = row["job"] as Row
            stored.set(String(raw["id"]), { job: yield* decodeOne("report", raw), revision: revisionOf(raw) })
          }
          // One write per job and round: a second report of the batch on it waits for the next.
          const writes: Array<{ readonly index: number; readonly write: ReturnType<typeof reportWrite> }> = []
          const deferred: Array<number> = []
          const decided = new Set<string>()
          for (const index of pending) {
            const item = items[index]
            if (item === undefined) continue
            if (decided.has(item.jobId)) {
              deferred.push(index)
              continue
            }
            decided.add(item.jobId)
            const entry = stored.get(item.jobId)
            const plan = planReport(tenantId, item.jobId, entry?.job, item.context(read))
            if (Either.isLeft(plan)) results[index] = Either.left(plan.left)
            else if (plan.right._tag === "Unchanged")
              results[index] = Either.right({ job: plan.right.job, written: false })
            else if (entry !== undefined)
              writes.push({
                index,
                write: reportWrite(item.jobId, { ...plan.right.expected, revision: entry.revision }, plan.right.update)
              })
          }
          const written =
            writes.length === 0
              ? []
              : yield* query(
                  "report",
                  () =>
                    sql`SELECT * FROM svc_report_write(${tenantId}, ${JSON.stringify(writes.map((one) => one.write))}, ${now})`
                )
          const byId = new Map(written.map((row) => [String(row["id"]), row]))
          pending = deferred
          for (const { index, write } of writes) {
            const row = byId.get(write.id)
            if (row === undefined) pending.push(index)
            else results[index] = Either.right({ job: yield* decodeOne("report", row), written: true })
          }
          pending.sort((a, b) => a - b)
        }
        return results.flatMap((result) => (result === undefined ? [] : [result]))
      })

    // The session-bound claim, plans and segments' reports are segments.ts's.
    const boundReport: SessionBoundStore["report"] = (tenantId, nodeId, reports) =>
      hasNul(tenantId, nodeId)
        ? Effect.succeed(reports.map((report) => Either.left(PermissionDenied.jobNotAssigned(report.jobId, nodeId))))
        : applyReports(
            tenantId,
            nodeId,
            reports.map((report) => ({
              jobId: report.jobId,
              context: (read) => ({
                reporter: { nodeId, sessionTenantId: read.reporterTenantId, live: read.reporterLive },
                liveNodeIds: read.liveOwners,
                update: report.update
              })
            }))
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
          // A key the tenant already used inserts nothing; that key's job is read in the same call.
          const [row] = yield* query(
            "insert",
            () =>
              sql`SELECT * FROM svc_insert(${job.tenantId}, ${job.id}, ${JSON.stringify(job.request)}, ${now}, ${
                job.submittedBy ?? null
              }, ${key})`
          )
          if (row === undefined) return yield* new JobStoreFailure({ operation: "insert", detail: "no row returned" })
          return yield* decodeOne("insert", row)
        }),

      lookup: lookupNow,

      list: (tenantId, states, limit) =>
        hasNul(tenantId)
          ? Effect.succeed([])
          : Effect.flatMap(
              // States are the closed set of job states (no comma).
              query("list", () => sql`SELECT * FROM svc_list(${tenantId}, ${states.join(",")}, ${limit})`),
              (rows) => Effect.map(decodeRows("list", rows), (jobs) => [...jobs].reverse())
            ),

      cancel: (tenantId, jobId) =>
        hasNul(tenantId, jobId)
          ? lookupNow(tenantId, jobId)
          : Effect.gen(function* () {
              const now = yield* Clock.currentTimeMillis
              const [row] = yield* query("cancel", () => sql`SELECT * FROM svc_cancel(${tenantId}, ${jobId}, ${now})`)
              if (row !== undefined) return { _tag: "Found", job: yield* decodeOne("cancel", row) } as const
              return yield* lookupNow(tenantId, jobId)
            }),

      // The contract's claim, for a node whose session the caller checked (svc_claim with the
      // session check skipped is the same statement; the service uses `sessionBound.claim`).
      claim: (tenantId, nodeId, max, memory) =>
        hasNul(tenantId, nodeId)
          ? Effect.succeed([])
          : Effect.gen(function* () {
              const now = yield* Clock.currentTimeMillis
              const [, ...claimed] = yield* query(
                "claim",
                () => sql`SELECT * FROM svc_claim(${tenantId}, ${nodeId}, ${now}, ${max}, false,
                  ${memory.freeBytes}, ${memory.budgetBytes})`
              )
              return yield* decodeRows(
                "claim",
                claimed.map((row) => row["job"] as Row)
              )
            }),

      report: (tenantId, jobId, context) =>
        hasNul(tenantId, jobId, context.reporter.nodeId)
          ? Effect.fail(PermissionDenied.jobNotAssigned(jobId, context.reporter.nodeId))
          : Effect.flatMap(
              applyReports(tenantId, context.reporter.nodeId, [{ jobId, context: () => context }]),
              ([outcome]): Effect.Effect<ReportOutcome, PermissionDenied | InvalidJobRequest | JobStoreError> =>
                outcome === undefined
                  ? Effect.fail(new JobStoreFailure({ operation: "report", detail: "no outcome" }))
                  : outcome
            ),

      requeueNode: (tenantId, nodeId) =>
        hasNul(tenantId, nodeId)
          ? Effect.succeed([])
          : Effect.flatMap(
              query("requeue", () => sql`SELECT * FROM svc_requeue(${tenantId}, ${nodeId}, NULL, NULL, NULL)`),
              (rows) => decodeRows("requeue", rows)
            ),

      requeueUnlisted: (tenantId, nodeId, listed, claimedBefore, needs) =>
        hasNul(tenantId, nodeId, ...listed)
          ? Effect.succeed([])
          : Effect.flatMap(
              query(
                "requeue",
                () =>
                  sql`SELECT * FROM svc_requeue(${tenantId}, ${nodeId}, ${claimedBefore}, ${JSON.stringify(listed)},
                    ${needsJson(needs)})`
              ),
              (rows) => decodeRows("requeue", rows)
            ),

      runningAssignments: Effect.map(
        query("assignments", () => sql`SELECT * FROM svc_running_assignments()`),
        (rows) => rows.map((row) => ({ tenantId: String(row["tenant_id"]), nodeId: String(row["node_id"]) }))
      ),

      countByState: Effect.map(
        query("count", () => sql`SELECT * FROM svc_count_by_state()`),
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

      // Each follower reads the jobs its notes name (only followed tenants' changes are read).
      // Its queue is bounded: a follower that falls behind ends with UNAVAILABLE and lists again.
      changes: (tenantId) =>
        Effect.map(
          wanted(
            Effect.acquireRelease(
              Effect.map(Queue.dropping<ChangeNote | typeof INTERRUPTED>(CHANGE_FEED_CAPACITY), (queue) => {
                const follower: Follower = { tenantId, queue, behind: false }
                followers.add(follower)
                return follower
              }),
              (follower) =>
                Effect.zipRight(
                  Effect.sync(() => followers.delete(follower)),
                  Queue.shutdown(follower.queue)
                )
            ),
            true
          ),
          (follower) =>
            Stream.fromQueue(follower.queue).pipe(
              Stream.mapEffect((note) =>
                note === INTERRUPTED || follower.behind
                  ? Effect.fail(
                      new JobStoreUnavailable({
                        operation: "follow",
                        detail:
                          note === INTERRUPTED
                            ? "the change feed lost its database connection and may have missed changes; list the jobs again"
                            : "the change feed fell behind and dropped changes; list the jobs again"
                      })
                    )
                  : Effect.map(lookupNow(note.tenantId, note.id), (lookup) =>
                      lookup._tag === "Found" ? [lookup.job] : []
                    )
              ),
              Stream.flattenIterables,
              Stream.filter((job) => tenantId !== "" && job.tenantId === tenantId)
            )
        ),

      awaitWork: (tenantId) => wanted(work.awaitWork(tenantId), false)
    }
    // Segment jobs (issue 30): reads carry segments, the segment operations and the session-bound
    // claim (segments.ts).
    return withPostgresSegments(sql, toRow, store, boundReport)
  })

/**
 * Node sessions as rows of `node_sessions`, shared by every replica. Each operation is one call
 * of a migration-8 function that tells row-level security (migration 6) whose sessions it may see
 * and runs the statement: the caller's tenant's, or every tenant's for maintenance (the session
 * lookup behind seed 000 §5.5.4's answers, the live list, the outage bridge, the prune).
 */
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
     * running (`svc_clock_tick`).
     */
    const bridgeOutage = (now: number) =>
      Effect.flatMap(Ref.get(lastTick), (last) =>
        now - last < tickEvery
          ? Effect.void
          : query("clock", () => sql`SELECT svc_clock_tick(${now}, ${outageThreshold})`).pipe(
              Effect.zipRight(Ref.set(lastTick, now))
            )
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
            () => sql`SELECT svc_session_register(${tenantId}, ${nodeId}, ${info.name}, ${info.slots}, ${info.version},
              ${now}, ${now + settings.ttlMillis}, ${info.scoresSegments === true})`
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
                    () =>
                      sql`SELECT svc_session_heartbeat(${tenantId}, ${nodeId}, ${now}, ${now + settings.ttlMillis}) AS live`
                  )
                ),
                ([row]) => row?.["live"] === true
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
                () => sql`SELECT tenant_id, expires_at, scores_segments FROM svc_session_state(${nodeId})`
              )
              if (row === undefined) return { _tag: "NotLive", tenantId: undefined, since: bootTime } as SessionState
              const tenantId = String(row["tenant_id"])
              const expires = Number(row["expires_at"])
              return now < expires
                ? ({ _tag: "Live", tenantId, scoresSegments: row["scores_segments"] === true } as const)
                : ({ _tag: "NotLive", tenantId, since: expires } as const)
            }),

      live: Effect.flatMap(Clock.currentTimeMillis, (now) =>
        Effect.map(
          Effect.zipRight(
            bridgeOutage(now),
            query(
              "sessions",
              () => sql`SELECT node_id, tenant_id, name, slots, version FROM svc_sessions_live(${now})
              ORDER BY registered_at, node_id`
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
                    FROM svc_sessions_of_tenant(${tenantId}) ORDER BY registered_at, node_id`
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
            query("prune", () => sql`SELECT svc_sessions_prune(${now - settings.requeueGraceMillis})`)
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
      const replicaId = crypto.randomUUID()
      const sql = yield* openPostgres(settings, replicaId)
      const store = yield* makePostgresJobStore(sql, replicaId)
      const sessions = yield* makePostgresNodeSessions(sql, sessionSettings)
      return Context.make(JobStore, store).pipe(Context.add(NodeSessions, sessions))
    })
  )
