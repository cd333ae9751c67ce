/**
 * Records the golden values of xpsnr and ssimulacra2 (modules/scorer/test/golden-metrics/) with
 * the reference tools, on the generated pairs of local/metric-pairs.ts:
 *
 *   bun scripts/record-metric-golden.ts --ffmpeg PATH/TO/ffmpeg-7.1.5/ffmpeg \
 *     --ssimulacra2 PATH/TO/ssimulacra2
 *
 * FFmpeg 7.1.5 with its xpsnr filter (the reference first) gives each frame's XPSNR (its stats
 * file, 4 decimals) and the summary (its log line); the same ffmpeg turns each Y4M frame into
 * 8-bit RGB with the conversion svc pins for ssimulacra2, written here as a plain PNG (no colour
 * chunks: sRGB), and the ssimulacra2 tool (SSIMULACRA 2.1) scores each frame pair. Every file
 * records the exact commands. Tests read only the JSON written here, never the tools.
 */
import { spawnSync } from "node:child_process"
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { metricPairs, writeMetricPair } from "../local/metric-pairs.ts"
import { rgbPng } from "../local/png.ts"

const argument = (name: string): string => {
  const at = process.argv.indexOf(`--${name}`)
  const value = at >= 0 ? process.argv[at + 1] : undefined
  if (!value) throw new Error(`usage: bun scripts/record-metric-golden.ts --ffmpeg FFMPEG --ssimulacra2 SSIMULACRA2`)
  return value
}
const ffmpeg = argument("ffmpeg")
const ssimulacra2 = argument("ssimulacra2")

/** The conversion svc pins for ssimulacra2 (feature/ssimulacra2.c). */
export const rgbFilter =
  "scale=in_color_matrix=bt709:in_range=tv:out_range=pc:flags=bicubic+accurate_rnd+full_chroma_int,format=rgb24"

const run = (command: ReadonlyArray<string>, cwd: string): { stdout: string; stderr: string } => {
  const [file, ...args] = command
  const result = spawnSync(file ?? "", args, { cwd, encoding: "utf8", maxBuffer: 64 << 20 })
  if (result.status !== 0) throw new Error(`${command.join(" ")} failed: ${result.stderr}`)
  return { stdout: result.stdout, stderr: result.stderr }
}

const parseXpsnr = (line: string) => {
  const value = (plane: string) => {
    const text = new RegExp(`${plane}: +(inf|-?[0-9.]+)`).exec(line)?.[1]
    return text === "inf" ? null : Number(text)
  }
  return { xpsnr_y: value("y"), xpsnr_u: value("u"), xpsnr_v: value("v") }
}

const version = run([ffmpeg, "-hide_banner", "-version"], ".").stdout.split("\n")[0] ?? ""
const work = mkdtempSync(join(tmpdir(), "svc-metric-golden-"))
const out = join(import.meta.dirname, "..", "modules", "scorer", "test", "golden-metrics")
mkdirSync(out, { recursive: true })
try {
  for (const pair of metricPairs) {
    const reference = `${pair.name}.ref.y4m`
    const distorted = `${pair.name}.dis.y4m`
    writeMetricPair(pair, join(work, reference), join(work, distorted))
    const xpsnrCommand = [
      ffmpeg,
      "-hide_banner",
      "-nostats",
      "-i",
      reference,
      "-i",
      distorted,
      "-lavfi",
      "[0:v][1:v]xpsnr=stats_file=xpsnr.txt",
      "-f",
      "null",
      "-"
    ]
    const { stderr } = run(xpsnrCommand, work)
    const stats = readFileSync(join(work, "xpsnr.txt"), "utf8").split("\n")
    const frames = stats.filter((line) => line.startsWith("n:")).map(parseXpsnr)
    const summaryLine = stderr.split("\n").find((line) => line.includes("XPSNR  y:")) ?? ""
    const summary = parseXpsnr(summaryLine.replace("XPSNR  y:", "y:"))

    const ssimulacra2Commands: Array<string> = []
    const ssimulacra2Frames: Array<number> = []
    const rgbCommand = (side: string) => [
      ffmpeg,
      "-hide_banner",
      "-loglevel",
      "error",
      "-y",
      "-i",
      side,
      "-vf",
      rgbFilter
    ]
    const rgb = (side: string, file: string) => {
      run([...rgbCommand(side), "-f", "rawvideo", file], work)
      return readFileSync(join(work, file))
    }
    const refRgb = rgb(reference, "ref.rgb")
    const disRgb = rgb(distorted, "dis.rgb")
    const frameBytes = 3 * pair.width * pair.height
    for (let frame = 0; frame < pair.frames; frame++) {
      const slice = (bytes: Buffer) => bytes.subarray(frame * frameBytes, (frame + 1) * frameBytes)
      writeFileSync(join(work, `ref.${frame}.png`), rgbPng(slice(refRgb), pair.width, pair.height))
      writeFileSync(join(work, `dis.${frame}.png`), rgbPng(slice(disRgb), pair.width, pair.height))
      const command = [ssimulacra2, `ref.${frame}.png`, `dis.${frame}.png`]
      ssimulacra2Frames.push(Number(run(command, work).stdout.trim()))
      if (frame === 0) ssimulacra2Commands.push(command.join(" ").replace(ssimulacra2, "ssimulacra2"))
    }
    const golden = {
      pair: pair.name,
      ffmpeg: version,
      ssimulacra2: "SSIMULACRA 2.1 (cloudinary/ssimulacra2 81feacf)",
      commands: {
        xpsnr: xpsnrCommand.join(" ").replace(ffmpeg, "ffmpeg"),
        rgb: `${rgbCommand(reference).join(" ").replace(ffmpeg, "ffmpeg")} -f rawvideo ref.rgb (and the distorted likewise), each frame written as an 8-bit RGB PNG`,
        ssimulacra2: `${ssimulacra2Commands[0]} (per frame)`
      },
      xpsnr_summary: summary,
      frames: frames.map((values, frame) => ({ ...values, ssimulacra2: ssimulacra2Frames[frame] ?? null }))
    }
    writeFileSync(join(out, `${pair.name}.json`), `${JSON.stringify(golden, null, 2)}\n`)
    console.log(`${pair.name}: ${frames.length} frames, XPSNR y ${summary.xpsnr_y}`)
  }
} finally {
  rmSync(work, { recursive: true, force: true })
}
