/**
 * What a ladder user reads about each rendition, as pure functions of its per-frame scores and
 * of the ladder's (bitrate, score) points: the worst frames, and the
 * upper convex hull (the renditions no mix of two others beats at the same bitrate). Its
 * percentiles are pooling.ts's, as every result's. One pass over a ladder and a segment job's
 * merge (ladder-merge.ts) both summarise through `scoreSummary` and `withHull`.
 */
import { type RenditionSummary, worstFrameCount } from "./ladder.ts"
import { nearestRank } from "./pooling.ts"
import { type ScoreResult, scoreFeature } from "./result.ts"

export interface WorstFrame {
  readonly frame: number
  readonly score: number
}

/** The `count` lowest scores, lowest first; equal scores by frame index. */
export const worstFrames = (frames: ReadonlyArray<WorstFrame>, count: number): ReadonlyArray<WorstFrame> =>
  [...frames].sort((a, b) => a.score - b.score || a.frame - b.frame).slice(0, Math.max(0, count))

/** Bits per second from a file's size and a duration (0 when the duration is not known). */
export const bitrateOf = (bytes: number, durationSeconds: number): number =>
  durationSeconds > 0 && Number.isFinite(durationSeconds) ? (bytes * 8) / durationSeconds : 0

export interface RatePoint {
  readonly bitrate: number
  readonly score: number
}

/** > 0 when o→a→b turns counter-clockwise (b is left of the line o→a). */
const cross = (o: RatePoint, a: RatePoint, b: RatePoint) =>
  (a.bitrate - o.bitrate) * (b.score - o.score) - (a.score - o.score) * (b.bitrate - o.bitrate)

/**
 * Marks the points on the upper convex hull of (bitrate, score), from the lowest bitrate to the
 * best score: the efficient renditions. A point below the segment of two others (or equal to
 * one at a higher bitrate or a lower score) is not on it. Collinear points on the hull's edge
 * are not marked (only its corners are). A point without a known bitrate (0: a raw rendition,
 * which has no frame rate) takes no part: at bitrate 0 it would be the hull's cheapest corner.
 * Points are returned as flags in input order.
 */
export const upperHull = (points: ReadonlyArray<RatePoint>): ReadonlyArray<boolean> => {
  const order = points
    .map((point, index) => ({ point, index }))
    .filter(({ point }) => Number.isFinite(point.bitrate) && point.bitrate > 0 && Number.isFinite(point.score))
    .sort((a, b) => a.point.bitrate - b.point.bitrate || b.point.score - a.point.score)
  const hull: Array<{ point: RatePoint; index: number }> = []
  for (const entry of order) {
    const last = hull[hull.length - 1]
    // Same bitrate: only the best score of it can be on the hull (it came first).
    if (last !== undefined && last.point.bitrate === entry.point.bitrate) continue
    while (hull.length >= 2) {
      const a = hull[hull.length - 2] as { point: RatePoint }
      const b = hull[hull.length - 1] as { point: RatePoint }
      if (cross(a.point, b.point, entry.point) >= 0) hull.pop()
      else break
    }
    hull.push(entry)
  }
  // The hull ends at the best score: what costs more bits for no better score is not efficient.
  let best = -1
  for (const [i, entry] of hull.entries()) {
    if (best < 0 || entry.point.score > (hull[best] as { point: RatePoint }).point.score) best = i
  }
  const marked = new Array<boolean>(points.length).fill(false)
  for (const entry of hull.slice(0, best + 1)) marked[entry.index] = true
  return marked
}

/**
 * The part of a rendition's summary read from its per-frame values (as the job's precision
 * rounded them): the first model's score of every frame, its nearest-rank 1st and 5th
 * percentiles and its worst frames.
 */
export const scoreSummary = (result: ScoreResult): Pick<RenditionSummary, "p1" | "p5" | "worst_frames"> => {
  const models = result.provenance.models ?? []
  const feature = models.length > 1 ? result.provenance.model : scoreFeature
  const frames = result.frames.map((frame) => ({ frame: frame.frame, score: frame.metrics[feature] ?? Number.NaN }))
  const scores = frames.map((frame) => frame.score)
  return {
    p1: nearestRank(scores, 1),
    p5: nearestRank(scores, 5),
    worst_frames: worstFrames(frames, worstFrameCount)
  }
}

/** The renditions, each summary's `on_hull` marked over the ladder's (bitrate, score) points. */
export const withHull = <Rendition extends { readonly score: number; readonly summary: RenditionSummary }>(
  renditions: ReadonlyArray<Rendition>
): ReadonlyArray<Rendition> => {
  const hull = upperHull(renditions.map((entry) => ({ bitrate: entry.summary.bitrate_bps, score: entry.score })))
  return renditions.map((entry, index) => ({ ...entry, summary: { ...entry.summary, on_hull: hull[index] ?? false } }))
}
