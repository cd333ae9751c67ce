/** svc-operator configuration from SVC_* variables (environment only, like every executable). */
import { Config, Option } from "effect"
import { hostname } from "node:os"
import { SERVICE_ACCOUNT_DIR } from "../auth/tenant-source.ts"
import { flag, integerIn, optionalText, text } from "../config/env.ts"

export const operatorConfig = Config.all({
  /** host:port of the controller's gRPC listener. */
  controllerAddress: text("SVC_CONTROLLER_ADDR", "localhost:50051"),
  /** File holding the operator's bearer token (svc:writer); re-read when it changes. */
  tokenFile: optionalText("SVC_CONTROLLER_TOKEN_FILE"),
  tls: flag("SVC_CONTROLLER_TLS", false),
  caFile: optionalText("SVC_CONTROLLER_CA_FILE"),
  /** Namespaces whose SvcJobs are watched (comma-separated); default: the operator's own. */
  namespaces: Config.map(optionalText("SVC_OPERATOR_NAMESPACES"), (value) =>
    Option.map(value, (list) =>
      list
        .split(",")
        .map((name) => name.trim())
        .filter((name) => name !== "")
    )
  ),
  /** Holder identity in the leader Lease (the chart passes the pod name). */
  identity: Config.map(
    optionalText("SVC_OPERATOR_IDENTITY"),
    Option.getOrElse(() => hostname())
  ),
  /** Service-account directory (token, ca.crt, namespace); for out-of-cluster runs and tests. */
  serviceAccountDir: text("SVC_OPERATOR_SERVICE_ACCOUNT_DIR", SERVICE_ACCOUNT_DIR),
  /** Full re-list of SvcJobs and SvcNodes this often, besides the watch (milliseconds). */
  resyncMillis: integerIn("SVC_OPERATOR_RESYNC_MS", 30_000, 200, 3_600_000),
  /** Lease duration: a leader that stops renewing is replaced after this long (seconds). */
  leaseSeconds: integerIn("SVC_OPERATOR_LEASE_SECONDS", 15, 1, 300),
  leaseName: text("SVC_OPERATOR_LEASE_NAME", "svc-operator")
})

export type OperatorConfig = Config.Config.Success<typeof operatorConfig>
