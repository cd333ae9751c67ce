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
import { builtinModelDir, type RunningService, startService } from "../support/executables.ts"
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

  it("gRPC ListModels answers the same list", async () => {
    const grpc = scoringClient(service.grpc ?? "")
    try {
      const answer = (await grpc.listModels()) as { models: ReadonlyArray<ModelEntry> }
      const rest = await listOver(service)
      expect(answer.models.map((model) => [model.name, model.source, model.sha256, model.usable])).toEqual(
        rest.map((model) => [model.name, model.source, model.sha256, model.usable])
      )
      expect(answer.models[0]?.features).toEqual(rest[0]?.features)
    } finally {
      grpc.close()
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
