/**
 * `options.sync: "auto"` (issue 31) on clips made with the machine's ffmpeg (alignment-clips.ts):
 * encodes of one reference that start 7 frames late, carry 9 frames of black slate, end 15
 * frames early, drop 3 frames mid-clip, freeze 3 frames, or line up each report the starts,
 * frames, dropped and repeated frames they were made with, and score per frame within 1e-4 of
 * the reference tool on the hand-aligned pair (golden-alignment/encodes.json, recorded by
 * scripts/golden-alignment.ts). A raw YUV pair with frames inserted mid-clip scores as its hand
 * cut does, and so does one starting late (read by the file job with frame skips). Segments of
 * pairs scored with a given alignment (a segment job's plan) concatenate to the unsplit score bit
 * for bit. An encoded side within the sync window is decoded once for the search and the score
 * (its frames held): an encode with inserted frames, and an encoded reference, score bit for bit
 * as through two decodes per side (no room in the budget) and as streamed (a window one frame
 * short: alignment-stream-score.test.ts), the real decoders counted. With shots, the worst frames' pictures of a pair (frame skip, subsample) and of a
 * ladder rendition that starts late and drops a frame are those of the input frames they pair
 * (cut out by hand with ffmpeg). A ladder of encodes starting late, ending early and after a
 * slate reads the reference once and scores each rendition over its own overlap, bit for bit
 * as its own pair score (also with frame_cnt and subsample); renditions dropping different
 * reference frames are scored in one reference pass per group that agrees, each as its own pair
 * score (a ladder job's plan for segments refuses them, naming them); its HTML report draws each rendition on the ladder's frames. Through the compiled svc-server: the alignment in JSON and gRPC, an unrelated clip and
 * another frame rate answered with 400; svc's pair and ladder HTML reports draw the pairing
 * strips. The search itself is unit-tested on thumbnails.
 */
import { closeSync, openSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { ConfigProvider, Effect, Either, Layer, ManagedRuntime } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type RunningService, modelDirEnv, startService } from "../../../local/executables.ts"
import { ffmpegRun, scratchDir } from "../../../test/support/media.ts"
import { scoringClient } from "../../../test/e2e/server-support.ts"
import { svc } from "../../../test/e2e/svc-support.ts"
import { decodeStoredResult, encodeResult } from "../../jobs/model.ts"
import {
  type LadderRenditionResult,
  parseLadderRequest,
  parseScoreRequest,
  Scorer,
  type ScoreResult,
  withHull
} from "../../scorer/index.ts"
import { align, type SideThumbnails, thumbnailBytes } from "../alignment.ts"
import { Ffmpeg } from "../ffmpeg.ts"
import { alignLadder, type LadderHooks, scoreLadderInputs } from "../ladder.ts"
import { scoreInputs } from "../score.ts"
import { renderThumbnails } from "../thumbnails.ts"
import { busyAt as busyAtIndex, countedDecoders, frameBits } from "./held-support.ts"
import {
  clipSize,
  encodes,
  md5Of,
  writeEncode,
  writeOtherRate,
  writeReference,
  writeUnrelated
} from "./alignment-clips.ts"

interface Golden {
  readonly reference_md5: string
  readonly encodes: Readonly<Record<string, { readonly encode_md5: string; readonly vmaf: ReadonlyArray<number> }>>
}

const tolerance = 1e-4
const golden = JSON.parse(readFileSync(join(import.meta.dirname, "golden-alignment", "encodes.json"), "utf8")) as Golden

const runtime = ManagedRuntime.make(
  Layer.merge(Scorer.Default, Ffmpeg.Default).pipe(
    Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(modelDirEnv)))))
  )
)
const scratch = scratchDir("svc-alignment-")
afterAll(async () => {
  await runtime.dispose()
  scratch.remove()
})

const score = (body: unknown) =>
  runtime.runPromise(
    Effect.either(
      Effect.flatMap(parseScoreRequest(body), (job) => Effect.flatMap(Scorer, (scorer) => scoreInputs(scorer, job)))
    )
  )
const scored = async (body: unknown): Promise<ScoreResult> => {
  const result = await score(body)
  if (Either.isLeft(result)) throw new Error(`${result.left._tag}: ${result.left.message}`)
  return result.right
}

let reference = ""
const encoded = new Map<string, string>()
beforeAll(async () => {
  reference = await writeReference(scratch.dir)
  for (const encode of encodes) encoded.set(encode.name, writeEncode(scratch.dir, reference, encode))
}, 120_000)

describe("encodes of one reference, aligned automatically", () => {
  it("are the clips the golden was recorded on (same ffmpeg output)", () => {
    expect(md5Of(reference)).toBe(golden.reference_md5)
    for (const encode of encodes)
      expect(md5Of(encoded.get(encode.name) ?? ""), encode.name).toBe(golden.encodes[encode.name]?.encode_md5)
  })

  for (const encode of encodes) {
    it(`${encode.name}: reports its starts, frames, drops and freezes, and scores as the hand-aligned pair`, async () => {
      const result = await scored({
        reference,
        distorted: encoded.get(encode.name),
        options: { sync: "auto", per_frame: true }
      })
      const { truth } = encode
      expect(result.alignment).toMatchObject({
        reference_start: truth.reference_start,
        distorted_start: truth.distorted_start,
        frames: truth.reference.length,
        reference_frames_dropped: truth.dropped,
        distorted_frames_inserted: [],
        distorted_frames_repeated: truth.repeated,
        window: 120
      })
      expect(result.alignment?.confidence).toBeGreaterThan(0.5)
      // A job stores the result (and reads it back) with its alignment.
      const stored = decodeStoredResult(encodeResult(result))
      expect(Either.isRight(stored) && "alignment" in stored.right ? stored.right.alignment : undefined).toEqual(
        result.alignment
      )
      expect(result.alignment?.warning).toBeUndefined()
      const expected = golden.encodes[encode.name]?.vmaf ?? []
      expect(result.frame_count).toBe(expected.length)
      const ours = result.frames.map((frame) => frame.metrics.vmaf as number)
      expect(ours).toHaveLength(expected.length)
      for (const [k, value] of ours.entries())
        expect(Math.abs(value - (expected[k] as number)), `frame ${k}`).toBeLessThan(tolerance)
    }, 60_000)
  }

  it("frame_cnt and subsample count aligned pairs; frame skips apply first", async () => {
    const late = encoded.get("late7")
    const expected = golden.encodes.late7?.vmaf ?? []
    const result = await scored({
      reference,
      distorted: late,
      options: { sync: "auto", per_frame: true, frame_cnt: 40, subsample: 2, frame_skip_ref: 2 }
    })
    // Two reference frames skipped by hand: the search finds the remaining five.
    expect(result.alignment).toMatchObject({ reference_start: 5, distorted_start: 0, frames: 113 })
    expect(result.frames.map((frame) => frame.frame)).toEqual(Array.from({ length: 20 }, (_, k) => 2 * k))
    for (const frame of result.frames)
      expect(Math.abs((frame.metrics.vmaf as number) - (expected[frame.frame] as number))).toBeLessThan(tolerance)
  }, 60_000)
})

describe("one decode for the search and the score", () => {
  // The real decoders, counted: which way each side was read.
  const { runs: calls, runtime: counting } = countedDecoders()
  afterAll(() => counting.dispose())
  // Four black frames after frame 60 of the reference, encoded: 124 frames.
  let inserted = ""
  beforeAll(() => {
    inserted = writeEncode(scratch.dir, reference, {
      name: "inserted4",
      filter: `[0:v]split[a][b];[a]trim=end_frame=60[head];[b]trim=start_frame=60,setpts=PTS-STARTPTS[tail];color=black:size=${clipSize.width}x${clipSize.height}:rate=25,format=yuv420p,trim=end_frame=4[black];[head][black][tail]concat=n=3:v=1:a=0[out]`,
      truth: { reference_start: 0, distorted_start: 0, reference: [], distorted: [], dropped: [], repeated: [] }
    })
  })
  /** `busyAt`: the budget has no room for the score's admission of this index (it is busy then). */
  const countedScore = async (body: unknown, busyAt = -1) => {
    calls.searchDecodes = 0
    calls.scoringDecodes = 0
    calls.decodesOnce = 0
    const admitted: Array<number> = []
    const result = await counting.runPromise(
      Effect.flatMap(parseScoreRequest(body), (job) =>
        Effect.flatMap(Scorer, (scorer) => scoreInputs(scorer, job, { admitMemory: busyAtIndex(busyAt, admitted) }))
      )
    )
    return { result, admitted, calls: { ...calls } }
  }

  it("holds a clip within the window, leaves its inserted frames out, and scores bit for bit as two decodes", async () => {
    const distorted = inserted
    const options = { sync: "auto", per_frame: true, precision: "lossless" }
    const once = await countedScore({ reference, distorted, options: { ...options, sync_window: 124 } })
    expect(once.calls).toEqual({ searchDecodes: 0, scoringDecodes: 0, decodesOnce: 1 })
    expect(once.result.alignment).toMatchObject({
      reference_start: 0,
      distorted_start: 0,
      frames: 120,
      reference_frames_dropped: [],
      distorted_frames_inserted: [60, 61, 62, 63]
    })
    // The held frames and their thumbnails are admitted first (the reference, a Y4M file, holds
    // nothing): the most the container allows (124 declared, 2 more), 4:2:0 8-bit. Asked of the
    // first admission itself, not of the largest: the decoder's estimate is larger than both.
    const frameBytes = clipSize.width * clipSize.height * 1.5
    expect(once.admitted[0]).toBe(126 * (frameBytes + thumbnailBytes))
    // One frame more than the window: streamed (alignment-stream-score.test.ts); with no room
    // for that, searched by its own decode and scored by another.
    const streamed = await countedScore({ reference, distorted, options: { ...options, sync_window: 123 } })
    expect(streamed.calls).toEqual({ searchDecodes: 0, scoringDecodes: 0, decodesOnce: 1 })
    const twice = await countedScore({ reference, distorted, options: { ...options, sync_window: 123 } }, 0)
    expect(twice.calls).toEqual({ searchDecodes: 1, scoringDecodes: 1, decodesOnce: 0 })
    // No room for the held frames when the score starts: two decodes as well.
    const busy = await countedScore({ reference, distorted, options: { ...options, sync_window: 124 } }, 0)
    expect(busy.calls).toEqual({ searchDecodes: 1, scoringDecodes: 1, decodesOnce: 0 })
    expect(busy.admitted[0]).toBe(126 * (frameBytes + thumbnailBytes))
    // No room for the score while the frames are held (its last admission): they are given back,
    // and the pair is searched and scored by two decodes.
    const late = await countedScore(
      { reference, distorted, options: { ...options, sync_window: 124 } },
      once.admitted.length - 1
    )
    expect(late.calls).toEqual({ searchDecodes: 1, scoringDecodes: 1, decodesOnce: 1 })
    for (const other of [streamed, twice, busy, late]) {
      expect(other.result.alignment).toEqual({ ...once.result.alignment, window: other.result.alignment?.window })
      expect(other.result.frames).toEqual(once.result.frames)
      expect(other.result.score).toBe(once.result.score)
    }
    expect(once.result.frames).toHaveLength(120)
  }, 120_000)

  it("holds an encoded reference too: both sides decoded once, bit for bit as four decodes", async () => {
    // The aligned encode (120 frames) as the reference, the encode with 4 inserted frames (124) as the distorted.
    const body = (window: number) => ({
      reference: encoded.get("aligned"),
      distorted: inserted,
      options: { sync: "auto", per_frame: true, precision: "lossless", sync_window: window }
    })
    const once = await countedScore(body(124))
    expect(once.calls).toEqual({ searchDecodes: 0, scoringDecodes: 0, decodesOnce: 2 })
    expect(once.result.alignment).toMatchObject({ frames: 120, distorted_frames_inserted: [60, 61, 62, 63] })
    // A window shorter than both: streamed; with no room for that, four decodes.
    const streamed = await countedScore(body(119))
    expect(streamed.calls).toEqual({ searchDecodes: 0, scoringDecodes: 0, decodesOnce: 2 })
    expect(streamed.result.frames).toEqual(once.result.frames)
    const twice = await countedScore(body(119), 0)
    expect(twice.calls).toEqual({ searchDecodes: 2, scoringDecodes: 2, decodesOnce: 0 })
    expect(twice.result.alignment).toEqual({ ...once.result.alignment, window: 119 })
    expect(twice.result.frames).toEqual(once.result.frames)
  }, 120_000)
})

describe("segments of an aligned pair", () => {
  it("scored with the plan's alignment, pair ranges concatenate to the unsplit score bit for bit, across the cut", async () => {
    // Starts 5 frames late and leaves out reference frame 60 (pair 55): 114 pairs.
    const distorted = writeEncode(scratch.dir, reference, {
      name: "late5-drop60",
      filter: "[0:v]trim=start_frame=5,setpts=PTS-STARTPTS,select='not(eq(n\\,55))',setpts=N/25/TB[out]",
      truth: { reference_start: 5, distorted_start: 0, reference: [], distorted: [], dropped: [60], repeated: [] }
    })
    const job = await runtime.runPromise(
      parseScoreRequest({ reference, distorted, options: { sync: "auto", per_frame: true, precision: "lossless" } })
    )
    const run = (piece: typeof job) =>
      runtime.runPromise(Effect.flatMap(Scorer, (scorer) => scoreInputs(scorer, piece)))
    const whole = await run(job)
    const alignment = whole.alignment
    expect(alignment).toMatchObject({
      reference_start: 5,
      distorted_start: 0,
      frames: 114,
      reference_frames_dropped: [60]
    })
    if (alignment === undefined) return
    // Segments of pairs; the second ends on the cut, so the third's context frame is the
    // reference frame before it (59) and its first pair's motion crosses the cut, as unsplit; the
    // fourth starts past the cut (pair 70 is reference frame 76).
    const cuts = [
      { first: 0, frames: 30, last: false },
      { first: 30, frames: 25, last: false },
      { first: 55, frames: 15, last: false },
      { first: 70, frames: 44, last: true }
    ]
    const pieces = await Promise.all(cuts.map((segment) => run({ ...job, sync: undefined, alignment, segment })))
    expect(whole.frames).toHaveLength(114)
    expect(frameBits(pieces.flatMap((piece) => piece.frames))).toEqual(frameBits(whole.frames))
  }, 120_000)
})

describe("a ladder with sync", () => {
  const ladderOf = (renditions: ReadonlyArray<string>, options: object, hooks: LadderHooks<never> = {}) =>
    runtime.runPromise(
      Effect.either(
        Effect.flatMap(
          parseLadderRequest({
            reference,
            renditions: renditions.map((name) => ({ label: name, distorted: encoded.get(name) })),
            options: { sync: "auto", ...options }
          }),
          (job) => Effect.flatMap(Scorer, (scorer) => scoreLadderInputs(scorer, job, hooks))
        )
      )
    )

  /** Each pair score with sync auto, made once per rendition and options for this block's tests. */
  const pairScores = new Map<string, Promise<ScoreResult>>()
  const pairScore = (name: string, options: object) => {
    const key = `${name} ${JSON.stringify(options)}`
    const known = pairScores.get(key)
    if (known) return known
    const made = scored({ reference, distorted: encoded.get(name), options: { sync: "auto", ...options } })
    pairScores.set(key, made)
    return made
  }
  /** Every rendition is, bit for bit, its own pair score with sync auto. */
  const expectOwnPairScores = async (
    names: ReadonlyArray<string>,
    options: object,
    renditions: ReadonlyArray<LadderRenditionResult>
  ) => {
    for (const [index, name] of names.entries()) {
      const rendition = renditions[index]
      const pair = await pairScore(name, options)
      expect(rendition?.alignment, name).toEqual(pair.alignment)
      expect(rendition?.frame_count, name).toBe(pair.frame_count)
      expect(frameBits(rendition?.frames ?? []), name).toEqual(frameBits(pair.frames))
      expect(rendition?.pooled, name).toEqual(pair.pooled)
      expect(rendition?.score, name).toBe(pair.score)
      // Shots and their pictures from its own frames (its first frame starts a shot, as the pair's does).
      expect(rendition?.shots, name).toEqual(pair.shots)
      expect(rendition?.worst_shots, name).toEqual(pair.worst_shots)
      expect(rendition?.thumbnails, name).toEqual(pair.thumbnails)
      if ("shots" in options) expect(pair.thumbnails?.length, name).toBeGreaterThan(0)
      // Its summary is its own frames': the worst of them, scored as the pair scored them.
      const byFrame = new Map(pair.frames.map((frame) => [frame.frame, frame.metrics.vmaf]))
      for (const worst of rendition?.summary.worst_frames ?? []) expect(worst.score).toBe(byFrame.get(worst.frame))
      if (!("subsample" in options)) {
        // Every pair's first motion is 0 (a first frame's), within 1e-4 of the reference tool's hand-aligned pair.
        expect(rendition?.frames[0]?.metrics.integer_motion2, name).toBe(0)
        const expected = golden.encodes[name]?.vmaf ?? []
        expect(rendition?.frame_count, name).toBe(expected.length)
        for (const frame of rendition?.frames ?? [])
          expect(Math.abs((frame.metrics.vmaf as number) - (expected[frame.frame] as number))).toBeLessThan(tolerance)
      }
    }
  }
  const everyPair = { per_frame: true, precision: "lossless", shots: true }

  // One rendition 7 frames late, one ending 15 frames early, one after a 9-frame slate:
  // the ladder reads the reference once over frames 0..119, each rendition over its own pairs.
  it.each([
    {
      name: "every pair",
      names: ["late7", "early15", "slate9"],
      options: everyPair
    },
    {
      name: "frame_cnt and subsample counting each rendition's pairs",
      names: ["late7", "early15"],
      options: { per_frame: true, precision: "lossless", frame_cnt: 110, subsample: 3 }
    }
  ])("scores each rendition over its own overlap, as its own pair score bit for bit ($name)", async ({
    names,
    options
  }) => {
    const ladder = await ladderOf(names, options)
    if (Either.isLeft(ladder)) throw new Error(ladder.left.message)
    const { renditions, provenance } = ladder.right
    expect(provenance.reference_passes).toBe(1)
    // The earliest start to the latest end: reference frames 0..119, or 0..116 with frame_cnt (late7's 110 from 7).
    expect(provenance.reference_frames).toBe("subsample" in options ? 110 + 7 : 120)
    await expectOwnPairScores(names, options, renditions)
  }, 180_000)

  it("scores renditions that drop different reference frames where they overlap in one pass per group that agrees", async () => {
    // dropped3 leaves out reference frames 50-52, which late7 and early15 pair: late7 and
    // early15 share a pass, dropped3 has its own; the result is in request order, each
    // rendition its own pair score, the hull over all three.
    const names = ["late7", "dropped3", "early15"]
    const progress: Array<number> = []
    const renditionProgress = names.map((): Array<number> => [])
    const ladder = await ladderOf(names, everyPair, {
      onProgress: (frames) => Effect.sync(() => progress.push(frames)),
      onRenditionProgress: (index, frames) => Effect.sync(() => renditionProgress[index]?.push(frames))
    })
    if (Either.isLeft(ladder)) throw new Error(ladder.left.message)
    const { renditions, provenance } = ladder.right
    expect(renditions.map((rendition) => rendition.label)).toEqual(names)
    expect(renditions[1]?.alignment?.reference_frames_dropped).toEqual([50, 51, 52])
    expect(provenance.reference_passes).toBe(2)
    // The reference frames any rendition pairs: 0..119, each counted once.
    expect(provenance.reference_frames).toBe(120)
    // Progress over both passes never goes back, and ends at the reference frames read.
    expect(progress.length).toBeGreaterThan(1)
    expect(progress).toEqual([...progress].sort((a, b) => a - b))
    expect(progress[progress.length - 1]).toBe(120)
    // Each rendition's reads, reported by its own pass, up to its own frames.
    for (const [index, reads] of renditionProgress.entries()) {
      expect(reads, names[index]).toEqual([...reads].sort((a, b) => a - b))
      expect(reads[reads.length - 1], names[index]).toBe(renditions[index]?.frame_count)
    }
    await expectOwnPairScores(names, everyPair, renditions)
    const hull = withHull(renditions)
    expect(renditions.map((rendition) => rendition.summary.on_hull)).toEqual(hull.map((entry) => entry.summary.on_hull))
  }, 180_000)

  it("refuses such renditions in a ladder job's plan for segments, naming them and the way out", async () => {
    const plan = await runtime.runPromise(
      Effect.either(
        Effect.flatMap(
          parseLadderRequest({
            reference,
            renditions: ["late7", "dropped3"].map((name) => ({ label: name, distorted: encoded.get(name) })),
            options: { sync: "auto" }
          }),
          (job) => alignLadder(job)
        )
      )
    )
    expect(Either.isLeft(plan) && plan.left.message).toMatch(
      /^options\.segment_frames: rendition dropped3 drops reference frame 50, which rendition late7 pairs \(options\.sync "auto"\); a ladder job in segments reads the reference once.*options\.segment_frames 0/
    )
  }, 60_000)
})

describe("worst-frame pictures of an aligned pair", () => {
  // Three black frames, then the reference from frame 4 without frame 60: each scored frame's
  // pictures are those of the input frames its pair reads, past the cut too.
  const slateLateDrop = {
    name: "slate3-late4-drop60",
    filter: `color=black:size=${clipSize.width}x${clipSize.height}:rate=25,format=yuv420p,trim=end_frame=3[slate];[0:v]trim=start_frame=4,setpts=PTS-STARTPTS,select='not(eq(n\\,56))',setpts=N/25/TB[cut];[slate][cut]concat=n=2:v=1:a=0[out]`,
    truth: { reference_start: 4, distorted_start: 3, reference: [], distorted: [], dropped: [60], repeated: [] }
  }
  const geometry = { ...clipSize, pixelFormat: 420, bitdepth: 8 } as const
  /** The pairs' frames cut out by hand (ffmpeg's filters, not the alignment's code), as Y4M. */
  const handCut = (input: string, name: string, select: string) => {
    const path = join(scratch.dir, name)
    ffmpegRun(["-i", input, "-vf", `select='${select}',setpts=N/25/TB`, "-pix_fmt", "yuv420p", "-y", path])
    return path
  }
  /** The thumbnails of scored frames `frames` read straight from the hand-cut files. */
  const handCutPictures = async (references: string, distorted: string, subsample: number, frames: number[]) => {
    const reference = openSync(references, "r")
    const distortedFd = openSync(distorted, "r")
    try {
      return await Effect.runPromise(
        renderThumbnails(
          { reference: { fd: reference, y4m: true, skip: 0 }, distorted: { fd: distortedFd, y4m: true, skip: 0 } },
          geometry,
          subsample,
          frames
        )
      )
    } finally {
      closeSync(reference)
      closeSync(distortedFd)
    }
  }
  let distorted = ""
  let referenceCut = ""
  let distortedCut = ""
  beforeAll(() => {
    distorted = writeEncode(scratch.dir, reference, slateLateDrop)
    referenceCut = handCut(reference, "reference-cut.y4m", "gte(n\\,4)*not(eq(n\\,60))")
    distortedCut = handCut(distorted, "distorted-cut.y4m", "gte(n\\,3)")
  }, 60_000)
  const drawnPastTheCut = (frames: ReadonlyArray<number>, subsample: number) =>
    frames.some((frame) => 4 + frame * subsample >= 60)

  it("pair: frame_skip_dist first, subsample counting pairs, the pictures are the paired input frames", async () => {
    const result = await scored({
      reference,
      distorted,
      options: { sync: "auto", shots: true, subsample: 2, frame_skip_dist: 1 }
    })
    // One distorted frame skipped by hand: the search finds the two slate frames left.
    expect(result.alignment).toMatchObject({
      reference_start: 4,
      distorted_start: 2,
      frames: 115,
      reference_frames_dropped: [60],
      distorted_frames_inserted: []
    })
    const pictures = result.thumbnails ?? []
    const frames = pictures.map((picture) => picture.frame)
    expect(drawnPastTheCut(frames, 2)).toBe(true)
    expect(pictures).toEqual(await handCutPictures(referenceCut, distortedCut, 2, frames))
  }, 60_000)

  it("ladder: each rendition's pictures are the input frames its own alignment pairs", async () => {
    const ladder = await runtime.runPromise(
      Effect.flatMap(
        parseLadderRequest({
          reference,
          renditions: [{ label: "cut", distorted }],
          options: { sync: "auto", shots: true }
        }),
        (job) => Effect.flatMap(Scorer, (scorer) => scoreLadderInputs(scorer, job))
      )
    )
    const [rendition] = ladder.renditions
    expect(rendition?.alignment).toMatchObject({
      reference_start: 4,
      distorted_start: 3,
      reference_frames_dropped: [60]
    })
    const pictures = rendition?.thumbnails ?? []
    const frames = pictures.map((picture) => picture.frame)
    expect(drawnPastTheCut(frames, 1)).toBe(true)
    expect(pictures).toEqual(await handCutPictures(referenceCut, distortedCut, 1, frames))
  }, 60_000)
})

describe("raw YUV pairs aligned", () => {
  const geometry = { width: clipSize.width, height: clipSize.height, pixel_format: "420", bitdepth: 8 }
  const raw = (name: string, input: string, filter: string) => {
    const path = join(scratch.dir, name)
    ffmpegRun([
      "-i",
      input,
      "-filter_complex",
      filter,
      "-map",
      "[out]",
      "-f",
      "rawvideo",
      "-pix_fmt",
      "yuv420p",
      "-y",
      path
    ])
    return path
  }
  let referenceYuv = ""
  const referenceRaw = () => {
    referenceYuv ||= raw("ref.yuv", reference, "[0:v]null[out]")
    return referenceYuv
  }

  it("leaves the inserted frames out and scores exactly as its hand cut", async () => {
    const refRaw = referenceRaw()
    // Four black frames after frame 60 of the decoded encode, and the hand cut without them.
    const distorted = raw(
      "inserted.yuv",
      encoded.get("aligned") ?? "",
      `[0:v]split[a][b];[a]trim=end_frame=60[head];[b]trim=start_frame=60,setpts=PTS-STARTPTS[tail];color=black:size=${clipSize.width}x${clipSize.height}:rate=25,format=yuv420p,trim=end_frame=4[black];[head][black][tail]concat=n=3:v=1:a=0[out]`
    )
    const handCut = raw("hand-cut.yuv", encoded.get("aligned") ?? "", "[0:v]null[out]")
    const aligned = await scored({
      reference: refRaw,
      distorted,
      options: { ...geometry, sync: "auto", per_frame: true }
    })
    const byHand = await scored({ reference: refRaw, distorted: handCut, options: { ...geometry, per_frame: true } })
    expect(aligned.alignment).toMatchObject({
      reference_start: 0,
      distorted_start: 0,
      frames: 120,
      reference_frames_dropped: [],
      distorted_frames_inserted: [60, 61, 62, 63]
    })
    expect(aligned.frames).toEqual(byHand.frames)
    expect(aligned.score).toBe(byHand.score)
  }, 60_000)

  // An alignment that only moves the starts is read by the file job with frame skips, not fed.
  it("starting late, scores exactly as its hand cut with frame_skip_ref", async () => {
    const refRaw = referenceRaw()
    const late = raw("late.yuv", encoded.get("late7") ?? "", "[0:v]null[out]")
    const aligned = await scored({
      reference: refRaw,
      distorted: late,
      options: { ...geometry, sync: "auto", per_frame: true }
    })
    const byHand = await scored({
      reference: refRaw,
      distorted: late,
      options: { ...geometry, frame_skip_ref: 7, per_frame: true }
    })
    expect(aligned.alignment).toMatchObject({
      reference_start: 7,
      distorted_start: 0,
      frames: 113,
      reference_frames_dropped: [],
      distorted_frames_inserted: []
    })
    expect(aligned.frames).toHaveLength(113)
    expect(aligned.frames).toEqual(byHand.frames)
    expect(aligned.score).toBe(byHand.score)
  }, 60_000)
})

describe("svc-server with sync", () => {
  let server: RunningService
  let client: ReturnType<typeof scoringClient>
  let unrelated = ""
  let otherRate = ""
  beforeAll(async () => {
    unrelated = await writeUnrelated(scratch.dir)
    otherRate = writeOtherRate(scratch.dir, reference)
    server = await startService("svc-server", { listeners: ["http", "grpc"] })
    client = scoringClient(server.grpc ?? "")
  }, 120_000)
  afterAll(async () => {
    client.close()
    expect(await server.stop()).toBe(0)
  })
  const post = async (body: unknown) => {
    const response = await fetch(`${server.http}/v1/score`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body)
    })
    return { status: response.status, body: (await response.json()) as Record<string, unknown> }
  }

  it("reports the alignment in JSON and over gRPC alike", async () => {
    const body = { reference, distorted: encoded.get("slate9"), options: { sync: "auto", sync_window: 30 } }
    const overHttp = await post(body)
    expect(overHttp.status, JSON.stringify(overHttp.body)).toBe(200)
    expect(overHttp.body.alignment).toMatchObject({ reference_start: 0, distorted_start: 9, frames: 120, window: 30 })
    const overGrpc = await client.score(body)
    expect(overGrpc.score).toBe(overHttp.body.score)
    expect(overGrpc.alignment).toMatchObject({ reference_start: 0, distorted_start: 9, frames: 120, window: 30 })
  }, 60_000)

  it("answers an unrelated clip with 400 naming the window and the best candidate", async () => {
    const { status, body } = await post({ reference, distorted: unrelated, options: { sync: "auto", sync_window: 50 } })
    expect(status).toBe(400)
    expect(JSON.stringify(body)).toMatch(
      /no match within sync_window 50 frames: the best candidate, reference_start \d+ and distorted_start \d+/
    )
  }, 60_000)

  it("answers another frame rate with 400 naming both", async () => {
    const { status, body } = await post({ reference, distorted: otherRate, options: { sync: "auto" } })
    expect(status).toBe(400)
    expect(JSON.stringify(body)).toMatch(/is 25 fps, the distorted .* is 30 fps/)
  }, 60_000)

  it("refuses an unknown sync mode with the field's rule", async () => {
    const { status, body } = await post({ reference, distorted: unrelated, options: { sync: "on" } })
    expect(status).toBe(400)
    expect(JSON.stringify(body)).toContain('options.sync: \\"on\\" is not one of \\"off\\", \\"auto\\"')
  })
})

describe("svc score and svc ladder --sync auto", () => {
  it("prints the alignment line in its table and draws the pairing strip in its HTML report", async () => {
    const html = join(scratch.dir, "dropped3.html")
    const run = await svc([
      "score",
      reference,
      encoded.get("dropped3") ?? "",
      "--sync",
      "auto",
      "--sync-window",
      "30",
      "--html",
      html,
      "-q"
    ])
    expect(run.stderr).toBe("")
    expect(run.code).toBe(0)
    expect(run.stdout).toContain(
      "Aligned: reference from frame 0, distorted from frame 0, 117 pairs; 3 reference frames dropped (50-52), no distorted frames inserted, no repeated; confidence "
    )
    const page = readFileSync(html, "utf8")
    expect(page).toContain('<svg class="alignment" id="alignment"')
    expect(page.match(/<rect class="dropped"/g)).toHaveLength(3)
    expect(page).toContain("dropped frame 51")
  }, 60_000)

  it("svc ladder --sync auto prints each rendition's alignment line and draws its own pairing strip in the ladder's HTML report", async () => {
    const html = join(scratch.dir, "ladder.html")
    const run = await svc([
      "ladder",
      reference,
      "--rendition",
      `late=${encoded.get("late7")}`,
      "--rendition",
      `slate=${encoded.get("slate9")}`,
      "--sync",
      "auto",
      "--sync-window",
      "30",
      "--html",
      html,
      "-q"
    ])
    expect(run.stderr).toBe("")
    expect(run.code).toBe(0)
    // The table says each rendition's alignment too.
    expect(run.stdout).toContain(
      "\nAligned late: reference from frame 7, distorted from frame 0, 113 pairs; no reference frames dropped"
    )
    expect(run.stdout).toContain(
      "\nAligned slate: reference from frame 0, distorted from frame 9, 120 pairs; no reference frames dropped"
    )
    const page = readFileSync(html, "utf8")
    // One strip per rendition, each with its own line and offset, drawn by the pair report's renderer.
    const strips = [...page.matchAll(/<svg class="alignment" data-rendition="([^"]+)"[^>]*>(.*?)<\/svg>/g)]
    expect(strips.map((strip) => strip[1])).toEqual(["late", "slate"])
    const [late, slate] = strips.map((strip) => strip[2] ?? "")
    // The late encode's reference row is grey for 7 frames, the slate's distorted row for 9.
    expect(late?.match(/before the start: frames [^<]*/g)).toEqual(["before the start: frames 0-6"])
    expect(slate?.match(/before the start: frames [^<]*/g)).toEqual(["before the start: frames 0-8"])
    expect(page).toContain(
      '<div class="muted alignment-line" data-rendition="late">reference from frame 7, distorted from frame 0, 113 pairs; no reference frames dropped'
    )
    expect(page).toContain(
      '<div class="muted alignment-line" data-rendition="slate">reference from frame 0, distorted from frame 9, 120 pairs; no reference frames dropped'
    )
    // Each rendition's series over its own pairs, drawn on the ladder's frames: the late one 7 in.
    const data = JSON.parse(
      /<script type="application\/json" id="ladder-data">(.*?)<\/script>/s.exec(page)?.[1] ?? "{}"
    ) as { renditions: ReadonlyArray<{ label: string; offset: number; frames: ReadonlyArray<unknown> }> }
    expect(data.renditions.map((rendition) => [rendition.label, rendition.offset, rendition.frames.length])).toEqual([
      ["late", 7, 113],
      ["slate", 0, 120]
    ])
  }, 60_000)
})

describe("the search on thumbnails", () => {
  /** Frames of `values`: each a flat thumbnail of that luma. */
  const side = (values: ReadonlyArray<number>): SideThumbnails => {
    const bytes = new Uint8Array(values.length * thumbnailBytes)
    for (const [k, value] of values.entries()) bytes.fill(value, k * thumbnailBytes, (k + 1) * thumbnailBytes)
    return { frames: values.length, bytes }
  }
  const ramp = (from: number, length: number) => Array.from({ length }, (_, k) => from + 3 * k)

  it("takes the smallest offsets in a static run, with no confidence and a warning", () => {
    const found = align(side(Array(40).fill(100)), side(Array(30).fill(100)), 20)
    expect(found).toMatchObject({ reference_start: 0, distorted_start: 0, frames: 30, confidence: 0 })
    expect("warning" in found && found.warning).toMatch(/below 0.5/)
  })

  it("reports inserted frames and keeps a freeze by position", () => {
    const reference = ramp(10, 60)
    const inserted = [...reference.slice(0, 30), 250, 250, ...reference.slice(30)]
    expect(align(side(reference), side(inserted), 10)).toMatchObject({
      frames: 60,
      distorted_frames_inserted: [30, 31],
      reference_frames_dropped: []
    })
    const frozen = reference.map((value, k) => (k >= 20 && k < 24 ? (reference[19] as number) : value))
    expect(align(side(reference), side(frozen), 10)).toMatchObject({
      frames: 60,
      distorted_frames_repeated: [20, 21, 22, 23],
      reference_frames_dropped: [],
      distorted_frames_inserted: []
    })
  })

  it("finds no match beyond the window", () => {
    const reference = ramp(0, 80)
    expect(align(side(reference), side(reference.slice(30)), 20)).toMatchObject({ _tag: "NoMatch", window: 20 })
    expect(align(side(reference), side(reference.slice(30)), 40)).toMatchObject({ reference_start: 30, frames: 50 })
  })
})
