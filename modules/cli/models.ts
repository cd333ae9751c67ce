/**
 * `svc models`: the models a score can use, from the embedded scorer's model store (its
 * built-in models and those of SVC_MODEL_DIR or `--model-dir`), each with the SHA-256 that
 * scores name in their provenance, or why it cannot be used. With `--server`, the server's own
 * list (`GET /v1/models`).
 */
import { Command, Options } from "@effect/cli"
import { ConfigProvider, Effect, Layer, Option } from "effect"
import { type ModelInfo, ModelStore } from "../scorer/index.ts"
import { readToken } from "./connection.ts"
import { CommandFailed, UsageError } from "./errors.ts"
import { directoryChecked, modelDirectoryOf } from "./local.ts"

/** The model store's own list (built-in models, then SVC_MODEL_DIR's), as GET /v1/models gives it. */
const localModels = (flag: Option.Option<string>) =>
  Effect.gen(function* () {
    const directory = Option.isSome(flag)
      ? yield* directoryChecked(flag.value, "--model-dir")
      : yield* modelDirectoryOf(undefined)
    return yield* listModels(Option.fromNullable(directory))
  })

const listModels = (directory: Option.Option<string>) =>
  Effect.flatMap(ModelStore, (store) => store.list).pipe(
    Effect.provide(
      ModelStore.Default.pipe(
        Layer.provide(
          Layer.setConfigProvider(
            Option.match(directory, {
              onNone: () => ConfigProvider.fromEnv(),
              onSome: (dir) =>
                ConfigProvider.fromMap(new Map([["SVC_MODEL_DIR", dir]])).pipe(
                  ConfigProvider.orElse(() => ConfigProvider.fromEnv())
                )
            })
          )
        )
      )
    ),
    Effect.catchTag("ConfigError", (error) => Effect.fail(new UsageError({ message: String(error) })))
  )

const serverModels = (base: string) =>
  Effect.gen(function* () {
    const token = yield* readToken
    const url = `${base.replace(/\/+$/, "")}/v1/models`
    const response = yield* Effect.tryPromise({
      try: () => fetch(url, { headers: token === undefined ? {} : { authorization: `Bearer ${token}` } }),
      catch: () => new CommandFailed({ message: `cannot reach ${url}` })
    })
    if (response.status === 404)
      return yield* new CommandFailed({ message: `${base} does not list its models (no GET /v1/models)` })
    if (!response.ok) return yield* new CommandFailed({ message: `${url}: status ${response.status}` })
    return yield* Effect.tryPromise({
      try: (): Promise<unknown> => response.json(),
      catch: () => new CommandFailed({ message: `${url}: the answer is not JSON` })
    })
  })

/** The model list as a table: one line a model, with a header (the same locally and from a server). */
const modelTable = (models: ReadonlyArray<ModelInfo>): string => {
  const nameWidth = Math.max(5, ...models.map((model) => model.name.length))
  const sourceWidth = Math.max(6, ...models.map((model) => model.source.length))
  const row = (name: string, source: string, rest: string) =>
    `${name.padEnd(nameWidth)}  ${source.padEnd(sourceWidth)}  ${rest}`.trimEnd()
  return [
    row("MODEL", "SOURCE", "SHA-256"),
    ...models.map((model) =>
      row(model.name, model.source, model.usable ? model.sha256 : `not usable: ${model.reason ?? "unknown reason"}`)
    )
  ]
    .map((line) => `${line}\n`)
    .join("")
}

/** GET /v1/models's body, checked to be the list it promises. */
const modelsOf = (base: string, body: unknown): Effect.Effect<ReadonlyArray<ModelInfo>, CommandFailed> => {
  const models = typeof body === "object" && body !== null && "models" in body ? body.models : undefined
  return Array.isArray(models)
    ? Effect.succeed(models as ReadonlyArray<ModelInfo>)
    : Effect.fail(new CommandFailed({ message: `${base}/v1/models: the answer has no list of models` }))
}

/**
 * A server's refusal of an unknown model, with the names it has (as a local score's says);
 * any other failure, or a server that cannot list them, as it was.
 */
export const withServerModelNames = (base: string) => (error: CommandFailed) =>
  /: unknown model "[^"]*"$/.test(error.message)
    ? Effect.flatMap(serverModels(base), (body) => modelsOf(base, body)).pipe(
        Effect.map(
          (models) =>
            new CommandFailed({
              message: `${error.message}; the server's models are: ${models
                .filter((model) => model.usable)
                .map((model) => model.name)
                .join(", ")}`
            })
        ),
        Effect.orElseSucceed(() => error),
        Effect.flatMap(Effect.fail)
      )
    : Effect.fail(error)

export const modelsCommand = Command.make(
  "models",
  {
    modelDir: Options.text("model_dir").pipe(
      Options.withAlias("model-dir"),
      Options.withPseudoName("DIR"),
      Options.withDescription("directory of model files (default: SVC_MODEL_DIR)"),
      Options.optional
    ),
    server: Options.text("server").pipe(
      Options.withPseudoName("URL"),
      Options.withDescription("list a server's or controller's models (http://host:port) instead"),
      Options.optional
    ),
    json: Options.boolean("json").pipe(Options.withDescription('print {"models": [...]} as GET /v1/models answers'))
  },
  (flags) =>
    Effect.gen(function* () {
      const models = yield* Option.match(flags.server, {
        onSome: (base) => Effect.flatMap(serverModels(base), (body) => modelsOf(base, body)),
        onNone: () => localModels(flags.modelDir)
      })
      const text = flags.json ? `${JSON.stringify({ models }, null, 2)}\n` : modelTable(models)
      yield* Effect.sync(() => process.stdout.write(text))
    })
).pipe(Command.withDescription("List the models a score can use: built in, SVC_MODEL_DIR's, or a server's"))
