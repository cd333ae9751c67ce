/**
 * svc-server end to end (seed 001, issue 7): the compiled executable on loopback ports, every
 * endpoint and every error row, the same result over HTTP and gRPC, the OpenAPI description.
 */
import { status as GrpcStatus } from "@grpc/grpc-js"
import Ajv from "ajv"
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, symlinkSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Chunk, Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Validator as OpenApiValidator } from "@seriousme/openapi-schema-validator"
import { scoringRoutes } from "../../modules/scoring-api/http.ts"
import { swaggerUiBase } from "../../modules/scoring-api/apidocs.ts"
import type { ScoreResult } from "../../modules/scorer/index.ts"
import {
  builtinModelDir,
  modelDirEnv,
  requireBuilt,
  runCommand,
  type RunningService,
  startService
} from "../../local/executables.ts"
import { isGrpcFailure, repeatFile, scoringClient, v01, v01Frames } from "./server-support.ts"

const scratch = mkdtempSync(join(tmpdir(), "svc-server-e2e-"))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

const post = (service: RunningService, body: unknown, init: RequestInit = {}) =>
  fetch(`${service.http}/v1/score`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: typeof body === "string" ? body : JSON.stringify(body),
    ...init
  })

/** JSON bodies as the tests read them: the contract's shapes, checked by the assertions. */
type Json = Record<string, unknown>
interface ScoreBody extends ScoreResult {
  readonly [key: string]: unknown
}
interface SchemaBody {
  additionalProperties?: unknown
  const?: unknown
  properties?: Record<string, { type?: unknown }>
}
interface OperationBody {
  response?: unknown
  responses: Record<string, { description?: string }>
}
interface SpecBody {
  openapi: string
  paths: { "/metrics": { get: OperationBody } } & Record<string, Record<string, OperationBody>>
  components: {
    schemas: {
      ScoreRequest: SchemaBody
      ScoreOptions: SchemaBody
      Error: SchemaBody & { properties: { error: { type: unknown } } }
    } & Record<string, SchemaBody>
  }
}
const readJson = async <T = Json>(response: Response): Promise<T> => (await response.json()) as T

const v01Request = { reference: v01.reference, distorted: v01.distorted, options: v01.options }

const errorOf = async (response: Response) => {
  expect(response.headers.get("content-type")).toContain("application/json")
  const body: unknown = await response.json()
  expect(body).toEqual({ error: expect.any(String) })
  return body as { readonly error: string }
}

const grpcFailure = async (
  promise: Promise<unknown>
): Promise<{ readonly code: GrpcStatus; readonly details: string }> => {
  const outcome = await promise.then(
    () => undefined,
    (error: unknown) => error
  )
  if (!isGrpcFailure(outcome)) throw new Error(`expected a gRPC failure, got ${JSON.stringify(outcome)}`)
  return outcome
}

describe("svc-server", () => {
  let service: RunningService
  let grpc: ReturnType<typeof scoringClient>
  beforeAll(async () => {
    service = await startService("svc-server", { listeners: ["http", "grpc"] })
    grpc = scoringClient(service.grpc ?? "")
  })
  afterAll(async () => {
    grpc.close()
    expect(await service.stop()).toBe(0)
  })

  describe("probes", () => {
    it.each(["/v1/health", "/healthz"])('%s answers {"status":"ok"}', async (path) => {
      const response = await fetch(`${service.http}${path}`)
      expect(response.status).toBe(200)
      expect(await response.json()).toEqual({ status: "ok" })
    })

    it.each(["/v1/ready", "/readyz"])('%s answers {"status":"ready"} once the scorer is initialised', async (path) => {
      const response = await fetch(`${service.http}${path}`)
      expect(response.status).toBe(200)
      expect(response.headers.get("content-type")).toContain("application/json")
      expect(await response.json()).toEqual({ status: "ready" })
    })

    it("gRPC Health is SERVING", async () => {
      expect(await grpc.health()).toMatchObject({ status: "SERVING", version: expect.any(String) })
    })

    it("an unknown path is 404 with the JSON error body", async () => {
      const response = await fetch(`${service.http}/v1/nope`)
      expect(response.status).toBe(404)
      expect(await errorOf(response)).toEqual({ error: "not found" })
    })
  })

  describe("POST /v1/score", () => {
    it("scores the fixture pair: score, features, provenance, lossless numbers", async () => {
      const response = await post(service, v01Request)
      expect(response.status).toBe(200)
      const text = await response.text()
      const body = JSON.parse(text) as ScoreBody
      expect(body.score).toBeGreaterThan(0)
      expect(body.features.vmaf).toBe(body.score)
      expect(body.frame_count).toBe(v01.frames)
      expect(body.frames).toEqual([])
      expect(body.provenance).toMatchObject({
        library: {
          abi_minor: expect.any(Number),
          abi_patch: expect.any(Number),
          active_backend: expect.any(String),
          n_extractors: expect.any(Number),
          version: expect.any(String)
        },
        model: "vmaf_v0.6.1",
        model_sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
        backend_used: expect.stringMatching(/^(scalar|avx2|avx512)$/),
        feature_backends: expect.arrayContaining([
          { extractor: "integer_vif", backend: expect.any(String), implementation: "libvmaf 3.2.0" }
        ]),
        precision: "lossless"
      })
      // Lossless: the printed number is the double's shortest round-trip form.
      expect(text).toContain(`"score":${String(body.score)}`)
    })

    it("applies options.precision and records it in the provenance", async () => {
      const response = await post(service, {
        ...v01Request,
        options: { ...v01.options, precision: "legacy", per_frame: true }
      })
      expect(response.status).toBe(200)
      const body = await readJson<ScoreBody>(response)
      expect(body.provenance.precision).toBe("legacy")
      expect(Number(body.score.toFixed(6))).toBe(body.score)
      expect(body.frames).toHaveLength(v01.frames)
    })

    it("logs one structured line per request: route, status, duration, model, frames", async () => {
      await post(service, v01Request)
      const lines = service.logs.filter((line) => line.message === "score" && line.annotations.status === 200)
      expect(lines.at(-1)?.annotations).toMatchObject({
        route: "POST /v1/score",
        transport: "http",
        status: 200,
        duration_ms: expect.any(Number),
        model: "vmaf_v0.6.1",
        frames: v01.frames
      })
    })

    const badRequests: ReadonlyArray<readonly [string, unknown, RegExp]> = [
      ["invalid JSON", '{"reference":', /not valid JSON/],
      ["an empty body", "", /not valid JSON/],
      ["a body that is not an object", "[1,2]", /./],
      ["reference missing", { distorted: v01.distorted, options: v01.options }, /reference/],
      ["distorted missing", { reference: v01.reference, options: v01.options }, /distorted/],
      ["reference empty", { ...v01Request, reference: "" }, /reference: is required/],
      ["an unknown field", { ...v01Request, priority: 1 }, /priority/],
      ["an unknown option", { ...v01Request, options: { ...v01.options, gamma: 2 } }, /gamma/],
      ["pixel_format 411", { ...v01Request, options: { ...v01.options, pixel_format: "411" } }, /pixel_format/],
      ["bitdepth 9", { ...v01Request, options: { ...v01.options, bitdepth: 9 } }, /bitdepth/],
      ["backend neon", { ...v01Request, options: { ...v01.options, backend: "neon" } }, /backend/],
      ["threads 65", { ...v01Request, options: { ...v01.options, threads: 65 } }, /threads/],
      ["a negative frame_cnt", { ...v01Request, options: { ...v01.options, frame_cnt: -1 } }, /frame_cnt/],
      ["an unknown feature", { ...v01Request, options: { ...v01.options, features: ["no_such_feature"] } }, /features/],
      ["a feature listed twice", { ...v01Request, options: { ...v01.options, features: ["psnr", "psnr"] } }, /twice/],
      ["precision 18", { ...v01Request, options: { ...v01.options, precision: "18" } }, /precision/],
      ["a width that is not an integer", { ...v01Request, options: { ...v01.options, width: 320.5 } }, /width/],
      [
        "raw input without geometry",
        { reference: v01.reference, distorted: v01.distorted },
        /width and options.height are required/
      ],
      ["a model name with a path", { ...v01Request, model: "../models/vmaf_v0.6.1" }, /not a model name/],
      ["an unknown model", { ...v01Request, model: "vmaf_v9" }, /unknown model/],
      ["a directory as input", { ...v01Request, reference: scratch }, /is a directory; only regular files are scored/],
      [
        "a geometry that does not fit the file",
        { ...v01Request, options: { ...v01.options, width: 333, height: 241 } },
        /./
      ]
    ]

    it("404 for a missing input, naming it", async () => {
      const missing = join(scratch, "missing.yuv")
      const response = await post(service, { ...v01Request, reference: missing })
      expect(response.status).toBe(404)
      expect((await errorOf(response)).error).toBe(`input "${missing}" does not exist`)
    })

    it.each(badRequests)("400 for %s", async (_, body, message) => {
      const response = await post(service, body)
      expect(response.status).toBe(400)
      expect((await errorOf(response)).error).toMatch(message)
    })

    it("413 for a 2 MiB body announced by Content-Length", async () => {
      const body = `{"reference":"${"x".repeat(2 * 1024 * 1024)}"}`
      const response = await post(service, body)
      expect(response.status).toBe(413)
      expect((await errorOf(response)).error).toMatch(/larger than 1048576 bytes/)
    })

    it("413 for a 2 MiB chunked body (no Content-Length), counted while streaming", async () => {
      const chunk = new TextEncoder().encode(" ".repeat(64 * 1024))
      let sent = 0
      const body = new ReadableStream<Uint8Array>({
        pull(controller) {
          if (sent >= 2 * 1024 * 1024) return controller.close()
          sent += chunk.length
          controller.enqueue(chunk)
        }
      })
      const response = await post(service, undefined, { body, duplex: "half" } as RequestInit)
      expect(response.status).toBe(413)
      await errorOf(response)
    })

    it("a body of exactly 1 MiB is read (and judged on its content)", async () => {
      const request = JSON.stringify(v01Request)
      const body = request + " ".repeat(1024 * 1024 - request.length)
      const response = await post(service, body)
      expect(response.status).toBe(200)
    })
  })

  describe("gRPC svc.v1.SvcScoring", () => {
    it("Score gives exactly the HTTP result for the same request", async () => {
      const request = { ...v01Request, options: { ...v01.options, per_frame: true, features: ["psnr"] } }
      const [http, viaGrpc] = await Promise.all([
        post(service, request).then((response) => response.json()),
        grpc.score(request)
      ])
      // proto3 has no absent message or list: an alignment the score did not make arrives as
      // null, an input's empty list of changes as []; REST leaves both out.
      const { alignment, ...rest } = viaGrpc
      expect(alignment).toBeNull()
      const provenance = rest["provenance"] as Record<string, Record<string, unknown>>
      for (const side of ["reference_input", "distorted_input"]) {
        expect(provenance[side]?.["changes"]).toEqual([])
        delete provenance[side]?.["changes"]
      }
      expect(rest).toEqual(http)
    })

    it("Score refuses an invalid request with INVALID_ARGUMENT and the same message as HTTP", async () => {
      const request = { ...v01Request, options: { ...v01.options, pixel_format: "411" } }
      const failure = await grpcFailure(grpc.score(request))
      expect(failure.code).toBe(GrpcStatus.INVALID_ARGUMENT)
      const http = await errorOf(await post(service, request))
      expect(failure.details).toBe(http.error)
      // proto3 has no "absent" string: a missing field arrives empty.
      const missing = await grpcFailure(grpc.score({ reference: v01.reference }))
      expect(missing.code).toBe(GrpcStatus.INVALID_ARGUMENT)
      expect(missing.details).toBe("distorted: is required")
    })

    it("Score of an unknown model is NOT_FOUND", async () => {
      const failure = await grpcFailure(grpc.score({ ...v01Request, model: "vmaf_v9" }))
      expect(failure.code).toBe(GrpcStatus.NOT_FOUND)
    })

    it("ScoreStream sends one FrameScore per frame, then the aggregate, equal to the file score", async () => {
      const responses = await grpc.stream([
        { header: { model: "", options: { ...v01.options, per_frame: true } } },
        ...v01Frames()
      ])
      const frames = responses.filter((message) => message.message === "frame").map((message) => message.frame)
      const aggregates = responses.filter((message) => message.message === "aggregate")
      expect(frames).toHaveLength(v01.frames)
      expect(aggregates).toHaveLength(1)
      expect(responses.at(-1)?.message).toBe("aggregate")
      const file = await post(service, { ...v01Request, options: { ...v01.options, per_frame: true } }).then(
        (response) => readJson<ScoreBody>(response)
      )
      const aggregate = aggregates[0]?.aggregate as Record<string, unknown>
      expect(aggregate.score).toBe(file.score)
      expect(aggregate.features).toEqual(file.features)
      expect(aggregate.pooled).toEqual(file.pooled)
      expect(frames).toEqual(file.frames)
    })

    it("ScoreStream refuses a stream that does not start with a header", async () => {
      const failure = await grpcFailure(grpc.stream(v01Frames().slice(0, 2)))
      expect(failure.code).toBe(GrpcStatus.INVALID_ARGUMENT)
      expect(failure.details).toMatch(/header/)
    })

    it("ScoreStream refuses a header without geometry and frames of the wrong size", async () => {
      const noGeometry = await grpcFailure(grpc.stream([{ header: { options: {} } }]))
      expect(noGeometry.code).toBe(GrpcStatus.INVALID_ARGUMENT)
      const wrongSize = await grpcFailure(
        grpc.stream([
          { header: { options: v01.options } },
          { frame: { reference: Buffer.alloc(10), distorted: Buffer.alloc(10) } }
        ])
      )
      expect(wrongSize.code).toBe(GrpcStatus.INVALID_ARGUMENT)
      expect(wrongSize.details).toMatch(/expected 115200/)
    })
  })

  describe("GET /metrics", () => {
    it("exposes Prometheus text: requests, durations, in flight, scores, frames, errors, build, process", async () => {
      await post(service, v01Request)
      await post(service, "{")
      const response = await fetch(`${service.http}/metrics`)
      expect(response.status).toBe(200)
      expect(response.headers.get("content-type")).toContain("text/plain")
      const text = await response.text()
      expect(text).toMatch(/^svc_http_requests_total\{method="POST",route="\/v1\/score",status="200"\} \d+$/m)
      expect(text).toMatch(/^svc_http_requests_total\{method="POST",route="\/v1\/score",status="400"\} \d+$/m)
      expect(text).toMatch(/^svc_http_request_duration_seconds_bucket\{.*route="\/v1\/score".*\} \d+$/m)
      expect(text).toMatch(/^svc_scores_in_flight 0$/m)
      expect(text).toMatch(/^svc_score_duration_seconds_count\{transport="http",outcome="ok"\} \d+$/m)
      expect(text).toMatch(/^svc_frames_scored_total\{transport="http"\} \d+$/m)
      expect(text).toMatch(/^svc_score_errors_total\{transport="http",kind="InvalidScoreRequest"\} \d+$/m)
      expect(text).toMatch(/^svc_build_info\{executable="svc-server",version="\d+\.\d+\.\d+",commit="[^"]+"\} 1$/m)
      expect(text).toMatch(/^svc_grpc_requests_total\{method="\/svc\.v1\.SvcScoring\/\w+",code="\w+"\} \d+$/m)
      expect(text).toMatch(/^process_cpu_seconds_total \S+$/m)
      expect(text).toMatch(/^process_resident_memory_bytes \S+$/m)
    })
  })

  describe("API documentation", () => {
    it("GET /apidocs is an HTML page naming the spec URL, assets from the pinned CDN, Try it out off", async () => {
      const response = await fetch(`${service.http}/apidocs`)
      expect(response.status).toBe(200)
      expect(response.headers.get("content-type")).toContain("text/html")
      const html = await response.text()
      expect(html).toContain("/apidocs/spec.json")
      expect(html).toContain(`${swaggerUiBase}/swagger-ui-bundle.js`)
      expect(swaggerUiBase).toMatch(/^https:\/\/cdn\.jsdelivr\.net\/npm\/swagger-ui-dist@\d+\.\d+\.\d+$/)
      expect(html).toContain('"supportedSubmitMethods":[]')
    })

    it("GET /apidocs/spec.json is a valid OpenAPI 3.0.3 description listing exactly the served paths", async () => {
      const response = await fetch(`${service.http}/apidocs/spec.json`)
      expect(response.status).toBe(200)
      const spec = await readJson<SpecBody>(response)
      // The official OpenAPI 3.0 schema, through an OpenAPI validator.
      const validator = new OpenApiValidator()
      const verdict = await validator.validate({ ...spec })
      expect(verdict.errors ?? []).toEqual([])
      expect(verdict.valid).toBe(true)
      expect(validator.version).toBe("3.0")
      for (const pattern of JSON.stringify(spec).match(/"pattern":"(?:[^"\\]|\\.)*"/g) ?? []) {
        expect(() => new RegExp(JSON.parse(`{${pattern}}`).pattern)).not.toThrow()
      }
      expect(spec.openapi).toBe("3.0.3")
      // Exactly the routes the server's router holds, method by method...
      const routes = Chunk.toReadonlyArray(Effect.runSync(scoringRoutes).routes)
      const served = routes.map((route) => `${route.method.toLowerCase()} ${route.path}`).sort()
      const described = Object.entries(spec.paths)
        .flatMap(([path, item]) => Object.keys(item).map((method) => `${method} ${path}`))
        .sort()
      expect(described).toEqual(served)
      // ...and the compiled server answers each of them.
      for (const entry of described) {
        const [method = "", path = ""] = entry.split(" ")
        const response = await fetch(`${service.http}${path}`, method === "post" ? { method: "POST", body: "{}" } : {})
        await response.arrayBuffer()
        expect(response.status, entry).not.toBe(404)
      }
      // Every reference resolves inside the document.
      const refs = JSON.stringify(spec).match(/"\$ref":"[^"]+"/g) ?? []
      for (const ref of refs) {
        const name = /#\/components\/schemas\/(\w+)/.exec(ref)?.[1] ?? ""
        expect(spec.components.schemas, ref).toHaveProperty(name)
      }
      // Request shapes refuse unknown fields, as the server does.
      expect(spec.components.schemas.ScoreRequest.additionalProperties).toBe(false)
      expect(spec.components.schemas.ScoreOptions.additionalProperties).toBe(false)
      for (const name of ["ScoreRequest", "ScoreOptions", "ScoreResponse", "Provenance", "Error"]) {
        expect(spec.components.schemas).toHaveProperty(name)
      }
    })

    it("the validator refuses what OpenAPI 3.0.3 does not allow", async () => {
      const spec = await fetch(`${service.http}/apidocs/spec.json`).then((response) => readJson<SpecBody>(response))
      const broken = async (edit: (copy: typeof spec) => void) => {
        const copy = structuredClone(spec)
        edit(copy)
        return (await new OpenApiValidator().validate({ ...copy })).valid
      }
      expect(await broken(() => undefined)).toBe(true)
      expect(
        await broken((copy) => {
          copy.components.schemas.Error.properties.error.type = ["string", "null"]
        })
      ).toBe(false)
      expect(
        await broken((copy) => {
          copy.paths["/metrics"].get.responses = { "200": {} }
        })
      ).toBe(false)
      expect(
        await broken((copy) => {
          copy.paths["/metrics"].get.response = {}
        })
      ).toBe(false)
    })

    it("responses of the server validate against the description's schemas", async () => {
      const spec = await fetch(`${service.http}/apidocs/spec.json`).then((response) => readJson<SpecBody>(response))
      // The 3.0 dialect adds nullable and formats like int32/double that Ajv need not check.
      const ajv = new Ajv({ strict: false, validateFormats: false })
      ajv.addSchema({ components: spec.components }, "spec")
      const check = (name: string, value: unknown) => {
        const valid = ajv.validate({ $ref: `spec#/components/schemas/${name}` }, value)
        expect(ajv.errors ?? [], name).toEqual([])
        expect(valid).toBe(true)
      }
      check(
        "ScoreResponse",
        await post(service, { ...v01Request, options: { ...v01.options, per_frame: true } }).then((response) =>
          response.json()
        )
      )
      check("Error", await post(service, "{").then((response) => response.json()))
      check("Health", await fetch(`${service.http}/v1/health`).then((response) => response.json()))
      check("Readiness", await fetch(`${service.http}/readyz`).then((response) => response.json()))
      expect(ajv.validate({ $ref: "spec#/components/schemas/ScoreRequest" }, { ...v01Request, colour: 1 })).toBe(false)
    })
  })
})

describe("svc-server with SVC_MAX_CONCURRENT_SCORES=1", () => {
  let service: RunningService
  let grpc: ReturnType<typeof scoringClient>
  const long = {
    reference: join(scratch, "long.ref.yuv"),
    distorted: join(scratch, "long.dis.yuv"),
    options: v01.options
  }
  beforeAll(async () => {
    // 20 x 30 frames: long enough to still be scoring when the second request comes.
    repeatFile(v01.reference, long.reference, 20)
    repeatFile(v01.distorted, long.distorted, 20)
    service = await startService("svc-server", { listeners: ["http", "grpc"], env: { SVC_MAX_CONCURRENT_SCORES: "1" } })
    grpc = scoringClient(service.grpc ?? "")
  })
  afterAll(async () => {
    grpc.close()
    await service.stop()
  })

  it("refuses a second concurrent score at once with 429 (HTTP) and RESOURCE_EXHAUSTED (gRPC)", async () => {
    const first = post(service, { ...long, options: { ...v01.options, threads: 1 } })
    // Wait until the first holds the only slot.
    for (let i = 0; i < 500; i++) {
      const metrics = await fetch(`${service.http}/metrics`).then((response) => response.text())
      if (/^svc_scores_in_flight 1$/m.test(metrics)) break
      await Bun.sleep(5)
    }
    const started = performance.now()
    const second = await post(service, long)
    expect(second.status).toBe(429)
    expect((await errorOf(second)).error).toMatch(/limit 1/)
    const viaGrpc = await grpcFailure(grpc.score(long))
    expect(viaGrpc.code).toBe(GrpcStatus.RESOURCE_EXHAUSTED)
    // "At once": refused while the first is still running, not queued behind it.
    expect(performance.now() - started).toBeLessThan(2_000)
    const firstResponse = await first
    expect(firstResponse.status).toBe(200)
    expect((await readJson<ScoreBody>(firstResponse)).frame_count).toBe(600)
    // The slot is free again.
    expect((await post(service, v01Request)).status).toBe(200)
  })
})

/**
 * Resolves once the server holds a score slot (`svc_scores_in_flight 1`): it has received `call`
 * and is scoring it, the state a drain test means to interrupt. Fails if `call` ends first.
 */
const untilScoring = async (service: { readonly http?: string | undefined }, call: Promise<unknown>) => {
  let ended = false
  call.then(
    () => {
      ended = true
    },
    () => {
      ended = true
    }
  )
  for (;;) {
    const metrics = await fetch(`${service.http}/metrics`).then((response) => response.text())
    if (/^svc_scores_in_flight 1$/m.test(metrics)) return
    if (ended) throw new Error("the score ended before the server was seen scoring it")
    await Bun.sleep(5)
  }
}

describe("svc-server shutdown", () => {
  it("SIGTERM lets an in-flight gRPC score finish (tryShutdown), then exits 0", async () => {
    const long = {
      reference: join(scratch, "drain.ref.yuv"),
      distorted: join(scratch, "drain.dis.yuv"),
      options: { ...v01.options, threads: 1 }
    }
    // 240 frames: in flight when SIGTERM comes, and done well within the 10 s drain even on a
    // loaded machine (past it the drain cuts the request).
    repeatFile(v01.reference, long.reference, 8)
    repeatFile(v01.distorted, long.distorted, 8)
    const service = await startService("svc-server", { listeners: ["http", "grpc"] })
    const grpc = scoringClient(service.grpc ?? "")
    try {
      const scored = grpc.score(long)
      await untilScoring(service, scored)
      const exit = service.stop("SIGTERM")
      expect(await scored).toMatchObject({ frame_count: 240 })
      expect(await exit).toBe(0)
    } finally {
      grpc.close()
    }
  })
})

describe("svc-server HTTP shutdown", () => {
  it("SIGTERM lets an in-flight POST /v1/score finish with 200, then exits 0", async () => {
    const long = {
      reference: join(scratch, "drain-http.ref.yuv"),
      distorted: join(scratch, "drain-http.dis.yuv"),
      options: { ...v01.options, threads: 1 }
    }
    // 240 frames: in flight when SIGTERM comes, and done well within the 10 s drain even on a
    // loaded machine (past it the drain cuts the request).
    repeatFile(v01.reference, long.reference, 8)
    repeatFile(v01.distorted, long.distorted, 8)
    const service = await startService("svc-server", { listeners: ["http", "grpc"] })
    const scored = post(service, long)
    await untilScoring(service, scored)
    const exit = service.stop("SIGTERM")
    const response = await scored
    expect(response.status).toBe(200)
    expect(await response.json()).toMatchObject({ frame_count: 240 })
    expect(await exit).toBe(0)
    expect(service.logs.some((line) => line.message === "draining HTTP requests")).toBe(true)
  })
})

describe("svc-server readiness", () => {
  it("/readyz turns 503 when SVC_MODEL_DIR stops being a directory; /v1/ready stays 200", async () => {
    const models = join(scratch, "models")
    mkdirSync(models)
    symlinkSync(join(builtinModelDir, "vmaf_v0.6.1.json"), join(models, "vmaf_v0.6.1.json"))
    const service = await startService("svc-server", { listeners: ["http", "grpc"], env: { SVC_MODEL_DIR: models } })
    const grpc = scoringClient(service.grpc ?? "")
    try {
      expect((await fetch(`${service.http}/readyz`)).status).toBe(200)
      renameSync(models, `${models}.gone`)
      const readyz = await fetch(`${service.http}/readyz`)
      expect(readyz.status).toBe(503)
      expect(await readyz.json()).toEqual({ status: "not ready", reason: expect.stringContaining("SVC_MODEL_DIR") })
      expect((await fetch(`${service.http}/v1/ready`)).status).toBe(200)
      expect(await grpc.health()).toMatchObject({ status: "NOT_SERVING" })
      renameSync(`${models}.gone`, models)
      expect((await fetch(`${service.http}/readyz`)).status).toBe(200)
    } finally {
      grpc.close()
      await service.stop()
    }
  })

  it("/readyz turns 503 when the extracted scoring library is no longer executable", async () => {
    const temp = join(scratch, "tmp-lib")
    mkdirSync(temp)
    const service = await startService("svc-server", { env: { TMPDIR: temp } })
    try {
      expect((await fetch(`${service.http}/readyz`)).status).toBe(200)
      const libraries = join(temp, "svc-native")
      for (const file of readdirSync(libraries)) chmodSync(join(libraries, file), 0o644)
      const readyz = await fetch(`${service.http}/readyz`)
      expect(readyz.status).toBe(503)
      expect(await readyz.json()).toEqual({
        status: "not ready",
        reason: expect.stringMatching(/scoring library .* missing or not executable/)
      })
    } finally {
      await service.stop()
    }
  })

  it("/v1/ready is 503 with the reason, and scoring is refused, when the scorer cannot start", async () => {
    // TMPDIR names a file: the embedded native library cannot be extracted.
    const notADirectory = join(scratch, "tmp-file")
    repeatFile(v01.reference, notADirectory, 0)
    const service = await startService("svc-server", { env: { TMPDIR: notADirectory } })
    try {
      for (const path of ["/v1/ready", "/readyz"]) {
        const response = await fetch(`${service.http}${path}`)
        expect(response.status).toBe(503)
        expect(await response.json()).toEqual({
          status: "not ready",
          reason: expect.stringContaining("scorer failed to start")
        })
      }
      expect((await fetch(`${service.http}/v1/health`)).status).toBe(200)
      const score = await post(service, v01Request)
      expect(score.status).toBe(503)
      expect((await errorOf(score)).error).toMatch(/scorer not ready/)
    } finally {
      await service.stop()
    }
  })
})

describe("svc-server configuration", () => {
  it.each([
    ["SVC_MAX_CONCURRENT_SCORES", "0", "must be a whole number from 1"],
    ["SVC_MAX_CONCURRENT_SCORES", "many", "must be a whole number from 1"],
    ["SVC_APIDOCS_TRY_IT", "maybe", "must be true or false"],
    ["SVC_GRPC_ADDR", "localhost", "must be host:port"]
  ])("refuses to start with %s=%s, naming the variable and the rule", async (variable, value, rule) => {
    const result = await runCommand([requireBuilt("svc-server")], {
      env: { SVC_HTTP_ADDR: "127.0.0.1:0", SVC_GRPC_ADDR: "127.0.0.1:0", ...modelDirEnv, [variable]: value }
    })
    expect(result.code).toBe(1)
    expect(result.stderr).toContain(variable)
    expect(result.stderr).toContain(rule)
  })

  it("refuses to start when the gRPC port is taken, naming SVC_GRPC_ADDR", async () => {
    const first = await startService("svc-server", { listeners: ["http", "grpc"] })
    try {
      const result = await runCommand([requireBuilt("svc-server")], {
        env: { SVC_HTTP_ADDR: "127.0.0.1:0", SVC_GRPC_ADDR: first.grpc ?? "", ...modelDirEnv }
      })
      expect(result.code).toBe(1)
      expect(result.stderr).toContain("SVC_GRPC_ADDR")
    } finally {
      await first.stop()
    }
  })
})
