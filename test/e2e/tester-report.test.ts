/**
 * `dist/svc-tester-report run` on this machine: the report it writes passes `check`, and its
 * sections reflect the real scorer (a corrupted golden value fails the gate).
 */
import { createHash } from "node:crypto"
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync
} from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { ReportV3 } from "../../modules/report/schema.ts"
import { fixturesDir, modelDirEnv, repoRoot, requireBuilt, runCommand } from "../support/executables.ts"
import { skipWithoutFixtures } from "../support/fixtures.ts"

/** Without the golden fixture set the runs that measure it are skipped, one line saying so. */
const withoutFixtures = skipWithoutFixtures("svc-tester-report runs over the fixture set")

const scratch = mkdtempSync(join(tmpdir(), "svc-tester-report-"))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

const sha256 = (path: string) => createHash("sha256").update(readFileSync(path)).digest("hex")

const runReport = (env: Record<string, string>) =>
  runCommand([requireBuilt("svc-tester-report"), "run"], { env: { ...modelDirEnv, ...env }, cwd: scratch })

const check = (file: string) => runCommand([requireBuilt("svc-tester-report"), "check", file])

/** A copy of the fixture set: the videos symlinked, the JSON copied so a test may edit it. */
const copyFixtures = (name: string): string => {
  const dir = join(scratch, name)
  mkdirSync(dir)
  for (const file of readdirSync(fixturesDir)) {
    if (file.endsWith(".yuv")) symlinkSync(join(fixturesDir, file), join(dir, file))
    else copyFileSync(join(fixturesDir, file), join(dir, file))
  }
  return dir
}

describe.skipIf(withoutFixtures)("svc-tester-report run on this machine", () => {
  let report: ReportV3
  let code: number

  beforeAll(async () => {
    const result = await runReport({ SVC_FIXTURES_DIR: fixturesDir })
    code = result.code
    expect(result.stdout, result.stderr).not.toBe("")
    report = JSON.parse(result.stdout) as ReportV3
    writeFileSync(join(scratch, "report.json"), result.stdout)
  })

  it("writes a version 3 report that check accepts, with verdict pass and exit 0", async () => {
    const checked = await check(join(scratch, "report.json"))
    expect(checked.stdout).toContain("report.json: valid")
    expect(checked.code).toBe(0)
    expect(report.schema_version).toBe("3")
    expect(report.verdict, JSON.stringify(report.failed_checks)).toBe("pass")
    expect(report.failed_checks).toEqual([])
    expect(code).toBe(0)
  })

  it("passes the golden gate: every fixture, every feature within 1e-4 of libvmaf", () => {
    const fixtureCount = readFileSync(join(fixturesDir, "index.jsonl"), "utf8").trim().split("\n").length
    expect(report.golden_gate.status).toBe("pass")
    expect(Object.keys(report.golden_gate.results ?? {})).toHaveLength(fixtureCount)
    // 16 features and the pooled score per fixture.
    expect(report.golden_gate.total).toBe(fixtureCount * 17)
    expect(report.golden_gate.failed).toBe(0)
  })

  it("finds the scalar path and the default dispatch identical on every fixture, and both equal to the build's reference", () => {
    expect(report.dispatch_equivalence.status).toBe("identical")
    const cells = report.dispatch_equivalence.fixtures ?? []
    expect(cells.length).toBeGreaterThan(0)
    for (const cell of cells) {
      // vmaf, 4 VIF scales, ADM and its 4 scales, motion, 3 PSNR planes, SSIM, MS-SSIM at least.
      expect(cell.metrics).toBeGreaterThanOrEqual(16)
      expect(cell.values).toBeGreaterThan(0)
      expect(cell.differing_values).toBe(0)
    }
    expect(report.reference_equivalence.status).toBe("identical")
    for (const cell of [report.reference_equivalence.own_arch_scalar, report.reference_equivalence.own_arch_default]) {
      expect(cell?.status).toBe("identical")
      expect(cell?.gating).toBe(true)
      expect(cell?.comparable).toBe(true)
      expect(cell?.fixtures).toHaveLength(cells.length)
    }
  })

  it("runs the native C tests and records every case", () => {
    expect(report.unit_tests.status).toBe("pass")
    expect(report.unit_tests.results).toEqual({ scorer_test: "pass", reader_test: "pass" })
    expect(Object.keys(report.unit_tests.cases?.["scorer_test"] ?? {})).toEqual([
      "setup",
      "models",
      "jobs",
      "descriptors",
      "transform"
    ])
    expect(Object.keys(report.unit_tests.cases?.["reader_test"] ?? {})).toEqual(["raw", "y4m", "threads", "fuzz"])
    expect(report.unit_tests.total).toBe(9)
  })

  it("describes this build and host: digests of the executable and its library, dispatch flags", () => {
    expect(report.image.svc_sha256).toBe(sha256(requireBuilt("svc-tester-report")))
    expect(report.image.libsvc_sha256).toBe(sha256(join(repoRoot, "modules/scorer/native/build/libsvc_scorer.so")))
    expect(report.image.files_match_build).toBe(true)
    expect(report.image.source_commit).toMatch(/^[0-9a-f]{40}$/)
    expect(report.image.compiler).not.toBe("dev")
    expect(report.host.dispatch_flags).toContain("scalar")
    expect(report.host.dispatch_flags_source).toContain("svc_cpu_supported")
  })

  it("reports the accelerator sections as no_device, each with a reason in not_exercised", () => {
    expect(report.accel_equivalence.status).toBe("no_device")
    expect(report.accel_gate.status).toBe("no_device")
    expect(report.gpu.status).toBe("no_device")
    expect(report.accel_rows.status).toBe("not_measured")
    const items = report.not_exercised.map((entry) => entry.item)
    expect(items).toEqual(expect.arrayContaining(["accel_equivalence", "accel_gate", "accel_rows", "gpu"]))
  })
})

describe.skipIf(withoutFixtures)("svc-tester-report run with a corrupted golden value", () => {
  it("fails the golden gate and the verdict, writing the report to SVC_REPORT_OUT", async () => {
    const dir = copyFixtures("corrupted")
    const name = "v04_bars_444_8_blur"
    const goldenPath = join(dir, `${name}.libvmaf.json`)
    const golden = JSON.parse(readFileSync(goldenPath, "utf8")) as {
      frames: Array<{ metrics: Record<string, number> }>
    }
    const frame = golden.frames[5]
    if (frame === undefined) throw new Error("golden file has fewer than 6 frames")
    frame.metrics["integer_adm2"] = (frame.metrics["integer_adm2"] ?? 0) + 0.01
    writeFileSync(goldenPath, JSON.stringify(golden))
    const out = join(scratch, "corrupted-report.json")

    const result = await runReport({ SVC_FIXTURES_DIR: dir, SVC_REPORT_OUT: out })
    expect(result.stdout).toBe("")
    expect(result.stderr).toContain(`wrote ${out}: verdict fail`)
    expect(result.code).toBe(1)
    const checked = await check(out)
    expect(checked.code, checked.stdout).toBe(0)

    const report = JSON.parse(readFileSync(out, "utf8")) as ReportV3
    expect(report.golden_gate.status).toBe("fail")
    expect(report.golden_gate.failed).toBe(1)
    expect(report.golden_gate.cases?.[name]?.["integer_adm2"]).toBe("fail")
    expect(report.golden_gate.cases?.[name]?.["integer_adm_scale0"]).toBe("pass")
    expect(report.golden_gate.failures[0]).toContain(`${name}/integer_adm2: 1 frames beyond the bound, first frame 5`)
    expect(report.verdict).toBe("fail")
    expect(report.failed_checks).toEqual(["golden_gate"])
    // The scorer itself is unchanged.
    expect(report.dispatch_equivalence.status).toBe("identical")
    expect(report.reference_equivalence.status).toBe("identical")
  })
})

describe("svc-tester-report run without a fixture set", () => {
  it("reports the fixture sections not_run with the reason, and the report still passes check", async () => {
    const empty = join(scratch, "no-fixtures")
    mkdirSync(empty)
    const out = join(scratch, "no-fixtures-report.json")
    const result = await runReport({ SVC_FIXTURES_DIR: empty, SVC_REPORT_OUT: out })
    const checked = await check(out)
    expect(checked.code, checked.stdout).toBe(0)
    const report = JSON.parse(readFileSync(out, "utf8")) as ReportV3
    expect(report.dispatch_equivalence.status).toBe("not_run")
    expect(report.reference_equivalence.status).toBe("not_run")
    expect(report.golden_gate.status).toBe("not_run")
    expect(report.golden_gate.reason).toContain(join(empty, "index.jsonl"))
    expect(report.not_exercised.map((entry) => entry.item)).toContain("golden_gate")
    // The ABI test reads fixtures too, so it fails: the verdict is fail, not merely incomplete.
    expect(report.unit_tests.results?.["scorer_test"]).toBe("fail")
    expect(report.unit_tests.results?.["reader_test"]).toBe("pass")
    expect(report.verdict).toBe("fail")
    expect(result.code).toBe(1)
  })

  it("exits 2 when SVC_REPORT_OUT cannot be written", async () => {
    const result = await runReport({
      SVC_FIXTURES_DIR: join(scratch, "absent"),
      SVC_REPORT_OUT: join(scratch, "no/such/dir/report.json")
    })
    expect(result.stderr).toContain("cannot write")
    expect(result.code).toBe(2)
  })

  it("refuses arguments after run with exit 2", async () => {
    const result = await runCommand([requireBuilt("svc-tester-report"), "run", "extra"])
    expect(result.stderr).toContain("takes no arguments")
    expect(result.code).toBe(2)
  })
})
