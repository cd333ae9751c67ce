/**
 * Small pictures of the worst shots' worst frames, reference beside distorted, rendered from
 * the inputs into a result scored with `options.shots`, so a client that cannot read the inputs
 * (a job's, a scoring server's) still sees what went wrong. Size-capped: at most
 * `maxThumbnailWidth` pixels wide (height in proportion) and `maxThumbnailBytes` of PNG per side
 * (a noisy picture is halved until it fits), for the (at most 5) worst shots. Raw YUV and Y4M
 * frames are read here from the descriptors the score was made from, one frame at a time and
 * asynchronously (never the JavaScript thread blocked on a read); an encoded side's frames are
 * decoded again for them (score.ts's `sidePictures`) and made into pictures by `thumbnailOf`.
 */
import { Effect, Either } from "effect"
import { read } from "node:fs"
import { promisify } from "node:util"
import { deflate } from "node:zlib"
import type { RawGeometry, Thumbnail } from "../scorer/index.ts"
import { frameBytes, parseY4mHeader, planeBytes, y4mFrameOffset, y4mHeaderLimit } from "./y4m.ts"

export const maxThumbnailWidth = 192
export const maxThumbnailBytes = 48 * 1024

/** Where a side's frames are: its descriptor, its layout and the first frame read (the skip). */
export interface FrameFile {
  readonly fd: number
  readonly y4m: boolean
  readonly skip: number
}

const readAt = promisify(read)
const deflateAsync = promisify(deflate)

/** Input frame `index` (counted from the start of the file) of a side, or undefined when it cannot be read. */
const readFrame = async (file: FrameFile, geometry: RawGeometry, index: number): Promise<Buffer | undefined> => {
  const bytes = frameBytes(geometry)
  let offset = index * bytes
  if (file.y4m) {
    const head = Buffer.alloc(y4mHeaderLimit)
    const { bytesRead } = await readAt(file.fd, head, 0, head.length, 0)
    const header = Either.getOrUndefined(parseY4mHeader(head.subarray(0, bytesRead), ""))
    if (!header) return undefined
    offset = y4mFrameOffset({ geometry, headerBytes: header.headerBytes }, index)
  }
  const frame = Buffer.alloc(bytes)
  const { bytesRead } = await readAt(file.fd, frame, 0, bytes, offset)
  return bytesRead === bytes ? frame : undefined
}

const crcTable = Array.from({ length: 256 }, (_, n) => {
  let c = n
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1
  return c >>> 0
})
const crc32 = (bytes: Uint8Array) => {
  let c = 0xffffffff
  for (const byte of bytes) c = (crcTable[(c ^ byte) & 0xff] as number) ^ (c >>> 8)
  return (c ^ 0xffffffff) >>> 0
}
const chunk = (type: string, data: Uint8Array) => {
  const out = Buffer.alloc(12 + data.length)
  out.writeUInt32BE(data.length, 0)
  out.write(type, 4, "latin1")
  Buffer.from(data).copy(out, 8)
  out.writeUInt32BE(crc32(out.subarray(4, 8 + data.length)), 8 + data.length)
  return out
}

/** An RGB PNG of `width` x `height` pixels (rows of 3 bytes a pixel). */
const png = async (rgb: Uint8Array, width: number, height: number): Promise<Buffer> => {
  const rows = Buffer.alloc((width * 3 + 1) * height)
  for (let y = 0; y < height; y++)
    Buffer.from(rgb.buffer, rgb.byteOffset + y * width * 3, width * 3).copy(rows, y * (width * 3 + 1) + 1)
  const header = Buffer.alloc(13)
  header.writeUInt32BE(width, 0)
  header.writeUInt32BE(height, 4)
  header.set([8, 2, 0, 0, 0], 8) // 8-bit RGB, no interlace
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])
  return Buffer.concat([
    signature,
    chunk("IHDR", header),
    chunk("IDAT", await deflateAsync(rows)),
    chunk("IEND", new Uint8Array())
  ])
}

/** Thumbnail size of a frame: at most `maxWidth` wide, the aspect kept. */
export const thumbnailSize = (geometry: Pick<RawGeometry, "width" | "height">, maxWidth = maxThumbnailWidth) => {
  const width = Math.max(1, Math.min(maxWidth, geometry.width))
  return { width, height: Math.max(1, Math.round((geometry.height * width) / geometry.width)) }
}

/** A raw frame scaled down (the average of each output pixel's source box) to BT.709 limited-range RGB. */
const toRgb = (
  frame: Buffer,
  geometry: RawGeometry,
  maxWidth: number
): { rgb: Uint8Array; width: number; height: number } => {
  const { width, height } = thumbnailSize(geometry, maxWidth)
  const { luma, chroma, chromaWidth } = planeBytes(geometry)
  const wide = geometry.bitdepth > 8
  const scale = 1 / (1 << (geometry.bitdepth - 8))
  const sample = (offset: number) => (wide ? frame.readUInt16LE(offset) : (frame[offset] as number)) * scale
  const bytes = wide ? 2 : 1
  const shiftX = geometry.pixelFormat === 444 ? 0 : 1
  const shiftY = geometry.pixelFormat === 420 ? 1 : 0
  const rgb = new Uint8Array(width * height * 3)
  const clamp = (v: number) => (v < 0 ? 0 : v > 255 ? 255 : Math.round(v))
  for (let ty = 0; ty < height; ty++) {
    const y0 = Math.floor((ty * geometry.height) / height)
    const y1 = Math.max(y0 + 1, Math.floor(((ty + 1) * geometry.height) / height))
    for (let tx = 0; tx < width; tx++) {
      const x0 = Math.floor((tx * geometry.width) / width)
      const x1 = Math.max(x0 + 1, Math.floor(((tx + 1) * geometry.width) / width))
      // Up to 4 x 4 samples of the box: enough for a thumbnail, bounded work per pixel.
      const stepY = Math.max(1, Math.floor((y1 - y0) / 4))
      const stepX = Math.max(1, Math.floor((x1 - x0) / 4))
      let ySum = 0
      let uSum = 0
      let vSum = 0
      let count = 0
      for (let y = y0; y < y1; y += stepY) {
        for (let x = x0; x < x1; x += stepX) {
          const chromaAt = ((y >> shiftY) * chromaWidth + (x >> shiftX)) * bytes
          ySum += sample((y * geometry.width + x) * bytes)
          uSum += sample(luma + chromaAt)
          vSum += sample(luma + chroma + chromaAt)
          count++
        }
      }
      const yv = (ySum / count - 16) * (255 / 219)
      const u = (uSum / count - 128) * (255 / 224)
      const v = (vSum / count - 128) * (255 / 224)
      const at = (ty * width + tx) * 3
      rgb[at] = clamp(yv + 1.5748 * v)
      rgb[at + 1] = clamp(yv - 0.1873 * u - 0.4681 * v)
      rgb[at + 2] = clamp(yv + 1.8556 * u)
    }
  }
  return { rgb, width, height }
}

const dataUrl = (image: Buffer) => `data:image/png;base64,${image.toString("base64")}`

/** One side's picture of a raw frame as a size-capped PNG data: URL (undefined when no size fits). */
export const thumbnailOf = async (raw: Buffer, geometry: RawGeometry): Promise<string | undefined> => {
  for (let maxWidth = maxThumbnailWidth; maxWidth >= 24; maxWidth /= 2) {
    const { rgb, width, height } = toRgb(raw, geometry, maxWidth)
    const encoded = await png(rgb, width, height)
    if (encoded.length <= maxThumbnailBytes) return dataUrl(encoded)
  }
  return undefined
}

/** One raw/Y4M side's pictures of scored frames `frames`, by frame. */
export const filePictures = async (
  side: FrameFile,
  geometry: RawGeometry,
  subsample: number,
  frames: ReadonlyArray<number>
): Promise<ReadonlyMap<number, string>> => {
  const byFrame = new Map<number, string>()
  for (const frame of frames) {
    const raw = await readFrame(side, geometry, side.skip + frame * subsample)
    const url = raw ? await thumbnailOf(raw, geometry) : undefined
    if (url) byFrame.set(frame, url)
  }
  return byFrame
}

/** Pairs the sides' pictures by frame: a frame either side lacks is left out. */
export const pairThumbnails = (
  frames: ReadonlyArray<number>,
  reference: ReadonlyMap<number, string>,
  distorted: ReadonlyMap<number, string>
): ReadonlyArray<Thumbnail> =>
  frames.flatMap((frame) => {
    const ref = reference.get(frame)
    const dis = distorted.get(frame)
    return ref && dis ? [{ frame, reference: ref, distorted: dis }] : []
  })

/**
 * Thumbnails of scored frames `frames` read from raw/Y4M files (their input frame: index x
 * subsample after each side's skip); a frame either side cannot read is left out.
 */
export const renderThumbnails = (
  sides: { readonly reference: FrameFile; readonly distorted: FrameFile },
  geometry: RawGeometry,
  subsample: number,
  frames: ReadonlyArray<number>
): Effect.Effect<ReadonlyArray<Thumbnail>> =>
  Effect.promise(async () =>
    pairThumbnails(
      frames,
      await filePictures(sides.reference, geometry, subsample, frames),
      await filePictures(sides.distorted, geometry, subsample, frames)
    )
  ).pipe(Effect.catchAllDefect(() => Effect.succeed([])))
