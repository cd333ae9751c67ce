/**
 * Golden test of xpsnr and ssimulacra2: the generated pairs of metric-pairs.ts (written to a
 * temporary folder as Y4M, so the frame rate comes from their headers) scored through the Scorer
 * service, each frame and the pooled xpsnr compared with the reference tools' values recorded in
 * golden-metrics/ (scripts/record-metric-golden.ts: FFmpeg 7.1.5's xpsnr filter, SSIMULACRA 2.1).
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { type MetricPair, metricPairs, writeMetricPair } from "../../../local/metric-pairs.ts"
import { scoreBody, scorerRuntime } from "./runtime.ts"

interface MetricGolden {
  readonly xpsnr_summary: Readonly<Record<string, number | null>>
  readonly frames: ReadonlyArray<Readonly<Record<string, number | null>>>
}

/** FFmpeg prints 4 decimals: its rounding (5e-5) is well inside the 1e-3 dB. */
const xpsnrBound = 1e-3
/**
 * 8-bit 4:4:4 converts to RGB exactly as the reference's swscale does, and the metric's arithmetic
 * is the tool's: the tool prints 8 decimals. 4:2:0 / 4:2:2 chroma is upsampled in floating point
 * where swscale filters in fixed point, and deeper samples take another rounding: a few hundredths.
 */
const ssimulacra2Bound = (pair: MetricPair) => (pair.pixel_format === "444" && pair.bitdepth === 8 ? 1e-6 : 0.05)

const runtime = scorerRuntime()
const directory = mkdtempSync(join(tmpdir(), "svc-metric-golden-"))
afterAll(async () => {
  await runtime.dispose()
  rmSync(directory, { recursive: true, force: true })
})

const scorePair = async (pair: MetricPair, options: Record<string, unknown> = {}) => {
  const reference = join(directory, `${pair.name}.ref.y4m`)
  const distorted = join(directory, `${pair.name}.dis.y4m`)
  writeMetricPair(pair, reference, distorted)
  return runtime.runPromise(
    scoreBody({ reference, distorted, options: { features: ["xpsnr", "ssimulacra2"], per_frame: true, ...options } })
  )
}

const golden = (pair: MetricPair): MetricGolden =>
  JSON.parse(readFileSync(join(import.meta.dirname, "golden-metrics", `${pair.name}.json`), "utf8")) as MetricGolden

/** The reference writes infinity as "inf" (recorded as null): ours is +Infinity there. */
const expectClose = (ours: number | undefined, theirs: number | null | undefined, bound: number, what: string) => {
  if (theirs === null) return expect(ours, `${what}: the reference's is infinite`).toBe(Number.POSITIVE_INFINITY)
  expect(theirs, `golden ${what}`).toBeTypeOf("number")
  expect(
    Math.abs((ours ?? Number.NaN) - (theirs ?? Number.NaN)),
    `${what}: ours ${ours}, reference ${theirs}`
  ).toBeLessThanOrEqual(bound)
}

describe.each(metricPairs)("$name", (pair) => {
  it("matches FFmpeg's xpsnr per frame and its summary, and the ssimulacra2 tool per frame", async () => {
    const expected = golden(pair)
    const result = await scorePair(pair)
    expect(result.frames).toHaveLength(expected.frames.length)
    for (const [index, frame] of expected.frames.entries()) {
      const metrics = result.frames[index]?.metrics ?? {}
      for (const plane of ["xpsnr_y", "xpsnr_u", "xpsnr_v"])
        expectClose(metrics[plane], frame[plane], xpsnrBound, `${plane} frame ${index}`)
      expectClose(metrics.ssimulacra2, frame.ssimulacra2, ssimulacra2Bound(pair), `ssimulacra2 frame ${index}`)
    }
    for (const plane of ["xpsnr_y", "xpsnr_u", "xpsnr_v"])
      expectClose(result.features[plane], expected.xpsnr_summary[plane], xpsnrBound, `pooled ${plane}`)
    expect(result.provenance.feature_backends.map((entry) => entry.extractor)).toEqual(
      expect.arrayContaining(["xpsnr", "ssimulacra2"])
    )
  })
})

describe("identical frames", () => {
  const same = metricPairs.find((pair) => pair.identical)
  it("score ssimulacra2 100 and xpsnr +infinity on every plane, pooled too", async () => {
    if (!same) throw new Error("metric-pairs.ts has no identical pair")
    const result = await scorePair(same)
    for (const frame of result.frames) {
      expect(frame.metrics.ssimulacra2).toBe(100)
      for (const plane of ["xpsnr_y", "xpsnr_u", "xpsnr_v"]) expect(frame.metrics[plane]).toBe(Number.POSITIVE_INFINITY)
    }
    expect(result.features.ssimulacra2).toBe(100)
    expect(result.features.xpsnr_y).toBe(Number.POSITIVE_INFINITY)
  })
})

describe("xpsnr's frame rate", () => {
  // m1 is 24 fps (first-order temporal term); at 32 fps and above the filter takes the second-order one.
  const pair = metricPairs.find((entry) => entry.name === "m1_420_8_24fps")
  it("options.frame_rate overrides the Y4M header's rate, and only xpsnr's temporal frames change", async () => {
    if (!pair) throw new Error("metric-pairs.ts lacks m1_420_8_24fps")
    const atHeader = await scorePair(pair)
    const at30 = await scorePair(pair, { frame_rate: 30 })
    const at50 = await scorePair(pair, { frame_rate: 50 })
    expect(at30.frames.map((f) => f.metrics.xpsnr_y)).toEqual(atHeader.frames.map((f) => f.metrics.xpsnr_y))
    // The first frame compares with a zero history either way; from the third on the orders differ.
    expect(at50.frames[0]?.metrics.xpsnr_y).toBe(atHeader.frames[0]?.metrics.xpsnr_y)
    expect(at50.frames[3]?.metrics.xpsnr_y).not.toBe(atHeader.frames[3]?.metrics.xpsnr_y)
    expect(at50.frames.map((f) => f.metrics.ssimulacra2)).toEqual(atHeader.frames.map((f) => f.metrics.ssimulacra2))
  })

  it("keeps its values when shots share the frame ring", async () => {
    if (!pair) throw new Error("metric-pairs.ts lacks m1_420_8_24fps")
    const alone = await scorePair(pair, { threads: 3 })
    const withShots = await scorePair(pair, { threads: 3, shots: true })
    for (const [index, frame] of alone.frames.entries())
      for (const name of ["xpsnr_y", "xpsnr_u", "xpsnr_v", "ssimulacra2"])
        expect(withShots.frames[index]?.metrics[name], `${name} frame ${index}`).toBe(frame.metrics[name])
  })

  it("gives the scalar code's bits on every backend at odd sizes (partial vector groups)", async () => {
    // 4:4:4 allows odd sizes: the AVX2 blur's partial row groups and masked column tails, at every scale.
    const odd: MetricPair = {
      name: "odd_444_8",
      width: 123,
      height: 77,
      pixel_format: "444",
      bitdepth: 8,
      frame_rate: 50,
      frames: 3
    }
    const scalar = await scorePair(odd, { backend: "scalar" })
    const best = await scorePair(odd, { backend: "auto", threads: 2 })
    expect(best.frames).toEqual(scalar.frames)
    expect(best.provenance.feature_backends.find((entry) => entry.extractor === "ssimulacra2")?.backend).not.toBe(
      "scalar"
    )
  })

  it("gives every thread count and backend the same values (the history follows frame order)", async () => {
    if (!pair) throw new Error("metric-pairs.ts lacks m1_420_8_24fps")
    const one = await scorePair(pair, { threads: 1, backend: "scalar" })
    const many = await scorePair(pair, { threads: 4 })
    expect(many.frames).toEqual(one.frames)
    expect(many.features).toEqual(one.features)
  })
})
