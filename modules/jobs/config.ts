/** Settings of the job store, read with Effect Config (refusals name the variable). */
import { Config, Either, Option } from "effect"
import { integerIn, invalid, optionalText, text } from "../config/env.ts"
import { DEFAULT_SESSION_SETTINGS, type SessionSettings } from "./sessions.ts"

export const STORE_PATH_VARIABLE = "SVC_STORE_PATH"
export const DEFAULT_STORE_PATH = "/data/jobs.sqlite"
export const STORE_URL_VARIABLE = "SVC_STORE_URL"
export const STORE_PASSWORD_FILE_VARIABLE = "SVC_STORE_PASSWORD_FILE"
export const STORE_POOL_VARIABLE = "SVC_STORE_POOL_MAX"

/** Path of the SQLite job store file; its directory must exist and be writable. */
export const storePath: Config.Config<string> = text(STORE_PATH_VARIABLE, DEFAULT_STORE_PATH)

/** How the controller reaches PostgreSQL (SVC_STORE_URL set). */
export interface PostgresSettings {
  /** libpq-style `postgres://user@host:port/database?sslmode=...` (a password in it is allowed, the file is better). */
  readonly url: string
  readonly passwordFile: Option.Option<string>
  /** Connections in the pool, at most. */
  readonly poolMax: number
}

const postgresUrl = Config.mapOrFail(optionalText(STORE_URL_VARIABLE), (value) =>
  Option.match(value, {
    onNone: () => Either.right(Option.none<string>()),
    onSome: (url) =>
      /^postgres(ql)?:\/\//.test(url.trim())
        ? Either.right(Option.some(url.trim()))
        : Either.left(invalid(STORE_URL_VARIABLE, "must be a postgres:// or postgresql:// URL"))
  })
)

/** Which store: PostgreSQL when SVC_STORE_URL is set, else SQLite at SVC_STORE_PATH. */
export type StoreSelection =
  | { readonly _tag: "Sqlite"; readonly path: string }
  | { readonly _tag: "Postgres"; readonly settings: PostgresSettings }

export const storeSelection: Config.Config<StoreSelection> = Config.map(
  Config.all({
    url: postgresUrl,
    path: storePath,
    passwordFile: optionalText(STORE_PASSWORD_FILE_VARIABLE),
    poolMax: integerIn(STORE_POOL_VARIABLE, 10, 1, 200)
  }),
  ({ url, path, passwordFile, poolMax }): StoreSelection =>
    Option.match(url, {
      onNone: () => ({ _tag: "Sqlite", path }),
      onSome: (url) => ({ _tag: "Postgres", settings: { url, passwordFile, poolMax } })
    })
)

export const SEGMENT_FRAMES_VARIABLE = "SVC_SEGMENT_FRAMES"

/**
 * The controller's default `options.segment_frames` for pair and ladder jobs that do not set it,
 * aligning or not (0: one piece); 0 or within the option's range (minSegmentFrames..maxSegmentFrames).
 */
export const defaultSegmentFrames = (min: number, max: number): Config.Config<number> =>
  Config.mapOrFail(integerIn(SEGMENT_FRAMES_VARIABLE, 0, 0, max), (value) =>
    value === 0 || value >= min
      ? Either.right(value)
      : Either.left(invalid(SEGMENT_FRAMES_VARIABLE, `must be 0 (one piece) or from ${min} to ${max}; got ${value}`))
  )

export const HEARTBEAT_INTERVAL_VARIABLE = "SVC_NODE_HEARTBEAT_INTERVAL_MS"
export const SESSION_TTL_VARIABLE = "SVC_NODE_SESSION_TTL_MS"
export const REQUEUE_GRACE_VARIABLE = "SVC_NODE_REQUEUE_GRACE_MS"
export const SWEEP_INTERVAL_VARIABLE = "SVC_REQUEUE_SWEEP_INTERVAL_MS"

/**
 * Node session timings (defaults: DEFAULT_SESSION_SETTINGS). The TTL must exceed the heartbeat
 * interval, or every session would lapse between two heartbeats. Short values are for tests and
 * small clusters that want a lost node's work back sooner.
 */
export const sessionSettings: Config.Config<SessionSettings> = Config.mapOrFail(
  Config.all({
    heartbeatIntervalMillis: integerIn(
      HEARTBEAT_INTERVAL_VARIABLE,
      DEFAULT_SESSION_SETTINGS.heartbeatIntervalMillis,
      50,
      600_000
    ),
    ttlMillis: integerIn(SESSION_TTL_VARIABLE, DEFAULT_SESSION_SETTINGS.ttlMillis, 100, 3_600_000),
    requeueGraceMillis: integerIn(REQUEUE_GRACE_VARIABLE, DEFAULT_SESSION_SETTINGS.requeueGraceMillis, 0, 86_400_000),
    sweepIntervalMillis: integerIn(SWEEP_INTERVAL_VARIABLE, DEFAULT_SESSION_SETTINGS.sweepIntervalMillis, 50, 600_000)
  }),
  (settings) =>
    settings.ttlMillis > settings.heartbeatIntervalMillis
      ? Either.right(settings)
      : Either.left(
          invalid(
            SESSION_TTL_VARIABLE,
            `must be longer than ${HEARTBEAT_INTERVAL_VARIABLE} (${settings.heartbeatIntervalMillis}); got ${settings.ttlMillis}`
          )
        )
)
