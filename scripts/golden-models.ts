/**
 * Regenerates the golden outputs of the built-in models beyond the fixture set's default one
 * (modules/scorer/test/golden-models/<pair>.<run>.json), with the reference implementation's
 * command-line tool (libvmaf 3.2.0) as the yardstick: every fixture pair of the fixture set,
 * each model by the very file the executables embed (`--model path=...`), and for the runs
 * marked synthetic (the vmaf_v1.0.16 models) the synthetic high-resolution pairs too
 * (modules/scorer/test/synthetic.ts, written to a scratch directory, never stored). The tool is
 * only a yardstick for tests; nothing the project ships calls it.
 *
 *   npx bun scripts/golden-models.ts [path/to/vmaf] [path/to/fixtures] [run name...]
 *
 * Defaults: SVC_REFERENCE_VMAF, the repository's test/fixtures (`npm run fixtures` restores the
 * raw pairs), every run.
 * The JSON is the tool's own output (--json) without its timing field ("fps"), so a rerun on the
 * same inputs writes the same bytes. Where the tool fails (it crashes on frames too small for
 * speed_chroma), the file records that: {"reference_failed": "<its exit status and stderr>"}.
 * Each run is the command
 *   vmaf -r REF -d DIS -w W -h H -p PIXFMT -b BITDEPTH --model path=MODEL.json[:name=MODEL]... --json -o OUT -q
 */
import { $ } from "bun"
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { goldenModelRuns } from "../modules/scorer/test/golden-models.ts"
import { syntheticPairs, writeSyntheticPair } from "../modules/scorer/test/synthetic.ts"

const root = join(import.meta.dirname, "..")
const tool = process.argv[2] ?? process.env.SVC_REFERENCE_VMAF
if (!tool) throw new Error("the reference vmaf executable: give its path (argument or SVC_REFERENCE_VMAF)")
const fixturesDir = process.argv[3] ?? join(root, "test", "fixtures")
const only = process.argv.slice(4)
const modelsDir = join(root, "modules", "scorer", "models")
const outDir = join(root, "modules", "scorer", "test", "golden-models")

interface Pair {
  readonly name: string
  readonly width: number
  readonly height: number
  readonly pixel_format: string
  readonly bitdepth: number
  readonly reference: string
  readonly distorted: string
}

const scratch = mkdtempSync(join(tmpdir(), "svc-golden-models-"))
const fixtures: ReadonlyArray<Pair> = readFileSync(join(fixturesDir, "index.jsonl"), "utf8")
  .split("\n")
  .filter((line) => line.trim() !== "")
  .map((line) => JSON.parse(line) as Pair)
  .map((entry) => ({
    ...entry,
    reference: join(fixturesDir, `${entry.name}.ref.yuv`),
    distorted: join(fixturesDir, `${entry.name}.dis.yuv`)
  }))
let synthetic: ReadonlyArray<Pair> | undefined
const syntheticInputs = (): ReadonlyArray<Pair> => {
  synthetic ??= syntheticPairs.map((pair) => {
    const reference = join(scratch, `${pair.name}.ref.yuv`)
    const distorted = join(scratch, `${pair.name}.dis.yuv`)
    writeSyntheticPair(pair, reference, distorted)
    return { ...pair, reference, distorted }
  })
  return synthetic
}

mkdirSync(outDir, { recursive: true })
try {
  for (const run of goldenModelRuns) {
    if (only.length > 0 && !only.includes(run.name)) continue
    // One model: its outputs are named "vmaf", as the tool names a single model. Several: by name.
    const modelArgs = run.models.flatMap((model) => [
      "--model",
      `path=${join(modelsDir, `${model}.json`)}${run.models.length > 1 ? `:name=${model}` : ""}`
    ])
    for (const pair of [...fixtures, ...(run.synthetic ? syntheticInputs() : [])]) {
      const output = join(scratch, "out.json")
      rmSync(output, { force: true })
      const done =
        await $`${tool} -r ${pair.reference} -d ${pair.distorted} -w ${pair.width} -h ${pair.height} -p ${pair.pixel_format} -b ${pair.bitdepth} ${modelArgs} --json -o ${output} -q`
          .quiet()
          .nothrow()
      const target = join(outDir, `${pair.name}.${run.name}.json`)
      if (done.exitCode === 0) {
        const { fps: _fps, ...result } = JSON.parse(readFileSync(output, "utf8")) as Record<string, unknown>
        writeFileSync(target, `${JSON.stringify(result)}\n`)
      } else {
        const reason = `exit ${done.exitCode}: ${done.stderr.toString().trim()}`
        writeFileSync(target, `${JSON.stringify({ reference_failed: reason })}\n`)
      }
      console.log(`wrote ${target}`)
    }
  }
} finally {
  rmSync(scratch, { recursive: true, force: true })
}
