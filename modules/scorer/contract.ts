/**
 * The request contract written once: each field of the Effect Schema carries its documentation
 * (`doc`), and what its refusal adds to the rule the schema implies (`rule`); from that one
 * schema come the validation messages (`fieldRules`) and the OpenAPI 3.0.3 schemas
 * (`openApiComponents`, written to schemas/openapi.json by `npm run openapi`). The proto stays
 * hand-written, held to the schema by test/structure/score-request-contract.test.ts.
 */
import { Option, Schema, SchemaAST as AST } from "effect"

/** What a field's refusal says beyond the schema's own rule. */
export interface RuleWords {
  /** What a zero value means, or what a string is for: `(0: not set)`, `(a path to the reference video)`. */
  readonly note?: string
  /** What the number counts: `of frames per second`. */
  readonly unit?: string
  /** The whole rule, for what the schema's shape cannot say in words (a list, an object, a filter). */
  readonly text?: string
}

export interface FieldContract {
  /** The OpenAPI description. */
  readonly doc?: string
  readonly rule?: RuleWords
  /**
   * OpenAPI keywords the schema's shape does not give: bounds and patterns checked after decoding,
   * or `oneOf` for a union the decoder narrows with a filter (it then replaces the shape).
   */
  readonly openapi?: Readonly<Record<string, unknown>>
}

const ContractId = Symbol.for("svc/scorer/contract")
const ComponentId = Symbol.for("svc/scorer/contract/component")

/** A required field with its contract (custom annotations: the decoder's own messages stay as they are). */
export const field = <S extends Schema.Schema.Any>(schema: S, contract: FieldContract) =>
  Schema.propertySignature(schema).annotations({ [ContractId]: contract })

/** An optional field with its contract. */
export const optionalField = <S extends Schema.Schema.All>(schema: S, contract: FieldContract) =>
  Schema.optional(schema).annotations({ [ContractId]: contract })

/** A list's item schema (or any schema) with its contract. */
export const documented = <S extends Schema.Schema.Any>(schema: S, contract: FieldContract): S =>
  schema.annotations({ [ContractId]: contract }) as S

/** An object schema published as `#/components/schemas/<name>`, with its description. */
export const component = <S extends Schema.Schema.Any>(schema: S, name: string, doc?: string): S =>
  schema.annotations({ [ComponentId]: { name, doc } }) as S

const contractOf = (annotated: AST.Annotated): FieldContract =>
  Option.getOrElse(AST.getAnnotation<FieldContract>(annotated, ContractId), () => ({}))

const componentOf = (ast: AST.AST) =>
  Option.getOrUndefined(AST.getAnnotation<{ name: string; doc?: string }>(ast, ComponentId))

/** The schema under optional and nullable wrappers, and whether null is allowed. */
const unwrap = (ast: AST.AST): { readonly ast: AST.AST; readonly nullable: boolean } => {
  if (!AST.isUnion(ast)) return { ast, nullable: false }
  const isNull = (member: AST.AST) => AST.isLiteral(member) && member.literal === null
  const rest = ast.types.filter((member) => !AST.isUndefinedKeyword(member) && !isNull(member))
  const [only] = rest
  if (rest.length !== 1 || !only) return { ast, nullable: false }
  const inner = unwrap(only)
  return { ast: inner.ast, nullable: ast.types.some(isNull) || inner.nullable }
}

/** A number schema's kind and bounds, read through its refinements. */
interface NumberShape {
  readonly integer: boolean
  readonly minimum?: number
  readonly maximum?: number
}

const numberShape = (ast: AST.AST): NumberShape | undefined => {
  if (AST.isNumberKeyword(ast)) return { integer: false }
  if (!AST.isRefinement(ast)) return undefined
  const inner = numberShape(ast.from)
  if (!inner) return undefined
  const json = Option.getOrElse(AST.getJSONSchemaAnnotation(ast), () => ({})) as Record<string, unknown>
  return {
    ...inner,
    ...(json["type"] === "integer" ? { integer: true } : {}),
    ...(typeof json["minimum"] === "number" ? { minimum: json["minimum"] } : {}),
    ...(typeof json["maximum"] === "number" ? { maximum: json["maximum"] } : {})
  }
}

/** The values of a union of literals (undefined when it is not one). */
const literalsOf = (ast: AST.AST): ReadonlyArray<string | number> | undefined => {
  const members = AST.isUnion(ast) ? ast.types : [ast]
  const values = members.map((member) =>
    AST.isLiteral(member) && (typeof member.literal === "string" || typeof member.literal === "number")
      ? member.literal
      : undefined
  )
  return values.every((value) => value !== undefined) ? (values as ReadonlyArray<string | number>) : undefined
}

const quoted = (value: string | number) => (typeof value === "string" ? `"${value}"` : String(value))

// ---- rule messages ----

/** A field's rule in words: `is not a whole number from 0 to 64`, with the contract's note. */
const ruleOf = (ast: AST.AST, words: RuleWords): string => {
  if (words.text !== undefined) return words.text
  const note = words.note === undefined ? "" : ` ${words.note}`
  const literals = literalsOf(ast)
  if (literals) {
    // The zero value ("" or 0, proto3's "not set") is said by the note, not listed.
    const listed = literals.filter((value) => value !== "" && value !== 0)
    return `is not one of ${listed.map(quoted).join(", ")}${note}`
  }
  const number = numberShape(ast)
  if (number) {
    const kind = number.integer ? "a whole number" : "a number"
    const unit = words.unit === undefined ? "" : ` ${words.unit}`
    const range =
      number.minimum !== undefined && number.maximum !== undefined ? ` from ${number.minimum} to ${number.maximum}` : ""
    return `is not ${kind}${unit}${range}${note}`
  }
  if (AST.isBooleanKeyword(ast)) return `is not true or false${note}`
  if (AST.isStringKeyword(ast)) return `is not a string${note}`
  throw new Error(`no rule in words for a ${ast._tag}: give the field's rule text`)
}

/**
 * `<field path> → rule` for every field of an object schema and of the objects and lists in it
 * (`options.width`, `options.features[]`): the one source of the request's validation messages.
 */
export const fieldRules = (schema: Schema.Schema.Any, prefix = ""): Readonly<Record<string, string>> => {
  const rules: Record<string, string> = {}
  const visit = (ast: AST.AST, path: string, own: FieldContract) => {
    const { ast: inner } = unwrap(ast)
    const contract = { ...contractOf(inner), ...own }
    if (path !== "") rules[path] = ruleOf(inner, contract.rule ?? {})
    if (AST.isTypeLiteral(inner))
      for (const signature of inner.propertySignatures) {
        const name = String(signature.name)
        visit(signature.type, path === "" ? name : `${path}.${name}`, contractOf(signature))
      }
    if (AST.isTupleType(inner) && inner.rest[0]) visit(inner.rest[0].type, `${path}[]`, {})
  }
  visit(schema.ast, prefix, {})
  return rules
}

// ---- OpenAPI 3.0.3 ----

type OpenApiNode = Record<string, unknown>

const withDoc = (node: OpenApiNode, doc: string | undefined): OpenApiNode =>
  doc === undefined ? node : { ...node, description: doc }

/** A field's OpenAPI schema (`own`: its property's contract); components met on the way are added to `components`. */
const openApiOf = (ast: AST.AST, components: Record<string, OpenApiNode>, own: FieldContract = {}): OpenApiNode => {
  const { ast: inner, nullable } = unwrap(ast)
  const contract = { ...contractOf(inner), ...own }
  const named = componentOf(inner)
  let node: OpenApiNode
  if (named) {
    if (!(named.name in components)) components[named.name] = objectOf(inner, components, named.doc)
    const ref = { $ref: `#/components/schemas/${named.name}` }
    // OpenAPI 3.0 ignores a $ref's siblings: a described or nullable reference goes through allOf.
    node =
      nullable || contract.doc !== undefined
        ? { ...(nullable ? { type: "object", nullable: true } : {}), allOf: [ref] }
        : ref
  } else node = contract.openapi?.["oneOf"] === undefined ? shapeOf(inner, components) : {}
  if (nullable && !named) node = { ...node, nullable: true }
  return withDoc({ ...node, ...contract.openapi }, contract.doc)
}

const shapeOf = (ast: AST.AST, components: Record<string, OpenApiNode>): OpenApiNode => {
  const literals = literalsOf(ast)
  if (literals) {
    const integers = literals.every((value) => typeof value === "number" && Number.isInteger(value))
    return integers ? { type: "integer", format: "int32", enum: literals } : { type: "string", enum: literals }
  }
  const number = numberShape(ast)
  if (number)
    return {
      type: number.integer ? "integer" : "number",
      format: number.integer ? "int32" : "double",
      ...(number.minimum === undefined ? {} : { minimum: number.minimum }),
      ...(number.maximum === undefined ? {} : { maximum: number.maximum })
    }
  if (AST.isBooleanKeyword(ast)) return { type: "boolean" }
  if (AST.isStringKeyword(ast)) return { type: "string" }
  if (AST.isTupleType(ast) && ast.rest[0] && ast.elements.length === 0)
    return { type: "array", items: openApiOf(ast.rest[0].type, components) }
  if (AST.isTypeLiteral(ast)) return objectOf(ast, components, undefined)
  throw new Error(`no OpenAPI shape for a ${ast._tag}: give the field's openapi keywords`)
}

const objectOf = (ast: AST.AST, components: Record<string, OpenApiNode>, doc: string | undefined): OpenApiNode => {
  if (!AST.isTypeLiteral(ast)) throw new Error(`a component is an object, not a ${ast._tag}`)
  const required = ast.propertySignatures
    .filter((signature) => !signature.isOptional)
    .map((signature) => String(signature.name))
  return {
    type: "object",
    ...(doc === undefined ? {} : { description: doc }),
    additionalProperties: false,
    ...(required.length > 0 ? { required } : {}),
    properties: Object.fromEntries(
      ast.propertySignatures.map((signature) => [
        String(signature.name),
        openApiOf(signature.type, components, contractOf(signature))
      ])
    )
  }
}

/** The OpenAPI components of request schemas (each a `component`) and of every component in them. */
export const openApiComponents = (schemas: ReadonlyArray<Schema.Schema.Any>): Readonly<Record<string, OpenApiNode>> => {
  const components: Record<string, OpenApiNode> = {}
  for (const schema of schemas) openApiOf(schema.ast, components)
  return components
}
