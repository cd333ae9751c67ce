import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, TestClock } from "effect"
import { sessionSettings } from "./config.ts"
import { DEFAULT_SESSION_SETTINGS, makeNodeSessions } from "./sessions.ts"

const info = { name: "host-1", slots: 2, version: "1.0.0" }
const { ttlMillis, heartbeatIntervalMillis, requeueGraceMillis } = DEFAULT_SESSION_SETTINGS

describe("node sessions", () => {
  it.effect("register gives a fresh id and the timings; the session belongs to the registering tenant", () =>
    Effect.gen(function* () {
      const sessions = yield* makeNodeSessions(DEFAULT_SESSION_SETTINGS)
      const one = yield* sessions.register("a", info)
      const two = yield* sessions.register("a", info)
      expect(one.nodeId).not.toBe(two.nodeId)
      expect(one).toMatchObject({ heartbeatIntervalMillis: 10_000, sessionTtlMillis: 30_000 })
      expect(yield* sessions.state(one.nodeId)).toEqual({ _tag: "Live", tenantId: "a", scoresSegments: false })
      // The session keeps what the node declared: it scores segments (RegisterNode scores_segments).
      const scorer = yield* sessions.register("a", { ...info, scoresSegments: true })
      expect(yield* sessions.state(scorer.nodeId)).toEqual({ _tag: "Live", tenantId: "a", scoresSegments: true })
      expect(yield* sessions.live).toEqual([
        { nodeId: one.nodeId, tenantId: "a", ...info },
        { nodeId: two.nodeId, tenantId: "a", ...info },
        { nodeId: scorer.nodeId, tenantId: "a", ...info, scoresSegments: true }
      ])
    })
  )

  it.effect("heartbeats every interval keep a session live far beyond the TTL", () =>
    Effect.gen(function* () {
      const sessions = yield* makeNodeSessions(DEFAULT_SESSION_SETTINGS)
      const { nodeId } = yield* sessions.register("a", info)
      for (let i = 0; i < 20; i++) {
        yield* TestClock.adjust(heartbeatIntervalMillis)
        expect(yield* sessions.heartbeat("a", nodeId)).toBe(true)
      }
      expect((yield* sessions.state(nodeId))._tag).toBe("Live")
    })
  )

  it.effect(
    "without a heartbeat for the TTL the session is no longer live, and a late heartbeat does not revive it",
    () =>
      Effect.gen(function* () {
        const sessions = yield* makeNodeSessions(DEFAULT_SESSION_SETTINGS)
        const { nodeId } = yield* sessions.register("a", info)
        yield* TestClock.adjust(ttlMillis - 1)
        expect((yield* sessions.state(nodeId))._tag).toBe("Live")
        yield* TestClock.adjust(1)
        expect(yield* sessions.state(nodeId)).toEqual({ _tag: "NotLive", tenantId: "a", since: ttlMillis })
        expect(yield* sessions.heartbeat("a", nodeId)).toBe(false)
        expect(yield* sessions.live).toEqual([])
      })
  )

  it.effect("a heartbeat with another tenant's session is ok=false and does not extend it", () =>
    Effect.gen(function* () {
      const sessions = yield* makeNodeSessions(DEFAULT_SESSION_SETTINGS)
      const { nodeId } = yield* sessions.register("a", info)
      yield* TestClock.adjust(ttlMillis - 1)
      expect(yield* sessions.heartbeat("b", nodeId)).toBe(false)
      expect(yield* sessions.heartbeat("A", nodeId)).toBe(false)
      yield* TestClock.adjust(1)
      expect((yield* sessions.state(nodeId))._tag).toBe("NotLive")
      expect(yield* sessions.heartbeat("b", "no-such-node")).toBe(false)
    })
  )

  it.effect("a controller restart makes every session not live (unknown ids count from boot)", () =>
    Effect.gen(function* () {
      const before = yield* makeNodeSessions(DEFAULT_SESSION_SETTINGS)
      const { nodeId } = yield* before.register("a", info)
      yield* TestClock.adjust(5_000)
      const after = yield* makeNodeSessions(DEFAULT_SESSION_SETTINGS)
      expect(yield* after.state(nodeId)).toEqual({ _tag: "NotLive", tenantId: undefined, since: 5_000 })
      expect(yield* after.heartbeat("a", nodeId)).toBe(false)
    })
  )

  it.effect("expired sessions are forgotten once the grace period has passed", () =>
    Effect.gen(function* () {
      const sessions = yield* makeNodeSessions(DEFAULT_SESSION_SETTINGS)
      const { nodeId } = yield* sessions.register("a", info)
      yield* TestClock.adjust(ttlMillis + requeueGraceMillis - 1)
      yield* sessions.prune
      expect((yield* sessions.state(nodeId)).tenantId).toBe("a")
      yield* TestClock.adjust(1)
      yield* sessions.prune
      expect((yield* sessions.state(nodeId)).tenantId).toBeUndefined()
    })
  )

  describe("timings from the environment", () => {
    const read = (env: Record<string, string>) =>
      Effect.withConfigProvider(sessionSettings, ConfigProvider.fromMap(new Map(Object.entries(env))))

    it.effect("unset: the defaults; set: the four variables", () =>
      Effect.gen(function* () {
        expect(yield* read({})).toEqual(DEFAULT_SESSION_SETTINGS)
        expect(
          yield* read({
            SVC_NODE_HEARTBEAT_INTERVAL_MS: "200",
            SVC_NODE_SESSION_TTL_MS: "1000",
            SVC_NODE_REQUEUE_GRACE_MS: "0",
            SVC_REQUEUE_SWEEP_INTERVAL_MS: "250"
          })
        ).toEqual({ heartbeatIntervalMillis: 200, ttlMillis: 1_000, requeueGraceMillis: 0, sweepIntervalMillis: 250 })
      })
    )

    it.effect(
      "a TTL not longer than the heartbeat interval, or a value out of range, is refused naming the variable",
      () =>
        Effect.gen(function* () {
          const short = yield* Effect.flip(
            read({ SVC_NODE_HEARTBEAT_INTERVAL_MS: "5000", SVC_NODE_SESSION_TTL_MS: "5000" })
          )
          expect(String(short)).toContain("SVC_NODE_SESSION_TTL_MS")
          expect(String(short)).toContain("SVC_NODE_HEARTBEAT_INTERVAL_MS")
          const negative = yield* Effect.flip(read({ SVC_NODE_REQUEUE_GRACE_MS: "-1" }))
          expect(String(negative)).toContain("SVC_NODE_REQUEUE_GRACE_MS")
        })
    )
  })
})
