// Scores one fixture through the Scorer service, every extractor on, every frame kept at full
// precision: the raw material of the dispatch, reference and golden sections.
import { Effect } from "effect"
import { scoreFiles } from "../inputs/score.ts"
import { ExtraFeature, parseScoreRequest, type ScoreError, Scorer } from "../scorer/index.ts"
import type { Fixture } from "./fixture-set.ts"

/** Every extra extractor the scorer has; the model's own (VIF, ADM, motion) always run. */
const extraFeatures = ExtraFeature.literals

/** Per-frame values: frames[frame][i] is the value of metrics[i]. */
export interface FrameTable {
  readonly metrics: ReadonlyArray<string>
  readonly frames: ReadonlyArray<ReadonlyArray<number>>
}

export interface PooledScore {
  readonly mean: number
  readonly min: number
  readonly max: number
  readonly harmonic_mean: number
}

export interface FixtureScore {
  readonly table: FrameTable
  /** The pooled VMAF score, as the golden files pool it. */
  readonly pooled: PooledScore
  /** Which kernel each extractor ran on ("scalar", "avx2", "avx512"). */
  readonly extractors: ReadonlyArray<{ readonly extractor: string; readonly backend: string }>
}

type DispatchBackend = "scalar" | "auto" | SimdPath

/** The SIMD paths of the native library, narrowest first. */
export const simdPaths = ["avx2", "avx512"] as const
export type SimdPath = (typeof simdPaths)[number]

/** The message of a scoring failure; ScorerInternal hides its detail from clients, not here. */
const scoreErrorText = (error: ScoreError): string =>
  `${error._tag}: ${error._tag === "ScorerInternal" ? error.detail : error.message}`

export const scoreFixture = (fixture: Fixture, backend: DispatchBackend): Effect.Effect<FixtureScore, string, Scorer> =>
  Effect.gen(function* () {
    const scorer = yield* Scorer
    const job = yield* parseScoreRequest({
      reference: fixture.reference,
      distorted: fixture.distorted,
      options: {
        width: fixture.width,
        height: fixture.height,
        pixel_format: fixture.pixel_format,
        bitdepth: fixture.bitdepth,
        backend,
        features: extraFeatures,
        per_frame: true,
        // One thread per job: the run scores several fixtures at once instead.
        threads: 1
      }
    })
    const result = yield* scoreFiles(scorer, job)
    const metrics = Object.keys(result.frames[0]?.metrics ?? result.features)
    return {
      table: {
        metrics,
        frames: result.frames.map((frame) => metrics.map((metric) => frame.metrics[metric] ?? Number.NaN))
      },
      pooled: {
        mean: result.score,
        min: result.pooled.min["vmaf"] ?? Number.NaN,
        max: result.pooled.max["vmaf"] ?? Number.NaN,
        harmonic_mean: result.pooled.harmonic_mean["vmaf"] ?? Number.NaN
      },
      extractors: result.provenance.feature_backends
    }
  }).pipe(Effect.mapError(scoreErrorText))
