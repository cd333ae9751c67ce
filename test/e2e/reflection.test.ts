/**
 * gRPC server reflection on svc-server and svc-controller, through @grpc/reflection's own
 * reflection protocol definition and a plain grpc-js client, as `grpcurl list` / `describe`
 * do: the services are listed and their descriptors resolve, in both protocol versions.
 */
import * as grpc from "@grpc/grpc-js"
import { PROTO_LOADER_OPTS } from "@grpc/reflection/build/src/implementations/common/constants.js"
import * as protoLoader from "@grpc/proto-loader"
import { FileDescriptorProto } from "protobufjs/ext/descriptor"
import { mkdtempSync, rmSync } from "node:fs"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type RunningService, startService } from "../../local/executables.ts"

const reflectionPackage = dirname(createRequire(import.meta.url).resolve("@grpc/reflection/package.json"))
const versions = ["v1", "v1alpha"] as const

/** A reflection client of one protocol version, from the package's own proto. */
const reflectionClient = (version: (typeof versions)[number], address: string) => {
  const definition = protoLoader.loadSync(
    join(reflectionPackage, "build", "proto", "grpc", "reflection", version, "reflection.proto"),
    PROTO_LOADER_OPTS
  )
  const loaded = grpc.loadPackageDefinition(definition) as unknown as {
    grpc: { reflection: Record<string, { ServerReflection: grpc.ServiceClientConstructor }> }
  }
  const Client = loaded.grpc.reflection[version]?.ServerReflection
  if (!Client) throw new Error(`no ServerReflection in ${version}`)
  const client = new Client(address, grpc.credentials.createInsecure())
  /** One request on the bidirectional stream, its one response. */
  const ask = (request: object): Promise<Record<string, unknown>> =>
    new Promise((resolve, reject) => {
      const call = (
        client as unknown as { ServerReflectionInfo: () => grpc.ClientDuplexStream<object, Record<string, unknown>> }
      ).ServerReflectionInfo()
      call.on("data", (response: Record<string, unknown>) => {
        resolve(response)
        call.end()
      })
      call.on("error", reject)
      call.write(request)
    })
  return { ask, close: () => client.close() }
}

const listServices = async (version: (typeof versions)[number], address: string) => {
  const client = reflectionClient(version, address)
  try {
    const response = await client.ask({ listServices: "*" })
    const listed = response["listServicesResponse"] as { service: ReadonlyArray<{ name: string }> }
    return listed.service.map((service) => service.name).sort()
  } finally {
    client.close()
  }
}

/** The parts of a decoded FileDescriptorProto these tests read. */
interface FileDescriptor {
  readonly service: ReadonlyArray<{ readonly name: string; readonly method: ReadonlyArray<{ readonly name: string }> }>
  readonly messageType: ReadonlyArray<{ readonly name: string }>
}

const describeSymbol = async (version: (typeof versions)[number], address: string, symbol: string) => {
  const client = reflectionClient(version, address)
  try {
    const response = await client.ask({ fileContainingSymbol: symbol })
    const files = (response["fileDescriptorResponse"] as { fileDescriptorProto: ReadonlyArray<Buffer | number[]> })
      .fileDescriptorProto
    return files.map(
      (bytes) => FileDescriptorProto.decode(Buffer.from(bytes as Uint8Array)) as unknown as FileDescriptor
    )
  } finally {
    client.close()
  }
}

describe("reflection on svc-server", () => {
  let server: RunningService
  beforeAll(async () => {
    server = await startService("svc-server", { listeners: ["http", "grpc"] })
  })
  afterAll(async () => {
    await server.stop()
  })

  it.each(versions)("%s lists the scoring service and describes its methods", async (version) => {
    const address = server.grpc ?? ""
    expect(await listServices(version, address)).toEqual(["svc.v1.SvcScoring"])
    const files = await describeSymbol(version, address, "svc.v1.SvcScoring")
    const service = files.flatMap((file) => file.service).find((entry) => entry.name === "SvcScoring")
    expect(service?.method.map((method) => method.name).sort()).toEqual([
      "Health",
      "ListModels",
      "Score",
      "ScoreLadder",
      "ScoreStream"
    ])
    const messages = files.flatMap((file) => file.messageType.map((message) => message.name))
    expect(messages).toEqual(expect.arrayContaining(["ScoreRequest", "ScoreResponse", "ScoreOptions"]))
  })
})

describe("reflection on svc-controller", () => {
  const scratch = mkdtempSync(join(tmpdir(), "svc-reflection-"))
  let controller: RunningService
  beforeAll(async () => {
    controller = await startService("svc-controller", {
      env: { SVC_AUTH_DISABLED: "true", SVC_STORE_PATH: join(scratch, "jobs.sqlite") },
      listeners: ["http", "grpc"]
    })
  })
  afterAll(async () => {
    await controller.stop()
    rmSync(scratch, { recursive: true, force: true })
  })

  it.each(versions)("%s lists jobs, nodes, node status and scoring, and describes the job service", async (version) => {
    const address = controller.grpc ?? ""
    expect(await listServices(version, address)).toEqual([
      "svc.v1.Jobs",
      "svc.v1.NodeStatus",
      "svc.v1.Nodes",
      "svc.v1.SvcScoring"
    ])
    const files = await describeSymbol(version, address, "svc.v1.Jobs")
    const service = files.flatMap((file) => file.service).find((entry) => entry.name === "Jobs")
    expect(service?.method.map((method) => method.name).sort()).toEqual([
      "CancelJob",
      "GetJob",
      "StreamJobs",
      "SubmitJob"
    ])
  })
})
