/** The `table` format of `svc score`: the score and every feature's pooled values, for a terminal. */
import { formatValue, type LibvmafReport, pools } from "./libvmaf.ts"

const pad = (text: string, width: number, right = false) => (right ? text.padStart(width) : text.padEnd(width))

/** The one-line summary: `VMAF score: 63.140808  (10 frames, model vmaf_v0.6.1)`. */
export const scoreSummary = (report: LibvmafReport, scoreName = "vmaf"): string => {
  const score = report.pooled[scoreName]?.mean
  return `VMAF score: ${score === undefined ? "n/a" : formatValue(score)}  (${report.frames.length > 0 ? report.frames.length : "?"} frames, model ${report.provenance?.model ?? "?"})`
}

export const renderTable = (report: LibvmafReport, scoreName = "vmaf"): string => {
  const header = ["feature", ...pools]
  const rows = report.features.map((name) => [
    name,
    ...pools.map((pool) => formatValue(report.pooled[name]?.[pool] ?? Number.NaN))
  ])
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column]?.length ?? 0)))
  const line = (cells: ReadonlyArray<string>) =>
    cells
      .map((cell, column) => pad(cell, widths[column] ?? 0, column > 0))
      .join("  ")
      .trimEnd()
  const lines = [scoreSummary(report, scoreName), "", line(header), ...rows.map(line)]
  return `${lines.join("\n")}\n`
}
