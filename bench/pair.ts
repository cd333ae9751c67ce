/**
 * The bench pair: a generated 1920x1080 8-bit 4:2:0 clip of 48 frames (moving texture) and its
 * distorted copy (blurred, requantised and noisy), written once in the bench's work directory.
 */
import { closeSync, existsSync, mkdirSync, openSync, writeSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

export const width = 1920
export const height = 1080
export const frames = 48

export const workDir = join(process.env.TMPDIR ?? tmpdir(), "svc-bench")

/** xorshift32: the same "noise" on every machine. */
const noise = (seed: number) => {
  let state = seed >>> 0 || 1
  return () => {
    state ^= state << 13
    state ^= state >>> 17
    state ^= state << 5
    return (state >>> 0) / 4294967296
  }
}

/** Writes the reference and distorted clips once; later runs reuse them. */
export const generatePair = (): { readonly reference: string; readonly distorted: string } => {
  mkdirSync(workDir, { recursive: true })
  const reference = join(workDir, `ref_${width}x${height}_${frames}_v2.yuv`)
  const distorted = join(workDir, `dis_${width}x${height}_${frames}_v2.yuv`)
  if (existsSync(reference) && existsSync(distorted)) return { reference, distorted }
  const lumaSize = width * height
  const chromaSize = (width / 2) * (height / 2)
  const ref = new Uint8Array(lumaSize + 2 * chromaSize)
  const dis = new Uint8Array(ref.length)
  const random = noise(1080)
  const refFile = openSync(reference, "w")
  const disFile = openSync(distorted, "w")
  for (let f = 0; f < frames; f++) {
    // Texture panning right and down, with a finer pattern drifting the other way.
    for (let y = 0; y < height; y++) {
      for (let x = 0; x < width; x++) {
        const u = x + 3 * f
        const v = y + 2 * f
        const value = 128 + 60 * Math.sin(u / 23) * Math.cos(v / 17) + 40 * Math.sin((x - 5 * f) / 4.5 + y / 7)
        ref[y * width + x] = Math.max(0, Math.min(255, Math.round(value)))
      }
    }
    for (let i = 0; i < 2 * chromaSize; i++) ref[lumaSize + i] = 128 + ((i + f * 7) % 32) - 16
    // Distortion, like a low-bitrate encode: 5-tap horizontal blur, coarse levels, noise.
    for (let y = 0; y < height; y++) {
      const row = y * width
      for (let x = 0; x < width; x++) {
        const at = (dx: number) => ref[row + Math.max(0, Math.min(width - 1, x + dx))] ?? 0
        const blurred = (at(-2) + 4 * at(-1) + 6 * at(0) + 4 * at(1) + at(2)) / 16
        const value = Math.round(blurred / 16) * 16 + (random() - 0.5) * 20
        dis[row + x] = Math.max(0, Math.min(255, Math.round(value)))
      }
    }
    dis.set(ref.subarray(lumaSize), lumaSize)
    writeSync(refFile, ref)
    writeSync(disFile, dis)
  }
  closeSync(refFile)
  closeSync(disFile)
  return { reference, distorted }
}
