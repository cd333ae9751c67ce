/**
 * Encoded-input throughput: the bench pair's distorted clip encoded as H.264 1080p in .mp4,
 * scored against its raw reference through ffmpeg (decode beside scoring), next to the raw-YUV
 * score of the same pair (the .mp4 decoded to YUV beforehand), at 1 and 2 threads. Each
 * configuration runs in its own process so peak RSS is its own.
 */
import { spawnSync } from "bun"
import { existsSync } from "node:fs"
import { runScore } from "./score-run.ts"
import { frames, generatePair, height, width } from "./pair.ts"

const ffmpeg = (args: ReadonlyArray<string>) => {
  const run = spawnSync(["ffmpeg", "-hide_banner", "-nostdin", "-v", "error", ...args], { stderr: "pipe" })
  if (run.exitCode !== 0) throw new Error(`ffmpeg ${args.join(" ")}: ${run.stderr.toString()}`)
}

/** The .mp4 of the distorted clip and its decoded YUV, made once beside the pair. */
const encodedPair = (distorted: string) => {
  const mp4 = distorted.replace(/\.yuv$/, ".h264.mp4")
  const decoded = distorted.replace(/\.yuv$/, ".h264.yuv")
  if (!existsSync(mp4) || !existsSync(decoded)) {
    const raw = ["-f", "rawvideo", "-pix_fmt", "yuv420p", "-s", `${width}x${height}`, "-r", "24", "-i", distorted]
    ffmpeg([...raw, "-c:v", "libx264", "-preset", "medium", "-crf", "23", "-y", mp4])
    ffmpeg(["-i", mp4, "-fps_mode", "passthrough", "-pix_fmt", "yuv420p", "-f", "rawvideo", "-y", decoded])
  }
  return { mp4, decoded }
}

export const benchEncoded = (): void => {
  const pair = generatePair()
  const { mp4, decoded } = encodedPair(pair.distorted)
  console.log(`encoded input: ${width}x${height} H.264 .mp4 (${frames} frames) against its raw reference`)
  for (const threads of [1, 2]) {
    const raw = runScore(pair.reference, decoded, threads)
    const encoded = runScore(pair.reference, mp4, threads)
    if (encoded.vmaf !== raw.vmaf || encoded.frames !== raw.frames)
      throw new Error("the .mp4 and its YUV scored differently")
    // Decoding takes CPU the scoring threads would use: with as many threads as cores, the
    // encoded path can reach at most the raw path's share of the CPU both need.
    console.log(
      `  threads=${threads}  .mp4 ${encoded.fps.toFixed(2)} frames/s (CPU ${encoded.cpuSeconds.toFixed(2)} s, peak RSS ${encoded.peakRssMiB.toFixed(0)} MiB)  raw YUV ${raw.fps.toFixed(2)} frames/s (CPU ${raw.cpuSeconds.toFixed(2)} s, peak RSS ${raw.peakRssMiB.toFixed(0)} MiB)  ratio ${((100 * encoded.fps) / raw.fps).toFixed(0)} % (CPU ratio ${((100 * raw.cpuSeconds) / encoded.cpuSeconds).toFixed(0)} %)  vmaf ${encoded.vmaf.toFixed(3)}`
    )
  }
}

if (import.meta.main) benchEncoded()
