/**
 * Jobs with `options.sync: "auto"` (issue 31) through the compiled controller (auth disabled,
 * SQLite) and two compiled nodes: a distorted encode that starts 5 frames late and drops one
 * reference frame mid-clip, submitted with `svc jobs submit --sync auto`, finishes with the
 * alignment the encode was made with and per-frame values bit-identical to the same pair scored
 * by the compiled svc-server. With `--segment-frames 40` it aligns once, in the plan step, and
 * its 3 segments (ranges of the 114 pairs, the dropped frame inside the second) are scored on
 * both nodes and merge to the same alignment and the unsplit job's per-frame values, bit for bit.
 * A ladder job that aligns does too: `svc jobs submit REF --rendition ... --sync auto
 * --segment-frames 40` of three renditions, one starting 5 frames late and one starting on time
 * with 2 black frames inserted, both dropping reference frame 60, and one ending after reference
 * frame 54 (each from its own offset over its own overlap with the reference, the inserted frames
 * cut out of its own clip, the last one in no frame of the third segment), is planned
 * once (each rendition aligned there) and merges to the unsplit ladder job's
 * alignments, per-frame values, summaries, shots, thumbnails and hull, bit for bit; a rendition
 * at another frame rate fails the plan with the unsplit ladder's message.
 */
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type RunningService, requireBuilt, startService } from "../../local/executables.ts"
import { clipSize, writeEncode, writeOtherRate, writeReference } from "../../modules/inputs/test/alignment-clips.ts"
import type { AlignmentReport } from "../../modules/scorer/index.ts"
import { scratchDir } from "../support/media.ts"
import { ControllerClient, expectOk, jobInState } from "./controller-support.ts"
import { bits, type JobView as SegmentJobView } from "./segments-support.ts"
import { svc } from "./svc-support.ts"

const token = "unused-in-disabled-mode"

/** Reference frames 5.. of the 120-frame reference, with its frame 60 left out: 114 pairs. */
const late = {
  name: "late5-drop60",
  filter: "[0:v]trim=start_frame=5,setpts=PTS-STARTPTS,select='not(eq(n\\,55))',setpts=N/25/TB[out]",
  truth: {
    reference_start: 5,
    distorted_start: 0,
    reference: [],
    distorted: [],
    dropped: [60],
    repeated: []
  }
} as const
const pairs = 114

interface Scored {
  readonly frame_count: number
  readonly score: number
  readonly alignment: AlignmentReport | null
  readonly frames: ReadonlyArray<{ readonly frame: number; readonly metrics: Record<string, number> }>
}

interface JobView {
  readonly id: string
  readonly state: string
  readonly segments: ReadonlyArray<{
    readonly index: number
    readonly first_frame: number
    readonly frame_count: number
    readonly node_id: string
    readonly state: string
  }>
  readonly result: Scored
}

const media = scratchDir("svc-sync-jobs-e2e-")
let controller: RunningService
let server: RunningService
let nodes: Array<RunningService> = []
let client: ControllerClient
let reference = ""
let distorted = ""
/** The first test's job with per-frame values, scored in one piece. */
let unsplit: JobView | undefined

beforeAll(async () => {
  requireBuilt("svc")
  reference = await writeReference(media.dir)
  distorted = writeEncode(media.dir, reference, late)
  controller = await startService("svc-controller", {
    listeners: ["http", "grpc"],
    env: { SVC_AUTH_DISABLED: "true", SVC_SCORING_ROOTS: media.dir, SVC_STORE_PATH: join(media.dir, "jobs.sqlite") }
  })
  client = new ControllerClient(controller.grpc ?? "")
  const node = (name: string) =>
    startService("svc-node", {
      env: { SVC_CONTROLLER_ADDR: controller.grpc ?? "", SVC_NODE_POLL_INTERVAL_MS: "100", SVC_NODE_NAME: name }
    })
  ;[server, ...nodes] = await Promise.all([
    startService("svc-server", { env: { SVC_INPUT_ROOTS: media.dir } }),
    node("node-1"),
    node("node-2")
  ])
}, 300_000)

afterAll(async () => {
  client?.close()
  await Promise.all([...nodes, server].map((service) => service?.stop()))
  await controller?.stop()
  media.remove()
})

const finished = async (id: string): Promise<JobView> =>
  (await jobInState(client, id, token, "JOB_STATE_FINISHED", 240_000)) as unknown as JobView

/** Every per-frame value as the bits of its double. */
const frameBits = (result: Scored) => {
  const hex = (value: number) => Buffer.from(Float64Array.of(value).buffer).toString("hex")
  return result.frames.map((frame) => ({
    frame: frame.frame,
    metrics: Object.fromEntries(Object.entries(frame.metrics).map(([name, value]) => [name, hex(value)]))
  }))
}

const syncPair = () => ({ reference, distorted })

/** The pair scored in one request by svc-server. */
const scoredByServer = async (): Promise<Scored> => {
  const response = await fetch(`${server.http}/v1/score`, {
    method: "POST",
    body: JSON.stringify({ ...syncPair(), options: { sync: "auto", per_frame: true } })
  })
  expect(response.status).toBe(200)
  return (await response.json()) as Scored
}

describe("a sync job on the controller and its nodes", () => {
  it("svc jobs submit --sync auto: the alignment found and per-frame values bit-identical to svc-server's", async () => {
    const submitted = await svc(["jobs", "submit", reference, distorted, "--sync", "auto"], {
      SVC_CONTROLLER_ADDR: controller.grpc ?? ""
    })
    expect(submitted.stderr).toBe("")
    const pooled = await finished(submitted.stdout.trim())
    const alignment = pooled.result.alignment
    expect(alignment).toMatchObject({
      reference_start: late.truth.reference_start,
      distorted_start: late.truth.distorted_start,
      frames: pairs,
      reference_frames_dropped: late.truth.dropped,
      distorted_frames_inserted: [],
      distorted_frames_repeated: []
    })
    expect(pooled.result.frame_count).toBe(pairs)
    const local = await scoredByServer()
    // proto3 has no absent string: the job's (gRPC) alignment carries the unset warning as "".
    expect(alignment).toEqual({ warning: "", ...local.alignment })
    expect(pooled.result.score).toBe(local.score)
    // The command line asks for no per-frame values: the same job with them, every frame's every metric.
    const job = await finished(
      String(expectOk(await client.submit({ ...syncPair(), options: { sync: "auto", per_frame: true } }, token)).id)
    )
    expect(job.result.alignment).toEqual(alignment)
    expect(frameBits(job.result)).toHaveLength(pairs)
    expect(frameBits(job.result)).toEqual(frameBits(local))
    unsplit = job
  }, 600_000)

  it("with --segment-frames 40: aligned once in the plan, 3 segments on 2 nodes, bit-identical to the unsplit job", async () => {
    expect(unsplit).toBeDefined()
    const whole = unsplit as JobView
    const submitted = await svc(["jobs", "submit", reference, distorted, "--sync", "auto", "--segment-frames", "40"], {
      SVC_CONTROLLER_ADDR: controller.grpc ?? ""
    })
    expect(submitted.stderr).toBe("")
    const pooled = await finished(submitted.stdout.trim())
    expect(pooled.result.alignment).toEqual(whole.result.alignment)
    expect(pooled.result.score).toBe(whole.result.score)
    // The same split with per-frame values: segments are ranges of pairs, every frame's every metric bit-identical.
    const split = await finished(
      String(
        expectOk(
          await client.submit({ ...syncPair(), options: { sync: "auto", per_frame: true, segment_frames: 40 } }, token)
        ).id
      )
    )
    expect(split.segments.map((segment) => [segment.index, segment.first_frame, segment.frame_count])).toEqual([
      [0, 0, 40],
      [1, 40, 40],
      [2, 80, 34]
    ])
    expect(split.segments.every((segment) => segment.state === "JOB_STATE_FINISHED")).toBe(true)
    expect(new Set([...pooled.segments, ...split.segments].map((segment) => segment.node_id)).size).toBe(2)
    expect(split.result.alignment).toEqual(whole.result.alignment)
    expect(frameBits(split.result)).toEqual(frameBits(whole.result))
    expect(split.result.score).toBe(whole.result.score)
    // Aligned once: one plan (its 114 pairs) on one node; the segments were handed its alignment.
    const plans = nodes
      .flatMap((node) => node.logs)
      .filter((line) => line.message === "job planned" && line.annotations.job_id === split.id)
    expect(plans.map((line) => line.annotations.frames)).toEqual([pairs])
  }, 600_000)
})

describe("a ladder job with sync in segments", () => {
  interface RenditionView {
    readonly label: string
    readonly score: number
    readonly alignment: AlignmentReport | null
    readonly frames: ReadonlyArray<unknown>
    readonly summary: Record<string, unknown>
    readonly thumbnails: ReadonlyArray<{ readonly frame: number }>
  }
  interface LadderJobView {
    readonly id: string
    readonly error: string
    readonly segments: JobView["segments"]
    readonly ladder_result: { readonly renditions: ReadonlyArray<RenditionView> }
  }
  /**
   * The reference on time without frame 60 (the frame the late rendition drops), 2 black frames
   * inserted after its frame 80 (reference frame 81).
   */
  const onTime = {
    name: "drop60-insert80",
    filter: `[0:v]select='not(eq(n\\,60))',setpts=N/25/TB,split[a][b];[a]trim=end_frame=80[head];[b]trim=start_frame=80,setpts=PTS-STARTPTS[tail];color=black:size=${clipSize.width}x${clipSize.height}:rate=25,format=yuv420p,trim=end_frame=2[black];[head][black][tail]concat=n=3:v=1:a=0[out]`,
    truth: { reference_start: 0, distorted_start: 0, reference: [], distorted: [], dropped: [60], repeated: [] }
  } as const
  /** Reference frames 0..54: it ends 65 frames early, before the frame the others drop. */
  const ending = {
    name: "end55",
    filter: "[0:v]trim=end_frame=55,setpts=N/25/TB[out]",
    truth: { reference_start: 0, distorted_start: 0, reference: [], distorted: [], dropped: [], repeated: [] }
  } as const
  let inserted = ""
  let short = ""
  beforeAll(() => {
    inserted = writeEncode(media.dir, reference, onTime)
    short = writeEncode(media.dir, reference, ending)
  }, 120_000)

  const ladderOf = (renditions: ReadonlyArray<{ label: string; distorted: string }>, options: object) => ({
    ladder: { reference, renditions, options }
  })
  const submitLadder = async (request: object) =>
    String(expectOk(await client.unary("svc.v1.Jobs", "SubmitJob", request, token)).id)
  const ladderIn = async (id: string, state: string) =>
    (await jobInState(client, id, token, state, 240_000)) as unknown as LadderJobView
  /** Each rendition as it is, its values as the bits of their doubles. */
  const renditionBits = (job: LadderJobView) =>
    job.ladder_result.renditions.map((rendition) => ({
      ...rendition,
      ...bits({ result: rendition } as unknown as SegmentJobView),
      score: Buffer.from(Float64Array.of(rendition.score).buffer).toString("hex")
    }))
  const plansOf = (id: string) =>
    nodes
      .flatMap((node) => node.logs)
      .filter((line) => line.message === "job planned" && line.annotations.job_id === id)

  it("svc jobs submit REF --rendition ... --sync auto --segment-frames 40: planned once, bit-identical to the unsplit ladder", async () => {
    const renditions = [
      { label: "late", distorted },
      { label: "on-time", distorted: inserted },
      { label: "short", distorted: short }
    ]
    const whole = await ladderIn(
      await submitLadder(ladderOf(renditions, { sync: "auto", shots: true })),
      "JOB_STATE_FINISHED"
    )
    const [late, onTimeRendition, shortRendition] = whole.ladder_result.renditions
    // The ladder reads reference frames 0..119 without 60 (119 frames); each rendition over its
    // own: the late one 5..119 (114 pairs), the on-time one all 119 (its frames 80 and 81 cut
    // out), the short one 0..54 (55 pairs).
    expect(late?.alignment).toMatchObject({ reference_start: 5, distorted_start: 0, reference_frames_dropped: [60] })
    expect(onTimeRendition?.alignment).toMatchObject({
      reference_start: 0,
      distorted_start: 0,
      frames: 119,
      reference_frames_dropped: [60],
      distorted_frames_inserted: [80, 81]
    })
    expect(shortRendition?.alignment).toMatchObject({ reference_start: 0, frames: 55, reference_frames_dropped: [] })
    expect(late?.frames).toHaveLength(pairs)
    expect(onTimeRendition?.frames).toHaveLength(119)
    expect(shortRendition?.frames).toHaveLength(55)
    expect(late?.thumbnails.length).toBeGreaterThan(0)

    const submitted = await svc(
      [
        "jobs",
        "submit",
        reference,
        ...renditions.flatMap((rendition) => ["--rendition", `${rendition.label}=${rendition.distorted}`]),
        "--sync",
        "auto",
        "--shots",
        "--segment-frames",
        "40"
      ],
      { SVC_CONTROLLER_ADDR: controller.grpc ?? "" }
    )
    expect(submitted.stderr).toBe("")
    const split = await ladderIn(submitted.stdout.trim(), "JOB_STATE_FINISHED")
    // The ladder's 119 frames cut in 3: the late rendition starting inside the first, the short
    // rendition's end and the dropped reference frame (ladder frame 60) inside the second, the
    // inserted frames (between its ladder frames 79 and 80) at the third's start.
    expect(split.segments.map((segment) => [segment.first_frame, segment.frame_count, segment.state])).toEqual(
      [
        [0, 40],
        [40, 40],
        [80, 39]
      ].map(([first, count]) => [first, count, "JOB_STATE_FINISHED"])
    )
    expect(renditionBits(split)).toEqual(renditionBits(whole))
    // Aligned once: one plan (the ladder's frames) on one node.
    expect(plansOf(split.id).map((line) => line.annotations.frames)).toEqual([119])
  }, 600_000)

  it("a rendition at another frame rate fails the split ladder's plan with the unsplit ladder's message", async () => {
    const renditions = [
      { label: "late", distorted },
      { label: "rate30", distorted: writeOtherRate(media.dir, reference) }
    ]
    const whole = await ladderIn(await submitLadder(ladderOf(renditions, { sync: "auto" })), "JOB_STATE_FAILED")
    expect(whole.error).toContain("pairs frames of one rate")
    const split = await ladderIn(
      await submitLadder(ladderOf(renditions, { sync: "auto", segment_frames: 40 })),
      "JOB_STATE_FAILED"
    )
    expect(split.segments).toEqual([])
    expect(split.error).toBe(whole.error)
    expect(plansOf(split.id)).toEqual([])
  }, 300_000)
})
