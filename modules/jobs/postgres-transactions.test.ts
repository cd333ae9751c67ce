/**
 * Transactions that hold under load (issue 35). The `postgres` client 3.4.9 could send a
 * transaction's BEGIN on a connection it had not reserved when BEGIN filled a busy connection's
 * pipeline (porsager/postgres #823, #1189): PostgreSQL then warned "there is already a
 * transaction in progress" and unrelated statements ran inside a transaction nobody would
 * commit. A controller on a 2-connection pool runs 24 submitters and 12 nodes (claims of 4,
 * reports one by one and in batches) at once, with 8 more nodes registering, heartbeating,
 * listing and sweeping (every node-session operation), and 4 segment-capable nodes planning and
 * scoring another tenant's segment jobs (issue 30: claims of plans and segments, plan and segment
 * reports, the merge by the last segment), then is killed with SIGKILL; the server
 * log must not hold that warning, and every write the controller acknowledged (jobs and node
 * sessions) must be in the database.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import postgres from "postgres"
import { type PostgresServer, postgresAvailable, startPostgres } from "../../local/postgres-server.ts"

/** Acknowledged writes the child must have made before it is killed. */
const FINISHED_BEFORE_KILL = 800
/** Acknowledged node registrations (each followed by heartbeats, a listing and a sweep) before the kill. */
const REGISTERED_BEFORE_KILL = 100
/** Segment jobs (plan, three segments, merge) the child must have finished before it is killed. */
const SEGMENTED_BEFORE_KILL = 24

describe.skipIf(!postgresAvailable())("PostgreSQL transactions under load", () => {
  let server: PostgresServer
  beforeAll(async () => {
    server = await startPostgres({ durable: true })
  }, 120_000)
  afterAll(() => server.stop())

  it.live(
    "many concurrent claims, reports and node sessions on a small pool: no transaction left open, every acknowledged write kept after kill -9",
    () =>
      Effect.gen(function* () {
        yield* Effect.promise(() => server.createDatabase("load"))
        // Every statement of the controller goes to the server log, so that BEGIN on the serving
        // path is seen whether or not the client's race strikes during the run.
        yield* Effect.promise(async () => {
          const admin = postgres(server.adminUrl("postgres"), { max: 1, onnotice: () => undefined })
          try {
            await admin`ALTER DATABASE load SET log_statement = 'all'`
          } finally {
            await admin.end({ timeout: 1 })
          }
        })
        const child = Bun.spawn(
          [
            process.execPath,
            join(import.meta.dirname, "..", "..", "test", "support", "job-store", "pg-load-child.ts"),
            server.url("load"),
            server.passwordFile
          ],
          { cwd: join(import.meta.dirname, "..", ".."), stdout: "pipe", stderr: "pipe" }
        )
        const acknowledged = yield* Effect.promise(async () => {
          const submitted: Array<string> = []
          const finished: Array<string> = []
          const registered: Array<string> = []
          const segmented: Array<string> = []
          const decoder = new TextDecoder()
          let buffered = ""
          for await (const chunk of child.stdout) {
            buffered += decoder.decode(chunk)
            const lines = buffered.split("\n")
            buffered = lines.pop() ?? ""
            for (const line of lines) {
              const [kind, id] = line.split(" ")
              if (id === undefined) continue
              if (kind === "submitted") submitted.push(id)
              else if (kind === "finished") finished.push(id)
              else if (kind === "registered") registered.push(id)
              else if (kind === "segmented") segmented.push(id)
            }
            if (
              finished.length >= FINISHED_BEFORE_KILL &&
              registered.length >= REGISTERED_BEFORE_KILL &&
              segmented.length >= SEGMENTED_BEFORE_KILL
            ) {
              child.kill("SIGKILL")
              break
            }
          }
          await child.exited
          return { submitted, finished, registered, segmented }
        })
        const stderr = yield* Effect.promise(() => new Response(child.stderr).text())
        expect(child.signalCode, stderr).toBe("SIGKILL")
        expect(acknowledged.finished.length).toBeGreaterThanOrEqual(FINISHED_BEFORE_KILL)
        expect(acknowledged.registered.length).toBeGreaterThanOrEqual(REGISTERED_BEFORE_KILL)
        expect(acknowledged.segmented.length).toBeGreaterThanOrEqual(SEGMENTED_BEFORE_KILL)

        const db = postgres(server.adminUrl("load"), { max: 1, onnotice: () => undefined })
        const { rows, sessions, segments } = yield* Effect.promise(async () => {
          try {
            return {
              rows: await db`SELECT id, state FROM jobs`,
              sessions: await db`SELECT node_id FROM node_sessions`,
              segments: await db`SELECT job_id, count(*) FILTER (WHERE state = 'finished') AS finished
                FROM job_segments GROUP BY job_id`
            }
          } finally {
            await db.end({ timeout: 1 })
          }
        })
        const states = new Map(rows.map((row) => [String(row["id"]), String(row["state"])]))
        const lostSubmits = acknowledged.submitted.filter((id) => !states.has(id))
        const lostReports = acknowledged.finished.filter((id) => states.get(id) !== "finished")
        const sessionIds = new Set(sessions.map((row) => String(row["node_id"])))
        const lostSessions = acknowledged.registered.filter((id) => !sessionIds.has(id))
        const finishedSegments = new Map(segments.map((row) => [String(row["job_id"]), Number(row["finished"])]))
        // A segment job acknowledged finished: finished, with its three segments finished.
        const lostSegmentJobs = acknowledged.segmented.filter(
          (id) => states.get(id) !== "finished" || finishedSegments.get(id) !== 3
        )
        expect({ lostSubmits, lostReports, lostSessions, lostSegmentJobs }).toEqual({
          lostSubmits: [],
          lostReports: [],
          lostSessions: [],
          lostSegmentJobs: []
        })

        const log = readFileSync(join(server.dir, "log"), "utf8")
        expect(log).not.toMatch(/already a transaction in progress/)
        // The start-up migration is the only transaction the controller opens.
        expect(log.match(/(?:statement|execute [^:]*): begin\b/gi) ?? []).toHaveLength(1)
        expect(log).not.toMatch(/there is no transaction in progress/)
        expect(stderr).not.toMatch(/UNSAFE_TRANSACTION/)
      }),
    240_000
  )
})
