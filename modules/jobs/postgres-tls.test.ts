/**
 * TLS to PostgreSQL with libpq's conventions: `sslmode=verify-ca` / `verify-full` check the
 * server against the CA named by `sslrootcert` (or PGSSLROOTCERT), `verify-full` also the host
 * name; client-side parameters never reach the server as settings. A real server with a
 * certificate signed by a CA the test makes.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { execFileSync } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { connectionTarget } from "./postgres/client.ts"
import { postgresBackend } from "./postgres/store.ts"
import { DEFAULT_SESSION_SETTINGS } from "./sessions.ts"
import { JobStore } from "./store.ts"
import { type PostgresServer, postgresAvailable, startPostgres } from "../../local/postgres-server.ts"

describe("connectionTarget (libpq TLS parameters)", () => {
  const read = (path: string) => `contents of ${path}`
  it("moves sslrootcert/sslcert/sslkey out of the URL into TLS options; verify-ca skips the host check", () => {
    const target = connectionTarget(
      "postgres://svc@db:5432/jobs?sslmode=verify-ca&sslrootcert=/ca.pem&sslcert=/c.pem&sslkey=/k.pem",
      undefined,
      read
    )
    expect(target.url).toBe("postgres://svc@db:5432/jobs?sslmode=verify-ca")
    expect(target.tls).toEqual({
      ca: "contents of /ca.pem",
      cert: "contents of /c.pem",
      key: "contents of /k.pem",
      verifyHost: false
    })
  })

  it("PGSSLROOTCERT names the CA when the URL does not; 'system' and no file keep the system roots", () => {
    expect(connectionTarget("postgres://h/d?sslmode=verify-full", "/env-ca.pem", read).tls).toEqual({
      ca: "contents of /env-ca.pem",
      verifyHost: true
    })
    expect(connectionTarget("postgres://h/d?sslmode=verify-full&sslrootcert=system", undefined, read).tls).toBe(
      undefined
    )
    expect(connectionTarget("postgres://h/d?sslmode=require", "/env-ca.pem", read)).toEqual({
      url: "postgres://h/d?sslmode=require",
      tls: undefined
    })
  })
})

describe.skipIf(!postgresAvailable())("TLS to a real PostgreSQL", () => {
  const dir = mkdtempSync(join(tmpdir(), "svc-pg-tls-"))
  const file = (name: string) => join(dir, name)
  let server: PostgresServer

  beforeAll(async () => {
    const openssl = (...args: ReadonlyArray<string>) => execFileSync("openssl", args, { stdio: "pipe" })
    openssl(
      "req",
      "-x509",
      "-newkey",
      "rsa:2048",
      "-nodes",
      "-days",
      "1",
      "-subj",
      "/CN=svc test CA",
      "-keyout",
      file("ca.key"),
      "-out",
      file("ca.pem")
    )
    openssl(
      "req",
      "-x509",
      "-newkey",
      "rsa:2048",
      "-nodes",
      "-days",
      "1",
      "-subj",
      "/CN=other CA",
      "-keyout",
      file("other.key"),
      "-out",
      file("other.pem")
    )
    openssl(
      "req",
      "-newkey",
      "rsa:2048",
      "-nodes",
      "-subj",
      "/CN=db.example.test",
      "-keyout",
      file("server.key"),
      "-out",
      file("server.csr")
    )
    writeFileSync(file("san.ext"), "subjectAltName=DNS:db.example.test\n")
    openssl(
      "x509",
      "-req",
      "-in",
      file("server.csr"),
      "-CA",
      file("ca.pem"),
      "-CAkey",
      file("ca.key"),
      "-CAcreateserial",
      "-days",
      "1",
      "-extfile",
      file("san.ext"),
      "-out",
      file("server.pem")
    )
    server = await startPostgres({ tls: { certFile: file("server.pem"), keyFile: file("server.key") } })
    await server.createDatabase("tls")
  }, 120_000)
  afterAll(() => {
    server?.stop()
    rmSync(dir, { recursive: true, force: true })
  })

  const open = (query: string) =>
    Effect.scoped(
      Effect.flatMap(
        Layer.build(
          postgresBackend(
            {
              url: `postgres://svc@127.0.0.1:${server.port}/tls?${query}`,
              passwordFile: Option.some(server.passwordFile),
              poolMax: 1
            },
            DEFAULT_SESSION_SETTINGS
          )
        ),
        (context) => (context.unsafeMap.get(JobStore.key) as typeof JobStore.Service).countByState
      )
    )

  it.live("verify-ca with the CA connects (the host name is not checked)", () =>
    Effect.gen(function* () {
      expect((yield* open(`sslmode=verify-ca&sslrootcert=${file("ca.pem")}`)).pending).toBe(0)
    })
  )

  it.live("verify-full refuses a certificate for another host; a certificate of an unknown CA is refused", () =>
    Effect.gen(function* () {
      const wrongHost = yield* Effect.flip(open(`sslmode=verify-full&sslrootcert=${file("ca.pem")}`))
      expect(wrongHost.message).toContain("SVC_STORE_URL")
      expect(wrongHost.message).toMatch(/altnames|host|IP/i)
      const unknownCa = yield* Effect.flip(open(`sslmode=verify-ca&sslrootcert=${file("other.pem")}`))
      expect(unknownCa.message).toMatch(/certificate/i)
      expect(readFileSync(file("ca.pem"), "utf8")).toContain("BEGIN CERTIFICATE")
    })
  )
})
