/**
 * Frame sources: one input as a pull stream of raw frames in the scorer's planar layout. A frame
 * is read only when the consumer asks for the next one, so a source holds one frame at a time
 * (and an ffmpeg child waits on its full pipe) whatever the clip's length.
 */
import { Effect, Option, Stream } from "effect"
import { InvalidGeometry, UnreadableInput } from "../scorer/errors.ts"
import { type Child, readable } from "./ffmpeg.ts"
import { readAt } from "./probe.ts"

/** Fills `buffer` from `position`; the count is short only at the end of the file. */
const readFull = (fd: number, buffer: Uint8Array, position: number, path: string) =>
  Effect.gen(function* () {
    let filled = 0
    while (filled < buffer.length) {
      const got = yield* readAt(fd, buffer.subarray(filled), position + filled).pipe(
        Effect.mapError((error) => new UnreadableInput({ message: `${path}: ${error.message}` }))
      )
      if (got === 0) break
      filled += got
    }
    return filled
  })

/** Raw planar YUV frames of `frameBytes`, from frame `skip`. A partial last frame is an error. */
export const rawFrames = (
  fd: number,
  path: string,
  frameBytes: number,
  skip: number
): Stream.Stream<Uint8Array, UnreadableInput | InvalidGeometry> =>
  Stream.unfoldEffect(skip * frameBytes, (position) =>
    Effect.gen(function* () {
      const frame = new Uint8Array(frameBytes)
      const got = yield* readFull(fd, frame, position, path)
      if (got === 0) return Option.none()
      if (got < frameBytes)
        return yield* new InvalidGeometry({
          message: `${path}: the last frame is truncated (${got} of ${frameBytes} bytes): the size is not a whole number of frames of this geometry`
        })
      return Option.some([frame, position + frameBytes] as const)
    })
  )

/** The longest Y4M frame line read with a frame ("FRAME" and its optional parameters). */
const y4mLineLimit = 1024

/** Y4M frames after the header, each after its "FRAME..." line; the first `skip` are passed over. */
export const y4mFrames = (
  fd: number,
  path: string,
  frameBytes: number,
  headerBytes: number,
  skip: number
): Stream.Stream<Uint8Array, UnreadableInput | InvalidGeometry> => {
  const line = new Uint8Array(y4mLineLimit)
  /** Offset of the payload of the frame whose line starts at `position`; none at the end. */
  const payloadAt = (position: number, index: number) =>
    Effect.gen(function* () {
      const got = yield* readFull(fd, line, position, path)
      if (got === 0) return Option.none<number>()
      const end = line.subarray(0, got).indexOf(0x0a)
      if (end < 5 || String.fromCharCode(...line.subarray(0, 5)) !== "FRAME")
        return yield* new InvalidGeometry({ message: `${path}: bad Y4M frame marker at frame ${index}` })
      return Option.some(position + end + 1)
    })
  return Stream.unfoldEffect({ position: headerBytes, index: 0 }, ({ position, index }) =>
    Effect.gen(function* () {
      let at = position
      let current = index
      for (;;) {
        const payload = yield* payloadAt(at, current)
        if (Option.isNone(payload)) return Option.none()
        if (current >= skip) {
          const frame = new Uint8Array(frameBytes)
          const got = yield* readFull(fd, frame, payload.value, path)
          if (got < frameBytes)
            return yield* new InvalidGeometry({ message: `${path}: truncated last Y4M frame ${current}` })
          return Option.some([frame, { position: payload.value + frameBytes, index: current + 1 }] as const)
        }
        at = payload.value + frameBytes
        current++
      }
    })
  )
}

/**
 * Frames of `frameBytes` from a decoding child's stdout, read as they are asked for. The end of
 * the output is the end of the clip when the child exits with status 0; otherwise the input
 * could not be decoded and the tail of ffmpeg's stderr says why.
 */
export const decodedFrames = (
  child: Child,
  path: string,
  frameBytes: number
): Stream.Stream<Uint8Array, UnreadableInput | InvalidGeometry> => {
  const reader = child.stdout.getReader()
  let pending: Uint8Array = new Uint8Array(0)
  const next = Effect.promise(async (): Promise<Uint8Array | number | undefined> => {
    const frame = new Uint8Array(frameBytes)
    let filled = 0
    while (filled < frameBytes) {
      if (pending.length === 0) {
        const chunk = await reader.read()
        if (chunk.done) break
        pending = chunk.value
      }
      const take = Math.min(pending.length, frameBytes - filled)
      frame.set(pending.subarray(0, take), filled)
      pending = pending.subarray(take)
      filled += take
    }
    return filled === frameBytes ? frame : filled === 0 ? undefined : filled
  })
  /** After the output ends: fails unless the child exited with status 0. */
  const exitedCleanly = Effect.gen(function* () {
    const code = yield* Effect.promise(() => child.exited)
    yield* Effect.promise(() => child.stderrDone)
    if (code !== 0)
      return yield* new UnreadableInput({
        message: `${path}: ffmpeg could not decode it: ${readable(child.stderr()) || `exit status ${code}`}`
      })
  })
  return Stream.repeatEffectOption(
    Effect.flatMap(next, (frame) => {
      if (frame instanceof Uint8Array) return Effect.succeed(frame)
      const partial =
        frame === undefined
          ? Effect.void
          : new InvalidGeometry({
              message: `${path}: ffmpeg's output ends inside a frame (${frame} of ${frameBytes} bytes)`
            })
      return Effect.zipRight(
        Effect.mapError(Effect.zipRight(exitedCleanly, partial), Option.some),
        Effect.fail(Option.none())
      )
    })
  )
}
