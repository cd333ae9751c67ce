/**
 * The gRPC side of seed 001 for both executables: svc.v1.SvcScoring over the same scoring path
 * as REST. Who may call is the server's interceptor's to decide (the gate's `Ctx`: nothing on
 * svc-server, the principal on the controller); the tenant and roots come from the gate.
 */
import { Effect, Layer, Stream } from "effect"
import { grpcCodeName } from "../errors/index.ts"
import { ScoringMetricsService } from "../observability/metrics.ts"
import { buildInfo } from "../runtime/build-info.ts"
import type { StreamEvent } from "../scorer/index.ts"
import { serviceDefinition } from "../transport/grpc/proto.ts"
import { reflectionServices } from "../transport/grpc/reflection.ts"
import {
  allowAll,
  bidiStream,
  type GrpcServerOptions,
  grpcServiceLayer,
  type GrpcService,
  unary
} from "../transport/grpc/server.ts"
import { openGate, type ScoringGate } from "./gate.ts"
import { ScorerState } from "./scorer-state.ts"
import { ScoringApi } from "./scoring.ts"

const scoring = serviceDefinition("svc.v1.SvcScoring")

const streamResponse = (event: StreamEvent) =>
  event._tag === "Frame" ? { frame: event.frame } : { aggregate: event.result }

/**
 * SvcScoring handlers behind `gate`. `Score` reads files on this host, so each input is checked
 * on its opened descriptor by the gate's guard; `ScoreStream` carries its frames in the call and
 * reads no file (the tenant's slot cap applies as to Score); `Health` is SERVING exactly when
 * /readyz answers 200.
 */
export const scoringService = <Ctx, R>(gate: ScoringGate<Ctx, R>): GrpcService<Ctx, ScoringApi | ScorerState | R> => ({
  definition: scoring,
  methods: {
    Score: unary((request, call) =>
      Effect.gen(function* () {
        const api = yield* ScoringApi
        const guard = yield* gate.guard(call.context)
        return yield* api.score(
          { transport: "grpc", route: call.path, tenant: gate.tenant(call.context) },
          Effect.succeed(request),
          guard
        )
      })
    ),
    ScoreLadder: unary((request, call) =>
      Effect.gen(function* () {
        const api = yield* ScoringApi
        const guard = yield* gate.guard(call.context)
        return yield* api.ladder(
          { transport: "grpc", route: call.path, tenant: gate.tenant(call.context) },
          Effect.succeed(request),
          guard
        )
      })
    ),
    ScoreStream: bidiStream((requests, call) =>
      Stream.unwrap(
        Effect.map(ScoringApi, (api) =>
          api
            .scoreStream({ transport: "grpc", route: call.path, tenant: gate.tenant(call.context) }, requests)
            .pipe(Stream.map(streamResponse))
        )
      )
    ),
    ListModels: unary(() => Effect.flatMap(ScoringApi, (api) => api.listModels)),
    Health: unary(() =>
      Effect.flatMap(ScorerState, (state) =>
        Effect.map(state.readiness(true), (readiness) => ({
          status: readiness.ready ? "SERVING" : "NOT_SERVING",
          version: buildInfo.version
        }))
      )
    )
  }
})

/** Counts every finished call in `svc_grpc_requests_total` and its duration histogram. */
export const grpcCallMetrics = Effect.map(
  ScoringMetricsService,
  (metrics): GrpcServerOptions<unknown, never>["onCallEnd"] =>
    ({ path, code, seconds }) =>
      Effect.sync(() => {
        const labels = { method: path, code: grpcCodeName(code) }
        metrics.grpcRequests.inc(labels)
        metrics.grpcDuration.observe(labels, seconds)
      })
)

/** svc-server's gRPC listener: SvcScoring without authentication, counted in the metrics. */
export const scoringGrpcLayer = (name: string) =>
  Layer.unwrapEffect(
    Effect.map(grpcCallMetrics, (onCallEnd) =>
      grpcServiceLayer<void, ScoringApi | ScorerState>({
        name,
        services: [scoringService(openGate), ...reflectionServices<void>(["svc.v1.SvcScoring"])],
        intercept: allowAll,
        onCallEnd
      })
    )
  )
