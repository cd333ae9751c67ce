/**
 * The alignment search's thumbnails of raw/Y4M inputs, read from the descriptor and reduced in
 * the service (luma-thumbnails.ts), agree with the ones ffmpeg makes of a decoded input
 * (`scale=32:18:flags=area,format=gray`), so a raw side lines up with an encoded one: on an 8-bit
 * clip whose height is no multiple of 18 (fractional areas) and on a 10-bit one, within two
 * levels everywhere and about a quarter to half a level on average, with no bias. The frame skip
 * and the frame count are the file's.
 */
import { closeSync, fstatSync, openSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { Effect, Either } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { writeClip } from "../../../local/clip.ts"
import { ffmpegRun, scratchDir } from "../../../test/support/media.ts"
import { thumbnailBytes } from "../alignment.ts"
import { fileThumbnails } from "../luma-thumbnails.ts"
import { parseY4mHeader, y4mFrameCount, y4mFrameOffset } from "../y4m.ts"

const scratch = scratchDir("svc-luma-thumbnails-")
afterAll(() => scratch.remove())

const frames = 12

/** A Y4M clip of moving test patterns and ffmpeg's thumbnails of it. */
const clipAndFfmpegThumbnails = async (
  name: string,
  size: { readonly width: number; readonly height: number },
  pixelFormat: string
) => {
  const clip = await writeClip(join(scratch.dir, `${name}.y4m`), {
    ...size,
    frames,
    pixelFormat,
    extra: ["-strict", "-1"]
  })
  const thumbnails = join(scratch.dir, `${name}.gray`)
  ffmpegRun(["-i", clip, "-vf", "scale=32:18:flags=area,format=gray", "-f", "rawvideo", "-y", thumbnails])
  return { clip, ffmpeg: readFileSync(thumbnails) }
}

const ours = async (clip: string, skip: number) => {
  const fd = openSync(clip, "r")
  try {
    const header = Either.getOrThrow(parseY4mHeader(readFileSync(clip).subarray(0, 512), clip))
    const firstFrame = y4mFrameOffset(header, 0)
    const file = {
      fd,
      geometry: header.geometry,
      firstFrame,
      frameStride: y4mFrameOffset(header, 1) - firstFrame,
      frames: y4mFrameCount(header, fstatSync(fd).size)
    }
    return await Effect.runPromise(fileThumbnails(file, skip))
  } finally {
    closeSync(fd)
  }
}

describe("raw/Y4M thumbnails read in the service", () => {
  for (const [name, size, pixelFormat, meanLimit] of [
    ["8-bit", { width: 320, height: 240 }, "yuv420p", 0.35],
    ["10-bit", { width: 352, height: 288 }, "yuv420p10le", 0.6]
  ] as const)
    it(`match ffmpeg's area thumbnails of a ${name} clip`, async () => {
      const { clip, ffmpeg } = await clipAndFfmpegThumbnails(name, size, pixelFormat)
      const skip = 2
      const thumbnails = await ours(clip, skip)
      expect(thumbnails.frames).toBe(frames - skip)
      const expected = ffmpeg.subarray(skip * thumbnailBytes)
      expect(thumbnails.bytes.length).toBe(expected.length)
      let absolute = 0
      let signed = 0
      let largest = 0
      for (const [k, value] of thumbnails.bytes.entries()) {
        const difference = value - (expected[k] as number)
        absolute += Math.abs(difference)
        signed += difference
        largest = Math.max(largest, Math.abs(difference))
      }
      expect(largest).toBeLessThanOrEqual(2)
      expect(absolute / expected.length).toBeLessThan(meanLimit)
      expect(Math.abs(signed / expected.length)).toBeLessThan(0.25)
    })
})
