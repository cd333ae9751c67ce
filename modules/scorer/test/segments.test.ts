/**
 * Segments (ABI minor 12): a title scored as segments, each reading one reference context frame
 * on each side, gives per-frame values that, concatenated in segment order, are the one pass's
 * bit for bit (motion, motion2, motion3 and the models' scores), with subsampling and frame
 * skips following the title's frame index; for file jobs and fed streams alike.
 */
import { Effect, Stream } from "effect"
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { ladderResult } from "../../../test/support/job-store/support.ts"
import { mergeLadderSegments } from "../ladder-merge.ts"
import { mergeSegmentResults } from "../merge.ts"
import { parsePrecision } from "../precision.ts"
import { parseScoreRequest, type ScoreJob } from "../request.ts"
import { scoreFiles } from "../../inputs/score.ts"
import { type FrameScore, Scorer, type ScoreResult, segmentReadStart } from "../index.ts"
import { scorerRuntime } from "./runtime.ts"

const width = 224
const height = 216
const titleFrames = 37

/**
 * A raw 4:2:0 pair whose picture moves by a different step every frame (so every motion value
 * differs) and whose distorted side is the reference with deterministic noise.
 */
const writePair = (dir: string, cutsAt: ReadonlyArray<number> = []): { reference: string; distorted: string } => {
  const name = cutsAt.length ? `cut${cutsAt.join("-")}` : ""
  const reference = join(dir, `ref${name}.yuv`)
  const distorted = join(dir, `dis${name}.yuv`)
  const ref = openSync(reference, "w")
  const dis = openSync(distorted, "w")
  let state = 12345
  const rand = () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0
    return state >>> 27 // 0..31
  }
  let offset = 0
  for (let f = 0; f < titleFrames; f++) {
    offset += 1 + ((f * 7) % 5)
    // A cut moves the picture to another brightness range: scenes 0, 1, 2 ... cycle through three.
    const scene = cutsAt.filter((at) => at <= f).length % 3
    const [base, span] = [
      [40, 120],
      [4, 50],
      [170, 60]
    ][scene] as [number, number]
    const luma = new Uint8Array(width * height)
    for (let y = 0; y < height; y++)
      for (let x = 0; x < width; x++) {
        const u = x + offset
        luma[y * width + x] = (base + ((u * 3 + y * 5) % span) + (((u >> 4) + (y >> 4)) & 1) * (span >> 1)) & 0xff
      }
    const chroma = new Uint8Array((width / 2) * (height / 2) * 2).fill(128)
    writeSync(ref, luma)
    writeSync(ref, chroma)
    writeSync(
      dis,
      luma.map((v) => Math.max(0, Math.min(255, v + rand() - 16)))
    )
    writeSync(dis, chroma)
  }
  closeSync(ref)
  closeSync(dis)
  return { reference, distorted }
}

const dir = mkdtempSync(join(tmpdir(), "svc-segments-"))
const pair = writePair(dir)
const runtime = scorerRuntime()
afterAll(async () => {
  await runtime.dispose()
  rmSync(dir, { recursive: true, force: true })
})

const jobOf = (options: Record<string, unknown>, model = "vmaf_v0.6.1"): Promise<ScoreJob> =>
  Effect.runPromise(
    parseScoreRequest({
      ...pair,
      model,
      options: { width, height, per_frame: true, features: ["float_motion", "psnr"], ...options }
    })
  )

const scoreFile = (job: ScoreJob): Promise<ScoreResult> =>
  runtime.runPromise(Effect.flatMap(Scorer, (scorer) => scoreFiles(scorer, job)))

/** The same job as a fed stream of raw sides (the path encoded inputs take). */
const scoreFed = (job: ScoreJob): Promise<ReadonlyArray<FrameScore>> =>
  runtime.runPromise(
    Effect.scoped(
      Effect.gen(function* () {
        const scorer = yield* Scorer
        const ref = yield* Effect.acquireRelease(
          Effect.sync(() => openSync(job.reference, "r")),
          (fd) => Effect.sync(() => closeSync(fd))
        )
        const dis = yield* Effect.acquireRelease(
          Effect.sync(() => openSync(job.distorted, "r")),
          (fd) => Effect.sync(() => closeSync(fd))
        )
        const start = segmentReadStart(job)
        const frames: Array<FrameScore> = []
        yield* scorer
          .scoreFed(
            { ...job, frameSkipRef: 0, frameSkipDist: 0 },
            {
              sides: [
                { fd: ref, kind: "raw", name: job.reference, skip: job.frameSkipRef + start },
                { fd: dis, kind: "raw", name: job.distorted, skip: job.frameSkipDist + start }
              ],
              verdict: () => Effect.void
            }
          )
          .pipe(
            Stream.runForEach((event) =>
              Effect.sync(() => {
                if (event._tag === "Frame") frames.push(event.frame)
              })
            )
          )
        return frames
      })
    )
  )

/** Segment bounds of a title of n frames cut every `size` frames. */
const cuts = (n: number, size: number) =>
  Array.from({ length: Math.ceil(n / size) }, (_, k) => ({
    first: k * size,
    frames: Math.min(size, n - k * size),
    last: (k + 1) * size >= n
  }))

const bits = (frames: ReadonlyArray<FrameScore>) =>
  frames.map((frame) => ({
    frame: frame.frame,
    metrics: Object.fromEntries(
      Object.entries(frame.metrics).map(([name, value]) => [
        name,
        Buffer.from(Float64Array.of(value).buffer).toString("hex")
      ])
    )
  }))

describe("options.segment_frames", () => {
  it.each([-1, 5, 23, 1_000_000_001, 2.5])("%s is refused naming the field, its value and the range", async (value) => {
    const refused = await Effect.runPromise(
      Effect.flip(parseScoreRequest({ ...pair, options: { width, height, segment_frames: value } }))
    )
    expect(refused.message).toBe(
      `options.segment_frames: ${value} is not 0 (one piece) or a whole number from 24 to 1000000000`
    )
  })

  it.each([0, 24, 80])("%s is accepted", async (value) => {
    const job = await Effect.runPromise(
      parseScoreRequest({ ...pair, options: { width, height, segment_frames: value } })
    )
    expect(job.segmentFrames).toBe(value)
  })
})

describe("segments of a title", () => {
  it.each([
    { label: "every frame, segments of 10", options: {}, size: 10, title: titleFrames },
    { label: "segments of 2 (each one frame of context on both sides)", options: {}, size: 2, title: titleFrames },
    {
      label: "subsample 3, segments of 8 (not multiples of 3)",
      options: { subsample: 3 },
      size: 8,
      title: titleFrames
    },
    {
      label: "frame skips 2 and 3, segments of 7",
      options: { frame_skip_ref: 2, frame_skip_dist: 2 },
      size: 7,
      title: titleFrames - 2
    }
  ])("$label: concatenated per-frame values are the one pass's, bit for bit", async ({ options, size, title }) => {
    const whole = await jobOf(options)
    const onePass = await scoreFile(whole)
    expect(onePass.frames.length).toBeGreaterThan(5)
    const pieces = await Promise.all(cuts(title, size).map((segment) => scoreFile({ ...whole, segment })))
    const merged = pieces.flatMap((piece) => piece.frames)
    expect(bits(merged)).toEqual(bits(onePass.frames))
    // Motion is not trivially zero at the cuts: the context frames were read.
    expect(
      merged.some((frame) => frame.frame % size === 0 && frame.frame > 0 && (frame.metrics.motion2 ?? 0) > 0)
    ).toBe(true)
  })

  it("motion3 of the vmaf_v1.0.16 model (capped) and its score are one pass's across cuts", async () => {
    const whole = await jobOf({}, "vmaf_v1.0.16_3d0h")
    const onePass = await scoreFile(whole)
    const pieces = await Promise.all(cuts(titleFrames, 9).map((segment) => scoreFile({ ...whole, segment })))
    expect(bits(pieces.flatMap((piece) => piece.frames))).toEqual(bits(onePass.frames))
  })

  it("a fed stream's segments (the encoded path) are the one pass's too", async () => {
    const whole = await jobOf({ subsample: 2 })
    const onePass = await scoreFile(whole)
    const pieces = await Promise.all(cuts(titleFrames, 11).map((segment) => scoreFed({ ...whole, segment })))
    expect(bits(pieces.flat())).toEqual(bits(onePass.frames))
  })

  it("the merge pools the concatenated frames exactly as one pass pools them (every pooling, every metric)", async () => {
    const whole = await jobOf({ subsample: 2 }, "vmaf_v1.0.16_3d0h")
    const onePass = await scoreFile(whole)
    const pieces = await Promise.all(cuts(titleFrames, 10).map((segment) => scoreFile({ ...whole, segment })))
    const merged = mergeSegmentResults(pieces, { precision: whole.precision, perFrame: true })
    const hex = (values: Readonly<Record<string, number>>) =>
      Object.fromEntries(
        Object.entries(values).map(([name, value]) => [
          name,
          Buffer.from(Float64Array.of(value).buffer).toString("hex")
        ])
      )
    expect(merged?.frame_count).toBe(onePass.frame_count)
    expect(hex(merged?.features ?? {})).toEqual(hex(onePass.features))
    expect(hex(merged?.pooled.min ?? {})).toEqual(hex(onePass.pooled.min))
    expect(hex(merged?.pooled.max ?? {})).toEqual(hex(onePass.pooled.max))
    expect(hex(merged?.pooled.harmonic_mean ?? {})).toEqual(hex(onePass.pooled.harmonic_mean))
    expect(merged?.score).toBe(onePass.score)
    // The job's precision applies after the merge, as it does to one pass.
    const legacy = mergeSegmentResults(pieces, { precision: parsePrecision("legacy"), perFrame: false })
    const legacyPass = await scoreFile({ ...whole, precision: parsePrecision("legacy"), perFrame: false })
    expect(legacy?.features).toEqual(legacyPass.features)
    expect(legacy?.frames).toEqual([])
  })

  it("scoring a segment alone, without its context, differs at its first frame (why context is read)", async () => {
    const whole = await jobOf({})
    const onePass = await scoreFile(whole)
    const alone = await scoreFile({ ...whole, frameSkipRef: 10, frameSkipDist: 10, frameCount: 10 })
    expect(alone.frames[0]?.metrics.motion2).toBe(0)
    expect(onePass.frames[10]?.metrics.motion2).toBeGreaterThan(0)
  })

  it("a segment past the title's end fails naming the frames read and expected", async () => {
    const whole = await jobOf({})
    await expect(scoreFile({ ...whole, segment: { first: 30, frames: 10, last: false } })).rejects.toThrow(
      /segment of 10 frames from frame 30: 8 frames read, 12 expected/
    )
  })
})

describe("shots, xpsnr and ssimulacra2 across segments (ABI minor 13: context frames before a segment)", () => {
  // Cuts at 10 (a segment boundary for segments of 10 and 5) and at 23.
  const cutPair = writePair(dir, [10, 23])
  const cutJob = (options: Record<string, unknown>): Promise<ScoreJob> =>
    Effect.runPromise(
      parseScoreRequest({
        ...cutPair,
        model: "vmaf_v0.6.1",
        options: { width, height, per_frame: true, shots: true, ...options }
      })
    )
  const mergedOf = async (whole: ScoreJob, size: number) => {
    const pieces = await Promise.all(cuts(titleFrames, size).map((segment) => scoreFile({ ...whole, segment })))
    return { pieces, merged: mergeSegmentResults(pieces, { ...whole, shots: whole.shots }) }
  }

  it.each([
    { label: "every frame, segments of 10 (a cut on a segment's first frame)", options: {}, size: 10 },
    { label: "every frame, segments of 5", options: {}, size: 5 },
    {
      label: "subsample 3, segments of 8 (cuts inside subsampled gaps)",
      options: { subsample: 3, shot_min_frames: 2 },
      size: 8
    }
  ])("$label: the merged shots are one pass's", async ({ options, size }) => {
    const whole = await cutJob(options)
    const onePass = await scoreFile(whole)
    expect(onePass.shots?.length).toBe(3)
    const { pieces, merged } = await mergedOf(whole, size)
    // A segment finds no shots itself: its frames carry the cut measure the merge reads.
    expect(pieces.every((piece) => piece.shots?.length === 0)).toBe(true)
    expect(pieces[1]?.frames[0]?.metrics.shot_cut).toBeTypeOf("number")
    expect(merged?.shots).toEqual(onePass.shots)
    expect(merged?.worst_shots).toEqual(onePass.worst_shots)
    // The measure is the merge's input, not a metric of the job.
    expect(Object.keys(merged?.frames[0]?.metrics ?? {})).toEqual(Object.keys(onePass.frames[0]?.metrics ?? {}))
    expect(bits(merged?.frames ?? [])).toEqual(bits(onePass.frames))
    // Each segment renders its candidates' thumbnails; the merge keeps one pass's, byte for byte.
    expect(pieces.some((piece) => (piece.thumbnails?.length ?? 0) > 0)).toBe(true)
    expect(onePass.thumbnails?.length).toBe(3)
    expect(merged?.thumbnails?.map((picture) => picture.frame)).toEqual(
      onePass.shots?.length ? onePass.worst_shots?.map((index) => onePass.shots?.[index]?.worst_frame) : []
    )
    expect(merged?.thumbnails).toEqual(onePass.thumbnails)
  })

  it("a segment just after a cut inside a subsampled gap measures that cut (it reads the gap's frames)", async () => {
    // Cut at 10, subsample 3: scored 9 and 12; frame 12's measure spans 10..12, so the segment
    // from 11 must read 9 and 10 (three frames before it), which SVC_OPT_SEGMENT_LEAD gives.
    const whole = await cutJob({ subsample: 3, shot_min_frames: 2 })
    const piece = await scoreFile({ ...whole, segment: { first: 11, frames: 13, last: false } })
    const onePass = await scoreFile(whole)
    const at12 = (frames: ReadonlyArray<FrameScore>) => frames.find((frame) => frame.frame === 12)
    expect(at12(piece.frames)?.metrics.shot_cut).toBeGreaterThan(0.3)
    expect(onePass.shots?.some((shot) => shot.first_frame === 4)).toBe(true) // scored index 4 = frame 12
  })

  it.each([
    { label: "xpsnr at 25 fps (first-order temporal term)", options: { features: ["xpsnr"] }, size: 7 },
    {
      label: "xpsnr at 50 fps (second order: two frames before)",
      options: { features: ["xpsnr"], frame_rate: 50 },
      size: 7
    },
    { label: "xpsnr at 50 fps, subsample 2", options: { features: ["xpsnr"], frame_rate: 50, subsample: 2 }, size: 9 },
    { label: "ssimulacra2", options: { features: ["ssimulacra2"] }, size: 12 }
  ])("$label: concatenated per-frame values and every pooling are one pass's, bit for bit", async ({
    options,
    size
  }) => {
    const whole = await jobOf(options)
    const onePass = await scoreFile(whole)
    const scored = await Promise.all(cuts(titleFrames, size).map((segment) => scoreFile({ ...whole, segment })))
    expect(bits(scored.flatMap((piece) => piece.frames))).toEqual(bits(onePass.frames))
    // A node's segment names its reference input (the inputs pipeline adds it; xpsnr's summary reads it).
    const reference_input = { container: "raw", codec: "rawvideo", width, height, pixel_format: "yuv420p" }
    const pieces = scored.map((piece) => ({ ...piece, provenance: { ...piece.provenance, reference_input } }))
    const merged = mergeSegmentResults(pieces, { precision: whole.precision, perFrame: true })
    expect(merged?.features).toEqual(onePass.features)
    expect(merged?.pooled).toEqual(onePass.pooled)
  })

  it("xpsnr at 50 fps with one frame of context (the old segment) differs at the segment's first frames", async () => {
    const whole = await jobOf({ features: ["xpsnr"], frame_rate: 50 })
    const onePass = await scoreFile(whole)
    // Frames 5.. read from 4 on: frame 5's second-order term lacks frame 3.
    const short = await scoreFile({ ...whole, frameSkipRef: 4, frameSkipDist: 4, frameCount: 0, segment: undefined })
    expect(short.frames[1]?.metrics.xpsnr_y).not.toBe(onePass.frames[5]?.metrics.xpsnr_y)
  })
})

describe("a ladder's segments merged (mergeLadderSegments)", () => {
  const output = { precision: parsePrecision("lossless"), perFrame: true }
  it("refuses segments that do not hold the same renditions, naming the segment", () => {
    const segment = (labels: ReadonlyArray<string>) => ladderResult(labels, 3)
    expect(() => mergeLadderSegments([segment(["low", "high"]), segment(["low", "high", "extra"])], output)).toThrow(
      "segment 1 holds 3 renditions, segment 0 holds 2"
    )
    expect(mergeLadderSegments([segment(["low", "high"]), segment(["low", "high"])], output)?.renditions).toHaveLength(
      2
    )
  })
})
