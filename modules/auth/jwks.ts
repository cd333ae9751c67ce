/**
 * One JWKS cache per endpoint, shared by every tenant that uses it (seed 5.1, 5.2, 8).
 * `jose` does the key import; the cache policy is ours because jose's remote set has
 * no stale-if-error. Time comes from Effect's `Clock`, so tests drive it with `TestClock`.
 */
import { Clock, Deferred, Effect, Either, Ref } from "effect"
import { base64url, importJWK, type CryptoKey } from "jose"
import { Unauthenticated } from "../policy/errors.ts"
import { httpGet, type HttpGetOptions } from "./http.ts"
import type { AuthCounters } from "./metrics.ts"

export const MIN_RSA_MODULUS_BITS = 2048
/** Fetches, successful or not, at most once per this interval per endpoint. */
export const JWKS_FETCH_INTERVAL_MILLIS = 30_000
/** After this, the next token refetches. */
export const JWKS_KEY_LIFETIME_MILLIS = 15 * 60_000
/** Cached keys stay usable this long after the last successful fetch when refetches fail. */
export const JWKS_STALE_LIMIT_MILLIS = 24 * 3_600_000

export const DEFAULT_JWKS_FETCH: HttpGetOptions = {
  timeoutMillis: 5_000,
  maxBodyBytes: 1024 * 1024,
  maxRedirects: 3,
  headers: { accept: "application/json" }
}

export type JwksCacheState = "empty" | "fresh" | "expired" | "unusable"

export interface JwksStatus {
  readonly endpoint: string
  readonly state: JwksCacheState
  readonly keyCount: number
  readonly lastSuccessAt: number | undefined
  readonly lastAttemptAt: number | undefined
}

interface CacheState {
  readonly keys: ReadonlyMap<string, CryptoKey>
  readonly lastSuccessAt: number | undefined
  readonly lastAttemptAt: number | undefined
  /** Completed when the fetch in flight (if any) has stored its outcome. */
  readonly inFlight: Deferred.Deferred<void> | undefined
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const BASE64URL = /^[A-Za-z0-9_-]+$/

const decodeUnsigned = (text: string): bigint | undefined => {
  if (!BASE64URL.test(text)) return undefined
  const bytes = base64url.decode(text)
  if (bytes.length === 0) return undefined
  return bytes.reduce((value, byte) => (value << 8n) | BigInt(byte), 0n)
}

type ParsedKey =
  | { readonly _tag: "usable"; readonly kid: string; readonly key: CryptoKey }
  | { readonly _tag: "ignored"; readonly kid: string | undefined; readonly why: string }
  | { readonly _tag: "too-small"; readonly kid: string | undefined; readonly bits: number }

/**
 * Reads one JWK. Only RSA signature keys for RS256 with a `kid` are candidates; a
 * malformed exponent (not base64url, even, or below 3) fails the whole refresh.
 */
const parseKey = (jwk: Record<string, unknown>): Effect.Effect<ParsedKey, string> =>
  Effect.gen(function* () {
    const kid = typeof jwk.kid === "string" ? jwk.kid : undefined
    if (jwk.kty !== "RSA") return { _tag: "ignored", kid, why: `key type ${String(jwk.kty)}` } as const
    if (jwk.use !== undefined && jwk.use !== "sig")
      return { _tag: "ignored", kid, why: `use ${String(jwk.use)}` } as const
    if (jwk.alg !== undefined && jwk.alg !== "RS256")
      return { _tag: "ignored", kid, why: `alg ${String(jwk.alg)}` } as const
    const exponent = typeof jwk.e === "string" ? decodeUnsigned(jwk.e) : undefined
    if (exponent === undefined || exponent < 3n || exponent % 2n === 0n) {
      return yield* Effect.fail(`key ${kid ?? "without kid"} has a malformed exponent`)
    }
    const n = typeof jwk.n === "string" ? jwk.n : ""
    const modulus = decodeUnsigned(n)
    if (modulus === undefined) return yield* Effect.fail(`key ${kid ?? "without kid"} has a malformed modulus`)
    const bits = modulus.toString(2).length
    if (bits < MIN_RSA_MODULUS_BITS) return { _tag: "too-small", kid, bits } as const
    if (kid === undefined) return { _tag: "ignored", kid, why: "no kid" } as const
    const e = String(jwk.e)
    const imported = yield* Effect.tryPromise({
      try: () => importJWK({ kty: "RSA", n, e }, "RS256"),
      catch: (cause) => `key ${kid} cannot be imported: ${String(cause)}`
    })
    if (imported instanceof Uint8Array) return yield* Effect.fail(`key ${kid} is not an RSA public key`)
    return { _tag: "usable", kid, key: imported } as const
  })

/** Parses a JWKS document into its usable keys, logging the keys it skips. */
export const parseJwks = (body: string, endpoint: string): Effect.Effect<ReadonlyMap<string, CryptoKey>, string> =>
  Effect.gen(function* () {
    const document = yield* Effect.try({ try: (): unknown => JSON.parse(body), catch: () => "response is not JSON" })
    if (!isRecord(document) || !Array.isArray(document.keys)) return yield* Effect.fail("response has no `keys` array")
    const keys = new Map<string, CryptoKey>()
    for (const jwk of document.keys) {
      if (!isRecord(jwk)) return yield* Effect.fail("a key is not an object")
      const parsed = yield* parseKey(jwk)
      switch (parsed._tag) {
        case "usable":
          keys.set(parsed.kid, parsed.key)
          break
        case "too-small":
          yield* Effect.logWarning("jwks: skipping RSA key below the minimum size").pipe(
            Effect.annotateLogs({ kid: parsed.kid ?? "", bits: parsed.bits, endpoint })
          )
          break
        case "ignored":
          yield* Effect.logDebug("jwks: ignoring key").pipe(
            Effect.annotateLogs({ kid: parsed.kid ?? "", reason: parsed.why, endpoint })
          )
      }
    }
    return keys
  })

export interface JwksCache {
  readonly endpoint: string
  /** The verification key for `kid`, fetching the JWKS when the rules of seed 5.2 allow. */
  readonly keyFor: (kid: string) => Effect.Effect<CryptoKey, Unauthenticated>
  readonly status: Effect.Effect<JwksStatus>
  /**
   * Runs forever: while the endpoint has no usable keys, fetches once per fetch interval (the
   * first at once), so keys are back within one interval of the endpoint's recovery without a
   * token having to ask; logs each interval that ends without them.
   */
  readonly keepFetched: Effect.Effect<never>
}

export const makeJwksCache = (
  endpoint: string,
  counters: AuthCounters,
  fetchOptions: HttpGetOptions = DEFAULT_JWKS_FETCH
): Effect.Effect<JwksCache> =>
  Effect.gen(function* () {
    const state = yield* Ref.make<CacheState>({
      keys: new Map(),
      lastSuccessAt: undefined,
      lastAttemptAt: undefined,
      inFlight: undefined
    })

    const fetchAndStore = Effect.gen(function* () {
      const outcome = yield* httpGet(endpoint, fetchOptions).pipe(
        Effect.mapError((error) => error.message),
        Effect.filterOrElse(
          (response) => response.status === 200,
          (response) => Effect.fail(`HTTP status ${response.status}`)
        ),
        Effect.flatMap((response) => parseJwks(response.body, endpoint)),
        Effect.either
      )
      const now = yield* Clock.currentTimeMillis
      if (Either.isRight(outcome)) {
        counters.recordJwksFetch(endpoint, "success")
        yield* Ref.update(state, (s) => ({ ...s, keys: outcome.right, lastSuccessAt: now, inFlight: undefined }))
      } else {
        counters.recordJwksFetch(endpoint, "failure")
        yield* Effect.logWarning("jwks: refresh failed, keeping cached keys").pipe(
          Effect.annotateLogs({ endpoint, error: outcome.left })
        )
        yield* Ref.update(state, (s) => ({ ...s, inFlight: undefined }))
      }
    })

    /** Joins the fetch in flight, starts one, or does nothing, per the cache rules. */
    const refreshIfDue = (kid: string) =>
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        const candidate = yield* Deferred.make<void>()
        const wait = yield* Ref.modify(state, (s): [Deferred.Deferred<void> | undefined, CacheState] => {
          const fresh = s.lastSuccessAt !== undefined && now - s.lastSuccessAt < JWKS_KEY_LIFETIME_MILLIS
          if (fresh && s.keys.has(kid)) return [undefined, s]
          if (s.inFlight !== undefined) return [s.inFlight, s]
          if (s.lastAttemptAt !== undefined && now - s.lastAttemptAt < JWKS_FETCH_INTERVAL_MILLIS) return [undefined, s]
          return [candidate, { ...s, lastAttemptAt: now, inFlight: candidate }]
        })
        // The fetch runs detached so that a caller giving up does not cancel it for the others.
        if (wait === candidate)
          yield* Effect.forkDaemon(Effect.ensuring(fetchAndStore, Deferred.succeed(candidate, undefined)))
        if (wait !== undefined) yield* Deferred.await(wait)
      })

    const usable = (s: CacheState, now: number) =>
      s.lastSuccessAt !== undefined && now - s.lastSuccessAt <= JWKS_STALE_LIMIT_MILLIS && s.keys.size > 0

    /** One background round: a fetch when there are no usable keys and the fetch rate allows it. */
    const backgroundRound = Effect.gen(function* () {
      const now = yield* Clock.currentTimeMillis
      const candidate = yield* Deferred.make<void>()
      const wait = yield* Ref.modify(state, (s): [Deferred.Deferred<void> | undefined, CacheState] => {
        if (usable(s, now)) return [undefined, s]
        if (s.inFlight !== undefined) return [s.inFlight, s]
        if (s.lastAttemptAt !== undefined && now - s.lastAttemptAt < JWKS_FETCH_INTERVAL_MILLIS) return [undefined, s]
        return [candidate, { ...s, lastAttemptAt: now, inFlight: candidate }]
      })
      if (wait === candidate) yield* Effect.ensuring(fetchAndStore, Deferred.succeed(candidate, undefined))
      else if (wait !== undefined) yield* Deferred.await(wait)
      const after = yield* Ref.get(state)
      if (!usable(after, yield* Clock.currentTimeMillis))
        yield* Effect.logWarning(
          "jwks: endpoint has no usable keys; tokens it signs are refused until it answers"
        ).pipe(Effect.annotateLogs({ endpoint }))
    })

    const keepFetched: Effect.Effect<never> = Effect.forever(
      Effect.zipRight(backgroundRound, Effect.sleep(JWKS_FETCH_INTERVAL_MILLIS))
    )

    const keyFor = (kid: string): Effect.Effect<CryptoKey, Unauthenticated> =>
      Effect.gen(function* () {
        yield* refreshIfDue(kid)
        const now = yield* Clock.currentTimeMillis
        const s = yield* Ref.get(state)
        if (s.lastSuccessAt === undefined || now - s.lastSuccessAt > JWKS_STALE_LIMIT_MILLIS) {
          return yield* Effect.fail(Unauthenticated.because("keys-unavailable", `no usable JWKS from ${endpoint}`))
        }
        const key = s.keys.get(kid)
        if (key === undefined)
          return yield* Effect.fail(
            Unauthenticated.because("unknown-key", `kid "${kid}" is not in the JWKS of ${endpoint}`)
          )
        return key
      })

    const status = Effect.gen(function* () {
      const now = yield* Clock.currentTimeMillis
      const s = yield* Ref.get(state)
      const age = s.lastSuccessAt === undefined ? undefined : now - s.lastSuccessAt
      const cacheState: JwksCacheState =
        age === undefined
          ? "empty"
          : age < JWKS_KEY_LIFETIME_MILLIS
            ? "fresh"
            : age <= JWKS_STALE_LIMIT_MILLIS
              ? "expired"
              : "unusable"
      return {
        endpoint,
        state: cacheState,
        keyCount: s.keys.size,
        lastSuccessAt: s.lastSuccessAt,
        lastAttemptAt: s.lastAttemptAt
      }
    })

    return { endpoint, keyFor, status, keepFetched }
  })

/** The caches of every endpoint in use, created on first use and kept across tenant refreshes. */
export interface JwksCaches {
  readonly forEndpoint: (endpoint: string) => Effect.Effect<JwksCache>
  readonly statuses: Effect.Effect<ReadonlyArray<JwksStatus>>
}

/** `background`: each cache created runs `keepFetched` on a daemon fiber (the services do; unit tests drive fetches). */
export const makeJwksCaches = (
  counters: AuthCounters,
  fetchOptions: HttpGetOptions = DEFAULT_JWKS_FETCH,
  background = false
): Effect.Effect<JwksCaches> =>
  Effect.gen(function* () {
    const caches = yield* Ref.make<ReadonlyMap<string, JwksCache>>(new Map())
    const lock = yield* Effect.makeSemaphore(1)
    const forEndpoint = (endpoint: string) =>
      lock.withPermits(1)(
        Effect.gen(function* () {
          const existing = (yield* Ref.get(caches)).get(endpoint)
          if (existing !== undefined) return existing
          const created = yield* makeJwksCache(endpoint, counters, fetchOptions)
          if (background) yield* Effect.forkDaemon(created.keepFetched)
          yield* Ref.update(caches, (map) => new Map([...map, [endpoint, created]]))
          return created
        })
      )
    const statuses = Effect.flatMap(Ref.get(caches), (map) =>
      Effect.forEach([...map.values()], (cache) => cache.status)
    )
    return { forEndpoint, statuses }
  })
