/**
 * Typed failures of the job domain. `JobNotFound` and `InvalidJobRequest` are mapped by tag in
 * the error table (modules/errors/table.ts); refusals reuse `PermissionDenied` of modules/policy/errors.ts so
 * their messages stay the fixed texts of seed 000, section 7.
 */
import { Data } from "effect"

/** No job of the caller's tenant has this id (another tenant's job is PermissionDenied instead). */
export class JobNotFound extends Data.TaggedError("JobNotFound")<{ readonly jobId: string }> {
  override get message() {
    return `job "${this.jobId}" not found`
  }
}

/** A job call the contract does not allow (empty tenant, out-of-range count, empty final report). */
export class InvalidJobRequest extends Data.TaggedError("InvalidJobRequest")<{ readonly message: string }> {}

/** The node session named by a call is unknown to this controller or expired: register again. */
export class NodeSessionNotLive extends Data.TaggedError("NodeSessionNotLive")<{ readonly nodeId: string }> {
  override get message() {
    return `node session "${this.nodeId}" is not live; register again`
  }
}

/** The store failed (I/O, lock timeout, corrupt row). Callers see "internal error"; the log has `detail`. */
export class JobStoreFailure extends Data.TaggedError("JobStoreFailure")<{
  readonly operation: string
  readonly detail: string
}> {
  override get message() {
    return `job store ${this.operation} failed: ${this.detail}`
  }
}

/**
 * The store's database cannot be reached (PostgreSQL down, connection lost mid-call). Callers see
 * UNAVAILABLE / 503 with this message; nothing was acknowledged, so the caller may retry.
 */
export class JobStoreUnavailable extends Data.TaggedError("JobStoreUnavailable")<{
  readonly operation: string
  readonly detail: string
}> {
  override get message() {
    return `job store unavailable: ${this.detail}; retry later`
  }
}

/** Any failure of a store call. */
export type JobStoreError = JobStoreFailure | JobStoreUnavailable

/** The store cannot be opened or migrated: the controller does not start. Names the variable (SVC_STORE_PATH or SVC_STORE_URL). */
export class JobStoreStartupError extends Data.TaggedError("JobStoreStartupError")<{ readonly message: string }> {}
