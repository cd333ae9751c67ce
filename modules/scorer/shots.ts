/**
 * Shots: where the reference cuts, and each shot's score. The native library measures, for every
 * scored frame, how far its reference's luma histogram moved from the previous frame's
 * (svc_job_frame_cuts, 0..1; one frame of context, as motion). Here that series becomes shots:
 *
 * - a frame opens a shot when its measure is at least `threshold` and at least 1.5 times every
 *   other measure within two frames of it (adaptive: fast motion, a pan or flickering content
 *   move the histogram on every frame, a cut moves it once; a flash of one or two frames moves
 *   it in and out within that window, so neither move stands out);
 * - a stretch shorter than `minFrames` between two such frames is a flash (or too short to be
 *   judged): both its cuts are dropped and it stays in the shot around it; a first or last
 *   stretch that short joins its neighbour. A clip without a cut is one shot.
 *
 * Each shot is scored with the first model's per-frame score, pooled by pooling.ts.
 */
import { harmonicMean, mean, nearestRank } from "./pooling.ts"

export const defaultShotThreshold = 0.3
export const defaultShotMinFrames = 8
/**
 * A segment's per-frame cut measure (lossless, as its other values), which the controller's merge
 * turns into the title's shots and removes: a segment cannot find the shots alone, since a shot
 * (and the neighbours a cut is compared with) may span segments.
 */
export const segmentCutMetric = "shot_cut"
/** `worst_shots`: the indices of this many lowest-scoring shots. */
export const worstShotCount = 5
/** How far a cut's measure must stand above its neighbours', and over how many frames each side. */
const standOut = 1.5
const neighbourhood = 2

export interface ShotOptions {
  /** Histogram distance (0..1] a cut must reach. */
  readonly threshold: number
  /** The shortest shot, in scored frames. */
  readonly minFrames: number
}

export interface Shot {
  /** Scored-frame index of its first frame (after skips and subsampling). */
  readonly first_frame: number
  readonly frame_count: number
  /** Mean of the first model's per-frame score over the shot. */
  readonly score: number
  readonly harmonic_mean: number
  readonly min: number
  /** Nearest-rank 5th percentile. */
  readonly p5: number
  /** Scored-frame index of its lowest score (the first such frame). */
  readonly worst_frame: number
}

/**
 * 0 and every frame whose measure passes the cut test (threshold, standing out), ascending,
 * before too-short stretches are dropped. Measures outside `cuts` count as 0: over a segment's
 * measures this is therefore a superset of the title's cuts in it (a neighbour it cannot see
 * only ever lowers what a cut must stand out from).
 */
const cutCandidates = (cuts: ArrayLike<number>, options: ShotOptions): Array<number> => {
  const n = cuts.length
  const at = (k: number) => (k >= 1 && k < n ? (cuts[k] as number) : 0)
  const boundaries = [0]
  for (let k = 1; k < n; k++) {
    const value = at(k)
    let around = 0
    for (let d = 1; d <= neighbourhood; d++) around = Math.max(around, at(k - d), at(k + d))
    if (value >= options.threshold && value >= standOut * around) boundaries.push(k)
  }
  return boundaries
}

/** The first scored frame of every shot, ascending, starting with 0 (none for no frames). */
export const shotStarts = (cuts: ArrayLike<number>, options: ShotOptions): ReadonlyArray<number> => {
  const n = cuts.length
  if (n === 0) return []
  const boundaries = cutCandidates(cuts, options)
  boundaries.push(n)
  // Drop too-short stretches, first one first, until none is left.
  for (;;) {
    const short = boundaries.findIndex(
      (start, i) => i + 1 < boundaries.length && (boundaries[i + 1] as number) - start < options.minFrames
    )
    if (short < 0 || boundaries.length <= 2) break
    const last = short + 1 === boundaries.length - 1
    if (short === 0) boundaries.splice(1, 1)
    else if (last) boundaries.splice(short, 1)
    else boundaries.splice(short, 2)
  }
  return boundaries.slice(0, -1)
}

/** Index of the first lowest value of `scores[first..end)`. */
const firstLowest = (scores: ArrayLike<number>, first: number, end: number): number => {
  let worst = first
  for (let k = first + 1; k < end; k++) if ((scores[k] as number) < (scores[worst] as number)) worst = k
  return worst
}

/** Each shot's figures from the per-frame scores (one per scored frame). */
export const scoreShots = (starts: ReadonlyArray<number>, scores: ArrayLike<number>): ReadonlyArray<Shot> =>
  starts.map((first, i) => {
    const end = starts[i + 1] ?? scores.length
    const values = Array.from({ length: end - first }, (_, k) => scores[first + k] as number)
    const worst = firstLowest(values, 0, values.length)
    return {
      first_frame: first,
      frame_count: values.length,
      score: mean(values),
      harmonic_mean: harmonicMean(values),
      min: values[worst] as number,
      p5: nearestRank(values, 5),
      worst_frame: first + worst
    }
  })

/** Most thumbnails a segment renders (each stretch between candidate cuts gives one). */
export const segmentThumbnailCap = 32

/**
 * The frames (indices into a segment's `scores`) whose thumbnails a segment renders so the merge
 * can give the title's worst shots' worst frames without reading the inputs: the first lowest
 * frame of every stretch between the segment's candidate cuts (`cutCandidates`). The title's
 * cuts in the segment are among those candidates, so every shot's part in the segment is a run
 * of whole stretches, and its first lowest frame (hence the shot's, the lowest of its parts')
 * is one of these. Bounded: a segment with more stretches than `cap` keeps the `cap` lowest
 * frames (ties: the earlier), so the merge is exact while a segment holds at most `cap`
 * stretches. In frame order.
 */
export const segmentWorstFrames = (
  cuts: ArrayLike<number>,
  scores: ArrayLike<number>,
  options: ShotOptions,
  cap = segmentThumbnailCap
): ReadonlyArray<number> => {
  if (scores.length === 0) return []
  const starts = cutCandidates(cuts, options)
  const worst = starts.map((first, i) => firstLowest(scores, first, starts[i + 1] ?? scores.length))
  return worst
    .map((frame) => ({ frame, score: scores[frame] as number }))
    .sort((a, b) => a.score - b.score || a.frame - b.frame)
    .slice(0, cap)
    .map((entry) => entry.frame)
    .sort((a, b) => a - b)
}

/** The scored frames whose pictures a result shows: the worst shots' worst frames, worst first. */
export const worstShotFrames = (
  shots: ReadonlyArray<{ readonly worst_frame: number }> | undefined,
  worst: ReadonlyArray<number> | undefined
): ReadonlyArray<number> => [...new Set((worst ?? []).flatMap((index) => shots?.[index]?.worst_frame ?? []))]

/** Indices of the `count` lowest-scoring shots, lowest first (ties: the earlier shot). */
export const worstShots = (shots: ReadonlyArray<Pick<Shot, "score">>, count = worstShotCount): ReadonlyArray<number> =>
  shots
    .map((shot, index) => ({ score: shot.score, index }))
    .sort((a, b) => a.score - b.score || a.index - b.index)
    .slice(0, count)
    .map((entry) => entry.index)

/** Shots with their figures in the job's number format (as every other pooled value). */
export const roundShots = (shots: ReadonlyArray<Shot>, round: (value: number) => number): ReadonlyArray<Shot> =>
  shots.map((shot) => ({
    ...shot,
    score: round(shot.score),
    harmonic_mean: round(shot.harmonic_mean),
    min: round(shot.min),
    p5: round(shot.p5)
  }))
