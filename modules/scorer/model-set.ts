/** The models of a job: "auto" resolved, loaded, bundled for one extraction; the frame-size check against their features. */
import { ptr } from "bun:ffi"
import { Effect, type Scope } from "effect"
import { InvalidGeometry, InvalidScoreRequest, type ScoreError } from "./errors.ts"
import { extractorOfModelFeature, type FeatureUse, frameTooSmall } from "./frame-minimum.ts"
import type { LoadedModel, ModelStore } from "./models.ts"
import { cString, errorBuffer, handleSlot, type NativeSymbols, NativeStatus, type Pointer } from "./native.ts"
import { failureFor } from "./native-job.ts"
import { autoModel, autoModel4k, autoModel4kSize, defaultModel, type RawGeometry, type ScoreJob } from "./request.ts"

/** The models a score runs: one loaded model, or several bundled over one extraction. */
export interface ModelSet {
  readonly handle: Pointer
  readonly models: ReadonlyArray<LoadedModel>
}

/** The size a reference's frames have: the request's raw geometry, or what its header says. */
export type FrameSize = Pick<RawGeometry, "width" | "height">

/**
 * `model: "auto"`: the 4K model for a reference of at least 3840x2160 (the request's geometry, or
 * `referenceSize` from the input's header), else the default.
 */
const resolveAuto = (job: ScoreJob, name: string, referenceSize: FrameSize | undefined): string => {
  if (name !== autoModel) return name
  const { width, height } = job.geometry ?? referenceSize ?? { width: 0, height: 0 }
  return width >= autoModel4kSize.width && height >= autoModel4kSize.height ? autoModel4k : defaultModel
}

/**
 * Refuses a frame of `geometry` smaller than a feature of the job accepts (its models' features
 * and options.features; "auto" resolved for that size), naming the feature and its minimum.
 */
export const checkFrameSize = (
  models: ModelStore,
  job: ScoreJob,
  geometry: RawGeometry
): Effect.Effect<void, ScoreError> =>
  Effect.gen(function* () {
    const names = job.models.map((name) => resolveAuto({ ...job, geometry }, name, undefined))
    const loaded = yield* Effect.forEach(names, (name) => models.load(name))
    const uses: Array<FeatureUse> = loaded.flatMap((model) =>
      model.features.flatMap((name) => {
        const feature = extractorOfModelFeature(name)
        return feature ? [{ feature, usedBy: `model "${model.name}"` }] : []
      })
    )
    for (const feature of job.features) uses.push({ feature, usedBy: "options.features" })
    const refusal = frameTooSmall(geometry, uses)
    if (refusal) return yield* new InvalidGeometry({ message: refusal })
  })

/** The job's models, loaded; several are bundled for one extraction (freed with the scope). */
export const acquireModels = (
  symbols: NativeSymbols,
  models: ModelStore,
  job: ScoreJob,
  /** The reference's size from its header, for `model: "auto"` on a Y4M (streams carry raw geometry). */
  referenceSize?: FrameSize
): Effect.Effect<ModelSet, ScoreError, Scope.Scope> =>
  Effect.gen(function* () {
    const names = job.models.map((name) => resolveAuto(job, name, referenceSize))
    if (new Set(names).size !== names.length) {
      return yield* Effect.fail(new InvalidScoreRequest({ message: `models: "auto" resolves to a model listed too` }))
    }
    const loaded = yield* Effect.forEach(names, (name) => models.load(name))
    const [single] = loaded
    if (single && loaded.length === 1) return { handle: single.handle, models: loaded }
    const handle = yield* Effect.acquireRelease(
      Effect.suspend(() => {
        const handles = new BigUint64Array(loaded.map((model) => BigInt(model.handle)))
        const nameBuffers = loaded.map((model) => cString(model.name))
        const namePointers = new BigUint64Array(nameBuffers.map((buffer) => BigInt(ptr(buffer))))
        const slot = handleSlot()
        const error = errorBuffer()
        const status = symbols.svc_model_bundle(
          handles,
          namePointers,
          loaded.length,
          slot.slot,
          error.buffer,
          error.length
        )
        const bundle = slot.pointer()
        if (status !== NativeStatus.ok || bundle === null) return Effect.fail(failureFor(status, error.text()))
        return Effect.succeed(bundle)
      }),
      (bundle) => Effect.sync(() => symbols.svc_model_free(bundle))
    )
    return { handle, models: loaded }
  })
