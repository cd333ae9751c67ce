/**
 * gRPC client side: unary calls as Effects with a bearer token and a deadline, failures as a
 * typed GrpcCallError carrying the status code and message the server sent.
 */
import * as grpc from "@grpc/grpc-js"
import { Data, Duration, Effect } from "effect"
import { grpcMessageLimits } from "./limits.ts"
import { clientConstructor, type ServiceName } from "./proto.ts"

export class GrpcCallError extends Data.TaggedError("GrpcCallError")<{
  readonly method: string
  readonly code: grpc.status
  readonly message: string
}> {}

export interface ClientOptions {
  /** host:port of the server. */
  readonly address: string
  /** TLS with the system roots (or `caPem`); plaintext otherwise. */
  readonly tls: boolean
  readonly caPem?: Buffer | undefined
}

type UnaryCallback = (error: grpc.ServiceError | null, response: unknown) => void
type UnaryMethod = (
  request: unknown,
  metadata: grpc.Metadata,
  options: grpc.CallOptions,
  callback: UnaryCallback
) => grpc.ClientUnaryCall

const isUnaryMethod = (value: unknown): value is UnaryMethod => typeof value === "function"

export const makeClient = (service: ServiceName, options: ClientOptions): grpc.Client => {
  const Constructor = clientConstructor(service)
  const credentials = options.tls
    ? grpc.credentials.createSsl(options.caPem ?? null)
    : grpc.credentials.createInsecure()
  return new Constructor(options.address, credentials, grpcMessageLimits)
}

/** Metadata carrying `authorization: Bearer <token>` when there is a token. */
export const bearerMetadata = (token: string | undefined): grpc.Metadata => {
  const metadata = new grpc.Metadata()
  if (token !== undefined && token !== "") metadata.set("authorization", `Bearer ${token}`)
  return metadata
}

/** One unary call; interrupting the Effect cancels the call. */
export const callUnary = <Response>(
  client: grpc.Client,
  method: string,
  request: object,
  metadata: grpc.Metadata,
  timeout: Duration.DurationInput = Duration.seconds(30)
): Effect.Effect<Response, GrpcCallError> =>
  Effect.async<Response, GrpcCallError>((resume) => {
    const candidate: unknown = Reflect.get(client, method)
    if (!isUnaryMethod(candidate)) {
      resume(
        Effect.fail(new GrpcCallError({ method, code: grpc.status.UNIMPLEMENTED, message: `no method ${method}` }))
      )
      return
    }
    const deadline = new Date(Date.now() + Duration.toMillis(Duration.decode(timeout)))
    const call = candidate.call(client, request, metadata, { deadline }, (error, response) => {
      if (error)
        resume(Effect.fail(new GrpcCallError({ method, code: error.code, message: error.details || error.message })))
      else resume(Effect.succeed(response as Response))
    })
    return Effect.sync(() => call.cancel())
  })

type ServerStreamMethod = (
  request: unknown,
  metadata: grpc.Metadata,
  options: grpc.CallOptions
) => grpc.ClientReadableStream<unknown>

const isServerStreamMethod = (value: unknown): value is ServerStreamMethod => typeof value === "function"

/**
 * A server-streaming call read to its end, at most `maxMessages` kept (the call is cancelled
 * once that many arrived, so memory stays bounded); interrupting the Effect cancels the call.
 */
export const collectServerStream = <Response>(
  client: grpc.Client,
  method: string,
  request: object,
  metadata: grpc.Metadata,
  maxMessages: number,
  timeout: Duration.DurationInput = Duration.seconds(30)
): Effect.Effect<ReadonlyArray<Response>, GrpcCallError> =>
  Effect.async<ReadonlyArray<Response>, GrpcCallError>((resume) => {
    const candidate: unknown = Reflect.get(client, method)
    if (!isServerStreamMethod(candidate)) {
      resume(
        Effect.fail(new GrpcCallError({ method, code: grpc.status.UNIMPLEMENTED, message: `no method ${method}` }))
      )
      return
    }
    const deadline = new Date(Date.now() + Duration.toMillis(Duration.decode(timeout)))
    const received: Array<Response> = []
    let settled = false
    const settle = (effect: Effect.Effect<ReadonlyArray<Response>, GrpcCallError>) => {
      if (settled) return
      settled = true
      resume(effect)
    }
    const call = candidate.call(client, request, metadata, { deadline })
    call.on("data", (message: Response) => {
      if (received.length < maxMessages) received.push(message)
      if (received.length >= maxMessages) {
        settle(Effect.succeed(received))
        call.cancel()
      }
    })
    call.on("error", (error: grpc.ServiceError) =>
      settle(Effect.fail(new GrpcCallError({ method, code: error.code, message: error.details || error.message })))
    )
    call.on("end", () => settle(Effect.succeed(received)))
    return Effect.sync(() => call.cancel())
  })
