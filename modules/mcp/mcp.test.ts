/** svc-mcp's pure parts: request admission over HTTP, its configuration rules, the result views. */
import { ConfigProvider, Effect, Either } from "effect"
import { describe, expect, it } from "vitest"
import { InFlightCalls } from "./cancellation.ts"
import { DEFAULT_MCP_HTTP_ADDR, mcpConfig } from "./config.ts"
import { admit } from "./http.ts"
import {
  compareFrames,
  JobSchema,
  jobLine,
  jobView,
  LadderViewSchema,
  ladderLine,
  ladderView,
  ScoreSummarySchema,
  scoreLine,
  scoreSummary,
  worstFrames,
  worstShotsOf
} from "./views.ts"
import type {
  FrameScore as WireFrameScore,
  Job as WireJob,
  PooledFeatures as WirePooled,
  RenditionResult as WireRendition
} from "../transport/grpc/svc-v1.ts"

/** Poolings as the controller sends them: every map present, empty when not computed. */
const pooledOf = (maps: Partial<WirePooled>): WirePooled => ({
  min: {},
  max: {},
  harmonic_mean: {},
  p1: {},
  p5: {},
  p10: {},
  p25: {},
  p50: {},
  p75: {},
  p90: {},
  p95: {},
  p99: {},
  ...maps
})

const scoreFields = { scores: {}, shots: [], worst_shots: [], thumbnails: [], alignment: null }

/** A job as the controller sends it with nothing set. */
const emptyJob: WireJob = {
  id: "",
  tenant_id: "",
  state: "JOB_STATE_UNSPECIFIED",
  request: null,
  scoring_roots: [],
  created_at: null,
  started_at: null,
  finished_at: null,
  node_id: "",
  result: null,
  error: "",
  frames_done: 0,
  submitted_by: "",
  ladder: null,
  ladder_result: null,
  rendition_progress: [],
  idempotency_key: "",
  segments: [],
  segment: null,
  plan: false,
  plan_alignment: null,
  plan_rendition_alignments: []
}

const headers = (values: Record<string, string>) => ({ get: (name: string) => values[name] ?? null })
const loopback = { allowedOrigins: ["https://app.example.com"], httpAddress: { host: "127.0.0.1", port: 8090 } }
const anyInterface = { ...loopback, httpAddress: { host: "0.0.0.0", port: 8090 } }

describe("HTTP admission", () => {
  it("takes the bearer token and needs one", () => {
    expect(admit(headers({ host: "127.0.0.1:8090", authorization: "Bearer abc.def" }), loopback)).toEqual({
      ok: true,
      token: "abc.def"
    })
    expect(admit(headers({ host: "localhost:8090", authorization: "bearer  t" }), loopback)).toMatchObject({ ok: true })
    for (const authorization of [undefined, "", "Bearer", "Bearer ", "Basic abc", "Bearer a b"]) {
      const values: Record<string, string> = { host: "127.0.0.1:8090" }
      if (authorization !== undefined) values.authorization = authorization
      expect(admit(headers(values), loopback), String(authorization)).toMatchObject({ ok: false, status: 401 })
    }
  })

  it("refuses foreign origins before anything else; loopback and listed origins pass", () => {
    const withOrigin = (origin: string, config = loopback) =>
      admit(headers({ host: "127.0.0.1:8090", origin, authorization: "Bearer t" }), config)
    for (const origin of ["http://localhost:6274", "http://127.0.0.1", "http://[::1]:3000", "https://app.example.com"])
      expect(withOrigin(origin), origin).toMatchObject({ ok: true })
    for (const origin of ["http://attacker.example", "null", "https://app.example.com.attacker.example", "garbage"])
      expect(withOrigin(origin), origin).toMatchObject({ ok: false, status: 403 })
    expect(admit(headers({ host: "127.0.0.1:8090", origin: "http://evil.example" }), loopback)).toMatchObject({
      status: 403
    })
  })

  it("on a loopback listener, refuses a Host that is not a loopback name (DNS rebinding)", () => {
    const withHost = (host: string, config = loopback) => admit(headers({ host, authorization: "Bearer t" }), config)
    for (const host of ["127.0.0.1:8090", "localhost", "[::1]:8090"])
      expect(withHost(host), host).toMatchObject({ ok: true })
    expect(withHost("attacker.example:8090")).toMatchObject({ ok: false, status: 403 })
    expect(withHost("mcp.example.com", anyInterface)).toMatchObject({ ok: true })
  })

  it("refuses a malformed Host (userinfo, a path, spaces) with 400 on any listener", () => {
    const withHost = (host: string, config = loopback) => admit(headers({ host, authorization: "Bearer t" }), config)
    for (const host of ["127.0.0.1:8090@evil.example", "127.0.0.1/x", "local host", "127.0.0.1:8090:1", ""])
      for (const config of [loopback, anyInterface])
        expect(withHost(host, config), host).toEqual({ ok: false, status: 400, message: "malformed Host header" })
  })
})

describe("configuration", () => {
  const load = (env: Record<string, string>) =>
    Effect.runSync(
      Effect.either(Effect.withConfigProvider(mcpConfig, ConfigProvider.fromMap(new Map(Object.entries(env)))))
    )

  it("defaults to stdio, and HTTP on loopback", () => {
    const config = load({})
    expect(Either.isRight(config) && config.right.transport).toBe("stdio")
    expect(DEFAULT_MCP_HTTP_ADDR.startsWith("127.0.0.1:")).toBe(true)
  })

  it("refuses a token over HTTP, both token variables, an unknown transport and bad origins", () => {
    const refusal = (env: Record<string, string>) => {
      const config = load(env)
      return Either.isLeft(config) ? String(config.left) : "accepted"
    }
    expect(refusal({ SVC_MCP_TRANSPORT: "http", SVC_CONTROLLER_TOKEN: "t" })).toContain("SVC_CONTROLLER_TOKEN")
    expect(refusal({ SVC_MCP_TRANSPORT: "http", SVC_CONTROLLER_TOKEN_FILE: "/t" })).toContain("stdio only")
    expect(refusal({ SVC_CONTROLLER_TOKEN: "t", SVC_CONTROLLER_TOKEN_FILE: "/t" })).toContain("not both")
    expect(refusal({ SVC_MCP_TRANSPORT: "sse" })).toContain("stdio or http")
    expect(refusal({ SVC_MCP_ALLOWED_ORIGINS: "https://a.example/path" })).toContain("SVC_MCP_ALLOWED_ORIGINS")
    expect(refusal({ SVC_MCP_TRANSPORT: "http", SVC_MCP_ALLOWED_ORIGINS: "https://a.example, http://b:81" })).toBe(
      "accepted"
    )
  })
})

const frames = (values: ReadonlyArray<number>): ReadonlyArray<WireFrameScore> =>
  values.map((vmaf, frame) => ({ frame: frame * 2, metrics: { vmaf, integer_adm2: vmaf / 100 } }))

describe("result views", () => {
  it("ranks the worst frames, ties by frame, and skips frames without the metric", () => {
    const ranked = worstFrames([...frames([80, 40, 90, 40]), { frame: 99, metrics: { psnr_y: 1 } }], "vmaf", 3)
    expect(ranked.map((frame) => [frame.frame, frame.value])).toEqual([
      [2, 40],
      [6, 40],
      [0, 80]
    ])
    expect(worstFrames(frames([1]), "psnr_y", 5)).toEqual([])
  })

  it("writes a non-finite feature (xpsnr of identical planes) as null, which its schema accepts", () => {
    const infinite = { vmaf: 100, xpsnr_y: Number.POSITIVE_INFINITY, ssimulacra2: 100 }
    const summary = scoreSummary({
      score: 100,
      features: infinite,
      provenance: null,
      frames: [],
      frame_count: 3,
      pooled: pooledOf({ min: infinite, max: infinite, harmonic_mean: infinite }),
      ...scoreFields
    })
    expect(summary.features).toEqual({ vmaf: 100, xpsnr_y: null, ssimulacra2: 100 })
    expect(ScoreSummarySchema.safeParse(summary).success).toBe(true)
  })

  it("compares frame by frame, matching frames by index", () => {
    const summary = compareFrames(frames([50, 60, 70]), frames([55, 60, 65, 99]), "vmaf")
    expect(summary).toMatchObject({
      frames_compared: 3,
      mean_delta: 0,
      mean_abs_delta: 10 / 3,
      frames_b_better: 1,
      frames_a_better: 1,
      frames_equal: 1,
      largest_gain: { frame: 0, a: 50, b: 55, delta: 5 },
      largest_loss: { frame: 4, a: 70, b: 65, delta: -5 }
    })
    expect(compareFrames([], [], "vmaf")).toMatchObject({ frames_compared: 0, mean_delta: 0 })
  })

  it("turns a wire job into the tool's view: lower-case state, RFC 3339 times, no empty fields", () => {
    const wire: WireJob = {
      ...emptyJob,
      id: "j1",
      tenant_id: "a",
      state: "JOB_STATE_FAILED",
      request: { reference: "/r.yuv", distorted: "/d.yuv", model: "", options: null, models: [] },
      created_at: { seconds: 1_700_000_000, nanos: 500_000_000 },
      started_at: null,
      finished_at: { seconds: 0, nanos: 0 },
      node_id: "",
      result: null,
      error: "input outside roots",
      frames_done: 0,
      submitted_by: "user@a"
    }
    expect(jobView(wire)).toEqual({
      id: "j1",
      state: "failed",
      tenant_id: "a",
      reference: "/r.yuv",
      distorted: "/d.yuv",
      model: "",
      frames_done: 0,
      created_at: "2023-11-14T22:13:20.500Z",
      submitted_by: "user@a",
      error: "input outside roots"
    })
  })

  it("a running ladder job's view and line carry its frames per rendition", () => {
    const wire: WireJob = {
      ...emptyJob,
      id: "j2",
      tenant_id: "a",
      state: "JOB_STATE_RUNNING",
      request: null,
      ladder: {
        reference: "/r.mkv",
        renditions: [
          { label: "480p", distorted: "/480.mp4", options: null },
          { label: "720p", distorted: "/720.mp4", options: null }
        ],
        model: "",
        models: [],
        options: null
      },
      created_at: null,
      started_at: null,
      finished_at: null,
      node_id: "n1",
      result: null,
      error: "",
      frames_done: 120,
      rendition_progress: [
        { label: "480p", frames_done: 120 },
        { label: "720p", frames_done: 118 }
      ],
      submitted_by: ""
    }
    const view = jobView(wire)
    expect(view.rendition_progress).toEqual([
      { label: "480p", frames_done: 120 },
      { label: "720p", frames_done: 118 }
    ])
    expect(JobSchema.parse(view)).toEqual(view)
    expect(jobLine(view)).toBe("job j2 is running, 120 frames scored so far (480p 120, 720p 118)")
  })
})

describe("calls in flight (cancellation across stateless requests)", () => {
  it("cancels only the caller's own call with that id, and forgets calls that ended", () => {
    const calls = new InFlightCalls()
    const request = new AbortController()
    const mine = calls.track("token-a", 7, request.signal)
    const otherId = calls.track("token-a", "7", new AbortController().signal)
    expect(calls.cancel("token-b", 7, "no")).toBe(0)
    expect(mine.signal.aborted).toBe(false)
    expect(calls.cancel("token-a", 7, "stop")).toBe(1)
    expect(mine.signal.aborted).toBe(true)
    expect(otherId.signal.aborted).toBe(false)
    mine.release()
    otherId.release()
    expect(calls.size).toBe(0)
  })

  it("follows the call's own request being aborted", () => {
    const calls = new InFlightCalls()
    const request = new AbortController()
    const tracked = calls.track("t", 1, request.signal)
    request.abort()
    expect(tracked.signal.aborted).toBe(true)
    tracked.release()
    expect(calls.size).toBe(0)
  })
})

describe("shots and percentiles in the views", () => {
  const shot = (first_frame: number, frame_count: number, score: number) => ({
    first_frame,
    frame_count,
    score,
    harmonic_mean: score,
    min: score - 1,
    p5: score,
    worst_frame: first_frame
  })

  it("names the worst shots in the order the result ranks them", () => {
    const shots = [shot(0, 30, 90), shot(30, 45, 60), shot(75, 35, 70)]
    expect(worstShotsOf(shots, [1, 2, 0])).toEqual([
      { shot: 1, first_frame: 30, frame_count: 45, score: 60, min: 59, worst_frame: 30 },
      { shot: 2, first_frame: 75, frame_count: 35, score: 70, min: 69, worst_frame: 75 },
      { shot: 0, first_frame: 0, frame_count: 30, score: 90, min: 89, worst_frame: 0 }
    ])
    // A result scored without shots (proto's empty list) names none.
    expect(worstShotsOf([], [])).toBeUndefined()
    expect(worstShotsOf(undefined, undefined)).toBeUndefined()
  })

  it("carries the percentiles, an infinite value as null", () => {
    const summary = scoreSummary({
      score: 80,
      features: { vmaf: 80 },
      provenance: null,
      frames: [],
      frame_count: 3,
      pooled: pooledOf({ p1: { vmaf: 70, ciede2000: Number.POSITIVE_INFINITY } }),
      ...scoreFields
    })
    expect(summary.percentiles).toEqual({ p1: { vmaf: 70, ciede2000: null } })
    expect(ScoreSummarySchema.parse(summary).percentiles?.["p1"]?.["vmaf"]).toBe(70)
  })

  it("carries an alignment (options.sync auto) in the summary and its text line; none without it", () => {
    const alignment = {
      reference_start: 7,
      distorted_start: 0,
      frames: 110,
      reference_frames_dropped: [50, 51, 52],
      distorted_frames_inserted: [],
      distorted_frames_repeated: [90],
      confidence: 0.9,
      window: 120,
      warning: ""
    }
    const base = { score: 80, features: { vmaf: 80 }, provenance: null, frames: [], frame_count: 110 }
    const summary = scoreSummary({ ...base, pooled: pooledOf({}), ...scoreFields, alignment })
    expect(ScoreSummarySchema.parse(summary).alignment).toEqual({
      reference_start: 7,
      distorted_start: 0,
      frames: 110,
      reference_frames_dropped: [50, 51, 52],
      distorted_frames_inserted: [],
      distorted_frames_repeated: [90],
      confidence: 0.9
    })
    expect(scoreLine(summary)).toContain(
      "aligned: reference from frame 7, distorted from frame 0, 110 pairs; 3 reference frames dropped (50-52), no distorted frames inserted, 1 repeated (90); confidence 0.9"
    )
    const plain = scoreSummary({ ...base, pooled: pooledOf({}), ...scoreFields })
    expect(plain.alignment).toBeUndefined()
    expect(scoreLine(plain)).not.toContain("aligned")
  })

  it("a ladder's view carries each rendition's own alignment, its warning in the line; none without sync", () => {
    const alignment = {
      reference_start: 5,
      distorted_start: 0,
      frames: 114,
      reference_frames_dropped: [60],
      distorted_frames_inserted: [],
      distorted_frames_repeated: [],
      confidence: 0.3,
      window: 120,
      warning: "static"
    }
    const rendition = (label: string, aligned: typeof alignment | null): WireRendition => ({
      label,
      score: 80,
      features: { vmaf: 80 },
      provenance: null,
      frames: [],
      frame_count: 114,
      pooled: pooledOf({ min: { vmaf: 60 }, harmonic_mean: { vmaf: 79 } }),
      summary: {
        p1: 70,
        p5: 75,
        worst_frames: [],
        width: 320,
        height: 240,
        codec: "h264",
        bitrate_bps: 1000,
        duration_s: 4.6,
        on_hull: true
      },
      ...scoreFields,
      alignment: aligned
    })
    const view = ladderView(
      "/r.mkv",
      {
        renditions: [rendition("late", alignment), rendition("plain", null)],
        provenance: null
      },
      (label) => `/${label}.mp4`,
      false
    )
    expect(LadderViewSchema.parse(view).renditions.map((entry) => entry.alignment)).toEqual([
      {
        reference_start: 5,
        distorted_start: 0,
        frames: 114,
        reference_frames_dropped: [60],
        distorted_frames_inserted: [],
        distorted_frames_repeated: [],
        confidence: 0.3,
        warning: "static"
      },
      undefined
    ])
    expect(ladderLine(view)).toContain(
      "late VMAF 80.000 (p5 75.000; aligned from reference frame 5, distorted frame 0, 114 pairs, warning: static)"
    )
    expect(ladderLine(view)).toContain("plain VMAF 80.000 (p5 75.000)")
  })
})
