/**
 * Scorer throughput: frames per second and peak memory scoring a generated 1920x1080 8-bit
 * 4:2:0 pair of 48 frames (moving texture; the distorted copy blurred, requantised and noisy),
 * with 1 and 2 threads. Each configuration runs in its own process so peak RSS is its own.
 */
import { frames, generatePair, height, width, workDir } from "./pair.ts"
import { runScore } from "./score-run.ts"

export const benchScorer = (): void => {
  console.log(
    `scorer: ${width}x${height} 8-bit 4:2:0, ${frames} frames, vmaf_v0.6.1 (generating the pair once in ${workDir})`
  )
  const pair = generatePair()
  for (const threads of [1, 2]) {
    const figures = runScore(pair.reference, pair.distorted, threads)
    console.log(
      `  threads=${threads}  ${figures.fps.toFixed(2)} frames/s  (${figures.seconds.toFixed(2)} s)  peak RSS ${figures.peakRssMiB.toFixed(0)} MiB  backend ${figures.backend}  vmaf ${figures.vmaf.toFixed(3)}`
    )
  }
}

if (import.meta.main) benchScorer()
