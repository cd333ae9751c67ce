/**
 * Models by name from SVC_MODEL_DIR ("vmaf_v0.6.1" is vmaf_v0.6.1.json), parsed by the native
 * library once per process and kept with the SHA-256 of the file's bytes for provenance.
 */
import { Effect, Ref } from "effect"
import { createHash } from "node:crypto"
import { readFile } from "node:fs/promises"
import { join } from "node:path"
import { modelDir } from "../config/env.ts"
import { UnknownModel } from "./errors.ts"
import { NativeScorerLibrary } from "./library.ts"
import { errorBuffer, handleSlot, type Pointer } from "./native.ts"

export interface LoadedModel {
  readonly name: string
  readonly sha256: string
  readonly handle: Pointer
}

export class ModelStore extends Effect.Service<ModelStore>()("svc/ModelStore", {
  scoped: Effect.gen(function* () {
    const { symbols } = yield* NativeScorerLibrary
    const directory = yield* modelDir
    const loaded = yield* Ref.make(new Map<string, LoadedModel>())
    yield* Effect.addFinalizer(() =>
      Effect.flatMap(Ref.get(loaded), (models) =>
        Effect.sync(() => {
          for (const model of models.values()) symbols.svc_model_free(model.handle)
        })
      )
    )

    const parse = (name: string, bytes: Uint8Array): Effect.Effect<LoadedModel, UnknownModel> =>
      Effect.suspend(() => {
        const slot = handleSlot()
        const error = errorBuffer()
        const status = symbols.svc_model_load(bytes, bytes.length, slot.slot, error.buffer, error.length)
        const handle = slot.pointer()
        if (status !== 0 || handle === null) {
          return Effect.fail(
            new UnknownModel({ model: name, message: `model "${name}" cannot be used: ${error.text()}` })
          )
        }
        return Effect.succeed({ name, sha256: createHash("sha256").update(bytes).digest("hex"), handle })
      })

    const load = (name: string): Effect.Effect<LoadedModel, UnknownModel> =>
      Effect.flatMap(Ref.get(loaded), (models) => {
        const known = models.get(name)
        if (known) return Effect.succeed(known)
        return Effect.tryPromise({
          try: () => readFile(join(directory, `${name}.json`)),
          catch: () => new UnknownModel({ model: name, message: `unknown model "${name}"` })
        }).pipe(
          Effect.flatMap((bytes) => parse(name, bytes)),
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

    return { load, directory } as const
  }),
  dependencies: [NativeScorerLibrary.Default]
}) {}
