/**
 * What shot detection costs: the bench pair (1920x1080, 48 frames) scored at 1 thread with and
 * without `options.shots`, alternately, five times each; the CPU time of each run (its process,
 * measured by the parent) and the best of each side compared. The target is at most 5 % more CPU.
 */
import { frames, generatePair, height, width } from "./pair.ts"
import { runScore } from "./score-run.ts"

export const benchShots = (): void => {
  console.log(`shots: CPU cost of options.shots on ${width}x${height}, ${frames} frames, 1 thread (best of 5 each)`)
  const pair = generatePair()
  const without: Array<number> = []
  const withShots: Array<number> = []
  for (let run = 0; run < 5; run++) {
    without.push(runScore(pair.reference, pair.distorted, 1).cpuSeconds)
    withShots.push(runScore(pair.reference, pair.distorted, 1, { shots: true }).cpuSeconds)
  }
  const base = Math.min(...without)
  const shots = Math.min(...withShots)
  console.log(
    `  without ${base.toFixed(3)} s CPU  with shots ${shots.toFixed(3)} s CPU  difference ${(((shots - base) / base) * 100).toFixed(2)} % (target <= 5 %)`
  )
}

if (import.meta.main) benchShots()
