/**
 * Shots and percentiles through the Scorer service on clips made with the machine's ffmpeg
 * (shots-clips.ts): a clip cut from three sources gives exactly its three shots, each scored as
 * the reference tool's per-frame values over it (golden-shots/, recorded by
 * scripts/golden-shots.ts), and the clip's percentiles are the nearest-rank values of those
 * scores; a flash or a fast pan is no cut. The cut rules themselves are unit-tested on series.
 */
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { ConfigProvider, Effect, Layer, ManagedRuntime } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { modelDirEnv } from "../../../local/executables.ts"
import { scratchDir } from "../../../test/support/media.ts"
import { Ffmpeg } from "../../inputs/ffmpeg.ts"
import { scoreLadderInputs } from "../../inputs/ladder.ts"
import { scoreInputs } from "../../inputs/score.ts"
import { parseLadderRequest } from "../ladder.ts"
import { parseScoreRequest } from "../request.ts"
import { percentilesOf } from "../pooling.ts"
import { Scorer, type ScoreResult } from "../index.ts"
import {
  defaultShotMinFrames,
  defaultShotThreshold,
  scoreShots,
  segmentWorstFrames,
  shotStarts,
  worstShots
} from "../shots.ts"
import { scoreBody, scorerRuntime } from "./runtime.ts"
import { clipGeometry, md5Of, writeFastPan, writeFlash, writeThreeSources } from "./shots-clips.ts"

interface ShotsGolden {
  readonly reference_md5: string
  readonly distorted_md5: string
  readonly vmaf: ReadonlyArray<number>
}

const tolerance = 1e-4
const golden = JSON.parse(
  readFileSync(join(import.meta.dirname, "golden-shots", "three_sources.json"), "utf8")
) as ShotsGolden
const options = { ...clipGeometry, shots: true }

const runtime = scorerRuntime()
const ladderRuntime = ManagedRuntime.make(
  Layer.merge(Scorer.Default, Ffmpeg.Default).pipe(
    Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(modelDirEnv)))))
  )
)
const scratch = scratchDir("svc-shots-")
afterAll(async () => {
  await runtime.dispose()
  await ladderRuntime.dispose()
  scratch.remove()
})

/** Nearest rank written out on its own: the value at rank max(1, ceil(p n / 100)) of the sorted scores. */
const nearestRankOf = (values: ReadonlyArray<number>, p: number) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.max(1, Math.ceil((p * sorted.length) / 100)) - 1] as number
}

describe("a clip cut from three sources (30, 45, 35 frames)", () => {
  let clip: { reference: string; distorted: string }
  let result: ScoreResult
  beforeAll(async () => {
    clip = await writeThreeSources(scratch.dir)
    result = await runtime.runPromise(scoreBody({ reference: clip.reference, distorted: clip.distorted, options }))
  }, 120_000)

  it("is the clip the golden was recorded on (same ffmpeg output)", () => {
    expect(md5Of(clip.reference)).toBe(golden.reference_md5)
    expect(md5Of(clip.distorted)).toBe(golden.distorted_md5)
    expect(result.frame_count).toBe(golden.vmaf.length)
  })

  it("has exactly the shots [0, 30), [30, 75), [75, 110), each scored as the reference's frames", () => {
    const shots = result.shots ?? []
    expect(shots.map((shot) => [shot.first_frame, shot.frame_count])).toEqual([
      [0, 30],
      [30, 45],
      [75, 35]
    ])
    for (const shot of shots) {
      const theirs = golden.vmaf.slice(shot.first_frame, shot.first_frame + shot.frame_count)
      const mean = theirs.reduce((sum, value) => sum + value, 0) / theirs.length
      expect(Math.abs(shot.score - mean)).toBeLessThan(tolerance)
      expect(Math.abs(shot.min - Math.min(...theirs))).toBeLessThan(tolerance)
      expect(Math.abs(shot.p5 - nearestRankOf(theirs, 5))).toBeLessThan(tolerance)
      const harmonic = theirs.length / theirs.reduce((sum, value) => sum + 1 / (value + 1), 0) - 1
      expect(Math.abs(shot.harmonic_mean - harmonic)).toBeLessThan(tolerance)
      expect(golden.vmaf[shot.worst_frame]).toBe(Math.min(...theirs))
    }
    // Lowest score first.
    const order = [...shots.keys()].sort((a, b) => (shots[a]?.score ?? 0) - (shots[b]?.score ?? 0))
    expect(result.worst_shots).toEqual(order)
  })

  it("renders size-capped PNG thumbnails of the worst shots' worst frames, reference and distorted", () => {
    const shots = result.shots ?? []
    const frames = (result.worst_shots ?? []).map((index) => shots[index]?.worst_frame)
    expect(result.thumbnails?.map((thumbnail) => thumbnail.frame)).toEqual(frames)
    for (const thumbnail of result.thumbnails ?? []) {
      const images = [thumbnail.reference, thumbnail.distorted].map((url) => {
        expect(url).toMatch(/^data:image\/png;base64,/)
        return Buffer.from(url.slice(url.indexOf(",") + 1), "base64")
      })
      for (const image of images) {
        expect(image.subarray(1, 4).toString("latin1")).toBe("PNG")
        const width = image.readUInt32BE(16)
        const height = image.readUInt32BE(20)
        expect(width).toBeLessThanOrEqual(192)
        expect(Math.abs(height / width - clipGeometry.height / clipGeometry.width)).toBeLessThan(0.02)
        expect(image.length).toBeLessThanOrEqual(48 * 1024)
      }
      // The encode changed the picture.
      expect(images[0]?.equals(images[1] ?? Buffer.alloc(0))).toBe(false)
    }
  })

  it("decodes an encoded distorted side again for its thumbnails: the same pictures as its raw decode", async () => {
    const encoded = await ladderRuntime.runPromise(
      Effect.flatMap(
        parseScoreRequest({ reference: clip.reference, distorted: clip.distorted.replace(/\.yuv$/, ".mkv"), options }),
        (job) => Effect.flatMap(Scorer, (scorer) => scoreInputs(scorer, job))
      )
    )
    expect(encoded.shots).toEqual(result.shots)
    expect(encoded.thumbnails).toEqual(result.thumbnails)
  }, 120_000)

  it("pools p1 .. p99 of the whole clip as the nearest-rank values of the reference's scores", () => {
    for (const p of [1, 5, 10, 25, 50, 75, 90, 95, 99] as const) {
      const ours = result.pooled[`p${p}`]?.vmaf ?? Number.NaN
      expect(Math.abs(ours - nearestRankOf(golden.vmaf, p)), `p${p}`).toBeLessThan(tolerance)
    }
    // Every feature has them, ordered.
    for (const name of Object.keys(result.features)) {
      const values = [1, 5, 10, 25, 50, 75, 90, 95, 99].map((p) => result.pooled[`p${p}` as "p1"]?.[name] ?? Number.NaN)
      expect(values, name).toEqual([...values].sort((a, b) => a - b))
      expect(values[0], name).toBeGreaterThanOrEqual(result.pooled.min[name] ?? Number.NaN)
    }
  })

  it("applies options.shot_threshold and options.shot_min_frames; refuses them out of range", async () => {
    const scoredWith = (more: object) =>
      runtime.runPromise(
        scoreBody({ reference: clip.reference, distorted: clip.distorted, options: { ...options, ...more } })
      )
    // The 30-frame first stretch is shorter than 32: it joins the next (the 35-frame last one stays).
    const longer = await scoredWith({ shot_min_frames: 32 })
    expect(longer.shots?.map((shot) => [shot.first_frame, shot.frame_count])).toEqual([
      [0, 75],
      [75, 35]
    ])
    // No histogram distance of these sources reaches 1 (disjoint): no cut, one shot.
    const strict = await scoredWith({ shot_threshold: 1 })
    expect(strict.shots?.map((shot) => [shot.first_frame, shot.frame_count])).toEqual([[0, 110]])
    for (const wrong of [{ shot_threshold: 1.5 }, { shot_threshold: -0.1 }, { shot_min_frames: -1 }]) {
      const refused = await Effect.runPromise(
        Effect.flip(parseScoreRequest({ ...clip, options: { ...options, ...wrong } }))
      )
      expect(refused.message).toContain(Object.keys(wrong)[0])
    }
  }, 120_000)

  it("with subsample 2 and a frame skip, numbers shots in scored frames", async () => {
    const skipped = await runtime.runPromise(
      scoreBody({
        reference: clip.reference,
        distorted: clip.distorted,
        options: { ...options, subsample: 2, frame_skip_ref: 4, frame_skip_dist: 4 }
      })
    )
    // Input frames 4, 6, ... : the cut at input 30 opens scored frame 13 (input 30), at 75 scored frame 36 (input 76).
    expect(skipped.shots?.map((shot) => shot.first_frame)).toEqual([0, 13, 36])
    expect(skipped.shots?.reduce((sum, shot) => sum + shot.frame_count, 0)).toBe(skipped.frame_count)
  }, 120_000)
})

describe("a ladder", () => {
  it("gives every rendition the reference's shots, scored with its own frames", async () => {
    const clip = await writeThreeSources(scratch.dir)
    const result = await ladderRuntime.runPromise(
      Effect.flatMap(
        parseLadderRequest({
          reference: clip.reference,
          renditions: [
            { label: "encoded", distorted: clip.distorted },
            { label: "itself", distorted: clip.reference }
          ],
          options
        }),
        (job) => Effect.flatMap(Scorer, (scorer) => scoreLadderInputs(scorer, job))
      )
    )
    const [encoded, itself] = result.renditions
    const bounds = (shots: ScoreResult["shots"]) => shots?.map((shot) => [shot.first_frame, shot.frame_count])
    expect(bounds(encoded?.shots)).toEqual([
      [0, 30],
      [30, 45],
      [75, 35]
    ])
    expect(bounds(itself?.shots)).toEqual(bounds(encoded?.shots))
    for (const [index, shot] of (encoded?.shots ?? []).entries()) {
      const theirs = golden.vmaf.slice(shot.first_frame, shot.first_frame + shot.frame_count)
      expect(Math.abs(shot.score - theirs.reduce((sum, value) => sum + value, 0) / theirs.length)).toBeLessThan(
        tolerance
      )
      // The reference against itself scores higher in every shot.
      expect(itself?.shots?.[index]?.score ?? 0).toBeGreaterThan(shot.score)
    }
  }, 180_000)
})

describe("clips without a cut", () => {
  it.each([
    ["a flash of two frames and one of one frame", writeFlash],
    ["a fast pan", writeFastPan]
  ])(
    "%s is one shot",
    async (_, write) => {
      const path = await write(scratch.dir)
      const result = await runtime.runPromise(scoreBody({ reference: path, distorted: path, options }))
      expect(result.shots).toEqual([expect.objectContaining({ first_frame: 0, frame_count: 110 })])
      expect(result.worst_shots).toEqual([0])
    },
    120_000
  )
})

describe("no shots unless asked for", () => {
  it("leaves shots out of a result without options.shots", async () => {
    const path = await writeFlash(scratch.dir)
    const result = await runtime.runPromise(
      scoreBody({ reference: path, distorted: path, options: { ...clipGeometry, frame_cnt: 5 } })
    )
    // Empty, as the proto's repeated fields are.
    expect(result.shots).toEqual([])
    expect(result.worst_shots).toEqual([])
    expect(result.thumbnails).toEqual([])
    expect(result.pooled.p50?.vmaf).toBeDefined()
  }, 120_000)
})

describe("the cut rules", () => {
  const rules = { threshold: defaultShotThreshold, minFrames: defaultShotMinFrames }
  const series = (length: number, peaks: Readonly<Record<number, number>>) =>
    Array.from({ length }, (_, k) => peaks[k] ?? 0.01)

  it("finds a cut that stands out, even next to flickering content", () => {
    expect(shotStarts(series(40, { 20: 0.9, 21: 0.5, 23: 0.5, 25: 0.5 }), rules)).toEqual([0, 20])
  })
  it("ignores a measure below the threshold", () => {
    expect(shotStarts(series(40, { 20: 0.25 }), rules)).toEqual([0])
  })
  it("drops a stretch shorter than the minimum between two cuts (a long flash)", () => {
    expect(shotStarts(series(60, { 20: 0.9, 24: 0.9 }), rules)).toEqual([0])
  })
  it("joins a too-short first or last stretch to its neighbour", () => {
    expect(shotStarts(series(40, { 3: 0.9, 20: 0.9, 37: 0.9 }), rules)).toEqual([0, 20])
  })
  it("scores shots and ranks the worst, ties by index", () => {
    const shots = scoreShots([0, 2], [5, 1, 3, 3, 3])
    expect(shots).toEqual([
      {
        first_frame: 0,
        frame_count: 2,
        score: 3,
        harmonic_mean: 2 / (1 / 6 + 1 / 2) - 1,
        min: 1,
        p5: 1,
        worst_frame: 1
      },
      { first_frame: 2, frame_count: 3, score: 3, harmonic_mean: 3, min: 3, p5: 3, worst_frame: 2 }
    ])
    expect(worstShots(shots)).toEqual([0, 1])
  })
  it("gives a segment's candidates for every shot's worst frame, whatever the segments (random series)", () => {
    let state = 7
    const rand = () => {
      state = (Math.imul(state, 1664525) + 1013904223) >>> 0
      return state / 2 ** 32
    }
    for (let trial = 0; trial < 300; trial++) {
      const n = 20 + Math.floor(rand() * 100)
      // Cuts and flashes at random (some too close to stand out or to make a shot), scores with ties.
      const cuts = Array.from({ length: n }, () => (rand() < 0.12 ? 0.3 + rand() * 0.7 : rand() * 0.3))
      const scores = Array.from({ length: n }, () => Math.floor(rand() * 20))
      const worstFramesOfShots = scoreShots(shotStarts(cuts, rules), scores).map((shot) => shot.worst_frame)
      const bounds = [0, ...Array.from({ length: 3 }, () => Math.floor(rand() * n)).sort((a, b) => a - b), n]
      const candidates = new Set(
        bounds.slice(0, -1).flatMap((first, i) => {
          const end = bounds[i + 1] as number
          return segmentWorstFrames(cuts.slice(first, end), scores.slice(first, end), rules, n).map((k) => first + k)
        })
      )
      for (const frame of worstFramesOfShots) expect(candidates.has(frame)).toBe(true)
    }
  })
  it("caps a segment's candidates at its lowest frames, in frame order", () => {
    const cuts = series(40, { 10: 0.9, 20: 0.9, 30: 0.9 })
    const scores = Array.from({ length: 40 }, (_, k) => [50, 10, 40, 20][Math.floor(k / 10)] as number)
    expect(segmentWorstFrames(cuts, scores, rules)).toEqual([0, 10, 20, 30])
    expect(segmentWorstFrames(cuts, scores, rules, 2)).toEqual([10, 30])
  })
})

describe("percentiles", () => {
  it("rank in integers and put infinite values last", () => {
    const values = Array.from({ length: 100 }, (_, k) => k + 1)
    expect(percentilesOf(values)).toEqual({
      p1: 1,
      p5: 5,
      p10: 10,
      p25: 25,
      p50: 50,
      p75: 75,
      p90: 90,
      p95: 95,
      p99: 99
    })
    // 7 x 100 / 100 is exactly 7 (0.07 x 100 in floating point is not).
    expect(percentilesOf(Array.from({ length: 100 }, (_, k) => k)).p5).toBe(4)
    const withInfinity = percentilesOf([Number.POSITIVE_INFINITY, 3, 1, 2])
    expect(withInfinity.p75).toBe(3)
    expect(withInfinity.p99).toBe(Number.POSITIVE_INFINITY)
    expect(JSON.stringify({ p99: withInfinity.p99 })).toBe('{"p99":null}')
  })
})
