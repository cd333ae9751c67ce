/**
 * The store contract's two backends for the job tests: the SQLite file and a real PostgreSQL
 * server the tests start themselves (testing/postgres-server.ts), a fresh database per test.
 * `describeContract` runs one suite against both; without PostgreSQL binaries the PostgreSQL
 * run is skipped, saying so.
 */
import { Database } from "bun:sqlite"
import { afterAll, afterEach, beforeAll, beforeEach, describe } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import postgres from "postgres"
import type { JobStoreStartupError } from "../errors.ts"
import { postgresBackend } from "../postgres/store.ts"
import { type NodeSessions, nodeSessionsLayer, type SessionSettings } from "../sessions.ts"
import { sqliteJobStoreAt } from "../sqlite-store.ts"
import type { JobStore } from "../store.ts"
import { type PostgresServer, postgresAvailable, startPostgres } from "./postgres-server.ts"

/** A job row as the isolation checks compare it (every column that a write could change). */
export interface RawRow {
  readonly id: string
  readonly tenant_id: string
  readonly state: string
  readonly node_id: string | null
  readonly result: string | null
  readonly error: string | null
  readonly frames_done: number
  readonly fence: number
  readonly finished_at: number | null
}

/** One store to run the contract against. A new `layer` on the same target is a controller (re)boot. */
export interface Backend {
  readonly name: "sqlite" | "postgres"
  /** Node sessions live in the database: they outlive a controller and every replica sees them. */
  readonly sharedSessions: boolean
  readonly layer: (settings: SessionSettings) => Layer.Layer<JobStore | NodeSessions, JobStoreStartupError>
  /** Every job row, in insertion order, read around the store (for isolation checks). */
  readonly rows: () => Promise<ReadonlyArray<RawRow>>
}

export const sqliteBackend = (path: string): Backend => ({
  name: "sqlite",
  sharedSessions: false,
  layer: (settings) => Layer.merge(sqliteJobStoreAt(path), nodeSessionsLayer(settings)),
  rows: async () => {
    const db = new Database(path, { readonly: true, strict: true })
    try {
      return db
        .query<RawRow, []>(
          "SELECT id, tenant_id, state, node_id, result, error, frames_done, fence, finished_at FROM jobs ORDER BY seq"
        )
        .all()
    } finally {
      db.close()
    }
  }
})

export const postgresBackendOn = (server: PostgresServer, database: string, poolMax = 4): Backend => {
  const admin = postgres(server.adminUrl(database), { max: 1, onnotice: () => undefined })
  return {
    name: "postgres",
    sharedSessions: true,
    layer: (settings) =>
      postgresBackend({ url: server.url(database), passwordFile: Option.some(server.passwordFile), poolMax }, settings),
    rows: async () =>
      (
        await admin<Array<Record<string, unknown>>>`
          SELECT id, tenant_id, state, node_id, result, error, frames_done, fence, finished_at FROM jobs ORDER BY seq`
      ).map((row) => ({
        id: String(row["id"]),
        tenant_id: String(row["tenant_id"]),
        state: String(row["state"]),
        node_id: row["node_id"] === null ? null : String(row["node_id"]),
        result: row["result"] === null ? null : String(row["result"]),
        error: row["error"] === null ? null : String(row["error"]),
        frames_done: Number(row["frames_done"]),
        fence: Number(row["fence"]),
        finished_at: row["finished_at"] === null ? null : Number(row["finished_at"])
      }))
  }
}

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
      let admin: postgres.Sql | undefined
      let dir = ""
      let current: Backend | undefined
      beforeAll(async () => {
        dir = mkdtempSync(join(tmpdir(), "svc-jobs-"))
        if (name === "postgres") {
          server = await startPostgres()
          admin = postgres(server.adminUrl("postgres"), { max: 1, onnotice: () => undefined })
        }
      }, 120_000)
      afterAll(async () => {
        await admin?.end({ timeout: 1 })
        server?.stop()
        rmSync(dir, { recursive: true, force: true })
      })
      const fresh = async (): Promise<Backend> => {
        databases += 1
        if (server === undefined || admin === undefined) return sqliteBackend(join(dir, `jobs-${databases}.sqlite`))
        const database = `jobs_${databases}`
        await admin.unsafe(`CREATE DATABASE ${database}`)
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

/** Effect-friendly `rows`. */
export const rowsOf = (backend: Backend) => Effect.promise(() => backend.rows())
