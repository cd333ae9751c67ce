/**
 * Inputs that cannot hurt the process (issues 11.2, 11.3, 13.3), on the compiled svc-server: a
 * FIFO, a directory, a device, a socket, an empty file, absurd geometry against a large file,
 * names that look like flags or protocols, a regular file swapped for a FIFO between requests.
 * Each gets a clear 4xx at once while /v1/health keeps answering and the process stays small;
 * the memory budget refuses a score that alone exceeds it (400) or that does not fit beside the
 * scores in flight (429).
 */
import { status as GrpcStatus } from "@grpc/grpc-js"
import { spawn, spawnSync } from "bun"
import {
  closeSync,
  ftruncateSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  writeFileSync
} from "node:fs"
import { createServer, type Server } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { RunningService } from "../../local/executables.ts"
import { startService } from "../../local/executables.ts"
import { isGrpcFailure, scoringClient, v01 } from "./server-support.ts"

const scratch = mkdtempSync(join(tmpdir(), "svc-inputs-e2e-"))
const media = join(scratch, "media")
mkdirSync(media)

// Generous bounds: each of these errors takes milliseconds; a loaded 2-core machine stays far below.
const FAST_MS = 2000
const RSS_LIMIT_BYTES = 300 * 1024 * 1024

const sparseFile = (path: string, bytes: number) => {
  const fd = openSync(path, "w")
  ftruncateSync(fd, bytes)
  closeSync(fd)
  return path
}

/** Peak resident memory of a process (VmHWM), in bytes. */
const peakRss = (pid: number): number => {
  const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))
  return Number(match?.[1] ?? Number.NaN) * 1024
}

/** Polls /v1/health while `work` runs; every probe must answer 200. */
const whileHealthy = async <T>(service: RunningService, work: () => Promise<T>): Promise<T> => {
  let running = true
  const statuses: Array<number> = []
  const prober = (async () => {
    while (running) {
      const response = await fetch(`${service.http}/v1/health`, { signal: AbortSignal.timeout(5000) })
      statuses.push(response.status)
      await response.arrayBuffer()
      await Bun.sleep(25)
    }
  })()
  try {
    return await work()
  } finally {
    running = false
    await prober
    expect(statuses.length).toBeGreaterThan(0)
    expect(new Set(statuses)).toEqual(new Set([200]))
  }
}

const post = async (service: RunningService, body: unknown) => {
  const started = performance.now()
  const response = await fetch(`${service.http}/v1/score`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body)
  })
  const json = (await response.json()) as { error?: string; score?: number }
  return { status: response.status, json, ms: performance.now() - started }
}

const raw = (path: string, width = 320, height = 240) => ({
  reference: v01.reference,
  distorted: path,
  options: { width, height }
})

let server: RunningService
let socketServer: Server
const fifo = join(media, "pipe.yuv")
const socketPath = join(media, "sock.yuv")
const big = join(media, "big.yuv")

beforeAll(async () => {
  spawnSync(["mkfifo", fifo])
  mkdirSync(join(media, "dir.yuv"))
  writeFileSync(join(media, "empty.yuv"), "")
  sparseFile(big, 100 * 1024 * 1024)
  socketServer = createServer()
  await new Promise<void>((resolve) => socketServer.listen(socketPath, resolve))
  server = await startService("svc-server", { listeners: ["http", "grpc"] })
})

afterAll(async () => {
  await server?.stop()
  socketServer?.close()
  rmSync(scratch, { recursive: true, force: true })
})

describe("inputs that are not regular files, or do not fit", () => {
  const cases: ReadonlyArray<readonly [string, () => object, number, RegExp]> = [
    ["a FIFO", () => raw(fifo), 400, /is a FIFO; only regular files are scored/],
    ["a directory", () => raw(join(media, "dir.yuv")), 400, /is a directory; only regular files are scored/],
    ["/dev/zero", () => raw("/dev/zero"), 400, /is a character device; only regular files are scored/],
    ["a socket", () => raw(socketPath), 400, /cannot be opened|is a socket/],
    ["an empty file", () => raw(join(media, "empty.yuv")), 400, /file is empty/],
    ["1x1 against a 100 MB file", () => raw(big, 1, 1), 400, /^a 1x1 frame is too small: adm needs at least 33x33/],
    ["16384x16384 against a 100 MB file", () => raw(big, 16384, 16384), 400, /not a whole number/],
    ["a name that starts with -", () => raw("-i"), 404, /input "-i" does not exist/],
    // A prefixed form is no local file: outside any directory root, even "/".
    [
      "a concat: protocol name",
      () => raw(`concat:${v01.distorted}|${v01.distorted}`),
      403,
      /is outside the tenant's scoring roots/
    ],
    ["a missing file", () => raw(join(media, "missing.yuv")), 404, /does not exist/]
  ]

  it.each(cases)("%s: a clear error at once, health answering, memory small", async (_, body, status, message) => {
    const answer = await whileHealthy(server, () => post(server, body()))
    expect(answer.status, JSON.stringify(answer.json)).toBe(status)
    expect(answer.json.error).toMatch(message)
    // No file size of the host in any message.
    expect(answer.json.error).not.toMatch(/104857600/)
    expect(answer.ms).toBeLessThan(FAST_MS)
    expect(peakRss(server.process.pid)).toBeLessThan(RSS_LIMIT_BYTES)
  })

  it("gives the same refusals over gRPC (INVALID_ARGUMENT, NOT_FOUND)", async () => {
    const client = scoringClient(server.grpc ?? "")
    try {
      for (const [body, code] of [
        [raw(fifo), GrpcStatus.INVALID_ARGUMENT],
        [raw("/dev/zero"), GrpcStatus.INVALID_ARGUMENT],
        [raw(big, 1, 1), GrpcStatus.INVALID_ARGUMENT],
        [raw(join(media, "missing.yuv")), GrpcStatus.NOT_FOUND]
      ] as const) {
        const failure: unknown = await client.score(body).then(
          () => undefined,
          (error: unknown) => error
        )
        expect(isGrpcFailure(failure) && failure.code, JSON.stringify(body)).toBe(code)
      }
    } finally {
      client.close()
    }
  })

  it("a Y4M of more frames than SVC_MAX_FRAMES is walked off the event loop and refused at the frame limit", async () => {
    // The smallest frame every feature of the default model accepts (33x33 4:2:0), on a server
    // whose limit keeps the file small.
    const limit = 20_000
    const limited = await startService("svc-server", { env: { SVC_MAX_FRAMES: String(limit) } })
    const frames = limit + 1
    const tiny = join(media, "tiny.y4m")
    const header = Buffer.from("YUV4MPEG2 W33 H33 F25:1 C420\n")
    const frame = Buffer.concat([Buffer.from("FRAME\n"), Buffer.alloc(33 * 33 + 2 * 17 * 17, 128)])
    const body = Buffer.alloc(header.length + frames * frame.length)
    header.copy(body)
    for (let i = 0; i < frames; i++) frame.copy(body, header.length + i * frame.length)
    writeFileSync(tiny, body)
    const slowest: Array<number> = []
    try {
      const answer = await whileHealthy(limited, async () => {
        let running = true
        const probe = (async () => {
          while (running) {
            const started = performance.now()
            await (await fetch(`${limited.http}/v1/health`)).arrayBuffer()
            slowest.push(performance.now() - started)
            await Bun.sleep(10)
          }
        })()
        const result = await post(limited, { reference: tiny, distorted: tiny })
        running = false
        await probe
        return result
      })
      expect(answer.status).toBe(400)
      expect(answer.json.error).toBe(`${tiny}: more than ${limit} frames (the frame limit)`)
      // Generous bound: the walk runs on a library thread, so a probe never waits for it.
      expect(Math.max(...slowest)).toBeLessThan(FAST_MS)
    } finally {
      await limited.stop()
    }
  }, 60_000)

  it("a ScoreStream header asking for 16384x16384 on 64 threads is refused before any picture exists", async () => {
    const client = scoringClient(server.grpc ?? "")
    try {
      const failure: unknown = await whileHealthy(server, () =>
        client.stream([{ header: { options: { width: 16384, height: 16384, threads: 64 } } }]).then(
          () => undefined,
          (error: unknown) => error
        )
      )
      expect(isGrpcFailure(failure) && [failure.code, failure.details]).toEqual([
        GrpcStatus.INVALID_ARGUMENT,
        expect.stringMatching(/^this score needs about [\d.]+ (GiB|TiB) of memory, more than the whole budget/)
      ])
      expect(peakRss(server.process.pid)).toBeLessThan(RSS_LIMIT_BYTES)
    } finally {
      client.close()
    }
  })

  it("a file swapped for a FIFO between requests is refused, never waited on", async () => {
    const swapped = join(media, "swapped.yuv")
    const regular = join(media, "swapped-regular.yuv")
    const pipe = join(media, "swapped-pipe.yuv")
    writeFileSync(regular, readFileSync(v01.distorted).subarray(0, v01.frameBytes * 2))
    spawnSync(["mkfifo", pipe])
    // A writer-less FIFO and a 2-frame file take turns at the same name while requests run.
    const swapper = spawn(
      [
        "python3",
        "-c",
        `import os, time
end = time.time() + 4
while time.time() < end:
    os.link(${JSON.stringify(regular)}, ${JSON.stringify(`${swapped}.tmp`)}); os.rename(${JSON.stringify(`${swapped}.tmp`)}, ${JSON.stringify(swapped)})
    time.sleep(0.002)
    os.rename(${JSON.stringify(pipe)}, ${JSON.stringify(swapped)}); os.mkfifo(${JSON.stringify(pipe)})
    time.sleep(0.002)`
      ],
      { stdout: "ignore", stderr: "pipe" }
    )
    const statuses = await whileHealthy(server, async () => {
      const seen: Array<number> = []
      while (swapper.exitCode === null) {
        const answer = await post(server, { ...raw(swapped), options: { width: 320, height: 240, frame_cnt: 1 } })
        expect(answer.ms).toBeLessThan(FAST_MS)
        if (answer.status !== 200) expect(answer.json.error).toMatch(/is a FIFO|does not exist/)
        seen.push(answer.status)
      }
      return seen
    })
    expect(await swapper.exited, await new Response(swapper.stderr).text()).toBe(0)
    expect(statuses.length).toBeGreaterThan(5)
    expect(statuses.every((status) => status === 200 || status === 400 || status === 404)).toBe(true)
  }, 30_000)
})

describe("the memory budget (SVC_MAX_SCORE_MEMORY)", () => {
  let limited: RunningService
  const frame = 16384 * 16384 * 1.5
  const huge = join(scratch, "huge.yuv")
  // 1080p 4:4:4 zeros: slow enough to hold its memory while a second request arrives.
  const slowFrame = 1920 * 1080 * 3
  const slow = join(scratch, "slow.yuv")

  beforeAll(async () => {
    sparseFile(huge, 2 * frame)
    sparseFile(slow, 400 * slowFrame)
    limited = await startService("svc-server", { env: { SVC_MAX_SCORE_MEMORY: "256Mi" } })
  })
  afterAll(() => limited?.stop())

  it("refuses 16384x16384 when it alone needs more than the budget: 400 naming both, at once", async () => {
    const answer = await whileHealthy(limited, () =>
      post(limited, { reference: huge, distorted: huge, options: { width: 16384, height: 16384 } })
    )
    expect(answer.status).toBe(400)
    expect(answer.json.error).toMatch(/needs about [\d.]+ GiB of memory, more than the whole budget of 256\.0 MiB/)
    expect(answer.ms).toBeLessThan(FAST_MS)
    expect(peakRss(limited.process.pid)).toBeLessThan(RSS_LIMIT_BYTES)
  })

  it("answers 429 when the scores in flight hold the budget, and admits again once they end", async () => {
    const body = {
      reference: slow,
      distorted: slow,
      options: { width: 1920, height: 1080, pixel_format: "444", threads: 2 }
    }
    const leaving = new AbortController()
    const first = fetch(`${limited.http}/v1/score`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
      signal: leaving.signal
    }).catch(() => undefined)
    // Once the first score holds its slot (and, moments later, its memory), the second is refused.
    const inFlight = async () =>
      Number(/^svc_scores_in_flight (\d+)/m.exec(await (await fetch(`${limited.http}/metrics`)).text())?.[1])
    while ((await inFlight()) < 1) await Bun.sleep(20)
    await Bun.sleep(200)
    const second = await post(limited, body)
    expect(second.status).toBe(429)
    expect(second.json.error).toMatch(/scores in flight hold the memory budget/)
    // The first client leaves: its score is cancelled and its memory returns to the budget.
    leaving.abort()
    await first
    let third = await post(limited, { ...body, options: { ...body.options, frame_cnt: 1 } })
    for (let tries = 0; third.status === 429 && tries < 100; tries++) {
      await Bun.sleep(100)
      third = await post(limited, { ...body, options: { ...body.options, frame_cnt: 1 } })
    }
    expect(third.status, JSON.stringify(third.json)).toBe(200)
  }, 60_000)
})

describe("SVC_INPUT_ROOTS", () => {
  let rooted: RunningService
  beforeAll(async () => {
    const inside = join(scratch, "allowed")
    mkdirSync(inside)
    writeFileSync(join(inside, "dis.yuv"), readFileSync(v01.distorted).subarray(0, v01.frameBytes * 2))
    writeFileSync(join(inside, "ref.yuv"), readFileSync(v01.reference).subarray(0, v01.frameBytes * 2))
    rooted = await startService("svc-server", { env: { SVC_INPUT_ROOTS: inside } })
  })
  afterAll(() => rooted?.stop())

  it("scores inside the roots and refuses outside them, without saying whether the file exists", async () => {
    const inside = join(scratch, "allowed")
    const ok = await post(rooted, {
      reference: join(inside, "ref.yuv"),
      distorted: join(inside, "dis.yuv"),
      options: { width: 320, height: 240 }
    })
    expect(ok.status).toBe(200)
    for (const outside of [v01.distorted, join(scratch, "nothing-here.yuv"), "/etc/shadow"]) {
      const refused = await post(rooted, { ...raw(outside), reference: join(inside, "ref.yuv") })
      expect(refused.status).toBe(403)
      expect(refused.json.error).toBe(`scoring input "${outside}" is outside the tenant's scoring roots`)
    }
    const missing = await post(rooted, { ...raw(join(inside, "missing.yuv")), reference: join(inside, "ref.yuv") })
    expect([missing.status, missing.json.error]).toEqual([404, `input "${join(inside, "missing.yuv")}" does not exist`])
  })

  it("logs its roots at start-up, with a warning when one is / (every file)", () => {
    expect(server.logs.some((line) => line.logLevel === "WARN" && /^input roots include \/:/.test(line.message))).toBe(
      true
    )
    expect(rooted.logs.find((line) => line.message === "inputs confined to SVC_INPUT_ROOTS")?.annotations).toEqual({
      roots: [join(scratch, "allowed")],
      source: "SVC_INPUT_ROOTS"
    })
    expect(rooted.logs.some((line) => line.logLevel === "WARN" && /input roots/.test(line.message))).toBe(false)
  })
})

describe("request bodies (issue 11.6)", () => {
  const send = async (body: string, contentType: string | undefined) => {
    const response = await fetch(`${server.http}/v1/score`, {
      method: "POST",
      headers: contentType === undefined ? {} : { "content-type": contentType },
      body
    })
    return { status: response.status, json: (await response.json()) as { error?: string } }
  }

  it("answers 415 for a body that is not application/json", async () => {
    for (const type of ["text/plain", "application/x-www-form-urlencoded"]) {
      const answer = await send(JSON.stringify(raw(v01.distorted)), type)
      expect(answer.status).toBe(415)
      expect(answer.json.error).toBe(`the request body must be application/json, not "${type}"`)
    }
    expect((await send(JSON.stringify(raw(v01.distorted)), "application/json; charset=utf-8")).status).toBe(200)
  })

  it("answers 400 with the error body for JSON nested 20,000 deep", async () => {
    const answer = await send(`${"[".repeat(20_000)}${"]".repeat(20_000)}`, "application/json")
    expect(answer.status).toBe(400)
    expect(answer.json.error).toBe("the request body nests arrays and objects deeper than 64 levels")
  })

  it("refuses a path with a NUL byte rather than scoring the path it would be cut to", async () => {
    const answer = await post(server, raw(`${v01.distorted}\u0000x`))
    expect(answer.status).toBe(400)
    expect(answer.json.error).toMatch(/contains a NUL byte/)
  })
})

describe("a frame smaller than a feature accepts (issue 13.3)", () => {
  /** One 8x8 4:2:0 frame of mid-grey, as raw YUV and as Y4M. */
  const tinyRaw = join(media, "tiny8.yuv")
  const tinyY4m = join(media, "tiny8.y4m")
  const tinyMkv = join(media, "tiny8.mkv")
  const frame = Buffer.alloc(8 * 8 + 2 * 4 * 4, 128)
  const vmafRefusal =
    'a 8x8 frame is too small: adm needs at least 33x33 (model "vmaf_v0.6.1"); vif needs at least 16x16 (model "vmaf_v0.6.1")'

  beforeAll(() => {
    writeFileSync(tinyRaw, frame)
    writeFileSync(tinyY4m, Buffer.concat([Buffer.from("YUV4MPEG2 W8 H8 F25:1 C420\nFRAME\n"), frame]))
    // A lossless encode of the same frame: refused on its probed size, before any decoding.
    const encode = spawnSync(
      ["ffmpeg", "-v", "error", "-f", "rawvideo", "-pix_fmt", "yuv420p", "-s", "8x8"].concat([
        "-i",
        tinyRaw,
        "-c:v",
        "ffv1",
        "-y",
        tinyMkv
      ])
    )
    expect(encode.exitCode).toBe(0)
  })

  it("is a 400 over HTTP naming each feature that cannot take it and its minimum (raw, Y4M, encoded)", async () => {
    for (const body of [
      { reference: tinyRaw, distorted: tinyRaw, options: { width: 8, height: 8 } },
      { reference: tinyY4m, distorted: tinyY4m },
      { reference: tinyMkv, distorted: tinyMkv }
    ]) {
      const answer = await post(server, body)
      expect([answer.status, answer.json.error], JSON.stringify(body)).toEqual([400, vmafRefusal])
    }
    // A requested feature with a larger minimum is named with where it comes from.
    const small = join(media, "small64.yuv")
    writeFileSync(small, Buffer.alloc(64 * 64 + 2 * 32 * 32, 100))
    const options = { width: 64, height: 64, features: ["float_ms_ssim", "psnr"] }
    const ssim = await post(server, { reference: small, distorted: small, options })
    expect([ssim.status, ssim.json.error]).toEqual([
      400,
      "a 64x64 frame is too small: float_ms_ssim needs at least 176x176 (options.features)"
    ])
    // Without it, the same pair scores.
    const scored = await post(server, {
      reference: small,
      distorted: small,
      options: { ...options, features: ["psnr"] }
    })
    expect(scored.status).toBe(200)
  })

  it("is INVALID_ARGUMENT over gRPC, for Score and for a ScoreStream header", async () => {
    const client = scoringClient(server.grpc ?? "")
    try {
      const unary: unknown = await client
        .score({ reference: tinyRaw, distorted: tinyRaw, options: { width: 8, height: 8 } })
        .then(
          () => undefined,
          (error: unknown) => error
        )
      expect(isGrpcFailure(unary) && [unary.code, unary.details]).toEqual([GrpcStatus.INVALID_ARGUMENT, vmafRefusal])
      const stream: unknown = await client
        .stream([{ header: { options: { width: 8, height: 8 } } }, { frame: { reference: frame, distorted: frame } }])
        .then(
          () => undefined,
          (error: unknown) => error
        )
      expect(isGrpcFailure(stream) && [stream.code, stream.details]).toEqual([GrpcStatus.INVALID_ARGUMENT, vmafRefusal])
    } finally {
      client.close()
    }
  })
})
