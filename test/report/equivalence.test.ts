// The Effect Schema, the JSON Schema (run by Ajv) and the checker's own walk of the JSON Schema
// accept and refuse the same documents: valid documents come from the Effect Schema
// (Arbitrary.make), mutants break them at a random place.
import { Arbitrary, FastCheck as fc } from "effect"
import { describe, expect, it } from "vitest"
import testerReportJsonSchema from "../../schemas/tester-report.schema.json"
import { checkAgainstJsonSchema } from "../../modules/report/check.ts"
import { handledKeywords, type SchemaNode } from "../../modules/report/json-schema-walk.ts"
import { Report } from "../../modules/report/schema.ts"
import { applyEdit, type Edit } from "./json-pointer-edit.ts"
import { acceptedByAjv, acceptedByEffectSchema } from "./validators.ts"

const asJson = (value: unknown): unknown => JSON.parse(JSON.stringify(value))

const pointerToken = (name: string | number): string => String(name).replaceAll("~", "~0").replaceAll("/", "~1")

interface Located {
  readonly pointer: string
  readonly value: unknown
}

const everyValue = (value: unknown, pointer = ""): ReadonlyArray<Located> => {
  const here: Located = { pointer, value }
  if (Array.isArray(value)) return [here, ...value.flatMap((item, index) => everyValue(item, `${pointer}/${index}`))]
  if (typeof value === "object" && value !== null) {
    return [
      here,
      ...Object.entries(value).flatMap(([name, member]) => everyValue(member, `${pointer}/${pointerToken(name)}`))
    ]
  }
  return [here]
}

// Values that break the common rules: wrong type, negative or fractional or huge count,
// out-of-enum and pattern-breaking strings, over-long note and case message, astral characters
// (maxLength counts code points, not UTF-16 units).
const replacements: ReadonlyArray<unknown> = [
  -1,
  0,
  1.5,
  2 ** 60,
  "",
  "bogus",
  "T-lower-case",
  "A".repeat(64),
  `sha256:${"0".repeat(64)}`,
  "n".repeat(501),
  "m".repeat(301),
  "😀".repeat(300),
  "😀".repeat(501),
  true,
  null,
  [],
  {},
  ["x"],
  { x: 1 }
]
// Field names that exist only in later versions, in some objects, or nowhere.
const addedNames: ReadonlyArray<string> = [
  "zz_extra",
  "accel_gate",
  "accel_rows",
  "gpu",
  "cases",
  "results",
  "reason",
  "status"
]

const reportArbitrary = Arbitrary.make(Report).map(asJson)

type Mutation =
  | { readonly kind: "remove" }
  | { readonly kind: "replace"; readonly value: unknown }
  | { readonly kind: "add"; readonly name: string; readonly value: unknown }
  | { readonly kind: "version"; readonly version: string }

const mutationArbitrary: fc.Arbitrary<Mutation> = fc.oneof(
  fc.constant<Mutation>({ kind: "remove" }),
  fc.constantFrom(...replacements).map((value): Mutation => ({ kind: "replace", value })),
  fc
    .tuple(fc.constantFrom(...addedNames), fc.constantFrom(...replacements, { status: "no_device" }))
    .map(([name, value]): Mutation => ({ kind: "add", name, value })),
  fc.constantFrom("1", "2", "3").map((version): Mutation => ({ kind: "version", version }))
)

const editFor = (target: Located, mutation: Mutation): Edit | undefined => {
  switch (mutation.kind) {
    case "remove":
      return target.pointer === "" ? undefined : { remove: target.pointer }
    case "replace":
      return target.pointer === "" ? undefined : { set: target.pointer, value: mutation.value }
    case "add":
      return typeof target.value === "object" && target.value !== null && !Array.isArray(target.value)
        ? { set: `${target.pointer}/${mutation.name}`, value: mutation.value }
        : undefined
    case "version":
      return { set: "/schema_version", value: mutation.version }
  }
}

const mutantArbitrary = reportArbitrary.chain((document) =>
  fc.tuple(fc.constantFrom(...everyValue(document)), mutationArbitrary).map(([target, mutation]) => {
    const mutant = structuredClone(document)
    const edit = editFor(target, mutation)
    if (edit !== undefined) applyEdit(mutant, edit)
    return { mutant, edit }
  })
)

const verdicts = (document: unknown) => ({
  effectSchema: acceptedByEffectSchema(document),
  ajv: acceptedByAjv(document),
  checker: checkAgainstJsonSchema(document).length === 0
})

describe("Effect Schema and JSON Schema agree", () => {
  it("every document generated from the Effect Schema is valid for all three", () => {
    fc.assert(
      fc.property(reportArbitrary, (document) => {
        expect(verdicts(document)).toEqual({ effectSchema: true, ajv: true, checker: true })
      }),
      { numRuns: 150 }
    )
  })

  it("a mutated document gets the same verdict from all three", () => {
    let refused = 0
    fc.assert(
      fc.property(mutantArbitrary, ({ mutant }) => {
        const { effectSchema, ajv, checker } = verdicts(mutant)
        expect({ ajv, checker }).toEqual({ ajv: effectSchema, checker: effectSchema })
        if (!effectSchema) refused++
      }),
      { numRuns: 400 }
    )
    // Guards against a vacuous property. About half the mutants are refused; the rest land in
    // open values (GPU facts, audit extras, gpu.access) or replace a value by an allowed one.
    expect(refused).toBeGreaterThan(400 / 3)
  })
})

describe("the checker's JSON Schema walk", () => {
  const unhandled: Array<string> = []
  const visit = (node: SchemaNode | undefined, at: string): void => {
    if (node === undefined || typeof node === "boolean") return
    for (const keyword of Object.keys(node)) if (!handledKeywords.has(keyword)) unhandled.push(`${at}/${keyword}`)
    for (const [name, member] of Object.entries(node.properties ?? {})) visit(member, `${at}/properties/${name}`)
    for (const [name, member] of Object.entries(node.$defs ?? {})) visit(member, `${at}/$defs/${name}`)
    for (const [index, member] of (node.allOf ?? []).entries()) visit(member, `${at}/allOf/${index}`)
    visit(node.additionalProperties, `${at}/additionalProperties`)
    visit(node.items, `${at}/items`)
    visit(node.if, `${at}/if`)
    visit(node.then, `${at}/then`)
  }

  it("handles every keyword the schema uses", () => {
    visit(testerReportJsonSchema, "#")
    expect(unhandled).toEqual([])
  })
})
