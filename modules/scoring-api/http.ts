/**
 * The REST side of seed 001: translates HTTP to the scoring path and back, and serves the
 * probes, metrics and API documentation. Statuses come from the error table (modules/errors).
 */
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, Layer } from "effect"
import { wireStatus } from "../errors/index.ts"
import { negotiatedScore } from "../formats/negotiate.ts"
import { metricsText, observed } from "../observability/http.ts"
import { errorResponse, httpServiceLayer, jsonResponse, livenessRoutes } from "../transport/http/server.ts"
import { apidocsPage, openApiSpec, specPath } from "./apidocs.ts"
import { readJsonBody } from "./body.ts"
import { apidocsTryIt, maxBodyBytes } from "./config.ts"
import { ScorerState } from "./scorer-state.ts"
import { ScoringApi } from "./scoring.ts"

const score = Effect.gen(function* () {
  const request = yield* HttpServerRequest.HttpServerRequest
  const api = yield* ScoringApi
  return yield* negotiatedScore(request.headers["accept"], readJsonBody(request, maxBodyBytes), (body) =>
    api.score({ transport: "http", route: "POST /v1/score" }, body)
  ).pipe(
    Effect.catchAll((error) => {
      const wire = wireStatus(error)
      return Effect.succeed(errorResponse(wire.http, wire.message))
    })
  )
})

/** `{"models": [...]}`; 503 while the scorer is not initialised. */
const listModels = Effect.flatMap(ScoringApi, (api) =>
  api.listModels.pipe(
    Effect.map((list) => jsonResponse(list)),
    Effect.catchAll((error) => {
      const wire = wireStatus(error)
      return Effect.succeed(errorResponse(wire.http, wire.message))
    })
  )
)

/** `{"status":"ready"}` or 503 `{"status":"not ready","reason":…}`. */
const ready = (strict: boolean) =>
  Effect.flatMap(ScorerState, (state) =>
    Effect.map(state.readiness(strict), (readiness) =>
      readiness.ready
        ? jsonResponse({ status: "ready" })
        : jsonResponse({ status: "not ready", reason: readiness.reason }, 503)
    )
  )

/** The routes of svc-server's HTTP listener. */
export const scoringRoutes = Effect.map(apidocsTryIt, (tryItOut) => {
  const page = apidocsPage(tryItOut)
  return livenessRoutes.pipe(
    HttpRouter.post("/v1/score", score),
    HttpRouter.get("/v1/models", listModels),
    HttpRouter.get("/v1/ready", ready(false)),
    HttpRouter.get("/readyz", ready(true)),
    HttpRouter.get("/metrics", metricsText),
    HttpRouter.get(
      "/apidocs",
      Effect.succeed(HttpServerResponse.text(page, { contentType: "text/html; charset=utf-8" }))
    ),
    HttpRouter.get(specPath, Effect.succeed(jsonResponse(openApiSpec))),
    observed
  )
})

/** svc-server's HTTP listener on SVC_HTTP_ADDR. */
export const scoringHttpLayer = (name: string) =>
  Layer.unwrapEffect(Effect.map(scoringRoutes, (routes) => httpServiceLayer(name, routes)))
