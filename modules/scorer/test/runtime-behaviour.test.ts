/** How scoring behaves inside the process: off the JavaScript thread, and the operators' CPU switch. */
import { spawnSync } from "bun"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { repoRoot } from "../../../local/executables.ts"
import { fixture, rawOptions } from "../../../test/support/fixtures.ts"
import type { ScoreResult } from "../result.ts"
import { scoreBody, scorerRuntime } from "./runtime.ts"

const runtime = scorerRuntime()
afterAll(() => runtime.dispose())
const v02 = fixture("v02")
const request = {
  reference: v02.reference,
  distorted: v02.distorted,
  options: { ...rawOptions(v02), backend: "scalar" }
}

describe("scoring", () => {
  it("leaves the event loop free while a clip scores (native threads, polled)", async () => {
    let ticks = 0
    const ticker = setInterval(() => ticks++, 5)
    const started = performance.now()
    await runtime.runPromise(scoreBody(request))
    const elapsed = performance.now() - started
    clearInterval(ticker)
    // A blocked thread would run no timer until the score returned.
    expect(elapsed).toBeGreaterThan(50)
    expect(ticks).toBeGreaterThan(Math.floor(elapsed / 5 / 4))
  })

  it("SVC_SCORER_CPU=scalar forces the reference path for every request, with the same numbers", () => {
    const score = (env: Record<string, string>): ScoreResult => {
      const run = spawnSync(
        [
          process.execPath,
          join(repoRoot, "test/support/score-once.ts"),
          JSON.stringify({ ...request, options: { ...request.options, backend: "auto", per_frame: true } })
        ],
        {
          cwd: repoRoot,
          env: { ...process.env, ...env }
        }
      )
      expect(run.exitCode, run.stderr.toString()).toBe(0)
      return JSON.parse(run.stdout.toString()) as ScoreResult
    }
    const forced = score({ SVC_SCORER_CPU: "scalar" })
    const free = score({})
    expect(forced.provenance.feature_backends.every((entry) => entry.backend === "scalar")).toBe(true)
    expect(forced.provenance.backend_used).toBe("scalar")
    expect(forced.frames).toEqual(free.frames)
  })
})
