/** HTTP side of the metrics: the /metrics exposition and the per-request counters. */
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { exposition, ScoringMetricsService } from "./metrics.ts"

/** GET /metrics: the registry in Prometheus text format. */
export const metricsText = Effect.flatMap(ScoringMetricsService, (metrics) =>
  Effect.map(exposition(metrics.registry), ({ text, contentType }) => HttpServerResponse.text(text, { contentType }))
)

/** Counts and times every request by its route pattern (never the raw path: bounded labels). */
export const observed = <E, R>(router: HttpRouter.HttpRouter<E, R>) =>
  HttpRouter.use(router, (app) =>
    Effect.gen(function* () {
      const started = performance.now()
      const request = yield* HttpServerRequest.HttpServerRequest
      const { route } = yield* HttpRouter.RouteContext
      const metrics = yield* ScoringMetricsService
      const response = yield* app
      const labels = { method: request.method, route: route.path, status: String(response.status) }
      metrics.httpRequests.inc(labels)
      metrics.httpDuration.observe(labels, (performance.now() - started) / 1000)
      return response
    })
  )
