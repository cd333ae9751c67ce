/**
 * Tenant registry mode (seed 3, 5.8): the current tenant set, its refresh and
 * staleness, and the matching of a token to exactly one configured tenant.
 */
import { Clock, Duration, Effect, Either, Ref, Schedule, type Scope } from "effect"
import { decodeJwt } from "jose"
import { PermissionDenied, Unauthenticated, Unavailable, type UnauthenticatedReason } from "../policy/errors.ts"
import type { Principal } from "../policy/principal.ts"
import type { Role } from "../policy/roles.ts"
import type { RootSet } from "../policy/scoring-roots.ts"
import { AuthStartupError } from "./config.ts"
import type { JwksCaches } from "./jwks.ts"
import { validateTenantSet, type Tenant, type TenantRefusal } from "./tenant.ts"
import type { TenantSource } from "./tenant-source.ts"
import {
  checkIssuerAndAudience,
  knownRolesOf,
  rs256KeyId,
  subjectOf,
  tenantClaimOf,
  verifySignature,
  type Claims
} from "./verifier.ts"

/** The set is stale, and everyone refused, after this many intervals without a successful read. */
export const STALE_AFTER_INTERVALS = 10

export interface TenantSetStatus {
  /** False while the set is stale: the readiness probe should fail. */
  readonly ready: boolean
  readonly stale: boolean
  readonly tenantCount: number
  readonly lastSuccessAt: number
  /** Milliseconds since the last successful read of the source. */
  readonly ageMillis: number
  readonly refreshMillis: number
  readonly lastReadError: string | undefined
}

export interface TenantRegistry {
  /** The current valid tenants; fails while the set is stale. */
  readonly tenants: Effect.Effect<ReadonlyArray<Tenant>, Unavailable>
  readonly status: Effect.Effect<TenantSetStatus>
  /** One refresh now (the background loop runs it every interval). */
  readonly refresh: Effect.Effect<void>
  readonly authenticate: (token: string) => Effect.Effect<Principal, Unauthenticated | PermissionDenied | Unavailable>
  /** The roots of the principal's tenant; none when the tenant is gone. */
  readonly rootsFor: (principal: Principal) => Effect.Effect<RootSet | undefined, Unavailable>
}

interface RegistryState {
  readonly tenants: ReadonlyArray<Tenant>
  readonly lastSuccessAt: number
  readonly lastReadError: string | undefined
}

const describeRefusal = (refusal: TenantRefusal): string => `SvcTenant "${refusal.name}": ${refusal.reasons.join("; ")}`

/**
 * Roles of seed 5.8.5: recognised roles of the claim that the tenant allows; the
 * default role only when the token names no recognised role at all.
 */
export const tenantRoles = (tenant: Tenant, claims: Claims): ReadonlyArray<Role> => {
  const named = knownRolesOf(claims, tenant.provider.rolesClaim)
  return named.length === 0 ? [tenant.defaultRole] : named.filter((role) => tenant.allowedRoles.includes(role))
}

export const makeTenantRegistry = (
  source: TenantSource,
  refreshMillis: number,
  caches: JwksCaches
): Effect.Effect<TenantRegistry, AuthStartupError, Scope.Scope> =>
  Effect.gen(function* () {
    // Start-up is strict: any unreadable source or invalid document stops the process.
    const documents = yield* source.read.pipe(
      Effect.mapError(
        (error) => new AuthStartupError({ message: `tenant registry (${source.description}): ${error.message}` })
      )
    )
    const initial = validateTenantSet(documents, source.expandsLists)
    if (initial.refusals.length > 0) {
      return yield* Effect.fail(
        new AuthStartupError({
          message: `tenant registry (${source.description}) refused: ${initial.refusals.map(describeRefusal).join(" | ")}`
        })
      )
    }
    for (const tenant of initial.tenants) {
      if (tenant.provider.audience === undefined) {
        yield* Effect.logWarning(
          "tenant has no oidc.audience: tokens its provider issues for any application are accepted"
        ).pipe(Effect.annotateLogs({ tenant: tenant.tenantId, resource: tenant.name }))
      }
    }
    const state = yield* Ref.make<RegistryState>({
      tenants: initial.tenants,
      lastSuccessAt: yield* Clock.currentTimeMillis,
      lastReadError: undefined
    })

    const refresh = Effect.gen(function* () {
      const read = yield* Effect.either(source.read)
      if (Either.isLeft(read)) {
        yield* Effect.logWarning("tenant refresh failed, keeping the last set").pipe(
          Effect.annotateLogs({ error: read.left.message })
        )
        return yield* Ref.update(state, (s) => ({ ...s, lastReadError: read.left.message }))
      }
      const validated = validateTenantSet(read.right, source.expandsLists)
      for (const refusal of validated.refusals) {
        yield* Effect.logWarning("tenant refused").pipe(
          Effect.annotateLogs({ resource: refusal.name, reasons: refusal.reasons.join("; ") })
        )
      }
      const now = yield* Clock.currentTimeMillis
      yield* Ref.set(state, { tenants: validated.tenants, lastSuccessAt: now, lastReadError: undefined })
    })

    // On a fixed rate, so a slow source does not stretch the interval; a defect in one refresh does not stop the next.
    const refreshSafely = Effect.catchAllCause(refresh, (cause) => Effect.logError("tenant refresh crashed", cause))
    yield* Effect.forkScoped(Effect.schedule(refreshSafely, Schedule.fixed(Duration.millis(refreshMillis))))

    const status = Effect.gen(function* () {
      const s = yield* Ref.get(state)
      const ageMillis = (yield* Clock.currentTimeMillis) - s.lastSuccessAt
      const stale = ageMillis > STALE_AFTER_INTERVALS * refreshMillis
      return {
        ready: !stale,
        stale,
        tenantCount: s.tenants.length,
        lastSuccessAt: s.lastSuccessAt,
        ageMillis,
        refreshMillis,
        lastReadError: s.lastReadError
      }
    })

    const tenants = Effect.gen(function* () {
      if ((yield* status).stale) return yield* Effect.fail(Unavailable.tenantSetStale())
      return (yield* Ref.get(state)).tenants
    })

    const authenticate = (token: string) =>
      Effect.gen(function* () {
        const current = yield* tenants
        yield* rs256KeyId(token)
        const unverified = yield* Effect.try({
          try: () => decodeJwt(token),
          catch: () => Unauthenticated.because("malformed-token", "the payload cannot be decoded")
        })
        const candidates = current.filter((tenant) => tenant.provider.issuer === unverified.iss)
        if (candidates.length === 0) {
          return yield* Effect.fail(
            Unauthenticated.because("unknown-issuer", `no tenant has issuer ${JSON.stringify(unverified.iss)}`)
          )
        }
        // The signature is checked once per JWKS endpoint, however many tenants share it.
        const endpoints = [...new Set(candidates.map((tenant) => tenant.provider.jwksEndpoint))]
        const verified = new Map(
          yield* Effect.forEach(
            endpoints,
            (endpoint) =>
              Effect.map(
                Effect.either(Effect.flatMap(caches.forEndpoint(endpoint), (cache) => verifySignature(token, cache))),
                (result) => [endpoint, result] as const
              ),
            { concurrency: "unbounded" }
          )
        )
        const failures: Array<Unauthenticated> = []
        const matches: Array<{ readonly tenant: Tenant; readonly claims: Claims }> = []
        for (const tenant of candidates) {
          const signature = verified.get(tenant.provider.jwksEndpoint)
          if (signature === undefined || Either.isLeft(signature)) {
            if (signature !== undefined) failures.push(signature.left)
            continue
          }
          const claims = signature.right
          const provider = yield* Effect.either(checkIssuerAndAudience(claims, tenant.provider))
          if (Either.isLeft(provider)) failures.push(provider.left)
          else if (tenantClaimOf(claims, tenant.provider.tenantClaim) === tenant.tenantId)
            matches.push({ tenant, claims })
        }
        const [match, ...others] = matches
        if (match === undefined) {
          const reasons = [...new Set(failures.map((failure) => failure.reason))]
          const reason: UnauthenticatedReason =
            reasons.length === 1 && reasons[0] !== undefined ? reasons[0] : "no-matching-tenant"
          return yield* Effect.fail(
            Unauthenticated.because(
              reason,
              failures.map((failure) => failure.detail).join("; ") || "no tenant's claim carries its own ID"
            )
          )
        }
        if (others.length > 0) {
          return yield* Effect.fail(
            Unauthenticated.because("ambiguous-tenant", `matches ${matches.map((m) => m.tenant.tenantId).join(", ")}`)
          )
        }
        if (!match.tenant.enabled) return yield* Effect.fail(PermissionDenied.tenantSuspended())
        return {
          tenantId: match.tenant.tenantId,
          roles: tenantRoles(match.tenant, match.claims),
          subject: subjectOf(match.claims)
        }
      })

    const rootsFor = (principal: Principal) =>
      Effect.map(tenants, (list) => list.find((tenant) => tenant.tenantId === principal.tenantId)?.roots)

    return { tenants, status, refresh, authenticate, rootsFor }
  })
