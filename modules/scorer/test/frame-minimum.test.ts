/**
 * The frame-size table (frame-minimum.ts) against the native extractors: a frame at a feature's
 * minimum scores, one sample less on the binding side is refused before the stream is created,
 * naming the feature, its minimum and what asked for it.
 */
import { Effect, Either, Stream } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { frameMinimum, frameTooSmall } from "../frame-minimum.ts"
import { parseScoreRequest } from "../request.ts"
import { Scorer } from "../index.ts"
import { scorerRuntime } from "./runtime.ts"

const runtime = scorerRuntime()
afterAll(() => runtime.dispose())

/** Scores two frames of noise of this geometry (4:2:0 8-bit) through the stream; the refusal message, or "scored". */
const scoreFrames = (width: number, height: number, features: ReadonlyArray<string>) =>
  runtime.runPromise(
    Effect.gen(function* () {
      const job = yield* parseScoreRequest({
        reference: "-",
        distorted: "-",
        options: { width, height, pixel_format: "420", bitdepth: 8, features }
      })
      const bytes = width * height + 2 * Math.ceil(width / 2) * Math.ceil(height / 2)
      const noise = (seed: number) => Uint8Array.from({ length: bytes }, (_, i) => (i * 7919 + seed * 104729) % 251)
      const pairs = Stream.make(
        { reference: noise(1), distorted: noise(2) },
        { reference: noise(3), distorted: noise(4) }
      )
      const scorer = yield* Scorer
      const outcome = yield* Effect.either(Stream.runDrain(scorer.scoreStream(job, pairs)))
      return Either.match(outcome, { onLeft: (error) => `${error._tag}: ${error.message}`, onRight: () => "scored" })
    })
  )

describe("each feature's minimum frame holds against the native library", () => {
  it("float_ms_ssim: 176x176 scores, 176x175 is refused naming it", async () => {
    expect(frameMinimum.float_ms_ssim).toEqual({ rule: "each side", width: 176, height: 176 })
    expect(await scoreFrames(176, 176, ["float_ms_ssim"])).toBe("scored")
    expect(await scoreFrames(176, 175, ["float_ms_ssim"])).toBe(
      "InvalidGeometry: a 176x175 frame is too small: float_ms_ssim needs at least 176x176 (options.features)"
    )
  })

  it("cambi: a longer side of 216 scores, 215x215 is refused naming it", async () => {
    expect(await scoreFrames(216, 33, ["cambi"])).toBe("scored")
    expect(await scoreFrames(33, 216, ["cambi"])).toBe("scored")
    expect(await scoreFrames(215, 215, ["cambi"])).toBe(
      "InvalidGeometry: a 215x215 frame is too small: cambi needs a side of at least 216 (options.features)"
    )
  })

  it("the model's ADM and every smaller minimum: 33x33 scores with all of them, 32x33 names each that refuses", async () => {
    const small = ["float_vif", "float_adm", "float_motion", "float_ssim", "psnr_hvs", "psnr", "float_psnr", "ciede"]
    expect(await scoreFrames(33, 33, small)).toBe("scored")
    expect(await scoreFrames(32, 33, small)).toBe(
      'InvalidGeometry: a 32x33 frame is too small: adm needs at least 33x33 (model "vmaf_v0.6.1"); float_adm needs at least 33x33 (options.features)'
    )
  })
})

describe("frameTooSmall", () => {
  const model = (feature: string) => ({ feature, usedBy: 'model "m"' })

  it("names every feature that refuses, once, with its minimum", () => {
    expect(
      frameTooSmall({ width: 2, height: 2, pixelFormat: 420, bitdepth: 8 }, ["adm", "vif", "motion", "adm"].map(model))
    ).toBe(
      'a 2x2 frame is too small: adm needs at least 33x33 (model "m"); vif needs at least 16x16 (model "m"); motion needs at least 3x3 (model "m")'
    )
    expect(
      frameTooSmall({ width: 33, height: 33, pixelFormat: 420, bitdepth: 8 }, ["adm", "vif"].map(model))
    ).toBeUndefined()
  })

  it("psnr_hvs needs 8x8 in every plane, so its luma minimum follows the subsampling", () => {
    const at = (width: number, height: number, pixelFormat: 420 | 422 | 444) =>
      frameTooSmall({ width, height, pixelFormat, bitdepth: 8 }, [model("psnr_hvs")])
    expect([at(15, 15, 420), at(15, 8, 422), at(8, 8, 444)]).toEqual([undefined, undefined, undefined])
    expect(at(14, 15, 420)).toBe(
      'a 14x15 frame is too small: psnr_hvs needs at least 15x15 in 420 (8x8 in every plane) (model "m")'
    )
    expect(at(15, 7, 422)).toMatch(/psnr_hvs needs at least 15x8 in 422/)
    expect(at(7, 8, 444)).toMatch(/psnr_hvs needs at least 8x8 in 444/)
  })
})
