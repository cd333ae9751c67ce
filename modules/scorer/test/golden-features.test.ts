/**
 * Golden test of the extra features: every fixture pair scored through the Scorer service with
 * the extra extractors on, every per-frame value compared with the reference's output recorded
 * in golden-features/ (scripts/golden-features.ts regenerates it).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { fixtures, rawOptions } from "../../../test/support/fixtures.ts"
import {
  goldenCambiModelOptions,
  goldenCambiModelOutput,
  goldenFeatureExceptions,
  goldenFeatureOutputs,
  goldenTolerance
} from "../golden.ts"
import type { ExtraFeature } from "../request.ts"
import { scoreBody, scorerRuntime } from "./runtime.ts"

interface FeatureGolden {
  readonly reference: string
  readonly frames: ReadonlyArray<Readonly<Record<string, number | null>>>
}

const runtime = scorerRuntime()
afterAll(() => runtime.dispose())

const features = Object.keys(goldenFeatureOutputs) as ExtraFeature[]
const bound = (output: string, fixture: string) =>
  goldenFeatureExceptions.find((e) => e.output === output && e.fixture === fixture)?.bound ?? goldenTolerance

const worst = new Map<string, { diff: number; where: string }>()
afterAll(() => {
  const table = [...worst.entries()].map(
    ([o, { diff, where }]) => `${o.padEnd(12)} ${diff.toExponential(2)}  (${where})`
  )
  console.log(`largest |ours - reference| per extra output over all fixtures:\n${table.join("\n")}`)
})

describe.each(fixtures)("$name", (entry) => {
  it(`matches the reference per frame for ${features.join(", ")}`, async () => {
    const expected = JSON.parse(
      readFileSync(join(import.meta.dirname, "golden-features", `${entry.name}.json`), "utf8")
    ) as FeatureGolden
    expect(expected.reference).toBe("3.2.0")
    const result = await runtime.runPromise(
      scoreBody({
        reference: entry.reference,
        distorted: entry.distorted,
        options: { ...rawOptions(entry), features, per_frame: true }
      })
    )
    expect(result.frames).toHaveLength(expected.frames.length)
    for (const output of Object.values(goldenFeatureOutputs).flat()) {
      let largest = 0
      for (const [index, frame] of expected.frames.entries()) {
        const ours = result.frames[index]?.metrics[output]
        const theirs = frame[output]
        if (theirs === null) {
          // The reference prints a non-finite value (ciede2000 of identical frames) as null.
          expect(ours, `${output} frame ${index}: the reference's is infinite`).toBe(Number.POSITIVE_INFINITY)
          continue
        }
        expect(theirs, `golden ${output} frame ${index}`).toBeTypeOf("number")
        const diff = Math.abs((ours ?? Number.NaN) - (theirs ?? Number.NaN))
        expect(diff, `${output} frame ${index}: ours ${ours}, reference ${theirs}`).toBeLessThanOrEqual(
          bound(output, entry.name)
        )
        largest = Math.max(largest, diff)
      }
      if (largest >= (worst.get(output)?.diff ?? -1)) worst.set(output, { diff: largest, where: entry.name })
    }
  })
})

describe("golden exceptions", () => {
  it("each still needs its wider bound (none is stale)", async () => {
    for (const exception of goldenFeatureExceptions) {
      const entry = fixtures.find((f) => f.name === exception.fixture)
      expect(entry, exception.fixture).toBeDefined()
      if (!entry) continue
      const expected = JSON.parse(
        readFileSync(join(import.meta.dirname, "golden-features", `${entry.name}.json`), "utf8")
      ) as FeatureGolden
      const result = await runtime.runPromise(
        scoreBody({
          reference: entry.reference,
          distorted: entry.distorted,
          options: { ...rawOptions(entry), features, per_frame: true, frame_cnt: 1 }
        })
      )
      const diff = Math.abs(
        (result.frames[0]?.metrics[exception.output] ?? 0) - (expected.frames[0]?.[exception.output] ?? 0)
      )
      expect(diff, exception.why).toBeGreaterThan(goldenTolerance)
    }
  })
})

describe("cambi with the options of the vmaf_v1.0.16 models", () => {
  // Options reach an extractor only through a model file: a probe model reading cambi as the
  // v1.0.16 models do (Cambi_feature_cambi_score and their options) in place of adm2 of the
  // default model; its score means nothing, its cambi output is compared.
  const directory = mkdtempSync(join(tmpdir(), "svc-cambi-probe-"))
  const base = JSON.parse(readFileSync(join(import.meta.dirname, "..", "models", "vmaf_v0.6.1.json"), "utf8")) as {
    model_dict: { feature_names: string[]; feature_opts_dicts?: object[] }
  }
  const names = base.model_dict.feature_names
  base.model_dict.feature_names = names.map((name, i) => (i === 0 ? "Cambi_feature_cambi_score" : name))
  base.model_dict.feature_opts_dicts = names.map((_, i) => (i === 0 ? goldenCambiModelOptions : {}))
  writeFileSync(join(directory, "cambi_probe.json"), JSON.stringify(base))
  const probe = scorerRuntime({ SVC_MODEL_DIR: directory })
  afterAll(async () => {
    await probe.dispose()
    rmSync(directory, { recursive: true, force: true })
  })

  it.each(fixtures)(`$name: ${goldenCambiModelOutput} matches the reference per frame`, async (entry) => {
    const expected = JSON.parse(
      readFileSync(join(import.meta.dirname, "golden-features", `${entry.name}.json`), "utf8")
    ) as FeatureGolden
    const result = await probe.runPromise(
      scoreBody({
        reference: entry.reference,
        distorted: entry.distorted,
        model: "cambi_probe",
        options: { ...rawOptions(entry), per_frame: true }
      })
    )
    expect(result.frames).toHaveLength(expected.frames.length)
    for (const [index, frame] of expected.frames.entries()) {
      const theirs = frame[goldenCambiModelOutput]
      expect(theirs, `golden frame ${index}`).toBeTypeOf("number")
      const ours = result.frames[index]?.metrics[goldenCambiModelOutput]
      expect(
        Math.abs((ours ?? Number.NaN) - (theirs ?? Number.NaN)),
        `frame ${index}: ours ${ours}`
      ).toBeLessThanOrEqual(goldenTolerance)
    }
  })
})
