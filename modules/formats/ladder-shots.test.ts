/** The ladder's shots table (ladder-shots.ts): unaligned renditions by index, aligned ones by where they fall; the HTML report's series placed the same way. */
import { describe, expect, it } from "vitest"
import type { AlignmentReport, Shot } from "../scorer/index.ts"
import { renderLadderHtml } from "./ladder-html.ts"
import { scoredPositions, shotRows } from "./ladder-shots.ts"

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
    const offsets = (list: typeof renditions) => scoredPositions(list).map((place) => place(0))
    expect(offsets(renditions)).toEqual([5, 0])
    expect(shotRows(renditions)).toEqual([
      { first: 5, end: 40, shots: [0, 0] },
      { first: 40, end: 79, shots: [1, 1] },
      { first: 79, end: 119, shots: [2, -1] }
    ])
    // Subsampled by 2: offsets count scored frames.
    expect(offsets(renditions.map((rendition) => ({ ...rendition, frames: frames(57, 2) })))).toEqual([2.5, 0])
  })

  it("a rendition dropping reference frames another pairs: its frames past the drop placed after them", () => {
    // "full" pairs reference frames 0..119; "dropped" leaves out 50..52 (a ladder in two passes):
    // its frame 50 is the ladder's 53, so its shot over its frames 48..50 reaches the full one's second shot.
    const renditions = [
      {
        frames: frames(117),
        shots: [shot(0, 48, 90), shot(48, 3, 80), shot(51, 66, 70)],
        alignment: aligned(0, 117, [50, 51, 52])
      },
      { frames: frames(120), shots: [shot(0, 51, 91), shot(51, 69, 81)], alignment: aligned(0, 120) }
    ]
    const [dropped] = scoredPositions(renditions)
    expect([49, 50, 116].map((scored) => dropped?.(scored))).toEqual([49, 53, 119])
    expect(shotRows(renditions)).toEqual([
      { first: 0, end: 51, shots: [0, 0] },
      { first: 51, end: 120, shots: [1, 1] }
    ])
  })
})

describe("the ladder report's series", () => {
  it("gives each frame's position for a rendition dropping reference frames another pairs, the offset alone otherwise", () => {
    const rendition = (label: string, count: number, alignment: AlignmentReport) => ({
      label,
      distorted: `${label}.mp4`,
      score: 90,
      p1: 80,
      p5: 85,
      harmonicMean: 89,
      min: 70,
      bitrateBps: 1_000_000,
      width: 64,
      height: 48,
      codec: "h264",
      onHull: true,
      frames: Array.from({ length: count }, (_, k) => ({ frame: k, score: 90 })),
      alignment
    })
    const page = renderLadderHtml(
      [rendition("dropped", 117, aligned(0, 117, [50, 51, 52])), rendition("late", 113, aligned(7, 113))],
      { reference: "ref.y4m", model: "m", modelSha256: "0", scoredOn: "here", client: "svc", generatedAt: new Date(0) }
    )
    const data = JSON.parse(
      /<script type="application\/json" id="ladder-data">(.*?)<\/script>/s.exec(page)?.[1] ?? "{}"
    ) as { renditions: ReadonlyArray<{ offset: number; positions?: ReadonlyArray<number> }> }
    const [dropped, late] = data.renditions
    expect(dropped?.offset).toBe(0)
    expect(dropped?.positions?.slice(48, 52)).toEqual([48, 49, 53, 54])
    expect(dropped?.positions).toHaveLength(117)
    expect(late).toMatchObject({ offset: 7 })
    expect(late?.positions).toBeUndefined()
  })
})
