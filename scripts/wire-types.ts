/**
 * `bun scripts/wire-types.ts`: writes modules/transport/grpc/svc-v1.ts, the TypeScript form of
 * proto/svc/v1/svc.proto's messages, enums and services, from the proto itself. The test beside
 * that file renders it again and fails when the proto moved without it.
 *
 * The types describe messages as @grpc/proto-loader hands them over with the project's loader
 * options (keepCase, enums as names, longs as numbers, defaults filled in, oneofs named): every
 * scalar and list present, an unset message field null, a oneof's members optional.
 */
import { writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import protobuf from "protobufjs"

const scalarTypes: Readonly<Record<string, string>> = {
  double: "number",
  float: "number",
  int32: "number",
  uint32: "number",
  sint32: "number",
  fixed32: "number",
  sfixed32: "number",
  int64: "number",
  uint64: "number",
  sint64: "number",
  fixed64: "number",
  sfixed64: "number",
  bool: "boolean",
  string: "string",
  bytes: "Uint8Array"
}

const doc = (comment: string | null, indent: string): string => {
  if (comment === null || comment.trim() === "") return ""
  const lines = comment.replaceAll("*/", "*\\/").trim().split("\n")
  if (lines.length === 1) return `${indent}/** ${lines[0]} */\n`
  return `${indent}/**\n${lines.map((line) => `${indent} * ${line}`.trimEnd()).join("\n")}\n${indent} */\n`
}

/** The TypeScript name of a field's type, relative to the svc.v1 package. */
const typeName = (field: protobuf.Field): string => {
  const scalar = scalarTypes[field.type]
  if (scalar !== undefined) return scalar
  const resolved = field.resolve().resolvedType
  if (resolved === null) throw new Error(`${field.fullName}: unresolved type ${field.type}`)
  return resolved.name
}

const fieldType = (field: protobuf.Field): string => {
  if (field instanceof protobuf.MapField) {
    const key = scalarTypes[field.keyType] === "number" ? "number" : "string"
    return `Readonly<Record<${key}, ${typeName(field)}>>`
  }
  const element = typeName(field)
  if (field.repeated) return `ReadonlyArray<${element}>`
  const isMessage = field.resolvedType instanceof protobuf.Type
  return isMessage && field.partOf === null ? `${element} | null` : element
}

const renderMessage = (type: protobuf.Type): string => {
  const fields = type.fieldsArray
    .map((field) => {
      const optional = field.partOf !== null ? "?" : ""
      return `${doc(field.comment, "  ")}  readonly ${field.name}${optional}: ${fieldType(field)}`
    })
    .concat(
      type.oneofsArray.map(
        (oneof) =>
          `${doc(`Which member of the oneof is set (${oneof.fieldsArray.map((field) => field.name).join(", ")}).`, "  ")}` +
          `  readonly ${oneof.name}?: ${oneof.fieldsArray.map((field) => JSON.stringify(field.name)).join(" | ")}`
      )
    )
  if (fields.length === 0) return `${doc(type.comment, "")}export type ${type.name} = Record<string, never>\n`
  return `${doc(type.comment, "")}export interface ${type.name} {\n${fields.join("\n")}\n}\n`
}

const renderEnum = (enumType: protobuf.Enum): string => {
  const entries = Object.entries(enumType.values).map(
    ([name, number]) => `${doc(enumType.comments[name] ?? null, "  ")}  ${name}: ${number}`
  )
  return (
    `${doc(enumType.comment, "")}export const ${enumType.name} = {\n${entries.join(",\n")}\n} as const\n` +
    `export type ${enumType.name} = keyof typeof ${enumType.name}\n`
  )
}

const methodKind = (method: protobuf.Method): string =>
  method.requestStream
    ? method.responseStream
      ? "Bidi"
      : "ClientStreaming"
    : method.responseStream
      ? "ServerStreaming"
      : "Unary"

const renderServices = (services: ReadonlyArray<protobuf.Service>): string => {
  const blocks = services.map((service) => {
    const methods = service.methodsArray.map((method) => {
      method.resolve()
      const request = method.resolvedRequestType?.name ?? method.requestType
      const response = method.resolvedResponseType?.name ?? method.responseType
      return `${doc(method.comment, "    ")}    readonly ${method.name}: ${methodKind(method)}<${request}, ${response}>`
    })
    return `${doc(service.comment, "  ")}  readonly "${service.fullName.slice(1)}": {\n${methods.join("\n")}\n  }`
  })
  return `/** Every service of the contract, by its full name, and the shape of each of its methods. */\nexport interface Services {\n${blocks.join("\n")}\n}\n`
}

const header = `// Generated from proto/svc/v1/svc.proto by \`bun scripts/wire-types.ts\`: do not edit by hand.
/**
 * The svc.v1 wire types: every message, enum and service of the contract, as @grpc/proto-loader
 * hands messages over with transport/grpc/proto.ts's loader options (proto field names, enums as
 * their names, 64-bit integers as numbers, defaults filled in, an unset message field null, a
 * oneof's set member named by the oneof). A sender may leave any field out: see \`Outgoing\`.
 */

/** A message as a sender may give it: any field left out (the proto3 default) or null (unset). */
export type Outgoing<T> = T extends string | number | boolean | Uint8Array
  ? T
  : T extends ReadonlyArray<infer Element>
    ? ReadonlyArray<Outgoing<Element>>
    : { readonly [Field in keyof T]?: Outgoing<T[Field]> | null | undefined }

/** The shapes of a method: its request and response messages and how each travels. */
export interface Unary<Request, Response> {
  readonly kind: "unary"
  readonly request: Request
  readonly response: Response
}
export interface ServerStreaming<Request, Response> {
  readonly kind: "server-stream"
  readonly request: Request
  readonly response: Response
}
export interface ClientStreaming<Request, Response> {
  readonly kind: "client-stream"
  readonly request: Request
  readonly response: Response
}
export interface Bidi<Request, Response> {
  readonly kind: "bidi"
  readonly request: Request
  readonly response: Response
}

/** google.protobuf.Timestamp. */
export interface Timestamp {
  readonly seconds: number
  readonly nanos: number
}
`

/** The TypeScript text of svc-v1.ts for a proto text. */
export const renderWireTypes = (protoText: string): string => {
  const root = new protobuf.Root()
  const timestamp = protobuf.common.get("google/protobuf/timestamp.proto")
  if (timestamp?.nested) root.addJSON(timestamp.nested)
  protobuf.parse(protoText, root, { keepCase: true, alternateCommentMode: true })
  root.resolveAll()
  const namespace = root.lookup("svc.v1")
  if (!(namespace instanceof protobuf.Namespace)) throw new Error("proto has no package svc.v1")
  const parts: Array<string> = [header]
  const services: Array<protobuf.Service> = []
  for (const item of namespace.nestedArray) {
    if (item instanceof protobuf.Type) parts.push(renderMessage(item))
    else if (item instanceof protobuf.Enum) parts.push(renderEnum(item))
    else if (item instanceof protobuf.Service) services.push(item)
  }
  parts.push(renderServices(services))
  return parts.join("\n")
}

export const wireTypesPath = join(dirname(new URL(import.meta.url).pathname), "..", "modules/transport/grpc/svc-v1.ts")

if (import.meta.main) {
  const protoPath = join(dirname(new URL(import.meta.url).pathname), "..", "proto/svc/v1/svc.proto")
  writeFileSync(wireTypesPath, renderWireTypes(await Bun.file(protoPath).text()))
  console.log(`wrote ${wireTypesPath}`)
}
