import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Layer, Logger, LogLevel } from "effect"
import { AuthCounters, AuthMetrics, Authenticator, DISABLED_MODE_PRINCIPAL } from "../auth/index.ts"
import { GrpcMethods, HTTP_SCORE_ROUTE, Messages, type Principal } from "../policy/index.ts"
import { admit } from "./gateway.ts"

const reader: Principal = { tenantId: "a", roles: ["svc:reader"], subject: "r@a" }

const withPrincipal = (principal: Principal, counters: AuthCounters) =>
  Layer.mergeAll(
    Layer.succeed(Authenticator, { authenticate: () => Effect.succeed(principal) }),
    Layer.succeed(AuthMetrics, counters),
    Logger.minimumLogLevel(LogLevel.None)
  )

const admitAs = (principal: Principal, method: string) => {
  const counters = new AuthCounters()
  const outcome = Effect.runSync(
    Effect.either(admit("Bearer t", method)).pipe(Effect.provide(withPrincipal(principal, counters)))
  )
  return { outcome, refusals: counters.refusalsByReason() }
}

describe("admit", () => {
  it("lets a listed role through and returns the principal", () => {
    expect(admitAs(reader, GrpcMethods.GetJob)).toEqual({ outcome: Either.right(reader), refusals: [] })
  })

  it("refuses a role the table does not list for the method, and counts it", () => {
    const { outcome, refusals } = admitAs(reader, HTTP_SCORE_ROUTE)
    expect(Either.isLeft(outcome) && outcome.left.message).toBe(Messages.roleRequired(["svc:writer", "svc:admin"]))
    expect(refusals).toEqual([{ reason: "role-required", count: 1 }])
  })

  it("refuses a method outside the table even for disabled mode's synthetic admin", () => {
    const { outcome } = admitAs(DISABLED_MODE_PRINCIPAL, "/svc.v1.Jobs/DeleteEverything")
    expect(Either.isLeft(outcome) && [outcome.left._tag, outcome.left.message]).toEqual([
      "PermissionDenied",
      Messages.methodNotListed("/svc.v1.Jobs/DeleteEverything")
    ])
  })
})
