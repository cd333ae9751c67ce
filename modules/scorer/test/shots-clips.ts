/**
 * The clips of the shot tests, made with the machine's ffmpeg (no media is committed): raw
 * 320x240 4:2:0 8-bit frames of lavfi's synthetic sources. `threeSources` is cut from three of
 * them (30, 45 and 35 frames), its distorted side encoded with x264 (one thread: the same bytes on
 * every run) and decoded back; golden-shots/three_sources.json holds the reference tool's
 * per-frame scores of that pair with the files' MD5 sums, so a different ffmpeg is caught before
 * any value is compared. `flash` and `fastPan` have no cut.
 */
import { createHash } from "node:crypto"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { ffmpegRunAsync, rawClipInput, writeClip, writeScenes } from "../../../local/clip.ts"

export const clipGeometry = { width: 320, height: 240, pixel_format: "420", bitdepth: 8 } as const
/** Raw 320x240 4:2:0 8-bit frames at 25 fps. */
const rawClip = {
  width: clipGeometry.width,
  height: clipGeometry.height,
  pixelFormat: "yuv420p",
  format: "rawvideo"
} as const

/** testsrc2 (30 frames), mandelbrot (45), life (35) back to back: cuts at 30 and 75. */
export const writeThreeSources = async (dir: string): Promise<{ reference: string; distorted: string }> => {
  const reference = join(dir, "three_sources.ref.yuv")
  const distorted = join(dir, "three_sources.dis.yuv")
  const encoded = join(dir, "three_sources.dis.mkv")
  await writeScenes(reference, {
    ...rawClip,
    scenes: [
      { pattern: "testsrc2", frames: 30 },
      { pattern: "mandelbrot", frames: 45 },
      { pattern: "life", frames: 35 }
    ],
    filter: "format=yuv420p"
  })
  await ffmpegRunAsync([
    ...rawClipInput(clipGeometry, reference),
    ...["-c:v", "libx264", "-threads", "1", "-preset", "medium", "-crf", "32", "-y", encoded]
  ])
  await ffmpegRunAsync(["-i", encoded, "-f", "rawvideo", "-pix_fmt", "yuv420p", "-y", distorted])
  return { reference, distorted }
}

/** 110 frames of testsrc2 with a white flash at frames 40-41 and another at 70: one shot. */
export const writeFlash = (dir: string): Promise<string> =>
  writeClip(join(dir, "flash.yuv"), {
    ...rawClip,
    frames: 110,
    extra: ["-vf", "lutyuv=y=235:u=128:v=128:enable='between(n,40,41)+eq(n,70)',format=yuv420p"]
  })

/** 110 frames of a fast pan (8 pixels a frame, bobbing up and down) over mandelbrot: one shot. */
export const writeFastPan = (dir: string): Promise<string> =>
  writeClip(join(dir, "fast_pan.yuv"), {
    ...rawClip,
    frames: 110,
    pattern: "mandelbrot",
    width: 1280,
    height: 480,
    extra: ["-vf", "crop=320:240:'n*8':'120+40*sin(n/5)',format=yuv420p"]
  })

export const md5Of = (path: string) => createHash("md5").update(readFileSync(path)).digest("hex")
