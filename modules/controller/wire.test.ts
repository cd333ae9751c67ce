import { describe, expect, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import type { Job } from "../jobs/index.ts"
import { decodeReportResult, decodeStreamJobs, decodeSubmitJob, jobMessage } from "./wire.ts"

const job: Job = {
  id: "j1",
  tenantId: "a",
  state: "running",
  request: { reference: "/r.yuv", distorted: "/d.yuv", options: { width: 320, height: 240 } },
  createdAt: 1_700_000_000_123,
  startedAt: 1_700_000_001_000,
  finishedAt: undefined,
  nodeId: "n1",
  fence: 1,
  result: undefined,
  error: undefined,
  framesDone: 7,
  submittedBy: undefined
}

const run = <A, E>(effect: Effect.Effect<A, E>) => Effect.runSync(Effect.either(effect))

describe("jobMessage", () => {
  it("maps state names, timestamps and absent fields as proto3 defaults", () => {
    expect(jobMessage(job, ["/roots/a"])).toEqual({
      id: "j1",
      tenant_id: "a",
      state: "JOB_STATE_RUNNING",
      request: job.request,
      scoring_roots: ["/roots/a"],
      created_at: { seconds: 1_700_000_000, nanos: 123_000_000 },
      started_at: { seconds: 1_700_000_001, nanos: 0 },
      finished_at: null,
      node_id: "n1",
      result: null,
      error: "",
      frames_done: 7,
      submitted_by: ""
    })
  })

  it("hands out no roots outside PullWork", () => {
    expect(jobMessage(job).scoring_roots).toEqual([])
  })
})

describe("request decoding", () => {
  it("StreamJobs: state names become job states; an unspecified state is refused", () => {
    expect(
      run(decodeStreamJobs({ states: ["JOB_STATE_PENDING", "JOB_STATE_FAILED"], follow: true, limit: 5 }))
    ).toEqual(Either.right({ states: ["pending", "failed"], follow: true, limit: 5 }))
    const refused = run(decodeStreamJobs({ states: ["JOB_STATE_UNSPECIFIED"], follow: false, limit: 0 }))
    expect(Either.isLeft(refused) && refused.left._tag).toBe("InvalidJobRequest")
  })

  it("SubmitJob: validated as a score request, with the scoring path's messages", () => {
    const request = { reference: "/r.yuv", distorted: "/d.yuv", model: "", options: { width: 320, height: 240 } }
    expect(run(decodeSubmitJob({ request }))).toEqual(Either.right(request))
    const missing = run(decodeSubmitJob({ request: null }))
    expect(Either.isLeft(missing) && [missing.left._tag, missing.left.message]).toEqual([
      "InvalidScoreRequest",
      "request: is required"
    ])
    const noGeometry = run(
      decodeSubmitJob({ request: { reference: "/r.yuv", distorted: "/d.yuv", model: "", options: null } })
    )
    expect(Either.isLeft(noGeometry) && noGeometry.left._tag).toBe("InvalidScoreRequest")
  })

  it("ReportResult: a progress report without a result; a malformed result is refused", () => {
    const progress = run(
      decodeReportResult({ node_id: "n", job_id: "j", final: false, result: null, error: "", frames_done: 3 })
    )
    expect(progress).toEqual(
      Either.right({ nodeId: "n", jobId: "j", report: { final: false, result: undefined, error: "", framesDone: 3 } })
    )
    const malformed = run(
      decodeReportResult({
        node_id: "n",
        job_id: "j",
        final: true,
        result: { score: "high" },
        error: "",
        frames_done: 3
      })
    )
    expect(Either.isLeft(malformed) && malformed.left._tag).toBe("InvalidJobRequest")
  })
})
