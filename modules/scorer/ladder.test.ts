import { Effect, Either } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { maxRenditions, parseLadderRequest } from "./ladder.ts"
import { bitrateOf, type RatePoint, upperHull, worstFrames } from "./ladder-summary.ts"
import { nearestRank } from "./pooling.ts"

const parse = (input: unknown) => Effect.runSync(Effect.either(parseLadderRequest(input)))
const refusal = (input: unknown) => {
  const result = parse(input)
  if (Either.isRight(result)) throw new Error("accepted")
  return result.left.message
}

describe("parseLadderRequest", () => {
  const base = {
    reference: "/m/ref.mkv",
    renditions: [
      { label: "1080p", distorted: "/m/1080.mp4" },
      { label: "540p", distorted: "/m/540.mkv", options: { scale: "lanczos", frame_skip_dist: 2 } }
    ],
    options: { features: ["psnr"], frame_cnt: 10 }
  }

  it("gives each rendition the score job its pair stands for: ladder-wide options, then its own", () => {
    const job = Effect.runSync(parseLadderRequest(base))
    expect(job.reference).toBe("/m/ref.mkv")
    expect(job.renditions.map((r) => r.label)).toEqual(["1080p", "540p"])
    const [first, second] = job.renditions
    expect(first?.job).toMatchObject({ distorted: "/m/1080.mp4", frameCount: 10, scale: "bicubic", features: ["psnr"] })
    expect(second?.job).toMatchObject({ distorted: "/m/540.mkv", frameCount: 10, scale: "lanczos", frameSkipDist: 2 })
  })

  it("a raw rendition's own geometry is its own; the ladder's options give the raw reference's", () => {
    const job = Effect.runSync(
      parseLadderRequest({
        reference: "/m/ref.yuv",
        renditions: [{ label: "a", distorted: "/m/a.yuv", options: { width: 640, height: 360 } }],
        options: { width: 1280, height: 720 }
      })
    )
    expect(job.referenceGeometry).toMatchObject({ width: 1280, height: 720 })
    expect(job.renditions[0]?.job.geometry).toMatchObject({ width: 640, height: 360 })
  })

  it("refuses, in the style of the score request", () => {
    expect(refusal({ ...base, renditions: [] })).toMatch(/^renditions: .*1 to 16/)
    const many = Array.from({ length: maxRenditions + 1 }, (_, i) => ({ label: `r${i}`, distorted: "/m/x.mp4" }))
    expect(refusal({ ...base, renditions: many })).toBe(`renditions: at most 16 renditions (17 given)`)
    expect(refusal({ ...base, renditions: [{ label: "", distorted: "/x" }] })).toMatch(
      /^renditions\[0\]\.label: "" is not a label/
    )
    expect(refusal({ ...base, renditions: [{ label: "a b", distorted: "/x" }] })).toMatch(/is not a label/)
    expect(refusal({ ...base, renditions: [{ label: "x".repeat(65), distorted: "/x" }] })).toMatch(/is not a label/)
    expect(
      refusal({
        ...base,
        renditions: [
          { label: "a", distorted: "/x" },
          { label: "a", distorted: "/y" }
        ]
      })
    ).toBe('renditions[1].label: "a" names two renditions')
    expect(refusal({ ...base, renditions: [{ label: "a" }] })).toBe("renditions[0].distorted: is required")
    expect(refusal({ ...base, renditions: [{ label: "a", distorted: "/x", options: { frame_cnt: 3 } }] })).toMatch(
      /^renditions\[0\]\.options\.frame_cnt: is the whole ladder's \(set it in options\)/
    )
    expect(refusal({ ...base, extra: 1 })).toMatch(
      /^extra: is not a field of the request \(known: reference, renditions/
    )
    expect(refusal({ ...base, options: { threads: 999 } })).toMatch(/^options\.threads: 999 /)
    expect(refusal({ ...base, renditions: [{ label: "a", distorted: "/x.yuv" }] })).toMatch(
      /^renditions\[0\] \(a\): options\.width and options\.height are required/
    )
    expect(refusal({ ...base, model: "../etc" })).toMatch(/is not a model name/)
  })
})

describe("ladder summary", () => {
  it("nearest-rank percentiles", () => {
    const values = [15, 20, 35, 40, 50]
    expect(nearestRank(values, 5)).toBe(15)
    expect(nearestRank(values, 30)).toBe(20)
    expect(nearestRank(values, 40)).toBe(20)
    expect(nearestRank(values, 50)).toBe(35)
    expect(nearestRank(values, 100)).toBe(50)
    const hundred = Array.from({ length: 100 }, (_, i) => 100 - i)
    expect(nearestRank(hundred, 1)).toBe(1)
    expect(nearestRank(hundred, 5)).toBe(5)
    expect(nearestRank([7], 1)).toBe(7)
    expect(nearestRank([], 1)).toBeNaN()
  })

  it("nearest-rank: at least p% of values at or below, and it is one of them (property)", () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ noNaN: true, noDefaultInfinity: true }), { minLength: 1 }),
        fc.integer({ min: 1, max: 100 }),
        (values, p) => {
          const v = nearestRank(values, p)
          expect(values).toContain(v)
          expect(values.filter((x) => x <= v).length).toBeGreaterThanOrEqual((p / 100) * values.length)
          expect(values.filter((x) => x < v).length).toBeLessThan((p / 100) * values.length)
        }
      )
    )
  })

  it("worst frames: lowest first, ties by frame index, at most the count", () => {
    const frames = [5, 3, 9, 3, 1].map((score, frame) => ({ frame, score }))
    expect(worstFrames(frames, 3)).toEqual([
      { frame: 4, score: 1 },
      { frame: 1, score: 3 },
      { frame: 3, score: 3 }
    ])
    expect(worstFrames(frames, 10)).toHaveLength(5)
  })

  it("bitrate is size x 8 / duration, 0 without a duration", () => {
    expect(bitrateOf(1_000_000, 8)).toBe(1_000_000)
    expect(bitrateOf(1000, 0)).toBe(0)
  })

  it("hull: the efficient renditions", () => {
    const points = [
      { bitrate: 500, score: 60 },
      { bitrate: 1000, score: 66 }, // below the segment 500..2000
      { bitrate: 2000, score: 85 },
      { bitrate: 4000, score: 95 },
      { bitrate: 6000, score: 94 }, // more bits, lower score
      { bitrate: 4000, score: 90 } // same bits as a better one
    ]
    expect(upperHull(points)).toEqual([true, false, true, true, false, false])
    expect(upperHull([])).toEqual([])
    expect(upperHull([{ bitrate: 1, score: 1 }])).toEqual([true])
  })

  it("hull: a rendition without a bitrate (raw YUV: 0) is never on it, and moves nothing", () => {
    const points = [
      { bitrate: 0, score: 99 },
      { bitrate: 500, score: 60 },
      { bitrate: 2000, score: 85 }
    ]
    expect(upperHull(points)).toEqual([false, true, true])
    expect(upperHull([{ bitrate: 0, score: 50 }])).toEqual([false])
  })

  const pointsArb = fc.array(
    fc.record({
      bitrate: fc.integer({ min: 1, max: 100_000 }),
      score: fc.integer({ min: 0, max: 10_000 }).map((s) => s / 100)
    }),
    { minLength: 1, maxLength: 16 }
  )

  it("hull (property): increasing in bitrate and score, concave, nothing above it, ends at the best score", () => {
    fc.assert(
      fc.property(pointsArb, (points: Array<RatePoint>) => {
        const marks = upperHull(points)
        const hull = points.filter((_, i) => marks[i]).sort((a, b) => a.bitrate - b.bitrate)
        expect(hull.length).toBeGreaterThan(0)
        for (let i = 1; i < hull.length; i++) {
          const a = hull[i - 1] as RatePoint
          const b = hull[i] as RatePoint
          expect(b.bitrate).toBeGreaterThan(a.bitrate)
          expect(b.score).toBeGreaterThan(a.score)
          if (i >= 2) {
            const o = hull[i - 2] as RatePoint
            // slope(o,a) > slope(a,b): strictly concave corners
            expect((a.score - o.score) * (b.bitrate - a.bitrate)).toBeGreaterThan(
              (b.score - a.score) * (a.bitrate - o.bitrate)
            )
          }
        }
        const best = Math.max(...points.map((p) => p.score))
        expect(hull[hull.length - 1]?.score).toBe(best)
        const cheapest = Math.min(...points.map((p) => p.bitrate))
        expect(hull[0]?.bitrate).toBe(cheapest)
        // No point lies strictly above the hull's polyline within its bitrate span.
        for (const p of points) {
          for (let i = 1; i < hull.length; i++) {
            const a = hull[i - 1] as RatePoint
            const b = hull[i] as RatePoint
            if (p.bitrate >= a.bitrate && p.bitrate <= b.bitrate) {
              const line = a.score + ((b.score - a.score) * (p.bitrate - a.bitrate)) / (b.bitrate - a.bitrate)
              expect(p.score).toBeLessThanOrEqual(line + 1e-9)
            }
          }
        }
      })
    )
  })
})
