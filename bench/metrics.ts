/**
 * `npm run bench` (or `npm run bench -- metrics`): the cost of each extra metric per 1920x1080
 * 8-bit 4:2:0 frame next to VMAF's, svc's backends side by side with the reference tools when
 * given (yardsticks only: SVC_REFERENCE_FFMPEG, an FFmpeg 7.1.5 with its xpsnr filter;
 * SVC_REFERENCE_SSIMULACRA2, the ssimulacra2 tool; unset: svc's rows alone, saying so).
 *
 * svc runs as `scorer_cli` (the native library's C driver, one thread) with VMAF alone, then
 * with each extra feature: a metric's cost is the difference of CPU time per frame. The
 * reference ffmpeg runs `xpsnr` on the same Y4M pair (its cost includes reading the Y4M); the
 * ssimulacra2 tool scores each frame pair from PNGs written beforehand (its cost includes
 * decoding two PNGs, svc's the YUV -> RGB conversion). Medians of SVC_BENCH_RUNS runs (default 3).
 */
import { spawnSync } from "bun"
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { NativeCpu, openNativeLibrary } from "../modules/scorer/index.ts"
import { writeMetricPair } from "../local/metric-pairs.ts"
import { rgbPng } from "../local/png.ts"

const root = resolve(import.meta.dirname, "..")
const scorerCli = join(root, "modules/scorer/native/build/scorer_cli")
const model = join(root, "modules/scorer/models/vmaf_v0.6.1.json")
const referenceFfmpeg = process.env.SVC_REFERENCE_FFMPEG ? resolve(process.env.SVC_REFERENCE_FFMPEG) : ""
const referenceSsimulacra2 = process.env.SVC_REFERENCE_SSIMULACRA2 ? resolve(process.env.SVC_REFERENCE_SSIMULACRA2) : ""
const workDir = join(process.env.TMPDIR ?? tmpdir(), "svc-bench")
const runs = Number(process.env.SVC_BENCH_RUNS ?? 3)
const frames = 6
const width = 1920
const height = 1080

/** CPU seconds (user + system) of one run of the command; it must succeed. */
const cpuSeconds = (command: ReadonlyArray<string>, cwd = workDir): number => {
  const child = spawnSync([...command], { cwd, stdout: "pipe", stderr: "pipe" })
  if (child.exitCode !== 0) throw new Error(`${command.join(" ")} failed: ${child.stderr.toString().slice(0, 400)}`)
  return Number(child.resourceUsage.cpuTime.total) / 1e6
}

const median = (values: ReadonlyArray<number>): number => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN
}

const medianOf = (command: ReadonlyArray<string>, cwd?: string) =>
  median(Array.from({ length: runs }, () => cpuSeconds(command, cwd)))

const ms = (seconds: number) => `${(seconds * 1000).toFixed(1).padStart(8)} ms`

export const benchMetrics = (): void => {
  mkdirSync(workDir, { recursive: true })
  const reference = join(workDir, "metrics_1080_ref.y4m")
  const distorted = join(workDir, "metrics_1080_dis.y4m")
  if (!existsSync(reference) || !existsSync(distorted))
    writeMetricPair(
      { name: "bench", width, height, pixel_format: "420", bitdepth: 8, frame_rate: 24, frames },
      reference,
      distorted
    )
  console.log(
    `metrics: CPU time per ${width}x${height} 8-bit 4:2:0 frame (${frames} frames, median of ${runs}, one thread)`
  )
  const svc = (backend: string, mask: number) =>
    medianOf([scorerCli, model, reference, distorted, "0", "0", "0", "0", "1", backend, String(mask)]) / frames
  // Every backend this CPU runs.
  const library = openNativeLibrary()
  const backends = (["scalar", "avx2", "avx512"] as const).filter(
    (backend) => backend === "scalar" || library.symbols.svc_cpu_supported(NativeCpu[backend]) !== 0
  )
  library.close()
  for (const backend of backends) {
    const vmaf = svc(backend, 0)
    const xpsnr = svc(backend, 1024) - vmaf
    const ssimulacra2 = svc(backend, 2048) - vmaf
    console.log(
      `  svc ${backend.padEnd(6)}  vmaf_v0.6.1 ${ms(vmaf)}   xpsnr ${ms(xpsnr)}   ssimulacra2 ${ms(ssimulacra2)}`
    )
  }
  if (referenceFfmpeg && existsSync(referenceFfmpeg)) {
    const xpsnr =
      medianOf([
        referenceFfmpeg,
        "-nostats",
        "-i",
        reference,
        "-i",
        distorted,
        "-lavfi",
        "[0:v][1:v]xpsnr",
        "-f",
        "null",
        "-"
      ]) / frames
    console.log(`  FFmpeg 7.1.5 xpsnr filter (Y4M reading included)          xpsnr ${ms(xpsnr)}`)
  } else {
    console.log("  (no reference ffmpeg: set SVC_REFERENCE_FFMPEG to an FFmpeg 7.1.5 with the xpsnr filter)")
  }
  if (referenceSsimulacra2 && referenceFfmpeg && existsSync(referenceSsimulacra2) && existsSync(referenceFfmpeg)) {
    // Frame 0 of each side as an RGB PNG, converted as svc converts (scripts/record-metric-golden.ts).
    const rgb = (input: string, output: string) =>
      cpuSeconds([
        referenceFfmpeg,
        "-loglevel",
        "error",
        "-y",
        "-i",
        input,
        "-frames:v",
        "1",
        "-vf",
        "scale=in_color_matrix=bt709:in_range=tv:out_range=pc:flags=bicubic+accurate_rnd+full_chroma_int,format=rgb24",
        "-f",
        "rawvideo",
        output
      ])
    rgb(reference, join(workDir, "metrics_ref.rgb"))
    rgb(distorted, join(workDir, "metrics_dis.rgb"))
    writeFileSync(
      join(workDir, "metrics_ref.png"),
      rgbPng(readFileSync(join(workDir, "metrics_ref.rgb")), width, height)
    )
    writeFileSync(
      join(workDir, "metrics_dis.png"),
      rgbPng(readFileSync(join(workDir, "metrics_dis.rgb")), width, height)
    )
    const tool = medianOf([referenceSsimulacra2, "metrics_ref.png", "metrics_dis.png"])
    console.log(`  ssimulacra2 tool (two PNGs decoded)                 ssimulacra2 ${ms(tool)}`)
  } else {
    console.log(
      "  (no reference ssimulacra2: set SVC_REFERENCE_SSIMULACRA2, and SVC_REFERENCE_FFMPEG for its RGB frames)"
    )
  }
}

if (import.meta.main) benchMetrics()
