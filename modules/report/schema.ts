// Effect Schema of the tester report (seed 002), versions 1, 2 and 3.
// The TypeScript types of the report come from here; schemas/tester-report.schema.json states
// the same rules for other tools, and test/report/equivalence.test.ts proves the two agree.
// Decode with `closedObjects` so that undeclared properties are refused, as the seed requires.
import { Schema } from "effect"
import type { ParseOptions } from "effect/SchemaAST"

/** Parse options under which the Schema refuses undeclared properties, like the JSON Schema. */
export const closedObjects: ParseOptions = { onExcessProperty: "error", errors: "all" }

const optional = <S extends Schema.Schema.All>(schema: S) => Schema.optionalWith(schema, { exact: true })

// JSON Schema "integer" is any number without a fractional part; Schema.Int would also demand a
// safe integer, so both integers are written out here to keep the two validators equal.
export const JsonInteger = Schema.Number.pipe(
  Schema.filter((n) => Number.isInteger(n), {
    title: "integer",
    arbitrary: () => (fc) => fc.integer()
  })
)

export const NonNegativeInteger = Schema.Number.pipe(
  Schema.filter((n) => Number.isInteger(n) && n >= 0, {
    title: "non-negative integer",
    arbitrary: () => (fc) => fc.nat()
  })
)

const codePointLength = (text: string): number => {
  let count = 0
  for (const _codePoint of text) count++
  return count
}

// JSON Schema maxLength counts code points; Schema.maxLength counts UTF-16 units.
const StringOfAtMost = (limit: number) =>
  Schema.String.pipe(
    Schema.filter((text) => codePointLength(text) <= limit, {
      title: `string of at most ${limit} characters`,
      arbitrary: () => (fc) => fc.string({ unit: "binary", maxLength: limit })
    })
  )

const StringArray = Schema.Array(Schema.String)
const StringMap = Schema.Record({ key: Schema.String, value: Schema.String })
export const Sha256Hex = Schema.String.pipe(Schema.pattern(/^[0-9a-f]{64}$/))
export const ImageDigest = Schema.String.pipe(Schema.pattern(/^sha256:[0-9a-f]{64}$/))
export const GeneratedUtc = Schema.String.pipe(
  Schema.pattern(/^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$/)
)

export const Tool = Schema.Struct({
  name: Schema.Literal("svc-tester-report"),
  version: Schema.String
})

export const Image = Schema.Struct({
  kind: Schema.Literal("container-image", "osb-bundle", "osc-zip"),
  source_commit: Schema.String,
  source_ref: Schema.String,
  image_arch: Schema.String,
  compiler: Schema.String,
  libc: Schema.String,
  base_image: Schema.String,
  tag: Schema.String,
  svc_version: Schema.String,
  python: Schema.String,
  recipe_commit: Schema.String,
  built_by_workflow: Schema.Boolean,
  files_match_build: Schema.Boolean,
  digest: Schema.NullOr(ImageDigest),
  svc_sha256: Schema.NullOr(Sha256Hex),
  libsvc_sha256: Schema.NullOr(Sha256Hex),
  gpu_backend: optional(Schema.NullOr(Schema.String))
})
export type Image = typeof Image.Type

export const Host = Schema.Struct({
  platform: Schema.Literal("linux", "osb", "osc"),
  machine: Schema.String,
  kernel_release: Schema.String,
  in_container: Schema.Boolean,
  cpu_model: Schema.String,
  cpuinfo: StringMap,
  cpu_features: StringArray,
  hwcap: Schema.NullOr(JsonInteger),
  hwcap2: Schema.NullOr(JsonInteger),
  sve_in_hwcap: Schema.Boolean,
  dispatch_flags: StringArray,
  dispatch_flags_source: Schema.String,
  logical_cores: Schema.NullOr(JsonInteger),
  os_version: optional(Schema.NullOr(Schema.String)),
  hw_model: optional(Schema.NullOr(Schema.String)),
  accel_device: optional(Schema.NullOr(StringMap))
})
export type Host = typeof Host.Type

export const FixtureDetail = Schema.Struct({
  metric: Schema.String,
  differing_values: NonNegativeInteger,
  first_frame: NonNegativeInteger,
  left: Schema.String,
  right: Schema.String,
  max_abs_diff: optional(Schema.String)
})

export const FixtureCell = Schema.Struct({
  fixture: Schema.String,
  error: optional(Schema.String),
  metrics: optional(NonNegativeInteger),
  values: optional(NonNegativeInteger),
  differing_values: optional(NonNegativeInteger),
  differing_metrics: optional(NonNegativeInteger),
  details_truncated: optional(NonNegativeInteger),
  details: optional(Schema.Array(FixtureDetail)),
  extractors_on_accel: optional(StringArray),
  extractors_on_cpu: optional(StringArray),
  extractors_on_device: optional(StringArray)
})
export type FixtureCell = typeof FixtureCell.Type

export const FixtureSection = Schema.Struct({
  status: Schema.Literal("identical", "differing", "error", "no_device", "not_applicable", "not_run"),
  fixtures: optional(Schema.Array(FixtureCell))
})
export type FixtureSection = typeof FixtureSection.Type

export const ReferenceCell = Schema.Struct({
  file: Schema.String,
  status: Schema.Literal("identical", "differing", "missing", "error"),
  gating: Schema.Boolean,
  fixtures: Schema.Array(FixtureCell),
  comparable: optional(Schema.Boolean),
  generated_with_flags: optional(StringArray)
})

export const ReferenceEquivalence = Schema.Struct({
  status: Schema.Literal("identical", "differing", "missing", "error", "not_run"),
  own_arch_scalar: optional(ReferenceCell),
  own_arch_default: optional(ReferenceCell),
  cross_arch_x86_scalar: optional(ReferenceCell)
})
export type ReferenceEquivalence = typeof ReferenceEquivalence.Type

const CaseResult = Schema.Literal("pass", "fail", "skip")
const executableMap = <S extends Schema.Schema.Any>(value: S) => Schema.Record({ key: Schema.String, value })

const suiteVersion1Fields = {
  status: Schema.Literal("pass", "fail", "not_run", "not_applicable"),
  total: NonNegativeInteger,
  passed: NonNegativeInteger,
  failed: NonNegativeInteger,
  skipped: NonNegativeInteger,
  failures: StringArray,
  reason: optional(Schema.NullOr(Schema.String)),
  skipped_tests: optional(StringArray),
  left_out: optional(Schema.Array(Schema.Struct({ name: Schema.String, reason: Schema.String })))
}
const suiteVersion2Fields = {
  ...suiteVersion1Fields,
  cases: optional(executableMap(executableMap(CaseResult))),
  case_messages: optional(executableMap(executableMap(StringOfAtMost(300))))
}

/** A suite as version 1 knows it: no per-case verdicts, no per-executable results. */
export const SuiteV1 = Schema.Struct(suiteVersion1Fields)
/** Version 2 adds the per-case verdicts `cases` and `case_messages`. */
export const SuiteV2 = Schema.Struct(suiteVersion2Fields)
/** Version 3 adds the per-executable `results`. */
export const SuiteV3 = Schema.Struct({ ...suiteVersion2Fields, results: optional(executableMap(CaseResult)) })
export type Suite = typeof SuiteV3.Type

export const NotExercisedItem = Schema.Struct({ item: Schema.String, reason: Schema.String })
export type NotExercisedItem = typeof NotExercisedItem.Type

export const GateCell = Schema.Struct({
  feature: Schema.String,
  status: Schema.Literal("OK", "FAIL", "ERROR", "SKIP"),
  tolerance: Schema.String,
  tolerance_source: Schema.String,
  frames: NonNegativeInteger,
  max_abs_diff: Schema.String,
  mismatches: NonNegativeInteger,
  note: Schema.String
})

export const GateFixture = Schema.Struct({
  fixture: Schema.String,
  error: optional(Schema.String),
  exit_code: optional(JsonInteger),
  left_out: optional(Schema.Array(Schema.Struct({ feature: Schema.String, reason: Schema.String }))),
  cells: optional(Schema.Array(GateCell))
})

export const GateSection = Schema.Struct({
  status: Schema.Literal("pass", "fail", "error", "no_device", "not_applicable", "not_run"),
  reason: optional(Schema.String),
  fixtures: optional(Schema.Array(GateFixture))
})
export type GateSection = typeof GateSection.Type

const RowStatus = Schema.Literal("pass", "fail", "not_measured", "not_applicable")

export const Evidence = Schema.Struct({
  kind: Schema.Literal("case", "metric", "gate", "test", "audit"),
  result: Schema.Literal(
    "pass",
    "fail",
    "skip",
    "not_run",
    "identical",
    "within_bound",
    "differing",
    "absent",
    "not_on_accel",
    "OK",
    "FAIL",
    "ERROR",
    "SKIP"
  ),
  test: optional(Schema.String),
  case: optional(Schema.String),
  fixture: optional(Schema.String),
  extractor: optional(Schema.String),
  metric: optional(Schema.String),
  feature: optional(Schema.String),
  max_abs_diff: optional(Schema.String)
})

export const RowVerdict = Schema.Struct({
  id: Schema.String.pipe(Schema.pattern(/^T-[A-Z0-9-]+$/)),
  verdict: RowStatus,
  evidence: Schema.Array(Evidence),
  device_free: optional(Schema.String),
  part: optional(Schema.String)
})

export const RowsSection = Schema.Struct({
  status: RowStatus,
  rows: Schema.Array(RowVerdict),
  counts: optional(
    Schema.Struct({
      pass: NonNegativeInteger,
      fail: NonNegativeInteger,
      not_measured: NonNegativeInteger,
      not_applicable: optional(NonNegativeInteger)
    })
  )
})
export type RowsSection = typeof RowsSection.Type

export const TwinFeature = Schema.Struct({
  feature: Schema.String,
  bound: Schema.String,
  source: Schema.String,
  status: Schema.Literal("identical", "within_bound", "differing", "not_on_device", "not_in_run", "gate_only"),
  values: NonNegativeInteger,
  differing_values: NonNegativeInteger,
  max_abs_diff: optional(Schema.String),
  first: optional(
    Schema.Struct({
      fixture: Schema.String,
      metric: Schema.String,
      frame: NonNegativeInteger,
      cpu: Schema.String,
      device: Schema.String
    })
  )
})

export const TwinsSection = Schema.Struct({
  status: Schema.Literal("identical", "within_bound", "differing", "error"),
  fixtures: Schema.Array(FixtureCell),
  features: Schema.Array(TwinFeature)
})

const JsonObject = Schema.Record({ key: Schema.String, value: Schema.Unknown })

// Audits are open: a backend adds its own counts next to the declared fields.
export const Audit = Schema.Struct(
  {
    status: Schema.Literal("pass", "fail", "skip", "error", "not_run"),
    row_result: optional(Schema.Literal("pass", "fail", "skip", "not_run")),
    reason: optional(Schema.String)
  },
  Schema.Record({
    key: Schema.String,
    value: Schema.Union(JsonInteger, Schema.String, Schema.Boolean, Schema.Array(Schema.Unknown), JsonObject)
  })
)

export const GpuDevice = Schema.Struct({
  index: NonNegativeInteger,
  selector: StringMap,
  facts: Schema.Record({
    key: Schema.String,
    value: Schema.Union(Schema.String, JsonInteger, Schema.Boolean, Schema.Array(Schema.Unknown), Schema.Null)
  }),
  device_lines: optional(StringArray),
  status: Schema.Literal("pass", "fail", "error"),
  twins: TwinsSection,
  gate: GateSection,
  device_tests: SuiteV3,
  audits: Schema.Record({ key: Schema.String, value: Audit }),
  rows: RowsSection
})

export const Gpu = Schema.Struct({
  status: Schema.Literal("pass", "fail", "error", "no_device", "not_applicable", "not_run"),
  reason: optional(Schema.String),
  backend: optional(Schema.String),
  // Open: the route's details depend on the backend.
  access: optional(Schema.Struct({ path: Schema.String }, JsonObject)),
  runtime: optional(StringMap),
  devices: optional(Schema.Array(GpuDevice))
})
export type Gpu = typeof Gpu.Type

export const Verdict = Schema.Literal("pass", "fail", "incomplete")
export type Verdict = typeof Verdict.Type

const fieldsOfEveryVersion = {
  tool: Tool,
  generated_utc: GeneratedUtc,
  image: Image,
  host: Host,
  dispatch_equivalence: FixtureSection,
  reference_equivalence: ReferenceEquivalence,
  accel_equivalence: FixtureSection,
  not_exercised: Schema.Array(NotExercisedItem),
  verdict: Verdict,
  failed_checks: StringArray,
  note: StringOfAtMost(500),
  report_sha256: Sha256Hex
}

export const ReportV1 = Schema.Struct({
  schema_version: Schema.Literal("1"),
  ...fieldsOfEveryVersion,
  unit_tests: SuiteV1,
  golden_gate: SuiteV1
})
export type ReportV1 = typeof ReportV1.Type

export const ReportV2 = Schema.Struct({
  schema_version: Schema.Literal("2"),
  ...fieldsOfEveryVersion,
  unit_tests: SuiteV2,
  golden_gate: SuiteV2,
  accel_gate: GateSection,
  accel_rows: RowsSection
})
export type ReportV2 = typeof ReportV2.Type

export const ReportV3 = Schema.Struct({
  schema_version: Schema.Literal("3"),
  ...fieldsOfEveryVersion,
  unit_tests: SuiteV3,
  golden_gate: SuiteV3,
  accel_gate: GateSection,
  accel_rows: RowsSection,
  gpu: Gpu
})
export type ReportV3 = typeof ReportV3.Type

export const Report = Schema.Union(ReportV1, ReportV2, ReportV3)
export type Report = typeof Report.Type
