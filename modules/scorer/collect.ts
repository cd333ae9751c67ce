/** Reading every result of a finished native job into a ScoreResult (a file job or a stream's job view). */
import { implementationOf } from "./extra-features.ts"
import type { NativeScorerLibrary } from "./library.ts"
import type { ModelSet } from "./model-set.ts"
import type { LoadedModel } from "./models.ts"
import { type NativeSymbols, NativePool, type Pointer } from "./native.ts"
import { firstScoredFrame, widestBackend } from "./native-job.ts"
import { type PercentileName, percentileNames, percentilesOf, xpsnrPlanes, xpsnrPooled } from "./pooling.ts"
import { applyPrecision, precisionLabel } from "./precision.ts"
import type { ScoreJob } from "./request.ts"
import { type FrameScore, type ScoreResult, scoreFeature } from "./result.ts"
import { roundShots, type Shot, scoreShots, segmentCutMetric, shotStarts, worstShots } from "./shots.ts"

/** The feature holding a model's score: "vmaf" alone, its own name among several (as the reference). */
const scoreFeatureOf = (set: ModelSet, model: LoadedModel) => (set.models.length > 1 ? model.name : scoreFeature)

/** The cut measure of scored frames first..first+count-1 of a job measured with SVC_OPT_SHOTS. */
const cutsOf = (symbols: NativeSymbols, handle: Pointer, first = 0, count = symbols.svc_job_frame_count(handle)) => {
  const cuts = new Float64Array(count)
  if (symbols.svc_job_frame_cuts(handle, first, cuts, count) !== count) {
    throw new Error("the scorer measured no cuts for a job with shots")
  }
  return cuts
}

/**
 * A segment's shots are the title's, found by the merge: with shots, each of a segment's frames
 * carries its cut measure (`segmentCutMetric`), read here for frames first..first+count-1.
 */
export const segmentCutsOf = (
  symbols: NativeSymbols,
  handle: Pointer,
  job: Pick<ScoreJob, "segment" | "shots">,
  first: number,
  count: number
): Float64Array | undefined => (job.segment && job.shots ? cutsOf(symbols, handle, first, count) : undefined)

/** The shots of a finished job measured with SVC_OPT_SHOTS, scored with `scores` (the first model's). */
const shotsOf = (
  symbols: NativeSymbols,
  handle: Pointer,
  options: NonNullable<ScoreJob["shots"]>,
  scores: Float64Array | undefined
): ReadonlyArray<Shot> => {
  if (!scores) throw new Error("the scorer measured no score for a job with shots")
  return scoreShots(shotStarts(cutsOf(symbols, handle), options), scores)
}

/** Reads every result of a finished native job (a file job or a stream's job view). */
export const collectResult = (
  symbols: NativeSymbols,
  handle: Pointer,
  job: Pick<ScoreJob, "precision" | "perFrame" | "subsample" | "segment" | "shots">,
  set: ModelSet,
  library: NativeScorerLibrary["info"]
): ScoreResult => {
  const [model] = set.models
  if (!model) throw new Error("a score without a model")
  const round = applyPrecision(job.precision)
  const frameCount = symbols.svc_job_frame_count(handle)
  const metricCount = symbols.svc_job_metric_count(handle)
  const names = Array.from({ length: metricCount }, (_, i) => String(symbols.svc_job_metric_name(handle, i)))
  const pooled = (pool: number) => {
    const out = new Float64Array(1)
    return Object.fromEntries(
      names.map((name, i) => {
        symbols.svc_job_pooled(handle, i, pool, out)
        return [name, round(out[0] ?? Number.NaN)]
      })
    )
  }
  // Every metric's per-frame values: the percentiles need them all, the frames when asked for.
  const columns = names.map((_, i) => {
    const values = new Float64Array(frameCount)
    symbols.svc_job_frame_values(handle, i, values, frameCount)
    return values
  })
  const geometry = new Int32Array(4)
  symbols.svc_job_geometry(handle, geometry)
  const [width = 0, height = 0, pixelFormat = 420, bitdepth = 8] = geometry
  // xpsnr's mean is its filter's summary, from the one function a segment job's merge uses too.
  const features = Object.fromEntries(
    Object.entries(pooled(NativePool.mean)).map(([name, value]) => {
      const plane = xpsnrPlanes[name]
      const values = columns[names.indexOf(name)]
      return plane === undefined || values === undefined
        ? [name, value]
        : [name, round(xpsnrPooled(values, { width, height, pixelFormat, bitdepth }, plane))]
    })
  )
  const ranked = columns.map((values) => percentilesOf(values))
  const percentilePools = Object.fromEntries(
    percentileNames.map((p) => [
      p,
      Object.fromEntries(names.map((name, i) => [name, round(ranked[i]?.[p] ?? Number.NaN)]))
    ])
  ) as Record<PercentileName, Record<string, number>>
  const frames: Array<FrameScore> = []
  const segmentCuts = segmentCutsOf(symbols, handle, job, 0, frameCount)
  if (job.perFrame) {
    const firstFrame = firstScoredFrame(job)
    for (let frame = 0; frame < frameCount; frame++) {
      // With subsample N the k-th scored frame is input frame k·N (after the skips), as the reference numbers it.
      const metrics = Object.fromEntries(names.map((name, i) => [name, round(columns[i]?.[frame] ?? Number.NaN)]))
      if (segmentCuts) metrics[segmentCutMetric] = segmentCuts[frame] ?? 0
      frames.push({ frame: firstFrame + frame * job.subsample, metrics })
    }
  }
  const shots =
    job.shots && !job.segment
      ? shotsOf(symbols, handle, job.shots, columns[names.indexOf(scoreFeatureOf(set, model))])
      : []
  const extractorCount = symbols.svc_job_extractor_count(handle)
  const featureBackends = Array.from({ length: extractorCount }, (_, i) => {
    const extractor = String(symbols.svc_job_extractor_name(handle, i))
    return {
      extractor,
      backend: String(symbols.svc_job_extractor_backend(handle, i)),
      implementation: implementationOf(extractor)
    }
  })
  return {
    score: features[scoreFeatureOf(set, model)] ?? Number.NaN,
    features,
    scores: Object.fromEntries(
      set.models.map((entry) => [entry.name, features[scoreFeatureOf(set, entry)] ?? Number.NaN])
    ),
    frames,
    frame_count: frameCount,
    pooled: {
      min: pooled(NativePool.min),
      max: pooled(NativePool.max),
      harmonic_mean: pooled(NativePool.harmonic_mean),
      ...percentilePools
    },
    // Always present, as proto3 repeated fields are (empty without options.shots).
    shots: roundShots(shots, round),
    worst_shots: worstShots(shots),
    provenance: {
      library: { ...library, n_extractors: extractorCount },
      model: model.name,
      model_sha256: model.sha256,
      model_source: model.source,
      models: set.models.map((entry) => ({
        model: entry.name,
        model_sha256: entry.sha256,
        model_source: entry.source
      })),
      backend_used: widestBackend(featureBackends.map((entry) => entry.backend)),
      feature_backends: featureBackends,
      precision: precisionLabel(job.precision)
    }
  }
}
