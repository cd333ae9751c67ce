/**
 * `svc ladder` with the embedded scorer: the ladder is validated as a server validates it and
 * scored in one pass over the reference on this machine (ffmpeg decodes encoded inputs).
 */
import { ConfigProvider, Effect, Layer } from "effect"
import { Ffmpeg } from "../inputs/ffmpeg.ts"
import { scoreLadderInputs } from "../inputs/ladder.ts"
import { parseLadderRequest } from "../scorer/ladder.ts"
import { Scorer } from "../scorer/scorer.ts"
import { CommandFailed, UsageError } from "./errors.ts"
import type { LadderRequestBody } from "./ladder-flags.ts"

/** The embedded scorer, reading models from `directory` (else SVC_MODEL_DIR). */
const localScorer = (directory: string | undefined) => {
  const provider =
    directory === undefined
      ? ConfigProvider.fromEnv()
      : ConfigProvider.fromMap(new Map([["SVC_MODEL_DIR", directory]])).pipe(
          ConfigProvider.orElse(() => ConfigProvider.fromEnv())
        )
  return Layer.merge(Scorer.Default, Ffmpeg.Default).pipe(Layer.provide(Layer.setConfigProvider(provider)))
}

export const scoreLadderLocally = (
  request: LadderRequestBody,
  modelDirectory: string | undefined,
  onProgress: (frames: number) => void
) =>
  Effect.gen(function* () {
    // The request's rules name its fields ("options.width"); the user typed flags (--width).
    const ladder = yield* parseLadderRequest(request).pipe(
      Effect.mapError((error) => new UsageError({ message: error.message.replace(/\boptions\./g, "--") }))
    )
    const scorer = yield* Scorer
    return yield* scoreLadderInputs(scorer, ladder, {
      onProgress: (frames) => Effect.sync(() => onProgress(frames))
    }).pipe(
      Effect.mapError(
        (error) => new CommandFailed({ message: error._tag === "ScorerInternal" ? error.detail : error.message })
      )
    )
  }).pipe(
    Effect.provide(localScorer(modelDirectory)),
    Effect.catchTag("ConfigError", (error) => Effect.fail(new UsageError({ message: String(error) })))
  )
