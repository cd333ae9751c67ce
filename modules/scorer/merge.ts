/**
 * The exact merge of a segment job (issue 30): the segments' per-frame values (lossless, each
 * frame numbered by its place in the title) concatenated in frame order, and every pooled value
 * computed over them by `poolFrames`, the same arithmetic in the same order as the native
 * scorer's svc_job_pooled over one pass (a running sum, a running sum of 1 / (v + 1), min and
 * max; mean = sum / n, harmonic mean = n / that sum - 1). So the merged result is the one pass's,
 * bit for bit; the job's precision and per_frame apply afterwards, as they do to one pass.
 */
import { applyPrecision, type Precision, precisionLabel } from "./precision.ts"
import type { FrameScore, ScoreResult } from "./scorer.ts"

/** The four poolings of every metric over frames, in frame order. */
export interface Pooled {
  readonly mean: Readonly<Record<string, number>>
  readonly min: Readonly<Record<string, number>>
  readonly max: Readonly<Record<string, number>>
  readonly harmonic_mean: Readonly<Record<string, number>>
}

/** Pools each metric of `frames` (every frame holds the same metrics) as svc_job_pooled does. */
export const poolFrames = (frames: ReadonlyArray<FrameScore>): Pooled => {
  const names = Object.keys(frames[0]?.metrics ?? {})
  const mean: Record<string, number> = {}
  const min: Record<string, number> = {}
  const max: Record<string, number> = {}
  const harmonic: Record<string, number> = {}
  for (const name of names) {
    let sum = 0
    let inverseSum = 0
    let low = 0
    let high = 0
    frames.forEach((frame, k) => {
      const value = frame.metrics[name] ?? Number.NaN
      sum += value
      inverseSum += 1 / (value + 1)
      if (k === 0 || value < low) low = value
      if (k === 0 || value > high) high = value
    })
    mean[name] = sum / frames.length
    min[name] = low
    max[name] = high
    harmonic[name] = frames.length / inverseSum - 1
  }
  return { mean, min, max, harmonic_mean: harmonic }
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
  output: { readonly precision: Precision; readonly perFrame: boolean }
): ScoreResult | undefined => {
  const [first] = segments
  if (first === undefined) return undefined
  const frames = segments.flatMap((segment) => segment.frames)
  if (frames.length === 0) return undefined
  const pooled = poolFrames(frames)
  const round = applyPrecision(output.precision)
  const features = rounded(pooled.mean, round)
  const modelNames = first.provenance.models?.map((model) => model.model) ?? [first.provenance.model]
  // The score of each model: "vmaf" alone, its own name among several (as one pass names them).
  const scoreOf = (name: string) => features[modelNames.length > 1 ? name : "vmaf"] ?? Number.NaN
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
      harmonic_mean: rounded(pooled.harmonic_mean, round)
    },
    provenance: { ...first.provenance, precision: precisionLabel(output.precision) }
  }
}
