/**
 * Synthetic high-resolution pairs for the golden tests the fixture set cannot cover (its clips
 * are 320x240 and 352x288): the vmaf_v1.0.16 models' cambi_high_res_speedup acts from 1920x1080
 * up, and their speed_chroma needs chroma planes of 80x80 and more after its prescale. The
 * frames are computed, not stored: the same bytes on every machine (integer arithmetic and a
 * fixed pseudo-random sequence), so the reference's output on them (golden-models/) stays valid.
 *
 * Reference: smooth luma and chroma ramps (where banding shows), textured blocks and a pattern
 * that moves from frame to frame. Distorted: the same with its luma ramp in 8-bit steps (bands),
 * its chroma shifted and noisy, and a band of blur.
 */
import { closeSync, openSync, writeSync } from "node:fs"

export interface SyntheticPair {
  readonly name: string
  readonly width: number
  readonly height: number
  readonly pixel_format: "420"
  readonly bitdepth: 8 | 10
  readonly frames: number
}

export const syntheticPairs: ReadonlyArray<SyntheticPair> = [
  { name: "s1080_420_8", width: 1920, height: 1080, pixel_format: "420", bitdepth: 8, frames: 3 },
  { name: "s2160_420_10", width: 3840, height: 2160, pixel_format: "420", bitdepth: 10, frames: 2 }
]

/** A 32-bit linear congruential sequence: deterministic noise. */
const noise = (seed: number) => {
  let state = seed >>> 0
  return (): number => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0
    return state >>> 24 // 0..255
  }
}

const clampTo = (v: number, max: number) => (v < 0 ? 0 : v > max ? max : Math.round(v))

/** Sample of plane p (0 luma, 1 Cb, 2 Cr) at (x, y) of a plane w x h, on the 8-bit scale (may be fractional). */
const sample = (p: number, x: number, y: number, w: number, h: number, frame: number, rand: () => number): number => {
  const u = x / w
  const v = y / h
  if (p === 0) {
    // Left half: a slow diagonal ramp (banding-prone); right half: texture and a moving grid.
    if (u < 0.5) return 60 + 40 * (0.6 * u + 0.4 * v)
    const grid = ((Math.floor((x + 7 * frame) / 24) + Math.floor(y / 24)) & 1) * 60
    const wave = Math.abs(((3 * x + 11 * frame) % 80) - 40) // a triangle wave: integers only
    return 50 + grid + (rand() % 32) + wave
  }
  const base = p === 1 ? 110 + 40 * u : 140 - 30 * v
  const blocks = ((Math.floor(x / 16) * 7 + Math.floor(y / 16) * 13 + frame) % 5) * 6
  return base + (u > 0.5 ? blocks + (rand() % 12) : 0)
}

/** Writes the reference and distorted raw files of the pair (planar, 16-bit little-endian above 8 bits). */
export const writeSyntheticPair = (pair: SyntheticPair, referencePath: string, distortedPath: string): void => {
  const { width, height, bitdepth, frames } = pair
  const max = (1 << bitdepth) - 1
  const scale = 1 << (bitdepth - 8)
  const bytes = bitdepth > 8 ? 2 : 1
  const planes = [
    { w: width, h: height },
    { w: width / 2, h: height / 2 },
    { w: width / 2, h: height / 2 }
  ]
  const ref = openSync(referencePath, "w")
  const dis = openSync(distortedPath, "w")
  try {
    for (let frame = 0; frame < frames; frame++) {
      for (const [p, { w, h }] of planes.entries()) {
        const refRand = noise(1 + frame * 3 + p)
        const disRand = noise(101 + frame * 3 + p)
        const refBuf = Buffer.alloc(w * h * bytes)
        const disBuf = Buffer.alloc(w * h * bytes)
        for (let y = 0; y < h; y++) {
          for (let x = 0; x < w; x++) {
            const s = sample(p, x, y, w, h, frame, refRand)
            const r = clampTo(s * scale, max)
            let d: number
            if (p === 0) {
              // The ramp in whole 8-bit steps (bands CAMBI sees), a washed-out stripe elsewhere.
              const step = scale
              d = x < w / 2 ? Math.floor(r / step) * step : y % 64 < 16 ? clampTo((r + 100 * scale) / 2, max) : r
            } else {
              d = clampTo(r + ((disRand() % 9) - 4) * scale + (x % 40 < 20 ? 2 * scale : 0), max)
            }
            const at = (y * w + x) * bytes
            if (bytes === 2) {
              refBuf.writeUInt16LE(r, at)
              disBuf.writeUInt16LE(clampTo(d, max), at)
            } else {
              refBuf[at] = r
              disBuf[at] = clampTo(d, max)
            }
          }
        }
        writeSync(ref, refBuf)
        writeSync(dis, disBuf)
      }
    }
  } finally {
    closeSync(ref)
    closeSync(dis)
  }
}
