/** A Scorer runtime for tests: the real native library and the shared models. */
import { ConfigProvider, Effect, Layer, ManagedRuntime } from "effect"
import { modelDir } from "../../../test/support/executables.ts"
import { parseScoreRequest } from "../request.ts"
import { Scorer } from "../scorer.ts"

export const scorerRuntime = (env: Record<string, string> = {}) =>
  ManagedRuntime.make(
    Scorer.Default.pipe(
      Layer.provide(
        Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries({ SVC_MODEL_DIR: modelDir, ...env }))))
      )
    )
  )

export type ScorerRuntime = ReturnType<typeof scorerRuntime>

/** Validates and scores a request body, as the transports do. */
export const scoreBody = (body: unknown) =>
  Effect.flatMap(parseScoreRequest(body), (job) => Effect.flatMap(Scorer, (scorer) => scorer.score(job)))
