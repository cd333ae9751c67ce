/**
 * Process entry shared by the executables: command line first (so --version needs nothing
 * else), then the service's Layer under the JSON logger until SIGTERM/SIGINT, which
 * interrupt it and run every finalizer (servers stop accepting, in-flight work ends).
 */
import { BunRuntime } from "@effect/platform-bun"
import { Cause, Effect, Layer } from "effect"
import { type CommandSpec, handleCommandLine } from "./cli.ts"
import { JsonLoggerLive } from "./logger.ts"

/** Exit code of a process that could not start (bad configuration, port in use, ...). */
export const EXIT_STARTUP_FAILURE = 1

const firstLine = <E>(cause: Cause.Cause<E>): string =>
  (Cause.pretty(cause).split("\n")[0] ?? "failure").replace(/^Error: /, "")

const reportFailure =
  (executable: string) =>
  <E>(cause: Cause.Cause<E>) =>
    Cause.isInterruptedOnly(cause)
      ? Effect.void
      : Effect.logError(`${executable} stopped: ${firstLine(cause)}`).pipe(
          Effect.annotateLogs({ cause: Cause.pretty(cause) }),
          Effect.zipRight(Effect.sync(() => process.exit(EXIT_STARTUP_FAILURE)))
        )

/** Runs a long-lived service until a signal stops it. */
export const runService = <E>(spec: CommandSpec, service: Layer.Layer<never, E>): void => {
  handleCommandLine(spec)
  runProgram(spec, Layer.launch(service))
}

/** Runs a program to completion (one-shot commands) with logging and failure reporting. */
export const runProgram = <A, E>(spec: CommandSpec, program: Effect.Effect<A, E>): void => {
  const withLogging = program.pipe(
    Effect.tapErrorCause(reportFailure(spec.executable)),
    Effect.provide(JsonLoggerLive),
    // A bad SVC_LOG_LEVEL leaves no JSON logger to report with: say it plainly.
    Effect.catchAllCause((cause) =>
      Effect.sync(() => {
        process.stderr.write(`${spec.executable}: ${firstLine(cause)}\n`)
        process.exit(EXIT_STARTUP_FAILURE)
      })
    )
  )
  BunRuntime.runMain(withLogging, { disableErrorReporting: true, disablePrettyLogger: true })
}
