/**
 * svc-mcp's side of the controller: the gRPC calls its tools make (svc.v1.Jobs and
 * svc.v1.SvcScoring), each with the caller's bearer token. Failures keep the controller's status
 * and message; a controller that cannot be reached is told apart from one that refused.
 */
import * as grpc from "@grpc/grpc-js"
import { Data, Duration, Effect, Option } from "effect"
import { readFile } from "node:fs/promises"
import {
  bearerMetadata,
  callUnary,
  collectServerStream,
  type GrpcCallError,
  makeClient
} from "../transport/grpc/client.ts"
import { controllerClientConfig } from "./config.ts"
import type {
  WireJob,
  WireJobState,
  WireLadderRequest,
  WireLadderResponse,
  WireModelList,
  WireScoreRequest,
  WireScoreResponse
} from "./wire.ts"

/** The controller answered with an error status: its code name and message, verbatim. */
export class ControllerRefusal extends Data.TaggedError("ControllerRefusal")<{
  readonly method: string
  readonly status: string
  readonly message: string
}> {}

/** The controller could not be reached (or did not answer in time). */
export class ControllerUnreachable extends Data.TaggedError("ControllerUnreachable")<{
  readonly address: string
  readonly status: string
  readonly message: string
}> {}

export type ControllerError = ControllerRefusal | ControllerUnreachable

/** How long a synchronous score may take before the call is given up. */
const scoreTimeout = Duration.minutes(10)

/**
 * grpc-js reports a channel it could not connect as UNAVAILABLE with its own wording; the
 * controller's own UNAVAILABLE refusals (a stale tenant set) come with the controller's message.
 */
const connectionFailure = (error: GrpcCallError) =>
  error.code === grpc.status.DEADLINE_EXCEEDED ||
  (error.code === grpc.status.UNAVAILABLE &&
    /^(No connection established|Connection dropped|Name resolution failed|failed to connect)/i.test(error.message))

export class Controller extends Effect.Service<Controller>()("svc/McpController", {
  scoped: Effect.gen(function* () {
    const config = yield* controllerClientConfig
    const caPem = yield* Option.match(config.caFile, {
      onNone: () => Effect.succeed(undefined),
      onSome: (path) =>
        Effect.tryPromise({
          try: () => readFile(path),
          catch: (error) =>
            new Error(
              `SVC_CONTROLLER_CA_FILE ${path} cannot be read: ${error instanceof Error ? error.message : error}`
            )
        })
    })
    const options = { address: config.address, tls: config.tls, caPem }
    const open = (service: "svc.v1.Jobs" | "svc.v1.SvcScoring") =>
      Effect.acquireRelease(
        Effect.sync(() => makeClient(service, options)),
        (client) => Effect.sync(() => client.close())
      )
    const jobs = yield* open("svc.v1.Jobs")
    const scoring = yield* open("svc.v1.SvcScoring")

    const classify = (error: GrpcCallError): ControllerError => {
      const status = grpc.status[error.code] ?? String(error.code)
      return connectionFailure(error)
        ? new ControllerUnreachable({ address: config.address, status, message: error.message })
        : new ControllerRefusal({ method: error.method, status, message: error.message })
    }

    const unary = <Response>(
      client: grpc.Client,
      method: string,
      request: object,
      token: string | undefined,
      timeout?: Duration.DurationInput
    ) => Effect.mapError(callUnary<Response>(client, method, request, bearerMetadata(token), timeout), classify)

    return {
      address: config.address,
      submitJob: (token: string | undefined, request: WireScoreRequest) =>
        unary<WireJob>(jobs, "SubmitJob", { request }, token),
      getJob: (token: string | undefined, id: string) => unary<WireJob>(jobs, "GetJob", { id }, token),
      cancelJob: (token: string | undefined, id: string) => unary<WireJob>(jobs, "CancelJob", { id }, token),
      /** The tenant's jobs, newest first (StreamJobs without follow). */
      listJobs: (token: string | undefined, states: ReadonlyArray<WireJobState>, limit: number) =>
        Effect.mapError(
          collectServerStream<WireJob>(
            jobs,
            "StreamJobs",
            { states, follow: false, limit },
            bearerMetadata(token),
            limit
          ),
          classify
        ),
      /** SvcScoring.ListModels; UNIMPLEMENTED from a controller (or contract) without it. */
      listModels: (token: string | undefined) => unary<WireModelList>(scoring, "ListModels", {}, token),
      score: (token: string | undefined, request: WireScoreRequest) =>
        unary<WireScoreResponse>(scoring, "Score", request, token, scoreTimeout),
      /** SvcScoring.ScoreLadder: every rendition against the reference, in one pass over it. */
      scoreLadder: (token: string | undefined, request: WireLadderRequest) =>
        unary<WireLadderResponse>(scoring, "ScoreLadder", request, token, scoreTimeout),
      /** SubmitJob of a ladder (SubmitJobRequest.ladder). */
      submitLadderJob: (token: string | undefined, ladder: WireLadderRequest) =>
        unary<WireJob>(jobs, "SubmitJob", { ladder }, token)
    } as const
  })
}) {}
