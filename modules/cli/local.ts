/**
 * Scores on this machine with the embedded scorer, through the same input pipeline as the
 * server, the controller and the node (`modules/inputs`): each input recognised by its bytes,
 * encoded video decoded and scaled by ffmpeg, frames paired, the score admitted under the
 * memory budget (SVC_MAX_SCORE_MEMORY) before anything per frame is allocated. The user's own
 * files have no scoring roots.
 *
 * Model sources are checked first: a model file or an SVC_MODEL_DIR that does not exist is an
 * error naming it (the model store alone would quietly fall back to the built-in model), and
 * an unknown model's error lists the names a score may use.
 */
import { ConfigProvider, Effect, Layer } from "effect"
import { stat } from "node:fs/promises"
import { join } from "node:path"
import { Ffmpeg } from "../inputs/ffmpeg.ts"
import { scoreLadderInputs } from "../inputs/ladder.ts"
import { scoreInputs } from "../inputs/score.ts"
import { maxScoreMemory } from "../scoring-api/config.ts"
import {
  type AdmitMemory,
  memoryBudget,
  ModelStore,
  NativeScorerLibrary,
  parseLadderRequest,
  parseScoreRequest,
  type ScoreError,
  Scorer
} from "../scorer/index.ts"
import { CommandFailed, UsageError } from "./errors.ts"
import type { ModelChoice } from "./flags.ts"

/** The request's and pipeline's rules name request fields ("options.width"); the user typed flags. */
const asFlags = (message: string) => message.replace(/\boptions\./g, "--")

const kindOf = (path: string) =>
  Effect.promise(() =>
    stat(path).then(
      (stats) => (stats.isDirectory() ? "directory" : stats.isFile() ? "file" : "other"),
      () => "missing" as const
    )
  )

/**
 * The model directory of this run: the directory of `--model path=FILE` (the file must exist),
 * else SVC_MODEL_DIR (which must be a directory when set), else none.
 */
export const modelDirectoryOf = (model: ModelChoice | undefined): Effect.Effect<string | undefined, CommandFailed> =>
  Effect.gen(function* () {
    if (model?.directory !== undefined) {
      const file = join(model.directory, `${model.name}.json`)
      if ((yield* kindOf(file)) !== "file")
        return yield* new CommandFailed({ message: `model file ${file} does not exist` })
      return model.directory
    }
    const configured = process.env.SVC_MODEL_DIR?.trim()
    if (configured === undefined || configured === "") return undefined
    return yield* directoryChecked(configured, "SVC_MODEL_DIR")
  })

/** `directory` when it is one; else an error naming it and where it was given. */
export const directoryChecked = (directory: string, givenBy: string) =>
  Effect.flatMap(kindOf(directory), (kind) =>
    kind === "directory"
      ? Effect.succeed(directory)
      : Effect.fail(
          new CommandFailed({
            message: `${givenBy} ${directory} ${kind === "missing" ? "does not exist" : "is not a directory"}`
          })
        )
  )

/** The embedded scorer, its model store (reading `directory`) and ffmpeg, configured from the environment. */
const localLayer = (directory: string | undefined) => {
  const provider =
    directory === undefined
      ? ConfigProvider.fromEnv()
      : ConfigProvider.fromMap(new Map([["SVC_MODEL_DIR", directory]])).pipe(
          ConfigProvider.orElse(() => ConfigProvider.fromEnv())
        )
  const store = Layer.provideMerge(ModelStore.DefaultWithoutDependencies, NativeScorerLibrary.Default)
  return Layer.mergeAll(Layer.provideMerge(Scorer.DefaultWithoutDependencies, store), Ffmpeg.Default).pipe(
    Layer.provide(Layer.setConfigProvider(provider))
  )
}

/** A scoring failure as one line; an unknown model's with the names there are. */
const failed = (error: ScoreError) =>
  error._tag === "UnknownModel" && error.message.startsWith("unknown model")
    ? Effect.flatMap(
        Effect.flatMap(ModelStore, (store) => store.list),
        (models) =>
          new CommandFailed({
            message: `${error.message}; the models are: ${models
              .filter((model) => model.usable)
              .map((model) => model.name)
              .join(", ")}`
          })
      )
    : Effect.fail(
        new CommandFailed({ message: asFlags(error._tag === "ScorerInternal" ? error.detail : error.message) })
      )

/** Runs `work` with the local scorer of `model`'s directory and the memory budget. */
const locally = <A, E>(
  model: ModelChoice | undefined,
  work: (scorer: Scorer, admitMemory: AdmitMemory) => Effect.Effect<A, E, Ffmpeg | ModelStore>
) =>
  Effect.gen(function* () {
    const directory = yield* modelDirectoryOf(model)
    return yield* Effect.gen(function* () {
      const admitMemory = yield* Effect.flatMap(maxScoreMemory, memoryBudget)
      return yield* work(yield* Scorer, admitMemory)
    }).pipe(Effect.provide(localLayer(directory)))
  }).pipe(Effect.catchTag("ConfigError", (error) => Effect.fail(new UsageError({ message: String(error) }))))

/** `svc score` here: one request (proto field names) through the input pipeline. */
export const scoreLocally = (request: unknown, model: ModelChoice | undefined, onProgress: (frames: number) => void) =>
  locally(model, (scorer, admitMemory) =>
    Effect.gen(function* () {
      // A request the contract refuses is the command line's mistake (exit 2).
      const job = yield* parseScoreRequest(request).pipe(
        Effect.mapError((error) => new UsageError({ message: asFlags(error.message) }))
      )
      return yield* scoreInputs(scorer, job, {
        onProgress: (frames) => Effect.sync(() => onProgress(frames)),
        admitMemory
      }).pipe(Effect.catchAll(failed))
    })
  )

/** `svc ladder` here: the ladder validated as a server validates it, scored in one pass over the reference. */
export const scoreLadderLocally = (
  request: unknown,
  model: ModelChoice | undefined,
  onProgress: (frames: number) => void
) =>
  locally(model, (scorer, admitMemory) =>
    Effect.gen(function* () {
      const ladder = yield* parseLadderRequest(request).pipe(
        Effect.mapError((error) => new UsageError({ message: asFlags(error.message) }))
      )
      return yield* scoreLadderInputs(scorer, ladder, {
        onProgress: (frames) => Effect.sync(() => onProgress(frames)),
        admitMemory
      }).pipe(Effect.catchAll(failed))
    })
  )
