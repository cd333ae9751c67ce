/**
 * The `svc` command line: `svc score`, `svc ladder`, `svc jobs ...`, `svc models`. Parsing and help come from
 * @effect/cli; this module maps every ending to an exit code (0 done, 1 failed, 2 usage) with
 * one line on stderr.
 */
import { CliConfig, Command, ValidationError } from "@effect/cli"
import { BunContext, BunRuntime } from "@effect/platform-bun"
import { Cause, Console, Effect, Exit } from "effect"
import { buildInfo, versionLine } from "../runtime/build-info.ts"
import { ExitCode } from "./errors.ts"
import { jobsCommand } from "./jobs.ts"
import { ladderCommand } from "./ladder.ts"
import { modelsCommand } from "./models.ts"
import { scoreCommand } from "./score.ts"

const svc = Command.make("svc").pipe(
  Command.withDescription(
    "Video quality (VMAF) scores from the command line: local, on a server, or as jobs. `svc COMMAND --help` (or -h alone) describes a command; `svc --version` prints the version"
  ),
  Command.withSubcommands([scoreCommand, ladderCommand, jobsCommand, modelsCommand])
)

const cli = Command.run(svc, { name: "svc", version: `${buildInfo.version} (${buildInfo.commit})` })

// biome-ignore lint/suspicious/noControlCharactersInRegex: ANSI styling in @effect/cli's text
const plain = (text: string): string => text.replace(/\x1b\[[0-9;]*m/g, "")

/** Sub-commands by command: the words before a command's own arguments. */
const commandTree: Readonly<Record<string, ReadonlyArray<string>>> = {
  score: [],
  ladder: [],
  models: [],
  jobs: ["submit", "get", "list", "cancel", "wait"]
}

/** The command's words (`["jobs", "submit"]`) and the arguments after them. */
const splitCommand = (args: ReadonlyArray<string>) => {
  const [first, second] = args
  const children = first === undefined ? undefined : commandTree[first]
  if (first === undefined || children === undefined) return { path: [], rest: args }
  if (second !== undefined && children.includes(second)) return { path: [first, second], rest: args.slice(2) }
  return { path: [first], rest: args.slice(1) }
}

/**
 * Arguments refused before parsing. `-h` is help, as in every svc command, but the reference
 * tool's `-h` is the height: `-h` given with other arguments is an error naming `--height`
 * (help alone is `-h` or `--help`). `--version` works alone; @effect/cli's `--wizard` and
 * `--completions` belong to `svc` itself: after a command none of them may end it with 0 and no
 * score.
 */
const refusedArguments = (args: ReadonlyArray<string>): string | undefined => {
  const { path, rest } = splitCommand(args)
  if (rest.includes("-h") && rest.length > 1)
    return "-h is help and takes no other arguments; for the height of raw video write --height N"
  if (path.length === 0) return undefined
  const builtIn = rest.find((arg) => ["--version", "--wizard", "--completions"].includes(arg.split("=")[0] ?? ""))
  if (builtIn === undefined) return undefined
  return builtIn === "--version"
    ? "--version takes no other arguments: svc --version"
    : `${builtIn.split("=")[0]} is not an option of svc ${path.join(" ")}`
}

/** The primitive's own words @effect/cli puts above each description: the heading already says them. */
const filler =
  /^ {2}(A user-defined piece of text\.|An integer\.|A true or false value\.|A floating point number\.|One of the following: .*|A user-selected (file|directory)\.)$/

/**
 * Help as users read it: usage lines start with `svc` and the command's words (the library
 * writes only the last word), no filler paragraphs, no table padding in the command list.
 */
const helpText = (text: string, path: ReadonlyArray<string>): string => {
  const lines = text.split("\n")
  const kept: Array<string> = []
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index] ?? ""
    if (filler.test(line)) {
      if ((lines[index + 1] ?? "") === "") index++
      continue
    }
    if (line.startsWith("$ ")) kept.push(line.replace(/^\$ \S+/, ["$ svc", ...path].join(" ")))
    else if (line.startsWith("  - ")) kept.push(`  - svc ${line.slice(4).replace(/ {3,}/, "\n      ")}`)
    else kept.push(line)
  }
  return kept.join("\n")
}

const fail = (code: number, message: string) =>
  Effect.sync(() => {
    process.stderr.write(`svc: ${message}\n`)
    process.exitCode = code
  })

/** Runs `svc` with the process's arguments until done, then exits with its code. */
export const runSvc = (argv: ReadonlyArray<string> = process.argv): void => {
  const args = argv.slice(2)
  // As every svc executable: `--version` alone prints one line (and needs nothing else).
  if (args.length === 1 && (args[0] === "--version" || args[0] === "-v")) {
    process.stdout.write(`${versionLine("svc")}\n`)
    return
  }
  const refused = refusedArguments(args)
  if (refused !== undefined) {
    process.stderr.write(`svc: ${refused} (see svc --help)\n`)
    process.exitCode = ExitCode.usage
    return
  }
  const { path } = splitCommand(args)
  // @effect/cli reports a parse error through Console.error: kept here, it becomes the one line.
  // Its help (Console.log) is styled for a terminal: svc prints it plain, rewritten by helpText.
  const parseErrors: Array<string> = []
  const program = Console.consoleWith((current) =>
    Console.withConsole(cli(argv), {
      ...current,
      log: (...args: ReadonlyArray<unknown>) =>
        current.log(...args.map((arg) => (typeof arg === "string" ? helpText(plain(arg), path) : arg))),
      error: (...args: ReadonlyArray<unknown>) => Effect.sync(() => void parseErrors.push(args.map(String).join(" ")))
    })
  ).pipe(
    Effect.catchAll((error) => {
      if (ValidationError.isValidationError(error)) {
        const reason = plain(parseErrors.join("\n"))
          .split("\n")
          .find((line) => line.trim() !== "")
        return fail(ExitCode.usage, `${reason?.trim() ?? "invalid command line"} (see svc --help)`)
      }
      return fail(error._tag === "UsageError" ? ExitCode.usage : ExitCode.failed, error.message)
    }),
    Effect.catchAllDefect((defect) => fail(ExitCode.failed, `internal error: ${String(defect)}`)),
    Effect.provide(BunContext.layer),
    // Built-in options (--help, --version, ...) are described once, in svc's own description.
    Effect.provide(CliConfig.layer({ showBuiltIns: false }))
  )
  BunRuntime.runMain(program, {
    disableErrorReporting: true,
    disablePrettyLogger: true,
    teardown: (exit, onExit) => {
      if (Exit.isFailure(exit)) {
        if (Cause.isInterruptedOnly(exit.cause)) return onExit(130)
        process.stderr.write(`svc: ${Cause.pretty(exit.cause).split("\n")[0]}\n`)
        return onExit(ExitCode.failed)
      }
      onExit(typeof process.exitCode === "number" ? process.exitCode : ExitCode.ok)
    }
  })
}
