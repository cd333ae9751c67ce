/**
 * One ladder bench configuration (see bench/ladder.ts): `ladder REF THREADS R1 R2 ...` scores the
 * renditions as one ladder, `separate REF THREADS R1 R2 ...` as one score each, in turn, in the
 * same process. Prints the wall time, the CPU time of this process and of its ffmpeg children
 * (reaped ones, from /proc/self/stat) and every rendition's pooled VMAF as JSON on stdout.
 */
import { ConfigProvider, Effect, Layer, ManagedRuntime } from "effect"
import { readFileSync } from "node:fs"
import { Ffmpeg } from "../modules/inputs/ffmpeg.ts"
import { scoreLadderInputs } from "../modules/inputs/ladder.ts"
import { scoreInputs } from "../modules/inputs/score.ts"
import { parseLadderRequest, parseScoreRequest, Scorer } from "../modules/scorer/index.ts"
import { modelDirEnv } from "../local/executables.ts"
import { height, width } from "./pair.ts"

const [mode, reference = "", threadsText, ...renditions] = process.argv.slice(2)
const threads = Number(threadsText)
const options = { width, height, pixel_format: "420", bitdepth: 8, threads }
const runtime = ManagedRuntime.make(
  Layer.merge(Scorer.Default, Ffmpeg.Default).pipe(
    Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(modelDirEnv)))))
  )
)
/** CPU seconds of the reaped children (cutime + cstime; clock ticks of 1/100 s on Linux). */
const childrenCpu = () => {
  const stat = readFileSync("/proc/self/stat", "utf8")
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
  return (Number(fields[13]) + Number(fields[14])) / 100
}
await runtime.runPromise(Effect.flatMap(Scorer, () => Effect.void))
const cpuBefore = process.cpuUsage()
const childrenBefore = childrenCpu()
const started = performance.now()
const scores =
  mode === "ladder"
    ? await runtime.runPromise(
        parseLadderRequest({
          reference,
          renditions: renditions.map((distorted, index) => ({ label: `r${index}`, distorted })),
          options
        }).pipe(
          Effect.flatMap((job) => Effect.flatMap(Scorer, (scorer) => scoreLadderInputs(scorer, job))),
          Effect.map((result) => result.renditions.map((rendition) => rendition.score)),
          Effect.orDie
        )
      )
    : await runtime.runPromise(
        Effect.forEach(renditions, (distorted) =>
          parseScoreRequest({ reference, distorted, options }).pipe(
            Effect.flatMap((job) => Effect.flatMap(Scorer, (scorer) => scoreInputs(scorer, job))),
            Effect.map((result) => result.score)
          )
        ).pipe(Effect.orDie)
      )
const seconds = (performance.now() - started) / 1000
const cpu = process.cpuUsage(cpuBefore)
await runtime.dispose()
process.stdout.write(
  JSON.stringify({
    seconds,
    cpuSeconds: (cpu.user + cpu.system) / 1e6 + childrenCpu() - childrenBefore,
    scores,
    peakRssMiB: process.resourceUsage().maxRSS / 1024
  })
)
