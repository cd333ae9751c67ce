/**
 * RS256 token verification (seed 5.1) and claim reading (seed 2.1). The algorithm is
 * checked from the header before any key lookup; `exp` is checked on every call
 * against Effect's `Clock`.
 */
import { Clock, Effect } from "effect"
import { compactVerify, decodeProtectedHeader } from "jose"
import { Unauthenticated } from "../policy/errors.ts"
import { isKnownRole, type Role } from "../policy/roles.ts"
import type { ProviderSettings } from "./config.ts"
import type { JwksCache } from "./jwks.ts"

export type Claims = Readonly<Record<string, unknown>>

const refuse = Unauthenticated.because

/** The `kid` of an RS256 token; anything else (`none`, `HS256`, `RS512`, …) is refused here. */
export const rs256KeyId = (token: string): Effect.Effect<string, Unauthenticated> =>
  Effect.gen(function* () {
    const header = yield* Effect.try({
      try: () => decodeProtectedHeader(token),
      catch: () => refuse("malformed-token", "the token header cannot be decoded")
    })
    if (token.split(".").length !== 3) return yield* Effect.fail(refuse("malformed-token", "not a compact JWS"))
    if (header.alg !== "RS256")
      return yield* Effect.fail(refuse("unsupported-algorithm", `alg ${String(header.alg)} is not RS256`))
    if (typeof header.kid !== "string" || header.kid === "")
      return yield* Effect.fail(refuse("malformed-token", "the token has no kid"))
    return header.kid
  })

/**
 * Checks the signature with the endpoint's keys and the time claims; returns the
 * claims. Issuer, audience and tenant are the caller's to check, per provider.
 */
export const verifySignature = (token: string, jwks: JwksCache): Effect.Effect<Claims, Unauthenticated> =>
  Effect.gen(function* () {
    const kid = yield* rs256KeyId(token)
    const key = yield* jwks.keyFor(kid)
    const verified = yield* Effect.tryPromise({
      try: () => compactVerify(token, key, { algorithms: ["RS256"] }),
      catch: () => refuse("bad-signature", `signature does not verify with kid "${kid}" of ${jwks.endpoint}`)
    })
    const claims = yield* Effect.try({
      try: (): unknown => JSON.parse(new TextDecoder().decode(verified.payload)),
      catch: () => refuse("malformed-token", "the payload is not JSON")
    })
    if (typeof claims !== "object" || claims === null || Array.isArray(claims)) {
      return yield* Effect.fail(refuse("malformed-token", "the payload is not a JSON object"))
    }
    const payload = claims as Claims
    const nowSeconds = (yield* Clock.currentTimeMillis) / 1000
    if (typeof payload.exp !== "number") return yield* Effect.fail(refuse("expired", "the token has no numeric exp"))
    if (nowSeconds >= payload.exp) return yield* Effect.fail(refuse("expired", `expired at ${payload.exp}`))
    if (payload.nbf !== undefined && (typeof payload.nbf !== "number" || nowSeconds < payload.nbf)) {
      return yield* Effect.fail(refuse("not-yet-valid", `not valid before ${String(payload.nbf)}`))
    }
    return payload
  })

/** Issuer and audience checks of one provider (seed 2.1). */
export const checkIssuerAndAudience = (
  claims: Claims,
  provider: ProviderSettings
): Effect.Effect<void, Unauthenticated> => {
  if (claims.iss !== provider.issuer)
    return Effect.fail(refuse("wrong-issuer", `iss ${JSON.stringify(claims.iss)} is not ${provider.issuer}`))
  if (provider.audience === undefined) return Effect.void
  const audiences = Array.isArray(claims.aud) ? claims.aud : [claims.aud]
  return audiences.includes(provider.audience)
    ? Effect.void
    : Effect.fail(refuse("wrong-audience", `aud ${JSON.stringify(claims.aud)} does not include ${provider.audience}`))
}

/** The tenant claim's value, or undefined when absent, not a string, or empty (no token holds the empty tenant). */
export const tenantClaimOf = (claims: Claims, claimName: string): string | undefined => {
  const value = claims[claimName]
  return typeof value === "string" && value !== "" ? value : undefined
}

/** The recognised roles of the roles claim: a JSON array of strings or a single string; unknown strings confer nothing. */
export const knownRolesOf = (claims: Claims, claimName: string): ReadonlyArray<Role> => {
  const value = claims[claimName]
  const strings =
    typeof value === "string"
      ? [value]
      : Array.isArray(value)
        ? value.filter((v): v is string => typeof v === "string")
        : []
  return [...new Set(strings.filter(isKnownRole))]
}

export const subjectOf = (claims: Claims): string | undefined =>
  typeof claims.sub === "string" ? claims.sub : undefined
