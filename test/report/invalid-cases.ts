// Invalid tester reports: each breaks exactly one rule of a valid sample (samples/v*.json)
// and names the JSON Pointer and rule the checker must report.
import type { Edit } from "./json-pointer-edit.ts"

export type SampleVersion = "v1" | "v2" | "v3"

export interface InvalidCase {
  readonly name: string
  readonly sample: SampleVersion
  readonly edits: ReadonlyArray<Edit>
  /** false when the case breaks the digest itself: report_sha256 is not recomputed after the edits. */
  readonly recomputeDigest?: boolean
  /** "schema" rules are the JSON Schema's; "semantic" ones only the checker knows. */
  readonly kind: "schema" | "semantic"
  readonly path: string
  readonly rule: string | RegExp
}

const hex64 = "a".repeat(64)
const oneOf = (...values: ReadonlyArray<string>) => `must be one of ${values.map((v) => JSON.stringify(v)).join(", ")}`
const fixtureStatuses = oneOf("identical", "differing", "error", "no_device", "not_applicable", "not_run")
const gateStatuses = oneOf("pass", "fail", "error", "no_device", "not_applicable", "not_run")
const rowStatuses = oneOf("pass", "fail", "not_measured", "not_applicable")
const caseResults = oneOf("pass", "fail", "skip")
const notAllowedIn = (version: string) => `is not allowed when schema_version is "${version}"`
const requiredIn = (version: string) => `is required when schema_version is "${version}"`

const schemaCase = (name: string, sample: SampleVersion, edit: Edit, path: string, rule: string): InvalidCase => ({
  name,
  sample,
  edits: [edit],
  kind: "schema",
  path,
  rule
})

export const invalidCases: ReadonlyArray<InvalidCase> = [
  // top level
  schemaCase("schema_version missing", "v3", { remove: "/schema_version" }, "/schema_version", "is required"),
  schemaCase(
    "schema_version unknown",
    "v3",
    { set: "/schema_version", value: "4" },
    "/schema_version",
    oneOf("1", "2", "3")
  ),
  schemaCase(
    "schema_version is a number",
    "v3",
    { set: "/schema_version", value: 3 },
    "/schema_version",
    oneOf("1", "2", "3")
  ),
  schemaCase("undeclared top-level field", "v3", { set: "/summary", value: "ok" }, "/summary", "is not allowed"),
  schemaCase(
    "tool name not the constant",
    "v3",
    { set: "/tool/name", value: "svc-tester" },
    "/tool/name",
    'must be "svc-tester-report"'
  ),
  schemaCase("tool version missing", "v3", { remove: "/tool/version" }, "/tool/version", "is required"),
  schemaCase("tool carries an extra field", "v3", { set: "/tool/build", value: "x" }, "/tool/build", "is not allowed"),
  schemaCase(
    "generated_utc not in UTC form",
    "v3",
    { set: "/generated_utc", value: "2026-11-21 12:00:00" },
    "/generated_utc",
    "must match pattern ^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$"
  ),
  schemaCase(
    "verdict unknown",
    "v3",
    { set: "/verdict", value: "passed" },
    "/verdict",
    oneOf("pass", "fail", "incomplete")
  ),
  schemaCase(
    "failed_checks not an array",
    "v3",
    { set: "/failed_checks", value: "none" },
    "/failed_checks",
    "must be array"
  ),
  schemaCase(
    "note longer than 500 characters",
    "v3",
    { set: "/note", value: "n".repeat(501) },
    "/note",
    "must be at most 500 characters"
  ),
  {
    ...schemaCase(
      "report_sha256 in upper case",
      "v3",
      { set: "/report_sha256", value: "A".repeat(64) },
      "/report_sha256",
      "must match pattern ^[0-9a-f]{64}$"
    ),
    recomputeDigest: false
  },
  schemaCase(
    "not_exercised reason null",
    "v3",
    { set: "/not_exercised/0/reason", value: null },
    "/not_exercised/0/reason",
    "must be string"
  ),
  schemaCase(
    "not_exercised item missing",
    "v3",
    { remove: "/not_exercised/0/item" },
    "/not_exercised/0/item",
    "is required"
  ),
  // image
  schemaCase(
    "image kind unknown",
    "v3",
    { set: "/image/kind", value: "tarball" },
    "/image/kind",
    oneOf("container-image", "osb-bundle", "osc-zip")
  ),
  schemaCase(
    "image digest in upper case",
    "v3",
    { set: "/image/digest", value: `sha256:${"A".repeat(64)}` },
    "/image/digest",
    "must match pattern ^sha256:[0-9a-f]{64}$"
  ),
  schemaCase(
    "image svc_sha256 too short",
    "v3",
    { set: "/image/svc_sha256", value: "abc" },
    "/image/svc_sha256",
    "must match pattern ^[0-9a-f]{64}$"
  ),
  schemaCase(
    "image built_by_workflow a string",
    "v3",
    { set: "/image/built_by_workflow", value: "yes" },
    "/image/built_by_workflow",
    "must be boolean"
  ),
  schemaCase(
    "image libsvc_sha256 missing",
    "v3",
    { remove: "/image/libsvc_sha256" },
    "/image/libsvc_sha256",
    "is required"
  ),
  schemaCase(
    "image gpu_backend a number",
    "v3",
    { set: "/image/gpu_backend", value: 1 },
    "/image/gpu_backend",
    "must be string or null"
  ),
  // host
  schemaCase(
    "host hwcap a string",
    "v3",
    { set: "/host/hwcap", value: "0x1" },
    "/host/hwcap",
    "must be integer or null"
  ),
  schemaCase(
    "host hwcap2 fractional",
    "v3",
    { set: "/host/hwcap2", value: 1.5 },
    "/host/hwcap2",
    "must be integer or null"
  ),
  schemaCase(
    "host platform unknown",
    "v3",
    { set: "/host/platform", value: "windows" },
    "/host/platform",
    oneOf("linux", "osb", "osc")
  ),
  schemaCase(
    "host cpuinfo value a number",
    "v3",
    { set: "/host/cpuinfo/cache~1size", value: 1 },
    "/host/cpuinfo/cache~1size",
    "must be string"
  ),
  schemaCase(
    "host cpu_features item a number",
    "v3",
    { set: "/host/cpu_features/0", value: 1 },
    "/host/cpu_features/0",
    "must be string"
  ),
  schemaCase(
    "host logical_cores a string",
    "v3",
    { set: "/host/logical_cores", value: "8" },
    "/host/logical_cores",
    "must be integer or null"
  ),
  schemaCase(
    "host accel_device value a number",
    "v2",
    { set: "/host/accel_device/family", value: 9 },
    "/host/accel_device/family",
    "must be string"
  ),
  schemaCase(
    "host dispatch_flags_source missing",
    "v3",
    { remove: "/host/dispatch_flags_source" },
    "/host/dispatch_flags_source",
    "is required"
  ),
  schemaCase("host in_container missing", "v1", { remove: "/host/in_container" }, "/host/in_container", "is required"),
  // fixture sections and cells
  schemaCase(
    "dispatch status unknown",
    "v3",
    { set: "/dispatch_equivalence/status", value: "same" },
    "/dispatch_equivalence/status",
    fixtureStatuses
  ),
  schemaCase(
    "fixture values negative",
    "v3",
    { set: "/dispatch_equivalence/fixtures/0/values", value: -1 },
    "/dispatch_equivalence/fixtures/0/values",
    "must be >= 0"
  ),
  schemaCase(
    "fixture name missing",
    "v3",
    { remove: "/dispatch_equivalence/fixtures/0/fixture" },
    "/dispatch_equivalence/fixtures/0/fixture",
    "is required"
  ),
  schemaCase(
    "detail first_frame fractional",
    "v2",
    { set: "/dispatch_equivalence/fixtures/0/details/0/first_frame", value: 1.5 },
    "/dispatch_equivalence/fixtures/0/details/0/first_frame",
    "must be integer"
  ),
  schemaCase(
    "detail left missing",
    "v2",
    { remove: "/dispatch_equivalence/fixtures/0/details/0/left" },
    "/dispatch_equivalence/fixtures/0/details/0/left",
    "is required"
  ),
  schemaCase(
    "accel_equivalence carries a reason",
    "v3",
    { set: "/accel_equivalence/reason", value: "none" },
    "/accel_equivalence/reason",
    "is not allowed"
  ),
  schemaCase(
    "accel extractors not strings",
    "v2",
    { set: "/accel_equivalence/fixtures/0/extractors_on_accel/1", value: false },
    "/accel_equivalence/fixtures/0/extractors_on_accel/1",
    "must be string"
  ),
  // reference equivalence
  schemaCase(
    "reference status unknown",
    "v3",
    { set: "/reference_equivalence/status", value: "not_applicable" },
    "/reference_equivalence/status",
    oneOf("identical", "differing", "missing", "error", "not_run")
  ),
  schemaCase(
    "reference cell gating a string",
    "v3",
    { set: "/reference_equivalence/own_arch_default/gating", value: "true" },
    "/reference_equivalence/own_arch_default/gating",
    "must be boolean"
  ),
  schemaCase(
    "reference cell status not_run",
    "v3",
    { set: "/reference_equivalence/cross_arch_x86_scalar/status", value: "not_run" },
    "/reference_equivalence/cross_arch_x86_scalar/status",
    oneOf("identical", "differing", "missing", "error")
  ),
  schemaCase(
    "reference cell fixtures missing",
    "v2",
    { remove: "/reference_equivalence/own_arch_scalar/fixtures" },
    "/reference_equivalence/own_arch_scalar/fixtures",
    "is required"
  ),
  // suites
  schemaCase(
    "unit_tests passed negative",
    "v3",
    { set: "/unit_tests/passed", value: -1 },
    "/unit_tests/passed",
    "must be >= 0"
  ),
  schemaCase(
    "unit case verdict unknown",
    "v3",
    { set: "/unit_tests/cases/test_picture/alloc", value: "ok" },
    "/unit_tests/cases/test_picture/alloc",
    caseResults
  ),
  schemaCase(
    "case message longer than 300",
    "v2",
    { set: "/unit_tests/case_messages/test_feature/motion_gpu", value: "m".repeat(301) },
    "/unit_tests/case_messages/test_feature/motion_gpu",
    "must be at most 300 characters"
  ),
  schemaCase(
    "results in a version 2 suite",
    "v2",
    { set: "/unit_tests/results", value: { test_feature: "pass" } },
    "/unit_tests/results",
    notAllowedIn("2")
  ),
  schemaCase(
    "unit_tests not an object, reported once",
    "v1",
    { set: "/unit_tests", value: 3 },
    "/unit_tests",
    "must be object"
  ),
  schemaCase(
    "cases in a version 1 suite",
    "v1",
    { set: "/golden_gate/cases", value: {} },
    "/golden_gate/cases",
    notAllowedIn("1")
  ),
  schemaCase(
    "left_out entry with an extra field",
    "v2",
    { set: "/unit_tests/left_out/0/why", value: "x" },
    "/unit_tests/left_out/0/why",
    "is not allowed"
  ),
  schemaCase(
    "golden_gate failures a string",
    "v3",
    { set: "/golden_gate/failures", value: "none" },
    "/golden_gate/failures",
    "must be array"
  ),
  schemaCase(
    "golden_gate results verdict unknown",
    "v3",
    { set: "/golden_gate/results/golden", value: "passed" },
    "/golden_gate/results/golden",
    caseResults
  ),
  schemaCase(
    "suite reason a number",
    "v2",
    { set: "/unit_tests/reason", value: 0 },
    "/unit_tests/reason",
    "must be string or null"
  ),
  // per-version fields
  schemaCase(
    "accel_gate in version 1",
    "v1",
    { set: "/accel_gate", value: { status: "no_device" } },
    "/accel_gate",
    notAllowedIn("1")
  ),
  schemaCase("gpu in version 1", "v1", { set: "/gpu", value: { status: "no_device" } }, "/gpu", notAllowedIn("1")),
  schemaCase("accel_rows missing in version 2", "v2", { remove: "/accel_rows" }, "/accel_rows", requiredIn("2")),
  schemaCase("gpu in version 2", "v2", { set: "/gpu", value: { status: "no_device" } }, "/gpu", notAllowedIn("2")),
  schemaCase("gpu missing in version 3", "v3", { remove: "/gpu" }, "/gpu", requiredIn("3")),
  schemaCase("accel_gate missing in version 3", "v3", { remove: "/accel_gate" }, "/accel_gate", requiredIn("3")),
  // gate and rows sections
  schemaCase(
    "accel_gate status unknown",
    "v2",
    { set: "/accel_gate/status", value: "ok" },
    "/accel_gate/status",
    gateStatuses
  ),
  schemaCase(
    "gate cell status in lower case",
    "v2",
    { set: "/accel_gate/fixtures/0/cells/0/status", value: "ok" },
    "/accel_gate/fixtures/0/cells/0/status",
    oneOf("OK", "FAIL", "ERROR", "SKIP")
  ),
  schemaCase(
    "gate cell note missing",
    "v2",
    { remove: "/accel_gate/fixtures/0/cells/0/note" },
    "/accel_gate/fixtures/0/cells/0/note",
    "is required"
  ),
  schemaCase(
    "gate cell mismatches negative",
    "v2",
    { set: "/accel_gate/fixtures/0/cells/0/mismatches", value: -2 },
    "/accel_gate/fixtures/0/cells/0/mismatches",
    "must be >= 0"
  ),
  schemaCase(
    "gate fixture exit_code a string",
    "v2",
    { set: "/accel_gate/fixtures/0/exit_code", value: "0" },
    "/accel_gate/fixtures/0/exit_code",
    "must be integer"
  ),
  schemaCase(
    "gate left_out feature a number",
    "v2",
    { set: "/accel_gate/fixtures/0/left_out/0/feature", value: 3 },
    "/accel_gate/fixtures/0/left_out/0/feature",
    "must be string"
  ),
  schemaCase(
    "row id in lower case",
    "v2",
    { set: "/accel_rows/rows/0/id", value: "T-accel" },
    "/accel_rows/rows/0/id",
    "must match pattern ^T-[A-Z0-9-]+$"
  ),
  schemaCase(
    "evidence kind unknown",
    "v2",
    { set: "/accel_rows/rows/0/evidence/0/kind", value: "log" },
    "/accel_rows/rows/0/evidence/0/kind",
    oneOf("case", "metric", "gate", "test", "audit")
  ),
  schemaCase(
    "evidence result unknown",
    "v2",
    { set: "/accel_rows/rows/0/evidence/0/result", value: "passed" },
    "/accel_rows/rows/0/evidence/0/result",
    oneOf(
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
    )
  ),
  schemaCase(
    "row counts without not_measured",
    "v2",
    { remove: "/accel_rows/counts/not_measured" },
    "/accel_rows/counts/not_measured",
    "is required"
  ),
  schemaCase(
    "rows status no_device",
    "v2",
    { set: "/accel_rows/status", value: "no_device" },
    "/accel_rows/status",
    rowStatuses
  ),
  // gpu
  schemaCase("gpu status unknown", "v3", { set: "/gpu/status", value: "ok" }, "/gpu/status", gateStatuses),
  schemaCase("gpu access path missing", "v3", { remove: "/gpu/access/path" }, "/gpu/access/path", "is required"),
  schemaCase(
    "gpu runtime value a number",
    "v3",
    { set: "/gpu/runtime/driver", value: 550 },
    "/gpu/runtime/driver",
    "must be string"
  ),
  schemaCase(
    "gpu device index negative",
    "v3",
    { set: "/gpu/devices/0/index", value: -1 },
    "/gpu/devices/0/index",
    "must be >= 0"
  ),
  schemaCase(
    "gpu fact a fraction",
    "v3",
    { set: "/gpu/devices/0/facts/clock_ghz", value: 1.5 },
    "/gpu/devices/0/facts/clock_ghz",
    "must be string or integer or boolean or array or null"
  ),
  schemaCase(
    "gpu device status skip",
    "v3",
    { set: "/gpu/devices/0/status", value: "skip" },
    "/gpu/devices/0/status",
    oneOf("pass", "fail", "error")
  ),
  schemaCase(
    "twin first frame negative",
    "v3",
    { set: "/gpu/devices/0/twins/features/0/first/frame", value: -3 },
    "/gpu/devices/0/twins/features/0/first/frame",
    "must be >= 0"
  ),
  schemaCase(
    "twins status not_on_device",
    "v3",
    { set: "/gpu/devices/0/twins/status", value: "not_on_device" },
    "/gpu/devices/0/twins/status",
    oneOf("identical", "within_bound", "differing", "error")
  ),
  schemaCase(
    "twin feature bound missing",
    "v3",
    { remove: "/gpu/devices/0/twins/features/0/bound" },
    "/gpu/devices/0/twins/features/0/bound",
    "is required"
  ),
  schemaCase(
    "audit status unknown",
    "v3",
    { set: "/gpu/devices/0/audits/memory/status", value: "ok" },
    "/gpu/devices/0/audits/memory/status",
    oneOf("pass", "fail", "skip", "error", "not_run")
  ),
  schemaCase(
    "audit extra a fraction",
    "v3",
    { set: "/gpu/devices/0/audits/memory/ratio", value: 0.5 },
    "/gpu/devices/0/audits/memory/ratio",
    "must be integer or string or boolean or array or object"
  ),
  schemaCase(
    "audit row_result error",
    "v3",
    { set: "/gpu/devices/0/audits/sync/row_result", value: "error" },
    "/gpu/devices/0/audits/sync/row_result",
    oneOf("pass", "fail", "skip", "not_run")
  ),
  schemaCase(
    "device_tests missing",
    "v3",
    { remove: "/gpu/devices/0/device_tests" },
    "/gpu/devices/0/device_tests",
    "is required"
  ),
  schemaCase(
    "device_tests with an extra field",
    "v3",
    { set: "/gpu/devices/0/device_tests/duration", value: 1 },
    "/gpu/devices/0/device_tests/duration",
    "is not allowed"
  ),
  // rules beyond the JSON Schema
  {
    name: "content changed after the digest",
    sample: "v3",
    edits: [{ set: "/host/machine", value: "aarch64" }],
    recomputeDigest: false,
    kind: "semantic",
    path: "/report_sha256",
    rule: /^must be [0-9a-f]{64}, the sha256 of the canonical report without report_sha256 and note$/
  },
  {
    name: "digest of other content",
    sample: "v1",
    edits: [{ set: "/report_sha256", value: hex64 }],
    recomputeDigest: false,
    kind: "semantic",
    path: "/report_sha256",
    rule: /^must be [0-9a-f]{64}, the sha256/
  },
  {
    name: "verdict fail with nothing failed",
    sample: "v3",
    edits: [{ set: "/verdict", value: "fail" }],
    kind: "semantic",
    path: "/verdict",
    rule: 'must be "pass" because every required gate ran and no section failed'
  },
  {
    name: "verdict pass while a required gate did not run",
    sample: "v1",
    edits: [{ set: "/verdict", value: "pass" }],
    kind: "semantic",
    path: "/verdict",
    rule: 'must be "incomplete" because no section failed but required gate reference_equivalence did not run'
  },
  {
    name: "verdict incomplete while a section failed",
    sample: "v2",
    edits: [{ set: "/verdict", value: "incomplete" }],
    kind: "semantic",
    path: "/verdict",
    rule: 'must be "fail" because dispatch_equivalence failed'
  },
  {
    name: "failed_checks omits a failed golden gate",
    sample: "v3",
    edits: [
      { set: "/golden_gate/status", value: "fail" },
      { set: "/verdict", value: "fail" }
    ],
    kind: "semantic",
    path: "/failed_checks",
    rule: 'must be ["golden_gate"]: the sections whose status is differing, error or fail, in section order'
  },
  {
    name: "failed_checks names a section that passed",
    sample: "v2",
    edits: [{ set: "/failed_checks", value: ["dispatch_equivalence", "unit_tests"] }],
    kind: "semantic",
    path: "/failed_checks",
    rule: 'must be ["dispatch_equivalence"]: the sections whose status is differing, error or fail, in section order'
  },
  {
    name: "gpu fact carries a device UUID",
    sample: "v3",
    edits: [{ set: "/gpu/devices/0/facts/uuid", value: "GPU-6f0d4a1e-3b2c-4d5e-8f9a-0b1c2d3e4f5a" }],
    kind: "semantic",
    path: "/gpu/devices/0/facts/uuid",
    rule: "must not carry a device UUID, serial number or PCI address"
  },
  {
    name: "gpu fact carries a PCI address",
    sample: "v3",
    edits: [{ set: "/gpu/devices/0/facts/bus", value: "00000000:3B:00.0" }],
    kind: "semantic",
    path: "/gpu/devices/0/facts/bus",
    rule: "must not carry a device UUID, serial number or PCI address"
  }
]
