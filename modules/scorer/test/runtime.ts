/** A Scorer runtime for tests: the real native library and the built-in models (plus SVC_MODEL_DIR when the run sets one). */
import { ConfigProvider, Effect, Layer, ManagedRuntime } from "effect"
import { modelDirEnv } from "../../../test/support/executables.ts"
import { parseScoreRequest } from "../request.ts"
import { Scorer } from "../scorer.ts"

export const scorerRuntime = (env: Record<string, string> = {}) =>
  ManagedRuntime.make(
    Scorer.Default.pipe(
      Layer.provide(
        Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries({ ...modelDirEnv, ...env }))))
      )
    )
  )

export type ScorerRuntime = ReturnType<typeof scorerRuntime>

/** Validates and scores a request body, as the transports do. */
export const scoreBody = (body: unknown) =>
  Effect.flatMap(parseScoreRequest(body), (job) => Effect.flatMap(Scorer, (scorer) => scorer.score(job)))
