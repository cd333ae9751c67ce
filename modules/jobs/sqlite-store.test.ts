import { Database } from "bun:sqlite"
import { afterEach, beforeEach, describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Either } from "effect"
import { join } from "node:path"
import { storePath } from "./config.ts"
import { MIGRATIONS, migrate } from "./migrations.ts"
import { makeSqliteJobStore, openDatabase, SqliteJobStoreLive } from "./sqlite-store.ts"
import { ANY_MEMORY, JobStore } from "./store.ts"
import {
  ladderRequest,
  node,
  reportBy,
  reportOldLadderProgress,
  request,
  result,
  tempDir,
  withController,
  writer
} from "../../test/support/job-store/support.ts"

let dir = ""
let cleanup = () => {}
beforeEach(() => {
  ;({ dir, cleanup } = tempDir())
})
afterEach(() => cleanup())

const file = (name = "jobs.sqlite") => join(dir, name)
const raw = (path: string) => new Database(path, { strict: true })
const allRows = (path: string) => {
  const db = raw(path)
  const rows = db.query("SELECT * FROM jobs ORDER BY seq").all()
  db.close()
  return rows
}

describe("migrations", () => {
  it.scoped("an empty file gets the schema, WAL, FULL sync and a busy timeout", () =>
    Effect.gen(function* () {
      const db = yield* openDatabase(file())
      expect(
        db.query<{ version: number; name: string }, []>("SELECT version, name FROM schema_migrations").all()
      ).toEqual([
        { version: 1, name: "jobs" },
        { version: 2, name: "job fence" },
        { version: 3, name: "jobs_idempotency_key" },
        { version: 4, name: "jobs_rendition_progress" },
        { version: 7, name: "job_segments" },
        { version: 8, name: "jobs_memory_need" },
        { version: 9, name: "jobs_plan_alignment" },
        { version: 10, name: "job_segments_memory_need" }
      ])
      expect(db.query<{ journal_mode: string }, []>("PRAGMA journal_mode").get()?.journal_mode).toBe("wal")
      expect(db.query<{ synchronous: number }, []>("PRAGMA synchronous").get()?.synchronous).toBe(2) // FULL
      expect(db.query<{ timeout: number }, []>("PRAGMA busy_timeout").get()?.timeout).toBe(5000)
      const columns = db
        .query<{ name: string }, []>("SELECT name FROM pragma_table_info('jobs')")
        .all()
        .map((c) => c.name)
      expect(columns).toEqual(
        expect.arrayContaining([
          "id",
          "tenant_id",
          "state",
          "request",
          "created_at",
          "started_at",
          "finished_at",
          "node_id",
          "result",
          "error",
          "frames_done",
          "submitted_by",
          "idempotency_key",
          "rendition_progress",
          "plan_alignment"
        ])
      )
    })
  )

  it.effect("re-opening is idempotent and keeps the data", () =>
    Effect.gen(function* () {
      const job = yield* withController(file(), (jobs) => jobs.submit(writer("a"), request()))
      yield* Effect.scoped(openDatabase(file()))
      const db = raw(file())
      expect(migrate(db, MIGRATIONS, 0)).toEqual([])
      expect(db.query<{ n: number }, []>("SELECT count(*) AS n FROM schema_migrations").get()?.n).toBe(
        MIGRATIONS.length
      )
      db.close()
      expect(yield* withController(file(), (jobs) => jobs.get(writer("a"), job.id))).toEqual(job)
    })
  )

  it("applies a later migration once, and a failing one not at all (each runs in a transaction)", () => {
    const db = raw(file())
    const shipped = MIGRATIONS.map((migration) => migration.version)
    const next = Math.max(...shipped) + 1
    const second = {
      version: next,
      name: "extra",
      sql: "CREATE TABLE extra (x INTEGER); INSERT INTO extra VALUES (1);"
    }
    expect(migrate(db, [...MIGRATIONS, second], 0)).toEqual([...shipped, next])
    expect(migrate(db, [...MIGRATIONS, second], 0)).toEqual([])
    const broken = {
      version: next + 1,
      name: "broken",
      sql: "CREATE TABLE half (x INTEGER); INSERT INTO no_such_table VALUES (1);"
    }
    expect(() => migrate(db, [...MIGRATIONS, second, broken], 0)).toThrow(/no_such_table/)
    expect(db.query<{ n: number }, []>("SELECT count(*) AS n FROM sqlite_master WHERE name = 'half'").get()?.n).toBe(0)
    expect(db.query<{ v: number }, []>("SELECT max(version) AS v FROM schema_migrations").get()?.v).toBe(next)
    db.close()
  })

  it.effect("a store of the previous schema (v3) upgrades in place: its jobs read, ladders report per rendition", () =>
    Effect.gen(function* () {
      // The file as the previous controller left it: migrations 1 to 3, a running ladder job.
      const old = raw(file())
      expect(
        migrate(
          old,
          MIGRATIONS.filter((migration) => migration.version <= 3),
          0
        )
      ).toEqual([1, 2, 3])
      const ladder = ladderRequest(["low", "high"])
      old.run(
        `INSERT INTO jobs (id, tenant_id, state, request, created_at, started_at, node_id, frames_done, fence)
         VALUES ('old-ladder', 'a', 'running', ?, 1, 2, 'gone-node', 3, 1),
                ('old-pair', 'a', 'finished', ?, 1, 2, 'gone-node', 2, 1)`,
        [JSON.stringify({ ladder }), JSON.stringify(request())]
      )
      old.close()
      // The new controller migrates the file (v4) and reads the old rows as "no progress reported".
      const upgraded = yield* withController(file(), (jobs) =>
        Effect.gen(function* () {
          const before = yield* jobs.get(writer("a"), "old-ladder")
          expect(before).toMatchObject({ state: "running", framesDone: 3, renditionProgress: [] })
          expect((yield* jobs.get(writer("a"), "old-pair")).renditionProgress).toEqual([])
          // The old job's node is gone: a live node of the tenant takes it over and reports per rendition.
          return yield* reportOldLadderProgress(jobs, [
            { label: "low", framesDone: 4 },
            { label: "high", framesDone: 4 }
          ])
        })
      )
      expect(upgraded.renditionProgress).toEqual([
        { label: "low", framesDone: 4 },
        { label: "high", framesDone: 4 }
      ])
      const db = raw(file())
      expect(db.query<{ v: number }, []>("SELECT max(version) AS v FROM schema_migrations").get()?.v).toBe(10)
      expect(
        db.query<{ p: string }, []>("SELECT rendition_progress AS p FROM jobs WHERE id = 'old-ladder'").get()?.p
      ).toBe('[{"label":"low","frames_done":4},{"label":"high","frames_done":4}]')
      db.close()
      // Kept across a restart.
      const reread = yield* withController(file(), (jobs) => jobs.get(writer("a"), "old-ladder"))
      expect(reread.renditionProgress).toEqual(upgraded.renditionProgress)
    })
  )

  it.effect("a store written by a newer controller is refused, naming SVC_STORE_PATH", () =>
    Effect.gen(function* () {
      yield* Effect.scoped(openDatabase(file()))
      const db = raw(file())
      db.run("INSERT INTO schema_migrations (version, name, applied_at) VALUES (99, 'future', 0)")
      db.close()
      const error = yield* Effect.flip(Effect.scoped(openDatabase(file())))
      expect(error._tag).toBe("JobStoreStartupError")
      expect(error.message).toContain("SVC_STORE_PATH")
      expect(error.message).toContain("schema version 99")
    })
  )
})

describe("SVC_STORE_PATH", () => {
  const withEnv = (env: Record<string, string>) => ConfigProvider.fromMap(new Map(Object.entries(env)))

  it.effect("defaults to /data/jobs.sqlite; an empty value is refused naming the variable", () =>
    Effect.gen(function* () {
      expect(yield* Effect.withConfigProvider(storePath, withEnv({}))).toBe("/data/jobs.sqlite")
      expect(yield* Effect.withConfigProvider(storePath, withEnv({ SVC_STORE_PATH: file("x.sqlite") }))).toBe(
        file("x.sqlite")
      )
      const refused = yield* Effect.flip(Effect.withConfigProvider(storePath, withEnv({ SVC_STORE_PATH: " " })))
      expect(String(refused)).toContain("SVC_STORE_PATH")
    })
  )

  it.effect("the live layer opens the file it names, and an unopenable path stops start-up naming it", () =>
    Effect.gen(function* () {
      const path = file("live.sqlite")
      const provider = withEnv({ SVC_STORE_PATH: path })
      const counts = yield* Effect.withConfigProvider(
        Effect.flatMap(JobStore, (store) => store.countByState).pipe(Effect.provide(SqliteJobStoreLive)),
        provider
      )
      expect(counts.pending).toBe(0)
      const missing = join(dir, "no-such-dir", "jobs.sqlite")
      const error = yield* Effect.flip(
        Effect.withConfigProvider(Effect.provide(JobStore, SqliteJobStoreLive), withEnv({ SVC_STORE_PATH: missing }))
      )
      expect(error.message).toContain("SVC_STORE_PATH")
      expect(error.message).toContain(missing)
    })
  )
})

describe("durability", () => {
  it.effect("jobs, results and NaN features survive closing and re-opening the file", () =>
    Effect.gen(function* () {
      const [pending, done] = yield* withController(file(), (jobs) =>
        Effect.gen(function* () {
          const pending = yield* jobs.submit(writer("a"), request("one"))
          yield* jobs.submit(writer("a"), request("two"))
          const session = yield* jobs.register(node("a"), { name: "n", slots: 1, version: "t" })
          const [pulled] = yield* jobs.pullWork(node("a"), session.nodeId, 1)
          const done = yield* jobs.reportResult(node("a"), session.nodeId, pulled?.id ?? "", {
            final: true,
            result: result(91.5),
            framesDone: 2
          })
          return [pending, done] as const
        })
      )
      expect(done.result !== undefined && "features" in done.result ? done.result.features["psnr_y"] : 0).toBeNaN()
      yield* withController(file(), (jobs) =>
        Effect.gen(function* () {
          expect(yield* jobs.get(writer("a"), done.id)).toEqual(done)
          expect((yield* jobs.get(writer("a"), pending.id)).state).toBe("finished")
          expect(
            (yield* jobs.list(writer("a"), { states: ["pending"] })).map((job) =>
              "reference" in job.request ? job.request.reference : ""
            )
          ).toEqual(["/media/two/ref.y4m"])
        })
      )
    })
  )

  it.effect("a controller killed with SIGKILL right after acknowledging loses no acknowledged job", () =>
    Effect.gen(function* () {
      const path = file()
      const child = Bun.spawn(
        [
          process.execPath,
          join(import.meta.dirname, "..", "..", "test", "support", "job-store", "submit-child.ts"),
          path
        ],
        {
          cwd: join(import.meta.dirname, "..", ".."),
          stdout: "pipe",
          stderr: "pipe"
        }
      )
      const acknowledged = yield* Effect.promise(async () => {
        const ids: Array<string> = []
        const decoder = new TextDecoder()
        let buffered = ""
        for await (const chunk of child.stdout) {
          buffered += decoder.decode(chunk)
          const lines = buffered.split("\n")
          buffered = lines.pop() ?? ""
          ids.push(...lines)
          if (ids.length >= 40) {
            child.kill("SIGKILL")
            break
          }
        }
        await child.exited
        return ids
      })
      expect(child.signalCode, yield* Effect.promise(() => new Response(child.stderr).text())).toBe("SIGKILL")
      expect(acknowledged.length).toBeGreaterThanOrEqual(40)
      const stored = yield* withController(path, (jobs) =>
        Effect.forEach(acknowledged, (id) => Effect.either(jobs.get(writer("durable"), id)))
      )
      expect(stored.filter(Either.isLeft)).toEqual([])
      expect(stored.every((job) => Either.isRight(job) && job.right.state === "pending")).toBe(true)
    })
  )
})

describe("legacy rows of the empty tenant", () => {
  it.effect("are readable, changeable and pullable by nobody", () =>
    Effect.gen(function* () {
      const path = file()
      yield* Effect.scoped(openDatabase(path))
      const db = raw(path)
      const body = JSON.stringify(request("legacy"))
      db.run("INSERT INTO jobs (id, tenant_id, state, request, created_at) VALUES ('legacy-1', '', 'pending', ?, 1)", [
        body
      ])
      // A pre-gateway writer that knew no tenant column gets the column default, the empty tenant.
      db.run(
        "INSERT INTO jobs (id, state, request, created_at, node_id) VALUES ('legacy-2', 'running', ?, 2, 'old-node')",
        [body]
      )
      db.close()
      const tricks = ["", " ", "''", "' OR 1=1 --", "%", "*", "\u0000", "dev", "legacy-1"]
      const before = allRows(path)
      yield* withController(path, (jobs) =>
        Effect.forEach(tricks, (tenant) =>
          Effect.gen(function* () {
            expect(yield* jobs.list(writer(tenant), {})).toEqual([])
            for (const id of ["legacy-1", "legacy-2"]) {
              const got = yield* Effect.flip(jobs.get(writer(tenant), id))
              expect(got._tag === "JobNotFound" || got.message === "resource belongs to another tenant").toBe(true)
              const cancelled = yield* Effect.flip(jobs.cancel(writer(tenant), id))
              expect(cancelled._tag).toBe(got._tag)
            }
            const session = yield* Effect.either(jobs.register(node(tenant), { name: "n", slots: 1, version: "t" }))
            if (Either.isRight(session)) {
              expect(yield* jobs.pullWork(node(tenant), session.right.nodeId, 10)).toEqual([])
              const report = yield* Effect.flip(
                jobs.reportResult(node(tenant), session.right.nodeId, "legacy-2", {
                  final: true,
                  result: result(1),
                  framesDone: 1
                })
              )
              expect(report.message).toBe(`job "legacy-2" is not assigned to node "${session.right.nodeId}"`)
            } else {
              expect(tenant === "" || tenant.includes("\u0000")).toBe(true)
            }
          })
        ).pipe(
          Effect.zipRight(
            Effect.flatMap(jobs.gauges, (gauges) =>
              Effect.sync(() =>
                expect(gauges.jobsByState).toEqual({
                  pending: 0,
                  running: 0,
                  finished: 0,
                  cancelled: 0,
                  failed: 0
                })
              )
            )
          )
        )
      )
      // Even after a re-queue sweep far past the grace period, nothing about them changed.
      yield* withController(path, (jobs) => jobs.requeueOrphans)
      expect(allRows(path)).toEqual(before)
    })
  )
})

describe("JobStore direct", () => {
  it.scoped("lookup tells own, other tenant and missing apart; other-tenant writes match nothing", () =>
    Effect.gen(function* () {
      const store = yield* makeSqliteJobStore(yield* openDatabase(file()))
      const job = yield* store.insert({ id: "j1", tenantId: "a", request: request(), submittedBy: undefined })
      expect(yield* store.lookup("a", job.id)).toEqual({ _tag: "Found", job })
      expect(yield* store.lookup("b", job.id)).toEqual({ _tag: "OtherTenant" })
      expect(yield* store.lookup("a", "nope")).toEqual({ _tag: "Missing" })
      expect(yield* store.cancel("b", job.id)).toEqual({ _tag: "OtherTenant" })
      expect(yield* store.claim("b", "n", 10, ANY_MEMORY)).toEqual([])
      const [claimed] = yield* store.claim("a", "n", 10, ANY_MEMORY)
      expect((yield* Effect.flip(store.report("b", job.id, reportBy("n", 1, ["n"], "b")))).message).toBe(
        `job "${job.id}" is not assigned to node "n"`
      )
      expect(yield* store.requeueNode("b", "n")).toEqual([])
      expect(yield* store.lookup("a", job.id)).toEqual({ _tag: "Found", job: claimed })
      expect(yield* store.runningAssignments).toEqual([{ tenantId: "a", nodeId: "n" }])
    })
  )
})

describe("idempotency keys (SubmitJobRequest.idempotency_key)", () => {
  it.effect("a second submit with the key returns the first job, per tenant, across restarts", () =>
    Effect.gen(function* () {
      const first = yield* withController(file(), (jobs) => jobs.submit(writer("a"), request("one"), "uid-1"))
      const again = yield* withController(file(), (jobs) =>
        Effect.gen(function* () {
          const repeated = yield* jobs.submit(writer("a"), request("other"), "uid-1")
          const otherTenant = yield* jobs.submit(writer("b"), request("one"), "uid-1")
          const noKey = yield* jobs.submit(writer("a"), request("one"))
          const noKeyAgain = yield* jobs.submit(writer("a"), request("one"), "")
          yield* jobs.cancel(writer("a"), first.id)
          const afterCancel = yield* jobs.submit(writer("a"), request("one"), "uid-1")
          return { repeated, otherTenant, noKey, noKeyAgain, afterCancel }
        })
      )
      expect(again.repeated).toEqual(first)
      expect(again.otherTenant.id).not.toBe(first.id)
      expect(again.noKey.id).not.toBe(again.noKeyAgain.id)
      expect(again.afterCancel.id).toBe(first.id)
      expect(again.afterCancel.state).toBe("cancelled")
      expect(allRows(file())).toHaveLength(4)
    })
  )

  it.effect("an over-long key is refused", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(
        withController(file(), (jobs) => jobs.submit(writer("a"), request(), "k".repeat(257)))
      )
      expect(error.message).toContain("idempotency_key")
    })
  )
})

describe("node sessions of a tenant (ListNodes)", () => {
  it.effect("lists only the caller's tenant's sessions with their running jobs", () =>
    withController(file(), (jobs) =>
      Effect.gen(function* () {
        const a = yield* jobs.register(node("a"), { name: "host-a", slots: 2, version: "v" })
        yield* jobs.register(node("b"), { name: "host-b", slots: 1, version: "v" })
        const job = yield* jobs.submit(writer("a"), request())
        yield* jobs.pullWork(node("a"), a.nodeId, 1)
        const seen = yield* jobs.nodes(writer("a"))
        expect(seen).toHaveLength(1)
        expect(seen[0]).toMatchObject({
          nodeId: a.nodeId,
          name: "host-a",
          slots: 2,
          live: true,
          runningJobIds: [job.id]
        })
        expect(yield* jobs.nodes(writer("c"))).toEqual([])
      })
    )
  )
})
