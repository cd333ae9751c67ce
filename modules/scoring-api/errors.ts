/**
 * Failures of the scoring surface that are not the scorer's own (modules/scorer/errors.ts).
 * modules/transport/errors.ts maps each tag to its HTTP and gRPC status.
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
