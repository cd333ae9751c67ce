/**
 * The store behind the job service, chosen by configuration: PostgreSQL when SVC_STORE_URL is
 * set (jobs and node sessions shared by every controller replica), else embedded SQLite at
 * SVC_STORE_PATH with node sessions in this process's memory.
 */
import { Effect, Layer } from "effect"
import { sessionSettings, storeSelection } from "./config.ts"
import { postgresBackend } from "./postgres/store.ts"
import { nodeSessionsLayer, type SessionSettings } from "./sessions.ts"
import { sqliteJobStoreAt } from "./sqlite-store.ts"

/** With no `settings`, the session timings are read from the environment (config.ts `sessionSettings`). */
export const jobBackendLive = (settings?: SessionSettings) =>
  Layer.unwrapEffect(
    Effect.map(
      Effect.all({
        selection: storeSelection,
        timings: settings === undefined ? sessionSettings : Effect.succeed(settings)
      }),
      ({ selection, timings }) =>
        selection._tag === "Postgres"
          ? postgresBackend(selection.settings, timings)
          : Layer.merge(sqliteJobStoreAt(selection.path), nodeSessionsLayer(timings))
    )
  )
