/**
 * Segment jobs (issue 30): one title scored as N segments by N processes at once (each as a node
 * scores its segment: reading one context frame on each side, an encoded input seeking to the
 * keyframe before it) against one process scoring it whole. The title: 480 frames of 1280x720,
 * its distorted side H.264 .mp4 with a keyframe every 16 frames (30 GOPs); 3 segments of 160
 * frames (10 GOPs each). Prints CPU seconds per frame of the segments against one pass (the
 * issue's target: at most 1.1), the wall-time ratio (on a host with 3 free cores it approaches
 * 1/3; fewer cores share it), and checks the merged per-frame values equal the one pass's.
 * Each run is a child process; its CPU is its score's (ffmpeg and ffprobe included), without the
 * process's start, as a long-running node pays it. The wall times include the starts.
 */
import { existsSync, mkdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { ConfigProvider, Effect, Layer, ManagedRuntime } from "effect"
import { Ffmpeg } from "../modules/inputs/ffmpeg.ts"
import { scoreInputs } from "../modules/inputs/score.ts"
import {
  mergeSegmentResults,
  parsePrecision,
  parseScoreRequest,
  Scorer,
  type ScoreResult
} from "../modules/scorer/index.ts"
import { encoderArgs, ffmpegRunAsync, rawClipInput, writeClip } from "../local/clip.ts"
import { modelDirEnv } from "../local/executables.ts"
import { workDir } from "./pair.ts"

const width = 1280
const height = 720
const frames = 480
const gop = 16
const segments = 3

/** The raw reference and its .mp4 distorted copy, made once in the bench's work directory. */
const title = async () => {
  mkdirSync(workDir, { recursive: true })
  const reference = join(workDir, `segments_ref_${width}x${height}_${frames}.yuv`)
  const distorted = join(workDir, `segments_dis_${width}x${height}_${frames}_g${gop}.mp4`)
  if (!existsSync(reference) || !existsSync(distorted)) {
    const clip = { width, height, frames, rate: 24 }
    await writeClip(reference, { ...clip, pixelFormat: "yuv420p", format: "rawvideo" })
    await ffmpegRunAsync([
      ...rawClipInput(clip, reference),
      ...encoderArgs({ codec: "libx264", preset: "fast", gop, crf: 30 }),
      "-y",
      distorted
    ])
  }
  return { reference, distorted }
}

interface Run {
  readonly result: ScoreResult
  /** CPU of the score itself (its ffmpeg and ffprobe children included), without the process's start. */
  readonly cpuSeconds: number
}

/** CPU seconds of this process's waited-for children (ffmpeg, ffprobe): /proc's cutime + cstime, in ticks of 1/100 s. */
const childrenCpuSeconds = (): number => {
  const fields = readFileSync("/proc/self/stat", "utf8").split(") ")[1]?.split(" ") ?? []
  return (Number(fields[13] ?? 0) + Number(fields[14] ?? 0)) / 100
}

/** One child scoring the title, or its segment [first, first + count), lossless and per frame. */
const spawnRun = (reference: string, distorted: string, first: number, count: number) =>
  Bun.spawn([process.execPath, import.meta.filename, reference, distorted, String(first), String(count)], {
    env: { ...process.env },
    stdout: "pipe",
    stderr: "inherit"
  })

const finish = async (child: ReturnType<typeof spawnRun>): Promise<Run> => {
  const [text, code] = await Promise.all([new Response(child.stdout).text(), child.exited])
  if (code !== 0) throw new Error("a bench run failed")
  return JSON.parse(text) as Run
}

export const benchSegments = async (): Promise<void> => {
  const { reference, distorted } = await title()
  console.log(
    `segment jobs: ${frames} frames of ${width}x${height}, H.264 .mp4 with a keyframe every ${gop} (${frames / gop} GOPs) against its raw reference; ${segments} segments of ${frames / segments} frames (${frames / segments / gop} GOPs each), one process each, at once`
  )
  let started = performance.now()
  const whole = await finish(spawnRun(reference, distorted, 0, 0))
  const wholeWall = (performance.now() - started) / 1000
  const size = frames / segments
  started = performance.now()
  const pieces = await Promise.all(
    Array.from({ length: segments }, (_, k) => finish(spawnRun(reference, distorted, k * size, size)))
  )
  const splitWall = (performance.now() - started) / 1000
  // One after the other too: the CPU of each without the others contending for the same cores.
  const alone: Array<Run> = []
  for (let k = 0; k < segments; k++) alone.push(await finish(spawnRun(reference, distorted, k * size, size)))
  const aloneCpu = alone.reduce((sum, piece) => sum + piece.cpuSeconds, 0)
  const merged = mergeSegmentResults(
    pieces.map((piece) => piece.result),
    { precision: parsePrecision("lossless"), perFrame: true }
  )
  if (JSON.stringify(merged?.frames) !== JSON.stringify(whole.result.frames))
    throw new Error("the merged segments differ from the one pass")
  const splitCpu = pieces.reduce((sum, piece) => sum + piece.cpuSeconds, 0)
  console.log(
    `  one pass: wall ${wholeWall.toFixed(2)} s, CPU ${((1000 * whole.cpuSeconds) / frames).toFixed(2)} ms/frame`
  )
  console.log(
    `  ${segments} segments at once: wall ${splitWall.toFixed(2)} s (ratio ${(splitWall / wholeWall).toFixed(2)}), CPU ${((1000 * splitCpu) / frames).toFixed(2)} ms/frame (ratio ${(splitCpu / whole.cpuSeconds).toFixed(3)}; target at most 1.1), merged values identical`
  )
  console.log(
    `  ${segments} segments one after the other: CPU ${((1000 * aloneCpu) / frames).toFixed(2)} ms/frame (ratio ${(aloneCpu / whole.cpuSeconds).toFixed(3)})`
  )
}

if (import.meta.main && process.argv.length > 2) {
  const [reference, distorted, firstText, countText] = process.argv.slice(2)
  const first = Number(firstText)
  const count = Number(countText)
  const runtime = ManagedRuntime.make(
    Layer.merge(Scorer.Default, Ffmpeg.Default).pipe(
      Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(modelDirEnv)))))
    )
  )
  // A node is a long-running process: what a segment costs is its score, not the process's start
  // (nor loading the library and the models, or compiling the code, done once per node).
  await runtime.runPromise(Effect.flatMap(Scorer, (scorer) => scorer.models.load("vmaf_v0.6.1")))
  const score = (segment: { first: number; frames: number; last: boolean } | undefined) =>
    runtime.runPromise(
      parseScoreRequest({
        reference,
        distorted,
        options: { width, height, pixel_format: "420", bitdepth: 8, per_frame: true }
      }).pipe(
        Effect.map((job) => ({ ...job, segment })),
        Effect.flatMap((job) => Effect.flatMap(Scorer, (scorer) => scoreInputs(scorer, job))),
        Effect.orDie
      )
    )
  // Warm: a node has scored before (its code compiled, the input in the page cache).
  await score({ first: 0, frames: 2, last: false })
  const before = process.cpuUsage()
  const childrenBefore = childrenCpuSeconds()
  const result = await score(count === 0 ? undefined : { first, frames: count, last: first + count >= frames })
  const used = process.cpuUsage(before)
  const cpuSeconds = (used.user + used.system) / 1e6 + childrenCpuSeconds() - childrenBefore
  await runtime.dispose()
  process.stdout.write(JSON.stringify({ result, cpuSeconds } satisfies Run))
} else if (import.meta.main) {
  await benchSegments()
}
