/**
 * `svc score REF DIS`: scores a pair with the embedded scorer (no server), or on a scoring
 * server or controller with `--server URL` (`POST /v1/score`, the token of SVC_CONTROLLER_TOKEN
 * or SVC_CONTROLLER_TOKEN_FILE when set). One score per `--model`; several models give one
 * score column each, named as the reference tool names them.
 */
import { Command, Options } from "@effect/cli"
import { Effect, Option } from "effect"
import { reportOf } from "../formats/libvmaf.ts"
import { scoreFeature, type ScoreResult } from "../scorer/index.ts"
import { postJson } from "./connection.ts"
import { UsageError } from "./errors.ts"
import {
  frameWindow,
  inputsOf,
  type ModelChoice,
  parseModels,
  rawGeometry,
  type ScoreFlags,
  scoreFlags,
  scoreRequest
} from "./flags.ts"
import { expectedFrames, inputGeometry } from "./inputs.ts"
import { type OutputChoice, outputFlags, writeOutputs } from "./output.ts"
import { scoreLocally } from "./local.ts"
import { withServerModelNames } from "./models.ts"
import { hintingRoots, sentPath } from "./paths.ts"
import { startProgress } from "./progress.ts"

const quiet = Options.boolean("quiet").pipe(
  Options.withAlias("q"),
  Options.withDescription("no progress bar, and no summary line with -o")
)
const server = Options.text("server").pipe(
  Options.withPseudoName("URL"),
  Options.withDescription("score on this scoring server or controller (http://host:port) instead of locally"),
  Options.optional
)

const scoreOnServer = (base: string, request: unknown) =>
  postJson(base, "/v1/score", request).pipe(
    Effect.map((body) => body as ScoreResult),
    Effect.catchTag("CommandFailed", withServerModelNames(base))
  )

/** Renames a result's "vmaf" columns to `label` (several models side by side). */
const relabel = (result: ScoreResult, label: string): ScoreResult => {
  if (label === scoreFeature) return result
  const rename = (values: Readonly<Record<string, number>>) =>
    Object.fromEntries(Object.entries(values).map(([name, value]) => [name === scoreFeature ? label : name, value]))
  return {
    ...result,
    features: rename(result.features),
    frames: result.frames.map((frame) => ({ frame: frame.frame, metrics: rename(frame.metrics) })),
    pooled: Object.fromEntries(
      Object.entries(result.pooled).map(([pool, values]) => [pool, rename(values ?? {})])
    ) as ScoreResult["pooled"]
  }
}

/** One result of several models' scores of the same frames. */
const merge = (results: ReadonlyArray<ScoreResult>): ScoreResult => {
  const [first] = results
  if (!first) throw new Error("no result")
  const union = (pick: (result: ScoreResult) => Readonly<Record<string, number>>) =>
    Object.assign({}, ...results.map(pick)) as Record<string, number>
  return {
    ...first,
    features: union((result) => result.features),
    frames: first.frames.map((frame, index) => ({
      frame: frame.frame,
      metrics: union((result) => result.frames[index]?.metrics ?? {})
    })),
    // Every pooling (min, max, harmonic mean, percentiles) of every model; shots stay the first model's.
    pooled: Object.fromEntries(
      Object.keys(first.pooled).map((pool) => [
        pool,
        union((result) => result.pooled[pool as keyof ScoreResult["pooled"]] ?? {})
      ])
    ) as ScoreResult["pooled"]
  }
}

const run = (flags: ScoreFlags & OutputChoice & { readonly quiet: boolean; readonly server: Option.Option<string> }) =>
  Effect.gen(function* () {
    const inputs = yield* inputsOf(flags)
    const models = yield* parseModels(flags.model)
    const choices: ReadonlyArray<ModelChoice | undefined> = models.length > 0 ? models : [undefined]
    if (Option.isSome(flags.server) && models.some((model) => model.directory !== undefined))
      return yield* new UsageError({ message: "--model path=FILE works only for local scores; name a server model" })
    const raw = rawGeometry(flags)
    const window = frameWindow(flags)
    const perModel = yield* Effect.promise(() => expectedFrames(inputs.reference, inputs.distorted, raw, window))
    const progress = startProgress({
      label: Option.isSome(flags.server) ? "scoring on server" : "scoring",
      // A server reports no progress, only its answer.
      total: perModel === undefined || Option.isSome(flags.server) ? undefined : perModel * choices.length,
      quiet: flags.quiet
    })
    const started = performance.now()
    const results = yield* Effect.forEach(choices, (model, index) => {
      const scored = Option.isSome(flags.server)
        ? hintingRoots(
            [inputs.reference, inputs.distorted],
            scoreOnServer(
              flags.server.value,
              scoreRequest(
                { reference: sentPath(inputs.reference), distorted: sentPath(inputs.distorted) },
                flags,
                model,
                true
              )
            )
          )
        : scoreLocally(scoreRequest(inputs, flags, model, true), model, (frames) =>
            progress.update(index * (perModel ?? 0) + frames)
          )
      return Effect.map(scored, (result) => relabel(result, model?.label ?? scoreFeature))
    }).pipe(Effect.ensuring(Effect.sync(progress.finish)))
    const seconds = (performance.now() - started) / 1000
    const merged = merge(results)
    // The size scored: the pipeline's (any container), else the Y4M header or the raw flags here.
    const scored = merged.provenance.reference_input
    const geometry =
      scored !== undefined && scored.width > 0
        ? scored
        : yield* Effect.promise(() => inputGeometry(inputs.reference, raw))
    const labels = choices.map((model) => model?.label ?? scoreFeature)
    const report = reportOf(merged, {
      width: geometry?.width ?? 0,
      height: geometry?.height ?? 0,
      seconds: seconds / choices.length,
      extras: flags.feature,
      scores: labels
    })
    yield* writeOutputs(flags, report, {
      reference: inputs.reference,
      distorted: inputs.distorted,
      scoredOn: Option.getOrElse(flags.server, () => "this machine (embedded scorer)"),
      scoreName: labels[0] ?? scoreFeature,
      quiet: flags.quiet
    })
  })

export const scoreCommand = Command.make("score", { ...scoreFlags, ...outputFlags, quiet, server }, run).pipe(
  Command.withDescription(
    "Score a reference/distorted pair: locally with the embedded scorer, or on a server with --server URL"
  )
)
