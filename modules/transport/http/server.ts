/**
 * HTTP transport: serves an Effect HttpRouter on Bun at a configured address and logs the
 * address actually bound (port 0 picks a free port, which tests read from the log).
 */
import { HttpMiddleware, HttpRouter, HttpServer, HttpServerResponse } from "@effect/platform"
import { BunHttpServer } from "@effect/platform-bun"
import { Cause, Data, Duration, Effect, Fiber, Layer, Ref, Schedule } from "effect"
import { type ListenAddress, listenAddress } from "../../config/env.ts"
import { defaultListenAddress } from "../../config/ports.ts"

/** The server could not bind its address (port in use, bad host). */
export class HttpBindError extends Data.TaggedError("HttpBindError")<{
  readonly address: string
  readonly reason: unknown
}> {
  override get message() {
    const reason = this.reason instanceof Error ? this.reason.message : String(this.reason)
    return `SVC_HTTP_ADDR: cannot listen on ${this.address}: ${reason}`
  }
}

/** JSON body with the right content type; the shape of every response of this service. */
export const jsonResponse = (body: unknown, status = 200, headers: Record<string, string> = {}) =>
  HttpServerResponse.unsafeJson(body, { status, headers })

/** Error body of every HTTP error: `{"error": "<message>"}`. */
export const errorResponse = (status: number, message: string, headers: Record<string, string> = {}) =>
  jsonResponse({ error: message }, status, headers)

/** Liveness: 200 while the process is live. Served at the canonical path and the legacy alias. */
export const livenessRoutes = HttpRouter.empty.pipe(
  HttpRouter.get("/v1/health", Effect.succeed(jsonResponse({ status: "ok" }))),
  HttpRouter.get("/healthz", Effect.succeed(jsonResponse({ status: "ok" })))
)

const notFound = errorResponse(404, "not found")

/**
 * How long a connection may carry no bytes before Bun closes it (Bun's default is 10 s, and its
 * coarse timer fires up to a step early). A request whose handler is still running (a long score)
 * is never cut by it, but a streamed response is: its silences count as idle, so a streaming
 * route writes something more often than this (see the MCP event stream's keep-alive).
 */
export const httpIdleTimeout = Duration.seconds(30)

/** How long shutdown waits for requests in flight (a score) before cutting them; as gRPC's. */
const drainTimeout = Duration.seconds(10)

/**
 * Serves `router` at `address`; unknown paths get 404 with the JSON error body. At shutdown the
 * requests in flight finish first (up to drainTimeout): the drain's finalizer runs before the
 * server's, which would interrupt them.
 */
export const serveHttp = <E, R>(router: HttpRouter.HttpRouter<E, R>, address: ListenAddress, name: string) =>
  Layer.unwrapEffect(
    Effect.map(Ref.make(0), (inFlight) => {
      // The fibers serving requests, so the drain can cut them: Bun's own stop waits for every
      // request in flight, however long (a score of a long clip, its decoders running on).
      const requestFibers = new Set<Fiber.RuntimeFiber<unknown, unknown>>()
      const counted = HttpMiddleware.make((app) =>
        Effect.acquireUseRelease(
          Ref.update(inFlight, (n) => n + 1),
          () =>
            Effect.withFiberRuntime<
              Effect.Effect.Success<typeof app>,
              Effect.Effect.Error<typeof app>,
              Effect.Effect.Context<typeof app>
            >((fiber) => {
              requestFibers.add(fiber)
              return Effect.ensuring(
                app,
                Effect.sync(() => requestFibers.delete(fiber))
              )
            }),
          () => Ref.update(inFlight, (n) => n - 1)
        )
      )
      const serving = router.pipe(
        HttpRouter.all("*", Effect.succeed(notFound)),
        HttpServer.serve(counted),
        Layer.tap(() =>
          HttpServer.addressFormattedWith((bound) =>
            Effect.logInfo("listening").pipe(Effect.annotateLogs({ transport: "http", address: bound, service: name }))
          )
        ),
        Layer.provide(
          BunHttpServer.layer({
            hostname: address.host,
            port: address.port,
            idleTimeout: Duration.toSeconds(httpIdleTimeout)
          }).pipe(
            // Bun's own words ("Failed to start server. Is port 8080 in use?") name no host.
            Layer.catchAllCause((cause) =>
              Layer.fail(
                new HttpBindError({
                  address: `${address.host.includes(":") ? `[${address.host}]` : address.host}:${address.port}`,
                  reason: /in use/i.test(Cause.pretty(cause)) ? "address already in use" : Cause.squash(cause)
                })
              )
            )
          )
        )
      )
      const idle = Effect.repeat(Ref.get(inFlight), {
        until: (n) => n === 0,
        schedule: Schedule.spaced(Duration.millis(20))
      })
      const drain = Layer.scopedDiscard(
        Effect.addFinalizer(() =>
          Effect.flatMap(Ref.get(inFlight), (pending) =>
            pending === 0
              ? Effect.void
              : Effect.logInfo("draining HTTP requests").pipe(
                  Effect.annotateLogs({ in_flight: pending }),
                  // A finalizer runs uninterruptibly: without `interruptible` the timeout could not stop the wait.
                  Effect.zipRight(Effect.timeout(Effect.interruptible(idle), drainTimeout)),
                  Effect.catchAll(() =>
                    Effect.logWarning("HTTP requests still in flight after the drain timeout; cutting them").pipe(
                      Effect.zipRight(Fiber.interruptAll([...requestFibers]))
                    )
                  )
                )
          )
        )
      )
      // Built after the server, so released before it.
      return Layer.provide(drain, serving)
    })
  )

/** The HTTP side of a service: `routes` served on SVC_HTTP_ADDR (default: the service's port in config/ports.ts). */
export const httpServiceLayer = <E, R>(name: string, routes: HttpRouter.HttpRouter<E, R>) =>
  Layer.unwrapEffect(
    Effect.map(listenAddress("SVC_HTTP_ADDR", defaultListenAddress(name, "http")), (address) =>
      serveHttp(routes, address, name)
    )
  )
