/**
 * Regenerates the golden outputs of the built-in models beyond the fixture set's default one
 * (modules/scorer/test/golden-models/<fixture>.<run>.json), with the reference implementation's
 * command-line tool (libvmaf 3.2.0) as the yardstick: every fixture pair of the fixture set,
 * each model by the very file the executables embed (`--model path=...`). The tool is only a
 * yardstick for tests; nothing the project ships calls it.
 *
 *   npx bun scripts/golden-models.ts [path/to/vmaf] [path/to/fixtures]
 *
 * Defaults: ../shared/reference/vmaf and ../shared/fixtures beside the repository. The JSON is
 * the tool's own output (--json) without its timing field ("fps"), so a rerun on the same
 * inputs writes the same bytes.
 */
import { $ } from "bun"
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { goldenModelRuns } from "../modules/scorer/test/golden-models.ts"

const root = join(import.meta.dirname, "..")
const shared = join(root, "..", "shared")
const tool = process.argv[2] ?? join(shared, "reference", "vmaf")
const fixturesDir = process.argv[3] ?? join(shared, "fixtures")
const modelsDir = join(root, "modules", "scorer", "models")
const outDir = join(root, "modules", "scorer", "test", "golden-models")

interface FixtureEntry {
  readonly name: string
  readonly width: number
  readonly height: number
  readonly pixel_format: string
  readonly bitdepth: number
}

const fixtures: ReadonlyArray<FixtureEntry> = readFileSync(join(fixturesDir, "index.jsonl"), "utf8")
  .split("\n")
  .filter((line) => line.trim() !== "")
  .map((line) => JSON.parse(line) as FixtureEntry)

mkdirSync(outDir, { recursive: true })
const scratch = mkdtempSync(join(tmpdir(), "svc-golden-models-"))
try {
  for (const run of goldenModelRuns) {
    // One model: its outputs are named "vmaf", as the tool names a single model. Several: by name.
    const modelArgs = run.models.flatMap((model) => [
      "--model",
      `path=${join(modelsDir, `${model}.json`)}${run.models.length > 1 ? `:name=${model}` : ""}`
    ])
    for (const fixture of fixtures) {
      const output = join(scratch, "out.json")
      await $`${tool} -r ${join(fixturesDir, `${fixture.name}.ref.yuv`)} -d ${join(fixturesDir, `${fixture.name}.dis.yuv`)} -w ${fixture.width} -h ${fixture.height} -p ${fixture.pixel_format} -b ${fixture.bitdepth} ${modelArgs} --json -o ${output} -q`.quiet()
      const { fps: _fps, ...result } = JSON.parse(readFileSync(output, "utf8")) as Record<string, unknown>
      const target = join(outDir, `${fixture.name}.${run.name}.json`)
      writeFileSync(target, `${JSON.stringify(result)}\n`)
      console.log(`wrote ${target}`)
    }
  }
} finally {
  rmSync(scratch, { recursive: true, force: true })
}
