/**
 * svc-operator as a Layer: locates the Kubernetes API in-cluster (service-account files and
 * KUBERNETES_SERVICE_HOST/_PORT, like the tenant source), then runs the operator (operator.ts)
 * with HTTP probes on SVC_HTTP_ADDR.
 */
import { HttpRouter } from "@effect/platform"
import { ConfigError, Effect, Either, Layer } from "effect"
import { inClusterAccess } from "../auth/tenant-source.ts"
import { jsonResponse, livenessRoutes, httpServiceLayer } from "../transport/http/server.ts"
import { operatorConfig } from "./config.ts"
import { makeKubeClient } from "./kube.ts"
import { runOperator } from "./operator.ts"
import { planTenants } from "./tenants.ts"

const started = Layer.scopedDiscard(
  Effect.gen(function* () {
    const config = yield* operatorConfig
    const access = yield* inClusterAccess(undefined, config.serviceAccountDir)
    const kube = yield* makeKubeClient(access)
    const plan = planTenants(config, access.namespace)
    // A start-up refusal like any setting's: it names the variables.
    if (Either.isLeft(plan))
      return yield* Effect.fail(ConfigError.InvalidData(["SVC_CONTROLLER_TOKEN_FILE"], plan.left))
    yield* runOperator({ config, kube, namespace: access.namespace, tenants: plan.right })
  })
)

const ready = Effect.succeed(jsonResponse({ status: "ready" }))

/** The operator and its probes (/healthz, /readyz). */
export const operatorLayer = (name: string) =>
  Layer.merge(started, httpServiceLayer(name, livenessRoutes.pipe(HttpRouter.get("/readyz", ready))))
