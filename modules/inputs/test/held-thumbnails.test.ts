/**
 * The one decode (`Ffmpeg.decodeWithThumbnails`, `-filter_complex split`) gives byte for byte
 * what the two decodes give (`-vf`): its thumbnails are the search decode's (`lumaThumbnails`)
 * and its frames the scoring decode's (`decode` into a pipe), for 8-bit and 10-bit H.264, 4:2:0
 * and 4:2:2, kept in their layout, converted to another depth, or scaled from another size.
 */
import { closeSync, openSync } from "node:fs"
import { join } from "node:path"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { writeClip } from "../../../local/clip.ts"
import { scratchDir } from "../../../test/support/media.ts"
import { Scorer } from "../../scorer/index.ts"
import { thumbnailBytes, thumbnailHeight, thumbnailWidth } from "../alignment.ts"
import { holdDecoded } from "../alignment-once.ts"
import { decoderLimits } from "../decoder-memory.ts"
import { type DecodeTarget, Ffmpeg } from "../ffmpeg.ts"
import { decoderPipe } from "../frames.ts"
import { countingRuntime } from "./held-support.ts"

const scratch = scratchDir("svc-held-thumbnails-")
const { runtime } = countingRuntime()
afterAll(async () => {
  await runtime.dispose()
  scratch.remove()
})

const frames = 30
/** Walls of every decoder here: a generous fixed estimate (the estimate itself is not under test). */
const memory = 512 * 1024 * 1024

/** The H.264 clips of testsrc2 (`frames` frames each), by size and pixel format (`clip` names them). */
const clips = new Map<string, string>()
const clip = (width: number, height: number, pixelFormat: string) => `${width}x${height}-${pixelFormat}`
const sources = [
  [320, 240, "yuv420p"],
  [320, 240, "yuv420p10le"],
  [320, 240, "yuv422p10le"],
  [256, 192, "yuv420p10le"]
] as const
beforeAll(async () => {
  await Promise.all(
    sources.map(async ([width, height, pixelFormat]) => {
      const name = clip(width, height, pixelFormat)
      const path = await writeClip(join(scratch.dir, `${name}.mkv`), {
        width,
        height,
        frames,
        pixelFormat,
        codec: "libx264",
        preset: "ultrafast",
        crf: 30
      })
      clips.set(name, path)
    })
  )
}, 60_000)

/** A decode target of the clip `source` (its shape) to `width` x `height` in `pixelFormat`, scaled or kept. */
const targetOf = (
  source: { readonly width: number; readonly height: number; readonly hsub: number; readonly vsub: number },
  width: number,
  height: number,
  pixelFormat: string
): DecodeTarget => {
  const scaled = source.width !== width || source.height !== height
  return {
    width,
    height,
    pixelFormat,
    scale: scaled ? "bicubic" : undefined,
    source,
    shapeChanges: scaled ? "list" : "stop"
  }
}

/** Bytes of one frame of `target` (4:2:0 or 4:2:2; 8 or 16 bits a sample). */
const frameBytesOf = (target: DecodeTarget) => {
  const sample = target.pixelFormat.endsWith("10le") ? 2 : 1
  const chroma = target.pixelFormat.startsWith("yuv422") ? 1 : 0.5
  return target.width * target.height * (1 + chroma) * sample
}

/**
 * The one decode's frames and thumbnails after a frame skip, the search decode's thumbnails and
 * the scoring decode's frames (each of every frame: the search and the library skip them after).
 */
const decodeBothWays = (path: string, target: DecodeTarget, skip: number) =>
  runtime.runPromise(
    Effect.scoped(
      Effect.gen(function* () {
        const scorer = yield* Scorer
        const ffmpeg = yield* Ffmpeg
        const fd = yield* Effect.acquireRelease(
          Effect.sync(() => openSync(path, "r")),
          (fd) => Effect.sync(() => closeSync(fd))
        )
        const limits = { ...decoderLimits(memory, ffmpeg.limits.cpuSeconds), threads: 1, maxFrames: frames + 2 }
        const bytes = frameBytesOf(target)
        const held = yield* holdDecoded(scorer, fd, target, limits, memory, skip, bytes)
        const size = { width: thumbnailWidth, height: thumbnailHeight }
        const searched = yield* ffmpeg.lumaThumbnails(fd, size, limits)
        const pipe = yield* decoderPipe(scorer)
        const child = yield* ffmpeg.decode(fd, target, pipe.write, limits)
        yield* pipe.handOver
        const [decoded, code] = yield* Effect.promise(() =>
          Promise.all([new Response(Bun.file(pipe.read).stream()).bytes(), child.exited, child.stderrDone])
        )
        return { held, searched, decoded, code, bytes }
      })
    )
  )

/** One row: a clip (its size and pixel format, its chroma rows' subsampling), the target, a frame skip. */
interface Row {
  readonly name: string
  readonly clip: (typeof sources)[number]
  readonly vsub: 1 | 2
  readonly target: { readonly width: number; readonly height: number; readonly pixelFormat: string }
  readonly skip?: number
}

describe("decodeWithThumbnails against the two decodes", () => {
  const at320 = { width: 320, height: 240 }
  const cases: ReadonlyArray<Row> = [
    { name: "8-bit 4:2:0 kept", clip: [320, 240, "yuv420p"], vsub: 2, target: { ...at320, pixelFormat: "yuv420p" } },
    {
      name: "8-bit 4:2:0 to 10 bits",
      clip: [320, 240, "yuv420p"],
      vsub: 2,
      target: { ...at320, pixelFormat: "yuv420p10le" }
    },
    {
      name: "10-bit 4:2:0 kept",
      clip: [320, 240, "yuv420p10le"],
      vsub: 2,
      target: { ...at320, pixelFormat: "yuv420p10le" }
    },
    {
      name: "10-bit 4:2:0 kept, after a frame skip of 2",
      clip: [320, 240, "yuv420p10le"],
      vsub: 2,
      target: { ...at320, pixelFormat: "yuv420p10le" },
      skip: 2
    },
    {
      name: "10-bit 4:2:0 to 8 bits",
      clip: [320, 240, "yuv420p10le"],
      vsub: 2,
      target: { ...at320, pixelFormat: "yuv420p" }
    },
    {
      name: "10-bit 4:2:2 kept",
      clip: [320, 240, "yuv422p10le"],
      vsub: 1,
      target: { ...at320, pixelFormat: "yuv422p10le" }
    },
    {
      name: "10-bit 4:2:0 scaled from 256x192",
      clip: [256, 192, "yuv420p10le"],
      vsub: 2,
      target: { ...at320, pixelFormat: "yuv420p10le" }
    }
  ]
  it.each(cases)("$name: the same thumbnails and frames", async ({
    clip: [width, height, pixelFormat],
    vsub,
    target,
    skip = 0
  }) => {
    const decodeTarget = targetOf({ width, height, hsub: 2, vsub }, target.width, target.height, target.pixelFormat)
    const { held, searched, decoded, code, bytes } = await decodeBothWays(
      clips.get(clip(width, height, pixelFormat)) ?? "",
      decodeTarget,
      skip
    )
    expect(code).toBe(0)
    expect(held?.frames).toHaveLength(frames - skip)
    expect(held?.thumbnails.frames).toBe(frames - skip)
    expect(searched.length).toBe(frames * thumbnailBytes)
    expect(Buffer.from(held?.thumbnails.bytes ?? []).equals(searched.subarray(skip * thumbnailBytes))).toBe(true)
    expect(decoded.length).toBe(frames * bytes)
    expect(Buffer.concat(held?.frames ?? []).equals(decoded.subarray(skip * bytes))).toBe(true)
  })
})
