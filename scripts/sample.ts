/**
 * `npm run sample`: writes a small reference/distorted pair with ffmpeg, so the README's first
 * example scores on any machine: sample/reference.y4m (ffmpeg's testsrc2 pattern, 480x360,
 * 4:2:0, 8 bit, 20 frames) and sample/distorted.y4m (that clip encoded with x264 at CRF 35 and
 * decoded; without libx264, blurred and noised instead). Y4M carries its geometry, so a score
 * request needs no options. Deterministic: one encoder thread, fixed noise seed. 480x360 is the
 * smallest common size every built-in model scores (the vmaf_v1.0.16 models' speed_chroma needs
 * chroma planes of 80x80 after halving them: 320 luma lines and columns).
 */
import { $ } from "bun"
import { mkdirSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

const root = join(import.meta.dirname, "..")
const out = join(root, "sample")
const reference = join(out, "reference.y4m")
const distorted = join(out, "distorted.y4m")
const quiet = ["-hide_banner", "-loglevel", "error", "-y"]

mkdirSync(out, { recursive: true })
await $`ffmpeg ${quiet} -f lavfi -i testsrc2=size=480x360:rate=25 -frames:v 20 -pix_fmt yuv420p ${reference}`
const scratch = mkdtempSync(join(tmpdir(), "svc-sample-"))
try {
  const encoded = join(scratch, "encoded.mp4")
  const x264 =
    await $`ffmpeg ${quiet} -i ${reference} -c:v libx264 -crf 35 -preset medium -threads 1 -pix_fmt yuv420p ${encoded}`
      .quiet()
      .nothrow()
  if (x264.exitCode === 0) {
    await $`ffmpeg ${quiet} -i ${encoded} -pix_fmt yuv420p -f yuv4mpegpipe ${distorted}`
  } else {
    await $`ffmpeg ${quiet} -i ${reference} -vf gblur=sigma=1.5,noise=alls=10:allf=t:all_seed=7 -pix_fmt yuv420p ${distorted}`
  }
} finally {
  rmSync(scratch, { recursive: true, force: true })
}
console.log(`wrote ${reference} and ${distorted}`)
