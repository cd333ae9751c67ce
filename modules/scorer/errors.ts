/**
 * Typed failures of scoring. The error table (modules/errors/table.ts) maps each tag once to an
 * HTTP status + JSON body and a gRPC status.
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

/**
 * The input does not exist. Only reported where the caller may know it (its roots cover the
 * deepest existing parent); elsewhere the roots refusal is reported instead.
 */
export class InputNotFound extends Data.TaggedError("InputNotFound")<{ readonly path: string }> {
  override get message() {
    return `input "${this.path}" does not exist`
  }
}

/** The input is not a regular file (FIFO, socket, device, directory): never read, refused by kind. */
export class UnsupportedInput extends Data.TaggedError("UnsupportedInput")<{ readonly message: string }> {}

/** The score alone needs more memory than the whole budget (SVC_MAX_SCORE_MEMORY). */
export class ScoreTooLarge extends Data.TaggedError("ScoreTooLarge")<{
  readonly needed: number
  readonly budget: number
}> {
  override get message() {
    return `this score needs about ${formatBytes(this.needed)} of memory, more than the whole budget of ${formatBytes(this.budget)} (SVC_MAX_SCORE_MEMORY); use fewer threads or a smaller input`
  }
}

/** The score fits the budget, but not beside the scores in flight. */
export class ScoreMemoryBusy extends Data.TaggedError("ScoreMemoryBusy")<{
  readonly needed: number
  readonly budget: number
}> {
  override get message() {
    return `scores in flight hold the memory budget (${formatBytes(this.budget)}); this score needs about ${formatBytes(this.needed)}; retry later`
  }
}

/** Bytes in binary units, for messages: `256.0 MiB`. */
export const formatBytes = (bytes: number): string => {
  const units = ["B", "KiB", "MiB", "GiB", "TiB"]
  let value = bytes
  let unit = 0
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024
    unit++
  }
  return unit === 0 ? `${value} B` : `${value.toFixed(1)} ${units[unit]}`
}

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
  | InputNotFound
  | UnsupportedInput
  | ScoreTooLarge
  | ScoreMemoryBusy
  | InvalidGeometry
  | ScorerBusy
  | ScorerInternal
