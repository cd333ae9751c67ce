// `svc-tester-report run`: measures this build of the scoring library on this host and writes a
// version 3 report to stdout or SVC_REPORT_OUT. cli.ts imports this module only when `run` is
// asked for, so `check` never loads the native library or the embedded test programs.
import { Config, ConfigError, Effect, Either, ParseResult, Schema } from "effect"
import { readFile, writeFile } from "node:fs/promises"
import os from "node:os"
import { modelDir, optionalText, text } from "../config/env.ts"
import { buildInfo } from "../runtime/build-info.ts"
import { NativeScorerLibrary } from "../scorer/library.ts"
import { defaultModel } from "../scorer/request.ts"
import { absentAccelerator, buildReport, serializeReport } from "./build.ts"
import { embeddedBuild, imageSection } from "./build-metadata.ts"
import type { CliOutput, ExitCode } from "./cli-output.ts"
import { cellsStatus, compareTables, errorCell } from "./compare.ts"
import { dispatchFacts } from "./dispatch.ts"
import { type Fixture, type FixtureSet, loadFixtureSet } from "./fixture-set.ts"
import { GoldenFile, goldenSuite } from "./golden.ts"
import { readHost } from "./host.ts"
import { fileSha256 } from "./image.ts"
import { scoreFixture } from "./measure.ts"
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

/** Every fixture on the scalar path and on the default dispatch, several fixtures at a time. */
const measureFixtures = (fixtures: ReadonlyArray<Fixture>) =>
  Effect.forEach(
    fixtures,
    (fixture) =>
      Effect.gen(function* () {
        const scalar = yield* Effect.either(scoreFixture(fixture, "scalar"))
        const auto = yield* Effect.either(scoreFixture(fixture, "auto"))
        yield* Effect.logInfo("fixture scored").pipe(Effect.annotateLogs({ fixture: fixture.name }))
        return { fixture: fixture.name, scalar, auto } satisfies FixtureRun
      }),
    { concurrency: Math.max(1, os.cpus().length) }
  )

const dispatchSection = (runs: ReadonlyArray<FixtureRun>): FixtureSection => {
  const fixtures = runs.map((run) => {
    if (Either.isLeft(run.scalar)) return errorCell(run.fixture, `scalar: ${run.scalar.left}`)
    if (Either.isLeft(run.auto)) return errorCell(run.fixture, `default dispatch: ${run.auto.left}`)
    return compareTables(run.fixture, run.scalar.right.table, run.auto.right.table)
  })
  return { status: cellsStatus(fixtures), fixtures }
}

/** What the dispatch comparison could not show: the default path was the scalar one. */
const scalarOnlyDefault = (runs: ReadonlyArray<FixtureRun>): ReadonlyArray<NotExercisedItem> => {
  const kernels = runs.flatMap((run) =>
    Either.isRight(run.auto) ? run.auto.right.extractors.map((entry) => entry.backend) : []
  )
  if (kernels.length === 0 || kernels.some((backend) => backend !== "scalar")) return []
  const why =
    process.env["SVC_SCORER_CPU"] === "scalar" ? "SVC_SCORER_CPU=scalar forces the scalar path" : "this CPU has no AVX2"
  return [
    {
      item: "dispatch_equivalence.avx2",
      reason: `the default dispatch ran the scalar kernels (${why}): scalar was compared with itself`
    }
  ]
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

const measureSections = (set: FixtureSet, librarySha256: string | null) =>
  Effect.gen(function* () {
    if (set.kind === "absent") return notRun(set.reason)
    const runs = yield* measureFixtures(set.fixtures)
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
      not_exercised: [...scalarOnlyDefault(runs), ...reference.not_exercised]
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
        measureSections(set, librarySha256),
        runNativeTests({ modelDir: config.modelDir, fixturesDir: config.fixturesDir })
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
      note: `fixtures: ${config.fixturesDir}; models: ${config.modelDir} (${defaultModel})`
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
