/**
 * Where `svc` finds the controller and its token, read as a compute node reads them:
 * SVC_CONTROLLER_ADDR (default: the controller's default gRPC port on this machine),
 * SVC_CONTROLLER_TOKEN or the file SVC_CONTROLLER_TOKEN_FILE, SVC_CONTROLLER_TLS and
 * SVC_CONTROLLER_CA_FILE.
 */
import { Effect, Option } from "effect"
import { readFile } from "node:fs/promises"
import { defaultControllerAddress } from "../config/ports.ts"
import type { ClientOptions } from "../transport/grpc/client.ts"
import { CommandFailed, UsageError } from "./errors.ts"

const env = (name: string): string | undefined => {
  const value = process.env[name]?.trim()
  return value === undefined || value === "" ? undefined : value
}

/** The bearer token for the controller or a server: SVC_CONTROLLER_TOKEN, else the token file. */
export const readToken: Effect.Effect<string | undefined, CommandFailed> = Effect.suspend(() => {
  const inline = env("SVC_CONTROLLER_TOKEN")
  if (inline !== undefined) return Effect.succeed<string | undefined>(inline)
  const file = env("SVC_CONTROLLER_TOKEN_FILE")
  if (file === undefined) return Effect.succeed(undefined)
  return Effect.tryPromise({
    try: async () => (await readFile(file, "utf8")).trim(),
    catch: (error) =>
      new CommandFailed({
        message: `SVC_CONTROLLER_TOKEN_FILE: cannot read ${file}: ${error instanceof Error ? error.message : String(error)}`
      })
  })
})

const truthy = (text: string | undefined) => ["true", "1", "yes", "on"].includes((text ?? "").toLowerCase())

/** Client options for the controller: `--controller` wins over SVC_CONTROLLER_ADDR. */
export const controllerOptions = (
  flag: Option.Option<string>
): Effect.Effect<ClientOptions, CommandFailed | UsageError> =>
  Effect.gen(function* () {
    // SVC_CONTROLLER_ADDR may list replicas (as nodes read it): a one-shot client takes the first.
    const listed = env("SVC_CONTROLLER_ADDR")?.split(",")[0]?.trim()
    const address = Option.getOrElse(flag, () => listed || defaultControllerAddress)
    if (!/^[^\s/]+:\d{1,5}$/.test(address) && !/^\[[0-9a-fA-F:.]+\]:\d{1,5}$/.test(address))
      return yield* new UsageError({ message: `controller address must be host:port; got "${address}"` })
    const tls = truthy(env("SVC_CONTROLLER_TLS"))
    const caFile = env("SVC_CONTROLLER_CA_FILE")
    const caPem =
      caFile === undefined
        ? undefined
        : yield* Effect.tryPromise({
            try: () => readFile(caFile),
            catch: () => new CommandFailed({ message: `SVC_CONTROLLER_CA_FILE: cannot read ${caFile}` })
          })
    return { address, tls: tls || caPem !== undefined, caPem }
  })

/**
 * POSTs a JSON request to `path` on a server or controller (with the token when one is
 * configured) and returns the JSON answer; a refusal is one line naming the URL and status.
 */
export const postJson = (base: string, path: string, request: unknown) =>
  Effect.gen(function* () {
    const token = yield* readToken
    const url = `${base.replace(/\/+$/, "")}${path}`
    const response = yield* Effect.tryPromise({
      try: (signal) =>
        fetch(url, {
          method: "POST",
          signal,
          headers: {
            "content-type": "application/json",
            accept: "application/json",
            ...(token === undefined ? {} : { authorization: `Bearer ${token}` })
          },
          body: JSON.stringify(request)
        }),
      catch: (error) =>
        new CommandFailed({ message: `cannot reach ${url}: ${error instanceof Error ? error.message : String(error)}` })
    })
    const body = yield* Effect.tryPromise({
      try: (): Promise<unknown> => response.json(),
      catch: () => new CommandFailed({ message: `${url} answered ${response.status} without a JSON body` })
    })
    if (!response.ok) {
      const message =
        typeof body === "object" && body !== null && "error" in body ? String(body.error) : `status ${response.status}`
      return yield* new CommandFailed({ message: `${url}: ${response.status}: ${message}` })
    }
    return body
  })
