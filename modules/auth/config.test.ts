import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect } from "effect"
import fc from "fast-check"
import { loadAuthMode } from "./config.ts"
import { parseGoDuration } from "./duration.ts"

const load = (env: Record<string, string>) =>
  Effect.withConfigProvider(loadAuthMode, ConfigProvider.fromMap(new Map(Object.entries(env))))
const refusal = (env: Record<string, string>) => Effect.map(Effect.flip(load(env)), (error) => error.message)

const SINGLE = { SVC_JWKS_ENDPOINT: "https://idp.example.com/jwks", SVC_AUTH_ISSUER: "https://idp.example.com/" }
const REGISTRY = { SVC_AUTH_TENANTS_SOURCE: "file", SVC_AUTH_TENANTS_FILE: "/etc/svc/tenants.yaml" }

describe("auth mode selection", () => {
  it.effect("single provider, with claim-name defaults", () =>
    Effect.gen(function* () {
      expect(
        yield* load({ ...SINGLE, SVC_SCORING_ROOTS: "/media/{tenant}, https://cdn.example.com/{tenant}" })
      ).toEqual({
        _tag: "SingleProvider",
        provider: {
          jwksEndpoint: SINGLE.SVC_JWKS_ENDPOINT,
          issuer: SINGLE.SVC_AUTH_ISSUER,
          audience: undefined,
          tenantClaim: "tid",
          rolesClaim: "svc_roles"
        },
        scoringRoots: ["/media/{tenant}", "https://cdn.example.com/{tenant}"]
      })
      const custom = yield* load({
        ...SINGLE,
        SVC_AUTH_AUDIENCE: "svc",
        SVC_AUTH_TENANT_CLAIM: "org_id",
        SVC_AUTH_ROLES_CLAIM: "roles"
      })
      expect(custom._tag === "SingleProvider" && custom.provider).toMatchObject({
        audience: "svc",
        tenantClaim: "org_id",
        rolesClaim: "roles"
      })
    })
  )

  it.effect("disabled", () =>
    Effect.gen(function* () {
      expect(yield* load({ SVC_AUTH_DISABLED: "true" })).toEqual({ _tag: "Disabled", scoringRoots: [] })
      expect((yield* load({ ...SINGLE, SVC_AUTH_DISABLED: "false" }))._tag).toBe("SingleProvider")
      expect((yield* load({ SVC_AUTH_DISABLED: "ON" }))._tag).toBe("Disabled")
    })
  )

  it.effect("registry from a file or the orchestrator, refresh default 30s", () =>
    Effect.gen(function* () {
      expect(yield* load(REGISTRY)).toEqual({
        _tag: "Registry",
        source: { _tag: "File", path: "/etc/svc/tenants.yaml" },
        refreshMillis: 30_000
      })
      expect(
        yield* load({
          SVC_AUTH_TENANTS_SOURCE: "orchestrator",
          SVC_AUTH_TENANTS_NAMESPACE: "svc",
          SVC_AUTH_TENANTS_REFRESH: "1m30s"
        })
      ).toEqual({
        _tag: "Registry",
        source: { _tag: "Orchestrator", namespace: "svc" },
        refreshMillis: 90_000
      })
      expect(yield* load({ SVC_AUTH_TENANTS_SOURCE: "orchestrator", SVC_AUTH_TENANTS_REFRESH: "1h" })).toMatchObject({
        refreshMillis: 3_600_000
      })
      expect(yield* load({ SVC_AUTH_TENANTS_SOURCE: "orchestrator", SVC_AUTH_TENANTS_REFRESH: "1s" })).toMatchObject({
        refreshMillis: 1_000
      })
    })
  )
})

describe("start-up refusals of seed 5.8 (settings that do not fit the source)", () => {
  it.effect("SVC_AUTH_TENANTS_FILE without source file", () =>
    Effect.gen(function* () {
      expect(yield* refusal({ SVC_AUTH_TENANTS_SOURCE: "orchestrator", SVC_AUTH_TENANTS_FILE: "/t.yaml" })).toContain(
        `SVC_AUTH_TENANTS_FILE is set but SVC_AUTH_TENANTS_SOURCE is not "file"`
      )
      expect(yield* refusal({ ...SINGLE, SVC_AUTH_TENANTS_FILE: "/t.yaml" })).toContain(
        "SVC_AUTH_TENANTS_FILE set without SVC_AUTH_TENANTS_SOURCE"
      )
    })
  )

  it.effect("source file without SVC_AUTH_TENANTS_FILE", () =>
    Effect.map(refusal({ SVC_AUTH_TENANTS_SOURCE: "file" }), (message) =>
      expect(message).toContain("SVC_AUTH_TENANTS_SOURCE=file requires SVC_AUTH_TENANTS_FILE")
    )
  )

  it.effect("SVC_AUTH_TENANTS_NAMESPACE without source orchestrator", () =>
    Effect.map(refusal({ ...REGISTRY, SVC_AUTH_TENANTS_NAMESPACE: "svc" }), (message) =>
      expect(message).toContain(`SVC_AUTH_TENANTS_NAMESPACE is set but SVC_AUTH_TENANTS_SOURCE is not "orchestrator"`)
    )
  )

  it.effect("an unknown source", () =>
    Effect.map(refusal({ SVC_AUTH_TENANTS_SOURCE: "kubernetes" }), (message) =>
      expect(message).toContain(`SVC_AUTH_TENANTS_SOURCE must be "file" or "orchestrator", got "kubernetes"`)
    )
  )

  it.effect("a refresh interval out of range or not a duration", () =>
    Effect.gen(function* () {
      for (const value of ["999ms", "61m", "2h", "0", "30", "thirty seconds", "-5s"]) {
        expect(yield* refusal({ ...REGISTRY, SVC_AUTH_TENANTS_REFRESH: value })).toContain(
          `SVC_AUTH_TENANTS_REFRESH must be a duration between 1s and 1h, got "${value}"`
        )
      }
    })
  )

  it.effect("the registry with SVC_AUTH_DISABLED=true", () =>
    Effect.map(refusal({ ...REGISTRY, SVC_AUTH_DISABLED: "true" }), (message) =>
      expect(message).toContain(
        "SVC_AUTH_DISABLED=true cannot be combined with the tenant registry (SVC_AUTH_TENANTS_SOURCE)"
      )
    )
  )

  for (const variable of [
    "SVC_JWKS_ENDPOINT",
    "SVC_AUTH_ISSUER",
    "SVC_AUTH_AUDIENCE",
    "SVC_AUTH_TENANT_CLAIM",
    "SVC_AUTH_ROLES_CLAIM"
  ]) {
    it.effect(`the registry with ${variable}`, () =>
      Effect.map(refusal({ ...REGISTRY, [variable]: "https://idp.example.com/x" }), (message) =>
        expect(message).toContain(`${variable} cannot be combined with the tenant registry (SVC_AUTH_TENANTS_SOURCE)`)
      )
    )
  }

  it.effect("the registry with SVC_SCORING_ROOTS (seed 5.5.8)", () =>
    Effect.map(refusal({ ...REGISTRY, SVC_SCORING_ROOTS: "/media" }), (message) =>
      expect(message).toContain(
        "SVC_SCORING_ROOTS cannot be combined with the tenant registry (SVC_AUTH_TENANTS_SOURCE)"
      )
    )
  )

  it.effect("names every broken rule at once", () =>
    Effect.map(
      refusal({ SVC_AUTH_TENANTS_SOURCE: "file", SVC_AUTH_ISSUER: "https://i/", SVC_AUTH_DISABLED: "true" }),
      (message) => {
        expect(message).toContain("SVC_AUTH_TENANTS_SOURCE=file requires SVC_AUTH_TENANTS_FILE")
        expect(message).toContain("SVC_AUTH_DISABLED=true cannot be combined")
        expect(message).toContain("SVC_AUTH_ISSUER cannot be combined")
      }
    )
  )
})

describe("start-up refusals of single-provider settings", () => {
  it.effect("missing endpoint or issuer", () =>
    Effect.gen(function* () {
      const message = yield* refusal({})
      expect(message).toContain(
        "SVC_JWKS_ENDPOINT is required unless SVC_AUTH_DISABLED=true or SVC_AUTH_TENANTS_SOURCE is set"
      )
      expect(message).toContain("SVC_AUTH_ISSUER is required")
    })
  )

  it.effect("a plain-http JWKS endpoint outside loopback, and a relative issuer", () =>
    Effect.gen(function* () {
      expect(yield* refusal({ ...SINGLE, SVC_JWKS_ENDPOINT: "http://idp.example.com/jwks" })).toContain(
        `SVC_JWKS_ENDPOINT must be an https URL (plain http only for localhost or loopback addresses), got "http://idp.example.com/jwks"`
      )
      expect((yield* load({ ...SINGLE, SVC_JWKS_ENDPOINT: "http://127.0.0.1:8080/jwks" }))._tag).toBe("SingleProvider")
      expect(yield* refusal({ ...SINGLE, SVC_AUTH_ISSUER: "idp.example.com" })).toContain(
        `SVC_AUTH_ISSUER must be an absolute http(s) URL, got "idp.example.com"`
      )
    })
  )

  it.effect("an invalid SVC_SCORING_ROOTS entry or SVC_AUTH_DISABLED value", () =>
    Effect.gen(function* () {
      expect(yield* refusal({ ...SINGLE, SVC_SCORING_ROOTS: "/media,media/{tenant}" })).toContain(
        `SVC_SCORING_ROOTS: scoring root "media/{tenant}" is relative`
      )
      expect(yield* refusal({ SVC_AUTH_DISABLED: "yes please" })).toContain(
        `SVC_AUTH_DISABLED must be "true" or "false", got "yes please"`
      )
    })
  )
})

describe("Go durations", () => {
  it("parses the forms the refresh interval uses", () => {
    expect(parseGoDuration("30s")).toBe(30_000)
    expect(parseGoDuration("1h")).toBe(3_600_000)
    expect(parseGoDuration("1m30s")).toBe(90_000)
    expect(parseGoDuration("1.5s")).toBe(1_500)
    expect(parseGoDuration("500ms")).toBe(500)
    expect(parseGoDuration("30")).toBeUndefined()
    expect(parseGoDuration("s")).toBeUndefined()
  })

  it("property: whole seconds round-trip", () => {
    fc.assert(
      fc.property(fc.nat(10_000), (n) => {
        expect(parseGoDuration(`${n}s`)).toBe(n * 1000)
      })
    )
  })
})
