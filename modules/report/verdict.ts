// How `verdict` and `failed_checks` follow from the sections (documented in README.md).

/** The top-level sections that carry a status, in the order failed_checks lists them. */
export const checkedSections = [
  "dispatch_equivalence",
  "reference_equivalence",
  "accel_equivalence",
  "unit_tests",
  "golden_gate",
  "accel_gate",
  "accel_rows",
  "gpu"
] as const
export type CheckedSection = (typeof checkedSections)[number]

/** Statuses that mean the section measured something wrong. */
export const failingStatuses: ReadonlySet<string> = new Set(["differing", "error", "fail"])

/** Gates every run must complete for a `pass`: the CPU build's own correctness evidence. */
export const requiredGates = [
  "dispatch_equivalence",
  "reference_equivalence",
  "unit_tests",
  "golden_gate"
] as const satisfies ReadonlyArray<CheckedSection>

/** Statuses of a required gate that did not run (`missing`: no reference values to compare). */
export const didNotRunStatuses: ReadonlySet<string> = new Set(["not_run", "missing"])

export type SectionStatuses = { readonly [Section in CheckedSection]?: { readonly status: string } }

export interface DerivedVerdict {
  readonly verdict: "pass" | "fail" | "incomplete"
  readonly failed_checks: ReadonlyArray<CheckedSection>
}

export const deriveVerdict = (sections: SectionStatuses): DerivedVerdict => {
  const failed_checks = checkedSections.filter((name) => {
    const section = sections[name]
    return section !== undefined && failingStatuses.has(section.status)
  })
  if (failed_checks.length > 0) return { verdict: "fail", failed_checks }
  const gateSkipped = requiredGates.some((name) => {
    const section = sections[name]
    return section === undefined || didNotRunStatuses.has(section.status)
  })
  return { verdict: gateSkipped ? "incomplete" : "pass", failed_checks }
}
