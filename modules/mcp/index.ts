/**
 * svc-mcp: the MCP server of the controller's client tokens (seed 000 §4.3), over stdio (default)
 * or streamable HTTP (SVC_MCP_TRANSPORT=http).
 */
import { Effect, Layer } from "effect"
import { mcpConfig } from "./config.ts"
import { Controller } from "./controller.ts"
import { mcpHttpLayer } from "./http.ts"
import { serveStdio } from "./stdio.ts"

/** Runs svc-mcp until stdin closes (stdio) or a signal stops it. */
export const mcpProgram = Effect.gen(function* () {
  const config = yield* mcpConfig
  return yield* config.transport === "http" ? Layer.launch(mcpHttpLayer(config)) : serveStdio(config)
}).pipe(Effect.provide(Controller.Default))

export { Controller } from "./controller.ts"
