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

/**
 * Whether a failed statement left its connection dead: a client or socket error, or a FATAL/PANIC
 * from the server (shutdown, terminated backend). An ERROR (SQLSTATE other than the connection
 * classes) leaves the connection usable, inside an aborted transaction.
 */
const connectionLost = (cause: unknown): boolean => {
  if (isUnavailable(cause)) return true
  if (cause instanceof postgres.PostgresError) return cause.severity === "FATAL" || cause.severity === "PANIC"
  return codeOf(cause).startsWith("E")
}

/**
 * Runs `body` in a transaction (`sql.begin`), so that a dropped connection is only ever a
 * rejected promise. The client (3.4) answers a statement of the transaction that failed by
 * writing ROLLBACK to the same connection; when the failure was the connection itself, its
 * socket is already gone and that write, deferred to a `setImmediate`, dereferences the null
 * socket outside any promise: an uncaught `TypeError ... socket.write` that ends the process.
 * So once a statement fails with the connection lost, `body` never settles: the client writes
 * nothing more, `sql.begin` rejects with the close (CONNECTION_CLOSED, UNAVAILABLE), and the
 * server has rolled the transaction back with the connection. Statements are issued each in the
 * continuation of the previous one (no timer in between), so the socket cannot close unseen.
 * (A reserved connection, `sql.reserve`, has the same write after a close, and its release would
 * put the dead connection back in the pool.)
 *
 * Only the start-up migrations use it, before the pool serves anything. The client (3.4.9, the
 * latest published; porsager/postgres #823, #1189, fixed by the unreleased PR #1218) can send
 * `sql.begin`'s BEGIN on a connection it did not reserve when BEGIN fills a busy connection's
 * pipeline: the transaction then stays open on the server and unrelated statements of the pool
 * run inside it. So nothing that serves calls sends BEGIN: every store operation is one
 * statement (migration 8's functions), a transaction of its own that commits before it answers.
 */
export const transaction = <A>(sql: Sql, body: (tx: postgres.TransactionSql) => Promise<A>): Promise<A> =>
  sql.begin(async (tx) => {
    try {
      return await body(tx)
    } catch (cause) {
      if (connectionLost(cause)) return new Promise<never>(() => undefined)
      throw cause
    }
  }) as Promise<A>

/** The client's reconnect back-off, in seconds: at most 2 s (its default grows to 20 s per attempt). */
const reconnectBackoff = (attempts: number): number => Math.min(2, 0.05 * 2 ** attempts) * (0.5 + Math.random() / 2)

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

/**
 * Opens the bounded pool (connections are made on demand); ends it when the scope closes. Its
 * connections' application_name says which replica they serve (change notifications name it).
 */
export const openPool = (
  settings: PostgresSettings,
  applicationName: string
): Effect.Effect<Sql, JobStoreStartupError, Scope.Scope> =>
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
            backoff: reconnectBackoff,
            // The client's own array-type query on each new connection is a promise nobody
            // awaits: a connection dropped during it is an unhandled rejection. The store binds
            // no array parameter.
            fetch_types: false,
            idle_timeout: 60,
            onnotice: () => undefined,
            connection: { application_name: applicationName }
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
