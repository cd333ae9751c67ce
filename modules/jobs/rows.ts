/** A stored job row as both stores read it, and its decoding into a `Job` (a corrupt row is a typed failure). */
import { Either } from "effect"
import {
  decodePlanAlignment,
  planAlignmentFields,
  decodeRenditionProgress,
  decodeStoredRequest,
  decodeStoredResult,
  encodeRenditionProgress,
  encodeResult,
  JOB_STATES,
  type Job,
  type JobRequest,
  type JobState
} from "./model.ts"
import type { Lease, MemoryNeed, RunningUpdate, SegmentKey } from "./store.ts"

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
  /** JSON of a ladder job's per-rendition progress (SQLite migration 4, PostgreSQL 5); NULL: none. */
  readonly rendition_progress: string | null
  /** SubmitJobRequest.idempotency_key; NULL for a job submitted without one. */
  readonly idempotency_key: string | null
  /** JSON of a sync segment job's plan alignment (SQLite migration 9, PostgreSQL 11); NULL: none. */
  readonly plan_alignment: string | null
}

export const isState = (text: string): text is JobState => (JOB_STATES as ReadonlyArray<string>).includes(text)

/** Jobs whose decoded request `recentRequests` keeps, and the longest request text it keeps. */
const RECENT_REQUESTS = 4096
const MAX_KEPT_REQUEST_LENGTH = 8192

/**
 * Each job's request as last decoded, by job id, with the text it was decoded from. Every call on
 * a job reads its row again (the claim, a report's read and its write), and decoding a pair's
 * request costs about 40 µs; decoding is a pure function of the text, so an unchanged text gives
 * the value kept. Bounded: the oldest entry goes first; long texts are not kept.
 */
const recentRequests = new Map<string, { readonly text: string; readonly request: JobRequest }>()

const requestOf = (id: string, text: string): ReturnType<typeof decodeStoredRequest> => {
  const kept = recentRequests.get(id)
  if (kept !== undefined && kept.text === text) return Either.right(kept.request)
  const decoded = decodeStoredRequest(text)
  if (Either.isRight(decoded) && text.length <= MAX_KEPT_REQUEST_LENGTH) {
    recentRequests.delete(id)
    recentRequests.set(id, { text, request: decoded.right })
    if (recentRequests.size > RECENT_REQUESTS) {
      const [oldest] = recentRequests.keys()
      if (oldest !== undefined) recentRequests.delete(oldest)
    }
  }
  return decoded
}

export const toJob = (row: JobRow): Either.Either<Job, string> => {
  if (!isState(row.state)) return Either.left(`job ${row.id} has unknown state "${row.state}"`)
  const state = row.state
  const request = requestOf(row.id, row.request)
  if (Either.isLeft(request)) return Either.left(`job ${row.id} has an unreadable request: ${request.left.message}`)
  const result = row.result === null ? Either.right(undefined) : decodeStoredResult(row.result)
  if (Either.isLeft(result)) return Either.left(`job ${row.id} has an unreadable result: ${result.left.message}`)
  const progress = decodeRenditionProgress(row.rendition_progress)
  if (Either.isLeft(progress))
    return Either.left(`job ${row.id} has an unreadable rendition progress: ${progress.left}`)
  const planAlignment = decodePlanAlignment(row.plan_alignment)
  if (Either.isLeft(planAlignment))
    return Either.left(`job ${row.id} has an unreadable plan alignment: ${planAlignment.left}`)
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
    renditionProgress: progress.right,
    submittedBy: row.submitted_by ?? undefined,
    segments: [],
    idempotencyKey: row.idempotency_key ?? undefined,
    ...planAlignmentFields(planAlignment.right)
  })
}

/** The parameters of the running-job compare-and-set, numbered 1..11 as both stores' statements use them. */
export type RunningUpdateParams = [
  string,
  string,
  string,
  string,
  string | null,
  number,
  string | null,
  string | null,
  number,
  number,
  string | null
]

export const runningUpdateParams = (
  tenantId: string,
  jobId: string,
  expected: Lease,
  update: RunningUpdate,
  now: number
): RunningUpdateParams => [
  tenantId,
  jobId,
  expected.nodeId,
  update.nodeId,
  update.result === undefined ? null : encodeResult(update.result),
  update.framesDone,
  update.outcome?.state ?? null,
  update.outcome?.error ?? null,
  now,
  expected.fence,
  encodeRenditionProgress(update.renditionProgress)
]

/**
 * SQL (SQLite and PostgreSQL alike) true for a pending job the puller may take: its memory need
 * is unknown, fits the puller's free memory, or exceeds the puller's whole budget (the node
 * fails it with the reason); any job when the puller's free memory is unknown (0).
 * `free` and `budget` are the statement's placeholders for PullerMemory's two numbers.
 */
export const fitsPuller = (need: string, free: string, budget: string): string =>
  `(${free} <= 0 OR ${need} IS NULL OR ${need} <= ${free} OR (${budget} > 0 AND ${need} > ${budget}))`

/** `fitsPuller` in TypeScript: a unit of recorded need `need` (null: unknown) may go to the puller. */
export const fits = (need: number | null, free: number, budget: number): boolean =>
  free <= 0 || need === null || need <= free || (budget > 0 && need > budget)

/**
 * The puller's free memory after a unit of need `need` was claimed for it: one claim of several
 * units counts the known needs of those before (never below 1, which would read as unknown). An
 * unknown need, or one beyond the whole budget (the node fails it at once), takes nothing.
 */
export const freeAfter = (free: number, need: number | null, budget: number): number =>
  free <= 0 || need === null || (budget > 0 && need > budget) ? free : Math.max(1, free - need)

/** Whole jobs' memory needs as the JSON object `{job id: bytes}` the stores' re-queue reads (unknown needs left out). */
export const needsJson = (needs: ReadonlyArray<MemoryNeed>): string =>
  JSON.stringify(
    Object.fromEntries(
      needs.filter((need) => need.bytes > 0 && need.segment === undefined).map((need) => [need.jobId, need.bytes])
    )
  )

/** A segment as the stores' re-queue names it in JSON: "<job id>#<index>" (a job id holds no "#"). */
const segmentName = (jobId: string, index: number) => `${jobId}#${index}`

/** Segments' memory needs as the JSON object `{"<job id>#<index>": bytes}` (unknown needs left out). */
export const segmentNeedsJson = (needs: ReadonlyArray<MemoryNeed>): string =>
  JSON.stringify(
    Object.fromEntries(
      needs.flatMap((need) =>
        need.bytes > 0 && need.segment !== undefined ? [[segmentName(need.jobId, need.segment), need.bytes]] : []
      )
    )
  )

/** Segments a node lists, as the JSON array of "<job id>#<index>" the stores' re-queue reads. */
export const segmentKeysJson = (segments: ReadonlyArray<SegmentKey>): string =>
  JSON.stringify(segments.map((segment) => segmentName(segment.jobId, segment.index)))
