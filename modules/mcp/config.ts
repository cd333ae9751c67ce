/**
 * svc-mcp configuration from SVC_* variables. Over HTTP the server holds no credentials of its
 * own (every request brings its bearer token), so a configured token there is a mistake that
 * stops start-up rather than a fallback that would act for anonymous callers.
 */
import { Config, type ConfigError, Either, Option } from "effect"
import { flag, invalid, type ListenAddress, listenAddress, optionalText, text } from "../config/env.ts"
import { defaultControllerAddress, defaultPorts } from "../config/ports.ts"

export type McpTransport = "stdio" | "http"

/** Loopback by default, on a port no other svc executable uses. */
export const DEFAULT_MCP_HTTP_ADDR = `127.0.0.1:${defaultPorts["svc-mcp"].http}`

const transport: Config.Config<McpTransport> = Config.string("SVC_MCP_TRANSPORT").pipe(
  Config.withDefault("stdio"),
  Config.mapOrFail((value) => {
    const normalised = value.trim().toLowerCase()
    return normalised === "stdio" || normalised === "http"
      ? Either.right(normalised)
      : Either.left(invalid("SVC_MCP_TRANSPORT", `must be stdio or http; got "${value}"`))
  })
)

/** `scheme://host[:port]` entries, compared as URL origins. */
const allowedOrigins: Config.Config<ReadonlyArray<string>> = Config.string("SVC_MCP_ALLOWED_ORIGINS").pipe(
  Config.withDefault(""),
  Config.mapOrFail((value) => {
    const origins: Array<string> = []
    for (const entry of value
      .split(",")
      .map((item) => item.trim())
      .filter((item) => item !== "")) {
      const origin = URL.canParse(entry) ? new URL(entry).origin : "null"
      if (origin === "null" || origin !== entry.replace(/\/$/, ""))
        return Either.left(
          invalid("SVC_MCP_ALLOWED_ORIGINS", `entries must be origins like https://app.example.com; got "${entry}"`)
        )
      origins.push(origin)
    }
    return Either.right(origins)
  })
)

/** How svc-mcp reaches the controller (TLS options as svc-node's). */
export const controllerClientConfig = Config.all({
  /** host:port of the controller's gRPC listener. */
  address: text("SVC_CONTROLLER_ADDR", defaultControllerAddress),
  tls: flag("SVC_CONTROLLER_TLS", false),
  caFile: optionalText("SVC_CONTROLLER_CA_FILE")
})

const rawConfig = Config.all({
  transport,
  httpAddress: listenAddress("SVC_HTTP_ADDR", DEFAULT_MCP_HTTP_ADDR),
  allowedOrigins,
  /** stdio only: the bearer token sent with every controller call, or the file holding it. */
  token: optionalText("SVC_CONTROLLER_TOKEN"),
  tokenFile: optionalText("SVC_CONTROLLER_TOKEN_FILE")
})

export interface McpConfig {
  readonly transport: McpTransport
  readonly httpAddress: ListenAddress
  readonly allowedOrigins: ReadonlyArray<string>
  readonly token: Option.Option<string>
  readonly tokenFile: Option.Option<string>
}

export const mcpConfig: Config.Config<McpConfig> = rawConfig.pipe(
  Config.mapOrFail((config): Either.Either<McpConfig, ConfigError.ConfigError> => {
    const tokenSet = Option.isSome(config.token)
    const fileSet = Option.isSome(config.tokenFile)
    if (config.transport === "http" && (tokenSet || fileSet))
      return Either.left(
        invalid(
          tokenSet ? "SVC_CONTROLLER_TOKEN" : "SVC_CONTROLLER_TOKEN_FILE",
          "is for SVC_MCP_TRANSPORT=stdio only: over HTTP every request carries its own Authorization: Bearer token"
        )
      )
    if (tokenSet && fileSet)
      return Either.left(
        invalid("SVC_CONTROLLER_TOKEN", "set SVC_CONTROLLER_TOKEN or SVC_CONTROLLER_TOKEN_FILE, not both")
      )
    return Either.right(config)
  })
)
