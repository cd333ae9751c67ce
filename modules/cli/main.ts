/**
 * The `svc` command line: `svc score`, `svc ladder`, `svc jobs ...`, `svc models`. Parsing and help come from
 * @effect/cli; this module maps every ending to an exit code (0 done, 1 failed, 2 usage) with
 * one line on stderr.
 */
import { Command, ValidationError } from "@effect/cli"
import { BunContext, BunRuntime } from "@effect/platform-bun"
import { Cause, Console, Effect, Exit } from "effect"
import { buildInfo, versionLine } from "../runtime/build-info.ts"
import { ExitCode } from "./errors.ts"
import { jobsCommand } from "./jobs.ts"
import { ladderCommand } from "./ladder.ts"
import { modelsCommand } from "./models.ts"
import { scoreCommand } from "./score.ts"

const svc = Command.make("svc").pipe(
  Command.withDescription("Video quality (VMAF) scores from the command line: local, on a server, or as jobs"),
  Command.withSubcommands([scoreCommand, ladderCommand, jobsCommand, modelsCommand])
)

const cli = Command.run(svc, { name: "svc", version: `${buildInfo.version} (${buildInfo.commit})` })

// biome-ignore lint/suspicious/noControlCharactersInRegex: ANSI styling in @effect/cli's text
const plain = (text: string): string => text.replace(/\x1b\[[0-9;]*m/g, "")

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
  // @effect/cli reports a parse error through Console.error: kept here, it becomes the one line.
  // Its help (Console.log) is styled for a terminal: plain text into a pipe or a file.
  const parseErrors: Array<string> = []
  const program = Console.consoleWith((current) =>
    Console.withConsole(cli(argv), {
      ...current,
      log: (...args: ReadonlyArray<unknown>) =>
        current.log(...args.map((arg) => (typeof arg === "string" && !process.stdout.isTTY ? plain(arg) : arg))),
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
    Effect.provide(BunContext.layer)
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
