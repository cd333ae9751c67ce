/**
 * Fuzzing the compiled svc-server (issue 11, done-when): generated paths, geometry, options and
 * corrupted Y4M/raw files through POST /v1/score, and generated headers and frames through
 * ScoreStream, for a bounded time. Every answer is a 200 with a score or a 4xx with the
 * documented error body (gRPC: a client-side status, never INTERNAL or UNKNOWN); the process
 * never crashes and keeps answering its health probe.
 */
import { status as GrpcStatus } from "@grpc/grpc-js"
import { spawnSync } from "bun"
import fc from "fast-check"
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type RunningService, startService } from "../../local/executables.ts"
import { isGrpcFailure, scoringClient, v01 } from "./server-support.ts"

// Bounded: each property stops after this long, however many runs it reached.
const TIME_LIMIT_MS = 15_000

const scratch = mkdtempSync(join(tmpdir(), "svc-fuzz-e2e-"))
let server: RunningService

// A small Y4M (2 frames of 64x48) and raw files the generator corrupts.
const w = 64
const h = 48
const frameBytes = (w * h * 3) / 2
const y4mBytes = (): Uint8Array => {
  const header = new TextEncoder().encode(`YUV4MPEG2 W${w} H${h} F25:1 Ip C420\n`)
  const marker = new TextEncoder().encode("FRAME\n")
  const source = readFileSync(v01.reference)
  const parts = [header, marker, source.subarray(0, frameBytes), marker, source.subarray(frameBytes, 2 * frameBytes)]
  const out = new Uint8Array(parts.reduce((n, part) => n + part.length, 0))
  let offset = 0
  for (const part of parts) {
    out.set(part, offset)
    offset += part.length
  }
  return out
}
const original = y4mBytes()

beforeAll(async () => {
  mkdirSync(join(scratch, "dir.yuv"))
  spawnSync(["mkfifo", join(scratch, "fifo.yuv")])
  writeFileSync(join(scratch, "clean.y4m"), original)
  server = await startService("svc-server", { listeners: ["http", "grpc"] })
})

afterAll(async () => {
  await server?.stop()
  rmSync(scratch, { recursive: true, force: true })
})

let fileCounter = 0
/** A corrupted copy: bytes overwritten, the file cut, or bytes appended. */
const corruptedFile = fc
  .record({
    suffix: fc.constantFrom(".y4m", ".yuv"),
    edits: fc.array(fc.tuple(fc.nat(original.length - 1), fc.integer({ min: 0, max: 255 })), { maxLength: 20 }),
    cut: fc.option(fc.nat(original.length), { nil: undefined }),
    extra: fc.uint8Array({ maxLength: 64 })
  })
  .map(({ suffix, edits, cut, extra }) => {
    const bytes = Uint8Array.from(original)
    for (const [at, value] of edits) bytes[at] = value
    const body = cut === undefined ? bytes : bytes.subarray(0, cut)
    const path = join(scratch, `f${fileCounter++}${suffix}`)
    writeFileSync(path, Buffer.concat([body, extra]))
    return path
  })

const path = fc.oneof(
  corruptedFile,
  fc.constantFrom(
    join(scratch, "clean.y4m"),
    join(scratch, "dir.yuv"),
    join(scratch, "fifo.yuv"),
    join(scratch, "missing.yuv"),
    "/dev/zero",
    "/proc/self/mem",
    "-i",
    "concat:/a|/b",
    `${scratch}/../etc/passwd`,
    `file://${join(scratch, "clean.y4m")}`,
    "",
    v01.reference
  ),
  fc.string({ maxLength: 40 }),
  fc.string({ maxLength: 20 }).map((tail) => `${scratch}/${tail}\u0000x`)
)

const anyValue = fc.oneof(
  fc.integer({ min: -5, max: 70000 }),
  fc.string({ maxLength: 8 }),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.integer(), { maxLength: 3 }),
  fc.double()
)

const options = fc.record(
  {
    width: fc.oneof(fc.integer({ min: -1, max: 20000 }), fc.constantFrom(64, 320, 1, 16384), anyValue),
    height: fc.oneof(fc.integer({ min: -1, max: 20000 }), fc.constantFrom(48, 240, 1, 16384), anyValue),
    pixel_format: fc.oneof(fc.constantFrom("420", "422", "444", ""), anyValue),
    bitdepth: fc.oneof(fc.constantFrom(0, 8, 10, 12, 16), anyValue),
    threads: fc.oneof(fc.integer({ min: 0, max: 4 }), anyValue),
    subsample: fc.oneof(fc.integer({ min: 0, max: 5 }), anyValue),
    frame_cnt: fc.oneof(fc.integer({ min: 0, max: 3 }), anyValue),
    frame_skip_ref: fc.oneof(fc.integer({ min: 0, max: 3 }), anyValue),
    precision: fc.oneof(fc.constantFrom("lossless", "legacy", "6", 3), anyValue),
    features: fc.oneof(fc.subarray(["psnr", "float_ssim", "float_ms_ssim"]), anyValue),
    per_frame: fc.oneof(fc.boolean(), anyValue),
    [`unknown_${"x"}`]: anyValue
  },
  { requiredKeys: [] }
)

/** Options as the proto types them (gRPC serialises only those), values still out of range. */
const int32 = fc.integer({ min: -5, max: 70000 })
const typedOptions = fc.record(
  {
    width: fc.oneof(int32, fc.constantFrom(64, 1, 16384)),
    height: fc.oneof(int32, fc.constantFrom(48, 1, 16384)),
    pixel_format: fc.oneof(fc.constantFrom("420", "422", "444", ""), fc.string({ maxLength: 4 })),
    bitdepth: fc.oneof(fc.constantFrom(0, 8, 10, 12, 16), int32),
    threads: fc.integer({ min: 0, max: 100 }),
    subsample: fc.integer({ min: 0, max: 2000 }),
    frame_cnt: fc.integer({ min: 0, max: 3 }),
    precision: fc.oneof(fc.constantFrom("lossless", "legacy", "6"), fc.string({ maxLength: 4 })),
    features: fc.array(fc.oneof(fc.constantFrom("psnr", "float_ssim", "float_ms_ssim"), fc.string({ maxLength: 6 })), {
      maxLength: 3
    }),
    per_frame: fc.boolean()
  },
  { requiredKeys: [] }
)

const request = fc.record(
  {
    reference: fc.oneof(path, anyValue),
    distorted: fc.oneof(path, anyValue),
    model: fc.oneof(fc.constantFrom("vmaf_v0.6.1", "nope", "../x"), anyValue),
    options: fc.oneof(options, anyValue)
  },
  { requiredKeys: [] }
)

const healthy = async () => (await fetch(`${server.http}/v1/health`)).status === 200

describe("fuzzing svc-server", () => {
  it("POST /v1/score: every answer is a 200 score or a 4xx with the error body", async () => {
    const statuses = new Map<number, number>()
    await fc.assert(
      fc.asyncProperty(request, async (body) => {
        const response = await fetch(`${server.http}/v1/score`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(body)
        })
        const json = (await response.json()) as Record<string, unknown>
        statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1)
        if (response.status === 200) expect(typeof json.score).toBe("number")
        else {
          expect(response.status, JSON.stringify([body, json])).toBeGreaterThanOrEqual(400)
          expect(response.status, JSON.stringify([body, json])).toBeLessThan(500)
          expect(Object.keys(json)).toEqual(["error"])
          expect(typeof json.error).toBe("string")
        }
      }),
      { interruptAfterTimeLimit: TIME_LIMIT_MS, numRuns: 400 }
    )
    expect(await healthy()).toBe(true)
    // The generator reached both outcomes.
    expect([...statuses.keys()].some((status) => status >= 400)).toBe(true)
  }, 60_000)

  it("ScoreStream: every stream ends in an aggregate or a client-side status", async () => {
    const client = scoringClient(server.grpc ?? "")
    const clientSide = new Set([
      GrpcStatus.INVALID_ARGUMENT,
      GrpcStatus.NOT_FOUND,
      GrpcStatus.RESOURCE_EXHAUSTED,
      GrpcStatus.FAILED_PRECONDITION,
      GrpcStatus.OUT_OF_RANGE
    ])
    try {
      await fc.assert(
        fc.asyncProperty(
          fc.record({ model: fc.constantFrom("", "vmaf_v0.6.1", "nope"), options: typedOptions }, { requiredKeys: [] }),
          fc.array(
            fc.record({
              reference: fc.oneof(fc.constant(frameBytes), fc.nat(2 * frameBytes)),
              distorted: fc.oneof(fc.constant(frameBytes), fc.nat(2 * frameBytes))
            }),
            { maxLength: 4 }
          ),
          async (header, frames) => {
            const messages = [
              { header },
              ...frames.map((sizes) => ({
                frame: { reference: new Uint8Array(sizes.reference), distorted: new Uint8Array(sizes.distorted) }
              }))
            ]
            const outcome: unknown = await client.stream(messages).then(
              (responses) => responses,
              (error: unknown) => error
            )
            if (Array.isArray(outcome)) expect(outcome.at(-1)).toHaveProperty("aggregate")
            else {
              expect(isGrpcFailure(outcome), String(outcome)).toBe(true)
              if (isGrpcFailure(outcome))
                expect(clientSide.has(outcome.code), `${outcome.code}: ${outcome.details}`).toBe(true)
            }
          }
        ),
        { interruptAfterTimeLimit: TIME_LIMIT_MS, numRuns: 300 }
      )
    } finally {
      client.close()
    }
    expect(await healthy()).toBe(true)
  }, 60_000)
})
