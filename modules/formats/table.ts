/** The `table` format of `svc score`: the score and every feature's pooled values, for a terminal. */
import { alignmentLine } from "../scorer/index.ts"
import { percentileNames } from "../scorer/index.ts"
import { formatValue, type LibvmafReport, pools } from "./libvmaf.ts"

const pad = (text: string, width: number, right = false) => (right ? text.padStart(width) : text.padEnd(width))

/** The one-line summary: `VMAF score: 63.140808  (10 frames, model vmaf_v0.6.1)`. */
export const scoreSummary = (report: LibvmafReport, scoreName = "vmaf"): string => {
  const score = report.pooled[scoreName]?.mean
  return `VMAF score: ${score === undefined ? "n/a" : formatValue(score)}  (${report.frames.length > 0 ? report.frames.length : "?"} frames, model ${report.provenance?.model ?? "?"})`
}

/** With shots: one line per shot, lowest score first. */
const shotLines = (report: LibvmafReport): ReadonlyArray<string> => {
  const shots = report.shots ?? []
  if (shots.length === 0) return []
  const ranked = [...shots.keys()].sort((a, b) => (shots[a]?.score ?? 0) - (shots[b]?.score ?? 0) || a - b)
  return [
    "",
    `${shots.length} shot${shots.length === 1 ? "" : "s"}, lowest score first:`,
    ...ranked.map((index) => {
      const shot = shots[index]
      if (!shot) return ""
      const frames = `${shot.first_frame}-${shot.first_frame + shot.frame_count - 1}`
      return `  shot ${index}  frames ${frames.padEnd(11)} score ${formatValue(shot.score)}  min ${formatValue(shot.min)} (frame ${shot.worst_frame})  p5 ${formatValue(shot.p5)}  harmonic_mean ${formatValue(shot.harmonic_mean)}`
    })
  ]
}

export const renderTable = (report: LibvmafReport, scoreName = "vmaf"): string => {
  const ranks = report.percentiles ? percentileNames : []
  const header = ["feature", ...pools, ...ranks]
  const rows = report.features.map((name) => [
    name,
    ...pools.map((pool) => formatValue(report.pooled[name]?.[pool] ?? Number.NaN)),
    ...ranks.map((p) => formatValue(report.percentiles?.[name]?.[p] ?? Number.NaN))
  ])
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column]?.length ?? 0)))
  const line = (cells: ReadonlyArray<string>) =>
    cells
      .map((cell, column) => pad(cell, widths[column] ?? 0, column > 0))
      .join("  ")
      .trimEnd()
  const aligned = report.alignment ? [`Aligned: ${alignmentLine(report.alignment)}`] : []
  const lines = [scoreSummary(report, scoreName), ...aligned, "", line(header), ...rows.map(line), ...shotLines(report)]
  return `${lines.join("\n")}\n`
}
