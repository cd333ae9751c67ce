/**
 * A split title against the reference tool (issue 30): every 30-frame fixture pair (8- and 10-bit,
 * 4:2:0, 4:2:2; x264, x265, scaling) scored as segments of 7 frames (the cuts fall mid-title and
 * the last segment is short), merged by the controller's merge, and compared with the per-frame
 * values libvmaf 3.2.0 recorded for the whole title (`test/fixtures/NAME.libvmaf.json`, recorded
 * by `bun scripts/fixtures.ts record PATH/TO/vmaf` with the command in test/fixtures/README.md):
 * every compared feature of every frame, and the pooled score, within the golden tolerance.
 */
import { Effect } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { fixtures, golden, rawOptions } from "../../../test/support/fixtures.ts"
import { goldenExtraFeatures, goldenFeatures, goldenTolerance as tolerance } from "../golden.ts"
import { mergeSegmentResults } from "../merge.ts"
import { parseScoreRequest } from "../request.ts"
import { scoreFiles } from "../../inputs/score.ts"
import { Scorer } from "../index.ts"
import { scorerRuntime } from "./runtime.ts"

const runtime = scorerRuntime()
afterAll(() => runtime.dispose())

const segmentFrames = 7

describe.each(fixtures.filter((entry) => entry.frames >= 30))("$name split into segments of 7", (entry) => {
  it("merges to libvmaf's per-frame values of the whole title and its pooled score", async () => {
    const job = await Effect.runPromise(
      parseScoreRequest({
        reference: entry.reference,
        distorted: entry.distorted,
        options: { ...rawOptions(entry), features: goldenExtraFeatures, per_frame: true }
      })
    )
    const segments = Array.from({ length: Math.ceil(entry.frames / segmentFrames) }, (_, k) => ({
      first: k * segmentFrames,
      frames: Math.min(segmentFrames, entry.frames - k * segmentFrames),
      last: (k + 1) * segmentFrames >= entry.frames
    }))
    const pieces = await Promise.all(
      segments.map((segment) =>
        runtime.runPromise(Effect.flatMap(Scorer, (scorer) => scoreFiles(scorer, { ...job, perFrame: true, segment })))
      )
    )
    const merged = mergeSegmentResults(pieces, { precision: job.precision, perFrame: true })
    const expected = golden(entry)
    expect(merged?.frame_count).toBe(entry.frames)
    expect(merged?.frames.map((frame) => frame.frame)).toEqual(expected.frames.map((_, index) => index))
    for (const feature of goldenFeatures)
      for (const [index, frame] of expected.frames.entries()) {
        const ours = merged?.frames[index]?.metrics[feature] ?? Number.NaN
        const theirs = frame.metrics[feature] ?? Number.NaN
        expect(
          Math.abs(ours - theirs),
          `${feature} frame ${index}: ours ${ours}, libvmaf ${theirs}`
        ).toBeLessThanOrEqual(tolerance)
      }
    // The frames at the cuts read their context: motion there is the title's, not a first frame's 0.
    for (const segment of segments.slice(1))
      expect(merged?.frames[segment.first]?.metrics.integer_motion2).toBeCloseTo(
        expected.frames[segment.first]?.metrics.integer_motion2 ?? Number.NaN,
        4
      )
    const pooled = expected.pooled_metrics.vmaf
    expect(Math.abs((merged?.score ?? Number.NaN) - (pooled?.mean ?? Number.NaN))).toBeLessThanOrEqual(tolerance)
    expect(Math.abs((merged?.pooled.min.vmaf ?? Number.NaN) - (pooled?.min ?? Number.NaN))).toBeLessThanOrEqual(
      tolerance
    )
    expect(
      Math.abs((merged?.pooled.harmonic_mean.vmaf ?? Number.NaN) - (pooled?.harmonic_mean ?? Number.NaN))
    ).toBeLessThanOrEqual(tolerance)
  })
})
