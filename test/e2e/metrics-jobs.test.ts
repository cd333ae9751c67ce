/**
 * xpsnr and ssimulacra2 in jobs, through the compiled controller and node: a job asking for them
 * finishes with FFmpeg's and the ssimulacra2 tool's values (golden-metrics/), the frame rate
 * from the Y4M header, and an infinite XPSNR (identical frames) survives the job store and gRPC,
 * in the mean and in the percentiles.
 */
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { metricPairs, writeMetricPair } from "../../local/metric-pairs.ts"
import { expectOk, jobInState, useControllerAndNode } from "./controller-support.ts"

interface JobResult {
  readonly features: Readonly<Record<string, number>>
  readonly frames: ReadonlyArray<{ readonly metrics: Readonly<Record<string, number>> }>
  readonly pooled: Readonly<Record<string, Readonly<Record<string, number>>>>
}

describe("xpsnr and ssimulacra2 in controller jobs", () => {
  const setup = useControllerAndNode()
  const inputs = (name: string) => {
    const pair = metricPairs.find((entry) => entry.name === name)
    if (!pair) throw new Error(`metric-pairs.ts lacks ${name}`)
    const reference = join(setup.scratch.rootA, `${name}.ref.y4m`)
    const distorted = join(setup.scratch.rootA, `${name}.dis.y4m`)
    writeMetricPair(pair, reference, distorted)
    return { reference, distorted }
  }

  const run = async (request: object): Promise<JobResult> => {
    const submitted = expectOk(await setup.client.submit(request, setup.tokens.aWriter))
    const finished = await jobInState(setup.client, String(submitted.id), setup.tokens.aReader, "JOB_STATE_FINISHED")
    return finished.result as JobResult
  }

  it("finishes with FFmpeg's XPSNR (the 50 fps header's second-order term) and the tool's SSIMULACRA 2", async () => {
    const golden = JSON.parse(
      readFileSync(join(import.meta.dirname, "../../modules/scorer/test/golden-metrics/m2_420_10_50fps.json"), "utf8")
    ) as { xpsnr_summary: Record<string, number>; frames: ReadonlyArray<Record<string, number>> }
    const result = await run({
      ...inputs("m2_420_10_50fps"),
      options: { features: ["xpsnr", "ssimulacra2"], per_frame: true }
    })
    expect(result.frames).toHaveLength(golden.frames.length)
    for (const [index, frame] of golden.frames.entries()) {
      for (const plane of ["xpsnr_y", "xpsnr_u", "xpsnr_v"])
        expect(Math.abs((result.frames[index]?.metrics[plane] ?? 0) - (frame[plane] ?? 0)), plane).toBeLessThan(1e-3)
      expect(Math.abs((result.frames[index]?.metrics.ssimulacra2 ?? 0) - (frame.ssimulacra2 ?? 0))).toBeLessThan(0.05)
    }
    expect(Math.abs((result.features.xpsnr_y ?? 0) - (golden.xpsnr_summary.xpsnr_y ?? 0))).toBeLessThan(1e-3)
  }, 120_000)

  it("keeps an infinite XPSNR of identical frames through the store, its percentiles too", async () => {
    const result = await run({ ...inputs("m5_420_8_same"), options: { features: ["xpsnr", "ssimulacra2"] } })
    expect(result.features.xpsnr_y).toBe(Number.POSITIVE_INFINITY)
    expect(result.pooled["p1"]?.["xpsnr_y"]).toBe(Number.POSITIVE_INFINITY)
    expect(result.pooled["p99"]?.["xpsnr_y"]).toBe(Number.POSITIVE_INFINITY)
    expect(result.features.ssimulacra2).toBe(100)
  }, 120_000)
})
