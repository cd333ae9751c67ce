/**
 * The golden runs of the built-in models beyond the default one: which models each run scores
 * (several: one pass over the union of their features), read by scripts/golden-models.ts that
 * writes the reference's outputs and by golden-models.test.ts that compares ours with them.
 */
export interface GoldenModelRun {
  /** File name part: golden-models/<fixture>.<name>.json */
  readonly name: string
  readonly models: ReadonlyArray<string>
  /**
   * A measured bound of the run's own in place of the contract's 1e-4 and the print rounding,
   * for runs whose values cannot all round to the golden's 6 decimals yet (open): the float
   * models inherit float_adm's last-bit differences (its per-scale float sums 0..2 units in the
   * last place from the reference's, adm2 up to ~3e-8 off, so an adm output can round the other
   * way), and their SVMs magnify adm2 about 200-fold in the score.
   */
  readonly bound?: number
  /**
   * How far the score may stray beyond the print rounding (its features must not): the
   * vmaf_v1.0.16 scores sum float features (speed_chroma, cambi) whose last-bit differences from
   * the reference's build (libm's log2/exp) move the score by a few 1e-8.
   */
  readonly scoreBeyondPrint?: number
  /** Also on the synthetic high-resolution pairs (synthetic.ts): golden-models/<pair>.<name>.json */
  readonly synthetic?: boolean
}

/**
 * What a golden file holds: the reference tool's JSON, or, where the tool fails on the pair (it
 * crashes when the vmaf_v1.0.16 models' speed_chroma finds the frame too small), that failure.
 */
export interface ReferenceFailure {
  readonly reference_failed: string
}

export const goldenModelRuns: ReadonlyArray<GoldenModelRun> = [
  { name: "vmaf_v0.6.1neg", models: ["vmaf_v0.6.1neg"] },
  { name: "vmaf_4k_v0.6.1", models: ["vmaf_4k_v0.6.1"] },
  { name: "vmaf_4k_v0.6.1neg", models: ["vmaf_4k_v0.6.1neg"] },
  { name: "vmaf_b_v0.6.3", models: ["vmaf_b_v0.6.3"] },
  { name: "multi", models: ["vmaf_v0.6.1", "vmaf_v0.6.1neg"] },
  // Measured largest |ours - libvmaf|: the score 1.1e-5, 8.9e-6, 1.2e-5 (a member), 2.0e-5; every
  // feature within 6e-7 (adm outputs up to 1e-7 past the rounding).
  { name: "vmaf_float_v0.6.1", models: ["vmaf_float_v0.6.1"], bound: 2e-5 },
  { name: "vmaf_float_4k_v0.6.1", models: ["vmaf_float_4k_v0.6.1"], bound: 2e-5 },
  { name: "vmaf_float_b_v0.6.3", models: ["vmaf_float_b_v0.6.3"], bound: 2e-5 },
  { name: "vmaf_float_v0.6.1neg", models: ["vmaf_float_v0.6.1neg"], bound: 3e-5 },
  // Measured: every feature within the print rounding; the score up to 5.4e-7.
  { name: "vmaf_v1.0.16_3d0h", models: ["vmaf_v1.0.16_3d0h"], synthetic: true, scoreBeyondPrint: 1e-7 },
  { name: "vmaf_v1.0.16_5d0h", models: ["vmaf_v1.0.16_5d0h"], synthetic: true, scoreBeyondPrint: 1e-7 },
  { name: "vmaf_v1.0.16_3d0h_2160", models: ["vmaf_v1.0.16_3d0h_2160"], synthetic: true, scoreBeyondPrint: 1e-7 },
  { name: "vmaf_v1.0.16_1d5h_2160", models: ["vmaf_v1.0.16_1d5h_2160"], synthetic: true, scoreBeyondPrint: 1e-7 }
]
