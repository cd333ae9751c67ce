import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import fc from "fast-check"
import { decideReport, type JobState, type ReportedJob } from "./node-reports.ts"

const job = (overrides: Partial<ReportedJob> = {}): ReportedJob => ({
  id: "j1",
  tenantId: "acme",
  state: "running",
  assignedNodeId: "n1",
  ...overrides
})
const decide = (
  target: ReportedJob | undefined,
  options: { nodeId?: string; tenantId?: string; sessionTenantId?: string; live?: ReadonlyArray<string> } = {}
) => {
  const nodeId = options.nodeId ?? "n1"
  const live = options.live ?? ["n1"]
  return decideReport({
    callerTenantId: options.tenantId ?? "acme",
    jobId: "j1",
    job: target,
    reporter: { nodeId, sessionTenantId: options.sessionTenantId ?? "acme", live: live.includes(nodeId) },
    assignedNodeLive: target?.assignedNodeId !== undefined && live.includes(target.assignedNodeId)
  })
}

const refusedWithFixedMessage = (decision: ReturnType<typeof decide>, nodeId = "n1") => {
  expect(Either.isLeft(decision) && decision.left.message).toBe(`job "j1" is not assigned to node "${nodeId}"`)
  expect(Either.isLeft(decision) && decision.left._tag).toBe("PermissionDenied")
}

describe("ReportResult (seed 5.6)", () => {
  it("accepts a report for a job assigned to the reporting node, live or not", () => {
    expect(decide(job())).toEqual(Either.right("record"))
    expect(decide(job(), { live: [] })).toEqual(Either.right("record"))
  })

  it("accepts a running job of the same tenant whose node is no longer live, from a live session", () => {
    expect(decide(job({ assignedNodeId: "old" }), { live: ["n1"] })).toEqual(Either.right("record"))
    refusedWithFixedMessage(decide(job({ assignedNodeId: "old" }), { live: [] }))
  })

  it("refuses another tenant's job, a pending job, a live node's job, an unknown job, a foreign or unknown session", () => {
    for (const refused of [
      decide(job({ tenantId: "globex" })),
      decide(job({ state: "pending", assignedNodeId: undefined })),
      decide(job({ state: "cancelled", assignedNodeId: undefined })),
      decide(job({ assignedNodeId: "n2" }), { live: ["n1", "n2"] }),
      decide(undefined),
      decide(job(), { sessionTenantId: "globex" })
    ]) {
      refusedWithFixedMessage(refused)
    }
  })

  it("a job already final is returned unchanged to its node (repeated final report, report after cancel)", () => {
    for (const state of ["finished", "failed", "cancelled"] as const) {
      expect(decide(job({ state }))).toEqual(Either.right("unchanged"))
    }
  })

  it("property: a job of another tenant, or a call through another tenant's session, is never reported", () => {
    fc.assert(
      fc.property(
        fc.constantFrom<JobState>("pending", "running", "finished", "cancelled", "failed"),
        fc.boolean(),
        fc.boolean(),
        (state, live, ownerLive) => {
          const liveSet = [...(live ? ["n1"] : []), ...(ownerLive ? ["n2"] : [])]
          for (const assignedNodeId of ["n1", "n2"]) {
            expect(Either.isLeft(decide(job({ tenantId: "globex", state, assignedNodeId }), { live: liveSet }))).toBe(
              true
            )
            expect(Either.isLeft(decide(job({ state, assignedNodeId }), { sessionTenantId: "x", live: liveSet }))).toBe(
              true
            )
          }
        }
      )
    )
  })
})
