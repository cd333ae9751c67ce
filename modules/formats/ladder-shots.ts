/**
 * A ladder's shots table, one rule for `svc ladder`'s terminal table and its HTML report. Every
 * rendition's shots are the reference's, found over its own frames: unaligned renditions share
 * them (row k is every rendition's shot k); renditions aligned at their own offsets
 * (options.sync "auto") number frames from their own first pair, so each frame is placed at its
 * pair's reference frame among the ladder's frames (its offset plus its index, past a reference
 * frame it drops that others pair one more), the rows are the shots of the rendition with the
 * most frames, and each rendition's shot goes in the row of the first shot it overlaps.
 */
import { type AlignmentReport, ladderPositions, type Shot } from "../scorer/index.ts"

/** What the table reads of one rendition. */
export interface ShotsOf {
  readonly frames: ReadonlyArray<{ readonly frame: number }>
  readonly shots?: ReadonlyArray<Shot> | undefined
  /** A job's result over gRPC carries null for an alignment not made. */
  readonly alignment?: AlignmentReport | null | undefined
}

/**
 * Where each rendition's scored frame k falls among the ladder's scored frames: k unless aligned
 * at their own offsets, then its pair's position among the ladder's frames (ladderPositions; past
 * a reference frame it drops that others pair, one more each), a subsampled rendition's counted
 * in its scored frames. Past its last frame (a shot's end), as many frames after it.
 */
export const scoredPositions = (renditions: ReadonlyArray<ShotsOf>): ReadonlyArray<(scored: number) => number> => {
  const positions = ladderPositions(renditions.map((rendition) => rendition.alignment ?? undefined))
  return renditions.map((rendition, index) => {
    const pairs = positions?.[index]
    if (pairs === undefined) return (scored) => scored
    const [first, second] = rendition.frames
    const step = first && second ? second.frame - first.frame : 1
    const last = pairs.length - 1
    return (scored) => {
      const pair = scored * step
      return (pair <= last ? (pairs[pair] ?? 0) : (pairs[last] ?? 0) + pair - last) / step
    }
  })
}

/** The scored frames [first, end) a shot of a rendition placed by `place` covers among the ladder's. */
export const shotSpan = (place: (scored: number) => number, shot: Shot) => {
  const first = place(shot.first_frame)
  return { first, end: place(shot.first_frame + shot.frame_count - 1) + 1 }
}

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
  const places = scoredPositions(renditions)
  const widest = widestOf(renditions)
  const placeWidest = places[widest] ?? ((scored: number) => scored)
  return (renditions[widest]?.shots ?? []).map((shot) => {
    const { first, end } = shotSpan(placeWidest, shot)
    return {
      first,
      end,
      shots: renditions.map((rendition, index) => {
        const place = places[index] ?? placeWidest
        return (rendition.shots ?? []).findIndex((own) => {
          const span = shotSpan(place, own)
          return span.first < end && span.end > first
        })
      })
    }
  })
}
