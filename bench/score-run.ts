/**
 * One scoring configuration in a process of its own, so its peak RSS is its own: the scorer and
 * encoded-input benches call `runScore`, which runs this file as a child; the child scores the
 * pair once through scoreInputs (raw YUV through the file job, an encoded side through ffmpeg)
 * and prints its figures as JSON on stdout.
 */
import { spawnSync } from "bun"
import { ConfigProvider, Effect, Layer, ManagedRuntime } from "effect"
import { Ffmpeg } from "../modules/inputs/ffmpeg.ts"
import { scoreInputs } from "../modules/inputs/score.ts"
import { parseScoreRequest, Scorer } from "../modules/scorer/index.ts"
import { modelDirEnv } from "../local/executables.ts"
import { frames, height, width } from "./pair.ts"

export interface RunFigures {
  readonly threads: number
  readonly seconds: number
  readonly fps: number
  readonly peakRssMiB: number
  readonly vmaf: number
  readonly frames: number
  readonly backend: string
  /** CPU time of the run, its ffmpeg children included (measured by the parent): load does not inflate it. */
  readonly cpuSeconds: number
}

/**
 * Scores `distorted` against `reference` (the bench geometry) with `threads` in a child process;
 * `options`: more request options (e.g. `{ shots: true }`).
 */
export const runScore = (
  reference: string,
  distorted: string,
  threads: number,
  options: Readonly<Record<string, unknown>> = {}
): RunFigures => {
  const argv = [process.execPath, import.meta.filename, reference, distorted, String(threads), JSON.stringify(options)]
  const child = spawnSync(argv, {
    env: { ...process.env },
    stderr: "inherit"
  })
  if (child.exitCode !== 0) throw new Error(`bench run (${distorted}, ${threads} thread(s)) failed`)
  const figures = JSON.parse(child.stdout.toString()) as Omit<RunFigures, "cpuSeconds">
  return { ...figures, cpuSeconds: Number(child.resourceUsage.cpuTime.total) / 1e6 }
}

if (import.meta.main) {
  const [reference, distorted, threadsText, optionsText] = process.argv.slice(2)
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
      options: { width, height, pixel_format: "420", bitdepth: 8, threads, ...JSON.parse(optionsText ?? "{}") }
    }).pipe(
      Effect.flatMap((job) => Effect.flatMap(Scorer, (scorer) => scoreInputs(scorer, job))),
      Effect.orDie
    )
  )
  const seconds = (performance.now() - started) / 1000
  await runtime.dispose()
  const figures: Omit<RunFigures, "cpuSeconds"> = {
    threads,
    seconds,
    fps: frames / seconds,
    peakRssMiB: process.resourceUsage().maxRSS / 1024,
    vmaf: result.score,
    frames: result.frame_count,
    backend: result.provenance.backend_used
  }
  process.stdout.write(JSON.stringify(figures))
}
