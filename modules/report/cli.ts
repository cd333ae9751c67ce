// Sub-commands of svc-tester-report. apps/svc-tester-report/main.ts handles --version and
// passes the rest of argv here.
import { Effect } from "effect"
import { readFile } from "node:fs/promises"
import { checkReport, formatViolation } from "./check.ts"
import { type CliOutput, ExitCode } from "./cli-output.ts"

export { type CliOutput, ExitCode }

export const processOutput: CliOutput = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`)
}

const usage = "usage: svc-tester-report check FILE... | run | --version"

const errorMessage = (error: unknown): string => (error instanceof Error ? error.message : String(error))

type Loaded =
  | { readonly kind: "document"; readonly document: unknown }
  | { readonly kind: "unusable"; readonly problem: string }

const loadJson = (file: string): Effect.Effect<Loaded> =>
  Effect.tryPromise(() => readFile(file, "utf8")).pipe(
    Effect.map((text): Loaded => {
      try {
        return { kind: "document", document: JSON.parse(text) }
      } catch (error) {
        return { kind: "unusable", problem: `not JSON: ${errorMessage(error)}` }
      }
    }),
    Effect.catchAll((failure) =>
      Effect.succeed<Loaded>({ kind: "unusable", problem: `cannot read: ${errorMessage(failure.error)}` })
    )
  )

const checkFile = (file: string, output: CliOutput): Effect.Effect<ExitCode> =>
  Effect.map(loadJson(file), (loaded) => {
    if (loaded.kind === "unusable") {
      output.err(`${file}: ${loaded.problem}`)
      return ExitCode.unusable
    }
    const violations = checkReport(loaded.document)
    for (const violation of violations) output.out(`${file}: ${formatViolation(violation)}`)
    if (violations.length > 0) return ExitCode.invalid
    output.out(`${file}: valid`)
    return ExitCode.valid
  })

/** `check FILE...`: 0 when every file is valid, 1 when one is invalid, 2 when one is unusable. */
export const checkFiles = (files: ReadonlyArray<string>, output: CliOutput): Effect.Effect<ExitCode> =>
  files.length === 0
    ? Effect.sync(() => {
        output.err(`svc-tester-report check: no FILE given\n${usage}`)
        return ExitCode.unusable
      })
    : Effect.map(
        Effect.forEach(files, (file) => checkFile(file, output)),
        (codes) => codes.reduce<ExitCode>((worst, code) => (code > worst ? code : worst), ExitCode.valid)
      )

/** Runs `check` or `run` as argv asks ([command, ...arguments]); succeeds with the exit code. */
export const testerReportCli = (
  argv: ReadonlyArray<string>,
  output: CliOutput = processOutput
): Effect.Effect<ExitCode> => {
  const [command, ...rest] = argv
  switch (command) {
    case "check":
      return checkFiles(rest, output)
    case "run":
      // Loaded on demand: `check` needs neither the native library nor the embedded test programs.
      return Effect.flatMap(
        Effect.promise(() => import("./run.ts")),
        (module) => module.runReport(rest, output)
      )
    default:
      return Effect.sync(() => {
        output.err(usage)
        return ExitCode.unusable
      })
  }
}
