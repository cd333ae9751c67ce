import { Arbitrary, Effect, FastCheck as fc, Schema } from "effect"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { absentAccelerator, buildReport, type ReportInputs, serializeReport } from "../../modules/report/build.ts"
import { reportDigest } from "../../modules/report/canonical.ts"
import { checkReport } from "../../modules/report/check.ts"
import { ExitCode, testerReportCli } from "../../modules/report/cli.ts"
import {
  FixtureSection,
  GateSection,
  Gpu,
  Host,
  Image,
  NotExercisedItem,
  ReferenceEquivalence,
  RowsSection,
  type Suite,
  SuiteV3
} from "../../modules/report/schema.ts"
import { loadSample } from "./validators.ts"

const v3Sample = Schema.decodeUnknownSync(Schema.Struct({ image: Image, host: Host }))(loadSample("v3"))

const passingSuite: Suite = { status: "pass", total: 4, passed: 4, failed: 0, skipped: 0, failures: [] }

const passingInputs: ReportInputs = {
  toolVersion: "0.1.0",
  generatedAt: new Date("2026-11-21T12:34:56.789Z"),
  image: v3Sample.image,
  host: v3Sample.host,
  dispatch_equivalence: {
    status: "identical",
    fixtures: [{ fixture: "foreman_cif_8bit", values: 1800, differing_values: 0 }]
  },
  reference_equivalence: { status: "identical" },
  unit_tests: passingSuite,
  golden_gate: passingSuite,
  accelerator: absentAccelerator({ status: "no_device", reason: "no accel device node under /dev", backend: "accel" }),
  not_exercised: [],
  note: ""
}

describe("buildReport", () => {
  it("writes a version 3 report that check accepts, with its digest", () => {
    const report = buildReport(passingInputs)
    expect(checkReport(report)).toEqual([])
    expect(report).toMatchObject({
      schema_version: "3",
      tool: { name: "svc-tester-report", version: "0.1.0" },
      generated_utc: "2026-11-21T12:34:56Z",
      verdict: "pass",
      failed_checks: []
    })
    expect(report.report_sha256).toBe(reportDigest(report))
  })

  it("marks the accelerator sections no_device with the reason, and lists them as not exercised", () => {
    const report = buildReport(passingInputs)
    const reason = "no accel device node under /dev"
    expect(report.accel_equivalence).toEqual({ status: "no_device" })
    expect(report.accel_gate).toEqual({ status: "no_device", reason })
    expect(report.accel_rows).toEqual({ status: "not_measured", rows: [] })
    expect(report.gpu).toEqual({ status: "no_device", reason, backend: "accel" })
    expect(report.not_exercised).toEqual(
      ["accel_equivalence", "accel_gate", "accel_rows", "gpu"].map((item) => ({ item, reason }))
    )
  })

  it("marks them not_applicable for a CPU-only build", () => {
    const accelerator = absentAccelerator({ status: "not_applicable", reason: "CPU-only build" })
    const report = buildReport({ ...passingInputs, accelerator })
    expect(report.accel_rows.status).toBe("not_applicable")
    expect(report.gpu).toEqual({ status: "not_applicable", reason: "CPU-only build" })
    expect(checkReport(report)).toEqual([])
  })

  it("fails when a golden value differs", () => {
    const golden_gate: Suite = {
      ...passingSuite,
      status: "fail",
      passed: 3,
      failed: 1,
      failures: ["foreman_cif_8bit/vif"]
    }
    const report = buildReport({ ...passingInputs, golden_gate })
    expect(report).toMatchObject({ verdict: "fail", failed_checks: ["golden_gate"] })
    expect(checkReport(report)).toEqual([])
  })

  it("is incomplete when a required gate did not run, and keeps the caller's not_exercised first", () => {
    const unit_tests: Suite = { ...passingSuite, status: "not_run", total: 0, passed: 0, reason: "no test executables" }
    const not_exercised = [{ item: "unit_tests", reason: "no test executables in the image" }]
    const report = buildReport({ ...passingInputs, unit_tests, not_exercised })
    expect(report.verdict).toBe("incomplete")
    expect(report.not_exercised[0]).toEqual(not_exercised[0])
  })

  it("cuts a note longer than 500 characters at a code point", () => {
    const report = buildReport({ ...passingInputs, note: "😀".repeat(600) })
    expect(Array.from(report.note)).toHaveLength(500)
    expect(checkReport(report)).toEqual([])
  })

  it("any measured outcome gives a report that check accepts, also as written to a file", async () => {
    const scratch = mkdtempSync(join(tmpdir(), "tester-report-build-"))
    const inputsArbitrary = fc.record({
      image: Arbitrary.make(Image),
      host: Arbitrary.make(Host),
      dispatch_equivalence: Arbitrary.make(FixtureSection),
      reference_equivalence: Arbitrary.make(ReferenceEquivalence),
      unit_tests: Arbitrary.make(SuiteV3),
      golden_gate: Arbitrary.make(SuiteV3),
      accel_equivalence: Arbitrary.make(FixtureSection),
      accel_gate: Arbitrary.make(GateSection),
      accel_rows: Arbitrary.make(RowsSection),
      gpu: Arbitrary.make(Gpu),
      not_exercised: fc.array(Arbitrary.make(NotExercisedItem), { maxLength: 3 }),
      note: fc.string({ maxLength: 700 })
    })
    try {
      await fc.assert(
        fc.asyncProperty(inputsArbitrary, async (measured) => {
          const report = buildReport({
            ...passingInputs,
            ...measured,
            accelerator: { ...measured, not_exercised: [] }
          })
          // Round trip through JSON first: the checker sees what the file holds.
          expect(checkReport(JSON.parse(serializeReport(report)))).toEqual([])
          const file = join(scratch, "report.json")
          writeFileSync(file, serializeReport(report))
          const output = { out: () => undefined, err: () => undefined }
          expect(await Effect.runPromise(testerReportCli(["check", file], output))).toBe(ExitCode.valid)
        }),
        { numRuns: 30 }
      )
    } finally {
      rmSync(scratch, { recursive: true, force: true })
    }
  })
})
