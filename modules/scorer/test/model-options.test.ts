/**
 * The options the vmaf_v1.0.16 model files set, beyond their golden values (golden-models.test.ts):
 * values svc cannot compute are refused by name when the model is loaded (a model file naming
 * them is listed unusable with that reason), a string option is matched against its choices,
 * and the models give bit-identical numbers on the scalar and the default (SIMD) paths. Needs no
 * fixture set: the pair is the synthetic 1080p one (synthetic.ts), cut to its first frame.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { scoreBody, scorerRuntime } from "./runtime.ts"
import { syntheticPairs, writeSyntheticPair } from "./synthetic.ts"

const directory = mkdtempSync(join(tmpdir(), "svc-model-options-"))
const modelOf = (name: string) =>
  JSON.parse(readFileSync(join(import.meta.dirname, "..", "models", `${name}.json`), "utf8")) as {
    model_dict: { feature_names: string[]; feature_opts_dicts: Array<Record<string, unknown>> }
  }

/** vmaf_v1.0.16_5d0h with the options of one feature replaced, written as <name>.json. */
const variant = (name: string, feature: string, options: Record<string, unknown>) => {
  const model = modelOf("vmaf_v1.0.16_5d0h")
  const at = model.model_dict.feature_names.indexOf(feature)
  model.model_dict.feature_opts_dicts[at] = { ...model.model_dict.feature_opts_dicts[at], ...options }
  writeFileSync(join(directory, `${name}.json`), JSON.stringify(model))
}
variant("barten", "VMAF_integer_feature_adm3_score", { adm_csf_mode: 1 })
variant("untabulated", "VMAF_integer_feature_adm3_score", { adm_norm_view_dist: 4.0 })
variant("lanczos", "Speed_chroma_feature_speed_chroma_uv_score", { speed_prescale_method: "lanczos4" })
variant("numeric_method", "Speed_chroma_feature_speed_chroma_uv_score", { speed_prescale_method: 1 })
variant("motion_unknown", "VMAF_integer_feature_motion3_score", { motion_blend_factor: 2 })

const runtime = scorerRuntime({ SVC_MODEL_DIR: directory })
afterAll(async () => {
  await runtime.dispose()
  rmSync(directory, { recursive: true, force: true })
})

const [pair] = syntheticPairs
if (!pair) throw new Error("no synthetic pair")
const one = { ...pair, frames: 1 }
const reference = join(directory, "ref.yuv")
const distorted = join(directory, "dis.yuv")
writeSyntheticPair(one, reference, distorted)
const options = { width: one.width, height: one.height, pixel_format: one.pixel_format, bitdepth: one.bitdepth }

/** The 400 a score naming the model gets (the reason GET /v1/models gives too). */
const reasonOf = async (model: string) =>
  (await runtime.runPromise(Effect.flip(scoreBody({ reference, distorted, model, options })))).message

describe("model options svc cannot compute are refused by name", () => {
  it.each([
    ["barten", /feature integer_adm3: adm_csf_mode must be 0 \(Watson\) or 2 \(Barten-Watson blend\)/],
    ["untabulated", /adm_csf_mode 2 is tabulated for adm_ref_display_height\/adm_norm_view_dist 1080\/3, /],
    ["lanczos", /speed_prescale_method' of speed_chroma_uv is "lanczos4", not one of "nearest", "bilinear"/],
    ["numeric_method", /speed_prescale_method' of speed_chroma_uv must be a string/],
    ["motion_unknown", /'motion_blend_factor' of integer_motion3 is not supported \(it takes motion_max_val\)/]
  ])("%s", async (name, reason) => {
    expect(await reasonOf(name)).toMatch(reason)
  })
})

describe("the vmaf_v1.0.16 models on a 1080p pair", () => {
  const models = ["vmaf_v1.0.16_5d0h", "vmaf_v1.0.16_3d0h", "vmaf_v1.0.16_3d0h_2160", "vmaf_v1.0.16_1d5h_2160"]

  it("give bit-identical numbers on the scalar and default paths, in one pass as alone", {
    timeout: 120_000
  }, async () => {
    const score = (backend: string) =>
      runtime.runPromise(scoreBody({ reference, distorted, models, options: { ...options, backend, per_frame: true } }))
    const [scalar, simd] = await Promise.all([score("scalar"), score("auto")])
    expect(simd.frames).toEqual(scalar.frames)
    const metrics = scalar.frames[0]?.metrics ?? {}
    expect(metrics["speed_chroma_uv_mxv_45_nnf_0.1_ps_0.6_psm_bilinear_snn_0.19_wvm_5"]).toBeGreaterThan(0)
    expect(metrics["cambi_hrs_1080_cmxv_17_vlt_0.06"]).toBeGreaterThan(0)
    expect(metrics).toHaveProperty("integer_adm3_csf_2_dlmw_0.7_egl_1_min_0.5_nw_0.02_nvd_5")
    expect(metrics).toHaveProperty("integer_motion3_mmxv_18")
    const alone = await runtime.runPromise(
      scoreBody({ reference, distorted, model: "vmaf_v1.0.16_3d0h", options: { ...options, per_frame: true } })
    )
    expect(alone.score).toBe(simd.scores?.["vmaf_v1.0.16_3d0h"])
  })
})
