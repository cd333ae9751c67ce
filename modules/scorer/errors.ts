/**
 * Typed failures of scoring. The transports map each tag once (modules/transport/errors.ts)
 * to an HTTP status + JSON body and a gRPC status.
 */
import { Data } from "effect"

/** The request breaks the contract: missing field, unknown field, refused option value. */
export class InvalidScoreRequest extends Data.TaggedError("InvalidScoreRequest")<{ readonly message: string }> {}

/** No model file of that name in SVC_MODEL_DIR, or the file is not a usable model. */
export class UnknownModel extends Data.TaggedError("UnknownModel")<{
  readonly model: string
  readonly message: string
}> {}

/** An input cannot be opened or read. */
export class UnreadableInput extends Data.TaggedError("UnreadableInput")<{ readonly message: string }> {}

/** Geometry that does not fit the file, truncated input, mismatched pair. */
export class InvalidGeometry extends Data.TaggedError("InvalidGeometry")<{ readonly message: string }> {}

/** Every score slot is busy (SVC_MAX_CONCURRENT_SCORES). */
export class ScorerBusy extends Data.TaggedError("ScorerBusy")<{ readonly limit: number }> {
  override get message() {
    return `too many scores in flight (limit ${this.limit}); retry later`
  }
}

/** A failure inside the scorer; the caller sees a generic message, the log has the detail. */
export class ScorerInternal extends Data.TaggedError("ScorerInternal")<{ readonly detail: string }> {
  override get message() {
    return "internal scoring error"
  }
}

export type ScoreError =
  | InvalidScoreRequest
  | UnknownModel
  | UnreadableInput
  | InvalidGeometry
  | ScorerBusy
  | ScorerInternal
