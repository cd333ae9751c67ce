/**
 * One decode for the search and the score of a clip longer than the sync window
 * (`options.sync: "auto"`, issue 31 item 6). The sides are read once: an encoded side by its
 * scoring decoder, which also writes each frame's thumbnail (`Ffmpeg.decodeWithThumbnails`, as
 * alignment-once.ts), a raw or Y4M side's thumbnails from its luma planes (luma-thumbnails.ts)
 * and its frames by the library itself (an indexed side: the library preads the frames whose
 * indices it is given, so none of the file's frames crosses the service). The thumbnails go into
 * the streaming aligner (alignment.ts's `Aligner`) as they arrive; the pairs it calls certain,
 * which no later frame can change, are written at once into the pipes the library reads (each
 * side its own, the pairs in order: a decoded side's frames, a file side's frame indices), so a
 * decoded frame is held only until its pair is certain or it is known to be left out. When both sides have ended, the aligner finishes as the whole search does: the same
 * alignment, and the pairs after the last certain one are written. The library reads exactly the
 * frames the two-decode path would feed it, so the score is the two-decode score bit for bit.
 *
 * Held frames are capped per decoded side (`streamHeldFrames`: admitted before the decoders
 * start). Where a side reaches the cap and nothing can move (no certain pair ahead, nothing left
 * to write: a long black or static run, where the candidate paths do not meet), or a decode is not
 * clean, or the library stops reading, the attempt is abandoned (`StreamAbandoned`): the caller
 * closes the score's scope (decoders killed, pipes closed, the library's job cancelled) and scores
 * the pair by two decodes, which give today's answer (or today's refusal) in every case.
 */
import { Data, Effect } from "effect"
import { InvalidScoreRequest } from "../scorer/index.ts"
import {
  Aligner,
  type Alignment,
  type NoMatch,
  noMatchMessage,
  type Pair,
  scoredFrames,
  thumbnailBytes
} from "./alignment.ts"
import { noFramesToAlign } from "./alignment-search.ts"
import { readFrames } from "./alignment-once.ts"
import type { Child } from "./ffmpeg.ts"
import { fileThumbnails, type LumaFile } from "./luma-thumbnails.ts"

/** Frames a decoded side may hold past `3 x window`: the look for certain pairs every few rows, and the pipes' slack. */
const heldMargin = 64

/**
 * The most frames a decoded side holds while streaming: `3 x window + 64`, or the side's whole
 * clip (`frames`, the most its container allows after the skip) where that is fewer. Row i of
 * the search needs the distorted thumbnails up to i + window; pairs become certain only once
 * every candidate path has met, which takes about another window or two of frames after the
 * content last told the offsets apart (a cut, motion), most at the start (measured on clips of
 * 75-frame scenes: the certain pairs trail the decoded frames by 2 x window in steady state and
 * by up to 2.7 x window at the start, at windows 24 to 120).
 */
export const streamHeldFrames = (window: number, frames: number) => Math.min(3 * window + heldMargin, frames)

/** Why streaming gave up; the pair is then scored by two decodes. */
export class StreamAbandoned extends Data.TaggedError("StreamAbandoned")<{ readonly reason: string }> {}

/** Reference (0) or distorted (1). */
export type SideIndex = 0 | 1

interface SideState {
  /** Read by a decoder (its frames held here) rather than from a file. */
  readonly decoded: boolean
  /** Decoded frames after the skip, by index, until written or left out. */
  readonly held: Map<number, Uint8Array>
  /** Frames to write into the library's pipe (a file side: their indices), in order (indices after the skip). */
  readonly queue: Array<number>
  readonly queued: Set<number>
  /** Frames below this are decided: queued or left out. */
  decided: number
  /** A decoded side's reader waits for room (its held frames at the cap). */
  waiting: boolean
  /** A decoded side's reader has read its decoder's frames to their end. */
  read: boolean
  /** All of the side's thumbnails have arrived. */
  ended: boolean
  /** The side was read cleanly to its end (a decoder's exit status 0, whole frames, one thumbnail each). */
  clean: boolean
  /** Its writer has a frame in flight (its flush pending). */
  writing: boolean
  /** Frame buffers written or left out, reused for the next frames (no fresh pages to fault in). */
  readonly spare: Array<Uint8Array>
}

/** The pairs of an alignment, in order, as the score reads them. */
export const pairsOf = (found: Alignment): ReadonlyArray<Pair> => {
  const references = scoredFrames(found.reference_start, found.reference_frames_dropped, found.frames)
  const distorteds = scoredFrames(found.distorted_start, found.distorted_frames_inserted, found.frames)
  return references.map((r, k) => [r, distorteds[k] as number] as const)
}

/** The reasons a streaming score stops before its alignment: given up (`StreamAbandoned`) or no match (400). */
export type StreamFailure = StreamAbandoned | InvalidScoreRequest

/**
 * The state of one streaming score: the aligner, each side's held and queued frames, and the
 * outcome (the alignment once both sides ended, or the failure). Callbacks only, no I/O: the
 * caller reads the decoders and writes the pipes (score.ts).
 */
export class StreamingPair {
  private readonly aligner: Aligner
  private readonly sides: readonly [SideState, SideState]
  /** Certain pairs taken so far, and how many were queued (at most `limit`). */
  private taken = 0
  private pairsQueued = 0
  /** Every pair is queued: the writers end their pipes once their queues are empty. */
  private final = false
  private failed: StreamFailure | undefined
  private found: Alignment | undefined
  private waiters: Array<() => void> = []
  private readonly settled: Array<(outcome: Alignment | StreamFailure) => void> = []

  constructor(
    private readonly window: number,
    /** Which sides are decoded (their frames held here). */
    decoded: readonly [boolean, boolean],
    /** frame_cnt: the most pairs written (0: all). */
    private readonly limit: number,
    /** The most frames each decoded side holds (`streamHeldFrames`). */
    private readonly caps: readonly [number, number],
    /** Reference frames expected (the aligner's first allocation). */
    expectedFrames: number
  ) {
    this.aligner = new Aligner(window, expectedFrames)
    const side = (isDecoded: boolean): SideState => ({
      decoded: isDecoded,
      held: new Map(),
      queue: [],
      queued: new Set(),
      decided: 0,
      waiting: false,
      read: !isDecoded,
      ended: false,
      clean: false,
      writing: false,
      spare: []
    })
    this.sides = [side(decoded[0]), side(decoded[1])]
  }

  /** The failure, once there is one (a library failure after it is the failure's doing). */
  get failure(): StreamFailure | undefined {
    return this.failed
  }

  /** Calls `then` with the alignment once both sides were read cleanly to their end, or with the failure. */
  outcome(then: (outcome: Alignment | StreamFailure) => void) {
    if (this.failed !== undefined) then(this.failed)
    else if (this.resolved && this.found !== undefined) then(this.found)
    else this.settled.push(then)
  }

  private changed(): Promise<void> {
    return new Promise((resolve) => this.waiters.push(resolve))
  }

  /** Wakes every waiter, then gives up where no side can move any more. */
  private notify() {
    const waiters = this.waiters
    this.waiters = []
    for (const wake of waiters) wake()
    this.giveUpIfStuck()
  }

  /**
   * A decoded side at the cap, every other decoded side at the cap or read to its end, a file
   * side's thumbnails all in, and nothing queued to write: no certain pair can come any more (the
   * candidate paths do not meet within the cap), so the attempt is given up.
   */
  private giveUpIfStuck() {
    if (this.failed !== undefined || this.final) return
    const decoded = this.sides.filter((side) => side.decoded)
    const stuck =
      decoded.some((side) => side.waiting) &&
      decoded.every((side) => side.waiting || side.read) &&
      this.sides.every((side) => side.decoded || side.ended) &&
      this.sides.every((side) => side.queue.length === 0 && !side.writing)
    if (stuck) this.abandon("held frames reached the cap before their pairs were certain")
  }

  /** Gives up (the first failure stands). */
  abandon(reason: string) {
    this.fail(new StreamAbandoned({ reason }))
  }

  private fail(failure: StreamFailure) {
    if (this.failed !== undefined || this.resolved) return
    this.failed = failure
    for (const then of this.settled.splice(0)) then(failure)
    this.notify()
  }

  /** The outcome was given (the alignment, both sides clean). */
  private resolved = false

  /** The alignment stands once it is found and both sides were read cleanly. */
  private resolve() {
    const found = this.found
    if (found === undefined || this.failed !== undefined || !this.sides.every((side) => side.clean)) return
    this.resolved = true
    for (const then of this.settled.splice(0)) then(found)
  }

  /** Thumbnails of side `side` (bytes in order after its skip, any piece size). */
  thumbnails(side: SideIndex, bytes: Uint8Array) {
    if (this.failed !== undefined) return
    if (side === 0) this.aligner.pushReference(bytes)
    else this.aligner.pushDistorted(bytes)
    this.advance()
  }

  /**
   * Side `side` has no more thumbnails. Its decode may still fail (`read`): the alignment is
   * finished now, so that the last pairs are written and the decoder's last frames find room.
   */
  thumbnailsEnded(side: SideIndex) {
    if (this.failed !== undefined) return
    this.sides[side].ended = true
    if (side === 0) this.aligner.endReference()
    else this.aligner.endDistorted()
    this.advance()
    this.release()
    if (this.sides.every((each) => each.ended)) this.conclude()
    else this.notify()
  }

  /** Side `side`'s reading is over: `clean` when its decoder exited with status 0 after whole frames, one thumbnail each. */
  read(side: SideIndex, clean: boolean) {
    const state = this.sides[side]
    state.read = true
    state.waiting = false
    if (!clean) return this.abandon("a decode was not clean")
    state.clean = true
    this.resolve()
    this.notify()
  }

  private advance() {
    for (const _ of this.aligner.advance());
    const certain = this.aligner.certain()
    if (certain.length === this.taken) return
    for (let k = this.taken; k < certain.length; k++) this.queuePair(certain[k] as Pair)
    this.taken = certain.length
    this.release()
    this.notify()
  }

  private queuePair([reference, distorted]: Pair) {
    if (this.limit === 0 || this.pairsQueued < this.limit) {
      for (const [side, frame] of [
        [this.sides[0], reference],
        [this.sides[1], distorted]
      ] as const) {
        side.queue.push(frame)
        side.queued.add(frame)
      }
      this.pairsQueued++
    }
    this.sides[0].decided = reference + 1
    this.sides[1].decided = distorted + 1
  }

  /**
   * Whether frame `index` of side `side` may still be paired: a pair is within the window of the
   * other side's frames, so once that side has ended, frames beyond its last one plus the window
   * never are (an encoded reference running on past a distorted clip that ended early is not
   * held to the end).
   */
  private pairable(side: SideIndex, index: number) {
    if (!this.sides[side === 0 ? 1 : 0].ended) return true
    const frames = this.aligner.frames
    return index < (side === 0 ? frames.distorted : frames.reference) + this.window
  }

  /** Drops the held frames that are decided and not written (left out, or past frame_cnt) or can never be paired. */
  private release() {
    for (const [k, side] of this.sides.entries())
      for (const [index, frame] of side.held)
        if (!side.queued.has(index) && (index < side.decided || this.final || !this.pairable(k === 0 ? 0 : 1, index))) {
          side.held.delete(index)
          side.spare.push(frame)
        }
  }

  /** A buffer for the next decoded frame of side `side`: one given back, or a new one. */
  buffer(side: SideIndex, frameBytes: number): Uint8Array {
    return this.sides[side].spare.pop() ?? new Uint8Array(frameBytes)
  }

  /** Both sides ended: the aligner finishes as the whole search does, and the pairs left are queued. */
  private conclude() {
    const frames = this.aligner.frames
    if (frames.reference === 0 || frames.distorted === 0)
      return this.fail(new InvalidScoreRequest({ message: noFramesToAlign }))
    const found: Alignment | NoMatch = this.aligner.finish()
    if ("_tag" in found) return this.fail(new InvalidScoreRequest({ message: noMatchMessage(found) }))
    const pairs = pairsOf(found)
    const certain = this.aligner.certain()
    for (const [k, pair] of certain.entries()) {
      const final = pairs[k]
      if (final === undefined || final[0] !== pair[0] || final[1] !== pair[1])
        return this.abandon("a certain pair is not in the final alignment (a defect)")
    }
    for (let k = this.taken; k < pairs.length; k++) this.queuePair(pairs[k] as Pair)
    this.taken = pairs.length
    this.final = true
    this.release()
    this.found = found
    this.resolve()
    this.notify()
  }

  /**
   * Decoded frame `index` (after the skip) of side `side` arrived: held unless already left out.
   * Waits while the side holds its cap of frames; false once the attempt has failed (stop reading).
   */
  async frame(side: SideIndex, index: number, frame: Uint8Array): Promise<boolean> {
    const state = this.sides[side]
    if (this.failed !== undefined) return false
    const wanted = (!(index < state.decided || this.final) && this.pairable(side, index)) || state.queued.has(index)
    if (wanted) state.held.set(index, frame)
    else state.spare.push(frame)
    this.notify()
    while (state.held.size >= this.caps[side] && this.failed === undefined) {
      state.waiting = true
      this.giveUpIfStuck()
      if (this.failed === undefined) await this.changed()
    }
    state.waiting = false
    return this.failed === undefined
  }

  /**
   * The next frame side `side`'s writer writes (its index and, for a decoded side, the held
   * frame), once it is queued and has arrived; undefined when the side is written to its end
   * (`final`, queue empty) or the attempt failed.
   */
  async next(side: SideIndex): Promise<{ readonly index: number; readonly frame: Uint8Array | undefined } | undefined> {
    const state = this.sides[side]
    for (;;) {
      if (this.failed !== undefined) return undefined
      const index = state.queue[0]
      if (index === undefined) {
        if (this.final) return undefined
      } else if (!state.decoded || state.held.has(index)) {
        state.writing = true
        return { index, frame: state.held.get(index) }
      }
      await this.changed()
    }
  }

  /** Side `side`'s writer has written frame `index` into the library's pipe. */
  written(side: SideIndex, index: number) {
    const state = this.sides[side]
    state.writing = false
    state.queue.shift()
    state.queued.delete(index)
    const frame = state.held.get(index)
    if (frame !== undefined) {
      state.held.delete(index)
      state.spare.push(frame)
    }
    this.notify()
  }
}

/** A pipe end used here (alignment-once.ts's `ownedPipe`): its user runs once, the end closed after. */
export interface UsedPipe {
  readonly use: <T>(user: (fd: number) => Promise<T>) => Promise<T>
}

/**
 * Reads decoded side `side`: the frames of `child`'s output (`frameBytes` each) and their
 * thumbnails from `thumbnails`, both after the first `skip` frames, into `pair`. A frame waits
 * for room at the cap (the decoder then waits in its pipe). Clean when the decoder exited with
 * status 0 after whole frames, at most `allowed` of them (the skipped ones counted), one thumbnail
 * each, and no change of shape.
 */
export const readDecoded = async (
  pair: StreamingPair,
  side: SideIndex,
  child: Child & { readonly stdout: ReadableStream<Uint8Array> },
  thumbnails: UsedPipe,
  skip: number,
  frameBytes: number,
  allowed: number
): Promise<void> => {
  // Frames before the skip (and past the cap) are read into one reused buffer and dropped.
  const framesRead = readFrames(
    child.stdout,
    frameBytes,
    async (frame, index) => {
      if (index < skip || index >= allowed) return "drop"
      return (await pair.frame(side, index - skip, frame)) ? "keep" : "stop"
    },
    () => pair.buffer(side, frameBytes)
  )
  const thumbnailsRead = thumbnails.use(async (fd) => {
    const limit = (allowed + 1) * thumbnailBytes
    const skipped = skip * thumbnailBytes
    let length = 0
    const reader = Bun.file(fd).stream().getReader()
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      const from = Math.max(0, skipped - length)
      length += value.length
      if (length > limit || pair.failure !== undefined) {
        // An overrun (refused below) or a failure: the stream is settled before its descriptor closes.
        await reader.cancel()
        break
      }
      if (from < value.length) pair.thumbnails(side, value.subarray(from))
    }
    reader.releaseLock()
    if (length <= limit && length % thumbnailBytes === 0) pair.thumbnailsEnded(side)
    return length
  })
  const [frames, thumbnailLength, code] = await Promise.all([
    framesRead,
    thumbnailsRead,
    child.exited,
    child.stderrDone
  ])
  const clean =
    code === 0 &&
    !frames.stopped &&
    frames.partial === 0 &&
    frames.count <= allowed &&
    child.shapeRuns().length === 0 &&
    thumbnailLength === frames.count * thumbnailBytes
  pair.read(side, clean)
}

/**
 * Writes side `side`'s queued frames into the library's pipe, in order, then ends it: a decoded
 * side's held frames ("frames"), or a file side's frame indices after its skip ("indices": each a
 * little-endian uint32, the library then preads the frame, svc_stream_feed_indexed). Bun's writer
 * waits in the event loop for the library to read. A library that stops reading ends the attempt.
 * Never rejects.
 */
export const writeSide = (
  pair: StreamingPair,
  side: SideIndex,
  pipe: UsedPipe,
  what: "frames" | "indices"
): Promise<void> =>
  pipe
    .use(async (fd) => {
      const sink = Bun.file(fd).writer()
      try {
        for (;;) {
          const next = await pair.next(side)
          if (next === undefined) break
          if (what === "indices") {
            const index = new Uint8Array(4)
            new DataView(index.buffer).setUint32(0, next.index, true)
            sink.write(index)
          } else if (next.frame === undefined) {
            throw new Error("a queued frame was not held")
          } else {
            sink.write(next.frame)
          }
          await sink.flush()
          pair.written(side, next.index)
        }
        if (pair.failure === undefined) await sink.end()
      } catch {
        pair.abandon("the library stopped reading, or a frame could not be read")
      }
    })
    .catch(() => pair.abandon("the library's pipe could not be closed"))

/**
 * A raw or Y4M side streamed: its thumbnails read from its luma planes into `pair` (started for
 * the scope; a failure to read them gives the attempt up, the two decodes then report it). Its
 * frames are read by the library from the indices `writeSide` gives it ("indices").
 */
export const streamFileThumbnails = (pair: StreamingPair, side: SideIndex, file: LumaFile, skip: number) =>
  Effect.forkScoped(
    Effect.match(fileThumbnails(file, skip), {
      onFailure: () => pair.abandon("a file side's thumbnails could not be read"),
      onSuccess: (found) => {
        pair.thumbnails(side, found.bytes)
        pair.thumbnailsEnded(side)
        pair.read(side, true)
      }
    })
  )
