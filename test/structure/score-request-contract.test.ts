/**
 * One score request, written once: the Effect Schema that decodes it (modules/scorer/request.ts
 * and ladder.ts, annotated through contract.ts) is the source of the validation messages and of
 * the OpenAPI schemas (schemas/openapi.json, written by `npm run openapi`); the proto
 * (proto/svc/v1/svc.proto) is written by hand. This test fails when they drift: the OpenAPI file
 * must hold exactly the derived schemas and pass the OpenAPI 3.0.3 validator, field names, types,
 * enums, ranges and patterns must agree, and the proto's comments must name every allowed value
 * of a string field (proto3 strings carry no enum). `shapeDrift` is shown to catch a drift too.
 */
import { Validator as OpenApiValidator } from "@seriousme/openapi-schema-validator"
import { JSONSchema } from "effect"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import protobuf from "protobufjs"
import { describe, expect, it } from "vitest"
import {
  ExtraFeature,
  FIELD_RULES,
  labelPattern,
  LadderRequest,
  maxModelsPerRequest,
  maxRenditions,
  maxThreads,
  modelNamePattern,
  precisionPattern,
  Rendition,
  RenditionOptions,
  ScoreOptions,
  ScoreRequest,
  withRequestSchemas
} from "../../modules/scorer/index.ts"
import { openApiText } from "../../scripts/openapi.ts"
import { repoRoot } from "../../local/executables.ts"

/** A field as the three documents can all say it. */
interface Shape {
  readonly type: "string" | "integer" | "number" | "boolean" | "array" | "object" | "string-or-integer"
  readonly enum?: ReadonlyArray<string | number>
  readonly minimum?: number
  readonly maximum?: number
  readonly items?: Shape
}

type Node = { readonly [key: string]: unknown }
const isNode = (value: unknown): value is Node => typeof value === "object" && value !== null
const nodes = (value: unknown): ReadonlyArray<Node> => (Array.isArray(value) ? value.filter(isNode) : [])

/** A JSON Schema node (Effect's output or OpenAPI 3.0's) as a Shape; `resolve` follows a $ref. */
const shapeOf = (node: Node, resolve: (ref: string) => Node): Shape => {
  if (typeof node["$ref"] === "string") {
    const target = resolve(node["$ref"])
    return { ...shapeOf(target, resolve), ...bounds(node) }
  }
  const variants = [...nodes(node["anyOf"]), ...nodes(node["oneOf"]), ...nodes(node["allOf"])].filter(
    (variant) => variant["type"] !== "null"
  )
  if (variants.length === 1 && variants[0]) return shapeOf(variants[0], resolve)
  if (variants.length > 1) {
    const types = new Set(variants.map((variant) => shapeOf(variant, resolve).type))
    if (types.size === 2 && types.has("string") && types.has("integer")) return { type: "string-or-integer" }
    throw new Error(`a union of ${[...types].join(", ")}`)
  }
  const values = Array.isArray(node["enum"]) ? (node["enum"] as ReadonlyArray<string | number>) : undefined
  const declared = node["type"]
  // Effect writes a literal union of whole numbers as a numeric enum.
  const type =
    declared === "number" && values?.every((value) => Number.isInteger(value))
      ? "integer"
      : declared === "integer" ||
          declared === "number" ||
          declared === "string" ||
          declared === "boolean" ||
          declared === "array"
        ? declared
        : declared === "object"
          ? "object"
          : undefined
  if (type === undefined) throw new Error(`no type in ${JSON.stringify(node)}`)
  return {
    type,
    ...(values === undefined ? {} : { enum: [...values].sort() }),
    ...bounds(node),
    ...(type === "array" && isNode(node["items"]) ? { items: shapeOf(node["items"], resolve) } : {})
  }
}

const bounds = (node: Node) => ({
  ...(typeof node["minimum"] === "number" ? { minimum: node["minimum"] } : {}),
  ...(typeof node["maximum"] === "number" ? { maximum: node["maximum"] } : {})
})

const propertiesOf = (node: Node, resolve: (ref: string) => Node): Node => {
  if (typeof node["$ref"] === "string") return propertiesOf(resolve(node["$ref"]), resolve)
  const object = [node, ...nodes(node["anyOf"]), ...nodes(node["allOf"])].find((n) => isNode(n["properties"]))
  const properties = object?.["properties"]
  if (!isNode(properties)) throw new Error("no properties")
  return properties
}

/** Field name → Shape of an object schema. */
const fieldShapes = (node: Node, resolve: (ref: string) => Node): Readonly<Record<string, Shape>> =>
  Object.fromEntries(
    Object.entries(propertiesOf(node, resolve)).map(([name, field]) => [name, shapeOf(field as Node, resolve)])
  )

/** Where two field lists differ: one line per field, empty when they agree. */
const shapeDrift = (
  source: Readonly<Record<string, Shape>>,
  other: Readonly<Record<string, Shape>>,
  compare: (a: Shape, b: Shape) => boolean
): ReadonlyArray<string> => {
  const names = [...new Set([...Object.keys(source), ...Object.keys(other)])].sort()
  return names.flatMap((name) => {
    const a = source[name]
    const b = other[name]
    if (a === undefined) return [`${name}: not in the schema`]
    if (b === undefined) return [`${name}: missing`]
    return compare(a, b) ? [] : [`${name}: ${JSON.stringify(a)} vs ${JSON.stringify(b)}`]
  })
}

const sameShape = (a: Shape, b: Shape): boolean => JSON.stringify(a) === JSON.stringify(b)

// ---- the three documents ----

const effectSchema = JSONSchema.make(ScoreRequest) as unknown as Node
const effectDefs = (effectSchema["$defs"] ?? {}) as Readonly<Record<string, Node>>
const resolveEffect = (ref: string): Node => effectDefs[ref.replace("#/$defs/", "")] ?? {}

const openapi = JSON.parse(readFileSync(join(repoRoot, "schemas/openapi.json"), "utf8")) as {
  components: { schemas: Readonly<Record<string, Node>> }
}
const resolveOpenApi =
  (document: typeof openapi) =>
  (ref: string): Node =>
    document.components.schemas[ref.replace("#/components/schemas/", "")] ?? {}

const protoRoot = protobuf.parse(readFileSync(join(repoRoot, "proto/svc/v1/svc.proto"), "utf8"), {
  keepCase: true,
  alternateCommentMode: true
}).root
const protoMessage = (name: string) => protoRoot.lookupType(`svc.v1.${name}`)

const protoScalar: Readonly<Record<string, Shape["type"]>> = {
  string: "string",
  int32: "integer",
  int64: "integer",
  uint32: "integer",
  double: "number",
  bool: "boolean"
}

/** A proto message's fields as Shapes: types only (ranges and value sets live in comments). */
const protoShapes = (name: string): Readonly<Record<string, Shape>> =>
  Object.fromEntries(
    Object.values(protoMessage(name).fields).map((field) => {
      const scalar = protoScalar[field.type]
      const type: Shape["type"] = scalar ?? "object"
      return [field.name, field.repeated ? { type: "array", items: { type } } : { type }]
    })
  )

/** Only what a proto can say: the kind of each field (and of a list's items). */
const sameType = (a: Shape, b: Shape): boolean =>
  (a.type === b.type || (a.type === "string-or-integer" && b.type === "string")) &&
  (a.items === undefined || b.items === undefined || a.items.type === b.items.type)

const effectRequest = fieldShapes(effectSchema, resolveEffect)
const effectOptions = fieldShapes(propertiesOf(effectSchema, resolveEffect)["options"] as Node, resolveEffect)
const openapiShapes = (document: typeof openapi, name: string) =>
  fieldShapes(document.components.schemas[name] ?? {}, resolveOpenApi(document))

describe("the score request contract", () => {
  it("schemas/openapi.json holds the request schemas derived from the Schema (`npm run openapi` writes them)", () => {
    const text = readFileSync(join(repoRoot, "schemas/openapi.json"), "utf8")
    expect(openApiText(withRequestSchemas(openapi))).toBe(text)
  })

  it("the OpenAPI document is valid OpenAPI 3.0.3", async () => {
    const validator = new OpenApiValidator()
    const verdict = await validator.validate(structuredClone(openapi))
    expect(verdict.errors ?? []).toEqual([])
    expect(verdict.valid).toBe(true)
    expect(validator.version).toBe("3.0")
  })

  it("every field has its rule in words, naming every allowed value (the backend's and the features')", () => {
    const paths = [
      ...Object.keys(ScoreRequest.fields),
      ...Object.keys(ScoreOptions.fields).map((name) => `options.${name}`),
      "options.features[]",
      "models[]"
    ]
    expect(Object.keys(FIELD_RULES).sort()).toEqual(paths.sort())
    for (const backend of ["auto", "cpu", "scalar", "avx2", "avx512"])
      expect(FIELD_RULES["options.backend"]).toContain(`"${backend}"`)
    for (const feature of ExtraFeature.literals) expect(FIELD_RULES["options.features[]"]).toContain(`"${feature}"`)
    expect(FIELD_RULES["options.threads"]).toBe(`is not a whole number from 0 to ${maxThreads}`)
  })

  it("the Effect Schema sees every field the types declare", () => {
    expect(Object.keys(effectRequest).sort()).toEqual(Object.keys(ScoreRequest.fields).sort())
    expect(Object.keys(effectOptions).sort()).toEqual(Object.keys(ScoreOptions.fields).sort())
  })

  it("OpenAPI has the Schema's fields with the same types, value sets and ranges", () => {
    expect(shapeDrift(effectRequest, openapiShapes(openapi, "ScoreRequest"), sameShape)).toEqual([])
    expect(shapeDrift(effectOptions, openapiShapes(openapi, "ScoreOptions"), sameShape)).toEqual([])
  })

  it("the proto has the Schema's fields with the same types", () => {
    expect(shapeDrift(effectRequest, protoShapes("ScoreRequest"), sameType)).toEqual([])
    expect(shapeDrift(effectOptions, protoShapes("ScoreOptions"), sameType)).toEqual([])
  })

  it("the proto's comments name every allowed value of a string option", () => {
    const fields = protoMessage("ScoreOptions").fields
    for (const [name, shape] of Object.entries(effectOptions)) {
      const values = (shape.items ?? shape).enum?.filter((value) => value !== "" && typeof value === "string") ?? []
      const comment = fields[name]?.comment ?? ""
      for (const value of values) expect(comment, `${name}: "${value}"`).toContain(`"${value}"`)
    }
    expect(fields["threads"]?.comment).toContain(`At most ${maxThreads}`)
  })

  it("OpenAPI's patterns and list bounds are the Schema module's", () => {
    const schemas = openapi.components.schemas
    const request = schemas["ScoreRequest"]?.["properties"] as Readonly<Record<string, Node>>
    const models = request["models"] ?? {}
    expect(models["maxItems"]).toBe(maxModelsPerRequest)
    expect((models["items"] as Node)["pattern"]).toBe(modelNamePattern.source)
    expect(request["model"]?.["pattern"]).toBe(`^(|${modelNamePattern.source.slice(1, -1)})$`)
    const precision = (schemas["ScoreOptions"]?.["properties"] as Readonly<Record<string, Node>>)["precision"] ?? {}
    const [text, count] = nodes(precision["oneOf"])
    const documented = new RegExp(String(text?.["pattern"]))
    const samples = ["", "lossless", "legacy", "0", "6", "17", "18", "06", "x", " 6"]
    for (const sample of samples) expect(documented.test(sample), sample).toBe(precisionPattern.test(sample))
    // A number of decimals given as a JSON number: the Schema checks it as its text.
    for (const n of [0, 1, 6, 17, 18]) {
      const inRange = n >= Number(count?.["minimum"]) && n <= Number(count?.["maximum"])
      expect(inRange, String(n)).toBe(precisionPattern.test(String(n)))
    }
  })

  it("a drift is found: a value dropped from an OpenAPI enum, a proto field renamed", () => {
    const drifted = structuredClone(openapi) as typeof openapi
    const backend = (drifted.components.schemas["ScoreOptions"]?.["properties"] as Record<string, { enum: string[] }>)[
      "backend"
    ]
    backend?.enum.pop()
    expect(shapeDrift(effectOptions, openapiShapes(drifted, "ScoreOptions"), sameShape)).toHaveLength(1)
    const renamed = { ...protoShapes("ScoreOptions"), frame_count: { type: "integer" } } as Record<string, Shape>
    delete renamed["frame_cnt"]
    expect(shapeDrift(effectOptions, renamed, sameType)).toEqual([
      "frame_cnt: missing",
      "frame_count: not in the schema"
    ])
  })
})

describe("the ladder request contract", () => {
  const ladderSchema = JSONSchema.make(LadderRequest) as unknown as Node
  const ladderDefs = (ladderSchema["$defs"] ?? {}) as Readonly<Record<string, Node>>
  const resolveLadder = (ref: string): Node => ladderDefs[ref.replace("#/$defs/", "")] ?? {}
  const ladder = fieldShapes(ladderSchema, resolveLadder)
  const renditionNode = propertiesOf(ladderSchema, resolveLadder)["renditions"] as Node
  const rendition = fieldShapes(renditionNode["items"] as Node, resolveLadder)
  const renditionOptions = fieldShapes(
    propertiesOf(renditionNode["items"] as Node, resolveLadder)["options"] as Node,
    resolveLadder
  )

  it("the Effect Schema sees every field the types declare", () => {
    expect(Object.keys(ladder).sort()).toEqual(Object.keys(LadderRequest.fields).sort())
    expect(Object.keys(rendition).sort()).toEqual(Object.keys(Rendition.fields).sort())
    expect(Object.keys(renditionOptions).sort()).toEqual(Object.keys(RenditionOptions.fields).sort())
  })

  it("OpenAPI and the proto have the Schema's fields (OpenAPI: same value sets and ranges)", () => {
    expect(shapeDrift(ladder, openapiShapes(openapi, "ScoreLadderRequest"), sameShape)).toEqual([])
    expect(shapeDrift(rendition, openapiShapes(openapi, "Rendition"), sameShape)).toEqual([])
    expect(shapeDrift(renditionOptions, openapiShapes(openapi, "RenditionOptions"), sameShape)).toEqual([])
    expect(shapeDrift(ladder, protoShapes("ScoreLadderRequest"), sameType)).toEqual([])
    expect(shapeDrift(rendition, protoShapes("Rendition"), sameType)).toEqual([])
    expect(shapeDrift(renditionOptions, protoShapes("RenditionOptions"), sameType)).toEqual([])
  })

  it("OpenAPI's label pattern and rendition bounds are the Schema module's", () => {
    const schemas = openapi.components.schemas
    const renditions = (schemas["ScoreLadderRequest"]?.["properties"] as Readonly<Record<string, Node>>)["renditions"]
    expect(renditions?.["minItems"]).toBe(1)
    expect(renditions?.["maxItems"]).toBe(maxRenditions)
    const label = (schemas["Rendition"]?.["properties"] as Readonly<Record<string, Node>>)["label"]
    expect(label?.["pattern"]).toBe(labelPattern.source)
  })
})
