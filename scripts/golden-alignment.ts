/**
 * Records the golden of the alignment test (modules/inputs/test/golden-alignment/encodes.json):
 * the reference and encodes of modules/inputs/test/alignment-clips.ts, made with this machine's
 * ffmpeg, each cut by hand to the pairing it was made with (ffmpeg's select filter on the
 * reference and on the decoded encode, written as raw YUV) and scored by the reference
 * implementation's command-line tool:
 *
 *   vmaf -r NAME.ref.yuv -d NAME.dis.yuv -w 320 -h 240 -p 420 -b 8 --json -q -o OUT
 *
 * Usage: bun scripts/golden-alignment.ts [REFERENCE_VMAF] (default: SVC_REFERENCE_VMAF). The output
 * keeps, per encode, the per-frame scores, the hand cut's frames and the MD5 sums of the
 * reference and the encode (the test checks its own clips against them first), with the command
 * and the tool's version line.
 */
import { spawnSync } from "bun"
import { mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join, resolve } from "node:path"
import { clipSize, encodes, md5Of, writeEncode, writeReference } from "../modules/inputs/test/alignment-clips.ts"
import { ffmpegRun, scratchDir } from "../test/support/media.ts"

const root = join(import.meta.dirname, "..")
const toolArgument = process.argv[2] ?? process.env.SVC_REFERENCE_VMAF
if (!toolArgument) throw new Error("the reference vmaf executable: give its path (argument or SVC_REFERENCE_VMAF)")
const vmaf = resolve(toolArgument)

/** ffmpeg's select expression keeping exactly `frames` (input indices). */
const keeping = (frames: ReadonlyArray<number>) => {
  const runs: Array<[number, number]> = []
  for (const frame of frames) {
    const last = runs[runs.length - 1]
    if (last !== undefined && last[1] + 1 === frame) last[1] = frame
    else runs.push([frame, frame])
  }
  return `select='${runs.map(([from, to]) => `between(n\\,${from}\\,${to})`).join("+")}'`
}

const scratch = scratchDir("svc-golden-alignment-")
try {
  const reference = await writeReference(scratch.dir)
  const version = spawnSync([vmaf, "--version"], { stdout: "pipe", stderr: "pipe" })
  const args = (ref: string, dis: string, out: string) => [
    ...["-r", ref, "-d", dis, "-w", String(clipSize.width), "-h", String(clipSize.height)],
    ...["-p", "420", "-b", "8", "--json", "-q", "-o", out]
  ]
  const results = encodes.map((encode) => {
    const encoded = writeEncode(scratch.dir, reference, encode)
    const refCut = join(scratch.dir, `${encode.name}.ref.yuv`)
    const disCut = join(scratch.dir, `${encode.name}.dis.yuv`)
    const cut = (input: string, frames: ReadonlyArray<number>, output: string) =>
      ffmpegRun([
        "-i",
        input,
        "-vf",
        keeping(frames),
        "-fps_mode",
        "passthrough",
        "-f",
        "rawvideo",
        "-pix_fmt",
        "yuv420p",
        "-y",
        output
      ])
    cut(reference, encode.truth.reference, refCut)
    cut(encoded, encode.truth.distorted, disCut)
    const output = join(scratch.dir, `${encode.name}.json`)
    const run = spawnSync([vmaf, ...args(refCut, disCut, output)], { stdout: "pipe", stderr: "pipe" })
    if (run.exitCode !== 0) throw new Error(`vmaf failed: ${run.stderr.toString()}`)
    const report = JSON.parse(readFileSync(output, "utf8")) as {
      frames: ReadonlyArray<{ frameNum: number; metrics: { vmaf: number } }>
    }
    if (report.frames.length !== encode.truth.reference.length) throw new Error(`${encode.name}: frame count`)
    return [
      encode.name,
      {
        encode_md5: md5Of(encoded),
        reference_frames: encode.truth.reference,
        distorted_frames: encode.truth.distorted,
        vmaf: report.frames.map((frame) => frame.metrics.vmaf)
      }
    ] as const
  })
  const golden = {
    command: `vmaf ${args("NAME.ref.yuv", "NAME.dis.yuv", "OUT").join(" ")}`,
    cut: "ffmpeg -i INPUT -vf select='between(n\\,FIRST\\,LAST)+...' -fps_mode passthrough -f rawvideo -pix_fmt yuv420p NAME.SIDE.yuv",
    reference: `${version.stdout.toString()}${version.stderr.toString()}`.trim(),
    reference_md5: md5Of(reference),
    encodes: Object.fromEntries(results)
  }
  const dir = join(root, "modules", "inputs", "test", "golden-alignment")
  mkdirSync(dir, { recursive: true })
  const target = join(dir, "encodes.json")
  writeFileSync(target, `${JSON.stringify(golden, null, 2)}\n`)
  console.log(`wrote ${target} (${results.length} encodes)`)
} finally {
  scratch.remove()
}
