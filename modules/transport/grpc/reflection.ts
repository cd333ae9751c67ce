/**
 * gRPC server reflection (grpc.reflection.v1 and v1alpha), so that `grpcurl` and similar tools
 * list and call the services without the proto file. The answers come from @grpc/reflection's
 * implementation over the embedded contract; the reflection protos are embedded too, and the
 * service is served like any other (through the server's interceptor: the controller's role
 * table lists it).
 */
import type * as grpc from "@grpc/grpc-js"
import { ReflectionV1Implementation } from "@grpc/reflection/build/src/implementations/reflection-v1.js"
import v1Text from "@grpc/reflection/build/proto/grpc/reflection/v1/reflection.proto" with { type: "text" }
import v1alphaText from "@grpc/reflection/build/proto/grpc/reflection/v1alpha/reflection.proto" with { type: "text" }
import { Stream } from "effect"
import { definitionFromText, isServiceDefinition, packageDefinition } from "./proto.ts"
import { bidiStream, type GrpcService } from "./server.ts"

/** The reflection library's message shapes: camelCase fields, enums and longs as strings. */
const reflectionLoaderOptions = { longs: String, enums: String, bytes: Array, defaults: true, oneofs: true }

export const reflectionServiceNames = [
  "grpc.reflection.v1.ServerReflection",
  "grpc.reflection.v1alpha.ServerReflection"
] as const

/** The method paths reflection serves (for the controller's role table). */
export const reflectionMethodPaths = reflectionServiceNames.map((name) => `/${name}/ServerReflectionInfo`)

const definitionOf = (text: string, name: string): grpc.ServiceDefinition => {
  const entry = definitionFromText(text, reflectionLoaderOptions)[name]
  if (!entry || !isServiceDefinition(entry)) throw new Error(`reflection proto has no service ${name}`)
  return entry as grpc.ServiceDefinition
}

/**
 * Reflection over the services a server registers (`services`: fully qualified names), served
 * as both reflection versions.
 */
export const reflectionServices = <Ctx>(services: ReadonlyArray<string>): ReadonlyArray<GrpcService<Ctx, never>> => {
  const implementation = new ReflectionV1Implementation(packageDefinition, { services: [...services] })
  const method = bidiStream<Ctx, never>((requests) =>
    Stream.map(requests, (request) =>
      implementation.handleServerReflectionRequest(
        request as Parameters<ReflectionV1Implementation["handleServerReflectionRequest"]>[0]
      )
    )
  )
  return [
    { definition: definitionOf(v1Text, reflectionServiceNames[0]), methods: { ServerReflectionInfo: method } },
    { definition: definitionOf(v1alphaText, reflectionServiceNames[1]), methods: { ServerReflectionInfo: method } }
  ]
}
