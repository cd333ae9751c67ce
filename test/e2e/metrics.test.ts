/**
 * xpsnr and ssimulacra2 end to end: through the compiled svc-server's REST API (JSON, where an
 * infinite XPSNR is null; the reference tool's JSON layout, where they are extra metrics after
 * its own), gRPC, and the `svc score --feature` client, on pairs computed by
 * local/metric-pairs.ts (their golden values are checked in the scorer's tests).
 */
import { readFileSync, rmSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { metricPairs, writeMetricPair } from "../../local/metric-pairs.ts"
import { type RunningService, startService } from "../../local/executables.ts"
import { scoringClient } from "./server-support.ts"
import { scratchDir, svc } from "./svc-support.ts"

const scratch = scratchDir("svc-metrics-e2e-")
const pairOf = (name: string) => {
  const pair = metricPairs.find((entry) => entry.name === name)
  if (!pair) throw new Error(`metric-pairs.ts lacks ${name}`)
  const reference = join(scratch, `${name}.ref.y4m`)
  const distorted = join(scratch, `${name}.dis.y4m`)
  writeMetricPair(pair, reference, distorted)
  return { reference, distorted }
}
const same = pairOf("m5_420_8_same")
const distorted = pairOf("m3_444_8_30fps")
const golden = JSON.parse(
  readFileSync(join(import.meta.dirname, "../../modules/scorer/test/golden-metrics/m3_444_8_30fps.json"), "utf8")
) as { xpsnr_summary: Record<string, number>; frames: ReadonlyArray<Record<string, number>> }

let service: RunningService
beforeAll(async () => {
  service = await startService("svc-server", { listeners: ["http", "grpc"], env: { SVC_INPUT_ROOTS: scratch } })
})
afterAll(async () => {
  expect(await service.stop()).toBe(0)
  rmSync(scratch, { recursive: true, force: true })
})

const post = (body: unknown, accept = "application/json") =>
  fetch(`${service.http}/v1/score`, {
    method: "POST",
    headers: { "content-type": "application/json", accept },
    body: JSON.stringify(body)
  })

const features = ["xpsnr", "ssimulacra2"]

describe("POST /v1/score", () => {
  it("writes an infinite XPSNR (identical planes) as null, and ssimulacra2 100", async () => {
    const response = await post({ ...same, options: { features, per_frame: true } })
    expect(response.status).toBe(200)
    const text = await response.text()
    const body = JSON.parse(text) as {
      features: Record<string, number | null>
      frames: ReadonlyArray<{ metrics: Record<string, number | null> }>
      provenance: { feature_backends: ReadonlyArray<{ extractor: string; implementation?: string }> }
    }
    expect(body.features).toMatchObject({ xpsnr_y: null, xpsnr_u: null, xpsnr_v: null, ssimulacra2: 100 })
    for (const frame of body.frames) expect(frame.metrics).toMatchObject({ xpsnr_y: null, ssimulacra2: 100 })
    expect(body.provenance.feature_backends).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ extractor: "xpsnr", implementation: "FFmpeg 7.1 xpsnr filter" }),
        expect.objectContaining({ extractor: "ssimulacra2", implementation: "SSIMULACRA 2.1" })
      ])
    )
  })

  it("answers the reference tool's XML layout with them as extra metrics, pooled as FFmpeg summarises", async () => {
    const response = await post({ ...distorted, options: { features } }, "application/xml")
    expect(response.status).toBe(200)
    const xml = await response.text()
    const frames = [...xml.matchAll(/<frame frameNum="(\d+)"([^>]*)\/>/g)].map((match) =>
      Object.fromEntries([...(match[2] ?? "").matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], Number(m[2])]))
    )
    expect(frames).toHaveLength(golden.frames.length)
    const names = Object.keys(frames[0] ?? {})
    // After the model's features and before its score, as the reference places --feature psnr.
    expect(names.indexOf("xpsnr_y")).toBeGreaterThan(names.indexOf("integer_vif_scale3"))
    expect(names.indexOf("ssimulacra2")).toBeGreaterThan(names.indexOf("xpsnr_v"))
    expect(names.indexOf("ssimulacra2")).toBeLessThan(names.indexOf("vmaf"))
    for (const [index, frame] of golden.frames.entries()) {
      expect(Math.abs((frames[index]?.xpsnr_y ?? 0) - (frame.xpsnr_y ?? 0))).toBeLessThan(1e-3)
      expect(Math.abs((frames[index]?.ssimulacra2 ?? 0) - (frame.ssimulacra2 ?? 0))).toBeLessThan(1e-5)
    }
    const pooled = /<metric name="xpsnr_y"[^>]* mean="([^"]+)"/.exec(xml)?.[1]
    expect(Math.abs(Number(pooled) - (golden.xpsnr_summary.xpsnr_y ?? 0))).toBeLessThan(1e-3)
  })

  it("refuses an unknown feature naming the ones it knows, and a frame_rate out of range", async () => {
    const unknown = await post({ ...distorted, options: { features: ["xpsnr2"] } })
    expect(unknown.status).toBe(400)
    expect(((await unknown.json()) as { error: string }).error).toContain('"xpsnr", "ssimulacra2"')
    const rate = await post({ ...distorted, options: { features, frame_rate: 1001 } })
    expect(rate.status).toBe(400)
    expect(await rate.text()).toContain("options.frame_rate")
  })
})

describe("POST /v1/ladder", () => {
  it("scores each rendition's xpsnr and ssimulacra2 as its pair alone", async () => {
    const mild = pairOf("m1_420_8_24fps")
    const response = await fetch(`${service.http}/v1/ladder`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        reference: mild.reference,
        renditions: [
          { label: "a", distorted: mild.distorted },
          { label: "same", distorted: mild.reference }
        ],
        options: { features, per_frame: true }
      })
    })
    expect(response.status).toBe(200)
    const ladder = (await response.json()) as {
      renditions: ReadonlyArray<{ label: string; features: Record<string, number | null> }>
    }
    const alone = (await (await post({ ...mild, options: { features } })).json()) as {
      features: Record<string, number | null>
    }
    const [first, second] = ladder.renditions
    for (const name of ["xpsnr_y", "xpsnr_u", "xpsnr_v", "ssimulacra2"])
      expect(first?.features[name], name).toBe(alone.features[name])
    expect(second?.features).toMatchObject({ xpsnr_y: null, ssimulacra2: 100 })
  })
})

describe("gRPC Score", () => {
  it("gives the REST numbers, frame_rate included", async () => {
    const grpc = scoringClient(service.grpc ?? "")
    try {
      const options = { features, per_frame: true, frame_rate: 60 }
      const answer = (await grpc.score({ ...distorted, options })) as { features: Record<string, number> }
      const rest = (await (await post({ ...distorted, options })).json()) as { features: Record<string, number> }
      expect(answer.features.xpsnr_y).toBe(rest.features.xpsnr_y)
      expect(answer.features.ssimulacra2).toBe(rest.features.ssimulacra2)
      // 60 fps takes the filter's second-order temporal term: another value than the header's 30.
      expect(rest.features.xpsnr_y).not.toBeCloseTo(golden.xpsnr_summary.xpsnr_y ?? 0, 3)
    } finally {
      grpc.close()
    }
  })
})

describe("svc score --feature", () => {
  it("charts them in the HTML report", async () => {
    const html = join(scratch, "metrics.html")
    const run = await svc([
      "score",
      distorted.reference,
      distorted.distorted,
      "--feature",
      "xpsnr",
      "--feature",
      "ssimulacra2",
      "--html",
      html
    ])
    expect(run.code, run.stderr).toBe(0)
    const page = readFileSync(html, "utf8")
    for (const name of ["xpsnr_y", "xpsnr_u", "xpsnr_v", "ssimulacra2"]) expect(page, name).toContain(name)
  })

  it("scores xpsnr and ssimulacra2 locally, the same numbers as the server", async () => {
    const run = await svc([
      "score",
      distorted.reference,
      distorted.distorted,
      "--feature",
      "xpsnr",
      "--feature",
      "ssimulacra2",
      "--json"
    ])
    expect(run.code, run.stderr).toBe(0)
    const layout = JSON.parse(run.stdout) as { pooled_metrics: Record<string, Record<string, number>> }
    expect(Math.abs((layout.pooled_metrics.xpsnr_y?.mean ?? 0) - (golden.xpsnr_summary.xpsnr_y ?? 0))).toBeLessThan(
      1e-3
    )
    expect(layout.pooled_metrics.ssimulacra2?.min).toBeCloseTo(
      Math.min(...golden.frames.map((f) => f.ssimulacra2 ?? 0)),
      5
    )
  })
})
