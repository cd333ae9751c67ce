/** The gRPC side of seed 001: svc.v1.SvcScoring over the same scoring path as REST. */
import { Effect, Layer, Stream } from "effect"
import { grpcCodeName } from "../errors/index.ts"
import { ScoringMetricsService } from "../observability/metrics.ts"
import { buildInfo } from "../runtime/build-info.ts"
import type { StreamEvent } from "../scorer/scorer.ts"
import { serviceDefinition } from "../transport/grpc/proto.ts"
import { reflectionServices } from "../transport/grpc/reflection.ts"
import { allowAll, bidiStream, grpcServiceLayer, type GrpcService, unary } from "../transport/grpc/server.ts"
import { ScorerState } from "./scorer-state.ts"
import { ScoringApi } from "./scoring.ts"

const scoring = serviceDefinition("svc.v1.SvcScoring")

export const streamResponse = (event: StreamEvent) =>
  event._tag === "Frame" ? { frame: event.frame } : { aggregate: event.result }

/** SvcScoring handlers; `Ctx` is whatever the server's interceptor provides (unused here). */
export const scoringService = <Ctx>(): GrpcService<Ctx, ScoringApi | ScorerState> => ({
  definition: scoring,
  methods: {
    Score: unary((request, call) =>
      Effect.flatMap(ScoringApi, (api) => api.score({ transport: "grpc", route: call.path }, Effect.succeed(request)))
    ),
    ScoreStream: bidiStream((requests, call) =>
      Stream.unwrap(
        Effect.map(ScoringApi, (api) =>
          api.scoreStream({ transport: "grpc", route: call.path }, requests).pipe(Stream.map(streamResponse))
        )
      )
    ),
    ListModels: unary(() => Effect.flatMap(ScoringApi, (api) => api.listModels)),
    // SERVING exactly when /readyz answers 200.
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

/** svc-server's gRPC listener: SvcScoring without authentication, counted in the metrics. */
export const scoringGrpcLayer = (name: string) =>
  Layer.unwrapEffect(
    Effect.map(ScoringMetricsService, (metrics) =>
      grpcServiceLayer<void, ScoringApi | ScorerState>({
        name,
        services: [scoringService<void>(), ...reflectionServices<void>(["svc.v1.SvcScoring"])],
        intercept: allowAll,
        onCallEnd: ({ path, code, seconds }) =>
          Effect.sync(() => {
            const labels = { method: path, code: grpcCodeName(code) }
            metrics.grpcRequests.inc(labels)
            metrics.grpcDuration.observe(labels, seconds)
          })
      })
    )
  )
