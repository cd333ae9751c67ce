/**
 * A stored segment row as both stores read it, and what a segment transaction decided: one
 * decoding and one outcome rule for the SQLite and PostgreSQL segment stores.
 */
import { Effect } from "effect"
import type { PermissionDenied } from "../policy/errors.ts"
import { type InvalidJobRequest, JobStoreFailure } from "./errors.ts"
import type { Job, JobSegment } from "./model.ts"
import { isState } from "./rows.ts"

export const SEGMENT_COLUMNS =
  "job_id, idx, first_frame, frame_count, state, node_id, fence, attempts, claimed_at, frames_done, result, error"

export type SegmentRow = {
  readonly job_id: string
  readonly idx: number
  readonly first_frame: number
  readonly frame_count: number
  readonly state: string
  readonly node_id: string | null
  readonly fence: number
  readonly attempts: number
  readonly claimed_at: number | null
  readonly frames_done: number
  readonly result: string | null
  readonly error: string | null
}

/** A segment row as either store returns it (PostgreSQL's BIGINTs arrive as strings, hence Number). */
export const toSegment = (row: Readonly<Record<string, unknown>>): JobSegment => {
  const state = String(row["state"])
  return {
    index: Number(row["idx"]),
    firstFrame: Number(row["first_frame"]),
    frameCount: Number(row["frame_count"]),
    state: isState(state) ? state : "failed",
    nodeId: row["node_id"] === null || row["node_id"] === undefined ? undefined : String(row["node_id"]),
    fence: Number(row["fence"]),
    attempts: Number(row["attempts"]),
    framesDone: Number(row["frames_done"])
  }
}

/** What a segment operation's transaction did, carried out of it. */
export type SegmentStep =
  | { readonly _tag: "Corrupt"; readonly detail: string }
  | { readonly _tag: "Refused"; readonly error: PermissionDenied | InvalidJobRequest }
  | { readonly _tag: "Unchanged"; readonly jobId: string }
  | { readonly _tag: "Written"; readonly jobId: string }

/** The outcome of a transaction as the committed job, read again; `onWritten` sees a written one. */
export const segmentOutcome =
  <E>(
    readJob: (tenantId: string, jobId: string) => Effect.Effect<Job | undefined, E>,
    onWritten: (job: Job) => Effect.Effect<unknown>
  ) =>
  (tenantId: string, operation: string, step: SegmentStep) =>
    Effect.gen(function* () {
      switch (step._tag) {
        case "Corrupt":
          return yield* new JobStoreFailure({ operation, detail: step.detail })
        case "Refused":
          return yield* step.error
      }
      const job = yield* readJob(tenantId, step.jobId)
      if (job === undefined) return yield* new JobStoreFailure({ operation, detail: "the job vanished" })
      if (step._tag === "Written") yield* onWritten(job)
      return { job, written: step._tag === "Written" }
    })
