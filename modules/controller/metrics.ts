/**
 * The controller's metrics beyond the scoring surface's (modules/observability): auth refusals
 * by reason, JWKS fetches and cache state, tenant set age, jobs by state, live nodes, queue wait
 * and job duration. All live in the scoring surface's registry, so `/metrics` shows one set.
 * Gauges that read services are filled at scrape time (prom-client `collect`).
 */
import { Context, Effect, Layer } from "effect"
import { Counter, Gauge, Histogram } from "prom-client"
import { AuthMetrics, AuthStatus, type JwksCacheState } from "../auth/index.ts"
import { JOB_STATES, JobMetricsHooks, JobService } from "../jobs/index.ts"
import { ScoringMetricsService } from "../observability/metrics.ts"

const JWKS_STATES: ReadonlyArray<JwksCacheState> = ["empty", "fresh", "expired", "unusable"]

/** Seconds; a job may wait for a node or run for many minutes. */
const jobBuckets = [0.05, 0.1, 0.5, 1, 5, 15, 60, 300, 900, 3600, 14_400]

export class ControllerMetrics extends Context.Tag("svc/controller/ControllerMetrics")<
  ControllerMetrics,
  {
    readonly queueWait: Histogram
    readonly jobDuration: Histogram<"outcome">
  }
>() {
  /** Creates the metrics in the scoring registry; auth values are read from the auth services at each scrape. */
  static readonly layer = Layer.effect(
    ControllerMetrics,
    Effect.gen(function* () {
      const { registry } = yield* ScoringMetricsService
      const counters = yield* AuthMetrics
      const status = yield* AuthStatus
      const registers = [registry]
      new Counter({
        name: "svc_auth_refusals_total",
        help: "Refused requests by reason (token, role, tenant, stale tenant set).",
        labelNames: ["reason"] as const,
        registers,
        collect() {
          this.reset()
          for (const { reason, count } of counters.refusalsByReason()) this.inc({ reason }, count)
        }
      })
      new Counter({
        name: "svc_auth_jwks_fetches_total",
        help: "JWKS fetches by endpoint and outcome.",
        labelNames: ["endpoint", "outcome"] as const,
        registers,
        collect() {
          this.reset()
          for (const { endpoint, outcome, count } of counters.jwksFetchCounts()) this.inc({ endpoint, outcome }, count)
        }
      })
      new Gauge({
        name: "svc_auth_jwks_cache_state",
        help: "1 for the current state of each JWKS endpoint's key cache (empty, fresh, expired, unusable).",
        labelNames: ["endpoint", "state"] as const,
        registers,
        async collect() {
          this.reset()
          for (const cache of await Effect.runPromise(status.jwksCaches)) {
            for (const state of JWKS_STATES)
              this.set({ endpoint: cache.endpoint, state }, cache.state === state ? 1 : 0)
          }
        }
      })
      // Only a registry has a tenant set; the other modes export no such series.
      if (status.mode === "Registry") {
        const tenantSet = () => Effect.runPromise(status.tenantSet)
        new Gauge({
          name: "svc_auth_tenant_set_age_seconds",
          help: "Seconds since the tenant set was last read successfully.",
          registers,
          async collect() {
            this.set(((await tenantSet())?.ageMillis ?? 0) / 1000)
          }
        })
        new Gauge({
          name: "svc_auth_tenants",
          help: "Valid tenants in the current tenant set.",
          registers,
          async collect() {
            this.set((await tenantSet())?.tenantCount ?? 0)
          }
        })
      }
      return {
        queueWait: new Histogram({
          name: "svc_job_queue_wait_seconds",
          help: "Time from SubmitJob to the job being handed to a node.",
          buckets: jobBuckets,
          registers
        }),
        jobDuration: new Histogram({
          name: "svc_job_duration_seconds",
          help: "Time from hand-out to the final report, by outcome (finished, failed).",
          labelNames: ["outcome"] as const,
          buckets: jobBuckets,
          registers
        })
      }
    })
  )
}

/** The job service's sample hooks, bound to the controller's histograms. */
export const jobMetricsHooksLayer = Layer.effect(
  JobMetricsHooks,
  Effect.map(ControllerMetrics, (metrics) => ({
    observeQueueWait: (seconds: number) => metrics.queueWait.observe(seconds),
    observeJobDuration: (seconds: number, outcome: "finished" | "failed") =>
      metrics.jobDuration.observe({ outcome }, seconds)
  }))
)

/** Jobs by state and live nodes, read from the job service at each scrape. */
export const jobGaugesLayer = Layer.effectDiscard(
  Effect.gen(function* () {
    const { registry } = yield* ScoringMetricsService
    const jobs = yield* JobService
    // A failed store read leaves the previous values in place (the failure is the store's to log).
    const read = () => Effect.runPromise(Effect.either(jobs.gauges))
    new Gauge({
      name: "svc_jobs",
      help: "Jobs by state over every tenant.",
      labelNames: ["state"] as const,
      registers: [registry],
      async collect() {
        const gauges = await read()
        if (gauges._tag === "Left") return
        for (const state of JOB_STATES) this.set({ state }, gauges.right.jobsByState[state])
      }
    })
    new Gauge({
      name: "svc_nodes_live",
      help: "Node sessions that are live now.",
      registers: [registry],
      async collect() {
        const gauges = await read()
        if (gauges._tag === "Left") return
        this.set(gauges.right.liveNodes)
      }
    })
  })
)
