/**
 * The store contract's two backends for the job tests: the SQLite file and a real PostgreSQL
 * server the tests start themselves (../postgres-server.ts), a fresh database per test.
 * `describeContract` (contract.ts) runs one suite against both.
 */
import { Database } from "bun:sqlite"
import { Effect, Layer, Option } from "effect"
import postgres from "postgres"
import type { JobStoreStartupError } from "../../../modules/jobs/errors.ts"
import { postgresBackend } from "../../../modules/jobs/postgres/store.ts"
import { type NodeSessions, nodeSessionsLayer, type SessionSettings } from "../../../modules/jobs/sessions.ts"
import { sqliteJobStoreAt } from "../../../modules/jobs/sqlite-store.ts"
import type { JobStore } from "../../../modules/jobs/store.ts"
import type { PostgresServer } from "../../../local/postgres-server.ts"

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

/** Effect-friendly `rows`. */
export const rowsOf = (backend: Backend) => Effect.promise(() => backend.rows())
