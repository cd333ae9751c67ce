/**
 * The search pass of `options.sync: "auto"`: each input is read into 32x18 8-bit luma thumbnails
 * (576 bytes a frame), then alignment.ts lines them up. A raw YUV or Y4M side is read from its
 * descriptor, luma plane only, and reduced here (luma-thumbnails.ts). An encoded side within the
 * sync window comes with its thumbnails already made by its scoring decoder (alignment-once.ts:
 * decoded once, its frames held); a longer one is streamed instead where it can be
 * (alignment-stream.ts: decoded once, the search not run here); any other encoded side is
 * decoded a second time by its own ffmpeg child, which scales in its filter graph, so its
 * full-size frames are never held (a 4K 10-bit frame is 24 MB). What is admitted here, before anything is read, is each side's search
 * decoder (or a file side's one luma plane) and thumbnails, unless they were made already, and
 * the search's traceback band. The scoring pass starts after the search has released all of it.
 */
import { Effect } from "effect"
import { InvalidScoreRequest, type ScoreError, type ScoreHooks } from "../scorer/index.ts"
import {
  type Alignment,
  alignSteps,
  noMatchMessage,
  type SideThumbnails,
  searchBytes,
  thumbnailBytes,
  thumbnailHeight,
  thumbnailWidth
} from "./alignment.ts"
import { decoderLimits } from "./decoder-memory.ts"
import { type DecoderFailed, type DecoderMissing, Ffmpeg } from "./ffmpeg.ts"
import { fileThumbnails, type LumaFile } from "./luma-thumbnails.ts"
import type { UnusableInput } from "./y4m.ts"

/** Frame rates closer than this (relative) are one rate (29.97 written as 30000/1001 or 29.97). */
const rateTolerance = 1e-3

/** The refusal of a pair with no frames on a side after its frame skip. */
export const noFramesToAlign = "options.sync: no frames to align after the skips"

/** One input as the search reads it. */
export interface SearchSide {
  readonly fd: number
  /** The input as the request names it. */
  readonly path: string
  /** `frame_skip_*`: frames before these are not searched. */
  readonly skip: number
  /** The most frames it can hold (its declaration, or its size over a frame's). */
  readonly frames: number
  /** A raw YUV or Y4M input: read from the descriptor, no decoder. */
  readonly file: LumaFile | undefined
  /** Its decoder's memory estimate (one thread), or a file side's luma plane buffer. */
  readonly memory: number
  /** Frames per second its header or container says; 0 when unknown. */
  readonly frameRate: number
}

/** How a failure to read an input is told. */
export type SearchFailure = (path: string) => (error: DecoderMissing | DecoderFailed | UnusableInput) => ScoreError

/**
 * One side's thumbnails after its frame skip: a file side read from its descriptor, an encoded
 * side decoded a second time (small output).
 */
export const searchThumbnails = (
  side: SearchSide,
  failed: SearchFailure
): Effect.Effect<SideThumbnails, ScoreError, Ffmpeg> =>
  side.file !== undefined
    ? Effect.mapError(fileThumbnails(side.file, side.skip), failed(side.path))
    : decodedThumbnails(side, failed)

const decodedThumbnails = (
  side: SearchSide,
  failed: SearchFailure
): Effect.Effect<SideThumbnails, ScoreError, Ffmpeg> =>
  Effect.flatMap(Ffmpeg, (ffmpeg) =>
    ffmpeg
      .lumaThumbnails(
        side.fd,
        { width: thumbnailWidth, height: thumbnailHeight },
        {
          ...decoderLimits(side.memory, ffmpeg.limits.cpuSeconds),
          maxFrames: side.frames + 1
        }
      )
      .pipe(
        Effect.mapError(failed(side.path)),
        Effect.map((bytes) => {
          const frames = Math.floor(bytes.length / thumbnailBytes)
          const kept = Math.max(0, frames - side.skip)
          return { frames: kept, bytes: bytes.subarray(side.skip * thumbnailBytes, frames * thumbnailBytes) }
        })
      )
  )

/** Bytes a side's thumbnails take. */
export const thumbnailsBytes = (side: SearchSide) => side.frames * thumbnailBytes

/** Refuses (400) a pair whose sides declare different frame rates: frames of one rate are paired. */
export const oneRate = (
  reference: Pick<SearchSide, "path" | "frameRate">,
  distorted: Pick<SearchSide, "path" | "frameRate">
): Effect.Effect<void, InvalidScoreRequest> => {
  const [referenceRate, distortedRate] = [reference.frameRate, distorted.frameRate]
  return referenceRate > 0 &&
    distortedRate > 0 &&
    Math.abs(referenceRate - distortedRate) > rateTolerance * Math.max(referenceRate, distortedRate)
    ? new InvalidScoreRequest({
        message: `options.sync "auto" pairs frames of one rate: the reference ${reference.path} is ${rateText(referenceRate)} fps, the distorted ${distorted.path} is ${rateText(distortedRate)} fps`
      })
    : Effect.void
}

/**
 * Where the distorted clip lines up with the reference, in frames after each side's frame skip;
 * refused (400) for different frame rates and for no match within the window. `known`: a side's
 * thumbnails already made (a ladder makes the reference's once for every rendition; a side
 * decoded once for the search and the score has them from its scoring decoder), admitted by
 * whoever made them.
 */
export const findAlignment = <E>(
  reference: SearchSide,
  distorted: SearchSide,
  window: number,
  failed: SearchFailure,
  hooks: Pick<ScoreHooks<E>, "admitMemory">,
  known: { readonly reference?: SideThumbnails | undefined; readonly distorted?: SideThumbnails | undefined } = {}
): Effect.Effect<Alignment, ScoreError | E, Ffmpeg> =>
  Effect.scoped(
    Effect.gen(function* () {
      yield* oneRate(reference, distorted)
      const sideCost = (side: SearchSide, made: SideThumbnails | undefined) =>
        made === undefined ? side.memory + thumbnailsBytes(side) : 0
      const band = searchBytes(reference.frames, distorted.frames, window)
      if (hooks.admitMemory)
        yield* hooks.admitMemory(sideCost(reference, known.reference) + sideCost(distorted, known.distorted) + band)
      const thumbnailsOf = (side: SearchSide, made: SideThumbnails | undefined) =>
        made === undefined ? searchThumbnails(side, failed) : Effect.succeed(made)
      const [refThumbs, disThumbs] = yield* Effect.all(
        [thumbnailsOf(reference, known.reference), thumbnailsOf(distorted, known.distorted)],
        { concurrency: 2 }
      )
      if (refThumbs.frames === 0 || disThumbs.frames === 0)
        return yield* new InvalidScoreRequest({ message: noFramesToAlign })
      // The search runs on this thread: in steps (tens of milliseconds), the event loop turning between them.
      const steps = alignSteps(refThumbs, disThumbs, window)
      let step = steps.next()
      while (!step.done) {
        yield* Effect.sleep(0)
        step = steps.next()
      }
      const found = step.value
      if ("_tag" in found) return yield* new InvalidScoreRequest({ message: noMatchMessage(found) })
      return found
    })
  )

const rateText = (rate: number) => String(Math.round(rate * 1000) / 1000)
