import { afterAll, describe, expect, it } from "@effect/vitest"
import { Effect, Either, Layer, Logger, LogLevel } from "effect"
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { AuthCounters, AuthMetrics, Authenticator, DISABLED_MODE_PRINCIPAL } from "../auth/index.ts"
import { GrpcMethods, HTTP_SCORE_ROUTE, Messages, type Principal, rootsForTenant } from "../policy/index.ts"
import { admit, withCheckedInputs } from "./gateway.ts"

const dir = mkdtempSync(join(tmpdir(), "svc-gateway-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
const root = join(dir, "root")
const outside = join(dir, "outside")
mkdirSync(root)
mkdirSync(outside)
writeFileSync(join(outside, "clip.yuv"), "")
writeFileSync(join(root, "clip.yuv"), "")
symlinkSync(join(outside, "clip.yuv"), join(root, "outsideLink.yuv"))
symlinkSync(join(root, "clip.yuv"), join(root, "alias.yuv"))

const reader: Principal = { tenantId: "a", roles: ["svc:reader"], subject: "r@a" }
const scoringRoots = { forPrincipal: () => Effect.succeed(rootsForTenant([root], "a")) }

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
    expect(Either.isLeft(outcome) && [outcome.left.kind, outcome.left.message]).toEqual([
      "permission-denied",
      Messages.methodNotListed("/svc.v1.Jobs/DeleteEverything")
    ])
  })
})

describe("withCheckedInputs", () => {
  const check = (request: unknown) => Effect.runPromise(Effect.either(withCheckedInputs(scoringRoots, reader, request)))

  it("scores the resolved path of a link that stays under a root; other fields are kept", async () => {
    const request = { reference: join(root, "alias.yuv"), distorted: join(root, "clip.yuv"), options: { width: 2 } }
    expect(await check(request)).toEqual(Either.right({ ...request, reference: join(root, "clip.yuv") }))
  })

  it("refuses a link inside a root that points outside every root, naming the input as written", async () => {
    const outsideLink = join(root, "outsideLink.yuv")
    const outcome = await check({ reference: join(root, "clip.yuv"), distorted: outsideLink })
    expect(Either.isLeft(outcome) && outcome.left.message).toBe(Messages.inputOutsideRoots(outsideLink))
  })

  it("passes a request without string inputs unchanged, for the scoring path to refuse", async () => {
    expect(await check({ reference: 1 })).toEqual(Either.right({ reference: 1 }))
  })
})
