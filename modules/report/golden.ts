// The golden gate: every fixture's default-dispatch scores against what libvmaf printed for it
// (NAME.libvmaf.json), per frame, with the features and the bound of the scorer's golden
// contract (modules/scorer/golden.ts). One case per fixture and feature, plus the pooled score.
import { Either, Schema } from "effect"
import { goldenFeatures, goldenTolerance } from "../scorer/index.ts"
import type { FixtureScore } from "./measure.ts"
import type { Suite } from "./schema.ts"

/** The case of the pooled VMAF score (mean, min, max, harmonic mean). */
export const pooledCase = "vmaf_pooled"

const pools = ["mean", "min", "max", "harmonic_mean"] as const

// Only the fields the gate reads; the files carry more (version, fps, other features).
export const GoldenFile = Schema.Struct({
  frames: Schema.Array(Schema.Struct({ metrics: Schema.Record({ key: Schema.String, value: Schema.Number }) })),
  pooled_metrics: Schema.Struct({
    vmaf: Schema.Struct({ mean: Schema.Number, min: Schema.Number, max: Schema.Number, harmonic_mean: Schema.Number })
  })
})
export type GoldenFile = typeof GoldenFile.Type

type CaseResult = "pass" | "fail"

export interface GoldenFixtureInput {
  readonly fixture: string
  /** The default-dispatch score, or why scoring failed. */
  readonly score: Either.Either<FixtureScore, string>
  /** The decoded golden file, or why it cannot be read. */
  readonly golden: Either.Either<GoldenFile, string>
}

interface CaseOutcome {
  readonly name: string
  readonly result: CaseResult
  readonly message: string
}

const caseMessageLimit = 300
const bounded = (text: string): string =>
  Array.from(text).length <= caseMessageLimit
    ? text
    : `${Array.from(text)
        .slice(0, caseMessageLimit - 1)
        .join("")}…`

const beyond = (diff: number): boolean => !(diff <= goldenTolerance)

const featureCase = (feature: string, score: FixtureScore, golden: GoldenFile): CaseOutcome => {
  const index = score.table.metrics.indexOf(feature)
  if (index < 0) return { name: feature, result: "fail", message: "the scorer reported no such metric" }
  if (score.table.frames.length !== golden.frames.length) {
    return {
      name: feature,
      result: "fail",
      message: `${score.table.frames.length} frames scored, libvmaf has ${golden.frames.length}`
    }
  }
  let mismatches = 0
  let largest = 0
  let first: string | undefined
  for (const [frame, expected] of golden.frames.entries()) {
    const ours = score.table.frames[frame]?.[index] ?? Number.NaN
    const theirs = expected.metrics[feature]
    const diff = theirs === undefined ? Number.NaN : Math.abs(ours - theirs)
    if (beyond(diff)) {
      mismatches++
      first ??= `frame ${frame}: ours ${ours}, libvmaf ${theirs ?? "absent"}`
    }
    largest = Number.isNaN(diff) ? Number.POSITIVE_INFINITY : Math.max(largest, diff)
  }
  const summary = `max |diff| ${largest.toExponential(2)} over ${golden.frames.length} frames (bound ${goldenTolerance})`
  return mismatches === 0
    ? { name: feature, result: "pass", message: summary }
    : { name: feature, result: "fail", message: `${mismatches} frames beyond the bound, first ${first}; ${summary}` }
}

const pooledOutcome = (score: FixtureScore, golden: GoldenFile): CaseOutcome => {
  const misses = pools.flatMap((pool) => {
    const diff = Math.abs(score.pooled[pool] - golden.pooled_metrics.vmaf[pool])
    return beyond(diff) ? [`${pool}: ours ${score.pooled[pool]}, libvmaf ${golden.pooled_metrics.vmaf[pool]}`] : []
  })
  return misses.length === 0
    ? { name: pooledCase, result: "pass", message: `mean, min, max, harmonic_mean within ${goldenTolerance}` }
    : { name: pooledCase, result: "fail", message: misses.join("; ") }
}

const fixtureCases = (input: GoldenFixtureInput): ReadonlyArray<CaseOutcome> => {
  const failAll = (message: string) =>
    [...goldenFeatures, pooledCase].map((name): CaseOutcome => ({ name, result: "fail", message }))
  if (Either.isLeft(input.score)) return failAll(`not scored: ${input.score.left}`)
  if (Either.isLeft(input.golden)) return failAll(input.golden.left)
  const score = input.score.right
  const golden = input.golden.right
  return [...goldenFeatures.map((feature) => featureCase(feature, score, golden)), pooledOutcome(score, golden)]
}

/** The golden gate as a suite: per fixture (the suite's "executable") one case per feature. */
export const goldenSuite = (inputs: ReadonlyArray<GoldenFixtureInput>): Suite => {
  const cases: Record<string, Record<string, CaseResult>> = {}
  const messages: Record<string, Record<string, string>> = {}
  const results: Record<string, CaseResult> = {}
  const failures: Array<string> = []
  let total = 0
  let failed = 0
  for (const input of inputs) {
    const outcomes = fixtureCases(input)
    cases[input.fixture] = Object.fromEntries(outcomes.map((outcome) => [outcome.name, outcome.result]))
    messages[input.fixture] = Object.fromEntries(outcomes.map((outcome) => [outcome.name, bounded(outcome.message)]))
    const failing = outcomes.filter((outcome) => outcome.result === "fail")
    results[input.fixture] = failing.length === 0 ? "pass" : "fail"
    failures.push(...failing.map((outcome) => `${input.fixture}/${outcome.name}: ${outcome.message}`))
    total += outcomes.length
    failed += failing.length
  }
  return {
    status: failed === 0 && total > 0 ? "pass" : "fail",
    total,
    passed: total - failed,
    failed,
    skipped: 0,
    failures,
    cases,
    case_messages: messages,
    results
  }
}
