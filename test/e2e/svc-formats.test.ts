/**
 * `svc score` end to end on the compiled executable, for every golden fixture pair: each
 * reference layout (JSON, XML, CSV, subtitle) has exactly the reference tool's keys, elements,
 * columns and fields (the reference tool's output on the same pair, recorded in test/fixtures), and its numbers equal
 * the golden values within the contract's bound.
 */
import { readFileSync, rmSync } from "node:fs"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { goldenFeatures, goldenTolerance } from "../../modules/scorer/index.ts"
import { fixtures, golden } from "../support/fixtures.ts"
import {
  extraFeatures,
  geometryArgs,
  referenceOutput,
  scratchDir,
  svc,
  xmlAttributes,
  xmlShape
} from "./svc-support.ts"

const scratch = scratchDir("svc-formats-")
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

const compared: ReadonlyArray<string> = goldenFeatures

const expectGolden = (expected: Readonly<Record<string, number>>, actual: Readonly<Record<string, number>>) => {
  for (const feature of compared) {
    const want = expected[feature]
    if (want === undefined) continue
    expect(Math.abs((actual[feature] ?? Number.NaN) - want), feature).toBeLessThanOrEqual(goldenTolerance)
  }
}

const scoreTo = async (name: string, format: string, args: ReadonlyArray<string>) => {
  const file = join(scratch, `${name}.svc.${format}`)
  const result = await svc(["score", ...args, "--format", format, "-o", file, "-q"])
  expect(result.stderr).toBe("")
  expect(result.code).toBe(0)
  expect(result.stdout).toBe("")
  return readFileSync(file, "utf8")
}

describe("svc score writes the reference tool's layouts", () => {
  describe.each(fixtures)("$name", (entry) => {
    const args = [
      entry.reference,
      entry.distorted,
      ...geometryArgs(entry),
      ...extraFeatures.flatMap((feature) => ["--feature", feature])
    ]
    const goldenOutput = golden(entry)
    const reference = (format: string) => referenceOutput(entry, format)

    it("JSON: the reference's keys in its order (plus provenance), golden numbers", async () => {
      const [ours, theirs] = await Promise.all([scoreTo(entry.name, "json", args), reference("json")])
      const parsed = JSON.parse(ours)
      const expected = JSON.parse(theirs)
      expect(Object.keys(parsed)).toEqual([...Object.keys(expected), "provenance"])
      expect(parsed.frames.map((frame: { frameNum: number }) => frame.frameNum)).toEqual(
        expected.frames.map((frame: { frameNum: number }) => frame.frameNum)
      )
      parsed.frames.forEach((frame: { metrics: Record<string, number> }, index: number) => {
        expect(Object.keys(frame.metrics)).toEqual(Object.keys(expected.frames[index].metrics))
        expectGolden(goldenOutput.frames[index]?.metrics ?? {}, frame.metrics)
      })
      expect(Object.keys(parsed.pooled_metrics)).toEqual(Object.keys(expected.pooled_metrics))
      for (const [feature, pooled] of Object.entries(parsed.pooled_metrics as Record<string, Record<string, number>>)) {
        expect(Object.keys(pooled)).toEqual(Object.keys(expected.pooled_metrics[feature]))
        if (compared.includes(feature)) {
          for (const [pool, value] of Object.entries(pooled))
            expect(
              Math.abs(value - (goldenOutput.pooled_metrics[feature]?.[pool as "mean"] ?? Number.NaN))
            ).toBeLessThanOrEqual(goldenTolerance)
        }
      }
      expect(parsed.aggregate_metrics).toEqual(expected.aggregate_metrics)
      expect(parsed.provenance.model).toBe("vmaf_v0.6.1")
    })

    it("XML: the reference's elements and attributes in order (plus provenance), golden numbers", async () => {
      const [ours, theirs] = await Promise.all([scoreTo(entry.name, "xml", args), reference("xml")])
      const withoutProvenance = ours.replace(/ {2}<provenance[\s\S]*<\/provenance>\n/, "")
      expect(ours).toContain("<provenance ")
      expect(xmlShape(withoutProvenance)).toEqual(xmlShape(theirs))
      expect(xmlAttributes(/<params[^>]*>/.exec(ours)?.[0] ?? "")).toEqual({
        qualityWidth: String(entry.width),
        qualityHeight: String(entry.height)
      })
      const frames = [...ours.matchAll(/<frame [^>]*>/g)].map((match) => xmlAttributes(match[0]))
      expect(frames).toHaveLength(goldenOutput.frames.length)
      frames.forEach((attributes, index) => {
        expect(attributes["frameNum"]).toBe(String(index))
        expectGolden(
          goldenOutput.frames[index]?.metrics ?? {},
          Object.fromEntries(Object.entries(attributes).map(([name, value]) => [name, Number(value)]))
        )
      })
    })

    it("CSV: the reference's columns in order, one row per frame, golden numbers", async () => {
      const [ours, theirs] = await Promise.all([scoreTo(entry.name, "csv", args), reference("csv")])
      const rows = ours.trimEnd().split("\n")
      const expectedRows = theirs.trimEnd().split("\n")
      expect(rows[0]).toBe(expectedRows[0])
      expect(rows).toHaveLength(expectedRows.length)
      const columns = (rows[0] ?? "").split(",")
      rows.slice(1).forEach((row, index) => {
        const cells = row.split(",")
        expect(cells[0]).toBe(String(index))
        expect(row.endsWith(",")).toBe(true)
        expectGolden(
          goldenOutput.frames[index]?.metrics ?? {},
          Object.fromEntries(columns.map((name, column) => [name, Number(cells[column])]))
        )
      })
    })

    it("subtitle: the reference's fields per frame, in order", async () => {
      const [ours, theirs] = await Promise.all([scoreTo(entry.name, "sub", args), reference("sub")])
      const fields = (text: string) =>
        text
          .trimEnd()
          .split("\n")
          .map((line) => line.replace(/: -?[0-9.]+(?:e[-+]?\d+)?\|/g, "|"))
      expect(fields(ours)).toEqual(fields(theirs))
    })
  })
})
