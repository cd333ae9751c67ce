/**
 * The smallest frame each feature extractor accepts, as its registry row in
 * native/src/feature/registry.c states it (registry_test holds its `create` to it). A request is
 * checked against this table before anything is read or decoded, so a too-small input is a 400
 * naming the feature and its minimum instead of a failure when the scoring threads start. `frame-minimum.test.ts` holds the table to the native library: each
 * extractor scores a frame at its minimum and refuses one pixel less.
 */
import { type NativeMinimum, nativeFeatures } from "./native-features.ts"
import type { RawGeometry } from "./request.ts"

/**
 * Keyed by the name users give the feature (`options.features`; the models' own integer_vif,
 * integer_adm and integer_motion are vif, adm and motion), from each extractor's registry row
 * (native-features.ts). An extractor whose minimum depends on its options has none here: the
 * library refuses such a frame when the job starts.
 */
export const frameMinimum: Readonly<Record<string, NativeMinimum>> = Object.fromEntries(
  nativeFeatures.flatMap(({ name, minimum }) => (minimum ? [[name.replace(/^integer_/, ""), minimum]] : []))
)

/** The extractor of a model's feature name (VMAF_integer_feature_adm2_score: adm); undefined when no minimum applies. */
export const extractorOfModelFeature = (name: string): string | undefined => {
  const vmaf = /^VMAF_(integer_)?feature_(adm|vif|motion)/.exec(name)
  if (vmaf) return vmaf[1] ? vmaf[2] : `float_${vmaf[2]}`
  if (/^Cambi_feature_/.test(name)) return "cambi"
  return undefined
}

/** Luma samples a plane-wise minimum needs, for the geometry's chroma subsampling. */
const lumaOfPlanes = (minimum: { width: number; height: number }, pixelFormat: RawGeometry["pixelFormat"]) => ({
  width: pixelFormat === 444 ? minimum.width : 2 * minimum.width - 1,
  height: pixelFormat === 420 ? 2 * minimum.height - 1 : minimum.height
})

/** What `feature` needs and whether `geometry` has it; undefined when it has. */
const shortfall = (feature: string, geometry: RawGeometry): string | undefined => {
  const minimum = frameMinimum[feature]
  if (minimum === undefined) return undefined
  switch (minimum.rule) {
    case "each side":
      return geometry.width >= minimum.width && geometry.height >= minimum.height
        ? undefined
        : `${feature} needs at least ${minimum.width}x${minimum.height}`
    case "longer side":
      return Math.max(geometry.width, geometry.height) >= minimum.side
        ? undefined
        : `${feature} needs a side of at least ${minimum.side}`
    case "each plane": {
      const luma = lumaOfPlanes(minimum, geometry.pixelFormat)
      return geometry.width >= luma.width && geometry.height >= luma.height
        ? undefined
        : `${feature} needs at least ${luma.width}x${luma.height} in ${geometry.pixelFormat} (${minimum.width}x${minimum.height} in every plane)`
    }
  }
}

/** A feature a request computes, and why (`model "vmaf_v0.6.1"`, `options.features`). */
export interface FeatureUse {
  readonly feature: string
  readonly usedBy: string
}

/**
 * The refusal of a frame too small for some of `uses` (each feature named once, with what needs
 * it and its minimum), or undefined when every feature accepts it.
 */
export const frameTooSmall = (geometry: RawGeometry, uses: ReadonlyArray<FeatureUse>): string | undefined => {
  const seen = new Set<string>()
  const refusals: Array<string> = []
  for (const { feature, usedBy } of uses) {
    if (seen.has(feature)) continue
    seen.add(feature)
    const missing = shortfall(feature, geometry)
    if (missing) refusals.push(`${missing} (${usedBy})`)
  }
  return refusals.length === 0
    ? undefined
    : `a ${geometry.width}x${geometry.height} frame is too small: ${refusals.join("; ")}`
}
