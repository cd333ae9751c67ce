/**
 * Segment jobs (issue 30): one title scored as N segments by N processes at once (each as a node
 * scores its segment: reading one context frame on each side, an encoded input seeking to the
 * keyframe before it) against one process scoring it whole. The title: 480 frames of 1280x720,
 * its distorted side H.264 .mp4 with a keyframe every 16 frames (30 GOPs); 3 segments of 160
 * frames (10 GOPs each). Prints CPU seconds per frame of the segments against one pass (the
 * issue's target: at most 1.1), the wall-time ratio (on a host with 3 free cores it approaches
 * 1/3; fewer cores share it), and checks the merged per-frame values equal the one pass's.
 * The same for a ladder of 2 renditions of the title (that .mp4 and a 640x360 one with the same
 * keyframes, scaled back), split in the same segments, merged as the controller merges a ladder.
 * Each run is a child process; its CPU is its score's (ffmpeg and ffprobe included), without the
 * process's start, as a long-running node pays it. The wall times include the starts.
 */
import { existsSync, mkdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { ConfigProvider, Effect, Layer, ManagedRuntime } from "effect"
import { Ffmpeg } from "../modules/inputs/ffmpeg.ts"
import { scoreLadderInputs } from "../modules/inputs/ladder.ts"
import { scoreInputs } from "../modules/inputs/score.ts"
import {
  type LadderResult,
  mergeLadderSegments,
  mergeSegmentResults,
  parseLadderRequest,
  parsePrecision,
  parseScoreRequest,
  Scorer,
  type ScoreResult,
  type Segment
} from "../modules/scorer/index.ts"
import { encoderArgs, ffmpegRunAsync, rawClipInput, writeClip } from "../local/clip.ts"
import { modelDirEnv } from "../local/executables.ts"
import { workDir } from "./pair.ts"

const width = 1280
const height = 720
const frames = 480
const gop = 16
const segments = 3
/** The ladder's second rendition: half the title's size, the same keyframes. */
const low = { width: 640, height: 360 }

/**
 * The raw reference, its .mp4 distorted copy and a lower rung of the same keyframes for the
 * ladder, made once in the bench's work directory.
 */
const title = async () => {
  mkdirSync(workDir, { recursive: true })
  const reference = join(workDir, `segments_ref_${width}x${height}_${frames}.yuv`)
  const distorted = join(workDir, `segments_dis_${width}x${height}_${frames}_g${gop}.mp4`)
  const lowRung = join(workDir, `segments_dis_${low.width}x${low.height}_${frames}_g${gop}.mp4`)
  const clip = { width, height, frames, rate: 24 }
  const x264 = encoderArgs({ codec: "libx264", preset: "fast", gop, crf: 30 })
  if (!existsSync(reference) || !existsSync(distorted)) {
    await writeClip(reference, { ...clip, pixelFormat: "yuv420p", format: "rawvideo" })
    await ffmpegRunAsync([...rawClipInput(clip, reference), ...x264, "-y", distorted])
  }
  if (!existsSync(lowRung))
    await ffmpegRunAsync([
      ...rawClipInput(clip, reference),
      ...["-vf", `scale=${low.width}:${low.height}`],
      ...x264,
      "-y",
      lowRung
    ])
  return { reference, distorted, lowRung }
}

/** A pair (one distorted input) or a ladder (every distorted input a rendition, against the one reference). */
type Kind = "pair" | "ladder"

interface Run {
  readonly result: ScoreResult | LadderResult
  /** CPU of the score itself (its ffmpeg and ffprobe children included), without the process's start. */
  readonly cpuSeconds: number
}

/** CPU seconds of this process's waited-for children (ffmpeg, ffprobe): /proc's cutime + cstime, in ticks of 1/100 s. */
const childrenCpuSeconds = (): number => {
  const fields = readFileSync("/proc/self/stat", "utf8").split(") ")[1]?.split(" ") ?? []
  return (Number(fields[13] ?? 0) + Number(fields[14] ?? 0)) / 100
}

/**
 * One child scoring the title, or its segment [first, first + count), per frame: `distorted` is
 * a pair's distorted input, or a ladder's renditions.
 */
const spawnRun = (kind: Kind, reference: string, distorted: ReadonlyArray<string>, first: number, count: number) =>
  Bun.spawn([process.execPath, import.meta.filename, kind, String(first), String(count), reference, ...distorted], {
    env: { ...process.env },
    stdout: "pipe",
    stderr: "inherit"
  })

const finish = async (child: ReturnType<typeof spawnRun>): Promise<Run> => {
  const [text, code] = await Promise.all([new Response(child.stdout).text(), child.exited])
  if (code !== 0) throw new Error("a bench run failed")
  return JSON.parse(text) as Run
}

const lossless = { precision: parsePrecision("lossless"), perFrame: true }

/** The per-frame values of a run (a ladder's: every rendition's), and those of the segments merged as the controller merges them. */
const framesOf = (kind: Kind, result: ScoreResult | LadderResult | undefined): unknown =>
  kind === "pair"
    ? (result as ScoreResult | undefined)?.frames
    : (result as LadderResult | undefined)?.renditions.map((rendition) => rendition.frames)
const merge = (kind: Kind, pieces: ReadonlyArray<Run>): ScoreResult | LadderResult | undefined =>
  kind === "pair"
    ? mergeSegmentResults(
        pieces.map((piece) => piece.result as ScoreResult),
        lossless
      )
    : mergeLadderSegments(
        pieces.map((piece) => piece.result as LadderResult),
        lossless
      )

/** Scores the title whole, then in segments at once and one after the other; prints the figures. */
const benchSplit = async (kind: Kind, reference: string, distorted: ReadonlyArray<string>): Promise<void> => {
  let started = performance.now()
  const whole = await finish(spawnRun(kind, reference, distorted, 0, 0))
  const wholeWall = (performance.now() - started) / 1000
  const size = frames / segments
  started = performance.now()
  const pieces = await Promise.all(
    Array.from({ length: segments }, (_, k) => finish(spawnRun(kind, reference, distorted, k * size, size)))
  )
  const splitWall = (performance.now() - started) / 1000
  // One after the other too: the CPU of each without the others contending for the same cores.
  const alone: Array<Run> = []
  for (let k = 0; k < segments; k++) alone.push(await finish(spawnRun(kind, reference, distorted, k * size, size)))
  const aloneCpu = alone.reduce((sum, piece) => sum + piece.cpuSeconds, 0)
  if (JSON.stringify(framesOf(kind, merge(kind, pieces))) !== JSON.stringify(framesOf(kind, whole.result)))
    throw new Error(`the merged segments of the ${kind} differ from the one pass`)
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

export const benchSegments = async (): Promise<void> => {
  const { reference, distorted, lowRung } = await title()
  console.log(
    `segment jobs: ${frames} frames of ${width}x${height}, H.264 .mp4 with a keyframe every ${gop} (${frames / gop} GOPs) against its raw reference; ${segments} segments of ${frames / segments} frames (${frames / segments / gop} GOPs each), one process each, at once`
  )
  await benchSplit("pair", reference, [distorted])
  console.log(
    `segment ladder jobs: the same title and segments, a ladder of 2 renditions (that .mp4 and a ${low.width}x${low.height} .mp4 with the same keyframes, scaled back); CPU per title frame`
  )
  await benchSplit("ladder", reference, [distorted, lowRung])
}

if (import.meta.main && process.argv.length > 2) {
  const [kind, firstText, countText, reference = "", ...distorted] = process.argv.slice(2)
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
  const options = { width, height, pixel_format: "420", bitdepth: 8, per_frame: true }
  const score = (segment: Segment | undefined): Promise<ScoreResult | LadderResult> =>
    kind === "ladder"
      ? runtime.runPromise(
          parseLadderRequest({
            reference,
            renditions: distorted.map((path, index) => ({ label: `r${index}`, distorted: path })),
            options
          }).pipe(
            // As a node scores a ladder's segment: every rendition over the same frames.
            Effect.map((ladder) => ({
              ...ladder,
              renditions: ladder.renditions.map((rendition) => ({ ...rendition, job: { ...rendition.job, segment } }))
            })),
            Effect.flatMap((ladder) => Effect.flatMap(Scorer, (scorer) => scoreLadderInputs(scorer, ladder))),
            Effect.orDie
          )
        )
      : runtime.runPromise(
          parseScoreRequest({ reference, distorted: distorted[0], options }).pipe(
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
