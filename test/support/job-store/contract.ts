/**
 * `describeContract` runs one suite against both stores: a fresh SQLite file, or a fresh database
 * on a PostgreSQL 15 server started for the suite; without the PostgreSQL binaries that run is
 * skipped, saying so.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe } from "@effect/vitest"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { type Backend, postgresBackendOn, sqliteBackend } from "./backends.ts"
import { type PostgresServer, postgresAvailable, startPostgres } from "../../../local/postgres-server.ts"

let databases = 0

/**
 * Runs `suite` once per backend. `backend()` is a fresh store for the current test (a new SQLite
 * file, a new PostgreSQL database); `fresh()` makes another one inside a test (property runs).
 */
export const describeContract = (
  title: string,
  suite: (context: {
    readonly name: Backend["name"]
    readonly backend: () => Backend
    readonly fresh: () => Promise<Backend>
  }) => void
) => {
  for (const name of ["sqlite", "postgres"] as const) {
    const available = name === "sqlite" || postgresAvailable()
    const describeIt = available ? describe : describe.skip
    describeIt(`${title} [${name}]${available ? "" : " (skipped: PostgreSQL 15 binaries not installed)"}`, () => {
      let server: PostgresServer | undefined
      let dir = ""
      let current: Backend | undefined
      beforeAll(async () => {
        dir = mkdtempSync(join(tmpdir(), "svc-jobs-"))
        if (name === "postgres") server = await startPostgres()
      }, 120_000)
      afterAll(async () => {
        server?.stop()
        rmSync(dir, { recursive: true, force: true })
      })
      const fresh = async (): Promise<Backend> => {
        databases += 1
        if (server === undefined) return sqliteBackend(join(dir, `jobs-${databases}.sqlite`))
        const database = `jobs_${databases}`
        await server.createDatabase(database)
        return postgresBackendOn(server, database)
      }
      beforeEach(async () => {
        current = await fresh()
      })
      afterEach(() => {
        current = undefined
      })
      suite({
        name,
        backend: () => {
          if (current === undefined) throw new Error("no backend outside a test")
          return current
        },
        fresh
      })
    })
  }
}
