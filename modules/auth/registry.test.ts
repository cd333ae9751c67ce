import { afterEach, beforeEach, describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Context, Duration, Effect, Layer, Runtime, TestClock } from "effect"
import fc from "fast-check"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { stringify } from "yaml"
import { authorize } from "../policy/rbac.ts"
import { GrpcMethods, isKnownRole, KNOWN_ROLES } from "../policy/roles.ts"
import { RootSet } from "../policy/scoring-roots.ts"
import { Authenticator, authLayer, AuthStatus, ScoringRoots } from "./authenticator.ts"
import { tenantRoles } from "./registry.ts"
import type { Tenant } from "./tenant.ts"
import {
  captureLogs,
  eventually,
  jsonHandler,
  jwksBody,
  LoopbackServer,
  makeKey,
  signToken,
  tenantDocument,
  type CapturedLog
} from "../../local/auth.ts"

const keyA = makeKey("provider-a")
const keyB = makeKey("provider-b")
const ISSUER_A = "https://a.idp.example.com/"
const ISSUER_B = "https://b.idp.example.com/"

let providerA: LoopbackServer
let providerB: LoopbackServer
let dir = ""
let file = ""
beforeEach(() => {
  providerA = new LoopbackServer(jsonHandler(() => jwksBody(keyA.jwk)))
  providerB = new LoopbackServer(jsonHandler(() => jwksBody(keyB.jwk)))
  dir = mkdtempSync(join(tmpdir(), "svc-tenants-"))
  file = join(dir, "tenants.yaml")
})
afterEach(() => {
  providerA.stop()
  providerB.stop()
  rmSync(dir, { recursive: true, force: true })
})

const providerOf = (server: LoopbackServer, issuer: string, extra: Record<string, unknown> = {}) => ({
  oidc: { issuer, jwksEndpoint: server.url("/jwks"), ...extra }
})

/** acme, initech and umbrella share provider A; globex has provider B. */
const standardTenants = (overrides: Record<string, Record<string, unknown>> = {}) => [
  tenantDocument("acme", {
    ...providerOf(providerA, ISSUER_A, { audience: "svc" }),
    scoring: { roots: ["/media/acme"] },
    ...overrides.acme
  }),
  tenantDocument("initech", { ...providerOf(providerA, ISSUER_A), ...overrides.initech }),
  tenantDocument("umbrella", { ...providerOf(providerA, ISSUER_A), enabled: false, ...overrides.umbrella }),
  tenantDocument("globex", {
    ...providerOf(providerB, ISSUER_B),
    rbac: { defaultRole: "svc:reader", allowedRoles: ["svc:reader", "svc:writer", "svc:admin", "svc:node"] },
    ...overrides.globex
  })
]

const writeTenants = (documents: ReadonlyArray<unknown>) =>
  writeFileSync(file, documents.map((document) => stringify(document)).join("---\n"))

const build = (extra: Record<string, string> = {}) =>
  Effect.map(
    Layer.build(authLayer()).pipe(
      Effect.withConfigProvider(
        ConfigProvider.fromMap(
          new Map(
            Object.entries({
              SVC_AUTH_TENANTS_SOURCE: "file",
              SVC_AUTH_TENANTS_FILE: file,
              SVC_AUTH_TENANTS_REFRESH: "30s",
              ...extra
            })
          )
        )
      )
    ),
    (context) => ({
      authenticate: Context.get(context, Authenticator).authenticate,
      roots: Context.get(context, ScoringRoots),
      status: Context.get(context, AuthStatus)
    })
  )

const startupRefusal = (documents: ReadonlyArray<unknown> | string) =>
  Effect.gen(function* () {
    if (typeof documents === "string") writeFileSync(file, documents)
    else writeTenants(documents)
    return (yield* Effect.flip(build())).message
  })

const bearerFrom = (key: typeof keyA, claims: Record<string, unknown>) =>
  Effect.map(
    Effect.promise(() => signToken(key, claims)),
    (token) => `Bearer ${token}`
  )
const acmeToken = (claims: Record<string, unknown> = {}) =>
  bearerFrom(keyA, { iss: ISSUER_A, tid: "acme", aud: "svc", ...claims })

const refreshInterval = TestClock.adjust(Duration.seconds(30))

describe("tenant registry: matching (seed 5.8)", () => {
  it.scoped("accepts a token of a configured, enabled tenant; signature checked once per JWKS endpoint", () =>
    Effect.gen(function* () {
      writeTenants(standardTenants())
      const auth = yield* build()
      expect(yield* auth.authenticate(yield* acmeToken({ svc_roles: ["svc:writer"], sub: "alice" }))).toEqual({
        tenantId: "acme",
        roles: ["svc:writer"],
        subject: "alice"
      })
      // Three tenants share provider A: one fetch of its JWKS.
      expect(providerA.hits).toBe(1)
      expect(providerB.hits).toBe(0)
      expect((yield* auth.authenticate(yield* bearerFrom(keyB, { iss: ISSUER_B, tid: "globex" }))).tenantId).toBe(
        "globex"
      )
    })
  )

  it.scoped("refuses unknown issuers, and every registry refusal carries the fixed message", () =>
    Effect.gen(function* () {
      writeTenants(standardTenants())
      const auth = yield* build()
      const error = yield* Effect.flip(
        auth.authenticate(yield* bearerFrom(keyA, { iss: "https://elsewhere.example.com/", tid: "acme" }))
      )
      expect(error).toMatchObject({
        _tag: "Unauthenticated",
        reason: "unknown-issuer",
        message: "invalid or missing token"
      })
      expect(providerA.hits).toBe(0)
    })
  )

  it.scoped("property: a token from tenant A's provider naming tenant B matches nothing", () =>
    Effect.gen(function* () {
      writeTenants(standardTenants())
      const auth = yield* build()
      const tenants = [
        { id: "acme", key: keyA, iss: ISSUER_A },
        { id: "initech", key: keyA, iss: ISSUER_A },
        { id: "globex", key: keyB, iss: ISSUER_B }
      ]
      const pairs = tenants.flatMap((a) => tenants.filter((b) => b.key !== a.key).map((b) => [a, b] as const))
      // Runs each case in the test's runtime, so its clock (and token times) apply.
      const runtime = yield* Effect.runtime()
      yield* Effect.promise(() =>
        fc.assert(
          fc.asyncProperty(fc.constantFrom(...pairs), fc.boolean(), async ([a, b], claimOwnIssuer) => {
            // Signed by A's key, naming B's tenant, with A's issuer or B's issuer.
            const token = await signToken(a.key, { iss: claimOwnIssuer ? a.iss : b.iss, tid: b.id, aud: "svc" })
            const error = await Runtime.runPromise(runtime)(Effect.flip(auth.authenticate(`Bearer ${token}`)))
            expect(error._tag).toBe("Unauthenticated")
          }),
          { numRuns: 20 }
        )
      )
    })
  )

  it.scoped("refuses a token that matches two tenants", () =>
    Effect.gen(function* () {
      writeTenants([
        ...standardTenants(),
        tenantDocument("hooli", { ...providerOf(providerA, ISSUER_A, { tenantClaim: "org" }) })
      ])
      const auth = yield* build()
      const error = yield* Effect.flip(auth.authenticate(yield* acmeToken({ org: "hooli" })))
      expect(error).toMatchObject({ reason: "ambiguous-tenant", message: "invalid or missing token" })
      expect((yield* auth.authenticate(yield* bearerFrom(keyA, { iss: ISSUER_A, org: "hooli" }))).tenantId).toBe(
        "hooli"
      )
    })
  )

  it.scoped("checks each tenant's own audience", () =>
    Effect.gen(function* () {
      writeTenants(standardTenants())
      const auth = yield* build()
      for (const aud of [undefined, "other-app"]) {
        expect((yield* Effect.flip(auth.authenticate(yield* acmeToken({ aud })))).reason).toBe("wrong-audience")
      }
      // initech has no audience: a token for any application is accepted.
      expect(
        (yield* auth.authenticate(yield* bearerFrom(keyA, { iss: ISSUER_A, tid: "initech", aud: "other-app" })))
          .tenantId
      ).toBe("initech")
    })
  )

  it.scoped("refuses a suspended tenant with PERMISSION_DENIED", () =>
    Effect.gen(function* () {
      writeTenants(standardTenants())
      const auth = yield* build()
      const error = yield* Effect.flip(auth.authenticate(yield* bearerFrom(keyA, { iss: ISSUER_A, tid: "umbrella" })))
      expect(error).toMatchObject({ _tag: "PermissionDenied" })
    })
  )

  it.scoped(
    "roles: allowedRoles filter, defaultRole only when no recognised role is named, node only when allowed",
    () =>
      Effect.gen(function* () {
        writeTenants(standardTenants())
        const auth = yield* build()
        const acmeRoles = (svc_roles: unknown) =>
          Effect.map(Effect.flatMap(acmeToken({ svc_roles }), auth.authenticate), (p) => p.roles)
        expect(yield* acmeRoles(["svc:writer", "svc:admin"])).toEqual(["svc:writer"])
        expect(yield* acmeRoles(undefined)).toEqual(["svc:reader"])
        expect(yield* acmeRoles([])).toEqual(["svc:reader"])
        expect(yield* acmeRoles(["svc:root"])).toEqual(["svc:reader"])
        // Only dropped roles: none kept, refused everywhere.
        const dropped = yield* acmeRoles(["svc:admin", "svc:node"])
        expect(dropped).toEqual([])
        for (const method of Object.values(GrpcMethods)) {
          expect(
            (yield* Effect.flip(authorize({ tenantId: "acme", roles: dropped, subject: undefined }, method))).message
          ).toMatch(/^role required: /)
        }
        const globexRoles = (claims: Record<string, unknown>) =>
          Effect.map(
            Effect.flatMap(bearerFrom(keyB, { iss: ISSUER_B, tid: "globex", ...claims }), auth.authenticate),
            (p) => p.roles
          )
        expect(yield* globexRoles({ svc_roles: "svc:node" })).toEqual(["svc:node"])
        expect(yield* globexRoles({})).toEqual(["svc:reader"])
      })
  )

  it.scoped("gives each tenant its own spec.scoring.roots", () =>
    Effect.gen(function* () {
      writeTenants(standardTenants())
      const auth = yield* build()
      const acme = yield* auth.authenticate(yield* acmeToken())
      expect((yield* auth.roots.forPrincipal(acme)).texts).toEqual(["/media/acme"])
      const globex = yield* auth.authenticate(yield* bearerFrom(keyB, { iss: ISSUER_B, tid: "globex" }))
      expect((yield* auth.roots.forPrincipal(globex)).texts).toEqual([])
    })
  )
})

describe("registry roles (seed 5.8.5, 5.8.6)", () => {
  const tenantWith = (
    allowedRoles: ReadonlyArray<(typeof KNOWN_ROLES)[number]>,
    defaultRole: (typeof KNOWN_ROLES)[number]
  ): Tenant => ({
    name: "t",
    tenantId: "t",
    enabled: true,
    provider: {
      issuer: ISSUER_A,
      jwksEndpoint: "https://idp/jwks",
      audience: undefined,
      tenantClaim: "tid",
      rolesClaim: "svc_roles"
    },
    defaultRole,
    allowedRoles,
    roots: new RootSet([])
  })
  const claimStrings = fc.array(fc.oneof(fc.constantFrom(...KNOWN_ROLES), fc.constantFrom("svc:root", "admin", "")), {
    maxLength: 6
  })
  const allowed = fc.uniqueArray(fc.constantFrom(...KNOWN_ROLES), { minLength: 1 })

  it("property: named roles filtered by allowedRoles; the default only when no recognised role is named", () => {
    fc.assert(
      fc.property(claimStrings, allowed, fc.boolean(), (named, allowedRoles, asSingleString) => {
        fc.pre(allowedRoles.some((role) => role !== "svc:node"))
        const defaultRole = allowedRoles.find((role) => role !== "svc:node") ?? "svc:reader"
        const claim = asSingleString ? named[0] : named
        const recognised = (asSingleString ? named.slice(0, 1) : named).filter(isKnownRole)
        const roles = tenantRoles(tenantWith(allowedRoles, defaultRole), { svc_roles: claim })
        if (recognised.length === 0) expect(roles).toEqual([defaultRole])
        else
          expect([...roles].sort()).toEqual(
            [...new Set(recognised.filter((role) => allowedRoles.includes(role)))].sort()
          )
      })
    )
  })

  it("property: a token without a role claim never acts as a node", () => {
    fc.assert(
      fc.property(allowed, (allowedRoles) => {
        fc.pre(allowedRoles.some((role) => role !== "svc:node"))
        const defaultRole = allowedRoles.find((role) => role !== "svc:node") ?? "svc:reader"
        expect(tenantRoles(tenantWith(allowedRoles, defaultRole), {})).not.toContain("svc:node")
      })
    )
  })
})

describe("tenant registry: refresh and staleness (seed 3)", () => {
  it.scoped("a suspension takes effect within one refresh interval, without restart", () =>
    Effect.gen(function* () {
      writeTenants(standardTenants())
      const auth = yield* build()
      const token = yield* acmeToken()
      yield* auth.authenticate(token)
      writeTenants(standardTenants({ acme: { enabled: false } }))
      yield* refreshInterval
      const refused = yield* eventually(Effect.either(auth.authenticate(token)), (result) => result._tag === "Left")
      expect(refused._tag === "Left" && refused.left._tag).toBe("PermissionDenied")
    })
  )

  it.scoped("a refresh drops only the invalid tenant and logs `tenant refused`", () =>
    Effect.gen(function* () {
      const logs: Array<CapturedLog> = []
      writeTenants(standardTenants())
      const auth = yield* captureLogs(build(), logs)
      const globexToken = yield* bearerFrom(keyB, { iss: ISSUER_B, tid: "globex" })
      yield* auth.authenticate(globexToken)
      writeTenants(standardTenants({ globex: { rbac: { allowedRoles: ["svc:superuser"] } } }))
      yield* refreshInterval
      const refused = yield* eventually(
        Effect.either(auth.authenticate(globexToken)),
        (result) => result._tag === "Left"
      )
      expect(refused._tag === "Left" && refused.left._tag).toBe("Unauthenticated")
      yield* auth.authenticate(yield* acmeToken())
      expect(logs.find((log) => log.message === "tenant refused")?.annotations).toMatchObject({ resource: "globex" })
      expect((yield* auth.status.tenantSet)?.tenantCount).toBe(3)
    })
  )

  it.scoped(
    "keeps the last set while the source is unreadable, refuses everyone with UNAVAILABLE after ten intervals",
    () =>
      Effect.gen(function* () {
        writeTenants(standardTenants())
        const auth = yield* build()
        const token = yield* acmeToken()
        rmSync(file)
        for (let interval = 1; interval <= 10; interval++) {
          yield* refreshInterval
          yield* eventually(auth.status.tenantSet, (status) => status?.lastReadError !== undefined)
          yield* auth.authenticate(token)
        }
        expect(yield* auth.status.readiness).toEqual({ ready: true, reason: undefined })
        yield* TestClock.adjust(Duration.millis(1))
        const error = yield* Effect.flip(auth.authenticate(token))
        expect(error).toMatchObject({
          _tag: "Unavailable",
          message: "tenant configuration is stale"
        })
        expect((yield* Effect.flip(auth.authenticate(undefined)))._tag).toBe("Unavailable")
        expect(
          yield* Effect.flip(auth.roots.forPrincipal({ tenantId: "acme", roles: [], subject: undefined }))
        ).toMatchObject({ _tag: "Unavailable" })
        expect(yield* auth.status.readiness).toEqual({ ready: false, reason: "tenant configuration is stale" })
        // The source answers again: the next refresh makes the set current.
        writeTenants(standardTenants())
        yield* refreshInterval
        yield* eventually(auth.status.readiness, (readiness) => readiness.ready)
        yield* auth.authenticate(token)
      })
  )

  it.scoped("warns at start-up for each tenant without an audience", () =>
    Effect.gen(function* () {
      const logs: Array<CapturedLog> = []
      writeTenants(standardTenants())
      yield* captureLogs(build(), logs)
      const warned = logs
        .filter((log) => log.message.startsWith("tenant has no oidc.audience"))
        .map((log) => log.annotations.tenant)
      expect(warned.sort()).toEqual(["globex", "initech", "umbrella"])
    })
  )
})

describe("tenant registry: start-up refusals of seed 5.8", () => {
  const prefix = () => `tenant registry (file ${file})`

  it.scoped("the source cannot be read", () =>
    Effect.gen(function* () {
      expect((yield* Effect.flip(build())).message).toContain(`${prefix()}: cannot read ${file}`)
    })
  )

  it.scoped("the file is not YAML or JSON", () =>
    Effect.gen(function* () {
      expect(yield* startupRefusal("apiVersion: [unclosed\n")).toContain(`${prefix()}: ${file} is not YAML or JSON`)
    })
  )

  it.scoped("a document of another apiVersion or kind", () =>
    Effect.gen(function* () {
      expect(yield* startupRefusal([{ ...tenantDocument("acme"), apiVersion: "svc.example.io/v1" }])).toContain(
        `SvcTenant "acme": expected apiVersion svc.dev/v1 and kind SvcTenant, got svc.example.io/v1 SvcTenant`
      )
      expect(yield* startupRefusal([{ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "cm" } }])).toContain(
        `SvcTenant "cm": expected apiVersion svc.dev/v1 and kind SvcTenant, got v1 ConfigMap`
      )
    })
  )

  it.scoped("a spec field the definition does not define", () =>
    Effect.gen(function* () {
      expect(yield* startupRefusal([tenantDocument("acme", { rbac: { allowedRole: ["svc:reader"] } })])).toContain(
        `SvcTenant "acme": spec.rbac.allowedRole: is unexpected`
      )
    })
  )

  const invalidTenants: ReadonlyArray<readonly [string, Record<string, unknown>, string]> = [
    ["a tenantId that fails the pattern", { tenantId: "Acme_Corp" }, `spec.tenantId "Acme_Corp" does not match`],
    [
      "an issuer that is not an absolute http(s) URL",
      { oidc: { issuer: "/relative", jwksEndpoint: "https://i/jwks" } },
      "spec.oidc.issuer must be an absolute http(s) URL"
    ],
    [
      "a JWKS endpoint that is not https",
      { oidc: { issuer: "https://i/", jwksEndpoint: "http://idp.example.com/jwks" } },
      "spec.oidc.jwksEndpoint must be an https URL"
    ],
    [
      "an unknown role",
      { rbac: { allowedRoles: ["svc:reader", "svc:root"] } },
      `spec.rbac.allowedRoles: unknown role "svc:root"`
    ],
    ["an empty allowedRoles", { rbac: { allowedRoles: [] } }, "spec.rbac.allowedRoles must not be empty"],
    [
      "a defaultRole not in allowedRoles",
      { rbac: { defaultRole: "svc:writer", allowedRoles: ["svc:reader"] } },
      `spec.rbac.defaultRole "svc:writer" is not in spec.rbac.allowedRoles`
    ],
    [
      "svc:node as the default role",
      { rbac: { defaultRole: "svc:node", allowedRoles: ["svc:node", "svc:reader"] } },
      `spec.rbac.defaultRole must not be "svc:node"`
    ],
    [
      "an invalid scoring root",
      { scoring: { roots: ["/media/../etc"] } },
      'spec.scoring.roots: "/media/../etc" contains a `..` element'
    ]
  ]
  for (const [rule, spec, message] of invalidTenants) {
    it.scoped(`a tenant with ${rule}`, () =>
      Effect.gen(function* () {
        expect(
          yield* startupRefusal([
            tenantDocument("globex"),
            { ...tenantDocument("acme"), spec: { ...(tenantDocument("acme").spec as object), ...spec } }
          ])
        ).toContain(`${prefix()} refused: SvcTenant "acme": ${message}`)
      })
    )
  }

  it.scoped("two tenants with the same tenantId", () =>
    Effect.gen(function* () {
      expect(
        yield* startupRefusal([tenantDocument("acme", {}, "first"), tenantDocument("acme", {}, "second")])
      ).toContain(`SvcTenant "first": spec.tenantId "acme" is used by several tenants: first, second`)
    })
  )
})
