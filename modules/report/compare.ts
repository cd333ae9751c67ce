// Exact comparison of two per-frame tables of one fixture (scalar against default dispatch, the
// host against the build's reference) into a fixture cell of the report.
import type { FrameTable } from "./measure.ts"
import type { FixtureCell } from "./schema.ts"

/** At most this many per-metric details in one cell; the rest are counted in details_truncated. */
export const detailLimit = 32

type Detail = NonNullable<FixtureCell["details"]>[number]

// Bit-exact equality, except that NaN equals NaN (a metric the scorer could not compute is the
// same on both sides) and 0 equals -0 (JSON cannot tell them apart).
const same = (left: number, right: number): boolean => left === right || Object.is(left, right)

/** A value as the report prints it: shortest round-trip decimal, so the string is exact. */
const exact = (value: number | undefined): string => (value === undefined ? "absent" : String(value))

export const compareTables = (fixture: string, left: FrameTable, right: FrameTable): FixtureCell => {
  const metrics = [...new Set([...left.metrics, ...right.metrics])]
  const frames = Math.max(left.frames.length, right.frames.length)
  const column = (table: FrameTable, metric: string) => {
    const index = table.metrics.indexOf(metric)
    return (frame: number): number | undefined => (index < 0 ? undefined : table.frames[frame]?.[index])
  }
  const details: Array<Detail> = []
  for (const metric of metrics) {
    const leftValue = column(left, metric)
    const rightValue = column(right, metric)
    let differing = 0
    let first = -1
    let largest = 0
    for (let frame = 0; frame < frames; frame++) {
      const a = leftValue(frame)
      const b = rightValue(frame)
      if (a !== undefined && b !== undefined && same(a, b)) continue
      differing++
      if (first < 0) first = frame
      // A value missing on one side (another frame count or metric set), or NaN against a
      // number, has no finite distance.
      const distance = a === undefined || b === undefined ? Number.POSITIVE_INFINITY : Math.abs(a - b)
      largest = Number.isNaN(distance) ? Number.POSITIVE_INFINITY : Math.max(largest, distance)
    }
    if (differing > 0) {
      details.push({
        metric,
        differing_values: differing,
        first_frame: first,
        left: exact(leftValue(first)),
        right: exact(rightValue(first)),
        max_abs_diff: String(largest)
      })
    }
  }
  const cell: FixtureCell = {
    fixture,
    metrics: metrics.length,
    values: metrics.length * frames,
    differing_values: details.reduce((sum, detail) => sum + detail.differing_values, 0),
    differing_metrics: details.length,
    details: details.slice(0, detailLimit)
  }
  const truncated = details.length - detailLimit
  return truncated > 0 ? { ...cell, details_truncated: truncated } : cell
}

/** A cell for a fixture that could not be compared (scoring failed, no reference). */
export const errorCell = (fixture: string, error: string): FixtureCell => ({ fixture, error })

export type CellStatus = "identical" | "differing" | "error"

/** `error` when a cell could not be compared, else `differing` when a value differs. */
export const cellsStatus = (cells: ReadonlyArray<FixtureCell>): CellStatus =>
  cells.some((cell) => cell.error !== undefined)
    ? "error"
    : cells.some((cell) => (cell.differing_values ?? 0) > 0)
      ? "differing"
      : "identical"
