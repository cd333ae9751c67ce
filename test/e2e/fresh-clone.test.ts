/**
 * A clean copy of the repository outside the workspace (issue 14): no ../shared beside it and no
 * SVC_MODEL_DIR. `npm run sample` (scripts/sample.ts, ffmpeg) writes the README's first pair
 * there, and the compiled svc-server, run from that copy, is ready on its built-in models and
 * scores the pair with each of them, with the README's relative paths.
 */
import { spawnSync } from "bun"
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { ModelInfo } from "../../modules/scorer/models.ts"
import type { ScoreResult } from "../../modules/scorer/scorer.ts"
import { repoRoot, type RunningService, startService } from "../support/executables.ts"

const scratch = mkdtempSync(join(tmpdir(), "svc-fresh-clone-"))
const clone = join(scratch, "svc")
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

/** The README's first example, as written there (the body of its first `curl ... /v1/score -d '...'`). */
const readmeRequest = ((): { reference: string; distorted: string } => {
  const readme = readFileSync(join(repoRoot, "README.md"), "utf8")
  const body = /curl -s localhost:8080\/v1\/score -d '([^']+)'/.exec(readme)?.[1]
  if (!body) throw new Error("README.md has no curl score example")
  return JSON.parse(body) as { reference: string; distorted: string }
})()

const score = async (service: RunningService, body: object) => {
  const response = await fetch(`${service.http}/v1/score`, { method: "POST", body: JSON.stringify(body) })
  return { status: response.status, body: (await response.json()) as ScoreResult & { error?: string } }
}

describe("a clean copy of the repository, outside the workspace", () => {
  let service: RunningService | undefined
  beforeAll(async () => {
    // What a clone holds: the files git tracks (and new ones it does not ignore, while developing).
    const listed = spawnSync(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], { cwd: repoRoot })
    for (const file of listed.stdout
      .toString()
      .split("\0")
      .filter((entry) => entry !== "")) {
      if (!existsSync(join(repoRoot, file))) continue
      mkdirSync(dirname(join(clone, file)), { recursive: true })
      cpSync(join(repoRoot, file), join(clone, file))
    }
    const sample = spawnSync([process.execPath, "scripts/sample.ts"], { cwd: clone, stderr: "pipe" })
    expect(sample.exitCode, sample.stderr.toString()).toBe(0)
    service = await startService("svc-server", { cwd: clone, env: { SVC_MODEL_DIR: "" } })
  })
  const started = (): RunningService => {
    if (!service) throw new Error("svc-server did not start")
    return service
  }
  afterAll(async () => {
    if (service) expect(await service.stop()).toBe(0)
  })

  it("has no shared directory beside it, and the README's example names the sample pair", () => {
    expect(readmeRequest).toEqual({ reference: "sample/reference.y4m", distorted: "sample/distorted.y4m" })
    expect(existsSync(join(clone, "..", "shared"))).toBe(false)
    expect(existsSync(join(clone, "sample", "reference.y4m"))).toBe(true)
  })

  it("is ready on the built-in models", async () => {
    expect((await fetch(`${started().http}/readyz`)).status).toBe(200)
  })

  it("scores the README's first example as written (default model)", async () => {
    const { status, body } = await score(started(), readmeRequest)
    expect(status, body.error).toBe(200)
    expect(body.provenance).toMatchObject({ model: "vmaf_v0.6.1", model_source: "builtin" })
    expect(body.score).toBeGreaterThan(20)
    expect(body.score).toBeLessThan(100)
  })

  it("scores the sample with each built-in model; the ones this build cannot compute say why", async () => {
    const listing = (await (await fetch(`${started().http}/v1/models`)).json()) as { models: ReadonlyArray<ModelInfo> }
    expect(listing.models.length).toBeGreaterThanOrEqual(13)
    for (const model of listing.models) {
      const { status, body } = await score(started(), { ...readmeRequest, model: model.name })
      if (model.usable) {
        expect(status, `${model.name}: ${body.error}`).toBe(200)
        expect(body.provenance).toMatchObject({
          model: model.name,
          model_sha256: model.sha256,
          model_source: "builtin"
        })
        expect(body.score, model.name).toBeGreaterThanOrEqual(0)
        expect(body.score, model.name).toBeLessThanOrEqual(100)
      } else {
        expect(status, model.name).toBe(400)
        expect(body.error).toBe(model.reason)
      }
    }
    expect(listing.models.filter((model) => model.usable).map((model) => model.name)).toEqual(
      expect.arrayContaining([
        "vmaf_v0.6.1",
        "vmaf_v0.6.1neg",
        "vmaf_4k_v0.6.1",
        "vmaf_4k_v0.6.1neg",
        "vmaf_b_v0.6.3",
        "vmaf_v1.0.16_5d0h",
        "vmaf_v1.0.16_3d0h",
        "vmaf_v1.0.16_3d0h_2160",
        "vmaf_v1.0.16_1d5h_2160"
      ])
    )
    // The newest family lists what it reads, as the reference names the features.
    expect(listing.models.find((model) => model.name === "vmaf_v1.0.16_3d0h")?.features).toEqual([
      "Cambi_feature_cambi_score",
      "Speed_chroma_feature_speed_chroma_uv_score",
      "VMAF_integer_feature_adm3_score",
      "VMAF_integer_feature_motion3_score"
    ])
  })

  it("scores every usable built-in model in one pass, keyed by model name; auto picks the 1080p model", async () => {
    const listing = (await (await fetch(`${started().http}/v1/models`)).json()) as { models: ReadonlyArray<ModelInfo> }
    const usable = listing.models.filter((model) => model.usable).map((model) => model.name)
    const together = await score(started(), { ...readmeRequest, models: usable })
    expect(together.status, together.body.error).toBe(200)
    for (const name of usable) {
      const alone = await score(started(), { ...readmeRequest, model: name })
      expect(together.body.scores?.[name], name).toBe(alone.body.score)
    }
    const auto = await score(started(), { ...readmeRequest, model: "auto" })
    expect(auto.body.provenance.model).toBe("vmaf_v0.6.1")
  })
})
