/**
 * What `options.sync: "auto"` costs: the bench pair (1080p) scored with and without alignment,
 * each in its own process, for the H.264 .mp4 distorted clip (the reference's luma planes read
 * for the search; the distorted clip, 48 frames within the sync window, decoded once: its scoring
 * decoder also makes the search's thumbnails, its frames held until the pairs are placed) and
 * for the raw YUV pair
 * (the search reads both files' luma planes from their descriptors; an alignment that only
 * moves the starts is scored by the file job, as the plain score is). CPU time is user + system
 * of the whole process tree (its ffmpeg children included), the median of `runs` runs taken in
 * turns (plain, aligned, plain, ...), so the load of a shared host touches both alike. Then a
 * clip longer than the window (300 frames of 720p, H.264 against its raw YUV reference) with
 * sync_window 24: the distorted clip decoded once, the search streamed while the library
 * scores the pairs already certain (alignment-stream.ts). The target: alignment adds at most 15 %
 * CPU to a score, decoding included. The aligned score of an aligned pair must equal the plain one.
 */
import { spawnSync } from "bun"
import { existsSync, mkdirSync } from "node:fs"
import { join } from "node:path"
import { ffmpegRunAsync, writeScenes } from "../local/clip.ts"
import { frames, generatePair, height, width, workDir } from "./pair.ts"
import { type RunFigures, runScore } from "./score-run.ts"

/** A clip longer than the sync window: 300 frames of 720p, four scenes of 75 (moving bars, a zoom, two automata). */
const long = { width: 1280, height: 720, frames: 300 } as const

/** `long` as raw YUV (the reference) and its H.264 .mp4, made once in the bench's work directory. */
const longPair = async () => {
  mkdirSync(workDir, { recursive: true })
  const reference = join(workDir, `long_${long.width}x${long.height}_${long.frames}.yuv`)
  const mp4 = reference.replace(/\.yuv$/, ".h264.mp4")
  if (!existsSync(reference))
    await writeScenes(reference, {
      width: long.width,
      height: long.height,
      scenes: (["testsrc2", "mandelbrot", "life", "cellauto"] as const).map((pattern) => ({
        pattern,
        frames: long.frames / 4
      })),
      pixelFormat: "yuv420p",
      format: "rawvideo"
    })
  if (!existsSync(mp4))
    await ffmpegRunAsync([
      ...["-f", "rawvideo", "-pix_fmt", "yuv420p", "-s", `${long.width}x${long.height}`, "-r", "25", "-i", reference],
      ...["-c:v", "libx264", "-preset", "medium", "-crf", "23", "-y", mp4]
    ])
  return { reference, mp4 }
}

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

/** Runs plain and aligned in turns and prints their medians; the aligned score of an aligned pair must equal the plain one. */
const compare = (
  label: string,
  reference: string,
  distorted: string,
  runCount: number,
  geometry: Readonly<Record<string, unknown>>,
  sync: Readonly<Record<string, unknown>>
) => {
  const plain: Array<RunFigures> = []
  const aligned: Array<RunFigures> = []
  for (let run = 0; run < runCount; run++) {
    plain.push(runScore(reference, distorted, 2, geometry))
    aligned.push(runScore(reference, distorted, 2, { ...geometry, sync: "auto", ...sync }))
  }
  for (const [index, run] of aligned.entries())
    if (run.vmaf !== plain[index]?.vmaf || run.frames !== plain[index]?.frames)
      throw new Error(`${label}: the aligned score of an aligned pair differs from the plain one`)
  const plainCpu = median(plain.map((run) => run.cpuSeconds))
  const alignedCpu = median(aligned.map((run) => run.cpuSeconds))
  const rss = (figures: ReadonlyArray<RunFigures>) => Math.max(...figures.map((run) => run.peakRssMiB)).toFixed(0)
  const overhead = (100 * (alignedCpu - plainCpu)) / plainCpu
  console.log(
    `  ${label}  plain CPU ${plainCpu.toFixed(2)} s (peak RSS ${rss(plain)} MiB)  sync auto CPU ${alignedCpu.toFixed(2)} s (peak RSS ${rss(aligned)} MiB)  CPU overhead ${overhead.toFixed(1)} % (target <= 15 %)`
  )
}

export const benchAlignment = async (): Promise<void> => {
  const pair = generatePair()
  const mp4 = encodedClip(pair.distorted)
  console.log(
    `alignment (options.sync "auto"): ${width}x${height}, ${frames} frames (within the window), 2 threads; CPU time (user+sys, process tree), median of ${runs} runs`
  )
  for (const [label, distorted] of [
    ["H.264 .mp4", mp4],
    ["raw YUV", pair.distorted]
  ] as const)
    compare(label.padEnd(10), pair.reference, distorted, runs, {}, {})
  // Longer than the window: the encoded side decoded once, the search streamed (alignment-stream.ts).
  const longer = await longPair()
  const longRuns = Number(process.env.BENCH_RUNS ?? 3)
  console.log(
    `alignment, a clip longer than the window: ${long.width}x${long.height}, ${long.frames} frames (4 scenes), H.264 .mp4 against raw YUV, 2 threads; median of ${longRuns} runs`
  )
  const geometry = { width: long.width, height: long.height }
  compare("sync_window 24", longer.reference, longer.mp4, longRuns, geometry, { sync_window: 24 })
}

if (import.meta.main) await benchAlignment()
