// `svc-tester-report run`: measures this build of the scoring library on this host and writes a
// version 3 report to stdout or SVC_REPORT_OUT. cli.ts imports this module only when `run` is
// asked for, so `check` never loads the native library or the embedded test programs.
import { Config, ConfigError, Effect, Either, Option, ParseResult, Schema } from "effect"
import { constants } from "node:fs"
import { access, readFile, writeFile } from "node:fs/promises"
import os from "node:os"
import { dirname } from "node:path"
import { modelDir, optionalText, text } from "../config/env.ts"
import { buildInfo } from "../runtime/build-info.ts"
import { defaultModel, NativeScorerLibrary } from "../scorer/index.ts"
import { absentAccelerator, buildReport, serializeReport } from "./build.ts"
import { embeddedBuild, imageSection } from "./build-metadata.ts"
import type { CliOutput, ExitCode } from "./cli-output.ts"
import { cellsStatus, compareTables, errorCell } from "./compare.ts"
import { dispatchFacts, missingFeature, supportedSimdPaths } from "./dispatch.ts"
import { type Fixture, type FixtureSet, loadFixtureSet } from "./fixture-set.ts"
import { GoldenFile, goldenSuite } from "./golden.ts"
import { readHost } from "./host.ts"
import { fileSha256 } from "./image.ts"
import { type FixtureScore, type SimdPath, scoreFixture, simdPaths } from "./measure.ts"
import { runNativeTests } from "./native-tests.ts"
import { type FixtureRun, readRecordedReference, referenceSection } from "./reference.ts"
import referenceJson from "./reference/scalar-reference.json" with { type: "json" }
import type { FixtureSection, NotExercisedItem, ReferenceEquivalence, Suite } from "./schema.ts"
import { reportScorerLayer } from "./scorer-layer.ts"
import { unitTestsSuite } from "./unit-tests.ts"

/** Default of SVC_FIXTURES_DIR: beside /models (SVC_MODEL_DIR's default) in an image. */
const defaultFixturesDir = "/fixtures"

const runConfig = Config.all({
  fixturesDir: text("SVC_FIXTURES_DIR", defaultFixturesDir),
  modelDir,
  reportOut: optionalText("SVC_REPORT_OUT")
})
type RunConfig = Config.Config.Success<typeof runConfig>

const noAccelerator = absentAccelerator({
  status: "no_device",
  reason: "this build carries no accelerator backend: the scorer runs on the CPU only, so there is no device to measure"
})

const decodeGolden = Schema.decodeUnknownEither(Schema.parseJson(GoldenFile))

const readGolden = (fixture: Fixture): Effect.Effect<Either.Either<GoldenFile, string>> =>
  Effect.tryPromise(() => readFile(fixture.golden, "utf8")).pipe(
    Effect.map((json) =>
      Either.mapLeft(
        decodeGolden(json),
        (error) => `${fixture.golden}: ${ParseResult.TreeFormatter.formatErrorSync(error)}`
      )
    ),
    Effect.orElseSucceed(() => Either.left(`${fixture.golden} cannot be read`))
  )

/** A fixture on the scalar path, the default dispatch and each other SIMD path of this CPU. */
interface DispatchRun extends FixtureRun {
  readonly paths: ReadonlyArray<{ readonly path: SimdPath; readonly score: Either.Either<FixtureScore, string> }>
}

/** Every fixture on the scalar path, on the default dispatch (the best path) and on every other
 * SIMD path the CPU has (an AVX-512 CPU also runs the AVX2 kernels), several fixtures at a time. */
const measureFixtures = (fixtures: ReadonlyArray<Fixture>, otherPaths: ReadonlyArray<SimdPath>) =>
  Effect.forEach(
    fixtures,
    (fixture) =>
      Effect.gen(function* () {
        const scalar = yield* Effect.either(scoreFixture(fixture, "scalar"))
        const auto = yield* Effect.either(scoreFixture(fixture, "auto"))
        const paths = yield* Effect.forEach(otherPaths, (path) =>
          Effect.map(Effect.either(scoreFixture(fixture, path)), (score) => ({ path, score }))
        )
        yield* Effect.logInfo("fixture scored").pipe(Effect.annotateLogs({ fixture: fixture.name }))
        return { fixture: fixture.name, scalar, auto, paths } satisfies DispatchRun
      }),
    { concurrency: Math.max(1, os.cpus().length) }
  )

/** Cells: the scalar path against the default dispatch (named by the fixture), then against each
 * other SIMD path (named "<fixture> [<path>]"). */
const dispatchSection = (runs: ReadonlyArray<DispatchRun>): FixtureSection => {
  const compare = (name: string, label: string, scalar: DispatchRun["scalar"], other: DispatchRun["auto"]) => {
    if (Either.isLeft(scalar)) return errorCell(name, `scalar: ${scalar.left}`)
    if (Either.isLeft(other)) return errorCell(name, `${label}: ${other.left}`)
    return compareTables(name, scalar.right.table, other.right.table)
  }
  const fixtures = runs.flatMap((run) => [
    compare(run.fixture, "default dispatch", run.scalar, run.auto),
    ...run.paths.map((entry) => compare(`${run.fixture} [${entry.path}]`, entry.path, run.scalar, entry.score))
  ])
  return { status: cellsStatus(fixtures), fixtures }
}

/** The SIMD paths this CPU lacks: their kernels were not compared with scalar on this host. */
const missingPaths = (supported: ReadonlyArray<SimdPath>): ReadonlyArray<NotExercisedItem> =>
  process.env["SVC_SCORER_CPU"] === "scalar"
    ? []
    : simdPaths
        .filter((path) => !supported.includes(path))
        .map((path) => ({
          item: `dispatch_equivalence.${path}`,
          reason: `this CPU lacks ${missingFeature[path]}: the ${path} kernels did not run on this host`
        }))

/** What the dispatch comparison could not show: the default path was the scalar one. */
const scalarOnlyDefault = (runs: ReadonlyArray<FixtureRun>): ReadonlyArray<NotExercisedItem> => {
  const kernels = runs.flatMap((run) =>
    Either.isRight(run.auto) ? run.auto.right.extractors.map((entry) => entry.backend) : []
  )
  if (kernels.length === 0 || kernels.some((backend) => backend !== "scalar")) return []
  // A CPU without a path is named by missingPaths; here every path was forced off.
  if (process.env["SVC_SCORER_CPU"] !== "scalar") return []
  return simdPaths.map((path) => ({
    item: `dispatch_equivalence.${path}`,
    reason:
      "the default dispatch ran the scalar kernels (SVC_SCORER_CPU=scalar forces the scalar path): scalar was compared with itself"
  }))
}

interface MeasuredSections {
  readonly dispatch_equivalence: FixtureSection
  readonly reference_equivalence: ReferenceEquivalence
  readonly golden_gate: Suite
  readonly not_exercised: ReadonlyArray<NotExercisedItem>
}

const notRun = (reason: string): MeasuredSections => ({
  dispatch_equivalence: { status: "not_run" },
  reference_equivalence: { status: "not_run" },
  golden_gate: { status: "not_run", reason, total: 0, passed: 0, failed: 0, skipped: 0, failures: [] },
  not_exercised: ["dispatch_equivalence", "reference_equivalence", "golden_gate"].map((item) => ({ item, reason }))
})

const measureSections = (set: FixtureSet, librarySha256: string | null, supported: ReadonlyArray<SimdPath>) =>
  Effect.gen(function* () {
    if (set.kind === "absent") return notRun(set.reason)
    // The default dispatch covers the best path; SVC_SCORER_CPU=scalar forces scalar on every path.
    const otherPaths = process.env["SVC_SCORER_CPU"] === "scalar" ? [] : supported.slice(0, -1)
    const runs = yield* measureFixtures(set.fixtures, otherPaths)
    const goldens = yield* Effect.forEach(set.fixtures, readGolden)
    const reference = referenceSection(readRecordedReference(referenceJson), runs, {
      machine: os.machine(),
      librarySha256
    })
    return {
      dispatch_equivalence: dispatchSection(runs),
      reference_equivalence: reference.section,
      golden_gate: goldenSuite(
        runs.map((run, index) => ({
          fixture: run.fixture,
          score: run.auto,
          golden: goldens[index] ?? Either.left("no golden file")
        }))
      ),
      not_exercised: [...scalarOnlyDefault(runs), ...missingPaths(supported), ...reference.not_exercised]
    } satisfies MeasuredSections
  })

const measure = (config: RunConfig) =>
  Effect.gen(function* () {
    const library = yield* NativeScorerLibrary
    const dispatch = dispatchFacts(library.symbols)
    const set = yield* loadFixtureSet(config.fixturesDir)
    yield* Effect.logInfo("measuring").pipe(
      Effect.annotateLogs({
        fixtures: set.kind === "found" ? set.fixtures.length : set.reason,
        dispatch: dispatch.dispatchFlagsSource
      })
    )
    const librarySha256 = yield* fileSha256(library.path)
    const [sections, programs] = yield* Effect.all(
      [
        measureSections(set, librarySha256, supportedSimdPaths(library.symbols)),
        runNativeTests({ modelDir: Option.getOrUndefined(config.modelDir), fixturesDir: config.fixturesDir })
      ],
      { concurrency: 2 }
    )
    return buildReport({
      toolVersion: buildInfo.version,
      generatedAt: new Date(),
      image: imageSection(embeddedBuild, {
        // From source the running executable is Bun itself, not this build.
        svc_sha256: embeddedBuild === undefined ? null : yield* fileSha256(process.execPath),
        libsvc_sha256: librarySha256
      }),
      host: yield* readHost(dispatch),
      dispatch_equivalence: sections.dispatch_equivalence,
      reference_equivalence: sections.reference_equivalence,
      unit_tests: unitTestsSuite(programs),
      golden_gate: sections.golden_gate,
      accelerator: noAccelerator,
      not_exercised: [
        ...sections.not_exercised,
        {
          item: "unit_tests.typescript",
          reason: "the TypeScript test suites need the source tree; the executable runs the native C tests"
        },
        {
          item: "image.digest",
          reason: "the registry assigns the image digest after the build; the image cannot know it"
        }
      ],
      note: `fixtures: ${config.fixturesDir}; models: ${Option.getOrElse(config.modelDir, () => "built-in")} (${defaultModel})`
    })
  }).pipe(Effect.provide(reportScorerLayer))

const errorText = (error: unknown): string => (error instanceof Error ? error.message : String(error))

/** Writes the report; 0 when its verdict is pass, 1 otherwise, 2 when it cannot be made or written. */
export const runReport = (args: ReadonlyArray<string>, output: CliOutput): Effect.Effect<ExitCode> =>
  Effect.gen(function* () {
    if (args.length > 0) {
      output.err(`svc-tester-report run: takes no arguments (got ${args.join(" ")}); configure with SVC_* variables`)
      return 2
    }
    const config = yield* runConfig
    // A folder that is missing or not writable is refused before minutes of measuring, not after.
    if (config.reportOut._tag === "Some") {
      const path = config.reportOut.value
      const folder = yield* Effect.either(Effect.tryPromise(() => access(dirname(path), constants.W_OK)))
      if (Either.isLeft(folder)) {
        output.err(`svc-tester-report run: cannot write ${path}: ${errorText(folder.left.error)}`)
        return 2
      }
    }
    const report = yield* measure(config)
    const text = serializeReport(report)
    const summary = `verdict ${report.verdict}${report.failed_checks.length > 0 ? ` (failed: ${report.failed_checks.join(", ")})` : ""}`
    if (config.reportOut._tag === "Some") {
      const path = config.reportOut.value
      const written = yield* Effect.either(Effect.tryPromise(() => writeFile(path, text)))
      if (Either.isLeft(written)) {
        output.err(`svc-tester-report run: cannot write ${path}: ${errorText(written.left.error)}`)
        return 2
      }
      output.err(`svc-tester-report run: wrote ${path}: ${summary}`)
    } else {
      output.out(text.trimEnd())
      output.err(`svc-tester-report run: ${summary}`)
    }
    return report.verdict === "pass" ? 0 : 1
  }).pipe(
    Effect.catchAll((error) =>
      Effect.sync(() => {
        const message = ConfigError.isConfigError(error) ? String(error) : errorText(error)
        output.err(`svc-tester-report run: ${message}`)
        return 2 as const
      })
    )
  )
