/**
 * /apidocs in a real browser (headless Chromium) with the CDN unreachable (the test machine has
 * no internet; the flags keep Chromium from reaching out on its own): the page still serves,
 * names the spec URL and says the interactive view could not load. Skipped, saying so, without
 * Chromium (Debian: apt-get install chromium).
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type RunningService, runCommand, startService } from "../../local/executables.ts"

const chromium = ["/usr/bin/chromium", "/usr/bin/chromium-browser"].find((path) => existsSync(path))

/** The DOM after load, as Chromium renders it. */
const dumpDom = async (url: string): Promise<string> => {
  const profile = mkdtempSync(join(tmpdir(), "svc-chromium-"))
  try {
    const result = await runCommand(
      [
        chromium ?? "chromium",
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        `--user-data-dir=${profile}`,
        "--dump-dom",
        url
      ],
      { env: { HOME: profile } }
    )
    expect(result.code, result.stderr).toBe(0)
    return result.stdout
  } finally {
    rmSync(profile, { recursive: true, force: true })
  }
}

describe.skipIf(chromium === undefined)(
  `/apidocs in headless Chromium${chromium === undefined ? " (SKIPPED: no chromium at /usr/bin/chromium; apt-get install chromium)" : ""}`,
  () => {
    let service: RunningService
    let tryItOn: RunningService
    beforeAll(async () => {
      service = await startService("svc-server")
      tryItOn = await startService("svc-server", { env: { SVC_APIDOCS_TRY_IT: "true" } })
    })
    afterAll(async () => {
      await service.stop()
      await tryItOn.stop()
    })

    it("serves the page and names the spec URL while the CDN is unreachable", async () => {
      const dom = await dumpDom(`${service.http}/apidocs`)
      expect(dom).toContain("<title>svc-server API</title>")
      expect(dom).toMatch(/<a href="\/apidocs\/spec\.json">\/apidocs\/spec\.json<\/a>/)
      // The inline fallback ran: the UI bundle did not load.
      expect(dom).toContain("could not load its assets")
      expect(dom).toContain('"supportedSubmitMethods":[]')
    })

    it("SVC_APIDOCS_TRY_IT=true enables Try it out (GET and POST may be submitted)", async () => {
      const dom = await dumpDom(`${tryItOn.http}/apidocs`)
      expect(dom).toContain("/apidocs/spec.json")
      expect(dom).toContain('"supportedSubmitMethods":["get","post"]')
    })
  }
)
