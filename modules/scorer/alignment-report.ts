/**
 * What `options.sync: "auto"` did, as the response reports it (`alignment`): frames are counted
 * after each side's frame skip. Found by modules/inputs/alignment.ts; the scorer only carries it.
 */
export interface AlignmentReport {
  /** The first reference frame scored. */
  readonly reference_start: number
  /** The first distorted frame scored (a slate or leader before it is left out). */
  readonly distorted_start: number
  /** Pairs found (frame_cnt and subsample then count these). */
  readonly frames: number
  /** Reference frames with no counterpart in the distorted clip, between its first and last pair. */
  readonly reference_frames_dropped: ReadonlyArray<number>
  /** Distorted frames with no counterpart in the reference (left out of the score). */
  readonly distorted_frames_inserted: ReadonlyArray<number>
  /** Distorted frames repeating the one before while the reference moves (a freeze): scored as seen. */
  readonly distorted_frames_repeated: ReadonlyArray<number>
  /** 0..1: 1 - mean pair distance / mean distance one frame off (modules/inputs/alignment.ts). */
  readonly confidence: number
  /** The sync window searched, in frames. */
  readonly window: number
  /** Set when the confidence is low: the alignment may be one of several that fit. */
  readonly warning?: string
}

/** The reference frames an alignment pairs, in order: from reference_start, its dropped frames left out. */
export const pairedReferenceFrames = (alignment: AlignmentReport): ReadonlyArray<number> => {
  const dropped = new Set(alignment.reference_frames_dropped)
  const frames: Array<number> = []
  for (let frame = alignment.reference_start; frames.length < alignment.frames; frame++)
    if (!dropped.has(frame)) frames.push(frame)
  return frames
}

/**
 * An aligned ladder's frames: the reference frames any rendition pairs, in order (the reference
 * is read once over them; each rendition is scored over its own), and each rendition's paired
 * reference frames.
 */
export const ladderFrames = (alignments: ReadonlyArray<AlignmentReport>) => {
  const paired = alignments.map(pairedReferenceFrames)
  return { frames: [...new Set(paired.flat())].sort((a, b) => a - b), paired }
}

/**
 * Where each rendition's pairs fall among its ladder's frames (ladderFrames), in request order:
 * pair k of rendition r is the ladder's frame `positions[r][k]`. Renditions that drop the same
 * reference frames where they overlap: its first pair's position plus k; past a reference frame a
 * rendition drops and another pairs (a ladder scored in several passes), one more each. Undefined
 * when any rendition is not aligned.
 */
export const ladderPositions = (
  alignments: ReadonlyArray<AlignmentReport | undefined>
): ReadonlyArray<ReadonlyArray<number>> | undefined => {
  const given = alignments.flatMap((alignment) => (alignment ? [alignment] : []))
  if (given.length !== alignments.length) return undefined
  const { frames, paired } = ladderFrames(given)
  const indexOf = new Map(frames.map((frame, index) => [frame, index]))
  return paired.map((list) => list.map((frame) => indexOf.get(frame) ?? 0))
}

/** Frame numbers as runs: "50-52, 60". */
const runsText = (frames: ReadonlyArray<number>): string => {
  const runs: Array<[number, number]> = []
  for (const frame of frames) {
    const last = runs[runs.length - 1]
    if (last !== undefined && last[1] + 1 === frame) last[1] = frame
    else runs.push([frame, frame])
  }
  return runs.map(([from, to]) => (from === to ? String(from) : `${from}-${to}`)).join(", ")
}

const listed = (what: string, frames: ReadonlyArray<number>) =>
  frames.length === 0 ? `no ${what}` : `${frames.length} ${what} (${runsText(frames)})`

/** One line for people (CLI table, MCP text, HTML report): what the alignment did. */
export const alignmentLine = (alignment: AlignmentReport): string =>
  `reference from frame ${alignment.reference_start}, distorted from frame ${alignment.distorted_start}, ` +
  `${alignment.frames} pairs; ${listed("reference frames dropped", alignment.reference_frames_dropped)}, ` +
  `${listed("distorted frames inserted", alignment.distorted_frames_inserted)}, ` +
  `${listed("repeated", alignment.distorted_frames_repeated)}; confidence ${alignment.confidence}` +
  (alignment.warning ? ` (warning: ${alignment.warning})` : "")
