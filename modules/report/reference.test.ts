import { Either } from "effect"
import { describe, expect, it } from "vitest"
import type { FixtureScore, FrameTable } from "./measure.ts"
import { type FixtureRun, readRecordedReference, recordTable, referenceFile, referenceSection } from "./reference.ts"

const table: FrameTable = {
  metrics: ["vmaf", "psnr_y"],
  frames: [
    [90.5, Number.POSITIVE_INFINITY],
    [Number.NaN, 41]
  ]
}
const score = (frames: FrameTable["frames"]): FixtureScore => ({
  table: { metrics: table.metrics, frames },
  pooled: { mean: 0, min: 0, max: 0, harmonic_mean: 0 },
  extractors: []
})
const run = (fixture: string, scalar = score(table.frames), auto = score(table.frames)): FixtureRun => ({
  fixture,
  scalar: Either.right(scalar),
  auto: Either.right(auto)
})

// What the build writes, through JSON as it is embedded.
const recorded = (fixtures: ReadonlyArray<string>, machine = "x86_64") =>
  readRecordedReference(
    JSON.parse(
      JSON.stringify({
        status: "recorded",
        library_sha256: "ab".repeat(32),
        machine,
        dispatch_flags: ["scalar", "avx2"],
        model: "vmaf_v0.6.1",
        fixtures: fixtures.map((fixture) => recordTable(fixture, table))
      })
    )
  )

const host = { machine: "x86_64", librarySha256: "ab".repeat(32) }

describe("referenceSection", () => {
  it("finds this host's scalar and default results identical to the recorded ones, NaN and infinities included", () => {
    const { section, not_exercised } = referenceSection(recorded(["v01"]), [run("v01")], host)
    expect(section.status).toBe("identical")
    expect(section.own_arch_scalar).toMatchObject({
      file: referenceFile,
      status: "identical",
      gating: true,
      comparable: true,
      generated_with_flags: ["scalar", "avx2"]
    })
    expect(section.own_arch_default?.fixtures).toEqual([
      { fixture: "v01", metrics: 2, values: 4, differing_values: 0, differing_metrics: 0, details: [] }
    ])
    expect(not_exercised.map((item) => item.item)).toEqual(["reference_equivalence.cross_arch_x86_scalar"])
  })

  it("reports a differing default dispatch in its own cell", () => {
    const { section } = referenceSection(
      recorded(["v01"]),
      [
        run(
          "v01",
          score(table.frames),
          score([
            [90.5, 1e300],
            [Number.NaN, 41]
          ])
        )
      ],
      host
    )
    expect(section.status).toBe("differing")
    expect(section.own_arch_scalar?.status).toBe("identical")
    expect(section.own_arch_default?.status).toBe("differing")
    expect(section.own_arch_default?.fixtures[0]?.details?.[0]).toMatchObject({
      metric: "psnr_y",
      left: "Infinity",
      right: "1e+300"
    })
  })

  it("marks a fixture the build did not record missing, and a failed score error", () => {
    const { section } = referenceSection(recorded(["v01"]), [run("v01"), run("v09")], host)
    expect(section.status).toBe("missing")
    expect(section.own_arch_scalar?.fixtures[1]).toEqual({
      fixture: "v09",
      error: "no reference values recorded for this fixture at build time"
    })
    const failed: FixtureRun = { ...run("v01"), scalar: Either.left("UnreadableInput: gone") }
    expect(referenceSection(recorded(["v01"]), [failed], host).section.own_arch_scalar?.status).toBe("error")
  })

  it("is not comparable when recorded on another machine or with another library", () => {
    expect(referenceSection(recorded(["v01"], "aarch64"), [run("v01")], host).section.own_arch_scalar?.comparable).toBe(
      false
    )
    expect(
      referenceSection(recorded(["v01"]), [run("v01")], { ...host, librarySha256: null }).section.own_arch_default
        ?.comparable
    ).toBe(false)
  })

  it("is missing, with the build's reason, when the build had no fixture set", () => {
    const reason = "at build time: no fixture set: /x/index.jsonl cannot be read"
    const { section, not_exercised } = referenceSection(
      readRecordedReference({ status: "missing", reason }),
      [run("v01")],
      host
    )
    expect(section).toEqual({
      status: "missing",
      own_arch_scalar: { file: referenceFile, status: "missing", gating: true, fixtures: [] },
      own_arch_default: { file: referenceFile, status: "missing", gating: true, fixtures: [] }
    })
    expect(not_exercised[0]).toEqual({ item: "reference_equivalence", reason })
  })

  it("is error when the embedded file is not a reference file", () => {
    const reference = readRecordedReference({ status: "recorded" })
    expect(Either.isLeft(reference)).toBe(true)
    expect(referenceSection(reference, [run("v01")], host).section.status).toBe("error")
  })
})
