/**
 * The REST side of seed 001: translates HTTP to the scoring path and back, and serves the
 * probes, metrics and API documentation. Statuses come from modules/transport/errors.ts.
 */
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, Layer } from "effect"
import { exposition, ScoringMetricsService } from "../observability/metrics.ts"
import { wireStatus } from "../transport/errors.ts"
import { errorResponse, httpServiceLayer, jsonResponse, livenessRoutes } from "../transport/http/server.ts"
import { apidocsPage, openApiSpec, specPath } from "./apidocs.ts"
import { readJsonBody } from "./body.ts"
import { apidocsTryIt, maxBodyBytes } from "./config.ts"
import { ScorerState } from "./scorer-state.ts"
import { ScoringApi } from "./scoring.ts"

const score = Effect.gen(function*() {
  const request = yield* HttpServerRequest.HttpServerRequest
  const api = yield* ScoringApi
  return yield* api.score({ transport: "http", route: "POST /v1/score" }, readJsonBody(request, maxBodyBytes)).pipe(
    Effect.map((result) => jsonResponse(result)),
    Effect.catchAll((error) => {
      const wire = wireStatus(error)
      return Effect.succeed(errorResponse(wire.http, wire.message))
    })
  )
})

/** `{"status":"ready"}` or 503 `{"status":"not ready","reason":…}`. */
const ready = (strict: boolean) =>
  Effect.flatMap(ScorerState, (state) =>
    Effect.map(state.readiness(strict), (readiness) =>
      readiness.ready
        ? jsonResponse({ status: "ready" })
        : jsonResponse({ status: "not ready", reason: readiness.reason }, 503)))

const metricsText = Effect.flatMap(ScoringMetricsService, (metrics) =>
  Effect.map(exposition(metrics.registry), ({ text, contentType }) =>
    HttpServerResponse.text(text, { contentType })))

/** Counts and times every request by its route pattern (never the raw path: bounded labels). */
const observed = <E, R>(router: HttpRouter.HttpRouter<E, R>) =>
  HttpRouter.use(router, (app) =>
  Effect.gen(function*() {
    const started = performance.now()
    const request = yield* HttpServerRequest.HttpServerRequest
    const { route } = yield* HttpRouter.RouteContext
    const metrics = yield* ScoringMetricsService
    const response = yield* app
    const labels = { method: request.method, route: route.path, status: String(response.status) }
    metrics.httpRequests.inc(labels)
    metrics.httpDuration.observe(labels, (performance.now() - started) / 1000)
    return response
  }))

/** The routes of svc-server's HTTP listener. */
export const scoringRoutes = Effect.map(apidocsTryIt, (tryItOut) => {
  const page = apidocsPage(tryItOut)
  return livenessRoutes.pipe(
    HttpRouter.post("/v1/score", score),
    HttpRouter.get("/v1/ready", ready(false)),
    HttpRouter.get("/readyz", ready(true)),
    HttpRouter.get("/metrics", metricsText),
    HttpRouter.get("/apidocs", Effect.succeed(HttpServerResponse.text(page, { contentType: "text/html; charset=utf-8" }))),
    HttpRouter.get(specPath, Effect.succeed(jsonResponse(openApiSpec))),
    observed
  )
})

/** svc-server's HTTP listener on SVC_HTTP_ADDR. */
export const scoringHttpLayer = (name: string) =>
  Layer.unwrapEffect(Effect.map(scoringRoutes, (routes) => httpServiceLayer(name, routes)))
