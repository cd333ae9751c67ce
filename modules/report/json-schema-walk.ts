// A validator for the subset of JSON Schema 2020-12 that schemas/tester-report.schema.json uses.
// It exists so that each violation reads as the rule it breaks, at a JSON Pointer
// (`/host/hwcap: must be integer or null`), without a JSON Schema engine in the executable.
// test/report/json-schema-walk.test.ts fails if the schema starts using a keyword not handled here.

export interface SchemaObject {
  readonly type?: string | ReadonlyArray<string>
  readonly enum?: ReadonlyArray<string>
  readonly const?: string
  readonly pattern?: string
  readonly minimum?: number
  readonly maxLength?: number
  readonly required?: ReadonlyArray<string>
  // `| undefined` because TypeScript widens the imported JSON's sibling objects that way.
  readonly properties?: { readonly [name: string]: SchemaNode | undefined }
  readonly additionalProperties?: SchemaNode
  readonly items?: SchemaNode
  readonly allOf?: ReadonlyArray<SchemaNode>
  readonly if?: SchemaNode
  readonly then?: SchemaNode
  readonly $ref?: string
  readonly $defs?: { readonly [name: string]: SchemaNode }
}
export type SchemaNode = boolean | SchemaObject

/** Keywords the walk evaluates, and the annotations it may ignore. */
export const handledKeywords: ReadonlySet<string> = new Set([
  "type",
  "enum",
  "const",
  "pattern",
  "minimum",
  "maxLength",
  "required",
  "properties",
  "additionalProperties",
  "items",
  "allOf",
  "if",
  "then",
  "$ref",
  "$defs",
  "$schema",
  "$id",
  "title",
  "description"
])

/** One broken rule: where (JSON Pointer into the document) and which rule. */
export interface Violation {
  readonly path: string
  readonly rule: string
}

// A broken rule before formatting; `when` names the `if` under which it applies.
interface Found {
  readonly path: string
  readonly rule: string
  readonly when: string
}

const pointerToken = (name: string | number): string => String(name).replaceAll("~", "~0").replaceAll("/", "~1")

const isJsonObject = (value: unknown): value is { readonly [name: string]: unknown } =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const hasJsonType = (value: unknown, type: string): boolean => {
  switch (type) {
    case "object":
      return isJsonObject(value)
    case "array":
      return Array.isArray(value)
    case "null":
      return value === null
    case "integer":
      return typeof value === "number" && Number.isInteger(value)
    case "number":
      return typeof value === "number"
    default:
      return typeof value === type
  }
}

// JSON Schema counts characters as code points, not UTF-16 units.
const codePointLength = (text: string): number => {
  let count = 0
  for (const _codePoint of text) count++
  return count
}

const quoted = (values: ReadonlyArray<string>): string => values.map((value) => JSON.stringify(value)).join(", ")

// A `then` applies under its `if`; the rule names that condition when it is a single constant.
const describeCondition = (condition: SchemaNode): string => {
  if (typeof condition === "boolean" || condition.properties === undefined) return ""
  const constants = Object.entries(condition.properties).flatMap(([name, node]) =>
    typeof node === "object" && node.const !== undefined ? [`${name} is ${JSON.stringify(node.const)}`] : []
  )
  return constants.length === 0 ? "" : ` when ${constants.join(" and ")}`
}

/** Returns a validator of documents against `root`, listing every violation once. */
export const makeValidator = (root: SchemaObject) => {
  const compiledPatterns = new Map<string, RegExp>()
  const matches = (pattern: string, text: string): boolean => {
    let compiled = compiledPatterns.get(pattern)
    if (compiled === undefined) {
      // JSON Schema patterns are ECMA-262 regular expressions with Unicode semantics.
      compiled = new RegExp(pattern, "u")
      compiledPatterns.set(pattern, compiled)
    }
    return compiled.test(text)
  }
  const resolve = (reference: string): SchemaNode => {
    const name = reference.startsWith("#/$defs/") ? reference.slice("#/$defs/".length) : undefined
    const target = name === undefined ? undefined : root.$defs?.[name]
    if (target === undefined) throw new Error(`unsupported or unknown $ref ${reference}`)
    return target
  }

  const visit = (node: SchemaNode, value: unknown, path: string, when: string, out: Array<Found>): void => {
    const fail = (at: string, rule: string): void => {
      out.push({ path: at, rule, when })
    }
    if (node === true) return
    if (node === false) {
      fail(path, "is not allowed")
      return
    }
    if (node.$ref !== undefined) visit(resolve(node.$ref), value, path, when, out)

    if (node.type !== undefined) {
      const types = typeof node.type === "string" ? [node.type] : node.type
      // Keywords below only constrain values of their own type; a wrong type is reported alone.
      if (!types.some((type) => hasJsonType(value, type))) {
        fail(path, `must be ${types.join(" or ")}`)
        return
      }
    }
    if (node.const !== undefined && value !== node.const) fail(path, `must be ${JSON.stringify(node.const)}`)
    if (node.enum !== undefined && !node.enum.some((allowed) => allowed === value)) {
      fail(path, `must be one of ${quoted(node.enum)}`)
    }
    if (typeof value === "string") {
      if (node.pattern !== undefined && !matches(node.pattern, value)) {
        fail(path, `must match pattern ${node.pattern}`)
      }
      if (node.maxLength !== undefined && codePointLength(value) > node.maxLength) {
        fail(path, `must be at most ${node.maxLength} characters`)
      }
    }
    if (typeof value === "number" && node.minimum !== undefined && value < node.minimum) {
      fail(path, `must be >= ${node.minimum}`)
    }
    if (Array.isArray(value) && node.items !== undefined) {
      const items = node.items
      for (const [index, item] of value.entries()) visit(items, item, `${path}/${index}`, when, out)
    }
    if (isJsonObject(value)) {
      for (const name of node.required ?? []) {
        if (!Object.hasOwn(value, name)) fail(`${path}/${pointerToken(name)}`, "is required")
      }
      for (const [name, propertyValue] of Object.entries(value)) {
        const declared = node.properties?.[name]
        const governing = declared ?? node.additionalProperties
        if (governing !== undefined) visit(governing, propertyValue, `${path}/${pointerToken(name)}`, when, out)
      }
    }
    for (const part of node.allOf ?? []) visit(part, value, path, when, out)
    if (node.if !== undefined && node.then !== undefined) {
      const conditionViolations: Array<Found> = []
      visit(node.if, value, path, "", conditionViolations)
      if (conditionViolations.length === 0) visit(node.then, value, path, describeCondition(node.if), out)
    }
  }

  return (document: unknown): ReadonlyArray<Violation> => {
    const found: Array<Found> = []
    visit(root, document, "", "", found)
    // A version's `then` may restate a rule its $ref already checks (unit_tests must be an
    // object); report each rule once per path, unconditioned form first.
    const seen = new Set<string>()
    return found.flatMap(({ path, rule, when }) => {
      const key = `${path}\u0000${rule}`
      if (seen.has(key)) return []
      seen.add(key)
      return [{ path, rule: rule + when }]
    })
  }
}
