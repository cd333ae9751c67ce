import { describe, expect, it } from "vitest"
import { Either } from "effect"
import fc from "fast-check"
import { readFileSync } from "node:fs"
import { parse } from "yaml"
import { KNOWN_ROLES } from "../policy/roles.ts"
import { MAX_ROOTS_PER_TENANT } from "../policy/scoring-roots.ts"
import {
  decodeTenant,
  TENANT_API_GROUP,
  TENANT_API_VERSION,
  TENANT_ID_PATTERN,
  TENANT_KIND,
  TENANT_LIST_KIND,
  TENANT_PLURAL,
  validateTenantSet
} from "./tenant.ts"
import { parseTenantFile } from "./tenant-source.ts"
import { tenantDocument } from "../../local/auth.ts"

const reasons = (value: unknown): ReadonlyArray<string> =>
  Either.match(decodeTenant(value, "doc"), { onLeft: (r) => r.reasons, onRight: () => [] })
const withSpec = (spec: Record<string, unknown>) => tenantDocument("acme", spec)
const oidc = (extra: Record<string, unknown>) => ({
  oidc: { issuer: "https://idp.example.com/", jwksEndpoint: "https://idp.example.com/jwks", ...extra }
})

describe("SvcTenant decoding", () => {
  it("applies the defaults of seed 2.4", () => {
    const tenant = Either.getOrThrow(decodeTenant(tenantDocument("acme"), "doc"))
    expect(tenant).toMatchObject({
      name: "acme",
      tenantId: "acme",
      enabled: true,
      provider: { audience: undefined, tenantClaim: "tid", rolesClaim: "svc_roles" },
      defaultRole: "svc:reader",
      allowedRoles: ["svc:reader", "svc:writer"]
    })
    expect(tenant.roots.texts).toEqual([])
  })

  it("refuses another apiVersion or kind", () => {
    expect(reasons({ ...tenantDocument("acme"), apiVersion: "svc.dev/v2" })[0]).toContain(
      `expected apiVersion ${TENANT_API_VERSION} and kind SvcTenant`
    )
    expect(reasons({ ...tenantDocument("acme"), kind: "Tenant" })[0]).toContain("got svc.dev/v1 Tenant")
  })

  it("refuses a spec field the definition does not define", () => {
    const document = withSpec({ rbac: { allowedRole: ["svc:reader"] } })
    expect(reasons(document).join()).toContain("spec.rbac.allowedRole: is unexpected")
    expect(reasons(withSpec({ colour: "blue" })).join()).toContain("spec.colour: is unexpected")
  })

  it("refuses each invalid field with a message naming it", () => {
    const cases: ReadonlyArray<readonly [Record<string, unknown>, string]> = [
      [{ tenantId: "Acme" }, `spec.tenantId "Acme" does not match ${TENANT_ID_PATTERN}`],
      [{ tenantId: "" }, "spec.tenantId"],
      [oidc({ issuer: "idp.example.com" }), `spec.oidc.issuer must be an absolute http(s) URL, got "idp.example.com"`],
      [oidc({ issuer: "ftp://idp.example.com" }), "spec.oidc.issuer must be an absolute http(s) URL"],
      [
        oidc({ jwksEndpoint: "http://idp.example.com/jwks" }),
        "spec.oidc.jwksEndpoint must be an https URL (plain http only for localhost or loopback addresses)"
      ],
      [{ rbac: { allowedRoles: ["svc:reader", "svc:root"] } }, `spec.rbac.allowedRoles: unknown role "svc:root"`],
      [{ rbac: { allowedRoles: [] } }, "spec.rbac.allowedRoles must not be empty"],
      [{ rbac: { defaultRole: "svc:admin" } }, `spec.rbac.defaultRole "svc:admin" is not in spec.rbac.allowedRoles`],
      [
        { rbac: { defaultRole: "svc:node", allowedRoles: ["svc:node"] } },
        `spec.rbac.defaultRole must not be "svc:node"`
      ],
      [{ rbac: { defaultRole: "svc:boss" } }, `spec.rbac.defaultRole: unknown role "svc:boss"`],
      [{ scoring: { roots: ["media"] } }, `spec.scoring.roots: "media" is relative`],
      [
        { scoring: { roots: Array.from({ length: 33 }, (_, i) => `/media/${i}`) } },
        "spec.scoring.roots has 33 entries, at most 32 allowed"
      ],
      [{ enabled: "no" }, "spec.enabled"]
    ]
    for (const [spec, expected] of cases)
      expect(reasons(withSpec(spec)).join(" | "), JSON.stringify(spec)).toContain(expected)
  })

  it("accepts plain-http JWKS endpoints on loopback", () => {
    for (const jwksEndpoint of ["http://localhost:8080/jwks", "http://127.0.0.1/jwks", "http://[::1]:9000/jwks"]) {
      expect(reasons(withSpec(oidc({ jwksEndpoint })))).toEqual([])
    }
  })

  it("property: tenant IDs are accepted exactly when they match the documented pattern", () => {
    const pattern = new RegExp(TENANT_ID_PATTERN)
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.stringMatching(/^[a-z0-9-]{1,70}$/)), (tenantId) => {
        expect(Either.isRight(decodeTenant(tenantDocument(tenantId), "doc"))).toBe(pattern.test(tenantId))
      })
    )
  })

  it("refuses every tenant whose tenantId is not unique", () => {
    const result = validateTenantSet(
      [tenantDocument("acme", {}, "one"), tenantDocument("acme", {}, "two"), tenantDocument("globex")].map((value) => ({
        value,
        origin: "test"
      })),
      false
    )
    expect(result.tenants.map((tenant) => tenant.tenantId)).toEqual(["globex"])
    expect(result.refusals.map((refusal) => refusal.reasons[0])).toEqual([
      `spec.tenantId "acme" is used by several tenants: one, two`,
      `spec.tenantId "acme" is used by several tenants: one, two`
    ])
  })

  it("expands List and SvcTenantList documents from files only", () => {
    const list = { apiVersion: "v1", kind: "List", items: [tenantDocument("acme"), tenantDocument("globex")] }
    const typedList = { apiVersion: TENANT_API_VERSION, kind: TENANT_LIST_KIND, items: [tenantDocument("initech")] }
    const fromFile = validateTenantSet(
      [
        { value: list, origin: "f" },
        { value: typedList, origin: "f" }
      ],
      true
    )
    expect(fromFile.tenants.map((tenant) => tenant.tenantId)).toEqual(["acme", "globex", "initech"])
    expect(validateTenantSet([{ value: list, origin: "o" }], false).refusals).toHaveLength(1)
  })

  it("reads YAML streams and JSON", () => {
    const yaml =
      "apiVersion: svc.dev/v1\nkind: SvcTenant\nmetadata: {name: a}\nspec:\n  tenantId: a\n  oidc: {issuer: 'https://i/', jwksEndpoint: 'https://i/jwks'}\n---\n"
    const documents = Either.getOrThrow(parseTenantFile(`${yaml}${yaml.replaceAll(" a", " b")}`, "t.yaml"))
    expect(validateTenantSet(documents, true).tenants.map((tenant) => tenant.tenantId)).toEqual(["a", "b"])
    const json = JSON.stringify(tenantDocument("acme"))
    expect(validateTenantSet(Either.getOrThrow(parseTenantFile(json, "t.json")), true).tenants).toHaveLength(1)
    expect(Either.isLeft(parseTenantFile("{ not: [valid", "t.yaml"))).toBe(true)
  })
})

describe("the CRD in schemas/ agrees with the decoder", () => {
  const crd = parse(readFileSync(new URL("../../schemas/svctenant.crd.yaml", import.meta.url), "utf8"))
  const version = crd.spec.versions[0]
  const spec = version.schema.openAPIV3Schema.properties.spec

  it("names the same group, version, kind and plural", () => {
    expect(crd.metadata.name).toBe(`${TENANT_PLURAL}.${TENANT_API_GROUP}`)
    expect(crd.spec.group).toBe(TENANT_API_GROUP)
    expect(`${crd.spec.group}/${version.name}`).toBe(TENANT_API_VERSION)
    expect(crd.spec.names).toMatchObject({ kind: TENANT_KIND, listKind: TENANT_LIST_KIND, plural: TENANT_PLURAL })
  })

  it("uses the same tenantId pattern, roles, defaults and root limit", () => {
    expect(spec.properties.tenantId.pattern).toBe(TENANT_ID_PATTERN)
    expect(spec.properties.rbac.properties.allowedRoles.items.enum).toEqual([...KNOWN_ROLES])
    expect(spec.properties.rbac.properties.defaultRole.enum).toEqual(KNOWN_ROLES.filter((role) => role !== "svc:node"))
    expect(spec.properties.scoring.properties.roots.maxItems).toBe(MAX_ROOTS_PER_TENANT)
    expect(spec.required).toEqual(["tenantId", "oidc"])
    expect(Object.keys(spec.properties).sort()).toEqual(["enabled", "oidc", "rbac", "scoring", "tenantId"])
  })
})
