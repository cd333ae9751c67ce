/**
 * Records the golden of the shot test (modules/scorer/test/golden-shots/three_sources.json): the
 * three-source clip of modules/scorer/test/shots-clips.ts, made with this machine's ffmpeg, scored
 * by the reference implementation's command-line tool:
 *
 *   vmaf -r three_sources.ref.yuv -d three_sources.dis.yuv -w 320 -h 240 -p 420 -b 8 --json -q -o OUT
 *
 * Usage: bun scripts/golden-shots.ts [REFERENCE_VMAF] (default: SVC_REFERENCE_VMAF). The output keeps the per-frame scores, the command, the tool's version line, and
 * the MD5 sums of the two raw files (the test checks its own clip against them first).
 */
import { spawnSync } from "bun"
import { readFileSync, writeFileSync } from "node:fs"
import { join, resolve } from "node:path"
import { clipGeometry, md5Of, writeThreeSources } from "../modules/scorer/test/shots-clips.ts"
import { scratchDir } from "../test/support/media.ts"

const root = join(import.meta.dirname, "..")
const toolArgument = process.argv[2] ?? process.env.SVC_REFERENCE_VMAF
if (!toolArgument) throw new Error("the reference vmaf executable: give its path (argument or SVC_REFERENCE_VMAF)")
const vmaf = resolve(toolArgument)
const scratch = scratchDir("svc-golden-shots-")
try {
  const clip = await writeThreeSources(scratch.dir)
  const output = join(scratch.dir, "out.json")
  const args = [
    ...["-r", clip.reference, "-d", clip.distorted],
    ...["-w", String(clipGeometry.width), "-h", String(clipGeometry.height)],
    ...["-p", clipGeometry.pixel_format, "-b", String(clipGeometry.bitdepth), "--json", "-q", "-o", output]
  ]
  const run = spawnSync([vmaf, ...args], { stdout: "pipe", stderr: "pipe" })
  if (run.exitCode !== 0) throw new Error(`vmaf failed: ${run.stderr.toString()}`)
  const version = spawnSync([vmaf, "--version"], { stdout: "pipe", stderr: "pipe" })
  const report = JSON.parse(readFileSync(output, "utf8")) as {
    frames: ReadonlyArray<{ frameNum: number; metrics: { vmaf: number } }>
  }
  const golden = {
    command: `vmaf ${args.join(" ").replaceAll(`${scratch.dir}/`, "").replace("out.json", "OUT")}`,
    reference: `${version.stdout.toString()}${version.stderr.toString()}`.trim(),
    reference_md5: md5Of(clip.reference),
    distorted_md5: md5Of(clip.distorted),
    vmaf: report.frames.map((frame) => frame.metrics.vmaf)
  }
  const target = join(root, "modules", "scorer", "test", "golden-shots", "three_sources.json")
  writeFileSync(target, `${JSON.stringify(golden, null, 2)}\n`)
  console.log(`wrote ${target} (${golden.vmaf.length} frames)`)
} finally {
  scratch.remove()
}
