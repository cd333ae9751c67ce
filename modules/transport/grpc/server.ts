/**
 * gRPC transport: grpc-js on a configured address, with handlers written as Effects.
 *
 * Every call first runs the server's one `intercept` (the controller puts authentication and
 * RBAC there; svc-server allows all), then its handler with the context the interceptor gave.
 * Failures of either become wire statuses through the error table (modules/errors) only. The server
 * is a scoped Layer: it logs the bound address like the HTTP transport and, at shutdown, lets
 * calls finish (tryShutdown) until a timeout, then cuts them (forceShutdown).
 */
import * as grpc from "@grpc/grpc-js"
import { grpcMessageLimits } from "./limits.ts"
import { Cause, Data, Duration, Effect, Exit, Layer, Runtime, Stream } from "effect"
import { type ListenAddress, listenAddress } from "../../config/env.ts"
import { defaultListenAddress } from "../../config/ports.ts"
import type { EdgeError } from "../../errors/table.ts"
import { grpcStatusOf } from "../errors.ts"

/** What a handler knows about its call besides the request. */
export interface CallInfo<Ctx> {
  /** The method's path, e.g. "/svc.v1.SvcScoring/Score". */
  readonly path: string
  readonly metadata: grpc.Metadata
  /** What the interceptor returned (the controller's principal). */
  readonly context: Ctx
}

/**
 * Runs before every handler. Its failure is the call's status (e.g. the policy module's
 * Unauthenticated/PermissionDenied, which the error table maps), and the handler never runs.
 */
export type Interceptor<Ctx, R> = (call: {
  readonly path: string
  readonly metadata: grpc.Metadata
}) => Effect.Effect<Ctx, EdgeError, R>

/** The interceptor of a server without authentication (svc-server, seed 001 section 5). */
export const allowAll: Interceptor<void, never> = () => Effect.void

/** Reading a client stream failed (client cancelled, malformed message). */
export class GrpcInputError extends Data.TaggedError("GrpcInputError")<{ readonly message: string }> {}

/** Messages are proto-loader plain objects; handlers decode what they receive. */
export type GrpcMessage = object

export type GrpcMethod<Ctx, R> =
  | {
      readonly kind: "unary"
      readonly run: (request: unknown, call: CallInfo<Ctx>) => Effect.Effect<GrpcMessage, EdgeError, R>
    }
  | {
      readonly kind: "serverStream"
      readonly run: (request: unknown, call: CallInfo<Ctx>) => Stream.Stream<GrpcMessage, EdgeError, R>
    }
  | {
      readonly kind: "bidi"
      readonly run: (
        requests: Stream.Stream<unknown, GrpcInputError>,
        call: CallInfo<Ctx>
      ) => Stream.Stream<GrpcMessage, EdgeError, R>
    }

/** A unary handler: one request in, one response or a typed failure out. */
export const unary = <Ctx, R>(
  run: (request: unknown, call: CallInfo<Ctx>) => Effect.Effect<GrpcMessage, EdgeError, R>
): GrpcMethod<Ctx, R> => ({ kind: "unary", run })

/** A server-streaming handler: one request in, a Stream of responses out (e.g. StreamJobs). */
export const serverStream = <Ctx, R>(
  run: (request: unknown, call: CallInfo<Ctx>) => Stream.Stream<GrpcMessage, EdgeError, R>
): GrpcMethod<Ctx, R> => ({ kind: "serverStream", run })

/** A bidirectional streaming handler: requests arrive as a Stream (pulled with backpressure). */
export const bidiStream = <Ctx, R>(
  run: (
    requests: Stream.Stream<unknown, GrpcInputError>,
    call: CallInfo<Ctx>
  ) => Stream.Stream<GrpcMessage, EdgeError, R>
): GrpcMethod<Ctx, R> => ({ kind: "bidi", run })

export interface GrpcService<Ctx, R> {
  readonly definition: grpc.ServiceDefinition
  /** Handlers by the method's name in the proto ("Score"); a missing one is UNIMPLEMENTED. */
  readonly methods: Readonly<Record<string, GrpcMethod<Ctx, R>>>
}

export interface GrpcServerOptions<Ctx, R> {
  /** Names the service in the "listening" log line. */
  readonly name: string
  readonly services: ReadonlyArray<GrpcService<Ctx, R>>
  readonly intercept: Interceptor<Ctx, R>
  /** Called once per finished call, for metrics. */
  readonly onCallEnd?: (end: {
    readonly path: string
    readonly code: grpc.status
    readonly seconds: number
  }) => Effect.Effect<void>
  /** How long shutdown waits for calls in flight before cutting them. Default 10 s. */
  readonly shutdownTimeout?: Duration.DurationInput
}

// grpc-js writes its own unstructured lines to stderr ("E No address added out of total 1
// resolved" on a port in use): a service's log is JSON lines, and every failure reaches it as a
// typed error. GRPC_VERBOSITY, when set, still asks grpc-js for its own lines.
if (process.env.GRPC_VERBOSITY === undefined) grpc.setLogVerbosity(grpc.logVerbosity.NONE)

/** The server could not bind its address (port in use, bad host). */
export class GrpcBindError extends Data.TaggedError("GrpcBindError")<{
  readonly address: string
  readonly reason: string
}> {
  override get message() {
    return `SVC_GRPC_ADDR: cannot listen on ${this.address}: ${this.reason}`
  }
}

/**
 * Longest status message sent (characters). The message travels as the grpc-message trailer, one
 * HTTP/2 header: an unbounded one (a refusal quoting a huge field) would exceed the peer's header
 * limit and end the stream with RST_STREAM instead of the status.
 */
export const MAX_STATUS_MESSAGE_LENGTH = 4096

const bounded = (message: string) =>
  message.length > MAX_STATUS_MESSAGE_LENGTH ? `${message.slice(0, MAX_STATUS_MESSAGE_LENGTH - 1)}…` : message

/** The wire status of a call's end; internal details only go to the log. */
const statusOfCause = (cause: Cause.Cause<unknown>): grpc.StatusObject => {
  if (Cause.isInterruptedOnly(cause))
    return { code: grpc.status.CANCELLED, details: "cancelled", metadata: new grpc.Metadata() }
  const failure = Cause.failureOption(cause)
  const wire = grpcStatusOf(failure._tag === "Some" ? failure.value : undefined)
  return { code: wire.code, details: bounded(wire.message), metadata: new grpc.Metadata() }
}

const hostPort = (address: ListenAddress) =>
  address.host.includes(":") ? `[${address.host}]:${address.port}` : `${address.host}:${address.port}`

/** Turns the Effect handlers into grpc-js handlers that run on `runtime`. */
const implement = <Ctx, R>(
  runtime: Runtime.Runtime<R>,
  options: GrpcServerOptions<Ctx, R>,
  service: GrpcService<Ctx, R>
): grpc.UntypedServiceImplementation => {
  const run = Runtime.runCallback(runtime)
  const finish = (path: string, started: number, code: grpc.status) => {
    if (options.onCallEnd) run(options.onCallEnd({ path, code, seconds: (performance.now() - started) / 1000 }))
  }
  // Defects are bugs: the caller gets INTERNAL, the log gets the cause.
  const logDefects = <A, E, R1>(path: string, effect: Effect.Effect<A, E, R1>) =>
    Effect.tapDefect(effect, (defect) =>
      Effect.logError("grpc handler defect").pipe(Effect.annotateLogs({ path, cause: Cause.pretty(Cause.die(defect)) }))
    )

  /** Runs the interceptor, then writes the handler's responses to a streaming call (server or bidi). */
  const streamOut = (
    call: grpc.ServerWritableStream<unknown, GrpcMessage> | grpc.ServerDuplexStream<unknown, GrpcMessage>,
    path: string,
    responses: (context: Ctx) => Stream.Stream<GrpcMessage, EdgeError, R>
  ) => {
    const started = performance.now()
    // Waits for 'drain' when grpc-js buffers, so a slow client slows the producer.
    const write = (message: GrpcMessage) =>
      Effect.async<void>((resume) => {
        if (call.write(message)) resume(Effect.void)
        else call.once("drain", () => resume(Effect.void))
      })
    const effect = options
      .intercept({ path, metadata: call.metadata })
      .pipe(Effect.flatMap((context) => Stream.runForEach(responses(context), write)))
    const cancel = run(logDefects(path, effect), {
      onExit: (exit) => {
        if (Exit.isSuccess(exit)) {
          call.end()
          finish(path, started, grpc.status.OK)
        } else {
          const status = statusOfCause(exit.cause)
          call.emit("error", status)
          finish(path, started, status.code)
        }
      }
    })
    call.on("cancelled", () => cancel())
  }

  const implementation: grpc.UntypedServiceImplementation = {}
  for (const [name, method] of Object.entries(service.methods)) {
    const definition = service.definition[name]
    if (!definition) throw new Error(`gRPC service has no method ${name}`)
    const path = definition.path
    if (method.kind === "unary") {
      const handler: grpc.handleUnaryCall<unknown, GrpcMessage> = (call, callback) => {
        const started = performance.now()
        const metadata = call.metadata
        const effect = options
          .intercept({ path, metadata })
          .pipe(Effect.flatMap((context) => method.run(call.request, { path, metadata, context })))
        const cancel = run(logDefects(path, effect), {
          onExit: (exit) => {
            if (Exit.isSuccess(exit)) {
              callback(null, exit.value)
              finish(path, started, grpc.status.OK)
            } else {
              const status = statusOfCause(exit.cause)
              callback(status)
              finish(path, started, status.code)
            }
          }
        })
        call.on("cancelled", () => cancel())
      }
      implementation[name] = handler
    } else if (method.kind === "serverStream") {
      const handler: grpc.handleServerStreamingCall<unknown, GrpcMessage> = (call) =>
        streamOut(call, path, (context) => method.run(call.request, { path, metadata: call.metadata, context }))
      implementation[name] = handler
    } else {
      const handler: grpc.handleBidiStreamingCall<unknown, GrpcMessage> = (call) => {
        // destroyOnReturn: false, or ending the input would destroy the call before the status is sent.
        const requests = Stream.fromAsyncIterable<unknown, GrpcInputError>(
          call.iterator({ destroyOnReturn: false }),
          (error) => new GrpcInputError({ message: error instanceof Error ? error.message : String(error) })
        )
        streamOut(call, path, (context) => method.run(requests, { path, metadata: call.metadata, context }))
      }
      implementation[name] = handler
    }
  }
  return implementation
}

/** grpc-js's bind failure in a few words: "address already in use" rather than its resolver's account. */
const bindReason = (message: string) => (/EADDRINUSE/.test(message) ? "address already in use" : message)

/** Serves `options.services` at `address` for the lifetime of the Layer. */
export const serveGrpc = <Ctx, R>(
  address: ListenAddress,
  options: GrpcServerOptions<Ctx, R>
): Layer.Layer<never, GrpcBindError, R> =>
  Layer.scopedDiscard(
    Effect.gen(function* () {
      const runtime = yield* Effect.runtime<R>()
      const server = new grpc.Server(grpcMessageLimits)
      for (const service of options.services)
        server.addService(service.definition, implement(runtime, options, service))
      const requested = hostPort(address)
      const port = yield* Effect.acquireRelease(
        Effect.async<number, GrpcBindError>((resume) =>
          server.bindAsync(requested, grpc.ServerCredentials.createInsecure(), (error, bound) =>
            resume(
              error
                ? Effect.fail(new GrpcBindError({ address: requested, reason: bindReason(error.message) }))
                : Effect.succeed(bound)
            )
          )
        ),
        () =>
          // A release runs uninterruptibly: without `interruptible` the timeout could not end the wait.
          Effect.interruptible(Effect.async<void>((resume) => server.tryShutdown(() => resume(Effect.void)))).pipe(
            Effect.timeoutTo({
              duration: options.shutdownTimeout ?? Duration.seconds(10),
              onSuccess: () => Effect.void,
              onTimeout: () =>
                Effect.logWarning("grpc shutdown timed out; cancelling calls in flight").pipe(
                  Effect.zipRight(Effect.sync(() => server.forceShutdown()))
                )
            }),
            Effect.flatten
          )
      )
      const bound = `grpc://${hostPort({ host: address.host, port })}`
      yield* Effect.logInfo("listening").pipe(
        Effect.annotateLogs({ transport: "grpc", address: bound, service: options.name })
      )
    })
  )

/** The gRPC side of a service on SVC_GRPC_ADDR (default: the service's port in config/ports.ts). */
export const grpcServiceLayer = <Ctx, R>(options: GrpcServerOptions<Ctx, R>) =>
  Layer.unwrapEffect(
    Effect.map(listenAddress("SVC_GRPC_ADDR", defaultListenAddress(options.name, "grpc")), (address) =>
      serveGrpc(address, options)
    )
  )
