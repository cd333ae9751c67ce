/** The reference layouts' number and order rules, and the REST content negotiation. */
import { describe, expect, it } from "vitest"
import { formatValue, referenceOrder } from "./libvmaf.ts"
import { negotiateScore, requestFor } from "./negotiate.ts"

describe("formatValue (the reference's printf rules)", () => {
  it.each([
    [97.42837, "97.428370"],
    [0, "0.000000"],
    [1, "1.000000"],
    [0.9999991, "0.999999"],
    [1.0000016, "1.000002"],
    [1.0000001572623394, "1.0000001572623394"],
    [Number.NaN, "nan"],
    [Number.POSITIVE_INFINITY, "inf"]
  ])("%d prints as %s", (value, printed) => {
    expect(formatValue(value)).toBe(printed)
  })
})

describe("referenceOrder", () => {
  const model = [
    "vmaf",
    "integer_motion3",
    "integer_motion2",
    "integer_vif_scale3",
    "integer_vif_scale2",
    "integer_vif_scale1",
    "integer_vif_scale0",
    "VMAF_integer_feature_motion_sad_score",
    "integer_adm_scale3",
    "integer_adm_scale2",
    "integer_adm_scale1",
    "integer_adm_scale0",
    "integer_adm3",
    "integer_aim",
    "integer_adm2"
  ]
  it("prints the model's features as the reference does, the score last", () => {
    expect(referenceOrder(model)).toEqual([...model].reverse())
  })
  it("puts extra features after the VIF scales, in the order requested", () => {
    const order = referenceOrder([...model, "float_ssim", "psnr_y", "psnr_cb", "psnr_cr"], ["float_ssim", "psnr"])
    expect(order.slice(12, 16)).toEqual(["float_ssim", "psnr_y", "psnr_cb", "psnr_cr"])
    expect(order.slice(-3)).toEqual(["integer_motion2", "integer_motion3", "vmaf"])
  })
  it("prints several models' score columns last, in model order", () => {
    expect(referenceOrder([...model.slice(1), "b", "a"], [], ["a", "b"]).slice(-2)).toEqual(["a", "b"])
  })
})

describe("negotiateScore", () => {
  it.each([
    [undefined, "response"],
    ["application/json", "response"],
    ["*/*", "response"],
    ["application/xml", "xml"],
    ["text/xml", "xml"],
    ["text/csv", "csv"],
    ["text/x-microdvd", "sub"],
    ["text/csv;q=0.5, application/xml", "xml"],
    ["application/json;q=0.1, text/csv", "csv"],
    ["image/png", "response"]
  ])("Accept %s answers %s", (accept, expected) => {
    expect(negotiateScore(accept)).toBe(expected)
  })

  it("asks for every frame when a layout lists them, and leaves a bad body to validation", () => {
    expect(requestFor("xml", { reference: "a", distorted: "b" })).toEqual({
      reference: "a",
      distorted: "b",
      options: { per_frame: true }
    })
    expect(requestFor("csv", { options: { width: 2 } })).toEqual({ options: { width: 2, per_frame: true } })
    expect(requestFor("csv", "not an object")).toBe("not an object")
    expect(requestFor("response", { a: 1 })).toEqual({ a: 1 })
  })
})
