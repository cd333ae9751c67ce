/**
 * Seed 000, 4.1: every method the controller serves is in the role table, and a method that is
 * not is refused for every caller, even disabled mode's synthetic admin (tenant dev, svc:admin
 * and svc:node). The second part runs the controller's real gRPC services and interceptor
 * in-process, with one extra test service whose method the table does not list.
 */
import * as grpc from "@grpc/grpc-js"
import { ConfigProvider, Effect, Layer, Logger, LogLevel, ManagedRuntime } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  type ControllerGrpcRequirements,
  controllerGrpcServices,
  controllerInterceptor,
  controllerServicesLayer
} from "../../modules/controller/index.ts"
import { Messages, type Principal, ROLE_TABLE, unlistedMethods } from "../../modules/policy/index.ts"
import { methodPaths, serviceDefinition } from "../../modules/transport/grpc/proto.ts"
import { reflectionMethodPaths } from "../../modules/transport/grpc/reflection.ts"
import { serveGrpc, unary } from "../../modules/transport/grpc/server.ts"
import { modelDirEnv } from "../../local/executables.ts"
import { freePort } from "./controller-support.ts"

const servedPaths = controllerGrpcServices.flatMap((service) =>
  Object.values(service.definition).map((method) => method.path)
)

describe("the controller's served methods and the role table", () => {
  it("every served method is listed in the role table", () => {
    expect(servedPaths.length).toBeGreaterThan(0)
    expect(unlistedMethods(servedPaths)).toEqual([])
  })

  it("the controller serves every method of the contract and reflection, each with a handler", () => {
    expect([...servedPaths].sort()).toEqual([...methodPaths(), ...reflectionMethodPaths].sort())
    for (const service of controllerGrpcServices) {
      expect(Object.keys(service.methods).sort()).toEqual(Object.keys(service.definition).sort())
    }
  })

  it("unlistedMethods names a served method that is missing", () => {
    expect(unlistedMethods([...servedPaths, "/svc.v1.Probe/Probe"])).toEqual(["/svc.v1.Probe/Probe"])
  })
})

describe("a served method absent from the role table, disabled mode", () => {
  const health = serviceDefinition("svc.v1.SvcScoring")["Health"]
  if (health === undefined) throw new Error("the contract has no SvcScoring/Health")
  const probePath = "/svc.v1.Probe/Probe"
  const probe = { ...health, path: probePath, originalName: "Probe" }
  const scratch = mkdtempSync(join(tmpdir(), "svc-controller-methods-"))
  let handlerRuns = 0
  let address = ""
  let runtime: ManagedRuntime.ManagedRuntime<never, unknown>
  let client: grpc.Client

  beforeAll(async () => {
    address = `127.0.0.1:${await freePort()}`
    const [host = "127.0.0.1", port = "0"] = address.split(":")
    const server = serveGrpc<Principal, ControllerGrpcRequirements>(
      { host, port: Number(port) },
      {
        name: "controller-methods-test",
        services: [
          ...controllerGrpcServices,
          {
            definition: { Probe: probe },
            methods: {
              Probe: unary(() =>
                Effect.sync(() => {
                  handlerRuns++
                  return { status: "reached", version: "" }
                })
              )
            }
          }
        ],
        intercept: controllerInterceptor
      }
    )
    const config = ConfigProvider.fromMap(
      new Map([
        ["SVC_AUTH_DISABLED", "true"],
        ["SVC_STORE_PATH", join(scratch, "jobs.sqlite")],
        ...Object.entries(modelDirEnv)
      ])
    )
    runtime = ManagedRuntime.make(
      server.pipe(
        Layer.provide(controllerServicesLayer("controller-methods-test")),
        Layer.provide(Layer.setConfigProvider(config)),
        Layer.provide(Logger.minimumLogLevel(LogLevel.None))
      )
    )
    await runtime.runtimeEffect.pipe(Effect.runPromise)
    client = new grpc.Client(address, grpc.credentials.createInsecure())
  })
  afterAll(async () => {
    client.close()
    await runtime.dispose()
    rmSync(scratch, { recursive: true, force: true })
  })

  const call = (path: string, token: string | undefined) =>
    new Promise<{ readonly code: grpc.status; readonly details: string }>((resolve) => {
      const metadata = new grpc.Metadata()
      if (token !== undefined) metadata.set("authorization", `Bearer ${token}`)
      client.makeUnaryRequest(path, health.requestSerialize, health.responseDeserialize, {}, metadata, (error) =>
        resolve(error ? { code: error.code, details: error.details } : { code: grpc.status.OK, details: "" })
      )
    })

  it("the test method is really outside the table", () => {
    expect(ROLE_TABLE.has(probePath)).toBe(false)
  })

  it.each([
    ["no token", undefined],
    ["any token", "ignored-in-disabled-mode"]
  ])("is refused for the synthetic admin (%s), and its handler never runs", async (_, token) => {
    expect(await call(probePath, token)).toEqual({
      code: grpc.status.PERMISSION_DENIED,
      details: Messages.methodNotListed(probePath)
    })
    expect(handlerRuns).toBe(0)
  })

  it("a listed method on the same server passes the same interceptor", async () => {
    expect(await call("/svc.v1.SvcScoring/Health", undefined)).toEqual({ code: grpc.status.OK, details: "" })
  })
})
