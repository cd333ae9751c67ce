/**
 * svc-mcp over stdio, for desktop assistants that start it as a child process: JSON-RPC on
 * stdin/stdout (so nothing else may write to stdout; logs go to stderr), one token for every call
 * (SVC_CONTROLLER_TOKEN, or SVC_CONTROLLER_TOKEN_FILE re-read when it changes). Serves until the
 * client closes stdin or a signal stops the process.
 */
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js"
import { Deferred, Effect, Option, Runtime } from "effect"
import { makeTokenSource } from "../config/token-file.ts"
import type { McpConfig } from "./config.ts"
import { Controller } from "./controller.ts"
import { makeMcpServer } from "./tools.ts"

export const serveStdio = (config: McpConfig) =>
  Effect.scoped(
    Effect.gen(function* () {
      const controller = yield* Controller
      const runtime = yield* Effect.runtime<never>()
      const fromFile = yield* makeTokenSource(config.tokenFile)
      const token = Option.match(config.token, { onNone: () => fromFile, onSome: (value) => Effect.succeed(value) })
      const server = makeMcpServer({ controller, bearer: () => token, runtime })
      const transport = new StdioServerTransport()
      transport.onerror = (error) => Runtime.runFork(runtime)(Effect.logWarning(`stdio: ${error.message}`))

      const ended = yield* Deferred.make<void>()
      const end = () => Deferred.unsafeDone(ended, Effect.void)
      yield* Effect.acquireRelease(
        Effect.promise(() => server.connect(transport)),
        () => Effect.promise(() => server.close())
      )
      process.stdin.once("end", end)
      process.stdin.once("close", end)
      yield* Effect.logInfo("serving MCP").pipe(
        Effect.annotateLogs({ transport: "stdio", controller: controller.address })
      )
      yield* Deferred.await(ended)
      yield* Effect.logInfo("stdin closed; stopping")
    })
  )
