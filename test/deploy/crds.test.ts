/**
 * The SvcJob and SvcNode definitions (issue 21): sample resources validate against their
 * openAPIV3Schema and bad samples fail; both are structural (every property typed).
 */
import Ajv from "ajv"
import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { parse } from "yaml"

type Crd = {
  spec: {
    group: string
    names: { kind: string; plural: string }
    versions: Array<{
      name: string
      subresources?: { status?: object }
      additionalPrinterColumns?: Array<{ name: string; jsonPath: string }>
      schema: { openAPIV3Schema: Record<string, unknown> }
    }>
  }
}

const read = (path: string) => readFileSync(new URL(path, import.meta.url), "utf8")
const crdOf = (name: string) => parse(read(`../../schemas/${name}.crd.yaml`)) as Crd
const v1 = (crd: Crd) => {
  const version = crd.spec.versions.find((candidate) => candidate.name === "v1")
  if (version === undefined) throw new Error("no v1")
  return version
}
// The formats the API server checks (RFC 3339 date-times, 64-bit integers).
const validator = (name: string) =>
  new Ajv({ strict: false, allErrors: true })
    .addFormat("date-time", /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/)
    .addFormat("int64", { type: "number", validate: (value: number) => Number.isSafeInteger(value) })
    .compile(v1(crdOf(name)).schema.openAPIV3Schema)

/** Structural schema: every object node has a type, and nothing is left untyped. */
const untyped = (node: unknown, path = ""): Array<string> => {
  if (typeof node !== "object" || node === null) return []
  const schema = node as Record<string, unknown>
  const found: Array<string> = schema.type === undefined ? [path || "/"] : []
  for (const [key, child] of Object.entries((schema.properties as Record<string, unknown>) ?? {}))
    found.push(...untyped(child, `${path}.${key}`))
  if (schema.items !== undefined) found.push(...untyped(schema.items, `${path}[]`))
  if (typeof schema.additionalProperties === "object") found.push(...untyped(schema.additionalProperties, `${path}{}`))
  return found
}

/**
 * Bounded schema (issue 34): every string has a maxLength, every list a maxItems, every map a
 * maxProperties, so the API server refuses an oversized object before any controller reads it
 * (and CEL rules get a cost bound).
 */
const unbounded = (node: unknown, path = ""): Array<string> => {
  if (typeof node !== "object" || node === null) return []
  const schema = node as Record<string, unknown>
  const found: Array<string> = []
  if (schema.type === "string" && typeof schema.maxLength !== "number") found.push(`${path} (maxLength)`)
  if (schema.type === "array" && typeof schema.maxItems !== "number") found.push(`${path} (maxItems)`)
  if (typeof schema.additionalProperties === "object" && typeof schema.maxProperties !== "number")
    found.push(`${path} (maxProperties)`)
  for (const [key, child] of Object.entries((schema.properties as Record<string, unknown>) ?? {}))
    found.push(...unbounded(child, `${path}.${key}`))
  if (schema.items !== undefined) found.push(...unbounded(schema.items, `${path}[]`))
  if (typeof schema.additionalProperties === "object")
    found.push(...unbounded(schema.additionalProperties, `${path}{}`))
  return found
}

describe("every definition is bounded", () => {
  it.each(["svcjob", "svcnode", "svctenant"])("%s: a limit on every string, list and map", (name) => {
    expect(unbounded(v1(crdOf(name)).schema.openAPIV3Schema)).toEqual([])
  })

  it("refuses a SvcJob with a 1.4 MB model name, a 5000-character path or 17 models", () => {
    const validate = validator("svcjob")
    const base = { reference: "/media/a/ref.y4m", distorted: "/media/a/dis.y4m" }
    expect(validate(job(base))).toBe(true)
    expect(validate(job({ ...base, model: "m".repeat(1_400_000) }))).toBe(false)
    expect(validate(job({ ...base, reference: `/${"r".repeat(5000)}` }))).toBe(false)
    expect(validate(job({ ...base, models: Array.from({ length: 17 }, (_, i) => `model${i}`) }))).toBe(false)
  })
})

const job = (spec: Record<string, unknown>, status?: Record<string, unknown>) => ({
  apiVersion: "svc.dev/v1",
  kind: "SvcJob",
  metadata: { name: "j" },
  spec,
  ...(status === undefined ? {} : { status })
})

describe("SvcJob definition", () => {
  const validate = validator("svcjob")
  const version = v1(crdOf("svcjob"))

  it("is structural, group svc.dev, with a status subresource and phase/score/age columns", () => {
    expect(crdOf("svcjob").spec.group).toBe("svc.dev")
    expect(untyped(version.schema.openAPIV3Schema)).toEqual([])
    expect(version.subresources?.status).toEqual({})
    expect(version.additionalPrinterColumns?.map((column) => column.name)).toEqual(
      expect.arrayContaining(["Phase", "Score", "Age"])
    )
  })

  it.each([
    ["the README example", parse(read("../../deploy/examples/svcjob.yaml"))],
    [
      "raw input with every option",
      job({
        reference: "/media/a/ref.yuv",
        distorted: "/media/a/dist.yuv",
        model: "vmaf_v0.6.1",
        models: ["vmaf_v0.6.1", "vmaf_4k_v0.6.1"],
        options: {
          width: 1920,
          height: 1080,
          pixel_format: "420",
          bitdepth: 10,
          backend: "scalar",
          threads: 2,
          features: ["psnr"],
          subsample: 2,
          frame_cnt: 10,
          frame_skip_ref: 1,
          frame_skip_dist: 1,
          precision: "6",
          per_frame: false
        }
      })
    ],
    [
      "a finished status",
      job(
        { reference: "/r.y4m", distorted: "/d.y4m" },
        {
          phase: "Finished",
          jobId: "0b6c1f0e-0000-4000-8000-000000000000",
          framesDone: 48,
          frameCount: 48,
          score: 76.66,
          features: { vmaf: 76.66, psnr_y: 30.1 },
          observedGeneration: 1,
          finishedAt: "2026-11-23T17:00:00Z",
          conditions: [
            { type: "Complete", status: "True", reason: "Finished", lastTransitionTime: "2026-11-23T17:00:00Z" }
          ]
        }
      )
    ]
  ])("accepts %s", (_, sample) => {
    expect(validate(sample), JSON.stringify(validate.errors)).toBe(true)
  })

  it.each([
    ["no distorted", job({ reference: "/r.y4m" })],
    ["an unknown pixel format", job({ reference: "/r", distorted: "/d", options: { pixel_format: "411" } })],
    ["threads above 64", job({ reference: "/r", distorted: "/d", options: { threads: 65 } })],
    ["a string width", job({ reference: "/r", distorted: "/d", options: { width: "1920" } })],
    ["an unknown phase", job({ reference: "/r", distorted: "/d" }, { phase: "Done" })],
    ["a finish time that is not a date-time", job({ reference: "/r", distorted: "/d" }, { finishedAt: "yesterday" })],
    ["a non-numeric score", job({ reference: "/r", distorted: "/d" }, { score: "high" })],
    ["a condition without status", job({ reference: "/r", distorted: "/d" }, { conditions: [{ type: "Complete" }] })],
    ["no spec", { apiVersion: "svc.dev/v1", kind: "SvcJob", metadata: { name: "j" } }]
  ])("refuses %s", (_, sample) => {
    expect(validate(sample)).toBe(false)
  })
})

describe("SvcNode definition", () => {
  const validate = validator("svcnode")
  const version = v1(crdOf("svcnode"))
  const node = (status: Record<string, unknown>) => ({
    apiVersion: "svc.dev/v1",
    kind: "SvcNode",
    metadata: { name: "host-a" },
    spec: {},
    status
  })

  it("is structural with a status subresource and a Ready column", () => {
    expect(untyped(version.schema.openAPIV3Schema)).toEqual([])
    expect(version.subresources?.status).toEqual({})
    expect(version.additionalPrinterColumns?.map((column) => column.jsonPath)).toContain(
      '.status.conditions[?(@.type=="Ready")].status'
    )
  })

  it("accepts a node's status and refuses bad ones", () => {
    const good = node({
      nodeId: "n-1",
      name: "host-a",
      version: "0.1.0",
      slots: 2,
      lastHeartbeat: "2026-11-23T17:00:00Z",
      runningJobs: ["j-1"],
      conditions: [{ type: "Ready", status: "False", reason: "HeartbeatStale", message: "no heartbeat for 45 s" }]
    })
    expect(validate(good), JSON.stringify(validate.errors)).toBe(true)
    expect(validate(node({ slots: -1 }))).toBe(false)
    expect(validate(node({ runningJobs: [1] }))).toBe(false)
    expect(validate(node({ conditions: [{ type: "Ready", status: "Maybe" }] }))).toBe(false)
  })
})
