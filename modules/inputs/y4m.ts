/**
 * The one TypeScript reader of the Y4M stream header and of the raw planar frame layout: the
 * header's size and rate tags, the bytes of a frame and its planes, and where frame N of a Y4M
 * file starts. The native library's reader (reader.c) reads the same header on its own thread.
 */
import { Data, Effect, Either } from "effect"
import { read } from "node:fs"
import type { RawGeometry } from "../scorer/index.ts"

/** What the header of a Y4M file says. */
export interface Y4mHeader {
  readonly geometry: RawGeometry
  /** Bytes of the header line, its newline included: the first frame's "FRAME" line starts here. */
  readonly headerBytes: number
  /** Frames per second from the F tag; 0 when it has none. */
  readonly frameRate: number
}

/** The input's bytes say what it is, but it cannot be used (bad Y4M header, unsupported layout). */
export class UnusableInput extends Data.TaggedError("UnusableInput")<{ readonly message: string }> {}

/** The signature a Y4M file starts with. */
export const y4mSignature = "YUV4MPEG2 "

/** The header is read from at most this many bytes at the file's start. */
export const y4mHeaderLimit = 512

/** Each frame: a "FRAME" line (the scorer reads no frame parameters), then the planes. */
const frameLineBytes = 6

/** Y4M colour spaces (the part after "C") the scorer reads. */
const y4mColourSpaces: Readonly<Record<string, Pick<RawGeometry, "pixelFormat" | "bitdepth">>> = {
  "420": { pixelFormat: 420, bitdepth: 8 },
  "420jpeg": { pixelFormat: 420, bitdepth: 8 },
  "420paldv": { pixelFormat: 420, bitdepth: 8 },
  "420mpeg2": { pixelFormat: 420, bitdepth: 8 },
  "422": { pixelFormat: 422, bitdepth: 8 },
  "444": { pixelFormat: 444, bitdepth: 8 },
  "420p10": { pixelFormat: 420, bitdepth: 10 },
  "422p10": { pixelFormat: 422, bitdepth: 10 },
  "444p10": { pixelFormat: 444, bitdepth: 10 },
  "420p12": { pixelFormat: 420, bitdepth: 12 },
  "422p12": { pixelFormat: 422, bitdepth: 12 },
  "444p12": { pixelFormat: 444, bitdepth: 12 },
  "420p16": { pixelFormat: 420, bitdepth: 16 },
  "422p16": { pixelFormat: 422, bitdepth: 16 },
  "444p16": { pixelFormat: 444, bitdepth: 16 }
}

const ascii = (bytes: Uint8Array, from: number, to: number) => String.fromCharCode(...bytes.subarray(from, to))

/** Whether the first bytes of a file are a Y4M signature. */
export const isY4mSignature = (head: Uint8Array): boolean => ascii(head, 0, y4mSignature.length) === y4mSignature

/** The header of a Y4M file from its first bytes (`path` names it in the refusal). */
export const parseY4mHeader = (head: Uint8Array, path: string): Either.Either<Y4mHeader, UnusableInput> => {
  if (!isY4mSignature(head)) return Either.left(new UnusableInput({ message: `${path}: not a Y4M header` }))
  const end = head.indexOf(0x0a)
  if (end < 0) return Either.left(new UnusableInput({ message: `${path}: bad Y4M header: no end of line` }))
  const fields = ascii(head, 0, end).split(" ").slice(1)
  const value = (tag: string) => fields.find((field) => field.startsWith(tag))?.slice(1)
  const width = Number(value("W"))
  const height = Number(value("H"))
  const colourSpace = value("C") ?? "420"
  const layout = y4mColourSpaces[colourSpace]
  if (
    !Number.isInteger(width) ||
    !Number.isInteger(height) ||
    width < 1 ||
    height < 1 ||
    width > 16384 ||
    height > 16384
  )
    return Either.left(new UnusableInput({ message: `${path}: Y4M header lacks a valid width and height` }))
  if (!layout)
    return Either.left(new UnusableInput({ message: `${path}: unsupported Y4M colour space C${colourSpace}` }))
  const [num, den] = (value("F") ?? "").split(":").map(Number)
  const frameRate = num && den && num > 0 && den > 0 ? num / den : 0
  return Either.right({ geometry: { width, height, ...layout }, headerBytes: end + 1, frameRate })
}

/** Reads up to `buffer.length` bytes at `position` without blocking the event loop. */
export const readAt = (fd: number, buffer: Uint8Array, position: number): Effect.Effect<number, UnusableInput> =>
  Effect.async<number, UnusableInput>((resume) => {
    read(fd, buffer, 0, buffer.length, position, (error, bytesRead) =>
      resume(
        error
          ? Effect.fail(new UnusableInput({ message: `cannot read: ${error.code ?? error.message}` }))
          : Effect.succeed(bytesRead)
      )
    )
  })

/** The header of the Y4M file behind `fd`, read from the descriptor (never the path again). */
export const readY4mHeader = (fd: number, path: string): Effect.Effect<Y4mHeader, UnusableInput> =>
  Effect.gen(function* () {
    const head = new Uint8Array(y4mHeaderLimit)
    const length = yield* readAt(fd, head, 0)
    return yield* parseY4mHeader(head.subarray(0, length), path)
  })

/** Bytes of one plane row set: the luma plane, each chroma plane, and a chroma plane's width in samples. */
export const planeBytes = (geometry: RawGeometry) => {
  const bytes = geometry.bitdepth > 8 ? 2 : 1
  const chromaWidth = geometry.pixelFormat === 444 ? geometry.width : Math.ceil(geometry.width / 2)
  const chromaHeight = geometry.pixelFormat === 420 ? Math.ceil(geometry.height / 2) : geometry.height
  return { luma: geometry.width * geometry.height * bytes, chroma: chromaWidth * chromaHeight * bytes, chromaWidth }
}

/** Bytes of one frame in the scorer's raw planar layout (16-bit little-endian samples above 8 bits). */
export const frameBytes = (geometry: RawGeometry): number => {
  const { luma, chroma } = planeBytes(geometry)
  return luma + 2 * chroma
}

/** Where the planes of frame `index` (counted from the file's start) begin in a Y4M file. */
export const y4mFrameOffset = (header: Pick<Y4mHeader, "geometry" | "headerBytes">, index: number): number =>
  header.headerBytes + index * (frameBytes(header.geometry) + frameLineBytes) + frameLineBytes

/** Whole frames in a Y4M file of `size` bytes (frame lines without parameters). */
export const y4mFrameCount = (header: Pick<Y4mHeader, "geometry" | "headerBytes">, size: number): number =>
  Math.floor((size - header.headerBytes) / (frameBytes(header.geometry) + frameLineBytes))
