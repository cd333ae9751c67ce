/**
 * Alignment (`options.sync: "auto"`, issue 31): how the distorted clip lines up with the
 * reference, found from small luma thumbnails of both (block means, `thumbnailWidth` x
 * `thumbnailHeight`, 8-bit), before anything is scored. Pure: thumbnails in, pairing out.
 *
 * The distance of two frames is the mean absolute difference of their thumbnails (0..255). One
 * global alignment, a banded dynamic programme like a sequence alignment, maximises
 *
 *   sum over pairs (i, j) of (matchReward - distance(i, j))  -  gapCost x (frames left out mid-clip)
 *                                                           -  startCost x (reference_start + distorted_start)
 *
 * over monotone pairings: frames before the first pair are the starts (each at most the window),
 * frames after the last pair are outside the overlap (free), a reference frame skipped between
 * pairs is dropped, a distorted frame skipped between pairs is inserted. Every pair keeps
 * |i - j| <= window (the window bounds the starts and the drift the drops and inserts add up to).
 * The small start cost makes ties in black or static runs go to the smallest offsets.
 *
 * A distorted frame that repeats the one before (a freeze that keeps the timing) shows an earlier
 * reference frame: its distance is the smaller of the one to the reference frame at its position
 * and the one to the reference frame where its run of repeats began, so it stays paired by
 * position; it is reported as repeated when the reference moves there.
 *
 * Confidence: the share of pairs whose distorted frame is anchored: its distance to its own
 * reference frame is below 85 % (`anchorRatio`) of, and at least 0.1 (`anchorMargin`) below,
 * the smaller distance to the reference frames just before and after it; how much of the pairing
 * the content itself pins down. Moving content gives
 * 1, static or black content (every offset fits as well) and frozen frames 0. Below
 * `lowConfidence` the result carries a warning.
 */
import type { AlignmentReport } from "../scorer/index.ts"

export const thumbnailWidth = 32
export const thumbnailHeight = 18
export const thumbnailBytes = thumbnailWidth * thumbnailHeight

/** A pair scores this much minus its distance: a distance above it is no match at all. */
export const matchReward = 8
/** What each frame left out between pairs (dropped or inserted) costs. */
export const gapCost = 8
/** What each frame before the first pair costs: ties go to the smallest offsets. */
const startCost = 0.01
/** Thumbnails closer than this (mean absolute difference, 0..255) show the same picture. */
export const repeatDistance = 0.5
/** A pair is anchored when its distance is below this share of the distance one frame off... */
const anchorRatio = 0.85
/** ...and at least this much below it (0..255): encoding noise on a static picture anchors nothing. */
const anchorMargin = 0.1
/** Below this confidence the alignment is reported with a warning. */
export const lowConfidence = 0.5
/** An alignment pairing fewer than this share of the shorter side's frames is no match. */
const minPairedShare = 0.5

/** Each side's thumbnails, frame after frame (after the frame skips), `thumbnailBytes` each. */
export interface SideThumbnails {
  readonly frames: number
  readonly bytes: Uint8Array
}

/** What the alignment found, in frames counted after each side's frame skip. */
export type Alignment = AlignmentReport

/** The best alignment found is no match: its starts and mean distance, for the refusal. */
export interface NoMatch {
  readonly _tag: "NoMatch"
  readonly window: number
  readonly reference_start: number
  readonly distorted_start: number
  readonly frames: number
  readonly meanDistance: number
}

/** Mean absolute difference of thumbnail `a` of `x` and thumbnail `b` of `y`. */
const distanceOf = (x: Uint8Array, a: number, y: Uint8Array, b: number): number => {
  let sum = 0
  const offsetA = a * thumbnailBytes
  const offsetB = b * thumbnailBytes
  for (let k = 0; k < thumbnailBytes; k++) sum += Math.abs((x[offsetA + k] as number) - (y[offsetB + k] as number))
  return sum / thumbnailBytes
}

/** For each frame: how many frames before it its picture has been repeated (0: it differs from the one before). */
export const repeatRuns = (side: SideThumbnails): Uint32Array => {
  const runs = new Uint32Array(side.frames)
  for (let j = 1; j < side.frames; j++)
    if (distanceOf(side.bytes, j, side.bytes, j - 1) < repeatDistance) runs[j] = (runs[j - 1] as number) + 1
  return runs
}

/** Bytes the search holds besides the thumbnails: one traceback byte per cell of the band. */
export const searchBytes = (referenceFrames: number, distortedFrames: number, window: number): number =>
  (referenceFrames + 1) * (2 * window + 1) + 16 * (2 * window + 1) + (referenceFrames + distortedFrames) * 4

enum Move {
  Unreached = 0,
  Start = 1,
  Pair = 2,
  /** A reference frame left out (i - 1). */
  SkipReference = 3,
  /** A distorted frame left out (j - 1). */
  SkipDistorted = 4
}

/** The alignment of `distorted` to `reference` within `window` frames, or why there is none. */
export const align = (reference: SideThumbnails, distorted: SideThumbnails, window: number): Alignment | NoMatch => {
  const steps = alignSteps(reference, distorted, window)
  for (;;) {
    const step = steps.next()
    if (step.done) return step.value
  }
}

/** Cells of the band computed between two pauses of `alignSteps`. */
export const cellsPerStep = 1 << 16

/**
 * `align` in steps: the generator pauses after about `cellsPerStep` cells, so a caller on the
 * JavaScript thread can let other work run between steps (a long clip's search takes seconds).
 */
export function* alignSteps(
  reference: SideThumbnails,
  distorted: SideThumbnails,
  window: number
): Generator<void, Alignment | NoMatch> {
  const rows = reference.frames
  const cols = distorted.frames
  const band = 2 * window + 1
  const runs = repeatRuns(distorted)
  const pairDistance = (i: number, j: number) => {
    const own = distanceOf(reference.bytes, i, distorted.bytes, j)
    const run = runs[j] as number
    if (run === 0 || i - run < 0) return own
    return Math.min(own, distanceOf(reference.bytes, i - run, distorted.bytes, j))
  }
  // score(i, j): the best alignment of reference frames < i and distorted frames < j whose last
  // pair (if any) is (i - 1, j - 1) or earlier; cell (i, j) of the band is at i * band + j - i + window.
  const moves = new Uint8Array((rows + 1) * band)
  let previous = new Float64Array(band).fill(Number.NEGATIVE_INFINITY)
  let current = new Float64Array(band).fill(Number.NEGATIVE_INFINITY)
  let best = { score: Number.NEGATIVE_INFINITY, i: 0, j: 0 }
  for (let i = 0; i <= rows; i++) {
    current.fill(Number.NEGATIVE_INFINITY)
    for (let column = 0; column < band; column++) {
      const j = i + column - window
      if (j < 0 || j > cols) continue
      let score = Number.NEGATIVE_INFINITY
      let move = Move.Unreached
      if (i <= window && j <= window) {
        score = -startCost * (i + j)
        move = Move.Start
      }
      if (i > 0 && j > 0) {
        const paired = (previous[column] as number) + matchReward - pairDistance(i - 1, j - 1)
        if (paired > score) {
          score = paired
          move = Move.Pair
        }
      }
      if (i > 0 && column + 1 < band) {
        const dropped = (previous[column + 1] as number) - gapCost
        if (dropped > score) {
          score = dropped
          move = Move.SkipReference
        }
      }
      if (column > 0) {
        const inserted = (current[column - 1] as number) - gapCost
        if (inserted > score) {
          score = inserted
          move = Move.SkipDistorted
        }
      }
      current[column] = score
      moves[i * band + column] = move
      // The overlap ends after a pair: the frames after it are free.
      if (move === Move.Pair && score > best.score) best = { score, i, j }
    }
    ;[previous, current] = [current, previous]
    if ((i + 1) % Math.max(1, Math.floor(cellsPerStep / band)) === 0) yield
  }
  // Walk back from the best end to the start.
  const pairs: Array<readonly [number, number]> = []
  let i = best.i
  let j = best.j
  for (;;) {
    const move = moves[i * band + j - i + window] as Move
    if (move === Move.Pair) {
      pairs.push([i - 1, j - 1])
      i--
      j--
    } else if (move === Move.SkipReference) i--
    else if (move === Move.SkipDistorted) j--
    else break
  }
  pairs.reverse()
  const first = pairs[0] ?? [i, j]
  const distances = pairs.map(([r, d]) => pairDistance(r, d))
  const meanDistance = distances.length === 0 ? Number.POSITIVE_INFINITY : mean(distances)
  const shorter = Math.min(rows, cols)
  if (pairs.length === 0 || pairs.length < minPairedShare * shorter || meanDistance > matchReward)
    return bestCandidate(reference, distorted, window)
  const pairedReference = new Set(pairs.map(([r]) => r))
  const pairedDistorted = new Set(pairs.map(([, d]) => d))
  const last = pairs[pairs.length - 1] ?? first
  const between = (from: number, to: number, paired: ReadonlySet<number>) =>
    Array.from({ length: to - from }, (_, k) => from + k).filter((frame) => !paired.has(frame))
  const repeated = pairs
    .filter(
      ([r, d]) =>
        (runs[d] as number) > 0 && r > 0 && distanceOf(reference.bytes, r, reference.bytes, r - 1) >= repeatDistance
    )
    .map(([, d]) => d)
  // Confidence: the share of pairs whose distorted frame fits its own reference frame clearly
  // better than the reference frames one before and after it.
  let anchored = 0
  for (const [r, d] of pairs) {
    const own = distanceOf(reference.bytes, r, distorted.bytes, d)
    const neighbours = [r - 1, r + 1].filter((n) => n >= 0 && n < rows)
    const shifted = Math.min(...neighbours.map((n) => distanceOf(reference.bytes, n, distorted.bytes, d)))
    if (own < anchorRatio * shifted && shifted - own > anchorMargin) anchored++
  }
  const confidence = anchored / pairs.length
  const rounded = Math.round(confidence * 1000) / 1000
  return {
    reference_start: first[0],
    distorted_start: first[1],
    frames: pairs.length,
    reference_frames_dropped: between(first[0], last[0], pairedReference),
    distorted_frames_inserted: between(first[1], last[1], pairedDistorted),
    distorted_frames_repeated: repeated,
    confidence: rounded,
    window,
    ...(rounded < lowConfidence
      ? {
          warning: `alignment confidence ${rounded} is below ${lowConfidence}: static or black content fits several offsets; the smallest was taken`
        }
      : {})
  }
}

/** Frames compared per offset when naming the best candidate of a refusal. */
const candidateFrames = 250

/** The start offsets within the window whose straight pairing (no drops) differs least: a refusal's best candidate. */
const bestCandidate = (reference: SideThumbnails, distorted: SideThumbnails, window: number): NoMatch => {
  let best: NoMatch = {
    _tag: "NoMatch",
    window,
    reference_start: 0,
    distorted_start: 0,
    frames: 0,
    meanDistance: Number.POSITIVE_INFINITY
  }
  // Nearest offsets first: a tie keeps the smallest.
  for (let step = 0; step <= 2 * window; step++) {
    const offset = step % 2 === 0 ? step / 2 : -(step + 1) / 2
    const referenceStart = Math.max(0, -offset)
    const distortedStart = Math.max(0, offset)
    const frames = Math.min(reference.frames - referenceStart, distorted.frames - distortedStart)
    if (frames <= 0) continue
    const compared = Math.min(frames, candidateFrames)
    let sum = 0
    for (let k = 0; k < compared; k++)
      sum += distanceOf(reference.bytes, referenceStart + k, distorted.bytes, distortedStart + k)
    const meanDistance = sum / compared
    if (meanDistance < best.meanDistance)
      best = { ...best, reference_start: referenceStart, distorted_start: distortedStart, frames, meanDistance }
  }
  return best
}

const mean = (values: ReadonlyArray<number>) => values.reduce((sum, value) => sum + value, 0) / values.length

/** The refusal's text: the window and the best candidate found. */
export const noMatchMessage = (found: NoMatch) =>
  `options.sync "auto" found no match within sync_window ${found.window} frames: the best candidate, reference_start ${found.reference_start} and distorted_start ${found.distorted_start}, differs by ${Number.isFinite(found.meanDistance) ? found.meanDistance.toFixed(1) : "n/a"} of 255 in mean luma over its ${found.frames} overlapping frames (a match is below ${matchReward})`

/**
 * The frames of one side that are scored, as input frame indices (after the side's frame skip):
 * from its start, leaving out its cut frames, `frames` of them.
 */
export const scoredFrames = (start: number, cut: ReadonlyArray<number>, frames: number): ReadonlyArray<number> => {
  const left = new Set(cut)
  const out: Array<number> = []
  for (let frame = start; out.length < frames; frame++) if (!left.has(frame)) out.push(frame)
  return out
}

/** Where one side's scored frames come from: its start and the frames cut out (an alignment's, or none). */
export interface SidePairing {
  readonly start: number
  readonly cut: ReadonlyArray<number>
}

/** Unaligned: pair k is input frame k. */
export const unpaired: SidePairing = { start: 0, cut: [] }

/**
 * The input frame (after the side's frame skip) of each pair index in `pairs`, as the aligned
 * score reads the side: `scoredFrames` over as many pairs as the largest asks for.
 */
export const inputFramesOf = (pairing: SidePairing, pairs: ReadonlyArray<number>): ReadonlyArray<number> => {
  const frames = scoredFrames(pairing.start, pairing.cut, pairs.length === 0 ? 0 : Math.max(...pairs) + 1)
  return pairs.map((pair) => frames[pair] as number)
}
