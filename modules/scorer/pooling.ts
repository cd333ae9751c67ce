/**
 * Pooling of per-frame values beyond the native library's mean/min/max/harmonic mean: the
 * nearest-rank percentiles every result reports (`pooled.p1` .. `pooled.p99`), the ladder's
 * p1/p5 and each shot's p5 all come from `nearestRank` / `percentilesOf`.
 */

/** The percentiles of `pooled`, in order. */
export const percentiles = [1, 5, 10, 25, 50, 75, 90, 95, 99] as const
export type Percentile = (typeof percentiles)[number]
export type PercentileName = `p${Percentile}`
export const percentileNames: ReadonlyArray<PercentileName> = percentiles.map((p) => `p${p}` as PercentileName)

/** Ascending, with infinite (and NaN) values last: ciede2000 is +infinity on identical frames. */
const ascending = (a: number, b: number) => {
  const x = Number.isFinite(a) ? a : Number.POSITIVE_INFINITY
  const y = Number.isFinite(b) ? b : Number.POSITIVE_INFINITY
  return x === y ? 0 : x < y ? -1 : 1
}

/** max(1, ceil(percent x n / 100)) in integer arithmetic (no 0.07 x 100 = 7.000000000000001). */
export const nearestRankIndex = (percent: number, n: number): number => {
  const product = percent * n
  const remainder = product % 100
  return Math.min(n, Math.max(1, (product - remainder) / 100 + (remainder > 0 ? 1 : 0)))
}

const atRank = (sorted: ReadonlyArray<number>, percent: number): number =>
  sorted.length === 0 ? Number.NaN : (sorted[nearestRankIndex(percent, sorted.length) - 1] as number)

const sortedCopy = (values: ArrayLike<number>): Array<number> => Array.from(values).sort(ascending)

/** Nearest-rank percentile: the smallest value with at least p% of the values at or below it. */
export const nearestRank = (values: ArrayLike<number>, percent: number): number => atRank(sortedCopy(values), percent)

/** Every percentile of `percentiles`, from one sort. */
export const percentilesOf = (values: ArrayLike<number>): Record<PercentileName, number> => {
  const sorted = sortedCopy(values)
  return Object.fromEntries(percentiles.map((p) => [`p${p}`, atRank(sorted, p)])) as Record<PercentileName, number>
}

/** libvmaf's harmonic mean: n / sum(1 / (v + 1)) - 1. */
export const harmonicMean = (values: ArrayLike<number>): number => {
  let inverse = 0
  for (let k = 0; k < values.length; k++) inverse += 1 / ((values[k] as number) + 1)
  return values.length / inverse - 1
}

export const mean = (values: ArrayLike<number>): number => {
  let sum = 0
  for (let k = 0; k < values.length; k++) sum += values[k] as number
  return sum / values.length
}
