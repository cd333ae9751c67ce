/**
 * Models by name: the built-in ones embedded in the executable (modules/scorer/models), and
 * those of SVC_MODEL_DIR when it is set ("vmaf_v0.6.1" is vmaf_v0.6.1.json there), which add
 * models or override a built-in of the same name. Each is parsed by the native library once per
 * process and kept with the SHA-256 of the exact bytes used and where they came from.
 */
import { Effect, Option, Ref } from "effect"
import { createHash } from "node:crypto"
import { readdir, readFile } from "node:fs/promises"
import { join } from "node:path"
import { modelDir } from "../config/env.ts"
import { UnknownModel } from "./errors.ts"
import { NativeScorerLibrary } from "./library.ts"
import { builtinModelFiles } from "./models/index.ts"
import { errorBuffer, handleSlot, type NativeSymbols, type Pointer } from "./native.ts"

/** Where a model's bytes came from: "builtin", or the file's path in SVC_MODEL_DIR. */
export const builtinSource = "builtin"

export interface LoadedModel {
  readonly name: string
  readonly sha256: string
  readonly source: string
  readonly handle: Pointer
  /** The feature names the model file reads (for the frame-size check). */
  readonly features: ReadonlyArray<string>
}

/** One entry of GET /v1/models and ListModels. */
export interface ModelInfo {
  readonly name: string
  /** The feature names the model file reads, as it writes them. */
  readonly features: ReadonlyArray<string>
  readonly source: string
  readonly sha256: string
  /** False when this build cannot score with it; `reason` says why (the 400 a score would get). */
  readonly usable: boolean
  readonly reason?: string
}

interface ModelBytes {
  readonly bytes: Uint8Array
  readonly source: string
}

const unknownModel = (name: string) => new UnknownModel({ model: name, message: `unknown model "${name}"` })

/** Feature names as the file lists them; a bootstrap collection's from its first member. */
const declaredFeatures = (bytes: Uint8Array): ReadonlyArray<string> => {
  try {
    const root: unknown = JSON.parse(new TextDecoder().decode(bytes))
    const record = (value: unknown): Record<string, unknown> | undefined =>
      typeof value === "object" && value !== null ? (value as Record<string, unknown>) : undefined
    const top = record(root)
    const dict = record(top?.["model_dict"]) ?? record(record(top?.["0"])?.["model_dict"])
    const names = dict?.["feature_names"]
    return Array.isArray(names) ? names.filter((name): name is string => typeof name === "string") : []
  } catch {
    return []
  }
}

/** Parses a model file, then checks that this library computes what it reads. */
const parseNative = (symbols: NativeSymbols, bytes: Uint8Array) => {
  const slot = handleSlot()
  const error = errorBuffer()
  const status = symbols.svc_model_load(bytes, bytes.length, slot.slot, error.buffer, error.length)
  const handle = slot.pointer()
  if (status !== 0 || handle === null) return { error: error.text() }
  if (symbols.svc_model_check(handle, error.buffer, error.length) !== 0) {
    symbols.svc_model_free(handle)
    return { error: error.text() }
  }
  return { handle }
}

export class ModelStore extends Effect.Service<ModelStore>()("svc/ModelStore", {
  scoped: Effect.gen(function* () {
    const { symbols } = yield* NativeScorerLibrary
    /** SVC_MODEL_DIR, when set: models there add to and override the built-in ones. */
    const directory = yield* modelDir
    const loaded = yield* Ref.make(new Map<string, LoadedModel>())
    yield* Effect.addFinalizer(() =>
      Effect.flatMap(Ref.get(loaded), (models) =>
        Effect.sync(() => {
          for (const model of models.values()) symbols.svc_model_free(model.handle)
        })
      )
    )

    /** The bytes a name stands for: the directory's file first, then the built-in. */
    const bytesOf = (name: string): Effect.Effect<ModelBytes, UnknownModel> => {
      const builtin = Effect.suspend(() => {
        const path = builtinModelFiles.get(name)
        if (path === undefined) return Effect.fail(unknownModel(name))
        return Effect.tryPromise({
          try: async () => ({ bytes: await Bun.file(path).bytes(), source: builtinSource }),
          catch: () => new UnknownModel({ model: name, message: `built-in model "${name}" cannot be read` })
        })
      })
      if (Option.isNone(directory)) return builtin
      const file = join(directory.value, `${name}.json`)
      return Effect.tryPromise({
        try: async () => ({ bytes: new Uint8Array(await readFile(file)), source: file }),
        catch: (error) => error
      }).pipe(
        Effect.catchAll((error) =>
          (error as NodeJS.ErrnoException).code === "ENOENT"
            ? builtin
            : Effect.fail(new UnknownModel({ model: name, message: `model "${name}" cannot be read from ${file}` }))
        )
      )
    }

    const parse = (name: string, found: ModelBytes): Effect.Effect<LoadedModel, UnknownModel> =>
      Effect.suspend(() => {
        const parsed = parseNative(symbols, found.bytes)
        if ("error" in parsed) {
          return Effect.fail(
            new UnknownModel({ model: name, message: `model "${name}" cannot be used: ${parsed.error}` })
          )
        }
        const sha256 = createHash("sha256").update(found.bytes).digest("hex")
        return Effect.succeed({
          name,
          sha256,
          source: found.source,
          handle: parsed.handle,
          features: declaredFeatures(found.bytes)
        })
      })

    const load = (name: string): Effect.Effect<LoadedModel, UnknownModel> =>
      Effect.flatMap(Ref.get(loaded), (models) => {
        const known = models.get(name)
        if (known) return Effect.succeed(known)
        return bytesOf(name).pipe(
          Effect.flatMap((found) => parse(name, found)),
          // Two first requests may race to parse: keep the first, free the other.
          Effect.flatMap((model) =>
            Ref.modify(loaded, (current) => {
              const winner = current.get(name)
              if (winner) {
                symbols.svc_model_free(model.handle)
                return [winner, current]
              }
              return [model, new Map(current).set(name, model)]
            })
          )
        )
      })

    /** Names in SVC_MODEL_DIR (none when unset or unreadable: readiness reports that). */
    const directoryNames = Option.match(directory, {
      onNone: () => Effect.succeed<ReadonlyArray<string>>([]),
      onSome: (path) =>
        Effect.tryPromise(() => readdir(path)).pipe(
          Effect.map((entries) =>
            entries.filter((entry) => entry.endsWith(".json")).map((entry) => entry.slice(0, -5))
          ),
          Effect.orElseSucceed((): ReadonlyArray<string> => [])
        )
    })

    const describe = (name: string): Effect.Effect<ModelInfo, UnknownModel> =>
      Effect.flatMap(bytesOf(name), (found) => {
        const sha256 = createHash("sha256").update(found.bytes).digest("hex")
        const base = { name, features: declaredFeatures(found.bytes), source: found.source, sha256 }
        return load(name).pipe(
          Effect.as<ModelInfo>({ ...base, usable: true }),
          Effect.catchAll((error) => Effect.succeed<ModelInfo>({ ...base, usable: false, reason: error.message }))
        )
      })

    /** Every model a request may name, sorted by name. */
    const list: Effect.Effect<ReadonlyArray<ModelInfo>> = Effect.gen(function* () {
      const names = new Set([...builtinModelFiles.keys(), ...(yield* directoryNames)])
      const described = yield* Effect.forEach([...names].sort(), (name) => Effect.option(describe(name)))
      return described.flatMap((entry) => Option.toArray(entry))
    })

    return { load, list, directory } as const
  }),
  dependencies: [NativeScorerLibrary.Default]
}) {}
