/**
 * What an opened input is, from its bytes (never from its name): Y4M (its header), an encoded
 * video (a container's or elementary stream's magic number, confirmed and described by
 * ffprobe), or raw planar YUV (no magic: its geometry must come from the request's options).
 */
import { Data, Effect } from "effect"
import type { RawGeometry } from "../scorer/index.ts"
import { blindProbeLimits, decoderMemoryAtLeast, headerProbeLimits, probeLimits } from "./decoder-memory.ts"
import { type DecoderFailed, type DecoderMissing, Ffmpeg, type ProbedStream } from "./ffmpeg.ts"
import { isY4mSignature, parseY4mHeader, readAt, type UnusableInput, type Y4mHeader, y4mHeaderLimit } from "./y4m.ts"

export type InputFormat =
  | { readonly _tag: "Raw" }
  | ({ readonly _tag: "Y4m" } & Y4mHeader)
  | { readonly _tag: "Encoded"; readonly stream: ProbedStream }

/** Decoding the input can never fit the memory budget (known from its headers, before any frame is decoded). */
export class DecoderTooLarge extends Data.TaggedError("DecoderTooLarge")<{
  readonly needed: number
  readonly budget: number
}> {}

/**
 * An encoded input's stream: its headers first (no frame decoded), then, when the container does
 * not store the pixel format, a probe that decodes a frame, under a hard limit for its size, and
 * only when the smallest decoder of that size fits `budget` (SVC_MAX_SCORE_MEMORY; undefined: no
 * budget). A 16000x16000 stream in a small file is refused here, before anything is decoded.
 */
const probeEncoded = (
  fd: number,
  budget: number | undefined
): Effect.Effect<ProbedStream, DecoderTooLarge | DecoderMissing | DecoderFailed, Ffmpeg> =>
  Effect.gen(function* () {
    const ffmpeg = yield* Ffmpeg
    const fits = (stream: ProbedStream) => {
      const least = decoderMemoryAtLeast(stream)
      return budget !== undefined && least > budget
        ? Effect.fail(new DecoderTooLarge({ needed: least, budget }))
        : Effect.succeed(stream)
    }
    const headers = yield* Effect.either(ffmpeg.probe(fd, true, headerProbeLimits))
    // An elementary stream (raw H.264, HEVC) has no container header: its size is known only
    // from decoding, under a wall of the budget's size (or the largest frame's, without one).
    if (headers._tag === "Left") return yield* Effect.flatMap(ffmpeg.probe(fd, false, blindProbeLimits(budget)), fits)
    yield* fits(headers.right)
    if (headers.right.pixelFormat !== "unknown") return headers.right
    const decoded = yield* ffmpeg.probe(fd, false, probeLimits(headers.right))
    return { ...decoded, declaredFrames: headers.right.declaredFrames ?? decoded.declaredFrames }
  })

const ascii = (bytes: Uint8Array, from: number, to: number) => String.fromCharCode(...bytes.subarray(from, to))

/** An H.264 or HEVC NAL unit that starts an Annex B stream (SEI, SPS, AUD; VPS, SPS, PPS, AUD, SEI). */
const startsAnnexB = (header: number, next: number) =>
  ((header & 0x80) === 0 && [6, 7, 9].includes(header & 0x1f)) ||
  ([0x40, 0x42, 0x44, 0x46, 0x4e].includes(header) && next === 0x01)

/** Whether the first bytes are the magic number of a container or elementary stream of video. */
const hasVideoMagic = (head: Uint8Array): boolean => {
  const at = (i: number) => head[i] ?? -1
  const text = (from: number, to: number) => ascii(head, from, Math.min(to, head.length))
  if (["ftyp", "moov", "mdat", "free", "wide", "skip"].includes(text(4, 8))) return true // ISO BMFF / QuickTime
  if (at(0) === 0x1a && at(1) === 0x45 && at(2) === 0xdf && at(3) === 0xa3) return true // EBML: Matroska, WebM
  if (text(0, 4) === "DKIF") return true // IVF
  if (text(0, 4) === "RIFF" && text(8, 12) === "AVI ") return true
  if (text(0, 3) === "FLV" || text(0, 4) === "OggS") return true
  if (at(0) === 0x06 && at(1) === 0x0e && at(2) === 0x2b && at(3) === 0x34) return true // MXF
  if (text(0, 24) === "nut/multimedia container") return true
  if (at(0) === 0 && at(1) === 0 && at(2) === 1 && (at(3) === 0xba || at(3) === 0xb3)) return true // MPEG-PS, MPEG video
  if (at(0) === 0 && at(1) === 0 && at(2) === 1 && startsAnnexB(at(3), at(4))) return true // H.264 / HEVC
  if (at(0) === 0 && at(1) === 0 && at(2) === 0 && at(3) === 1 && startsAnnexB(at(4), at(5))) return true
  if (at(0) === 0x47 && at(188) === 0x47 && at(376) === 0x47) return true // MPEG-TS packets
  if (at(0) === 0x12 && at(1) === 0x00 && at(2) === 0x0a) return true // AV1 OBUs: temporal delimiter, sequence header
  return false
}

/**
 * Says what the input behind `fd` is. Bytes with a video magic number are decoded (ffprobe
 * describes them; no ffmpeg is an error). Bytes without one are raw YUV when the request gives
 * raw geometry (`rawAllowed`); otherwise ffprobe may still recognise them, and if it does not
 * they are raw (and the caller refuses them for the missing geometry).
 */
export const probeInput = (
  fd: number,
  path: string,
  rawAllowed: boolean,
  budget: number | undefined
): Effect.Effect<InputFormat, UnusableInput | DecoderTooLarge | DecoderMissing | DecoderFailed, Ffmpeg> =>
  Effect.gen(function* () {
    const head = new Uint8Array(y4mHeaderLimit)
    const length = yield* readAt(fd, head, 0)
    const bytes = head.subarray(0, length)
    if (isY4mSignature(bytes)) return { _tag: "Y4m", ...(yield* parseY4mHeader(bytes, path)) } as const
    const ffmpeg = yield* Ffmpeg
    if (hasVideoMagic(bytes)) return { _tag: "Encoded", stream: yield* probeEncoded(fd, budget) } as const
    if (rawAllowed) return { _tag: "Raw" } as const
    const recognised = yield* Effect.either(ffmpeg.probe(fd, true, headerProbeLimits))
    if (recognised._tag === "Left") return { _tag: "Raw" } as const
    return { _tag: "Encoded", stream: yield* probeEncoded(fd, budget) } as const
  })

/**
 * The raw layout the scorer reads for an encoded input of ffmpeg pixel format `name`: its
 * chroma subsampling (planar YUV, NV12-style and gray map to theirs; RGB keeps full chroma as
 * 4:4:4) and its bit depth rounded up to 8, 10, 12 or 16.
 */
export const layoutOf = (name: string): Pick<RawGeometry, "pixelFormat" | "bitdepth"> => {
  // The trailing number is bits per component ("yuv420p10le", "p010le", "gbrp12le"), except in
  // packed 8-bit names ("nv12", "rgb24") and packed RGB totals ("rgb48le": 16 per component).
  const trailing = Number(/(\d+)(?:le|be)?$/.exec(name.replace(/^yuv[aj]?4\d\dp/, ""))?.[1] ?? 8)
  const bits = /^(nv\d\d|yuyv|uyvy|yvyu|rgb24|bgr24)/.test(name)
    ? 8
    : trailing > 16
      ? trailing >= 48
        ? 16
        : 8
      : trailing
  const bitdepth = bits <= 8 ? 8 : bits <= 10 ? 10 : bits <= 12 ? 12 : 16
  const planar = /^yuv[aj]?(4\d\d)p/.exec(name)?.[1]
  if (planar === "422" || planar === "444") return { pixelFormat: planar === "422" ? 422 : 444, bitdepth }
  if (planar !== undefined) return { pixelFormat: 420, bitdepth }
  if (/^(nv16|nv20|p210|p216|y210|y212|yuyv|uyvy|yvyu)/.test(name)) return { pixelFormat: 422, bitdepth }
  if (
    /^(nv24|nv42|p410|p416|gbr|rgb|bgr|argb|abgr|rgba|bgra|0rgb|rgb0|0bgr|bgr0|x2rgb|x2bgr|ayuv|vuya|vuyx|xv3)/.test(
      name
    )
  )
    return { pixelFormat: 444, bitdepth }
  return { pixelFormat: 420, bitdepth }
}

/** ffmpeg's name of the raw planar layout the scorer reads, for example "yuv420p10le". */
export const ffmpegPixelFormat = (geometry: Pick<RawGeometry, "pixelFormat" | "bitdepth">): string =>
  `yuv${geometry.pixelFormat}p${geometry.bitdepth === 8 ? "" : `${geometry.bitdepth}le`}`
