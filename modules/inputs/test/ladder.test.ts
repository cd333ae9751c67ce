/**
 * Ladders through the real scorer and the machine's ffmpeg: every rendition's per-frame values
 * equal a separate score of its pair (golden fixtures, and renditions of other sizes and codecs
 * made here), the reference is read once (one decoder process for an encoded one), the roots
 * guard sees every rendition, and an interrupted ladder leaves no ffmpeg behind.
 */
import { ConfigProvider, Effect, Exit, Fiber, Layer, ManagedRuntime } from "effect"
import { readFileSync, statSync } from "node:fs"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { writeClip } from "../../../local/clip.ts"
import { modelDirEnv } from "../../../local/executables.ts"
import { fixture, fixtures, rawOptions } from "../../../test/support/fixtures.ts"
import { childrenNamed, ffmpegPixelFormatOf, ffmpegRun, rawInput, scratchDir } from "../../../test/support/media.ts"
import { parseLadderRequest, parseScoreRequest, Scorer, type ScoreResult, UnreadableInput } from "../../scorer/index.ts"
import { type InputGuard, unguarded } from "../open.ts"
import { Ffmpeg } from "../ffmpeg.ts"
import { type LadderHooks, scoreLadderInputs } from "../ladder.ts"
import { scoreInputs } from "../score.ts"

const runtime = ManagedRuntime.make(
  Layer.merge(Scorer.Default, Ffmpeg.Default).pipe(
    Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(modelDirEnv)))))
  )
)
const scratch = scratchDir("svc-ladder-")
afterAll(async () => {
  await runtime.dispose()
  scratch.remove()
})
const file = (name: string) => join(scratch.dir, name)

const ladderEffect = (body: unknown, hooks: LadderHooks<never> = {}) =>
  Effect.flatMap(parseLadderRequest(body), (job) =>
    Effect.flatMap(Scorer, (scorer) => scoreLadderInputs(scorer, job, hooks))
  )
const ladder = (body: unknown, hooks: LadderHooks<never> = {}) => runtime.runPromise(ladderEffect(body, hooks))
const score = (body: unknown) =>
  runtime.runPromise(
    Effect.flatMap(parseScoreRequest(body), (job) => Effect.flatMap(Scorer, (scorer) => scoreInputs(scorer, job)))
  )

/** Per-frame values as exact doubles (lossless precision). */
const perFrame = (result: Pick<ScoreResult, "frames">) => result.frames.map((frame) => frame.metrics)

describe("a ladder equals separate scores, frame by frame (golden fixtures)", () => {
  it.each(fixtures)("$name: the distorted and the reference itself as renditions", async (entry) => {
    const options = { ...rawOptions(entry), per_frame: true, features: ["psnr", "float_ssim"] }
    const result = await ladder({
      reference: entry.reference,
      renditions: [
        { label: "distorted", distorted: entry.distorted },
        { label: "itself", distorted: entry.reference }
      ],
      options
    })
    const alone = await score({ reference: entry.reference, distorted: entry.distorted, options })
    const itself = await score({ reference: entry.reference, distorted: entry.reference, options })
    expect(result.renditions.map((r) => r.label)).toEqual(["distorted", "itself"])
    expect(perFrame(result.renditions[0] as ScoreResult)).toEqual(perFrame(alone))
    expect(perFrame(result.renditions[1] as ScoreResult)).toEqual(perFrame(itself))
    expect(result.renditions[0]?.features).toEqual(alone.features)
    expect(result.renditions[0]?.pooled).toEqual(alone.pooled)
    expect(result.provenance).toMatchObject({
      reference_passes: 1,
      reference_decoders: 0,
      reference_frames: entry.frames
    })
  })
})

describe("bitrate and duration of uncompressed renditions", () => {
  it("a Y4M rendition's frame rate (its F field) gives them; raw YUV has none: 0, and off the hull", async () => {
    const entry = fixture("v01_testsrc2_420_8_x264")
    // The distorted frames again as Y4M at 30000/1001 fps (F30000:1001 in its header).
    const y4m = file("distorted-ntsc.y4m")
    // The raw input read at that rate (its -r), so every frame is kept as it is.
    const input = rawInput(entry, entry.distorted).map((arg, index, args) =>
      args[index - 1] === "-r" ? "30000/1001" : arg
    )
    ffmpegRun([...input, "-f", "yuv4mpegpipe", "-y", y4m])
    expect(readFileSync(y4m).subarray(0, 64).toString("latin1")).toContain(" F30000:1001 ")
    const result = await ladder({
      reference: entry.reference,
      renditions: [
        { label: "raw", distorted: entry.distorted },
        { label: "y4m", distorted: y4m }
      ],
      options: rawOptions(entry)
    })
    const [raw, framed] = result.renditions
    expect(raw?.summary).toMatchObject({ bitrate_bps: 0, duration_s: 0, on_hull: false })
    const duration = entry.frames / (30000 / 1001)
    expect(framed?.summary.duration_s).toBeCloseTo(duration, 9)
    expect(framed?.summary.bitrate_bps).toBeCloseTo((statSync(y4m).size * 8) / duration, 3)
    expect(framed?.summary.on_hull).toBe(true)
  })
})

describe("a ladder of 4 renditions of other sizes and codecs, made by ffmpeg", () => {
  const entry = fixture("v01_testsrc2_420_8_x264")
  const pix = ffmpegPixelFormatOf(entry)
  const make = (name: string, args: ReadonlyArray<string>) => {
    ffmpegRun([...rawInput(entry, entry.reference), ...args, "-y", file(name)])
    return file(name)
  }
  const reference = () => make("reference.mkv", ["-c:v", "ffv1", "-pix_fmt", pix])
  const renditions = () => [
    { label: "320p-h264", distorted: make("r1.mp4", ["-c:v", "libx264", "-crf", "30", "-pix_fmt", pix]) },
    {
      label: "160p-hevc",
      distorted: make("r2.mkv", [
        "-vf",
        "scale=160:120",
        "-c:v",
        "libx265",
        "-crf",
        "28",
        "-pix_fmt",
        pix,
        "-x265-params",
        "log-level=error"
      ])
    },
    {
      label: "240p-mpeg4",
      distorted: make("r3.avi", ["-vf", "scale=256:192", "-c:v", "mpeg4", "-q:v", "8", "-pix_fmt", pix])
    },
    {
      label: "120p-vp9",
      distorted: make("r4.webm", ["-vf", "scale=160:120", "-c:v", "libvpx-vp9", "-b:v", "100k", "-pix_fmt", pix]),
      options: { scale: "lanczos" }
    }
  ]

  it("per rendition exactly the per-frame values of 4 separate scores; one pass over the reference", async () => {
    const ref = reference()
    const rungs = renditions()
    const options = { per_frame: true, features: ["psnr"], threads: 2 }
    const progress: Array<number> = []
    const result = await ladder(
      { reference: ref, renditions: rungs, options },
      { onRenditionProgress: (index, frames) => Effect.sync(() => index === 3 && progress.push(frames)) }
    )
    expect(result.renditions).toHaveLength(4)
    for (const [index, rung] of rungs.entries()) {
      const alone = await score({
        reference: ref,
        distorted: rung.distorted,
        options: { ...options, ...(rung.options ?? {}) }
      })
      const got = result.renditions[index]
      expect(got?.label).toBe(rung.label)
      expect(perFrame(got as ScoreResult)).toEqual(perFrame(alone))
      expect(got?.score).toBe(alone.score)
      expect(got?.provenance.scaling).toBe(alone.provenance.scaling)
      expect(got?.provenance.distorted_input).toEqual(alone.provenance.distorted_input)
    }
    expect(progress.at(-1)).toBe(entry.frames)
    expect(result.provenance).toMatchObject({
      reference_passes: 1,
      reference_decoders: 1,
      reference_frames: entry.frames,
      shared: ["reference decode", "integer_vif", "integer_adm", "integer_motion"]
    })
    const [h264, hevc, mpeg4, vp9] = result.renditions.map((r) => r.summary)
    expect([h264?.codec, hevc?.codec, mpeg4?.codec, vp9?.codec]).toEqual(["h264", "hevc", "mpeg4", "vp9"])
    expect([h264?.width, hevc?.width, mpeg4?.width, vp9?.width]).toEqual([320, 160, 256, 160])
    expect([h264?.height, hevc?.height, mpeg4?.height, vp9?.height]).toEqual([240, 120, 192, 120])
    for (const summary of result.renditions.map((r) => r.summary)) {
      expect(summary.duration_s).toBeCloseTo(entry.frames / 25, 1)
      expect(summary.bitrate_bps).toBeGreaterThan(0)
      expect(summary.worst_frames).toHaveLength(10)
      expect(summary.p1).toBe(summary.worst_frames[0]?.score)
      expect(summary.p5).toBe(summary.worst_frames[1]?.score) // nearest rank: ceil(0.05 x 30) = 2
    }
    expect(result.renditions.some((r) => r.summary.on_hull)).toBe(true)
  })

  it("per_frame unset: no frames in the answer, the summary is still there", async () => {
    const result = await ladder({
      reference: entry.reference,
      renditions: [{ label: "a", distorted: entry.distorted }],
      options: rawOptions(entry)
    })
    expect(result.renditions[0]?.frames).toEqual([])
    expect(result.renditions[0]?.summary.worst_frames).toHaveLength(10)
    expect(result.renditions[0]?.summary.codec).toBe("rawvideo")
  })

  it("every rendition's path passes the guard; a refused one fails the ladder", async () => {
    const seen: Array<string> = []
    const guard: InputGuard<UnreadableInput> = {
      ...unguarded,
      beforeOpen: (path) =>
        Effect.suspend(() => {
          seen.push(path)
          return path.endsWith("forbidden.yuv")
            ? Effect.fail(new UnreadableInput({ message: `${path}: outside the roots` }))
            : Effect.void
        })
    }
    const exit = await runtime.runPromiseExit(
      Effect.flatMap(
        parseLadderRequest({
          reference: entry.reference,
          renditions: [
            { label: "a", distorted: entry.distorted },
            { label: "b", distorted: "/tmp/forbidden.yuv" }
          ],
          options: rawOptions(entry)
        }),
        (job) => Effect.flatMap(Scorer, (scorer) => scoreLadderInputs(scorer, job, { guard }))
      )
    )
    expect(Exit.isFailure(exit)).toBe(true)
    expect(seen).toEqual([entry.reference, entry.distorted, "/tmp/forbidden.yuv"])
  })

  it("one decoder process serves the reference; an interrupted ladder leaves no ffmpeg behind", async () => {
    const long = (name: string, width: number, height: number) =>
      writeClip(file(name), { width, height, frames: 400, codec: "libx264", preset: "ultrafast" })
    const [ref, a, b, c] = await Promise.all([
      long("long-ref.mp4", 640, 360),
      long("long-a.mp4", 320, 180),
      long("long-b.mp4", 480, 270),
      long("long-c.mp4", 640, 360)
    ])
    const rungs = [
      { label: "a", distorted: a },
      { label: "b", distorted: b },
      { label: "c", distorted: c }
    ]
    const fiber = runtime.runFork(ladderEffect({ reference: ref, renditions: rungs, options: { threads: 1 } }))
    for (let i = 0; i < 500 && childrenNamed(process.pid, "ffmpeg").length < 4; i++) await Bun.sleep(10)
    // The reference and each of the 3 renditions: 4 decoders, not 6 (a reference per pair).
    await Bun.sleep(200)
    expect(childrenNamed(process.pid, "ffmpeg").length).toBe(4)
    const exit = await runtime.runPromise(Fiber.interrupt(fiber))
    expect(Exit.isInterrupted(exit)).toBe(true)
    expect(childrenNamed(process.pid, "ffmpeg")).toEqual([])
  })
})
