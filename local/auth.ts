/**
 * Helpers shared by the auth tests (not used by production code): RSA keys, signed
 * tokens, a loopback HTTP server that counts requests, and a log capture.
 */
import { execFileSync } from "node:child_process"
import { generateKeyPairSync, type KeyObject } from "node:crypto"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Logger, type HashMap } from "effect"
import { SignJWT } from "jose"
import { TENANT_API_VERSION, TENANT_KIND } from "../modules/auth/tenant.ts"

export interface TestKey {
  readonly kid: string
  readonly privateKey: KeyObject
  /** Public JWK as published in a JWKS. */
  readonly jwk: Readonly<Record<string, string>>
}

export const makeKey = (kid: string, modulusLength = 2048): TestKey => {
  const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength })
  const exported = publicKey.export({ format: "jwk" })
  return {
    kid,
    privateKey,
    jwk: { kty: "RSA", n: exported.n ?? "", e: exported.e ?? "", kid, use: "sig", alg: "RS256" }
  }
}

export const jwksBody = (...keys: ReadonlyArray<Readonly<Record<string, string>>>): string => JSON.stringify({ keys })

/** An RS256 token signed with `key`; `exp` defaults to one hour after `nowSeconds`. */
export const signToken = (key: TestKey, claims: Record<string, unknown>, nowSeconds = 0): Promise<string> =>
  new SignJWT({ exp: nowSeconds + 3600, ...claims })
    .setProtectedHeader({ alg: "RS256", kid: key.kid, typ: "JWT" })
    .sign(key.privateKey)

const base64urlJson = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url")

/** A token with an arbitrary header and a junk signature (for algorithm-confusion cases). */
export const unsignedToken = (header: Record<string, unknown>, claims: Record<string, unknown>): string =>
  `${base64urlJson(header)}.${base64urlJson(claims)}.${Buffer.from("signature").toString("base64url")}`

export type Handler = (request: Request) => Response | Promise<Response>

/** A loopback HTTP(S) server on port 0 whose handler the test swaps; it counts the requests it saw. */
export class LoopbackServer {
  hits = 0
  readonly requests: Array<Request> = []
  private readonly server: ReturnType<typeof Bun.serve>
  private waiters: Array<{ readonly count: number; readonly resolve: () => void }> = []

  constructor(
    public handler: Handler,
    tls?: { readonly cert: string; readonly key: string }
  ) {
    this.server = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      ...(tls === undefined ? {} : { tls }),
      fetch: (request) => {
        this.hits++
        this.requests.push(request)
        this.waiters = this.waiters.filter((waiter) => {
          if (this.hits < waiter.count) return true
          waiter.resolve()
          return false
        })
        return this.handler(request)
      }
    })
  }

  url(path: string, host = "127.0.0.1"): string {
    return `${this.server.url.protocol}//${host}:${this.server.port}${path}`
  }

  /** Resolves once the server has seen `count` requests in total. */
  waitForHits(count: number): Promise<void> {
    return this.hits >= count ? Promise.resolve() : new Promise((resolve) => this.waiters.push({ count, resolve }))
  }

  stop(): void {
    void this.server.stop(true)
  }
}

/** Serves a fixed JSON body, or whatever `body()` returns at the time of the request. */
export const jsonHandler =
  (body: () => string, status = 200): Handler =>
  () =>
    new Response(body(), { status, headers: { "content-type": "application/json" } })

export interface CapturedLog {
  readonly message: string
  readonly level: string
  readonly annotations: Readonly<Record<string, unknown>>
}

/** Runs `effect` with a logger that records every line instead of printing it. */
export const captureLogs = <A, E, R>(
  effect: Effect.Effect<A, E, R>,
  into: Array<CapturedLog>
): Effect.Effect<A, E, R> =>
  Effect.provide(
    effect,
    Logger.replace(
      Logger.defaultLogger,
      Logger.make(({ message, logLevel, annotations }) => {
        const text = Array.isArray(message) ? message.map(String).join(" ") : String(message)
        into.push({
          message: text,
          level: logLevel.label,
          annotations: Object.fromEntries(annotations as HashMap.HashMap<string, unknown>)
        })
      })
    )
  )

/** Waits in real time (not the test clock) for file I/O or sockets to settle. */
export const realSleep = (millis: number): Effect.Effect<void> =>
  Effect.promise(() => new Promise((resolve) => setTimeout(resolve, millis)))

/**
 * Polls `effect` in real time until `accept` holds (about a second at most): a
 * refresh woken by the test clock still reads its source asynchronously.
 */
export const eventually = <A, E>(effect: Effect.Effect<A, E>, accept: (value: A) => boolean): Effect.Effect<A, E> =>
  Effect.gen(function* () {
    for (let attempt = 0; attempt < 200; attempt++) {
      const value = yield* effect
      if (accept(value)) return value
      yield* realSleep(5)
    }
    return yield* Effect.die(new Error("condition not reached"))
  })

/** A valid `SvcTenant` document; `spec` fields override the defaults given here. */
export const tenantDocument = (
  tenantId: string,
  spec: Record<string, unknown> = {},
  name = tenantId
): Record<string, unknown> => ({
  apiVersion: TENANT_API_VERSION,
  kind: TENANT_KIND,
  metadata: { name },
  spec: {
    tenantId,
    oidc: { issuer: `https://idp.example.com/${tenantId}`, jwksEndpoint: "https://idp.example.com/jwks" },
    ...spec
  }
})

/** Whether the `openssl` command exists (the https tests need a certificate). */
export const opensslAvailable = (() => {
  try {
    execFileSync("openssl", ["version"], { stdio: "ignore" })
    return true
  } catch {
    return false
  }
})()

/** A throw-away certificate for `localhost` and 127.0.0.1, made with `openssl`. */
export const selfSignedCertificate = (): { readonly cert: string; readonly key: string } => {
  const dir = mkdtempSync(join(tmpdir(), "svc-tls-"))
  try {
    execFileSync(
      "openssl",
      [
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        join(dir, "key.pem"),
        "-out",
        join(dir, "cert.pem"),
        "-days",
        "1",
        "-subj",
        "/CN=localhost",
        "-addext",
        "subjectAltName=DNS:localhost,IP:127.0.0.1"
      ],
      { stdio: "ignore" }
    )
    return { cert: readFileSync(join(dir, "cert.pem"), "utf8"), key: readFileSync(join(dir, "key.pem"), "utf8") }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}
