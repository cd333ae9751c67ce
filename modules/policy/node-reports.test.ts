import { describe, expect, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import fc from "fast-check"
import { decideReport, type JobState, type ReportedJob } from "./node-reports.ts"

const job = (overrides: Partial<ReportedJob> = {}): ReportedJob => ({
  id: "j1",
  tenantId: "acme",
  state: "running",
  assignedNodeId: "n1",
  ...overrides
})
const reporter = { nodeId: "n1", tenantId: "acme" }
const decide = (
  target: ReportedJob | undefined,
  options: { nodeId?: string; tenantId?: string; final?: boolean; live?: ReadonlyArray<string> } = {}
) =>
  Effect.runSync(
    Effect.either(
      decideReport(
        target,
        { nodeId: options.nodeId ?? reporter.nodeId, tenantId: options.tenantId ?? reporter.tenantId },
        "j1",
        options.final ?? true,
        (node) => (options.live ?? ["n1"]).includes(node)
      )
    )
  )

describe("ReportResult (seed 5.6)", () => {
  it("accepts a report for a job assigned to the reporting node", () => {
    expect(decide(job())).toEqual(Either.right("record"))
    expect(decide(job(), { final: false })).toEqual(Either.right("record"))
  })

  it("accepts a running job of the same tenant whose node is no longer live", () => {
    expect(decide(job({ assignedNodeId: "old" }), { live: ["n1"] })).toEqual(Either.right("record"))
  })

  it("refuses another tenant's job, a pending job, a live node's job and an unknown job, with the fixed message", () => {
    for (const refused of [
      decide(job({ tenantId: "globex" })),
      decide(job({ state: "pending", assignedNodeId: undefined })),
      decide(job({ assignedNodeId: "n2" }), { live: ["n1", "n2"] }),
      decide(undefined)
    ]) {
      expect(Either.isLeft(refused) && refused.left.message).toBe(`job "j1" is not assigned to node "n1"`)
      expect(Either.isLeft(refused) && refused.left.kind).toBe("permission-denied")
    }
  })

  it("lets a repeated final report of a finished job succeed without changing it", () => {
    expect(decide(job({ state: "finished" }))).toEqual(Either.right("unchanged"))
  })

  it("property: a job of another tenant is never reported, whatever its state or liveness", () => {
    fc.assert(
      fc.property(
        fc.constantFrom<JobState>("pending", "running", "finished"),
        fc.boolean(),
        fc.boolean(),
        (state, final, live) => {
          expect(Either.isLeft(decide(job({ tenantId: "globex", state }), { final, live: live ? ["n1"] : [] }))).toBe(
            true
          )
        }
      )
    )
  })
})
