/** svc-mcp: MCP server for assistants and agents, a client of the controller (seed 000 §4.3). Wiring only. */
import { mcpProgram } from "../../modules/mcp/index.ts"
import { handleCommandLine } from "../../modules/runtime/cli.ts"
import { runProgram } from "../../modules/runtime/main.ts"

const spec = { executable: "svc-mcp" }
handleCommandLine(spec)
runProgram(spec, mcpProgram)
