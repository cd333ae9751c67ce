/**
 * The extra features a request may ask for (`options.features`, `svc score --feature`): what
 * each outputs and which implementation it follows. One table for GET /v1/models' feature list,
 * the provenance of a score (`feature_backends[].implementation`), the reference-compatible
 * layouts' column order and the help texts.
 */
import type { ExtraFeature } from "./request.ts"

export interface ExtraFeatureInfo {
  /** Per-frame outputs, in the order the scorer reports them. */
  readonly outputs: ReadonlyArray<string>
  /** The implementation whose numbers the outputs reproduce, with its version. */
  readonly implementation: string
}

const libvmaf = "libvmaf 3.2.0"

export const extraFeatures: Readonly<Record<ExtraFeature, ExtraFeatureInfo>> = {
  psnr: { outputs: ["psnr_y", "psnr_cb", "psnr_cr"], implementation: libvmaf },
  float_ssim: { outputs: ["float_ssim"], implementation: libvmaf },
  float_ms_ssim: { outputs: ["float_ms_ssim"], implementation: libvmaf },
  float_vif: { outputs: ["vif_scale0", "vif_scale1", "vif_scale2", "vif_scale3"], implementation: libvmaf },
  float_adm: {
    outputs: ["adm2", "adm_scale0", "adm_scale1", "adm_scale2", "adm_scale3", "aim", "adm3"],
    implementation: libvmaf
  },
  float_motion: { outputs: ["motion2", "motion3", "motion"], implementation: libvmaf },
  float_psnr: { outputs: ["float_psnr"], implementation: libvmaf },
  ciede: { outputs: ["ciede2000"], implementation: libvmaf },
  psnr_hvs: { outputs: ["psnr_hvs_y", "psnr_hvs_cb", "psnr_hvs_cr", "psnr_hvs"], implementation: libvmaf },
  cambi: { outputs: ["cambi"], implementation: libvmaf },
  xpsnr: { outputs: ["xpsnr_y", "xpsnr_u", "xpsnr_v"], implementation: "FFmpeg 7.1 xpsnr filter" },
  ssimulacra2: { outputs: ["ssimulacra2"], implementation: "SSIMULACRA 2.1" }
}

/** The extractor name a score's provenance lists for a feature (the native extractor's). */
const extractorFeature: Readonly<Record<string, ExtraFeature>> = Object.fromEntries(
  (Object.keys(extraFeatures) as ReadonlyArray<ExtraFeature>).map((feature) => [feature, feature])
)

/**
 * The implementation an extractor of a score's provenance follows: an extra feature's own, and
 * libvmaf's for the models' extractors (integer_vif, integer_adm, integer_motion, ...), so every
 * entry names one (gRPC has no absent string: HTTP and gRPC answer alike).
 */
export const implementationOf = (extractor: string): string => {
  const feature = extractorFeature[extractor]
  return feature === undefined ? libvmaf : extraFeatures[feature].implementation
}

/** GET /v1/models' and ListModels' list of extra features. */
export const extraFeatureList = (): ReadonlyArray<{
  readonly name: string
  readonly outputs: ReadonlyArray<string>
  readonly implementation: string
}> => Object.entries(extraFeatures).map(([name, info]) => ({ name, ...info }))
