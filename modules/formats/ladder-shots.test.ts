/** The ladder's shots table (ladder-shots.ts): unaligned renditions by index, aligned ones by where they fall. */
import { describe, expect, it } from "vitest"
import type { AlignmentReport, Shot } from "../scorer/index.ts"
import { scoredOffsets, shotRows } from "./ladder-shots.ts"

const shot = (first: number, count: number, score: number): Shot => ({
  first_frame: first,
  frame_count: count,
  score,
  harmonic_mean: score,
  min: score,
  p5: score,
  worst_frame: first
})
const frames = (count: number, step = 1) => Array.from({ length: count }, (_, k) => ({ frame: k * step }))
const aligned = (reference_start: number, count: number, dropped: ReadonlyArray<number> = []): AlignmentReport => ({
  reference_start,
  distorted_start: 0,
  frames: count,
  reference_frames_dropped: dropped,
  distorted_frames_inserted: [],
  distorted_frames_repeated: [],
  confidence: 1,
  window: 120
})

describe("a ladder's shots table", () => {
  it("unaligned renditions: row k is every rendition's shot k", () => {
    const shots = [shot(0, 24, 90), shot(24, 24, 80)]
    const rows = shotRows([
      { frames: frames(48), shots },
      { frames: frames(48), shots }
    ])
    expect(rows).toEqual([
      { first: 0, end: 24, shots: [0, 0] },
      { first: 24, end: 24 + 24, shots: [1, 1] }
    ])
  })

  it("renditions at their own offsets: each placed among the ladder's frames, its shots in the rows they overlap", () => {
    // The reference's frames 0..119 without 60 are the ladder's; "late" pairs 5..119 (ladder 5..118),
    // "short" 0..54: each numbers its frames and shots from its own first pair.
    const renditions = [
      {
        frames: frames(114),
        shots: [shot(0, 35, 90), shot(35, 39, 80), shot(74, 40, 70)],
        alignment: aligned(5, 114, [60])
      },
      { frames: frames(55), shots: [shot(0, 40, 91), shot(40, 15, 81)], alignment: aligned(0, 55) }
    ]
    expect(scoredOffsets(renditions)).toEqual([5, 0])
    expect(shotRows(renditions)).toEqual([
      { first: 5, end: 40, shots: [0, 0] },
      { first: 40, end: 79, shots: [1, 1] },
      { first: 79, end: 119, shots: [2, -1] }
    ])
    // Subsampled by 2: offsets count scored frames.
    expect(scoredOffsets(renditions.map((rendition) => ({ ...rendition, frames: frames(57, 2) })))).toEqual([2.5, 0])
  })
})
