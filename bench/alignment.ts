/**
 * What `options.sync: "auto"` costs: the bench pair (1080p) scored with and without alignment,
 * each in its own process, for the H.264 .mp4 distorted clip (the reference's luma planes read
 * for the search; the distorted clip, 48 frames within the sync window, decoded once: its scoring
 * decoder also makes the search's thumbnails, its frames held until the pairs are placed) and
 * for the raw YUV pair
 * (the search reads both files' luma planes from their descriptors; an alignment that only
 * moves the starts is scored by the file job, as the plain score is). CPU time is user + system
 * of the whole process tree (its ffmpeg children included), the median of `runs` runs taken in
 * turns (plain, aligned, plain, ...), so the load of a shared host touches both alike. The
 * target: alignment adds at most 15 % CPU to a score, decoding included. The aligned score of an
 * aligned pair must equal the plain one.
 */
import { spawnSync } from "bun"
import { existsSync } from "node:fs"
import { frames, generatePair, height, width } from "./pair.ts"
import { type RunFigures, runScore } from "./score-run.ts"

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

const runs = Number(process.env.BENCH_RUNS ?? 5)

const median = (values: ReadonlyArray<number>) => {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = sorted.length >> 1
  return sorted.length % 2 === 1
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2
}

export const benchAlignment = (): void => {
  const pair = generatePair()
  const mp4 = encodedClip(pair.distorted)
  console.log(
    `alignment (options.sync "auto"): ${width}x${height}, ${frames} frames, 2 threads; CPU time (user+sys, process tree), median of ${runs} runs`
  )
  for (const [label, distorted] of [
    ["H.264 .mp4", mp4],
    ["raw YUV", pair.distorted]
  ] as const) {
    const plain: Array<RunFigures> = []
    const aligned: Array<RunFigures> = []
    for (let run = 0; run < runs; run++) {
      plain.push(runScore(pair.reference, distorted, 2))
      aligned.push(runScore(pair.reference, distorted, 2, { sync: "auto" }))
    }
    for (const [index, run] of aligned.entries())
      if (run.vmaf !== plain[index]?.vmaf || run.frames !== plain[index]?.frames)
        throw new Error(`${label}: the aligned score of an aligned pair differs from the plain one`)
    const plainCpu = median(plain.map((run) => run.cpuSeconds))
    const alignedCpu = median(aligned.map((run) => run.cpuSeconds))
    const rss = (figures: ReadonlyArray<RunFigures>) => Math.max(...figures.map((run) => run.peakRssMiB)).toFixed(0)
    const overhead = (100 * (alignedCpu - plainCpu)) / plainCpu
    console.log(
      `  ${label.padEnd(10)}  plain CPU ${plainCpu.toFixed(2)} s (peak RSS ${rss(plain)} MiB)  sync auto CPU ${alignedCpu.toFixed(2)} s (peak RSS ${rss(aligned)} MiB)  CPU overhead ${overhead.toFixed(1)} % (target <= 15 %)`
    )
  }
}

if (import.meta.main) benchAlignment()
