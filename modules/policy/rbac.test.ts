import { describe, expect, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import fc from "fast-check"
import { Messages } from "./errors.ts"
import type { Principal } from "./principal.ts"
import { authorize } from "./rbac.ts"
import {
  GrpcMethods,
  HTTP_LADDER_ROUTE,
  HTTP_MODELS_ROUTE,
  HTTP_SCORE_ROUTE,
  KNOWN_ROLES,
  ROLE_TABLE,
  unlistedMethods,
  type Role
} from "./roles.ts"

// Seed 4.1 / 4.2, transcribed independently of roles.ts.
const SEED_TABLE: ReadonlyArray<readonly [string, ReadonlyArray<string>]> = [
  ["/svc.v1.Jobs/GetJob", ["reader", "writer", "admin"]],
  ["/svc.v1.Jobs/StreamJobs", ["reader", "writer", "admin"]],
  ["/svc.v1.SvcScoring/Health", ["reader", "writer", "admin"]],
  // gRPC server reflection: public metadata, listed with the roles of Health.
  ["/grpc.reflection.v1.ServerReflection/ServerReflectionInfo", ["reader", "writer", "admin"]],
  ["/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo", ["reader", "writer", "admin"]],
  ["/svc.v1.Jobs/SubmitJob", ["writer", "admin"]],
  ["/svc.v1.Jobs/CancelJob", ["writer", "admin"]],
  ["/svc.v1.SvcScoring/Score", ["writer", "admin"]],
  ["/svc.v1.SvcScoring/ScoreStream", ["writer", "admin"]],
  ["/svc.v1.Nodes/RegisterNode", ["node"]],
  ["/svc.v1.Nodes/Heartbeat", ["node"]],
  ["/svc.v1.Nodes/PullWork", ["node"]],
  ["/svc.v1.Nodes/ReportResult", ["node"]],
  ["POST /v1/score", ["writer", "admin"]],
  // Added with the model list (issue 14): reads, like Health.
  ["/svc.v1.SvcScoring/ListModels", ["reader", "writer", "admin"]],
  ["GET /v1/models", ["reader", "writer", "admin"]],
  // Added with svc-operator (issue 21): the tenant's node sessions, a read.
  ["/svc.v1.NodeStatus/ListNodes", ["reader", "writer", "admin"]],
  // Added with ladders (issue 18): scores, like Score.
  ["/svc.v1.SvcScoring/ScoreLadder", ["writer", "admin"]],
  ["POST /v1/ladder", ["writer", "admin"]],
  // Added with batched reports (issue 35): several ReportResult calls in one, node only.
  ["/svc.v1.Nodes/ReportResults", ["node"]]
]
const seedRoles = new Map(SEED_TABLE.map(([method, roles]) => [method, roles.map((role) => `svc:${role}`)]))

const principal = (roles: ReadonlyArray<Role>, tenantId = "acme"): Principal => ({
  tenantId,
  roles,
  subject: undefined
})
const decide = (p: Principal, method: string) => Either.isRight(Effect.runSync(Effect.either(authorize(p, method))))

describe("role table", () => {
  it("is exactly the seed's table", () => {
    expect(new Map([...ROLE_TABLE].map(([method, roles]) => [method, [...roles].sort()]))).toEqual(
      new Map([...seedRoles].map(([method, roles]) => [method, [...roles].sort()]))
    )
  })

  it("names every method of the three services, reflection and the HTTP routes", () => {
    expect(
      unlistedMethods([...Object.values(GrpcMethods), HTTP_SCORE_ROUTE, HTTP_LADDER_ROUTE, HTTP_MODELS_ROUTE])
    ).toEqual([])
    expect(unlistedMethods(["/svc.v1.Jobs/DeleteJob"])).toEqual(["/svc.v1.Jobs/DeleteJob"])
  })
})

describe("authorize", () => {
  it("allows a random role set exactly when it holds one of the method's roles", () => {
    const roleSet = fc.uniqueArray(fc.constantFrom<Role>(...KNOWN_ROLES))
    fc.assert(
      fc.property(roleSet, fc.constantFrom(...SEED_TABLE.map(([method]) => method)), (roles, method) => {
        const expected = roles.some((role) => seedRoles.get(method)?.includes(role))
        expect(decide(principal(roles), method)).toBe(expected)
      })
    )
  })

  it("refuses an unlisted method for everyone, disabled mode's admin+node included", () => {
    fc.assert(
      fc.property(
        fc.string().filter((method) => !ROLE_TABLE.has(method)),
        (method) => {
          expect(decide(principal([...KNOWN_ROLES]), method)).toBe(false)
        }
      )
    )
  })

  it("refuses a principal with no role everywhere", () => {
    for (const [method] of SEED_TABLE) expect(decide(principal([]), method)).toBe(false)
  })

  it("keeps the node role to the node API, and users out of it", () => {
    for (const [method, roles] of SEED_TABLE) {
      expect(decide(principal(["svc:node"]), method)).toBe(roles.includes("node"))
      expect(decide(principal(["svc:reader", "svc:writer", "svc:admin"]), method)).toBe(!roles.includes("node"))
    }
  })

  it.effect("refuses with PERMISSION_DENIED and `role required: <roles>`", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(authorize(principal(["svc:reader"]), GrpcMethods.SubmitJob))
      expect(error._tag).toBe("PermissionDenied")
      expect(error.message).toBe("role required: svc:writer, svc:admin")
      expect(error.message).toBe(Messages.roleRequired(["svc:writer", "svc:admin"]))
      const http = yield* Effect.flip(authorize(principal(["svc:reader"]), HTTP_SCORE_ROUTE))
      expect(http._tag).toBe("PermissionDenied")
    })
  )
})
