/**
 * svc-mcp over streamable HTTP (SVC_MCP_TRANSPORT=http), stateless: each POST to /mcp gets its own
 * MCP server whose tools send that request's bearer token to the controller. svc-mcp holds no
 * credentials here: a request without `Authorization: Bearer …` is answered 401 and calls nothing.
 * Against DNS rebinding (the MCP specification's transport security advice) a request whose
 * Origin is neither loopback nor listed in SVC_MCP_ALLOWED_ORIGINS is refused with 403, and on a
 * loopback listener so is a Host that is not a loopback name.
 */
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js"
import { CancelledNotificationSchema } from "@modelcontextprotocol/sdk/types.js"
import { Duration, Effect, Layer } from "effect"
import { httpIdleTimeout, livenessRoutes, serveHttp } from "../transport/http/server.ts"
import { InFlightCalls } from "./cancellation.ts"
import type { McpConfig } from "./config.ts"
import { Controller } from "./controller.ts"
import { makeMcpServer } from "./tools.ts"

/** The path MCP clients are configured with: http://host:port/mcp. */
export const MCP_PATH = "/mcp"

/** Largest JSON-RPC body read (tool arguments are small). */
const maxBodyBytes = 1024 * 1024

/**
 * How often a call's event stream carries an SSE comment while the tool runs. A long call
 * (score_ladder, wait_job) may send nothing for longer than the listener's idle timeout, which
 * would close the connection mid-call (the client sees ECONNRESET); the SDK's default interval
 * (15 s) is longer than Bun's default idle timeout (10 s). Well below the idle timeout, so a
 * loaded host's late timers still keep it open.
 */
export const eventStreamKeepAliveMs = Duration.toMillis(httpIdleTimeout) / 10

const loopbackNames = new Set(["localhost", "127.0.0.1", "[::1]", "::1"])

const hostnameOf = (hostHeader: string): string => {
  const bracketed = /^\[([^\]]+)\]/.exec(hostHeader)
  if (bracketed) return `[${bracketed[1]}]`
  return (hostHeader.split(":")[0] ?? "").toLowerCase()
}

/**
 * A Host header as RFC 9110 allows it: a name, an IPv4 address or a bracketed IPv6 address, and
 * an optional port. Anything else (userinfo, a path, spaces: `127.0.0.1:80@evil.example`) is
 * malformed and refused before anything reads it as a URL.
 */
const wellFormedHost = /^(?:[A-Za-z0-9](?:[A-Za-z0-9.-]{0,252})?|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/

export type Admission =
  | { readonly ok: true; readonly token: string }
  | { readonly ok: false; readonly status: 400 | 401 | 403; readonly message: string }

/** The checks every /mcp request passes before anything is called: origin, host, bearer token. */
export const admit = (
  headers: { readonly get: (name: string) => string | null },
  config: Pick<McpConfig, "allowedOrigins" | "httpAddress">
): Admission => {
  const hostHeader = headers.get("host")
  if (hostHeader !== null && !wellFormedHost.test(hostHeader))
    return { ok: false, status: 400, message: "malformed Host header" }
  const origin = headers.get("origin")
  if (origin !== null) {
    const parsed = URL.canParse(origin) ? new URL(origin) : undefined
    const allowed =
      parsed !== undefined &&
      parsed.origin !== "null" &&
      (loopbackNames.has(parsed.hostname.toLowerCase()) || config.allowedOrigins.includes(parsed.origin))
    if (!allowed) return { ok: false, status: 403, message: `origin "${origin}" is not allowed` }
  }
  if (loopbackNames.has(config.httpAddress.host)) {
    const host = headers.get("host") ?? ""
    if (!loopbackNames.has(hostnameOf(host)))
      return { ok: false, status: 403, message: `host "${host}" is not allowed on a loopback listener` }
  }
  const match = /^Bearer[ ]+([^\s]+)\s*$/i.exec(headers.get("authorization") ?? "")
  if (!match?.[1])
    return { ok: false, status: 401, message: "missing bearer token: send Authorization: Bearer <token>" }
  return { ok: true, token: match[1] }
}

/** A JSON-RPC error body, as MCP clients read the endpoint's refusals. */
const refusal = (status: 400 | 401 | 403, message: string) =>
  HttpServerResponse.unsafeJson(
    { jsonrpc: "2.0", error: { code: -32001, message }, id: null },
    { status, headers: status === 401 ? { "www-authenticate": 'Bearer realm="svc-mcp"' } : {} }
  )

const mcpRoute = (config: McpConfig) =>
  Effect.gen(function* () {
    const controller = yield* Controller
    const runtime = yield* Effect.runtime<never>()
    const calls = new InFlightCalls()
    return Effect.gen(function* () {
      const request = yield* HttpServerRequest.HttpServerRequest
      const admission = admit({ get: (name) => request.headers[name] ?? null }, config)
      if (!admission.ok) {
        yield* Effect.logInfo("mcp request refused").pipe(
          Effect.annotateLogs({ status: admission.status, reason: admission.message })
        )
        return refusal(admission.status, admission.message)
      }
      // Stateless: no session, so no stream for server-initiated messages (GET) and nothing to end
      // (DELETE); a call's notifications come on its own POST's event stream.
      if (request.method !== "POST")
        return HttpServerResponse.unsafeJson(
          {
            jsonrpc: "2.0",
            error: { code: -32000, message: "method not allowed: this server is stateless, use POST" },
            id: null
          },
          { status: 405, headers: { allow: "POST" } }
        )
      const web = yield* HttpServerRequest.toWeb(request)
      const token = admission.token
      const response = yield* Effect.promise(async () => {
        const server = makeMcpServer({
          controller,
          bearer: () => Effect.succeed(token),
          runtime,
          track: (extra) => calls.track(token, extra.requestId, extra.signal)
        })
        // A cancellation names a call that another request (another server) is running.
        server.server.setNotificationHandler(CancelledNotificationSchema, (notification) => {
          const { requestId, reason } = notification.params
          if (requestId !== undefined) calls.cancel(token, requestId, reason ?? "cancelled by the client")
        })
        const transport = new WebStandardStreamableHTTPServerTransport({
          sessionIdGenerator: undefined,
          maxRequestBodySize: maxBodyBytes,
          keepAliveMs: eventStreamKeepAliveMs
        })
        await server.connect(transport)
        const answered = await transport.handleRequest(web)
        // The answer may be an event stream (progress notifications): close the server once it
        // has been sent, or when the client goes away (which also interrupts the tool's calls).
        const close = () => void server.close().catch(() => undefined)
        if (answered.body === null) {
          close()
          return answered
        }
        web.signal.addEventListener("abort", close, { once: true })
        return new Response(answered.body.pipeThrough(new TransformStream({ flush: close })), {
          status: answered.status,
          statusText: answered.statusText,
          headers: answered.headers
        })
      })
      return HttpServerResponse.fromWeb(response)
    }).pipe(
      // The platform's reason ("TypeError: Invalid URL") is for the log, not the caller.
      Effect.catchTag("RequestError", (error) =>
        Effect.as(
          Effect.logInfo("mcp request refused").pipe(Effect.annotateLogs({ status: 400, reason: error.message })),
          HttpServerResponse.text("bad request", { status: 400 })
        )
      )
    )
  })

/** The HTTP listener on SVC_HTTP_ADDR: /mcp, and the liveness probes. */
export const mcpHttpLayer = (config: McpConfig) =>
  Layer.unwrapEffect(
    Effect.map(mcpRoute(config), (handler) =>
      serveHttp(HttpRouter.all(livenessRoutes, MCP_PATH, handler), config.httpAddress, "svc-mcp")
    )
  )
