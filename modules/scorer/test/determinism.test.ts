/** Same numbers whatever the backend and the thread count. */
import { afterAll, describe, expect, it } from "vitest"
import { fixture, rawOptions } from "../../../test/support/fixtures.ts"
import { NativeCpu, openNativeLibrary } from "../native.ts"
import type { ScoreResult } from "../result.ts"
import { scoreBody, scorerRuntime } from "./runtime.ts"

const runtime = scorerRuntime()
afterAll(() => runtime.dispose())

const allFeatures = ["psnr", "float_ssim", "float_ms_ssim"] as const

const score = (name: string, options: Record<string, unknown>): Promise<ScoreResult> => {
  const entry = fixture(name)
  return runtime.runPromise(
    scoreBody({
      reference: entry.reference,
      distorted: entry.distorted,
      // 12 frames keep the scalar runs short; every kernel and the motion edges still run.
      options: { ...rawOptions(entry), features: allFeatures, per_frame: true, frame_cnt: 12, ...options }
    })
  )
}

const values = (result: ScoreResult) => ({ frames: result.frames, features: result.features, pooled: result.pooled })

const simdPaths = (() => {
  const library = openNativeLibrary()
  try {
    return (["avx2", "avx512"] as const).filter((path) => library.symbols.svc_cpu_supported(NativeCpu[path]) !== 0)
  } finally {
    library.close()
  }
})()

describe.each(["v01", "v03", "v04", "v05"])("fixture %s", (name) => {
  it.each(["avx2", "avx512"] as const)("gives identical values on the %s path and the scalar path", async (path) => {
    if (!simdPaths.includes(path)) {
      console.log(`SKIP ${path} on fixture ${name}: this CPU lacks it`)
      return
    }
    const scalar = await score(name, { backend: "scalar" })
    const simd = await score(name, { backend: path })
    expect(values(simd)).toEqual(values(scalar))
    expect(simd.provenance.backend_used).toBe(path)
    // VIF and motion have kernels for every path; the other extractors take the widest they have.
    const vif = simd.provenance.feature_backends.find((entry) => entry.extractor === "integer_vif")
    expect(vif?.backend).toBe(path)
  })

  it("gives identical values on the scalar path and the default dispatch", async () => {
    const scalar = await score(name, { backend: "scalar" })
    const auto = await score(name, { backend: "auto" })
    expect(scalar.provenance.backend_used).toBe("scalar")
    expect(scalar.provenance.feature_backends.every((entry) => entry.backend === "scalar")).toBe(true)
    expect(values(auto)).toEqual(values(scalar))
  })

  it("gives identical values with 1 and 2 threads", async () => {
    const one = await score(name, { threads: 1 })
    const two = await score(name, { threads: 2 })
    expect(values(two)).toEqual(values(one))
  })
})

describe("dispatch", () => {
  it("reports the AVX2 kernels when the CPU has them and the request allows them", async () => {
    const auto = await score("v01", {})
    const best = auto.provenance.library.active_backend
    expect(["scalar", "avx2", "avx512"]).toContain(best)
    // The default dispatch is the best path, and the provenance names it.
    expect(auto.provenance.backend_used).toBe(best)
  })
})

describe("extra features", () => {
  const extra = ["float_vif", "float_adm", "float_motion", "float_psnr", "ciede", "psnr_hvs", "cambi"] as const
  it.each([
    "v01",
    "v05"
  ])("%s: identical with 1 and 3 threads (two temporal extractors share the frame ring) and on the scalar path", async (name) => {
    const one = await score(name, { features: extra, threads: 1 })
    const three = await score(name, { features: extra, threads: 3 })
    expect(values(three)).toEqual(values(one))
    const scalar = await score(name, { features: extra, backend: "scalar" })
    expect(values(scalar)).toEqual(values(one))
    const metrics = Object.keys(one.frames[0]?.metrics ?? {})
    for (const key of ["integer_motion2", "motion2", "motion", "vif_scale0", "adm2", "ciede2000", "psnr_hvs", "cambi"])
      expect(metrics).toContain(key)
    expect(one.provenance.feature_backends.map((entry) => entry.extractor)).toEqual(
      expect.arrayContaining(["float_motion", "integer_motion", "float_adm", "psnr_hvs", "cambi"])
    )
  })
})
