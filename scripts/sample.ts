/**
 * `npm run sample`: writes a small reference/distorted pair and two encoded renditions with
 * ffmpeg, so the README's first score and tour run on any machine:
 * - sample/reference.y4m: ffmpeg's testsrc2 pattern, 480x360, 4:2:0, 8 bit, 20 frames;
 * - sample/distorted.mp4: that clip encoded with x264 at CRF 35 (one thread: the same bytes on
 *   every run with one x264 build), and sample/distorted.y4m, its decoded frames;
 * - sample/distorted-240p.mp4: the clip scaled to 320x240 and encoded at CRF 30 (a second rung
 *   of a ladder; svc scales it back to the reference's size).
 * Without libx264 ffmpeg's own mpeg4 encoder stands in. Y4M carries its geometry, so a score
 * request needs no options. 480x360 is the smallest common size every built-in model scores (the
 * vmaf_v1.0.16 models' speed_chroma needs chroma planes of 80x80 after halving them).
 */
import { $ } from "bun"
import { mkdirSync } from "node:fs"
import { join } from "node:path"
import { writeClip } from "../local/clip.ts"

const root = join(import.meta.dirname, "..")
const out = join(root, "sample")
const reference = join(out, "reference.y4m")
const distorted = join(out, "distorted.y4m")
const encoded = join(out, "distorted.mp4")
const small = join(out, "distorted-240p.mp4")
const quiet = ["-hide_banner", "-loglevel", "error", "-nostdin", "-y"]

const x264 = (await $`ffmpeg -hide_banner -encoders`.quiet().nothrow()).stdout.toString().includes("libx264")
const codec = (crf: number) =>
  x264 ? ["-c:v", "libx264", "-crf", `${crf}`, "-preset", "medium", "-threads", "1"] : ["-c:v", "mpeg4", "-q:v", "12"]

mkdirSync(out, { recursive: true })
await writeClip(reference, { width: 480, height: 360, frames: 20, pixelFormat: "yuv420p" })
await $`ffmpeg ${quiet} -i ${reference} ${codec(35)} -pix_fmt yuv420p ${encoded}`
await $`ffmpeg ${quiet} -i ${encoded} -pix_fmt yuv420p -f yuv4mpegpipe ${distorted}`
await $`ffmpeg ${quiet} -i ${reference} -vf scale=320:240 ${codec(30)} -pix_fmt yuv420p ${small}`
console.log(`wrote ${[reference, distorted, encoded, small].map((file) => file.slice(root.length + 1)).join(", ")}`)
