/**
 * Transactions that hold under load (issue 35). The `postgres` client 3.4.9 could send a
 * transaction's BEGIN on a connection it had not reserved when BEGIN filled a busy connection's
 * pipeline (porsager/postgres #823, #1189): PostgreSQL then warned "there is already a
 * transaction in progress" and unrelated statements ran inside a transaction nobody would
 * commit. A controller on a 2-connection pool runs 24 submitters and 12 nodes (claims of 4,
 * reports one by one and in batches) at once, then is killed with SIGKILL; the server log must
 * not hold that warning, and every write the controller acknowledged must be in the database.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import postgres from "postgres"
import { type PostgresServer, postgresAvailable, startPostgres } from "./testing/postgres-server.ts"

/** Acknowledged writes the child must have made before it is killed. */
const FINISHED_BEFORE_KILL = 800

describe.skipIf(!postgresAvailable())("PostgreSQL transactions under load", () => {
  let server: PostgresServer
  beforeAll(async () => {
    server = await startPostgres({ durable: true })
  }, 120_000)
  afterAll(() => server.stop())

  it.live(
    "many concurrent claims and reports on a small pool: no transaction left open, every acknowledged write kept after kill -9",
    () =>
      Effect.gen(function* () {
        yield* Effect.promise(() => server.createDatabase("load"))
        const child = Bun.spawn(
          [
            process.execPath,
            join(import.meta.dirname, "testing", "pg-load-child.ts"),
            server.url("load"),
            server.passwordFile
          ],
          { cwd: join(import.meta.dirname, "..", ".."), stdout: "pipe", stderr: "pipe" }
        )
        const acknowledged = yield* Effect.promise(async () => {
          const submitted: Array<string> = []
          const finished: Array<string> = []
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
            }
            if (finished.length >= FINISHED_BEFORE_KILL) {
              child.kill("SIGKILL")
              break
            }
          }
          await child.exited
          return { submitted, finished }
        })
        const stderr = yield* Effect.promise(() => new Response(child.stderr).text())
        expect(child.signalCode, stderr).toBe("SIGKILL")
        expect(acknowledged.finished.length).toBeGreaterThanOrEqual(FINISHED_BEFORE_KILL)

        const db = postgres(server.adminUrl("load"), { max: 1, onnotice: () => undefined })
        const rows = yield* Effect.promise(() => db`SELECT id, state FROM jobs`.finally(() => db.end({ timeout: 1 })))
        const states = new Map(rows.map((row) => [String(row["id"]), String(row["state"])]))
        const lostSubmits = acknowledged.submitted.filter((id) => !states.has(id))
        const lostReports = acknowledged.finished.filter((id) => states.get(id) !== "finished")
        expect({ lostSubmits, lostReports }).toEqual({ lostSubmits: [], lostReports: [] })

        const log = readFileSync(join(server.dir, "log"), "utf8")
        expect(log).not.toMatch(/already a transaction in progress/)
        expect(log).not.toMatch(/there is no transaction in progress/)
        expect(stderr).not.toMatch(/UNSAFE_TRANSACTION/)
      }),
    180_000
  )
})
