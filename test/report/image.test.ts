import { Effect } from "effect"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { fileSha256 } from "../../modules/report/image.ts"

describe("fileSha256", () => {
  it("digests a file's bytes", async () => {
    const dir = mkdtempSync(join(tmpdir(), "tester-report-image-"))
    try {
      const file = join(dir, "abc")
      writeFileSync(file, "abc")
      expect(await Effect.runPromise(fileSha256(file))).toBe(
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
      )
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it("is null for a file that cannot be read", async () => {
    expect(await Effect.runPromise(fileSha256("/nonexistent/svc-tester-report"))).toBeNull()
  })
})
