/**
 * The ladder the client tests score: the golden v01 pair's reference (30 frames of 320x240) as a
 * Y4M, and four renditions of it made with ffmpeg in different sizes, codecs and containers. Each
 * client test checks that a ladder gives, per rendition, exactly the per-frame values of four
 * separate scores of the same pairs.
 */
import { join } from "node:path"
import { expect } from "vitest"
import { fixture } from "./fixtures.ts"
import { ffmpegRun, rawInput } from "./media.ts"

export interface LadderMedia {
  readonly reference: string
  readonly renditions: ReadonlyArray<{ readonly label: string; readonly distorted: string }>
}

/** Encodes of the reference: [label, file name, ffmpeg output options]. */
const encodes: ReadonlyArray<readonly [string, string, ReadonlyArray<string>]> = [
  ["240p-h264", "240p.mp4", ["-c:v", "libx264", "-preset", "ultrafast", "-crf", "30"]],
  ["180p-hevc", "180p.mkv", ["-vf", "scale=240:180", "-c:v", "libx265", "-preset", "ultrafast", "-crf", "30"]],
  ["120p-mpeg4", "120p.avi", ["-vf", "scale=160:120", "-c:v", "mpeg4", "-q:v", "6"]],
  ["240p-mpeg2", "240p.ts", ["-c:v", "mpeg2video", "-b:v", "300k"]]
]

/** Writes the reference and the four renditions into `dir` (which must lie under the scoring roots used). */
export const makeLadderMedia = (dir: string): LadderMedia => {
  const source = fixture("v01")
  const reference = join(dir, "reference.y4m")
  ffmpegRun([...rawInput(source, source.reference), "-f", "yuv4mpegpipe", "-y", reference])
  const renditions = encodes.map(([label, name, options]) => {
    const distorted = join(dir, name)
    ffmpegRun(["-i", reference, ...options, "-y", distorted])
    return { label, distorted }
  })
  return { reference, renditions }
}

export interface PerFrame {
  readonly frame: number
  readonly metrics: Readonly<Record<string, number>>
}

/** A rendition's per-frame values equal a separate score's, frame by frame and metric by metric, exactly. */
export const expectSameFrames = (label: string, ladder: ReadonlyArray<PerFrame>, separate: ReadonlyArray<PerFrame>) => {
  expect(ladder.length, label).toBe(separate.length)
  expect(ladder.length, label).toBeGreaterThan(0)
  ladder.forEach((frame, index) => {
    const alone = separate[index]
    expect(frame.frame, label).toBe(alone?.frame)
    expect(frame.metrics, `${label} frame ${frame.frame}`).toEqual(alone?.metrics)
  })
}
