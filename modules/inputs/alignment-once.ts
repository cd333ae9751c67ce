/**
 * One decode for the search and the score (`options.sync: "auto"`, issue 31 item 6). An encoded
 * side is decoded once, by the scoring decoder itself (same filters, threads and walls), which
 * also writes each decoded frame's luma thumbnail on a second output, scaled by the same filter
 * as the search's own decode (`Ffmpeg.decodeWithThumbnails`): the search sees exactly the
 * thumbnails it saw when it decoded the input a second time, and the scorer exactly the frames
 * the scoring decoder wrote. The scored frames are held here (the side's whole clip after its
 * frame skip: a container declaring at most `sync_window` frames there, admitted in the memory
 * budget for the most it may decode to before the decode starts) until the search has placed the pairs; then the held frames from the side's start, its
 * cut frames left out, are written into the pipe the library reads, as the decoder would have
 * written them with the cut in its filters.
 *
 * Anything but a clean decode of whole frames (an exit status other than 0, a change of shape,
 * more frames than the container allows) holds nothing: the caller falls back to the two decodes,
 * which report such inputs as ever.
 */
import { Effect, type Scope } from "effect"
import { read, write } from "node:fs"
import type { ScoreError, Scorer } from "../scorer/index.ts"
import { type SideThumbnails, thumbnailBytes, thumbnailHeight, thumbnailWidth } from "./alignment.ts"
import {
  type Child,
  type DecodeLimits,
  type DecoderFailed,
  type DecoderMissing,
  type DecodeTarget,
  Ffmpeg
} from "./ffmpeg.ts"
import { decoderPipe } from "./frames.ts"

/** An encoded side decoded once: its scored frames held, its thumbnails, the decoder that made them. */
export interface HeldSide {
  /** The decoder (exited with status 0). */
  readonly child: Child
  /** The scored frames after the side's frame skip, in the target's raw layout, in decode order. */
  readonly frames: ReadonlyArray<Uint8Array>
  /** Their thumbnails, as the search reads them. */
  readonly thumbnails: SideThumbnails
}

/** Bytes a held side takes: its frames (at most `frames`) and their thumbnails. */
export const heldBytes = (frames: number, frameBytes: number) => frames * (frameBytes + thumbnailBytes)

/** Reads up to `buffer.length` bytes from the pipe `fd` off the JavaScript thread (0: its end or an error). */
const readSome = (fd: number, buffer: Uint8Array): Promise<number> =>
  new Promise((resolve) => read(fd, buffer, 0, buffer.length, null, (error, bytes) => resolve(error ? 0 : bytes)))

/** Reads the pipe `fd` to its end, at most `limit` bytes (one more ends the read: the caller refuses it). */
const readAll = async (fd: number, limit: number): Promise<Uint8Array> => {
  const bytes = new Uint8Array(limit + 1)
  let length = 0
  for (;;) {
    const read = length < bytes.length ? await readSome(fd, bytes.subarray(length)) : 0
    if (read === 0) return bytes.subarray(0, length)
    length += read
  }
}

/**
 * Decodes the encoded input behind `fd` once to frames of `target` (`frameBytes` each) and their
 * thumbnails; holds the frames after the first `skip` (the frame skip). `limits.maxFrames` is the
 * most frames the input may decode to: one more is refused (undefined), as is any unclean decode.
 */
export const holdDecoded = (
  scorer: Scorer,
  fd: number,
  target: DecodeTarget,
  limits: DecodeLimits,
  /** The decoder's admitted memory (/metrics counts it while it runs). */
  memory: number,
  skip: number,
  frameBytes: number
): Effect.Effect<HeldSide | undefined, DecoderMissing | DecoderFailed | ScoreError, Ffmpeg | Scope.Scope> =>
  Effect.gen(function* () {
    const ffmpeg = yield* Ffmpeg
    const thumbnailPipe = yield* decoderPipe(scorer)
    const child = yield* ffmpeg
      .decodeWithThumbnails(fd, target, { width: thumbnailWidth, height: thumbnailHeight }, thumbnailPipe.write, {
        ...limits,
        // One frame past what may be held: an overrun shows.
        maxFrames: limits.maxFrames + 1
      })
      .pipe(Effect.ensuring(thumbnailPipe.handOver))
    yield* ffmpeg.watch(child, memory)
    const [decoded, thumbnailsRead, code] = yield* Effect.promise(() =>
      Promise.all([
        (async () => {
          const held: Array<Uint8Array> = []
          let count = 0
          let frame = new Uint8Array(frameBytes)
          let filled = 0
          for await (const chunk of child.stdout) {
            let at = 0
            while (at < chunk.length) {
              const taken = Math.min(frameBytes - filled, chunk.length - at)
              frame.set(chunk.subarray(at, at + taken), filled)
              filled += taken
              at += taken
              if (filled < frameBytes) continue
              // Frames before the skip (and one past the cap) are read and dropped into one reused buffer.
              if (count >= skip && count < limits.maxFrames) {
                held.push(frame)
                frame = new Uint8Array(frameBytes)
              }
              count++
              filled = 0
            }
          }
          return { held, count, partial: filled }
        })(),
        readAll(thumbnailPipe.read, (limits.maxFrames + 1) * thumbnailBytes),
        child.exited,
        child.stderrDone
      ])
    )
    const { held: frames, count, partial } = decoded
    const clean =
      code === 0 &&
      partial === 0 &&
      child.shapeRuns().length === 0 &&
      count <= limits.maxFrames &&
      thumbnailsRead.length === count * thumbnailBytes
    if (!clean || frames.length === 0) return undefined
    return {
      child,
      frames,
      thumbnails: { frames: frames.length, bytes: thumbnailsRead.subarray(skip * thumbnailBytes) }
    } satisfies HeldSide
  })

/** Writes all of `bytes` to the pipe `fd` off the JavaScript thread (false: the reader is gone). */
const writeAll = (fd: number, bytes: Uint8Array): Promise<boolean> =>
  new Promise((resolve) => {
    const next = (from: number) =>
      write(fd, bytes, from, bytes.length - from, null, (error, written) => {
        if (error) resolve(false)
        else if (from + written < bytes.length) next(from + written)
        else resolve(true)
      })
    next(0)
  })

/**
 * Writes the held frames the score reads into `pipe` (the write end the library's pipe side
 * reads): from held frame `first`, the held frames in `cut` left out (indices after the frame
 * skip), at most `count` frames (0: all), then closes it (`handOver`), as the decoder's exit would.
 */
export const feedHeld = (
  held: HeldSide,
  pipe: { readonly write: number; readonly handOver: Effect.Effect<void> },
  first: number,
  cut: ReadonlyArray<number>,
  count: number
): Effect.Effect<void> =>
  Effect.ensuring(
    Effect.promise(async () => {
      const left = new Set(cut)
      let written = 0
      for (let index = first; index < held.frames.length; index++) {
        if (count > 0 && written >= count) break
        if (left.has(index)) continue
        if (!(await writeAll(pipe.write, held.frames[index] as Uint8Array))) break
        written++
      }
    }),
    pipe.handOver
  )
