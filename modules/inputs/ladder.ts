/**
 * Scoring a ladder's inputs: the reference is opened, read (or decoded by one ffmpeg child) and
 * pushed once; each rendition is opened through the same scoring-roots guard as a `Score` input,
 * read or decoded and scaled to the reference's layout by its own child, all in parallel and
 * paired in decode order. One frame of every input is held at a time (plus the scorer's small
 * window), so memory grows with the number of renditions, never with the clip's length.
 */
import { Chunk, Effect, Option, Stream } from "effect"
import type { InvalidGeometry, ScoreError, UnreadableInput } from "../scorer/errors.ts"
import { InvalidGeometry as GeometryError, InvalidScoreRequest } from "../scorer/errors.ts"
import {
  type LadderJob,
  type LadderProvenance,
  type LadderRenditionResult,
  type LadderResult,
  type RenditionSummary,
  worstFrameCount
} from "../scorer/ladder.ts"
import { bitrateOf, nearestRank, upperHull, worstFrames } from "../scorer/ladder-summary.ts"
import { rawGeometryRequired, type RawGeometry, type ScoreJob } from "../scorer/request.ts"
import type { LadderFrame, ScoreHooks, ScoreResult, Scorer } from "../scorer/scorer.ts"
import { scoreFeature } from "../scorer/scorer.ts"
import type { Ffmpeg } from "./ffmpeg.ts"
import { frameBytes, frameSource, geometryOf, openAndProbe, provenanceOf, type Side } from "./score.ts"

export interface LadderHooks<E> extends ScoreHooks<E> {
  /** Frames read or decoded so far by rendition `index` (request order). */
  readonly onRenditionProgress?: (index: number, frames: number) => Effect.Effect<void>
}

type FrameError = UnreadableInput | InvalidGeometry

/** The next frame of a stream, one at a time whatever its chunking; none at its end. */
const puller = (frames: Stream.Stream<Uint8Array, FrameError>) =>
  Effect.map(Stream.toPull(frames), (pull) => {
    let pending: Array<Uint8Array> = []
    let ended = false
    const next: Effect.Effect<Option.Option<Uint8Array>, FrameError> = Effect.suspend(() => {
      const head = pending.shift()
      if (head !== undefined) return Effect.succeed(Option.some(head))
      if (ended) return Effect.succeed(Option.none())
      return pull.pipe(
        Effect.map((chunk) => {
          pending = Chunk.toArray(chunk)
          return undefined
        }),
        Effect.catchAll((error) => {
          if (Option.isSome(error)) return Effect.fail(error.value)
          ended = true
          return Effect.void
        }),
        Effect.zipRight(Effect.suspend(() => next))
      )
    })
    return next
  })

/** Duration of a side in seconds from its stream information (0: unknown, as for raw YUV). */
const durationOf = (side: Side): number => {
  switch (side.format._tag) {
    case "Encoded":
      return side.format.stream.durationSeconds
    case "Y4m": {
      const { geometry, headerBytes, frameRate } = side.format
      // Each frame is a "FRAME\n" line and its planes (frame lines rarely carry parameters).
      const frames = Math.floor((side.input.size - headerBytes) / (frameBytes(geometry) + 6))
      return frameRate > 0 ? frames / frameRate : 0
    }
    case "Raw":
      return 0
  }
}

/** What a ladder user reads about one rendition (the hull is marked over the whole ladder after). */
const summarise = (side: Side, geometry: RawGeometry | undefined, result: ScoreResult): RenditionSummary => {
  const info = provenanceOf(side, geometry)
  const models = result.provenance.models ?? []
  const feature = models.length > 1 ? result.provenance.model : scoreFeature
  const frames = result.frames.map((frame) => ({ frame: frame.frame, score: frame.metrics[feature] ?? Number.NaN }))
  const scores = frames.map((frame) => frame.score)
  const duration = durationOf(side)
  return {
    p1: nearestRank(scores, 1),
    p5: nearestRank(scores, 5),
    worst_frames: worstFrames(frames, worstFrameCount),
    width: info.width,
    height: info.height,
    codec: info.codec,
    bitrate_bps: bitrateOf(side.input.size, duration),
    duration_s: duration,
    on_hull: false
  }
}

/** Scores a validated ladder: one pass over the reference, every rendition against it. */
export const scoreLadderInputs = <E = never>(
  scorer: Scorer,
  ladder: LadderJob,
  hooks: LadderHooks<E> = {}
): Effect.Effect<LadderResult, ScoreError | E, Ffmpeg> =>
  Effect.scoped(
    Effect.gen(function* () {
      const [first] = ladder.renditions
      if (first === undefined) return yield* new InvalidScoreRequest({ message: "renditions: none given" })
      // The ladder-wide settings are every rendition's (they were merged into each rendition's job).
      const shared: ScoreJob = first.job
      const reference = yield* openAndProbe(ladder.reference, ladder.referenceGeometry !== undefined, hooks)
      const sides: Array<Side> = []
      for (const rendition of ladder.renditions)
        sides.push(yield* openAndProbe(rendition.job.distorted, rendition.job.geometry !== undefined, hooks))
      const target = geometryOf(reference, ladder.referenceGeometry)
      if (target === undefined) return yield* new InvalidScoreRequest({ message: rawGeometryRequired })

      const referenceSource = yield* frameSource(
        reference,
        ladder.reference,
        {
          skip: shared.frameSkipRef,
          isDistorted: false,
          geometry: ladder.referenceGeometry,
          scale: shared.scale,
          reference: ladder.reference
        },
        target
      )
      const sources = yield* Effect.forEach(ladder.renditions, (rendition, index) =>
        frameSource(
          sides[index] as Side,
          rendition.job.distorted,
          {
            skip: rendition.job.frameSkipDist,
            isDistorted: true,
            geometry: rendition.job.geometry,
            scale: rendition.job.scale,
            reference: ladder.reference
          },
          target
        )
      )
      const nextReference = yield* puller(referenceSource.frames)
      const nextRenditions = yield* Effect.forEach(sources, (source) => puller(source.frames))
      const bytes = frameBytes(target)
      let paired = 0
      const lengthsDiffer = (shorter: string, longer: string) =>
        new GeometryError({
          message: `${shorter} has ${paired} frames after skipping, ${longer} has more: lengths differ`
        })

      // Every input's next frame, read concurrently (each decoder is its own process).
      const nextFrame: Effect.Effect<Option.Option<LadderFrame>, FrameError> = Effect.gen(function* () {
        if (shared.frameCount > 0 && paired >= shared.frameCount) return Option.none()
        const [referenceFrame, renditionFrames] = yield* Effect.all(
          [nextReference, Effect.all(nextRenditions, { concurrency: "unbounded" })],
          { concurrency: "unbounded" }
        )
        const missing = renditionFrames.findIndex(Option.isNone)
        if (Option.isNone(referenceFrame)) {
          if (missing === -1) {
            const longer = ladder.renditions[0]?.job.distorted ?? ""
            return yield* lengthsDiffer(ladder.reference, longer)
          }
          const present = renditionFrames.findIndex(Option.isSome)
          if (present !== -1)
            return yield* lengthsDiffer(
              ladder.renditions[missing]?.job.distorted ?? "",
              ladder.renditions[present]?.job.distorted ?? ""
            )
          return Option.none()
        }
        if (missing !== -1)
          return yield* lengthsDiffer(ladder.renditions[missing]?.job.distorted ?? "", ladder.reference)
        const distorted = new Uint8Array(bytes * renditionFrames.length)
        renditionFrames.forEach((frame, index) => {
          if (Option.isSome(frame)) distorted.set(frame.value, index * bytes)
        })
        paired++
        // Renditions are paired frame by frame: each has `paired` frames read or decoded.
        if (hooks.onRenditionProgress)
          for (const index of ladder.renditions.keys()) yield* hooks.onRenditionProgress(index, paired)
        return Option.some({ reference: referenceFrame.value, distorted })
      })
      const frames = Stream.repeatEffectOption(
        Effect.flatMap(Effect.mapError(nextFrame, Option.some), (frame) =>
          Option.isSome(frame) ? Effect.succeed(frame.value) : Effect.fail(Option.none())
        )
      )
      // Per-frame values are always read back: the summary's percentiles and worst frames need them.
      const streamJob: ScoreJob = { ...shared, geometry: target, frameSkipRef: 0, frameSkipDist: 0, perFrame: true }
      const scores = yield* scorer.scoreLadder(streamJob, ladder.renditions.length, frames, {
        ...(hooks.admitMemory ? { admitMemory: hooks.admitMemory } : {}),
        ...(hooks.onProgress ? { onProgress: hooks.onProgress } : {})
      })
      if (scores.framesPushed === 0) return yield* new GeometryError({ message: "no frames to score after the skips" })

      const decoder = referenceSource.decoder ?? sources.find((source) => source.decoder)?.decoder ?? ""
      const referenceInput = provenanceOf(reference, ladder.referenceGeometry)
      const renditions: Array<LadderRenditionResult> = ladder.renditions.map((rendition, index) => {
        const result = scores.results[index] as ScoreResult
        const side = sides[index] as Side
        const summary = summarise(side, rendition.job.geometry, result)
        return {
          label: rendition.label,
          ...result,
          frames: shared.perFrame ? result.frames : [],
          provenance: {
            ...result.provenance,
            decoder: referenceSource.decoder ?? sources[index]?.decoder ?? "",
            reference_input: referenceInput,
            distorted_input: provenanceOf(side, rendition.job.geometry),
            scaling: sources[index]?.scaling ?? "none"
          },
          summary
        }
      })
      const hull = upperHull(renditions.map((entry) => ({ bitrate: entry.summary.bitrate_bps, score: entry.score })))
      const marked = renditions.map((entry, index) => ({
        ...entry,
        summary: { ...entry.summary, on_hull: hull[index] ?? false }
      }))
      const firstResult = scores.results[0] as ScoreResult
      const motion = firstResult.provenance.feature_backends
        .map((entry) => entry.extractor)
        .filter((name) => name.endsWith("motion"))
      // Extractors whose reference side the native pass analysed once per frame for every rendition.
      const analysed =
        scores.referenceAnalyses > 0
          ? firstResult.provenance.feature_backends
              .map((entry) => entry.extractor)
              .filter((name) => name.startsWith("integer_vif") || name.startsWith("integer_adm"))
          : []
      const provenance: LadderProvenance = {
        reference_passes: scores.framesPushed > 0 ? scores.referenceLoads / scores.framesPushed : 0,
        reference_decoders: referenceSource.decoder === undefined ? 0 : 1,
        reference_frames: scores.framesPushed,
        shared: [referenceSource.decoder === undefined ? "reference read" : "reference decode", ...analysed, ...motion],
        reference_input: referenceInput,
        decoder,
        library: firstResult.provenance.library,
        model: firstResult.provenance.model,
        model_sha256: firstResult.provenance.model_sha256,
        ...(firstResult.provenance.models ? { models: firstResult.provenance.models } : {}),
        backend_used: firstResult.provenance.backend_used,
        precision: firstResult.provenance.precision
      }
      return { renditions: marked, provenance }
    })
  )
