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
import { writeClip } from "../../../local/clip.ts"
import { ffmpegRun } from "../../../test/support/media.ts"

export const clipGeometry = { width: 320, height: 240, pixel_format: "420", bitdepth: 8 } as const
const size = `${clipGeometry.width}x${clipGeometry.height}`

const rawOut = (path: string) => ["-f", "rawvideo", "-pix_fmt", "yuv420p", "-y", path]

/** testsrc2 (30 frames), mandelbrot (45), life (35) back to back: cuts at 30 and 75. */
export const writeThreeSources = (dir: string): { reference: string; distorted: string } => {
  const reference = join(dir, "three_sources.ref.yuv")
  const distorted = join(dir, "three_sources.dis.yuv")
  const encoded = join(dir, "three_sources.dis.mkv")
  const part = (input: number, frames: number, label: string) =>
    `[${input}:v]trim=end_frame=${frames},setpts=PTS-STARTPTS,format=yuv420p[${label}]`
  ffmpegRun([
    ...["-f", "lavfi", "-i", `testsrc2=size=${size}:rate=25`],
    ...["-f", "lavfi", "-i", `mandelbrot=size=${size}:rate=25`],
    ...["-f", "lavfi", "-i", `life=size=${size}:rate=25:seed=7:mold=10:life_color=#00ff00:death_color=#aa0000`],
    "-filter_complex",
    `${part(0, 30, "a")};${part(1, 45, "b")};${part(2, 35, "c")};[a][b][c]concat=n=3:v=1:a=0[out]`,
    ...["-map", "[out]"],
    ...rawOut(reference)
  ])
  ffmpegRun([
    ...["-f", "rawvideo", "-pix_fmt", "yuv420p", "-s", size, "-r", "25", "-i", reference],
    ...["-c:v", "libx264", "-threads", "1", "-preset", "medium", "-crf", "32", "-y", encoded]
  ])
  ffmpegRun(["-i", encoded, ...rawOut(distorted)])
  return { reference, distorted }
}

/** 110 raw frames of 320x240 4:2:0 8-bit at 25 fps. */
const rawClip = {
  width: clipGeometry.width,
  height: clipGeometry.height,
  frames: 110,
  pixelFormat: "yuv420p",
  format: "rawvideo"
} as const

/** 110 frames of testsrc2 with a white flash at frames 40-41 and another at 70: one shot. */
export const writeFlash = (dir: string): Promise<string> =>
  writeClip(join(dir, "flash.yuv"), {
    ...rawClip,
    extra: ["-vf", "lutyuv=y=235:u=128:v=128:enable='between(n,40,41)+eq(n,70)',format=yuv420p"]
  })

/** 110 frames of a fast pan (8 pixels a frame, bobbing up and down) over mandelbrot: one shot. */
export const writeFastPan = (dir: string): Promise<string> =>
  writeClip(join(dir, "fast_pan.yuv"), {
    ...rawClip,
    pattern: "mandelbrot",
    width: 1280,
    height: 480,
    extra: ["-vf", "crop=320:240:'n*8':'120+40*sin(n/5)',format=yuv420p"]
  })

export const md5Of = (path: string) => createHash("md5").update(readFileSync(path)).digest("hex")
