/**
 * The HTML report of `svc score --html`, rendered by headless Chromium: the chart's drawn
 * points are the per-frame scores (features selectable), the pooled table, the ten worst
 * frames and the provenance are there, nothing is fetched, and a phone-sized screenshot is
 * kept in test/artifacts/ (gitignored) for people to look at.
 */
import { mkdirSync, readFileSync, rmSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { worstFrameCount } from "../../modules/formats/html.ts"
import { artifacts, chartScale, haveChromium, headlessChromium } from "../support/chromium.ts"
import { fixture, golden } from "../support/fixtures.ts"
import { geometryArgs, scratchDir, svc } from "./svc-support.ts"

const scratch = scratchDir("svc-html-")
const report = join(scratch, "report.html")
const v01 = fixture("v01")
const expected = golden(v01)

const browser = headlessChromium(scratch)
const chrome = browser.run

/** The page's DOM after its scripts ran. */
const renderedDom = (hash = "", width = 1000) => browser.dom(report, hash, width)

interface Series {
  readonly feature: string
  readonly values: ReadonlyArray<number>
}

/** The chart's polylines turned back into values with the scale the chart states. */
const drawnSeries = (dom: string): ReadonlyArray<Series> => {
  const value = chartScale(/<svg id="chart"[^>]*>/.exec(dom)?.[0] ?? "")
  return [...dom.matchAll(/<polyline points="([^"]*)" data-feature="([^"]*)"/g)].map((match) => ({
    feature: match[2] ?? "",
    values: (match[1] ?? "").split(" ").map((point) => value(Number(point.split(",")[1])))
  }))
}

const vmafOf = (frame: { readonly metrics: Readonly<Record<string, number>> }) => frame.metrics["vmaf"] ?? Number.NaN

describe.skipIf(!haveChromium)("svc score --html in headless Chromium", () => {
  beforeAll(async () => {
    const result = await svc([
      "score",
      v01.reference,
      v01.distorted,
      ...geometryArgs(v01),
      "--feature",
      "psnr",
      "--html",
      report,
      "-q"
    ])
    expect(result.code).toBe(0)
  })
  afterAll(() => rmSync(scratch, { recursive: true, force: true }))

  it("draws the per-frame VMAF: one point per frame, at the golden values", async () => {
    const series = drawnSeries(await renderedDom())
    expect(series.map((entry) => entry.feature)).toEqual(["vmaf"])
    const drawn = series[0]?.values ?? []
    expect(drawn).toHaveLength(expected.frames.length)
    // Points are written to 1/100 of a pixel: far below 0.01 VMAF at this size.
    drawn.forEach((value, index) => {
      expect(Math.abs(value - vmafOf(expected.frames[index] ?? { metrics: {} }))).toBeLessThan(0.01)
    })
  })

  it("draws any selected feature beside VMAF (#features=vmaf,psnr_y)", async () => {
    const series = drawnSeries(await renderedDom("#features=vmaf,psnr_y"))
    expect(series.map((entry) => entry.feature)).toEqual(["psnr_y", "vmaf"])
    const psnr = series.find((entry) => entry.feature === "psnr_y")?.values ?? []
    expect(psnr).toHaveLength(expected.frames.length)
    psnr.forEach((value, index) => {
      expect(Math.abs(value - (expected.frames[index]?.metrics["psnr_y"] ?? Number.NaN))).toBeLessThan(0.01)
    })
    const dom = await renderedDom("#features=vmaf,psnr_y")
    expect(dom).toMatch(/<input type="checkbox" value="psnr_y"/)
  })

  it("lists the pooled values, the ten worst frames and the provenance", async () => {
    const dom = await renderedDom()
    const worst = /<table id="worst">[\s\S]*?<\/table>/.exec(dom)?.[0] ?? ""
    const rows = [...worst.matchAll(/<tr><td>(\d+)<\/td><td>([\d.]+)<\/td>/g)].map((match) => Number(match[1]))
    const lowest = [...expected.frames]
      .sort((a, b) => vmafOf(a) - vmafOf(b) || a.frameNum - b.frameNum)
      .slice(0, worstFrameCount)
      .map((frame) => frame.frameNum)
    expect(rows).toEqual(lowest)
    const pooled = /<table id="pooled">[\s\S]*?<\/table>/.exec(dom)?.[0] ?? ""
    expect(pooled).toContain(`<td>vmaf</td><td>${expected.pooled_metrics["vmaf"]?.min.toFixed(6)}</td>`)
    expect(dom).toContain("<dt>model</dt><dd>vmaf_v0.6.1</dd>")
    expect(dom).toMatch(/<dt>model sha256<\/dt><dd>[0-9a-f]{64}<\/dd>/)
  })

  it("is self-contained: nothing to fetch", () => {
    const html = readFileSync(report, "utf8")
    expect(html).not.toMatch(/\s(src|href)=/i)
    expect(html.match(/https?:\/\/[^\s"'<>]+/g) ?? []).toEqual(["http://www.w3.org/2000/svg"])
    expect(html).toContain("default-src 'none'")
  })

  it("renders on a phone-sized screen (screenshot kept in test/artifacts)", async () => {
    mkdirSync(artifacts, { recursive: true })
    const shot = join(artifacts, "svc-report-phone.png")
    rmSync(shot, { force: true })
    const result = await chrome([
      "--window-size=390,844",
      `--screenshot=${shot}`,
      `file://${report}#features=vmaf,psnr_y`
    ])
    expect(result.code).toBe(0)
    const png = readFileSync(shot)
    // PNG IHDR: width and height at bytes 16 and 20.
    expect(png.readUInt32BE(16)).toBe(390)
    expect(png.length).toBeGreaterThan(10_000)
  })
})
