/**
 * Input paths sent to a server or controller. A plain relative path means a file here, so the
 * CLI resolves it against its own working directory before sending (the service would resolve
 * it against its own, or refuse it). Absolute paths, URLs (`https://`, `file:`) and other
 * prefixed forms (`s3:bucket/key`, `:local:/path`) are sent as typed.
 */
import { Effect } from "effect"
import { isAbsolute, resolve } from "node:path"
import { CommandFailed } from "./errors.ts"

// A scheme or remote name before a colon, as the scoring-root rules read them (`name:`, `:name:`).
const prefixed = /^:?[A-Za-z0-9_][A-Za-z0-9_.+@-]*:/

/** Whether the CLI resolves `input` before sending it. */
const isPlainRelative = (input: string) => input !== "" && !isAbsolute(input) && !prefixed.test(input)

/** `input` as sent: a plain relative path made absolute against this directory, the rest as typed. */
export const sentPath = (input: string): string => (isPlainRelative(input) ? resolve(input) : input)

/**
 * A refusal by the scoring roots gains the CLI's hint when an input was typed relative (the
 * service's message stays its own): it names what was sent for a resolved path, and asks for
 * an absolute path.
 */
const withRootsHint =
  (typed: ReadonlyArray<string>) =>
  (error: CommandFailed): CommandFailed => {
    if (!/scoring roots/.test(error.message)) return error
    const relative = typed.filter(
      (input) => input !== "" && !isAbsolute(input) && !/^[a-z][a-z0-9+.-]*:\/\//i.test(input)
    )
    if (relative.length === 0) return error
    // The refusal names one input: the hint speaks of that one when it can tell which.
    const named = relative.filter((input) => error.message.includes(`"${sentPath(input)}"`))
    const resolved = (named.length > 0 ? named : relative)
      .filter(isPlainRelative)
      .map((input) => `"${input}" as "${sentPath(input)}"`)
    const sent = resolved.length > 0 ? `svc sent ${resolved.join(", ")}; ` : ""
    return new CommandFailed({ message: `${error.message} (${sent}give an absolute path inside the roots)` })
  }

/** Maps the CommandFailed of `effect` through the roots hint of `typed`. */
export const hintingRoots = <A, E>(typed: ReadonlyArray<string>, effect: Effect.Effect<A, E | CommandFailed>) =>
  Effect.mapError(effect, (error) => (error instanceof CommandFailed ? withRootsHint(typed)(error) : error))
