/**
 * What the client learns from the input files before scoring: the geometry of a Y4M file (its
 * header) and how many frames a pair will give, for the progress bar's total and the reference
 * layouts' qualityWidth/qualityHeight. Best effort: an input the client cannot read (a server's
 * path) gives nothing and the server's answer decides.
 */
import { open, stat } from "node:fs/promises"

export interface Geometry {
  readonly width: number
  readonly height: number
  /** "420", "422" or "444". */
  readonly pixelFormat: string
  readonly bitdepth: number
}

export interface FrameWindow {
  readonly frameCount: number
  readonly frameSkipRef: number
  readonly frameSkipDist: number
  readonly subsample: number
}

const isY4m = (path: string) => /\.y4m$/i.test(path)

/** Bytes of one frame of planar YUV. */
export const frameBytes = (geometry: Geometry): number => {
  const luma = geometry.width * geometry.height
  const chroma =
    geometry.pixelFormat === "444"
      ? luma
      : geometry.pixelFormat === "422"
        ? Math.ceil(geometry.width / 2) * geometry.height
        : Math.ceil(geometry.width / 2) * Math.ceil(geometry.height / 2)
  return (luma + 2 * chroma) * (geometry.bitdepth > 8 ? 2 : 1)
}

/** The header line of a Y4M file and its geometry; undefined when unreadable or not Y4M. */
const readY4mHeader = async (
  path: string
): Promise<{ readonly bytes: number; readonly geometry: Geometry } | undefined> => {
  const handle = await open(path, "r")
  try {
    const buffer = Buffer.alloc(1024)
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0)
    const text = buffer.subarray(0, bytesRead).toString("latin1")
    const end = text.indexOf("\n")
    if (!text.startsWith("YUV4MPEG2 ") || end < 0) return undefined
    const fields = text.slice(10, end).split(" ")
    const value = (tag: string) => fields.find((field) => field.startsWith(tag))?.slice(1)
    const colour = value("C") ?? "420"
    const match = /^(420|422|444)(?:p(\d+))?/.exec(colour)
    return {
      bytes: end + 1,
      geometry: {
        width: Number(value("W") ?? 0),
        height: Number(value("H") ?? 0),
        pixelFormat: match?.[1] ?? "420",
        bitdepth: Number(match?.[2] ?? 8)
      }
    }
  } finally {
    await handle.close()
  }
}

/** Geometry of an input: the Y4M header, or the raw geometry given on the command line. */
export const inputGeometry = async (path: string, raw: Geometry | undefined): Promise<Geometry | undefined> => {
  if (!isY4m(path)) return raw
  try {
    return (await readY4mHeader(path))?.geometry
  } catch {
    return undefined
  }
}

const framesIn = async (path: string, raw: Geometry | undefined): Promise<number | undefined> => {
  try {
    const size = (await stat(path)).size
    if (isY4m(path)) {
      const header = await readY4mHeader(path)
      if (!header) return undefined
      // Each frame: "FRAME" (parameters are rare) and a newline, then the planes.
      return Math.floor((size - header.bytes) / (frameBytes(header.geometry) + 6))
    }
    if (!raw || raw.width <= 0 || raw.height <= 0) return undefined
    return Math.floor(size / frameBytes(raw))
  } catch {
    return undefined
  }
}

/** Frames the scorer will report for a pair, or undefined when the files cannot be read here. */
export const expectedFrames = async (
  reference: string,
  distorted: string,
  raw: Geometry | undefined,
  window: FrameWindow
): Promise<number | undefined> => {
  const [referenceFrames, distortedFrames] = await Promise.all([framesIn(reference, raw), framesIn(distorted, raw)])
  if (referenceFrames === undefined || distortedFrames === undefined) return undefined
  let frames = Math.max(0, Math.min(referenceFrames - window.frameSkipRef, distortedFrames - window.frameSkipDist))
  if (window.frameCount > 0) frames = Math.min(frames, window.frameCount)
  return Math.ceil(frames / Math.max(1, window.subsample))
}
