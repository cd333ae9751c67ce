/**
 * The controller's HTTP listener on SVC_HTTP_ADDR: `POST /v1/score` behind the gateway (token,
 * role table, scoring roots on each opened input) over the shared scoring path, and the probes and
 * metrics, which need no token. Statuses come from the error table (modules/errors).
 */
import { HttpRouter, HttpServerRequest } from "@effect/platform"
import { Effect } from "effect"
import { wireStatus } from "../errors/index.ts"
import { AuthStatus, ScoringRoots } from "../auth/index.ts"
import { negotiatedScore } from "../formats/negotiate.ts"
import { JobService } from "../jobs/index.ts"
import { metricsText, observed } from "../observability/http.ts"
import { HTTP_MODELS_ROUTE, HTTP_SCORE_ROUTE } from "../policy/index.ts"
import { readJsonBody } from "../scoring-api/body.ts"
import { maxBodyBytes } from "../scoring-api/config.ts"
import { ScorerState } from "../scoring-api/scorer-state.ts"
import { ScoringApi } from "../scoring-api/scoring.ts"
import { errorResponse, httpServiceLayer, jsonResponse, livenessRoutes } from "../transport/http/server.ts"
import { admit, inputGuardFor } from "./gateway.ts"

// RFC 9110: a 401 names the scheme the client should use.
const challenge = (status: number): Record<string, string> => (status === 401 ? { "www-authenticate": "Bearer" } : {})

const score = Effect.gen(function* () {
  const request = yield* HttpServerRequest.HttpServerRequest
  const api = yield* ScoringApi
  const roots = yield* ScoringRoots
  return yield* admit(request.headers["authorization"], HTTP_SCORE_ROUTE).pipe(
    Effect.flatMap((principal) =>
      Effect.flatMap(inputGuardFor(roots, principal), (guard) =>
        negotiatedScore(request.headers["accept"], readJsonBody(request, maxBodyBytes), (body) =>
          api.score({ transport: "http", route: HTTP_SCORE_ROUTE, tenant: principal.tenantId }, body, guard)
        )
      )
    ),
    Effect.catchAll((error) => {
      const wire = wireStatus(error)
      return Effect.succeed(errorResponse(wire.http, wire.message, challenge(wire.http)))
    })
  )
})

/** GET /v1/models behind the gateway: a token with a reader, writer or admin role. */
const listModels = Effect.gen(function* () {
  const request = yield* HttpServerRequest.HttpServerRequest
  const api = yield* ScoringApi
  return yield* admit(request.headers["authorization"], HTTP_MODELS_ROUTE).pipe(
    Effect.flatMap(() => api.listModels),
    Effect.map((list) => jsonResponse(list)),
    Effect.catchAll((error) => {
      const wire = wireStatus(error)
      return Effect.succeed(errorResponse(wire.http, wire.message, challenge(wire.http)))
    })
  )
})

/**
 * Ready when the tenant set is current (registry mode), the job store answers and the scorer is initialised; `strict`
 * (/readyz) also checks the scorer's library file and model directory are still there.
 */
const ready = (strict: boolean) =>
  Effect.gen(function* () {
    const auth = yield* Effect.flatMap(AuthStatus, (status) => status.readiness)
    if (!auth.ready) return jsonResponse({ status: "not ready", reason: auth.reason ?? "tenant set not loaded" }, 503)
    const store = yield* Effect.flatMap(JobService, (jobs) => jobs.storeHealth)
    if (!store.ready) return jsonResponse({ status: "not ready", reason: store.reason ?? "job store unavailable" }, 503)
    const scorer = yield* Effect.flatMap(ScorerState, (state) => state.readiness(strict))
    return scorer.ready
      ? jsonResponse({ status: "ready" })
      : jsonResponse({ status: "not ready", reason: scorer.reason }, 503)
  })

const controllerRoutes = livenessRoutes.pipe(
  HttpRouter.post("/v1/score", score),
  HttpRouter.get("/v1/models", listModels),
  HttpRouter.get("/v1/ready", ready(false)),
  HttpRouter.get("/readyz", ready(true)),
  HttpRouter.get("/metrics", metricsText),
  observed
)

/** The controller's HTTP listener on SVC_HTTP_ADDR. */
export const controllerHttpLayer = (name: string) => httpServiceLayer(name, controllerRoutes)
