/**
 * Small Y4M pairs for the xpsnr and ssimulacra2 golden tests (golden-metrics/): computed, not
 * stored, so every machine writes the same bytes (integer arithmetic and a fixed pseudo-random
 * sequence) and the reference tools' values recorded on them (scripts/record-metric-golden.ts)
 * stay valid. The reference has ramps, rings that move from frame to frame and noise texture;
 * the distorted one blocky offsets, a blurred band and noise of its own, so the spatial and
 * temporal terms of XPSNR and every map of SSIMULACRA 2 see something.
 */
import { closeSync, openSync, writeSync } from "node:fs"

export interface MetricPair {
  readonly name: string
  readonly width: number
  readonly height: number
  readonly pixel_format: "420" | "422" | "444"
  readonly bitdepth: 8 | 10 | 12 | 16
  readonly frame_rate: number
  readonly frames: number
  /** The distorted is the reference itself (identical frames). */
  readonly identical?: boolean
  /** Light distortion (no blurred band, a quarter of the offsets, less noise): scores near the top. */
  readonly mild?: boolean
}

export const metricPairs: ReadonlyArray<MetricPair> = [
  { name: "m1_420_8_24fps", width: 320, height: 240, pixel_format: "420", bitdepth: 8, frame_rate: 24, frames: 6 },
  { name: "m2_420_10_50fps", width: 352, height: 288, pixel_format: "420", bitdepth: 10, frame_rate: 50, frames: 6 },
  { name: "m3_444_8_30fps", width: 256, height: 192, pixel_format: "444", bitdepth: 8, frame_rate: 30, frames: 4 },
  { name: "m4_422_12_60fps", width: 720, height: 480, pixel_format: "422", bitdepth: 12, frame_rate: 60, frames: 4 },
  {
    name: "m5_420_8_same",
    width: 192,
    height: 128,
    pixel_format: "420",
    bitdepth: 8,
    frame_rate: 25,
    frames: 3,
    identical: true
  },
  {
    name: "m6_420_8_mild",
    width: 256,
    height: 192,
    pixel_format: "420",
    bitdepth: 8,
    frame_rate: 24,
    frames: 3,
    mild: true
  },
  {
    name: "m7_444_8_mild",
    width: 200,
    height: 152,
    pixel_format: "444",
    bitdepth: 8,
    frame_rate: 24,
    frames: 3,
    mild: true
  }
]

/** A 32-bit linear congruential sequence: deterministic noise, 0..255. */
const noise = (seed: number) => {
  let state = seed >>> 0
  return (): number => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0
    return state >>> 24
  }
}

const clampTo = (v: number, max: number) => (v < 0 ? 0 : v > max ? max : v)

/** Reference sample of plane p at (x, y) of a w x h plane, in 1/16 steps of the 8-bit scale. */
const referenceSample = (p: number, x: number, y: number, w: number, h: number, frame: number, rand: () => number) => {
  if (p === 0) {
    const ramp = Math.floor((1600 * x) / w) + Math.floor((800 * y) / h)
    const cx = Math.floor(w / 3) + 5 * frame
    const cy = Math.floor(h / 2) - 3 * frame
    const ring = ((((x - cx) * (x - cx) + (y - cy) * (y - cy)) >> 5) & 15) * 40
    return 40 * 16 + ramp + ring + (rand() & 63)
  }
  const base = p === 1 ? 100 * 16 + Math.floor((900 * x) / w) : 150 * 16 - Math.floor((700 * y) / h)
  const stripes = (((x + 2 * frame) >> 3) & 1) * 96
  return base + stripes + (rand() & 31)
}

/** The distorted sample from the reference's plane (in the same 1/16 steps): blocky offsets, a
 * horizontally blurred band and noise. */
const distortedSample = (
  plane: Int32Array,
  p: number,
  x: number,
  y: number,
  w: number,
  h: number,
  mild: boolean,
  rand: () => number
) => {
  const at = (xx: number) => plane[y * w + clampTo(xx, w - 1)] ?? 0
  let v = at(x)
  if (!mild && y > h / 3 && y < (2 * h) / 3)
    v = Math.floor((at(x - 2) + 2 * at(x - 1) + 2 * v + 2 * at(x + 1) + at(x + 2)) / 8)
  const block = ((((x >> 3) * 7 + (y >> 3) * 5) % 5) - 2) * (p === 0 ? 24 : 16)
  return mild ? v + (block >> 2) + (rand() & 15) - 8 : v + block + (rand() & 63) - 32
}

/** Writes the pair's reference and distorted Y4M files (16-bit little-endian words above 8 bits). */
export const writeMetricPair = (pair: MetricPair, referencePath: string, distortedPath: string): void => {
  const { width, height, bitdepth, frames } = pair
  const max = (1 << bitdepth) - 1
  const bytes = bitdepth > 8 ? 2 : 1
  const cw = pair.pixel_format === "444" ? width : width / 2
  const ch = pair.pixel_format === "420" ? height / 2 : height
  const planes = [
    { w: width, h: height },
    { w: cw, h: ch },
    { w: cw, h: ch }
  ]
  const colour = `C${pair.pixel_format}${bitdepth > 8 ? `p${bitdepth}` : ""}`
  const header = `YUV4MPEG2 W${width} H${height} F${pair.frame_rate}:1 Ip A1:1 ${colour}\n`
  const ref = openSync(referencePath, "w")
  const dis = openSync(distortedPath, "w")
  // Samples are made in 1/16 steps of the 8-bit scale: to bitdepth b, times 2^(b-8) / 16, rounded.
  const toDepth = (v: number) => clampTo(Math.floor((v * (1 << bitdepth) + 8 * 256) / (16 * 256)), max)
  try {
    writeSync(ref, header)
    writeSync(dis, header)
    for (let frame = 0; frame < frames; frame++) {
      writeSync(ref, "FRAME\n")
      writeSync(dis, "FRAME\n")
      for (const [p, { w, h }] of planes.entries()) {
        const refRand = noise(7 + frame * 3 + p)
        const disRand = noise(907 + frame * 3 + p)
        const fine = new Int32Array(w * h)
        for (let y = 0; y < h; y++)
          for (let x = 0; x < w; x++) fine[y * w + x] = referenceSample(p, x, y, w, h, frame, refRand)
        const refBuf = Buffer.alloc(w * h * bytes)
        const disBuf = Buffer.alloc(w * h * bytes)
        for (let y = 0; y < h; y++)
          for (let x = 0; x < w; x++) {
            const i = y * w + x
            const r = toDepth(fine[i] ?? 0)
            const d = pair.identical ? r : toDepth(distortedSample(fine, p, x, y, w, h, pair.mild === true, disRand))
            if (bytes === 1) {
              refBuf[i] = r
              disBuf[i] = d
            } else {
              refBuf.writeUInt16LE(r, 2 * i)
              disBuf.writeUInt16LE(d, 2 * i)
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
