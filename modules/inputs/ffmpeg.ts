/**
 * The `ffmpeg` child processes that probe and decode encoded inputs. The executable is
 * SVC_FFMPEG (a path) or `ffmpeg` on PATH, with `ffprobe` beside it; both are found when first
 * needed, so a service without them still scores raw YUV and Y4M.
 *
 * Nothing a caller sends becomes an argument: the input is an already-open descriptor that the
 * child inherits as fd 3 and reads as `file:/dev/fd/3`, only the `file` protocol is allowed
 * (no `concat:`, `subfile,`, network or device inputs), only the demuxers of real video files
 * are (no playlists or image sequences that would open other files), and every other argument
 * comes from the probed geometry and a fixed set of scaling names.
 */
import { Config, Data, Effect, Option, type Scope } from "effect"
import { constants } from "node:fs"
import { access } from "node:fs/promises"
import { delimiter, dirname, join } from "node:path"

/** The child sees the input as this descriptor. */
const inputFd = 3
const inputUrl = `file:/dev/fd/${inputFd}`

/**
 * Demuxers an input may be read with: containers and elementary streams of encoded video.
 * Playlists (hls, dash, concat), image sequences and devices are absent on purpose: they open
 * other files or devices by name.
 */
const allowedDemuxers = [
  "mov",
  "matroska",
  "ivf",
  "h264",
  "hevc",
  "obu",
  "av1",
  "avi",
  "mpegts",
  "mpeg",
  "mpegvideo",
  "m4v",
  "flv",
  "ogg",
  "mxf",
  "nut",
  "yuv4mpegpipe"
].join(",")

/** Options that confine what the child reads to the inherited descriptor. */
const confined = ["-protocol_whitelist", "file", "-format_whitelist", allowedDemuxers]

/** Bytes of a child's stderr kept for error messages (the tail: ffmpeg ends with the cause). */
const stderrLimit = 4096

/** No ffmpeg (or no ffprobe beside it) where the configuration says. */
export class DecoderMissing extends Data.TaggedError("DecoderMissing")<{ readonly reason: string }> {}

/** A child failed: what it was doing and the tail of its stderr. */
export class DecoderFailed extends Data.TaggedError("DecoderFailed")<{ readonly detail: string }> {}

interface DecoderTools {
  readonly ffmpeg: string
  readonly ffprobe: string
  /** First line of `ffmpeg -version`, for provenance. */
  readonly version: string
}

/** Keeps the last `stderrLimit` bytes of a child's stderr while it runs. */
const captureTail = (stream: ReadableStream<Uint8Array>) => {
  let tail = new Uint8Array(0)
  const done = (async () => {
    for await (const chunk of stream) {
      const joined = new Uint8Array(Math.min(stderrLimit, tail.length + chunk.length))
      const fromChunk = Math.min(chunk.length, joined.length)
      const fromTail = joined.length - fromChunk
      joined.set(tail.subarray(tail.length - fromTail), 0)
      joined.set(chunk.subarray(chunk.length - fromChunk), fromTail)
      tail = joined
    }
  })().catch(() => undefined)
  return { text: () => new TextDecoder().decode(tail).trim(), done }
}

/** ffmpeg's stderr for a person: the input named as "input", no context addresses, one line. */
export const readable = (stderr: string) =>
  stderr
    .replaceAll(inputUrl, "input")
    .replace(/ @ 0x[0-9a-f]+\]/g, "]")
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "")
    .join("; ")

const isExecutable = (path: string) =>
  access(path, constants.X_OK).then(
    () => true,
    () => false
  )

/** `name` in the directories of PATH, as a shell would find it. */
const onPath = async (name: string): Promise<string | undefined> => {
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    if (dir === "") continue
    const candidate = join(dir, name)
    if (await isExecutable(candidate)) return candidate
  }
  return undefined
}

/** A running child and how to end it; the scope's release kills it and waits for its exit. */
export interface Child {
  readonly exited: Promise<number>
  readonly stderr: () => string
  /** Resolves once stderr is fully read (after exit). */
  readonly stderrDone: Promise<void>
}

/**
 * Starts `argv` with `fd` as its descriptor 3, stdin closed, stdout a new pipe ("pipe") or the
 * given descriptor (a pipe's write end: the child writes it directly, nothing passes through this
 * process); killed (SIGKILL) and reaped when the scope closes, whether the request ended, was
 * cancelled or the service is stopping.
 */
const spawnChild = <Out extends "pipe" | number>(
  argv: ReadonlyArray<string>,
  fd: number,
  stdout: Out
): Effect.Effect<
  Child & { readonly stdout: Bun.Subprocess<"ignore", Out, "pipe">["stdout"] },
  DecoderFailed,
  Scope.Scope
> =>
  Effect.acquireRelease(
    Effect.try({
      try: () => Bun.spawn([...argv], { stdio: ["ignore", stdout, "pipe", fd] }),
      catch: (cause) => new DecoderFailed({ detail: `cannot start ${argv[0]}: ${String(cause)}` })
    }),
    (child) =>
      Effect.promise(async () => {
        if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
        await child.exited
      })
  ).pipe(
    Effect.map((child) => {
      const tail = captureTail(child.stderr)
      return { stdout: child.stdout, exited: child.exited, stderr: tail.text, stderrDone: tail.done }
    })
  )

/** Runs a child to its end and returns its stdout (small outputs only: probes, -version). */
const runToEnd = (argv: ReadonlyArray<string>, fd: number, what: string) =>
  Effect.scoped(
    Effect.gen(function* () {
      const child = yield* spawnChild(argv, fd, "pipe")
      const [stdout, code] = yield* Effect.promise(() =>
        Promise.all([new Response(child.stdout).text(), child.exited, child.stderrDone])
      )
      if (code !== 0)
        return yield* new DecoderFailed({ detail: `${what}: ${readable(child.stderr()) || `exit status ${code}`}` })
      return stdout
    })
  )

/** A video stream's frames: how many, their presentation times (seconds) in order, its start. */
export interface FrameTimes {
  readonly frames: number
  readonly times: ReadonlyArray<number> | undefined
  readonly startSeconds: number
}

/** Part of a decode: from a time (seconds after the input's start; absent: its start), this many frames. */
export interface DecodeWindow {
  readonly seekSeconds: number | undefined
  readonly frames: number
}

/** What ffprobe says about the first video stream of an input. */
export interface ProbedStream {
  /** Demuxer name(s), for example "mov,mp4,m4a,3gp,3g2,mj2" or "matroska,webm". */
  readonly container: string
  readonly codec: string
  readonly width: number
  readonly height: number
  readonly pixelFormat: string
  /** The container's duration in seconds; 0 when it does not say. */
  readonly durationSeconds: number
}

interface ProbeJson {
  readonly streams?: ReadonlyArray<{
    readonly codec_name?: string
    readonly width?: number
    readonly height?: number
    readonly pix_fmt?: string
  }>
  readonly format?: { readonly format_name?: string; readonly duration?: string }
}

/** The scaling algorithms `options.scale` may name (ffmpeg's `flags` of the scale filter). */
type ScaleAlgorithm = "bicubic" | "lanczos" | "bilinear" | "neighbor"

interface DecodeTarget {
  readonly width: number
  readonly height: number
  /** ffmpeg's name of the raw layout the scorer reads, for example "yuv420p10le". */
  readonly pixelFormat: string
  /** Scale to width x height with this algorithm; undefined: the decoded size already matches. */
  readonly scale: ScaleAlgorithm | undefined
}

export class Ffmpeg extends Effect.Service<Ffmpeg>()("svc/Ffmpeg", {
  effect: Effect.gen(function* () {
    const configured = yield* Config.option(Config.string("SVC_FFMPEG"))
    let found: DecoderTools | undefined

    const locate = Effect.promise(async (): Promise<DecoderTools | string> => {
      if (found) return found
      const wanted = Option.getOrUndefined(configured)?.trim()
      const ffmpeg = wanted ? wanted : await onPath("ffmpeg")
      if (ffmpeg === undefined) return "ffmpeg was not found on PATH (set SVC_FFMPEG to its path)"
      if (!(await isExecutable(ffmpeg))) return `SVC_FFMPEG "${ffmpeg}" is not an executable file`
      const ffprobe = join(dirname(ffmpeg), "ffprobe")
      if (!(await isExecutable(ffprobe))) return `ffprobe was not found beside ${ffmpeg}`
      const proc = Bun.spawn([ffmpeg, "-hide_banner", "-version"], { stdio: ["ignore", "pipe", "ignore"] })
      const [out, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited])
      if (code !== 0) return `${ffmpeg} -version failed (exit status ${code})`
      found = { ffmpeg, ffprobe, version: out.split("\n")[0]?.trim() ?? "ffmpeg" }
      return found
    })

    /** The executables, or DecoderMissing saying what is missing. */
    const tools: Effect.Effect<DecoderTools, DecoderMissing> = Effect.flatMap(locate, (result) =>
      typeof result === "string" ? Effect.fail(new DecoderMissing({ reason: result })) : Effect.succeed(result)
    )

    /** The first video stream of the input behind `fd`; DecoderFailed when ffprobe finds none. */
    const probe = (fd: number): Effect.Effect<ProbedStream, DecoderMissing | DecoderFailed> =>
      Effect.gen(function* () {
        const { ffprobe } = yield* tools
        const json = yield* runToEnd(
          [
            ffprobe,
            "-v",
            "error",
            ...confined,
            "-select_streams",
            "v:0",
            "-show_entries",
            "stream=codec_name,width,height,pix_fmt:format=format_name,duration",
            "-of",
            "json",
            inputUrl
          ],
          fd,
          "ffprobe"
        )
        const parsed = yield* Effect.try({
          try: () => JSON.parse(json) as ProbeJson,
          catch: () => new DecoderFailed({ detail: "ffprobe printed no JSON" })
        })
        const stream = parsed.streams?.[0]
        if (!stream?.width || !stream.height) return yield* new DecoderFailed({ detail: "no video stream" })
        return {
          container: parsed.format?.format_name ?? "unknown",
          codec: stream.codec_name ?? "unknown",
          width: stream.width,
          height: stream.height,
          pixelFormat: stream.pix_fmt ?? "unknown",
          durationSeconds: Number(parsed.format?.duration ?? 0) || 0
        }
      })

    /**
     * Decodes the first video stream of the input behind `fd` to raw frames of `target` written
     * to `output` (the write end of a pipe the scorer reads), every decoded frame once, in decode
     * order (`-fps_mode passthrough`: no frame duplicated or dropped to make a constant rate).
     */
    const decode = (
      fd: number,
      target: DecodeTarget,
      output: number,
      window?: DecodeWindow
    ): Effect.Effect<Child, DecoderMissing | DecoderFailed, Scope.Scope> =>
      Effect.flatMap(tools, ({ ffmpeg }) =>
        spawnChild(
          [
            ffmpeg,
            "-hide_banner",
            "-nostdin",
            "-loglevel",
            "error",
            ...confined,
            // Input seeking: to the keyframe before the time, then frames before it are dropped.
            ...(window?.seekSeconds === undefined ? [] : ["-ss", window.seekSeconds.toFixed(6)]),
            "-i",
            inputUrl,
            ...(window === undefined ? [] : ["-frames:v", String(window.frames)]),
            "-map",
            "0:v:0",
            "-an",
            "-sn",
            "-dn",
            "-fps_mode",
            "passthrough",
            ...(target.scale === undefined
              ? []
              : ["-vf", `scale=${target.width}:${target.height}:flags=${target.scale}`]),
            "-pix_fmt",
            target.pixelFormat,
            "-f",
            "rawvideo",
            "pipe:1"
          ],
          fd,
          output
        )
      )

    /**
     * The presentation times of the first video stream behind `fd`, one per frame it decodes
     * to, in presentation order, and the container's start time (ffprobe's packet listing: the
     * container is read, nothing decoded). Packets the demuxer marks to discard (an edit list's
     * pre-roll) are not frames. A segment job's plan counts the frames with it, and a segment's
     * node finds where to seek.
     */
    const frameTimes = (fd: number): Effect.Effect<FrameTimes, DecoderMissing | DecoderFailed> =>
      Effect.gen(function* () {
        const { ffprobe } = yield* tools
        const json = yield* runToEnd(
          [
            ffprobe,
            "-v",
            "error",
            ...confined,
            "-select_streams",
            "v:0",
            "-show_entries",
            "packet=pts_time,flags:format=start_time",
            "-of",
            "json",
            inputUrl
          ],
          fd,
          "ffprobe"
        )
        const parsed = yield* Effect.try({
          try: () =>
            JSON.parse(json) as {
              packets?: ReadonlyArray<{ pts_time?: string; flags?: string }>
              format?: { start_time?: string }
            },
          catch: () => new DecoderFailed({ detail: "ffprobe printed no JSON" })
        })
        const packets = (parsed.packets ?? []).filter((packet) => !(packet.flags ?? "").includes("D"))
        if (packets.length === 0) return yield* new DecoderFailed({ detail: "no video packets" })
        const times = packets.map((packet) => Number(packet.pts_time))
        return {
          frames: packets.length,
          // Without a time for every frame there is nothing to seek by: decode from the start.
          times: times.every(Number.isFinite) ? [...times].sort((a, b) => a - b) : undefined,
          startSeconds: Number(parsed.format?.start_time ?? 0) || 0
        }
      })

    /**
     * Decodes the frames `indices` (decode order, from 0) of the input behind `fd` to raw frames
     * of `target` and hands each to `onFrame` as it arrives (ascending index; one frame held at a
     * time, whatever the clip's length). For thumbnails: the frames of a decoded input are not kept.
     */
    const decodeSelected = (
      fd: number,
      target: DecodeTarget,
      indices: ReadonlyArray<number>,
      frameBytes: number,
      onFrame: (index: number, frame: Buffer) => Promise<void>
    ): Effect.Effect<void, DecoderMissing | DecoderFailed> =>
      Effect.scoped(
        Effect.gen(function* () {
          const { ffmpeg } = yield* tools
          const wanted = [...new Set(indices)].sort((a, b) => a - b)
          if (wanted.length === 0) return
          const select = `select='${wanted.map((index) => `eq(n\\,${index})`).join("+")}'`
          const scale =
            target.scale === undefined ? "" : `,scale=${target.width}:${target.height}:flags=${target.scale}`
          const child = yield* spawnChild(
            [
              ffmpeg,
              "-hide_banner",
              "-nostdin",
              "-loglevel",
              "error",
              ...confined,
              "-i",
              inputUrl,
              "-map",
              "0:v:0",
              "-an",
              "-sn",
              "-dn",
              "-vf",
              `${select}${scale}`,
              "-fps_mode",
              "passthrough",
              "-pix_fmt",
              target.pixelFormat,
              "-f",
              "rawvideo",
              "pipe:1"
            ],
            fd,
            "pipe"
          )
          yield* Effect.promise(async () => {
            let pending = Buffer.alloc(0)
            let next = 0
            for await (const chunk of child.stdout) {
              pending = Buffer.concat([pending, chunk])
              while (pending.length >= frameBytes && next < wanted.length) {
                await onFrame(wanted[next] as number, pending.subarray(0, frameBytes))
                pending = Buffer.from(pending.subarray(frameBytes))
                next++
              }
            }
          })
          const code = yield* Effect.promise(() => child.exited)
          if (code !== 0)
            return yield* new DecoderFailed({ detail: `ffmpeg: ${readable(child.stderr()) || `exit status ${code}`}` })
        })
      )

    return { tools, probe, decode, frameTimes, decodeSelected } as const
  })
}) {}
