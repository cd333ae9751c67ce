/**
 * How `svc` ends: 0 when the work succeeded, 1 when scoring (or a job) failed or a service
 * refused, 2 for a usage error. Every failure is one line on stderr.
 */
import { Data } from "effect"

export const ExitCode = { ok: 0, failed: 1, usage: 2 } as const

/** A command-line mistake the user can fix by changing the arguments (exit 2). */
export class UsageError extends Data.TaggedError("UsageError")<{ readonly message: string }> {}

/** The work failed: scoring, a service's refusal, an unreachable service (exit 1). */
export class CommandFailed extends Data.TaggedError("CommandFailed")<{ readonly message: string }> {}

export type CliError = UsageError | CommandFailed
