/**
 * `svc ladder REF --rendition LABEL=PATH ...`: scores a ladder (one reference, many renditions,
 * the reference read and analysed once) with the embedded scorer, or on a scoring server or
 * controller with `--server URL` (`POST /v1/ladder`, the token of SVC_CONTROLLER_TOKEN or
 * SVC_CONTROLLER_TOKEN_FILE when set). Prints a table (or the response as JSON), writes one
 * libvmaf-layout file per rendition to `-o DIR` and a report comparing them to `--html FILE`.
 */
import { Args, Command, Options } from "@effect/cli"
import { Effect, Option } from "effect"
import { mkdir, writeFile } from "node:fs/promises"
import { join } from "node:path"
import { type LadderResponseLike, renderLadderTable, renditionReport, reportRenditions } from "../formats/ladder.ts"
import { renderLadderHtml } from "../formats/ladder-html.ts"
import { type LibvmafFormat, libvmafFormats, renderLibvmaf } from "../formats/libvmaf.ts"
import { versionLine } from "../runtime/build-info.ts"
import { postJson } from "./connection.ts"
import { CommandFailed, UsageError } from "./errors.ts"
import { frameWindow, parseModels, rawGeometry, scoreFlags } from "./flags.ts"
import { expectedFrames } from "./inputs.ts"
import { type LadderRequestBody, ladderRequest, parseRenditions, renditionFlag } from "./ladder-flags.ts"
import { scoreLadderLocally } from "./local.ts"
import { hintingRoots, sentPath } from "./paths.ts"
import { startProgress } from "./progress.ts"

const {
  reference: _reference,
  distorted: _distorted,
  referenceFlag: _referenceFlag,
  distortedFlag: _distortedFlag,
  ...sharedFlags
} = scoreFlags

export const ladderFlags = {
  reference: Args.text({ name: "REF" }).pipe(Args.withDescription("reference (pristine) video of the whole ladder")),
  rendition: renditionFlag,
  ...sharedFlags
} as const

const outputFlags = {
  format: Options.choice("format", ["table", "json"] as const).pipe(
    Options.withAlias("f"),
    Options.withDescription("stdout: table (default) or the ladder response as JSON"),
    Options.withDefault("table" as const)
  ),
  output: Options.directory("output", { exists: "either" }).pipe(
    Options.withPseudoName("DIR"),
    Options.withAlias("o"),
    Options.withDescription("write one file per rendition, LABEL.<layout>, in the reference tool's layout, to DIR"),
    Options.optional
  ),
  layout: Options.choice("layout", libvmafFormats).pipe(
    Options.withDescription("layout of the -o files: json (default), xml, csv or sub"),
    Options.withDefault("json" as LibvmafFormat)
  ),
  html: Options.text("html").pipe(
    Options.withPseudoName("FILE"),
    Options.withDescription("also write a self-contained HTML report comparing the renditions to FILE"),
    Options.optional
  ),
  quiet: Options.boolean("quiet").pipe(Options.withAlias("q"), Options.withDescription("no progress bar")),
  server: Options.text("server").pipe(
    Options.withPseudoName("URL"),
    Options.withDescription("score on this scoring server or controller (http://host:port) instead of locally"),
    Options.optional
  )
} as const

/** POST /v1/ladder on a server or controller, with the token when one is configured. */
export const scoreLadderOnServer = (base: string, request: LadderRequestBody) =>
  Effect.map(postJson(base, "/v1/ladder", request), (body) => body as LadderResponseLike)

const write = (path: string, text: string) =>
  Effect.tryPromise({
    try: () => writeFile(path, text),
    catch: (error) =>
      new CommandFailed({ message: `cannot write ${path}: ${error instanceof Error ? error.message : String(error)}` })
  })

export interface LadderOutputChoice {
  readonly format: "table" | "json"
  readonly output: Option.Option<string>
  readonly layout: LibvmafFormat
  readonly html: Option.Option<string>
}

export interface LadderOutputContext {
  readonly reference: string
  readonly distorted: (label: string) => string
  readonly scoredOn: string
  /** Seconds the ladder took (the files' fps), 0 when unknown. */
  readonly seconds: number
  readonly extras: ReadonlyArray<string>
}

/** Writes a ladder's result where the flags say (shared by `svc ladder` and `svc jobs wait`). */
export const writeLadderOutputs = (
  choice: LadderOutputChoice,
  response: LadderResponseLike,
  context: LadderOutputContext
) =>
  Effect.gen(function* () {
    const text = choice.format === "json" ? `${JSON.stringify(response, null, 2)}\n` : renderLadderTable(response)
    yield* Effect.sync(() => process.stdout.write(text))
    if (Option.isSome(choice.output)) {
      const directory = choice.output.value
      yield* Effect.tryPromise({
        try: () => mkdir(directory, { recursive: true }),
        catch: () => new CommandFailed({ message: `cannot create the directory ${directory}` })
      })
      for (const rendition of response.renditions) {
        const report = renditionReport(rendition, {
          seconds: context.seconds / Math.max(1, response.renditions.length),
          extras: context.extras
        })
        yield* write(join(directory, `${rendition.label}.${choice.layout}`), renderLibvmaf(choice.layout, report))
      }
    }
    if (Option.isSome(choice.html)) {
      const html = renderLadderHtml(reportRenditions(response, context.distorted), {
        reference: context.reference,
        model: response.provenance.model,
        modelSha256: response.provenance.model_sha256,
        referencePasses: response.provenance.reference_passes,
        scoredOn: context.scoredOn,
        client: versionLine("svc"),
        generatedAt: new Date()
      })
      yield* write(choice.html.value, html)
    }
  })

type LadderCommandFlags = {
  readonly [K in keyof typeof ladderFlags]: (typeof ladderFlags)[K] extends Options.Options<infer A>
    ? A
    : (typeof ladderFlags)[K] extends Args.Args<infer A>
      ? A
      : never
} & {
  readonly [K in keyof typeof outputFlags]: (typeof outputFlags)[K] extends Options.Options<infer A> ? A : never
}

const run = (flags: LadderCommandFlags) =>
  Effect.gen(function* () {
    const renditions = yield* parseRenditions(flags.rendition)
    const models = yield* parseModels(flags.model)
    if (models.length > 1)
      return yield* new UsageError({ message: "a ladder scores with one model: give --model once" })
    const [model] = models
    if (Option.isSome(flags.server) && model?.directory !== undefined)
      return yield* new UsageError({ message: "--model path=FILE works only for local scores; name a server model" })
    const request = ladderRequest(flags.reference, renditions, flags, model, true)
    // The reference's frames (when this machine can count them: raw or Y4M) bound every rendition's.
    const total = Option.isSome(flags.server)
      ? undefined
      : yield* Effect.promise(() =>
          expectedFrames(flags.reference, flags.reference, rawGeometry(flags), {
            ...frameWindow(flags),
            frameSkipDist: Option.getOrElse(flags.frameSkipRef, () => 0)
          })
        )
    const progress = startProgress({
      label: Option.isSome(flags.server) ? "ladder on server" : `ladder of ${renditions.length}`,
      total,
      quiet: flags.quiet
    })
    const started = performance.now()
    const response = yield* (
      Option.isSome(flags.server)
        ? hintingRoots(
            [flags.reference, ...renditions.map((rendition) => rendition.distorted)],
            scoreLadderOnServer(
              flags.server.value,
              ladderRequest(
                sentPath(flags.reference),
                renditions.map((rendition) => ({ ...rendition, distorted: sentPath(rendition.distorted) })),
                flags,
                model,
                true
              )
            )
          )
        : scoreLadderLocally(request, model, (frames) => progress.update(frames))
    ).pipe(Effect.ensuring(Effect.sync(progress.finish)))
    const byLabel = new Map(renditions.map((rendition) => [rendition.label, rendition.distorted]))
    yield* writeLadderOutputs(flags, response, {
      reference: flags.reference,
      distorted: (label) => byLabel.get(label) ?? "",
      scoredOn: Option.getOrElse(flags.server, () => "this machine (embedded scorer)"),
      seconds: (performance.now() - started) / 1000,
      extras: flags.feature
    })
  })

export const ladderCommand = Command.make("ladder", { ...ladderFlags, ...outputFlags }, run).pipe(
  Command.withDescription(
    "Score a ladder: one reference against many renditions (--rendition LABEL=PATH ...), the reference read once; locally or with --server URL"
  )
)
