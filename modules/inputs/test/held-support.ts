/**
 * What the tests of the one-decode path (alignment-once.ts) share: the real scorer and decoders
 * with the decoders' runs counted (which way each side was read), a score through them with an
 * optional admission hook, the size of a side's held-frames admission (a hook refusing it forces
 * the two decodes with everything else unchanged, the window too), and per-frame values as their
 * bits (equal means bit for bit).
 */
import { ConfigProvider, Effect, Layer, ManagedRuntime } from "effect"
import { modelDirEnv } from "../../../local/executables.ts"
import { parseScoreRequest, type RawGeometry, Scorer, ScoreMemoryBusy, type ScoreResult } from "../../scorer/index.ts"
import { heldBytes } from "../alignment-once.ts"
import { Ffmpeg } from "../ffmpeg.ts"
import { frameCapOf } from "../frames.ts"
import { frameBytes } from "../y4m.ts"
import { type InputHooks, scoreInputs } from "../score.ts"

/** Decoder runs of one score: the search's second decode, scoring decodes into a pipe, one-decodes (frames held). */
export interface DecoderRuns {
  searchDecodes: number
  scoringDecodes: number
  decodesOnce: number
}

/** The real Scorer and Ffmpeg, each decoder counted in `runs` when it runs (not when its effect is built). */
export const countedDecoders = () => {
  const runs: DecoderRuns = { searchDecodes: 0, scoringDecodes: 0, decodesOnce: 0 }
  const counted = <A, E, R>(kind: keyof DecoderRuns, run: Effect.Effect<A, E, R>) =>
    Effect.zipRight(
      Effect.sync(() => {
        runs[kind]++
      }),
      run
    )
  const runtime = ManagedRuntime.make(
    Layer.merge(
      Scorer.Default,
      Layer.effect(
        Ffmpeg,
        Effect.map(Ffmpeg, (real) =>
          Ffmpeg.make({
            ...real,
            lumaThumbnails: (...args) => counted("searchDecodes", real.lumaThumbnails(...args)),
            decode: (...args) => counted("scoringDecodes", real.decode(...args)),
            decodeWithThumbnails: (...args) => counted("decodesOnce", real.decodeWithThumbnails(...args))
          })
        )
      ).pipe(Layer.provide(Ffmpeg.Default))
    ).pipe(Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(modelDirEnv))))))
  )
  return { runs, runtime }
}

/** `countedDecoders` with a score through them and the size of a side's held-frames admission. */
export const countingRuntime = () => {
  const { runs, runtime } = countedDecoders()
  /** Scores `body` (a POST /v1/score body) with `hooks`; the decoder runs it took. */
  const score = async (body: unknown, hooks: InputHooks = {}) => {
    runs.searchDecodes = 0
    runs.scoringDecodes = 0
    runs.decodesOnce = 0
    const result = await runtime.runPromise(
      Effect.flatMap(parseScoreRequest(body), (job) =>
        Effect.flatMap(Scorer, (scorer) => scoreInputs(scorer, job, hooks))
      )
    )
    return { result, runs: { ...runs } }
  }
  /**
   * What holding a side admits first: the most frames its container allows (`declared` frames
   * declared) after its frame skip, each in the target's layout (the reference's) with its thumbnail.
   */
  const heldAdmission = async (declared: number, target: RawGeometry, skip = 0) => {
    const { maxFrames } = await runtime.runPromise(Effect.map(Ffmpeg, (ffmpeg) => ffmpeg.limits))
    return heldBytes(frameCapOf(declared, maxFrames).allowed - skip, frameBytes(target))
  }
  return { runtime, score, heldAdmission }
}

/** Admits everything without a limit but `refused` sizes (the held frames'): no room for those now. */
export const refusing =
  (refused: ReadonlyArray<number>) =>
  (bytes: number): Effect.Effect<void, ScoreMemoryBusy> =>
    refused.includes(bytes) ? Effect.fail(new ScoreMemoryBusy({ needed: bytes, budget: bytes })) : Effect.void

/** Records each admission in `admitted`; the one at index `busy` finds no room now (-1: none). */
export const busyAt =
  (busy: number, admitted: Array<number>) =>
  (bytes: number): Effect.Effect<void, ScoreMemoryBusy> => {
    admitted.push(bytes)
    return admitted.length - 1 === busy
      ? Effect.fail(new ScoreMemoryBusy({ needed: bytes, budget: bytes }))
      : Effect.void
  }

/** Each frame's metrics as the hex of their IEEE-754 bits: equal only if bit for bit. */
export const frameBits = (frames: ScoreResult["frames"]) =>
  frames.map((frame) => ({
    frame: frame.frame,
    metrics: Object.fromEntries(
      Object.entries(frame.metrics).map(([name, value]) => [
        name,
        Buffer.from(Float64Array.of(value).buffer).toString("hex")
      ])
    )
  }))
