/**
 * The controller's one gate: every request passes it before its handler. It authenticates the
 * bearer token (modules/auth), applies the role table (modules/policy/roles.ts through
 * `authorize`), and for a score the controller reads itself hands the tenant's scoring roots
 * (modules/policy/scoring-roots.ts) to the scorer, which checks each input on its descriptor
 * (seed 000, 4.1, 5.4, 5.5.4). Tenant scoping of jobs and nodes is the job service's, on the
 * principal admitted here.
 */
import { Effect } from "effect"
import { AuthMetrics, AuthStatus, Authenticator, ScoringRoots } from "../auth/index.ts"
import { JobService } from "../jobs/index.ts"
import { authorize, GRPC_PACKAGE, type Principal, type Refusal } from "../policy/index.ts"
import type { ScoringGate } from "../scoring-api/gate.ts"
import type { Interceptor } from "../transport/grpc/server.ts"

const NODE_API_PREFIX = `/${GRPC_PACKAGE}.Nodes/`

/**
 * Authenticates `authorization` and authorises `method` (a gRPC path or HTTP_SCORE_ROUTE). A
 * method absent from the role table is refused for every caller, disabled mode included.
 * Role refusals are logged and counted like token refusals.
 */
export const admit = (
  authorization: string | undefined,
  method: string
): Effect.Effect<Principal, Refusal, Authenticator | AuthMetrics> =>
  Effect.gen(function* () {
    const authenticator = yield* Authenticator
    const counters = yield* AuthMetrics
    const principal = yield* authenticator.authenticate(authorization)
    yield* authorize(principal, method).pipe(
      Effect.tapError((refusal) =>
        Effect.zipRight(
          Effect.sync(() => counters.recordRefusal(refusal.reason)),
          Effect.logInfo("auth: request refused").pipe(
            Effect.annotateLogs({
              reason: refusal.reason,
              detail: refusal.message,
              method,
              tenant: principal.tenantId,
              subject: principal.subject
            })
          )
        )
      )
    )
    // The subject is logged for audit (seed 2.1); nodes poll often, so the node API logs at debug.
    const log = method.startsWith(NODE_API_PREFIX) ? Effect.logDebug : Effect.logInfo
    yield* log("request admitted").pipe(
      Effect.annotateLogs({ method, tenant: principal.tenantId, subject: principal.subject ?? "" })
    )
    return principal
  })

/** The controller's one gRPC interceptor: its principal is every handler's context. */
export const controllerInterceptor: Interceptor<Principal, Authenticator | AuthMetrics> = ({ path, metadata }) => {
  const [authorization] = metadata.get("authorization")
  return admit(typeof authorization === "string" ? authorization : undefined, path)
}

/**
 * Ready when the tenant set is current (registry mode) and the job store answers; the scoring
 * surface then adds the scorer's own readiness.
 */
const controllerReadiness = Effect.gen(function* () {
  const auth = yield* Effect.flatMap(AuthStatus, (status) => status.readiness)
  if (!auth.ready) return { ready: false, reason: auth.reason ?? "tenant set not loaded" } as const
  const store = yield* Effect.flatMap(JobService, (jobs) => jobs.storeHealth)
  if (!store.ready) return { ready: false, reason: store.reason ?? "job store unavailable" } as const
  return { ready: true } as const
})

/**
 * The gate of the scoring surface on the controller: `admit` over HTTP (the gRPC interceptor
 * over gRPC), the principal's tenant for the per-tenant slot cap, and the scoring-root guard of
 * a score the controller reads itself (`SvcScoring.Score`, `POST /v1/score`): the scorer opens
 * each input once and the guard checks it as written and where its descriptor really points
 * (seed 5.5.4), so the file scored is the file checked. No `/apidocs`: without a token the
 * controller serves only the probes and metrics (seed 1.2).
 */
export const controllerGate: ScoringGate<
  Principal,
  Authenticator | AuthMetrics | ScoringRoots | AuthStatus | JobService
> = {
  admit,
  tenant: (principal) => principal.tenantId,
  guard: (principal) =>
    Effect.flatMap(ScoringRoots, (roots) => Effect.map(roots.forPrincipal(principal), (set) => set.inputGuard())),
  readiness: controllerReadiness,
  apidocs: false
}
