/**
 * The HTML report of a score: one self-contained file (styles, data and the drawing script
 * inline; nothing is fetched), readable on a phone. A per-frame chart of VMAF with any other
 * feature selectable (checkboxes, or `#features=vmaf,psnr_y` in the address), the pooled table
 * (with the percentiles p1..p99), with shots the shots as bands on the chart and a table of them
 * lowest score first, the ten worst frames and the provenance of the run.
 */
import { percentileNames } from "../scorer/index.ts"
import type { AlignmentReport } from "../scorer/index.ts"
import { alignmentStrip } from "./alignment-strip.ts"
import { escapeHtml } from "./escape.ts"
import { formatValue, type LibvmafReport, pools } from "./libvmaf.ts"

export interface HtmlReportFacts {
  readonly reference: string
  readonly distorted: string
  /** Where it was scored: "local" or the server's address. */
  readonly scoredOn: string
  /** svc version line of the client. */
  readonly client: string
  readonly generatedAt: Date
}

/** How many of the lowest-scoring frames the report lists. */
export const worstFrameCount = 10

/** JSON that is safe inside a <script> element. */
const scriptJson = (value: unknown): string =>
  JSON.stringify(value).replace(/</g, "\\u003c").replace(/>/g, "\\u003e").replace(/&/g, "\\u0026")

/** Chart margins and default size; the width follows the page (see data-plot on the chart). */
export const chartBox = { width: 800, height: 300, left: 48, right: 12, top: 12, bottom: 28 } as const

// The drawing script: plain DOM and SVG, no library. Kept small and readable on purpose.
const drawScript = `
"use strict";
const data = JSON.parse(document.getElementById("report-data").textContent);
const box = Object.assign({}, ${JSON.stringify(chartBox)});
const svgNs = "http://www.w3.org/2000/svg";
const colours = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2"];
const chart = document.getElementById("chart");
const picker = document.getElementById("features");
const fromHash = /^#features=/.test(location.hash)
  ? decodeURIComponent(location.hash.slice(10)).split(",").filter((name) => data.features.includes(name))
  : [];
const selected = new Set(fromHash.length > 0 ? fromHash : [data.score]);

function element(name, attributes, text) {
  const node = document.createElementNS(svgNs, name);
  for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, String(value));
  if (text !== undefined) node.textContent = text;
  return node;
}

function draw() {
  chart.replaceChildren();
  // Drawn at the width it is shown at, so text stays readable on a phone.
  box.width = Math.max(300, Math.round(chart.getBoundingClientRect().width) || 800);
  box.height = box.width < 600 ? 240 : 300;
  chart.setAttribute("viewBox", "0 0 " + box.width + " " + box.height);
  const names = data.features.filter((name) => selected.has(name));
  const values = names.flatMap((name) => data.frames.map((frame) => frame.metrics[name]).filter(Number.isFinite));
  // VMAF alone keeps its 0..100 scale; a mix uses the range of what is shown.
  let low = names.length === 1 && names[0] === data.score ? 0 : Math.min(...values);
  let high = names.length === 1 && names[0] === data.score ? 100 : Math.max(...values);
  if (!Number.isFinite(low) || !Number.isFinite(high)) { low = 0; high = 1; }
  if (high === low) { high = low + 1; }
  const plotWidth = box.width - box.left - box.right;
  const plotHeight = box.height - box.top - box.bottom;
  // The scale, for readers of the drawing (tests): value = low + (high - low) * (1 - (y - top) / height).
  chart.dataset.low = String(low);
  chart.dataset.high = String(high);
  chart.dataset.plot = [box.left, box.top, plotWidth, plotHeight].join(",");
  const frameCount = Math.max(1, data.frames.length - 1);
  const x = (index) => box.left + (plotWidth * index) / frameCount;
  const y = (value) => box.top + plotHeight * (1 - (value - low) / (high - low));
  chart.append(element("rect", { x: box.left, y: box.top, width: plotWidth, height: plotHeight, class: "plot" }));
  // Shots as alternating bands behind the series, the worst shots tinted; each spans its frames.
  data.shots.forEach((shot, index) => {
    const left = shot.first === 0 ? box.left : (x(shot.first - 1) + x(shot.first)) / 2;
    const end = shot.first + shot.count;
    const right = end >= data.frames.length ? box.left + plotWidth : (x(end - 1) + x(end)) / 2;
    const band = element("rect", { x: left, y: box.top, width: Math.max(0, right - left), height: plotHeight,
      class: "shot" + (index % 2 ? " odd" : "") + (data.worstShots.includes(index) ? " worst" : ""),
      "data-shot": index, "data-first": shot.first, "data-count": shot.count });
    band.append(element("title", {}, "shot " + index + ": frames " + shot.first + "-" + (end - 1) + ", score " + shot.score.toFixed(3)));
    chart.append(band);
    if (index > 0) chart.append(element("line", { x1: left, x2: left, y1: box.top, y2: box.top + plotHeight, class: "cut" }));
  });
  for (let step = 0; step <= 4; step++) {
    const value = low + ((high - low) * step) / 4;
    chart.append(element("line", { x1: box.left, x2: box.left + plotWidth, y1: y(value), y2: y(value), class: "grid" }));
    chart.append(element("text", { x: box.left - 4, y: y(value) + 4, class: "tick", "text-anchor": "end" }, value.toFixed(high - low < 5 ? 2 : 0)));
  }
  const first = data.frames[0] ? data.frames[0].frameNum : 0;
  const last = data.frames.length > 0 ? data.frames[data.frames.length - 1].frameNum : 0;
  chart.append(element("text", { x: box.left, y: box.height - 8, class: "tick" }, "frame " + first));
  chart.append(element("text", { x: box.left + plotWidth, y: box.height - 8, class: "tick", "text-anchor": "end" }, "frame " + last));
  names.forEach((name) => {
    const colour = colours[data.features.indexOf(name) % colours.length];
    const points = data.frames
      .map((frame, index) => [index, frame.metrics[name]])
      .filter(([, value]) => Number.isFinite(value))
      .map(([index, value]) => x(index).toFixed(2) + "," + y(value).toFixed(2));
    chart.append(element("polyline", { points: points.join(" "), "data-feature": name, stroke: colour, class: "series" }));
  });
  for (const input of picker.querySelectorAll("input")) {
    input.checked = selected.has(input.value);
    input.parentElement.style.color = colours[data.features.indexOf(input.value) % colours.length];
  }
}

for (const name of data.features) {
  const label = document.createElement("label");
  const input = document.createElement("input");
  input.type = "checkbox";
  input.value = name;
  input.addEventListener("change", () => {
    if (input.checked) selected.add(name); else selected.delete(name);
    draw();
  });
  label.append(input, " " + name);
  picker.append(label);
}
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
.score { font-size: 2.4rem; font-weight: 700; }
.muted { color: #555; font-size: 0.9rem; word-break: break-all; }
#chart { width: 100%; height: auto; display: block; }
#chart .plot { fill: #fafafa; stroke: #ccc; }
#chart .grid { stroke: #e4e4e4; }
#chart .tick { font-size: 11px; fill: #555; }
#chart .series { fill: none; stroke-width: 1.5; }
#chart .shot { fill: #eef3fb; }
#chart .shot.odd { fill: #f7f7f7; }
#chart .shot.worst { fill: #fbe9e9; }
#chart .shot.worst.odd { fill: #f4dada; }
#chart .cut { stroke: #999; stroke-dasharray: 3 3; }
#features { display: flex; flex-wrap: wrap; gap: 4px 12px; font-size: 0.85rem; margin: 6px 0; }
#features label { white-space: nowrap; }
.table-wrap { overflow-x: auto; }
table { border-collapse: collapse; font-size: 0.85rem; font-variant-numeric: tabular-nums; }
th, td { padding: 3px 8px; border-bottom: 1px solid #e4e4e4; text-align: right; }
th:first-child, td:first-child { text-align: left; }
#pictures figure { display: inline-block; margin: 0 12px 8px 0; font-size: 0.85rem; }
#pictures img { margin-right: 4px; image-rendering: pixelated; width: 192px; height: auto; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: 2px 12px; font-size: 0.85rem; }
dt { color: #555; }
dd { margin: 0; word-break: break-all; }
`

/** The shots, lowest score first (their index is their place in frame order). */
const shotTable = (shots: NonNullable<LibvmafReport["shots"]>, order: ReadonlyArray<number>) => `
<h2>${shots.length} shot${shots.length === 1 ? "" : "s"}, lowest score first</h2>
<div class="table-wrap"><table id="shots">
<thead><tr><th>shot</th><th>frames</th><th>score</th><th>min</th><th>p5</th><th>harmonic_mean</th><th>worst frame</th></tr></thead>
<tbody>
${order
  .map((index) => {
    const shot = shots[index]
    if (!shot) return ""
    const cells = [
      `${shot.first_frame}-${shot.first_frame + shot.frame_count - 1}`,
      formatValue(shot.score),
      formatValue(shot.min),
      formatValue(shot.p5),
      formatValue(shot.harmonic_mean),
      String(shot.worst_frame)
    ]
    return `<tr data-shot="${index}"><td>${index}</td>${cells.map((cell) => `<td>${escapeHtml(cell)}</td>`).join("")}</tr>`
  })
  .join("\n")}
</tbody></table></div>`

/** The worst shots' worst frames, reference beside distorted (data: URLs: nothing is fetched). */
const worstShotPictures = (report: LibvmafReport) => {
  const thumbnails = report.thumbnails ?? []
  if (thumbnails.length === 0) return ""
  const shots = report.shots ?? []
  const shotOf = (frame: number) => shots.findIndex((shot) => shot.worst_frame === frame)
  const safe = (url: string) => (/^data:image\/png;base64,[A-Za-z0-9+/=]+$/.test(url) ? url : "")
  return `
<h2>Worst shots' worst frames (reference, distorted)</h2>
<div id="pictures">
${thumbnails
  .map(
    (picture) =>
      `<figure data-frame="${picture.frame}"><img alt="reference, frame ${picture.frame}" src="${safe(picture.reference)}"><img alt="distorted, frame ${picture.frame}" src="${safe(picture.distorted)}"><figcaption>shot ${shotOf(picture.frame)}, frame ${picture.frame}</figcaption></figure>`
  )
  .join("\n")}
</div>`
}

/** With options.sync "auto": the pairing found, as a strip. */
const alignmentSection = (alignment: AlignmentReport | undefined): string =>
  alignment === undefined
    ? ""
    : `
<h2>Alignment</h2>
${alignmentStrip(alignment, { line: 'id="alignment-line"', svg: 'id="alignment"' })}`

export const renderHtml = (report: LibvmafReport, facts: HtmlReportFacts, scoreName = "vmaf"): string => {
  const score = report.pooled[scoreName]?.mean ?? Number.NaN
  const worst = [...report.frames]
    .filter((frame) => Number.isFinite(frame.metrics[scoreName]))
    .sort((a, b) => (a.metrics[scoreName] ?? 0) - (b.metrics[scoreName] ?? 0) || a.frame - b.frame)
    .slice(0, worstFrameCount)
  const worstColumns = [scoreName, "psnr_y", "float_ssim"].filter((name) => report.features.includes(name))
  const provenance = report.provenance
  const provenanceRows: ReadonlyArray<readonly [string, string]> = [
    ["reference", facts.reference],
    ["distorted", facts.distorted],
    ["scored on", facts.scoredOn],
    ["frames", String(report.frames.length)],
    ["geometry", report.width > 0 ? `${report.width}×${report.height}` : "from the inputs"],
    ...(provenance
      ? ([
          ["model", provenance.model],
          ["model sha256", provenance.model_sha256],
          [
            "library",
            `${provenance.library.version} (ABI ${provenance.library.abi_minor}.${provenance.library.abi_patch})`
          ],
          ["backend", provenance.backend_used],
          [
            "extractors",
            provenance.feature_backends.map((entry) => `${entry.extractor} (${entry.backend})`).join(", ")
          ],
          ["precision", provenance.precision]
        ] as const)
      : []),
    ["client", facts.client],
    ["generated", facts.generatedAt.toISOString()]
  ]
  const shots = report.shots ?? []
  const ranks = report.percentiles ? percentileNames : []
  const shotOrder = [...shots.keys()].sort((a, b) => (shots[a]?.score ?? 0) - (shots[b]?.score ?? 0) || a - b)
  const data = {
    score: scoreName,
    features: report.features,
    frames: report.frames.map((frame) => ({ frameNum: frame.frame, metrics: frame.metrics })),
    shots: shots.map((shot) => ({ first: shot.first_frame, count: shot.frame_count, score: shot.score })),
    worstShots: report.worstShots ?? []
  }
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:">
<title>VMAF ${escapeHtml(formatValue(score))} · ${escapeHtml(facts.distorted.split("/").pop() ?? facts.distorted)}</title>
<style>${styles}</style>
</head>
<body>
<h1>VMAF report</h1>
<div class="score" id="score">${escapeHtml(formatValue(score))}</div>
<div class="muted">${escapeHtml(facts.distorted)} against ${escapeHtml(facts.reference)}</div>
${alignmentSection(report.alignment)}
<h2>Per frame</h2>
<svg id="chart" viewBox="0 0 ${chartBox.width} ${chartBox.height}" role="img" aria-label="per-frame scores"></svg>
<div id="features" role="group" aria-label="features shown"></div>
<h2>Pooled</h2>
<div class="table-wrap"><table id="pooled">
<thead><tr><th>feature</th>${[...pools, ...ranks].map((pool) => `<th>${pool}</th>`).join("")}</tr></thead>
<tbody>
${report.features
  .map(
    (name) =>
      `<tr><td>${escapeHtml(name)}</td>${pools
        .map((pool) => `<td>${escapeHtml(formatValue(report.pooled[name]?.[pool] ?? Number.NaN))}</td>`)
        .join("")}${ranks
        .map((p) => `<td>${escapeHtml(formatValue(report.percentiles?.[name]?.[p] ?? Number.NaN))}</td>`)
        .join("")}</tr>`
  )
  .join("\n")}
</tbody></table></div>${shots.length === 0 ? "" : shotTable(shots, shotOrder)}${worstShotPictures(report)}
<h2>${worst.length} worst frames</h2>
<div class="table-wrap"><table id="worst">
<thead><tr><th>frame</th>${worstColumns.map((name) => `<th>${escapeHtml(name)}</th>`).join("")}</tr></thead>
<tbody>
${worst
  .map(
    (frame) =>
      `<tr><td>${frame.frame}</td>${worstColumns
        .map((name) => `<td>${escapeHtml(formatValue(frame.metrics[name] ?? Number.NaN))}</td>`)
        .join("")}</tr>`
  )
  .join("\n")}
</tbody></table></div>
<h2>Provenance</h2>
<dl id="provenance">
${provenanceRows.map(([term, value]) => `<dt>${escapeHtml(term)}</dt><dd>${escapeHtml(value)}</dd>`).join("\n")}
</dl>
<script type="application/json" id="report-data">${scriptJson(data)}</script>
<script>${drawScript}</script>
</body>
</html>
`
}
