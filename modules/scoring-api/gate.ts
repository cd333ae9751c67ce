/**
 * The gate in front of the scoring surface. The surface (`/v1/score`, `/v1/models`, the probes,
 * `/metrics`, svc.v1.SvcScoring) is one module for both executables; what differs is who may call:
 * svc-server's gate is open (seed 001, section 5), the controller's authenticates, applies the
 * role table and hands over the tenant and its scoring roots (modules/controller/gateway.ts).
 */
import { Effect } from "effect"
import type { EdgeError } from "../errors/table.ts"
import type { PermissionDenied } from "../policy/errors.ts"
import type { InputGuard } from "../inputs/open.ts"
import type { Readiness } from "./scorer-state.ts"

export interface ScoringGate<Ctx, R> {
  /**
   * Runs before an HTTP route's handler (except the probes and `/metrics`, which need nothing)
   * with the request's `Authorization` header and the route ("POST /v1/score"); its failure is
   * the answer. Over gRPC the server's interceptor plays this part and gives the same `Ctx`.
   */
  readonly admit: (authorization: string | undefined, route: string) => Effect.Effect<Ctx, EdgeError, R>
  /** The caller's tenant, whose score slots SVC_TENANT_MAX_CONCURRENT_SCORES caps; undefined: none. */
  readonly tenant: (context: Ctx) => string | undefined
  /**
   * The scoring-root guard of the inputs a score opens on this host; undefined: the server's own
   * (SVC_INPUT_ROOTS, else any path).
   */
  readonly guard: (context: Ctx) => Effect.Effect<InputGuard<PermissionDenied> | undefined, EdgeError, R>
  /** Checks made before the scorer's own readiness (the controller: tenant set, job store). */
  readonly readiness: Effect.Effect<Readiness, never, R>
  /** Serves `/apidocs` and its spec: svc-server only (the controller serves nothing else without a token). */
  readonly apidocs: boolean
}

/** svc-server's gate: no authentication, no tenant, its own input roots. */
export const openGate: ScoringGate<void, never> = {
  admit: () => Effect.void,
  tenant: () => undefined,
  guard: () => Effect.succeed(undefined),
  readiness: Effect.succeed({ ready: true }),
  apidocs: true
}
