import { describe, expect, it } from "vitest"
import { cellsStatus, compareTables, detailLimit, errorCell } from "./compare.ts"
import type { FrameTable } from "./measure.ts"

const table = (metrics: ReadonlyArray<string>, frames: ReadonlyArray<ReadonlyArray<number>>): FrameTable => ({
  metrics,
  frames
})

describe("compareTables", () => {
  it("counts every frame and metric and finds identical tables identical", () => {
    const left = table(
      ["vmaf", "psnr_y"],
      [
        [90.5, 40],
        [91.25, 41]
      ]
    )
    expect(
      compareTables(
        "v01",
        left,
        table(
          ["vmaf", "psnr_y"],
          [
            [90.5, 40],
            [91.25, 41]
          ]
        )
      )
    ).toEqual({
      fixture: "v01",
      metrics: 2,
      values: 4,
      differing_values: 0,
      differing_metrics: 0,
      details: []
    })
  })

  it("names the metric, the first differing frame, both values exactly and the largest difference", () => {
    const left = table(
      ["vmaf", "psnr_y"],
      [
        [90.5, 40],
        [91.25, 41],
        [92, 42]
      ]
    )
    const right = table(
      ["vmaf", "psnr_y"],
      [
        [90.5, 40],
        [91.25000000000001, 41],
        [92.5, 42]
      ]
    )
    const cell = compareTables("v01", left, right)
    expect(cell.differing_values).toBe(2)
    expect(cell.differing_metrics).toBe(1)
    expect(cell.details).toEqual([
      {
        metric: "vmaf",
        differing_values: 2,
        first_frame: 1,
        left: "91.25",
        right: "91.25000000000001",
        max_abs_diff: "0.5"
      }
    ])
  })

  it("holds NaN equal to NaN and 0 equal to -0, but NaN different from a number", () => {
    expect(
      compareTables("f", table(["a", "b"], [[Number.NaN, 0]]), table(["a", "b"], [[Number.NaN, -0]])).differing_values
    ).toBe(0)
    const cell = compareTables("f", table(["a"], [[Number.NaN]]), table(["a"], [[1]]))
    expect(cell.details?.[0]).toMatchObject({ left: "NaN", right: "1", max_abs_diff: "Infinity" })
  })

  it("counts a metric on one side only and frames beyond the shorter table as differing", () => {
    const cell = compareTables(
      "f",
      table(
        ["a", "b"],
        [
          [1, 2],
          [1, 2]
        ]
      ),
      table(["a"], [[1], [1], [1]])
    )
    expect(cell.metrics).toBe(2)
    expect(cell.values).toBe(6)
    expect(cell.details).toEqual([
      { metric: "a", differing_values: 1, first_frame: 2, left: "absent", right: "1", max_abs_diff: "Infinity" },
      { metric: "b", differing_values: 3, first_frame: 0, left: "2", right: "absent", max_abs_diff: "Infinity" }
    ])
  })

  it(`keeps at most ${detailLimit} details and counts the rest`, () => {
    const metrics = Array.from({ length: detailLimit + 3 }, (_, i) => `m${i}`)
    const cell = compareTables("f", table(metrics, [metrics.map(() => 0)]), table(metrics, [metrics.map(() => 1)]))
    expect(cell.details).toHaveLength(detailLimit)
    expect(cell.details_truncated).toBe(3)
    expect(cell.differing_metrics).toBe(detailLimit + 3)
  })
})

describe("cellsStatus", () => {
  const same = compareTables("a", table(["x"], [[1]]), table(["x"], [[1]]))
  const differing = compareTables("b", table(["x"], [[1]]), table(["x"], [[2]]))
  it("is error over differing over identical", () => {
    expect(cellsStatus([same])).toBe("identical")
    expect(cellsStatus([same, differing])).toBe("differing")
    expect(cellsStatus([differing, errorCell("c", "scoring failed")])).toBe("error")
  })
})
