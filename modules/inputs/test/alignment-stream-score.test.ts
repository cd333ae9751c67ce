/**
 * One decode for the search and the score of clips longer than the sync window (issue 31 item
 * 6, alignment-stream.ts): with sync_window 8, H.264 encodes of an 80-frame Y4M reference (160x90)
 * are read once while the alignment is searched, and score bit for bit as through two decodes
 * per side (the budget refusing the streaming's admission): alignment, confidence, per-frame
 * values and the summary, for an encode that starts late, drops two frames mid-clip, carries two
 * inserted frames and ends early, with frame_cnt and subsample too, and with an encoded
 * reference (both sides decoded once), and for a 10-bit pair. A black lead longer than the held-frame cap (88 frames) gives the
 * attempt up mid-stream and the pair is scored by two decodes, with the same answer and progress
 * that never goes back; an unrelated clip is refused with the two decodes' 400. The real
 * decoders are counted.
 */
import { join } from "node:path"
import { Effect, Either } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { writeClip, writeScenes } from "../../../local/clip.ts"
import { ffmpegRunAsync, scratchDir } from "../../../test/support/media.ts"
import { parseScoreRequest, Scorer } from "../../scorer/index.ts"
import { streamHeldFrames } from "../alignment-stream.ts"
import { scoreInputs } from "../score.ts"
import { busyAt as busyAtIndex, countedDecoders } from "./held-support.ts"

const size = { width: 160, height: 90 } as const
const window = 8
const x264 = ["-c:v", "libx264", "-threads", "1", "-preset", "ultrafast", "-crf", "28", "-pix_fmt", "yuv420p"]

// The real decoders, counted: which way each side was read.
const { runs: calls, runtime } = countedDecoders()
const scratch = scratchDir("svc-alignment-stream-")
afterAll(async () => {
  await runtime.dispose()
  scratch.remove()
})

/** Scores `body` counting the decoders; `busyAt`: the budget refuses the admission of this index. */
const countedScore = async (body: unknown, busyAt = -1) => {
  calls.searchDecodes = 0
  calls.scoringDecodes = 0
  calls.decodesOnce = 0
  const admitted: Array<number> = []
  const progress: Array<number> = []
  const result = await runtime.runPromise(
    Effect.either(
      Effect.flatMap(parseScoreRequest(body), (job) =>
        Effect.flatMap(Scorer, (scorer) =>
          scoreInputs(scorer, job, {
            admitMemory: busyAtIndex(busyAt, admitted),
            onProgress: (done) => Effect.sync(() => progress.push(done))
          })
        )
      )
    )
  )
  return { result, admitted, progress, calls: { ...calls } }
}

const options = { sync: "auto", sync_window: window, per_frame: true, precision: "lossless" }
const scored = (outcome: Awaited<ReturnType<typeof countedScore>>) => {
  if (Either.isLeft(outcome.result)) throw new Error(`${outcome.result.left._tag}: ${outcome.result.left.message}`)
  return outcome.result.right
}

let reference = ""
let encodedReference = ""
let distorted = ""
let blackLead = ""
let blackLeadEncode = ""
let unrelated = ""
let shortMatch = ""
beforeAll(async () => {
  const dir = scratch.dir
  const black = `color=black:size=${size.width}x${size.height}:rate=25,format=yuv420p`
  // 50 frames of moving bars, then 30 of a cellular automaton: every frame differs.
  reference = await writeScenes(join(dir, "reference.y4m"), {
    ...size,
    scenes: [
      { pattern: "testsrc2", frames: 50 },
      { pattern: "life", frames: 30 }
    ],
    filter: "format=yuv420p",
    pixelFormat: "yuv420p"
  })
  const encode = async (name: string, input: string, filter: string) => {
    const path = join(dir, name)
    await ffmpegRunAsync(["-i", input, "-filter_complex", filter, "-map", "[out]", ...x264, "-y", path])
    return path
  }
  const trim = (from: number, to: number, label: string) =>
    `[${label}]trim=start_frame=${from}:end_frame=${to},setpts=PTS-STARTPTS[${label}x]`
  ;[encodedReference, distorted, blackLead, unrelated, shortMatch] = await Promise.all([
    encode("reference.mkv", reference, "[0:v]null[out]"),
    // Starts at reference frame 3, drops 20 and 21, two black frames after 60, ends after 74: 72 frames.
    encode(
      "distorted.mkv",
      reference,
      `[0:v]split=3[a][b][c];${trim(3, 20, "a")};${trim(22, 61, "b")};${trim(61, 75, "c")};${black},trim=end_frame=2[k];[ax][bx][k][cx]concat=n=4:v=1:a=0[out]`
    ),
    // 100 black frames, then 40 of moving bars: the black lead is longer than the held-frame cap.
    writeClip(join(dir, "bars.y4m"), { ...size, frames: 40, filter: "format=yuv420p", pixelFormat: "yuv420p" }).then(
      async (bars) => {
        const path = join(dir, "black-lead.y4m")
        const concat = `${black},trim=end_frame=100[k];[k][0:v]concat=n=2:v=1:a=0[out]`
        await ffmpegRunAsync([
          "-i",
          bars,
          "-filter_complex",
          concat,
          "-map",
          "[out]",
          "-pix_fmt",
          "yuv420p",
          "-y",
          path
        ])
        return path
      }
    ),
    writeClip(join(dir, "unrelated.mkv"), { ...size, pattern: "cellauto", frames: 80, extra: x264 }),
    // The reference's first 20 frames, then 30 of a cellular automaton: too few pairs for a match.
    encode(
      "short-match.mkv",
      reference,
      `[0:v]trim=end_frame=20,setpts=PTS-STARTPTS[m];cellauto=size=${size.width}x${size.height}:rate=25:rule=110,format=yuv420p,trim=end_frame=30[u];[m][u]concat=n=2:v=1:a=0[out]`
    )
  ])
  blackLeadEncode = await encode("black-lead.mkv", blackLead, "[0:v]trim=start_frame=2,setpts=PTS-STARTPTS[out]")
}, 120_000)

describe("a clip longer than the sync window, decoded once", () => {
  it("scores as two decodes bit for bit: late start, drops, inserted frames, early end; frame_cnt and subsample", async () => {
    // Frame skips apply first: the alignment is then counted after them (the distorted side shows
    // reference frame 5 after its skip of 2, the reference from its frame 1).
    for (const [extra, start] of [
      [{}, { reference: 3, dropped: [20, 21], inserted: [56, 57] }],
      [
        { frame_cnt: 30, subsample: 2 },
        { reference: 3, dropped: [20, 21], inserted: [56, 57] }
      ],
      [
        { frame_skip_ref: 1, frame_skip_dist: 2 },
        { reference: 4, dropped: [19, 20], inserted: [54, 55] }
      ]
    ] as const) {
      const body = { reference, distorted, options: { ...options, ...extra } }
      const once = await countedScore(body)
      expect(once.calls).toEqual({ searchDecodes: 0, scoringDecodes: 0, decodesOnce: 1 })
      // No room for the streaming's admission (its first): two decodes, the Y4M side with its cut frames decoded too.
      const twice = await countedScore(body, 0)
      expect(twice.calls).toEqual({ searchDecodes: 1, scoringDecodes: 2, decodesOnce: 0 })
      const [streamed, reference2] = [scored(once), scored(twice)]
      expect(streamed.alignment).toMatchObject({
        reference_start: start.reference,
        distorted_start: 0,
        reference_frames_dropped: start.dropped,
        distorted_frames_inserted: start.inserted
      })
      expect(streamed.frames).toHaveLength("frame_cnt" in extra ? 15 : "frame_skip_dist" in extra ? 68 : 70)
      // Alignment and confidence, per-frame values, summary and provenance: the whole result.
      expect(streamed).toEqual(reference2)
      expect(once.progress).toEqual(twice.progress)
    }
  }, 120_000)

  it("decodes an encoded reference once too: both sides streamed, bit for bit as four decodes", async () => {
    const body = { reference: encodedReference, distorted, options }
    const once = await countedScore(body)
    expect(once.calls).toEqual({ searchDecodes: 0, scoringDecodes: 0, decodesOnce: 2 })
    const twice = await countedScore(body, 0)
    expect(twice.calls).toEqual({ searchDecodes: 2, scoringDecodes: 2, decodesOnce: 0 })
    expect(scored(once).alignment).toMatchObject({ reference_start: 3, reference_frames_dropped: [20, 21] })
    expect(scored(once)).toEqual(scored(twice))
  }, 120_000)

  it("streams a 10-bit pair bit for bit as two decodes (the one decode's split filter, 16-bit samples)", async () => {
    const reference10 = await writeScenes(join(scratch.dir, "reference10.y4m"), {
      ...size,
      scenes: [
        { pattern: "testsrc2", frames: 30 },
        { pattern: "life", frames: 20 }
      ],
      filter: "format=yuv420p10le",
      pixelFormat: "yuv420p10le",
      extra: ["-strict", "-1"]
    })
    const distorted10 = join(scratch.dir, "distorted10.mkv")
    await ffmpegRunAsync([
      ...["-i", reference10, "-vf", "trim=start_frame=3,setpts=PTS-STARTPTS"],
      ...["-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p10le", "-y", distorted10]
    ])
    const body = { reference: reference10, distorted: distorted10, options }
    const once = await countedScore(body)
    expect(once.calls).toEqual({ searchDecodes: 0, scoringDecodes: 0, decodesOnce: 1 })
    const twice = await countedScore(body, 0)
    expect(twice.calls).toEqual({ searchDecodes: 1, scoringDecodes: 1, decodesOnce: 0 })
    expect(scored(once).alignment).toMatchObject({ reference_start: 3, frames: 47 })
    expect(scored(once)).toEqual(scored(twice))
  }, 120_000)

  it("gives up mid-stream where a black lead outlasts the held-frame cap, and scores by two decodes alike", async () => {
    // 100 black frames on both sides (the encode starts 2 frames late): every offset fits them, so
    // no pair is certain before the bars start, and the held frames reach the cap first.
    expect(streamHeldFrames(window, 138)).toBeLessThan(98)
    const body = { reference: blackLead, distorted: blackLeadEncode, options }
    const gaveUp = await countedScore(body)
    expect(gaveUp.calls).toEqual({ searchDecodes: 1, scoringDecodes: 1, decodesOnce: 1 })
    const twice = await countedScore(body, 0)
    expect(twice.calls).toEqual({ searchDecodes: 1, scoringDecodes: 1, decodesOnce: 0 })
    expect(scored(gaveUp).alignment).toMatchObject({ reference_start: 2, distorted_start: 0, frames: 138 })
    expect(scored(gaveUp)).toEqual(scored(twice))
    // Progress never goes back, and ends at the frames scored.
    expect(gaveUp.progress).toEqual([...gaveUp.progress].sort((a, b) => a - b))
    expect(gaveUp.progress.at(-1)).toBe(138)
  }, 120_000)

  it("refuses an unrelated clip, and one matching too few frames, with the two decodes' 400", async () => {
    // The streamed search itself finishes with no match: no pair of the unrelated clip is ever
    // certain (it is held whole: 80 frames, within the cap), and too few frames match in the other.
    for (const candidate of [unrelated, shortMatch]) {
      const body = { reference, distorted: candidate, options }
      const once = await countedScore(body)
      expect(once.calls).toEqual({ searchDecodes: 0, scoringDecodes: 0, decodesOnce: 1 })
      const twice = await countedScore(body, 0)
      expect(twice.calls).toEqual({ searchDecodes: 1, scoringDecodes: 0, decodesOnce: 0 })
      if (Either.isRight(once.result) || Either.isRight(twice.result)) throw new Error("an unmatched clip was scored")
      expect(once.result.left._tag).toBe("InvalidScoreRequest")
      expect(once.result.left.message).toBe(twice.result.left.message)
      expect(once.result.left.message).toMatch(/found no match within sync_window 8 frames/)
    }
  }, 120_000)
})
