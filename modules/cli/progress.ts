/**
 * The progress line on stderr while something scores: frames done / total, frames per second
 * and the time left. Drawn only when stderr is a terminal and not quieted (-q), so pipes,
 * files and CI logs never see it; redrawn at most ten times a second and erased at the end.
 */
import type { RenditionProgress } from "../transport/grpc/svc-v1.ts"

export interface Progress {
  /** Frames done so far; `detail` (a ladder's frames per rendition) follows the counts. */
  readonly update: (framesDone: number, detail?: string) => void
  /** Erases the line (before the result or an error is printed). */
  readonly finish: () => void
}

const silent: Progress = { update: () => undefined, finish: () => undefined }

const clock = (seconds: number): string => {
  if (!Number.isFinite(seconds) || seconds < 0) return "--:--"
  const whole = Math.round(seconds)
  const minutes = Math.floor(whole / 60)
  return `${minutes}:${String(whole % 60).padStart(2, "0")}`
}

const barWidth = 28

/** A ladder job's frames per rendition: "480p 120/240, 720p 118/240" (no total known: "480p 120"). */
export const renditionProgressText = (progress: ReadonlyArray<RenditionProgress>, total: number | undefined): string =>
  progress
    .map((entry) => `${entry.label} ${entry.frames_done}${total === undefined || total <= 0 ? "" : `/${total}`}`)
    .join(", ")

/** The progress line for a state (exported for tests of its layout). */
export const progressLine = (
  label: string,
  done: number,
  total: number | undefined,
  seconds: number,
  detail = ""
): string => {
  const line = countsLine(label, done, total, seconds)
  return detail === "" ? line : `${line}  ${detail}`
}

const countsLine = (label: string, done: number, total: number | undefined, seconds: number): string => {
  const fps = seconds > 0 ? done / seconds : 0
  const rate = `${fps.toFixed(1)} fps`
  // Nothing counted (a server answers only at the end): the clock alone.
  if (done === 0 && (total === undefined || total <= 0)) return `${label}  ${clock(seconds)} elapsed`
  if (total === undefined || total <= 0) return `${label} ${done} frames  ${rate}  ${clock(seconds)} elapsed`
  const fraction = Math.min(1, done / total)
  const filled = Math.round(fraction * barWidth)
  const bar = `[${"#".repeat(filled)}${"-".repeat(barWidth - filled)}]`
  const eta = fps > 0 ? (total - done) / fps : Number.NaN
  return `${label} ${bar} ${done}/${total} frames  ${rate}  ETA ${clock(eta)}`
}

export interface ProgressOptions {
  readonly label: string
  /** Expected frames, when known. */
  readonly total: number | undefined
  readonly quiet: boolean
  readonly stream?: NodeJS.WriteStream
}

export const startProgress = (options: ProgressOptions): Progress => {
  const stream = options.stream ?? process.stderr
  if (options.quiet || !stream.isTTY) return silent
  const started = performance.now()
  let lastDraw = 0
  let done = 0
  let detail = ""
  let drawn = false
  const draw = () => {
    const seconds = (performance.now() - started) / 1000
    const columns = stream.columns > 0 ? stream.columns : 80
    stream.write(`\r${progressLine(options.label, done, options.total, seconds, detail).slice(0, columns - 1)}\x1b[K`)
    drawn = true
    lastDraw = performance.now()
  }
  // Redraws while nothing reports (server scores, the first slow frames): the clock keeps moving.
  const ticker = setInterval(draw, 500)
  draw()
  return {
    update: (framesDone, renditions = "") => {
      done = framesDone
      detail = renditions
      if (performance.now() - lastDraw >= 100) draw()
    },
    finish: () => {
      clearInterval(ticker)
      if (drawn) stream.write("\r\x1b[K")
    }
  }
}
