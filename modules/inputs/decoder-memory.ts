/**
 * What a decoder costs, from the probe, before it starts: the memory it is admitted with (counted
 * with the scorer's in SVC_MAX_SCORE_MEMORY) and the walls it runs in (svc-exec's limits), so a
 * file that lies to the probe fails alone instead of growing the host.
 *
 * Measured with ffmpeg 5-7 decoding H.264/HEVC (8000x8000 and 320x240, 1-4 threads, /proc VmHWM
 * and VmPeak): resident memory is about 55 MB plus four to five decoded frames at one thread and
 * one more frame per further thread; the address space is 270-400 MB above the resident peak
 * (shared libraries, thread stacks, malloc arenas with MALLOC_ARENA_MAX=2).
 */
import type { RawGeometry } from "../scorer/index.ts"
import type { ChildLimits, ProbedStream } from "./ffmpeg.ts"

const mebibyte = 1024 * 1024

/** Resident memory of an ffmpeg child before any frame: code, libraries' data, demuxer buffers. */
export const decoderBaseBytes = 64 * mebibyte

/** Address space a child reserves beyond what it touches (libraries, stacks, arenas). */
export const addressSpaceSlack = 512 * mebibyte

/** Bytes of one decoded frame of `width` x `height` in a layout (ffmpeg pads lines by 64 bytes at most). */
const pictureBytes = (width: number, height: number, layout: Pick<RawGeometry, "pixelFormat" | "bitdepth">) => {
  const chromaWidth = layout.pixelFormat === 444 ? width : Math.ceil(width / 2)
  const chromaHeight = layout.pixelFormat === 420 ? Math.ceil(height / 2) : height
  const bytesPerSample = layout.bitdepth > 8 ? 2 : 1
  return ((width + 64) * height + 2 * (chromaWidth + 64) * chromaHeight) * bytesPerSample
}

/**
 * Upper estimate of one decoder's resident memory: its base, the decoded frames it holds (the
 * stream's reference frames and reorder delay, one per decoding thread, the frame being decoded,
 * the one being converted and one queued) and, when it converts or scales, two output frames.
 */
export const decoderMemory = (
  stream: ProbedStream,
  sourceLayout: Pick<RawGeometry, "pixelFormat" | "bitdepth">,
  target: RawGeometry,
  threads: number
): number => {
  const held = stream.heldFrames + threads + 3
  const source = pictureBytes(stream.width, stream.height, sourceLayout)
  return decoderBaseBytes + held * source + 2 * pictureBytes(target.width, target.height, target)
}

/** The smallest a decoder of this stream can be (4:2:0, 8-bit, one thread, no output): a lower bound for admission before the pixel format is known. */
export const decoderMemoryAtLeast = (stream: Pick<ProbedStream, "width" | "height" | "heldFrames">): number =>
  decoderBaseBytes +
  (stream.heldFrames + 4) * pictureBytes(stream.width, stream.height, { pixelFormat: 420, bitdepth: 8 })

/** The largest a probing decoder of this size can be (4:4:4, 16-bit, one thread): its hard limit. */
export const probeLimits = (stream: Pick<ProbedStream, "width" | "height" | "heldFrames">): ChildLimits => ({
  addressSpace:
    addressSpaceSlack +
    decoderBaseBytes +
    (stream.heldFrames + 4) * pictureBytes(stream.width, stream.height, { pixelFormat: 444, bitdepth: 16 }),
  cpuSeconds: probeCpuSeconds
})

/** A probe of a stream of unknown size: the budget, or (none) a 16384x16384 4:4:4 16-bit frame's worth. */
export const blindProbeLimits = (budget: number | undefined): ChildLimits => ({
  addressSpace:
    addressSpaceSlack +
    decoderBaseBytes +
    (budget ?? 6 * pictureBytes(16384, 16384, { pixelFormat: 444, bitdepth: 16 })),
  cpuSeconds: probeCpuSeconds
})

/** CPU seconds a probe may take: reading headers and a frame or two. */
export const probeCpuSeconds = 60

/** A first probe reads headers only (no frame decoded): a small, fixed wall. */
export const headerProbeLimits: ChildLimits = {
  addressSpace: addressSpaceSlack + decoderBaseBytes,
  cpuSeconds: probeCpuSeconds
}

/** The hard limit of a decoder admitted with `estimate` bytes. */
export const decoderLimits = (estimate: number, cpuSeconds: number): ChildLimits => ({
  addressSpace: estimate + addressSpaceSlack,
  cpuSeconds
})
