/**
 * What the client learns from the input files before scoring: the geometry of a Y4M file (its
 * header) and how many frames a pair will give, for the progress bar's total and the reference
 * layouts' qualityWidth/qualityHeight. Best effort: an input the client cannot read (a server's
 * path) gives nothing and the server's answer decides.
 */
import { Either } from "effect"
import { open, stat } from "node:fs/promises"
import { frameBytes, parseY4mHeader, type Y4mHeader, y4mFrameCount, y4mHeaderLimit } from "../inputs/y4m.ts"
import type { RawGeometry } from "../scorer/index.ts"

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

/** The scorer's raw layout of a command line's geometry. */
const rawLayout = (geometry: Geometry): RawGeometry => ({
  width: geometry.width,
  height: geometry.height,
  pixelFormat: geometry.pixelFormat === "444" ? 444 : geometry.pixelFormat === "422" ? 422 : 420,
  bitdepth: geometry.bitdepth as RawGeometry["bitdepth"]
})

/** The header of a Y4M file (modules/inputs/y4m.ts reads it); undefined when unreadable or not Y4M. */
const readHeader = async (path: string): Promise<Y4mHeader | undefined> => {
  const handle = await open(path, "r")
  try {
    const head = new Uint8Array(y4mHeaderLimit)
    const { bytesRead } = await handle.read(head, 0, head.length, 0)
    return Either.getOrUndefined(parseY4mHeader(head.subarray(0, bytesRead), path))
  } finally {
    await handle.close()
  }
}

/** Geometry of an input: the Y4M header, or the raw geometry given on the command line. */
export const inputGeometry = async (path: string, raw: Geometry | undefined): Promise<Geometry | undefined> => {
  if (!isY4m(path)) return raw
  try {
    const header = await readHeader(path)
    return (
      header && {
        width: header.geometry.width,
        height: header.geometry.height,
        pixelFormat: String(header.geometry.pixelFormat),
        bitdepth: header.geometry.bitdepth
      }
    )
  } catch {
    return undefined
  }
}

const framesIn = async (path: string, raw: Geometry | undefined): Promise<number | undefined> => {
  try {
    const size = (await stat(path)).size
    if (isY4m(path)) {
      const header = await readHeader(path)
      return header && y4mFrameCount(header, size)
    }
    if (!raw || raw.width <= 0 || raw.height <= 0) return undefined
    return Math.floor(size / frameBytes(rawLayout(raw)))
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
