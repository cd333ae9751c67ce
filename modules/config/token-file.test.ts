/** A controller client (svc-node, svc-mcp) re-reads its token file whenever the file changes (secret rotation). */
import { Effect, Option } from "effect"
import { mkdtempSync, renameSync, rmSync, utimesSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { makeTokenSource } from "./token-file.ts"

const dir = mkdtempSync(join(tmpdir(), "svc-token-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe("token file", () => {
  it("reads the token, trimmed, and follows replacements and in-place rewrites", async () => {
    const file = join(dir, "token")
    writeFileSync(file, "first-token\n")
    const token = await Effect.runPromise(makeTokenSource(Option.some(file)))
    expect(await Effect.runPromise(token)).toBe("first-token")
    // Kubernetes swaps the secret's symlink target: a new file takes the old one's place.
    writeFileSync(join(dir, "token.next"), "second-token\n")
    renameSync(join(dir, "token.next"), file)
    expect(await Effect.runPromise(token)).toBe("second-token")
    // Rewritten in place with the same size: the modification time tells.
    writeFileSync(file, "third--token\n")
    utimesSync(file, new Date(), new Date(Date.now() + 5_000))
    expect(await Effect.runPromise(token)).toBe("third--token")
  })

  it("fails with the path when the file is missing, and sends no token without a file", async () => {
    const missing = join(dir, "absent")
    const token = await Effect.runPromise(makeTokenSource(Option.some(missing)))
    const result = await Effect.runPromise(Effect.either(token))
    expect(result._tag === "Left" && result.left.path).toBe(missing)
    const none = await Effect.runPromise(makeTokenSource(Option.none()))
    expect(await Effect.runPromise(none)).toBeUndefined()
  })
})
