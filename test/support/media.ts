/** Test media made with the machine's ffmpeg in temporary directories (no media is committed). */
import { spawnSync } from "bun"
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { Fixture } from "./fixtures.ts"

/** Runs ffmpeg (or ffprobe) with `args`; throws with its stderr when it fails. */
export const ffmpegRun = (args: ReadonlyArray<string>, tool: "ffmpeg" | "ffprobe" = "ffmpeg"): string => {
  const quiet = tool === "ffmpeg" ? ["-hide_banner", "-nostdin", "-v", "error"] : ["-hide_banner", "-v", "error"]
  const run = spawnSync([tool, ...quiet, ...args], { stdout: "pipe", stderr: "pipe" })
  if (run.exitCode !== 0) throw new Error(`${tool} ${args.join(" ")}: ${run.stderr.toString()}`)
  return run.stdout.toString()
}

/**
 * Writes a long H.264 clip (1500 frames of 640x360, a minute at 25 fps) to `path`: long enough
 * that its decoder is still running when a test cancels or disconnects.
 */
export const writeLongClip = (path: string) =>
  ffmpegRun([
    "-f",
    "lavfi",
    "-i",
    "testsrc2=size=640x360:rate=25",
    "-frames:v",
    "1500",
    "-c:v",
    "libx264",
    "-preset",
    "ultrafast",
    "-y",
    path
  ])

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
