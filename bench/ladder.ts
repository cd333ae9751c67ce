/**
 * Ladder bench (issue 18): 6 renditions of the generated 1080p reference (H.264 and HEVC at
 * 1080p, 720p, 540p and 360p, made once with ffmpeg) scored as one ladder against 6 separate svc
 * scores of the same pairs, and against 6 runs of the reference vmaf executable on the
 * renditions decoded and scaled to 1080p YUV beforehand (its decoding is not counted; svc's is).
 * Two references: the raw YUV, and the same frames as a lossless FFV1 .mkv mezzanine (decoded
 * once by the ladder, 6 times by separate scores). Runs alternate, SVC_BENCH_RUNS times each
 * (default 3); medians printed. Each svc run is its own process (bench/ladder-run.ts).
 */
import { spawnSync } from "bun"
import { existsSync } from "node:fs"
import { dirname, join, resolve } from "node:path"
import { frames, generatePair, height, width } from "./pair.ts"
import { referenceAbsence, referenceVmaf } from "./reference-tool.ts"

const root = join(import.meta.dirname, "..")
const modelDir = resolve(process.env.SVC_MODEL_DIR ?? join(root, "modules/scorer/models"))
const runs = Number(process.env.SVC_BENCH_RUNS ?? 3)
const threads = 2

const ffmpeg = (args: ReadonlyArray<string>) => {
  const run = spawnSync(["ffmpeg", "-hide_banner", "-nostdin", "-v", "error", ...args], { stderr: "pipe" })
  if (run.exitCode !== 0) throw new Error(`ffmpeg ${args.join(" ")}: ${run.stderr.toString()}`)
}

const rungs = [
  { name: "1080p-h264-crf23", size: "1920:1080", codec: ["-c:v", "libx264", "-preset", "veryfast", "-crf", "23"] },
  { name: "1080p-h264-crf30", size: "1920:1080", codec: ["-c:v", "libx264", "-preset", "veryfast", "-crf", "30"] },
  { name: "720p-h264-crf26", size: "1280:720", codec: ["-c:v", "libx264", "-preset", "veryfast", "-crf", "26"] },
  { name: "540p-h264-crf26", size: "960:540", codec: ["-c:v", "libx264", "-preset", "veryfast", "-crf", "26"] },
  {
    name: "720p-hevc-crf28",
    size: "1280:720",
    codec: ["-c:v", "libx265", "-preset", "ultrafast", "-crf", "28", "-x265-params", "log-level=error"]
  },
  { name: "360p-h264-crf26", size: "640:360", codec: ["-c:v", "libx264", "-preset", "veryfast", "-crf", "26"] }
]

/** The renditions (.mp4), their 1080p YUV decodes for the reference executable, and the FFV1 mezzanine. */
const ladderMedia = (reference: string) => {
  const dir = dirname(reference)
  const raw = ["-f", "rawvideo", "-pix_fmt", "yuv420p", "-s", `${width}x${height}`, "-r", "24", "-i", reference]
  const mezzanine = join(dir, "ladder-mezzanine.mkv")
  if (!existsSync(mezzanine)) ffmpeg([...raw, "-c:v", "ffv1", "-y", mezzanine])
  const made = rungs.map((rung) => {
    const encoded = join(dir, `ladder-${rung.name}.mp4`)
    const decoded = join(dir, `ladder-${rung.name}.yuv`)
    if (!existsSync(encoded))
      ffmpeg([...raw, "-vf", `scale=${rung.size}`, ...rung.codec, "-pix_fmt", "yuv420p", "-y", encoded])
    if (!existsSync(decoded))
      ffmpeg([
        "-i",
        encoded,
        "-vf",
        `scale=${width}:${height}:flags=bicubic`,
        "-fps_mode",
        "passthrough",
        "-pix_fmt",
        "yuv420p",
        "-f",
        "rawvideo",
        "-y",
        decoded
      ])
    return { encoded, decoded }
  })
  return { mezzanine, renditions: made }
}

interface Sample {
  readonly seconds: number
  readonly cpuSeconds: number
  readonly scores: ReadonlyArray<number>
}

const svcRun = (mode: "ladder" | "separate", reference: string, renditions: ReadonlyArray<string>): Sample => {
  const child = spawnSync(
    [process.execPath, join(import.meta.dirname, "ladder-run.ts"), mode, reference, String(threads), ...renditions],
    { env: { ...process.env }, stderr: "inherit" }
  )
  if (child.exitCode !== 0) throw new Error(`ladder bench (${mode}) failed`)
  return JSON.parse(child.stdout.toString()) as Sample
}

const referenceRuns = (reference: string, decoded: ReadonlyArray<string>): Sample => {
  const started = performance.now()
  let cpu = 0
  for (const distorted of decoded) {
    const run = spawnSync(
      [
        referenceVmaf,
        "-r",
        reference,
        "-d",
        distorted,
        "-w",
        String(width),
        "-h",
        String(height),
        "-p",
        "420",
        "-b",
        "8",
        "-m",
        `path=${join(modelDir, "vmaf_v0.6.1.json")}`,
        "--threads",
        String(threads),
        "-q"
      ],
      { stdout: "ignore", stderr: "pipe" }
    )
    if (run.exitCode !== 0) throw new Error(`reference vmaf failed: ${run.stderr.toString()}`)
    cpu += Number(run.resourceUsage?.cpuTime.user ?? 0) / 1e6 + Number(run.resourceUsage?.cpuTime.system ?? 0) / 1e6
  }
  return { seconds: (performance.now() - started) / 1000, cpuSeconds: cpu, scores: [] }
}

const median = (values: ReadonlyArray<number>) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN
}

export const benchLadder = (): void => {
  const pair = generatePair()
  const { mezzanine, renditions } = ladderMedia(pair.reference)
  const encoded = renditions.map((rendition) => rendition.encoded)
  const withReference = referenceAbsence === undefined
  console.log(
    `ladder: 6 renditions (${rungs.map((rung) => rung.name).join(", ")}) of a ${width}x${height} reference (${frames} frames), threads=${threads}, median of ${runs} alternating runs`
  )
  if (!withReference) console.log(`  reference executable columns skipped: ${referenceAbsence}`)
  for (const [label, reference] of [
    ["raw YUV reference", pair.reference],
    ["FFV1 .mkv reference", mezzanine]
  ] as const) {
    const ladder: Array<Sample> = []
    const separate: Array<Sample> = []
    const vmaf: Array<Sample> = []
    for (let run = 0; run < runs; run++) {
      const order = run % 2 === 0 ? (["ladder", "separate"] as const) : (["separate", "ladder"] as const)
      for (const mode of order) (mode === "ladder" ? ladder : separate).push(svcRun(mode, reference, encoded))
      if (withReference && reference === pair.reference)
        vmaf.push(
          referenceRuns(
            pair.reference,
            renditions.map((rendition) => rendition.decoded)
          )
        )
    }
    const [first] = ladder
    const [alone] = separate
    if (first && alone && JSON.stringify(first.scores) !== JSON.stringify(alone.scores))
      throw new Error(`the ladder and the separate scores differ: ${first.scores} vs ${alone.scores}`)
    const wall = (samples: ReadonlyArray<Sample>) => median(samples.map((sample) => sample.seconds))
    const cpu = (samples: ReadonlyArray<Sample>) => median(samples.map((sample) => sample.cpuSeconds))
    let line = `  ${label}: ladder ${wall(ladder).toFixed(2)} s (cpu ${cpu(ladder).toFixed(2)} s)  6 separate svc scores ${wall(separate).toFixed(2)} s (cpu ${cpu(separate).toFixed(2)} s)  ratio wall ${(wall(ladder) / wall(separate)).toFixed(2)}  cpu ${(cpu(ladder) / cpu(separate)).toFixed(2)}`
    if (vmaf.length > 0)
      line += `  | 6 reference vmaf runs (pre-decoded YUV) ${wall(vmaf).toFixed(2)} s (cpu ${cpu(vmaf).toFixed(2)} s)  ratio ladder/reference wall ${(wall(ladder) / wall(vmaf)).toFixed(2)}  cpu ${(cpu(ladder) / cpu(vmaf)).toFixed(2)}`
    console.log(line)
    if (first) console.log(`    vmaf per rendition: ${first.scores.map((score) => score.toFixed(3)).join(", ")}`)
  }
}

if (import.meta.main) benchLadder()
