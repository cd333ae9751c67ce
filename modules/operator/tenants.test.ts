import { Either, Option } from "effect"
import { describe, expect, it } from "vitest"
import { parseTenantTokens } from "./config.ts"
import { svcNodeNameOf } from "./status.ts"
import { planTenants } from "./tenants.ts"

const settings = (values: {
  tokenFile?: string
  tenantTokens?: ReadonlyMap<string, string>
  namespaces?: Array<string>
}) => ({
  tokenFile: Option.fromNullable(values.tokenFile),
  tenantTokens: Option.fromNullable(values.tenantTokens),
  namespaces: Option.fromNullable(values.namespaces)
})

describe("SVC_OPERATOR_TENANT_TOKENS", () => {
  it("maps namespaces to token files", () => {
    const parsed = parseTenantTokens("acme=/t/acme, globex=/t/globex,")
    expect(Either.getOrThrow(parsed)).toEqual(
      new Map([
        ["acme", "/t/acme"],
        ["globex", "/t/globex"]
      ])
    )
  })

  it.each([
    ["acme", /namespace=\/path/],
    ["Acme=/t", /namespace=\/path/],
    ["acme=", /namespace=\/path/],
    ["acme=/a,acme=/b", /"acme" is listed twice/]
  ])("refuses %s", (text, message) => {
    const parsed = parseTenantTokens(text)
    expect(Either.isLeft(parsed) ? parsed.left : "").toMatch(message)
  })
})

describe("a tenant per namespace", () => {
  it("each tenant namespace with its own token; extra namespaces watched without one", () => {
    const plan = Either.getOrThrow(
      planTenants(
        settings({
          tenantTokens: new Map([
            ["acme", "/t/acme"],
            ["globex", "/t/globex"]
          ]),
          namespaces: ["stray", "acme"]
        }),
        "svc-system"
      )
    )
    expect(plan.watched).toEqual(["acme", "globex", "stray"])
    expect(plan.tokens.get("acme")).toEqual(Option.some("/t/acme"))
    expect(plan.tokens.get("globex")).toEqual(Option.some("/t/globex"))
    expect(plan.tokens.has("stray")).toBe(false)
  })

  it("a shared token serves exactly one namespace", () => {
    const one = Either.getOrThrow(planTenants(settings({ tokenFile: "/t/shared" }), "media"))
    expect(one.watched).toEqual(["media"])
    expect(one.tokens.get("media")).toEqual(Option.some("/t/shared"))
    const several = planTenants(settings({ tokenFile: "/t/shared", namespaces: ["acme", "globex"] }), "media")
    expect(Either.isLeft(several) ? several.left : "").toMatch(
      /SVC_CONTROLLER_TOKEN_FILE is one tenant's token: .*\(acme, globex\) needs SVC_OPERATOR_TENANT_TOKENS/
    )
    const both = planTenants(
      settings({ tokenFile: "/t/shared", tenantTokens: new Map([["acme", "/t/acme"]]) }),
      "media"
    )
    expect(Either.isLeft(both) ? both.left : "").toMatch(/give one or the other/)
  })

  it("no token at all (a controller in disabled mode): every watched namespace acts without one", () => {
    const plan = Either.getOrThrow(planTenants(settings({ namespaces: ["a", "b"] }), "media"))
    expect(plan.watched).toEqual(["a", "b"])
    expect([...plan.tokens.values()]).toEqual([Option.none(), Option.none()])
  })
})

describe("SvcNode names", () => {
  it("carry the tenant namespace; long ones are cut with a hash, so two never meet", () => {
    expect(svcNodeNameOf("acme", "Node_A")).toBe("acme.node-a")
    const long = "n".repeat(300)
    const first = svcNodeNameOf("acme", `${long}-1`)
    const second = svcNodeNameOf("acme", `${long}-2`)
    expect(first).not.toBe(second)
    for (const name of [first, second]) {
      expect(name.length).toBeLessThanOrEqual(253)
      expect(name).toMatch(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/)
    }
  })
})
