/** svc-node configuration from SVC_* variables. */
import { Config, Option } from "effect"
import { hostname } from "node:os"
import { integerIn, flag, optionalText, text } from "../config/env.ts"
import { defaultControllerAddress } from "../config/ports.ts"

export const nodeConfig = Config.all({
  /**
   * host:port of the controller's gRPC listener, or a comma-separated list of replicas: the node
   * uses the first and fails over to the next when a call finds its controller unreachable.
   */
  controllerAddresses: Config.map(text("SVC_CONTROLLER_ADDR", defaultControllerAddress), (value) =>
    value
      .split(",")
      .map((address) => address.trim())
      .filter((address) => address !== "")
  ),
  /** File holding the node's bearer token (svc:node only); re-read when it changes. */
  tokenFile: optionalText("SVC_CONTROLLER_TOKEN_FILE"),
  /** TLS to the controller (system roots, or SVC_CONTROLLER_CA_FILE). */
  tls: flag("SVC_CONTROLLER_TLS", false),
  caFile: optionalText("SVC_CONTROLLER_CA_FILE"),
  /** Stable name of this node in the controller's sessions. */
  name: Config.map(
    optionalText("SVC_NODE_NAME"),
    Option.getOrElse(() => hostname())
  ),
  /** Jobs scored at once. */
  slots: integerIn("SVC_NODE_SLOTS", 1, 1, 64),
  /** Threads each score uses. */
  threadsPerJob: integerIn("SVC_NODE_THREADS", 1, 1, 64),
  /** How often an idle node asks for work, in milliseconds. */
  pollIntervalMs: integerIn("SVC_NODE_POLL_INTERVAL_MS", 1000, 50, 60_000)
})

export type NodeConfig = Config.Config.Success<typeof nodeConfig>
