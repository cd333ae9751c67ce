/**
 * The flags of `svc ladder` and `svc jobs submit --rendition`: a reference, renditions given as
 * `--rendition LABEL=PATH` (repeatable, in ladder order), and the ladder-wide scoring flags
 * spelled as `svc score` spells them. They become a ScoreLadderRequest (proto field names).
 */
import { Options } from "@effect/cli"
import { Effect, Option } from "effect"
import { UsageError } from "./errors.ts"
import { type ModelChoice, requestOptions, type ScoreFlags } from "./flags.ts"

export const renditionFlag = Options.text("rendition").pipe(
  Options.withPseudoName("LABEL=PATH"),
  Options.withDescription(
    "a rendition of the ladder as LABEL=PATH (label: letters, digits, . _ + -); repeat for each, in ladder order"
  ),
  Options.repeated
)

/** The scoring flags of a ladder: those of `svc score` without the pair's inputs. */
export type LadderScoringFlags = Omit<ScoreFlags, "reference" | "distorted" | "referenceFlag" | "distortedFlag">

export interface RenditionArg {
  readonly label: string
  readonly distorted: string
}

/** `LABEL=PATH` values, checked for shape and unique labels (the server checks the rest). */
export const parseRenditions = (
  values: ReadonlyArray<string>
): Effect.Effect<ReadonlyArray<RenditionArg>, UsageError> =>
  Effect.gen(function* () {
    if (values.length === 0)
      return yield* new UsageError({ message: "give the renditions: --rendition LABEL=PATH, once per rendition" })
    const renditions: Array<RenditionArg> = []
    for (const value of values) {
      const at = value.indexOf("=")
      const label = at < 0 ? "" : value.slice(0, at)
      const distorted = at < 0 ? "" : value.slice(at + 1)
      if (label === "" || distorted === "")
        return yield* new UsageError({
          message: `--rendition ${value}: write LABEL=PATH (for example 720p=enc/720p.mp4)`
        })
      if (renditions.some((rendition) => rendition.label === label))
        return yield* new UsageError({ message: `--rendition ${value}: the label "${label}" names two renditions` })
      renditions.push({ label, distorted })
    }
    return renditions
  })

/** The ScoreLadderRequest (proto field names) of the flags. */
export const ladderRequest = (
  reference: string,
  renditions: ReadonlyArray<RenditionArg>,
  flags: LadderScoringFlags,
  model: ModelChoice | undefined,
  perFrame: boolean
) => {
  // --frame_skip_dist belongs to each rendition (a rendition may start later than another).
  const skipDist = Option.getOrUndefined(flags.frameSkipDist)
  return {
    reference,
    renditions: renditions.map((rendition) => ({
      label: rendition.label,
      distorted: rendition.distorted,
      ...(skipDist === undefined ? {} : { options: { frame_skip_dist: skipDist } })
    })),
    ...(model === undefined ? {} : { model: model.name }),
    options: requestOptions(flags, perFrame)
  }
}
export type LadderRequestBody = ReturnType<typeof ladderRequest>
