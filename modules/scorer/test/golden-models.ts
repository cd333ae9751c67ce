/**
 * The golden runs of the built-in models beyond the default one: which models each run scores
 * (several: one pass over the union of their features), read by scripts/golden-models.ts that
 * writes the reference's outputs and by golden-models.test.ts that compares ours with them.
 */
export interface GoldenModelRun {
  /** File name part: golden-models/<fixture>.<name>.json */
  readonly name: string
  readonly models: ReadonlyArray<string>
}

export const goldenModelRuns: ReadonlyArray<GoldenModelRun> = [
  { name: "vmaf_v0.6.1neg", models: ["vmaf_v0.6.1neg"] },
  { name: "vmaf_4k_v0.6.1", models: ["vmaf_4k_v0.6.1"] },
  { name: "vmaf_4k_v0.6.1neg", models: ["vmaf_4k_v0.6.1neg"] },
  { name: "vmaf_b_v0.6.3", models: ["vmaf_b_v0.6.3"] },
  { name: "multi", models: ["vmaf_v0.6.1", "vmaf_v0.6.1neg"] }
]
