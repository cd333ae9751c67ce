/**
 * Encoded inputs through the real scorer and the machine's ffmpeg: lossless encodes of every
 * golden fixture score exactly as the raw pair, lossy ones exactly as their decoded YUV, scaling,
 * frame offsets, variable frame rate, a missing ffmpeg, no ffmpeg left after an interruption, and
 * no frame passing through JavaScript (the library reads decoders' pipes and files itself).
 */
import { ConfigProvider, Effect, Exit, Fiber, Layer, ManagedRuntime, Stream } from "effect"
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { writeClip } from "../../../local/clip.ts"
import { modelDirEnv } from "../../../local/executables.ts"
import { type Fixture, fixture, fixtures, rawOptions } from "../../../test/support/fixtures.ts"
import {
  childrenNamed,
  countFrames,
  ffmpegPixelFormatOf,
  ffmpegRun,
  rawInput,
  scratchDir,
  writeLongClip
} from "../../../test/support/media.ts"
import { parseLadderRequest, parseScoreRequest, Scorer } from "../../scorer/index.ts"
import { Ffmpeg } from "../ffmpeg.ts"
import { scoreLadderInputs } from "../ladder.ts"
import { scoreInputs } from "../score.ts"

const runtimeWith = (env: Record<string, string> = {}) =>
  ManagedRuntime.make(
    Layer.merge(Scorer.Default, Ffmpeg.Default).pipe(
      Layer.provide(
        Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries({ ...modelDirEnv, ...env }))))
      )
    )
  )

const runtime = runtimeWith()
const scratch = scratchDir("svc-encoded-")
afterAll(async () => {
  await runtime.dispose()
  scratch.remove()
})

const scoreEffect = (body: unknown) =>
  Effect.flatMap(parseScoreRequest(body), (job) => Effect.flatMap(Scorer, (scorer) => scoreInputs(scorer, job)))
const score = (body: unknown) => runtime.runPromise(scoreEffect(body))
const scoreExit = (body: unknown) => runtime.runPromiseExit(scoreEffect(body))

/** The typed error a score failed with. */
const failure = (exit: Exit.Exit<unknown, unknown>) =>
  Exit.isFailure(exit) && exit.cause._tag === "Fail" ? (exit.cause.error as { _tag: string; message: string }) : exit

const file = (name: string) => join(scratch.dir, name)
const extra = ["psnr", "float_ssim"]

/** Encodes a fixture's distorted YUV with `codec` options into `name`. */
const encode = (entry: Fixture, name: string, codec: ReadonlyArray<string>, filters: ReadonlyArray<string> = []) => {
  ffmpegRun([...rawInput(entry, entry.distorted), ...filters, ...codec, "-y", file(name)])
  return file(name)
}

/** Decodes `path` to raw YUV in the fixture's layout (the test's own ffmpeg call). */
const decodeToYuv = (entry: Fixture, path: string, name: string, filters: ReadonlyArray<string> = []) => {
  ffmpegRun([
    "-i",
    path,
    ...filters,
    "-fps_mode",
    "passthrough",
    "-pix_fmt",
    ffmpegPixelFormatOf(entry),
    "-f",
    "rawvideo",
    "-y",
    file(name)
  ])
  return file(name)
}

describe("lossless FFV1 in .mkv scores exactly as the raw pair (golden fixtures)", () => {
  it.each(fixtures)("$name", async (entry) => {
    const mkv = encode(entry, `${entry.name}.mkv`, ["-c:v", "ffv1", "-pix_fmt", ffmpegPixelFormatOf(entry)])
    const options = { ...rawOptions(entry), per_frame: true, features: extra }
    const raw = await score({ reference: entry.reference, distorted: entry.distorted, options })
    const decoded = await score({ reference: entry.reference, distorted: mkv, options })
    expect(decoded.frame_count).toBe(entry.frames)
    expect(decoded.frames).toEqual(raw.frames)
    expect(decoded.features).toEqual(raw.features)
    expect(decoded.pooled).toEqual(raw.pooled)
    expect(decoded.provenance.distorted_input).toEqual({
      container: "matroska,webm",
      codec: "ffv1",
      width: entry.width,
      height: entry.height,
      pixel_format: ffmpegPixelFormatOf(entry)
    })
    expect(decoded.provenance.reference_input).toMatchObject({ container: "raw", codec: "rawvideo" })
    expect(decoded.provenance.decoder).toMatch(/^ffmpeg version /)
    expect(decoded.provenance.scaling).toBe("none")
    expect(raw.provenance.decoder).toBe("")
  })
})

describe("lossy encodes score exactly as their decoded YUV", () => {
  it("H.264 in .mp4 (8-bit 4:2:0)", async () => {
    const entry = fixture("v01")
    const mp4 = encode(entry, "v01.mp4", [
      "-c:v",
      "libx264",
      "-preset",
      "ultrafast",
      "-crf",
      "32",
      "-pix_fmt",
      "yuv420p"
    ])
    const yuv = decodeToYuv(entry, mp4, "v01.mp4.yuv")
    const options = { ...rawOptions(entry), per_frame: true }
    const fromYuv = await score({ reference: entry.reference, distorted: yuv, options })
    const fromMp4 = await score({ reference: entry.reference, distorted: mp4, options })
    expect(fromMp4.frames).toEqual(fromYuv.frames)
    expect(fromMp4.score).toBe(fromYuv.score)
    expect(fromMp4.provenance.distorted_input).toMatchObject({
      codec: "h264",
      container: expect.stringContaining("mp4")
    })
  })

  it("10-bit HEVC in .mkv", async () => {
    const entry = fixture("v03")
    const mkv = encode(entry, "v03.hevc.mkv", [
      "-c:v",
      "libx265",
      "-preset",
      "ultrafast",
      "-x265-params",
      "log-level=error",
      "-crf",
      "30",
      "-pix_fmt",
      "yuv420p10le"
    ])
    const yuv = decodeToYuv(entry, mkv, "v03.hevc.yuv")
    const options = { ...rawOptions(entry), per_frame: true }
    const fromYuv = await score({ reference: entry.reference, distorted: yuv, options })
    const fromMkv = await score({ reference: entry.reference, distorted: mkv, options })
    expect(fromMkv.frames).toEqual(fromYuv.frames)
    expect(fromMkv.provenance.distorted_input).toMatchObject({ codec: "hevc", pixel_format: "yuv420p10le" })
  })

  it("an encoded reference sets the target: both sides .mkv score as both decoded", async () => {
    const entry = fixture("v05")
    const ref = file("v05.ref.mkv")
    ffmpegRun([...rawInput(entry, entry.reference), "-c:v", "ffv1", "-y", ref])
    const dis = encode(entry, "v05.dis.mkv", [
      "-c:v",
      "libx264",
      "-preset",
      "ultrafast",
      "-crf",
      "28",
      "-pix_fmt",
      "yuv422p"
    ])
    const options = { per_frame: true }
    const fromYuv = await score({
      reference: entry.reference,
      distorted: decodeToYuv(entry, dis, "v05.dis.yuv"),
      options: { ...rawOptions(entry), ...options }
    })
    const fromMkv = await score({ reference: ref, distorted: dis, options })
    expect(fromMkv.frames).toEqual(fromYuv.frames)
    expect(fromMkv.provenance.reference_input).toMatchObject({ codec: "ffv1", pixel_format: "yuv422p" })
  })
})

describe("scaling to the reference size", () => {
  const entry = fixture("v01")
  const half = () => encode(entry, "v01.half.mkv", ["-c:v", "ffv1"], ["-vf", "scale=160:120"])

  it("a 2x-downscaled encode is scaled back with bicubic by default, as ffmpeg's scale filter does", async () => {
    const small = half()
    const upscaled = decodeToYuv(entry, small, "v01.up.yuv", ["-vf", "scale=320:240:flags=bicubic"])
    const options = { ...rawOptions(entry), per_frame: true }
    const expected = await score({ reference: entry.reference, distorted: upscaled, options })
    const scaled = await score({ reference: entry.reference, distorted: small, options })
    expect(scaled.frames).toEqual(expected.frames)
    expect(scaled.provenance.scaling).toBe("bicubic 160x120 -> 320x240")
    const lanczos = await score({
      reference: entry.reference,
      distorted: small,
      options: { ...options, scale: "lanczos" }
    })
    expect(lanczos.provenance.scaling).toBe("lanczos 160x120 -> 320x240")
    expect(lanczos.score).not.toBe(scaled.score)
  })

  it('scale "none" refuses a size mismatch', async () => {
    const exit = await scoreExit({
      reference: entry.reference,
      distorted: half(),
      options: { ...rawOptions(entry), scale: "none" }
    })
    expect(failure(exit)).toMatchObject({
      _tag: "InvalidScoreRequest",
      message: expect.stringMatching(
        /^options.scale is "none" but .*v01.half.mkv is 160x120 and the reference is 320x240$/
      )
    })
  })

  it("refuses a scale it does not know", async () => {
    const exit = await scoreExit({
      reference: entry.reference,
      distorted: half(),
      options: { ...rawOptions(entry), scale: "area" }
    })
    expect(failure(exit)).toMatchObject({
      _tag: "InvalidScoreRequest",
      message: expect.stringMatching(/^options.scale/)
    })
  })
})

describe("frame offsets, count and subsample apply to decoded streams as to raw ones", () => {
  it("frame_skip_ref, frame_skip_dist, frame_cnt, subsample", async () => {
    const entry = fixture("v01")
    const mkv = encode(entry, "v01.offsets.mkv", ["-c:v", "ffv1"])
    const options = {
      ...rawOptions(entry),
      per_frame: true,
      frame_skip_ref: 3,
      frame_skip_dist: 2,
      frame_cnt: 12,
      subsample: 3
    }
    const raw = await score({ reference: entry.reference, distorted: entry.distorted, options })
    const decoded = await score({ reference: entry.reference, distorted: mkv, options })
    expect(raw.frame_count).toBe(4)
    expect(decoded.frames).toEqual(raw.frames)
    expect(decoded.score).toBe(raw.score)
  })

  it("a Y4M reference is read from its descriptor beside a decoded side", async () => {
    const entry = fixture("v04")
    const y4m = file("v04.ref.y4m")
    ffmpegRun([...rawInput(entry, entry.reference), "-f", "yuv4mpegpipe", "-y", y4m])
    const mkv = encode(entry, "v04.mkv", ["-c:v", "ffv1"])
    const raw = await score({
      reference: entry.reference,
      distorted: entry.distorted,
      options: { ...rawOptions(entry), per_frame: true }
    })
    const mixed = await score({ reference: y4m, distorted: mkv, options: { per_frame: true, frame_skip_ref: 0 } })
    expect(mixed.frames).toEqual(raw.frames)
    expect(mixed.provenance.reference_input).toMatchObject({ container: "y4m", pixel_format: "yuv444p" })
  })

  it("inputs of different lengths are refused", async () => {
    const entry = fixture("v01")
    const short = file("v01.short.mkv")
    ffmpegRun([...rawInput(entry, entry.distorted), "-frames:v", "10", "-c:v", "ffv1", "-y", short])
    const exit = await scoreExit({ reference: entry.reference, distorted: short, options: rawOptions(entry) })
    expect(failure(exit)).toMatchObject({
      _tag: "InvalidGeometry",
      message: expect.stringMatching(/v01.short.mkv has 10 frames after skipping, .*ref.yuv has more: lengths differ/)
    })
  })
})

describe("variable frame rate", () => {
  it("scores exactly the frames ffprobe -count_frames decodes (none duplicated or dropped)", async () => {
    const vfr = file("vfr.mkv")
    // Timestamps with gaps and bursts: 0..9 at 25 fps, then every other slot, then three in a slot.
    await writeClip(vfr, {
      width: 160,
      height: 120,
      frames: 40,
      codec: "libx264",
      preset: "ultrafast",
      extra: ["-vf", "setpts='if(lt(N,10),N,if(lt(N,25),2*N,50+N/3))/25/TB'", "-fps_mode", "vfr"]
    })
    const frames = countFrames(vfr)
    const result = await score({ reference: vfr, distorted: vfr })
    expect(result.frame_count).toBe(frames)
    expect(result.score).toBeGreaterThan(99)
  })
})

describe("robustness", () => {
  it("an .mp4 named .yuv is recognised by its bytes and decoded, not read as raw", async () => {
    const entry = fixture("v01")
    const disguised = encode(entry, "v01.disguised.yuv", [
      "-c:v",
      "libx264",
      "-preset",
      "ultrafast",
      "-crf",
      "20",
      "-f",
      "mp4"
    ])
    const result = await score({ reference: entry.reference, distorted: disguised, options: rawOptions(entry) })
    expect(result.frame_count).toBe(entry.frames)
    expect(result.provenance.distorted_input).toMatchObject({ codec: "h264" })
  })

  it("names are never arguments, and playlists that name other files are not followed", async () => {
    const entry = fixture("v01")
    const dashed = encode(entry, "-vf scale=2:2,concat.mkv", ["-c:v", "ffv1"])
    const scored = await score({ reference: entry.reference, distorted: dashed, options: rawOptions(entry) })
    expect(scored.frame_count).toBe(entry.frames)
    const playlists = {
      "list.ffconcat": `ffconcat version 1.0\nfile ${dashed}\nfile ${dashed}\n`,
      "list.m3u8": `#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXTINF:10,\n${dashed}\n#EXT-X-ENDLIST\n`
    }
    for (const [name, text] of Object.entries(playlists)) {
      writeFileSync(file(name), text)
      const exit = await scoreExit({ reference: file(name), distorted: file(name) })
      expect(failure(exit), name).toMatchObject({
        _tag: "InvalidScoreRequest",
        message: `input "${file(name)}" is not a video: neither Y4M nor a format ffmpeg recognises (raw YUV needs options.width and options.height)`
      })
    }
  })

  it("a file that is not video but has a container's magic number is a clear error", async () => {
    const fake = file("fake.mp4")
    writeFileSync(fake, Buffer.concat([Buffer.from([0, 0, 0, 24]), Buffer.from("ftypisom"), Buffer.alloc(2000, 7)]))
    const exit = await scoreExit({ reference: fake, distorted: fake })
    expect(failure(exit)).toMatchObject({
      _tag: "UnreadableInput",
      message: expect.stringMatching(/^input ".*fake\.mp4" is not a video ffmpeg can read: .*moov atom not found/)
    })
  })

  it("without ffmpeg an encoded input is a 400 naming what is missing, and raw pairs still score", async () => {
    const entry = fixture("v01")
    const mkv = encode(entry, "v01.noffmpeg.mkv", ["-c:v", "ffv1"])
    const without = runtimeWith({ SVC_FFMPEG: join(scratch.dir, "no-such-ffmpeg") })
    try {
      const exit = await without.runPromiseExit(
        scoreEffect({ reference: entry.reference, distorted: mkv, options: rawOptions(entry) })
      )
      expect(failure(exit)).toMatchObject({
        _tag: "InvalidScoreRequest",
        message: expect.stringMatching(
          /is encoded video, which needs ffmpeg to decode: SVC_FFMPEG ".*no-such-ffmpeg" is not/
        )
      })
      const raw = await without.runPromise(
        scoreEffect({ reference: entry.reference, distorted: entry.distorted, options: rawOptions(entry) })
      )
      expect(raw.frame_count).toBe(entry.frames)
    } finally {
      await without.dispose()
    }
  })

  it("an interrupted score leaves no ffmpeg process behind", async () => {
    const long = file("long.mkv")
    await writeClip(long, { width: 640, height: 360, frames: 400, codec: "libx264", preset: "ultrafast" })
    const fiber = runtime.runFork(scoreEffect({ reference: long, distorted: long, options: { threads: 1 } }))
    for (let i = 0; i < 500 && childrenNamed(process.pid, "ffmpeg").length < 2; i++) await Bun.sleep(10)
    expect(childrenNamed(process.pid, "ffmpeg").length).toBe(2)
    const exit = await runtime.runPromise(Fiber.interrupt(fiber))
    expect(Exit.isInterrupted(exit)).toBe(true)
    expect(childrenNamed(process.pid, "ffmpeg")).toEqual([])
  })

  it("a decoder killed mid-clip fails the score as ffmpeg's failure, not as the end of the clip", async () => {
    const long = file("killed.mkv")
    await writeLongClip(long)
    const fiber = runtime.runFork(
      Effect.either(scoreEffect({ reference: long, distorted: long, options: { threads: 1 } }))
    )
    for (let i = 0; i < 500 && childrenNamed(process.pid, "ffmpeg").length < 2; i++) await Bun.sleep(10)
    const [first] = childrenNamed(process.pid, "ffmpeg")
    expect(first).toBeDefined()
    // Its pipe ends early: the library sees an end (possibly inside a frame); the exit status decides.
    process.kill(first as number, "SIGKILL")
    const outcome = await runtime.runPromise(Fiber.join(fiber))
    expect(outcome._tag).toBe("Left")
    if (outcome._tag === "Left") {
      expect(outcome.left._tag).toBe("UnreadableInput")
      expect(outcome.left.message).toMatch(/killed\.mkv: ffmpeg could not decode it/)
    }
    expect(childrenNamed(process.pid, "ffmpeg")).toEqual([])
  })
})

describe("no frame passes through JavaScript", () => {
  it("an encoded pair and a ladder score with the scorer's push paths failing: the library reads every frame", async () => {
    const entry = fixture("v01")
    const mkv = encode(entry, "fed.mkv", ["-c:v", "ffv1", "-pix_fmt", ffmpegPixelFormatOf(entry)])
    const pushed = "a frame was pushed from JavaScript"
    const effect = Effect.gen(function* () {
      const real = yield* Scorer
      // Frames pushed through svc_stream_push (the gRPC ScoreStream path) would die here.
      const scoreLadder: typeof real.scoreLadder = (job, renditions, input, hooks) =>
        "verdict" in input ? real.scoreLadder(job, renditions, input, hooks) : Effect.die(pushed)
      const fedOnly = Scorer.make({ ...real, scoreStream: () => Stream.die(pushed), scoreLadder })
      const options = { ...rawOptions(entry), per_frame: true }
      const pair = yield* Effect.flatMap(
        parseScoreRequest({ reference: entry.reference, distorted: mkv, options }),
        (job) => scoreInputs(fedOnly, job)
      )
      const ladder = yield* Effect.flatMap(
        parseLadderRequest({
          reference: mkv,
          renditions: [
            { label: "raw", distorted: entry.distorted },
            { label: "ffv1", distorted: mkv }
          ],
          options
        }),
        (job) => scoreLadderInputs(fedOnly, job)
      )
      return { pair, ladder }
    })
    const { pair, ladder } = await runtime.runPromise(effect)
    const raw = await score({ reference: entry.reference, distorted: entry.distorted, options: rawOptions(entry) })
    expect(pair.frame_count).toBe(entry.frames)
    expect(pair.score).toBe(raw.score)
    // The library's own count of frames it read from every input.
    expect(ladder.provenance.reference_frames).toBe(entry.frames)
    expect(ladder.renditions.map((r) => r.frame_count)).toEqual([entry.frames, entry.frames])
  })
})
