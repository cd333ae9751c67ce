/**
 * What only the PostgreSQL store has: several controller replicas on one database (claims,
 * sessions, change feed, sweep lock, fencing), migrations under an advisory lock, configuration,
 * and the database going away and coming back. The store contract shared with SQLite is in
 * service.test.ts and isolation.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import {
  Chunk,
  Clock,
  ConfigProvider,
  Effect,
  Either,
  Exit,
  Fiber,
  Layer,
  Option,
  Schedule,
  Scope,
  Stream,
  TestClock,
  TestServices
} from "effect"
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import postgres from "postgres"
import { storeSelection } from "./config.ts"
import { migratePostgres, PG_MIGRATIONS } from "./postgres/migrations.ts"
import { postgresBackend } from "./postgres/store.ts"
import { JobService, type JobServiceShape } from "./service.ts"
import { DEFAULT_SESSION_SETTINGS, type SessionSettings } from "./sessions.ts"
import { ANY_MEMORY, JobStore } from "./store.ts"
import { type Backend, postgresBackendOn } from "../../test/support/job-store/backends.ts"
import { type PostgresServer, postgresAvailable, startPostgres } from "../../local/postgres-server.ts"
import {
  ladderRequest,
  node,
  reportBy,
  reportOldLadderProgress,
  request,
  result,
  serviceLayerAt,
  writer
} from "../../test/support/job-store/support.ts"

const info = { name: "host", slots: 1, version: "t" }

describe.skipIf(!postgresAvailable())("PostgreSQL job store", () => {
  let server: PostgresServer
  let admin: postgres.Sql
  let databases = 0
  beforeAll(async () => {
    server = await startPostgres()
    admin = postgres(server.adminUrl("postgres"), { max: 1, onnotice: () => undefined })
  }, 120_000)
  afterAll(async () => {
    await admin.end({ timeout: 1 })
    server.stop()
  })

  const freshDatabase = async (): Promise<{ readonly name: string; readonly backend: Backend }> => {
    const name = `pg_${++databases}`
    await server.createDatabase(name)
    return { name, backend: postgresBackendOn(server, name, 8) }
  }

  /** A controller replica on the database, alive until the test's scope closes. */
  const replica = (backend: Backend) =>
    Effect.flatMap(Scope.Scope, (scope) =>
      Effect.map(Layer.buildWithScope(serviceLayerAt(backend), scope), (context) =>
        context.unsafeMap.get(JobService.key)
      )
    ) as Effect.Effect<JobServiceShape, never, Scope.Scope>

  it.live("two replicas starting at once migrate once; a newer schema is refused naming SVC_STORE_URL", () =>
    Effect.gen(function* () {
      const { name, backend } = yield* Effect.promise(freshDatabase)
      yield* Effect.scoped(Effect.all([replica(backend), replica(backend)], { concurrency: 2 }))
      const db = postgres(server.adminUrl(name), { max: 1 })
      const ledger = yield* Effect.promise(() => db`SELECT version FROM schema_migrations ORDER BY version`)
      expect(ledger.map((row) => row["version"])).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15])
      yield* Effect.promise(() => db`INSERT INTO schema_migrations VALUES (99, 'future', 0)`)
      yield* Effect.promise(() => db.end())
      const refused = yield* Effect.flip(Effect.scoped(Layer.build(backend.layer(DEFAULT_SESSION_SETTINGS))))
      expect(refused.message).toContain("SVC_STORE_URL")
      expect(refused.message).toContain("schema version 99")
      expect(refused.message).not.toContain(server.password)
    })
  )

  it.live("a database of the previous schema (v4) upgrades in place: its jobs read, ladders report per rendition", () =>
    Effect.gen(function* () {
      const { name, backend } = yield* Effect.promise(freshDatabase)
      // The database as the previous controller left it (as the controller's role): migrations
      // 1 to 4 and a running ladder job whose node is gone.
      const db = postgres(server.url(name), { password: server.password, max: 1, onnotice: () => undefined })
      const applied = yield* Effect.promise(() =>
        migratePostgres(
          db,
          PG_MIGRATIONS.filter((migration) => migration.version <= 4),
          0
        )
      )
      expect(applied).toEqual([1, 2, 3, 4])
      const ladder = ladderRequest(["low", "high"])
      yield* Effect.promise(() =>
        db.begin(async (tx) => {
          await tx`SELECT set_config('svc.tenant', 'a', true)`
          await tx`INSERT INTO jobs (id, tenant_id, state, request, created_at, started_at, node_id, frames_done, fence)
            VALUES ('old-ladder', 'a', 'running', ${JSON.stringify({ ladder })}, 1, 2, 'gone-node', 3, 1)`
        })
      )
      const reported = yield* Effect.scoped(
        Effect.gen(function* () {
          const jobs = yield* replica(backend)
          expect(yield* jobs.get(writer("a"), "old-ladder")).toMatchObject({
            state: "running",
            framesDone: 3,
            renditionProgress: []
          })
          return yield* reportOldLadderProgress(jobs, [
            { label: "high", framesDone: 4 },
            { label: "low", framesDone: 3 }
          ])
        })
      )
      expect(reported.renditionProgress).toEqual([
        { label: "low", framesDone: 3 },
        { label: "high", framesDone: 4 }
      ])
      const ledger = yield* Effect.promise(() => db`SELECT max(version) AS v FROM schema_migrations`)
      expect(ledger[0]?.["v"]).toBe(15)
      yield* Effect.promise(() => db.end({ timeout: 1 }))
      // Kept: another replica reads it back.
      const reread = yield* Effect.scoped(
        Effect.flatMap(replica(backend), (jobs) => jobs.get(writer("a"), "old-ladder"))
      )
      expect(reread.renditionProgress).toEqual(reported.renditionProgress)
    })
  )

  it.live("a wrong password (SVC_STORE_PASSWORD_FILE) stops start-up with a message that names the store", () =>
    Effect.gen(function* () {
      const { name } = yield* Effect.promise(freshDatabase)
      const wrong = join(server.dir, "wrong-password")
      writeFileSync(wrong, "not-the-password\n")
      const refused = yield* Effect.flip(
        Effect.scoped(
          Layer.build(
            postgresBackend(
              { url: server.url(name), passwordFile: Option.some(wrong), poolMax: 1 },
              DEFAULT_SESSION_SETTINGS
            )
          )
        )
      )
      expect(refused.message).toContain("SVC_STORE_URL")
      expect(refused.message).toMatch(/password authentication failed/)
      const missing = yield* Effect.flip(
        Effect.scoped(
          Layer.build(
            postgresBackend(
              { url: server.url(name), passwordFile: Option.some(join(server.dir, "nope")), poolMax: 1 },
              DEFAULT_SESSION_SETTINGS
            )
          )
        )
      )
      expect(missing.message).toContain("SVC_STORE_PASSWORD_FILE")
    })
  )

  it.live("row-level security: the controller's own role sees only the tenant its transaction names", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const { name, backend } = yield* Effect.promise(freshDatabase)
        const jobs = yield* replica(backend)
        yield* jobs.submit(writer("a"), request("a"))
        yield* jobs.submit(writer("b"), request("b"))
        // The store's role (`svc`, the table owner, not a superuser), talking to the table directly.
        const own = postgres(server.url(name), { max: 1, password: server.password, onnotice: () => undefined })
        yield* Effect.addFinalizer(() => Effect.promise(() => own.end({ timeout: 1 })))
        const count = (rows: ReadonlyArray<Record<string, unknown>>) => Number(rows[0]?.["n"])
        expect(count(yield* Effect.promise(() => own`SELECT count(*) AS n FROM jobs`))).toBe(0)
        const asA = yield* Effect.promise(() =>
          own.begin(async (tx) => {
            await tx`SELECT set_config('svc.tenant', 'a', true)`
            return tx`SELECT tenant_id FROM jobs WHERE tenant_id <> 'nobody'`
          })
        )
        expect(asA.map((row) => row["tenant_id"])).toEqual(["a"])
        const smuggled = yield* Effect.either(
          Effect.tryPromise(() =>
            own.begin(async (tx) => {
              await tx`SELECT set_config('svc.tenant', 'a', true)`
              return tx`INSERT INTO jobs (id, tenant_id, state, request, created_at) VALUES ('x', 'b', 'pending', '{}', 0)`
            })
          )
        )
        expect(Either.isLeft(smuggled) && String(smuggled.left.error)).toMatch(/row-level security/)
        const admin = postgres(server.adminUrl(name), { max: 1, onnotice: () => undefined })
        expect(count(yield* Effect.promise(() => admin`SELECT count(*) AS n FROM jobs`))).toBe(2)
        yield* Effect.promise(() => admin.end({ timeout: 1 }))
      })
    )
  )

  it.live("row-level security on job_segments (migration 7): a transaction sees and writes only its tenant's", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const { name, backend } = yield* Effect.promise(freshDatabase)
        const jobs = yield* replica(backend)
        const a = yield* jobs.submit(writer("a"), request("a"))
        const b = yield* jobs.submit(writer("b"), request("b"))
        const admin = postgres(server.adminUrl(name), { max: 1, onnotice: () => undefined })
        yield* Effect.addFinalizer(() => Effect.promise(() => admin.end({ timeout: 1 })))
        yield* Effect.promise(
          () => admin`INSERT INTO job_segments (tenant_id, job_id, idx, first_frame, frame_count, state)
            VALUES ('a', ${a.id}, 0, 0, 24, 'pending'), ('b', ${b.id}, 0, 0, 24, 'pending')`
        )
        const own = postgres(server.url(name), { max: 1, password: server.password, onnotice: () => undefined })
        yield* Effect.addFinalizer(() => Effect.promise(() => own.end({ timeout: 1 })))
        const asA = yield* Effect.promise(() =>
          own.begin(async (tx) => {
            await tx`SELECT set_config('svc.tenant', 'a', true)`
            return tx`SELECT tenant_id FROM job_segments`
          })
        )
        expect(asA.map((row) => row["tenant_id"])).toEqual(["a"])
        const smuggled = yield* Effect.either(
          Effect.tryPromise(() =>
            own.begin(async (tx) => {
              await tx`SELECT set_config('svc.tenant', 'a', true)`
              return tx`INSERT INTO job_segments (tenant_id, job_id, idx, first_frame, frame_count, state)
                VALUES ('b', ${b.id}, 1, 24, 24, 'pending')`
            })
          )
        )
        expect(Either.isLeft(smuggled) && String(smuggled.left.error)).toMatch(/row-level security/)
      })
    )
  )

  it.live(
    "row-level security on every tenant table (migration 6): node sessions as jobs, seed 000 5.5.4's answers kept",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const { name, backend } = yield* Effect.promise(freshDatabase)
          const jobs = yield* replica(backend)
          const { nodeId: nodeA } = yield* jobs.register(node("a"), info)
          yield* jobs.register(node("b"), info)
          const admin = postgres(server.adminUrl(name), { max: 1, onnotice: () => undefined })
          yield* Effect.addFinalizer(() => Effect.promise(() => admin.end({ timeout: 1 })))
          // Every table with a tenant column has row-level security, forced on its owner too.
          const tables = yield* Effect.promise(
            () => admin`SELECT c.relname, c.relrowsecurity, c.relforcerowsecurity FROM pg_class c
              JOIN information_schema.columns k ON k.table_name = c.relname AND k.column_name = 'tenant_id'
              WHERE c.relkind = 'r' AND k.table_schema = 'public' ORDER BY c.relname`
          )
          expect(tables.map((row) => [row["relname"], row["relrowsecurity"], row["relforcerowsecurity"]])).toEqual([
            ["job_segments", true, true],
            ["jobs", true, true],
            ["node_sessions", true, true]
          ])
          // The store's own role sees a tenant's sessions only in a transaction naming that tenant.
          const own = postgres(server.url(name), { max: 1, password: server.password, onnotice: () => undefined })
          yield* Effect.addFinalizer(() => Effect.promise(() => own.end({ timeout: 1 })))
          const sessionsSeen = (tenant: string | undefined) =>
            Effect.promise(() =>
              own.begin(async (tx) => {
                if (tenant !== undefined) await tx`SELECT set_config('svc.tenant', ${tenant}, true)`
                return tx`SELECT tenant_id FROM node_sessions ORDER BY tenant_id`
              })
            ).pipe(Effect.map((rows) => rows.map((row) => row["tenant_id"])))
          expect(yield* sessionsSeen(undefined)).toEqual([])
          expect(yield* sessionsSeen("a")).toEqual(["a"])
          const smuggled = yield* Effect.either(
            Effect.tryPromise(() =>
              own.begin(async (tx) => {
                await tx`SELECT set_config('svc.tenant', 'a', true)`
                return tx`INSERT INTO node_sessions VALUES ('x', 'b', 'n', 1, 'v', 0, 0, 0)`
              })
            )
          )
          expect(Either.isLeft(smuggled) && String(smuggled.left.error)).toMatch(/row-level security/)
          // Seed 000 5.5.4: another tenant's session is refused as before (ok=false, PERMISSION_DENIED).
          expect(yield* jobs.heartbeat(node("b"), nodeA, [])).toBe(false)
          const pulled = yield* Effect.flip(jobs.pullWork(node("b"), nodeA, 1))
          expect(pulled._tag).toBe("PermissionDenied")
          expect(yield* jobs.heartbeat(node("a"), nodeA, [])).toBe(true)
        })
      )
  )

  it.effect(
    "SVC_STORE_URL selects PostgreSQL; unset keeps SQLite at SVC_STORE_PATH; a non-postgres URL is refused",
    () =>
      Effect.gen(function* () {
        const read = (env: Record<string, string>) =>
          Effect.withConfigProvider(storeSelection, ConfigProvider.fromMap(new Map(Object.entries(env))))
        expect(yield* read({ SVC_STORE_PATH: "/tmp/x.sqlite" })).toEqual({ _tag: "Sqlite", path: "/tmp/x.sqlite" })
        expect(
          yield* read({
            SVC_STORE_URL: "postgres://svc@db:5432/svc?sslmode=verify-full",
            SVC_STORE_PASSWORD_FILE: "/p"
          })
        ).toEqual({
          _tag: "Postgres",
          settings: {
            url: "postgres://svc@db:5432/svc?sslmode=verify-full",
            passwordFile: Option.some("/p"),
            poolMax: 10
          }
        })
        const refused = yield* Effect.flip(read({ SVC_STORE_URL: "mysql://x" }))
        expect(String(refused)).toContain("SVC_STORE_URL")
        const pool = yield* Effect.flip(read({ SVC_STORE_URL: "postgres://x/y", SVC_STORE_POOL_MAX: "0" }))
        expect(String(pool)).toContain("SVC_STORE_POOL_MAX")
      })
  )

  it.live("two replicas: claims never hand a job out twice; sessions, reports and follows work across replicas", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const { backend } = yield* Effect.promise(freshDatabase)
        const [one, two] = yield* Effect.all([replica(backend), replica(backend)])
        // A follower on replica two sees what replica one commits.
        const pull = yield* Stream.toPull(Stream.rechunk(two.stream(writer("a"), { follow: true }), 1))
        const submitted = yield* Effect.forEach(Array.from({ length: 60 }), (_, i) =>
          (i % 2 === 0 ? one : two).submit(writer("a"), request(`j${i}`))
        )
        const seen = new Set<string>()
        while (seen.size < submitted.length) {
          for (const job of Chunk.toReadonlyArray(yield* pull)) seen.add(job.id)
        }
        // Nodes registered on one replica pull through both, all at once.
        const nodes = yield* Effect.forEach([one, two, one, two], (replicaOf) =>
          Effect.map(replicaOf.register(node("a"), info), (registration) => registration.nodeId)
        )
        const pulls = yield* Effect.all(
          Array.from({ length: 40 }, (_, i) => {
            const nodeId = nodes[i % nodes.length] ?? ""
            return (i % 2 === 0 ? two : one).pullWork(node("a"), nodeId, 3)
          }),
          { concurrency: "unbounded" }
        )
        const handedOut = pulls.flat().map((job) => job.id)
        expect(new Set(handedOut).size).toBe(handedOut.length)
        expect(new Set(handedOut)).toEqual(new Set(submitted.map((job) => job.id)))
        // Reports through the other replica than the pull; heartbeats through either.
        for (const job of pulls.flat()) {
          const via = job.nodeId === nodes[0] || job.nodeId === nodes[2] ? two : one
          const done = yield* via.reportResult(node("a"), job.nodeId ?? "", job.id, {
            final: true,
            result: result(80),
            framesDone: 2
          })
          expect(done.state).toBe("finished")
        }
        expect(yield* one.heartbeat(node("a"), nodes[1] ?? "", [])).toBe(true)
        expect((yield* two.gauges).jobsByState.finished).toBe(60)
        expect((yield* one.gauges).liveNodes).toBe(4)
      })
    )
  )

  it.live("two replicas: a node's segment capability holds on both, and a plan wakes long-polls on the other", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const { name, backend } = yield* Effect.promise(freshDatabase)
        const [one, two] = yield* Effect.all([replica(backend), replica(backend)])
        const segmentInfo = { ...info, scoresSegments: true }
        const planner = (yield* one.register(node("a"), segmentInfo)).nodeId
        const waiter = (yield* one.register(node("a"), segmentInfo)).nodeId
        const submitted = yield* one.submit(writer("a"), {
          ...request("title"),
          options: { per_frame: true, segment_frames: 24 }
        })
        // Registered on replica one, pulled through replica two: handed out as the job's plan.
        const [plan] = yield* two.pullWork(node("a"), planner, 1)
        expect([plan?.id, plan?.plan]).toEqual([submitted.id, true])
        // Another node long-polls on replica two; replica two listens once it waits.
        const waiting = yield* Effect.fork(two.pullWork(node("a"), waiter, 1, 20_000))
        const db = postgres(server.adminUrl(name), { max: 1, onnotice: () => undefined })
        yield* Effect.addFinalizer(() => Effect.promise(() => db.end({ timeout: 1 })))
        yield* Effect.repeat(
          Effect.promise(() => db`SELECT count(*) AS n FROM change_listeners`),
          { until: (rows) => Number(rows[0]?.["n"]) > 0, schedule: Schedule.spaced("20 millis") }
        )
        // The plan reported through replica one wakes it with a segment (its wait would end empty).
        yield* one.reportResult(node("a"), planner, submitted.id, { final: false, framesDone: 0, planFrames: 48 })
        const [segment] = yield* Fiber.join(waiting)
        expect([segment?.id, segment?.segment?.index, segment?.plan]).toEqual([submitted.id, 0, false])
        // A node that did not declare it gets whole jobs, on either replica.
        const whole = (yield* two.register(node("a"), info)).nodeId
        const other = yield* one.submit(writer("a"), { ...request("other"), options: { segment_frames: 24 } })
        const [handed] = yield* one.pullWork(node("a"), whole, 1)
        expect([handed?.id, handed?.plan, handed?.segment]).toEqual([other.id, false, undefined])
      })
    )
  )

  it.live("a replica with only long-polls is notified of pending jobs only; a follower gets every change", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const { name, backend } = yield* Effect.promise(freshDatabase)
        const [one, two] = yield* Effect.all([replica(backend), replica(backend)])
        const db = postgres(server.adminUrl(name), { max: 2, onnotice: () => undefined })
        yield* Effect.addFinalizer(() => Effect.promise(() => db.end({ timeout: 1 })))
        // Every note on the channel, as a state per line; "marker" is this test's own.
        const states: Array<string> = []
        yield* Effect.promise(() =>
          db.listen("svc_jobs", (payload) => {
            for (const line of payload.split("\n"))
              if (line !== "") states.push(line === "marker" ? line : String(JSON.parse(line)[2]))
          })
        )
        // Notes arrive in commit order: once the marker is in, every earlier note is (a replica's
        // "wake" note, sent when it has read a note, may come after it: it stays for the next call).
        const notedSoFar = Effect.gen(function* () {
          yield* Effect.promise(() => db`SELECT pg_notify('svc_jobs', 'marker')`)
          yield* Effect.repeat(
            Effect.sync(() => states.indexOf("marker")),
            { until: (at) => at >= 0, schedule: Schedule.spaced("10 millis") }
          )
          return states.splice(0, states.indexOf("marker") + 1).slice(0, -1)
        })
        const waiter = (yield* two.register(node("a"), info)).nodeId
        const waiting = yield* Effect.fork(two.pullWork(node("a"), waiter, 1, 20_000))
        yield* Effect.repeat(
          Effect.promise(() => db`SELECT count(*) AS n FROM change_listeners`),
          { until: (rows) => Number(rows[0]?.["n"]) > 0, schedule: Schedule.spaced("20 millis") }
        )
        // Replica one's submit wakes the long-poll on replica two; its claim and the report are not sent.
        const submitted = yield* one.submit(writer("a"), request("x"))
        const [claimed] = yield* Fiber.join(waiting)
        expect(claimed?.id).toBe(submitted.id)
        yield* one.reportResult(node("a"), waiter, submitted.id, { final: true, result: result(80), framesDone: 2 })
        expect(yield* notedSoFar).toEqual(["pending"])
        // A follower on replica one asks for every change; it sees the next job through to its end.
        const pull = yield* Stream.toPull(Stream.rechunk(one.stream(writer("a"), { follow: true }), 1))
        // Following once its listing (the first job) comes.
        expect(Chunk.toReadonlyArray(yield* pull).map((job) => job.id)).toEqual([submitted.id])
        const next = yield* two.submit(writer("a"), request("y"))
        const [again] = yield* two.pullWork(node("a"), waiter, 1)
        expect(again?.id).toBe(next.id)
        yield* two.reportResult(node("a"), waiter, next.id, { final: true, result: result(81), framesDone: 2 })
        // (Less replica two's "wake": it had no waiting node for the job submitted through it, and
        // handed the wake-up on at a time of its own.)
        expect((yield* notedSoFar).filter((state) => state !== "wake")).toEqual(["pending", "running", "finished"])
        const followed: Array<string> = []
        while (!followed.includes("finished"))
          for (const job of Chunk.toReadonlyArray(yield* pull)) if (job.id === next.id) followed.push(job.state)
        expect(followed.at(-1)).toBe("finished")
      })
    )
  )

  it.live('a hand-back sends the "memory" wake-up only when a job or segment with a need went back to pending', () =>
    Effect.scoped(
      Effect.gen(function* () {
        const { name, backend } = yield* Effect.promise(freshDatabase)
        const jobs = yield* replica(backend)
        const db = postgres(server.adminUrl(name), { max: 2, onnotice: () => undefined })
        yield* Effect.addFinalizer(() => Effect.promise(() => db.end({ timeout: 1 })))
        const notes: Array<string> = []
        yield* Effect.promise(() =>
          db.listen("svc_jobs", (payload) => {
            for (const line of payload.split("\n")) if (line !== "") notes.push(line)
          })
        )
        // Notes arrive in commit order: once the marker is in, every earlier note is.
        const memoryNotesSoFar = Effect.gen(function* () {
          yield* Effect.promise(() => db`SELECT pg_notify('svc_jobs', 'marker')`)
          yield* Effect.repeat(
            Effect.sync(() => notes.indexOf("marker")),
            { until: (at) => at >= 0, schedule: Schedule.spaced("10 millis") }
          )
          return notes
            .splice(0, notes.indexOf("marker") + 1)
            .filter((line) => line !== "marker" && JSON.parse(line)[2] === "memory").length
        })
        const nodeId = (yield* jobs.register(node("a"), { ...info, scoresSegments: true })).nodeId
        // Needs named, but nothing of them runs on the node: nothing re-queued, nobody woken.
        expect(
          yield* jobs.heartbeat(node("a"), nodeId, [], true, [
            { jobId: "gone", bytes: 100 },
            { jobId: "gone", bytes: 100, segment: 0 }
          ])
        ).toBe(true)
        expect(yield* memoryNotesSoFar).toBe(0)
        const whole = yield* jobs.submit(writer("a"), request("whole"))
        expect((yield* jobs.pullWork(node("a"), nodeId, 1)).map((job) => job.id)).toEqual([whole.id])
        yield* jobs.heartbeat(node("a"), nodeId, [], true, [{ jobId: whole.id, bytes: 100 }])
        expect(yield* memoryNotesSoFar).toBe(1)
        // A segment handed back with its need wakes them too (the whole job, needing 100, is skipped).
        const scarce = { freeBytes: 50, budgetBytes: 200 }
        const title = yield* jobs.submit(writer("a"), { ...request("title"), options: { segment_frames: 24 } })
        const [plan] = yield* jobs.pullWork(node("a"), nodeId, 1, 0, scarce)
        expect([plan?.id, plan?.plan]).toEqual([title.id, true])
        yield* jobs.reportResult(node("a"), nodeId, title.id, { final: false, framesDone: 0, planFrames: 24 })
        const [segment] = yield* jobs.pullWork(node("a"), nodeId, 1, 0, scarce)
        expect([segment?.id, segment?.segment?.index]).toEqual([title.id, 0])
        yield* jobs.heartbeat(node("a"), nodeId, [], true, [{ jobId: title.id, bytes: 100, segment: 0 }])
        expect(yield* memoryNotesSoFar).toBe(1)
        expect((yield* jobs.get(writer("a"), title.id)).segments[0]).toMatchObject({ state: "pending", attempts: 0 })
      })
    )
  )

  it.live("two replicas: the replica that made a job pending wakes one node for it, or hands the wake-up on", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const { name, backend } = yield* Effect.promise(freshDatabase)
        const [one, two] = yield* Effect.all([replica(backend), replica(backend)])
        const db = postgres(server.adminUrl(name), { max: 2, onnotice: () => undefined })
        yield* Effect.addFinalizer(() => Effect.promise(() => db.end({ timeout: 1 })))
        // Every note on the channel as [state, origin]; "marker" is this test's own.
        const notes: Array<readonly [string, string]> = []
        yield* Effect.promise(() =>
          db.listen("svc_jobs", (payload) => {
            for (const line of payload.split("\n")) {
              if (line === "marker") notes.push(["marker", ""])
              else if (line !== "") {
                const parsed = JSON.parse(line)
                notes.push([String(parsed[2]), String(parsed[4])])
              }
            }
          })
        )
        const notedSoFar = Effect.gen(function* () {
          yield* Effect.promise(() => db`SELECT pg_notify('svc_jobs', 'marker')`)
          yield* Effect.repeat(
            Effect.sync(() => notes.findIndex(([state]) => state === "marker")),
            { until: (at) => at >= 0, schedule: Schedule.spaced("10 millis") }
          )
          return notes.splice(0, notes.findIndex(([state]) => state === "marker") + 1).slice(0, -1)
        })
        // A node waiting on each replica (a wait ends empty if nothing wakes it).
        const [first, second] = yield* Effect.forEach([one, two], (replicaOf) =>
          Effect.map(replicaOf.register(node("a"), info), (registration) => registration.nodeId)
        )
        const onOne = yield* Effect.fork(one.pullWork(node("a"), first ?? "", 1, 15_000))
        const onTwo = yield* Effect.fork(two.pullWork(node("a"), second ?? "", 1, 15_000))
        yield* Effect.repeat(
          Effect.promise(() => db`SELECT count(*) AS n FROM change_listeners`),
          { until: (rows) => Number(rows[0]?.["n"]) === 2, schedule: Schedule.spaced("20 millis") }
        )
        // Submitted through replica one: its note names replica one, whose waiting node gets it.
        const handed = yield* one.submit(writer("a"), request("x"))
        expect((yield* Fiber.join(onOne)).map((job) => job.id)).toEqual([handed.id])
        const [pending] = yield* notedSoFar
        const replicas = (yield* Effect.promise(() => db`SELECT replica FROM change_listeners`)).map((row) =>
          String(row["replica"])
        )
        expect(pending?.[0]).toBe("pending")
        expect(replicas).toContain(pending?.[1])
        const oneId = pending?.[1] ?? ""
        // Replica one has no waiting node left: it hands the next job's wake-up on to replica two.
        const next = yield* one.submit(writer("a"), request("y"))
        expect((yield* Fiber.join(onTwo)).map((job) => job.id)).toEqual([next.id])
        expect(yield* notedSoFar).toEqual([
          ["pending", oneId],
          ["wake", oneId]
        ])
      })
    )
  )

  it.live("two replicas: as many jobs as waiting nodes reach every one of them, whichever replica submits", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const { backend } = yield* Effect.promise(freshDatabase)
        const [one, two] = yield* Effect.all([replica(backend), replica(backend)])
        // Three nodes on replica one, one on replica two. A wait ends empty when nothing wakes it,
        // so a wake-up lost (or left to one replica without a waiting node) shows as an empty answer.
        const placed = [one, one, one, two]
        const nodes = yield* Effect.forEach(placed, (replicaOf) =>
          Effect.map(replicaOf.register(node("a"), info), (registration) => registration.nodeId)
        )
        // Each round, every node pulls one job and holds it; as many jobs are submitted through
        // one replica (alternating), one by one: the submitting replica wakes its own waiting
        // nodes and hands on the wake-ups of the jobs it has no waiting node for.
        for (const [round, submitter] of [two, one, two, one].entries()) {
          const pulls = yield* Effect.forEach(nodes, (nodeId, n) =>
            Effect.fork((placed[n] ?? one).pullWork(node("a"), nodeId, 1, 15_000))
          )
          for (let i = 0; i < nodes.length; i++) yield* submitter.submit(writer("a"), request(`r${round}-${i}`))
          const handed = yield* Effect.forEach(pulls, (pull) => Fiber.join(pull))
          expect(handed.map((jobs) => jobs.length)).toEqual(nodes.map(() => 1))
          for (const [n, [job]] of handed.entries())
            yield* (placed[n] ?? one).reportResult(node("a"), nodes[n] ?? "", job?.id ?? "", {
              final: true,
              result: result(80),
              framesDone: 2
            })
        }
        expect((yield* one.gauges).jobsByState.finished).toBe(4 * nodes.length)
      })
    )
  )

  it.live("fencing: a report is decided on the lease its transaction holds; a re-queue or take-over moves it", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const { backend } = yield* Effect.promise(freshDatabase)
        const store = yield* Effect.map(
          Effect.flatMap(Scope.Scope, (scope) => Layer.buildWithScope(backend.layer(DEFAULT_SESSION_SETTINGS), scope)),
          (context) => context.unsafeMap.get(JobStore.key) as typeof JobStore.Service
        )
        yield* store.insert({ id: "j1", tenantId: "a", request: request(), submittedBy: undefined })
        const [first] = yield* store.claim("a", "n1", 1, ANY_MEMORY)
        expect(first?.fence).toBe(1)
        yield* store.requeueNode("a", "n1")
        // n1's report on its old lease finds the job pending: refused, nothing changes.
        const refused = yield* Effect.flip(store.report("a", "j1", reportBy("n1", 2, ["n1"])))
        expect(refused.message).toBe('job "j1" is not assigned to node "n1"')
        const [again] = yield* store.claim("a", "n1", 1, ANY_MEMORY)
        expect(again?.fence).toBe(3)
        const applied = yield* store.report("a", "j1", reportBy("n1", 2, ["n1"]))
        expect([applied.written, applied.job.framesDone, applied.job.fence]).toEqual([true, 2, 3])
        // A take-over (n1 no longer live) moves the lease: the old holder's next report is refused.
        const taken = yield* store.report("a", "j1", reportBy("n2", 3, ["n2"]))
        expect([taken.job.nodeId, taken.job.fence]).toEqual(["n2", 4])
        expect((yield* Effect.flip(store.report("a", "j1", reportBy("n1", 4, ["n1", "n2"])))).message).toBe(
          'job "j1" is not assigned to node "n1"'
        )
      })
    )
  )

  it.live("a report waits for the job's row lock and is decided on the state committed under it (cancel wins)", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const { name, backend } = yield* Effect.promise(freshDatabase)
        const store = yield* Effect.map(
          Effect.flatMap(Scope.Scope, (scope) => Layer.buildWithScope(backend.layer(DEFAULT_SESSION_SETTINGS), scope)),
          (context) => context.unsafeMap.get(JobStore.key) as typeof JobStore.Service
        )
        yield* store.insert({ id: "j1", tenantId: "a", request: request(), submittedBy: undefined })
        yield* store.claim("a", "n1", 1, ANY_MEMORY)
        const db = postgres(server.adminUrl(name), { max: 2, onnotice: () => undefined })
        yield* Effect.addFinalizer(() => Effect.promise(() => db.end({ timeout: 1 })))
        // Another transaction holds the row while the report starts, then cancels the job and commits.
        let release: () => void = () => undefined
        const released = new Promise<void>((resolve) => {
          release = resolve
        })
        let locked: () => void = () => undefined
        const holding = new Promise<void>((resolve) => {
          locked = resolve
        })
        const holder = db.begin(async (tx) => {
          await tx`SELECT id FROM jobs WHERE id = 'j1' FOR UPDATE`
          locked()
          await released
          await tx`UPDATE jobs SET state = 'cancelled', finished_at = 1 WHERE id = 'j1'`
        })
        yield* Effect.promise(() => holding)
        const report = yield* Effect.fork(store.report("a", "j1", reportBy("n1", 2, ["n1"])))
        // Wait until the report is blocked on the row lock (its read is inside its transaction).
        yield* Effect.repeat(
          Effect.promise(() => db`SELECT count(*) AS n FROM pg_locks WHERE NOT granted`),
          { until: (rows) => Number(rows[0]?.["n"]) > 0, schedule: Schedule.spaced("20 millis") }
        )
        release()
        yield* Effect.promise(() => holder)
        const outcome = yield* Fiber.join(report)
        expect([outcome.written, outcome.job.state, outcome.job.framesDone]).toEqual([false, "cancelled", 0])
        expect(yield* store.lookup("a", "j1")).toEqual({ _tag: "Found", job: outcome.job })
      })
    )
  )

  // Migration 14: on a queue filled faster than autovacuum analyses it, the planner believed the
  // tenant had a handful of jobs and scanned all of them for a report of 4.
  it.live("a report reads and writes only the jobs it names, however many jobs the tenant has", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const { name } = yield* Effect.promise(freshDatabase)
        const db = postgres(server.url(name), { max: 1, password: server.password, onnotice: () => undefined })
        yield* Effect.addFinalizer(() => Effect.promise(() => db.end({ timeout: 1 })))
        yield* Effect.promise(() => migratePostgres(db, PG_MIGRATIONS, 1))
        const text = JSON.stringify(request())
        yield* Effect.promise(() =>
          db`SELECT count(*) FROM generate_series(1, 400) AS n,
          LATERAL svc_insert('acme', 'job-' || n, ${text}, 1, NULL, NULL)`.then(() => undefined)
        )
        const nodeId = "node-1"
        yield* Effect.promise(
          () => db`SELECT svc_session_register('acme', ${nodeId}, 'n', 4, 'v', 1, ${Date.now() + 60_000}, false)`
        )
        const [, ...claimed] = yield* Effect.promise(
          () => db`SELECT * FROM svc_claim_units('acme', ${nodeId}, 2, 4, true, 0, 0)`
        )
        const jobs = claimed.map((row) => row["job"] as Record<string, unknown>)
        expect(jobs).toHaveLength(4)
        // Tuples the table's indexes and scans handed out so far (this backend's counters flushed first).
        const tuplesRead = () =>
          Effect.promise(async () => {
            await db`SELECT pg_stat_force_next_flush()`
            await db`SELECT pg_stat_clear_snapshot()`
            const [row] = await db`SELECT
            (SELECT coalesce(sum(idx_tup_read), 0) FROM pg_stat_user_indexes WHERE relname = 'jobs')
            + (SELECT coalesce(sum(seq_tup_read), 0) FROM pg_stat_user_tables WHERE relname = 'jobs') AS n`
            return Number(row?.["n"])
          })
        const before = yield* tuplesRead()
        const ids = JSON.stringify(jobs.map((job) => job["id"]))
        const read = yield* Effect.promise(() => db`SELECT * FROM svc_report_read('acme', ${ids}, ${nodeId})`)
        expect(
          read
            .slice(1)
            .map((row) => (row["job"] as Record<string, unknown>)["id"])
            .sort()
        ).toEqual(jobs.map((job) => job["id"]).sort())
        const writes = JSON.stringify(
          jobs.map((job) => ({
            id: job["id"],
            expected_node: nodeId,
            expected_fence: job["fence"],
            expected_revision: job["revision"],
            node_id: nodeId,
            result: null,
            frames_done: 1,
            rendition_progress: null,
            state: null,
            error: null
          }))
        )
        const written = yield* Effect.promise(() => db`SELECT * FROM svc_report_write('acme', ${writes}, 3)`)
        expect(written.map((row) => Number(row["frames_done"]))).toEqual([1, 1, 1, 1])
        // 4 jobs read and 4 written: a handful of index tuples, not the tenant's 400 jobs.
        expect((yield* tuplesRead()) - before).toBeLessThan(40)
      })
    )
  )

  it.live("the re-queue sweep runs on one replica at a time (advisory lock)", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const { backend } = yield* Effect.promise(freshDatabase)
        const stores = yield* Effect.forEach([1, 2], () =>
          Effect.map(
            Effect.flatMap(Scope.Scope, (scope) =>
              Layer.buildWithScope(backend.layer(DEFAULT_SESSION_SETTINGS), scope)
            ),
            (context) => context.unsafeMap.get(JobStore.key) as typeof JobStore.Service
          )
        )
        const [a, b] = stores
        if (a === undefined || b === undefined) throw new Error("two stores expected")
        const inside = Effect.flatMap(b.exclusive(Effect.succeed("b ran")), (ran) => Effect.succeed(ran))
        const [outer, nested] = yield* Effect.flatMap(a.exclusive(inside), (result) =>
          Effect.succeed([Option.isSome(result), Option.flatten(result)] as const)
        )
        expect(outer).toBe(true)
        expect(nested).toEqual(Option.none())
        expect(yield* b.exclusive(Effect.succeed("b ran"))).toEqual(Option.some("b ran"))
      })
    )
  )

  /** A controller replica with its own session settings, alive until the test's scope closes. */
  const replicaWith = (backend: Backend, settings: SessionSettings) =>
    Effect.flatMap(Scope.Scope, (scope) =>
      Effect.map(Layer.buildWithScope(serviceLayerAt(backend, settings), scope), (context) =>
        context.unsafeMap.get(JobService.key)
      )
    ) as Effect.Effect<JobServiceShape, never, Scope.Scope>

  it.live(
    "connections dropped under load (backends terminated, the database restarted) are UNAVAILABLE, never an uncaught error; the store recovers",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const { name, backend } = yield* Effect.promise(freshDatabase)
          const jobs = yield* replica(backend)
          const store = yield* Effect.map(
            Effect.flatMap(Scope.Scope, (scope) =>
              Layer.buildWithScope(backend.layer(DEFAULT_SESSION_SETTINGS), scope)
            ),
            (context) => context.unsafeMap.get(JobStore.key) as typeof JobStore.Service
          )
          const { nodeId } = yield* jobs.register(node("a"), info)
          // Every kind of statement in flight at once: transactions (submit, list, claim, report),
          // plain statements (heartbeat), the sweep lease, and a LISTEN follower.
          const failures: Array<string> = []
          let answered = 0
          const record = <A, E extends { readonly _tag: string }>(call: Effect.Effect<A, E>) =>
            Effect.map(Effect.either(call), (outcome) => {
              if (Either.isLeft(outcome)) failures.push(outcome.left._tag)
              else answered += 1
            })
          const work = Effect.gen(function* () {
            yield* record(jobs.submit(writer("a"), request()))
            yield* record(jobs.list(writer("a"), { states: [], limit: 20 }))
            const pulled = yield* Effect.either(jobs.pullWork(node("a"), nodeId, 1))
            if (Either.isRight(pulled)) {
              for (const job of pulled.right) {
                yield* record(
                  jobs.reportResult(node("a"), nodeId, job.id, { final: true, result: result(80), framesDone: 2 })
                )
              }
            }
            yield* record(jobs.heartbeat(node("a"), nodeId, []))
            yield* record(store.exclusive(Effect.sleep("5 millis")))
          })
          const load = yield* Effect.fork(
            Effect.forEach([1, 2, 3, 4, 5, 6], () => Effect.forever(work), { concurrency: 6 })
          )
          const follow = yield* Effect.fork(
            Effect.forever(Effect.either(Stream.runDrain(jobs.stream(writer("a"), { follow: true }))))
          )
          const terminate = () =>
            admin`SELECT pg_terminate_backend(pid) FROM pg_stat_activity
              WHERE datname = ${name} AND pid <> pg_backend_pid()`
          for (let round = 0; round < 8; round++) {
            yield* Effect.sleep("150 millis")
            yield* Effect.promise(terminate)
          }
          server.stopOnly("immediate")
          const refused = yield* Effect.flip(jobs.submit(writer("a"), request()))
          expect(refused._tag).toBe("JobStoreUnavailable")
          yield* Effect.sleep("500 millis")
          server.start()
          // After the restart the store answers UNAVAILABLE until a connection is made again (on a
          // loaded host, just after crash recovery, a connection can take longer than the connect
          // timeout): callers retry, as the message says; any other error fails the test.
          const recovered = Schedule.intersect(Schedule.spaced("200 millis"), Schedule.recurs(100))
          const unavailable = (error: { readonly _tag: string }) => error._tag === "JobStoreUnavailable"
          const back = yield* Effect.retry(jobs.submit(writer("a"), request()), { schedule: recovered })
          const answeredBefore = answered
          yield* Effect.sleep("1 second")
          yield* Fiber.interrupt(load)
          yield* Fiber.interrupt(follow)
          const found = yield* Effect.retry(jobs.get(writer("a"), back.id), { schedule: recovered, while: unavailable })
          expect(found.id).toBe(back.id)
          // The drops did hit statements in flight, each came back as UNAVAILABLE, and the load
          // went on being answered after the restart.
          expect(failures.length).toBeGreaterThan(0)
          expect(new Set(failures)).toEqual(new Set(["JobStoreUnavailable"]))
          expect(answered).toBeGreaterThan(answeredBefore)
          expect((yield* store.health).ready).toBe(true)
        })
      ),
    120_000
  )

  // The replica's clock is a TestClock: it moves only when the test moves it, so a stall of this
  // process, or a call waiting out the client's reconnect back-off (up to 2 s after the database
  // returns, as long as the TTL here), cannot age the session. Only waits for the real database
  // (its restart) run on the live clock.
  it.effect("time the database was down does not count against node sessions: no re-queue, heartbeats accepted", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const { backend } = yield* Effect.promise(freshDatabase)
        const settings: SessionSettings = {
          heartbeatIntervalMillis: 500,
          ttlMillis: 2_000,
          requeueGraceMillis: 500,
          sweepIntervalMillis: 200
        }
        yield* TestClock.setTime(Date.now())
        const jobs = yield* replicaWith(backend, settings)
        const { nodeId } = yield* jobs.register(node("a"), info)
        const submitted = yield* jobs.submit(writer("a"), request())
        const [pulled] = yield* jobs.pullWork(node("a"), nodeId, 1)
        expect(pulled?.id).toBe(submitted.id)
        expect(yield* jobs.heartbeat(node("a"), nodeId, [submitted.id])).toBe(true)
        // Down for longer than the session TTL and the re-queue grace together; the background
        // sweep runs (and fails) meanwhile.
        server.stopOnly("fast")
        for (let step = 0; step < 35; step++) yield* TestClock.adjust("100 millis")
        server.start()
        yield* TestServices.provideLive(
          Effect.retry(jobs.get(writer("a"), submitted.id), {
            schedule: Schedule.intersect(Schedule.spaced("100 millis"), Schedule.recurs(200))
          })
        )
        expect(yield* jobs.requeueOrphans).toEqual([])
        expect(yield* jobs.heartbeat(node("a"), nodeId, [submitted.id])).toBe(true)
        const renewedAt = yield* Clock.currentTimeMillis
        expect((yield* jobs.get(writer("a"), submitted.id)).state).toBe("running")
        // A node that really stops heartbeating while the database is up still loses its jobs,
        // exactly once TTL and grace have passed since its last heartbeat (the clock moves in
        // steps shorter than the outage threshold, with a sweep each step, as a running replica's).
        let state = (yield* jobs.get(writer("a"), submitted.id)).state
        let silent = 0
        while (state !== "pending" && silent < 4_000) {
          yield* TestClock.adjust("100 millis")
          silent = (yield* Clock.currentTimeMillis) - renewedAt
          yield* jobs.requeueOrphans
          state = (yield* jobs.get(writer("a"), submitted.id)).state
        }
        expect(silent).toBeGreaterThanOrEqual(settings.ttlMillis + settings.requeueGraceMillis)
        expect(silent).toBeLessThanOrEqual(settings.ttlMillis + settings.requeueGraceMillis + 300)
        expect(state).toBe("pending")
        expect(yield* jobs.heartbeat(node("a"), nodeId, [submitted.id])).toBe(false)
      })
    )
  )

  it.live(
    "database down: calls fail UNAVAILABLE (JobStoreUnavailable), health says why; it recovers when the database is back",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const { backend } = yield* Effect.promise(freshDatabase)
          const jobs = yield* replica(backend)
          const store = yield* Effect.map(
            Effect.flatMap(Scope.Scope, (scope) =>
              Layer.buildWithScope(backend.layer(DEFAULT_SESSION_SETTINGS), scope)
            ),
            (context) => context.unsafeMap.get(JobStore.key) as typeof JobStore.Service
          )
          const before = yield* jobs.submit(writer("a"), request())
          const follower = yield* Stream.toPull(jobs.stream(writer("a"), { follow: true }))
          yield* follower // the listing
          server.stopOnly("fast")
          const refused = yield* Effect.exit(jobs.submit(writer("a"), request()))
          expect(Exit.isFailure(refused)).toBe(true)
          const failure = yield* Effect.flip(jobs.get(writer("a"), before.id))
          expect(failure._tag).toBe("JobStoreUnavailable")
          expect(failure.message).toMatch(/^job store unavailable: /)
          const health = yield* store.health
          expect(health.ready).toBe(false)
          server.start()
          // The pool reconnects on its own (with back-off) once the database answers again.
          const back = yield* Effect.retry(jobs.get(writer("a"), before.id), {
            schedule: Schedule.intersect(Schedule.spaced("200 millis"), Schedule.recurs(100))
          }).pipe(Effect.either)
          expect(Either.isRight(back) ? back.right.id : back.left.message).toBe(before.id)
          expect((yield* store.health).ready).toBe(true)
          // The follower may have missed changes while the LISTEN connection was down: it ends
          // UNAVAILABLE (so its caller lists again) once the feed is back, rather than going quiet.
          const ended = yield* Effect.flip(
            Effect.forever(follower).pipe(
              Effect.timeoutFail({ duration: "60 seconds", onTimeout: () => Option.none() })
            )
          )
          expect(Option.map(ended, (error) => error._tag)).toEqual(Option.some("JobStoreUnavailable"))
        })
      )
  )
})
