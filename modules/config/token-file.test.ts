/** A controller client (svc-node, svc-mcp) re-reads its token file whenever the file changes (secret rotation). */
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Effect, Either, Option } from "effect"
import { mkdtempSync, renameSync, rmSync, utimesSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { makeTokenSource } from "./token-file.ts"

const dir = mkdtempSync(join(tmpdir(), "svc-token-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe("token file", () => {
  it.effect("reads the token, trimmed, and follows replacements and in-place rewrites", () =>
    Effect.gen(function* () {
      const file = join(dir, "token")
      writeFileSync(file, "first-token\n")
      const token = yield* makeTokenSource(Option.some(file))
      expect(yield* token).toBe("first-token")
      // Kubernetes swaps the secret's symlink target: a new file takes the old one's place.
      writeFileSync(join(dir, "token.next"), "second-token\n")
      renameSync(join(dir, "token.next"), file)
      expect(yield* token).toBe("second-token")
      // Rewritten in place with the same size: the modification time tells.
      writeFileSync(file, "third--token\n")
      utimesSync(file, new Date(), new Date(Date.now() + 5_000))
      expect(yield* token).toBe("third--token")
    })
  )

  it.effect("fails with the path when the file is missing, and sends no token without a file", () =>
    Effect.gen(function* () {
      const missing = join(dir, "absent")
      const token = yield* makeTokenSource(Option.some(missing))
      const result = yield* Effect.either(token)
      expect(Either.isLeft(result) && result.left.path).toBe(missing)
      const none = yield* makeTokenSource(Option.none())
      expect(yield* none).toBeUndefined()
    })
  )
})
