/**
 * Shots in the HTML report of `svc score --shots --html`, rendered by headless Chromium, and in
 * the table format: on the three-source clip (modules/scorer/test/shots-clips.ts) the chart has
 * one band per shot spanning its frames (the worst shots tinted), the shots table lists them
 * lowest score first, the pooled table has p1..p99, and the table format prints the shots.
 */
import { readFileSync, rmSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { clipGeometry, writeThreeSources } from "../../modules/scorer/test/shots-clips.ts"
import { haveChromium, headlessChromium } from "../support/chromium.ts"
import { scratchDir, svc } from "./svc-support.ts"

const scratch = scratchDir("svc-shots-html-")
const report = join(scratch, "report.html")
const browser = headlessChromium(scratch)
const geometry = ["-w", String(clipGeometry.width), "--height", String(clipGeometry.height)]
let table = ""

afterAll(() => rmSync(scratch, { recursive: true, force: true }))

beforeAll(async () => {
  const clip = await writeThreeSources(scratch)
  const scored = await svc(["score", clip.reference, clip.distorted, ...geometry, "--shots", "--html", report, "-q"])
  expect(scored.code, scored.stderr).toBe(0)
  const printed = await svc(["score", clip.reference, clip.distorted, ...geometry, "--shots", "-q"])
  expect(printed.code, printed.stderr).toBe(0)
  table = printed.stdout
}, 180_000)

describe("svc score --shots", () => {
  it("prints percentile columns and the shots lowest score first in the table format", () => {
    expect(table).toMatch(
      /^feature\s+min\s+max\s+mean\s+harmonic_mean\s+p1\s+p5\s+p10\s+p25\s+p50\s+p75\s+p90\s+p95\s+p99$/m
    )
    const shots = [...table.matchAll(/^ {2}shot (\d) {2}frames (\d+)-(\d+)\s+score ([\d.]+)/gm)]
    expect(
      shots.map((match) => [Number(match[2]), Number(match[3])]).sort((a, b) => (a[0] ?? 0) - (b[0] ?? 0))
    ).toEqual([
      [0, 29],
      [30, 74],
      [75, 109]
    ])
    const scores = shots.map((match) => Number(match[4]))
    expect(scores).toEqual([...scores].sort((a, b) => a - b))
  })
})

describe.skipIf(!haveChromium)("the HTML report's shots in headless Chromium", () => {
  it("draws one band per shot over its frames, the worst shots tinted", async () => {
    const dom = await browser.dom(report)
    const bands = [...dom.matchAll(/<rect [^>]*class="shot([^"]*)"[^>]*>/g)].map((match) => ({
      worst: (match[1] ?? "").includes("worst"),
      first: Number(/data-first="(\d+)"/.exec(match[0])?.[1]),
      count: Number(/data-count="(\d+)"/.exec(match[0])?.[1]),
      x: Number(/ x="([\d.]+)"/.exec(match[0])?.[1]),
      width: Number(/ width="([\d.]+)"/.exec(match[0])?.[1])
    }))
    expect(bands.map((band) => [band.first, band.count])).toEqual([
      [0, 30],
      [30, 45],
      [75, 35]
    ])
    // Three shots: all among the five worst. Bands tile the plot from left to right.
    expect(bands.every((band) => band.worst)).toBe(true)
    for (const [index, band] of bands.entries()) {
      const next = bands[index + 1]
      if (next) expect(Math.abs(band.x + band.width - next.x)).toBeLessThan(0.01)
    }
    expect((bands[1]?.width ?? 0) / (bands[0]?.width ?? 1)).toBeCloseTo(45 / 30, 1)
  })

  it("lists the shots lowest score first and the percentiles in the pooled table", async () => {
    const dom = await browser.dom(report)
    const shots = /<table id="shots">[\s\S]*?<\/table>/.exec(dom)?.[0] ?? ""
    const rows = [...shots.matchAll(/<tr data-shot="(\d)"><td>\d<\/td><td>([\d-]+)<\/td><td>([\d.]+)<\/td>/g)]
    expect(rows.map((row) => row[2]).sort()).toEqual(["0-29", "30-74", "75-109"])
    const scores = rows.map((row) => Number(row[3]))
    expect(scores).toEqual([...scores].sort((a, b) => a - b))
    const pooled = /<table id="pooled">[\s\S]*?<\/table>/.exec(dom)?.[0] ?? ""
    expect(pooled).toContain("<th>p1</th><th>p5</th><th>p10</th><th>p25</th><th>p50</th>")
    expect(readFileSync(report, "utf8")).toContain("default-src 'none'")
  })

  it("shows the worst shots' worst frames, reference beside distorted, inline", async () => {
    const dom = await browser.dom(report)
    const figures = [...dom.matchAll(/<figure data-frame="(\d+)">([\s\S]*?)<\/figure>/g)]
    expect(figures).toHaveLength(3)
    for (const figure of figures) {
      const sources = [...(figure[2] ?? "").matchAll(/<img alt="([a-z]+), frame \d+" src="([^"]*)"/g)]
      expect(sources.map((match) => match[1])).toEqual(["reference", "distorted"])
      for (const match of sources) expect(match[2]).toMatch(/^data:image\/png;base64,[A-Za-z0-9+/=]+$/)
    }
    // Nothing is fetched: every picture is a data: URL.
    expect(readFileSync(report, "utf8")).not.toMatch(/src="(?!data:)/)
  })
})
