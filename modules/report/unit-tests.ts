// The unit_tests suite from the native C tests' output (modules/scorer/native/test): each
// program prints one `PASS name: ...` / `FAIL name: ...` line per case, `FAIL file.c:LINE: ...`
// per failed check, and a final `N passed, M failed`.
import type { Suite } from "./schema.ts"

/** How one test program ended. */
export interface ProgramRun {
  readonly program: string
  readonly stdout: string
  readonly stderr: string
  /** null when the program did not exit normally (killed by a signal, or it could not start). */
  readonly exitCode: number | null
  /** Why the program could not start or was killed. */
  readonly problem?: string
}

type CaseResult = "pass" | "fail" | "skip"

export interface ProgramOutcome {
  readonly program: string
  readonly result: "pass" | "fail"
  readonly cases: Readonly<Record<string, CaseResult>>
  readonly messages: Readonly<Record<string, string>>
  readonly failures: ReadonlyArray<string>
}

// Case names are identifiers, so a check line (`FAIL scorer_test.c:24: ...`) never matches.
const caseLine = /^(PASS|FAIL|SKIP) ([A-Za-z0-9_]+)(?:: (.*))?$/
const checkLine = /^FAIL \S+\.c:\d+: /
const summaryLine = /^(\d+) passed, (\d+) failed$/m
/** Failed checks quoted per program; a broken kernel can fail thousands. */
const quotedChecks = 20

const results: Readonly<Record<string, CaseResult>> = { PASS: "pass", FAIL: "fail", SKIP: "skip" }

export const parseProgramRun = (run: ProgramRun): ProgramOutcome => {
  const cases: Record<string, CaseResult> = {}
  const messages: Record<string, string> = {}
  const failures: Array<string> = []
  for (const line of run.stdout.split("\n")) {
    const match = caseLine.exec(line)
    if (match === null) continue
    const [, verdict = "FAIL", name = "", message] = match
    cases[name] = results[verdict] ?? "fail"
    if (message !== undefined) messages[name] = Array.from(message).slice(0, 300).join("")
    if (verdict === "FAIL") failures.push(`${run.program}: ${name}: ${message ?? "failed"}`)
  }
  const checks = `${run.stdout}\n${run.stderr}`.split("\n").filter((line) => checkLine.test(line))
  failures.push(...checks.slice(0, quotedChecks).map((line) => `${run.program}: ${line}`))
  if (checks.length > quotedChecks) failures.push(`${run.program}: ${checks.length - quotedChecks} more failed checks`)
  const summary = summaryLine.exec(run.stdout)
  if (run.problem !== undefined) failures.push(`${run.program}: ${run.problem}`)
  else if (summary === null)
    failures.push(`${run.program}: no "N passed, M failed" line (exit code ${run.exitCode ?? "none"})`)
  else if (run.exitCode !== 0) failures.push(`${run.program}: exit code ${run.exitCode ?? "none"}`)
  const clean =
    run.problem === undefined &&
    run.exitCode === 0 &&
    summary !== null &&
    summary[2] === "0" &&
    Object.values(cases).every((result) => result !== "fail")
  return { program: run.program, result: clean ? "pass" : "fail", cases, messages, failures }
}

export const unitTestsSuite = (runs: ReadonlyArray<ProgramRun>): Suite => {
  const outcomes = runs.map(parseProgramRun)
  const all = outcomes.flatMap((outcome) => Object.values(outcome.cases))
  const count = (result: CaseResult) => all.filter((entry) => entry === result).length
  return {
    status: outcomes.length > 0 && outcomes.every((outcome) => outcome.result === "pass") ? "pass" : "fail",
    total: all.length,
    passed: count("pass"),
    failed: count("fail"),
    skipped: count("skip"),
    failures: outcomes.flatMap((outcome) => outcome.failures),
    cases: Object.fromEntries(outcomes.map((outcome) => [outcome.program, outcome.cases])),
    case_messages: Object.fromEntries(outcomes.map((outcome) => [outcome.program, outcome.messages])),
    results: Object.fromEntries(outcomes.map((outcome) => [outcome.program, outcome.result]))
  }
}
