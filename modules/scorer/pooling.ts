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

/** The scored picture's layout, as xpsnr's summary needs it (each plane's samples and the peak). */
export interface PlaneLayout {
  readonly width: number
  readonly height: number
  /** 420, 422 or 444. */
  readonly pixelFormat: number
  readonly bitdepth: number
}

/** xpsnr's per-frame metrics and the plane each measures. */
export const xpsnrPlanes: Readonly<Record<string, number>> = { xpsnr_y: 0, xpsnr_u: 1, xpsnr_v: 2 }

/**
 * xpsnr's pooled value, FFmpeg 7.1's xpsnr filter summary over the per-frame dB values of one
 * plane: each frame's root weighted SSE recovered from its dB (0 for an infinite frame), and when
 * their mean is at least 1, the dB of that mean; else the mean of the dBs. One function for one
 * pass and for a segment job's merge, so both are the same double.
 */
export const xpsnrPooled = (db: ArrayLike<number>, layout: PlaneLayout, plane: number): number => {
  if (db.length === 0) return Number.POSITIVE_INFINITY
  const shiftW = plane > 0 && layout.pixelFormat !== 444 ? 1 : 0
  const shiftH = plane > 0 && layout.pixelFormat === 420 ? 1 : 0
  const samples = BigInt((layout.width + shiftW) >> shiftW) * BigInt((layout.height + shiftH) >> shiftH)
  const peak = (1n << BigInt(layout.bitdepth)) - 1n
  const num = Number(samples * peak * peak)
  let roots = 0
  let dbs = 0
  for (let f = 0; f < db.length; f++) {
    const value = db[f] as number
    roots += value === Number.POSITIVE_INFINITY ? 0 : Math.sqrt(num / 10 ** (value / 10))
    dbs += value
  }
  if (roots >= db.length) {
    const meanRoot = roots / db.length
    return 10 * Math.log10(num / (meanRoot * meanRoot))
  }
  return dbs / db.length
}

/** The layout of an ffmpeg pixel format name ("yuv420p", "yuv422p10le", "yuvj444p"), if planar YUV. */
export const layoutOfPixelFormat = (width: number, height: number, name: string): PlaneLayout | undefined => {
  const match = /^yuvj?(420|422|444)p(?:(\d+)le)?$/.exec(name)
  return match ? { width, height, pixelFormat: Number(match[1]), bitdepth: Number(match[2] ?? 8) } : undefined
}
