/**
 * The one typed client of the svc.v1 contract (svc-v1.ts): a service's methods as functions with
 * their request and response messages, a bearer token and a deadline per call, failures as a
 * typed GrpcCallError carrying the status code and message the server sent. Unary methods are
 * Effects, server-streaming methods Streams; interrupting either cancels the call. The raw gRPC
 * calls live here and nowhere else.
 */
import * as grpc from "@grpc/grpc-js"
import { Data, Duration, Effect, Stream } from "effect"
import { grpcMessageLimits } from "./limits.ts"
import { type ServiceName, serviceDefinition } from "./proto.ts"
import type { Outgoing, ServerStreaming, Services, Unary } from "./svc-v1.ts"

export type { ServiceName } from "./proto.ts"

/** gRPC status codes by name (`Status.NOT_FOUND`), so callers need no transport library. */
export const Status = grpc.status
export type Status = grpc.status

/** The name of a status code ("NOT_FOUND"), or the number when it is not one. */
export const statusName = (code: number): string => grpc.status[code] ?? String(code)

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

export interface CallOptions {
  /** Sent as `authorization: Bearer <token>` when set and not empty. */
  readonly bearer?: string | undefined
  /** Deadline of the call: a unary call's defaults to 30 s; a stream has none unless given. */
  readonly timeout?: Duration.DurationInput | undefined
}

type UnaryCall<Method> =
  Method extends Unary<infer Request, infer Response>
    ? (request: Outgoing<Request>, options?: CallOptions) => Effect.Effect<Response, GrpcCallError>
    : never
type StreamCall<Method> =
  Method extends ServerStreaming<infer Request, infer Response>
    ? (request: Outgoing<Request>, options?: CallOptions) => Stream.Stream<Response, GrpcCallError>
    : never

/** The unary and server-streaming methods of a service (streams from the client are not offered). */
export type ServiceClient<Service extends ServiceName> = {
  readonly [Method in keyof Services[Service] as Services[Service][Method] extends
    | Unary<unknown, unknown>
    | ServerStreaming<unknown, unknown>
    ? Method
    : never]: Services[Service][Method] extends Unary<unknown, unknown>
    ? UnaryCall<Services[Service][Method]>
    : StreamCall<Services[Service][Method]>
}

const metadataOf = (bearer: string | undefined): grpc.Metadata => {
  const metadata = new grpc.Metadata()
  if (bearer !== undefined && bearer !== "") metadata.set("authorization", `Bearer ${bearer}`)
  return metadata
}

const deadlineOf = (timeout: Duration.DurationInput) => ({
  deadline: new Date(Date.now() + Duration.toMillis(Duration.decode(timeout)))
})

const failure = (method: string, error: grpc.ServiceError) =>
  new GrpcCallError({ method, code: error.code, message: error.details || error.message })

type Method = grpc.MethodDefinition<unknown, unknown>

const unaryCall =
  (client: grpc.Client, name: string, method: Method) =>
  (request: unknown, options: CallOptions = {}): Effect.Effect<unknown, GrpcCallError> =>
    Effect.async((resume) => {
      const call = client.makeUnaryRequest(
        method.path,
        method.requestSerialize,
        method.responseDeserialize,
        request,
        metadataOf(options.bearer),
        deadlineOf(options.timeout ?? Duration.seconds(30)),
        (error, response) => resume(error ? Effect.fail(failure(name, error)) : Effect.succeed(response))
      )
      return Effect.sync(() => call.cancel())
    })

const streamCall =
  (client: grpc.Client, name: string, method: Method) =>
  (request: unknown, options: CallOptions = {}): Stream.Stream<unknown, GrpcCallError> =>
    Stream.async((emit) => {
      const call = client.makeServerStreamRequest(
        method.path,
        method.requestSerialize,
        method.responseDeserialize,
        request,
        metadataOf(options.bearer),
        options.timeout === undefined ? {} : deadlineOf(options.timeout)
      )
      call.on("data", (message: unknown) => void emit.single(message))
      call.on("error", (error: grpc.ServiceError) => void emit.fail(failure(name, error)))
      call.on("end", () => void emit.end())
      return Effect.sync(() => call.cancel())
    })

/** A client of one service of the contract, closed when the scope ends. */
export const serviceClient = <Service extends ServiceName>(service: Service, options: ClientOptions) =>
  Effect.map(
    Effect.acquireRelease(
      Effect.sync(() => {
        const credentials = options.tls
          ? grpc.credentials.createSsl(options.caPem ?? null)
          : grpc.credentials.createInsecure()
        return new grpc.Client(options.address, credentials, grpcMessageLimits)
      }),
      (client) => Effect.sync(() => client.close())
    ),
    (client) => {
      const methods: Record<string, unknown> = {}
      for (const [name, method] of Object.entries(serviceDefinition(service))) {
        if (method.requestStream) continue
        methods[name] = method.responseStream ? streamCall(client, name, method) : unaryCall(client, name, method)
      }
      // The methods were built from the same contract the Services type was generated from.
      return methods as ServiceClient<Service>
    }
  )
