/**
 * Build step (scripts/build.ts runs it after the native library builds): scores every fixture
 * on the scalar path with the library just built and writes the per-frame values to
 * reference/scalar-reference.json, which svc-tester-report embeds. Without a fixture set it
 * writes why, and `run` reports reference_equivalence `missing`.
 * Fixtures: SVC_FIXTURES_DIR, else the repository's test/fixtures (raw pairs restored by the
 * build first); models: SVC_MODEL_DIR, else the built-in ones.
 */
import { ConfigProvider, Effect, Either, Layer } from "effect"
import { mkdirSync, writeFileSync } from "node:fs"
import os from "node:os"
import { dirname, join } from "node:path"
import { defaultModel, NativeScorerLibrary, type Scorer } from "../scorer/index.ts"
import { dispatchFacts } from "./dispatch.ts"
import { loadFixtureSet } from "./fixture-set.ts"
import { fileSha256 } from "./image.ts"
import { scoreFixture } from "./measure.ts"
import { type RecordedReference, recordTable, referenceFile } from "./reference.ts"
import { reportScorerLayer } from "./scorer-layer.ts"

const root = join(import.meta.dirname, "..", "..")
const fixturesDir = process.env.SVC_FIXTURES_DIR ?? join(root, "test", "fixtures")
// Unset: the built-in models (a model directory adds to them and may override one).
const modelSettings: Array<[string, string]> = process.env.SVC_MODEL_DIR
  ? [["SVC_MODEL_DIR", process.env.SVC_MODEL_DIR]]
  : []

const record: Effect.Effect<RecordedReference, never, NativeScorerLibrary | Scorer> = Effect.gen(function* () {
  const set = yield* loadFixtureSet(fixturesDir)
  if (set.kind === "absent") return { status: "missing", reason: `at build time: ${set.reason}` }
  const library = yield* NativeScorerLibrary
  const scored = yield* Effect.forEach(
    set.fixtures,
    (fixture) =>
      Effect.map(Effect.either(scoreFixture(fixture, "scalar")), (score) => ({ fixture: fixture.name, score })),
    {
      concurrency: Math.max(1, os.cpus().length)
    }
  )
  const failures = scored.flatMap(({ fixture, score }) => (Either.isLeft(score) ? [`${fixture}: ${score.left}`] : []))
  // A fixture that does not score is left out (run reports it `missing`) rather than failing the build.
  for (const failure of failures) console.warn(`record-reference: not recorded: ${failure}`)
  const fixtures = scored.flatMap(({ fixture, score }) =>
    Either.isRight(score) ? [recordTable(fixture, score.right.table)] : []
  )
  if (fixtures.length === 0)
    return { status: "missing", reason: `at build time no fixture scored: ${failures[0] ?? "none"}` }
  return {
    status: "recorded",
    library_sha256: (yield* fileSha256(library.path)) ?? "unknown",
    machine: os.machine(),
    dispatch_flags: dispatchFacts(library.symbols).dispatchFlags,
    model: defaultModel,
    fixtures
  }
})

const reference = await Effect.runPromise(
  record.pipe(
    Effect.provide(reportScorerLayer),
    Effect.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map(modelSettings))))
  )
)
const target = join(root, referenceFile)
mkdirSync(dirname(target), { recursive: true })
writeFileSync(target, JSON.stringify(reference))
console.log(
  reference.status === "recorded"
    ? `recorded scalar reference values of ${reference.fixtures.length} fixtures in ${referenceFile}`
    : `no reference values recorded: ${reference.reason}`
)
