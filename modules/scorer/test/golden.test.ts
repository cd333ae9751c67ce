/**
 * Golden test: every fixture pair scored through the Scorer service, every per-frame value
 * compared with what the reference implementation (libvmaf) printed for it.
 */
import { afterAll, describe, expect, it } from "vitest"
import { checksum, fixtures, golden, rawOptions } from "../../../test/support/fixtures.ts"
import { goldenExtraFeatures, goldenFeatures, goldenTolerance as tolerance } from "../golden.ts"
import { scoreBody, scorerRuntime } from "./runtime.ts"

/** The goldens are printed to 6 decimals: exact values differ from them by at most half a unit
 * of the last decimal. Held too, so a drift far below the contract's bound still fails. */
const printRounding = 5e-7 + 1e-12

const runtime = scorerRuntime()
afterAll(() => runtime.dispose())

const worst = new Map<string, { diff: number; where: string }>()
afterAll(() => {
  const table = [...worst.entries()].map(
    ([feature, { diff, where }]) => `${feature.padEnd(22)} ${diff.toExponential(2)}  (${where})`
  )
  console.log(`largest |ours - libvmaf| per feature over all fixtures:\n${table.join("\n")}`)
})

describe.each(fixtures)("$name", (entry) => {
  it("reads the files the fixture set records", () => {
    for (const path of [entry.reference, entry.distorted]) {
      const { expected, actual } = checksum(path)
      expect(actual).toBe(expected)
    }
  })

  it(`matches libvmaf per frame within ${tolerance} for every compared feature`, async () => {
    const expected = golden(entry)
    const result = await runtime.runPromise(
      scoreBody({
        reference: entry.reference,
        distorted: entry.distorted,
        options: { ...rawOptions(entry), features: goldenExtraFeatures, per_frame: true }
      })
    )
    expect(result.frame_count).toBe(entry.frames)
    expect(result.frames).toHaveLength(expected.frames.length)
    for (const feature of goldenFeatures) {
      let largest = 0
      for (const [index, frame] of expected.frames.entries()) {
        const ours = result.frames[index]?.metrics[feature]
        const theirs = frame.metrics[feature]
        expect(ours, `${feature} frame ${index}`).toBeTypeOf("number")
        expect(theirs, `golden ${feature} frame ${index}`).toBeTypeOf("number")
        const diff = Math.abs((ours ?? Number.NaN) - (theirs ?? Number.NaN))
        expect(diff, `${feature} frame ${index}: ours ${ours}, libvmaf ${theirs}`).toBeLessThanOrEqual(tolerance)
        expect(diff, `${feature} frame ${index} rounds to the golden's 6 decimals`).toBeLessThanOrEqual(printRounding)
        largest = Math.max(largest, diff)
      }
      if (largest >= (worst.get(feature)?.diff ?? -1)) worst.set(feature, { diff: largest, where: entry.name })
    }
    // Pooled score: mean, min, max and harmonic mean as the reference pools them.
    const pooled = expected.pooled_metrics.vmaf
    expect(Math.abs(result.score - (pooled?.mean ?? Number.NaN))).toBeLessThanOrEqual(tolerance)
    expect(Math.abs((result.pooled.min.vmaf ?? Number.NaN) - (pooled?.min ?? Number.NaN))).toBeLessThanOrEqual(
      tolerance
    )
    expect(Math.abs((result.pooled.max.vmaf ?? Number.NaN) - (pooled?.max ?? Number.NaN))).toBeLessThanOrEqual(
      tolerance
    )
    expect(
      Math.abs((result.pooled.harmonic_mean.vmaf ?? Number.NaN) - (pooled?.harmonic_mean ?? Number.NaN))
    ).toBeLessThanOrEqual(tolerance)
    expect(result.features.vmaf).toBe(result.score)
  })
})
