/** One scorer bench configuration (see bench/scorer.ts): prints its figures as JSON on stdout. */
import { Effect } from "effect"
import { scoreBody, scorerRuntime } from "../modules/scorer/test/runtime.ts"
import { frames, height, width } from "./scorer.ts"

const [reference, distorted, threadsText] = process.argv.slice(2)
const threads = Number(threadsText)
const runtime = scorerRuntime()
const started = performance.now()
const result = await runtime.runPromise(
  scoreBody({ reference, distorted, options: { width, height, pixel_format: "420", bitdepth: 8, threads } }).pipe(
    Effect.orDie
  )
)
const seconds = (performance.now() - started) / 1000
await runtime.dispose()
process.stdout.write(
  JSON.stringify({
    threads,
    seconds,
    fps: frames / seconds,
    peakRssMiB: process.resourceUsage().maxRSS / 1024,
    vmaf: result.score,
    backend: result.provenance.backend_used
  })
)
