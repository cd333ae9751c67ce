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

/** A reference frame and the distorted frame paired with it (frame indices after the frame skips). */
export type Pair = readonly [reference: number, distorted: number]

/** The alignment of `distorted` to `reference` within `window` frames, or why there is none. */
export const align = (reference: SideThumbnails, distorted: SideThumbnails, window: number): Alignment | NoMatch => {
  const steps = alignSteps(reference, distorted, window)
  for (;;) {
    const step = steps.next()
    if (step.done) return step.value
  }
}

/** Cells of the band computed between two pauses of `alignSteps` (and `Aligner.advance`). */
export const cellsPerStep = 1 << 16

/**
 * `align` in steps: the generator pauses after about `cellsPerStep` cells, so a caller on the
 * JavaScript thread can let other work run between steps (a long clip's search takes seconds).
 * Every thumbnail pushed and both ends told at once: the streaming aligner's batch use.
 */
export function* alignSteps(
  reference: SideThumbnails,
  distorted: SideThumbnails,
  window: number
): Generator<void, Alignment | NoMatch> {
  const aligner = Aligner.whole(reference, distorted, window)
  yield* aligner.advance()
  return aligner.finish()
}

/** One side's thumbnails as they arrive: whole thumbnails count, a partial one waits for its rest. */
class ArrivingThumbnails {
  bytes: Uint8Array
  length = 0
  ended = false
  constructor(capacity: number) {
    this.bytes = new Uint8Array(capacity * thumbnailBytes)
  }
  /** A whole side, ended: its bytes are read in place, never copied or written. */
  static ended(side: SideThumbnails) {
    const whole = new ArrivingThumbnails(0)
    whole.bytes = side.bytes.subarray(0, side.frames * thumbnailBytes)
    whole.length = whole.bytes.length
    whole.ended = true
    return whole
  }
  get frames() {
    return Math.floor(this.length / thumbnailBytes)
  }
  push(chunk: Uint8Array) {
    if (this.ended) throw new Error("thumbnails pushed after their side's end")
    if (this.length + chunk.length > this.bytes.length) {
      const grown = new Uint8Array(Math.max(2 * this.bytes.length, this.length + chunk.length, 64 * thumbnailBytes))
      grown.set(this.bytes.subarray(0, this.length))
      this.bytes = grown
    }
    this.bytes.set(chunk, this.length)
    this.length += chunk.length
  }
  /** The whole thumbnails, as the search reads a side. */
  side(): SideThumbnails {
    return { frames: this.frames, bytes: this.bytes.subarray(0, this.frames * thumbnailBytes) }
  }
}

/**
 * Rows computed between two looks for newly certain pairs (`Aligner.certain`): 8, or a quarter of
 * the window. A look walks about band x lag cells (the lag is about two windows), so it costs
 * about as many rows of the band; at most every window / 4 rows it stays a fraction of the
 * search, and the pairs it finds come at most window / 4 rows later.
 */
const certainEvery = (window: number) => Math.max(8, Math.floor(window / 4))

/**
 * The alignment as both sides' thumbnails arrive (one implementation for the batch `align` and
 * a streaming score). Row i of the band (reference frame i - 1 against distorted frames up to
 * i + window) is computed as soon as its thumbnails are known: reference thumbnail i - 1 and
 * distorted thumbnails up to min(i + window, the distorted side's end), so the cells are exactly
 * those the whole search computes, in the same order.
 *
 * `certain` tells the pairs no later thumbnail can change: the final alignment is the traceback
 * from the best end cell, which is either the current best or a cell of a row not computed yet,
 * and once the last computed row is at least `window` (every start cell is in a row up to
 * `window`) the traceback of any later cell crosses that row at one of its reached cells. The
 * pairs every one of those tracebacks (and the current best's) shares are certain: they are
 * found by walking all of them back together, the latest cell first, merging equal cells, until
 * one cell is left; the pairs on its traceback are certain (none while different start cells
 * remain).
 */
export class Aligner {
  private readonly band: number
  private readonly reference: ArrivingThumbnails
  private readonly distorted: ArrivingThumbnails
  /** For each distorted frame: how many frames before it its picture has been repeated (0: it differs from the one before). */
  private runs: Uint32Array
  /** The traceback move of each computed cell: row i's at i x band + j - i + window. */
  private moves: Uint8Array
  private previous: Float64Array
  private current: Float64Array
  /** Rows computed (row 0 included). */
  private rows = 0
  private best = { score: Number.NEGATIVE_INFINITY, i: 0, j: 0 }
  /** The certain pairs so far, and the cell their traceback starts from (-1: none). */
  private readonly committed: Array<Pair> = []
  private committedCell = -1
  private rowsAtLook = -1

  constructor(
    readonly window: number,
    /** Reference frames expected (a capacity hint; more are taken). */
    expectedFrames = 0,
    /** Both sides whole (the batch search): read in place. */
    whole?: { readonly reference: SideThumbnails; readonly distorted: SideThumbnails }
  ) {
    this.band = 2 * window + 1
    this.reference = whole ? ArrivingThumbnails.ended(whole.reference) : new ArrivingThumbnails(expectedFrames)
    this.distorted = whole ? ArrivingThumbnails.ended(whole.distorted) : new ArrivingThumbnails(expectedFrames)
    this.runs = new Uint32Array(Math.max(64, expectedFrames))
    this.moves = new Uint8Array((expectedFrames + 1) * this.band)
    this.previous = new Float64Array(this.band).fill(Number.NEGATIVE_INFINITY)
    this.current = new Float64Array(this.band).fill(Number.NEGATIVE_INFINITY)
    if (whole) this.repeats(0)
  }

  /** Every thumbnail of both sides at once, both ended: the whole search, its thumbnails not copied. */
  static whole(reference: SideThumbnails, distorted: SideThumbnails, window: number) {
    return new Aligner(window, reference.frames, { reference, distorted })
  }

  /** Reference thumbnails (bytes in order, whole thumbnails or not). */
  pushReference(bytes: Uint8Array) {
    this.reference.push(bytes)
  }

  /** Distorted thumbnails (bytes in order, whole thumbnails or not). */
  pushDistorted(bytes: Uint8Array) {
    const before = this.distorted.frames
    this.distorted.push(bytes)
    this.repeats(before)
  }

  /** The repeat runs of the distorted frames from `before` on (those that just arrived). */
  private repeats(before: number) {
    const frames = this.distorted.frames
    if (frames > this.runs.length) {
      const grown = new Uint32Array(Math.max(2 * this.runs.length, frames))
      grown.set(this.runs)
      this.runs = grown
    }
    const thumbs = this.distorted.bytes
    for (let j = Math.max(1, before); j < frames; j++)
      this.runs[j] = distanceOf(thumbs, j, thumbs, j - 1) < repeatDistance ? (this.runs[j - 1] as number) + 1 : 0
  }

  /** The reference has no more frames. */
  endReference() {
    this.reference.ended = true
  }

  /** The distorted side has no more frames. */
  endDistorted() {
    this.distorted.ended = true
  }

  /** Reference and distorted frames whose thumbnails have arrived. */
  get frames() {
    return { reference: this.reference.frames, distorted: this.distorted.frames }
  }

  /** Whether row `i` can be computed from the thumbnails known. */
  private rowReady(i: number) {
    const reference = this.reference
    if (reference.ended ? i > reference.frames : i > 0 && i > reference.frames) return false
    return this.distorted.ended || this.distorted.frames >= i + this.window
  }

  /** Every row has been computed: `finish` may be called. */
  get complete() {
    return this.reference.ended && this.distorted.ended && this.rows === this.reference.frames + 1
  }

  /**
   * Computes the rows the thumbnails known allow, pausing after about `cellsPerStep` cells (the
   * same pauses as the whole search).
   */
  *advance(): Generator<void, void> {
    const { band, window } = this
    const rowsPerStep = Math.max(1, Math.floor(cellsPerStep / band))
    const referenceBytes = () => this.reference.bytes
    const distortedBytes = () => this.distorted.bytes
    for (let i = this.rows; this.rowReady(i); i = this.rows) {
      if ((i + 1) * band > this.moves.length) {
        const grown = new Uint8Array(Math.max(2 * this.moves.length, (i + 1) * band, 64 * band))
        grown.set(this.moves)
        this.moves = grown
      }
      const reference = referenceBytes()
      const distorted = distortedBytes()
      const runs = this.runs
      const cols = this.distorted.frames
      const pairDistance = (r: number, d: number) => {
        const own = distanceOf(reference, r, distorted, d)
        const run = runs[d] as number
        if (run === 0 || r - run < 0) return own
        return Math.min(own, distanceOf(reference, r - run, distorted, d))
      }
      // score(i, j): the best alignment of reference frames < i and distorted frames < j whose
      // last pair (if any) is (i - 1, j - 1) or earlier.
      const previous = this.previous
      const current = this.current
      const moves = this.moves
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
        if (move === Move.Pair && score > this.best.score) this.best = { score, i, j }
      }
      this.previous = current
      this.current = previous
      this.rows = i + 1
      if ((i + 1) % rowsPerStep === 0) yield
    }
  }

  /** The cell of the band at (i, j). */
  private cell(i: number, j: number) {
    return i * this.band + j - i + this.window
  }

  /** The cell a traceback goes to from `cell` by `move`. */
  private stepBack(cell: number, move: Move) {
    const { band } = this
    return move === Move.Pair ? cell - band : move === Move.SkipReference ? cell - band + 1 : cell - 1
  }

  /** i + j of a cell: each step back lowers it. */
  private diagonal(cell: number) {
    const i = Math.floor(cell / this.band)
    return 2 * i + (cell % this.band) - this.window
  }

  /**
   * The pairs no later thumbnail can change, in order: a prefix of the final alignment's pairs
   * (if it is a match). Looked for again every few rows; the list only grows (the same array,
   * appended to).
   */
  certain(): ReadonlyArray<Pair> {
    const last = this.rows - 1
    const due = this.complete || last >= this.rowsAtLook + certainEvery(this.window)
    if (last < this.window || !due) return this.committed
    this.rowsAtLook = last
    const { moves } = this
    const cells = new Set<number>()
    if (this.best.score > Number.NEGATIVE_INFINITY) cells.add(this.cell(this.best.i, this.best.j))
    // Every cell of the last row a path reaches (none when the reference has ended past it).
    if (!this.complete)
      for (let column = 0; column < this.band; column++) {
        const cell = last * this.band + column
        if (moves[cell] !== Move.Unreached) cells.add(cell)
      }
    if (cells.size === 0) return this.committed
    // Walk the tracebacks back together, the latest cells first, until they meet.
    let walking = cells
    while (walking.size > 1) {
      let latest = Number.NEGATIVE_INFINITY
      for (const cell of walking) latest = Math.max(latest, this.diagonal(cell))
      const next = new Set<number>()
      for (const cell of walking) {
        if (this.diagonal(cell) < latest) {
          next.add(cell)
          continue
        }
        const move = moves[cell] as Move
        // Different starts still possible: nothing more is certain.
        if (move === Move.Start || move === Move.Unreached) return this.committed
        next.add(this.stepBack(cell, move))
      }
      walking = next
    }
    const [met] = walking
    if (met === undefined || met === this.committedCell) return this.committed
    // Its traceback down to the cell met last time (every path then crossed it).
    const added: Array<Pair> = []
    let cell = met
    const stop = this.committedCell < 0 ? Number.NEGATIVE_INFINITY : this.diagonal(this.committedCell)
    while (cell !== this.committedCell && this.diagonal(cell) > stop) {
      const move = moves[cell] as Move
      if (move === Move.Start || move === Move.Unreached) break
      if (move === Move.Pair) {
        const i = Math.floor(cell / this.band)
        added.push([i - 1, i + (cell % this.band) - this.window - 1])
      }
      cell = this.stepBack(cell, move)
    }
    if (this.committedCell >= 0 && cell !== this.committedCell)
      throw new Error("alignment: certain pairs taken back (a defect)")
    // Appended in place: a long title's certain pairs are not copied at every look.
    for (let k = added.length - 1; k >= 0; k--) this.committed.push(added[k] as Pair)
    this.committedCell = met
    return this.committed
  }

  /** The alignment, once every thumbnail has been pushed, both ends told and every row computed (`complete`). */
  finish(): Alignment | NoMatch {
    if (!this.complete) throw new Error("alignment: finished before every row was computed")
    const { band, window, moves, best } = this
    const reference = this.reference.side()
    const distorted = this.distorted.side()
    const rows = reference.frames
    const cols = distorted.frames
    const runs = this.runs
    const pairDistance = (i: number, j: number) => {
      const own = distanceOf(reference.bytes, i, distorted.bytes, j)
      const run = runs[j] as number
      if (run === 0 || i - run < 0) return own
      return Math.min(own, distanceOf(reference.bytes, i - run, distorted.bytes, j))
    }
    // Walk back from the best end to the start.
    const pairs: Array<Pair> = []
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
