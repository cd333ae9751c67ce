/**
 * The golden contract of the scorer: which features must equal the reference implementation's
 * (libvmaf's) per-frame output for the fixtures, and within what bound. Read by the golden test
 * and by svc-tester-report's golden gate.
 */

/** The contract's bound on |ours - libvmaf| for every compared value. */
export const goldenTolerance = 1e-4

/** Extra extractors the comparison needs besides the default model's features. */
export const goldenExtraFeatures = ["psnr", "float_ssim", "float_ms_ssim"] as const

export const goldenFeatures = [
  "vmaf",
  "integer_vif_scale0",
  "integer_vif_scale1",
  "integer_vif_scale2",
  "integer_vif_scale3",
  "integer_adm2",
  "integer_adm_scale0",
  "integer_adm_scale1",
  "integer_adm_scale2",
  "integer_adm_scale3",
  "integer_motion2",
  "psnr_y",
  "psnr_cb",
  "psnr_cr",
  "float_ssim",
  "float_ms_ssim"
] as const
