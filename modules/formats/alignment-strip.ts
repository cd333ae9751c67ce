/**
 * With options.sync "auto": the pairing an alignment found, as the HTML reports draw it (a
 * score's report once, a ladder's once per rendition). The reference's frames above, the
 * distorted clip's below, on one frame scale: grey before each side's start, the scored run in
 * colour, dropped reference frames and inserted distorted frames in red, repeated (frozen)
 * distorted frames in orange; lines join the first and last pairs. Above the strip, the
 * alignment's line as the terminal table prints it.
 */
import { type AlignmentReport, alignmentLine } from "../scorer/index.ts"
import { escapeHtml } from "./escape.ts"

/** Size of the strip: two rows of frames, reference above distorted. */
const strip = { width: 800, row: 18, gap: 30, left: 80 } as const

/**
 * The line and the strip of one alignment (classes alignment-line and alignment). `attributes`
 * tell them apart from others on the page (the score's report: ids; a ladder's: the rendition).
 */
export const alignmentStrip = (
  alignment: AlignmentReport,
  attributes: { readonly line: string; readonly svg: string }
): string => {
  const referenceEnd = alignment.reference_start + alignment.frames + alignment.reference_frames_dropped.length
  const distortedEnd = alignment.distorted_start + alignment.frames + alignment.distorted_frames_inserted.length
  const span = Math.max(referenceEnd, distortedEnd, 1)
  const scale = (strip.width - strip.left - 4) / span
  const x = (frame: number) => (strip.left + frame * scale).toFixed(1)
  const width = (frames: number) => Math.max(1, frames * scale).toFixed(1)
  const top = 4
  const bottom = top + strip.row + strip.gap
  const row = (y: number, label: string, start: number, end: number, colour: string) =>
    `<text x="0" y="${y + 13}">${label}</text>` +
    (start > 0
      ? `<rect x="${x(0)}" y="${y}" width="${width(start)}" height="${strip.row}" fill="#ccc"><title>before the start: frames 0-${start - 1}</title></rect>`
      : "") +
    `<rect x="${x(start)}" y="${y}" width="${width(end - start)}" height="${strip.row}" fill="${colour}"></rect>`
  const ticks = (y: number, frames: ReadonlyArray<number>, colour: string, what: string) =>
    frames
      .map(
        (frame) =>
          `<rect class="${what}" x="${x(frame)}" y="${y}" width="${width(1)}" height="${strip.row}" fill="${colour}"><title>${what} frame ${frame}</title></rect>`
      )
      .join("")
  const join = (from: number, to: number) =>
    `<line x1="${x(from + 0.5)}" y1="${top + strip.row}" x2="${x(to + 0.5)}" y2="${bottom}" stroke="#555"></line>`
  const height = bottom + strip.row + 4
  return `<div class="muted alignment-line" ${attributes.line}>${escapeHtml(alignmentLine(alignment))}</div>
<svg class="alignment" ${attributes.svg} viewBox="0 0 ${strip.width} ${height}" role="img" aria-label="frame pairing: reference above, distorted below" font-size="12">${row(top, "reference", alignment.reference_start, referenceEnd, "#4a7fc1")}${row(bottom, "distorted", alignment.distorted_start, distortedEnd, "#5aa469")}${ticks(top, alignment.reference_frames_dropped, "#d33", "dropped")}${ticks(bottom, alignment.distorted_frames_inserted, "#d33", "inserted")}${ticks(bottom, alignment.distorted_frames_repeated, "#e90", "repeated")}${join(alignment.reference_start, alignment.distorted_start)}${join(referenceEnd - 1, distortedEnd - 1)}</svg>`
}
