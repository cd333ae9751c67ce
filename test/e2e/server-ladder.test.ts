/**
 * Ladders on the compiled svc-server (issue 18): POST /v1/ladder and gRPC ScoreLadder give, for a
 * ladder of 4 renditions of other sizes and codecs made here with ffmpeg, per rendition exactly
 * the per-frame values of 4 separate scores; the reference is read once (provenance), its
 * roots are checked like every rendition's, and the answer validates against the OpenAPI schema.
 */
import { status as GrpcStatus } from "@grpc/grpc-js"
import Ajv from "ajv"
import { mkdirSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { LadderResult, ScoreResult } from "../../modules/scorer/index.ts"
import { type RunningService, startService } from "../../local/executables.ts"
import { fixture } from "../support/fixtures.ts"
import { ffmpegPixelFormatOf, ffmpegRun, rawInput, scratchDir } from "../support/media.ts"
import { isGrpcFailure, scoringClient } from "./server-support.ts"

const scratch = scratchDir("svc-ladder-e2e-")
afterAll(() => scratch.remove())

const postTo = (service: RunningService, path: string, body: unknown) =>
  fetch(`${service.http}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body)
  })

const perFrame = (result: Pick<ScoreResult, "frames">) => result.frames.map((frame) => frame.metrics)

describe("svc-server ladders", () => {
  let service: RunningService
  let grpc: ReturnType<typeof scoringClient>
  const media = join(scratch.dir, "media")
  const entry = fixture("v01_testsrc2_420_8_x264")
  const pix = ffmpegPixelFormatOf(entry)
  const make = (name: string, args: ReadonlyArray<string>) => {
    ffmpegRun([...rawInput(entry, entry.reference), ...args, "-y", join(media, name)])
    return join(media, name)
  }
  let reference = ""
  let renditions: ReadonlyArray<{ label: string; distorted: string; options?: object }> = []
  const options = { per_frame: true, features: ["psnr"], threads: 2 }

  beforeAll(async () => {
    mkdirSync(media)
    reference = make("reference.mkv", ["-c:v", "ffv1", "-pix_fmt", pix])
    renditions = [
      { label: "320p-h264", distorted: make("r1.mp4", ["-c:v", "libx264", "-crf", "32", "-pix_fmt", pix]) },
      {
        label: "160p-hevc",
        distorted: make("r2.mkv", [
          "-vf",
          "scale=160:120",
          "-c:v",
          "libx265",
          "-crf",
          "30",
          "-pix_fmt",
          pix,
          "-x265-params",
          "log-level=error"
        ])
      },
      { label: "256p-mpeg4", distorted: make("r3.avi", ["-vf", "scale=256:192", "-c:v", "mpeg4", "-q:v", "6"]) },
      {
        label: "160p-vp9",
        distorted: make("r4.webm", ["-vf", "scale=160:120", "-c:v", "libvpx-vp9", "-b:v", "80k", "-pix_fmt", pix]),
        options: { scale: "lanczos" }
      }
    ]
    // Roots: the media directory only, so a rendition elsewhere is refused (403) as Score refuses it.
    service = await startService("svc-server", { listeners: ["http", "grpc"], env: { SVC_INPUT_ROOTS: media } })
    grpc = scoringClient(service.grpc ?? "")
  })
  afterAll(async () => {
    grpc.close()
    expect(await service.stop()).toBe(0)
  })

  it("REST and gRPC: per rendition exactly the per-frame values of 4 separate scores, one reference pass", async () => {
    const request = { reference, renditions, options }
    const response = await postTo(service, "/v1/ladder", request)
    expect(response.status).toBe(200)
    const rest = (await response.json()) as LadderResult
    const viaGrpc = (await grpc.ladder(request)) as unknown as LadderResult
    expect(rest.renditions.map((r) => r.label)).toEqual(renditions.map((r) => r.label))
    for (const [index, rung] of renditions.entries()) {
      const alone = (await postTo(service, "/v1/score", {
        reference,
        distorted: rung.distorted,
        options: { ...options, ...(rung.options ?? {}) }
      }).then((r) => r.json())) as ScoreResult
      const got = rest.renditions[index] as LadderResult["renditions"][number]
      expect(perFrame(got)).toEqual(perFrame(alone))
      expect(got.score).toBe(alone.score)
      expect(got.features).toEqual(alone.features)
      const fromGrpc = viaGrpc.renditions[index] as LadderResult["renditions"][number]
      expect(perFrame(fromGrpc)).toEqual(perFrame(got))
      expect(fromGrpc.summary).toEqual(got.summary)
    }
    expect(rest.provenance).toMatchObject({
      reference_passes: 1,
      reference_decoders: 1,
      reference_frames: entry.frames,
      reference_input: { container: "matroska,webm", codec: "ffv1", width: 320, height: 240 }
    })
    expect(viaGrpc.provenance.reference_passes).toBe(1)
    expect(rest.renditions.map((r) => r.summary.codec)).toEqual(["h264", "hevc", "mpeg4", "vp9"])
    // The one structured log line of the ladder names its route.
    expect(
      service.logs.some((line) => line.annotations.route === "POST /v1/ladder" && line.annotations.status === 200)
    ).toBe(true)
  })

  it("the answer validates against the OpenAPI description's ScoreLadderResponse", async () => {
    const spec = (await fetch(`${service.http}/apidocs/spec.json`).then((r) => r.json())) as { components: object }
    const ajv = new Ajv({ strict: false, validateFormats: false })
    ajv.addSchema({ components: spec.components }, "spec")
    const body = await postTo(service, "/v1/ladder", {
      reference,
      renditions: renditions.slice(0, 2),
      options: { per_frame: true }
    }).then((r) => r.json())
    const valid = ajv.validate({ $ref: "spec#/components/schemas/ScoreLadderResponse" }, body)
    expect(ajv.errors ?? []).toEqual([])
    expect(valid).toBe(true)
  })

  it("refuses as Score does: bad requests 400 / INVALID_ARGUMENT, a rendition outside the roots 403", async () => {
    const duplicate = await postTo(service, "/v1/ladder", {
      reference,
      renditions: [
        { label: "a", distorted: reference },
        { label: "a", distorted: reference }
      ]
    })
    expect(duplicate.status).toBe(400)
    expect(await duplicate.json()).toEqual({ error: 'renditions[1].label: "a" names two renditions' })
    const outside = await postTo(service, "/v1/ladder", {
      reference,
      renditions: [
        { label: "in", distorted: reference },
        { label: "out", distorted: entry.distorted }
      ],
      options: { width: 320, height: 240 }
    })
    expect(outside.status).toBe(403)
    const failure = await grpc.ladder({ reference, renditions: [] }).then(
      () => undefined,
      (error: unknown) => error
    )
    expect(isGrpcFailure(failure) && failure.code).toBe(GrpcStatus.INVALID_ARGUMENT)
  })
})
