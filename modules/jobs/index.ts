/**
 * The controller's job domain (no transport). The controller provides `JobServiceLive` with
 * `TenantRoots`, `JobModels` and `JobMetricsHooks`; gRPC handlers call `JobService` methods with the caller's
 * `Principal`.
 */
import { Layer } from "effect"
import { jobBackendLive } from "./backend.ts"
import { jobServiceLayer } from "./service.ts"

export * from "./backend.ts"
export * from "./config.ts"
export * from "./errors.ts"
export * from "./model.ts"
export * from "./service.ts"
export * from "./sessions.ts"
export * from "./sqlite-store.ts"
export * from "./store.ts"

/**
 * JobService on PostgreSQL (SVC_STORE_URL, sessions in the database) or on the SQLite store at
 * SVC_STORE_PATH with in-memory node sessions; session timings from the environment.
 */
export const JobServiceLive = jobServiceLayer.pipe(Layer.provide(jobBackendLive()))
