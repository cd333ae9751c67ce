/**
 * The wire types follow the proto, and the JSON form of the messages (proto field names, enum
 * names and numbers; seed 001 §1.5) stays as it is: a Job with every field set goes through the
 * contract's own serializers and its JSON is held to a committed snapshot.
 */
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { renderWireTypes, wireTypesPath } from "../../../scripts/wire-types.ts"
import { serviceDefinition } from "./proto.ts"
import { type Job, JobState, type ScoreResponse } from "./svc-v1.ts"

const here = new URL(".", import.meta.url).pathname
const protoText = readFileSync(join(here, "../../../proto/svc/v1/svc.proto"), "utf8")

const pooled = (value: number) => ({ vmaf: value })

const result: ScoreResponse = {
  score: 91.5,
  features: { vmaf: 91.5, integer_adm2: 0.97 },
  provenance: {
    library: { abi_minor: 4, abi_patch: 1, active_backend: "avx2", n_extractors: 12, version: "3.2.0" },
    model: "vmaf_v0.6.1",
    model_sha256: "ab".repeat(32),
    backend_used: "avx2",
    feature_backends: [{ extractor: "adm", backend: "avx2", implementation: "libvmaf 3.2.0" }],
    precision: "lossless",
    model_source: "builtin",
    models: [{ model: "vmaf_v0.6.1", model_sha256: "ab".repeat(32), model_source: "builtin" }],
    decoder: "",
    reference_input: {
      container: "y4m",
      codec: "rawvideo",
      width: 64,
      height: 48,
      pixel_format: "yuv420p",
      changes: []
    },
    distorted_input: {
      container: "matroska,webm",
      codec: "h264",
      width: 32,
      height: 24,
      pixel_format: "yuv420p",
      changes: [{ frame: 1, width: 64, height: 48, pixel_format: "yuv420p" }]
    },
    scaling: "none"
  },
  frames: [{ frame: 0, metrics: { vmaf: 91.5 } }],
  frame_count: 1,
  pooled: {
    min: pooled(91.5),
    max: pooled(91.5),
    harmonic_mean: pooled(91.5),
    p1: pooled(91.5),
    p5: pooled(91.5),
    p10: pooled(91.5),
    p25: pooled(91.5),
    p50: pooled(91.5),
    p75: pooled(91.5),
    p90: pooled(91.5),
    p95: pooled(91.5),
    p99: pooled(91.5)
  },
  scores: { "vmaf_v0.6.1": 91.5 },
  shots: [{ first_frame: 0, frame_count: 1, score: 91.5, harmonic_mean: 91.5, min: 91.5, p5: 91.5, worst_frame: 0 }],
  worst_shots: [0],
  thumbnails: [],
  alignment: null
}

const job: Job = {
  id: "3f1c2a9e-0000-4000-8000-000000000001",
  tenant_id: "tenant-a",
  state: "JOB_STATE_RUNNING",
  request: {
    reference: "/media/ref.y4m",
    distorted: "/media/dist.y4m",
    model: "vmaf_v0.6.1",
    options: {
      width: 0,
      height: 0,
      pixel_format: "",
      bitdepth: 0,
      backend: "auto",
      threads: 2,
      features: ["psnr"],
      subsample: 1,
      frame_cnt: 0,
      frame_skip_ref: 0,
      frame_skip_dist: 0,
      precision: "",
      per_frame: true,
      scale: "",
      shots: true,
      shot_threshold: 0,
      shot_min_frames: 0,
      frame_rate: 0,
      segment_frames: 24,
      sync: "",
      sync_window: 0
    },
    models: []
  },
  scoring_roots: ["/media"],
  created_at: { seconds: 1_700_000_000, nanos: 0 },
  started_at: { seconds: 1_700_000_001, nanos: 500_000_000 },
  finished_at: null,
  node_id: "node-1",
  result,
  error: "",
  frames_done: 1,
  submitted_by: "alice",
  ladder: null,
  ladder_result: null,
  rendition_progress: [{ label: "720p", frames_done: 1 }],
  idempotency_key: "uid-1",
  segments: [
    {
      index: 0,
      first_frame: 0,
      frame_count: 24,
      state: "JOB_STATE_FINISHED",
      node_id: "node-1",
      attempts: 1,
      frames_done: 24
    }
  ],
  segment: null,
  plan: false,
  plan_alignment: null,
  plan_rendition_alignments: []
}

describe("svc.v1 wire types", () => {
  it("svc-v1.ts is the proto's current rendering (bun scripts/wire-types.ts writes it)", () => {
    expect(readFileSync(wireTypesPath, "utf8")).toBe(renderWireTypes(protoText))
  })

  it("keeps the JobState names and numbers", () => {
    expect(JobState).toEqual({
      JOB_STATE_UNSPECIFIED: 0,
      JOB_STATE_PENDING: 1,
      JOB_STATE_RUNNING: 2,
      JOB_STATE_FINISHED: 3,
      JOB_STATE_CANCELLED: 4,
      JOB_STATE_FAILED: 5
    })
  })

  it("a Job's JSON form through the contract's serializers: proto field names, enum names", async () => {
    const { GetJob: getJob } = serviceDefinition("svc.v1.Jobs")
    if (getJob === undefined) throw new Error("the contract has no GetJob")
    const decoded = getJob.responseDeserialize(getJob.responseSerialize(job))
    // What was sent comes back: every field of the type is a field of the message.
    expect(decoded).toEqual(job)
    await expect(`${JSON.stringify(decoded, null, 2)}\n`).toMatchFileSnapshot("__snapshots__/job.json")
  })
})
