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
import {
  type CommandResult,
  fixturesDir,
  modelDirEnv,
  repoRoot,
  requireBuilt,
  runCommand
} from "../../local/executables.ts"

const scratch = mkdtempSync(join(tmpdir(), "svc-tester-report-"))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

/** A run scores every fixture on scalar and on each SIMD path: minutes on a loaded 2-core host (the
 * three runs started at once get the three runs' time). */
const reportTimeout = 300_000

const sha256 = (path: string) => createHash("sha256").update(readFileSync(path)).digest("hex")

const runReport = (env: Record<string, string>) =>
  runCommand([requireBuilt("svc-tester-report"), "run"], { env: { ...modelDirEnv, ...env }, cwd: scratch })

const check = (file: string) => runCommand([requireBuilt("svc-tester-report"), "check", file])

/**
 * A copy of the fixture set listing only `fixture` in its index (the run scores that one on every
 * path; the native tests still find every video they read): the videos symlinked, the JSON copied
 * so a test may edit it.
 */
const copyFixture = (name: string, fixture: string): string => {
  const dir = join(scratch, name)
  mkdirSync(dir)
  for (const file of readdirSync(fixturesDir)) {
    if (file.endsWith(".yuv")) symlinkSync(join(fixturesDir, file), join(dir, file))
    else copyFileSync(join(fixturesDir, file), join(dir, file))
  }
  const index = readFileSync(join(fixturesDir, "index.jsonl"), "utf8").trim().split("\n")
  const kept = index.filter((line) => (JSON.parse(line) as { name?: string }).name === fixture)
  if (kept.length !== 1) throw new Error(`index.jsonl lists ${fixture} ${kept.length} times`)
  writeFileSync(join(dir, "index.jsonl"), `${kept.join("\n")}\n`)
  return dir
}

const corruptedFixture = "v04_bars_444_8_blur"

/** The fixture set with one golden value of `corruptedFixture` moved by 0.01 (frame 5's integer_adm2). */
const corruptedFixtureSet = (): string => {
  const dir = copyFixture("corrupted", corruptedFixture)
  const goldenPath = join(dir, `${corruptedFixture}.libvmaf.json`)
  const golden = JSON.parse(readFileSync(goldenPath, "utf8")) as {
    frames: Array<{ metrics: Record<string, number> }>
  }
  const frame = golden.frames[5]
  if (frame === undefined) throw new Error("golden file has fewer than 6 frames")
  frame.metrics["integer_adm2"] = (frame.metrics["integer_adm2"] ?? 0) + 0.01
  writeFileSync(goldenPath, JSON.stringify(golden))
  return dir
}

const corruptedOut = join(scratch, "corrupted-report.json")
const noFixturesDir = join(scratch, "no-fixtures")
const noFixturesOut = join(scratch, "no-fixtures-report.json")

/**
 * The three measuring runs, started at once: each runs the native test programs one after the
 * other (mostly on one core) beside its scoring, so together they keep both cores busy where
 * one after another they would leave one idle for long stretches.
 */
let full: CommandResult
let corrupted: CommandResult
let noFixtures: CommandResult
beforeAll(async () => {
  const corruptedDir = corruptedFixtureSet()
  mkdirSync(noFixturesDir)
  ;[full, corrupted, noFixtures] = await Promise.all([
    runReport({ SVC_FIXTURES_DIR: fixturesDir }),
    runReport({ SVC_FIXTURES_DIR: corruptedDir, SVC_REPORT_OUT: corruptedOut }),
    runReport({ SVC_FIXTURES_DIR: noFixturesDir, SVC_REPORT_OUT: noFixturesOut })
  ])
}, 3 * reportTimeout)

describe("svc-tester-report run on this machine", () => {
  let report: ReportV3
  let code: number

  beforeAll(() => {
    code = full.code
    expect(full.stdout, full.stderr).not.toBe("")
    report = JSON.parse(full.stdout) as ReportV3
    writeFileSync(join(scratch, "report.json"), full.stdout)
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
    // One cell per fixture for the default dispatch, one "<fixture> [<path>]" per other SIMD path.
    const defaultCells = cells.filter((cell) => !cell.fixture.endsWith("]"))
    expect(report.reference_equivalence.status).toBe("identical")
    for (const cell of [report.reference_equivalence.own_arch_scalar, report.reference_equivalence.own_arch_default]) {
      expect(cell?.status).toBe("identical")
      expect(cell?.gating).toBe(true)
      expect(cell?.comparable).toBe(true)
      expect(cell?.fixtures).toHaveLength(defaultCells.length)
    }
  })

  it("compares every SIMD path this CPU has with scalar and lists the ones it lacks as not exercised", () => {
    const flags = report.host.dispatch_flags
    const cells = report.dispatch_equivalence.fixtures ?? []
    const defaultCells = cells.filter((cell) => !cell.fixture.endsWith("]"))
    const items = report.not_exercised.map((entry) => entry.item)
    // The default dispatch is the widest path; every narrower one gets its own cells.
    const paths = (["avx2", "avx512"] as const).filter((path) => flags.includes(path))
    for (const path of paths.slice(0, -1))
      expect(cells.filter((cell) => cell.fixture.endsWith(`[${path}]`))).toHaveLength(defaultCells.length)
    for (const path of ["avx2", "avx512"] as const) {
      if (flags.includes(path)) expect(items).not.toContain(`dispatch_equivalence.${path}`)
      else expect(items).toContain(`dispatch_equivalence.${path}`)
    }
  })

  it("runs the native C tests and records every case", () => {
    expect(report.unit_tests.status).toBe("pass")
    expect(report.unit_tests.results).toEqual({
      scorer_test: "pass",
      reader_test: "pass",
      feed_test: "pass",
      simd_test: "pass"
    })
    expect(Object.keys(report.unit_tests.cases?.["scorer_test"] ?? {})).toEqual([
      "setup",
      "models",
      "jobs",
      "descriptors",
      "ladder",
      "ladder_ranges",
      "ladder_ranges_subsampled",
      "parallel",
      "ladder_backends",
      "transform",
      "shots"
    ])
    expect(Object.keys(report.unit_tests.cases?.["feed_test"] ?? {})).toEqual([
      "setup",
      "pair",
      "skips",
      "ends",
      "limit",
      "cancel",
      "ladder",
      "ladder_ranges",
      "arguments",
      "indexed"
    ])
    expect(Object.keys(report.unit_tests.cases?.["reader_test"] ?? {})).toEqual(["raw", "y4m", "threads", "fuzz"])
    // simd_test: fixed-size and random-size cases (VIF, ADM, motion; cambi) and a speed_chroma
    // case per SIMD path of this CPU, a skipped case named by the path for each one it lacks, and
    // the fused VIF ladder rows of every build this CPU can run.
    const simdCases = report.unit_tests.cases?.["simd_test"] ?? {}
    const expected = Object.fromEntries([
      ...(["avx2", "avx512"] as const).flatMap((path) =>
        report.host.dispatch_flags.includes(path)
          ? [
              [`${path}_fixed_sizes`, "pass"],
              [`${path}_random_sizes`, "pass"],
              [`${path}_cambi_fixed_sizes`, "pass"],
              [`${path}_cambi_random_sizes`, "pass"],
              [`${path}_speed_chroma`, "pass"],
              ...(path === "avx512" ? [["avx512_adm_decouple_s32_kernel", "pass"]] : []),
              [`${path}_adm_dwt_s32_kernels`, "pass"],
              [`${path}_xpsnr_ssimulacra2`, "pass"]
            ]
          : [[path, "skip"]]
      ),
      ["vif_ladder_rows", "pass"]
    ])
    expect(simdCases).toEqual(expected)
    // scorer_test 11 cases, reader_test 4, feed_test 10.
    expect(report.unit_tests.total).toBe(25 + Object.keys(simdCases).length)
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

describe("svc-tester-report run with a corrupted golden value", () => {
  it("fails the golden gate and the verdict, writing the report to SVC_REPORT_OUT", async () => {
    const name = corruptedFixture
    const result = corrupted
    const out = corruptedOut
    expect(result.stdout).toBe("")
    expect(result.stderr).toContain(`wrote ${out}: verdict fail`)
    expect(result.code).toBe(1)
    const checked = await check(out)
    expect(checked.code, checked.stdout).toBe(0)

    const report = JSON.parse(readFileSync(out, "utf8")) as ReportV3
    expect(report.golden_gate.status).toBe("fail")
    expect(Object.keys(report.golden_gate.results ?? {})).toEqual([name])
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
    const checked = await check(noFixturesOut)
    expect(checked.code, checked.stdout).toBe(0)
    const report = JSON.parse(readFileSync(noFixturesOut, "utf8")) as ReportV3
    expect(report.dispatch_equivalence.status).toBe("not_run")
    expect(report.reference_equivalence.status).toBe("not_run")
    expect(report.golden_gate.status).toBe("not_run")
    expect(report.golden_gate.reason).toContain(join(noFixturesDir, "index.jsonl"))
    expect(report.not_exercised.map((entry) => entry.item)).toContain("golden_gate")
    // The ABI test reads fixtures too, so it fails: the verdict is fail, not merely incomplete.
    expect(report.unit_tests.results?.["scorer_test"]).toBe("fail")
    expect(report.unit_tests.results?.["reader_test"]).toBe("pass")
    expect(report.verdict).toBe("fail")
    expect(noFixtures.code).toBe(1)
  })

  it("exits 2 when SVC_REPORT_OUT's folder is missing, before measuring anything", async () => {
    const result = await runReport({
      SVC_FIXTURES_DIR: join(scratch, "absent"),
      SVC_REPORT_OUT: join(scratch, "no/such/dir/report.json")
    })
    expect(result.stderr).toContain(`cannot write ${join(scratch, "no/such/dir/report.json")}`)
    expect(result.stderr).not.toContain('"message":"measuring"')
    expect(result.code).toBe(2)
  })

  it("refuses arguments after run with exit 2", async () => {
    const result = await runCommand([requireBuilt("svc-tester-report"), "run", "extra"])
    expect(result.stderr).toContain("takes no arguments")
    expect(result.code).toBe(2)
  })
})
