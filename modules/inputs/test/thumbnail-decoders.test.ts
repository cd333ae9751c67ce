/**
 * The decoders that cut a shots score's thumbnails out of encoded inputs (issue 27): admitted
 * under the memory budget like the score's own decoders (after the score gave its memory back),
 * one estimate per encoded side; a thumbnail decoder that is refused leaves the score without
 * thumbnails instead of running outside the budget.
 */
import { ConfigProvider, Effect, Layer, ManagedRuntime } from "effect"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { writeClip } from "../../../local/clip.ts"
import { modelDirEnv } from "../../../local/executables.ts"
import { scratchDir } from "../../../test/support/media.ts"
import { parseScoreRequest, Scorer, ScoreTooLarge } from "../../scorer/index.ts"
import { decoderBaseBytes } from "../decoder-memory.ts"
import { Ffmpeg } from "../ffmpeg.ts"
import { scoreInputs } from "../score.ts"

const runtime = ManagedRuntime.make(
  Layer.merge(Scorer.Default, Ffmpeg.Default).pipe(
    Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(modelDirEnv)))))
  )
)
const scratch = scratchDir("svc-thumbnail-decoders-")
afterAll(async () => {
  await runtime.dispose()
  scratch.remove()
})

const reference = join(scratch.dir, "reference.mp4")
const distorted = join(scratch.dir, "distorted.mp4")
beforeAll(async () => {
  const clip = { width: 320, height: 240, frames: 30, codec: "libx264", preset: "ultrafast" } as const
  await Promise.all([writeClip(reference, { ...clip, qp: 0 }), writeClip(distorted, { ...clip, qp: 40 })])
})

/**
 * Scores the pair with shots, admitting through a hook that records every admission and refuses
 * the ones after the first `granted` (as a full budget would).
 */
const scoreWithShots = (granted: number) =>
  runtime.runPromise(
    Effect.gen(function* () {
      const admitted: Array<number> = []
      let inFlight = 0
      let inFlightAtThumbnails = -1
      const admitMemory = (bytes: number) =>
        Effect.gen(function* () {
          admitted.push(bytes)
          if (admitted.length === 2) inFlightAtThumbnails = inFlight
          if (admitted.length > granted) return yield* new ScoreTooLarge({ needed: bytes, budget: 0 })
          yield* Effect.acquireRelease(
            Effect.sync(() => {
              inFlight += bytes
            }),
            () =>
              Effect.sync(() => {
                inFlight -= bytes
              })
          )
        })
      const job = yield* parseScoreRequest({ reference, distorted, options: { shots: true } })
      const scorer = yield* Scorer
      const result = yield* scoreInputs(scorer, job, { admitMemory })
      return { result, admitted, inFlightAtThumbnails }
    })
  )

describe("thumbnail decoders inside the budget", () => {
  it("each encoded side's thumbnail decoder is admitted with its estimate after the score's memory is back", async () => {
    const { result, admitted, inFlightAtThumbnails } = await scoreWithShots(Number.POSITIVE_INFINITY)
    expect(result.thumbnails?.length).toBeGreaterThan(0)
    // The score (scorer and both decoders), then one thumbnail decoder per encoded side.
    expect(admitted.length).toBe(3)
    for (const bytes of admitted.slice(1)) expect(bytes).toBeGreaterThan(decoderBaseBytes)
    expect(inFlightAtThumbnails).toBe(0)
  })

  it("a refused thumbnail decoder leaves the score without thumbnails; nothing is decoded outside the budget", async () => {
    const { result, admitted } = await scoreWithShots(1)
    expect(result.frame_count).toBe(30)
    expect(result.thumbnails).toEqual([])
    expect(admitted.length).toBe(2)
  })
})
