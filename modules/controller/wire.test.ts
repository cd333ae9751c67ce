import { describe, expect, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import { type Job, MAX_FRAMES_PER_MESSAGE } from "../jobs/index.ts"
import { decodeGetJob, decodeReportResult, decodeStreamJobs, decodeSubmitJob, jobMessage } from "./wire.ts"

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
  renditionProgress: [],
  submittedBy: undefined,
  segments: []
}

const run = <A, E>(effect: Effect.Effect<A, E>) => Effect.runSync(Effect.either(effect))

describe("jobMessage", () => {
  it("maps state names, timestamps and absent fields as proto3 defaults", () => {
    expect(jobMessage(job, ["/roots/a"])).toEqual({
      id: "j1",
      tenant_id: "a",
      state: "JOB_STATE_RUNNING",
      request: job.request,
      ladder: null,
      scoring_roots: ["/roots/a"],
      created_at: { seconds: 1_700_000_000, nanos: 123_000_000 },
      started_at: { seconds: 1_700_000_001, nanos: 0 },
      finished_at: null,
      node_id: "n1",
      result: null,
      ladder_result: null,
      error: "",
      frames_done: 7,
      rendition_progress: [],
      submitted_by: "",
      segments: [],
      idempotency_key: "",
      plan_alignment: null,
      plan_rendition_alignments: []
    })
  })

  it("hands out no roots outside PullWork", () => {
    expect(jobMessage(job).scoring_roots).toEqual([])
  })

  it("carries one page of per-frame results: the first by default, the window GetJob asks for", () => {
    const frames = Array.from({ length: MAX_FRAMES_PER_MESSAGE + 500 }, (_, frame) => ({ frame, metrics: { vmaf: 1 } }))
    const long: Job = {
      ...job,
      result: {
        score: 1,
        features: {},
        provenance: {
          library: { abi_minor: 0, abi_patch: 0, active_backend: "scalar", n_extractors: 1, version: "t" },
          model: "m",
          model_sha256: "0",
          backend_used: "scalar",
          feature_backends: [],
          precision: "lossless"
        },
        frames,
        frame_count: frames.length,
        pooled: { min: {}, max: {}, harmonic_mean: {} }
      }
    }
    const numbers = (message: ReturnType<typeof jobMessage>) => message.result?.frames.map((f) => f.frame) ?? []
    expect(numbers(jobMessage(long))).toEqual(frames.slice(0, MAX_FRAMES_PER_MESSAGE).map((f) => f.frame))
    expect(jobMessage(long).result?.frame_count).toBe(MAX_FRAMES_PER_MESSAGE + 500)
    const { window } = Either.getOrThrow(run(decodeGetJob({ id: "j1", frames_offset: MAX_FRAMES_PER_MESSAGE })))
    expect(numbers(jobMessage(long, [], window))).toEqual(frames.slice(MAX_FRAMES_PER_MESSAGE).map((f) => f.frame))
    const small = Either.getOrThrow(run(decodeGetJob({ id: "j1", frames_offset: 10, frames_limit: 3 })))
    expect(numbers(jobMessage(long, [], small.window))).toEqual([10, 11, 12])
    const capped = Either.getOrThrow(run(decodeGetJob({ id: "j1", frames_offset: 0, frames_limit: 1e6 })))
    expect(capped.window.limit).toBe(MAX_FRAMES_PER_MESSAGE)
    expect(Either.isLeft(run(decodeGetJob({ id: "j1", frames_offset: -1 })))).toBe(true)
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
    expect(Either.map(run(decodeSubmitJob({ request })), (submitted) => submitted.request)).toEqual(
      Either.right(request)
    )
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
      Either.right({
        nodeId: "n",
        jobId: "j",
        report: { final: false, result: undefined, error: "", framesDone: 3, framesOffset: 0, renditionProgress: [] }
      })
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

  it("ReportResult and Job carry a ladder's progress per rendition", () => {
    const reported = run(
      decodeReportResult({
        node_id: "n",
        job_id: "j",
        final: false,
        result: null,
        error: "",
        frames_done: 5,
        rendition_progress: [
          { label: "480p", frames_done: 5 },
          { label: "720p", frames_done: 4 }
        ]
      })
    )
    expect(Either.isRight(reported) && reported.right.report.renditionProgress).toEqual([
      { label: "480p", framesDone: 5 },
      { label: "720p", framesDone: 4 }
    ])
    expect(jobMessage({ ...job, renditionProgress: [{ label: "480p", framesDone: 5 }] }).rendition_progress).toEqual([
      { label: "480p", frames_done: 5 }
    ])
  })
})

describe("ladder jobs", () => {
  const ladder = {
    reference: "/r.yuv",
    renditions: [
      { label: "low", distorted: "/low.yuv" },
      { label: "high", distorted: "/high.yuv" }
    ],
    options: { width: 320, height: 240 }
  }
  const provenance = {
    library: { abi_minor: 0, abi_patch: 0, active_backend: "scalar", n_extractors: 1, version: "t" },
    model: "m",
    model_sha256: "0",
    backend_used: "scalar",
    feature_backends: [],
    precision: "lossless"
  }
  const rendition = (label: string, count: number) => {
    const frames = Array.from({ length: count }, (_, frame) => ({ frame, metrics: { vmaf: frame } }))
    return {
      label,
      score: 1,
      features: { vmaf: 1 },
      provenance,
      frames,
      frame_count: count,
      pooled: { min: {}, max: {}, harmonic_mean: {} },
      summary: {
        p1: 0,
        p5: 0,
        worst_frames: [],
        width: 320,
        height: 240,
        codec: "rawvideo",
        bitrate_bps: 0,
        duration_s: 0,
        on_hull: true
      }
    }
  }
  const ladderResult = (count: number) => ({
    renditions: [rendition("low", count), rendition("high", count)],
    provenance: {
      reference_passes: 1,
      reference_decoders: 0,
      reference_frames: count,
      shared: [],
      library: provenance.library,
      model: "m",
      model_sha256: "0",
      backend_used: "scalar",
      precision: "lossless"
    }
  })

  it("SubmitJob: a ladder is validated whole, every rendition as the score it stands for", () => {
    const accepted = run(decodeSubmitJob({ request: null, ladder }))
    expect(Either.map(accepted, (submitted) => submitted.request)).toEqual(Either.right({ ladder }))
    expect(
      Either.isRight(accepted) && accepted.right._tag === "Ladder" && accepted.right.ladder.renditions.length
    ).toBe(2)
    const both = run(decodeSubmitJob({ request: { reference: "/r.y4m", distorted: "/d.y4m" }, ladder }))
    expect(Either.isLeft(both) && both.left.message).toBe("request and ladder: give one or the other")
    const twice = run(
      decodeSubmitJob({
        request: null,
        ladder: { ...ladder, renditions: [ladder.renditions[0], { label: "low", distorted: "/x.yuv" }] }
      })
    )
    expect(Either.isLeft(twice) && twice.left.message).toContain('"low" names two renditions')
  })

  it("a ladder job's message carries its request and one page of every rendition's frames", () => {
    const count = MAX_FRAMES_PER_MESSAGE + 10
    const long: Job = { ...job, request: { ladder }, result: ladderResult(count) }
    const message = jobMessage(long)
    expect(message.request).toBeNull()
    expect(message.result).toBeNull()
    expect(message.ladder).toEqual(ladder)
    const perRendition = MAX_FRAMES_PER_MESSAGE / 2
    expect(message.ladder_result?.renditions.map((entry) => entry.frames.length)).toEqual([perRendition, perRendition])
    const { window } = Either.getOrThrow(run(decodeGetJob({ id: "j1", frames_offset: perRendition * 2 })))
    const last = jobMessage(long, [], window).ladder_result?.renditions.map((entry) => entry.frames.map((f) => f.frame))
    expect(last?.[1]).toEqual(Array.from({ length: count - perRendition * 2 }, (_, i) => perRendition * 2 + i))
  })

  it("ReportResult: a ladder's result arrives in ladder_result, checked by the ladder's schema", () => {
    const report = run(
      decodeReportResult({
        node_id: "n",
        job_id: "j",
        final: true,
        result: null,
        ladder_result: ladderResult(3),
        error: "",
        frames_done: 6
      })
    )
    expect(Either.map(report, ({ report }) => report.result)).toEqual(Either.right(ladderResult(3)))
    const malformed = run(
      decodeReportResult({
        node_id: "n",
        job_id: "j",
        final: true,
        result: null,
        ladder_result: { renditions: [{ label: "x" }] },
        error: "",
        frames_done: 6
      })
    )
    expect(Either.isLeft(malformed) && malformed.left._tag).toBe("InvalidJobRequest")
  })

  it("ReportResult: a ladder's plan carries one alignment per rendition; none is an empty list", () => {
    const alignment = {
      reference_start: 5,
      distorted_start: 0,
      frames: 40,
      reference_frames_dropped: [9],
      distorted_frames_inserted: [],
      distorted_frames_repeated: [],
      confidence: 1,
      window: 120
    }
    const plan = (alignments: ReadonlyArray<unknown>) =>
      run(
        decodeReportResult({
          node_id: "n",
          job_id: "j",
          final: false,
          result: null,
          error: "",
          frames_done: 0,
          plan_frames: 40,
          plan_rendition_alignments: alignments
        })
      )
    const late = { ...alignment, distorted_start: 3 }
    expect(Either.map(plan([alignment, late]), ({ report }) => report.planRenditionAlignments)).toEqual(
      Either.right([alignment, late])
    )
    expect(Either.map(plan([]), ({ report }) => report.planRenditionAlignments)).toEqual(Either.right(undefined))
    const malformed = plan([alignment, { frames: 3 }])
    expect(Either.isLeft(malformed) && malformed.left.message).toMatch(/^plan_rendition_alignments\[1\]: /)
  })
})
