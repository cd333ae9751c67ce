/**
 * Golden test of the extra features: every fixture pair scored through the Scorer service with
 * the extra extractors on, every per-frame value compared with the reference's output recorded
 * in golden-features/ (scripts/golden-features.ts regenerates it).
 */
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { fixtures, rawOptions } from "../../../test/support/fixtures.ts"
import { goldenFeatureExceptions, goldenFeatureOutputs, goldenTolerance } from "../golden.ts"
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
