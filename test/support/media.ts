/** Test media made with the machine's ffmpeg in temporary directories (no media is committed). */
import { spawnSync } from "bun"
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { encoderArgs, ffmpegRunAsync, rawClipInput, type Scenes, writeClip } from "../../local/clip.ts"
import type { Fixture } from "./fixtures.ts"

export { ffmpegRunAsync }

/** Runs ffmpeg (or ffprobe) with `args`; throws with its stderr when it fails. */
export const ffmpegRun = (args: ReadonlyArray<string>, tool: "ffmpeg" | "ffprobe" = "ffmpeg"): string => {
  const quiet = tool === "ffmpeg" ? ["-hide_banner", "-nostdin", "-v", "error"] : ["-hide_banner", "-v", "error"]
  const run = spawnSync([tool, ...quiet, ...args], { stdout: "pipe", stderr: "pipe" })
  if (run.exitCode !== 0) throw new Error(`${tool} ${args.join(" ")}: ${run.stderr.toString()}`)
  return run.stdout.toString()
}

/** H.264 (ultrafast) with a keyframe every 48 frames exactly, no scene-cut keyframes. */
export const x264Gop48 = encoderArgs({ codec: "libx264", preset: "ultrafast", gop: 48 })

/**
 * The title the segment tests split, in `dir`: `frames` frames of testsrc2 at 24 fps as raw
 * 4:2:0 8-bit `ref.yuv`; `dis.mp4`, H.264 at crf 34 with a keyframe every 48 frames, and
 * `dis.yuv`, that decoded back to raw; with `encodedReference`, `ref.mp4` too (lossless, the same
 * keyframes), made beside `dis.mp4`.
 */
export const writeSegmentTitle = async (
  dir: string,
  title: {
    readonly width: number
    readonly height: number
    readonly frames: number
    readonly encodedReference?: boolean
  }
): Promise<void> => {
  const clip = { width: title.width, height: title.height, frames: title.frames, rate: 24 }
  const ref = await writeClip(join(dir, "ref.yuv"), { ...clip, pixelFormat: "yuv420p", format: "rawvideo" })
  const raw = rawClipInput(clip, ref)
  await Promise.all([
    ffmpegRunAsync([...raw, ...x264Gop48, "-crf", "34", "-y", join(dir, "dis.mp4")]).then(() =>
      ffmpegRunAsync(["-i", join(dir, "dis.mp4"), "-pix_fmt", "yuv420p", "-f", "rawvideo", "-y", join(dir, "dis.yuv")])
    ),
    title.encodedReference === true
      ? ffmpegRunAsync([...raw, ...x264Gop48, "-qp", "0", "-y", join(dir, "ref.mp4")])
      : undefined
  ])
}

/**
 * Writes a long H.264 clip (1500 frames of 640x360, a minute at 25 fps) to `path`: long enough
 * that its decoder is still running when a test cancels or disconnects.
 */
export const writeLongClip = (path: string) =>
  writeClip(path, { width: 640, height: 360, frames: 1500, codec: "libx264", preset: "ultrafast" })

/**
 * Three scenes of `frames` frames each (testsrc2, mandelbrot, smptehdbars), 320x180 at 24 fps:
 * cuts at `frames` and twice that, for writeScenes.
 */
export const threeScenes320x180 = (frames: number) =>
  ({
    width: 320,
    height: 180,
    rate: 24,
    scenes: (["testsrc2", "mandelbrot", "smptehdbars"] as const).map((pattern) => ({ pattern, frames }))
  }) satisfies Scenes

/** A temporary directory, removed by the returned function. */
export const scratchDir = (prefix: string) => {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) }
}

export const ffmpegPixelFormatOf = (entry: Pick<Fixture, "pixel_format" | "bitdepth">) =>
  `yuv${entry.pixel_format}p${entry.bitdepth === 8 ? "" : `${entry.bitdepth}le`}`

/** ffmpeg input options that read a fixture's raw YUV. */
export const rawInput = (entry: Fixture, path: string) => [
  "-f",
  "rawvideo",
  "-pix_fmt",
  ffmpegPixelFormatOf(entry),
  "-s",
  `${entry.width}x${entry.height}`,
  "-r",
  "25",
  "-i",
  path
]

/** Frames ffprobe counts by decoding every one (`-count_frames`). */
export const countFrames = (path: string): number =>
  Number(
    ffmpegRun(
      ["-count_frames", "-select_streams", "v:0", "-show_entries", "stream=nb_read_frames", "-of", "csv=p=0", path],
      "ffprobe"
    ).trim()
  )

/** Process ids of the running children of `parent` named `name` (from /proc). */
export const childrenNamed = (parent: number, name: string): ReadonlyArray<number> =>
  readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .flatMap((pid) => {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
        const command = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"))
        const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
        return command === name && Number(fields[1]) === parent && fields[0] !== "Z" ? [Number(pid)] : []
      } catch {
        return []
      }
    })
