// Canonical JSON and the report digest.
// report_sha256 = sha256 (lowercase hex) of the canonical JSON of the report without
// `report_sha256` (it cannot cover itself) and `note` (a human may annotate a report later
// without invalidating it). Canonical JSON: object keys sorted recursively by UTF-16 code
// units (Array.prototype.sort), no whitespace, strings and numbers exactly as JSON.stringify
// writes them, properties whose value is undefined left out (JSON.stringify drops them too).
import { createHash } from "node:crypto"

export const canonicalJson = (value: unknown): string => {
  if (Array.isArray(value)) return `[${value.map((item) => canonicalJson(item === undefined ? null : item)).join(",")}]`
  if (typeof value === "object" && value !== null) {
    const members = Object.keys(value)
      .sort()
      .flatMap((name) => {
        const member: unknown = Reflect.get(value, name)
        return member === undefined ? [] : [`${JSON.stringify(name)}:${canonicalJson(member)}`]
      })
    return `{${members.join(",")}}`
  }
  return JSON.stringify(value)
}

/** Fields of the report that report_sha256 does not cover. */
export const fieldsOutsideDigest: ReadonlyArray<string> = ["report_sha256", "note"]

export const reportDigest = (report: { readonly [field: string]: unknown }): string => {
  const covered = Object.fromEntries(Object.entries(report).filter(([field]) => !fieldsOutsideDigest.includes(field)))
  return createHash("sha256").update(canonicalJson(covered), "utf8").digest("hex")
}
