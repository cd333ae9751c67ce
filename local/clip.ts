/**
 * Synthetic clips for the tests, the benchmarks and `npm run sample`, made by the machine's
 * ffmpeg from one of its lavfi patterns (no media is committed). A clip is described by one typed
 * object (size, frames, rate, pixel format, codec, keyframe interval, format), so every place
 * asks for what it needs in the same words and the same description always makes the same
 * ffmpeg command. ffmpeg runs as a child process the event loop waits on: never a blocking call.
 */

/** Runs ffmpeg (quiet, no stdin) with `args`; rejects with its stderr when it fails. */
export const ffmpegRunAsync = async (args: ReadonlyArray<string>): Promise<void> => {
  const child = Bun.spawn(["ffmpeg", "-hide_banner", "-nostdin", "-v", "error", ...args], {
    stdin: "ignore",
    stdout: "ignore",
    stderr: "pipe"
  })
  const [stderr, code] = await Promise.all([new Response(child.stderr).text(), child.exited])
  if (code !== 0) throw new Error(`ffmpeg ${args.join(" ")}: ${stderr}`)
}

/** How a clip is encoded (or an existing clip re-encoded); every field left out is ffmpeg's default. */
export interface Encoding {
  readonly codec?: "libx264"
  readonly preset?: "ultrafast" | "fast"
  /** A keyframe every `gop` frames exactly, none in between (no scene-cut keyframes). */
  readonly gop?: number
  readonly crf?: number
  /** Constant quantiser; 0 is lossless for x264. */
  readonly qp?: number
}

/** ffmpeg output options for `encoding`, in a fixed order. */
export const encoderArgs = (encoding: Encoding): ReadonlyArray<string> => [
  ...(encoding.codec === undefined ? [] : ["-c:v", encoding.codec]),
  ...(encoding.preset === undefined ? [] : ["-preset", encoding.preset]),
  ...(encoding.gop === undefined
    ? []
    : ["-g", String(encoding.gop), "-keyint_min", String(encoding.gop), "-sc_threshold", "0"]),
  ...(encoding.crf === undefined ? [] : ["-crf", String(encoding.crf)]),
  ...(encoding.qp === undefined ? [] : ["-qp", String(encoding.qp)])
]

/**
 * A lavfi source: testsrc2 (moving colour bars, a counter and a gradient), mandelbrot (a slow
 * zoom), smptehdbars (still bars), life and cellauto (cellular automata from a fixed seed and
 * rule, so every run makes the same frames).
 */
export type Pattern = "testsrc2" | "mandelbrot" | "smptehdbars" | "life" | "cellauto"

const seeds: Readonly<Record<Pattern, string>> = {
  testsrc2: "",
  mandelbrot: "",
  smptehdbars: "",
  life: ":seed=7:mold=10:life_color=#00ff00:death_color=#aa0000",
  cellauto: ":rule=110"
}

/** The lavfi source of `pattern` at a size and rate. */
const source = (pattern: Pattern, clip: Pick<Clip, "width" | "height" | "rate">) =>
  `${pattern}=size=${clip.width}x${clip.height}:rate=${clip.rate ?? 25}${seeds[pattern]}`

/** What is written and how, the same for a clip of one pattern and for scenes. */
interface Output extends Encoding {
  readonly width: number
  readonly height: number
  /** Frames per second; 25 unless said. */
  readonly rate?: number
  /**
   * A filter chain inside the source's own graph (`testsrc2=...,noise=...`): it sees the
   * pattern's frames in the format the chain negotiates, before ffmpeg converts them for the
   * output. (Give `-vf` in `extra` for a filter on the output's side.)
   */
  readonly filter?: string
  /** The output's pixel format (-pix_fmt, e.g. yuv420p, yuv420p10le); the encoder's choice unless said. */
  readonly pixelFormat?: string
  /** Output options the fields above do not cover (e.g. -fps_mode vfr, -use_editlist 1). */
  readonly extra?: ReadonlyArray<string>
  /** The output format (-f): raw frames, or a bare H.264 stream; from the file's extension unless said. */
  readonly format?: "rawvideo" | "h264"
}

/** A clip of one lavfi pattern. */
export interface Clip extends Output {
  /** testsrc2 unless said. */
  readonly pattern?: Pattern
  readonly frames: number
}

/** Scenes of lavfi patterns back to back (cuts between them), each `frames` long. */
export interface Scenes extends Output {
  readonly scenes: ReadonlyArray<{ readonly pattern: Pattern; readonly frames: number }>
}

/** The output options of `output` writing `path`. */
const outputArgs = (path: string, output: Output): ReadonlyArray<string> => [
  ...(output.pixelFormat === undefined ? [] : ["-pix_fmt", output.pixelFormat]),
  ...encoderArgs(output),
  ...(output.extra ?? []),
  ...(output.format === undefined ? [] : ["-f", output.format]),
  "-y",
  path
]

/** The ffmpeg arguments (after the quiet options) that write `clip` to `path`. */
const clipArgs = (path: string, clip: Clip): ReadonlyArray<string> => [
  "-f",
  "lavfi",
  "-i",
  `${source(clip.pattern ?? "testsrc2", clip)}${clip.filter === undefined ? "" : `,${clip.filter}`}`,
  "-frames:v",
  String(clip.frames),
  ...outputArgs(path, clip)
]

/** Writes `clip` to `path` (replacing it); resolves to `path`. */
export const writeClip = async (path: string, clip: Clip): Promise<string> => {
  await ffmpegRunAsync(clipArgs(path, clip))
  return path
}

/**
 * Writes `scenes` to `path` (replacing it), one lavfi graph: each scene its pattern's first
 * frames (and `filter`, per scene: `format=yuv420p` converts each before the cut, as a clip of
 * one pattern would be), then concatenated. Resolves to `path`.
 */
export const writeScenes = async (path: string, scenes: Scenes): Promise<string> => {
  const chains = scenes.scenes.map(
    (scene, k) =>
      `${source(scene.pattern, scenes)},trim=end_frame=${scene.frames},setpts=PTS-STARTPTS${scenes.filter === undefined ? "" : `,${scenes.filter}`}[s${k}]`
  )
  const labels = scenes.scenes.map((_, k) => `[s${k}]`).join("")
  const graph = `${chains.join(";")};${labels}concat=n=${scenes.scenes.length}:v=1:a=0`
  await ffmpegRunAsync(["-f", "lavfi", "-i", graph, ...outputArgs(path, scenes)])
  return path
}

/** ffmpeg input options reading raw 4:2:0 8-bit frames of `clip`'s size and rate (a `rawvideo` clip). */
export const rawClipInput = (clip: Pick<Clip, "width" | "height" | "rate">, path: string): ReadonlyArray<string> => [
  "-f",
  "rawvideo",
  "-pix_fmt",
  "yuv420p",
  "-s",
  `${clip.width}x${clip.height}`,
  "-r",
  String(clip.rate ?? 25),
  "-i",
  path
]
