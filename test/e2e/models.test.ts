/**
 * Built-in models (issue 14) on the compiled svc-server: listed over REST and gRPC with their
 * features, source and SHA-256; SVC_MODEL_DIR adds models and overrides a built-in by name;
 * without it /readyz is ready on the built-ins.
 */
import { createHash } from "node:crypto"
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { writeClip } from "../../local/clip.ts"
import { builtinModelDir, type RunningService, startService } from "../../local/executables.ts"
import { scoringClient } from "./server-support.ts"

interface ModelEntry {
  readonly name: string
  readonly features: ReadonlyArray<string>
  readonly source: string
  readonly sha256: string
  readonly usable: boolean
  readonly reason?: string
}

const scratch = mkdtempSync(join(tmpdir(), "svc-models-e2e-"))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

const builtinNames = readdirSync(builtinModelDir)
  .filter((file) => file.endsWith(".json"))
  .map((file) => file.slice(0, -5))
  .sort()
const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex")
const builtinBytes = (name: string) => readFileSync(join(builtinModelDir, `${name}.json`))

const listOver = async (service: RunningService) => {
  const response = await fetch(`${service.http}/v1/models`)
  expect(response.status).toBe(200)
  return ((await response.json()) as { models: ReadonlyArray<ModelEntry> }).models
}

interface ExtraFeatureEntry {
  readonly name: string
  readonly outputs: ReadonlyArray<string>
  readonly implementation: string
}

const extraFeaturesOver = async (service: RunningService) => {
  const response = await fetch(`${service.http}/v1/models`)
  expect(response.status).toBe(200)
  return ((await response.json()) as { features: ReadonlyArray<ExtraFeatureEntry> }).features
}

describe("svc-server without SVC_MODEL_DIR", () => {
  let service: RunningService
  beforeAll(async () => {
    service = await startService("svc-server", { listeners: ["http", "grpc"], env: { SVC_MODEL_DIR: "" } })
  })
  afterAll(async () => {
    expect(await service.stop()).toBe(0)
  })

  it("/readyz is ready on the built-in models", async () => {
    const response = await fetch(`${service.http}/readyz`)
    expect(response.status).toBe(200)
  })

  it("GET /v1/models lists every built-in model with its features, source and the SHA-256 of its bytes", async () => {
    const models = await listOver(service)
    expect(models.map((model) => model.name)).toEqual(builtinNames)
    for (const model of models) {
      expect(model.source, model.name).toBe("builtin")
      expect(model.sha256, model.name).toBe(sha256(builtinBytes(model.name)))
      expect(model.features.length, model.name).toBeGreaterThan(0)
      if (!model.usable) expect(model.reason, model.name).toMatch(/\S/)
    }
    expect(models.find((model) => model.name === "vmaf_v0.6.1")).toMatchObject({
      usable: true,
      features: expect.arrayContaining(["VMAF_integer_feature_adm2_score", "VMAF_integer_feature_motion2_score"])
    })
  })

  it("GET /v1/models lists the extra features a request may name, xpsnr and ssimulacra2 among them", async () => {
    const features = await extraFeaturesOver(service)
    expect(features.map((feature) => feature.name)).toEqual(expect.arrayContaining(["psnr", "cambi"]))
    expect(features).toEqual(
      expect.arrayContaining([
        { name: "xpsnr", outputs: ["xpsnr_y", "xpsnr_u", "xpsnr_v"], implementation: "FFmpeg 7.1 xpsnr filter" },
        { name: "ssimulacra2", outputs: ["ssimulacra2"], implementation: "SSIMULACRA 2.1" }
      ])
    )
  })

  it("gRPC ListModels answers the same list", async () => {
    const grpc = scoringClient(service.grpc ?? "")
    try {
      const answer = (await grpc.listModels()) as { models: ReadonlyArray<ModelEntry> }
      const rest = await listOver(service)
      expect(answer.models.map((model) => [model.name, model.source, model.sha256, model.usable])).toEqual(
        rest.map((model) => [model.name, model.source, model.sha256, model.usable])
      )
      expect(answer.models[0]?.features).toEqual(rest[0]?.features)
      const extras = (await grpc.listModels()) as { features: ReadonlyArray<ExtraFeatureEntry> }
      expect(extras.features).toEqual(await extraFeaturesOver(service))
    } finally {
      grpc.close()
    }
  })
})

describe("choosing models in a score request", () => {
  let service: RunningService
  const post = async (body: object) => {
    const response = await fetch(`${service.http}/v1/score`, { method: "POST", body: JSON.stringify(body) })
    return { status: response.status, body: (await response.json()) as Record<string, unknown> }
  }
  /** A pair of identical one-frame Y4M clips of the given size, made with ffmpeg. */
  const pair = async (width: number, height: number) => {
    const path = join(scratch, `still-${width}x${height}.y4m`)
    await writeClip(path, { width, height, rate: 1, frames: 2, pixelFormat: "yuv420p" })
    return { reference: path, distorted: path }
  }
  beforeAll(async () => {
    service = await startService("svc-server", { env: { SVC_MODEL_DIR: "" } })
  })
  afterAll(async () => {
    expect(await service.stop()).toBe(0)
  })

  it('model "auto" picks vmaf_4k_v0.6.1 for a 3840x2160 reference and vmaf_v0.6.1 below', async () => {
    const big = await post({ ...(await pair(3840, 2160)), model: "auto" })
    expect(big.status, JSON.stringify(big.body)).toBe(200)
    expect(big.body.provenance).toMatchObject({ model: "vmaf_4k_v0.6.1", model_source: "builtin" })
    const small = await post({ ...(await pair(3840, 2158)), model: "auto" })
    expect(small.body.provenance).toMatchObject({ model: "vmaf_v0.6.1" })
  })

  it("refuses model together with models, a model listed twice, and names an unusable model's reason", async () => {
    const input = await pair(64, 64)
    expect(await post({ ...input, model: "vmaf_v0.6.1", models: ["vmaf_v0.6.1neg"] })).toEqual({
      status: 400,
      body: { error: "model and models: give one or the other" }
    })
    expect(await post({ ...input, models: ["vmaf_v0.6.1", "vmaf_v0.6.1"] })).toEqual({
      status: 400,
      body: { error: "models: lists a model twice" }
    })
    expect(await post({ ...input, models: ["vmaf_v0.6.1", "no_such_model"] })).toEqual({
      status: 400,
      body: { error: 'unknown model "no_such_model"' }
    })
    // Every model this build cannot compute is refused with the reason the list gives.
    const listed = await listOver(service)
    for (const model of listed.filter((entry) => !entry.usable)) {
      expect(await post({ ...input, model: model.name }), model.name).toEqual({
        status: 400,
        body: { error: model.reason }
      })
    }
  })
})

describe("svc-server with SVC_MODEL_DIR", () => {
  const directory = join(scratch, "models")
  // The same model with other bytes (a trailing newline), and a model only the directory has.
  const override = Buffer.concat([builtinBytes("vmaf_v0.6.1"), Buffer.from("\n")])
  let service: RunningService
  beforeAll(async () => {
    mkdirSync(directory)
    writeFileSync(join(directory, "vmaf_v0.6.1.json"), override)
    writeFileSync(join(directory, "house_model.json"), builtinBytes("vmaf_4k_v0.6.1"))
    service = await startService("svc-server", { listeners: ["http"], env: { SVC_MODEL_DIR: directory } })
  })
  afterAll(async () => {
    expect(await service.stop()).toBe(0)
  })

  it("adds the directory's models and overrides a built-in by name; the source says which", async () => {
    const models = await listOver(service)
    expect(models.map((model) => model.name)).toEqual([...builtinNames, "house_model"].sort())
    expect(models.find((model) => model.name === "vmaf_v0.6.1")).toMatchObject({
      source: join(directory, "vmaf_v0.6.1.json"),
      sha256: sha256(override),
      usable: true
    })
    expect(models.find((model) => model.name === "house_model")).toMatchObject({
      source: join(directory, "house_model.json"),
      usable: true
    })
    expect(models.find((model) => model.name === "vmaf_4k_v0.6.1")?.source).toBe("builtin")
  })
})
