/**
 * The exact merge of a segment job (issue 30): the segments' per-frame values (lossless, each
 * frame numbered by its place in the title) concatenated in frame order, and every pooled value
 * computed over them by `poolFrames`, the same arithmetic in the same order as the native
 * scorer's svc_job_pooled over one pass (a running sum, a running sum of 1 / (v + 1), min and
 * max; mean = sum / n, harmonic mean = n / that sum - 1). So the merged result is the one pass's,
 * bit for bit; the job's precision and per_frame apply afterwards, as they do to one pass.
 * Percentiles come from `percentilesOf` over the merged frames, as one pass computes them.
 * Shots too: each segment's frames carry their cut measure (read with the context frames before
 * the segment, so a cut at a segment's first frame is measured as one pass measures it), and the
 * title's shots are found over the concatenated measures by the one pass's rule. Their
 * thumbnails: each segment renders those of `segmentThumbnailFrames` (a superset of the title's
 * shots' worst frames in it), and the merge keeps the worst shots' ones, as one pass picks them.
 */
import {
  harmonicMean,
  layoutOfPixelFormat,
  mean,
  type PercentileName,
  percentileNames,
  percentilesOf,
  xpsnrPlanes,
  xpsnrPooled
} from "./pooling.ts"
import { applyPrecision, type Precision, precisionLabel } from "./precision.ts"
import type { FrameScore, ScoreResult } from "./result.ts"
import {
  roundShots,
  type ShotOptions,
  scoreShots,
  segmentCutMetric,
  segmentWorstFrames,
  shotStarts,
  worstShotFrames,
  worstShots
} from "./shots.ts"

/** Every pooling of every metric over frames, in frame order. */
export interface Pooled {
  readonly mean: Readonly<Record<string, number>>
  readonly min: Readonly<Record<string, number>>
  readonly max: Readonly<Record<string, number>>
  readonly harmonic_mean: Readonly<Record<string, number>>
  readonly percentiles: Readonly<Record<PercentileName, Readonly<Record<string, number>>>>
}

/**
 * Pools each metric of `frames` (every frame holds the same metrics): mean and harmonic mean by
 * pooling.ts (svc_job_pooled's arithmetic, in frame order), min, max, and the percentiles by
 * `percentilesOf`, as one pass pools them.
 */
export const poolFrames = (frames: ReadonlyArray<FrameScore>): Pooled => {
  const names = Object.keys(frames[0]?.metrics ?? {})
  const column = (name: string) => frames.map((frame) => frame.metrics[name] ?? Number.NaN)
  const each = (pool: (values: ReadonlyArray<number>) => number) =>
    Object.fromEntries(names.map((name) => [name, pool(column(name))]))
  const extreme = (pick: (value: number, best: number) => boolean) => (values: ReadonlyArray<number>) =>
    values.reduce((best, value, k) => (k === 0 || pick(value, best) ? value : best), 0)
  const ranked = Object.fromEntries(names.map((name) => [name, percentilesOf(column(name))]))
  return {
    mean: each(mean),
    min: each(extreme((value, best) => value < best)),
    max: each(extreme((value, best) => value > best)),
    harmonic_mean: each(harmonicMean),
    percentiles: Object.fromEntries(
      percentileNames.map((p) => [p, Object.fromEntries(names.map((name) => [name, ranked[name]?.[p] ?? Number.NaN]))])
    ) as Record<PercentileName, Record<string, number>>
  }
}

/**
 * xpsnr's means replaced by its filter's summary (xpsnrPooled, as one pass computes it), on the
 * scored layout the segments report as their reference input.
 */
const withXpsnrSummary = (
  means: Readonly<Record<string, number>>,
  frames: ReadonlyArray<FrameScore>,
  first: ScoreResult
): Readonly<Record<string, number>> => {
  const input = first.provenance.reference_input
  const layout = input && layoutOfPixelFormat(input.width, input.height, input.pixel_format)
  return Object.fromEntries(
    Object.entries(means).map(([name, value]) => {
      const plane = xpsnrPlanes[name]
      if (plane === undefined) return [name, value]
      if (layout === undefined)
        throw new Error(`xpsnr's summary needs the reference's layout; got ${input?.pixel_format}`)
      return [
        name,
        xpsnrPooled(
          frames.map((frame) => frame.metrics[name] ?? Number.NaN),
          layout,
          plane
        )
      ]
    })
  )
}

/** The name of a model's score: "vmaf" alone, its own name among several (as one pass names them). */
const scoreNameOf = (result: ScoreResult) => {
  const modelNames = result.provenance.models?.map((model) => model.model) ?? [result.provenance.model]
  return { modelNames, scoreName: (name: string) => (modelNames.length > 1 ? name : "vmaf") }
}

/**
 * The scored frames (the title's indices) a segment's result renders thumbnails of, from its
 * lossless per-frame values: shots.ts's `segmentWorstFrames` over its cut measures and its
 * first model's scores. None without shots.
 */
export const segmentThumbnailFrames = (
  segment: ScoreResult,
  job: { readonly subsample: number; readonly shots?: ShotOptions | undefined }
): ReadonlyArray<number> => {
  if (!job.shots) return []
  const { modelNames, scoreName } = scoreNameOf(segment)
  const name = scoreName(modelNames[0] ?? "")
  const frames = segment.frames
  return segmentWorstFrames(
    frames.map((frame) => frame.metrics[segmentCutMetric] ?? 0),
    frames.map((frame) => frame.metrics[name] ?? Number.NaN),
    job.shots
  ).map((local) => (frames[local]?.frame ?? 0) / job.subsample)
}

const rounded = (values: Readonly<Record<string, number>>, round: (value: number) => number) =>
  Object.fromEntries(Object.entries(values).map(([name, value]) => [name, round(value)]))

/**
 * One result from the segments' results (in segment order, lossless, per frame): frames
 * concatenated, pooled over them, then the job's precision and per_frame applied. Provenance is
 * the first segment's (every segment ran the same models; backends give identical numbers).
 */
export const mergeSegmentResults = (
  segments: ReadonlyArray<ScoreResult>,
  output: { readonly precision: Precision; readonly perFrame: boolean; readonly shots?: ShotOptions | undefined }
): ScoreResult | undefined => {
  const [first] = segments
  if (first === undefined) return undefined
  const measured = segments.flatMap((segment) => segment.frames)
  if (measured.length === 0) return undefined
  const cuts = measured.map((frame) => frame.metrics[segmentCutMetric] ?? 0)
  const frames = measured.map(({ frame, metrics: { [segmentCutMetric]: _cut, ...metrics } }) => ({ frame, metrics }))
  const pooled = poolFrames(frames)
  const round = applyPrecision(output.precision)
  const features = rounded(withXpsnrSummary(pooled.mean, frames, first), round)
  const { modelNames, scoreName } = scoreNameOf(first)
  const scoreOf = (name: string) => features[scoreName(name)] ?? Number.NaN
  const shots = output.shots
    ? scoreShots(
        shotStarts(cuts, output.shots),
        frames.map((frame) => frame.metrics[scoreName(modelNames[0] ?? "")] ?? Number.NaN)
      )
    : []
  const worst = worstShots(shots)
  // The worst shots' worst frames, worst first, from the segments' renders (a frame none holds,
  // past a segment's cap or unreadable there, is left out as one pass leaves out an unreadable one).
  const rendered = new Map(segments.flatMap((segment) => segment.thumbnails ?? []).map((t) => [t.frame, t] as const))
  const thumbnails = worstShotFrames(shots, worst).flatMap((frame) => rendered.get(frame) ?? [])
  return {
    ...first,
    score: scoreOf(modelNames[0] ?? ""),
    features,
    scores: Object.fromEntries(modelNames.map((name) => [name, scoreOf(name)])),
    frames: output.perFrame
      ? frames.map((frame) => ({ frame: frame.frame, metrics: rounded(frame.metrics, round) }))
      : [],
    frame_count: frames.length,
    pooled: {
      min: rounded(pooled.min, round),
      max: rounded(pooled.max, round),
      harmonic_mean: rounded(pooled.harmonic_mean, round),
      ...Object.fromEntries(percentileNames.map((p) => [p, rounded(pooled.percentiles[p], round)]))
    },
    shots: roundShots(shots, round),
    worst_shots: worst,
    thumbnails,
    provenance: { ...first.provenance, precision: precisionLabel(output.precision) }
  }
}
