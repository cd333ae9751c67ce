/**
 * The HTML report of a ladder (one reference, many renditions): one self-contained file (styles,
 * data and the drawing script inline; nothing is fetched) that reads on a phone. It shows the
 * per-frame VMAF of every rendition on one chart (each rendition can be hidden), a table of what
 * a ladder user compares (pooled score, p1, p5, bitrate, resolution, codec, hull), and the
 * bitrate-vs-score plot with the upper convex hull drawn through the renditions on it. With
 * shots: the reference's shots as bands behind the per-frame chart, a table of every shot's score
 * in every rendition (each rendition's worst shots marked), and each rendition's worst shots'
 * worst frames as pictures, the reference beside the rendition.
 */
import type { AlignmentReport, Shot, Thumbnail } from "../scorer/index.ts"
import { alignmentStrip } from "./alignment-strip.ts"
import { escapeHtml } from "./escape.ts"
import { scoredPositions, shotRows, shotSpan, widestOf } from "./ladder-shots.ts"
import { formatValue } from "./libvmaf.ts"

/** One rendition as the report shows it. */
export interface LadderReportRendition {
  readonly label: string
  readonly distorted: string
  /** Pooled score (the mean of the per-frame score). */
  readonly score: number
  /** Nearest-rank 1st and 5th percentiles of the per-frame score. */
  readonly p1: number
  readonly p5: number
  readonly harmonicMean: number
  readonly min: number
  readonly bitrateBps: number
  readonly width: number
  readonly height: number
  readonly codec: string
  readonly onHull: boolean
  /** Per-frame scores: frame index and value. */
  readonly frames: ReadonlyArray<{ readonly frame: number; readonly score: number }>
  /** With shots: the reference's shots scored with this rendition, its worst ones, their pictures. */
  readonly shots?: ReadonlyArray<Shot>
  readonly worstShots?: ReadonlyArray<number>
  readonly thumbnails?: ReadonlyArray<Thumbnail>
  /** With options.sync "auto": how this rendition lines up with the reference (each its own offset). */
  readonly alignment?: AlignmentReport | undefined
}

export interface LadderReportFacts {
  readonly reference: string
  readonly model: string
  readonly modelSha256: string
  /** Where it was scored: this machine, a server's address, a controller job. */
  readonly scoredOn: string
  /** svc version line of the client. */
  readonly client: string
  readonly generatedAt: Date
  /** Passes over the reference (1 for a one-pass ladder). */
  readonly referencePasses?: number | undefined
}

/** JSON that is safe inside a <script> element (non-finite numbers become null). */
const scriptJson = (value: unknown): string =>
  JSON.stringify(value, (_key, item: unknown) => (typeof item === "number" && !Number.isFinite(item) ? null : item))
    .replace(/</g, "\\u003c")
    .replace(/>/g, "\\u003e")
    .replace(/&/g, "\\u0026")

/** "4.20 Mb/s", "850 kb/s": bitrates as encoding people read them. */
export const formatBitrate = (bps: number): string => {
  if (!Number.isFinite(bps) || bps <= 0) return "n/a"
  if (bps >= 1e6) return `${(bps / 1e6).toFixed(2)} Mb/s`
  return `${Math.round(bps / 1e3)} kb/s`
}

/** Chart margins; the width follows the page. */
export const ladderChartBox = { left: 48, right: 12, top: 12, bottom: 40 } as const

// The drawing script: plain DOM and SVG, no library. Each chart states its scale in data-*
// attributes (value = low + (high - low) * (1 - (y - top) / height)), so a reader (or a test) can
// turn the drawn points back into values.
const drawScript = `
"use strict";
const data = JSON.parse(document.getElementById("ladder-data").textContent);
const margin = ${JSON.stringify(ladderChartBox)};
const svgNs = "http://www.w3.org/2000/svg";
const colours = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2",
  "#7f7f7f", "#bcbd22", "#393b79", "#637939", "#8c6d31", "#843c39", "#7b4173", "#3182bd"];
const colourOf = (index) => colours[index % colours.length];
const hidden = new Set();

function element(name, attributes, text) {
  const node = document.createElementNS(svgNs, name);
  for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, String(value));
  if (text !== undefined) node.textContent = text;
  return node;
}

function frame(svg, lowX, highX, lowY, highY) {
  svg.replaceChildren();
  const width = Math.max(300, Math.round(svg.getBoundingClientRect().width) || 800);
  const height = width < 600 ? 240 : 300;
  svg.setAttribute("viewBox", "0 0 " + width + " " + height);
  const plotWidth = width - margin.left - margin.right;
  const plotHeight = height - margin.top - margin.bottom;
  svg.dataset.plot = [margin.left, margin.top, plotWidth, plotHeight].join(",");
  svg.dataset.low = String(lowY);
  svg.dataset.high = String(highY);
  svg.dataset.lowX = String(lowX);
  svg.dataset.highX = String(highX);
  const x = (value) => margin.left + (plotWidth * (value - lowX)) / (highX - lowX || 1);
  const y = (value) => margin.top + plotHeight * (1 - (value - lowY) / (highY - lowY || 1));
  svg.append(element("rect", { x: margin.left, y: margin.top, width: plotWidth, height: plotHeight, class: "plot" }));
  for (let step = 0; step <= 4; step++) {
    const value = lowY + ((highY - lowY) * step) / 4;
    svg.append(element("line", { x1: margin.left, x2: margin.left + plotWidth, y1: y(value), y2: y(value), class: "grid" }));
    svg.append(element("text", { x: margin.left - 4, y: y(value) + 4, class: "tick", "text-anchor": "end" }, value.toFixed(highY - lowY < 5 ? 2 : 0)));
  }
  return { x, y, width, height, plotWidth, plotHeight };
}

function drawFrames() {
  const svg = document.getElementById("frames-chart");
  const shown = data.renditions.filter((rendition) => !hidden.has(rendition.label));
  // A rendition aligned at its own offset starts that many frames into the ladder's (past a
  // reference frame it drops that others pair, each frame's position is given).
  const at = (rendition, position) => rendition.positions ? rendition.positions[position] : rendition.offset + position;
  const ends = data.renditions.map((rendition) => rendition.frames.length === 0 ? rendition.offset : at(rendition, rendition.frames.length - 1) + 1);
  const last = Math.ceil(Math.max(1, ...ends)) - 1;
  const values = shown.flatMap((rendition) => rendition.frames.map((f) => f.score)).filter(Number.isFinite);
  // VMAF keeps its 0..100 scale unless every shown frame sits high: then zoom in on what differs.
  const lowest = values.length > 0 ? Math.min(...values) : 0;
  const low = lowest >= 60 ? Math.floor(lowest / 10) * 10 : 0;
  const box = frame(svg, 0, Math.max(1, last), low, 100);
  svg.append(element("text", { x: margin.left, y: box.height - 22, class: "tick" }, "frame 0"));
  svg.append(element("text", { x: margin.left + box.plotWidth, y: box.height - 22, class: "tick", "text-anchor": "end" }, "frame " + last));
  // The reference's shots (every rendition's) as alternating bands behind the series.
  data.shots.forEach((shot, index) => {
    const left = shot.first === 0 ? margin.left : (box.x(shot.first - 1) + box.x(shot.first)) / 2;
    const end = shot.first + shot.count;
    const right = end - 1 >= last ? margin.left + box.plotWidth : (box.x(end - 1) + box.x(end)) / 2;
    const band = element("rect", { x: left.toFixed(2), y: margin.top, width: Math.max(0, right - left).toFixed(2),
      height: box.plotHeight, class: "shot" + (index % 2 ? " odd" : ""), "data-shot": index,
      "data-first": shot.first, "data-count": shot.count });
    band.append(element("title", {}, "shot " + index + ": frames " + shot.first + "-" + (end - 1)));
    svg.append(band);
  });
  data.renditions.forEach((rendition, index) => {
    if (hidden.has(rendition.label)) return;
    const points = rendition.frames
      .map((f, position) => [at(rendition, position), f.score])
      .filter(([, value]) => Number.isFinite(value))
      .map(([position, value]) => box.x(position).toFixed(2) + "," + box.y(value).toFixed(2));
    svg.append(element("polyline", { points: points.join(" "), "data-rendition": rendition.label, stroke: colourOf(index), class: "series" }));
  });
}

function drawHull() {
  const svg = document.getElementById("hull-chart");
  const points = data.renditions.filter((rendition) => rendition.bitrate > 0 && Number.isFinite(rendition.score));
  const rates = points.map((rendition) => rendition.bitrate / 1000);
  const scores = points.map((rendition) => rendition.score);
  let lowX = rates.length > 0 ? Math.min(...rates) : 0;
  let highX = rates.length > 0 ? Math.max(...rates) : 1;
  const padX = (highX - lowX) * 0.06 || Math.max(1, lowX * 0.1);
  lowX = Math.max(0, lowX - padX);
  highX = highX + padX;
  const lowY = scores.length > 0 ? Math.max(0, Math.floor(Math.min(...scores) / 10) * 10 - 5) : 0;
  const box = frame(svg, lowX, highX, lowY, 100);
  svg.append(element("text", { x: margin.left, y: box.height - 22, class: "tick" }, lowX.toFixed(0) + " kb/s"));
  svg.append(element("text", { x: margin.left + box.plotWidth, y: box.height - 22, class: "tick", "text-anchor": "end" }, highX.toFixed(0) + " kb/s"));
  svg.append(element("text", { x: margin.left + box.plotWidth / 2, y: box.height - 6, class: "tick", "text-anchor": "middle" }, "bitrate"));
  const hull = points.filter((rendition) => rendition.onHull).sort((a, b) => a.bitrate - b.bitrate);
  svg.append(element("polyline", {
    points: hull.map((rendition) => box.x(rendition.bitrate / 1000).toFixed(2) + "," + box.y(rendition.score).toFixed(2)).join(" "),
    class: "hull"
  }));
  points.forEach((rendition) => {
    const index = data.renditions.indexOf(rendition);
    const cx = box.x(rendition.bitrate / 1000);
    const cy = box.y(rendition.score);
    svg.append(element("circle", {
      cx: cx.toFixed(2), cy: cy.toFixed(2), r: rendition.onHull ? 6 : 4,
      fill: rendition.onHull ? colourOf(index) : "#fff", stroke: colourOf(index), "stroke-width": 2,
      "data-rendition": rendition.label, "data-on-hull": String(rendition.onHull), class: "point"
    }));
    // Labels of points in the right part of the plot go to their left, so none is cut off.
    const leftward = cx > margin.left + box.plotWidth * 0.6;
    svg.append(element("text", {
      x: (leftward ? cx - 8 : cx + 8).toFixed(2), y: (cy - 8).toFixed(2), class: "point-label",
      "text-anchor": leftward ? "end" : "start"
    }, rendition.label));
  });
}

function draw() {
  drawFrames();
  drawHull();
}

const picker = document.getElementById("renditions");
data.renditions.forEach((rendition, index) => {
  const label = document.createElement("label");
  const input = document.createElement("input");
  input.type = "checkbox";
  input.value = rendition.label;
  input.checked = true;
  input.addEventListener("change", () => {
    if (input.checked) hidden.delete(rendition.label); else hidden.add(rendition.label);
    drawFrames();
  });
  label.style.color = colourOf(index);
  label.append(input, " " + rendition.label);
  picker.append(label);
});
draw();
let resizing;
addEventListener("resize", () => { clearTimeout(resizing); resizing = setTimeout(draw, 100); });
document.body.setAttribute("data-drawn", "true");
`

const styles = `
:root { color-scheme: light; font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
body { margin: 0 auto; padding: 12px; max-width: 960px; color: #1b1b1b; background: #fff; }
h1 { font-size: 1.4rem; margin: 0.2em 0; }
h2 { font-size: 1.1rem; margin: 1.2em 0 0.4em; }
.muted { color: #555; font-size: 0.9rem; word-break: break-all; }
svg.chart { width: 100%; height: auto; display: block; }
svg.chart .plot { fill: #fafafa; stroke: #ccc; }
svg.chart .grid { stroke: #e4e4e4; }
svg.chart .tick, svg.chart .point-label { font-size: 11px; fill: #555; }
svg.chart .series { fill: none; stroke-width: 1.5; }
svg.chart .hull { fill: none; stroke: #1b1b1b; stroke-width: 1.5; stroke-dasharray: 5 3; }
svg.chart .shot { fill: #eef3fb; }
svg.chart .shot.odd { fill: #f7f7f7; }
td.worst-shot { color: #b00020; font-weight: 700; }
#pictures figure { display: inline-block; margin: 4px 8px 8px 0; font-size: 0.8rem; }
#pictures img { display: inline-block; margin-right: 2px; max-width: 45vw; }
#renditions { display: flex; flex-wrap: wrap; gap: 4px 12px; font-size: 0.85rem; margin: 6px 0; }
#renditions label { white-space: nowrap; }
.table-wrap { overflow-x: auto; }
table { border-collapse: collapse; font-size: 0.85rem; font-variant-numeric: tabular-nums; }
th, td { padding: 3px 8px; border-bottom: 1px solid #e4e4e4; text-align: right; white-space: nowrap; }
th:first-child, td:first-child { text-align: left; }
td.hull-yes { font-weight: 700; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: 2px 12px; font-size: 0.85rem; }
dt { color: #555; }
dd { margin: 0; word-break: break-all; }
`

/**
 * With shots: every shot's score in every rendition (a rendition's worst shots marked), and each
 * rendition's worst shots' worst frames, reference beside rendition (data: URLs only). Renditions
 * aligned at their own offsets: each rendition's shot in the row of the ladder's shot it falls in.
 */
const shotSection = (renditions: ReadonlyArray<LadderReportRendition>): string => {
  const shots = shotRows(renditions)
  if (shots.length === 0) return ""
  const safe = (url: string) => (/^data:image\/png;base64,[A-Za-z0-9+/=]+$/.test(url) ? url : "")
  const rows = shots.map((row, index) => {
    const cells = renditions.map((rendition, r) => {
      const own = row.shots[r] ?? -1
      const worst = own >= 0 && (rendition.worstShots?.includes(own) ?? false)
      const value = formatValue(rendition.shots?.[own]?.score ?? Number.NaN)
      return `<td${worst ? ' class="worst-shot"' : ""}>${escapeHtml(value)}</td>`
    })
    return `<tr data-shot="${index}"><td>${index}</td><td>${row.first}-${row.end - 1}</td>${cells.join("")}</tr>`
  })
  const pictures = renditions.flatMap((rendition) =>
    (rendition.thumbnails ?? []).map(
      (picture) =>
        `<figure data-rendition="${escapeHtml(rendition.label)}" data-frame="${picture.frame}"><img alt="reference, frame ${picture.frame}" src="${safe(picture.reference)}"><img alt="${escapeHtml(rendition.label)}, frame ${picture.frame}" src="${safe(picture.distorted)}"><figcaption>${escapeHtml(rendition.label)}, frame ${picture.frame}</figcaption></figure>`
    )
  )
  return `<h2>${shots.length} shot${shots.length === 1 ? "" : "s"} of the reference, score per rendition</h2>
<div class="muted">A rendition's worst shots are in red.</div>
<div class="table-wrap"><table id="shots">
<thead><tr><th>shot</th><th>frames</th>${renditions.map((rendition) => `<th>${escapeHtml(rendition.label)}</th>`).join("")}</tr></thead>
<tbody>
${rows.join("\n")}
</tbody></table></div>${
    pictures.length === 0
      ? ""
      : `
<h2>Worst shots' worst frames (reference, rendition)</h2>
<div id="pictures">
${pictures.join("\n")}
</div>`
  }`
}

/** With options.sync "auto": each rendition's pairing, drawn as a score's report draws it. */
const alignmentSection = (renditions: ReadonlyArray<LadderReportRendition>): string => {
  const aligned = renditions.flatMap((rendition) =>
    rendition.alignment === undefined ? [] : [{ label: rendition.label, alignment: rendition.alignment }]
  )
  if (aligned.length === 0) return ""
  const strips = aligned.map(({ label, alignment }) => {
    const rendition = `data-rendition="${escapeHtml(label)}"`
    return `<h3>${escapeHtml(label)}</h3>
${alignmentStrip(alignment, { line: rendition, svg: rendition })}`
  })
  return `<h2>Alignment of each rendition</h2>
<div id="alignments">
${strips.join("\n")}
</div>`
}

/** The report of a ladder's renditions, in request order. */
export const renderLadderHtml = (
  renditions: ReadonlyArray<LadderReportRendition>,
  facts: LadderReportFacts
): string => {
  const places = scoredPositions(renditions)
  const widest = widestOf(renditions)
  const placeWidest = places[widest] ?? ((scored: number) => scored)
  const data = {
    renditions: renditions.map((rendition, index) => {
      const place = places[index] ?? placeWidest
      const offset = place(0)
      // A rendition that drops reference frames others pair (a ladder scored in several passes)
      // is not offset + k past its drop: each frame's position is given.
      const positions = rendition.frames.map((_, scored) => place(scored))
      const gapped = positions.some((position, scored) => Math.abs(position - (offset + scored)) > 1e-9)
      return {
        label: rendition.label,
        score: rendition.score,
        bitrate: rendition.bitrateBps,
        onHull: rendition.onHull,
        offset,
        ...(gapped ? { positions } : {}),
        frames: rendition.frames
      }
    }),
    // Every rendition has the reference's shots: the widest one's bounds are drawn, on the ladder's frames.
    shots: (renditions[widest]?.shots ?? []).map((shot) => {
      const { first, end } = shotSpan(placeWidest, shot)
      return { first, count: end - first }
    })
  }
  // What a ladder user compares first comes first: a phone shows the left columns, the rest scrolls.
  const columns = ["rendition", "VMAF", "bitrate", "p1", "p5", "resolution", "codec", "hull", "harmonic mean", "min"]
  const number = (value: number) => `<td>${escapeHtml(formatValue(value))}</td>`
  const rows = renditions.map((rendition) =>
    [
      `<td>${escapeHtml(rendition.label)}</td>`,
      number(rendition.score),
      `<td data-bps="${Number.isFinite(rendition.bitrateBps) ? rendition.bitrateBps : 0}">${escapeHtml(formatBitrate(rendition.bitrateBps))}</td>`,
      number(rendition.p1),
      number(rendition.p5),
      `<td>${rendition.width > 0 ? `${rendition.width}×${rendition.height}` : "n/a"}</td>`,
      `<td>${escapeHtml(rendition.codec || "n/a")}</td>`,
      `<td class="${rendition.onHull ? "hull-yes" : "hull-no"}">${rendition.onHull ? "on hull" : "—"}</td>`,
      number(rendition.harmonicMean),
      number(rendition.min)
    ].join("")
  )
  const provenanceRows: ReadonlyArray<readonly [string, string]> = [
    ["reference", facts.reference],
    ...renditions.map((rendition) => [rendition.label, rendition.distorted] as const),
    ["model", facts.model],
    ["model sha256", facts.modelSha256],
    ...(facts.referencePasses === undefined ? [] : ([["reference passes", String(facts.referencePasses)]] as const)),
    ["scored on", facts.scoredOn],
    ["client", facts.client],
    ["generated", facts.generatedAt.toISOString()]
  ]
  const best = renditions.reduce<LadderReportRendition | undefined>(
    (top, rendition) => (top === undefined || rendition.score > top.score ? rendition : top),
    undefined
  )
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:">
<title>VMAF ladder · ${renditions.length} renditions · ${escapeHtml(facts.reference.split("/").pop() ?? facts.reference)}</title>
<style>${styles}</style>
</head>
<body>
<h1>VMAF ladder report</h1>
<div class="muted">${renditions.length} renditions against ${escapeHtml(facts.reference)}${
    best === undefined ? "" : `; best: ${escapeHtml(best.label)} (${escapeHtml(formatValue(best.score))})`
  }</div>
<h2>Renditions</h2>
<div class="table-wrap"><table id="ladder">
<thead><tr>${columns.map((name) => `<th>${name}</th>`).join("")}</tr></thead>
<tbody>
${rows.map((cells) => `<tr>${cells}</tr>`).join("\n")}
</tbody></table></div>
<h2>Bitrate vs score</h2>
<svg id="hull-chart" class="chart" viewBox="0 0 800 300" role="img" aria-label="bitrate against pooled VMAF, the convex hull dashed"></svg>
<div class="muted">Filled points lie on the upper convex hull (dashed): no mix of other renditions gives a better score at their bitrate.</div>
<h2>Per frame</h2>
<svg id="frames-chart" class="chart" viewBox="0 0 800 300" role="img" aria-label="per-frame VMAF of every rendition"></svg>
<div id="renditions" role="group" aria-label="renditions shown"></div>
${alignmentSection(renditions)}
${shotSection(renditions)}
<h2>Provenance</h2>
<dl id="provenance">
${provenanceRows.map(([term, value]) => `<dt>${escapeHtml(term)}</dt><dd>${escapeHtml(value)}</dd>`).join("\n")}
</dl>
<script type="application/json" id="ladder-data">${scriptJson(data)}</script>
<script>${drawScript}</script>
</body>
</html>
`
}
