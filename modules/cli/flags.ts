/**
 * The scoring flags of `svc score` and `svc jobs submit`, spelled as the reference `vmaf` tool
 * spells them (underscores), each also with hyphens (`--pixel_format` and `--pixel-format`),
 * and the short forms that do not clash (`-w`, `-p`, `-b`, `-m`; never `-h`, which is help).
 * Feature, model and scale choices come from the score request's own lists.
 */
import { Args, Options } from "@effect/cli"
import { Effect, Option } from "effect"
import { basename, dirname } from "node:path"
import { UsageError } from "./errors.ts"
import { builtinModelFiles, defaultModel, ExtraFeature, ScoreOptions } from "../scorer/index.ts"
import type { FrameWindow, Geometry } from "./inputs.ts"

/** A long flag with its hyphenated alias when the name has underscores. */
const spelled = <A>(name: string, make: (name: string) => Options.Options<A>): Options.Options<A> =>
  name.includes("_") ? make(name).pipe(Options.withAlias(name.replace(/_/g, "-"))) : make(name)

const count = (name: string, description: string) =>
  spelled(name, Options.integer).pipe(
    Options.withPseudoName("N"),
    Options.withDescription(description),
    Options.optional
  )

/** The built-in models' names, for the help text (SVC_MODEL_DIR may add more). */
const builtinModels = [...builtinModelFiles.keys()].sort().join(", ")

const scaleChoices = ScoreOptions.fields.scale.from.literals.filter((choice) => choice !== "")

export const scoreFlags = {
  reference: Args.text({ name: "REF" }).pipe(
    Args.withDescription(
      "reference (pristine) video, recognised by its bytes: a container or stream ffmpeg decodes (.mp4, .mkv, .mov, .webm, ...), .y4m, or raw YUV (.yuv, with --width and --height)"
    ),
    Args.optional
  ),
  distorted: Args.text({ name: "DIS" }).pipe(
    Args.withDescription("distorted (encoded) video, in any form REF takes; another size is scaled to REF's (--scale)"),
    Args.optional
  ),
  referenceFlag: Options.text("reference").pipe(
    Options.withAlias("r"),
    Options.withPseudoName("FILE"),
    Options.withDescription("reference video (instead of REF)"),
    Options.optional
  ),
  distortedFlag: Options.text("distorted").pipe(
    Options.withAlias("d"),
    Options.withPseudoName("FILE"),
    Options.withDescription("distorted video (instead of DIS)"),
    Options.optional
  ),
  model: Options.text("model").pipe(
    Options.withAlias("m"),
    Options.withPseudoName("MODEL"),
    Options.withDescription(
      `model: a name (built in: ${builtinModels}; auto: the 4K model for a 4K reference; SVC_MODEL_DIR adds its NAME.json files), a FILE.json, or the reference tool's params version=NAME:path=FILE.json:name=LABEL; repeat for several models (default ${defaultModel})`
    ),
    Options.repeated
  ),
  feature: Options.choice("feature", ExtraFeature.literals).pipe(
    Options.withDescription("an extra feature to compute beside the model's; repeat for several"),
    Options.repeated
  ),
  threads: count("threads", "worker threads (results do not depend on it)"),
  width: Options.integer("width").pipe(
    Options.withAlias("w"),
    Options.withPseudoName("N"),
    Options.withDescription("width of raw YUV input"),
    Options.optional
  ),
  height: Options.integer("height").pipe(
    Options.withPseudoName("N"),
    Options.withDescription("height of raw YUV input (-h is help: write --height)"),
    Options.optional
  ),
  pixelFormat: spelled("pixel_format", (name) => Options.choice(name, ["420", "422", "444"])).pipe(
    Options.withAlias("p"),
    Options.withDescription("chroma subsampling of raw input"),
    Options.optional
  ),
  bitdepth: Options.choice("bitdepth", ["8", "10", "12", "16"]).pipe(
    Options.withAlias("b"),
    Options.withDescription("bits per sample of raw input (above 8: 16-bit little-endian words)"),
    Options.optional
  ),
  scale: Options.choice("scale", scaleChoices).pipe(
    Options.withDescription(
      "how a distorted video of another size is scaled to the reference's (default bicubic; none: a size mismatch is an error)"
    ),
    Options.optional
  ),
  frameSkipRef: count("frame_skip_ref", "skip the first N frames of the reference"),
  frameSkipDist: count("frame_skip_dist", "skip the first N frames of the distorted video"),
  frameCnt: count("frame_cnt", "score at most N frames"),
  subsample: count("subsample", "score every Nth frame"),
  shots: Options.boolean("shots").pipe(
    Options.withDescription("find the reference's hard cuts and score each shot (shots, worst shots)")
  ),
  shotThreshold: spelled("shot_threshold", Options.float).pipe(
    Options.withDescription("with --shots: histogram distance (0..1] a cut reaches (default 0.3)"),
    Options.optional
  ),
  shotMinFrames: count("shot_min_frames", "with --shots: the shortest shot in frames; shorter is a flash (default 8)"),
  sync: Options.choice("sync", ["off", "auto"]).pipe(
    Options.withDescription(
      "auto: find where each input starts and the frames dropped or inserted mid-clip, then score the paired frames (default off)"
    ),
    Options.optional
  ),
  syncWindow: count("sync_window", "with --sync auto: the largest offset searched, in frames (default 120)"),
  frameRate: Options.float("frame_rate").pipe(
    Options.withDescription("frames per second for xpsnr's temporal term (default: the input's own, raw input 25)"),
    Options.optional
  )
} as const

export type ScoreFlags = {
  readonly [K in keyof typeof scoreFlags]: (typeof scoreFlags)[K] extends Options.Options<infer A>
    ? A
    : (typeof scoreFlags)[K] extends Args.Args<infer A>
      ? A
      : never
}

/** One model to score with: a name in a directory, and the label of its score column. */
export interface ModelChoice {
  readonly name: string
  /** Directory of the model file; undefined: SVC_MODEL_DIR (or the server's). */
  readonly directory: string | undefined
  /** Score column: "vmaf" for one model unless name= says otherwise. */
  readonly label: string
}

/** Parses `--model` values: `NAME`, `FILE.json`, or `version=NAME:path=FILE:name=LABEL`. */
export const parseModels = (values: ReadonlyArray<string>): Effect.Effect<ReadonlyArray<ModelChoice>, UsageError> =>
  Effect.gen(function* () {
    const parsed = []
    for (const value of values) {
      const params = value.includes("=")
        ? Object.fromEntries(
            value.split(":").map((part) => {
              const at = part.indexOf("=")
              return [part.slice(0, at), part.slice(at + 1)]
            })
          )
        : /\.json$/i.test(value) || value.includes("/")
          ? { path: value }
          : { version: value }
      const unknown = Object.keys(params).filter((key) => !["version", "path", "name"].includes(key))
      if (unknown.length > 0)
        return yield* new UsageError({ message: `--model ${value}: unknown parameter ${unknown.join(", ")}` })
      const path: string | undefined = params["path"]
      const name = path !== undefined ? basename(path).replace(/\.json$/i, "") : params["version"]
      if (name === undefined || name === "")
        return yield* new UsageError({ message: `--model ${value}: give a model name, version= or path=` })
      parsed.push({ name, directory: path === undefined ? undefined : dirname(path), label: params["name"] })
    }
    const labelled = parsed.map((model) => ({
      name: model.name,
      directory: model.directory,
      label: model.label ?? (parsed.length === 1 ? "vmaf" : model.name)
    }))
    const labels = labelled.map((model) => model.label)
    if (new Set(labels).size !== labels.length)
      return yield* new UsageError({ message: "each model needs its own name: add name=LABEL to --model" })
    return labelled
  })

/** The two inputs, positional or as -r/-d. */
export const inputsOf = (flags: ScoreFlags): Effect.Effect<{ reference: string; distorted: string }, UsageError> => {
  const reference = Option.orElse(flags.reference, () => flags.referenceFlag)
  const distorted = Option.orElse(flags.distorted, () => flags.distortedFlag)
  if (Option.isNone(reference) || Option.isNone(distorted))
    return Effect.fail(new UsageError({ message: "give the reference and the distorted video: svc score REF DIS" }))
  if (Option.isSome(flags.reference) && Option.isSome(flags.referenceFlag))
    return Effect.fail(new UsageError({ message: "give the reference once: as REF or with --reference" }))
  return Effect.succeed({ reference: reference.value, distorted: distorted.value })
}

export const rawGeometry = (
  flags: Pick<ScoreFlags, "width" | "height" | "pixelFormat" | "bitdepth">
): Geometry | undefined =>
  Option.isSome(flags.width) && Option.isSome(flags.height)
    ? {
        width: flags.width.value,
        height: flags.height.value,
        pixelFormat: Option.getOrElse(flags.pixelFormat, () => "420"),
        bitdepth: Number(Option.getOrElse(flags.bitdepth, () => "8"))
      }
    : undefined

export const frameWindow = (
  flags: Pick<ScoreFlags, "frameCnt" | "frameSkipRef" | "frameSkipDist" | "subsample">
): FrameWindow => ({
  frameCount: Option.getOrElse(flags.frameCnt, () => 0),
  frameSkipRef: Option.getOrElse(flags.frameSkipRef, () => 0),
  frameSkipDist: Option.getOrElse(flags.frameSkipDist, () => 0),
  subsample: Option.getOrElse(flags.subsample, () => 1)
})

/**
 * The request `options` (proto field names) the scoring flags set, without `frame_skip_dist`
 * (a score's option, each rendition's in a ladder); unset flags are left out.
 */
export const requestOptions = (
  flags: Omit<ScoreFlags, "reference" | "distorted" | "referenceFlag" | "distortedFlag">,
  perFrame: boolean
): Record<string, unknown> => {
  const optional = <A>(option: Option.Option<A>) => Option.getOrUndefined(option)
  const options = {
    width: optional(flags.width),
    height: optional(flags.height),
    pixel_format: optional(flags.pixelFormat),
    bitdepth: Option.getOrUndefined(Option.map(flags.bitdepth, Number)),
    threads: optional(flags.threads),
    features: flags.feature.length > 0 ? flags.feature : undefined,
    scale: optional(flags.scale),
    subsample: optional(flags.subsample),
    frame_cnt: optional(flags.frameCnt),
    frame_skip_ref: optional(flags.frameSkipRef),
    frame_rate: optional(flags.frameRate),
    sync: optional(flags.sync),
    sync_window: optional(flags.syncWindow),
    per_frame: perFrame ? true : undefined,
    shots: flags.shots ? true : undefined,
    shot_threshold: optional(flags.shotThreshold),
    shot_min_frames: optional(flags.shotMinFrames)
  }
  return Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined))
}

/** The ScoreRequest (proto field names) of the flags, for one model. */
export const scoreRequest = (
  inputs: { readonly reference: string; readonly distorted: string },
  flags: ScoreFlags,
  model: ModelChoice | undefined,
  perFrame: boolean
) => {
  const skipDist = Option.getOrUndefined(flags.frameSkipDist)
  return {
    reference: inputs.reference,
    distorted: inputs.distorted,
    ...(model === undefined ? {} : { model: model.name }),
    options: { ...requestOptions(flags, perFrame), ...(skipDist === undefined ? {} : { frame_skip_dist: skipDist }) }
  }
}
