/**
 * A ladder response (`ScoreLadderResponse`, proto field names) as its readers want it: the
 * terminal table of `svc ladder`, one libvmaf-layout report per rendition (the files of
 * `svc ladder -o DIR`), and the renditions of the HTML report.
 */
import { alignmentLine, type ScoreResult } from "../scorer/index.ts"
import type { LadderReportRendition } from "./ladder-html.ts"
import { formatBitrate } from "./ladder-html.ts"
import { shotRows } from "./ladder-shots.ts"
import { formatValue, type LibvmafReport, reportOf } from "./libvmaf.ts"

/** What one rendition's summary says (RenditionSummary). */
export interface LadderSummaryLike {
  readonly p1: number
  readonly p5: number
  readonly width: number
  readonly height: number
  readonly codec: string
  readonly bitrate_bps: number
  readonly on_hull: boolean
}

/** A rendition's result: a score result with its label and summary (RenditionResult). */
export interface LadderRenditionLike extends ScoreResult {
  readonly label: string
  readonly summary: LadderSummaryLike
}

/** The fields of ScoreLadderResponse these views read. */
export interface LadderResponseLike {
  readonly renditions: ReadonlyArray<LadderRenditionLike>
  readonly provenance: {
    readonly model: string
    readonly model_sha256: string
    readonly reference_passes?: number
  }
}

/** The score column a ladder's per-frame values and pooled score are read from. */
export const ladderScoreName = "vmaf"

/** The renditions of the HTML report, in response order. */
export const reportRenditions = (
  response: LadderResponseLike,
  distorted: (label: string) => string
): ReadonlyArray<LadderReportRendition> =>
  response.renditions.map((rendition) => ({
    label: rendition.label,
    distorted: distorted(rendition.label),
    score: rendition.score,
    p1: rendition.summary.p1,
    p5: rendition.summary.p5,
    harmonicMean: rendition.pooled.harmonic_mean[ladderScoreName] ?? Number.NaN,
    min: rendition.pooled.min[ladderScoreName] ?? Number.NaN,
    bitrateBps: rendition.summary.bitrate_bps,
    width: rendition.summary.width,
    height: rendition.summary.height,
    codec: rendition.summary.codec,
    onHull: rendition.summary.on_hull,
    frames: rendition.frames.map((frame) => ({
      frame: frame.frame,
      score: frame.metrics[ladderScoreName] ?? Number.NaN
    })),
    shots: rendition.shots ?? [],
    worstShots: rendition.worst_shots ?? [],
    thumbnails: rendition.thumbnails ?? [],
    // A job's result over gRPC carries null for an alignment not made.
    alignment: rendition.alignment ?? undefined
  }))

/**
 * With shots, the lines after the ladder table: the reference's shots (every rendition's), each
 * with its score in every rendition, and each rendition's worst shots (as rows of the table:
 * ladder-shots.ts places renditions aligned at their own offsets).
 */
const shotLines = (renditions: ReadonlyArray<LadderRenditionLike>): ReadonlyArray<string> => {
  const shots = shotRows(renditions)
  if (shots.length === 0) return []
  const header = ["shot", "frames", ...renditions.map((rendition) => rendition.label)]
  const rows = shots.map((row, index) => [
    String(index),
    `${row.first}-${row.end - 1}`,
    ...renditions.map((rendition, r) => formatValue(rendition.shots?.[row.shots[r] ?? -1]?.score ?? Number.NaN))
  ])
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column]?.length ?? 0)))
  const line = (cells: ReadonlyArray<string>) =>
    cells
      .map((cell, column) => (column < 2 ? cell.padEnd(widths[column] ?? 0) : cell.padStart(widths[column] ?? 0)))
      .join("  ")
      .trimEnd()
  return [
    "",
    `${shots.length} shot${shots.length === 1 ? "" : "s"} of the reference, score per rendition:`,
    line(header),
    ...rows.map(line),
    ...renditions.map(
      (rendition, r) =>
        `worst shots of ${rendition.label}: ${
          (rendition.worst_shots ?? [])
            .map((own) => shots.findIndex((row) => row.shots[r] === own))
            .filter((row) => row >= 0)
            .join(", ") || "none"
        }`
    )
  ]
}

/**
 * With sync auto, the lines after the ladder table: each rendition's own alignment, as a pair's
 * table prints its `Aligned:` line (a low confidence's warning included, never silent).
 */
const alignedLines = (renditions: ReadonlyArray<LadderRenditionLike>): ReadonlyArray<string> => {
  // A job's result over gRPC carries null for an alignment not made.
  const lines = renditions.flatMap((rendition) =>
    rendition.alignment ? [`Aligned ${rendition.label}: ${alignmentLine(rendition.alignment)}`] : []
  )
  return lines.length === 0 ? [] : ["", ...lines]
}

/** One rendition as the reference tool's layouts print a score (its own geometry when known). */
export const renditionReport = (
  rendition: LadderRenditionLike,
  facts: { readonly seconds: number; readonly extras?: ReadonlyArray<string> | undefined }
): LibvmafReport =>
  reportOf(rendition, {
    width: rendition.summary.width,
    height: rendition.summary.height,
    seconds: facts.seconds,
    extras: facts.extras
  })

const pad = (text: string, width: number, right: boolean) => (right ? text.padStart(width) : text.padEnd(width))

/** The `table` output of `svc ladder`: one line per rendition, in request order. */
export const renderLadderTable = (response: LadderResponseLike): string => {
  const header = ["rendition", "vmaf", "p1", "p5", "harm_mean", "bitrate", "resolution", "codec", "hull"]
  const rows = response.renditions.map((rendition) => [
    rendition.label,
    formatValue(rendition.score),
    formatValue(rendition.summary.p1),
    formatValue(rendition.summary.p5),
    formatValue(rendition.pooled.harmonic_mean[ladderScoreName] ?? Number.NaN),
    formatBitrate(rendition.summary.bitrate_bps),
    rendition.summary.width > 0 ? `${rendition.summary.width}x${rendition.summary.height}` : "n/a",
    rendition.summary.codec || "n/a",
    rendition.summary.on_hull ? "*" : ""
  ])
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column]?.length ?? 0)))
  const textColumns = new Set([0, 6, 7, 8])
  const line = (cells: ReadonlyArray<string>) =>
    cells
      .map((cell, column) => pad(cell, widths[column] ?? 0, !textColumns.has(column)))
      .join("  ")
      .trimEnd()
  const frames = response.renditions[0]?.frame_count ?? 0
  const passes = response.provenance.reference_passes
  return `${[
    `VMAF ladder: ${response.renditions.length} renditions, ${frames} frames each, model ${response.provenance.model}${
      passes === undefined ? "" : `, ${passes} reference pass${passes === 1 ? "" : "es"}`
    }`,
    "",
    line(header),
    ...rows.map(line),
    "",
    "* on the convex hull of bitrate vs score",
    ...alignedLines(response.renditions),
    ...shotLines(response.renditions)
  ].join("\n")}\n`
}
