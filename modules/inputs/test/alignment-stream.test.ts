/**
 * The streaming aligner (issue 31 item 6): thumbnails pushed side by side as decoders make them,
 * in any interleaving and in pieces of any size, give the very alignment the whole search gives,
 * and every pair it calls certain on the way is in that alignment's pair list, in order (a prefix
 * of it). Random clips: a random base clip, the distorted side cut from it with a random start,
 * slate, drops, inserted frames, freezes, black runs, an early end and coding noise; random windows.
 * The streaming pair (alignment-stream.ts) on thumbnails alone: it writes the certain pairs as
 * the frames arrive and the rest at the end, each frame once and in order, and a side at its cap
 * waits while a file side's thumbnails are read, then gives up once nothing can become certain.
 * Pure: thumbnails only, no decoder.
 */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { Aligner, type Alignment, align, type NoMatch, type Pair, thumbnailBytes } from "../alignment.ts"
import { pairsOf, StreamAbandoned, StreamingPair } from "../alignment-stream.ts"

/** A small seeded generator (mulberry32): the clips follow from fast-check's integers. */
const seeded = (seed: number) => {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

type Frame = Uint8Array

const concat = (frames: ReadonlyArray<Frame>) => {
  const bytes = new Uint8Array(frames.length * thumbnailBytes)
  for (const [k, frame] of frames.entries()) bytes.set(frame, k * thumbnailBytes)
  return { frames: frames.length, bytes }
}

/** A reference and a distorted clip made from it, as the options and the seed say. */
const clipPair = (seed: number, frames: number, window: number) => {
  const random = seeded(seed)
  const integer = (below: number) => Math.floor(random() * below)
  const picture = (): Frame => {
    // Smooth content: a level and a gradient, so neighbouring frames differ by a few levels.
    const level = integer(200)
    const slope = integer(5) - 2
    return Uint8Array.from({ length: thumbnailBytes }, (_, k) => Math.max(0, Math.min(255, level + slope * (k % 32))))
  }
  const black = () => new Uint8Array(thumbnailBytes).fill(16)
  const reference: Array<Frame> = []
  while (reference.length < frames) {
    const roll = random()
    if (roll < 0.08) {
      // A static or black run on both sides.
      const run = 1 + integer(2 * window)
      const still = random() < 0.5 ? black() : picture()
      for (let k = 0; k < run; k++) reference.push(still)
    } else reference.push(picture())
  }
  const distorted: Array<Frame> = []
  const slate = random() < 0.3 ? integer(window + 1) : 0
  for (let k = 0; k < slate; k++) distorted.push(black())
  const start = random() < 0.3 ? integer(window + 1) : 0
  const end = random() < 0.3 ? reference.length - integer(frames / 3) : reference.length
  for (let r = start; r < end; r++) {
    const roll = random()
    if (roll < 0.03) continue // dropped
    if (roll < 0.06) distorted.push(random() < 0.5 ? black() : picture()) // inserted
    const last = distorted[distorted.length - 1]
    if (roll > 0.96 && last !== undefined) {
      distorted.push(last) // frozen: the previous picture again, in this frame's place
      continue
    }
    const noisy = Uint8Array.from(reference[r] as Frame, (value) => Math.max(0, Math.min(255, value + integer(5) - 2)))
    distorted.push(noisy)
  }
  return { reference: concat(reference), distorted: concat(distorted) }
}

/** Every row the aligner can compute now. */
const drain = (aligner: Aligner) => {
  for (const _ of aligner.advance());
}

/** Streams both sides into an aligner in pieces (the schedule's seed), looking for certain pairs after each. */
const streamed = (
  pair: ReturnType<typeof clipPair>,
  window: number,
  schedule: number
): { readonly found: Alignment | NoMatch; readonly looks: ReadonlyArray<ReadonlyArray<Pair>> } => {
  const random = seeded(schedule)
  const aligner = new Aligner(window)
  const offsets = { reference: 0, distorted: 0 }
  const looks: Array<ReadonlyArray<Pair>> = []
  while (offsets.reference < pair.reference.bytes.length || offsets.distorted < pair.distorted.bytes.length) {
    const side = random() < 0.5 ? "reference" : "distorted"
    const bytes = pair[side].bytes
    if (offsets[side] >= bytes.length) continue
    const piece = 1 + Math.floor(random() * 3 * thumbnailBytes)
    const chunk = bytes.subarray(offsets[side], Math.min(bytes.length, offsets[side] + piece))
    offsets[side] += chunk.length
    if (side === "reference") aligner.pushReference(chunk)
    else aligner.pushDistorted(chunk)
    if (offsets[side] === bytes.length) {
      if (side === "reference") aligner.endReference()
      else aligner.endDistorted()
    }
    drain(aligner)
    // A copy: the aligner appends to its list in place.
    looks.push([...aligner.certain()])
  }
  return { found: aligner.finish(), looks }
}

describe("the streaming aligner", () => {
  it("gives the whole search's alignment, and what it calls certain on the way is a prefix of its pairs", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 2 ** 31 - 1 }),
        fc.integer({ min: 0, max: 2 ** 31 - 1 }),
        fc.integer({ min: 20, max: 90 }),
        fc.integer({ min: 1, max: 16 }),
        (seed, schedule, frames, window) => {
          const pair = clipPair(seed, frames, window)
          const whole = align(pair.reference, pair.distorted, window)
          const { found, looks } = streamed(pair, window, schedule)
          expect(found).toEqual(whole)
          const final = "_tag" in whole ? undefined : pairsOf(whole)
          let before: ReadonlyArray<Pair> = []
          for (const look of looks) {
            // Certain pairs only grow...
            expect(look.slice(0, before.length)).toEqual(before)
            // ...and are the final alignment's first pairs.
            if (final !== undefined) expect(final.slice(0, look.length)).toEqual(look)
            before = look
          }
        }
      ),
      { numRuns: 150 }
    )
  })

  it("commits most pairs of moving content long before the end", () => {
    const window = 8
    const pair = clipPair(7, 80, window)
    const aligner = new Aligner(window)
    // The reference all known, the distorted side arriving frame by frame.
    aligner.pushReference(pair.reference.bytes)
    aligner.endReference()
    const certainAt: Array<number> = []
    for (let frame = 0; frame < pair.distorted.frames; frame++) {
      aligner.pushDistorted(pair.distorted.bytes.subarray(frame * thumbnailBytes, (frame + 1) * thumbnailBytes))
      drain(aligner)
      certainAt.push(aligner.certain().length)
    }
    aligner.endDistorted()
    drain(aligner)
    const found = aligner.finish()
    expect("_tag" in found).toBe(false)
    // With the distorted frame k known, the pairs up to about k - 2 x window are certain.
    const halfway = Math.floor(pair.distorted.frames / 2)
    expect(certainAt[halfway]).toBeGreaterThanOrEqual(halfway - 3 * window)
    expect(certainAt[halfway]).toBeGreaterThan(0)
  })
})

describe("a streaming pair's held frames", () => {
  const flat = (value: number) => new Uint8Array(thumbnailBytes).fill(value)
  const frame = () => new Uint8Array(16)

  it("waits at the cap while a file side's thumbnails are still read, and gives up once nothing can become certain", async () => {
    // The reference a file side (nothing held), the distorted side decoded with a cap of 12 frames.
    const pair = new StreamingPair(2, [false, true], 0, [0, 12], 40)
    for (let index = 0; index < 11; index++) {
      pair.thumbnails(1, flat(100))
      expect(await pair.frame(1, index, frame())).toBe(true)
    }
    // The twelfth fills the cap: the reader waits, and with the reference's thumbnails not in yet that is no stall.
    pair.thumbnails(1, flat(100))
    const twelfth = pair.frame(1, 11, frame())
    await Promise.resolve()
    expect(pair.failure).toBeUndefined()
    // A static reference: every offset fits alike, no pair is ever certain, nothing is left to write.
    pair.thumbnails(0, new Uint8Array(40 * thumbnailBytes).fill(100))
    pair.thumbnailsEnded(0)
    pair.read(0, true)
    expect(await twelfth).toBe(false)
    expect(pair.failure).toBeInstanceOf(StreamAbandoned)
  })

  it("writes the certain pairs while the frames arrive and the rest at the end, each frame once, in order", async () => {
    const window = 2
    const values = Array.from({ length: 30 }, (_, k) => (k * 37) % 200)
    // Both sides decoded; the distorted side starts one frame late.
    const pair = new StreamingPair(window, [true, true], 0, [16, 16], 30)
    const written: [Array<number>, Array<number>] = [[], []]
    const writers = ([0, 1] as const).map(async (side) => {
      for (;;) {
        const next = await pair.next(side)
        if (next === undefined) return
        written[side].push(next.index)
        pair.written(side, next.index)
      }
    })
    let found: unknown
    pair.outcome((outcome) => {
      found = outcome
    })
    for (let k = 0; k < 30; k++) {
      pair.thumbnails(0, flat(values[k] as number))
      expect(await pair.frame(0, k, frame())).toBe(true)
      if (k + 1 < 30) {
        pair.thumbnails(1, flat(values[k + 1] as number))
        expect(await pair.frame(1, k, frame())).toBe(true)
      }
    }
    expect(written[0].length).toBeGreaterThan(10)
    pair.thumbnailsEnded(0)
    pair.thumbnailsEnded(1)
    pair.read(0, true)
    pair.read(1, true)
    await Promise.all(writers)
    expect(found).toMatchObject({ reference_start: 1, distorted_start: 0, frames: 29 })
    expect(written[0]).toEqual(Array.from({ length: 29 }, (_, k) => k + 1))
    expect(written[1]).toEqual(Array.from({ length: 29 }, (_, k) => k))
  })

  it("does not hold a decoded reference running on past a distorted clip that ended early", async () => {
    // Both sides decoded, caps of 16; the distorted clip is the reference's first 20 of 60 frames.
    const values = Array.from({ length: 60 }, (_, k) => (k * 37) % 200)
    const pair = new StreamingPair(2, [true, true], 0, [16, 16], 60)
    const writers = ([0, 1] as const).map(async (side) => {
      for (let next = await pair.next(side); next !== undefined; next = await pair.next(side))
        pair.written(side, next.index)
    })
    for (let k = 0; k < 20; k++) {
      pair.thumbnails(0, flat(values[k] as number))
      expect(await pair.frame(0, k, frame())).toBe(true)
      pair.thumbnails(1, flat(values[k] as number))
      expect(await pair.frame(1, k, frame())).toBe(true)
    }
    pair.thumbnailsEnded(1)
    pair.read(1, true)
    // 40 reference frames past the distorted clip's end: more than the cap, none held for long.
    for (let k = 20; k < 60; k++) {
      pair.thumbnails(0, flat(values[k] as number))
      expect(await pair.frame(0, k, frame())).toBe(true)
    }
    pair.thumbnailsEnded(0)
    pair.read(0, true)
    await Promise.all(writers)
    expect(pair.failure).toBeUndefined()
    let found: unknown
    pair.outcome((outcome) => {
      found = outcome
    })
    expect(found).toMatchObject({ reference_start: 0, distorted_start: 0, frames: 20 })
  })
})
