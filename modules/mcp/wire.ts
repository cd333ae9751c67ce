/** The controller's messages as grpc-js decodes them (proto field names, enums as names). */
import type { PercentileName } from "../scorer/pooling.ts"

export type WireJobState =
  | "JOB_STATE_UNSPECIFIED"
  | "JOB_STATE_PENDING"
  | "JOB_STATE_RUNNING"
  | "JOB_STATE_FINISHED"
  | "JOB_STATE_CANCELLED"
  | "JOB_STATE_FAILED"

export interface WireTimestamp {
  readonly seconds: number
  readonly nanos: number
}

export interface WireScoreOptions {
  readonly width?: number
  readonly height?: number
  readonly pixel_format?: string
  readonly bitdepth?: number
  readonly backend?: string
  readonly threads?: number
  readonly features?: ReadonlyArray<string>
  readonly subsample?: number
  readonly frame_cnt?: number
  readonly frame_skip_ref?: number
  readonly frame_skip_dist?: number
  readonly precision?: string
  readonly per_frame?: boolean
  /** Jobs: frames per segment (0: one piece). */
  readonly segment_frames?: number
  readonly shots?: boolean
  readonly shot_threshold?: number
  readonly shot_min_frames?: number
}

export interface WireScoreRequest {
  readonly reference: string
  readonly distorted: string
  readonly model: string
  readonly options: WireScoreOptions | null
}

export interface WireFrameScore {
  readonly frame: number
  readonly metrics: Readonly<Record<string, number>>
}

export interface WireScoreResponse {
  readonly score: number
  readonly features: Readonly<Record<string, number>>
  readonly provenance: {
    readonly library: { readonly version: string; readonly active_backend: string } | null
    readonly model: string
    readonly model_sha256: string
    readonly backend_used: string
    readonly precision: string
  } | null
  readonly frames: ReadonlyArray<WireFrameScore>
  readonly frame_count: number
  readonly pooled:
    | ({
        readonly min: Readonly<Record<string, number>>
        readonly max: Readonly<Record<string, number>>
        readonly harmonic_mean: Readonly<Record<string, number>>
      } & { readonly [name in PercentileName]?: Readonly<Record<string, number>> })
    | null
  /** options.shots: the reference's shots (empty without it) and the worst ones' indices. */
  readonly shots?: ReadonlyArray<WireShot>
  readonly worst_shots?: ReadonlyArray<number>
}

export interface WireShot {
  readonly first_frame: number
  readonly frame_count: number
  readonly score: number
  readonly harmonic_mean: number
  readonly min: number
  readonly p5: number
  readonly worst_frame: number
}

export interface WireRenditionOptions {
  readonly width?: number
  readonly height?: number
  readonly pixel_format?: string
  readonly bitdepth?: number
  readonly scale?: string
  readonly frame_skip_dist?: number
}

export interface WireLadderRequest {
  readonly reference: string
  readonly renditions: ReadonlyArray<{
    readonly label: string
    readonly distorted: string
    readonly options: WireRenditionOptions | null
  }>
  readonly model: string
  readonly options: WireScoreOptions | null
}

export interface WireRenditionSummary {
  readonly p1: number
  readonly p5: number
  readonly worst_frames: ReadonlyArray<{ readonly frame: number; readonly score: number }>
  readonly width: number
  readonly height: number
  readonly codec: string
  readonly bitrate_bps: number
  readonly duration_s: number
  readonly on_hull: boolean
}

export interface WireRenditionResult extends WireScoreResponse {
  readonly label: string
  readonly summary: WireRenditionSummary | null
}

export interface WireLadderResponse {
  readonly renditions: ReadonlyArray<WireRenditionResult>
  readonly provenance: {
    readonly reference_passes: number
    readonly reference_decoders: number
    readonly reference_frames: number
    readonly model: string
    readonly model_sha256: string
  } | null
}

export interface WireJob {
  readonly id: string
  readonly tenant_id: string
  readonly state: WireJobState
  readonly request: WireScoreRequest | null
  readonly created_at: WireTimestamp | null
  readonly started_at: WireTimestamp | null
  readonly finished_at: WireTimestamp | null
  readonly node_id: string
  readonly result: WireScoreResponse | null
  /** A ladder job: its request and result (request and result are then null). */
  readonly ladder?: WireLadderRequest | null
  readonly ladder_result?: WireLadderResponse | null
  readonly error: string
  readonly frames_done: number
  /** A ladder job's frames scored per rendition (absent from an older controller). */
  readonly rendition_progress?: ReadonlyArray<{ readonly label: string; readonly frames_done: number }> | null
  readonly submitted_by: string
  /** A segment job's segments (absent from an older controller). */
  readonly segments?: ReadonlyArray<WireJobSegment> | null
}

/** svc.v1.JobSegment. */
export interface WireJobSegment {
  readonly index: number
  readonly first_frame: number
  readonly frame_count: number
  readonly state: WireJobState
  readonly node_id: string
  readonly attempts: number
  readonly frames_done: number
}

export interface WireModelList {
  readonly models: ReadonlyArray<{
    readonly name: string
    readonly features: ReadonlyArray<string>
    readonly source: string
    readonly sha256: string
    readonly usable: boolean
    readonly reason: string
  }>
  /** The extra features options.features may name (ExtraFeatureInfo). */
  readonly features?: ReadonlyArray<{
    readonly name: string
    readonly outputs: ReadonlyArray<string>
    readonly implementation: string
  }>
}
