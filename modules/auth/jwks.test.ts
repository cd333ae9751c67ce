import { afterEach, describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Either, Fiber, TestClock } from "effect"
import { DEFAULT_JWKS_FETCH, makeJwksCache, makeJwksCaches } from "./jwks.ts"
import { AuthCounters } from "./metrics.ts"
import {
  captureLogs,
  jsonHandler,
  jwksBody,
  LoopbackServer,
  makeKey,
  opensslAvailable,
  selfSignedCertificate,
  type CapturedLog
} from "../../local/auth.ts"

const keyA = makeKey("key-a")
const keyB = makeKey("key-b")
const smallKey = makeKey("small", 1024)

const servers: Array<LoopbackServer> = []
const serve = (...args: ConstructorParameters<typeof LoopbackServer>) => {
  const server = new LoopbackServer(...args)
  servers.push(server)
  return server
}
afterEach(() => {
  for (const server of servers.splice(0)) server.stop()
})

const reason = <A>(effect: Effect.Effect<A, { readonly reason: string }>) =>
  Effect.map(Effect.flip(effect), (error) => error.reason)
const seconds = (n: number) => TestClock.adjust(Duration.seconds(n))

describe("JwksCache", () => {
  it.effect("fetches once, then serves known keys from the cache", () =>
    Effect.gen(function* () {
      const server = serve(jsonHandler(() => jwksBody(keyA.jwk)))
      const cache = yield* makeJwksCache(server.url("/jwks"), new AuthCounters())
      yield* cache.keyFor("key-a")
      yield* cache.keyFor("key-a")
      yield* seconds(14 * 60)
      yield* cache.keyFor("key-a")
      expect(server.hits).toBe(1)
      expect((yield* cache.status).state).toBe("fresh")
    })
  )

  it.effect("rotation: an unknown kid triggers one fetch, rate-limited to one per 30 s", () =>
    Effect.gen(function* () {
      let published = [keyA.jwk]
      const server = serve(jsonHandler(() => jwksBody(...published)))
      const counters = new AuthCounters()
      const cache = yield* makeJwksCache(server.url("/jwks"), counters)
      yield* cache.keyFor("key-a")
      published = [keyA.jwk, keyB.jwk]
      // Within 30 s of the last fetch the new kid is refused without a fetch.
      yield* seconds(10)
      expect(yield* reason(cache.keyFor("key-b"))).toBe("unknown-key")
      expect(server.hits).toBe(1)
      yield* seconds(20)
      yield* cache.keyFor("key-b")
      expect(server.hits).toBe(2)
      // A kid absent from the response: one fetch, then none for 30 s.
      yield* seconds(30)
      expect(yield* reason(cache.keyFor("key-c"))).toBe("unknown-key")
      expect(yield* reason(cache.keyFor("key-c"))).toBe("unknown-key")
      yield* seconds(29)
      expect(yield* reason(cache.keyFor("key-c"))).toBe("unknown-key")
      expect(server.hits).toBe(3)
      yield* seconds(1)
      expect(yield* reason(cache.keyFor("key-c"))).toBe("unknown-key")
      expect(server.hits).toBe(4)
      expect(counters.jwksFetchCounts()).toEqual([{ endpoint: server.url("/jwks"), outcome: "success", count: 4 }])
    })
  )

  it.effect("keys expire after 15 minutes: the next token refetches and a withdrawn key stops verifying", () =>
    Effect.gen(function* () {
      let published = [keyA.jwk]
      const server = serve(jsonHandler(() => jwksBody(...published)))
      const cache = yield* makeJwksCache(server.url("/jwks"), new AuthCounters())
      yield* cache.keyFor("key-a")
      published = [keyB.jwk]
      yield* seconds(15 * 60 - 1)
      yield* cache.keyFor("key-a")
      expect(server.hits).toBe(1)
      yield* seconds(1)
      expect((yield* cache.status).state).toBe("expired")
      expect(yield* reason(cache.keyFor("key-a"))).toBe("unknown-key")
      expect(server.hits).toBe(2)
      yield* cache.keyFor("key-b")
    })
  )

  it.effect("a failed refetch keeps cached keys for 24 hours after the last success, then refuses", () =>
    Effect.gen(function* () {
      let failing = false
      const server = serve((request) =>
        failing ? new Response("boom", { status: 500 }) : jsonHandler(() => jwksBody(keyA.jwk))(request)
      )
      const counters = new AuthCounters()
      const cache = yield* makeJwksCache(server.url("/jwks"), counters)
      yield* cache.keyFor("key-a")
      failing = true
      yield* seconds(15 * 60)
      yield* cache.keyFor("key-a")
      expect(server.hits).toBe(2)
      // Failed fetches are rate-limited too.
      yield* cache.keyFor("key-a")
      yield* seconds(29)
      yield* cache.keyFor("key-a")
      expect(server.hits).toBe(2)
      yield* TestClock.setTime(Duration.toMillis(Duration.hours(24)))
      yield* cache.keyFor("key-a")
      yield* TestClock.setTime(Duration.toMillis(Duration.hours(24)) + 1)
      expect(yield* reason(cache.keyFor("key-a"))).toBe("keys-unavailable")
      expect((yield* cache.status).state).toBe("unusable")
      // Tokens are refused until the endpoint answers again.
      failing = false
      yield* seconds(30)
      yield* cache.keyFor("key-a")
      expect(counters.jwksFetchCounts()).toContainEqual({
        endpoint: server.url("/jwks"),
        outcome: "failure",
        count: expect.any(Number)
      })
    })
  )

  it.effect("refuses tokens while the first fetch answers 500", () =>
    Effect.gen(function* () {
      const server = serve(() => new Response("boom", { status: 500 }))
      const cache = yield* makeJwksCache(server.url("/jwks"), new AuthCounters())
      expect(yield* reason(cache.keyFor("key-a"))).toBe("keys-unavailable")
      expect((yield* cache.status).state).toBe("empty")
    })
  )

  it.effect("times out a fetch that does not answer", () =>
    Effect.gen(function* () {
      const server = serve(() => new Promise<Response>(() => undefined))
      const cache = yield* makeJwksCache(server.url("/jwks"), new AuthCounters(), {
        ...DEFAULT_JWKS_FETCH,
        timeoutMillis: 2_000
      })
      const caller = yield* Effect.fork(Effect.either(cache.keyFor("key-a")))
      yield* Effect.promise(() => server.waitForHits(1))
      yield* TestClock.adjust(Duration.millis(2_000))
      const outcome = yield* Fiber.join(caller)
      expect(Either.isLeft(outcome) && outcome.left.reason).toBe("keys-unavailable")
      expect(server.hits).toBe(1)
    })
  )

  it.effect("times out a response whose body never ends", () =>
    Effect.gen(function* () {
      const server = serve(
        () =>
          new Response(
            new ReadableStream({
              start: (controller) => controller.enqueue(new TextEncoder().encode('{"keys": ['))
            }),
            { headers: { "content-type": "application/json" } }
          )
      )
      const cache = yield* makeJwksCache(server.url("/jwks"), new AuthCounters(), {
        ...DEFAULT_JWKS_FETCH,
        timeoutMillis: 2_000
      })
      const caller = yield* Effect.fork(Effect.either(cache.keyFor("key-a")))
      yield* Effect.promise(() => server.waitForHits(1))
      yield* TestClock.adjust(Duration.millis(2_000))
      const outcome = yield* Fiber.join(caller)
      expect(Either.isLeft(outcome) && outcome.left.reason).toBe("keys-unavailable")
    })
  )

  it.effect("concurrent callers share one in-flight fetch", () =>
    Effect.gen(function* () {
      let release: () => void = () => undefined
      const gate = new Promise<void>((resolve) => (release = resolve))
      const server = serve(async () => {
        await gate
        return new Response(jwksBody(keyA.jwk, keyB.jwk))
      })
      const cache = yield* makeJwksCache(server.url("/jwks"), new AuthCounters())
      const callers = yield* Effect.fork(
        Effect.forEach(
          Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? "key-a" : "key-b")),
          cache.keyFor,
          { concurrency: "unbounded" }
        )
      )
      yield* Effect.promise(() => server.waitForHits(1))
      release()
      const keys = yield* Fiber.join(callers)
      expect(keys).toHaveLength(20)
      expect(server.hits).toBe(1)
    })
  )

  it.effect("skips RSA keys below 2048 bits, logging their kid; other keys keep working", () =>
    Effect.gen(function* () {
      const logs: Array<CapturedLog> = []
      const server = serve(jsonHandler(() => jwksBody(smallKey.jwk, keyA.jwk)))
      const cache = yield* makeJwksCache(server.url("/jwks"), new AuthCounters())
      yield* captureLogs(cache.keyFor("key-a"), logs)
      expect(yield* reason(cache.keyFor("small"))).toBe("unknown-key")
      const skipped = logs.filter((log) => log.message === "jwks: skipping RSA key below the minimum size")
      expect(skipped).toHaveLength(1)
      expect(skipped[0]?.annotations).toMatchObject({ kid: "small", bits: 1024 })
    })
  )

  it.effect("a malformed exponent fails the whole refresh", () =>
    Effect.gen(function* () {
      for (const e of ["Ag", "AAEAAA", "not base64!", "", "AQ"]) {
        const server = serve(jsonHandler(() => jwksBody(keyA.jwk, { ...keyB.jwk, e })))
        const cache = yield* makeJwksCache(server.url("/jwks"), new AuthCounters())
        expect(yield* reason(cache.keyFor("key-a"))).toBe("keys-unavailable")
      }
    })
  )

  it.effect("a malformed exponent in a refetch keeps the cached keys", () =>
    Effect.gen(function* () {
      let keys = [keyA.jwk]
      const server = serve(jsonHandler(() => jwksBody(...keys)))
      const cache = yield* makeJwksCache(server.url("/jwks"), new AuthCounters())
      yield* cache.keyFor("key-a")
      keys = [keyA.jwk, { ...keyB.jwk, e: "Ag" }]
      yield* seconds(15 * 60)
      yield* cache.keyFor("key-a")
      expect(yield* reason(cache.keyFor("key-b"))).toBe("unknown-key")
      expect(server.hits).toBe(2)
    })
  )

  it.effect("ignores non-RSA and non-signature keys and refuses oversized responses", () =>
    Effect.gen(function* () {
      const mixed = serve(
        jsonHandler(() =>
          jwksBody(keyA.jwk, { kty: "EC", kid: "ec", crv: "P-256", x: "x", y: "y" }, { ...keyB.jwk, use: "enc" })
        )
      )
      const cache = yield* makeJwksCache(mixed.url("/jwks"), new AuthCounters())
      yield* cache.keyFor("key-a")
      expect(yield* reason(cache.keyFor("key-b"))).toBe("unknown-key")
      const huge = serve(jsonHandler(() => jwksBody(keyA.jwk) + " ".repeat(2 * 1024 * 1024)))
      const bounded = yield* makeJwksCache(huge.url("/jwks"), new AuthCounters())
      expect(yield* reason(bounded.keyFor("key-a"))).toBe("keys-unavailable")
    })
  )

  it.effect("follows redirects to loopback over plain http but not elsewhere", () =>
    Effect.gen(function* () {
      const target = serve(jsonHandler(() => jwksBody(keyA.jwk)))
      const toLoopback = serve(() => Response.redirect(target.url("/jwks"), 302))
      yield* (yield* makeJwksCache(toLoopback.url("/jwks"), new AuthCounters())).keyFor("key-a")
      const toRemote = serve(() => Response.redirect("http://jwks.example.com/jwks", 302))
      expect(yield* reason((yield* makeJwksCache(toRemote.url("/jwks"), new AuthCounters())).keyFor("key-a"))).toBe(
        "keys-unavailable"
      )
      expect(target.hits).toBe(1)
    })
  )

  it.effect("shares one cache per endpoint", () =>
    Effect.gen(function* () {
      const server = serve(jsonHandler(() => jwksBody(keyA.jwk)))
      const caches = yield* makeJwksCaches(new AuthCounters())
      const [first, second] = yield* Effect.all(
        [caches.forEndpoint(server.url("/jwks")), caches.forEndpoint(server.url("/jwks"))],
        { concurrency: 2 }
      )
      expect(first).toBe(second)
      yield* first?.keyFor("key-a") ?? Effect.void
      yield* second?.keyFor("key-a") ?? Effect.void
      expect(server.hits).toBe(1)
      expect((yield* caches.statuses).map((status) => status.state)).toEqual(["fresh"])
    })
  )
})

describe.skipIf(!opensslAvailable)("JwksCache over https", () => {
  it.effect("an https fetch does not follow a redirect to plain http, except to a loopback host", () =>
    Effect.gen(function* () {
      const tls = selfSignedCertificate()
      const options = { ...DEFAULT_JWKS_FETCH, caCertificates: tls.cert }
      const plain = serve(jsonHandler(() => jwksBody(keyA.jwk)))
      let location = "http://jwks.example.com/jwks"
      const secure = serve(() => Response.redirect(location, 302), tls)
      const direct = serve(
        jsonHandler(() => jwksBody(keyA.jwk)),
        tls
      )
      yield* (yield* makeJwksCache(direct.url("/jwks", "localhost"), new AuthCounters(), options)).keyFor("key-a")
      const refused = yield* makeJwksCache(secure.url("/jwks", "localhost"), new AuthCounters(), options)
      expect(yield* reason(refused.keyFor("key-a"))).toBe("keys-unavailable")
      location = plain.url("/jwks")
      yield* (yield* makeJwksCache(secure.url("/jwks", "localhost"), new AuthCounters(), options)).keyFor("key-a")
      expect(plain.hits).toBe(1)
    })
  )
})
