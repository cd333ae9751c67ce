/**
 * Decoders inside the walls (issue 27), on the compiled svc-server with the machine's ffmpeg:
 * - the memory budget covers decoding: inputs whose decoders can never fit are refused before any
 *   decoder starts, and the whole process tree (server and children, RSS summed every 100 ms)
 *   stays small; a ladder counts every rendition's decoder;
 * - no decoder outlives the server: kill -9 mid-ladder leaves no ffmpeg alive a second later;
 * - nothing outside the roots is opened, even through a link: a FIFO's blocked writer stays
 *   blocked after the 403;
 * - a decode that runs past what its container declares (an edit list repeating its frames
 *   thousands of times) is refused at once, naming both counts;
 * - a reference whose resolution or chroma subsampling changes mid-stream is refused with the
 *   frame index; a distorted one is scaled, or refused when options.scale is "none".
 */
import { gunzipSync } from "node:zlib"
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Clip, writeClip } from "../../local/clip.ts"
import { repoRoot, type RunningService, startService } from "../../local/executables.ts"
import { childrenNamed, ffmpegRun, scratchDir, writeLongClip } from "../support/media.ts"
import { peakWhile } from "../../local/process-tree.ts"
import { scoringClient } from "./server-support.ts"

const scratch = scratchDir("svc-decoders-")
afterAll(() => scratch.remove())
const file = (name: string) => join(scratch.dir, name)

/** A committed crafted clip (test/media), unpacked into the scratch folder. */
const unpack = (name: string) => {
  writeFileSync(file(name), gunzipSync(readFileSync(join(repoRoot, "test", "media", `${name}.gz`))))
  return file(name)
}

/** Still alive (not gone, not a zombie waiting for its reaper). */
const alive = (pid: number) => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z"
  } catch {
    return false
  }
}

const post = (service: RunningService, path: string, body: unknown) =>
  fetch(`${service.http}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body)
  }).then(async (response) => ({ status: response.status, body: (await response.json()) as Record<string, unknown> }))

const mebibytes = 1024 * 1024
/** The size of the small clips (testsrc2 at 25 fps). */
const clip320x240 = { width: 320, height: 240 } as const
let small = ""
beforeAll(async () => {
  small = await writeClip(file("small.mp4"), { ...clip320x240, frames: 10, codec: "libx264", preset: "ultrafast" })
})

describe("the memory budget covers decoders (SVC_MAX_SCORE_MEMORY=256Mi)", () => {
  let service: RunningService
  beforeAll(async () => {
    service = await startService("svc-server", { env: { SVC_MAX_SCORE_MEMORY: "256Mi" } })
  })
  afterAll(() => service.stop())

  it("two concurrent scores against 16000x16000 frames are refused with 400 before decoding; the tree stays under 600 MB", async () => {
    const huge = unpack("gray-16000x16000.mp4")
    const body = { reference: small, distorted: huge }
    const { result, peak } = await peakWhile(
      service.process.pid,
      Promise.all([post(service, "/v1/score", body), post(service, "/v1/score", body)])
    )
    for (const answer of result) {
      expect(answer.status).toBe(400)
      expect(String(answer.body.error)).toMatch(/needs about .* more than the whole budget of 256\.0 MiB/)
    }
    expect(peak).toBeLessThan(600 * mebibytes)
  })

  it("a 16-rendition ladder of 8000x8000 frames is refused with 400; the tree stays under 600 MB", async () => {
    const big = unpack("gray-8000x8000.mp4")
    const renditions = Array.from({ length: 16 }, (_, i) => ({ label: `r${i}`, distorted: big }))
    const { result, peak } = await peakWhile(
      service.process.pid,
      post(service, "/v1/ladder", { reference: small, renditions })
    )
    expect(result.status).toBe(400)
    expect(String(result.body.error)).toMatch(/more than the whole budget/)
    expect(peak).toBeLessThan(600 * mebibytes)
  })

  it("a ladder counts every rendition's decoder: 2 small renditions fit, 16 do not", async () => {
    const two = Array.from({ length: 2 }, (_, i) => ({ label: `r${i}`, distorted: small }))
    const fits = await post(service, "/v1/ladder", { reference: small, renditions: two })
    expect(fits.status).toBe(200)
    const many = Array.from({ length: 16 }, (_, i) => ({ label: `r${i}`, distorted: small }))
    const refused = await post(service, "/v1/ladder", { reference: small, renditions: many })
    expect(refused.status).toBe(400)
    expect(String(refused.body.error)).toMatch(/more than the whole budget of 256\.0 MiB/)
    // The refusal came before any decoder: none was started for it.
    expect(childrenNamed(service.process.pid, "ffmpeg")).toEqual([])
  })

  it("a file that lies to its probe (10 s of 320x240, then a 16000x16000 frame) fails alone inside its decoder's limit", async () => {
    const huge = unpack("gray-16000x16000.mp4")
    const first = file("liar.1.h264")
    const second = file("liar.2.h264")
    // Past the probe's 5 s of analysis: ffprobe sees a 320x240 stream.
    await writeClip(first, { ...clip320x240, frames: 250, codec: "libx264", preset: "ultrafast", format: "h264" })
    ffmpegRun(["-i", huge, "-c", "copy", "-bsf:v", "h264_mp4toannexb", "-f", "h264", "-y", second])
    const liar = file("liar.h264")
    writeFileSync(liar, Buffer.concat([readFileSync(first), readFileSync(second)]))
    const reference = file("liar-reference.mp4")
    await writeClip(reference, { ...clip320x240, frames: 252 })
    const { result, peak } = await peakWhile(
      service.process.pid,
      post(service, "/v1/score", { reference, distorted: liar })
    )
    expect(result.status).toBe(400)
    // ffmpeg reports the frames it could not allocate and goes on: the stream ends early.
    expect(String(result.body.error)).toMatch(/ffmpeg could not decode it|has 250 frames after skipping/)
    // The decoder's address-space limit (its small estimate + 512 MiB) stopped it: not 1 GB and more.
    expect(peak).toBeLessThan(900 * mebibytes)
  })

  it("/metrics shows the decoders' reserved memory and their observed peak", async () => {
    const text = await fetch(`${service.http}/metrics`).then((response) => response.text())
    expect(text).toMatch(/^svc_decoder_memory_reserved_bytes 0$/m)
    const peak = Number(/^svc_decoder_memory_peak_bytes (\d+)$/m.exec(text)?.[1])
    // The ladder that fitted ran three decoders of a 320x240 clip: tens of MB each, not gigabytes.
    expect(peak).toBeGreaterThan(1 * mebibytes)
    expect(peak).toBeLessThan(256 * mebibytes)
  })
})

describe("no decoder outlives the server", () => {
  it("kill -9 of svc-server mid-ladder: no ffmpeg child is alive a second later", async () => {
    const long = file("long.mp4")
    await writeLongClip(long)
    const service = await startService("svc-server")
    const renditions = Array.from({ length: 3 }, (_, i) => ({ label: `r${i}`, distorted: long }))
    const answer = post(service, "/v1/ladder", { reference: long, renditions }).catch(() => undefined)
    let decoders: ReadonlyArray<number> = []
    for (let waited = 0; decoders.length < 4 && waited < 600; waited++) {
      await Bun.sleep(100)
      decoders = childrenNamed(service.process.pid, "ffmpeg")
    }
    expect(decoders.length).toBe(4)
    service.process.kill("SIGKILL")
    await service.stop()
    await answer
    await Bun.sleep(1000)
    expect(decoders.filter(alive)).toEqual([])
  })
})

describe("nothing outside the roots is opened, even through a link", () => {
  it("an in-root link to an outside FIFO gets 403 and the FIFO is never opened (its writer stays blocked)", async () => {
    const root = file("root")
    mkdirSync(root)
    const fifo = file("outside.fifo")
    const made = Bun.spawnSync(["mkfifo", fifo])
    expect(made.exitCode).toBe(0)
    symlinkSync(fifo, join(root, "clip.mp4"))
    // The shell blocks in open(2) of the FIFO for writing until some process opens it for reading.
    const writer = Bun.spawn(["sh", "-c", `printf x > '${fifo}'`], { stdio: ["ignore", "ignore", "ignore"] })
    const service = await startService("svc-server", { env: { SVC_INPUT_ROOTS: root } })
    try {
      const reference = join(root, "reference.mp4")
      await writeClip(reference, { ...clip320x240, frames: 3 })
      const answer = await post(service, "/v1/score", { reference, distorted: join(root, "clip.mp4") })
      expect(answer.status).toBe(403)
      expect(answer.body.error).toBe(`scoring input "${join(root, "clip.mp4")}" is outside the tenant's scoring roots`)
      await Bun.sleep(500)
      expect(writer.exitCode).toBeNull()
    } finally {
      writer.kill("SIGKILL")
      await writer.exited
      await service.stop()
    }
  })
})

/**
 * Rewrites an MP4 (moov after mdat, one track with a one-entry edit list) so that its edit list
 * plays the whole track `times` times: the container still holds (and declares) the same frames,
 * a decoder following the edit list produces `times` as many. The boxes enclosing the edit list
 * grow by the added entries; mdat comes first, so no chunk offset moves.
 */
const loopEditList = (source: string, target: string, times: number) => {
  const bytes = readFileSync(source)
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const type = (at: number) => bytes.toString("latin1", at + 4, at + 8)
  const find = (from: number, to: number, wanted: string): number => {
    for (let at = from; at < to; at += view.getUint32(at)) if (type(at) === wanted) return at
    throw new Error(`no ${wanted} box`)
  }
  const moov = find(0, bytes.length, "moov")
  const trak = find(moov + 8, moov + view.getUint32(moov), "trak")
  const edts = find(trak + 8, trak + view.getUint32(trak), "edts")
  const elst = find(edts + 8, edts + view.getUint32(edts), "elst")
  const version = bytes[elst + 8]
  const entryBytes = version === 1 ? 20 : 12
  const entry = bytes.subarray(elst + 16, elst + 16 + entryBytes)
  const added = (times - 1) * entryBytes
  const header = Buffer.from(bytes.subarray(elst, elst + 16))
  header.writeUInt32BE(view.getUint32(elst) + added, 0)
  header.writeUInt32BE(times, 12)
  const before = Buffer.from(bytes.subarray(0, elst))
  for (const box of [moov, trak, edts]) before.writeUInt32BE(view.getUint32(box) + added, box)
  const entries = Buffer.concat(Array.from({ length: times }, () => entry))
  writeFileSync(target, Buffer.concat([before, header, entries, bytes.subarray(elst + 16 + entryBytes)]))
}

describe("refusals quote the input as sent", () => {
  it("a file:// input outside the roots, or linking outside them, is refused quoting the URL", async () => {
    const root = file("url-root")
    mkdirSync(root)
    const outside = file("url-outside.mp4")
    await writeClip(outside, { ...clip320x240, frames: 3 })
    symlinkSync(outside, join(root, "link.mp4"))
    const reference = join(root, "reference.mp4")
    await writeClip(reference, { ...clip320x240, frames: 3 })
    const service = await startService("svc-server", { env: { SVC_INPUT_ROOTS: root } })
    try {
      for (const distorted of [`file://${outside}`, `file://${join(root, "link.mp4")}`]) {
        const answer = await post(service, "/v1/score", { reference, distorted })
        expect(answer.status, distorted).toBe(403)
        expect(answer.body.error).toBe(`scoring input "${distorted}" is outside the tenant's scoring roots`)
      }
    } finally {
      await service.stop()
    }
  })
})

describe("a decode past what the container declares", () => {
  let service: RunningService
  let grpc: ReturnType<typeof scoringClient>
  beforeAll(async () => {
    service = await startService("svc-server", { listeners: ["http", "grpc"] })
    grpc = scoringClient(service.grpc ?? "")
  })
  afterAll(async () => {
    grpc.close()
    await service.stop()
  })

  it("an edit list repeating 50 frames 20,000 times is refused within 20 s, naming both counts", async () => {
    const clip = file("edit-list.mp4")
    await writeClip(clip, {
      width: 64,
      height: 64,
      frames: 50,
      codec: "libx264",
      preset: "ultrafast",
      extra: ["-use_editlist", "1"]
    })
    const looping = file("looping.mp4")
    loopEditList(clip, looping, 20_000)
    // ffmpeg itself follows the edit list far past the 50 frames the container declares.
    const declared = ffmpegRun(
      ["-select_streams", "v:0", "-show_entries", "stream=nb_frames", "-of", "csv=p=0", looping],
      "ffprobe"
    )
    expect(Number(declared.trim())).toBe(50)
    const started = performance.now()
    const answer = await post(service, "/v1/score", { reference: looping, distorted: looping })
    expect(performance.now() - started).toBeLessThan(20_000)
    expect(answer.status).toBe(400)
    expect(answer.body.error).toBe(
      `input "${looping}" decodes more frames than its container declares: 50 declared, more than 52 decoded`
    )
    // The same clip played once scores: edit lists themselves are fine.
    const once = await post(service, "/v1/score", { reference: clip, distorted: clip })
    expect(once.status).toBe(200)
  })

  type Picture = Pick<Clip, "width" | "height" | "pixelFormat">
  /** 15 frames of 320x240 4:2:0, then 15 of `second` (an H.264 stream whose SPS changes), in Matroska. */
  const changing = async (name: string, second: Picture) => {
    const part = (target: string, picture: Picture) =>
      writeClip(target, { ...picture, frames: 15, codec: "libx264", preset: "ultrafast", format: "h264" })
    await part(file(`${name}.1.h264`), { ...clip320x240, pixelFormat: "yuv420p" })
    await part(file(`${name}.2.h264`), second)
    writeFileSync(
      file(`${name}.h264`),
      Buffer.concat([readFileSync(file(`${name}.1.h264`)), readFileSync(file(`${name}.2.h264`))])
    )
    ffmpegRun(["-f", "h264", "-i", file(`${name}.h264`), "-c", "copy", "-y", file(`${name}.mkv`)])
    return file(`${name}.mkv`)
  }

  it("a reference changing resolution, chroma subsampling or bit depth mid-stream is refused with the frame index", async () => {
    const steady = file("steady.mp4")
    await writeClip(steady, { ...clip320x240, frames: 30 })
    for (const second of [
      { width: 640, height: 480, pixelFormat: "yuv420p" },
      { width: 320, height: 240, pixelFormat: "yuv444p" },
      { width: 320, height: 240, pixelFormat: "yuv420p10le" }
    ]) {
      const reference = await changing(`change-${second.width}x${second.height}${second.pixelFormat}`, second)
      const answer = await post(service, "/v1/score", { reference, distorted: steady })
      expect(answer.status).toBe(400)
      expect(answer.body.error).toBe(
        `reference "${reference}" changes its resolution or pixel format at frame 15; a reference must keep one`
      )
    }
  })

  it("a distorted input changing resolution mid-stream is scaled, and refused when options.scale is none", async () => {
    const steady = file("steady-ref.mp4")
    await writeClip(steady, { ...clip320x240, frames: 30 })
    const distorted = await changing("change-distorted", { width: 640, height: 480, pixelFormat: "yuv420p" })
    const scaled = await post(service, "/v1/score", { reference: steady, distorted })
    expect(scaled.status).toBe(200)
    // The provenance lists the change the scaler absorbed.
    const provenance = scaled.body.provenance as Record<string, unknown>
    expect(provenance.scaling).toBe("bicubic 640x480 -> 320x240")
    expect(provenance.distorted_input).toEqual({
      container: "matroska,webm",
      codec: "h264",
      width: 320,
      height: 240,
      pixel_format: "yuv420p",
      changes: [{ frame: 15, width: 640, height: 480, pixel_format: "yuv420p" }]
    })
    const refused = await post(service, "/v1/score", { reference: steady, distorted, options: { scale: "none" } })
    expect(refused.status).toBe(400)
    expect(refused.body.error).toBe(
      `input "${distorted}" changes its resolution or pixel format at frame 15 and options.scale is "none"`
    )
  })

  it("a distorted input changing bit depth alone mid-stream is converted and listed, and refused when options.scale is none", async () => {
    const steady = file("steady-depth-ref.mp4")
    await writeClip(steady, { ...clip320x240, frames: 30 })
    const distorted = await changing("change-depth", { width: 320, height: 240, pixelFormat: "yuv420p10le" })
    const converted = await post(service, "/v1/score", { reference: steady, distorted })
    expect(converted.status).toBe(200)
    expect(converted.body.frame_count).toBe(30)
    const provenance = converted.body.provenance as Record<string, Record<string, unknown>>
    // Nothing was scaled; the change of depth is listed where the stream made it.
    expect(provenance.scaling).toBe("none")
    expect(provenance.distorted_input?.changes).toEqual([
      { frame: 15, width: 320, height: 240, pixel_format: "yuv420p10le" }
    ])
    const refused = await post(service, "/v1/score", { reference: steady, distorted, options: { scale: "none" } })
    expect(refused.status).toBe(400)
    expect(refused.body.error).toBe(
      `input "${distorted}" changes its resolution or pixel format at frame 15 and options.scale is "none"`
    )
  })

  it("a ladder rendition that changes mid-stream lists its changes in its own provenance", async () => {
    const steady = file("steady-ladder-ref.mp4")
    await writeClip(steady, { ...clip320x240, frames: 30 })
    const changingRendition = await changing("change-rendition", {
      width: 640,
      height: 480,
      pixelFormat: "yuv420p10le"
    })
    const answer = await post(service, "/v1/ladder", {
      reference: steady,
      renditions: [
        { label: "steady", distorted: steady },
        { label: "changing", distorted: changingRendition }
      ]
    })
    expect(answer.status).toBe(200)
    const [first, second] = answer.body.renditions as Array<{ provenance: Record<string, Record<string, unknown>> }>
    expect(first?.provenance.distorted_input?.changes).toBeUndefined()
    expect(first?.provenance.scaling).toBe("none")
    expect(second?.provenance.distorted_input?.changes).toEqual([
      { frame: 15, width: 640, height: 480, pixel_format: "yuv420p10le" }
    ])
    expect(second?.provenance.scaling).toBe("bicubic 640x480 -> 320x240")
  })

  it("a distorted input that changes and changes back lists both changes", async () => {
    const steady = file("steady-back-ref.mp4")
    await writeClip(steady, { ...clip320x240, frames: 45 })
    const there = await changing("change-there", { width: 640, height: 480, pixelFormat: "yuv420p" })
    const back = file("change-back.mkv")
    // 15 frames of 320x240, 15 of 640x480, 15 of 320x240 again.
    writeFileSync(
      file("change-back.h264"),
      Buffer.concat([readFileSync(file("change-there.h264")), readFileSync(file("change-there.1.h264"))])
    )
    ffmpegRun(["-f", "h264", "-i", file("change-back.h264"), "-c", "copy", "-y", back])
    expect(there).not.toBe(back)
    const answer = await post(service, "/v1/score", { reference: steady, distorted: back })
    expect(answer.status).toBe(200)
    const provenance = answer.body.provenance as Record<string, Record<string, unknown>>
    expect(provenance.distorted_input?.changes).toEqual([
      { frame: 15, width: 640, height: 480, pixel_format: "yuv420p" },
      { frame: 30, width: 320, height: 240, pixel_format: "yuv420p" }
    ])
    // The same changes over gRPC (svc.v1.InputInfo.changes).
    const overGrpc = (await grpc.score({ reference: steady, distorted: back })) as {
      provenance: { distorted_input: { changes: ReadonlyArray<unknown> } }
    }
    expect(overGrpc.provenance.distorted_input.changes).toEqual(provenance.distorted_input?.changes)
  })
})
