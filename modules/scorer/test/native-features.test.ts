/**
 * native-features.ts is the library's feature list as `npm run build` wrote it: it fails when the
 * committed file and the library differ (an extractor added or changed without the file), and the
 * TypeScript that reads the list (request schema, provenance, frame minimums) follows it.
 */
import { afterAll, describe, expect, it } from "vitest"
import { renderNativeFeatures } from "../../../scripts/native-features.ts"
import { extraFeatures, implementationOf } from "../extra-features.ts"
import { frameMinimum } from "../frame-minimum.ts"
import { NativeFeature, openNativeLibrary, readNativeFeatures } from "../native.ts"
import { nativeFeatures, requestableFeatures } from "../native-features.ts"
import { ExtraFeature } from "../request.ts"

const library = openNativeLibrary()
afterAll(() => library.close())
const fromLibrary = readNativeFeatures(library.symbols)

describe("the native feature list", () => {
  it("is the library's (ABI minor 14), entry for entry", () => {
    expect(library.symbols.svc_abi_minor()).toBeGreaterThanOrEqual(14)
    expect(fromLibrary).toEqual(nativeFeatures)
    expect(fromLibrary.map((feature) => feature.name)).toContain("integer_adm")
  })

  it("renders to the list it was read from", () => {
    const rendered = renderNativeFeatures(fromLibrary)
    for (const feature of fromLibrary) expect(rendered).toContain(JSON.stringify(feature.name))
    expect(rendered).toContain("export const requestableFeatures")
  })

  it("gives the request schema its features, in the order of their flags", () => {
    expect(ExtraFeature.literals).toEqual(requestableFeatures)
    const flags = requestableFeatures.map((name) => NativeFeature[name])
    expect(flags).toEqual([...flags].sort((a, b) => a - b))
    expect(flags.every((flag) => flag > 0 && (flag & (flag - 1)) === 0)).toBe(true)
    // The models' own extractors are not requestable.
    expect(requestableFeatures).not.toContain("integer_vif" as never)
  })

  it("gives outputs, implementations and minimums from the registry rows", () => {
    expect(extraFeatures.xpsnr).toEqual({
      outputs: ["xpsnr_y", "xpsnr_u", "xpsnr_v"],
      implementation: "FFmpeg 7.1 xpsnr filter"
    })
    expect(extraFeatures.float_motion.outputs).toEqual(["motion2", "motion3", "motion"])
    expect(implementationOf("integer_adm")).toBe("libvmaf 3.2.0")
    expect(implementationOf("ssimulacra2")).toBe("SSIMULACRA 2.1")
    expect(frameMinimum.adm).toEqual({ rule: "each side", width: 33, height: 33 })
    expect(frameMinimum.cambi).toEqual({ rule: "longer side", side: 216 })
    expect(frameMinimum.psnr_hvs).toEqual({ rule: "each plane", width: 8, height: 8 })
    expect(frameMinimum.psnr).toBeUndefined()
    expect(fromLibrary.find((feature) => feature.name === "xpsnr")?.temporal).toBe(2)
    expect(fromLibrary.find((feature) => feature.name === "float_motion")?.temporal).toBe(1)
  })
})
