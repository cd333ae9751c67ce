/**
 * The alignment search's thumbnails of a raw YUV or Y4M input, read from its descriptor without
 * a decoder: only each frame's luma plane is read (asynchronously, one frame buffer reused), and
 * reduced to `thumbnailWidth` x `thumbnailHeight` area means (each thumbnail pixel the mean of
 * the source area it covers, fractional edges weighted), then widened from limited to full range
 * as ffmpeg's `scale=...:flags=area,format=gray` does for a decoded input. The two agree within
 * one level on most pixels (measured on the bench pair: mean absolute difference 0.22), so a raw
 * side lines up with an encoded one as before. An ffmpeg child per side cost about 0.2 s of CPU
 * for 48 1080p frames; this costs about a quarter of it (README, "Alignment", "Cost").
 */
import { Effect } from "effect"
import type { RawGeometry } from "../scorer/index.ts"
import { type SideThumbnails, thumbnailBytes, thumbnailHeight, thumbnailWidth } from "./alignment.ts"
import { readAt, type UnusableInput } from "./y4m.ts"

/** Where a file side's frames are. */
export interface LumaFile {
  readonly fd: number
  readonly geometry: RawGeometry
  /** Byte offset of frame 0's luma plane (a Y4M file's header and first "FRAME" line before it). */
  readonly firstFrame: number
  /** Bytes from one frame's luma plane to the next's (planes and any "FRAME" line). */
  readonly frameStride: number
  /** Whole frames the file holds. */
  readonly frames: number
}

/** Bytes of one frame's luma plane: the buffer the reduction reads into. */
export const lumaPlaneBytes = (geometry: RawGeometry) =>
  geometry.width * geometry.height * (geometry.bitdepth > 8 ? 2 : 1)

/**
 * How source positions 0..`size` fall into `cells` equal spans: for each cell its first and last
 * whole source index and the weights of the partial sources at its edges.
 */
const spans = (size: number, cells: number) =>
  Array.from({ length: cells }, (_, cell) => {
    const from = (cell * size) / cells
    const to = ((cell + 1) * size) / cells
    const first = Math.ceil(from)
    const end = Math.floor(to)
    return {
      first,
      end,
      /** Source `first - 1` covers this much of the cell (0 when the span starts on a whole index). */
      lead: first - from,
      /** Source `end` covers this much (0 when the span ends on a whole index). */
      tail: to - end
    }
  })

/** Sum of `samples[from..to)`: one function per sample width, so each loop stays monomorphic. */
const sum8 = (samples: Uint8Array, words: Uint32Array, from: number, to: number) => {
  let sum = 0
  let x = from
  // Four samples a load, two 16-bit lanes of pair sums: flushed before a lane can overflow.
  for (; (x & 3) !== 0 && x < to; x++) sum += samples[x] as number
  while (to - x >= 4) {
    const stop = Math.min(to & ~3, x + 4 * 128)
    let lanes = 0
    for (let w = x >> 2; w < stop >> 2; w++) {
      const v = words[w] as number
      lanes += (v & 0x00ff00ff) + ((v >>> 8) & 0x00ff00ff)
    }
    sum += (lanes & 0xffff) + (lanes >>> 16)
    x = stop
  }
  for (; x < to; x++) sum += samples[x] as number
  return sum
}
const sum16 = (samples: Uint16Array, from: number, to: number) => {
  let sum = 0
  for (let x = from; x < to; x++) sum += samples[x] as number
  return sum
}

/** Reduces one luma plane (8-bit, or 16-bit little-endian of `bitdepth`) into `out` at `at`. */
const reduce = (plane: Uint8Array, geometry: RawGeometry, out: Uint8Array, at: number) => {
  const { width, height, bitdepth } = geometry
  const wide = bitdepth > 8
  const words = new Uint32Array(plane.buffer, plane.byteOffset, wide ? 0 : plane.length >> 2)
  const wideSamples = new Uint16Array(plane.buffer, plane.byteOffset, wide ? width * height : 0)
  const sample = (x: number) => (wide ? (wideSamples[x] as number) : (plane[x] as number))
  const columns = spans(width, thumbnailWidth)
  const rows = spans(height, thumbnailHeight)
  const rowSums = new Float64Array(thumbnailWidth)
  const cellSums = new Float64Array(thumbnailWidth)
  const area = (width / thumbnailWidth) * (height / thumbnailHeight)
  const scale = 1 / (1 << (bitdepth - 8))
  const addRow = (y: number, weight: number) => {
    const row = y * width
    for (let tx = 0; tx < thumbnailWidth; tx++) {
      const { first, end, lead, tail } = columns[tx] as ReturnType<typeof spans>[number]
      let sum = wide ? sum16(wideSamples, row + first, row + end) : sum8(plane, words, row + first, row + end)
      if (lead > 0) sum += lead * sample(row + first - 1)
      if (tail > 0) sum += tail * sample(row + end)
      rowSums[tx] = sum
    }
    for (let tx = 0; tx < thumbnailWidth; tx++)
      cellSums[tx] = (cellSums[tx] as number) + weight * (rowSums[tx] as number)
  }
  for (let ty = 0; ty < thumbnailHeight; ty++) {
    const { first, end, lead, tail } = rows[ty] as ReturnType<typeof spans>[number]
    cellSums.fill(0)
    if (lead > 0) addRow(first - 1, lead)
    for (let y = first; y < end; y++) addRow(y, 1)
    if (tail > 0) addRow(end, tail)
    for (let tx = 0; tx < thumbnailWidth; tx++) {
      const mean = ((cellSums[tx] as number) / area) * scale
      const full = Math.round(((mean - 16) * 255) / 219)
      out[at + ty * thumbnailWidth + tx] = full < 0 ? 0 : full > 255 ? 255 : full
    }
  }
}

/** Thumbnails of `file`'s whole frames from frame `skip` (counted from the file's start). */
export const fileThumbnails = (file: LumaFile, skip: number): Effect.Effect<SideThumbnails, UnusableInput> =>
  Effect.gen(function* () {
    const wanted = Math.max(0, file.frames - skip)
    const plane = new Uint8Array(lumaPlaneBytes(file.geometry))
    const bytes = new Uint8Array(wanted * thumbnailBytes)
    let frames = 0
    while (frames < wanted) {
      const read = yield* readAt(file.fd, plane, file.firstFrame + (skip + frames) * file.frameStride)
      if (read < plane.length) break // cut short since it was measured: the frames read are searched
      reduce(plane, file.geometry, bytes, frames * thumbnailBytes)
      frames++
    }
    return { frames, bytes: bytes.subarray(0, frames * thumbnailBytes) }
  })
