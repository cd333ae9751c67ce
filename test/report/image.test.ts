import { Effect } from "effect"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { fileSha256 } from "../../modules/report/image.ts"

describe("fileSha256", () => {
  it("digests a file's bytes", async () => {
    const file = join(mkdtempSync(join(tmpdir(), "tester-report-image-")), "abc")
    writeFileSync(file, "abc")
    expect(await Effect.runPromise(fileSha256(file))).toBe(
      "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    )
  })

  it("is null for a file that cannot be read", async () => {
    expect(await Effect.runPromise(fileSha256("/nonexistent/svc-tester-report"))).toBeNull()
  })
})
