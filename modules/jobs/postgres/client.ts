/**
 * The PostgreSQL connection pool of the job store (the `postgres` client: pure JavaScript, so it
 * compiles into the executable, with LISTEN/NOTIFY, transactions and reserved connections).
 *
 * The pool is bounded (SVC_STORE_POOL_MAX). The client connects lazily and again after a lost
 * connection, with its own exponential back-off; a call made while the database is down fails at
 * once with `JobStoreUnavailable` (UNAVAILABLE / 503) and nothing is acknowledged that was not
 * committed: every write is awaited to its COMMIT before the call answers.
 */
import { Effect, Option, type Scope } from "effect"
import { readFileSync } from "node:fs"
import { readFile } from "node:fs/promises"
import postgres from "postgres"
import { STORE_PASSWORD_FILE_VARIABLE, STORE_URL_VARIABLE, type PostgresSettings } from "../config.ts"
import { JobStoreFailure, JobStoreStartupError, JobStoreUnavailable, type JobStoreError } from "../errors.ts"

export type Sql = postgres.Sql
export type Row = Record<string, unknown>

/** Seconds to wait for a connection before a call fails as unavailable. */
export const CONNECT_TIMEOUT_SECONDS = 5

const describe = (cause: unknown): string => (cause instanceof Error ? cause.message : String(cause))

const codeOf = (cause: unknown): string =>
  typeof cause === "object" && cause !== null && "code" in cause && typeof cause.code === "string" ? cause.code : ""

// Connection-level failures of the client or the socket, and SQLSTATE classes 08 (connection
// exception) and 57P (operator intervention: shutdown, cannot connect now), 53300 (too many connections).
const UNAVAILABLE_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
  "CONNECTION_CLOSED",
  "CONNECTION_ENDED",
  "CONNECTION_DESTROYED",
  "CONNECT_TIMEOUT",
  "53300"
])

export const isUnavailable = (cause: unknown): boolean => {
  const code = codeOf(cause)
  return UNAVAILABLE_CODES.has(code) || code.startsWith("08") || code.startsWith("57P")
}

/** A database call as an Effect: connection failures are `JobStoreUnavailable`, the rest `JobStoreFailure`. */
export const query = <A>(operation: string, run: () => Promise<A>): Effect.Effect<A, JobStoreError> =>
  Effect.tryPromise({
    try: run,
    catch: (cause) =>
      isUnavailable(cause)
        ? new JobStoreUnavailable({ operation, detail: `the database does not answer (${describe(cause)})` })
        : new JobStoreFailure({ operation, detail: describe(cause) })
  })

/** The password: from SVC_STORE_PASSWORD_FILE (one line; the trailing newline is not part of it). */
const readPassword = (file: Option.Option<string>): Effect.Effect<string | undefined, JobStoreStartupError> =>
  Option.match(file, {
    onNone: () => Effect.succeed(undefined),
    onSome: (path) =>
      Effect.tryPromise({
        try: () => readFile(path, "utf8"),
        catch: (cause) =>
          new JobStoreStartupError({
            message: `${STORE_PASSWORD_FILE_VARIABLE}: cannot read "${path}": ${describe(cause)}`
          })
      }).pipe(Effect.map((text) => text.replace(/\r?\n$/, "")))
  })

/** Where the URL points, without its password (for messages and logs). */
export const redactedUrl = (url: string): string => {
  try {
    const parsed = new URL(url)
    if (parsed.password !== "") parsed.password = "***"
    return parsed.toString()
  } catch {
    return "(unparseable URL)"
  }
}

/** libpq's client-side TLS parameters, which the client would otherwise send to the server as settings. */
const CLIENT_TLS_PARAMETERS = ["sslrootcert", "sslcert", "sslkey"] as const

/** What the client is given: the URL without the client-side TLS parameters, and the TLS options they mean. */
export interface ConnectionTarget {
  readonly url: string
  /** Node TLS options when a certificate file is named; otherwise `sslmode` in the URL decides. */
  readonly tls:
    | { readonly ca?: string; readonly cert?: string; readonly key?: string; readonly verifyHost: boolean }
    | undefined
}

/**
 * libpq conventions: `sslrootcert` (or PGSSLROOTCERT) names the CA file that `sslmode=verify-ca`
 * and `verify-full` check the server against (`system`: the system roots), `sslcert`/`sslkey` a
 * client certificate; `verify-ca` does not check the host name, `verify-full` does.
 */
export const connectionTarget = (
  url: string,
  rootCertFromEnv: string | undefined,
  readText: (path: string) => string
): ConnectionTarget => {
  const parsed = new URL(url)
  const params = Object.fromEntries(CLIENT_TLS_PARAMETERS.map((name) => [name, parsed.searchParams.get(name)]))
  for (const name of CLIENT_TLS_PARAMETERS) parsed.searchParams.delete(name)
  const mode = parsed.searchParams.get("sslmode") ?? ""
  const rootCert = params["sslrootcert"] ?? rootCertFromEnv
  const verifying = mode === "verify-ca" || mode === "verify-full"
  const ca = verifying && rootCert !== undefined && rootCert !== "" && rootCert !== "system" ? rootCert : undefined
  const cert = params["sslcert"] ?? undefined
  const key = params["sslkey"] ?? undefined
  if (ca === undefined && cert === undefined) return { url: parsed.toString(), tls: undefined }
  if (!verifying && ca === undefined && mode === "disable") return { url: parsed.toString(), tls: undefined }
  return {
    url: parsed.toString(),
    tls: {
      ...(ca === undefined ? {} : { ca: readText(ca) }),
      ...(cert === undefined ? {} : { cert: readText(cert) }),
      ...(key === undefined ? {} : { key: readText(key) }),
      verifyHost: mode !== "verify-ca"
    }
  }
}

/** Opens the bounded pool (connections are made on demand); ends it when the scope closes. */
export const openPool = (settings: PostgresSettings): Effect.Effect<Sql, JobStoreStartupError, Scope.Scope> =>
  Effect.flatMap(readPassword(settings.passwordFile), (password) =>
    Effect.acquireRelease(
      Effect.try({
        try: () => {
          const target = connectionTarget(settings.url, process.env["PGSSLROOTCERT"], (path) =>
            readFileSync(path, "utf8")
          )
          const tls = target.tls
          return postgres(target.url, {
            max: settings.poolMax,
            ...(password === undefined ? {} : { password }),
            ...(tls === undefined
              ? {}
              : {
                  ssl: {
                    rejectUnauthorized: true,
                    ...(tls.ca === undefined ? {} : { ca: tls.ca }),
                    ...(tls.cert === undefined ? {} : { cert: tls.cert }),
                    ...(tls.key === undefined ? {} : { key: tls.key }),
                    ...(tls.verifyHost ? {} : { checkServerIdentity: () => undefined })
                  }
                }),
            connect_timeout: CONNECT_TIMEOUT_SECONDS,
            idle_timeout: 60,
            onnotice: () => undefined,
            connection: { application_name: "svc-controller" }
          })
        },
        catch: (cause) =>
          new JobStoreStartupError({
            message: `${STORE_URL_VARIABLE}: cannot use "${redactedUrl(settings.url)}": ${describe(cause)}`
          })
      }),
      (sql) => Effect.promise(() => sql.end({ timeout: 5 }).catch(() => undefined))
    )
  )
