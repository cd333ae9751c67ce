/**
 * The gateway checks every controller request runs before its handler: authentication of the
 * bearer token, then the role table (seed 000, 4.1 and 5.4), and the scoring-root check of
 * inputs the controller reads itself (5.5.4).
 */
import type * as grpc from "@grpc/grpc-js"
import { type Context, Effect } from "effect"
import { AuthMetrics, Authenticator, type ScoringRoots } from "../auth/index.ts"
import { authorize, GRPC_PACKAGE, type Principal, type Refusal } from "../policy/index.ts"
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

const authorizationOf = (metadata: grpc.Metadata): string | undefined => {
  const [value] = metadata.get("authorization")
  return typeof value === "string" ? value : undefined
}

/** The controller's one gRPC interceptor: its principal is every handler's context. */
export const controllerInterceptor: Interceptor<Principal, Authenticator | AuthMetrics> = ({ path, metadata }) =>
  admit(authorizationOf(metadata), path)

/**
 * The scoring-root guard of a score the controller reads itself (`SvcScoring.Score`, `POST
 * /v1/score`): the scorer opens each input once and the guard checks it as written and where its
 * descriptor really points (seed 5.5.4), so the file scored is the file checked.
 */
export const inputGuardFor = (scoringRoots: Context.Tag.Service<ScoringRoots>, principal: Principal) =>
  Effect.map(scoringRoots.forPrincipal(principal), (roots) => roots.inputGuard())
