/**
 * `svc models`: the models a score can use, from the embedded scorer's model store (its
 * built-in models and those of SVC_MODEL_DIR or `--model-dir`), each with the SHA-256 that
 * scores name in their provenance, or why it cannot be used. With `--server`, the server's own
 * list (`GET /v1/models`).
 */
import { Command, Options } from "@effect/cli"
import { ConfigProvider, Effect, Layer, Option } from "effect"
import { ModelStore } from "../scorer/models.ts"
import { readToken } from "./connection.ts"
import { CommandFailed, UsageError } from "./errors.ts"

/** The model store's own list (built-in models, then SVC_MODEL_DIR's), as GET /v1/models gives it. */
const localModels = (directory: Option.Option<string>) =>
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

export const modelsCommand = Command.make(
  "models",
  {
    modelDir: Options.text("model_dir").pipe(
      Options.withAlias("model-dir"),
      Options.withDescription("directory of model files (default: SVC_MODEL_DIR)"),
      Options.optional
    ),
    server: Options.text("server").pipe(
      Options.withDescription("list a server's models (http://host:port) instead"),
      Options.optional
    ),
    json: Options.boolean("json").pipe(Options.withDescription("print JSON"))
  },
  (flags) =>
    Effect.gen(function* () {
      if (Option.isSome(flags.server)) {
        const listed = yield* serverModels(flags.server.value)
        return yield* Effect.sync(() => process.stdout.write(`${JSON.stringify(listed, null, 2)}\n`))
      }
      const models = yield* localModels(flags.modelDir)
      const text = flags.json
        ? `${JSON.stringify(models, null, 2)}\n`
        : models
            .map((model) =>
              model.usable
                ? `${model.name}  ${model.source}  sha256:${model.sha256}`
                : `${model.name}  ${model.source}  not usable: ${model.reason}`
            )
            .map((line) => `${line}\n`)
            .join("")
      yield* Effect.sync(() => process.stdout.write(text))
    })
).pipe(Command.withDescription("List the models a score can use"))
