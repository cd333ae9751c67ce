/**
 * The svc.v1 gRPC contract, loaded from the proto text embedded in the executable (no file
 * is read at run time). Serializers are wrapped to return Node Buffers: protobufjs returns a
 * Uint8Array under Bun, and grpc-js calls Buffer methods on what it gets.
 */
import * as grpc from "@grpc/grpc-js"
import * as protoLoader from "@grpc/proto-loader"
import protobuf from "protobufjs"
import protoText from "../../../proto/svc/v1/svc.proto" with { type: "text" }

/** How messages look in JavaScript: proto field names, enums as names, int64 as numbers. */
export const loaderOptions: protoLoader.Options = {
  keepCase: true,
  longs: Number,
  enums: String,
  defaults: true,
  oneofs: true
}

const asBuffer = (bytes: Uint8Array): Buffer =>
  Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)

type PackageEntry = protoLoader.PackageDefinition[string]

export const isServiceDefinition = (value: PackageEntry): value is protoLoader.ServiceDefinition =>
  !("format" in value) && Object.values(value).every((method: object) => "requestSerialize" in method)

/** A package definition from proto text embedded in the executable (no file read at run time). */
export const definitionFromText = (
  text: string,
  options: protoLoader.Options = loaderOptions
): protoLoader.PackageDefinition => {
  const root = new protobuf.Root()
  const timestamp = protobuf.common.get("google/protobuf/timestamp.proto")
  if (timestamp?.nested) root.addJSON(timestamp.nested)
  protobuf.parse(text, root, { keepCase: options.keepCase ?? false })
  const definition = protoLoader.fromJSON(root.toJSON(), options)
  for (const entry of Object.values(definition)) {
    if (!isServiceDefinition(entry)) continue
    for (const method of Object.values(entry)) {
      const serializeRequest = method.requestSerialize
      const serializeResponse = method.responseSerialize
      method.requestSerialize = (value) => asBuffer(serializeRequest(value))
      method.responseSerialize = (value) => asBuffer(serializeResponse(value))
    }
  }
  return definition
}

const loadDefinition = (): protoLoader.PackageDefinition => definitionFromText(protoText)

export const packageDefinition: protoLoader.PackageDefinition = loadDefinition()

/** Fully qualified names of the services in the contract. */
export const serviceNames = ["svc.v1.SvcScoring", "svc.v1.Jobs", "svc.v1.Nodes", "svc.v1.NodeStatus"] as const
export type ServiceName = (typeof serviceNames)[number]

export const serviceDefinition = (name: ServiceName): grpc.ServiceDefinition => {
  const entry = packageDefinition[name]
  if (!entry || !isServiceDefinition(entry)) throw new Error(`proto has no service ${name}`)
  return entry as grpc.ServiceDefinition
}

/** Every method the contract defines, as the gRPC path "/svc.v1.Jobs/SubmitJob". */
export const methodPaths = (): ReadonlyArray<string> =>
  serviceNames.flatMap((name) => Object.values(serviceDefinition(name)).map((method) => method.path))

/** A client constructor for a service, for tests, the node and the MCP client. */
export const clientConstructor = (name: ServiceName): grpc.ServiceClientConstructor =>
  grpc.makeGenericClientConstructor(serviceDefinition(name), name.split(".").pop() ?? name)
