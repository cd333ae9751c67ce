/** A stored job row as both stores read it, and its decoding into a `Job` (a corrupt row is a typed failure). */
import { Either } from "effect"
import { decodeStoredRequest, decodeStoredResult, JOB_STATES, type Job, type JobState } from "./model.ts"

export interface JobRow {
  readonly seq: number
  readonly id: string
  readonly tenant_id: string
  readonly state: string
  readonly request: string
  readonly created_at: number
  readonly started_at: number | null
  readonly finished_at: number | null
  readonly node_id: string | null
  readonly result: string | null
  readonly error: string | null
  readonly frames_done: number
  readonly submitted_by: string | null
  readonly fence: number
}

export const isState = (text: string): text is JobState => (JOB_STATES as ReadonlyArray<string>).includes(text)

export const toJob = (row: JobRow): Either.Either<Job, string> => {
  if (!isState(row.state)) return Either.left(`job ${row.id} has unknown state "${row.state}"`)
  const state = row.state
  const request = decodeStoredRequest(row.request)
  if (Either.isLeft(request)) return Either.left(`job ${row.id} has an unreadable request: ${request.left.message}`)
  const result = row.result === null ? Either.right(undefined) : decodeStoredResult(row.result)
  if (Either.isLeft(result)) return Either.left(`job ${row.id} has an unreadable result: ${result.left.message}`)
  return Either.right({
    id: row.id,
    tenantId: row.tenant_id,
    state,
    request: request.right,
    createdAt: row.created_at,
    startedAt: row.started_at ?? undefined,
    finishedAt: row.finished_at ?? undefined,
    nodeId: row.node_id ?? undefined,
    fence: row.fence,
    result: result.right,
    error: row.error ?? undefined,
    framesDone: row.frames_done,
    submittedBy: row.submitted_by ?? undefined
  })
}
