/**
 * Segments of encoded inputs (issue 30) with the machine's ffmpeg: a segment's node seeks to the
 * keyframe before its context frame and starts at the right frame by presentation time, so the
 * concatenated segments equal one pass bit for bit, for H.264 with B-frames in mp4 (an edit list
 * shifts its times), HEVC with open GOPs and B-frames, and MPEG-2 with open GOPs in MPEG-TS (no
 * keyframe index: seeking a GOP earlier and dropping by time); and a plan counts the title's frames.
 * After a seek the decoder logs its first frame's time, and a first frame that is not the planned
 * one is refused. A segment's thumbnails seek the same way: byte for byte a decode from the start's.
 */
import { ConfigProvider, Effect, Layer, ManagedRuntime } from "effect"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { ffmpegRunAsync, rawClipInput, writeClip } from "../../../local/clip.ts"
import { modelDirEnv } from "../../../local/executables.ts"
import { scratchDir } from "../../../test/support/media.ts"
import { type FrameScore, mergeSegmentResults, parseScoreRequest, type ScoreJob, Scorer } from "../../scorer/index.ts"
import { closeSync, openSync } from "node:fs"
import { headerProbeLimits } from "../decoder-memory.ts"
import { Ffmpeg } from "../ffmpeg.ts"
import { decoderVerdict, type Landing } from "../frames.ts"
import { countTitleFrames, openAndProbe, scoreInputs, sidePictures } from "../score.ts"

const runtime = ManagedRuntime.make(
  Layer.merge(Scorer.Default, Ffmpeg.Default).pipe(
    Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(modelDirEnv)))))
  )
)
const scratch = scratchDir("svc-segments-encoded-")
afterAll(async () => {
  await runtime.dispose()
  scratch.remove()
})

const file = (name: string) => join(scratch.dir, name)
const frames = 96
const size = { width: 320, height: 240 }

await writeClip(file("ref.yuv"), { ...size, frames, rate: 24, pixelFormat: "yuv420p", format: "rawvideo" })
const rawIn = rawClipInput({ ...size, rate: 24 }, file("ref.yuv"))
const encodings = {
  "H.264 with B-frames, a keyframe every 12, mp4": [
    "-c:v",
    "libx264",
    "-preset",
    "fast",
    "-bf",
    "3",
    "-g",
    "12",
    "-keyint_min",
    "12",
    "-sc_threshold",
    "0",
    "-crf",
    "30",
    file("dis.h264.mp4")
  ],
  "HEVC with open GOPs and B-frames, mkv": [
    "-c:v",
    "libx265",
    "-preset",
    "fast",
    "-x265-params",
    "keyint=24:min-keyint=24:open-gop=1:bframes=4:scenecut=0:log-level=error",
    "-crf",
    "30",
    file("dis.hevc.mkv")
  ],
  // No keyframe index: a seek by byte position, so the node seeks a GOP earlier (open GOPs).
  "MPEG-2 with B-frames, a keyframe every 12, mpegts": [
    "-c:v",
    "mpeg2video",
    "-bf",
    "2",
    "-g",
    "12",
    "-q:v",
    "6",
    file("dis.mpeg2.ts")
  ]
} as const
/** Where segments start: every 20 frames (mid-GOP), and for the .ts GOP boundaries too (24, 36, 60). */
const startsOf = (path: string) => (path.endsWith(".ts") ? [0, 20, 24, 36, 60, 80] : [0, 20, 40, 60, 80])
await Promise.all(
  Object.values(encodings).map((args) => ffmpegRunAsync([...rawIn, ...args.slice(0, -1), "-y", args.at(-1) ?? ""]))
)

const jobOf = (distorted: string): Promise<ScoreJob> =>
  Effect.runPromise(
    parseScoreRequest({
      reference: file("ref.yuv"),
      distorted,
      options: { ...size, per_frame: true, features: ["psnr"], shots: true }
    })
  )

const score = (job: ScoreJob) => runtime.runPromise(Effect.flatMap(Scorer, (scorer) => scoreInputs(scorer, job)))

/** Each frame's values as their bits (a segment's cut measure, which the merge removes, left out). */
const bits = (list: ReadonlyArray<FrameScore>) =>
  list.map((frame) => ({
    frame: frame.frame,
    metrics: Object.fromEntries(
      Object.entries(frame.metrics).flatMap(([name, value]) =>
        name === "shot_cut" ? [] : [[name, Buffer.from(Float64Array.of(value).buffer).toString("hex")]]
      )
    )
  }))

describe("segments of encoded inputs", () => {
  it.each(Object.entries(encodings))(
    "%s: seeking segments concatenate to the one pass, bit for bit, thumbnails included",
    async (_label, args) => {
      const whole = await jobOf(args.at(-1) ?? "")
      const counted = await runtime.runPromise(Effect.flatMap(Scorer, (scorer) => countTitleFrames(scorer, whole)))
      expect(counted).toBe(frames)
      const onePass = await score(whole)
      expect(onePass.frames).toHaveLength(frames)
      // Segments start mid-GOP (keyframes every 12 or 24 frames) and at GOP boundaries.
      const starts = startsOf(whole.distorted)
      const cuts = starts.map((first, k) => {
        const next = starts[k + 1] ?? frames
        return { first, frames: next - first, last: next === frames }
      })
      const pieces = await Promise.all(cuts.map((segment) => score({ ...whole, segment })))
      expect(bits(pieces.flatMap((piece) => piece.frames))).toEqual(bits(onePass.frames))
      // Each segment's thumbnails (its candidates for the worst shots' frames, decoded from the
      // seek point of the first one) are those of a decode from the start, byte for byte; merged,
      // they are the one pass's.
      const rendered = pieces.flatMap((piece) => piece.thumbnails ?? [])
      expect(rendered.length).toBeGreaterThanOrEqual(cuts.length)
      const fromStart = await runtime.runPromise(
        Effect.scoped(
          Effect.gen(function* () {
            const side = (path: string) => openAndProbe(path, true, {})
            return yield* sidePictures(
              whole,
              { ...size, pixelFormat: 420, bitdepth: 8 },
              rendered.map((picture) => picture.frame),
              [
                { side: yield* side(file("ref.yuv")), skip: 0, isDistorted: false },
                { side: yield* side(whole.distorted), skip: 0, isDistorted: true }
              ],
              undefined
            )
          })
        )
      )
      expect(rendered).toEqual(fromStart)
      const merged = mergeSegmentResults(pieces, { precision: whole.precision, perFrame: true, shots: whole.shots })
      expect(onePass.thumbnails?.length).toBeGreaterThan(0)
      expect(merged?.thumbnails).toEqual(onePass.thumbnails)
    },
    300_000
  )
})

describe("the first frame after a seek", () => {
  /** Decodes 5 frames of the H.264 file from the seek point of frame `seekFrame`, judged against `landing`. */
  const decodeFrom = (seekFrame: number, landingFrame: number) =>
    runtime.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const ffmpeg = yield* Ffmpeg
          const path = file("dis.h264.mp4")
          const fd = openSync(path, "r")
          const out = openSync(file(`landing-${seekFrame}-${landingFrame}.yuv`), "w")
          yield* Effect.addFinalizer(() =>
            Effect.sync(() => {
              closeSync(fd)
              closeSync(out)
            })
          )
          const { times = [], startSeconds } = yield* ffmpeg.frameTimes(fd, headerProbeLimits)
          const sorted = [...times].sort((a, b) => a - b)
          const time = (frame: number) => (sorted[frame] ?? Number.NaN) - startSeconds
          const seekSeconds = (time(seekFrame - 1) + time(seekFrame)) / 2
          // What the plan expects of frame `landingFrame` after that seek (as the node computes it).
          const landing: Landing = {
            frame: landingFrame,
            afterSeek: time(landingFrame) - seekSeconds,
            tolerance: (time(landingFrame) - time(landingFrame - 1)) / 2
          }
          const child = yield* ffmpeg.decode(
            fd,
            {
              ...size,
              pixelFormat: "yuv420p",
              scale: "bicubic",
              source: { ...size, hsub: 1, vsub: 1 },
              shapeChanges: "list"
            },
            out,
            { addressSpace: 2 ** 32, cpuSeconds: 60, threads: 1, maxFrames: 1000 },
            { seekSeconds, frames: 5 }
          )
          yield* Effect.promise(() => Promise.all([child.exited, child.stderrDone]))
          const verdict = decoderVerdict(
            [
              {
                path,
                child: () => child,
                changed: undefined,
                frameAt: () => Effect.succeed(0),
                landing,
                skip: 0,
                frames: undefined
              }
            ],
            size.width * size.height * 1.5
          )
          return {
            first: child.firstFrameSeconds(),
            landing,
            outcome: yield* Effect.either(verdict([0], undefined, 5))
          }
        })
      )
    )

  it("logs the first frame's time: the planned frame passes", async () => {
    const { first, landing, outcome } = await decodeFrom(41, 41)
    expect(first).toBeCloseTo(landing.afterSeek, 4)
    expect(outcome._tag).toBe("Right")
  })

  it("a first frame that is not the planned one (a frame early) is refused, naming both times", async () => {
    const { first, outcome } = await decodeFrom(41, 42)
    expect(first).toBeTypeOf("number")
    expect(outcome._tag).toBe("Left")
    if (outcome._tag === "Left")
      expect(outcome.left.message).toMatch(
        /dis\.h264\.mp4: after seeking to frame 42 the decoder's first frame is 0\.0\d+ s after the seek point, not 0\.06\d+ s: it is another frame, so the segment is not scored$/
      )
  })
})
