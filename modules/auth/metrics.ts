/**
 * Plain counters the controller reads and registers with prom-client (this module
 * stays free of any metrics library). One instance per process, shared by the
 * authenticator and the JWKS caches.
 */
import { Context, Layer } from "effect"
import type { RefusalReason } from "../policy/errors.ts"
export type JwksFetchOutcome = "success" | "failure"

export class AuthCounters {
  private readonly refusals = new Map<RefusalReason, number>()
  private readonly jwksFetches = new Map<string, number>()

  recordRefusal(reason: RefusalReason): void {
    this.refusals.set(reason, (this.refusals.get(reason) ?? 0) + 1)
  }

  recordJwksFetch(endpoint: string, outcome: JwksFetchOutcome): void {
    const key = JSON.stringify([endpoint, outcome])
    this.jwksFetches.set(key, (this.jwksFetches.get(key) ?? 0) + 1)
  }

  /** Token refusals by reason since start (counter `auth_refusals_total{reason}`). */
  refusalsByReason(): ReadonlyArray<{ readonly reason: RefusalReason; readonly count: number }> {
    return [...this.refusals].map(([reason, count]) => ({ reason, count }))
  }

  /** JWKS fetches by endpoint and outcome since start (counter `auth_jwks_fetches_total`). */
  jwksFetchCounts(): ReadonlyArray<{
    readonly endpoint: string
    readonly outcome: JwksFetchOutcome
    readonly count: number
  }> {
    return [...this.jwksFetches].map(([key, count]) => {
      const [endpoint, outcome] = JSON.parse(key) as [string, JwksFetchOutcome]
      return { endpoint, outcome, count }
    })
  }
}

export class AuthMetrics extends Context.Tag("svc/auth/AuthMetrics")<AuthMetrics, AuthCounters>() {
  static readonly layer: Layer.Layer<AuthMetrics> = Layer.sync(AuthMetrics, () => new AuthCounters())
}
