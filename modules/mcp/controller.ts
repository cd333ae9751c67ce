/**
 * svc-mcp's side of the controller: the gRPC calls its tools make (svc.v1.Jobs and
 * svc.v1.SvcScoring), each with the caller's bearer token. Failures keep the controller's status
 * and message; a controller that cannot be reached is told apart from one that refused.
 */
import { Chunk, Data, Duration, Effect, Option, Stream } from "effect"
import { readFile } from "node:fs/promises"
import { type CallOptions, type GrpcCallError, Status, serviceClient, statusName } from "../transport/grpc/client.ts"
import type {
  JobState as WireJobState,
  Outgoing,
  ScoreLadderRequest as WireLadderRequest,
  ScoreRequest as WireScoreRequest
} from "../transport/grpc/svc-v1.ts"
import { controllerClientConfig } from "./config.ts"

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
  error.code === Status.DEADLINE_EXCEEDED ||
  (error.code === Status.UNAVAILABLE &&
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
    const jobs = yield* serviceClient("svc.v1.Jobs", options)
    const scoring = yield* serviceClient("svc.v1.SvcScoring", options)

    const classify = (error: GrpcCallError): ControllerError => {
      const status = statusName(error.code)
      return connectionFailure(error)
        ? new ControllerUnreachable({ address: config.address, status, message: error.message })
        : new ControllerRefusal({ method: error.method, status, message: error.message })
    }
    const call = (bearer: string | undefined, timeout?: Duration.DurationInput): CallOptions => ({ bearer, timeout })

    return {
      address: config.address,
      submitJob: (token: string | undefined, request: Outgoing<WireScoreRequest>) =>
        Effect.mapError(jobs.SubmitJob({ request }, call(token)), classify),
      getJob: (token: string | undefined, id: string) => Effect.mapError(jobs.GetJob({ id }, call(token)), classify),
      cancelJob: (token: string | undefined, id: string) =>
        Effect.mapError(jobs.CancelJob({ id }, call(token)), classify),
      /** The tenant's jobs, newest first (StreamJobs without follow), at most `limit` kept. */
      listJobs: (token: string | undefined, states: ReadonlyArray<WireJobState>, limit: number) =>
        jobs
          .StreamJobs({ states, follow: false, limit }, call(token, Duration.seconds(30)))
          .pipe(Stream.take(limit), Stream.runCollect, Effect.map(Chunk.toReadonlyArray), Effect.mapError(classify)),
      /** SvcScoring.ListModels; UNIMPLEMENTED from a controller (or contract) without it. */
      listModels: (token: string | undefined) => Effect.mapError(scoring.ListModels({}, call(token)), classify),
      score: (token: string | undefined, request: Outgoing<WireScoreRequest>) =>
        Effect.mapError(scoring.Score(request, call(token, scoreTimeout)), classify),
      /** SvcScoring.ScoreLadder: every rendition against the reference, in one pass over it. */
      scoreLadder: (token: string | undefined, request: Outgoing<WireLadderRequest>) =>
        Effect.mapError(scoring.ScoreLadder(request, call(token, scoreTimeout)), classify),
      /** SubmitJob of a ladder (SubmitJobRequest.ladder). */
      submitLadderJob: (token: string | undefined, ladder: Outgoing<WireLadderRequest>) =>
        Effect.mapError(jobs.SubmitJob({ ladder }, call(token)), classify)
    } as const
  })
}) {}
