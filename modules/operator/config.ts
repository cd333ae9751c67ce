/** svc-operator configuration from SVC_* variables (environment only, like every executable). */
import { Config, ConfigError, Either, Option } from "effect"
import { hostname } from "node:os"
import { SERVICE_ACCOUNT_DIR } from "../auth/tenant-source.ts"
import { flag, integerIn, optionalText, text } from "../config/env.ts"

/** A namespace name (DNS-1123 label). */
const NAMESPACE_PATTERN = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/

/**
 * SVC_OPERATOR_TENANT_TOKENS: `namespace=/path/to/token,...`, each namespace's own tenant token
 * (svc:writer of that tenant). A SvcJob is submitted with its namespace's token only.
 */
export const parseTenantTokens = (text: string): Either.Either<ReadonlyMap<string, string>, string> => {
  const tokens = new Map<string, string>()
  for (const entry of text.split(",")) {
    if (entry.trim() === "") continue
    const at = entry.indexOf("=")
    const namespace = entry.slice(0, at).trim()
    const path = entry.slice(at + 1).trim()
    if (at < 0 || !NAMESPACE_PATTERN.test(namespace) || path === "")
      return Either.left(`entries are namespace=/path/to/token-file; got "${entry.trim()}"`)
    if (tokens.has(namespace)) return Either.left(`namespace "${namespace}" is listed twice`)
    tokens.set(namespace, path)
  }
  return Either.right(tokens)
}

export const operatorConfig = Config.all({
  /** host:port of the controller's gRPC listener. */
  controllerAddress: text("SVC_CONTROLLER_ADDR", "localhost:50051"),
  /**
   * File holding one shared bearer token (svc:writer); re-read when it changes. Only for an
   * operator watching one namespace: several namespaces need SVC_OPERATOR_TENANT_TOKENS.
   */
  tokenFile: optionalText("SVC_CONTROLLER_TOKEN_FILE"),
  /** Namespace → token file of that namespace's tenant. */
  tenantTokens: Config.mapOrFail(optionalText("SVC_OPERATOR_TENANT_TOKENS"), (value) =>
    Option.match(value, {
      onNone: () => Either.right(Option.none<ReadonlyMap<string, string>>()),
      onSome: (text) =>
        Either.mapBoth(parseTenantTokens(text), {
          onLeft: (rule) => ConfigError.InvalidData(["SVC_OPERATOR_TENANT_TOKENS"], rule),
          onRight: Option.some
        })
    })
  ),
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
  leaseName: text("SVC_OPERATOR_LEASE_NAME", "svc-operator"),
  /** SvcJobs asked for per list page (the API's `limit`); a page over the read cap is asked again smaller. */
  listPageSize: integerIn("SVC_OPERATOR_LIST_PAGE_SIZE", 50, 1, 500),
  /** SvcJobs of one namespace waiting for a reconcile; the watch waits while the queue is full. */
  queueCapacity: integerIn("SVC_OPERATOR_QUEUE_CAPACITY", 256, 1, 100_000)
})

export type OperatorConfig = Config.Config.Success<typeof operatorConfig>
