/**
 * Command-line handling shared by the executables. Configuration is by SVC_* variables only;
 * the one flag is --version. Executables with sub-commands (svc-tester-report) declare them.
 */
import { versionLine } from "./build-info.ts"

export const EXIT_USAGE = 2

export type CommandLine =
  | { readonly kind: "version" }
  | { readonly kind: "run"; readonly command: string | undefined; readonly args: ReadonlyArray<string> }
  | { readonly kind: "usage-error"; readonly message: string }

export interface CommandSpec {
  readonly executable: string
  /** Sub-commands the executable accepts; empty for services, which take no arguments. */
  readonly commands?: ReadonlyArray<string>
}

export const parseCommandLine = (spec: CommandSpec, argv: ReadonlyArray<string>): CommandLine => {
  const [first, ...rest] = argv
  if (first === undefined) return { kind: "run", command: undefined, args: [] }
  if (first === "--version" && rest.length === 0) return { kind: "version" }
  const commands = spec.commands ?? []
  if (commands.includes(first)) return { kind: "run", command: first, args: rest }
  const accepted =
    commands.length > 0 ? `commands: ${commands.join(", ")}; flag: --version` : "the only flag is --version"
  return {
    kind: "usage-error",
    message: `${spec.executable}: unexpected argument '${first}' (${accepted}; configure with SVC_* environment variables)`
  }
}

/**
 * Handles --version and usage errors before anything starts, so that neither needs
 * configuration, a model directory or the native library.
 * Returns the parsed run request, or exits.
 */
export const handleCommandLine = (
  spec: CommandSpec,
  argv: ReadonlyArray<string> = process.argv.slice(2)
): { readonly command: string | undefined; readonly args: ReadonlyArray<string> } => {
  const parsed = parseCommandLine(spec, argv)
  switch (parsed.kind) {
    case "version":
      process.stdout.write(`${versionLine(spec.executable)}\n`)
      return process.exit(0)
    case "usage-error":
      process.stderr.write(`${parsed.message}\n`)
      return process.exit(EXIT_USAGE)
    case "run":
      return { command: parsed.command, args: parsed.args }
  }
}
