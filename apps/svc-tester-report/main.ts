/** svc-tester-report: writes and checks tester reports (seed 002). Wiring only. */
import { Effect } from "effect"
import { handleCommandLine } from "../../modules/runtime/cli.ts"
import { runProgram } from "../../modules/runtime/main.ts"
import { testerReportCli } from "../../modules/report/cli.ts"

const spec = { executable: "svc-tester-report", commands: ["check", "run"] } as const

const { command, args } = handleCommandLine(spec)
if (command === undefined) {
  process.stderr.write("usage: svc-tester-report check FILE... | run | --version\n")
  process.exit(2)
}
runProgram(
  spec,
  Effect.flatMap(testerReportCli([command, ...args]), (code) => Effect.sync(() => process.exit(code)))
)
