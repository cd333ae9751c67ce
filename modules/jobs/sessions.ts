/**
 * Node sessions: the port, and the in-memory implementation the SQLite controller uses (the
 * PostgreSQL one keeps them in the shared database: postgres/sessions.ts). In memory: A session belongs to the tenant of the principal that called
 * RegisterNode; it is live while heartbeats arrive within the TTL. Nothing survives a controller
 * restart, which is exactly the contract's "a restart makes every session not live": jobs still
 * assigned to pre-restart node ids then count as orphaned from the controller's boot time.
 * (Several controller replicas would need sessions in the shared database instead.)
 * Time comes from Effect `Clock`, so tests drive it with `TestClock`.
 */
import { Clock, Context, Effect, Layer, Ref } from "effect"
import type { JobStoreError } from "./errors.ts"

export interface SessionSettings {
  /** How often a node should heartbeat (RegisterNodeResponse.heartbeat_interval_ms). */
  readonly heartbeatIntervalMillis: number
  /** A session without a heartbeat for this long is no longer live (session_ttl_ms). */
  readonly ttlMillis: number
  /** Running jobs of a session that stopped being live are re-queued this long after it did. */
  readonly requeueGraceMillis: number
  /** How often the re-queue sweep runs. */
  readonly sweepIntervalMillis: number
}

/**
 * 10 s heartbeats with a 30 s TTL tolerate two lost heartbeats. The 60 s grace (2 × TTL) gives a
 * restarted node time to register again and report what it finished before its jobs run twice.
 */
export const DEFAULT_SESSION_SETTINGS: SessionSettings = {
  heartbeatIntervalMillis: 10_000,
  ttlMillis: 30_000,
  requeueGraceMillis: 60_000,
  sweepIntervalMillis: 10_000
}

export interface NodeInfo {
  /** Stable host name of the node (for operators). */
  readonly name: string
  readonly slots: number
  readonly version: string
  /** The node scores segments and plans segment jobs (RegisterNode scores_segments). */
  readonly scoresSegments?: boolean | undefined
}

export interface Registration {
  readonly nodeId: string
  readonly heartbeatIntervalMillis: number
  readonly sessionTtlMillis: number
}

/**
 * A node id as this controller sees it. `NotLive.tenantId` is undefined for an id it never
 * registered (for example one from before a restart); `since` is when it stopped being live
 * (expiry, or this controller's boot for unknown ids).
 */
/** A live session, for operators and the live-nodes gauge. */
export interface LiveSession extends NodeInfo {
  readonly nodeId: string
  readonly tenantId: string
}

/** A session of the tenant as ListNodes shows it, live or not yet pruned. */
export interface SessionView extends LiveSession {
  readonly lastHeartbeat: number
  readonly live: boolean
}

export type SessionState =
  /** `scoresSegments`: the node declared at registration that it scores segments. */
  | { readonly _tag: "Live"; readonly tenantId: string; readonly scoresSegments: boolean }
  | { readonly _tag: "NotLive"; readonly tenantId: string | undefined; readonly since: number }

export interface NodeSessionsShape {
  readonly settings: SessionSettings
  readonly register: (tenantId: string, info: NodeInfo) => Effect.Effect<Registration, JobStoreError>
  /** Extends a live session of this tenant; false for an unknown, expired or other tenant's one. */
  readonly heartbeat: (tenantId: string, nodeId: string) => Effect.Effect<boolean, JobStoreError>
  readonly state: (nodeId: string) => Effect.Effect<SessionState, JobStoreError>
  readonly live: Effect.Effect<ReadonlyArray<LiveSession>, JobStoreError>
  /** The tenant's sessions not yet pruned, live or not (ListNodes). */
  readonly ofTenant: (tenantId: string) => Effect.Effect<ReadonlyArray<SessionView>, JobStoreError>
  /** Forgets sessions that stopped being live more than the grace period ago. */
  readonly prune: Effect.Effect<void, JobStoreError>
}

export class NodeSessions extends Context.Tag("svc/jobs/NodeSessions")<NodeSessions, NodeSessionsShape>() {}

interface Session {
  readonly tenantId: string
  readonly info: NodeInfo
  readonly lastHeartbeat: number
}

export const makeNodeSessions = (settings: SessionSettings): Effect.Effect<NodeSessionsShape> =>
  Effect.gen(function* () {
    const bootTime = yield* Clock.currentTimeMillis
    const sessions = yield* Ref.make(new Map<string, Session>())
    const expiry = (session: Session) => session.lastHeartbeat + settings.ttlMillis
    const isLive = (session: Session, now: number) => now < expiry(session)

    return {
      settings,
      register: (tenantId, info) =>
        Effect.gen(function* () {
          const now = yield* Clock.currentTimeMillis
          const nodeId = crypto.randomUUID()
          yield* Ref.update(sessions, (map) => new Map(map).set(nodeId, { tenantId, info, lastHeartbeat: now }))
          return {
            nodeId,
            heartbeatIntervalMillis: settings.heartbeatIntervalMillis,
            sessionTtlMillis: settings.ttlMillis
          }
        }),

      heartbeat: (tenantId, nodeId) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) =>
          Ref.modify(sessions, (map) => {
            const session = map.get(nodeId)
            // An expired session is not revived: its jobs may already be re-queued, so the node registers again.
            if (session === undefined || session.tenantId !== tenantId || !isLive(session, now)) return [false, map]
            return [true, new Map(map).set(nodeId, { ...session, lastHeartbeat: now })]
          })
        ),

      state: (nodeId) =>
        Effect.gen(function* () {
          const now = yield* Clock.currentTimeMillis
          const session = (yield* Ref.get(sessions)).get(nodeId)
          if (session === undefined) return { _tag: "NotLive", tenantId: undefined, since: bootTime }
          return isLive(session, now)
            ? { _tag: "Live", tenantId: session.tenantId, scoresSegments: session.info.scoresSegments === true }
            : { _tag: "NotLive", tenantId: session.tenantId, since: expiry(session) }
        }),

      live: Effect.flatMap(Clock.currentTimeMillis, (now) =>
        Effect.map(Ref.get(sessions), (map) =>
          [...map].flatMap(([nodeId, session]) =>
            isLive(session, now) ? [{ nodeId, tenantId: session.tenantId, ...session.info }] : []
          )
        )
      ),

      ofTenant: (tenantId) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) =>
          Effect.map(Ref.get(sessions), (map) =>
            [...map].flatMap(([nodeId, session]) =>
              session.tenantId === tenantId && tenantId !== ""
                ? [
                    {
                      nodeId,
                      tenantId,
                      ...session.info,
                      lastHeartbeat: session.lastHeartbeat,
                      live: isLive(session, now)
                    }
                  ]
                : []
            )
          )
        ),

      prune: Effect.flatMap(Clock.currentTimeMillis, (now) =>
        Ref.update(
          sessions,
          (map) => new Map([...map].filter(([, session]) => now < expiry(session) + settings.requeueGraceMillis))
        )
      )
    }
  })

export const nodeSessionsLayer = (settings: SessionSettings = DEFAULT_SESSION_SETTINGS): Layer.Layer<NodeSessions> =>
  Layer.effect(NodeSessions, makeNodeSessions(settings))
