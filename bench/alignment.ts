/**
 * What `options.sync: "auto"` costs: the bench pair (1080p) scored with and without alignment,
 * each in its own process (CPU time with its ffmpeg children, peak RSS), for the H.264 .mp4
 * distorted clip (both sides decoded, the distorted twice) and for the raw YUV pair (read by the
 * library without sync; with sync both files are also decoded by ffmpeg into thumbnails). The
 * target: alignment adds at most 15 % CPU to a score, decoding included. The aligned score of an
 * aligned pair must equal the plain one.
 */
import { spawnSync } from "bun"
import { existsSync } from "node:fs"
import { frames, generatePair, height, width } from "./pair.ts"
import { runScore } from "./score-run.ts"

/** The pair's distorted clip as H.264 .mp4 (made once beside the pair, as the encoded bench does). */
const encodedClip = (distorted: string) => {
  const mp4 = distorted.replace(/\.yuv$/, ".h264.mp4")
  if (!existsSync(mp4)) {
    const raw = ["-f", "rawvideo", "-pix_fmt", "yuv420p", "-s", `${width}x${height}`, "-r", "24", "-i", distorted]
    const run = spawnSync(
      [
        "ffmpeg",
        "-hide_banner",
        "-nostdin",
        "-v",
        "error",
        ...raw,
        "-c:v",
        "libx264",
        "-preset",
        "medium",
        "-crf",
        "23",
        "-y",
        mp4
      ],
      { stderr: "pipe" }
    )
    if (run.exitCode !== 0) throw new Error(`ffmpeg: ${run.stderr.toString()}`)
  }
  return mp4
}

export const benchAlignment = (): void => {
  const pair = generatePair()
  const mp4 = encodedClip(pair.distorted)
  console.log(`alignment (options.sync "auto"): ${width}x${height}, ${frames} frames, 2 threads`)
  for (const [label, distorted] of [
    ["H.264 .mp4", mp4],
    ["raw YUV", pair.distorted]
  ] as const) {
    const plain = runScore(pair.reference, distorted, 2)
    const aligned = runScore(pair.reference, distorted, 2, { sync: "auto" })
    if (aligned.vmaf !== plain.vmaf || aligned.frames !== plain.frames)
      throw new Error(`${label}: the aligned score of an aligned pair differs from the plain one`)
    const overhead = (100 * (aligned.cpuSeconds - plain.cpuSeconds)) / plain.cpuSeconds
    console.log(
      `  ${label.padEnd(10)}  plain CPU ${plain.cpuSeconds.toFixed(2)} s (${plain.fps.toFixed(2)} frames/s, peak RSS ${plain.peakRssMiB.toFixed(0)} MiB)  sync auto CPU ${aligned.cpuSeconds.toFixed(2)} s (${aligned.fps.toFixed(2)} frames/s, peak RSS ${aligned.peakRssMiB.toFixed(0)} MiB)  CPU overhead ${overhead.toFixed(1)} % (target <= 15 %)`
    )
  }
}

if (import.meta.main) benchAlignment()
