import { afterEach, describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Context, Duration, Effect, Layer, TestClock } from "effect"
import fc from "fast-check"
import { authorize } from "../policy/rbac.ts"
import { GrpcMethods } from "../policy/roles.ts"
import { importJWK } from "jose"
import {
  authenticateWithProvider,
  Authenticator,
  authLayer,
  AuthStatus,
  DISABLED_MODE_PRINCIPAL,
  ScoringRoots
} from "./authenticator.ts"
import type { JwksCache } from "./jwks.ts"
import { AuthMetrics } from "./metrics.ts"
import { jsonHandler, jwksBody, LoopbackServer, makeKey, signToken, unsignedToken } from "../../local/auth.ts"

const key = makeKey("k1")
const otherKeySameKid = makeKey("k1")
const ISSUER = "https://idp.example.com/"

const servers: Array<LoopbackServer> = []
afterEach(() => {
  for (const server of servers.splice(0)) server.stop()
})
const jwksServer = () => {
  const server = new LoopbackServer(jsonHandler(() => jwksBody(key.jwk)))
  servers.push(server)
  return server
}

const build = (env: Record<string, string>) =>
  Effect.map(
    Layer.build(authLayer()).pipe(Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env))))),
    (context) => ({
      authenticate: Context.get(context, Authenticator).authenticate,
      roots: Context.get(context, ScoringRoots),
      status: Context.get(context, AuthStatus),
      counters: Context.get(context, AuthMetrics)
    })
  )

const single = (server: LoopbackServer, extra: Record<string, string> = {}) =>
  build({ SVC_JWKS_ENDPOINT: server.url("/jwks"), SVC_AUTH_ISSUER: ISSUER, ...extra })

const bearer = (token: string) => `Bearer ${token}`
const tokenFor = (claims: Record<string, unknown>) =>
  Effect.promise(() => signToken(key, { iss: ISSUER, tid: "acme", ...claims }))

describe("single-provider mode", () => {
  it.scoped("accepts a valid RS256 token and reads tenant, roles and subject", () =>
    Effect.gen(function* () {
      const auth = yield* single(jwksServer())
      const principal = yield* auth.authenticate(
        bearer(yield* tokenFor({ svc_roles: ["svc:writer", "svc:root"], sub: "alice" }))
      )
      expect(principal).toEqual({ tenantId: "acme", roles: ["svc:writer"], subject: "alice" })
      // Any tenant name the provider issues is accepted, compared exactly.
      expect((yield* auth.authenticate(bearer(yield* tokenFor({ tid: " Globex " })))).tenantId).toBe(" Globex ")
      expect((yield* auth.status.readiness).ready).toBe(true)
    })
  )

  it.scoped("reads roles from a JSON array or a single string; none, empty or unknown roles hold nothing", () =>
    Effect.gen(function* () {
      const auth = yield* single(jwksServer())
      const rolesOf = (svc_roles: unknown) =>
        Effect.map(
          Effect.flatMap(tokenFor({ svc_roles }), (t) => auth.authenticate(bearer(t))),
          (p) => p.roles
        )
      expect(yield* rolesOf("svc:admin")).toEqual(["svc:admin"])
      expect(yield* rolesOf(["svc:reader", "svc:node"])).toEqual(["svc:reader", "svc:node"])
      for (const nothing of [undefined, [], "", ["svc:root", "admin"], 42]) {
        const roles = yield* rolesOf(nothing)
        expect(roles).toEqual([])
        for (const method of Object.values(GrpcMethods)) {
          expect((yield* Effect.flip(authorize({ tenantId: "acme", roles, subject: undefined }, method)))._tag).toBe(
            "PermissionDenied"
          )
        }
      }
    })
  )

  it.scoped("honours custom claim names and the audience when configured", () =>
    Effect.gen(function* () {
      const auth = yield* single(jwksServer(), {
        SVC_AUTH_TENANT_CLAIM: "org_id",
        SVC_AUTH_ROLES_CLAIM: "roles",
        SVC_AUTH_AUDIENCE: "svc"
      })
      const principal = yield* auth.authenticate(
        bearer(yield* tokenFor({ org_id: "org-7", roles: "svc:reader", aud: ["other", "svc"] }))
      )
      expect(principal).toMatchObject({ tenantId: "org-7", roles: ["svc:reader"] })
      for (const aud of [undefined, "other", ["x", "y"]]) {
        const error = yield* Effect.flip(auth.authenticate(bearer(yield* tokenFor({ org_id: "org-7", aud }))))
        expect(error).toMatchObject({
          _tag: "Unauthenticated",
          reason: "wrong-audience",
          message: "invalid or missing token"
        })
      }
    })
  )

  it.scoped("refuses with UNAUTHENTICATED and the fixed message, logging the reason", () =>
    Effect.gen(function* () {
      const server = jwksServer()
      const auth = yield* single(server)
      const cases: ReadonlyArray<readonly [string | undefined, string]> = [
        [undefined, "missing-token"],
        ["", "missing-token"],
        ["Basic dXNlcjpwdw==", "missing-token"],
        [bearer("not-a-jwt"), "malformed-token"],
        [bearer(yield* tokenFor({ iss: "https://evil.example.com/" })), "wrong-issuer"],
        [bearer(yield* tokenFor({ tid: undefined })), "missing-tenant-claim"],
        [bearer(yield* tokenFor({ tid: "" })), "missing-tenant-claim"],
        [bearer(yield* tokenFor({ tid: 7 })), "missing-tenant-claim"],
        [bearer(yield* tokenFor({ exp: -1 })), "expired"],
        [bearer(yield* tokenFor({ exp: undefined })), "expired"],
        [bearer(yield* tokenFor({ nbf: 60 })), "not-yet-valid"],
        [bearer(yield* Effect.promise(() => signToken(otherKeySameKid, { iss: ISSUER, tid: "acme" }))), "bad-signature"]
      ]
      for (const [authorization, reason] of cases) {
        const error = yield* Effect.flip(auth.authenticate(authorization))
        expect(error, reason).toMatchObject({
          _tag: "Unauthenticated",
          reason,
          message: "invalid or missing token"
        })
      }
      expect(auth.counters.refusalsByReason()).toContainEqual({ reason: "missing-token", count: 3 })
    })
  )

  it.scoped("refuses any alg but RS256 before looking up a key", () =>
    Effect.gen(function* () {
      const server = jwksServer()
      const auth = yield* single(server)
      for (const alg of ["none", "HS256", "RS512", "PS256", "ES256", "RS256 "]) {
        const token = unsignedToken({ alg, kid: "k1", typ: "JWT" }, { iss: ISSUER, tid: "acme", exp: 3600 })
        expect((yield* Effect.flip(auth.authenticate(bearer(token)))).reason).toBe("unsupported-algorithm")
      }
      expect((yield* Effect.flip(auth.authenticate(bearer(unsignedToken({ kid: "k1" }, {}))))).reason).toBe(
        "unsupported-algorithm"
      )
      expect(server.hits).toBe(0)
    })
  )

  it.scoped("checks exp on every request", () =>
    Effect.gen(function* () {
      const auth = yield* single(jwksServer())
      const token = bearer(yield* tokenFor({ exp: 600 }))
      yield* auth.authenticate(token)
      yield* TestClock.adjust(Duration.seconds(599))
      yield* auth.authenticate(token)
      yield* TestClock.adjust(Duration.seconds(1))
      expect((yield* Effect.flip(auth.authenticate(token))).reason).toBe("expired")
    })
  )

  it.scoped("gives every caller SVC_SCORING_ROOTS with {tenant} substituted", () =>
    Effect.gen(function* () {
      const auth = yield* single(jwksServer(), { SVC_SCORING_ROOTS: "/media/{tenant},/shared" })
      const roots = yield* auth.roots.forPrincipal({ tenantId: "acme", roles: [], subject: undefined })
      expect(roots.texts).toEqual(["/media/acme", "/shared"])
      expect((yield* auth.roots.forPrincipal({ tenantId: "a:b", roles: [], subject: undefined })).texts).toEqual([
        "/shared"
      ])
      expect(
        (yield* (yield* single(jwksServer())).roots.forPrincipal({ tenantId: "acme", roles: [], subject: undefined }))
          .texts
      ).toEqual([])
    })
  )
})

describe("claims, as properties", () => {
  const provider = {
    jwksEndpoint: "https://idp/jwks",
    issuer: ISSUER,
    audience: undefined,
    tenantClaim: "tid",
    rolesClaim: "svc_roles"
  }
  const staticKeys = async (): Promise<JwksCache> => {
    const imported = await importJWK(key.jwk, "RS256")
    if (imported instanceof Uint8Array) throw new Error("not an RSA key")
    return {
      endpoint: provider.jwksEndpoint,
      keyFor: () => Effect.succeed(imported),
      status: Effect.die("unused"),
      keepFetched: Effect.never
    }
  }

  // The verifier reads Effect's Clock: on a TestClock held at one instant, no stall of a loaded
  // machine can move "now" between signing and checking, so the boundary second itself is tested.
  it.effect("property: a token is accepted exactly while now < exp (TestClock; exp = now is refused)", () =>
    Effect.gen(function* () {
      const jwks = yield* Effect.promise(staticKeys)
      const now = 1_900_000_000
      yield* TestClock.setTime(now * 1000)
      const clock = yield* Effect.clock
      yield* Effect.promise(() =>
        fc.assert(
          fc.asyncProperty(fc.integer({ min: 0, max: 7200 }), fc.boolean(), async (offset, expired) => {
            const token = await signToken(key, {
              iss: ISSUER,
              tid: "acme",
              exp: expired ? now - offset : now + offset + 1
            })
            const outcome = await Effect.runPromise(
              Effect.withClock(Effect.either(authenticateWithProvider(token, provider, jwks)), clock)
            )
            expect(outcome._tag).toBe(expired ? "Left" : "Right")
          }),
          {
            numRuns: 25,
            examples: [
              [0, true],
              [0, false]
            ]
          }
        )
      )
    })
  )

  it("property: the tenant is the claim's exact string, whatever it holds", async () => {
    const jwks = await staticKeys()
    await fc.assert(
      fc.asyncProperty(fc.string({ minLength: 1 }), async (tenantId) => {
        const token = await signToken(key, { iss: ISSUER, tid: tenantId, exp: Math.floor(Date.now() / 1000) + 600 })
        const principal = await Effect.runPromise(authenticateWithProvider(token, provider, jwks))
        expect(principal.tenantId).toBe(tenantId)
      }),
      { numRuns: 25 }
    )
  })
})

describe("disabled mode", () => {
  it.scoped("processes every request as tenant dev with svc:admin and svc:node", () =>
    Effect.gen(function* () {
      const auth = yield* build({ SVC_AUTH_DISABLED: "true", SVC_SCORING_ROOTS: "/media/{tenant}" })
      for (const authorization of [undefined, "Bearer junk", "whatever"]) {
        expect(yield* auth.authenticate(authorization)).toEqual(DISABLED_MODE_PRINCIPAL)
      }
      expect(DISABLED_MODE_PRINCIPAL).toEqual({ tenantId: "dev", roles: ["svc:admin", "svc:node"], subject: undefined })
      expect((yield* auth.roots.forPrincipal(DISABLED_MODE_PRINCIPAL)).texts).toEqual(["/media/dev"])
      expect(auth.status.mode).toBe("Disabled")
    })
  )

  it("property: the synthetic admin still cannot call a method outside the table", () => {
    fc.assert(
      fc.property(
        fc
          .string()
          .filter((method) => !Object.values(GrpcMethods).includes(method as never) && method !== "POST /v1/score"),
        (method) => {
          expect(Effect.runSync(Effect.either(authorize(DISABLED_MODE_PRINCIPAL, method)))._tag).toBe("Left")
        }
      )
    )
  })
})
