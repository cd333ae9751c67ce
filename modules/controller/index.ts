/**
 * svc-controller (seed 000): the auth gateway in front of the job service, the node API and the
 * shared scoring path. `controllerLayer` is what apps/svc-controller/main.ts launches.
 */
import { Effect, Layer } from "effect"
import { type AuthLayerOptions, authLayer, ScoringRoots } from "../auth/index.ts"
import { JobModels, JobServiceLive, TenantRoots } from "../jobs/index.ts"
import { ScorerState } from "../scoring-api/scorer-state.ts"
import { scoringHttpLayer } from "../scoring-api/http.ts"
import { ScoringApi } from "../scoring-api/scoring.ts"
import { controllerGate } from "./gateway.ts"
import { controllerGrpcLayer } from "./grpc.ts"
import { ControllerMetrics, jobGaugesLayer, jobMetricsHooksLayer } from "./metrics.ts"

// What the role-table test needs to serve the real services and interceptor in-process.
export { controllerInterceptor } from "./gateway.ts"
export { controllerGrpcServices, type ControllerGrpcRequirements } from "./grpc.ts"

/**
 * The job service's one roots port: SubmitJob checks inputs against a tenant's roots, PullWork
 * hands their texts out (registry or SVC_SCORING_ROOTS; a stale tenant set fails with Unavailable).
 */
const tenantRootsLayer = Layer.effect(
  TenantRoots,
  Effect.map(ScoringRoots, (roots) => ({
    rootsFor: (tenantId: string) => roots.forPrincipal({ tenantId, roles: [], subject: undefined })
  }))
)

/** SubmitJob's model check: the model loads in this controller's scorer (ScorerNotReady until it is up). */
const jobModelsLayer = Layer.effect(
  JobModels,
  Effect.map(ScorerState, (state) => ({
    check: (model: string) => Effect.flatMap(state.scorer, (scorer) => scorer.models.load(model)).pipe(Effect.asVoid)
  }))
)

/**
 * Every service the controller's handlers use: auth (SVC_AUTH_*, SVC_JWKS_*, SVC_SCORING_ROOTS),
 * the scoring surface (scorer, concurrency cap, metrics), the job service (SVC_STORE_PATH) and the
 * controller's metrics.
 */
export const controllerServicesLayer = (name: string, auth: AuthLayerOptions = {}) => {
  const base = Layer.merge(ScoringApi.layer(name), authLayer(auth))
  const metrics = ControllerMetrics.layer.pipe(Layer.provideMerge(base))
  const jobs = JobServiceLive.pipe(
    Layer.provide(Layer.mergeAll(tenantRootsLayer, jobModelsLayer, jobMetricsHooksLayer)),
    Layer.provideMerge(metrics)
  )
  return Layer.provideMerge(jobGaugesLayer, jobs)
}

/**
 * gRPC and HTTP listeners of the controller with everything they need. The HTTP listener is the
 * scoring surface's (`/v1/score`, `/v1/models`, probes, `/metrics`) behind the controller's gate.
 */
export const controllerLayer = (name: string) =>
  Layer.merge(controllerGrpcLayer(name), scoringHttpLayer(name, controllerGate)).pipe(
    Layer.provide(controllerServicesLayer(name))
  )
