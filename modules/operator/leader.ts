/**
 * Leader election over a coordination.k8s.io/v1 Lease in the operator's namespace, as
 * client-go's leader election does it: the holder renews every third of the lease duration; a
 * candidate takes the lease over once its renewTime is older than the duration. Every write
 * carries the resourceVersion it read, so two candidates never both win (one gets 409).
 */
import { Duration, Effect, Ref } from "effect"
import type { OperatorConfig } from "./config.ts"
import { isConflict, isNotFound, type KubeClient, type KubeError } from "./kube.ts"

export type LeaderState = Ref.Ref<boolean>

interface Lease {
  readonly apiVersion: string
  readonly kind: string
  readonly metadata: { readonly name: string; readonly resourceVersion?: string }
  readonly spec: {
    readonly holderIdentity?: string
    readonly leaseDurationSeconds?: number
    readonly acquireTime?: string
    readonly renewTime?: string
    readonly leaseTransitions?: number
  }
}

/** MicroTime as the API writes it (RFC 3339 with microseconds). */
const microTime = (millis: number) => new Date(millis).toISOString().replace("Z", "000Z")

/** One attempt: true when this identity holds the lease afterwards. */
export const tryLease = (
  kube: KubeClient,
  namespace: string,
  config: Pick<OperatorConfig, "identity" | "leaseName" | "leaseSeconds">
): Effect.Effect<boolean, KubeError> =>
  Effect.gen(function* () {
    const path = `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(namespace)}/leases`
    const now = Date.now()
    const mine = (transitions: number, acquireTime: string) => ({
      holderIdentity: config.identity,
      leaseDurationSeconds: config.leaseSeconds,
      acquireTime,
      renewTime: microTime(now),
      leaseTransitions: transitions
    })
    const found = yield* kube
      .request<Lease>("GET", `${path}/${encodeURIComponent(config.leaseName)}`)
      .pipe(Effect.catchIf(isNotFound, () => Effect.succeed(undefined)))
    if (found === undefined) {
      return yield* kube
        .request<Lease>("POST", path, {
          apiVersion: "coordination.k8s.io/v1",
          kind: "Lease",
          metadata: { name: config.leaseName },
          spec: mine(0, microTime(now))
        })
        .pipe(
          Effect.as(true),
          Effect.catchIf(isConflict, () => Effect.succeed(false))
        )
    }
    const spec = found.spec
    const held = spec.holderIdentity === config.identity
    const renewed = spec.renewTime === undefined ? 0 : Date.parse(spec.renewTime)
    const expired = now - renewed > (spec.leaseDurationSeconds ?? config.leaseSeconds) * 1000
    if (!held && !expired && spec.holderIdentity) return false
    const transitions = (spec.leaseTransitions ?? 0) + (held ? 0 : 1)
    return yield* kube
      .request<Lease>("PUT", `${path}/${encodeURIComponent(config.leaseName)}`, {
        ...found,
        spec: mine(transitions, held && spec.acquireTime !== undefined ? spec.acquireTime : microTime(now))
      })
      .pipe(
        Effect.as(true),
        Effect.catchIf(isConflict, () => Effect.succeed(false))
      )
  })

/** Runs forever: keeps `leader` true exactly while this identity holds a fresh lease. */
export const runLeaderElection = (
  kube: KubeClient,
  namespace: string,
  config: Pick<OperatorConfig, "identity" | "leaseName" | "leaseSeconds">,
  leader: LeaderState
) => {
  const period = Duration.millis(Math.max(100, (config.leaseSeconds * 1000) / 3))
  let lastRenew = 0
  const round = Effect.gen(function* () {
    const outcome = yield* Effect.either(tryLease(kube, namespace, config))
    const was = yield* Ref.get(leader)
    let leading: boolean
    if (outcome._tag === "Right") {
      leading = outcome.right
      if (leading) lastRenew = Date.now()
    } else {
      // Cannot reach the API: keep leading only while the last renewal is still valid.
      leading = was && Date.now() - lastRenew < config.leaseSeconds * 1000
      yield* Effect.logWarning(`lease renewal failed: ${outcome.left.message}`)
    }
    if (leading !== was) {
      yield* Ref.set(leader, leading)
      yield* Effect.logInfo(leading ? "leading" : "not leading").pipe(
        Effect.annotateLogs({ identity: config.identity, lease: `${namespace}/${config.leaseName}` })
      )
    }
    yield* Effect.sleep(period)
  })
  return Effect.forever(round)
}
