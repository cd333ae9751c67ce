// The exit codes and output sink shared by the sub-commands (cli.ts) and `run` (run.ts), in a
// module of their own so that run.ts, loaded lazily by cli.ts, does not import cli.ts back.

export const ExitCode = { valid: 0, invalid: 1, unusable: 2 } as const
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode]

export interface CliOutput {
  readonly out: (line: string) => void
  readonly err: (line: string) => void
}
