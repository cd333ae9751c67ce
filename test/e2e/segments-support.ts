/**
 * What the segment e2e files share: the job as GetJob shows it, the compiled node's id, and every
 * value of a result as the bits of its double (a split job must equal the job unsplit bit for bit).
 */
import type { RunningService } from "../../local/executables.ts"
import { type ControllerClient, jobInState } from "./controller-support.ts"

/** Auth is disabled in these files: the token is sent but not checked. */
export const token = "unused-in-disabled-mode"

export interface Segment {
  readonly index: number
  readonly first_frame: number
  readonly frame_count: number
  readonly state: string
  readonly node_id: string
  readonly attempts: number
}

export interface JobView {
  readonly id: string
  readonly state: string
  readonly frames_done: number
  readonly error: string
  readonly segments: ReadonlyArray<Segment>
  readonly result: {
    readonly score: number
    readonly frame_count: number
    readonly features: Record<string, number>
    readonly pooled: Record<string, Record<string, number>>
    readonly frames: ReadonlyArray<{ readonly frame: number; readonly metrics: Record<string, number> }>
  }
}

/** The job once finished. */
export const finishedJob = async (client: ControllerClient, id: string, timeoutMs = 240_000): Promise<JobView> =>
  (await jobInState(client, id, token, "JOB_STATE_FINISHED", timeoutMs)) as unknown as JobView

/** The node id the controller gave a compiled svc-node (its "registered" log line). */
export const nodeIdOf = (node: RunningService) =>
  String(node.logs.find((line) => line.message === "registered")?.annotations.node_id ?? "")

/** Every per-frame value and pooled value as the bits of its double. */
export const bits = (job: JobView) => {
  const hex = (value: number) => Buffer.from(Float64Array.of(value).buffer).toString("hex")
  const map = (values: Record<string, number>) =>
    Object.fromEntries(Object.entries(values).map(([k, v]) => [k, hex(v)]))
  return {
    frames: job.result.frames.map((frame) => ({ frame: frame.frame, metrics: map(frame.metrics) })),
    features: map(job.result.features),
    pooled: Object.fromEntries(Object.entries(job.result.pooled).map(([k, v]) => [k, map(v)]))
  }
}
