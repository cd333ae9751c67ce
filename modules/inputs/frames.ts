/**
 * Frame sources for the scorer's fed streams: an input's frames are read by the native library's
 * own thread (modules/scorer/native/src/feed.c), a raw or Y4M file with pread on its descriptor, a
 * decoded one from a pipe an ffmpeg child writes. No frame passes through JavaScript; what is left
 * here is the pipe's ownership and the verdict on a decoder's end.
 */
import { Effect, type Scope } from "effect"
import { closeSync } from "node:fs"
import { type FeedVerdict, InvalidGeometry, type ScoreError, type Scorer, UnreadableInput } from "../scorer/index.ts"
import { type Child, changedFrameOf, readable } from "./ffmpeg.ts"

/** A pipe for one decoder: the library reads `read`, the child alone writes `write`. */
export interface DecoderPipe {
  readonly read: number
  readonly write: number
  /** Closes this process's write end once the child holds its own, so the child's exit ends the pipe. */
  readonly handOver: Effect.Effect<void>
}

/** A pipe made by the library, for the scope: whatever this process still holds is closed with it. */
export const decoderPipe = (scorer: Scorer): Effect.Effect<DecoderPipe, ScoreError, Scope.Scope> =>
  Effect.map(
    Effect.acquireRelease(
      Effect.map(scorer.pipe, (fds) => ({ ...fds, writeOpen: true })),
      (fds) =>
        Effect.sync(() => {
          closeSync(fds.read)
          if (fds.writeOpen) closeSync(fds.write)
        })
    ),
    (fds) => ({
      read: fds.read,
      write: fds.write,
      handOver: Effect.sync(() => {
        // Closed once only: a second close could hit a descriptor reused by another open.
        if (!fds.writeOpen) return
        fds.writeOpen = false
        closeSync(fds.write)
      })
    })
  )

/**
 * After a decoder's output ended: fails unless the child exited with status 0; a side that must
 * keep one shape (`changed` given) is refused with the frame where it changed, whether the scale
 * filter stopped the decode there (a change of size or subsampling) or its log showed a frame of
 * another pixel format (a change of bit depth alone, the decoder then killed).
 */
const exitedCleanly = (child: Child, side: VerdictSide) =>
  Effect.gen(function* () {
    const code = yield* Effect.promise(() => child.exited)
    yield* Effect.promise(() => child.stderrDone)
    if (side.changed !== undefined) {
      const stopped = code === 0 ? undefined : changedFrameOf(child.stderr())
      const first = child.shapeRuns()[0]
      const frame = stopped ?? (first === undefined ? undefined : yield* side.frameAt(first.firstSeconds))
      if (frame !== undefined) return yield* new InvalidGeometry({ message: side.changed(frame) })
    }
    if (code !== 0)
      return yield* new UnreadableInput({
        message: `${side.path}: ffmpeg could not decode it: ${readable(child.stderr()) || `exit status ${code}`}`
      })
    // A seek that landed on another frame would pair every frame after it with the wrong one.
    yield* checkLanding(side.path, side.landing, child.firstFrameSeconds())
  })

/**
 * After a seek: fails unless the decoder's first frame came out at `landing`'s time after the
 * seek point (`first`, as its log gave it; nothing to check without a seek or a frame).
 */
export const checkLanding = (
  path: string,
  landing: Landing | undefined,
  first: number | undefined
): Effect.Effect<void, UnreadableInput> =>
  landing !== undefined && first !== undefined && Math.abs(first - landing.afterSeek) >= landing.tolerance
    ? Effect.fail(new UnreadableInput({ message: missedLanding(path, landing, first) }))
    : Effect.void

/** After a seek to frame `frame`: that frame's time after the seek point, and how far off is another frame. */
export interface Landing {
  readonly frame: number
  readonly afterSeek: number
  readonly tolerance: number
}

/** The refusal of a seek whose first frame out is not the one planned. */
export const missedLanding = (path: string, landing: Landing, first: number): string =>
  `${path}: after seeking to frame ${landing.frame} the decoder's first frame is ${first.toFixed(6)} s after the seek point, not ${landing.afterSeek.toFixed(6)} s: it is another frame, so the segment is not scored`

/** What the verdict needs of one side: its path and, for a decoded side, its child once started. */
export interface VerdictSide {
  readonly path: string
  readonly child: () => Child | undefined
  /** The refusal of a change of the stream's shape at a frame; undefined: changes are scaled and listed. */
  readonly changed: ((frame: number) => string) | undefined
  /** The index of the side's frame at a presentation time its decoder logged (seconds after its start). */
  readonly frameAt: (seconds: number) => Effect.Effect<number>
  /** After a segment's seek: where its first frame must come out (undefined: no seek). */
  readonly landing?: Landing | undefined
  /** Frames skipped at the side's start (read from the decoder, not counted by the library). */
  readonly skip: number
  /** A decoded side's frame cap: what its container declares and what may be decoded. */
  readonly frames: FrameCap | undefined
  /**
   * An aligned ladder's rendition: the frames read (of every side) it pairs, from `first`, at most
   * `frames`; it reads only those (svc_ladder_range). Undefined: it reads every frame read.
   */
  readonly reads?: { readonly first: number; readonly frames: number } | undefined
}

/**
 * How many frames a decoder may write. A container's declaration (the smaller of its frame count
 * and its duration times its frame rate) plus a margin of 1 % and at least 2 frames (rounding of
 * durations, a last frame's duration): a file that decodes more, for example an edit list
 * repeating its frames thousands of times, is refused. Nothing declared: SVC_MAX_FRAMES.
 */
export interface FrameCap {
  readonly declared: number | undefined
  readonly allowed: number
}

export const frameCapOf = (declared: number | undefined, maxFrames: number): FrameCap => ({
  declared,
  allowed: declared === undefined ? maxFrames : Math.min(maxFrames, declared + Math.max(2, Math.ceil(declared / 100)))
})

/** The refusal of a decode that ran past its cap (the decoder stops one frame past it). */
const overrun = (side: VerdictSide, cap: FrameCap) =>
  new InvalidGeometry({
    message:
      cap.declared === undefined
        ? `input "${side.path}" decodes more than ${cap.allowed} frames (SVC_MAX_FRAMES)`
        : `input "${side.path}" decodes more frames than its container declares: ${cap.declared} declared, more than ${cap.allowed} decoded`
  })

/**
 * The end of a decoded side's pipe is the end of the clip only when its ffmpeg exited with status
 * 0; otherwise the input could not be decoded and the tail of ffmpeg's stderr says why (this
 * outranks the library's own failure, e.g. lengths that differ because the decoder stopped). A
 * pipe that ends inside a frame is ffmpeg's output ending there.
 */
export const decoderVerdict =
  (sides: ReadonlyArray<VerdictSide>, frameBytes: number): FeedVerdict =>
  (ends, _failure, framesRead) =>
    Effect.forEach(
      sides,
      (side, index) => {
        // An overrun outranks everything: the decoder was stopped there, so its end is not the clip's.
        const cap = side.frames
        const read =
          side.reads === undefined
            ? framesRead
            : Math.min(side.reads.frames, Math.max(0, framesRead - side.reads.first))
        if (cap !== undefined && read + side.skip > cap.allowed) return Effect.fail(overrun(side, cap))
        const end = ends[index] ?? -1
        const child = side.child()
        if (child === undefined || end < 0) return Effect.void
        return Effect.zipRight(
          exitedCleanly(child, side),
          end > 0
            ? Effect.fail(
                new InvalidGeometry({
                  message: `${side.path}: ffmpeg's output ends inside a frame (${end} of ${frameBytes} bytes)`
                })
              )
            : Effect.void
        )
      },
      { discard: true }
    )
