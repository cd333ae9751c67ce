/**
 * A real PostgreSQL server for tests: Debian's PostgreSQL 15 binaries (`initdb`, `pg_ctl`) in a
 * temporary directory on a loopback port, password (SCRAM) authentication, torn down by `stop`.
 * PostgreSQL refuses to run as root, so as root it runs as the `postgres` user (`runuser`) with a
 * data directory that user owns.
 */
import { execFileSync } from "node:child_process"
import { chmodSync, chownSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import postgres from "postgres"
import { freePort } from "./free-port.ts"

export const POSTGRES_BIN = process.env["SVC_TEST_POSTGRES_BIN"] ?? "/usr/lib/postgresql/15/bin"

export const postgresAvailable = (): boolean => existsSync(join(POSTGRES_BIN, "pg_ctl"))

export interface PostgresServer {
  readonly port: number
  readonly dir: string
  /** File holding the password of the `svc` role and of the superuser (as SVC_STORE_PASSWORD_FILE would). */
  readonly passwordFile: string
  readonly password: string
  /**
   * `postgres://svc@127.0.0.1:<port>/<database>` (no password: it comes from the file). `svc` is an
   * ordinary role (no superuser, no BYPASSRLS), as a controller should use, so row-level security applies.
   */
  readonly url: (database: string) => string
  /** The superuser's URL with the password in it (for the tests' own checks). */
  readonly adminUrl: (database: string) => string
  /** Creates a database owned by `svc`. */
  readonly createDatabase: (name: string) => Promise<void>
  readonly stop: () => void
  /** Stops immediately (like a crash) or cleanly, and starts again on the same port and data. */
  readonly restart: (mode?: "fast" | "immediate") => void
  readonly stopOnly: (mode?: "fast" | "immediate") => void
  readonly start: () => void
}

const asRoot = typeof process.getuid === "function" && process.getuid() === 0

/** Runs a PostgreSQL binary, as the `postgres` user when we are root. */
const runPg = (binary: string, args: ReadonlyArray<string>) => {
  const path = join(POSTGRES_BIN, binary)
  const [command, argv] = asRoot ? ["runuser", ["-u", "postgres", "--", path, ...args]] : [path, [...args]]
  execFileSync(command, argv, { stdio: ["ignore", "pipe", "pipe"], timeout: 60_000 })
}

const userIds = (): { readonly uid: number; readonly gid: number } | undefined => {
  if (!asRoot) return undefined
  const uid = Number(execFileSync("id", ["-u", "postgres"]).toString().trim())
  const gid = Number(execFileSync("id", ["-g", "postgres"]).toString().trim())
  return { uid, gid }
}

/** initdb + start; `durable: false` turns fsync off (contract tests), true keeps the defaults. */
export const startPostgres = async (
  options: {
    readonly durable?: boolean
    /** Serve TLS with this certificate and key (PEM files; copied for the postgres user). */
    readonly tls?: { readonly certFile: string; readonly keyFile: string }
  } = {}
): Promise<PostgresServer> => {
  const dir = mkdtempSync(join(tmpdir(), "svc-pg-"))
  const ids = userIds()
  chmodSync(dir, 0o700)
  if (ids !== undefined) chownSync(dir, ids.uid, ids.gid)
  const data = join(dir, "data")
  const password = `pw-${crypto.randomUUID()}`
  const passwordFile = join(dir, "password")
  writeFileSync(passwordFile, `${password}\n`, { mode: 0o600 })
  if (ids !== undefined) chownSync(passwordFile, ids.uid, ids.gid)
  runPg("initdb", [
    "-D",
    data,
    "-U",
    "postgres",
    "--auth=scram-sha-256",
    `--pwfile=${passwordFile}`,
    "--no-sync",
    "-E",
    "UTF8",
    "--locale=C"
  ])
  const port = await freePort()
  const tlsSettings: Array<string> = []
  if (options.tls !== undefined) {
    const cert = join(dir, "server.crt")
    const key = join(dir, "server.key")
    writeFileSync(cert, readFileSync(options.tls.certFile), { mode: 0o600 })
    writeFileSync(key, readFileSync(options.tls.keyFile), { mode: 0o600 })
    for (const file of [cert, key]) if (ids !== undefined) chownSync(file, ids.uid, ids.gid)
    tlsSettings.push("-c ssl=on", `-c ssl_cert_file=${cert}`, `-c ssl_key_file=${key}`)
  }
  const settings = [
    ...tlsSettings,
    `-p ${port}`,
    "-c listen_addresses=127.0.0.1",
    `-c unix_socket_directories=${dir}`,
    "-c max_connections=200",
    ...(options.durable === true ? [] : ["-c fsync=off", "-c synchronous_commit=off", "-c full_page_writes=off"])
  ].join(" ")
  const start = () => runPg("pg_ctl", ["-D", data, "-o", settings, "-l", join(dir, "log"), "-w", "-t", "60", "start"])
  const stopOnly = (mode: "fast" | "immediate" = "fast") => {
    try {
      runPg("pg_ctl", ["-D", data, "-m", mode, "-w", "stop"])
    } catch {
      // Already stopped.
    }
  }
  start()
  const url = (database: string) => `postgres://svc@127.0.0.1:${port}/${database}?sslmode=disable`
  const adminUrl = (database: string) =>
    `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/${database}?sslmode=disable`
  const admin = postgres(adminUrl("postgres"), { max: 1, onnotice: () => undefined })
  try {
    await admin.unsafe(`CREATE ROLE svc LOGIN PASSWORD '${password}'`)
  } finally {
    await admin.end({ timeout: 1 })
  }
  const createDatabase = async (name: string) => {
    const client = postgres(adminUrl("postgres"), { max: 1, onnotice: () => undefined })
    try {
      await client.unsafe(`CREATE DATABASE "${name}" OWNER svc`)
    } finally {
      await client.end({ timeout: 1 })
    }
  }
  return {
    port,
    dir,
    passwordFile,
    password,
    url,
    adminUrl,
    createDatabase,
    start,
    stopOnly,
    restart: (mode = "fast") => {
      stopOnly(mode)
      start()
    },
    stop: () => {
      stopOnly("immediate")
      rmSync(dir, { recursive: true, force: true })
    }
  }
}
