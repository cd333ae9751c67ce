// The checker: the JSON Schema rules, then the rules a schema cannot state (digest, verdict,
// no device identifiers in GPU facts). README.md documents each rule.
import { Schema } from "effect"
import testerReportJsonSchema from "../../schemas/tester-report.schema.json"
import { reportDigest } from "./canonical.ts"
import { makeValidator, type SchemaObject, type Violation } from "./json-schema-walk.ts"
import { Report } from "./schema.ts"
import { deriveVerdict, didNotRunStatuses, requiredGates } from "./verdict.ts"

export type { Violation } from "./json-schema-walk.ts"

const reportJsonSchema: SchemaObject = testerReportJsonSchema

/** Violations of schemas/tester-report.schema.json alone. */
export const checkAgainstJsonSchema = makeValidator(reportJsonSchema)

const isReport = Schema.is(Report)

const isDigestCarrier = (
  document: unknown
): document is { readonly report_sha256: string; readonly [field: string]: unknown } =>
  typeof document === "object" &&
  document !== null &&
  !Array.isArray(document) &&
  typeof Reflect.get(document, "report_sha256") === "string" &&
  /^[0-9a-f]{64}$/.test(String(Reflect.get(document, "report_sha256")))

// Runs whenever the document carries a well-formed digest, even if other rules fail, so a
// tampered report is named as such next to its other faults.
const checkDigest = (document: unknown): ReadonlyArray<Violation> => {
  if (!isDigestCarrier(document)) return []
  const expected = reportDigest(document)
  return document.report_sha256 === expected
    ? []
    : [
        {
          path: "/report_sha256",
          rule: `must be ${expected}, the sha256 of the canonical report without report_sha256 and note`
        }
      ]
}

const checkVerdict = (report: Report): ReadonlyArray<Violation> => {
  const derived = deriveVerdict(report)
  const violations: Array<Violation> = []
  if (JSON.stringify(report.failed_checks) !== JSON.stringify(derived.failed_checks)) {
    violations.push({
      path: "/failed_checks",
      rule: `must be ${JSON.stringify(derived.failed_checks)}: the sections whose status is differing, error or fail, in section order`
    })
  }
  if (report.verdict !== derived.verdict) {
    const skipped = requiredGates.filter((name) => didNotRunStatuses.has(report[name].status))
    const because =
      derived.verdict === "fail"
        ? `${derived.failed_checks.join(", ")} failed`
        : derived.verdict === "incomplete"
          ? `no section failed but required gate ${skipped.join(", ")} did not run`
          : "every required gate ran and no section failed"
    violations.push({ path: "/verdict", rule: `must be ${JSON.stringify(derived.verdict)} because ${because}` })
  }
  return violations
}

// The seed keeps GPU facts free of anything that identifies one physical device.
const identifyingFactName = /uuid|serial|pci/i
const identifyingFactValue =
  /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|\b[0-9a-f]{4,8}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]\b/i

const carriesIdentifier = (value: unknown): boolean =>
  typeof value === "string" ? identifyingFactValue.test(value) : Array.isArray(value) && value.some(carriesIdentifier)

const checkGpuFacts = (report: Report): ReadonlyArray<Violation> => {
  if (report.schema_version !== "3") return []
  return (report.gpu.devices ?? []).flatMap((device, index) =>
    Object.entries(device.facts).flatMap(([name, value]) =>
      identifyingFactName.test(name) || carriesIdentifier(value)
        ? [
            {
              path: `/gpu/devices/${index}/facts/${name.replaceAll("~", "~0").replaceAll("/", "~1")}`,
              rule: "must not carry a device UUID, serial number or PCI address"
            }
          ]
        : []
    )
  )
}

/** Every violation of the report format in `document` (a parsed JSON value); empty when valid. */
export const checkReport = (document: unknown): ReadonlyArray<Violation> => {
  const schemaViolations = checkAgainstJsonSchema(document)
  const digestViolations = checkDigest(document)
  if (schemaViolations.length > 0) return [...schemaViolations, ...digestViolations]
  // Proven equivalent to the JSON Schema by test; this guard only narrows the type.
  if (!isReport(document)) return [{ path: "", rule: "is refused by the Effect Schema of the report" }]
  return [...digestViolations, ...checkVerdict(document), ...checkGpuFacts(document)]
}

/** `/host/hwcap: must be integer or null`; the whole document (pointer "") reads `(document)`. */
export const formatViolation = (violation: Violation): string =>
  `${violation.path === "" ? "(document)" : violation.path}: ${violation.rule}`
