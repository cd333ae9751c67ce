/**
 * Each input is opened once and checked once against the scoring roots (seed 000, 5.5.4): the
 * descriptor that scoreInputs opened and probed is the one the native scorer reads, so the file
 * scored is the file checked and the guard runs once per input, also on the raw-file path.
 */
import { ConfigProvider, Effect, Layer, ManagedRuntime } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { modelDirEnv } from "../../../local/executables.ts"
import { fixture, rawOptions } from "../../../test/support/fixtures.ts"
import { parseScoreRequest, Scorer } from "../../scorer/index.ts"
import { type InputGuard, unguarded } from "../open.ts"
import { Ffmpeg } from "../ffmpeg.ts"
import { scoreInputs } from "../score.ts"

const runtime = ManagedRuntime.make(
  Layer.merge(Scorer.Default, Ffmpeg.Default).pipe(
    Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(modelDirEnv)))))
  )
)
afterAll(() => runtime.dispose())

describe("scoreInputs", () => {
  it("opens and checks each input once, and scores the descriptors it checked", async () => {
    const v01 = fixture("v01")
    const calls: Array<string> = []
    const counting: InputGuard<never> = {
      beforeOpen: (path) => Effect.sync(() => void calls.push(`before ${path}`)),
      opened: (input) => Effect.sync(() => void calls.push(`opened ${input.path}`)),
      missing: unguarded.missing
    }
    const result = await runtime.runPromise(
      Effect.gen(function* () {
        const job = yield* parseScoreRequest({
          reference: v01.reference,
          distorted: v01.distorted,
          options: rawOptions(v01)
        })
        const scorer = yield* Scorer
        return yield* scoreInputs(scorer, job, { guard: counting })
      })
    )
    expect(result.frame_count).toBeGreaterThan(0)
    expect(calls).toEqual([
      `before ${v01.reference}`,
      `opened ${v01.reference}`,
      `before ${v01.distorted}`,
      `opened ${v01.distorted}`
    ])
  })
})
