/**
 * The controller's job domain (no transport). The controller provides `JobServiceLive` with
 * `TenantRoots` and `JobMetricsHooks`; gRPC handlers call `JobService` methods with the caller's
 * `Principal`.
 */
import { Layer } from "effect"
import { jobServiceLayer } from "./service.ts"
import { nodeSessionsLayer } from "./sessions.ts"
import { SqliteJobStoreLive } from "./sqlite-store.ts"

export * from "./config.ts"
export * from "./errors.ts"
export * from "./model.ts"
export * from "./service.ts"
export * from "./sessions.ts"
export * from "./sqlite-store.ts"
export * from "./store.ts"

/** JobService on the SQLite store at SVC_STORE_PATH with in-memory node sessions (default timings). */
export const JobServiceLive = jobServiceLayer.pipe(Layer.provide(Layer.merge(SqliteJobStoreLive, nodeSessionsLayer())))
