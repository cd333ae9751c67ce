/** A Scorer runtime for tests: the real native library and the built-in models (plus SVC_MODEL_DIR when the run sets one). */
import { ConfigProvider, Effect, Layer, ManagedRuntime } from "effect"
import { modelDirEnv } from "../../../local/executables.ts"
import { scoreFiles } from "../../inputs/score.ts"
import { parseScoreRequest, Scorer } from "../index.ts"

export const scorerRuntime = (env: Record<string, string> = {}) =>
  ManagedRuntime.make(
    Scorer.Default.pipe(
      Layer.provide(
        Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries({ ...modelDirEnv, ...env }))))
      )
    )
  )

export type ScorerRuntime = ReturnType<typeof scorerRuntime>

/** Validates a request body, as the transports do, and scores its pair of raw/Y4M files with the file job. */
export const scoreBody = (body: unknown) =>
  Effect.flatMap(parseScoreRequest(body), (job) => Effect.flatMap(Scorer, (scorer) => scoreFiles(scorer, job)))
