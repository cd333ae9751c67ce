/**
 * Scoring a ladder's inputs: the reference is opened, read (or decoded by one ffmpeg child) once;
 * each rendition is opened through the same scoring-roots guard as a `Score` input, read or
 * decoded and scaled to the reference's layout by its own child, all in parallel and paired in
 * decode order. The library's own thread reads every input (files with pread, decoders' pipes),
 * holding a small window of frames, so memory grows with the number of renditions, never with
 * the clip's length, and no frame passes through JavaScript.
 */
import { Effect, type Scope } from "effect"
import {
  bitrateOf,
  InvalidGeometry as GeometryError,
  InvalidScoreRequest,
  type LadderJob,
  ladderFrames,
  type LadderProvenance,
  type LadderRange,
  type LadderRenditionResult,
  type LadderResult,
  type RawGeometry,
  type RenditionSummary,
  type ScoreError,
  type ScoreJob,
  type Scorer,
  type ScoreResult,
  scoreSummary,
  segmentReadFrames,
  segmentReadStart,
  segmentThumbnailFrames,
  withHull,
  worstShotFrames
} from "../scorer/index.ts"
import type { Ffmpeg } from "./ffmpeg.ts"
import type { Alignment } from "./alignment.ts"
import {
  alignPair,
  colorMatrixOf,
  countInputFrames,
  feedOf,
  type FrameSource,
  frameRateOf,
  frameSource,
  geometryOf,
  type InputHooks,
  notAVideo,
  openAndProbe,
  provenanceOf,
  referenceThumbnails,
  type Side,
  scoredInput,
  sideRead,
  sidePictures,
  titleFrames
} from "./score.ts"
import { y4mFrameCount } from "./y4m.ts"

export type LadderHooks<E> = InputHooks<E> & {
  /** Frames read or decoded so far by rendition `index` (request order). */
  readonly onRenditionProgress?: (index: number, frames: number) => Effect.Effect<void>
}

/** Duration of a side in seconds from its stream information (0: unknown, as for raw YUV). */
const durationOf = (side: Side): number => {
  switch (side.format._tag) {
    case "Encoded":
      return side.format.stream.durationSeconds
    case "Y4m": {
      const { frameRate } = side.format
      return frameRate > 0 ? y4mFrameCount(side.format, side.input.size) / frameRate : 0
    }
    case "Raw":
      return 0
  }
}

/** What a ladder user reads about one rendition (the hull is marked over the whole ladder after). */
const summarise = (side: Side, geometry: RawGeometry | undefined, result: ScoreResult): RenditionSummary => {
  const info = provenanceOf(side, geometry)
  const duration = durationOf(side)
  return {
    ...scoreSummary(result),
    width: info.width,
    height: info.height,
    codec: info.codec,
    bitrate_bps: bitrateOf(side.input.size, duration),
    duration_s: duration,
    on_hull: false
  }
}

/** Where an aligned ladder reads: the reference frames any rendition pairs, and each rendition's own frames. */
interface LadderPairing {
  readonly referenceStart: number
  readonly referenceDropped: ReadonlyArray<number>
  /** The ladder's frames (after frame_cnt): from the earliest rendition's first pair to the latest's last. */
  readonly frames: number
  /** The reference frames those are (the pass reads them). */
  readonly referenceRead: ReadonlyArray<number>
  readonly renditions: ReadonlyArray<{
    readonly alignment: Alignment
    /** Its distorted side's first paired frame and the frames it leaves out (its inserted frames). */
    readonly start: number
    readonly cut: ReadonlyArray<number>
    /** The ladder frames it pairs: its own overlap with the reference, after frame_cnt. */
    readonly range: LadderRange
  }>
}

/** Two renditions a single reference pass cannot score: `rendition` leaves out reference `frame`, which `other` pairs. */
interface DropConflict {
  readonly rendition: number
  readonly frame: number
  readonly other: number
}

/**
 * A ladder reads the reference once over the reference frames any rendition pairs (its frames:
 * from the earliest start to the latest end, on the reference's shared pairing); each rendition
 * is read at its own offset and scored over its own pairs only (`range`), so its result is its
 * pair's alone. frame_cnt counts each rendition's own pairs, as a pair's does. Renditions must
 * drop the same reference frames where they overlap (motion across one rendition's own cut would
 * compare reference frames another rendition reads between them): the conflict otherwise.
 */
const unionPairing = (alignments: ReadonlyArray<Alignment>, frameCount: number): LadderPairing | DropConflict => {
  const { frames: union, paired: referenceFrames } = ladderFrames(alignments)
  const indexOf = new Map(union.map((frame, index) => [frame, index]))
  const ranges: Array<LadderRange> = []
  for (const [index, frames] of referenceFrames.entries()) {
    const first = indexOf.get(frames[0] ?? -1) ?? 0
    const skipped = frames.findIndex((frame, k) => union[first + k] !== frame)
    if (skipped >= 0) {
      const missing = union[first + skipped] ?? 0
      return { rendition: index, frame: missing, other: referenceFrames.findIndex((list) => list.includes(missing)) }
    }
    ranges.push({ first, frames: frameCount > 0 ? Math.min(frameCount, frames.length) : frames.length })
  }
  const start = union[0] ?? 0
  const paired = new Set(union)
  const frames = Math.max(...ranges.map((range) => range.first + range.frames))
  return {
    referenceStart: start,
    referenceDropped: Array.from(
      { length: (union[union.length - 1] ?? start) - start + 1 },
      (_, k) => start + k
    ).filter((frame) => !paired.has(frame)),
    frames,
    referenceRead: union.slice(0, frames),
    renditions: alignments.map((alignment, index) => ({
      alignment,
      start: alignment.distorted_start,
      cut: alignment.distorted_frames_inserted,
      range: ranges[index] as LadderRange
    }))
  }
}

const isConflict = (pairing: LadderPairing | DropConflict): pairing is DropConflict => "rendition" in pairing

/**
 * The renditions (request order indices) of each reference pass of an aligned ladder, with the
 * pass's pairing: greedily, each rendition joins the first pass whose renditions it agrees with
 * (unionPairing: they drop the same reference frames where they overlap), else starts one.
 * Renditions that all agree: one pass.
 */
const passGroups = (alignments: ReadonlyArray<Alignment>, frameCount: number) => {
  const groups: Array<{ members: Array<number>; pairing: LadderPairing }> = []
  const pairingOf = (members: ReadonlyArray<number>) =>
    unionPairing(
      members.map((member) => alignments[member] as Alignment),
      frameCount
    )
  for (const index of alignments.keys()) {
    const joined = groups.some((group) => {
      const pairing = pairingOf([...group.members, index])
      if (isConflict(pairing)) return false
      group.members.push(index)
      group.pairing = pairing
      return true
    })
    // A rendition alone always agrees with itself.
    if (!joined) groups.push({ members: [index], pairing: pairingOf([index]) as LadderPairing })
  }
  return groups
}

/**
 * Each rendition's alignment with the reference (request order): the ones its job carries (a
 * segment's, found by its job's plan), else, with options.sync "auto", searched now, the
 * reference's thumbnails made once for every rendition (admitted for the caller's scope);
 * undefined: the ladder does not align.
 */
const renditionAlignments = <E>(
  ladder: LadderJob,
  reference: Side,
  sides: ReadonlyArray<Side>,
  target: RawGeometry,
  hooks: InputHooks<E>
): Effect.Effect<ReadonlyArray<Alignment> | undefined, ScoreError | E, Ffmpeg | Scope.Scope> =>
  Effect.gen(function* () {
    const given = ladder.renditions.flatMap((rendition) => (rendition.job.alignment ? [rendition.job.alignment] : []))
    if (given.length === ladder.renditions.length) return given
    // Some but not all: the shared pairing needs every rendition's.
    if (given.length > 0)
      return yield* new InvalidScoreRequest({
        message: `a ladder segment is scored with every rendition's alignment: ${given.length} given for ${ladder.renditions.length} renditions`
      })
    const shared = ladder.renditions[0]?.job
    if (shared?.sync === undefined) return undefined
    // A segment's renditions are paired over the reference frames of its range, so they cannot
    // be aligned over the whole title here: the plan aligns them and hands every segment its result.
    if (shared.segment !== undefined)
      return yield* new InvalidScoreRequest({
        message:
          'options.segment_frames: a ladder segment with options.sync "auto" is scored with its plan\'s alignments'
      })
    const searchReference = yield* referenceThumbnails(shared, reference, target, hooks)
    return yield* Effect.forEach(ladder.renditions, (rendition, index) =>
      alignPair(
        rendition.job,
        shared.sync?.window ?? 0,
        reference,
        sides[index] as Side,
        target,
        hooks,
        searchReference
      )
    )
  })

/** The reference and every rendition of a ladder, opened and probed; the reference's layout is the scoring target. */
const openLadder = <E>(ladder: LadderJob, hooks: InputHooks<E>) =>
  Effect.gen(function* () {
    const reference = yield* openAndProbe(
      ladder.reference,
      ladder.referenceGeometry !== undefined,
      hooks,
      ladder.referenceAsSent
    )
    const sides: Array<Side> = []
    for (const rendition of ladder.renditions)
      sides.push(
        yield* openAndProbe(
          rendition.job.distorted,
          rendition.job.geometry !== undefined,
          hooks,
          rendition.job.distortedAsSent
        )
      )
    const target = geometryOf(reference, ladder.referenceGeometry)
    if (target === undefined) return yield* notAVideo(ladder.reference)
    return { reference, sides, target }
  })

/**
 * The reference frames any rendition pairs and each rendition's own frames, or the refusal: one
 * pass scores only renditions that drop the same reference frames where they overlap. Only a
 * ladder in segments reaches this with others (an unsplit one is scored in passes: passGroups);
 * its segments are ranges of one pass's frames.
 */
const ladderPairing = (ladder: LadderJob, alignments: ReadonlyArray<Alignment>) => {
  const pairing = unionPairing(alignments, ladder.renditions[0]?.job.frameCount ?? 0)
  if (!isConflict(pairing)) return Effect.succeed(pairing)
  const label = (index: number) => ladder.renditions[index]?.label
  return Effect.fail(
    new InvalidScoreRequest({
      message: `options.segment_frames: rendition ${label(pairing.rendition)} drops reference frame ${pairing.frame}, which rendition ${label(pairing.other)} pairs (options.sync "auto"); a ladder job in segments reads the reference once, so its renditions must drop the same reference frames where they overlap (in one piece, options.segment_frames 0, such a ladder is scored in one reference pass per group of renditions that do)`
    })
  )
}

/**
 * The plan of a ladder job in segments with `options.sync: "auto"`: each rendition aligned with
 * the reference over the whole inputs, as one pass over the ladder aligns them (same refusals),
 * each input opened once through the caller's guard. `frames`: the ladder's frames (the
 * reference frames any rendition pairs, each rendition's after frame_cnt: the title the segments
 * cut); every segment is scored with the alignments (`ScoreJob.alignment` of each rendition), not
 * searched again.
 */
export const alignLadder = <E = never>(
  ladder: LadderJob,
  hooks: InputHooks<E> = {}
): Effect.Effect<{ readonly alignments: ReadonlyArray<Alignment>; readonly frames: number }, ScoreError | E, Ffmpeg> =>
  Effect.scoped(
    Effect.gen(function* () {
      const shared = ladder.renditions[0]?.job
      if (shared === undefined) return yield* new InvalidScoreRequest({ message: "renditions: none given" })
      const { reference, sides, target } = yield* openLadder(ladder, hooks)
      const alignments = yield* renditionAlignments(ladder, reference, sides, target, hooks)
      if (alignments === undefined)
        return yield* new InvalidScoreRequest({ message: 'a ladder\'s plan aligns only with options.sync "auto"' })
      const { frames } = yield* ladderPairing(ladder, alignments)
      return { alignments, frames }
    })
  )

/** A ladder's inputs once opened and probed (openLadder). */
interface OpenedLadder {
  readonly reference: Side
  readonly sides: ReadonlyArray<Side>
  readonly target: RawGeometry
}

/**
 * Scores a validated ladder: one pass over the reference, every rendition against it; with
 * options.sync "auto", renditions that drop different reference frames where they overlap are
 * scored in one pass per group of renditions that agree (passGroups, greedily in request order),
 * one pass after the other (memory is one pass's), the result assembled in request order as one
 * pass's would be. A ladder in segments is one pass (ladderPairing refuses others).
 */
export const scoreLadderInputs = <E = never>(
  scorer: Scorer,
  ladder: LadderJob,
  hooks: LadderHooks<E> = {}
): Effect.Effect<LadderResult, ScoreError | E, Ffmpeg> =>
  Effect.scoped(
    Effect.gen(function* () {
      const [first] = ladder.renditions
      if (first === undefined) return yield* new InvalidScoreRequest({ message: "renditions: none given" })
      const opened = yield* openLadder(ladder, hooks)
      // options.sync "auto": each rendition aligned on its own (or as its job's plan found it),
      // the reference read over the frames any rendition pairs, each rendition over its own
      // (unionPairing above).
      const alignments = yield* renditionAlignments(ladder, opened.reference, opened.sides, opened.target, hooks)
      const groups =
        alignments === undefined || first.job.segment !== undefined ? [] : passGroups(alignments, first.job.frameCount)
      if (groups.length <= 1) {
        const aligned = alignments === undefined ? undefined : yield* ladderPairing(ladder, alignments)
        const result = yield* scorePass(scorer, ladder, opened, aligned, hooks)
        return { ...result, renditions: withHull(result.renditions) }
      }
      return yield* scorePasses(scorer, ladder, opened, groups, hooks)
    })
  )

/**
 * An aligned ladder scored in several reference passes (`groups`, request order indices), one
 * after the other, each in its own scope (its decoders and memory admission released before the
 * next). Progress stays monotone: the frames done of every pass so far, scaled to the reference
 * frames the ladder reads. The provenance counts the passes, and as `reference_frames` the
 * reference frames any rendition pairs (each once, though passes may read a frame each).
 */
const scorePasses = <E>(
  scorer: Scorer,
  ladder: LadderJob,
  opened: OpenedLadder,
  groups: ReturnType<typeof passGroups>,
  hooks: LadderHooks<E>
): Effect.Effect<LadderResult, ScoreError | E, Ffmpeg> =>
  Effect.gen(function* () {
    const work = groups.reduce((sum, { pairing }) => sum + pairing.frames, 0)
    const referenceFrames = new Set(groups.flatMap(({ pairing }) => pairing.referenceRead)).size
    const { onProgress, onRenditionProgress } = hooks
    const passes: Array<{ readonly group: ReadonlyArray<number>; readonly result: LadderResult }> = []
    let before = 0
    for (const { members: group, pairing } of groups) {
      const done = before
      const result = yield* Effect.scoped(
        scorePass(
          scorer,
          { ...ladder, renditions: group.map((index) => ladder.renditions[index] as LadderJob["renditions"][number]) },
          { ...opened, sides: group.map((index) => opened.sides[index] as Side) },
          pairing,
          {
            ...hooks,
            ...(onProgress
              ? { onProgress: (frames: number) => onProgress(Math.floor((referenceFrames * (done + frames)) / work)) }
              : {}),
            ...(onRenditionProgress
              ? {
                  onRenditionProgress: (index: number, frames: number) => onRenditionProgress(group[index] ?? 0, frames)
                }
              : {})
          }
        )
      )
      passes.push({ group, result })
      before += pairing.frames
    }
    const byRendition = new Map(
      passes.flatMap(({ group, result }) => group.map((index, k) => [index, result.renditions[k]] as const))
    )
    const renditions = ladder.renditions.map((_, index) => byRendition.get(index) as LadderRenditionResult)
    const firstPass = passes[0]?.result.provenance as LadderProvenance
    return {
      renditions: withHull(renditions),
      provenance: {
        ...firstPass,
        reference_passes: passes.reduce((sum, { result }) => sum + result.provenance.reference_passes, 0),
        reference_decoders: passes.reduce((sum, { result }) => sum + result.provenance.reference_decoders, 0),
        reference_frames: referenceFrames
      }
    }
  })

/**
 * One pass over the reference (`aligned`: over the frames the ladder's renditions pair, each
 * rendition over its own), every rendition of `ladder` against it; its renditions not yet marked
 * on the hull (the caller marks them over the whole ladder).
 */
const scorePass = <E>(
  scorer: Scorer,
  ladder: LadderJob,
  { reference, sides, target }: OpenedLadder,
  aligned: LadderPairing | undefined,
  hooks: LadderHooks<E>
): Effect.Effect<LadderResult, ScoreError | E, Ffmpeg | Scope.Scope> =>
  Effect.gen(function* () {
    const shared = (ladder.renditions[0] as LadderJob["renditions"][number]).job
    // A segment (issue 30): the reference and every rendition read only the segment's frames
    // and context, an encoded one seeking to them (the pair path's frameSource); each
    // rendition's frames are the same range of the title's frame index as the reference's.
    const readFrames = segmentReadFrames(shared)
    const window = readFrames === undefined ? undefined : { frames: readFrames }
    const readStart = segmentReadStart(shared)
    // An aligned segment's range counts the ladder's frames: the reference reads from the input
    // frame of its first (context included), each rendition from its own first pair in the range
    // and only the frames it pairs there, cut frames left out (sideRead, as a pair's segment).
    const own = (index: number) => {
      const range = aligned?.renditions[index]?.range
      if (range === undefined) return undefined
      const first = Math.max(readStart, range.first)
      const end = range.first + range.frames
      const frames = Math.max(0, (readFrames === undefined ? end : Math.min(end, readStart + readFrames)) - first)
      // A rendition with no frame in the range reads its nearest one (never asked for): its decoder
      // stays within its input.
      const pair = Math.min(first - range.first, range.frames - 1)
      return { pair, frames, reads: { first: first - readStart, frames } }
    }
    const referenceSource = yield* frameSource(
      scorer,
      reference,
      ladder.reference,
      {
        ...sideRead(shared.frameSkipRef, aligned?.referenceStart, aligned?.referenceDropped, readStart),
        window,
        isDistorted: false,
        geometry: ladder.referenceGeometry,
        scale: shared.scale,
        reference: ladder.reference,
        threads: shared.threads
      },
      target
    )
    const sources = yield* Effect.forEach(ladder.renditions, (rendition, index) =>
      frameSource(
        scorer,
        sides[index] as Side,
        rendition.job.distorted,
        {
          ...sideRead(
            rendition.job.frameSkipDist,
            aligned?.renditions[index]?.start,
            aligned?.renditions[index]?.cut,
            own(index)?.pair ?? readStart
          ),
          window: window && { frames: Math.max(1, own(index)?.frames ?? window.frames) },
          isDistorted: true,
          geometry: rendition.job.geometry,
          scale: rendition.job.scale,
          reference: ladder.reference,
          threads: shared.threads
        },
        target
      )
    )
    // Per-frame values are always read back: the summary's percentiles and worst frames need them.
    const streamJob: ScoreJob = {
      ...shared,
      geometry: target,
      frameSkipRef: 0,
      frameSkipDist: 0,
      perFrame: true,
      frameCount: aligned === undefined ? shared.frameCount : aligned.frames,
      // The library reads no header of a fed side: xpsnr's rate and ssimulacra2's matrix come from here.
      frameRate: shared.frameRate || frameRateOf(reference),
      colorMatrix: colorMatrixOf(reference)
    }
    const { onRenditionProgress } = hooks
    const scores = yield* scorer.scoreLadder<never, never, E>(
      streamJob,
      ladder.renditions.length,
      feedOf([referenceSource, ...sources], target, [
        undefined,
        ...ladder.renditions.map((_, index) => own(index)?.reads)
      ]),
      {
        ...(hooks.admitMemory ? { admitMemory: hooks.admitMemory } : {}),
        ...(hooks.onProgress ? { onProgress: hooks.onProgress } : {}),
        // The library reads a rendition's frame with the reference's where the rendition pairs it.
        ...(onRenditionProgress
          ? {
              onFramesRead: (frames: number) =>
                Effect.forEach(
                  ladder.renditions.keys(),
                  (index) => {
                    const reads = own(index)?.reads
                    return onRenditionProgress(
                      index,
                      reads ? Math.min(reads.frames, Math.max(0, frames - reads.first)) : frames
                    )
                  },
                  { discard: true }
                )
            }
          : {})
      },
      aligned?.renditions.map((rendition) => rendition.range)
    )
    if (scores.framesPushed === 0) return yield* new GeometryError({ message: "no frames to score after the skips" })

    const decoder = referenceSource.decoder ?? sources.find((source) => source.decoder)?.decoder ?? ""
    const referenceInput = provenanceOf(reference, ladder.referenceGeometry)
    const scored = yield* Effect.forEach(ladder.renditions, (rendition, index) =>
      scoredInput(
        sides[index] as Side,
        rendition.job.geometry,
        sources[index] as FrameSource,
        target,
        rendition.job.scale
      )
    )
    // With shots, each rendition's worst shots' worst frames as pictures, the reference beside
    // the rendition (an encoded side decoded again for those frames only), as a pair score has.
    // A segment renders its candidates for them (merge.ts keeps the title's), as a pair's
    // segment does, an encoded side decoded from the seek point of the first one wanted.
    const thumbnails = yield* Effect.forEach(ladder.renditions, (rendition, index) => {
      const result = scores.results[index] as ScoreResult
      return shared.shots
        ? sidePictures(
            rendition.job,
            target,
            shared.segment ? segmentThumbnailFrames(result, shared) : worstShotFrames(result.shots, result.worst_shots),
            [
              // The rendition's own pairs: its alignment's reference frames beside its own.
              {
                side: reference,
                skip: shared.frameSkipRef,
                pairing: aligned?.renditions[index] && {
                  start: aligned.renditions[index].alignment.reference_start,
                  cut: aligned.renditions[index].alignment.reference_frames_dropped
                },
                isDistorted: false
              },
              {
                side: sides[index] as Side,
                skip: rendition.job.frameSkipDist,
                pairing: aligned?.renditions[index],
                isDistorted: true
              }
            ],
            hooks.admitMemory
          )
        : Effect.succeed([])
    })
    const renditions: Array<LadderRenditionResult> = ladder.renditions.map((rendition, index) => {
      const result = scores.results[index] as ScoreResult
      const side = sides[index] as Side
      const summary = summarise(side, rendition.job.geometry, result)
      return {
        label: rendition.label,
        ...result,
        thumbnails: thumbnails[index] ?? [],
        frames: shared.perFrame ? result.frames : [],
        provenance: {
          ...result.provenance,
          decoder: referenceSource.decoder ?? sources[index]?.decoder ?? "",
          reference_input: referenceInput,
          distorted_input: scored[index]?.input ?? provenanceOf(side, rendition.job.geometry),
          scaling: scored[index]?.scaling ?? "none"
        },
        ...(aligned?.renditions[index] ? { alignment: aligned.renditions[index].alignment } : {}),
        summary
      }
    })
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
      // A segment's own frames (its context frames left out), so the merge adds up the title's.
      reference_frames: shared.segment?.frames ?? scores.framesPushed,
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
    return { renditions, provenance }
  })

/**
 * The plan of a ladder job in segments (issue 30): the frames the title scores, counted on the
 * reference and on every rendition as a pair's plan counts its two inputs (countInputFrames), each
 * input opened once through the caller's guard. Segments are ranges of the reference's frame
 * index; every rendition is scored over the same range, so a rendition of another length is
 * refused, naming it, as a pair of different lengths is.
 */
export const countLadderFrames = <E = never>(
  scorer: Scorer,
  ladder: LadderJob,
  hooks: InputHooks<E> = {}
): Effect.Effect<number, ScoreError | E, Ffmpeg> =>
  Effect.scoped(
    Effect.gen(function* () {
      const [first] = ladder.renditions
      if (first === undefined) return yield* new InvalidScoreRequest({ message: "renditions: none given" })
      const shared = first.job
      const reference = yield* openAndProbe(ladder.reference, ladder.referenceGeometry !== undefined, hooks)
      if (geometryOf(reference, ladder.referenceGeometry) === undefined) return yield* notAVideo(ladder.reference)
      const counts = [
        yield* countInputFrames(
          scorer,
          { ...shared, geometry: ladder.referenceGeometry },
          reference,
          ladder.reference,
          shared.frameSkipRef,
          hooks
        )
      ]
      for (const rendition of ladder.renditions) {
        const { job } = rendition
        const side = yield* openAndProbe(job.distorted, job.geometry !== undefined, hooks)
        if (geometryOf(side, job.geometry) === undefined) return yield* notAVideo(job.distorted)
        counts.push(yield* countInputFrames(scorer, job, side, job.distorted, job.frameSkipDist, hooks))
      }
      return yield* titleFrames(shared.frameCount, counts, (index) => {
        const rendition = ladder.renditions[index - 1]
        return rendition === undefined
          ? `${ladder.reference} has ${counts[0]} frames after skipping ${shared.frameSkipRef}`
          : `rendition ${rendition.label} (${rendition.job.distorted}) has ${counts[index]} frames after skipping ${rendition.job.frameSkipDist}`
      })
    })
  )
