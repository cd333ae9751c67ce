/** One encoded-input bench configuration (see bench/encoded.ts): prints its figures as JSON on stdout. */
import { ConfigProvider, Effect, Layer, ManagedRuntime } from "effect"
import { Ffmpeg } from "../modules/inputs/ffmpeg.ts"
import { scoreInputs } from "../modules/inputs/score.ts"
import { parseScoreRequest } from "../modules/scorer/request.ts"
import { Scorer } from "../modules/scorer/scorer.ts"
import { modelDirEnv } from "../test/support/executables.ts"
import { frames, height, width } from "./scorer.ts"

const [reference, distorted, threadsText] = process.argv.slice(2)
const threads = Number(threadsText)
const runtime = ManagedRuntime.make(
  Layer.merge(Scorer.Default, Ffmpeg.Default).pipe(
    Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(modelDirEnv)))))
  )
)
const started = performance.now()
const result = await runtime.runPromise(
  parseScoreRequest({
    reference,
    distorted,
    options: { width, height, pixel_format: "420", bitdepth: 8, threads }
  }).pipe(
    Effect.flatMap((job) => Effect.flatMap(Scorer, (scorer) => scoreInputs(scorer, job))),
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
    frames: result.frame_count
  })
)
