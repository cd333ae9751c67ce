/**
 * The services the controller uses, built from the auth mode: `Authenticator`
 * (bearer → principal, in single-provider, registry or disabled mode), `ScoringRoots`
 * (the caller's roots) and `AuthStatus` (readiness and cache state for probes/metrics).
 */
import { Context, Effect, Layer, type Scope } from "effect"
import { Messages, Unauthenticated, type Refusal, type Unavailable } from "../policy/errors.ts"
import type { Principal } from "../policy/principal.ts"
import { RootSet, rootsForTenant } from "../policy/scoring-roots.ts"
import { AuthStartupError, loadAuthMode, type AuthMode, type ProviderSettings } from "./config.ts"
import { DEFAULT_JWKS_FETCH, makeJwksCaches, type JwksCache, type JwksStatus } from "./jwks.ts"
import type { HttpGetOptions } from "./http.ts"
import { AuthMetrics, type AuthCounters } from "./metrics.ts"
import { makeTenantRegistry, type TenantRegistry, type TenantSetStatus } from "./registry.ts"
import {
  fileTenantSource,
  inClusterAccess,
  orchestratorTenantSource,
  type OrchestratorAccess,
  type TenantSourceError
} from "./tenant-source.ts"
import { checkIssuerAndAudience, knownRolesOf, subjectOf, tenantClaimOf, verifySignature } from "./verifier.ts"

/** Disabled mode's synthetic caller (seed 5.7): tenant `dev`, admin and node so a local node can register. */
export const DISABLED_MODE_PRINCIPAL: Principal = {
  tenantId: "dev",
  roles: ["svc:admin", "svc:node"],
  subject: undefined
}

export class Authenticator extends Context.Tag("svc/auth/Authenticator")<
  Authenticator,
  {
    /**
     * `authorization` is the header / metadata value (`Bearer <token>`), undefined when
     * absent. Every refusal is logged with its reason and counted.
     */
    readonly authenticate: (authorization: string | undefined) => Effect.Effect<Principal, Refusal>
  }
>() {}

export class ScoringRoots extends Context.Tag("svc/auth/ScoringRoots")<
  ScoringRoots,
  {
    /** The caller's roots: its tenant's `spec.scoring.roots`, or `SVC_SCORING_ROOTS` with `{tenant}` substituted. */
    readonly forPrincipal: (principal: Principal) => Effect.Effect<RootSet, Unavailable>
  }
>() {}

export interface Readiness {
  readonly ready: boolean
  /** Why not ready, for the probe's body. */
  readonly reason: string | undefined
}

export class AuthStatus extends Context.Tag("svc/auth/AuthStatus")<
  AuthStatus,
  {
    readonly mode: AuthMode["_tag"]
    readonly readiness: Effect.Effect<Readiness>
    /** Registry mode only; undefined otherwise. */
    readonly tenantSet: Effect.Effect<TenantSetStatus | undefined>
    readonly jwksCaches: Effect.Effect<ReadonlyArray<JwksStatus>>
  }
>() {}

const BEARER = /^Bearer[ \t]+([^\s]+)[ \t]*$/i

const bearerToken = (authorization: string | undefined): Effect.Effect<string, Unauthenticated> => {
  const token = authorization === undefined ? undefined : BEARER.exec(authorization)?.[1]
  return token === undefined
    ? Effect.fail(Unauthenticated.because("missing-token", "no bearer token"))
    : Effect.succeed(token)
}

/** Single-provider verification (seed 5.3): any tenant name the provider issues is accepted. */
export const authenticateWithProvider = (
  token: string,
  provider: ProviderSettings,
  jwks: JwksCache
): Effect.Effect<Principal, Unauthenticated> =>
  Effect.gen(function* () {
    const claims = yield* verifySignature(token, jwks)
    yield* checkIssuerAndAudience(claims, provider)
    const tenantId = tenantClaimOf(claims, provider.tenantClaim)
    if (tenantId === undefined)
      return yield* Effect.fail(
        Unauthenticated.because("missing-tenant-claim", `no string claim ${provider.tenantClaim}`)
      )
    return { tenantId, roles: knownRolesOf(claims, provider.rolesClaim), subject: subjectOf(claims) }
  })

const logged = (
  counters: AuthCounters,
  outcome: Effect.Effect<Principal, Refusal>
): Effect.Effect<Principal, Refusal> =>
  Effect.tapError(outcome, (refusal) => {
    counters.recordRefusal(refusal.reason)
    const detail = refusal._tag === "Unauthenticated" ? refusal.detail : refusal.message
    return Effect.logInfo("auth: request refused").pipe(Effect.annotateLogs({ reason: refusal.reason, detail }))
  })

export interface AuthLayerOptions {
  readonly jwksFetch?: HttpGetOptions
  /** How the orchestrator is reached; defaults to the in-cluster service account. Tests point it at a double. */
  readonly orchestratorAccess?: (namespace: string | undefined) => Effect.Effect<OrchestratorAccess, TenantSourceError>
}

type AuthServices = Authenticator | ScoringRoots | AuthStatus

const servicesFor = (
  mode: AuthMode,
  counters: AuthCounters,
  options: AuthLayerOptions
): Effect.Effect<Context.Context<AuthServices>, AuthStartupError, Scope.Scope> =>
  Effect.gen(function* () {
    const caches = yield* makeJwksCaches(counters, options.jwksFetch ?? DEFAULT_JWKS_FETCH, true)
    const alwaysReady = Effect.succeed<Readiness>({ ready: true, reason: undefined })
    const fromTemplates = (templates: ReadonlyArray<string>) => (principal: Principal) =>
      Effect.succeed(rootsForTenant(templates, principal.tenantId))
    const build = (
      authenticate: (authorization: string | undefined) => Effect.Effect<Principal, Refusal>,
      forPrincipal: (principal: Principal) => Effect.Effect<RootSet, Unavailable>,
      readiness: Effect.Effect<Readiness>,
      tenantSet: Effect.Effect<TenantSetStatus | undefined>
    ) =>
      Context.make(Authenticator, {
        authenticate: (authorization) => logged(counters, authenticate(authorization))
      }).pipe(
        Context.add(ScoringRoots, { forPrincipal }),
        Context.add(AuthStatus, { mode: mode._tag, readiness, tenantSet, jwksCaches: caches.statuses })
      )
    switch (mode._tag) {
      case "Disabled":
        yield* Effect.logWarning("auth: disabled, every request runs as tenant dev with svc:admin and svc:node")
        return build(
          () => Effect.succeed(DISABLED_MODE_PRINCIPAL),
          fromTemplates(mode.scoringRoots),
          alwaysReady,
          Effect.succeed(undefined)
        )
      case "SingleProvider": {
        const jwks = yield* caches.forEndpoint(mode.provider.jwksEndpoint)
        return build(
          (authorization) =>
            Effect.flatMap(bearerToken(authorization), (token) => authenticateWithProvider(token, mode.provider, jwks)),
          fromTemplates(mode.scoringRoots),
          // Every token needs this one endpoint: not ready until it has answered once.
          Effect.map(jwks.status, (status) =>
            status.lastSuccessAt !== undefined
              ? { ready: true, reason: undefined }
              : { ready: false, reason: `no JWKS fetched yet from ${mode.provider.jwksEndpoint}` }
          ),
          Effect.succeed(undefined)
        )
      }
      case "Registry": {
        const source =
          mode.source._tag === "File"
            ? fileTenantSource(mode.source.path)
            : orchestratorTenantSource(
                yield* (options.orchestratorAccess ?? inClusterAccess)(mode.source.namespace).pipe(
                  Effect.mapError((error) => new AuthStartupError({ message: error.message }))
                )
              )
        const registry: TenantRegistry = yield* makeTenantRegistry(source, mode.refreshMillis, caches)
        return build(
          // A stale set refuses every request with UNAVAILABLE, even one without a token.
          (authorization) =>
            Effect.zipRight(registry.tenants, Effect.flatMap(bearerToken(authorization), registry.authenticate)),
          // A tenant dropped since the token was checked has no roots: every input is refused.
          (principal) => Effect.map(registry.rootsFor(principal), (roots) => roots ?? new RootSet([])),
          Effect.map(registry.status, (status) => ({
            ready: status.ready,
            reason: status.stale ? Messages.tenantSetStale : undefined
          })),
          registry.status
        )
      }
    }
  })

/** The auth services for a decided mode; `AuthMetrics` must be provided. */
export const authLayerForMode = (
  mode: AuthMode,
  options: AuthLayerOptions = {}
): Layer.Layer<AuthServices, AuthStartupError, AuthMetrics> =>
  Layer.scopedContext(Effect.flatMap(AuthMetrics, (counters) => servicesFor(mode, counters, options)))

/**
 * Everything the controller needs, read from the SVC_* variables of the current
 * `ConfigProvider`. Fails start-up with `AuthStartupError` on any refusal of seed 5.8.
 */
export const authLayer = (options: AuthLayerOptions = {}): Layer.Layer<AuthServices | AuthMetrics, AuthStartupError> =>
  Layer.provideMerge(
    Layer.unwrapEffect(Effect.map(loadAuthMode, (mode) => authLayerForMode(mode, options))),
    AuthMetrics.layer
  )
