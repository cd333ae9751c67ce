/**
 * Encoded-input throughput: the bench pair's distorted clip encoded as H.264 1080p in .mp4,
 * scored against its raw reference through ffmpeg (decode beside scoring), next to the raw-YUV
 * score of the same pair (the .mp4 decoded to YUV beforehand), at 1 and 2 threads. Each
 * configuration runs in its own process so peak RSS is its own. Also prints ffmpeg's decode alone
 * (D, CPU seconds) and, at 2 threads on 2 cores, the bound S/(S+D) of the encoded path's share
 * of the raw fps (S: the raw score's CPU): decoding needs CPU the scoring threads would use.
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

/** CPU seconds of ffmpeg decoding the .mp4 as the service asks it to, its output thrown away. */
const decodeCpuSeconds = (mp4: string): number => {
  const args = ["-i", mp4, "-map", "0:v:0", "-an", "-fps_mode", "passthrough", "-pix_fmt", "yuv420p"]
  const run = spawnSync([
    "ffmpeg",
    "-hide_banner",
    "-nostdin",
    "-v",
    "error",
    ...args,
    "-f",
    "rawvideo",
    "-y",
    "/dev/null"
  ])
  if (run.exitCode !== 0) throw new Error(`ffmpeg decode of ${mp4} failed`)
  return Number(run.resourceUsage.cpuTime.total) / 1e6
}

export const benchEncoded = (): void => {
  const pair = generatePair()
  const { mp4, decoded } = encodedPair(pair.distorted)
  console.log(`encoded input: ${width}x${height} H.264 .mp4 (${frames} frames) against its raw reference`)
  const decode = decodeCpuSeconds(mp4)
  console.log(`  ffmpeg decode alone: CPU ${decode.toFixed(2)} s (D)`)
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
    // Beyond S + D, what the encoded path costs (reading, pairing, copies); on 2 cores at 2
    // threads the fps ratio can reach at most S/(S+D).
    const extra = encoded.cpuSeconds - raw.cpuSeconds - decode
    const bound =
      threads === 2 ? `  2-core bound S/(S+D) ${((100 * raw.cpuSeconds) / (raw.cpuSeconds + decode)).toFixed(0)} %` : ""
    console.log(`    CPU beyond S + D: ${extra.toFixed(2)} s${bound}`)
  }
}

if (import.meta.main) benchEncoded()
