/**
 * A ladder's shots table, one rule for `svc ladder`'s terminal table and its HTML report. Every
 * rendition's shots are the reference's, found over its own frames: unaligned renditions share
 * them (row k is every rendition's shot k); renditions aligned at their own offsets
 * (options.sync "auto") number frames from their own first pair, so each is placed at its offset
 * among the ladder's frames, the rows are the shots of the rendition with the most frames, and
 * each rendition's shot goes in the row of the first shot it overlaps.
 */
import { type AlignmentReport, ladderOffsets, type Shot } from "../scorer/index.ts"

/** What the table reads of one rendition. */
export interface ShotsOf {
  readonly frames: ReadonlyArray<{ readonly frame: number }>
  readonly shots?: ReadonlyArray<Shot> | undefined
  /** A job's result over gRPC carries null for an alignment not made. */
  readonly alignment?: AlignmentReport | null | undefined
}

/**
 * Where each rendition's scored frames start among the ladder's, in scored frames (0 unless
 * aligned at their own offsets; a subsampled rendition's offset counted in its scored frames).
 */
export const scoredOffsets = (renditions: ReadonlyArray<ShotsOf>): ReadonlyArray<number> =>
  ladderOffsets(renditions.map((rendition) => rendition.alignment ?? undefined)).map((offset, index) => {
    const [first, second] = renditions[index]?.frames ?? []
    return offset / (first && second ? second.frame - first.frame : 1)
  })

/** The rendition with the most frames (the first of them): its shots are the rows. */
export const widestOf = (renditions: ReadonlyArray<ShotsOf>): number =>
  renditions.reduce(
    (best, rendition, index) => (rendition.frames.length > (renditions[best]?.frames.length ?? 0) ? index : best),
    0
  )

export interface ShotRow {
  /** The shot's frames among the ladder's scored frames: [first, end). */
  readonly first: number
  readonly end: number
  /** Each rendition's own shot index in this row (-1: none). */
  readonly shots: ReadonlyArray<number>
}

/** The table's rows (none without shots). */
export const shotRows = (renditions: ReadonlyArray<ShotsOf>): ReadonlyArray<ShotRow> => {
  const offsets = scoredOffsets(renditions)
  const widest = widestOf(renditions)
  const shift = offsets[widest] ?? 0
  return (renditions[widest]?.shots ?? []).map((shot) => {
    const first = shift + shot.first_frame
    const end = first + shot.frame_count
    return {
      first,
      end,
      shots: renditions.map((rendition, index) => {
        const offset = offsets[index] ?? 0
        return (rendition.shots ?? []).findIndex(
          (own) => offset + own.first_frame < end && offset + own.first_frame + own.frame_count > first
        )
      })
    }
  })
}
