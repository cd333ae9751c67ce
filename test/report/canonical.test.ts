import { describe, expect, it } from "vitest"
import { canonicalJson, reportDigest } from "../../modules/report/canonical.ts"
import { deriveVerdict } from "../../modules/report/verdict.ts"

describe("canonical JSON", () => {
  it("sorts keys recursively, drops whitespace and writes numbers and strings as JSON.stringify", () => {
    expect(canonicalJson({ b: [3, { z: 1.5, a: "é\n" }], a: null, c: -0, d: 1e21 })).toBe(
      '{"a":null,"b":[3,{"a":"é\\n","z":1.5}],"c":0,"d":1e+21}'
    )
  })

  it("leaves out undefined members, as a written file would", () => {
    expect(canonicalJson({ a: undefined, b: 1 })).toBe('{"b":1}')
  })

  it("the digest ignores key order, report_sha256 and note", () => {
    const report = { verdict: "pass", note: "a", report_sha256: "x", tool: { version: "1", name: "t" } }
    const reordered = { tool: { name: "t", version: "1" }, note: "b", verdict: "pass" }
    expect(reportDigest(report)).toBe(reportDigest(reordered))
    expect(reportDigest(report)).not.toBe(reportDigest({ ...report, verdict: "fail" }))
  })
})

describe("verdict rule", () => {
  const ran = {
    dispatch_equivalence: { status: "identical" },
    reference_equivalence: { status: "identical" },
    unit_tests: { status: "pass" },
    golden_gate: { status: "pass" }
  }

  it("passes when every required gate ran and nothing failed, whatever the accelerator could do", () => {
    expect(deriveVerdict({ ...ran, accel_gate: { status: "no_device" }, gpu: { status: "not_run" } })).toEqual({
      verdict: "pass",
      failed_checks: []
    })
  })

  it("fails on differing, error or fail, listing the sections in section order", () => {
    expect(
      deriveVerdict({
        ...ran,
        gpu: { status: "error" },
        golden_gate: { status: "fail" },
        dispatch_equivalence: { status: "differing" },
        reference_equivalence: { status: "not_run" }
      })
    ).toEqual({ verdict: "fail", failed_checks: ["dispatch_equivalence", "golden_gate", "gpu"] })
  })

  it.each(["not_run", "missing"])("is incomplete when a required gate is %s", (status) => {
    expect(deriveVerdict({ ...ran, reference_equivalence: { status } }).verdict).toBe("incomplete")
  })

  it("treats a not_applicable gate as satisfied", () => {
    expect(deriveVerdict({ ...ran, unit_tests: { status: "not_applicable" } }).verdict).toBe("pass")
  })
})
