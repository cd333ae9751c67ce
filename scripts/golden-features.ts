/**
 * Regenerates the goldens of the extra features (modules/scorer/test/golden-features/*.json)
 * with the reference implementation's command-line tool, one run per fixture pair:
 *
 *   vmaf -r REF -d DIS -w W -h H -p PIXFMT -b BPC --no_prediction --json -q -o OUT \
 *        --feature float_vif --feature float_adm --feature float_motion --feature float_psnr \
 *        --feature ciede --feature psnr_hvs --feature cambi \
 *        --feature cambi=cambi_high_res_speedup=1080:cambi_max_val=17:cambi_vis_lum_threshold=0.06
 *
 * (the last: cambi with the options the vmaf_v1.0.16 models set, output
 * "cambi_hrs_1080_cmxv_17_vlt_0.06")
 *
 * Usage: bun scripts/golden-features.ts [REFERENCE_VMAF] [FIXTURE_DIR]
 * (defaults: SVC_REFERENCE_VMAF, and the repository's test/fixtures, whose raw pairs
 * `npm run fixtures` restores). Each output
 * keeps the per-frame metrics and the command's version line, not the videos.
 */
import { spawnSync } from "bun"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { goldenCambiModelOptions } from "../modules/scorer/index.ts"

export const goldenFeatureExtractors = [
  "float_vif",
  "float_adm",
  "float_motion",
  "float_psnr",
  "ciede",
  "psnr_hvs",
  "cambi"
] as const

const root = resolve(new URL("..", import.meta.url).pathname)
const toolArgument = process.argv[2] ?? process.env.SVC_REFERENCE_VMAF
if (!toolArgument) throw new Error("the reference vmaf executable: give its path (argument or SVC_REFERENCE_VMAF)")
const tool = resolve(toolArgument)
const fixtureDir = resolve(process.argv[3] ?? join(root, "test/fixtures"))
const outDir = join(root, "modules/scorer/test/golden-features")

interface FixtureEntry {
  readonly name: string
  readonly width: number
  readonly height: number
  readonly pixel_format: string
  readonly bitdepth: number
}

const versionRun = spawnSync([tool, "--version"])
const version = `${versionRun.stdout.toString()}${versionRun.stderr.toString()}`.trim()
const work = mkdtempSync(join(tmpdir(), "svc-golden-"))
try {
  const entries = readFileSync(join(fixtureDir, "index.jsonl"), "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as FixtureEntry)
  for (const entry of entries) {
    const out = join(work, `${entry.name}.json`)
    const args = [
      ...["-r", join(fixtureDir, `${entry.name}.ref.yuv`), "-d", join(fixtureDir, `${entry.name}.dis.yuv`)],
      ...["-w", `${entry.width}`, "-h", `${entry.height}`, "-p", entry.pixel_format, "-b", `${entry.bitdepth}`],
      ...["--no_prediction", "--json", "-q", "-o", out],
      ...goldenFeatureExtractors.flatMap((feature) => ["--feature", feature]),
      "--feature",
      `cambi=${Object.entries(goldenCambiModelOptions)
        .map(([key, value]) => `${key}=${value}`)
        .join(":")}`
    ]
    const run = spawnSync([tool, ...args])
    if (run.exitCode !== 0) throw new Error(`${entry.name}: the reference failed: ${run.stderr.toString()}`)
    const json = JSON.parse(readFileSync(out, "utf8")) as { frames: { frameNum: number; metrics: object }[] }
    const golden = {
      reference: version,
      command: `vmaf ${args.map((a) => a.replace(fixtureDir, "FIXTURES").replace(out, "OUT")).join(" ")}`,
      features: goldenFeatureExtractors,
      frames: json.frames.map((frame) => frame.metrics)
    }
    writeFileSync(join(outDir, `${entry.name}.json`), `${JSON.stringify(golden)}\n`)
    console.log(`${entry.name}: ${json.frames.length} frames`)
  }
} finally {
  rmSync(work, { recursive: true, force: true })
}
