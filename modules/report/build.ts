// Builds a version 3 report from plain data. The measured sections (dispatch and reference
// equivalence, unit tests, golden gate, accelerator) are inputs; this module adds what follows
// from them: the sections of an absent accelerator, not_exercised, verdict, failed_checks and
// report_sha256. buildReport is pure so a test can feed it any outcome.
import { reportDigest } from "./canonical.ts"
import type {
  FixtureSection,
  GateSection,
  Gpu,
  Host,
  Image,
  NotExercisedItem,
  ReferenceEquivalence,
  ReportV3,
  RowsSection,
  Suite
} from "./schema.ts"
import { deriveVerdict } from "./verdict.ts"

export const toolName = "svc-tester-report" as const

/** The four sections that measure the accelerator, and what they could not exercise. */
export interface AcceleratorSections {
  readonly accel_equivalence: FixtureSection
  readonly accel_gate: GateSection
  readonly accel_rows: RowsSection
  readonly gpu: Gpu
  readonly not_exercised: ReadonlyArray<NotExercisedItem>
}

/**
 * The accelerator sections when nothing could be measured: `no_device` when the build carries
 * a GPU backend but the host exposes no device, `not_applicable` for a CPU-only build.
 * The rows section has no `no_device` status: its rows are `not_measured` then.
 */
export const absentAccelerator = (absence: {
  readonly status: "no_device" | "not_applicable"
  readonly reason: string
  /** The GPU backend the build carries (image.gpu_backend), if any. */
  readonly backend?: string
}): AcceleratorSections => {
  const { status, reason } = absence
  return {
    accel_equivalence: { status },
    accel_gate: { status, reason },
    accel_rows: { status: status === "no_device" ? "not_measured" : "not_applicable", rows: [] },
    gpu: absence.backend === undefined ? { status, reason } : { status, reason, backend: absence.backend },
    not_exercised: ["accel_equivalence", "accel_gate", "accel_rows", "gpu"].map((item) => ({ item, reason }))
  }
}

export interface ReportInputs {
  readonly toolVersion: string
  readonly generatedAt: Date
  readonly image: Image
  readonly host: Host
  readonly dispatch_equivalence: FixtureSection
  readonly reference_equivalence: ReferenceEquivalence
  readonly unit_tests: Suite
  readonly golden_gate: Suite
  readonly accelerator: AcceleratorSections
  /** Items the run skipped besides the accelerator's, each with its reason. */
  readonly not_exercised: ReadonlyArray<NotExercisedItem>
  readonly note: string
}

export const noteLimit = 500

// The format bounds the note; a longer one is cut at a code point rather than making the
// report invalid.
const boundedNote = (note: string): string => Array.from(note).slice(0, noteLimit).join("")

/** `2026-11-21T12:00:00Z`: the format's timestamp has whole seconds. */
export const utcTimestamp = (at: Date): string => at.toISOString().replace(/\.\d{3}Z$/, "Z")

export const buildReport = (inputs: ReportInputs): ReportV3 => {
  const { accelerator } = inputs
  const sections = {
    dispatch_equivalence: inputs.dispatch_equivalence,
    reference_equivalence: inputs.reference_equivalence,
    accel_equivalence: accelerator.accel_equivalence,
    unit_tests: inputs.unit_tests,
    golden_gate: inputs.golden_gate,
    accel_gate: accelerator.accel_gate,
    accel_rows: accelerator.accel_rows,
    gpu: accelerator.gpu
  }
  const { verdict, failed_checks } = deriveVerdict(sections)
  const withoutDigest = {
    schema_version: "3" as const,
    tool: { name: toolName, version: inputs.toolVersion },
    generated_utc: utcTimestamp(inputs.generatedAt),
    image: inputs.image,
    host: inputs.host,
    ...sections,
    not_exercised: [...inputs.not_exercised, ...accelerator.not_exercised],
    verdict,
    failed_checks,
    note: boundedNote(inputs.note)
  }
  return { ...withoutDigest, report_sha256: reportDigest(withoutDigest) }
}

/** The report as written to stdout or SVC_REPORT_OUT: indented JSON and a final newline. */
export const serializeReport = (report: ReportV3): string => `${JSON.stringify(report, null, 2)}\n`
