/**
 * Encoded inputs end to end on the compiled executables: svc-server scores an .mp4 over HTTP and
 * gRPC alike, with the decoder in the provenance; a client that goes away mid-decode (HTTP
 * abort, gRPC cancel) and a job cancelled while its node decodes leave no ffmpeg process; a
 * server without ffmpeg refuses encoded inputs with a clear 400 and still scores raw ones.
 */
import * as grpc from "@grpc/grpc-js"
import { readFileSync } from "node:fs"
import { dirname } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { serviceDefinition } from "../../modules/transport/grpc/proto.ts"
import { type RunningService, startService } from "../../local/executables.ts"
import { fixture, rawOptions } from "../support/fixtures.ts"
import { childrenNamed, ffmpegRun, rawInput, scratchDir, writeLongClip } from "../support/media.ts"
import { ControllerClient, expectOk, jobInState, Scratch, startNode, waitFor } from "./controller-support.ts"
import { isGrpcFailure, scoringClient } from "./server-support.ts"

const entry = fixture("v01")
const scratch = scratchDir("svc-encoded-e2e-")
const mp4 = `${scratch.dir}/v01.dis.mp4`
/** Long enough that scoring it is still running when the test cancels it. */
const long = `${scratch.dir}/long.mkv`

beforeAll(async () => {
  ffmpegRun([...rawInput(entry, entry.distorted), "-c:v", "libx264", "-preset", "ultrafast", "-crf", "30", "-y", mp4])
  await writeLongClip(long)
})
afterAll(() => scratch.remove())

const encodedRequest = { reference: entry.reference, distorted: mp4, options: rawOptions(entry) }
const longRequest = { reference: long, distorted: long, options: { threads: 1 } }

const post = (http: string, body: unknown, signal?: AbortSignal) =>
  fetch(`${http}/v1/score`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
    ...(signal ? { signal } : {})
  })

/** Waits until `pid` runs `count` ffmpeg children (two while a pair is decoded). */
const decoders = (pid: number, count: number) =>
  waitFor(async () => (childrenNamed(pid, "ffmpeg").length >= count ? true : undefined), 20_000, "ffmpeg to start")
const noDecoders = (pid: number) =>
  waitFor(async () => (childrenNamed(pid, "ffmpeg").length === 0 ? true : undefined), 10_000, "ffmpeg to be gone")

describe("svc-server with ffmpeg", () => {
  let server: RunningService
  let client: ReturnType<typeof scoringClient>
  beforeAll(async () => {
    server = await startService("svc-server", { listeners: ["http", "grpc"], env: { SVC_LOG_LEVEL: "info" } })
    client = scoringClient(server.grpc ?? "")
  })
  afterAll(async () => {
    client.close()
    expect(await server.stop()).toBe(0)
  })

  it("scores an H.264 .mp4 over HTTP and gRPC alike, naming the decoder and each input", async () => {
    const response = await post(server.http, encodedRequest)
    const body = (await response.json()) as Record<string, Record<string, unknown>>
    expect(response.status, JSON.stringify(body)).toBe(200)
    expect(body.provenance).toMatchObject({
      decoder: expect.stringMatching(/^ffmpeg version /),
      scaling: "none",
      reference_input: { container: "raw", codec: "rawvideo", width: 320, height: 240, pixel_format: "yuv420p" },
      distorted_input: { container: expect.stringContaining("mp4"), codec: "h264", width: 320, height: 240 }
    })
    const overGrpc = await client.score(encodedRequest)
    expect(overGrpc.score).toBe(body.score)
    expect(overGrpc.provenance).toMatchObject({
      decoder: body.provenance?.decoder,
      distorted_input: body.provenance?.distorted_input
    })
  })

  it("an HTTP client that goes away mid-decode leaves no ffmpeg process", async () => {
    const pid = server.process.pid
    const abort = new AbortController()
    const pending = post(server.http, longRequest, abort.signal).catch((error: unknown) => error)
    await decoders(pid, 2)
    abort.abort()
    await pending
    await noDecoders(pid)
    expect((await fetch(`${server.http}/v1/health`)).status).toBe(200)
  })

  it("a gRPC call cancelled mid-decode leaves no ffmpeg process", async () => {
    const pid = server.process.pid
    const raw = new grpc.Client(server.grpc ?? "", grpc.credentials.createInsecure())
    const method = serviceDefinition("svc.v1.SvcScoring").Score
    if (!method) throw new Error("no Score method")
    const outcome = new Promise<grpc.ServiceError | null>((resolve) => {
      const call = raw.makeUnaryRequest(
        method.path,
        method.requestSerialize,
        method.responseDeserialize,
        longRequest,
        (error) => resolve(error)
      )
      void decoders(pid, 2).then(() => call.cancel())
    })
    expect((await outcome)?.code).toBe(grpc.status.CANCELLED)
    await noDecoders(pid)
    raw.close()
  })
})

/** Whether a process of that id still exists (a zombie counts as gone). */
const alive = (pid: number) => {
  try {
    return !/^\d+ \(.*\) Z /.test(readFileSync(`/proc/${pid}/stat`, "utf8"))
  } catch {
    return false
  }
}

describe("a stopping service", () => {
  it("svc-server stopped (SIGTERM) mid-decode leaves no ffmpeg process", async () => {
    const server = await startService("svc-server", { env: { SVC_LOG_LEVEL: "info" } })
    const pending = post(server.http, longRequest).catch((error: unknown) => error)
    await decoders(server.process.pid, 2)
    const children = childrenNamed(server.process.pid, "ffmpeg")
    expect(await server.stop()).toBe(0)
    await pending
    await waitFor(async () => (children.some(alive) ? undefined : true), 10_000, "ffmpeg to be gone")
  })
})

describe("svc-server without ffmpeg", () => {
  let server: RunningService
  let client: ReturnType<typeof scoringClient>
  beforeAll(async () => {
    server = await startService("svc-server", {
      listeners: ["http", "grpc"],
      env: { SVC_FFMPEG: `${scratch.dir}/missing/ffmpeg`, SVC_LOG_LEVEL: "info" }
    })
    client = scoringClient(server.grpc ?? "")
  })
  afterAll(async () => {
    client.close()
    expect(await server.stop()).toBe(0)
  })

  it("refuses an encoded input with a 400 / INVALID_ARGUMENT naming ffmpeg, and scores raw YUV", async () => {
    const refused = await post(server.http, encodedRequest)
    expect(refused.status).toBe(400)
    const { error } = (await refused.json()) as { error: string }
    expect(error).toMatch(/^input ".*v01\.dis\.mp4" is encoded video, which needs ffmpeg to decode: SVC_FFMPEG/)
    const overGrpc = await client.score(encodedRequest).catch((failure: unknown) => failure)
    expect(isGrpcFailure(overGrpc) && overGrpc.code).toBe(grpc.status.INVALID_ARGUMENT)
    const raw = await post(server.http, { ...encodedRequest, distorted: entry.distorted })
    expect(raw.status).toBe(200)
  })
})

describe("svc-controller and svc-node", () => {
  let controller: RunningService
  let node: RunningService
  let client: ControllerClient
  const token = "unused-in-disabled-mode"
  const files = new Scratch()
  beforeAll(async () => {
    controller = await startService("svc-controller", {
      listeners: ["http", "grpc"],
      env: {
        SVC_AUTH_DISABLED: "true",
        SVC_SCORING_ROOTS: `${scratch.dir},${dirname(entry.reference)}`,
        SVC_STORE_PATH: files.path("jobs.sqlite"),
        SVC_LOG_LEVEL: "info"
      }
    })
    client = new ControllerClient(controller.grpc ?? "")
    node = await startNode(files, controller.grpc ?? "", token, "node")
  })
  afterAll(async () => {
    client.close()
    await node.stop()
    expect(await controller.stop()).toBe(0)
    files.remove()
  })

  it("a node scores an encoded job with the decoder in its provenance", async () => {
    const submitted = expectOk(await client.submit(encodedRequest, token))
    const finished = await jobInState(client, String(submitted.id), token, "JOB_STATE_FINISHED", 60_000)
    expect(finished.result).toMatchObject({
      frame_count: entry.frames,
      provenance: { decoder: expect.stringMatching(/^ffmpeg version /), distorted_input: { codec: "h264" } }
    })
  })

  it("cancelling a job while its node decodes leaves no ffmpeg process on the node", async () => {
    const pid = node.process.pid
    const submitted = expectOk(await client.submit(longRequest, token))
    await decoders(pid, 2)
    expectOk(await client.unary("svc.v1.Jobs", "CancelJob", { id: submitted.id }, token))
    await noDecoders(pid)
    expect(expectOk(await client.getJob(String(submitted.id), token)).state).toBe("JOB_STATE_CANCELLED")
  })

  it("a node stopped (SIGTERM) mid-decode leaves no ffmpeg process", async () => {
    const pid = node.process.pid
    expectOk(await client.submit(longRequest, token))
    await decoders(pid, 2)
    const children = childrenNamed(pid, "ffmpeg")
    await node.stop()
    await waitFor(async () => (children.some(alive) ? undefined : true), 10_000, "ffmpeg to be gone")
  })
})
