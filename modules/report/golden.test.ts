import { Either } from "effect"
import { describe, expect, it } from "vitest"
import { goldenFeatures, goldenTolerance } from "../scorer/index.ts"
import { type GoldenFile, goldenSuite, pooledCase } from "./golden.ts"
import type { FixtureScore } from "./measure.ts"

const metrics = [...goldenFeatures, "integer_motion"]
const frameValues = (frame: number) => metrics.map((_, i) => 10 + i + frame / 8)

const score: FixtureScore = {
  table: { metrics, frames: [0, 1, 2].map(frameValues) },
  pooled: { mean: 10.125, min: 10, max: 10.25, harmonic_mean: 10.12 },
  extractors: []
}

const golden: GoldenFile = {
  frames: [0, 1, 2].map((frame) => ({
    metrics: Object.fromEntries(metrics.map((name, i) => [name, frameValues(frame)[i] ?? 0]))
  })),
  pooled_metrics: { vmaf: { mean: 10.125, min: 10, max: 10.25, harmonic_mean: 10.12 } }
}

const withFrameValue = (feature: string, frame: number, value: number): GoldenFile => ({
  ...golden,
  frames: golden.frames.map((entry, index) =>
    index === frame ? { metrics: { ...entry.metrics, [feature]: value } } : entry
  )
})

const cases = goldenFeatures.length + 1

describe("goldenSuite", () => {
  it("passes every feature and the pooled score within the bound, one case each per fixture", () => {
    const suite = goldenSuite([{ fixture: "v01", score: Either.right(score), golden: Either.right(golden) }])
    expect(suite).toMatchObject({
      status: "pass",
      total: cases,
      passed: cases,
      failed: 0,
      failures: [],
      results: { v01: "pass" }
    })
    expect(Object.keys(suite.cases?.["v01"] ?? {})).toEqual([...goldenFeatures, pooledCase])
    expect(suite.case_messages?.["v01"]?.["vmaf"]).toContain(`bound ${goldenTolerance}`)
  })

  it("accepts a difference just within the bound and fails one beyond it, naming the first frame", () => {
    const ours = score.table.frames[1]?.[metrics.indexOf("psnr_y")] ?? 0
    const atBound = goldenSuite([
      {
        fixture: "v01",
        score: Either.right(score),
        golden: Either.right(withFrameValue("psnr_y", 1, ours + 0.0000999))
      }
    ])
    expect(atBound.status).toBe("pass")
    const beyond = goldenSuite([
      { fixture: "v01", score: Either.right(score), golden: Either.right(withFrameValue("psnr_y", 1, ours + 0.01)) }
    ])
    expect(beyond).toMatchObject({ status: "fail", failed: 1, passed: cases - 1, results: { v01: "fail" } })
    expect(beyond.cases?.["v01"]?.["psnr_y"]).toBe("fail")
    expect(beyond.failures).toEqual([
      expect.stringMatching(/^v01\/psnr_y: 1 frames beyond the bound, first frame 1: ours /)
    ])
  })

  it("fails a feature the golden file lacks, or one scored as NaN", () => {
    const { ["float_ssim"]: _dropped, ...rest } = golden.frames[0]?.metrics ?? {}
    const lacking: GoldenFile = { ...golden, frames: [{ metrics: rest }, ...golden.frames.slice(1)] }
    expect(
      goldenSuite([{ fixture: "v01", score: Either.right(score), golden: Either.right(lacking) }]).cases?.["v01"]?.[
        "float_ssim"
      ]
    ).toBe("fail")
    const nan: FixtureScore = {
      ...score,
      table: { metrics, frames: [metrics.map(() => Number.NaN), ...score.table.frames.slice(1)] }
    }
    expect(goldenSuite([{ fixture: "v01", score: Either.right(nan), golden: Either.right(golden) }]).failed).toBe(
      goldenFeatures.length
    )
  })

  it("fails every case of a fixture whose frame count differs, that did not score, or whose golden file is unreadable", () => {
    const short: GoldenFile = { ...golden, frames: golden.frames.slice(0, 2) }
    expect(goldenSuite([{ fixture: "v01", score: Either.right(score), golden: Either.right(short) }]).failed).toBe(
      goldenFeatures.length
    )
    const unscored = goldenSuite([
      { fixture: "v01", score: Either.left("UnreadableInput: no file"), golden: Either.right(golden) }
    ])
    expect(unscored.failed).toBe(cases)
    expect(unscored.failures[0]).toBe("v01/vmaf: not scored: UnreadableInput: no file")
    expect(
      goldenSuite([
        { fixture: "v01", score: Either.right(score), golden: Either.left("v01.libvmaf.json cannot be read") }
      ]).failed
    ).toBe(cases)
  })

  it("fails the pooled case when a pooled value is beyond the bound", () => {
    const pooled: GoldenFile = {
      ...golden,
      pooled_metrics: { vmaf: { ...golden.pooled_metrics.vmaf, harmonic_mean: 11 } }
    }
    const suite = goldenSuite([{ fixture: "v01", score: Either.right(score), golden: Either.right(pooled) }])
    expect(suite.cases?.["v01"]?.[pooledCase]).toBe("fail")
    expect(suite.failures).toEqual(["v01/vmaf_pooled: harmonic_mean: ours 10.12, libvmaf 11"])
  })
})
