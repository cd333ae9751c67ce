/**
 * The reference VMAF tool's output layouts (JSON, XML, CSV, subtitle), written once for the
 * `svc` client and the REST API's content negotiation. Each writer prints what the reference
 * prints, field for field and in its order; svc adds only what the reference has no field for
 * (JSON and XML carry `provenance`). Numbers follow the reference's printf rules, so scripts
 * that parse the reference's files parse these.
 */
import {
  type AlignmentReport,
  type FrameScore,
  type PercentileName,
  percentileNames,
  type Provenance,
  type ScoreResult,
  type Shot,
  type Thumbnail
} from "../scorer/index.ts"

export const libvmafFormats = ["json", "xml", "csv", "sub"] as const
export type LibvmafFormat = (typeof libvmafFormats)[number]

export type Pool = "min" | "max" | "mean" | "harmonic_mean"
/** The reference's pooling methods in the order it prints them. */
export const pools: ReadonlyArray<Pool> = ["min", "max", "mean", "harmonic_mean"]

/** Everything a layout prints: one run's frames and pooled values, and where they came from. */
export interface LibvmafReport {
  /** Version of the scoring library (the reference prints its own). */
  readonly version: string
  /** Frames per second of the run. */
  readonly fps: number
  readonly width: number
  readonly height: number
  /** Feature names in print order. */
  readonly features: ReadonlyArray<string>
  readonly frames: ReadonlyArray<FrameScore>
  readonly pooled: Readonly<Record<string, Readonly<Record<Pool, number>>>>
  readonly provenance: Provenance | undefined
  /** svc's additions, which no reference layout prints (the table and the HTML report do). */
  readonly percentiles?: Readonly<Record<string, Readonly<Record<PercentileName, number>>>>
  readonly shots?: ReadonlyArray<Shot>
  readonly worstShots?: ReadonlyArray<number>
  readonly thumbnails?: ReadonlyArray<Thumbnail>
  /** With options.sync "auto": how the inputs were lined up (table line, HTML strip). */
  readonly alignment?: AlignmentReport
}

// The reference's feature order for its default model: the extractors' order of first output,
// with extra features (--feature) after the VIF scales, in the order requested.
const modelFeaturesBeforeExtras = [
  "integer_adm2",
  "integer_aim",
  "integer_adm3",
  "integer_adm_scale0",
  "integer_adm_scale1",
  "integer_adm_scale2",
  "integer_adm_scale3",
  "VMAF_integer_feature_motion_sad_score",
  "integer_vif_scale0",
  "integer_vif_scale1",
  "integer_vif_scale2",
  "integer_vif_scale3"
]
const modelFeaturesAfterExtras = ["integer_motion2", "integer_motion3"]
const extraFeatureMetrics: Readonly<Record<string, ReadonlyArray<string>>> = {
  psnr: ["psnr_y", "psnr_cb", "psnr_cr"],
  float_ssim: ["float_ssim"],
  float_ms_ssim: ["float_ms_ssim"],
  // svc's own extra metrics, after the reference's (it has no xpsnr or ssimulacra2 extractor).
  xpsnr: ["xpsnr_y", "xpsnr_u", "xpsnr_v"],
  ssimulacra2: ["ssimulacra2"]
}

/**
 * Orders feature names as the reference prints them. `extras` are the requested extra features
 * (request order); `scores` are the model score names ("vmaf", or one per model), printed last.
 * Names the reference does not know go after the extras, in the order given.
 */
export const referenceOrder = (
  names: Iterable<string>,
  extras: ReadonlyArray<string> = [],
  scores: ReadonlyArray<string> = ["vmaf"]
): ReadonlyArray<string> => {
  const present = new Set(names)
  const requested = extras.flatMap((extra) => extraFeatureMetrics[extra] ?? [])
  const extraMetrics = [...new Set([...requested, ...Object.values(extraFeatureMetrics).flat()])]
  const placed = new Set([...modelFeaturesBeforeExtras, ...extraMetrics, ...modelFeaturesAfterExtras, ...scores])
  const unknown = [...present].filter((name) => !placed.has(name))
  return [...modelFeaturesBeforeExtras, ...extraMetrics, ...unknown, ...modelFeaturesAfterExtras, ...scores].filter(
    (name) => present.has(name)
  )
}

/** Extra features a result holds, from its metric names (for results that do not say). */
export const extrasIn = (names: Iterable<string>): ReadonlyArray<string> => {
  const present = new Set(names)
  return Object.entries(extraFeatureMetrics)
    .filter(([, metrics]) => metrics.some((metric) => present.has(metric)))
    .map(([extra]) => extra)
}

/**
 * The reference prints `%.6f`, except that a value just above 1 which `%.6f` would show as
 * exactly 1 is printed with 16 decimals (the ADM scales of near-identical frames), so that it
 * does not read as 1.
 */
export const formatValue = (value: number): string => {
  if (Number.isNaN(value)) return "nan"
  if (!Number.isFinite(value)) return value > 0 ? "inf" : "-inf"
  const six = value.toFixed(6)
  return six === "1.000000" && value > 1 ? value.toFixed(16) : six
}

/** JSON has no nan/inf: the reference prints null. */
const jsonValue = (value: number): string => (Number.isFinite(value) ? formatValue(value) : "null")

const xmlEscape = (text: string): string =>
  text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;")

const frameValues = (report: LibvmafReport, frame: FrameScore): ReadonlyArray<readonly [string, number]> =>
  report.features.flatMap((name) => {
    const value = frame.metrics[name]
    return value === undefined ? [] : [[name, value] as const]
  })

const pooledValues = (report: LibvmafReport, name: string): ReadonlyArray<readonly [Pool, number]> =>
  pools.flatMap((pool) => {
    const value = report.pooled[name]?.[pool]
    return value === undefined ? [] : [[pool, value] as const]
  })

const provenanceJson = (provenance: Provenance): string => JSON.stringify(provenance, null, 2).split("\n").join("\n  ")

export const renderJson = (report: LibvmafReport): string => {
  const lines: Array<string> = ["{", `  "version": ${JSON.stringify(report.version)},`]
  lines.push(`  "fps": ${Number.isFinite(report.fps) ? report.fps.toFixed(2) : "null"},`)
  const frames = report.frames.map((frame) => {
    const metrics = frameValues(report, frame).map(
      ([name, value]) => `        ${JSON.stringify(name)}: ${jsonValue(value)}`
    )
    return [
      "    {",
      `      "frameNum": ${frame.frame},`,
      '      "metrics": {',
      metrics.join(",\n"),
      "      }",
      "    }"
    ].join("\n")
  })
  lines.push(`  "frames": [${frames.length > 0 ? `\n${frames.join(",\n")}` : ""}\n  ],`)
  const pooled = report.features.map((name) => {
    const values = pooledValues(report, name).map(([pool, value]) => `      "${pool}": ${jsonValue(value)}`)
    return `    ${JSON.stringify(name)}: {\n${values.join(",\n")}\n    }`
  })
  lines.push(`  "pooled_metrics": {${pooled.length > 0 ? `\n${pooled.join(",\n")}` : ""}\n  },`)
  lines.push(`  "aggregate_metrics": {\n  }${report.provenance ? "," : ""}`)
  if (report.provenance) lines.push(`  "provenance": ${provenanceJson(report.provenance)}`)
  lines.push("}")
  return `${lines.join("\n")}\n`
}

const xmlAttributes = (entries: ReadonlyArray<readonly [string, string]>): string =>
  entries.map(([name, value]) => `${name}="${xmlEscape(value)}" `).join("")

const provenanceXml = (provenance: Provenance): ReadonlyArray<string> => [
  `  <provenance ${xmlAttributes([
    ["model", provenance.model],
    ["model_sha256", provenance.model_sha256],
    ["backend_used", provenance.backend_used],
    ["precision", provenance.precision]
  ]).trimEnd()}>`,
  `    <library ${xmlAttributes(Object.entries(provenance.library).map(([name, value]) => [name, String(value)]))}/>`,
  ...provenance.feature_backends.map(
    (entry) =>
      `    <feature_backend ${xmlAttributes([
        ["extractor", entry.extractor],
        ["backend", entry.backend]
      ])}/>`
  ),
  "  </provenance>"
]

export const renderXml = (report: LibvmafReport): string => {
  const lines = [
    `<VMAF version="${xmlEscape(report.version)}">`,
    `  <params qualityWidth="${report.width}" qualityHeight="${report.height}" />`,
    `  <fyi fps="${Number.isFinite(report.fps) ? report.fps.toFixed(2) : "nan"}" />`,
    "  <frames>",
    ...report.frames.map(
      (frame) =>
        `    <frame frameNum="${frame.frame}" ${xmlAttributes(
          frameValues(report, frame).map(([name, value]) => [name, formatValue(value)])
        )}/>`
    ),
    "  </frames>",
    "  <pooled_metrics>",
    ...report.features.map(
      (name) =>
        `    <metric name="${xmlEscape(name)}" ${xmlAttributes(
          pooledValues(report, name).map(([pool, value]) => [pool, formatValue(value)])
        )}/>`
    ),
    "  </pooled_metrics>",
    "  <aggregate_metrics />",
    ...(report.provenance ? provenanceXml(report.provenance) : []),
    "</VMAF>"
  ]
  return `${lines.join("\n")}\n`
}

export const renderCsv = (report: LibvmafReport): string => {
  const header = `Frame,${report.features.map((name) => `${name},`).join("")}`
  const rows = report.frames.map(
    (frame) =>
      `${frame.frame},${frameValues(report, frame)
        .map(([, value]) => `${formatValue(value)},`)
        .join("")}`
  )
  return `${[header, ...rows].join("\n")}\n`
}

export const renderSub = (report: LibvmafReport): string =>
  report.frames
    .map(
      (frame) =>
        `{${frame.frame}}{${frame.frame + 1}}frame: ${frame.frame}|${frameValues(report, frame)
          .map(([name, value]) => `${name}: ${formatValue(value)}|`)
          .join("")}\n`
    )
    .join("")

export const renderLibvmaf = (format: LibvmafFormat, report: LibvmafReport): string => {
  switch (format) {
    case "json":
      return renderJson(report)
    case "xml":
      return renderXml(report)
    case "csv":
      return renderCsv(report)
    case "sub":
      return renderSub(report)
  }
}

/** Media type of each layout (REST content negotiation). */
export const mediaTypes: Readonly<Record<LibvmafFormat, string>> = {
  json: "application/json",
  xml: "application/xml",
  csv: "text/csv",
  sub: "text/x-microdvd"
}

export interface RunFacts {
  readonly width: number
  readonly height: number
  /** Seconds the score took (for `fps`). */
  readonly seconds: number
  /** Extra features requested, in request order (for the column order). */
  readonly extras?: ReadonlyArray<string> | undefined
  /** Names of the score columns, printed last ("vmaf", or one per model). */
  readonly scores?: ReadonlyArray<string> | undefined
}

/** The report of one score result (with per-frame values) and the facts of its run. */
export const reportOf = (result: ScoreResult, facts: RunFacts): LibvmafReport => {
  const names = Object.keys(result.features)
  const features = referenceOrder(names, facts.extras ?? extrasIn(names), facts.scores)
  const pooled = Object.fromEntries(
    names.map((name) => [
      name,
      {
        min: result.pooled.min[name] ?? Number.NaN,
        max: result.pooled.max[name] ?? Number.NaN,
        mean: result.features[name] ?? Number.NaN,
        harmonic_mean: result.pooled.harmonic_mean[name] ?? Number.NaN
      }
    ])
  )
  const hasPercentiles = percentileNames.every((p) => result.pooled[p] !== undefined)
  const percentiles = Object.fromEntries(
    names.map((name) => [
      name,
      Object.fromEntries(percentileNames.map((p) => [p, result.pooled[p]?.[name] ?? Number.NaN])) as Record<
        PercentileName,
        number
      >
    ])
  )
  return {
    version: result.provenance.library.version,
    fps: facts.seconds > 0 ? result.frame_count / facts.seconds : Number.NaN,
    width: facts.width,
    height: facts.height,
    features,
    frames: result.frames,
    pooled,
    provenance: result.provenance,
    ...(hasPercentiles ? { percentiles } : {}),
    ...(result.shots && result.shots.length > 0 ? { shots: result.shots, worstShots: result.worst_shots ?? [] } : {}),
    ...(result.thumbnails && result.thumbnails.length > 0 ? { thumbnails: result.thumbnails } : {}),
    ...(result.alignment ? { alignment: result.alignment } : {})
  }
}
