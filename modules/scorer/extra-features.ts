/**
 * The extra features a request may ask for (`options.features`, `svc score --feature`): what
 * each outputs and which implementation it follows. One table for GET /v1/models' feature list,
 * the provenance of a score (`feature_backends[].implementation`), the reference-compatible
 * layouts' column order and the help texts.
 */
import { nativeFeatures, requestableFeatures } from "./native-features.ts"
import type { ExtraFeature } from "./request.ts"

export interface ExtraFeatureInfo {
  /** Per-frame outputs, in the order the scorer reports them. */
  readonly outputs: ReadonlyArray<string>
  /** The implementation whose numbers the outputs reproduce, with its version. */
  readonly implementation: string
}

/** Each extractor's implementation, from the library's registry (native-features.ts). */
const implementations: Readonly<Record<string, string>> = Object.fromEntries(
  nativeFeatures.map((feature) => [feature.name, feature.implementation])
)
const libvmaf = "libvmaf 3.2.0"

export const extraFeatures: Readonly<Record<ExtraFeature, ExtraFeatureInfo>> = Object.fromEntries(
  requestableFeatures.map((name) => {
    const facts = nativeFeatures.find((feature) => feature.name === name)
    return [name, { outputs: facts?.outputs ?? [], implementation: facts?.implementation ?? libvmaf }]
  })
) as Record<ExtraFeature, ExtraFeatureInfo>

/**
 * The implementation an extractor of a score's provenance follows, as its registry row states
 * (libvmaf's for the models' extractors: integer_vif, integer_adm, integer_motion, ...), so every
 * entry names one (gRPC has no absent string: HTTP and gRPC answer alike).
 */
export const implementationOf = (extractor: string): string => implementations[extractor] ?? libvmaf

/** GET /v1/models' and ListModels' list of extra features. */
export const extraFeatureList = (): ReadonlyArray<{
  readonly name: string
  readonly outputs: ReadonlyArray<string>
  readonly implementation: string
}> => Object.entries(extraFeatures).map(([name, info]) => ({ name, ...info }))
