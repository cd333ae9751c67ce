import { describe, expect, it } from "vitest"
import type { JobState } from "../transport/grpc/svc-v1.ts"
import { PHASE_RANK, refusedStatus, resourceNameOf, statusOfJob, statusOfNode, type WireJob } from "./status.ts"

const NOW = "2026-11-23T17:00:00.000Z"
const job = (state: JobState, extra: Partial<WireJob> = {}): WireJob => ({
  id: "j-1",
  state,
  idempotency_key: "uid-1",
  node_id: "",
  frames_done: 0,
  error: "",
  started_at: null,
  finished_at: null,
  result: null,
  segments: [],
  ...extra
})

describe("SvcJob status from a controller job", () => {
  it("summarises a segment job's segments (total, finished, running, nodes); none for a job in one piece", () => {
    const segments: WireJob["segments"] = [
      { state: "JOB_STATE_FINISHED", node_id: "n1" },
      { state: "JOB_STATE_RUNNING", node_id: "n2" },
      { state: "JOB_STATE_PENDING", node_id: "" }
    ]
    expect(statusOfJob(job("JOB_STATE_RUNNING", { segments }), undefined, 1, NOW).segments).toEqual({
      total: 3,
      finished: 1,
      running: 1,
      nodes: 2
    })
    expect(statusOfJob(job("JOB_STATE_RUNNING"), undefined, 1, NOW).segments).toBeUndefined()
  })

  it("maps every state to its phase, in order", () => {
    const phases = (["JOB_STATE_PENDING", "JOB_STATE_RUNNING", "JOB_STATE_FINISHED"] as const).map(
      (state) => statusOfJob(job(state), undefined, 1, NOW).phase
    )
    expect(phases).toEqual(["Pending", "Running", "Finished"])
    expect(phases.map((phase) => PHASE_RANK[phase ?? "Pending"])).toEqual([0, 1, 2])
    expect(statusOfJob(job("JOB_STATE_CANCELLED"), undefined, 1, NOW).phase).toBe("Cancelled")
    expect(statusOfJob(job("JOB_STATE_FAILED", { error: "outside roots" }), undefined, 1, NOW)).toMatchObject({
      phase: "Failed",
      error: "outside roots"
    })
  })

  it("shows the score and finite pooled features once finished (JSON has no NaN)", () => {
    const status = statusOfJob(
      job("JOB_STATE_FINISHED", {
        frames_done: 30,
        finished_at: { seconds: 1_800_000_000, nanos: 5_000_000 },
        result: { score: 75.4, features: { vmaf: 75.4, psnr_y: Number.NaN }, scores: {}, frame_count: 30 }
      }),
      undefined,
      2,
      NOW
    )
    expect(status).toMatchObject({ score: 75.4, features: { vmaf: 75.4 }, frameCount: 30, observedGeneration: 2 })
    expect(status.features).not.toHaveProperty("psnr_y")
    expect(status.scores).toBeUndefined()
    expect(status.finishedAt).toBe("2027-01-15T08:00:00.005Z")
    // A partial result while running shows no score yet.
    const partial = statusOfJob(
      job("JOB_STATE_RUNNING", { result: { score: 1, features: {}, scores: {}, frame_count: 1 } }),
      undefined,
      1,
      NOW
    )
    expect(partial.score).toBeUndefined()
  })

  it("keeps a condition's transition time while its status stays", () => {
    const first = statusOfJob(job("JOB_STATE_PENDING"), undefined, 1, NOW)
    const later = statusOfJob(job("JOB_STATE_RUNNING"), first, 1, "2026-11-23T18:00:00.000Z")
    const submitted = later.conditions?.find((condition) => condition.type === "Submitted")
    expect(submitted?.lastTransitionTime).toBe(NOW)
  })

  it("a refused submit fails the SvcJob with the controller's reason", () => {
    const status = refusedStatus(undefined, 1, "SubmitRefused", "PERMISSION_DENIED: role required: svc:writer", NOW)
    expect(status.phase).toBe("Failed")
    expect(status.conditions?.find((condition) => condition.type === "Submitted")).toMatchObject({
      status: "False",
      reason: "SubmitRefused"
    })
  })
})

describe("SvcNode status from a node session", () => {
  const session = (ageMillis: number, live = true) => ({
    node_id: "n-1",
    name: "Host_A.example",
    slots: 2,
    version: "0.1.0",
    last_heartbeat: { seconds: (Date.parse(NOW) - ageMillis) / 1000, nanos: 0 },
    live,
    running_job_ids: ["j-1"],
    session_ttl_ms: 30_000
  })
  const ready = (status: ReturnType<typeof statusOfNode>) =>
    status.conditions.find((condition) => condition.type === "Ready")

  it("is Ready while heartbeats arrive within the TTL, and not once they are stale", () => {
    expect(ready(statusOfNode(session(5_000), undefined, Date.parse(NOW)))?.status).toBe("True")
    const stale = ready(statusOfNode(session(45_000), undefined, Date.parse(NOW)))
    expect(stale).toMatchObject({ status: "False", reason: "HeartbeatStale" })
    expect(stale?.message).toContain("45 s")
    expect(ready(statusOfNode(session(1_000, false), undefined, Date.parse(NOW)))?.status).toBe("False")
  })

  it("names the resource after the node, as a DNS name", () => {
    expect(resourceNameOf("Host_A.example")).toBe("host-a.example")
    expect(resourceNameOf("__")).toBe("node")
  })
})
