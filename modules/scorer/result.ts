/**
 * What a score gives back: the ScoreResponse of the contract (proto field names), its per-frame
 * scores, poolings, provenance and thumbnails.
 */
import type { AlignmentReport } from "./alignment-report.ts"
import type { PercentileName } from "./pooling.ts"
import type { Shot } from "./shots.ts"

export interface FrameScore {
  readonly frame: number
  readonly metrics: Readonly<Record<string, number>>
}

export interface Provenance {
  readonly library: {
    readonly abi_minor: number
    readonly abi_patch: number
    readonly active_backend: string
    readonly n_extractors: number
    readonly version: string
  }
  readonly model: string
  readonly model_sha256: string
  /** "builtin", or the model file's path in SVC_MODEL_DIR. */
  readonly model_source?: string
  /** Every model scored (one, or those of `models`), in request order. */
  readonly models?: ReadonlyArray<ModelProvenance>
  readonly backend_used: string
  /** Each extractor run, its backend, and for an extra feature the implementation it follows ("SSIMULACRA 2.1"). */
  readonly feature_backends: ReadonlyArray<{
    readonly extractor: string
    readonly backend: string
    readonly implementation?: string
  }>
  readonly precision: string
  /** First line of `ffmpeg -version` when an input was decoded; "" when none was (modules/inputs). */
  readonly decoder?: string
  readonly reference_input?: InputInfo
  readonly distorted_input?: InputInfo
  /** "none", or how the distorted video was scaled: "bicubic 960x540 -> 1920x1080". */
  readonly scaling?: string
}

/** What an input was, recognised by its bytes (set by modules/inputs, absent for pushed frames). */
export interface InputInfo {
  /** "raw", "y4m", or ffmpeg's demuxer name(s) ("mov,mp4,m4a,3gp,3g2,mj2", "matroska,webm"). */
  readonly container: string
  /** "rawvideo" for raw and Y4M, else ffmpeg's codec name ("h264", "hevc", "ffv1"). */
  readonly codec: string
  readonly width: number
  readonly height: number
  /** ffmpeg's name of the input's pixel format ("yuv420p", "yuv420p10le"). */
  readonly pixel_format: string
  /**
   * A distorted input's changes of size or pixel format mid-stream, each scaled or converted to
   * the reference's: from `frame` (decode order, from 0) on, frames are of this shape. Absent: none.
   */
  readonly changes?: ReadonlyArray<InputChange>
}

/** From `frame` on, an input's frames are `width` x `height` in `pixel_format` (ffmpeg's name). */
export interface InputChange {
  readonly frame: number
  readonly width: number
  readonly height: number
  readonly pixel_format: string
}

export interface ModelProvenance {
  readonly model: string
  readonly model_sha256: string
  readonly model_source: string
}

/** The ScoreResponse of the contract (proto field names). */
export interface ScoreResult {
  readonly score: number
  readonly features: Readonly<Record<string, number>>
  /** The pooled score of each model by name (several with `models`; the first is `score`). */
  readonly scores?: Readonly<Record<string, number>>
  readonly provenance: Provenance
  readonly frames: ReadonlyArray<FrameScore>
  readonly frame_count: number
  readonly pooled: PooledFeatures
  /** With `options.shots`: the reference's shots in frame order, scored with the first model (else empty). */
  readonly shots?: ReadonlyArray<Shot>
  /** Indices into `shots` of the (at most 5) lowest-scoring shots, lowest first. */
  readonly worst_shots?: ReadonlyArray<number>
  /** With shots: small pictures of the worst shots' worst frames (modules/inputs/thumbnails.ts). */
  readonly thumbnails?: ReadonlyArray<Thumbnail>
  /** With `options.sync: "auto"`: how the distorted clip was lined up with the reference. */
  readonly alignment?: AlignmentReport
}

/** The poolings besides the mean (`features`): min, max, harmonic mean, and the percentiles p1..p99. */
export type PooledFeatures = {
  readonly min: Readonly<Record<string, number>>
  readonly max: Readonly<Record<string, number>>
  readonly harmonic_mean: Readonly<Record<string, number>>
} & { readonly [name in PercentileName]?: Readonly<Record<string, number>> }

/** A small picture of a scored frame, reference beside distorted (rendered by modules/inputs). */
export interface Thumbnail {
  /** Scored-frame index (as `shots[].worst_frame`). */
  readonly frame: number
  /** data: URLs of PNG images. */
  readonly reference: string
  readonly distorted: string
}

/** The score's own feature name in the reference library's output. */
export const scoreFeature = "vmaf"
