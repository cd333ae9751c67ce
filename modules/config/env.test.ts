import { ConfigProvider, Effect, Either } from "effect"
import { describe, expect, it } from "vitest"
import { flag, integerIn, listenAddress, parseListenAddress } from "./env.ts"

const read = <A>(config: Effect.Effect<A, unknown>, env: Record<string, string>) =>
  Effect.runSync(Effect.either(Effect.withConfigProvider(config, ConfigProvider.fromMap(new Map(Object.entries(env))))))

describe("listen addresses", () => {
  it.each([
    ["0.0.0.0:8080", { host: "0.0.0.0", port: 8080 }],
    ["127.0.0.1:0", { host: "127.0.0.1", port: 0 }],
    [":50051", { host: "0.0.0.0", port: 50051 }],
    ["[::1]:9000", { host: "::1", port: 9000 }],
    ["localhost:65535", { host: "localhost", port: 65535 }]
  ])("accepts %s", (text, expected) => {
    expect(parseListenAddress(text)).toEqual(Either.right(expected))
  })

  it.each(["8080", "host:", "host:65536", "host:http", "::1:80", ""])("refuses %j", (text) => {
    expect(Either.isLeft(parseListenAddress(text))).toBe(true)
  })

  it("uses the default when the variable is unset and names the variable when it is wrong", () => {
    expect(read(listenAddress("SVC_HTTP_ADDR", "0.0.0.0:8080"), {})).toEqual(
      Either.right({ host: "0.0.0.0", port: 8080 })
    )
    const refused = read(listenAddress("SVC_GRPC_ADDR", "0.0.0.0:50051"), { SVC_GRPC_ADDR: "nope" })
    expect(Either.isLeft(refused) && String(refused.left)).toContain("SVC_GRPC_ADDR")
    expect(Either.isLeft(refused) && String(refused.left)).toContain("must be host:port")
  })
})

describe("numbers and flags", () => {
  it("keeps integers in range and names the rule otherwise", () => {
    const config = integerIn("SVC_MAX_CONCURRENT_SCORES", 2, 1, 1024)
    expect(read(config, {})).toEqual(Either.right(2))
    expect(read(config, { SVC_MAX_CONCURRENT_SCORES: "16" })).toEqual(Either.right(16))
    for (const bad of ["0", "1025", "1.5", "many", "-3"]) {
      const result = read(config, { SVC_MAX_CONCURRENT_SCORES: bad })
      expect(Either.isLeft(result) && String(result.left)).toContain("must be a whole number from 1 to 1024")
    }
  })

  it("reads true/false spellings and refuses others", () => {
    const config = flag("SVC_AUTH_DISABLED")
    expect(read(config, {})).toEqual(Either.right(false))
    expect(read(config, { SVC_AUTH_DISABLED: "TRUE" })).toEqual(Either.right(true))
    expect(read(config, { SVC_AUTH_DISABLED: "0" })).toEqual(Either.right(false))
    expect(Either.isLeft(read(config, { SVC_AUTH_DISABLED: "maybe" }))).toBe(true)
  })
})
