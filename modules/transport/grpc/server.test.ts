/**
 * The generic gRPC layer in process: the interceptor runs before every handler and its refusal
 * is the call's status; handler failures map through the error table; defects are INTERNAL
 * with a generic message; bidi calls end with their status; the bound address is logged.
 */
import * as grpc from "@grpc/grpc-js"
import { Effect, Exit, Layer, Logger, Scope, Stream } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { PermissionDenied } from "../../policy/errors.ts"
import { InvalidScoreRequest, ScorerBusy } from "../../scorer/index.ts"
import { MAX_GRPC_MESSAGE_BYTES } from "./limits.ts"
import { serviceDefinition } from "./proto.ts"
import { bidiStream, serveGrpc, unary } from "./server.ts"

const definition = serviceDefinition("svc.v1.SvcScoring")
const handled: Array<string> = []
const logged: Array<Record<string, unknown>> = []

const server = serveGrpc(
  { host: "127.0.0.1", port: 0 },
  {
    name: "test",
    services: [
      {
        definition,
        methods: {
          // Health answers with the interceptor's context, Score fails as the request says.
          Health: unary((_, call) => Effect.succeed({ status: call.context, version: "test" })),
          Score: unary((request) => {
            handled.push("Score")
            const model = typeof request === "object" && request !== null && "model" in request ? request.model : ""
            if (model === "busy") return Effect.fail(new ScorerBusy({ limit: 1 }))
            if (model === "bug") return Effect.die(new Error("a bug with private detail"))
            return Effect.fail(new InvalidScoreRequest({ message: "reference: is required" }))
          }),
          ScoreStream: bidiStream((requests) => requests.pipe(Stream.map(() => ({ frame: { frame: 7, metrics: {} } }))))
        }
      }
    ],
    intercept: ({ metadata, path }) => {
      if (metadata.get("x-role")[0] !== "writer") return Effect.fail(PermissionDenied.methodNotListed(path))
      return Effect.succeed("SERVING")
    }
  }
)

let scope: Scope.CloseableScope
let client: grpc.Client
const method = (name: string) => {
  const found = definition[name]
  if (!found) throw new Error(name)
  return found
}
const writer = () => {
  const metadata = new grpc.Metadata()
  metadata.set("x-role", "writer")
  return metadata
}
const call = (name: string, request: object, metadata: grpc.Metadata) =>
  new Promise<{ readonly error: grpc.ServiceError | null; readonly response: Record<string, unknown> | undefined }>(
    (resolve) => {
      const { path, requestSerialize, responseDeserialize } = method(name)
      client.makeUnaryRequest<object, Record<string, unknown>>(
        path,
        requestSerialize,
        responseDeserialize,
        request,
        metadata,
        (error, response) => resolve({ error, response })
      )
    }
  )

beforeAll(async () => {
  scope = Effect.runSync(Scope.make())
  const capture = Logger.make(({ message, annotations }) =>
    logged.push({ message, ...Object.fromEntries(annotations) })
  )
  await Effect.runPromise(
    Layer.buildWithScope(server, scope).pipe(Effect.provide(Logger.replace(Logger.defaultLogger, capture)))
  )
  const address = logged.find((line) => JSON.stringify(line.message).includes("listening"))?.address
  client = new grpc.Client(String(address).replace("grpc://", ""), grpc.credentials.createInsecure())
})
afterAll(async () => {
  client.close()
  await Effect.runPromise(Scope.close(scope, Exit.void))
})

describe("serveGrpc", () => {
  it("logs the bound address like the HTTP transport", () => {
    expect(logged).toContainEqual(
      expect.objectContaining({
        transport: "grpc",
        address: expect.stringMatching(/^grpc:\/\/127\.0\.0\.1:\d+$/),
        service: "test"
      })
    )
  })

  it("runs the interceptor first: its refusal is the status and the handler never runs", async () => {
    const { error } = await call("Score", { model: "x" }, new grpc.Metadata())
    expect(error?.code).toBe(grpc.status.PERMISSION_DENIED)
    expect(error?.details).toBe('method "/svc.v1.SvcScoring/Score" is not permitted')
    expect(handled).toEqual([])
  })

  it("hands the interceptor's context to the handler", async () => {
    const { error, response } = await call("Health", {}, writer())
    expect(error).toBeNull()
    expect(response?.status).toBe("SERVING")
  })

  it("maps handler failures through the error table", async () => {
    expect((await call("Score", { model: "x" }, writer())).error).toMatchObject({
      code: grpc.status.INVALID_ARGUMENT,
      details: "reference: is required"
    })
    expect((await call("Score", { model: "busy" }, writer())).error).toMatchObject({
      code: grpc.status.RESOURCE_EXHAUSTED
    })
  })

  it("sets its message limit explicitly: 10 MiB is received (grpc-js alone would stop at 4 MiB), more than the limit is not", async () => {
    const tenMiB = "x".repeat(10 * 1024 * 1024)
    expect((await call("Score", { model: "x", reference: tenMiB }, writer())).error).toMatchObject({
      code: grpc.status.INVALID_ARGUMENT
    })
    const tooLarge = "x".repeat(MAX_GRPC_MESSAGE_BYTES + 1)
    expect((await call("Score", { model: "x", reference: tooLarge }, writer())).error).toMatchObject({
      code: grpc.status.RESOURCE_EXHAUSTED
    })
  })

  it("answers a defect with INTERNAL and a generic message, and logs it", async () => {
    const { error } = await call("Score", { model: "bug" }, writer())
    expect(error).toMatchObject({ code: grpc.status.INTERNAL, details: "internal error" })
    expect(logged).toContainEqual(
      expect.objectContaining({ path: "/svc.v1.SvcScoring/Score", cause: expect.stringContaining("private detail") })
    )
  })

  it("ends a bidi call with OK after the input ends", async () => {
    const { path, requestSerialize, responseDeserialize } = method("ScoreStream")
    const stream = client.makeBidiStreamRequest<object, Record<string, unknown>>(
      path,
      requestSerialize,
      responseDeserialize,
      writer()
    )
    const received: Array<Record<string, unknown>> = []
    const status = new Promise<grpc.StatusObject>((resolve) => stream.on("status", resolve))
    stream.on("data", (message: Record<string, unknown>) => received.push(message))
    stream.write({ header: { model: "" } })
    stream.write({ header: { model: "" } })
    stream.end()
    expect((await status).code).toBe(grpc.status.OK)
    expect(received).toHaveLength(2)
  })
})
