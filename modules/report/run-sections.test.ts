/**
 * "A written report always passes check": reports assembled from run's section builders, fed
 * arbitrary scores (NaN, infinities, -0, missing metrics and frames), arbitrary test-program
 * output and arbitrary golden values, are valid and their verdict follows the sections.
 */
import { Effect, Either, FastCheck as fc } from "effect"
import { describe, expect, it } from "vitest"
import { absentAccelerator, buildReport } from "./build.ts"
import { type BuildMetadata, imageSection } from "./build-metadata.ts"
import { checkReport } from "./check.ts"
import { cellsStatus, compareTables } from "./compare.ts"
import { goldenFeatures } from "../scorer/index.ts"
import { type GoldenFile, goldenSuite } from "./golden.ts"
import { readHost } from "./host.ts"
import type { FixtureScore, FrameTable } from "./measure.ts"
import { type FixtureRun, readRecordedReference, recordTable, referenceSection } from "./reference.ts"
import { unitTestsSuite } from "./unit-tests.ts"

const host = await Effect.runPromise(
  readHost({ dispatchFlags: ["scalar", "avx2"], dispatchFlagsSource: "svc_cpu_supported" })
)

const metricNames = [...goldenFeatures.slice(0, 3), "psnr_y", "odd name ✓"]
const table: fc.Arbitrary<FrameTable> = fc.subarray(metricNames, { minLength: 1 }).chain((metrics) =>
  fc.record({
    metrics: fc.constant(metrics),
    frames: fc.array(
      fc.array(fc.oneof(fc.double(), fc.constantFrom(0, 1, 90.5)), {
        minLength: metrics.length,
        maxLength: metrics.length
      }),
      { maxLength: 4 }
    )
  })
)
const asScore = (scored: FrameTable): FixtureScore => ({
  table: scored,
  pooled: { mean: scored.frames[0]?.[0] ?? 0, min: 0, max: 0, harmonic_mean: 0 },
  extractors: []
})
const scoreOrError = fc.oneof(
  { weight: 4, arbitrary: table.map((scored) => Either.right<FixtureScore>(asScore(scored))) },
  { weight: 1, arbitrary: fc.string().map((message) => Either.left<string>(message)) }
)
const run: fc.Arbitrary<FixtureRun> = fc.record({
  fixture: fc.constantFrom("v01", "v02", "v03"),
  scalar: scoreOrError,
  auto: scoreOrError
})

const outputLine = fc.oneof(
  fc
    .tuple(
      fc.constantFrom("PASS", "FAIL", "SKIP"),
      fc.stringMatching(/^[A-Za-z0-9_]{1,8}$/),
      fc.string({ unit: "binary", maxLength: 400 })
    )
    .map(([verdict, name, message]) => `${verdict} ${name}: ${message.replaceAll("\n", " ")}`),
  fc.nat(50).map((n) => `${n} passed, ${n % 3} failed`),
  fc.string()
)
const program = fc.record({
  program: fc.constantFrom("scorer_test", "reader_test"),
  stdout: fc.array(outputLine, { maxLength: 6 }).map((lines) => lines.join("\n")),
  stderr: fc.string(),
  exitCode: fc.option(fc.integer({ min: 0, max: 255 }), { nil: null })
})

const golden = (scored: FrameTable, shift: number): GoldenFile => ({
  frames: scored.frames.map((frame) => ({
    metrics: Object.fromEntries(scored.metrics.map((name, i) => [name, (frame[i] ?? 0) + shift]))
  })),
  pooled_metrics: { vmaf: { mean: 1, min: 1, max: 1, harmonic_mean: 1 } }
})

const build: fc.Arbitrary<BuildMetadata | undefined> = fc.option(
  fc.record({
    kind: fc.constantFrom("container-image" as const, "osb-bundle" as const, "osc-zip" as const),
    source_commit: fc.string(),
    source_ref: fc.string(),
    tag: fc.string(),
    recipe_commit: fc.string(),
    compiler: fc.string(),
    libc: fc.string(),
    base_image: fc.string(),
    image_arch: fc.string(),
    python: fc.string(),
    built_by_workflow: fc.boolean(),
    libsvc_sha256: fc.constantFrom("a".repeat(64), "b".repeat(64))
  }),
  { nil: undefined }
)

describe("a report assembled from run's sections", () => {
  it("always passes check", () => {
    fc.assert(
      fc.property(
        fc.array(run, { minLength: 1, maxLength: 3 }),
        fc.array(table, { maxLength: 2 }),
        fc.array(program, { maxLength: 2 }),
        fc.double({ min: 0, max: 1e-3, noNaN: true }),
        build,
        (runs, recordedTables, programs, shift, metadata) => {
          const dispatchCells = runs.map((entry) =>
            Either.isRight(entry.scalar) && Either.isRight(entry.auto)
              ? compareTables(entry.fixture, entry.scalar.right.table, entry.auto.right.table)
              : { fixture: entry.fixture, error: "not scored" }
          )
          const recorded = readRecordedReference(
            JSON.parse(
              JSON.stringify({
                status: "recorded",
                library_sha256: "a".repeat(64),
                machine: "x86_64",
                dispatch_flags: ["scalar"],
                model: "vmaf_v0.6.1",
                fixtures: recordedTables.map((recordedTable, i) => recordTable(`v0${i + 1}`, recordedTable))
              })
            )
          )
          const reference = referenceSection(recorded, runs, { machine: "x86_64", librarySha256: "a".repeat(64) })
          const report = buildReport({
            toolVersion: "0.1.0",
            generatedAt: new Date(),
            image: imageSection(metadata, { svc_sha256: null, libsvc_sha256: "a".repeat(64) }),
            host,
            dispatch_equivalence: { status: cellsStatus(dispatchCells), fixtures: dispatchCells },
            reference_equivalence: reference.section,
            unit_tests: unitTestsSuite(programs),
            golden_gate: goldenSuite(
              runs.map((entry) => ({
                fixture: entry.fixture,
                score: entry.auto,
                golden: Either.map(entry.auto, (scored) => golden(scored.table, shift))
              }))
            ),
            accelerator: absentAccelerator({ status: "no_device", reason: "no accelerator" }),
            not_exercised: reference.not_exercised,
            note: ""
          })
          expect(checkReport(report)).toEqual([])
        }
      ),
      { numRuns: 150 }
    )
  })
})
