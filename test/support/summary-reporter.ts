/**
 * Prints one plain closing line after vitest's own summary, `tests: N passed, N failed, N skipped`,
 * the form CI reads. A test file that failed to load counts as a failed test. It uses the
 * onFinished hook because the default reporter prints its summary there, and reporters run in
 * the order the config lists them. Before it, the slowest files with their durations, so a CI log
 * shows where the suite's time goes.
 */
import type { RunnerTask, RunnerTestFile } from "vitest"
import type { Reporter } from "vitest/node"

interface Counts {
  passed: number
  failed: number
  skipped: number
}

const count = (task: RunnerTask, counts: Counts): void => {
  if (task.type === "suite") {
    for (const child of task.tasks) count(child, counts)
    return
  }
  const state = task.result?.state
  if (state === "pass") counts.passed++
  else if (state === "fail") counts.failed++
  else counts.skipped++
}

/** How many of the slowest files the summary names. */
const SLOWEST_SHOWN = 10

/** `  119.3 s  test/e2e/tester-report.test.ts`, slowest first. */
const slowestFiles = (files: ReadonlyArray<RunnerTestFile>, shown = SLOWEST_SHOWN): ReadonlyArray<string> =>
  [...files]
    .map((file) => ({ name: file.name, seconds: (file.result?.duration ?? 0) / 1000 }))
    .sort((a, b) => b.seconds - a.seconds)
    .slice(0, shown)
    .map(({ name, seconds }) => `${seconds.toFixed(1).padStart(7)} s  ${name}`)

export default class SummaryReporter implements Reporter {
  onFinished(files: ReadonlyArray<RunnerTestFile>, errors: ReadonlyArray<unknown>): void {
    const counts: Counts = { passed: 0, failed: 0, skipped: 0 }
    for (const file of files) {
      // A file that failed to load has a failed result and no tests.
      if (file.result?.state === "fail" && file.tasks.length === 0) counts.failed++
      for (const task of file.tasks) count(task, counts)
    }
    counts.failed += errors.length
    if (files.length > 1) process.stdout.write(`\nslowest files:\n${slowestFiles(files).join("\n")}\n`)
    process.stdout.write(`\ntests: ${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped\n`)
  }
}
