/**
 * What svc-mcp's tools return, as zod schemas (the tools' output schemas, read by the model) and
 * the pure conversions from the controller's messages to them. Per-frame arrays stay out of the
 * job views: a long clip has thousands of frames; describe_worst_frames and compare distil them.
 */
import * as z from "zod"
import { alignmentLine } from "../scorer/index.ts"
import { percentileNames } from "../scorer/index.ts"
import type {
  FrameScore as WireFrameScore,
  Job as WireJob,
  JobState as WireJobState,
  ScoreLadderResponse as WireLadderResponse,
  ListModelsResponse as WireModelList,
  ScoreResponse as WireScoreResponse,
  Shot as WireShot,
  Timestamp as WireTimestamp
} from "../transport/grpc/svc-v1.ts"
import { SHORT_JOB_STATES, type ShortJobState, WIRE_JOB_STATES } from "../transport/grpc/job-states.ts"

export const jobStates = SHORT_JOB_STATES
export type JobState = ShortJobState

export const JobStateSchema = z
  .enum(jobStates)
  .describe(
    "pending: queued, waiting for a compute node; running: a node is scoring it; finished: the result is final; " +
      "cancelled: stopped by a caller; failed: the node could not score it (see error)"
  )

export const toWireState = (state: JobState): WireJobState => WIRE_JOB_STATES[state]

/** A job the controller sent without a state has not been placed yet: pending. */
export const stateOf = (wire: WireJobState): JobState =>
  jobStates.find((state) => WIRE_JOB_STATES[state] === wire) ?? "pending"

export const isFinal = (state: JobState): boolean => state === "finished" || state === "cancelled" || state === "failed"

// JSON has no infinity or NaN: such a value (xpsnr of identical planes) is null, as in the REST API.
const FeatureMap = z.record(z.string(), z.number().nullable())

/** A feature map with its non-finite values as null. */
const finiteOrNull = (values: Readonly<Record<string, number>> | undefined): Record<string, number | null> =>
  Object.fromEntries(Object.entries(values ?? {}).map(([name, value]) => [name, Number.isFinite(value) ? value : null]))

/** What options.sync "auto" found, as the tools show it (a pair's, or each ladder rendition's). */
const AlignmentViewSchema = z.object({
  reference_start: z.number().int().describe("First reference frame scored"),
  distorted_start: z.number().int().describe("First distorted frame scored (a slate or leader before it is left out)"),
  frames: z.number().int().describe("Frame pairs found"),
  reference_frames_dropped: z.array(z.number().int()).describe("Reference frames missing from the distorted clip"),
  distorted_frames_inserted: z.array(z.number().int()).describe("Distorted frames with no reference counterpart"),
  distorted_frames_repeated: z.array(z.number().int()).describe("Distorted frames frozen on the previous one"),
  confidence: z.number().describe("0..1: share of pairs the content pins down; below 0.5 a warning"),
  warning: z.string().optional().describe("Set when the confidence is low")
})

/** A wire alignment as the tools show it (proto3's "" warning is none); none without one. */
const alignmentView = (
  alignment: WireScoreResponse["alignment"] | undefined
): { readonly alignment?: z.infer<typeof AlignmentViewSchema> } =>
  alignment
    ? {
        alignment: {
          reference_start: alignment.reference_start,
          distorted_start: alignment.distorted_start,
          frames: alignment.frames,
          reference_frames_dropped: [...alignment.reference_frames_dropped],
          distorted_frames_inserted: [...alignment.distorted_frames_inserted],
          distorted_frames_repeated: [...alignment.distorted_frames_repeated],
          confidence: alignment.confidence,
          ...(alignment.warning ? { warning: alignment.warning } : {})
        }
      }
    : {}

export const ScoreSummarySchema = z.object({
  score: z
    .number()
    .describe("The VMAF score: mean of the per-frame scores, 0 to 100 (about 20 = bad, 95+ = visually lossless)"),
  frame_count: z.number().int().describe("Frames scored"),
  features: FeatureMap.describe(
    "Pooled mean of every feature by its libvmaf name (integer_vif_scale0..3, integer_adm2, integer_motion2, ...); the score is under 'vmaf'"
  ),
  min: FeatureMap.describe("Smallest per-frame value of every feature"),
  max: FeatureMap.describe("Largest per-frame value of every feature"),
  harmonic_mean: FeatureMap.describe("Harmonic mean of every feature (weighs bad frames more than the mean)"),
  percentiles: z
    .record(z.string(), z.record(z.string(), z.number().nullable()))
    .optional()
    .describe(
      "Nearest-rank percentiles p1, p5, p10, p25, p50, p75, p90, p95, p99 of every feature (p1 of vmaf: the '1% low'); null: infinite"
    ),
  model: z.string().describe("Model used"),
  model_sha256: z.string().describe("SHA-256 of the model file used"),
  backend: z.string().describe("CPU kernels used: scalar or avx2 (identical numbers)"),
  alignment: AlignmentViewSchema.optional().describe(
    "With sync auto: how the distorted clip was lined up with the reference"
  )
})
export type ScoreSummary = z.infer<typeof ScoreSummarySchema>

export const RenditionViewSchema = z.object({
  label: z.string().describe("The rendition's label, as given"),
  distorted: z.string().describe("The rendition's encoded clip"),
  score: z.number().describe("Pooled VMAF (mean of the per-frame scores)"),
  p1: z.number().describe("1st percentile of the per-frame VMAF (nearest rank): how bad the worst 1% of frames get"),
  p5: z.number().describe("5th percentile of the per-frame VMAF (nearest rank)"),
  harmonic_mean: z.number().describe("Harmonic mean of the per-frame VMAF (weighs bad frames more)"),
  min: z.number().describe("Lowest per-frame VMAF"),
  frame_count: z.number().int().describe("Frames scored"),
  bitrate_bps: z.number().describe("File size x 8 / duration, bits per second (0: unknown, e.g. raw input)"),
  width: z.number().int().describe("The rendition's own width (before it was scaled to the reference's)"),
  height: z.number().int(),
  codec: z.string().describe("Codec of the rendition (ffmpeg's name; rawvideo for raw/Y4M)"),
  on_hull: z
    .boolean()
    .describe("On the upper convex hull of bitrate vs score: no mix of other renditions scores better at its bitrate"),
  worst_frames: z
    .array(z.object({ frame: z.number().int(), score: z.number() }))
    .describe("The lowest-scoring frames, worst first"),
  frames: z.array(z.number()).optional().describe("Per-frame VMAF in frame order (only with include_frames)"),
  alignment: AlignmentViewSchema.optional().describe(
    "With sync auto: how this rendition was lined up with the reference (each rendition has its own)"
  )
})
export type RenditionView = z.infer<typeof RenditionViewSchema>

export const LadderViewSchema = z.object({
  reference: z.string().describe("The reference every rendition was scored against"),
  model: z.string().describe("Model used"),
  model_sha256: z.string(),
  reference_passes: z
    .number()
    .int()
    .describe(
      'Passes over the reference: 1 (read and analysed once for the ladder), or with sync "auto" one per group of renditions that drop the same reference frames'
    ),
  renditions: z.array(RenditionViewSchema).describe("One per rendition, in request order"),
  best: z.string().describe("Label of the rendition with the highest score"),
  hull: z.array(z.string()).describe("Labels of the renditions on the convex hull, by bitrate")
})
export type LadderView = z.infer<typeof LadderViewSchema>

/** A ladder's response as the tools show it (per-frame arrays only when asked for). */
export const ladderView = (
  reference: string,
  wire: WireLadderResponse,
  distortedOf: (label: string) => string,
  includeFrames: boolean
): LadderView => {
  const renditions = wire.renditions.map((rendition) => {
    const summary = rendition.summary
    return {
      label: rendition.label,
      distorted: distortedOf(rendition.label),
      score: rendition.score,
      p1: summary?.p1 ?? Number.NaN,
      p5: summary?.p5 ?? Number.NaN,
      harmonic_mean: rendition.pooled?.harmonic_mean.vmaf ?? Number.NaN,
      min: rendition.pooled?.min.vmaf ?? Number.NaN,
      frame_count: rendition.frame_count,
      bitrate_bps: summary?.bitrate_bps ?? 0,
      width: summary?.width ?? 0,
      height: summary?.height ?? 0,
      codec: summary?.codec ?? "",
      on_hull: summary?.on_hull ?? false,
      worst_frames: (summary?.worst_frames ?? []).map((frame) => ({ frame: frame.frame, score: frame.score })),
      ...(includeFrames ? { frames: rendition.frames.map((frame) => frame.metrics.vmaf ?? Number.NaN) } : {}),
      ...alignmentView(rendition.alignment)
    }
  })
  const best = renditions.reduce<RenditionView | undefined>(
    (top, rendition) => (top === undefined || rendition.score > top.score ? rendition : top),
    undefined
  )
  return {
    reference,
    model: wire.provenance?.model ?? "",
    model_sha256: wire.provenance?.model_sha256 ?? "",
    reference_passes: wire.provenance?.reference_passes ?? 0,
    renditions,
    best: best?.label ?? "",
    hull: renditions
      .filter((rendition) => rendition.on_hull)
      .sort((a, b) => a.bitrate_bps - b.bitrate_bps)
      .map((rendition) => rendition.label)
  }
}

/** A rendition's alignment in the ladder's line: where its pairs start, its warning never left out. */
const renditionAligned = ({ alignment }: RenditionView): string =>
  alignment === undefined
    ? ""
    : `; aligned from reference frame ${alignment.reference_start}, distorted frame ${alignment.distorted_start}, ${alignment.frames} pairs` +
      (alignment.warning ? `, warning: ${alignment.warning}` : "")

export const ladderLine = (view: LadderView): string =>
  `${view.renditions.length} renditions: ${view.renditions
    .map(
      (rendition) =>
        `${rendition.label} VMAF ${rendition.score.toFixed(3)} (p5 ${rendition.p5.toFixed(3)}${renditionAligned(rendition)})`
    )
    .join(", ")}; best ${view.best}; convex hull ${view.hull.join(" → ") || "n/a"}`

export const JobSchema = z.object({
  id: z.string().describe("Job identifier (UUID), for get_job, wait_job, cancel_job and describe_worst_frames"),
  state: JobStateSchema,
  tenant_id: z.string().describe("Tenant the job belongs to (the token's)"),
  reference: z.string().describe("Reference (pristine) input as submitted"),
  distorted: z.string().describe("Distorted (encoded) input as submitted"),
  model: z.string().describe("Model requested (empty: the default vmaf_v0.6.1)"),
  frames_done: z.number().int().describe("Frames scored so far"),
  created_at: z.string().optional().describe("When it was submitted (RFC 3339)"),
  started_at: z.string().optional().describe("When a node started it"),
  finished_at: z.string().optional().describe("When it reached its final state"),
  node_id: z.string().optional().describe("Node session scoring it"),
  submitted_by: z.string().optional().describe("Subject of the submitting token"),
  error: z.string().optional().describe("Why it failed (state failed)"),
  result: ScoreSummarySchema.optional().describe("The final result (state finished) or the partial one while running"),
  renditions: z
    .array(z.object({ label: z.string(), distorted: z.string() }))
    .optional()
    .describe("A ladder job: its renditions (distorted is then empty)"),
  rendition_progress: z
    .array(
      z.object({
        label: z.string(),
        frames_done: z.number().int().describe("Frames of this rendition scored so far")
      })
    )
    .optional()
    .describe("A ladder job: frames scored per rendition as its node last reported them (absent before the first)"),
  ladder: LadderViewSchema.optional().describe("A ladder job's final result: every rendition's scores and the hull"),
  segments: z
    .array(
      z.object({
        index: z.number().int(),
        first_frame: z.number().int().describe("The segment's first frame in the clip"),
        frame_count: z.number().int(),
        state: JobStateSchema,
        node_id: z.string().describe("Node session scoring it, or that scored it"),
        attempts: z
          .number()
          .int()
          .describe("Times it was handed to a node (a lost node's segment is handed out again)"),
        frames_done: z.number().int()
      })
    )
    .optional()
    .describe("A segment job (segment_frames): its segments once planned, in frame order")
})
export type JobView = z.infer<typeof JobSchema>

const isoOf = (timestamp: WireTimestamp | null): string | undefined =>
  timestamp === null || (timestamp.seconds === 0 && timestamp.nanos === 0)
    ? undefined
    : new Date(timestamp.seconds * 1000 + Math.floor(timestamp.nanos / 1e6)).toISOString()

/** Keeps only the keys whose value is defined (zod's optional fields reject explicit undefined in JSON). */
const defined = <T extends Record<string, unknown>>(record: T): T =>
  Object.fromEntries(Object.entries(record).filter(([, value]) => value !== undefined && value !== "")) as T

/** The result's percentile maps, infinite values as null (JSON has no infinity); none in an older result. */
const percentilesOf = (wire: WireScoreResponse): Pick<ScoreSummary, "percentiles"> => {
  const pooled = wire.pooled
  const present = percentileNames.filter((name) => Object.keys(pooled?.[name] ?? {}).length > 0)
  if (present.length === 0) return {}
  return {
    percentiles: Object.fromEntries(
      present.map((name) => [
        name,
        Object.fromEntries(
          Object.entries(pooled?.[name] ?? {}).map(([feature, value]) => [
            feature,
            Number.isFinite(value) ? value : null
          ])
        )
      ])
    )
  }
}

export const scoreSummary = (wire: WireScoreResponse): ScoreSummary => ({
  score: wire.score,
  frame_count: wire.frame_count,
  features: finiteOrNull(wire.features),
  min: finiteOrNull(wire.pooled?.min),
  max: finiteOrNull(wire.pooled?.max),
  harmonic_mean: finiteOrNull(wire.pooled?.harmonic_mean),
  ...percentilesOf(wire),
  model: wire.provenance?.model ?? "",
  model_sha256: wire.provenance?.model_sha256 ?? "",
  backend: wire.provenance?.backend_used ?? "",
  ...alignmentView(wire.alignment)
})

export const jobView = (wire: WireJob): JobView => {
  const state = stateOf(wire.state)
  const hasResult = wire.result !== null && (state === "finished" || wire.result.frame_count > 0)
  const ladder = wire.ladder ?? undefined
  const distortedOf = (label: string) =>
    ladder?.renditions.find((rendition) => rendition.label === label)?.distorted ?? ""
  return {
    id: wire.id,
    state,
    tenant_id: wire.tenant_id,
    reference: wire.request?.reference ?? ladder?.reference ?? "",
    distorted: wire.request?.distorted ?? "",
    model: wire.request?.model ?? ladder?.model ?? "",
    frames_done: wire.frames_done,
    ...defined({
      created_at: isoOf(wire.created_at),
      started_at: isoOf(wire.started_at),
      finished_at: isoOf(wire.finished_at),
      node_id: wire.node_id,
      submitted_by: wire.submitted_by,
      error: wire.error
    }),
    ...(hasResult && wire.result !== null ? { result: scoreSummary(wire.result) } : {}),
    ...(ladder === undefined
      ? {}
      : {
          renditions: ladder.renditions.map((rendition) => ({ label: rendition.label, distorted: rendition.distorted }))
        }),
    ...(ladder !== undefined && (wire.rendition_progress ?? []).length > 0
      ? {
          rendition_progress: (wire.rendition_progress ?? []).map((entry) => ({
            label: entry.label,
            frames_done: entry.frames_done
          }))
        }
      : {}),
    ...(ladder !== undefined && state === "finished" && wire.ladder_result
      ? { ladder: ladderView(ladder.reference, wire.ladder_result, distortedOf, false) }
      : {}),
    ...((wire.segments ?? []).length > 0
      ? {
          segments: (wire.segments ?? []).map((segment) => ({
            index: segment.index,
            first_frame: segment.first_frame,
            frame_count: segment.frame_count,
            state: stateOf(segment.state),
            node_id: segment.node_id,
            attempts: segment.attempts,
            frames_done: segment.frames_done
          }))
        }
      : {})
  }
}

/** "segments: 4 of 6 finished on 3 nodes" for a segment job, "" otherwise. */
const segmentsText = (job: JobView): string => {
  const segments = job.segments ?? []
  if (segments.length === 0) return ""
  const finished = segments.filter((segment) => segment.state === "finished").length
  const nodes = new Set(segments.map((segment) => segment.node_id).filter((id) => id !== "")).size
  return `, segments: ${finished} of ${segments.length} finished on ${nodes} node${nodes === 1 ? "" : "s"}`
}

/** One line a person (or a model) reads first. */
export const jobLine = (job: JobView): string => {
  const score =
    job.ladder !== undefined
      ? `, ladder of ${ladderLine(job.ladder)}`
      : job.result === undefined
        ? ""
        : `, VMAF ${job.result.score.toFixed(3)} over ${job.result.frame_count} frames`
  const error = job.error === undefined ? "" : `: ${job.error}`
  const renditions = (job.rendition_progress ?? []).map((entry) => `${entry.label} ${entry.frames_done}`).join(", ")
  const progress =
    job.state === "running"
      ? `, ${job.frames_done} frames scored so far${renditions === "" ? "" : ` (${renditions})`}`
      : ""
  return `job ${job.id} is ${job.state}${progress}${segmentsText(job)}${score}${error}`
}

export const scoreLine = (summary: ScoreSummary): string =>
  `VMAF ${summary.score.toFixed(3)} over ${summary.frame_count} frames (model ${summary.model}; ` +
  `min ${(summary.min.vmaf ?? Number.NaN).toFixed(3)}, harmonic mean ${(summary.harmonic_mean.vmaf ?? Number.NaN).toFixed(3)})` +
  (summary.alignment ? `; aligned: ${alignmentLine({ ...summary.alignment, window: 0 })}` : "")

// --- worst frames -----------------------------------------------------------------------------

export const WorstFramesSchema = z.object({
  job_id: z.string(),
  metric: z.string().describe("Metric the frames are ranked by"),
  frame_count: z.number().int().describe("Frames in the job's result"),
  score: z.number().describe("The job's VMAF score (pooled mean), to set the worst frames against"),
  frames: z
    .array(
      z.object({
        frame: z.number().int().describe("Frame index among the frames scored (after skips)"),
        value: z.number().describe("The ranking metric's value on this frame"),
        metrics: FeatureMap.describe("Every feature of this frame by libvmaf name")
      })
    )
    .describe("The lowest-scoring frames, worst first"),
  worst_shots: z
    .array(
      z.object({
        shot: z.number().int().describe("The shot's index among the clip's shots in frame order"),
        first_frame: z.number().int().describe("Its first frame (scored-frame index)"),
        frame_count: z.number().int(),
        score: z.number().describe("Mean VMAF over the shot"),
        min: z.number().describe("Its lowest per-frame VMAF"),
        worst_frame: z.number().int().describe("The frame of that lowest score")
      })
    )
    .optional()
    .describe("With options.shots: the (at most 5) lowest-scoring shots (scenes between hard cuts), worst first")
})
export type WorstFrames = z.infer<typeof WorstFramesSchema>

/** The worst shots of a result scored with options.shots, worst first; undefined without shots. */
export const worstShotsOf = (
  shots: ReadonlyArray<WireShot> | undefined,
  worst: ReadonlyArray<number> | undefined
): WorstFrames["worst_shots"] => {
  if (!shots || shots.length === 0) return undefined
  return (worst ?? []).flatMap((index) => {
    const shot = shots[index]
    return shot
      ? [
          {
            shot: index,
            first_frame: shot.first_frame,
            frame_count: shot.frame_count,
            score: shot.score,
            min: shot.min,
            worst_frame: shot.worst_frame
          }
        ]
      : []
  })
}

export const worstFrames = (
  frames: ReadonlyArray<WireFrameScore>,
  metric: string,
  count: number
): WorstFrames["frames"] =>
  frames
    .filter((frame) => typeof frame.metrics[metric] === "number")
    .map((frame) => ({
      frame: frame.frame,
      value: frame.metrics[metric] ?? Number.NaN,
      metrics: finiteOrNull(frame.metrics)
    }))
    .sort((left, right) => left.value - right.value || left.frame - right.frame)
    .slice(0, count)

// --- compare ----------------------------------------------------------------------------------

const FrameDelta = z.object({
  frame: z.number().int(),
  a: z.number().describe("Value for distorted A"),
  b: z.number().describe("Value for distorted B"),
  delta: z.number().describe("b - a")
})

export const ComparisonSchema = z.object({
  reference: z.string(),
  metric: z.string().describe("Metric compared frame by frame"),
  a: ScoreSummarySchema.extend({ distorted: z.string() }).describe("Distorted A against the reference"),
  b: ScoreSummarySchema.extend({ distorted: z.string() }).describe("Distorted B against the reference"),
  score_delta: z.number().describe("b.score - a.score: positive means B looks better"),
  better: z.enum(["a", "b", "equal"]).describe("Which distorted clip scores higher overall"),
  per_frame: z
    .object({
      frames_compared: z.number().int().describe("Frames present in both results (matched by index)"),
      mean_delta: z.number().describe("Mean of b - a over the compared frames"),
      mean_abs_delta: z.number().describe("Mean of |b - a|"),
      frames_b_better: z.number().int(),
      frames_a_better: z.number().int(),
      frames_equal: z.number().int(),
      largest_gain: FrameDelta.optional().describe("The frame where B beats A by the most"),
      largest_loss: FrameDelta.optional().describe("The frame where B trails A by the most")
    })
    .describe("Frame-by-frame difference of the metric between B and A")
})
export type Comparison = z.infer<typeof ComparisonSchema>

export const compareFrames = (
  a: ReadonlyArray<WireFrameScore>,
  b: ReadonlyArray<WireFrameScore>,
  metric: string
): Comparison["per_frame"] => {
  const byFrame = new Map(a.map((frame) => [frame.frame, frame.metrics[metric]]))
  const deltas: Array<z.infer<typeof FrameDelta>> = []
  for (const frame of b) {
    const valueA = byFrame.get(frame.frame)
    const valueB = frame.metrics[metric]
    if (typeof valueA === "number" && typeof valueB === "number")
      deltas.push({ frame: frame.frame, a: valueA, b: valueB, delta: valueB - valueA })
  }
  const sum = deltas.reduce((total, entry) => total + entry.delta, 0)
  const sumAbs = deltas.reduce((total, entry) => total + Math.abs(entry.delta), 0)
  const gain = deltas.reduce<z.infer<typeof FrameDelta> | undefined>(
    (best, entry) => (entry.delta > 0 && (best === undefined || entry.delta > best.delta) ? entry : best),
    undefined
  )
  const loss = deltas.reduce<z.infer<typeof FrameDelta> | undefined>(
    (worst, entry) => (entry.delta < 0 && (worst === undefined || entry.delta < worst.delta) ? entry : worst),
    undefined
  )
  return {
    frames_compared: deltas.length,
    mean_delta: deltas.length === 0 ? 0 : sum / deltas.length,
    mean_abs_delta: deltas.length === 0 ? 0 : sumAbs / deltas.length,
    frames_b_better: deltas.filter((entry) => entry.delta > 0).length,
    frames_a_better: deltas.filter((entry) => entry.delta < 0).length,
    frames_equal: deltas.filter((entry) => entry.delta === 0).length,
    ...(gain === undefined ? {} : { largest_gain: gain }),
    ...(loss === undefined ? {} : { largest_loss: loss })
  }
}

// --- models -----------------------------------------------------------------------------------

/** The model a request without `model` gets. */
export const DEFAULT_MODEL = "vmaf_v0.6.1"

export const ModelListSchema = z.object({
  models: z.array(
    z.object({
      name: z.string().describe("Name to pass as `model`"),
      default: z.boolean().describe("Used when no model is given"),
      usable: z.boolean().describe("false: this build cannot score with it (see reason)"),
      reason: z.string().optional().describe("Why the model is not usable"),
      description: z.string().optional(),
      features: z.array(z.string()).optional().describe("Features the model reads"),
      model_source: z.string().optional().describe("builtin, or the model file in the controller's model directory"),
      sha256: z.string().optional().describe("SHA-256 of the model file (a score's provenance reports it)")
    })
  ),
  features: z
    .array(
      z.object({
        name: z.string().describe('Name to pass in options.features ("xpsnr")'),
        outputs: z.array(z.string()).describe('Its per-frame metrics ("xpsnr_y", "xpsnr_u", "xpsnr_v")'),
        implementation: z.string().describe("The implementation its numbers follow, with its version")
      })
    )
    .describe("Extra features a score or job may add with options.features, beside the model's"),
  source: z.string().describe("Where this list comes from: the controller, or svc-mcp's built-in list")
})
export type ModelList = z.infer<typeof ModelListSchema>

/** The controller's ListModels answer as the tool's view. */
export const modelListView = (wire: WireModelList): ModelList => ({
  models: wire.models.map((model) => ({
    name: model.name,
    default: model.name === DEFAULT_MODEL,
    usable: model.usable,
    ...defined({ reason: model.reason }),
    features: [...model.features],
    model_source: model.source,
    sha256: model.sha256
  })),
  features: (wire.features ?? []).map((feature) => ({
    name: feature.name,
    outputs: [...feature.outputs],
    implementation: feature.implementation
  })),
  source: "the controller (ListModels)"
})
