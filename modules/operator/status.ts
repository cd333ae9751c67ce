/**
 * SvcJob and SvcNode status from the controller's messages (svc.v1.Job, svc.v1.NodeSession), as
 * plain data: what `kubectl get svcjobs` shows. Kept free of I/O so the mapping is tested alone.
 */
import type { Job, JobSegment, NodeSession, ScoreResponse, Timestamp } from "../transport/grpc/svc-v1.ts"

export const API_GROUP = "svc.dev"
export const API_VERSION = `${API_GROUP}/v1`
/** Held on every SvcJob the operator submitted, until the controller job is cancelled or final. */
export const FINALIZER = "svc.dev/cancel-controller-job"

export type Phase = "Pending" | "Running" | "Finished" | "Failed" | "Cancelled"
export const FINAL_PHASES: ReadonlySet<string> = new Set(["Finished", "Failed", "Cancelled"])

const PHASE_OF_STATE: Readonly<Record<string, Phase>> = {
  JOB_STATE_PENDING: "Pending",
  JOB_STATE_RUNNING: "Running",
  JOB_STATE_FINISHED: "Finished",
  JOB_STATE_FAILED: "Failed",
  JOB_STATE_CANCELLED: "Cancelled"
}

/** Order of the phases: a SvcJob's phase only moves forward. */
export const PHASE_RANK: Readonly<Record<Phase, number>> = {
  Pending: 0,
  Running: 1,
  Finished: 2,
  Failed: 2,
  Cancelled: 2
}

export const phaseOfJob = (job: Pick<WireJob, "state">): Phase => PHASE_OF_STATE[job.state] ?? "Pending"

export interface Condition {
  readonly type: string
  readonly status: "True" | "False" | "Unknown"
  readonly reason: string
  readonly message: string
  readonly lastTransitionTime: string
  readonly observedGeneration?: number
}

export interface JobStatus {
  readonly phase?: Phase
  readonly jobId?: string
  readonly nodeId?: string
  readonly framesDone?: number
  readonly frameCount?: number
  readonly score?: number
  readonly features?: Readonly<Record<string, number>>
  readonly scores?: Readonly<Record<string, number>>
  readonly error?: string
  /** A segment job's segments: how many, finished, running, and on how many nodes (not each one: bounded). */
  readonly segments?: SegmentsStatus
  readonly startedAt?: string
  readonly finishedAt?: string
  readonly observedGeneration?: number
  readonly conditions?: ReadonlyArray<Condition>
}

export interface SegmentsStatus {
  readonly total: number
  readonly finished: number
  readonly running: number
  readonly nodes: number
}

/** svc.v1.Job as proto-loader hands it over (field names kept, enums as names). */
/** The fields of a controller job (svc.v1.Job) a SvcJob's status is made of. */
export type WireJob = Pick<
  Job,
  "id" | "state" | "idempotency_key" | "node_id" | "frames_done" | "error" | "started_at" | "finished_at"
> & {
  readonly result: Pick<ScoreResponse, "score" | "features" | "scores" | "frame_count"> | null
  readonly segments: ReadonlyArray<Pick<JobSegment, "state" | "node_id">>
}

/** The summary of a segment job's segments; undefined for a job in one piece. */
const segmentsOf = (job: WireJob): SegmentsStatus | undefined => {
  const segments = job.segments
  if (segments.length === 0) return undefined
  return {
    total: segments.length,
    finished: segments.filter((segment) => segment.state === "JOB_STATE_FINISHED").length,
    running: segments.filter((segment) => segment.state === "JOB_STATE_RUNNING").length,
    nodes: new Set(segments.map((segment) => segment.node_id).filter((id) => id !== "")).size
  }
}

export const isoTime = (stamp: Timestamp | null | undefined): string | undefined =>
  stamp === null || stamp === undefined || Number(stamp.seconds) === 0
    ? undefined
    : new Date(Number(stamp.seconds) * 1000 + Math.floor(stamp.nanos / 1_000_000)).toISOString()

/** Kubernetes JSON has no NaN or infinity: non-finite pooled values are left out. */
const finite = (values: Readonly<Record<string, number>> | undefined): Record<string, number> | undefined => {
  if (values === undefined) return undefined
  const kept = Object.entries(values).filter(([, value]) => Number.isFinite(value))
  return kept.length === 0 ? undefined : Object.fromEntries(kept)
}

/** Longest error or condition message written (the CRDs' maxLength). */
export const MAX_MESSAGE_LENGTH = 4096

/** A text cut to `max` characters (the CRDs bound every string; a longer write would be refused). */
export const clip = (text: string, max: number): string => (text.length > max ? `${text.slice(0, max - 1)}…` : text)

/** Sets a condition, keeping its transition time while its status does not change. */
export const withCondition = (
  conditions: ReadonlyArray<Condition> | undefined,
  next: Omit<Condition, "lastTransitionTime">,
  now: string
): ReadonlyArray<Condition> => {
  const previous = (conditions ?? []).find((condition) => condition.type === next.type)
  const lastTransitionTime =
    previous !== undefined && previous.status === next.status ? previous.lastTransitionTime : now
  return [
    ...(conditions ?? []).filter((condition) => condition.type !== next.type),
    { ...next, message: clip(next.message, MAX_MESSAGE_LENGTH), lastTransitionTime }
  ]
}

const compact = <T extends object>(value: T): T =>
  Object.fromEntries(Object.entries(value).filter(([, entry]) => entry !== undefined && entry !== "")) as T

/** The status a controller job gives its SvcJob. */
export const statusOfJob = (
  job: WireJob,
  previous: JobStatus | undefined,
  generation: number | undefined,
  now: string
): JobStatus => {
  const phase = phaseOfJob(job)
  const final = FINAL_PHASES.has(phase)
  const finished = phase === "Finished" && job.result !== null
  let conditions = withCondition(
    previous?.conditions,
    { type: "Submitted", status: "True", reason: "Accepted", message: `controller job ${job.id}` },
    now
  )
  conditions = withCondition(
    conditions,
    final
      ? { type: "Complete", status: "True", reason: phase, message: job.error || `the job is ${phase.toLowerCase()}` }
      : { type: "Complete", status: "False", reason: phase, message: `the job is ${phase.toLowerCase()}` },
    now
  )
  return compact({
    phase,
    jobId: job.id,
    nodeId: job.node_id,
    framesDone: job.frames_done,
    frameCount: finished ? job.result?.frame_count : undefined,
    score: finished && Number.isFinite(job.result?.score) ? job.result?.score : undefined,
    features: finished ? finite(job.result?.features) : undefined,
    scores: finished ? finite(job.result?.scores) : undefined,
    error: clip(job.error, MAX_MESSAGE_LENGTH),
    segments: segmentsOf(job),
    startedAt: isoTime(job.started_at),
    finishedAt: isoTime(job.finished_at),
    observedGeneration: generation,
    conditions
  })
}

/** The status of a SvcJob the controller refused at submission (for example a reader-only token). */
export const refusedStatus = (
  previous: JobStatus | undefined,
  generation: number | undefined,
  reason: string,
  message: string,
  now: string
): JobStatus => ({
  phase: "Failed",
  error: clip(message, MAX_MESSAGE_LENGTH),
  observedGeneration: generation,
  conditions: withCondition(
    withCondition(previous?.conditions, { type: "Submitted", status: "False", reason, message }, now),
    { type: "Complete", status: "True", reason: "Failed", message },
    now
  )
})

export interface NodeStatus {
  readonly nodeId: string
  readonly name: string
  readonly version?: string
  readonly slots: number
  readonly lastHeartbeat?: string
  readonly runningJobs: ReadonlyArray<string>
  readonly conditions: ReadonlyArray<Condition>
}

/** Ready is False once the last heartbeat is older than the session TTL (or the session ended). */
export const statusOfNode = (node: NodeSession, previous: NodeStatus | undefined, nowMillis: number): NodeStatus => {
  const lastHeartbeat = isoTime(node.last_heartbeat)
  const age = lastHeartbeat === undefined ? Number.POSITIVE_INFINITY : nowMillis - Date.parse(lastHeartbeat)
  const ready = node.live && age < node.session_ttl_ms
  const seconds = Number.isFinite(age) ? `${Math.round(age / 1000)} s` : "ever"
  return compact({
    nodeId: node.node_id,
    name: clip(node.name, 253),
    version: clip(node.version, 64),
    slots: node.slots,
    lastHeartbeat,
    runningJobs: node.running_job_ids.slice(0, 1024),
    conditions: withCondition(
      previous?.conditions,
      ready
        ? { type: "Ready", status: "True", reason: "HeartbeatsArriving", message: `last heartbeat ${seconds} ago` }
        : {
            type: "Ready",
            status: "False",
            reason: "HeartbeatStale",
            message: `no heartbeat for ${seconds} (session TTL ${node.session_ttl_ms} ms)`
          },
      new Date(nowMillis).toISOString()
    )
  })
}

/** A node name in DNS-1123 characters, whole. */
const dnsCharacters = (nodeName: string): string =>
  nodeName
    .toLowerCase()
    .replace(/[^a-z0-9-.]+/g, "-")
    .replace(/^[^a-z0-9]+|[^a-z0-9]+$/g, "") || "node"

/** A DNS-1123 name for a node name (SvcNode metadata.name). */
export const resourceNameOf = (nodeName: string): string => dnsCharacters(nodeName).slice(0, 253)

/** FNV-1a of a text, 8 hex digits: a short, stable suffix that keeps truncated names apart. */
export const shortHash = (text: string): string => {
  let hash = 0x811c9dc5
  for (const byte of new TextEncoder().encode(text)) hash = Math.imul(hash ^ byte, 0x01000193) >>> 0
  return hash.toString(16).padStart(8, "0")
}

/**
 * The SvcNode name of one tenant namespace's node: `<namespace>.<node>`, every tenant's nodes
 * side by side in the operator's namespace. A name over 253 characters is cut and given a hash
 * of the whole, so two long names never meet.
 */
export const svcNodeNameOf = (namespace: string, nodeName: string): string => {
  const full = `${namespace}.${dnsCharacters(nodeName)}`
  if (full.length <= 253) return full
  return `${full.slice(0, 244).replace(/[^a-z0-9]+$/, "")}-${shortHash(full)}`
}
