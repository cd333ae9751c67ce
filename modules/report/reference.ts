// Reference values recorded at build time (scripts/build.ts runs record-reference.ts after the
// native library builds): every fixture scored on the scalar path, per frame. `run` compares
// this host's scalar and default-dispatch results with them, exactly.
import { Either, ParseResult, Schema } from "effect"
import { compareTables, errorCell } from "./compare.ts"
import type { FixtureScore, FrameTable } from "./measure.ts"
import type { FixtureCell, NotExercisedItem, ReferenceEquivalence } from "./schema.ts"

/** Where the build writes the file (gitignored) and the name the report gives it. */
export const referenceFile = "modules/report/reference/scalar-reference.json"

// JSON has no NaN or infinities; the scorer can produce them (PSNR of identical frames is
// capped, but a broken kernel could give NaN), so they are recorded as strings.
const RecordedValue = Schema.Union(Schema.Number, Schema.Literal("NaN", "Infinity", "-Infinity"))
type RecordedValue = typeof RecordedValue.Type

const RecordedFixture = Schema.Struct({
  fixture: Schema.String,
  metrics: Schema.Array(Schema.String),
  frames: Schema.Array(Schema.Array(RecordedValue))
})

export const RecordedReference = Schema.Union(
  Schema.Struct({
    status: Schema.Literal("recorded"),
    /** sha256 of the native library that produced the values (the one the build embeds). */
    library_sha256: Schema.String,
    /** uname -m of the build host. */
    machine: Schema.String,
    /** The build host's dispatch flags (host.dispatch_flags there); the values are scalar ones. */
    dispatch_flags: Schema.Array(Schema.String),
    model: Schema.String,
    fixtures: Schema.Array(RecordedFixture)
  }),
  // The fixture set was not there at build time: nothing to compare with, and why.
  Schema.Struct({ status: Schema.Literal("missing"), reason: Schema.String })
)
export type RecordedReference = typeof RecordedReference.Type

export const recordValue = (value: number): RecordedValue =>
  Number.isNaN(value)
    ? "NaN"
    : value === Number.POSITIVE_INFINITY
      ? "Infinity"
      : value === Number.NEGATIVE_INFINITY
        ? "-Infinity"
        : value

const recordedNumber = (value: RecordedValue): number =>
  value === "NaN"
    ? Number.NaN
    : value === "Infinity"
      ? Number.POSITIVE_INFINITY
      : value === "-Infinity"
        ? Number.NEGATIVE_INFINITY
        : value

export const recordTable = (fixture: string, table: FrameTable): typeof RecordedFixture.Type => ({
  fixture,
  metrics: table.metrics,
  frames: table.frames.map((frame) => frame.map(recordValue))
})

const decodeReference = Schema.decodeUnknownEither(RecordedReference)

/** The embedded file, decoded; a file that does not decode is reported, not thrown. */
export const readRecordedReference = (json: unknown): Either.Either<RecordedReference, string> =>
  Either.mapLeft(
    decodeReference(json),
    (error) => `${referenceFile} is not a reference file: ${ParseResult.TreeFormatter.formatErrorSync(error)}`
  )

/** One fixture's results on this host: each dispatch's score, or why it failed. */
export interface FixtureRun {
  readonly fixture: string
  readonly scalar: Either.Either<FixtureScore, string>
  readonly auto: Either.Either<FixtureScore, string>
}

type CellStatus = "identical" | "differing" | "missing" | "error"
// The worse status wins: a failure to score hides nothing, a difference outranks a gap.
const severity: ReadonlyArray<CellStatus> = ["identical", "missing", "differing", "error"]
const worst = (statuses: ReadonlyArray<CellStatus>): CellStatus =>
  statuses.reduce<CellStatus>(
    (current, next) => (severity.indexOf(next) > severity.indexOf(current) ? next : current),
    "identical"
  )

export interface HostIdentity {
  readonly machine: string
  /** sha256 of the native library this run loaded. */
  readonly librarySha256: string | null
}

const noReference = "no reference values recorded for this fixture at build time"

export const referenceSection = (
  reference: Either.Either<RecordedReference, string>,
  runs: ReadonlyArray<FixtureRun>,
  host: HostIdentity
): { readonly section: ReferenceEquivalence; readonly not_exercised: ReadonlyArray<NotExercisedItem> } => {
  const crossArch = {
    item: "reference_equivalence.cross_arch_x86_scalar",
    reason: "the build records reference values on its own architecture only"
  }
  const unusable = (status: "error" | "missing", reason: string) => {
    const cell = { file: referenceFile, status, gating: true, fixtures: [] }
    return {
      section: { status, own_arch_scalar: cell, own_arch_default: cell },
      not_exercised: [{ item: "reference_equivalence", reason }, crossArch]
    }
  }
  if (Either.isLeft(reference)) return unusable("error", reference.left)
  const recorded = reference.right
  if (recorded.status === "missing") return unusable("missing", recorded.reason)
  const tables = new Map(
    recorded.fixtures.map((entry) => [
      entry.fixture,
      {
        metrics: entry.metrics,
        frames: entry.frames.map((frame) => frame.map(recordedNumber))
      }
    ])
  )
  const compareWith = (pick: (run: FixtureRun) => Either.Either<FixtureScore, string>) => {
    const statuses: Array<CellStatus> = []
    const fixtures = runs.map((run): FixtureCell => {
      const expected = tables.get(run.fixture)
      const measured = pick(run)
      if (Either.isLeft(measured)) {
        statuses.push("error")
        return errorCell(run.fixture, measured.left)
      }
      if (expected === undefined) {
        statuses.push("missing")
        return errorCell(run.fixture, noReference)
      }
      const cell = compareTables(run.fixture, expected, measured.right.table)
      statuses.push((cell.differing_values ?? 0) > 0 ? "differing" : "identical")
      return cell
    })
    return {
      file: referenceFile,
      status: worst(statuses),
      gating: true,
      fixtures,
      comparable: recorded.machine === host.machine && recorded.library_sha256 === host.librarySha256,
      generated_with_flags: recorded.dispatch_flags
    }
  }
  const ownArchScalar = compareWith((run) => run.scalar)
  const ownArchDefault = compareWith((run) => run.auto)
  return {
    section: {
      status: worst([ownArchScalar.status, ownArchDefault.status]),
      own_arch_scalar: ownArchScalar,
      own_arch_default: ownArchDefault
    },
    not_exercised: [crossArch]
  }
}
