/**
 * Scorer throughput: frames per second and peak memory scoring a generated 1920x1080 8-bit
 * 4:2:0 pair of 48 frames (moving texture; the distorted copy blurred, requantised and noisy),
 * with 1 and 2 threads. Each configuration runs in its own process so peak RSS is its own.
 */
import { spawnSync } from "bun"
import { existsSync, mkdirSync, openSync, writeSync, closeSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

export const width = 1920
export const height = 1080
export const frames = 48

const workDir = join(process.env.TMPDIR ?? tmpdir(), "svc-bench")

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

interface RunFigures {
  readonly threads: number
  readonly seconds: number
  readonly fps: number
  readonly peakRssMiB: number
  readonly vmaf: number
  readonly backend: string
}

/** Runs one configuration in a child process (bench/scorer-run.ts) and reads its figures. */
const runConfiguration = (threads: number, pair: { reference: string; distorted: string }): RunFigures => {
  const child = spawnSync(
    [process.execPath, join(import.meta.dirname, "scorer-run.ts"), pair.reference, pair.distorted, String(threads)],
    {
      env: { ...process.env },
      stderr: "inherit"
    }
  )
  if (child.exitCode !== 0) throw new Error(`scorer bench with ${threads} thread(s) failed`)
  return JSON.parse(child.stdout.toString()) as RunFigures
}

export const benchScorer = (): void => {
  console.log(
    `scorer: ${width}x${height} 8-bit 4:2:0, ${frames} frames, vmaf_v0.6.1 (generating the pair once in ${workDir})`
  )
  const pair = generatePair()
  for (const threads of [1, 2]) {
    const figures = runConfiguration(threads, pair)
    console.log(
      `  threads=${threads}  ${figures.fps.toFixed(2)} frames/s  (${figures.seconds.toFixed(2)} s)  peak RSS ${figures.peakRssMiB.toFixed(0)} MiB  backend ${figures.backend}  vmaf ${figures.vmaf.toFixed(3)}`
    )
  }
}

if (import.meta.main) benchScorer()
