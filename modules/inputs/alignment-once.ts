/**
 * One decode for the search and the score (`options.sync: "auto"`, issue 31 item 6). An encoded
 * side is decoded once, by the scoring decoder itself (same filters, threads and walls), which
 * also writes each decoded frame's luma thumbnail on a second output, scaled by the same filter
 * as the search's own decode (`Ffmpeg.decodeWithThumbnails`): the search sees exactly the
 * thumbnails it saw when it decoded the input a second time, and the scorer exactly the frames
 * the scoring decoder wrote. The scored frames are held here (the side's whole clip after its
 * frame skip: a container declaring at most `sync_window` frames there, admitted in the memory
 * budget for the most it may decode to before the decode starts) until the search has placed
 * the pairs; then the held frames from the side's start, its cut frames left out, are written
 * into the pipe the library reads, as the decoder would have written them with the cut in its
 * filters. The reading and writing wait in the event loop (Bun's pipe stream and writer), never
 * on a thread of the pool that async file reads share.
 *
 * Anything but a clean decode of whole frames (an exit status other than 0, a change of shape,
 * more frames than the container allows) holds nothing: the caller falls back to the two decodes,
 * which report such inputs as ever.
 */
import { Effect, type Scope } from "effect"
import { closeSync } from "node:fs"
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

/**
 * A pipe with one end used here by an asynchronous reader or writer (Bun's pipe stream or writer,
 * waiting in the event loop) and the other given to a child or the library. The end used here is
 * closed by `use` once its user has stopped (a descriptor closed under a pending read or write
 * could be reused by another open), or with the scope if it was never used; the other end by
 * `handOver`, or with the scope.
 */
export const ownedPipe = (scorer: Scorer, here: "read" | "write") =>
  Effect.map(
    Effect.acquireRelease(
      Effect.map(scorer.pipe, (fds) => ({ ...fds, otherOpen: true, used: false })),
      (fds) =>
        Effect.sync(() => {
          if (fds.otherOpen) closeSync(here === "read" ? fds.write : fds.read)
          if (!fds.used) closeSync(here === "read" ? fds.read : fds.write)
        })
    ),
    (fds) => ({
      /** The end given away. */
      other: here === "read" ? fds.write : fds.read,
      handOver: Effect.sync(() => {
        if (!fds.otherOpen) return
        fds.otherOpen = false
        closeSync(here === "read" ? fds.write : fds.read)
      }),
      use: <T>(user: (fd: number) => Promise<T>): Promise<T> => {
        fds.used = true
        const fd = here === "read" ? fds.read : fds.write
        return user(fd).finally(() => closeSync(fd))
      }
    })
  )

/**
 * Reads the pipe `fd` to its end, at most `limit` bytes (one more ends the read: the caller
 * refuses it). Bun's stream of a pipe waits in the event loop: no thread of the pool that async
 * file reads share is held while the decoder runs.
 */
const readAll = async (fd: number, limit: number): Promise<Uint8Array> => {
  const bytes = new Uint8Array(limit + 1)
  let length = 0
  const reader = Bun.file(fd).stream().getReader()
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    const taken = Math.min(value.length, bytes.length - length)
    bytes.set(value.subarray(0, taken), length)
    length += taken
    if (length === bytes.length) {
      // Past the limit: the stream is cancelled and settled before its descriptor is closed.
      await reader.cancel()
      break
    }
  }
  reader.releaseLock()
  return bytes.subarray(0, length)
}

/** What `readFrames` does with a whole frame: the taker keeps its buffer, hands it back for the next frame, or stops the reading. */
export type FrameVerdict = "keep" | "drop" | "stop"

/**
 * Reads `stream` (a decoder's raw output) frame by frame, `frameBytes` each, into buffers from
 * `buffer`, and gives each whole frame with its index to `take`: "keep" (the buffer is the
 * taker's; the next frame gets a new one), "drop" (the buffer is reused) or "stop" (reading ends).
 * Returns the whole frames read, the bytes of a partial last one, and whether the taker stopped.
 */
export const readFrames = async (
  stream: ReadableStream<Uint8Array>,
  frameBytes: number,
  take: (frame: Uint8Array, index: number) => FrameVerdict | Promise<FrameVerdict>,
  buffer: () => Uint8Array = () => new Uint8Array(frameBytes)
): Promise<{ readonly count: number; readonly partial: number; readonly stopped: boolean }> => {
  let count = 0
  let filled = 0
  let frame = buffer()
  for await (const chunk of stream) {
    let at = 0
    while (at < chunk.length) {
      const taken = Math.min(frameBytes - filled, chunk.length - at)
      frame.set(chunk.subarray(at, at + taken), filled)
      filled += taken
      at += taken
      if (filled < frameBytes) continue
      filled = 0
      const verdict = await take(frame, count++)
      if (verdict === "stop") return { count, partial: 0, stopped: true }
      if (verdict === "keep") frame = buffer()
    }
  }
  return { count, partial: filled, stopped: false }
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
    const thumbnailPipe = yield* ownedPipe(scorer, "read")
    const child = yield* ffmpeg
      .decodeWithThumbnails(fd, target, { width: thumbnailWidth, height: thumbnailHeight }, thumbnailPipe.other, {
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
          // Frames before the skip (and one past the cap) are read and dropped into one reused buffer.
          const read = await readFrames(child.stdout, frameBytes, (frame, index) => {
            if (index < skip || index >= limits.maxFrames) return "drop"
            held.push(frame)
            return "keep"
          })
          return { held, count: read.count, partial: read.partial }
        })(),
        thumbnailPipe.use((read) => readAll(read, (limits.maxFrames + 1) * thumbnailBytes)),
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

/**
 * The library's pipe for a held side (`read`, the end its pipe side reads) and how it is fed
 * (`start`, when the score starts): the held frames from held frame `first`, those in `cut` left
 * out (indices after the frame skip), at most `count` frames (0: all), then the pipe's end, as the
 * decoder's exit would end it. Bun's writer waits in the event loop for the library to read: no
 * thread of the pool that async file reads share is held for the score's length. A library that
 * stops reading (its own failure, or the scope closing its end) ends the writing.
 */
export const heldFeed = (
  scorer: Scorer,
  held: HeldSide,
  first: number,
  cut: ReadonlyArray<number>,
  count: number
): Effect.Effect<{ readonly read: number; readonly start: Effect.Effect<void> }, ScoreError, Scope.Scope> =>
  Effect.map(ownedPipe(scorer, "write"), (pipe) => ({
    read: pipe.other,
    start: Effect.sync(() => {
      void pipe.use(async (write) => {
        const sink = Bun.file(write).writer()
        const left = new Set(cut)
        let written = 0
        try {
          for (let index = first; index < held.frames.length; index++) {
            if (count > 0 && written >= count) break
            if (left.has(index)) continue
            sink.write(held.frames[index] as Uint8Array)
            await sink.flush()
            written++
          }
          await sink.end()
        } catch {
          // The library stopped reading: its failure or the verdict says why.
        }
      })
    })
  }))
