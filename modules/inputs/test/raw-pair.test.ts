/**
 * A raw YUV pair is opened once: the file job scores the descriptors scoreInputs opened and
 * checked, so a path renamed to another file after the check still scores the file checked.
 */
import { ConfigProvider, Effect, Layer, ManagedRuntime } from "effect"
import { renameSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { modelDirEnv } from "../../../local/executables.ts"
import { scratchDir } from "../../../test/support/media.ts"
import { parseScoreRequest, Scorer } from "../../scorer/index.ts"
import { type InputGuard, unguarded } from "../open.ts"
import { Ffmpeg } from "../ffmpeg.ts"
import { scoreInputs } from "../score.ts"

const runtime = ManagedRuntime.make(
  Layer.merge(Scorer.Default, Ffmpeg.Default).pipe(
    Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(modelDirEnv)))))
  )
)
const scratch = scratchDir("svc-raw-pair-")
afterAll(async () => {
  await runtime.dispose()
  scratch.remove()
})

const width = 64
const height = 64
const frames = 3
const frameBytes = width * height * 1.5
const file = (name: string) => join(scratch.dir, name)

/** A clip of moving texture; `noise` adds a deterministic distortion. */
const clip = (name: string, noise: number) => {
  const bytes = new Uint8Array(frameBytes * frames)
  for (let i = 0; i < bytes.length; i++) {
    const texture = 128 + 60 * Math.sin(i / 11 + Math.floor(i / frameBytes))
    bytes[i] = Math.max(0, Math.min(255, Math.round(texture + (noise * ((i * 7919) % 17)) / 8)))
  }
  writeFileSync(file(name), bytes)
  return file(name)
}

const reference = clip("ref.yuv", 0)
const distorted = clip("dis.yuv", 9)
const options = { width, height, pixel_format: "420", bitdepth: 8 }

const score = <E>(guard: InputGuard<E>) =>
  runtime.runPromise(
    Effect.flatMap(parseScoreRequest({ reference, distorted, options }), (job) =>
      Effect.flatMap(Scorer, (scorer) => scoreInputs(scorer, job, { guard }))
    )
  )

describe("a raw pair through scoreInputs", () => {
  it("opens each input once and scores the descriptors it checked, not the paths again", async () => {
    const expected = await score(unguarded)
    expect(expected.score).toBeLessThan(99)
    const opens: Array<string> = []
    const swapped = await score<never>({
      ...unguarded,
      beforeOpen: (path) => Effect.sync(() => opens.push(path)),
      // Once the distorted input is open and checked, its path becomes a copy of the reference.
      opened: (input) =>
        Effect.sync(() => {
          if (input.path !== distorted) return
          const twin = clip("twin.yuv", 0)
          renameSync(twin, distorted)
        })
    })
    expect(opens).toEqual([reference, distorted])
    expect(swapped.score).toBe(expected.score)
    expect(swapped.frame_count).toBe(frames)
  })
})
