/**
 * Metric definitions of the scoring services, in one place so that svc-server and the
 * controller expose the same names. Each service owns its prom-client Registry and passes it
 * in; nothing here touches prom-client's global registry.
 */
import { Context, Effect, Layer } from "effect"
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client"
import { buildInfo } from "../runtime/build-info.ts"

/** Seconds; probes answer in microseconds, scores can take minutes. */
const requestBuckets = [0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 15, 60, 300]
const scoreBuckets = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 900]

/** Creates every metric of the scoring surface in `registry`, plus process metrics. */
export const makeScoringMetrics = (registry: Registry, executable: string) => {
  const registers = [registry]
  collectDefaultMetrics({ register: registry })
  const build = new Gauge({
    name: "svc_build_info",
    help: "Build of this process (value 1): package version and git commit.",
    labelNames: ["executable", "version", "commit"] as const,
    registers
  })
  build.set({ executable, version: buildInfo.version, commit: buildInfo.commit }, 1)
  return {
    registry,
    httpRequests: new Counter({
      name: "svc_http_requests_total",
      help: "HTTP requests by route and status.",
      labelNames: ["method", "route", "status"] as const,
      registers
    }),
    httpDuration: new Histogram({
      name: "svc_http_request_duration_seconds",
      help: "HTTP request duration by route and status.",
      labelNames: ["method", "route", "status"] as const,
      buckets: requestBuckets,
      registers
    }),
    grpcRequests: new Counter({
      name: "svc_grpc_requests_total",
      help: "gRPC calls by method and status code.",
      labelNames: ["method", "code"] as const,
      registers
    }),
    grpcDuration: new Histogram({
      name: "svc_grpc_request_duration_seconds",
      help: "gRPC call duration by method and status code.",
      labelNames: ["method", "code"] as const,
      buckets: requestBuckets,
      registers
    }),
    scoresInFlight: new Gauge({
      name: "svc_scores_in_flight",
      help: "Scores running now (HTTP and gRPC share the SVC_MAX_CONCURRENT_SCORES cap).",
      registers
    }),
    scoreDuration: new Histogram({
      name: "svc_score_duration_seconds",
      help: "Duration of scores that ran, by transport and outcome (ok or the error kind).",
      labelNames: ["transport", "outcome"] as const,
      buckets: scoreBuckets,
      registers
    }),
    framesScored: new Counter({
      name: "svc_frames_scored_total",
      help: "Frames scored by successful scores.",
      labelNames: ["transport"] as const,
      registers
    }),
    errors: new Counter({
      name: "svc_score_errors_total",
      help: "Refused or failed score requests by error kind (the typed error's tag).",
      labelNames: ["transport", "kind"] as const,
      registers
    })
  } as const
}

export type ScoringMetrics = ReturnType<typeof makeScoringMetrics>

/** The scoring metrics of this process as a service. */
export class ScoringMetricsService extends Context.Tag("svc/ScoringMetrics")<ScoringMetricsService, ScoringMetrics>() {
  /** A fresh registry per layer build, so tests and executables never share state. */
  static readonly layer = (executable: string) =>
    Layer.sync(ScoringMetricsService, () => makeScoringMetrics(new Registry(), executable))
}

/** The Prometheus text exposition of a registry, with its content type. */
export const exposition = (registry: Registry) =>
  Effect.map(
    Effect.promise(() => registry.metrics()),
    (text) => ({ text, contentType: registry.contentType })
  )
