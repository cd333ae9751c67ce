/**
 * 10-bit inputs through the one decode for the search and the score (alignment-once.ts), which
 * runs ffmpeg with `-filter_complex split` where the two decodes run `-vf`: a 10-bit H.264
 * distorted clip that starts 3 frames late and drops 2 reference frames mid-clip scores bit for
 * bit as through two decodes (the same request with no room in the budget for the held frames),
 * its alignment and confidence equal: against a 10-bit Y4M reference (whose cut is decoded by
 * ffmpeg), scaled from another size, against an 8-bit reference (converted to 8 bits by the
 * scoring chain), against a 10-bit H.264 reference (both sides held), and after a frame skip. The decoders' runs are counted, so each
 * score is known to have taken the way it is named for. A window of exactly the clip's frames
 * holds it: the container's duration times its rate is not rounded up a frame.
 */
import { closeSync, openSync } from "node:fs"
import { join } from "node:path"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { writeClip } from "../../../local/clip.ts"
import { ffmpegRunAsync, scratchDir } from "../../../test/support/media.ts"
import { headerProbeLimits } from "../decoder-memory.ts"
import { Ffmpeg } from "../ffmpeg.ts"
import { countingRuntime, type DecoderRuns, frameBits, refusing } from "./held-support.ts"

const scratch = scratchDir("svc-held-ten-bit-")
const { runtime, score, heldAdmission } = countingRuntime()
afterAll(async () => {
  await runtime.dispose()
  scratch.remove()
})

const size = { width: 320, height: 240 }
/** Reference frames of testsrc2 (its shapes move every frame). */
const referenceFrames = 33
/** The distorted clip: from reference frame 3, without reference frames 15 and 16. */
const expected: {
  readonly reference_start: number
  readonly distorted_start: number
  readonly frames: number
  readonly reference_frames_dropped: ReadonlyArray<number>
} = { reference_start: 3, distorted_start: 0, frames: 28, reference_frames_dropped: [15, 16] }
const distortedFrames = 28

/** 10-bit x264 (one thread: the same bytes on every run). */
const x264TenBit = (quality: ReadonlyArray<string>) => [
  ...["-c:v", "libx264", "-threads", "1", "-preset", "ultrafast", ...quality, "-pix_fmt", "yuv420p10le"],
  ...["-fflags", "+bitexact"]
]

const clips = { reference10: "", reference8: "", encodedReference10: "", distorted10: "", smallDistorted10: "" }
beforeAll(async () => {
  const reference = (name: string, pixelFormat: string) =>
    writeClip(join(scratch.dir, name), { ...size, frames: referenceFrames, pixelFormat, extra: ["-strict", "-1"] })
  ;[clips.reference10, clips.reference8] = await Promise.all([
    reference("reference10.y4m", "yuv420p10le"),
    reference("reference8.y4m", "yuv420p")
  ])
  const late3drop2 = "trim=start_frame=3,setpts=PTS-STARTPTS,select='not(between(n\\,12\\,13))',setpts=N/25/TB"
  const encode = async (name: string, filter: string, quality: ReadonlyArray<string>) => {
    const path = join(scratch.dir, name)
    await ffmpegRunAsync(["-i", clips.reference10, "-vf", filter, ...x264TenBit(quality), "-y", path])
    return path
  }
  ;[clips.distorted10, clips.smallDistorted10, clips.encodedReference10] = await Promise.all([
    encode("distorted10.mkv", late3drop2, ["-crf", "30"]),
    encode("small-distorted10.mkv", `${late3drop2},scale=256:192`, ["-crf", "30"]),
    encode("reference10.mkv", "null", ["-qp", "0"])
  ])
}, 60_000)

describe("10-bit inputs decoded once for the search and the score", () => {
  it("a clip of exactly sync_window frames is within the window: 28 frames at 25 fps declare 28, not 29", async () => {
    // The container says 1.120000 s; 1.12 x 25 is 28.000000000000004 in floating point.
    const fd = openSync(clips.distorted10, "r")
    try {
      const probed = await runtime.runPromise(
        Effect.flatMap(Ffmpeg, (ffmpeg) => ffmpeg.probe(fd, true, headerProbeLimits))
      )
      expect(probed.declaredFrames).toBe(distortedFrames)
    } finally {
      closeSync(fd)
    }
  })

  /** One score both ways: its inputs, the decoders each way takes, the window, what is held. */
  interface Row {
    readonly name: string
    readonly reference: () => string
    readonly distorted: () => string
    readonly scaling: string
    readonly once: DecoderRuns
    readonly twice: DecoderRuns
    readonly window: number
    /** The reference's (the target's) bit depth. */
    readonly bitdepth: 8 | 10
    /** Each held side: the frames its container declares and its frame skip. */
    readonly held: ReadonlyArray<{ readonly declared: number; readonly skip: number }>
    readonly options?: { readonly frame_skip_dist: number }
    readonly alignment?: typeof expected
  }
  const distortedHeld = [{ declared: distortedFrames, skip: 0 }]
  const cases: ReadonlyArray<Row> = [
    {
      name: "10-bit H.264 against a 10-bit Y4M reference",
      reference: () => clips.reference10,
      distorted: () => clips.distorted10,
      scaling: "none",
      // The reference's cut (its dropped frames) is decoded by ffmpeg into the pipe either way.
      once: { searchDecodes: 0, scoringDecodes: 1, decodesOnce: 1 },
      twice: { searchDecodes: 1, scoringDecodes: 2, decodesOnce: 0 },
      window: distortedFrames,
      bitdepth: 10,
      held: distortedHeld
    },
    {
      name: "10-bit H.264 of another size, scaled to the 10-bit Y4M reference's",
      reference: () => clips.reference10,
      distorted: () => clips.smallDistorted10,
      scaling: "bicubic 256x192 -> 320x240",
      once: { searchDecodes: 0, scoringDecodes: 1, decodesOnce: 1 },
      twice: { searchDecodes: 1, scoringDecodes: 2, decodesOnce: 0 },
      window: distortedFrames,
      bitdepth: 10,
      held: distortedHeld
    },
    {
      name: "10-bit H.264 against an 8-bit Y4M reference (converted to 8 bits)",
      reference: () => clips.reference8,
      distorted: () => clips.distorted10,
      scaling: "none",
      once: { searchDecodes: 0, scoringDecodes: 1, decodesOnce: 1 },
      twice: { searchDecodes: 1, scoringDecodes: 2, decodesOnce: 0 },
      window: distortedFrames,
      bitdepth: 8,
      held: distortedHeld
    },
    {
      // A window covering the reference's 33 frames holds both sides.
      name: "10-bit H.264 against a 10-bit H.264 reference (both held)",
      reference: () => clips.encodedReference10,
      distorted: () => clips.distorted10,
      scaling: "none",
      once: { searchDecodes: 0, scoringDecodes: 0, decodesOnce: 2 },
      twice: { searchDecodes: 2, scoringDecodes: 2, decodesOnce: 0 },
      window: referenceFrames,
      bitdepth: 10,
      held: [{ declared: referenceFrames, skip: 0 }, ...distortedHeld]
    },
    {
      // Held from its skip: a window of the 26 frames after it.
      name: "10-bit H.264 with frame_skip_dist 2",
      reference: () => clips.reference10,
      distorted: () => clips.distorted10,
      scaling: "none",
      once: { searchDecodes: 0, scoringDecodes: 1, decodesOnce: 1 },
      twice: { searchDecodes: 1, scoringDecodes: 2, decodesOnce: 0 },
      window: distortedFrames - 2,
      bitdepth: 10,
      held: [{ declared: distortedFrames, skip: 2 }],
      options: { frame_skip_dist: 2 },
      alignment: { ...expected, reference_start: 5, frames: 26 }
    }
  ]

  for (const example of cases) {
    it(`${example.name}: bit for bit as two decodes`, async () => {
      const body = {
        reference: example.reference(),
        distorted: example.distorted(),
        options: {
          sync: "auto",
          sync_window: example.window,
          per_frame: true,
          precision: "lossless",
          ...example.options
        }
      }
      // Held: a window of exactly the clip's frames (or the reference's). Two decodes: the same
      // request with no room in the budget for the held frames.
      const target = { ...size, pixelFormat: 420, bitdepth: example.bitdepth } as const
      const heldSizes = await Promise.all(
        example.held.map(({ declared, skip }) => heldAdmission(declared, target, skip))
      )
      const once = await score(body)
      const twice = await score(body, { admitMemory: refusing(heldSizes) })
      expect(once.runs).toEqual(example.once)
      expect(twice.runs).toEqual(example.twice)
      const alignment = example.alignment ?? expected
      expect(once.result.alignment).toMatchObject({ ...alignment, distorted_frames_inserted: [] })
      expect(once.result.alignment?.confidence).toBeGreaterThan(0.5)
      expect(twice.result.alignment).toEqual(once.result.alignment)
      expect(once.result.frames).toHaveLength(alignment.frames)
      expect(frameBits(once.result.frames)).toEqual(frameBits(twice.result.frames))
      expect(once.result.score).toBe(twice.result.score)
      expect(once.result.provenance.scaling).toBe(example.scaling)
      expect(once.result.provenance).toEqual(twice.result.provenance)
    }, 60_000)
  }
})
