/**
 * The REST side of seed 001 for both executables: translates HTTP to the scoring path and back,
 * and serves the probes and metrics (no token needed) and, on svc-server, the API documentation.
 * Who may call is the gate's to decide (gate.ts); statuses come from the error table (modules/errors).
 */
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, Layer } from "effect"
import { wireStatus } from "../errors/index.ts"
import { negotiatedScore } from "../formats/negotiate.ts"
import { metricsText, observed } from "../observability/http.ts"
import { HTTP_LADDER_ROUTE, HTTP_MODELS_ROUTE, HTTP_SCORE_ROUTE } from "../policy/roles.ts"
import { errorResponse, httpServiceLayer, jsonResponse, livenessRoutes } from "../transport/http/server.ts"
import { apidocsPage, openApiSpec, specPath } from "./apidocs.ts"
import { readJsonBody } from "./body.ts"
import { apidocsTryIt, maxBodyBytes } from "./config.ts"
import { openGate, type ScoringGate } from "./gate.ts"
import { ScorerState } from "./scorer-state.ts"
import { ScoringApi } from "./scoring.ts"

// RFC 9110: a 401 names the scheme the client should use.
const challenge = (status: number): Record<string, string> => (status === 401 ? { "www-authenticate": "Bearer" } : {})

const failed = (error: unknown) => {
  const wire = wireStatus(error)
  return Effect.succeed(errorResponse(wire.http, wire.message, challenge(wire.http)))
}

const authorization = Effect.map(HttpServerRequest.HttpServerRequest, (request) => request.headers["authorization"])

/** POST /v1/score: the gate first, then the body is read and scored under the caller's roots. */
const score = <Ctx, R>(gate: ScoringGate<Ctx, R>) =>
  Effect.gen(function* () {
    const request = yield* HttpServerRequest.HttpServerRequest
    const api = yield* ScoringApi
    return yield* gate.admit(request.headers["authorization"], HTTP_SCORE_ROUTE).pipe(
      Effect.flatMap((context) =>
        Effect.flatMap(gate.guard(context), (guard) =>
          negotiatedScore(request.headers["accept"], readJsonBody(request, maxBodyBytes), (body) =>
            api.score({ transport: "http", route: HTTP_SCORE_ROUTE, tenant: gate.tenant(context) }, body, guard)
          )
        )
      ),
      Effect.catchAll(failed)
    )
  })

/** POST /v1/ladder: as POST /v1/score (gate, body, roots), answered in JSON. */
const ladder = <Ctx, R>(gate: ScoringGate<Ctx, R>) =>
  Effect.gen(function* () {
    const request = yield* HttpServerRequest.HttpServerRequest
    const api = yield* ScoringApi
    return yield* gate.admit(request.headers["authorization"], HTTP_LADDER_ROUTE).pipe(
      Effect.flatMap((context) =>
        Effect.flatMap(gate.guard(context), (guard) =>
          api.ladder(
            { transport: "http", route: HTTP_LADDER_ROUTE, tenant: gate.tenant(context) },
            readJsonBody(request, maxBodyBytes),
            guard
          )
        )
      ),
      Effect.map((result) => jsonResponse(result)),
      Effect.catchAll(failed)
    )
  })

/** GET /v1/models: `{"models": [...]}`; 503 while the scorer is not initialised. */
const listModels = <Ctx, R>(gate: ScoringGate<Ctx, R>) =>
  Effect.gen(function* () {
    const api = yield* ScoringApi
    return yield* Effect.flatMap(authorization, (header) => gate.admit(header, HTTP_MODELS_ROUTE)).pipe(
      Effect.flatMap(() => api.listModels),
      Effect.map((list) => jsonResponse(list)),
      Effect.catchAll(failed)
    )
  })

/**
 * `{"status":"ready"}` or 503 `{"status":"not ready","reason":…}`: the gate's checks, then the
 * scorer (`strict`, /readyz: its library file and model directory are still there too).
 */
const ready = <Ctx, R>(gate: ScoringGate<Ctx, R>, strict: boolean) =>
  Effect.gen(function* () {
    const gated = yield* gate.readiness
    if (!gated.ready) return jsonResponse({ status: "not ready", reason: gated.reason }, 503)
    const scorer = yield* Effect.flatMap(ScorerState, (state) => state.readiness(strict))
    return scorer.ready
      ? jsonResponse({ status: "ready" })
      : jsonResponse({ status: "not ready", reason: scorer.reason }, 503)
  })

/** The scoring routes behind `gate`. */
export const scoringRoutesBehind = <Ctx, R>(gate: ScoringGate<Ctx, R>) =>
  Effect.map(apidocsTryIt, (tryItOut) => {
    const routes = livenessRoutes.pipe(
      HttpRouter.post("/v1/score", score(gate)),
      HttpRouter.post("/v1/ladder", ladder(gate)),
      HttpRouter.get("/v1/models", listModels(gate)),
      HttpRouter.get("/v1/ready", ready(gate, false)),
      HttpRouter.get("/readyz", ready(gate, true)),
      HttpRouter.get("/metrics", metricsText)
    )
    if (!gate.apidocs) return observed(routes)
    const page = apidocsPage(tryItOut)
    return routes.pipe(
      HttpRouter.get(
        "/apidocs",
        Effect.succeed(HttpServerResponse.text(page, { contentType: "text/html; charset=utf-8" }))
      ),
      HttpRouter.get(specPath, Effect.succeed(jsonResponse(openApiSpec))),
      observed
    )
  })

/** The routes of svc-server's HTTP listener. */
export const scoringRoutes = scoringRoutesBehind(openGate)

/** The HTTP listener on SVC_HTTP_ADDR of an executable serving the scoring surface behind `gate`. */
export const scoringHttpLayer = <Ctx, R>(name: string, gate: ScoringGate<Ctx, R>) =>
  Layer.unwrapEffect(Effect.map(scoringRoutesBehind(gate), (routes) => httpServiceLayer(name, routes)))
