/**
 * The store behind the job service, chosen by configuration: PostgreSQL when SVC_STORE_URL is
 * set (jobs and node sessions shared by every controller replica), else embedded SQLite at
 * SVC_STORE_PATH with node sessions in this process's memory.
 */
import { Effect, Layer } from "effect"
import { storeSelection } from "./config.ts"
import { postgresBackend } from "./postgres/store.ts"
import { DEFAULT_SESSION_SETTINGS, nodeSessionsLayer, type SessionSettings } from "./sessions.ts"
import { sqliteJobStoreAt } from "./sqlite-store.ts"

export const jobBackendLive = (sessionSettings: SessionSettings = DEFAULT_SESSION_SETTINGS) =>
  Layer.unwrapEffect(
    Effect.map(storeSelection, (selection) =>
      selection._tag === "Postgres"
        ? postgresBackend(selection.settings, sessionSettings)
        : Layer.merge(sqliteJobStoreAt(selection.path), nodeSessionsLayer(sessionSettings))
    )
  )
