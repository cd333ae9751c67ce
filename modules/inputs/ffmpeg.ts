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
 *
 * Every child is started by svc-exec (modules/inputs/native/svc_exec.c, embedded like the
 * scorer library), which acts between fork and exec where Bun.spawn cannot: the child is killed
 * by the kernel when this process ends, however it ends (kill -9, the OOM killer), and runs under
 * its share of the memory budget (an address-space limit) and, where asked, a CPU-time limit.
 * `MALLOC_ARENA_MAX` and `-threads` keep the allocator's arenas and the decoder's threads (and
 * so the address space they reserve) few and known.
 */
import { Config, Data, Duration, Effect, Option, Schedule, type Scope } from "effect"
import { constants } from "node:fs"
import { access, readFile } from "node:fs/promises"
import { delimiter, dirname, join } from "node:path"
import { integerIn } from "../config/env.ts"
import { materialise, maxFrames } from "../scorer/index.ts"
import embeddedLauncher from "../scorer/native/build/svc-exec" with { type: "file" }

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

/**
 * How ffmpeg reads a raw YUV input (no header to recognise it by): the layout the request gave.
 * Alignment decodes raw inputs too (its thumbnails, and a side with frames cut out).
 */
export interface RawInputFormat {
  readonly width: number
  readonly height: number
  /** ffmpeg's name of the layout, for example "yuv420p10le". */
  readonly pixelFormat: string
}

/**
 * The output selection every decode shares: the first video stream alone, each frame as the
 * decoder gives it (no frame-rate conversion duplicates or drops one).
 */
const firstVideoStreamAsDecoded = ["-map", "0:v:0", "-an", "-sn", "-dn", "-fps_mode", "passthrough"]

/** The options before `-i`: the confinement, and for raw YUV its demuxer and layout. */
const inputOptions = (raw: RawInputFormat | undefined) =>
  raw === undefined
    ? confined
    : [
        ...["-protocol_whitelist", "file", "-format_whitelist", "rawvideo"],
        ...["-f", "rawvideo", "-pixel_format", raw.pixelFormat, "-video_size", `${raw.width}x${raw.height}`]
      ]

/**
 * A scoring decoder's options before its seek and `-i`: quiet, each log line tagged with its
 * level (the filters' note on every frame of another size or pixel format is the only place a
 * change of bit depth alone shows), the input's options, its threads, and `-reinit_filter 0`: a
 * frame of another size or format mid-stream reaches the scoring filter as it is (the default
 * would rebuild the filters and silently rescale it).
 */
const scoringDecoderOptions = (raw: RawInputFormat | undefined, threads: number) => [
  "-hide_banner",
  "-nostdin",
  "-nostats",
  "-loglevel",
  "level+info",
  ...inputOptions(raw),
  "-threads",
  String(threads),
  "-reinit_filter",
  "0"
]

/** Terms one select expression holds (ffmpeg's expression parser refuses about a hundred). */
const selectTerms = 64

/**
 * Filters keeping every frame but `drop` (input frame indices, counted from 0), ending in a
 * comma; "" for none. Runs of frames are one term; a chain of selects holds them, the last runs
 * first, so that each select's frame numbers are still the input's.
 */
const dropping = (drop: ReadonlyArray<number>) => {
  const sorted = [...new Set(drop)].sort((a, b) => a - b)
  const runs: Array<[number, number]> = []
  for (const frame of sorted) {
    const last = runs[runs.length - 1]
    if (last !== undefined && last[1] + 1 === frame) last[1] = frame
    else runs.push([frame, frame])
  }
  const terms = runs.map(([from, to]) => (from === to ? `eq(n\\,${from})` : `between(n\\,${from}\\,${to})`))
  const chunks: Array<string> = []
  for (let end = terms.length; end > 0; end -= selectTerms)
    chunks.push(`select='not(${terms.slice(Math.max(0, end - selectTerms), end).join("+")})',`)
  return chunks.join("")
}

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

/**
 * A run of decoded frames whose size or pixel format differs from the stream's first (as the
 * decoder handed them to the filters): `frames` frames from presentation time `firstSeconds`
 * (seconds after the input's start, as ffmpeg counts them), all of one shape. `format` is
 * libavutil's pixel format number (`pixelFormatName` names it).
 */
export interface ShapeRun {
  readonly firstSeconds: number
  readonly width: number
  readonly height: number
  readonly format: number
  frames: number
}

/** Runs of changed frames kept per decoder (a stream that flips shape every frame is cut here). */
const shapeRunLimit = 256

/**
 * libavfilter's note (level info) on each frame whose properties differ from those its filters
 * were built for ("filter context - w: .. h: .. fmt: .., incoming frame - w: .. h: .. fmt: ..
 * pts_time: .."); with `-reinit_filter 0` the filters are never rebuilt, so every changed frame has
 * one. Newer ffmpeg also notes colour-space and range changes: a note with the same size and
 * format is not a change of shape.
 */
const changedShapeLine =
  /filter context - w: (\d+) h: (\d+) fmt: (\d+).*incoming frame - w: (\d+) h: (\d+) fmt: (\d+).* pts_time: (\S+)/

/** showinfo's line (level info) on the first frame out of a seek (see `firstFrameProbe`). */
const firstFrameLine = /Parsed_showinfo_\d+ @ \S+\] \[info\] n:\s*0 pts:\s*\S+\s+pts_time:(\S+)/

/**
 * After a seek, the time of the first frame the decoder gives (seconds after the seek point):
 * a branch of the filter graph passes that frame alone to showinfo, which logs it; the frames
 * themselves go on to `chain` untouched.
 */
const firstFrameProbe = (chain: string) =>
  `split[svc_frames][svc_first];[svc_first]select='eq(n\\,0)',showinfo,nullsink;[svc_frames]${chain}`

/**
 * Reads a decoder's stderr (ffmpeg at `-loglevel level+info`, each line tagged with its level)
 * line by line while it runs: the changed frames' notes become shape runs (`onChange` hears the
 * first), errors are kept (their last `stderrLimit` bytes) for messages, the rest is dropped.
 */
export const watchDecoderLog = (stream: ReadableStream<Uint8Array>, onChange: () => void) => {
  let errors = ""
  let firstSeconds: number | undefined
  const runs: Array<ShapeRun> = []
  const onLine = (line: string) => {
    const first = firstSeconds === undefined ? firstFrameLine.exec(line) : null
    if (first !== null) {
      firstSeconds = Number(first[1])
      return
    }
    const changed = changedShapeLine.exec(line)
    if (changed !== null) {
      const [builtWidth, builtHeight, builtFormat, width, height, format, seconds] = changed.slice(1).map(Number) as [
        number,
        number,
        number,
        number,
        number,
        number,
        number
      ]
      if (width === builtWidth && height === builtHeight && format === builtFormat) return
      const last = runs.at(-1)
      if (last?.width === width && last.height === height && last.format === format) last.frames++
      else if (runs.length < shapeRunLimit) runs.push({ firstSeconds: seconds, width, height, format, frames: 1 })
      if (runs.length === 1 && runs[0]?.frames === 1) onChange()
      return
    }
    const level = /\[(error|fatal|panic)\] (.*)$/.exec(line)
    if (level !== null)
      errors = `${errors}${line.slice(0, line.indexOf(`[${level[1]}]`))}${level[2]}\n`.slice(-stderrLimit)
  }
  const done = (async () => {
    const decoder = new TextDecoder()
    let pending = ""
    for await (const chunk of stream) {
      pending += decoder.decode(chunk, { stream: true })
      const lines = pending.split("\n")
      pending = (lines.pop() ?? "").slice(-stderrLimit)
      for (const line of lines) onLine(line)
    }
    if (pending !== "") onLine(pending)
  })().catch(() => undefined)
  return {
    text: () => errors.trim(),
    done,
    runs: (): ReadonlyArray<ShapeRun> => runs,
    firstSeconds: () => firstSeconds
  }
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

/** The walls a child runs in (0: none). */
export interface ChildLimits {
  /** RLIMIT_AS: bytes of address space. */
  readonly addressSpace: number
  /** RLIMIT_CPU: seconds of CPU time. */
  readonly cpuSeconds: number
}

/** The launcher's path: the build output, or the embedded copy written out once per process. */
let launcher: string | undefined
const launcherPath = () => {
  launcher ??= materialise(embeddedLauncher)
  return launcher
}

/** Malloc arenas per child: one per thread by default, each reserving address space (64 MiB). */
const mallocArenas = "2"

/** CPU seconds `ffmpeg -version` may take. */
const versionCpuSeconds = 60

/** A process's resident peak in bytes (VmHWM), 0 once it is gone. */
const residentPeak = (pid: number): Promise<number> =>
  readFile(`/proc/${pid}/status`, "utf8").then(
    (status) => Number(/^VmHWM:\s+(\d+) kB/m.exec(status)?.[1] ?? 0) * 1024,
    () => 0
  )

/** A running child and how to end it; the scope's release kills it and waits for its exit. */
export interface Child {
  /** The child's process id (its /proc entry gives its memory while it runs). */
  readonly pid: number
  readonly exited: Promise<number>
  readonly stderr: () => string
  /** Resolves once stderr is fully read (after exit). */
  readonly stderrDone: Promise<void>
  /** A decoder's frames of another shape than the stream's first, so far (none for other children). */
  readonly shapeRuns: () => ReadonlyArray<ShapeRun>
  /** After a seek: the first frame's time after the seek point, once the decoder logged it. */
  readonly firstFrameSeconds: () => number | undefined
}

/** How a decoder's changes of shape are met: listed only, or the decoder stopped at the first. */
export type ShapeChanges = "list" | "stop"

/**
 * Starts `argv` with `fd` as its descriptor 3, stdin closed, stdout a new pipe ("pipe") or the
 * given descriptor (a pipe's write end: the child writes it directly, nothing passes through this
 * process); killed (SIGKILL) and reaped when the scope closes, whether the request ended, was
 * cancelled or the service is stopping, and by the kernel when this process dies.
 */
const spawnChild = <Out extends "pipe" | number>(
  argv: ReadonlyArray<string>,
  fd: number | "ignore",
  stdout: Out,
  limits: ChildLimits,
  shapeChanges?: ShapeChanges,
  /** A second output: a descriptor (a pipe's write end) the child writes as its descriptor 4 (`pipe:4`). */
  secondOutput?: number
): Effect.Effect<
  Child & { readonly stdout: Bun.Subprocess<"ignore", Out, "pipe">["stdout"] },
  DecoderFailed,
  Scope.Scope
> =>
  Effect.acquireRelease(
    Effect.try({
      try: () =>
        Bun.spawn(
          [
            launcherPath(),
            String(process.pid),
            String(Math.ceil(limits.addressSpace)),
            String(Math.ceil(limits.cpuSeconds)),
            "--",
            ...argv
          ],
          {
            stdio:
              secondOutput === undefined
                ? ["ignore", stdout, "pipe", fd]
                : ["ignore", stdout, "pipe", fd, secondOutput],
            env: { ...process.env, MALLOC_ARENA_MAX: mallocArenas }
          }
        ),
      catch: (cause) => new DecoderFailed({ detail: `cannot start ${argv[0]}: ${String(cause)}` })
    }),
    (child) =>
      Effect.promise(async () => {
        if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
        await child.exited
      })
  ).pipe(
    Effect.map((child) => {
      const common = { pid: child.pid, stdout: child.stdout, exited: child.exited }
      if (shapeChanges === undefined) {
        const tail = captureTail(child.stderr)
        return {
          ...common,
          stderr: tail.text,
          stderrDone: tail.done,
          shapeRuns: () => [],
          firstFrameSeconds: () => undefined
        }
      }
      // A side that must keep one shape ends at its first changed frame: nothing after it is decoded.
      const log = watchDecoderLog(child.stderr, () => {
        if (shapeChanges === "stop" && child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
      })
      return {
        ...common,
        stderr: log.text,
        stderrDone: log.done,
        shapeRuns: log.runs,
        firstFrameSeconds: log.firstSeconds
      }
    })
  )

/** Runs a child to its end and returns its stdout (small outputs only: probes, -version). */
const runToEnd = (argv: ReadonlyArray<string>, fd: number | "ignore", what: string, limits: ChildLimits) =>
  Effect.scoped(
    Effect.gen(function* () {
      const child = yield* spawnChild(argv, fd, "pipe", limits)
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
  /** The keyframes' presentation times, ascending (undefined with `times`). */
  readonly keyframeTimes: ReadonlyArray<number> | undefined
  readonly startSeconds: number
}

/** Part of a decode: from a time (seconds after the input's start; absent: its start), this many frames. */
export interface DecodeWindow {
  readonly seekSeconds: number | undefined
  readonly frames: number
  /** Frames before this time after the seek point are dropped (a seek made earlier than the first frame). */
  readonly keepFromSeconds?: number | undefined
}

/** A segment's seek: to a time (seconds after the input's start), the first frame wanted, and where it is kept from. */
export interface SeekTo {
  readonly seconds: number
  readonly first: number
  readonly keepFromSeconds?: number | undefined
}

/**
 * The filter that drops the frames presented before `seconds` after the seek point, by their
 * time (after an earlier seek, the frames the decoder needs before the first one wanted).
 */
const keepingFrom = (seconds: number | undefined) =>
  seconds === undefined ? "" : `select='gte(t\\,${seconds.toFixed(6)})',`

/** What ffprobe says about the first video stream of an input. */
export interface ProbedStream {
  /** Demuxer name(s), for example "mov,mp4,m4a,3gp,3g2,mj2" or "matroska,webm". */
  readonly container: string
  readonly codec: string
  readonly width: number
  readonly height: number
  /** ffmpeg's name; "unknown" after a headers-only probe of a container that does not say. */
  readonly pixelFormat: string
  /** The container's duration in seconds; 0 when it does not say. */
  readonly durationSeconds: number
  /** Frames a decoder keeps besides the one it decodes: reference frames and reorder delay. */
  readonly heldFrames: number
  /**
   * Frames the container declares: the smaller of the stream's frame count and its duration
   * times its average frame rate; undefined when it declares neither (raw H.264, MPEG-TS).
   */
  readonly declaredFrames: number | undefined
  /** Frames per second (the stream's r_frame_rate); 0 when it does not say. */
  readonly frameRate: number
  /** The stream's Y'CbCr matrix (ffprobe's color_space, e.g. "bt709", "smpte170m"); "" when unknown. */
  readonly colorSpace: string
}

interface ProbeJson {
  readonly streams?: ReadonlyArray<{
    readonly codec_name?: string
    readonly width?: number
    readonly height?: number
    readonly pix_fmt?: string
    readonly refs?: number
    readonly has_b_frames?: number
    readonly nb_frames?: string
    readonly duration?: string
    readonly avg_frame_rate?: string
    readonly r_frame_rate?: string
    readonly color_space?: string
  }>
  readonly format?: { readonly format_name?: string; readonly duration?: string }
}

/** A positive finite number from ffprobe's text, or undefined ("N/A", "0/0", absent). */
const positive = (text: string | undefined): number | undefined => {
  if (text === undefined) return undefined
  const [num, den] = text.split("/").map(Number)
  const value = den === undefined ? num : num !== undefined && den > 0 ? num / den : Number.NaN
  return value !== undefined && Number.isFinite(value) && value > 0 ? value : undefined
}

/** The resolution of ffprobe's durations (printed with six decimals), in seconds. */
const durationResolution = 1e-6

/** The smaller of the declarations of a stream's length (each may be absent). */
const declaredFramesOf = (
  stream: NonNullable<ProbeJson["streams"]>[number],
  format: ProbeJson["format"]
): number | undefined => {
  const counted = positive(stream.nb_frames)
  const rate = positive(stream.avg_frame_rate)
  const seconds = positive(stream.duration) ?? positive(format?.duration)
  // ffprobe prints the duration to the microsecond: up to half a microsecond over the exact time
  // (and a floating-point product, 2.2 s x 25 = 55.00000000000001) is not a frame more.
  const timed =
    rate !== undefined && seconds !== undefined ? Math.ceil((seconds - durationResolution / 2) * rate) : undefined
  if (counted === undefined) return timed
  return timed === undefined ? counted : Math.min(counted, timed)
}

/** The scaling algorithms `options.scale` may name (ffmpeg's `flags` of the scale filter). */
type ScaleAlgorithm = "bicubic" | "lanczos" | "bilinear" | "neighbor"

export interface DecodeTarget {
  readonly width: number
  readonly height: number
  /** ffmpeg's name of the raw layout the scorer reads, for example "yuv420p10le". */
  readonly pixelFormat: string
  /** Scale to width x height with this algorithm; undefined: the decoded size already matches. */
  readonly scale: ScaleAlgorithm | undefined
  /** What the stream is, as probed; without scaling, a frame of another shape fails the decode. */
  readonly source: SourceShape
  /** Frames of another size or pixel format: listed (scaled and converted), or the decode stops at the first. */
  readonly shapeChanges: ShapeChanges
}

/**
 * The decoded stream as the probe saw it: a frame of another size or chroma subsampling is a
 * change (the scale filter's `hsub`/`vsub` are the input's chroma subsampling factors).
 */
export interface SourceShape {
  readonly width: number
  readonly height: number
  readonly hsub: number
  readonly vsub: number
}

/**
 * A filter that passes frames of `source`'s shape unchanged and fails on the first other one,
 * naming its index: evaluated per frame, it asks for an impossible width and a height of the
 * frame's index plus one, which ffmpeg reports as "Picture size 0x<index+1> is invalid"
 * (`changedFrameOf` reads it back).
 */
const unchanging = (source: SourceShape) => {
  const same = `eq(iw\\,${source.width})*eq(ih\\,${source.height})*eq(hsub\\,${source.hsub})*eq(vsub\\,${source.vsub})`
  return `scale=w='if(${same}\\,${source.width}\\,1e12)':h='if(${same}\\,${source.height}\\,n+1)':eval=frame`
}

/** Scales every frame to the target, also frames whose size changes mid-stream. */
const scaled = (target: DecodeTarget) => `scale=${target.width}:${target.height}:flags=${target.scale}:eval=frame`

/** The scoring decode's filter: frames scaled to the target, or kept as they are and checked. */
const scoringChain = (target: DecodeTarget) => (target.scale === undefined ? unchanging(target.source) : scaled(target))

/** A decoded frame as the alignment's luma thumbnail: area means, 8-bit full-range gray. */
const thumbnailChain = (size: { readonly width: number; readonly height: number }) =>
  `scale=${size.width}:${size.height}:flags=area:eval=frame,format=gray`

/** The index of the frame where a stream decoded through `unchanging` changed, from ffmpeg's stderr. */
export const changedFrameOf = (stderr: string): number | undefined => {
  const height = /Picture size 0x(\d+) is invalid/.exec(stderr)?.[1]
  return height === undefined ? undefined : Number(height) - 1
}

/** How a decoder runs: its threads, its walls and the most frames it may write. */
export interface DecodeLimits extends ChildLimits {
  readonly threads: number
  /** Output stops after this many frames (one past what may be scored: an overrun shows). */
  readonly maxFrames: number
}

/** "num/den" (ffprobe's rates) as frames per second; 0 when absent or malformed. */
const rateOf = (text: string | undefined): number => {
  const [num, den] = (text ?? "").split("/").map(Number)
  return num !== undefined && den !== undefined && num > 0 && den > 0 ? num / den : 0
}

export class Ffmpeg extends Effect.Service<Ffmpeg>()("svc/Ffmpeg", {
  effect: Effect.gen(function* () {
    const configured = yield* Config.option(Config.string("SVC_FFMPEG"))
    /** What a decoder may do: SVC_MAX_FRAMES frames where its container declares none, CPU seconds each. */
    const limits = {
      maxFrames: yield* maxFrames,
      cpuSeconds: yield* integerIn("SVC_DECODER_CPU_SECONDS", 600, 1, 604_800)
    } as const
    let found: DecoderTools | undefined

    const locate = Effect.promise(async (): Promise<DecoderTools | string> => {
      if (found) return found
      const wanted = Option.getOrUndefined(configured)?.trim()
      const ffmpeg = wanted ? wanted : await onPath("ffmpeg")
      if (ffmpeg === undefined) return "ffmpeg was not found on PATH (set SVC_FFMPEG to its path)"
      if (!(await isExecutable(ffmpeg))) return `SVC_FFMPEG "${ffmpeg}" is not an executable file`
      const ffprobe = join(dirname(ffmpeg), "ffprobe")
      if (!(await isExecutable(ffprobe))) return `ffprobe was not found beside ${ffmpeg}`
      const proc = Bun.spawn(
        [launcherPath(), String(process.pid), "0", String(versionCpuSeconds), "--", ffmpeg, "-hide_banner", "-version"],
        { stdio: ["ignore", "pipe", "ignore"] }
      )
      const [out, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited])
      if (code !== 0) return `${ffmpeg} -version failed (exit status ${code})`
      found = { ffmpeg, ffprobe, version: out.split("\n")[0]?.trim() ?? "ffmpeg" }
      return found
    })

    /** The executables, or DecoderMissing saying what is missing. */
    const tools: Effect.Effect<DecoderTools, DecoderMissing> = Effect.flatMap(locate, (result) =>
      typeof result === "string" ? Effect.fail(new DecoderMissing({ reason: result })) : Effect.succeed(result)
    )

    let pixelFormats: ReadonlyArray<string> | undefined
    /**
     * The name of libavutil's pixel format number `format` (as ffmpeg's filters log it): `ffmpeg
     * -pix_fmts` lists every format in the order of its number, read once. "format N" when unknown.
     */
    const pixelFormatName = (format: number): Effect.Effect<string, DecoderMissing | DecoderFailed> =>
      Effect.gen(function* () {
        if (pixelFormats === undefined) {
          const { ffmpeg } = yield* tools
          const listing = yield* runToEnd([ffmpeg, "-hide_banner", "-pix_fmts"], "ignore", "ffmpeg -pix_fmts", {
            addressSpace: 0,
            cpuSeconds: versionCpuSeconds
          })
          const lines = listing.split("\n")
          // A line of flags and a name per format, after the "-----" rule.
          pixelFormats = lines.slice(lines.findIndex((line) => line.startsWith("-----")) + 1).flatMap((line) => {
            const name = line.trim().split(/\s+/)[1]
            return name === undefined ? [] : [name]
          })
        }
        return pixelFormats[format] ?? `format ${format}`
      })

    /**
     * The first video stream of the input behind `fd`; DecoderFailed when ffprobe finds none.
     * `headersOnly`: no frame is decoded (`-skip_frame all`), so the probe's memory does not grow
     * with the frame size, but a container that does not store the pixel format leaves it unknown.
     */
    const probe = (
      fd: number,
      headersOnly: boolean,
      limits: ChildLimits
    ): Effect.Effect<ProbedStream, DecoderMissing | DecoderFailed> =>
      Effect.gen(function* () {
        const { ffprobe } = yield* tools
        const json = yield* runToEnd(
          [
            ffprobe,
            "-v",
            "error",
            ...confined,
            "-threads",
            "1",
            ...(headersOnly ? ["-skip_frame", "all"] : []),
            "-select_streams",
            "v:0",
            "-show_entries",
            "stream=codec_name,width,height,pix_fmt,refs,has_b_frames,nb_frames,duration,avg_frame_rate,r_frame_rate,color_space:format=format_name,duration",
            "-of",
            "json",
            inputUrl
          ],
          fd,
          "ffprobe",
          limits
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
          durationSeconds: Number(parsed.format?.duration ?? 0) || 0,
          heldFrames: Math.min(32, Math.max(1, stream.refs ?? 1) + Math.max(0, stream.has_b_frames ?? 0)),
          declaredFrames: declaredFramesOf(stream, parsed.format),
          frameRate: rateOf(stream.r_frame_rate),
          colorSpace: stream.color_space ?? ""
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
      limits: DecodeLimits,
      window?: DecodeWindow,
      /** Alignment: input frames left out (indices from the input's start), and a raw input's layout. */
      cut?: { readonly drop: ReadonlyArray<number>; readonly raw: RawInputFormat | undefined }
    ): Effect.Effect<Child, DecoderMissing | DecoderFailed, Scope.Scope> =>
      Effect.flatMap(tools, ({ ffmpeg }) =>
        spawnChild(
          [
            ffmpeg,
            ...scoringDecoderOptions(cut?.raw, limits.threads),
            // Input seeking: to the keyframe before the time, then frames before it are dropped.
            ...(window?.seekSeconds === undefined ? [] : ["-ss", window.seekSeconds.toFixed(6)]),
            "-i",
            inputUrl,
            ...firstVideoStreamAsDecoded,
            "-vf",
            // After a seek the first frame's time is logged, so the caller can check where it landed.
            `${keepingFrom(window?.keepFromSeconds)}${dropping(cut?.drop ?? [])}${((chain: string) =>
              window?.seekSeconds === undefined ? chain : firstFrameProbe(chain))(scoringChain(target))}`,
            "-frames:v",
            // A segment's window stops the decoder after its frames (below the input's cap).
            String(window === undefined ? limits.maxFrames : Math.min(window.frames, limits.maxFrames)),
            "-pix_fmt",
            target.pixelFormat,
            "-f",
            "rawvideo",
            "pipe:1"
          ],
          fd,
          output,
          limits,
          target.shapeChanges
        )
      )

    /**
     * `decode` of a whole input (no seek, no cut) that also writes each decoded frame's luma
     * thumbnail (`thumbnailChain`, as `lumaThumbnails` makes them, from the same decoded frames)
     * to `thumbnails` (a pipe's write end, the child's descriptor 4): the scored frames come out on
     * the child's stdout, for the caller to hold until the alignment is known. One decode serves
     * the search and the score (`options.sync: "auto"`, alignment-once.ts).
     */
    const decodeWithThumbnails = (
      fd: number,
      target: DecodeTarget,
      size: { readonly width: number; readonly height: number },
      thumbnails: number,
      limits: DecodeLimits
    ): Effect.Effect<
      Child & { readonly stdout: ReadableStream<Uint8Array> },
      DecoderMissing | DecoderFailed,
      Scope.Scope
    > =>
      Effect.flatMap(tools, ({ ffmpeg }) => {
        const frames = String(limits.maxFrames)
        return spawnChild(
          [
            ffmpeg,
            ...scoringDecoderOptions(undefined, limits.threads),
            "-i",
            inputUrl,
            "-filter_complex",
            `[0:v:0]split=2[svc_scored][svc_thumbnail];[svc_scored]${scoringChain(target)}[svc_frames];[svc_thumbnail]${thumbnailChain(size)}[svc_thumbnails]`,
            ...["-map", "[svc_frames]", "-fps_mode", "passthrough", "-frames:v", frames],
            ...["-pix_fmt", target.pixelFormat, "-f", "rawvideo", "pipe:1"],
            ...["-map", "[svc_thumbnails]", "-fps_mode", "passthrough", "-frames:v", frames],
            ...["-f", "rawvideo", "pipe:4"]
          ],
          fd,
          "pipe",
          limits,
          target.shapeChanges,
          thumbnails
        )
      })

    /**
     * The presentation times of the first video stream behind `fd`, one per frame it decodes
     * to, in presentation order, and the container's start time (ffprobe's packet listing: the
     * container is read, nothing decoded). Packets the demuxer marks to discard (an edit list's
     * pre-roll) are not frames. A segment job's plan counts the frames with it, and a segment's
     * node finds where to seek.
     */
    const frameTimes = (fd: number, limits: ChildLimits): Effect.Effect<FrameTimes, DecoderMissing | DecoderFailed> =>
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
          "ffprobe",
          limits
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
        const timed = times.every(Number.isFinite)
        return {
          frames: packets.length,
          // Without a time for every frame there is nothing to seek by: decode from the start.
          times: timed ? [...times].sort((a, b) => a - b) : undefined,
          keyframeTimes: timed
            ? packets
                .filter((packet) => (packet.flags ?? "").includes("K"))
                .map((packet) => Number(packet.pts_time))
                .sort((a, b) => a - b)
            : undefined,
          startSeconds: Number(parsed.format?.start_time ?? 0) || 0
        }
      })

    /**
     * Decodes the frames `indices` (presentation order, from 0) of the input behind `fd` to raw
     * frames of `target` and hands each to `onFrame` as it arrives (ascending index; one frame held
     * at a time, whatever the clip's length), stopping after the last. For thumbnails: the frames
     * of a decoded input are not kept. `seek` (a segment's, from its seek point; every index at
     * or after `first`): the decode starts at the keyframe before frame `first` and its frames
     * are counted from `first`, as a segment's scoring decode does; the first frame's time after
     * the seek point is returned, for the caller to check it landed there. Inside the same walls
     * as a scoring decoder: `limits` from the estimate `memory` it was admitted with, which
     * /metrics counts while it runs.
     */
    const decodeSelected = (
      fd: number,
      target: Omit<DecodeTarget, "source" | "shapeChanges">,
      indices: ReadonlyArray<number>,
      frameBytes: number,
      limits: ChildLimits & { readonly threads: number; readonly memory: number },
      onFrame: (index: number, frame: Buffer) => Promise<void>,
      seek?: SeekTo
    ): Effect.Effect<number | undefined, DecoderMissing | DecoderFailed> =>
      Effect.scoped(
        Effect.gen(function* () {
          const { ffmpeg } = yield* tools
          const wanted = [...new Set(indices)].sort((a, b) => a - b)
          if (wanted.length === 0) return undefined
          const first = seek?.first ?? 0
          const select = `select='${wanted.map((index) => `eq(n\\,${index - first})`).join("+")}'`
          const scale =
            target.scale === undefined ? "" : `,scale=${target.width}:${target.height}:flags=${target.scale}`
          const chain = `${select}${scale}`
          const child = yield* spawnChild(
            [
              ffmpeg,
              "-hide_banner",
              "-nostdin",
              // After a seek, level info for showinfo's line on the first frame (errors kept as ever).
              "-loglevel",
              seek === undefined ? "error" : "level+info",
              ...confined,
              "-threads",
              String(limits.threads),
              ...(seek === undefined ? [] : ["-ss", seek.seconds.toFixed(6)]),
              "-i",
              inputUrl,
              ...firstVideoStreamAsDecoded,
              "-vf",
              seek === undefined ? chain : `${keepingFrom(seek.keepFromSeconds)}${firstFrameProbe(chain)}`,
              // Nothing is decoded past the last frame wanted.
              "-frames:v",
              String(wanted.length),
              "-pix_fmt",
              target.pixelFormat,
              "-f",
              "rawvideo",
              "pipe:1"
            ],
            fd,
            "pipe",
            limits,
            seek === undefined ? undefined : "list"
          )
          yield* watch(child, limits.memory)
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
          yield* Effect.promise(() => child.stderrDone)
          if (code !== 0)
            return yield* new DecoderFailed({ detail: `ffmpeg: ${readable(child.stderr()) || `exit status ${code}`}` })
          return child.firstFrameSeconds()
        })
      )

    /**
     * Every frame of the encoded input behind `fd` as a `width` x `height` 8-bit luma thumbnail
     * (area averaging: each value is a block's mean), in decode order, one after the other: the
     * alignment's search pass (a second decode of the input, small output).
     */
    const lumaThumbnails = (
      fd: number,
      size: { readonly width: number; readonly height: number },
      limits: ChildLimits & { readonly maxFrames: number }
    ): Effect.Effect<Uint8Array, DecoderMissing | DecoderFailed> =>
      Effect.scoped(
        Effect.gen(function* () {
          const { ffmpeg } = yield* tools
          const child = yield* spawnChild(
            [
              ffmpeg,
              "-hide_banner",
              "-nostdin",
              "-loglevel",
              "error",
              ...inputOptions(undefined),
              "-threads",
              "1",
              "-i",
              inputUrl,
              ...firstVideoStreamAsDecoded,
              "-vf",
              thumbnailChain(size),
              "-frames:v",
              String(limits.maxFrames),
              "-f",
              "rawvideo",
              "pipe:1"
            ],
            fd,
            "pipe",
            limits
          )
          const [bytes, code] = yield* Effect.promise(() =>
            Promise.all([new Response(child.stdout).bytes(), child.exited, child.stderrDone])
          )
          if (code !== 0)
            return yield* new DecoderFailed({ detail: `ffmpeg: ${readable(child.stderr()) || `exit status ${code}`}` })
          return bytes
        })
      )

    /**
     * The decoders' memory for /metrics: what the running ones were admitted with, and the
     * highest resident peak (/proc VmHWM) any decoder reached, sampled while it runs.
     */
    const usage = { reserved: 0, peak: 0 }

    /** Holds `bytes` as reserved and samples the child's peak until the scope closes. */
    const watch = (child: Child, bytes: number): Effect.Effect<void, never, Scope.Scope> =>
      Effect.gen(function* () {
        yield* Effect.acquireRelease(
          Effect.sync(() => {
            usage.reserved += bytes
          }),
          () =>
            Effect.sync(() => {
              usage.reserved -= bytes
            })
        )
        const sample = Effect.flatMap(
          Effect.promise(() => residentPeak(child.pid)),
          (peak) =>
            Effect.sync(() => {
              usage.peak = Math.max(usage.peak, peak)
            })
        )
        yield* Effect.forkScoped(
          Effect.repeat(sample, { while: () => true, schedule: Schedule.spaced(Duration.millis(250)) }).pipe(
            Effect.raceFirst(Effect.promise(() => child.exited))
          )
        )
      })

    return {
      tools,
      probe,
      decode,
      decodeWithThumbnails,
      frameTimes,
      decodeSelected,
      pixelFormatName,
      lumaThumbnails,
      usage,
      watch,
      limits
    } as const
  })
}) {}
