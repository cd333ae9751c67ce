/**
 * Writes a score's report where the flags say: the chosen layout to stdout or `-o FILE`, and
 * the HTML report to `--html FILE`. The layout code is modules/formats, shared with the REST API.
 */
import { Options } from "@effect/cli"
import { Effect, Option } from "effect"
import { writeFile } from "node:fs/promises"
import { renderHtml } from "../formats/html.ts"
import { type LibvmafReport, libvmafFormats, renderLibvmaf } from "../formats/libvmaf.ts"
import { renderTable, scoreSummary } from "../formats/table.ts"
import { versionLine } from "../runtime/build-info.ts"
import { CommandFailed } from "./errors.ts"

export const outputFormats = [...libvmafFormats, "table"] as const
export type OutputFormat = (typeof outputFormats)[number]

export const outputFlags = {
  format: Options.choice("format", outputFormats).pipe(
    Options.withAlias("f"),
    Options.withDescription(
      "output layout (the reference tool's json, xml, csv, sub; or table). Default: table on stdout, or from the -o file's extension (xml when it has none)"
    ),
    Options.optional
  ),
  json: Options.boolean("json").pipe(Options.withDescription("same as --format json")),
  xml: Options.boolean("xml").pipe(Options.withDescription("same as --format xml")),
  csv: Options.boolean("csv").pipe(Options.withDescription("same as --format csv")),
  sub: Options.boolean("sub").pipe(Options.withDescription("same as --format sub")),
  output: Options.text("output").pipe(
    Options.withAlias("o"),
    Options.withPseudoName("FILE"),
    Options.withDescription(
      "write the output to FILE instead of stdout (the score's summary line still goes to stderr, unless -q)"
    ),
    Options.optional
  ),
  html: Options.text("html").pipe(
    Options.withPseudoName("FILE"),
    Options.withDescription("also write a self-contained HTML report (chart, pooled table, worst frames) to FILE"),
    Options.optional
  )
} as const

export interface OutputChoice {
  readonly format: Option.Option<OutputFormat>
  readonly json: boolean
  readonly xml: boolean
  readonly csv: boolean
  readonly sub: boolean
  readonly output: Option.Option<string>
  readonly html: Option.Option<string>
}

/** The layout to write: --format, a reference-style switch, the -o extension, else table. */
export const chosenFormat = (choice: OutputChoice): OutputFormat => {
  if (Option.isSome(choice.format)) return choice.format.value
  const switched = (["json", "xml", "csv", "sub"] as const).find((format) => choice[format])
  if (switched) return switched
  if (Option.isNone(choice.output)) return "table"
  const extension = /\.([a-z]+)$/i.exec(choice.output.value)?.[1]?.toLowerCase()
  return libvmafFormats.find((format) => format === extension) ?? "xml"
}

const write = (path: string, text: string) =>
  Effect.tryPromise({
    try: () => writeFile(path, text),
    catch: (error) =>
      new CommandFailed({ message: `cannot write ${path}: ${error instanceof Error ? error.message : String(error)}` })
  })

export interface ReportContext {
  readonly reference: string
  readonly distorted: string
  readonly scoredOn: string
  /** Column of the score shown first (the first model's). */
  readonly scoreName: string
  /** -q: no summary line on stderr when the output goes to a file. */
  readonly quiet: boolean
}

export const writeOutputs = (choice: OutputChoice, report: LibvmafReport, context: ReportContext) =>
  Effect.gen(function* () {
    const format = chosenFormat(choice)
    const text = format === "table" ? renderTable(report, context.scoreName) : renderLibvmaf(format, report)
    if (Option.isSome(choice.output)) {
      const file = choice.output.value
      yield* write(file, text)
      // The file holds the result; the terminal still learns the score (not with -q).
      if (!context.quiet)
        yield* Effect.sync(() => process.stderr.write(`${scoreSummary(report, context.scoreName)} -> ${file}\n`))
    } else yield* Effect.sync(() => process.stdout.write(text))
    if (Option.isSome(choice.html)) {
      const html = renderHtml(
        report,
        {
          reference: context.reference,
          distorted: context.distorted,
          scoredOn: context.scoredOn,
          client: versionLine("svc"),
          generatedAt: new Date()
        },
        context.scoreName
      )
      yield* write(choice.html.value, html)
    }
  })
