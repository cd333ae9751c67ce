// Generated from proto/svc/v1/svc.proto by `bun scripts/wire-types.ts`: do not edit by hand.
/**
 * The svc.v1 wire types: every message, enum and service of the contract, as @grpc/proto-loader
 * hands messages over with transport/grpc/proto.ts's loader options (proto field names, enums as
 * their names, 64-bit integers as numbers, defaults filled in, an unset message field null, a
 * oneof's set member named by the oneof). A sender may leave any field out: see `Outgoing`.
 */

/** A message as a sender may give it: any field left out (the proto3 default) or null (unset). */
export type Outgoing<T> = T extends string | number | boolean | Uint8Array
  ? T
  : T extends ReadonlyArray<infer Element>
    ? ReadonlyArray<Outgoing<Element>>
    : { readonly [Field in keyof T]?: Outgoing<T[Field]> | null | undefined }

/** The shapes of a method: its request and response messages and how each travels. */
export interface Unary<Request, Response> {
  readonly kind: "unary"
  readonly request: Request
  readonly response: Response
}
export interface ServerStreaming<Request, Response> {
  readonly kind: "server-stream"
  readonly request: Request
  readonly response: Response
}
export interface ClientStreaming<Request, Response> {
  readonly kind: "client-stream"
  readonly request: Request
  readonly response: Response
}
export interface Bidi<Request, Response> {
  readonly kind: "bidi"
  readonly request: Request
  readonly response: Response
}

/** google.protobuf.Timestamp. */
export interface Timestamp {
  readonly seconds: number
  readonly nanos: number
}

export interface ScoreRequest {
  /**
   * Path (or file:// URL) of the pristine reference video: raw planar YUV, Y4M, or any video
   * ffmpeg decodes (.mp4, .mkv, .webm, .ivf, .265, ...), recognised by its bytes.
   */
  readonly reference: string
  /**
   * Path (or file:// URL) of the compressed distorted video: raw YUV or Y4M of the reference's
   * geometry, or encoded video (decoded to the reference's layout, scaled to its size).
   */
  readonly distorted: string
  /** Model name, a file "<model>.json" in SVC_MODEL_DIR. Empty: "vmaf_v0.6.1". */
  readonly model: string
  readonly options: ScoreOptions | null
  /**
   * Several models scored over one extraction of the union of their features, instead of
   * model (at most 16). Results are keyed by model name: ScoreResponse.scores, and each model's
   * per-frame and pooled score under its name in features and frames.
   */
  readonly models: ReadonlyArray<string>
}

export interface ScoreOptions {
  /**
   * Geometry of raw .yuv input (required for raw, ignored for Y4M and encoded input, which
   * carry their own).
   */
  readonly width: number
  readonly height: number
  /** Chroma subsampling of raw input: "420", "422" or "444". */
  readonly pixel_format: string
  /** Bits per sample of raw input: 8, 10, 12 or 16 (above 8: 16-bit little-endian words). */
  readonly bitdepth: number
  /**
   * CPU backend: "auto" (default: best supported), "cpu" (same as auto), "scalar" (reference
   * path), "avx2" (refused on a CPU without AVX2), "avx512" (AVX-512 kernels where an extractor
   * has them, AVX2 for the others; refused on a CPU without AVX-512 F/BW/VL/DQ/CD). Every
   * backend gives identical numbers.
   */
  readonly backend: string
  /**
   * Worker threads for this score (frame-level; results do not depend on it). 0: 1 thread.
   * At most 64.
   */
  readonly threads: number
  /**
   * Extra extractors besides the model's features: "psnr", "float_ssim", "float_ms_ssim",
   * "float_vif", "float_adm", "float_motion", "float_psnr", "ciede", "psnr_hvs", "cambi",
   * "xpsnr" (xpsnr_y/u/v as FFmpeg 7.1's xpsnr filter; identical planes are infinite),
   * "ssimulacra2" (SSIMULACRA 2.1 on the frames as full-range 8-bit RGB; 100: identical).
   */
  readonly features: ReadonlyArray<string>
  /** Score every Nth frame (1 or 0: every frame). At most 1000. */
  readonly subsample: number
  /** Score at most this many frames (0: all). */
  readonly frame_cnt: number
  /** Frames to skip at the start of the reference / the distorted video. */
  readonly frame_skip_ref: number
  readonly frame_skip_dist: number
  /**
   * Number format of the scores: "" or "lossless" (default: every number is the double the
   * scorer computed, in shortest round-trip form), "1".."17" (that many decimals), or "legacy"
   * (6 decimals, like the reference command-line tool).
   */
  readonly precision: string
  /** Include the per-frame values in ScoreResponse.frames. */
  readonly per_frame: boolean
  /**
   * How a decoded distorted video of another size is scaled to the reference size (ffmpeg's
   * scale filter): "" or "bicubic" (default), "lanczos", "bilinear", "neighbor", or "none"
   * (then a size mismatch is refused).
   */
  readonly scale: string
  /** Find the reference's hard cuts and score each shot (ScoreResponse.shots, worst_shots). */
  readonly shots: boolean
  /** A cut's histogram distance of consecutive reference lumas, 0 < x <= 1 (0: 0.3). */
  readonly shot_threshold: number
  /**
   * The shortest shot in scored frames: a shorter stretch between cuts is a flash, no shot
   * (0: 8). At most 100000.
   */
  readonly shot_min_frames: number
  /**
   * Frames per second for xpsnr's temporal term (whole frames count: 29.97 is 29). 0: the
   * reference Y4M's F tag or the container's rate, raw input 25. At most 1000.
   */
  readonly frame_rate: number
  /**
   * Jobs only (SubmitJob): split the title into segments of this many frames, scored in parallel
   * by the tenant's nodes and merged exactly (per-frame values bit-identical to one pass). 0
   * (default, or the controller's SVC_SEGMENT_FRAMES): one piece. Otherwise at least 24; a title
   * is cut into at most 10000 segments (longer segments when it would need more).
   */
  readonly segment_frames: number
  /**
   * "off" (default, or "") or "auto": find where each input starts and the frames dropped or
   * inserted mid-clip, then score the paired frames (frame skips apply first; frame_cnt and
   * subsample count pairs). The response's alignment says what was found.
   */
  readonly sync: string
  /** With sync "auto": the largest offset searched, in frames (0: 120). */
  readonly sync_window: number
}

export interface ScoreResponse {
  /** Overall score (the pooled mean of the model's per-frame score). */
  readonly score: number
  /** Per-feature pooled means by reference feature name, including the score under "vmaf". */
  readonly features: Readonly<Record<string, number>>
  readonly provenance: Provenance | null
  /** Per-frame values, only when options.per_frame is set (or in job results). */
  readonly frames: ReadonlyArray<FrameScore>
  /** Frames scored. */
  readonly frame_count: number
  /** Other poolings of every feature (features holds the means). */
  readonly pooled: PooledFeatures | null
  /** The pooled score of each model by name (the first is score). */
  readonly scores: Readonly<Record<string, number>>
  /** With options.shots: the reference's shots in frame order (scored with the first model). */
  readonly shots: ReadonlyArray<Shot>
  /** Indices into shots of the (at most 5) lowest-scoring shots, lowest first. */
  readonly worst_shots: ReadonlyArray<number>
  /** With options.shots and raw/Y4M inputs: pictures of the worst shots' worst frames. */
  readonly thumbnails: ReadonlyArray<Thumbnail>
  /** With options.sync "auto": how the distorted clip was lined up with the reference. */
  readonly alignment: Alignment | null
}

/** What options.sync "auto" found; frames are counted after each input's frame skip. */
export interface Alignment {
  /** The first reference and distorted frames scored (a late start, a slate or leader before them). */
  readonly reference_start: number
  readonly distorted_start: number
  /** Pairs found (frame_cnt and subsample count these). */
  readonly frames: number
  /** Reference frames with no counterpart in the distorted clip, between its first and last pair. */
  readonly reference_frames_dropped: ReadonlyArray<number>
  /** Distorted frames with no counterpart in the reference (left out of the score). */
  readonly distorted_frames_inserted: ReadonlyArray<number>
  /** Distorted frames repeating the one before while the reference moves (a freeze), scored as seen. */
  readonly distorted_frames_repeated: ReadonlyArray<number>
  /**
   * 0 to 1: the share of pairs the content pins down (each distorted frame closer to its own
   * reference frame than to the ones before and after); below 0.5 a warning is set.
   */
  readonly confidence: number
  /** The sync window searched, in frames. */
  readonly window: number
  /** Set when the confidence is below 0.5: static or black content fits several offsets. */
  readonly warning: string
}

/**
 * The reference and distorted pictures of one scored frame: PNG images at most 192 pixels wide
 * and 48 KiB each, as data: URLs ("data:image/png;base64,...").
 */
export interface Thumbnail {
  /** Scored-frame index (as Shot.worst_frame). */
  readonly frame: number
  readonly reference: string
  readonly distorted: string
}

/** A shot: scored frames [first_frame, first_frame + frame_count) between two cuts of the reference. */
export interface Shot {
  /** Scored-frame index (after skips and subsampling) of its first frame. */
  readonly first_frame: number
  readonly frame_count: number
  /** Mean of the first model's per-frame score over the shot. */
  readonly score: number
  readonly harmonic_mean: number
  readonly min: number
  /** Nearest-rank 5th percentile. */
  readonly p5: number
  /** Scored-frame index of its lowest score. */
  readonly worst_frame: number
}

export interface PooledFeatures {
  readonly min: Readonly<Record<string, number>>
  readonly max: Readonly<Record<string, number>>
  /** 1 / mean(1 / (x + 1)) - 1, as the reference library pools. */
  readonly harmonic_mean: Readonly<Record<string, number>>
  /**
   * Nearest-rank percentiles: the value at rank max(1, ceil(p x n / 100)) of the n per-frame
   * values in ascending order (infinite values last).
   */
  readonly p1: Readonly<Record<string, number>>
  readonly p5: Readonly<Record<string, number>>
  readonly p10: Readonly<Record<string, number>>
  readonly p25: Readonly<Record<string, number>>
  readonly p50: Readonly<Record<string, number>>
  readonly p75: Readonly<Record<string, number>>
  readonly p90: Readonly<Record<string, number>>
  readonly p95: Readonly<Record<string, number>>
  readonly p99: Readonly<Record<string, number>>
}

export interface FrameScore {
  /**
   * Index of the frame among the frames read after the skips, from 0: with subsample N the
   * scored frames are 0, N, 2N, ...
   */
  readonly frame: number
  readonly metrics: Readonly<Record<string, number>>
}

export interface Provenance {
  readonly library: LibraryInfo | null
  /** Model name used. */
  readonly model: string
  /** SHA-256 of the model file's bytes, 64 lowercase hex characters. */
  readonly model_sha256: string
  /**
   * Backend the request resolved to: "scalar", "avx2" or "avx512" (the widest path any
   * extractor ran on; feature_backends has the path per extractor).
   */
  readonly backend_used: string
  readonly feature_backends: ReadonlyArray<FeatureBackend>
  /** "lossless", "legacy" or the number of decimals. */
  readonly precision: string
  /** Where the model came from: "builtin" (embedded in the executable) or its file in SVC_MODEL_DIR. */
  readonly model_source: string
  /** Every model scored, in request order (one unless the request named several). */
  readonly models: ReadonlyArray<ModelProvenance>
  /** First line of `ffmpeg -version` when an input was decoded by ffmpeg; empty when none was. */
  readonly decoder: string
  /** What each input was, recognised by its bytes. */
  readonly reference_input: InputInfo | null
  readonly distorted_input: InputInfo | null
  /** "none", or how the distorted video was scaled: "bicubic 960x540 -> 1920x1080". */
  readonly scaling: string
}

export interface ScoreLadderRequest {
  /** Path to the reference video, read once for the whole ladder. */
  readonly reference: string
  /** 1 to 16 renditions, each with a unique label; results come back in this order. */
  readonly renditions: ReadonlyArray<Rendition>
  readonly model: string
  readonly models: ReadonlyArray<string>
  /**
   * The whole ladder's options: frame_skip_ref, frame_cnt, subsample, features, precision,
   * backend, threads, per_frame and the raw reference's geometry.
   */
  readonly options: ScoreOptions | null
}

export interface Rendition {
  /** 1 to 64 letters, digits, ".", "_", "+", "-", starting with a letter or digit; unique. */
  readonly label: string
  readonly distorted: string
  readonly options: RenditionOptions | null
}

/** What one rendition may set for itself (values as in ScoreOptions). */
export interface RenditionOptions {
  readonly width: number
  readonly height: number
  readonly pixel_format: string
  readonly bitdepth: number
  readonly scale: string
  readonly frame_skip_dist: number
}

export interface ScoreLadderResponse {
  /** One per rendition, in request order. */
  readonly renditions: ReadonlyArray<RenditionResult>
  readonly provenance: LadderProvenance | null
}

/** A rendition's result: the fields of a ScoreResponse, its label and summary. */
export interface RenditionResult {
  readonly label: string
  readonly score: number
  readonly features: Readonly<Record<string, number>>
  readonly provenance: Provenance | null
  readonly frames: ReadonlyArray<FrameScore>
  readonly frame_count: number
  readonly pooled: PooledFeatures | null
  readonly scores: Readonly<Record<string, number>>
  readonly summary: RenditionSummary | null
  /** The reference's shots, scored with this rendition (options.shots). */
  readonly shots: ReadonlyArray<Shot>
  readonly worst_shots: ReadonlyArray<number>
  /** With options.shots: this rendition's worst shots' worst frames, reference beside rendition. */
  readonly thumbnails: ReadonlyArray<Thumbnail>
  /**
   * With options.sync "auto": this rendition's own alignment. The ladder reads the reference once
   * over the frames any rendition pairs and scores each rendition over its own pairs only.
   */
  readonly alignment: Alignment | null
}

export interface RenditionSummary {
  /** Nearest-rank 1st and 5th percentiles of the per-frame score (first model). */
  readonly p1: number
  readonly p5: number
  /** The (at most 10) lowest-scoring frames, lowest first. */
  readonly worst_frames: ReadonlyArray<WorstFrame>
  /** From the decoder's stream information (raw: the options' geometry, codec "rawvideo"). */
  readonly width: number
  readonly height: number
  readonly codec: string
  /**
   * File size x 8 / duration in seconds (containers such as Matroska carry no stream bitrate).
   * 0 when the duration is unknown: raw YUV, which has no frame rate, or a Y4M without an F
   * field (a Y4M's F field gives its rate).
   */
  readonly bitrate_bps: number
  /** The container's duration, or a Y4M's frames over its F frame rate; 0 when unknown (raw YUV). */
  readonly duration_s: number
  /**
   * On the upper convex hull of (bitrate, score) over the ladder; never a rendition whose
   * bitrate is unknown (0).
   */
  readonly on_hull: boolean
}

export interface WorstFrame {
  readonly frame: number
  readonly score: number
}

export interface LadderProvenance {
  /**
   * Passes over the reference's frames: 1, or with sync "auto" one per group of renditions that
   * drop the same reference frames where they overlap.
   */
  readonly reference_passes: number
  /** Decoder processes that served the reference: 1 per pass for an encoded reference, 0 for raw/Y4M. */
  readonly reference_decoders: number
  /** Reference frames read, each once whatever the number of renditions (and of passes). */
  readonly reference_frames: number
  /** Reference-side quantities computed once per frame and shared by every rendition. */
  readonly shared: ReadonlyArray<string>
  readonly reference_input: InputInfo | null
  readonly decoder: string
  readonly library: LibraryInfo | null
  readonly model: string
  readonly model_sha256: string
  readonly models: ReadonlyArray<ModelProvenance>
  readonly backend_used: string
  readonly precision: string
}

export interface InputInfo {
  /** "raw", "y4m", or ffmpeg's demuxer name(s): "mov,mp4,m4a,3gp,3g2,mj2", "matroska,webm", ... */
  readonly container: string
  /** "rawvideo" for raw and Y4M, else ffmpeg's codec name: "h264", "hevc", "ffv1", ... */
  readonly codec: string
  readonly width: number
  readonly height: number
  /** ffmpeg's name of the input's pixel format: "yuv420p", "yuv420p10le", ... */
  readonly pixel_format: string
  /**
   * A distorted input's changes of size or pixel format mid-stream, each scaled or converted to
   * the reference's (empty: none).
   */
  readonly changes: ReadonlyArray<InputChange>
}

/** From frame (decode order, from 0) on, an input's frames are width x height in pixel_format. */
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

export type ListModelsRequest = Record<string, never>

export interface ListModelsResponse {
  /** Sorted by name. A name in SVC_MODEL_DIR overrides the built-in model of that name. */
  readonly models: ReadonlyArray<ModelInfo>
  /** The extra features a request's options.features may name. */
  readonly features: ReadonlyArray<ExtraFeatureInfo>
}

export interface ExtraFeatureInfo {
  /** The name options.features gives ("xpsnr"). */
  readonly name: string
  /** Its per-frame outputs ("xpsnr_y", "xpsnr_u", "xpsnr_v"). */
  readonly outputs: ReadonlyArray<string>
  /** The implementation its numbers follow, with its version ("FFmpeg 7.1 xpsnr filter"). */
  readonly implementation: string
}

export interface ModelInfo {
  /** The name a score request gives in "model". */
  readonly name: string
  /** Feature names the model file reads, as it writes them (e.g. "VMAF_integer_feature_adm2_score"). */
  readonly features: ReadonlyArray<string>
  /** "builtin" or the model file's path in SVC_MODEL_DIR. */
  readonly source: string
  /** SHA-256 of the model file's bytes (what a score's provenance.model_sha256 reports). */
  readonly sha256: string
  /** False when this build cannot score with the model; reason says why. */
  readonly usable: boolean
  readonly reason: string
}

export interface LibraryInfo {
  readonly abi_minor: number
  readonly abi_patch: number
  /** Best backend of this CPU ("avx512", "avx2" or "scalar"). */
  readonly active_backend: string
  readonly n_extractors: number
  readonly version: string
}

export interface FeatureBackend {
  readonly extractor: string
  readonly backend: string
  /**
   * The implementation its numbers follow, with its version: "libvmaf 3.2.0" for the models' own
   * extractors and libvmaf's extra features, "FFmpeg 7.1 xpsnr filter", "SSIMULACRA 2.1".
   */
  readonly implementation: string
}

export interface ScoreStreamRequest {
  /**
   * First message: model and options; width and height are required (pixel_format and bitdepth
   * default to "420" and 8), frame skips are refused (a stream has nothing to skip).
   */
  readonly header?: ScoreStreamHeader
  /** Then one message per frame pair, each plane in raw planar layout (16-bit LE above 8 bits). */
  readonly frame?: FramePair
  /** Which member of the oneof is set (header, frame). */
  readonly message?: "header" | "frame"
}

export interface ScoreStreamHeader {
  readonly model: string
  readonly options: ScoreOptions | null
}

export interface FramePair {
  readonly reference: Uint8Array
  readonly distorted: Uint8Array
}

export interface ScoreStreamResponse {
  readonly frame?: FrameScore
  /** Last message: the pooled result of all frames. */
  readonly aggregate?: ScoreResponse
  /** Which member of the oneof is set (frame, aggregate). */
  readonly message?: "frame" | "aggregate"
}

export type HealthRequest = Record<string, never>

export interface HealthResponse {
  /**
   * "SERVING" once the scorer is initialised and its library file and SVC_MODEL_DIR are in place
   * (exactly when HTTP /readyz answers 200), else "NOT_SERVING".
   */
  readonly status: string
  readonly version: string
}

export type ListNodesRequest = Record<string, never>

export interface ListNodesResponse {
  /** The tenant's sessions this controller knows, live or not yet forgotten, sorted by name. */
  readonly nodes: ReadonlyArray<NodeSession>
}

export interface NodeSession {
  readonly node_id: string
  /** RegisterNodeRequest.name, slots and version. */
  readonly name: string
  readonly slots: number
  readonly version: string
  /** Last RegisterNode or Heartbeat of the session. */
  readonly last_heartbeat: Timestamp | null
  /** Whether a heartbeat came within session_ttl_ms. */
  readonly live: boolean
  /** The tenant's running jobs assigned to this session. */
  readonly running_job_ids: ReadonlyArray<string>
  readonly session_ttl_ms: number
}

export const JobState = {
  JOB_STATE_UNSPECIFIED: 0,
  /** Accepted, waiting for a node. */
  JOB_STATE_PENDING: 1,
  /** Handed to a node by PullWork. */
  JOB_STATE_RUNNING: 2,
  /** A final result has been reported. */
  JOB_STATE_FINISHED: 3,
  /** Cancelled by a caller before it finished. */
  JOB_STATE_CANCELLED: 4,
  /** The node reported a final error (for example an input outside the roots). */
  JOB_STATE_FAILED: 5
} as const
export type JobState = keyof typeof JobState

export interface Job {
  /** Server-assigned identifier (UUID). */
  readonly id: string
  /** Tenant of the submitter's token, stamped at submission. */
  readonly tenant_id: string
  readonly state: JobState
  /** What to score, as submitted. */
  readonly request: ScoreRequest | null
  /** The tenant's scoring roots, filled in jobs handed to a node by PullWork. */
  readonly scoring_roots: ReadonlyArray<string>
  readonly created_at: Timestamp | null
  readonly started_at: Timestamp | null
  readonly finished_at: Timestamp | null
  /** Node session the job is assigned to while running. */
  readonly node_id: string
  /**
   * Latest result: partial while running (frames so far), final once finished. Its frames are
   * one page (at most 2000; GetJob's frames_offset chooses which); frame_count is the total.
   */
  readonly result: ScoreResponse | null
  /** Why the job failed (state FAILED). */
  readonly error: string
  /** Frames scored so far. */
  readonly frames_done: number
  /** Subject (sub) of the submitting token, for audit. */
  readonly submitted_by: string
  /**
   * A ladder job (SubmitJobRequest.ladder): what it scores; request is then unset. Its
   * frames_done counts the reference frames scored (every rendition is scored on each, in one
   * pass); rendition_progress counts each rendition's.
   */
  readonly ladder: ScoreLadderRequest | null
  /**
   * A ladder job's latest result (instead of result): partial while running, final once
   * finished. Each rendition's frames are one page: at most 2000 / (number of renditions) frames
   * from GetJob's frames_offset; each rendition's frame_count is its total.
   */
  readonly ladder_result: ScoreLadderResponse | null
  /**
   * A ladder job's frames scored per rendition, in the ladder's order, as its node last reported
   * them (a rendition not reported yet is absent; a final result completes every rendition).
   * Empty for a pair job, a pending job, and a job re-queued after its node was lost.
   */
  readonly rendition_progress: ReadonlyArray<RenditionProgress>
  /**
   * SubmitJobRequest.idempotency_key of the submit that created the job (empty: none). A client
   * proves a job is its own with it: svc-operator checks it equals the SvcJob's metadata.uid
   * before it cancels or trusts a status.jobId.
   */
  readonly idempotency_key: string
  /**
   * A segment job's segments (options.segment_frames), in frame order, once the first node to
   * pull the job has counted its frames (the plan); empty before and for a job in one piece.
   * frames_done then sums the segments'.
   */
  readonly segments: ReadonlyArray<JobSegment>
  /**
   * PullWork only: the segment of this job handed to the node (score it, report with
   * segment_index); unset for a whole job or a plan.
   */
  readonly segment: JobSegment | null
  /**
   * PullWork only: the node counts the job's frames and reports ReportResultRequest.plan_frames;
   * the controller then cuts the job into segments.
   */
  readonly plan: boolean
  /**
   * A segment job with options.sync "auto", once planned: the pairing its plan found over the
   * whole inputs. Its segments are ranges of these pairs, each scored with it (not searched again).
   */
  readonly plan_alignment: Alignment | null
  /**
   * A ladder segment job with options.sync "auto", once planned: each rendition's pairing with the
   * reference (request order) as its plan found it. Its segments are ranges of the ladder's frames
   * (the reference frames any rendition pairs), each rendition scored over its own pairs in them
   * with these (not searched again). Empty for any other job.
   */
  readonly plan_rendition_alignments: ReadonlyArray<Alignment>
}

/**
 * One segment of a segment job: frames [first_frame, first_frame + frame_count) of the title
 * (after the frame skips).
 */
export interface JobSegment {
  readonly index: number
  readonly first_frame: number
  readonly frame_count: number
  readonly state: JobState
  /** The node scoring it (running) or that last scored it. */
  readonly node_id: string
  /**
   * Times it was handed to a node (a lost node's segment is handed out again, at most 3 times); a
   * segment a node handed back for want of memory is not counted.
   */
  readonly attempts: number
  /** Frames of this segment scored so far. */
  readonly frames_done: number
}

/** One rendition's progress in a ladder job. */
export interface RenditionProgress {
  /** The rendition's label (ScoreLadderRequest.renditions[].label). */
  readonly label: string
  /** Frames of this rendition scored so far. */
  readonly frames_done: number
}

export interface SubmitJobRequest {
  readonly request: ScoreRequest | null
  /**
   * Optional, unique per tenant: a second submit with the same key returns the job the first
   * one created (whatever its state) instead of queueing another. svc-operator sends the SvcJob's
   * metadata.uid. At most 256 characters.
   */
  readonly idempotency_key: string
  /**
   * A ladder instead of request (exactly one of the two): one reference, many renditions, run by
   * one node in one pass over the reference. Validated whole (every rendition, every path under
   * the tenant's scoring roots) before a job exists.
   */
  readonly ladder: ScoreLadderRequest | null
}

export interface GetJobRequest {
  readonly id: string
  /**
   * Per-frame results are paged: the job's result.frames holds at most 2000 frames, from this
   * index (0: the first). Page with frames_offset until it reaches result.frame_count. A ladder
   * job's page holds each rendition's frames from this index (at most 2000 / renditions each).
   */
  readonly frames_offset: number
  /** At most this many frames (0 or above 2000: 2000). */
  readonly frames_limit: number
}

export interface StreamJobsRequest {
  /** Only jobs in these states (empty: all). */
  readonly states: ReadonlyArray<JobState>
  /** Keep the stream open and send each job again whenever it changes. */
  readonly follow: boolean
  /** At most this many jobs in the initial listing (0: 1000). */
  readonly limit: number
}

export interface CancelJobRequest {
  readonly id: string
}

export interface RegisterNodeRequest {
  /** Stable, human-readable node name (host name); sessions change, names do not. */
  readonly name: string
  /** Jobs the node runs at once. */
  readonly slots: number
  /** svc-node version, for operators. */
  readonly version: string
  /**
   * The node scores segments (Job.segment) and plans segment jobs (Job.plan); a node without it
   * is handed segment jobs only whole, before they are planned.
   */
  readonly scores_segments: boolean
}

export interface RegisterNodeResponse {
  /** Identifier of this session; every other node call names it. */
  readonly node_id: string
  /** How often the controller expects a heartbeat. */
  readonly heartbeat_interval_ms: number
  /** A session without a heartbeat for this long is no longer live. */
  readonly session_ttl_ms: number
}

export interface HeartbeatRequest {
  readonly node_id: string
  /** Jobs the node is working on. */
  readonly running_job_ids: ReadonlyArray<string>
  /**
   * The node hands back the running jobs assigned to it that it does not list (jobs it pulled but
   * cannot start yet, for want of memory): they go back to pending at once, not after a session
   * TTL, and waiting nodes are woken. svc-node sends it only with no PullWork of its own in flight.
   */
  readonly hand_back_unlisted: boolean
  /**
   * With hand_back_unlisted: the memory each handed-back job needs on the node (its decoders and
   * scorer, as the node's admission estimated them from the probe). The controller records it on
   * the job; PullWork then hands the job only to a node whose free memory covers it (or whose
   * whole budget never can, to fail it with the reason). Jobs not listed keep what they have.
   */
  readonly memory_needs: ReadonlyArray<JobMemoryNeed>
  /**
   * Segments the node is working on (or holds an unacknowledged final report of), by job and
   * index; their jobs are listed in running_job_ids too (as an older controller keeps segments by
   * their job). When any segment is named here, a running segment assigned to the node is kept
   * only when named (so one segment of a job can be handed back while another is kept); when
   * none is, by its job in running_job_ids (an older node).
   */
  readonly running_segments: ReadonlyArray<HeldSegment>
}

/** One segment of a segment job (HeartbeatRequest.running_segments). */
export interface HeldSegment {
  readonly job_id: string
  readonly index: number
}

/** A job's (or one of its segments') memory need as a node estimated it (HeartbeatRequest.memory_needs). */
export interface JobMemoryNeed {
  readonly job_id: string
  /** Bytes; 0: unknown (nothing recorded). */
  readonly memory_bytes: number
  /**
   * segment: the need is the segment segment_index's (recorded on the segment, which claims then
   * skip for nodes with less free; a segment handed back this way is not counted as an attempt).
   */
  readonly segment: boolean
  readonly segment_index: number
}

export interface HeartbeatResponse {
  readonly ok: boolean
}

export interface PullWorkRequest {
  readonly node_id: string
  /** Most jobs to hand out (0: 1). */
  readonly max_jobs: number
  /**
   * Long-poll (issue 35): with no job pending, wait up to this long (at most 20000) for one to
   * arrive before answering with none. 0: answer at once.
   */
  readonly wait_ms: number
  /**
   * The node's score memory free now (its SVC_MAX_SCORE_MEMORY less the scores it holds): a
   * pending job whose recorded need (HeartbeatRequest.memory_needs) exceeds it is skipped, unless
   * the need exceeds memory_budget_bytes too (the node can never fit it and fails it with the
   * reason). 0 (an older node): no job is skipped.
   */
  readonly free_memory_bytes: number
  /** The node's whole score memory budget (SVC_MAX_SCORE_MEMORY); 0: unknown. */
  readonly memory_budget_bytes: number
}

export interface PullWorkResponse {
  /** Each job carries its tenant's scoring_roots. */
  readonly jobs: ReadonlyArray<Job>
}

export interface ReportResultRequest {
  readonly node_id: string
  readonly job_id: string
  /** true: the job is done (result or error is final); false: progress. */
  readonly final: boolean
  /** Result so far (partial) or the final result. */
  readonly result: ScoreResponse | null
  /** Final failure, for example "scoring input ... is outside the tenant's scoring roots". */
  readonly error: string
  readonly frames_done: number
  /**
   * Per-frame results are sent in pages of at most 2000 frames: result.frames continues the
   * frames already reported from this index (0: replaces them). A long job's final result is
   * sent as progress reports carrying the earlier pages, then the final report with the last.
   * A ladder job's pages hold every rendition's frames from this index.
   */
  readonly frames_offset: number
  /** A ladder job's result (instead of result), its frames paged as result's are. */
  readonly ladder_result: ScoreLadderResponse | null
  /**
   * A ladder job's frames scored per rendition label, with progress and final reports: each
   * listed label (one of the job's renditions, at most once) replaces its count, the others keep
   * theirs. Empty: unchanged. Refused (INVALID_ARGUMENT) on a pair job.
   */
  readonly rendition_progress: ReadonlyArray<RenditionProgress>
  /**
   * segment: the report is the segment segment_index's (result frames carry the title's frame
   * numbers; frames_offset and frames_done count within the segment).
   */
  readonly segment: boolean
  readonly segment_index: number
  /**
   * A plan (Job.plan): the title's frames to score (after the skips and frame_cnt); the
   * controller cuts the job into segments. final must be false.
   */
  readonly plan_frames: number
  /**
   * A plan of a job with options.sync "auto": the alignment found over the whole inputs;
   * plan_frames then counts its pairs (after frame_cnt).
   */
  readonly plan_alignment: Alignment | null
  /**
   * A plan of a ladder job with options.sync "auto": each rendition's alignment found over the
   * whole inputs, in request order (plan_alignment stays unset); plan_frames counts the ladder's
   * frames: the reference frames any rendition pairs (each rendition's after frame_cnt).
   */
  readonly plan_rendition_alignments: ReadonlyArray<Alignment>
}

export interface ReportResultResponse {
  readonly job: Job | null
}

export interface ReportResultsRequest {
  readonly node_id: string
  /** At most 64; each report's node_id is ignored (the call's is used). */
  readonly reports: ReadonlyArray<ReportResultRequest>
}

export interface ReportResultsResponse {
  /** One per report, in the order given. */
  readonly outcomes: ReadonlyArray<ReportResultOutcome>
}

export interface ReportResultOutcome {
  readonly job_id: string
  /** The job as stored after the report (accepted, or already final). */
  readonly job: Job | null
  /** A refused report's gRPC status code (0: accepted) and message, as ReportResult answers it. */
  readonly code: number
  readonly message: string
}

/** Every service of the contract, by its full name, and the shape of each of its methods. */
export interface Services {
  /** Scores one reference/distorted pair. Served by svc-server and by the controller. */
  readonly "svc.v1.SvcScoring": {
    /** Scores two files readable by the server. Roles: svc:writer, svc:admin. */
    readonly Score: Unary<ScoreRequest, ScoreResponse>
    /**
     * Scores frames sent in the stream: the first message is a header, then frame pairs; one
     * FrameScore is returned per frame as soon as it is final, then the aggregate. Roles: writer, admin.
     */
    readonly ScoreStream: Bidi<ScoreStreamRequest, ScoreStreamResponse>
    /** Serving state of the scorer. Roles: svc:reader, svc:writer, svc:admin. */
    readonly Health: Unary<HealthRequest, HealthResponse>
    /**
     * The models a request may name: built-in and SVC_MODEL_DIR's (REST: GET /v1/models).
     * Roles: svc:reader, svc:writer, svc:admin.
     */
    readonly ListModels: Unary<ListModelsRequest, ListModelsResponse>
    /**
     * Scores a ladder: one reference, many renditions, the reference read and analysed once
     * (REST: POST /v1/ladder). Roles: svc:writer, svc:admin; every path under the scoring roots.
     */
    readonly ScoreLadder: Unary<ScoreLadderRequest, ScoreLadderResponse>
  }
  readonly "svc.v1.Jobs": {
    /**
     * Queues a score. Inputs are checked as written against the tenant's scoring roots.
     * Roles: svc:writer, svc:admin.
     */
    readonly SubmitJob: Unary<SubmitJobRequest, Job>
    /** Roles: svc:reader, svc:writer, svc:admin. Another tenant's job: PERMISSION_DENIED. */
    readonly GetJob: Unary<GetJobRequest, Job>
    /**
     * The caller's tenant's jobs, newest first; with follow, then every change as it happens.
     * Roles: svc:reader, svc:writer, svc:admin.
     */
    readonly StreamJobs: ServerStreaming<StreamJobsRequest, Job>
    /** Cancels a pending or running job (a final job is returned unchanged). Roles: writer, admin. */
    readonly CancelJob: Unary<CancelJobRequest, Job>
  }
  /**
   * Read-only view of the caller's tenant's node sessions (for svc-operator's SvcNode status and for
   * operators). Outside the Nodes service, which only node tokens reach.
   * Roles: svc:reader, svc:writer, svc:admin.
   */
  readonly "svc.v1.NodeStatus": {
    readonly ListNodes: Unary<ListNodesRequest, ListNodesResponse>
  }
  readonly "svc.v1.Nodes": {
    /** Opens a session for the calling token's tenant. */
    readonly RegisterNode: Unary<RegisterNodeRequest, RegisterNodeResponse>
    /**
     * Keeps the session live. ok=false: the session is unknown, expired or another tenant's;
     * the node registers again.
     */
    readonly Heartbeat: Unary<HeartbeatRequest, HeartbeatResponse>
    /** Hands out pending jobs of the session's tenant (marks them running, assigned to the node). */
    readonly PullWork: Unary<PullWorkRequest, PullWorkResponse>
    /**
     * Partial or final result of an assigned job: accepted for a job assigned to this node, or for a
     * running job of the same tenant whose node has no live session any more.
     */
    readonly ReportResult: Unary<ReportResultRequest, ReportResultResponse>
    /**
     * Several reports of one node in one call (issue 35), each decided as ReportResult; a refused
     * report changes nothing and does not refuse the others.
     */
    readonly ReportResults: Unary<ReportResultsRequest, ReportResultsResponse>
  }
}
