/**
 * `svc ladder` end to end on the compiled executables: a ladder of four renditions made with
 * ffmpeg (sizes 320x240 to 160x120; H.264, HEVC, MPEG-4, MPEG-2) gives, per rendition, exactly the
 * per-frame values of four separate scores (svc-server's POST /v1/score), scored locally and with
 * --server; -o DIR writes one reference-layout file per rendition; --html writes a report that
 * headless Chromium draws (per-frame chart per rendition, the table, the bitrate-vs-score plot with
 * the hull), with a phone-sized screenshot kept in test/artifacts/. Exit codes as `svc score`.
 */
import { mkdirSync, readFileSync, readdirSync, rmSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { artifacts, chartScale, haveChromium, headlessChromium } from "../support/chromium.ts"
import { type RunningService, startService } from "../../local/executables.ts"
import { expectSameFrames, type LadderMedia, makeLadderMedia, type PerFrame } from "../support/ladder.ts"
import { scratchDir, svc } from "./svc-support.ts"

interface RenditionResult {
  readonly label: string
  readonly score: number
  readonly frames: ReadonlyArray<PerFrame>
  readonly frame_count: number
  readonly summary: {
    readonly p1: number
    readonly p5: number
    readonly width: number
    readonly height: number
    readonly codec: string
    readonly bitrate_bps: number
    readonly on_hull: boolean
  }
}
interface LadderResponse {
  readonly renditions: ReadonlyArray<RenditionResult>
  readonly provenance: { readonly reference_passes: number; readonly model: string }
}

const scratch = scratchDir("svc-ladder-")
const report = join(scratch, "ladder.html")
let media: LadderMedia
let server: RunningService
/** Per rendition label: the per-frame values of its pair scored alone. */
const separate = new Map<string, ReadonlyArray<PerFrame>>()

const renditionArgs = () =>
  media.renditions.flatMap((rendition) => ["--rendition", `${rendition.label}=${rendition.distorted}`])

beforeAll(async () => {
  media = makeLadderMedia(scratch)
  server = await startService("svc-server", { env: { SVC_LOG_LEVEL: "info" } })
  for (const rendition of media.renditions) {
    const response = await fetch(`${server.http}/v1/score`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ reference: media.reference, distorted: rendition.distorted, options: { per_frame: true } })
    })
    expect(response.status).toBe(200)
    separate.set(rendition.label, ((await response.json()) as { frames: ReadonlyArray<PerFrame> }).frames)
  }
}, 180_000)

afterAll(async () => {
  await server?.stop()
  rmSync(scratch, { recursive: true, force: true })
})

const expectLadderOfSeparateScores = (ladder: LadderResponse) => {
  expect(ladder.renditions.map((rendition) => rendition.label)).toEqual(media.renditions.map((r) => r.label))
  for (const rendition of ladder.renditions) {
    expectSameFrames(rendition.label, rendition.frames, separate.get(rendition.label) ?? [])
  }
  expect(ladder.provenance.reference_passes).toBe(1)
}

describe("svc ladder", () => {
  let local: LadderResponse

  it("scores the ladder with the embedded scorer: per rendition, exactly the four separate scores", async () => {
    const out = join(scratch, "files")
    const result = await svc([
      "ladder",
      media.reference,
      ...renditionArgs(),
      "--format",
      "json",
      "-o",
      out,
      "--html",
      report,
      "-q"
    ])
    expect(result.code, result.stderr).toBe(0)
    local = JSON.parse(result.stdout) as LadderResponse
    expectLadderOfSeparateScores(local)
    const byLabel = new Map(local.renditions.map((rendition) => [rendition.label, rendition]))
    expect(byLabel.get("120p-mpeg4")?.summary).toMatchObject({ width: 160, height: 120, codec: "mpeg4" })
    expect(byLabel.get("180p-hevc")?.summary).toMatchObject({ width: 240, height: 180, codec: "hevc" })
    for (const rendition of local.renditions) expect(rendition.summary.bitrate_bps).toBeGreaterThan(0)

    // -o DIR: one file per rendition in the reference tool's JSON layout, its frames the ladder's.
    expect(readdirSync(out).sort()).toEqual(media.renditions.map((rendition) => `${rendition.label}.json`).sort())
    for (const rendition of local.renditions) {
      const file = JSON.parse(readFileSync(join(out, `${rendition.label}.json`), "utf8")) as {
        frames: ReadonlyArray<{ frameNum: number; metrics: Record<string, number> }>
        pooled_metrics: Record<string, { mean: number }>
      }
      expect(file.frames.map((frame) => frame.frameNum)).toEqual(rendition.frames.map((frame) => frame.frame))
      expect(file.frames.map((frame) => frame.metrics["vmaf"])).toEqual(
        rendition.frames.map((frame) => Number((frame.metrics["vmaf"] ?? Number.NaN).toFixed(6)))
      )
      expect(file.pooled_metrics["vmaf"]?.mean).toBe(Number(rendition.score.toFixed(6)))
    }
  }, 180_000)

  it("prints a table with a line per rendition and the hull marked", async () => {
    const result = await svc(["ladder", media.reference, ...renditionArgs(), "-q"])
    expect(result.code, result.stderr).toBe(0)
    for (const rendition of local.renditions) {
      const line = result.stdout.split("\n").find((text) => text.startsWith(`${rendition.label} `)) ?? ""
      expect(line).toContain(rendition.score.toFixed(6))
      expect(line).toContain(rendition.summary.p5.toFixed(6))
      expect(line).toContain(rendition.summary.codec)
      expect(line.trimEnd().endsWith("*")).toBe(rendition.summary.on_hull)
    }
    expect(result.stdout).toContain("1 reference pass")
  }, 120_000)

  it("scores on a server with --server URL (POST /v1/ladder): the same numbers", async () => {
    const result = await svc([
      "ladder",
      media.reference,
      ...renditionArgs(),
      "--server",
      server.http,
      "--format",
      "json",
      "-q"
    ])
    expect(result.code, result.stderr).toBe(0)
    expectLadderOfSeparateScores(JSON.parse(result.stdout) as LadderResponse)
  }, 120_000)

  it("exits 2 on a usage error and 1 when scoring fails, with one line on stderr", async () => {
    const none = await svc(["ladder", media.reference])
    expect(none.code).toBe(2)
    expect(none.stderr).toMatch(/^svc: give the renditions/)
    const twice = await svc(["ladder", media.reference, "--rendition", "a=/x.mp4", "--rendition", "a=/y.mp4"])
    expect(twice.code).toBe(2)
    expect(twice.stderr).toContain('the label "a" names two renditions')
    const missing = await svc(["ladder", media.reference, "--rendition", `gone=${join(scratch, "gone.mp4")}`, "-q"])
    expect(missing.code).toBe(1)
    expect(missing.stderr.trim().split("\n")).toHaveLength(1)
    expect(missing.stderr).toMatch(/^svc: .*gone\.mp4/)
  }, 60_000)
})

describe.skipIf(!haveChromium)("the ladder's HTML report in headless Chromium", () => {
  const browser = headlessChromium(scratch)
  let ladder: LadderResponse

  beforeAll(async () => {
    // The report of the first test's run: rendered from the same response.
    const result = await svc([
      "ladder",
      media.reference,
      ...renditionArgs(),
      "--format",
      "json",
      "--html",
      report,
      "-q"
    ])
    expect(result.code, result.stderr).toBe(0)
    ladder = JSON.parse(result.stdout) as LadderResponse
  }, 120_000)

  it("draws every rendition's per-frame VMAF at its values", async () => {
    const dom = await browser.dom(report)
    const value = chartScale(/<svg id="frames-chart"[^>]*>/.exec(dom)?.[0] ?? "")
    const drawn = new Map(
      [...dom.matchAll(/<polyline points="([^"]*)" data-rendition="([^"]*)"/g)].map((match) => [
        match[2] ?? "",
        (match[1] ?? "").split(" ").map((point) => value(Number(point.split(",")[1])))
      ])
    )
    expect([...drawn.keys()]).toEqual(ladder.renditions.map((rendition) => rendition.label))
    for (const rendition of ladder.renditions) {
      const values = drawn.get(rendition.label) ?? []
      expect(values).toHaveLength(rendition.frame_count)
      // Points are written to 1/100 of a pixel: far below 0.01 VMAF at this size.
      values.forEach((drawnValue, index) => {
        expect(Math.abs(drawnValue - (rendition.frames[index]?.metrics["vmaf"] ?? Number.NaN))).toBeLessThan(0.01)
      })
    }
  }, 60_000)

  it("lists pooled, p1, p5, bitrate, resolution and codec, and marks the convex hull on the plot", async () => {
    const dom = await browser.dom(report)
    const table = /<table id="ladder">[\s\S]*?<\/table>/.exec(dom)?.[0] ?? ""
    for (const rendition of ladder.renditions) {
      const row = new RegExp(`<tr><td>${rendition.label.replace(/[.+]/g, "\\$&")}</td>.*?</tr>`).exec(table)?.[0] ?? ""
      for (const value of [rendition.score, rendition.summary.p1, rendition.summary.p5])
        expect(row).toContain(`<td>${value.toFixed(6)}</td>`)
      expect(row).toContain(`data-bps="${rendition.summary.bitrate_bps}"`)
      expect(row).toContain(`<td>${rendition.summary.width}×${rendition.summary.height}</td>`)
      expect(row).toContain(`<td>${rendition.summary.codec}</td>`)
    }
    const points = [...dom.matchAll(/<circle [^>]*data-rendition="([^"]*)" data-on-hull="(true|false)"/g)].map(
      (match) => [match[1], match[2] === "true"]
    )
    expect(points).toEqual(ladder.renditions.map((rendition) => [rendition.label, rendition.summary.on_hull]))
    expect(ladder.renditions.some((rendition) => rendition.summary.on_hull)).toBe(true)
    // The dashed hull runs through exactly the hull's points, by bitrate.
    const hull = /<polyline points="([^"]*)" class="hull"/.exec(dom)?.[1] ?? ""
    expect(hull.split(" ").filter((point) => point !== "")).toHaveLength(
      ladder.renditions.filter((rendition) => rendition.summary.on_hull).length
    )
  }, 60_000)

  it("is self-contained: nothing to fetch", () => {
    const html = readFileSync(report, "utf8")
    expect(html).not.toMatch(/\s(src|href)=/i)
    expect(html.match(/https?:\/\/[^\s"'<>]+/g) ?? []).toEqual(["http://www.w3.org/2000/svg"])
    expect(html).toContain("default-src 'none'")
  })

  it("renders on a phone-sized screen (screenshot kept in test/artifacts)", async () => {
    mkdirSync(artifacts, { recursive: true })
    const shot = join(artifacts, "svc-ladder-phone.png")
    rmSync(shot, { force: true })
    const result = await browser.run(["--window-size=390,844", `--screenshot=${shot}`, `file://${report}`])
    expect(result.code).toBe(0)
    const png = readFileSync(shot)
    expect(png.readUInt32BE(16)).toBe(390)
    expect(png.length).toBeGreaterThan(10_000)
  }, 60_000)
})
