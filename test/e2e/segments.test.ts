/**
 * Segment jobs across nodes (issue 30), with the compiled controller (auth disabled, SQLite) and
 * three compiled nodes: a 480-frame 640x360 pair, raw and as mp4 with a keyframe every 48
 * frames, submitted with `svc jobs submit --segment-frames 80`, finishes as 6 segments scored on
 * at least 2 nodes with per-frame values (every metric) bit-identical to the same job unsplit,
 * whose exactness against one pass the scorer's tests prove. With segments of 40 and a node
 * killed -9 after the first segment finished, the job still finishes with the same values (the
 * lost node's segment is handed out again once its session is gone: the controller runs with
 * short session timings, a 5 s TTL and a 1 s grace, instead of the default 30 s and 60 s). Shots,
 * xpsnr and ssimulacra2 merge exactly too, with cuts on segment boundaries. A ladder job (a raw
 * reference, a raw rendition and a lower-resolution mp4 rendition with B-frames and a keyframe
 * every 20 frames) split with `svc jobs submit --rendition ... --segment-frames 24` gives every
 * rendition's per-frame and pooled values, summary, shots, thumbnails and the hull of the ladder
 * unsplit.
 */
import { existsSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { encoderArgs, ffmpegRunAsync, rawClipInput, writeClip, writeScenes } from "../../local/clip.ts"
import { type RunningService, requireBuilt, startService } from "../../local/executables.ts"
import { ffmpegRun, scratchDir, threeScenes320x180, writeSegmentTitle, x264Gop48 } from "../support/media.ts"
import { ControllerClient, expectOk, jobInState, waitFor } from "./controller-support.ts"
import { bits, finishedJob, type JobView, nodeIdOf, type Segment, token } from "./segments-support.ts"
import { svc } from "./svc-support.ts"

const width = 640
const height = 360
const frames = 480

const media = scratchDir("svc-segments-e2e-")
const path = (name: string) => join(media.dir, name)
const rawOptions = { width, height, pixel_format: "420", bitdepth: 8 }

/**
 * Three sources of 40 frames each (cuts at 40 and 80), as mp4 with a keyframe every 20 frames
 * (cuts-ref.mp4, and cuts-dis.mp4 encoded from it at crf 36); made once.
 */
const writeCutClips = async () => {
  if (existsSync(path("cuts-dis.mp4"))) return
  const x264 = { codec: "libx264", preset: "ultrafast", gop: 20, pixelFormat: "yuv420p" } as const
  await writeScenes(path("cuts-ref.mp4"), {
    ...threeScenes320x180(40),
    ...x264,
    qp: 0
  })
  await ffmpegRunAsync([
    ...["-i", path("cuts-ref.mp4"), "-pix_fmt", "yuv420p"],
    ...encoderArgs({ ...x264, crf: 36 }),
    ...["-y", path("cuts-dis.mp4")]
  ])
}

let controller: RunningService
let nodes: Array<RunningService> = []
let client: ControllerClient

const startNode = (name: string) =>
  startService("svc-node", {
    env: { SVC_CONTROLLER_ADDR: controller.grpc ?? "", SVC_NODE_POLL_INTERVAL_MS: "100", SVC_NODE_NAME: name }
  })

beforeAll(async () => {
  requireBuilt("svc")
  // The title is written while the controller and the nodes start: neither reads it before a submit.
  const written = writeSegmentTitle(media.dir, { width, height, frames, encodedReference: true })
  controller = await startService("svc-controller", {
    listeners: ["http", "grpc"],
    env: {
      SVC_AUTH_DISABLED: "true",
      SVC_SCORING_ROOTS: media.dir,
      SVC_STORE_PATH: path("jobs.sqlite"),
      SVC_LOG_LEVEL: "info",
      // Ten heartbeats per TTL: a node stalled by a loaded machine keeps its session.
      SVC_NODE_HEARTBEAT_INTERVAL_MS: "500",
      SVC_NODE_SESSION_TTL_MS: "5000",
      SVC_NODE_REQUEUE_GRACE_MS: "1000",
      SVC_REQUEUE_SWEEP_INTERVAL_MS: "500"
    }
  })
  client = new ControllerClient(controller.grpc ?? "")
  nodes = await Promise.all(["node-1", "node-2", "node-3"].map(startNode))
  await written
}, 300_000)

afterAll(async () => {
  client?.close()
  await Promise.all(nodes.map((node) => node.stop()))
  await controller?.stop()
  media.remove()
})

const submit = async (request: object): Promise<string> => String(expectOk(await client.submit(request, token)).id)

const finished = (id: string, timeoutMs?: number): Promise<JobView> => finishedJob(client, id, timeoutMs)

const pairs = {
  raw: { reference: path("ref.yuv"), distorted: path("dis.yuv"), options: { ...rawOptions, per_frame: true } },
  mp4: { reference: path("ref.mp4"), distorted: path("dis.mp4"), options: { per_frame: true } }
} as const

describe("segment jobs on 3 nodes", () => {
  it.each([
    "raw",
    "mp4"
  ] as const)("a %s pair with --segment-frames 80 finishes as 6 segments on at least 2 nodes, bit-identical to the job unsplit", async (kind) => {
    const pair = pairs[kind]
    const whole = await finished(await submit(pair))
    expect(whole.segments).toEqual([])
    expect(whole.result.frame_count).toBe(frames)

    const geometry =
      kind === "raw" ? ["--width", String(width), "--height", String(height), "--pixel_format", "420"] : []
    const submitted = await svc(
      ["jobs", "submit", pair.reference, pair.distorted, ...geometry, "--segment-frames", "80"],
      { SVC_CONTROLLER_ADDR: controller.grpc ?? "" }
    )
    expect(submitted.stderr).toBe("")
    const id = submitted.stdout.trim()
    const split = await finished(id)
    expect(split.segments.map((segment) => [segment.index, segment.first_frame, segment.frame_count])).toEqual(
      [0, 1, 2, 3, 4, 5].map((index) => [index, index * 80, 80])
    )
    expect(split.segments.every((segment) => segment.state === "JOB_STATE_FINISHED")).toBe(true)
    expect(new Set(split.segments.map((segment) => segment.node_id)).size).toBeGreaterThanOrEqual(2)
    expect(split.frames_done).toBe(frames)
    // Every frame's every metric and every pooled value bit-identical. per_frame was not asked for
    // on the command line: a job's result carries its per-frame values all the same, split or not.
    expect(bits(split)).toEqual(bits(whole))

    // `svc jobs get ID --json` prints the job with its segments.
    const shown = await svc(["jobs", "get", id, "--json"], { SVC_CONTROLLER_ADDR: controller.grpc ?? "" })
    expect(JSON.parse(shown.stdout).segments).toHaveLength(6)
  }, 600_000)

  it("subsample, frame skips and frame_cnt follow the title's frame index across segments", async () => {
    const options = {
      ...rawOptions,
      per_frame: true,
      subsample: 3,
      frame_skip_ref: 5,
      frame_skip_dist: 5,
      frame_cnt: 400
    }
    const pair = { reference: path("ref.yuv"), distorted: path("dis.yuv") }
    const whole = await finished(await submit({ ...pair, options }))
    const split = await finished(await submit({ ...pair, options: { ...options, segment_frames: 50 } }))
    expect(split.segments).toHaveLength(8)
    expect(whole.result.frames.map((frame) => frame.frame).slice(0, 3)).toEqual([0, 3, 6])
    expect(split.frames_done).toBe(whole.result.frame_count)
    expect(bits(split)).toEqual(bits(whole))
  }, 600_000)

  it("shots, xpsnr and ssimulacra2 across segments whose boundaries are the title's cuts: the job unsplit, bit for bit, thumbnails included", async () => {
    // Three sources of 40 frames each (cuts at 40 and 80), as mp4 with a keyframe every 20
    // frames; segments of 40 start exactly at the cuts, so each cut is measured from the context
    // frame before its segment. Each segment's thumbnail decode seeks to the keyframe before its
    // first picture, as its score's decode seeks.
    await writeCutClips()
    const pair = {
      reference: path("cuts-ref.mp4"),
      distorted: path("cuts-dis.mp4"),
      options: { per_frame: true, shots: true, features: ["xpsnr", "ssimulacra2"] }
    }
    const whole = (await finished(await submit(pair))) as JobView & {
      readonly result: { readonly shots: unknown; readonly thumbnails: ReadonlyArray<{ readonly frame: number }> }
    }
    expect(whole.result.frame_count).toBe(120)
    const shots = whole.result.shots as ReadonlyArray<{ first_frame: number; frame_count: number }>
    expect(shots.map((shot) => [shot.first_frame, shot.frame_count])).toEqual([
      [0, 40],
      [40, 40],
      [80, 40]
    ])
    const split = (await finished(
      await submit({ ...pair, options: { ...pair.options, segment_frames: 40 } })
    )) as typeof whole
    expect(split.segments.map((segment) => segment.first_frame)).toEqual([0, 40, 80])
    expect(bits(split)).toEqual(bits(whole))
    expect(split.result.shots).toEqual(whole.result.shots)
    expect(whole.result.thumbnails).toHaveLength(3)
    expect(split.result.thumbnails).toEqual(whole.result.thumbnails)
    expect(Object.keys(split.result.frames[0]?.metrics ?? {})).toContain("xpsnr_y")
    expect(Object.keys(split.result.frames[0]?.metrics ?? {})).not.toContain("shot_cut")
  }, 600_000)

  it("shots of a Y4M pair across segments: the merged job's thumbnails are the unsplit job's, byte for byte", async () => {
    // Each segment renders the thumbnails of its candidates for shots' worst frames (raw/Y4M
    // sides: read at their offsets), and the controller keeps the title's worst shots' ones.
    await writeCutClips()
    for (const side of ["ref", "dis"]) ffmpegRun(["-i", path(`cuts-${side}.mp4`), "-y", path(`cuts-${side}.y4m`)])
    const pair = {
      reference: path("cuts-ref.y4m"),
      distorted: path("cuts-dis.y4m"),
      options: { per_frame: true, shots: true }
    }
    type ShotsView = JobView & {
      readonly result: {
        readonly thumbnails: ReadonlyArray<{ frame: number; reference: string; distorted: string }>
        readonly worst_shots: ReadonlyArray<number>
        readonly shots: ReadonlyArray<{ readonly worst_frame: number }>
      }
    }
    const whole = (await finished(await submit(pair))) as ShotsView
    expect(whole.result.shots).toHaveLength(3)
    expect(whole.result.thumbnails.map((picture) => picture.frame)).toEqual(
      whole.result.worst_shots.map((index) => whole.result.shots[index]?.worst_frame)
    )
    const split = (await finished(
      await submit({ ...pair, options: { ...pair.options, segment_frames: 40 } })
    )) as ShotsView
    expect(split.segments).toHaveLength(3)
    expect(split.result.shots).toEqual(whole.result.shots)
    expect(split.result.thumbnails).toHaveLength(3)
    expect(split.result.thumbnails).toEqual(whole.result.thumbnails)
  }, 600_000)

  it("segments of 40 with a node killed -9 after the first segment finished: the same values", async () => {
    const pair = pairs.raw
    const whole = await finished(await submit(pair))
    const id = await submit({ ...pair, options: { ...pair.options, segment_frames: 40 } })
    // Once one segment finished, a node that holds a running segment is killed. It is stopped
    // (SIGSTOP) first, and killed only once the controller has taken a segment it held away from
    // it (its session expired: 5 s TTL and 1 s grace). A node seen running a segment may have
    // reported it just before the signal; if all it held ends up finished by it, it goes on
    // (SIGCONT) and another is tried. So the kill always loses a segment, however slow the host.
    const segmentsOf = async () => (expectOk(await client.getJob(id, token)) as unknown as JobView).segments
    const victim = await waitFor(
      async () => {
        const segments = await segmentsOf()
        if (!segments.some((segment) => segment.state === "JOB_STATE_FINISHED")) return undefined
        const node = nodes.find((entry) =>
          segments.some((segment) => segment.state === "JOB_STATE_RUNNING" && segment.node_id === nodeIdOf(entry))
        )
        if (node === undefined) return undefined
        node.process.kill("SIGSTOP")
        const nodeId = nodeIdOf(node)
        const held = (await segmentsOf())
          .filter((segment) => segment.state === "JOB_STATE_RUNNING" && segment.node_id === nodeId)
          .map((segment) => segment.index)
        const outcome = await waitFor(
          async () => {
            const now = (await segmentsOf()).filter((segment) => held.includes(segment.index))
            const keptByNode = (segment: Segment) =>
              segment.node_id === nodeId && ["JOB_STATE_RUNNING", "JOB_STATE_FINISHED"].includes(segment.state)
            if (now.some((segment) => !keptByNode(segment))) return "lost" as const
            if (now.every((segment) => segment.state === "JOB_STATE_FINISHED")) return "reported" as const
            return undefined
          },
          60_000,
          "the stopped node's segments reported or taken away from it"
        )
        if (outcome === "lost") return node
        node.process.kill("SIGCONT")
        return undefined
      },
      240_000,
      "a finished segment and a node scoring another"
    )
    victim.process.kill("SIGKILL")
    await victim.process.exited
    const lostId = nodeIdOf(victim)
    nodes = nodes.filter((node) => node !== victim)
    const done = await finished(id, 400_000)
    expect(done.segments).toHaveLength(12)
    // The lost node's segment was handed out again and scored by another node.
    const retried = done.segments.filter((segment) => segment.attempts > 1)
    expect(retried.length).toBeGreaterThanOrEqual(1)
    expect(retried.every((segment) => segment.node_id !== lostId)).toBe(true)
    expect(bits(done)).toEqual(bits(whole))
    // The job's store file holds the segments (migration 7).
    expect(readFileSync(path("jobs.sqlite")).includes(Buffer.from("job_segments"))).toBe(true)
  }, 600_000)
})

describe("a ladder job in segments on 3 nodes", () => {
  interface RenditionView {
    readonly label: string
    readonly score: number
    readonly frame_count: number
    readonly features: Record<string, number>
    readonly pooled: Record<string, Record<string, number>>
    readonly frames: ReadonlyArray<{ readonly frame: number; readonly metrics: Record<string, number> }>
    readonly summary: Record<string, unknown>
    readonly shots: ReadonlyArray<unknown>
    readonly thumbnails: ReadonlyArray<{ readonly frame: number }>
  }
  interface LadderJobView {
    readonly state: string
    readonly frames_done: number
    readonly segments: ReadonlyArray<Segment>
    readonly ladder_result: {
      readonly renditions: ReadonlyArray<RenditionView>
      readonly provenance: { readonly reference_frames: number }
    }
  }
  const ladderFrames = 72
  const small = { width: 320, height: 180 }

  beforeAll(async () => {
    const clip = { ...small, rate: 24 }
    await writeClip(path("ladder-ref.yuv"), {
      ...clip,
      frames: ladderFrames,
      format: "rawvideo",
      pixelFormat: "yuv420p"
    })
    const raw = rawClipInput(clip, path("ladder-ref.yuv"))
    // A full-size rendition as raw frames (an x264 encode decoded), and a 160x90 mp4 with
    // B-frames and a keyframe every 20 frames: segments of 24 start mid-GOP and seek.
    ffmpegRun([...raw, ...x264Gop48, "-crf", "36", "-y", path("ladder-full.mp4")])
    ffmpegRun(["-i", path("ladder-full.mp4"), "-pix_fmt", "yuv420p", "-f", "rawvideo", "-y", path("ladder-full.yuv")])
    ffmpegRun([
      ...raw,
      "-vf",
      "scale=160:90",
      "-c:v",
      "libx264",
      "-preset",
      "ultrafast",
      "-bf",
      "2",
      "-g",
      "20",
      "-keyint_min",
      "20",
      "-sc_threshold",
      "0",
      "-crf",
      "28",
      "-y",
      path("ladder-low.mp4")
    ])
  })

  const renditions = () => [
    { label: "full-raw", distorted: path("ladder-full.yuv") },
    { label: "low-mp4", distorted: path("ladder-low.mp4") }
  ]
  const ladderOptions = { ...small, pixel_format: "420", bitdepth: 8 }
  const submitLadder = async (options: object) =>
    String(
      expectOk(
        await client.unary(
          "svc.v1.Jobs",
          "SubmitJob",
          { ladder: { reference: path("ladder-ref.yuv"), renditions: renditions(), options } },
          token
        )
      ).id
    )
  const ladderFinished = async (id: string) =>
    (await jobInState(client, id, token, "JOB_STATE_FINISHED", 240_000)) as unknown as LadderJobView
  /** Each rendition's values as the bits of their doubles, and the rest as it is. */
  const renditionBits = (job: LadderJobView) =>
    job.ladder_result.renditions.map((rendition) => ({
      ...rendition,
      ...bits({ result: rendition } as unknown as JobView),
      score: Buffer.from(Float64Array.of(rendition.score).buffer).toString("hex")
    }))

  it("svc jobs submit --rendition ... --segment-frames 24: every rendition's values, summary, shots, thumbnails and the hull of the ladder unsplit", async () => {
    const options = { ...ladderOptions, per_frame: true, shots: true }
    const whole = await ladderFinished(await submitLadder(options))
    expect(whole.segments).toEqual([])
    const [fullRaw, lowMp4] = whole.ladder_result.renditions
    expect(fullRaw?.frames).toHaveLength(ladderFrames)
    expect(fullRaw?.thumbnails.length).toBeGreaterThan(0)
    expect(lowMp4?.summary).toMatchObject({ width: 160, height: 90, codec: "h264" })

    // Per-frame values asked for: every rendition's every frame and pooled value bit for bit.
    const split = await ladderFinished(await submitLadder({ ...options, segment_frames: 24 }))
    expect(split.segments.map((segment) => [segment.first_frame, segment.frame_count, segment.state])).toEqual(
      [0, 24, 48].map((first) => [first, 24, "JOB_STATE_FINISHED"])
    )
    expect(split.frames_done).toBe(ladderFrames)
    expect(split.ladder_result.provenance.reference_frames).toBe(ladderFrames)
    // Thumbnails included: the segments render them (the mp4 rendition's from its seek point).
    expect(lowMp4?.thumbnails.length).toBeGreaterThan(0)
    expect(renditionBits(split)).toEqual(renditionBits(whole))

    // From the command line (no per_frame, no shots): the same values, summaries and hull.
    const submitted = await svc(
      [
        "jobs",
        "submit",
        path("ladder-ref.yuv"),
        ...renditions().flatMap((rendition) => ["--rendition", `${rendition.label}=${rendition.distorted}`]),
        "--width",
        String(small.width),
        "--height",
        String(small.height),
        "--pixel_format",
        "420",
        "--segment-frames",
        "24"
      ],
      { SVC_CONTROLLER_ADDR: controller.grpc ?? "" }
    )
    expect(submitted.stderr).toBe("")
    const cli = await ladderFinished(submitted.stdout.trim())
    expect(cli.segments).toHaveLength(3)
    // A job's result carries its per-frame values, per_frame asked for or not.
    renditionBits(cli).forEach((rendition, index) => {
      const unsplit = renditionBits(whole)[index]
      expect([rendition.frames, rendition.features, rendition.pooled, rendition.summary]).toEqual([
        unsplit?.frames,
        unsplit?.features,
        unsplit?.pooled,
        unsplit?.summary
      ])
    })
  }, 600_000)

  it("a rendition of another length fails the ladder's plan, naming it", async () => {
    // Every rendition is read over the reference's segments: one that is shorter cannot be.
    ffmpegRun(["-i", path("ladder-low.mp4"), "-frames:v", "48", "-c", "copy", "-y", path("ladder-short.mp4")])
    const id = String(
      expectOk(
        await client.unary(
          "svc.v1.Jobs",
          "SubmitJob",
          {
            ladder: {
              reference: path("ladder-ref.yuv"),
              renditions: [...renditions(), { label: "short", distorted: path("ladder-short.mp4") }],
              options: { ...ladderOptions, segment_frames: 24 }
            }
          },
          token
        )
      ).id
    )
    const failed = (await jobInState(client, id, token, "JOB_STATE_FAILED", 120_000)) as unknown as JobView
    expect(failed.segments).toEqual([])
    expect(failed.error).toBe(
      `${path("ladder-ref.yuv")} has ${ladderFrames} frames after skipping 0, rendition short (${path("ladder-short.mp4")}) has 48 frames after skipping 0: lengths differ`
    )
  }, 300_000)
})
