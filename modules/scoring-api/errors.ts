/**
 * Failures of the scoring surface that are not the scorer's own (modules/scorer/errors.ts).
 * The error table (modules/errors/table.ts) maps each tag to its HTTP and gRPC status.
 */
import { Data } from "effect"

/** The request body is over the limit; the rest of it is not read. */
export class BodyTooLarge extends Data.TaggedError("BodyTooLarge")<{ readonly limit: number }> {
  override get message() {
    return `request body larger than ${this.limit} bytes`
  }
}

/** The scorer has not finished initialising, or failed to (the reason is in the log and /v1/ready). */
export class ScorerNotReady extends Data.TaggedError("ScorerNotReady")<{ readonly reason: string }> {
  override get message() {
    return `scorer not ready: ${this.reason}`
  }
}

/** One tenant holds every score slot it may (SVC_TENANT_MAX_CONCURRENT_SCORES); others still score. */
export class TenantScoresBusy extends Data.TaggedError("TenantScoresBusy")<{ readonly limit: number }> {
  override get message() {
    return `this tenant has ${this.limit} scores in flight, its limit (SVC_TENANT_MAX_CONCURRENT_SCORES); retry later`
  }
}

/** The request body is not JSON (its content-type says otherwise). */
export class UnsupportedMediaType extends Data.TaggedError("UnsupportedMediaType")<{ readonly contentType: string }> {
  override get message() {
    return `the request body must be application/json, not "${this.contentType}"`
  }
}
