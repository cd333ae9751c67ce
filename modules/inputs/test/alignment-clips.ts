/**
 * The clips of the alignment tests, made with the machine's ffmpeg (no media is committed): a
 * 120-frame Y4M reference (320x240 4:2:0 8-bit, 25 fps, cut from three lavfi sources) and
 * H.264 encodes of it (x264 with one thread: the same bytes on every run) that start late, carry
 * a black slate, end early, drop frames mid-clip, freeze, or line up; plus an unrelated clip and
 * one at another frame rate. Each encode states the pairing it was made with (`truth`): the
 * reference and distorted frames, in order, that the hand-aligned pair holds.
 * golden-alignment/encodes.json holds the reference tool's per-frame VMAF of each hand-aligned
 * pair (scripts/golden-alignment.ts) with the encodes' MD5 sums.
 */
import { createHash } from "node:crypto"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { writeClip, writeScenes } from "../../../local/clip.ts"
import { ffmpegRun } from "../../../test/support/media.ts"

export const clipSize = { width: 320, height: 240 } as const
const size = `${clipSize.width}x${clipSize.height}`
export const referenceFrames = 120

const range = (from: number, to: number) => Array.from({ length: to - from }, (_, k) => from + k)

/** The pairing an encode was made with: which reference frame each scored distorted frame shows. */
export interface Truth {
  readonly reference_start: number
  readonly distorted_start: number
  readonly reference: ReadonlyArray<number>
  readonly distorted: ReadonlyArray<number>
  readonly dropped: ReadonlyArray<number>
  readonly repeated: ReadonlyArray<number>
}

export interface Encode {
  readonly name: string
  /** The filter making the distorted clip from the reference (input [0:v]), ending in [out]. */
  readonly filter: string
  readonly truth: Truth
}

const all = range(0, referenceFrames)

export const encodes: ReadonlyArray<Encode> = [
  {
    name: "aligned",
    filter: "[0:v]null[out]",
    truth: { reference_start: 0, distorted_start: 0, reference: all, distorted: all, dropped: [], repeated: [] }
  },
  {
    name: "late7",
    filter: "[0:v]trim=start_frame=7,setpts=PTS-STARTPTS[out]",
    truth: {
      reference_start: 7,
      distorted_start: 0,
      reference: range(7, 120),
      distorted: range(0, 113),
      dropped: [],
      repeated: []
    }
  },
  {
    name: "slate9",
    filter: `color=black:size=${size}:rate=25,format=yuv420p,trim=end_frame=9[slate];[slate][0:v]concat=n=2:v=1:a=0[out]`,
    truth: {
      reference_start: 0,
      distorted_start: 9,
      reference: all,
      distorted: range(9, 129),
      dropped: [],
      repeated: []
    }
  },
  {
    name: "early15",
    filter: "[0:v]trim=end_frame=105[out]",
    truth: {
      reference_start: 0,
      distorted_start: 0,
      reference: range(0, 105),
      distorted: range(0, 105),
      dropped: [],
      repeated: []
    }
  },
  {
    name: "dropped3",
    filter: "[0:v]select='not(between(n\\,50\\,52))',setpts=N/25/TB[out]",
    truth: {
      reference_start: 0,
      distorted_start: 0,
      reference: [...range(0, 50), ...range(53, 120)],
      distorted: range(0, 117),
      dropped: [50, 51, 52],
      repeated: []
    }
  },
  {
    name: "freeze",
    filter: "[0:v]split[a][b];[a][b]freezeframes=first=90:last=92:replace=89[out]",
    truth: {
      reference_start: 0,
      distorted_start: 0,
      reference: all,
      distorted: all,
      dropped: [],
      repeated: [90, 91, 92]
    }
  }
]

/** testsrc2 (40 frames), mandelbrot (40), life (40) back to back, as Y4M at 25 fps. */
export const writeReference = (dir: string): Promise<string> =>
  writeScenes(join(dir, "reference.y4m"), {
    ...clipSize,
    scenes: [
      { pattern: "testsrc2", frames: 40 },
      { pattern: "mandelbrot", frames: 40 },
      { pattern: "life", frames: 40 }
    ],
    filter: "format=yuv420p",
    pixelFormat: "yuv420p"
  })

/** x264 on one thread, muxed without a random segment id: the same bytes on every run. */
const x264 = [
  ...["-c:v", "libx264", "-threads", "1", "-preset", "medium", "-crf", "30", "-pix_fmt", "yuv420p"],
  ...["-fflags", "+bitexact"]
]

/** The encode `encode` of `reference`, as an .mkv. */
export const writeEncode = (dir: string, reference: string, encode: Encode): string => {
  const path = join(dir, `${encode.name}.mkv`)
  ffmpegRun(["-i", reference, "-filter_complex", encode.filter, "-map", "[out]", ...x264, "-y", path])
  return path
}

/** 120 frames of another source (cellular automaton), H.264 at 25 fps: nothing in it matches. */
export const writeUnrelated = (dir: string): Promise<string> =>
  writeClip(join(dir, "unrelated.mkv"), { ...clipSize, pattern: "cellauto", frames: referenceFrames, extra: x264 })

/** The reference re-timed to 30 fps (the same frames, another rate). */
export const writeOtherRate = (dir: string, reference: string): string => {
  const path = join(dir, "rate30.mkv")
  ffmpegRun(["-i", reference, "-vf", "setpts=N/30/TB", "-r", "30", ...x264, "-y", path])
  return path
}

export const md5Of = (path: string) => createHash("md5").update(readFileSync(path)).digest("hex")
