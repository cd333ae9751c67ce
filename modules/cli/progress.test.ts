/** The progress line's layout, and its silence off a terminal. */
import { PassThrough } from "node:stream"
import { describe, expect, it } from "vitest"
import { progressLine, renditionProgressText, startProgress } from "./progress.ts"

describe("progressLine", () => {
  it("shows frames done of the total, fps and the time left", () => {
    expect(progressLine("scoring", 15, 30, 3)).toBe(
      `scoring [${"#".repeat(14)}${"-".repeat(14)}] 15/30 frames  5.0 fps  ETA 0:03`
    )
  })
  it("counts frames without a total, and shows only the clock before anything is counted", () => {
    expect(progressLine("job 1", 12, undefined, 4)).toBe("job 1 12 frames  3.0 fps  0:04 elapsed")
    expect(progressLine("scoring on server", 0, undefined, 65)).toBe("scoring on server  1:05 elapsed")
  })
  it("a ladder job's frames per rendition follow the counts", () => {
    const progress = [
      { label: "480p", frames_done: 120 },
      { label: "720p", frames_done: 118 }
    ]
    expect(renditionProgressText(progress, 240)).toBe("480p 120/240, 720p 118/240")
    expect(renditionProgressText(progress, undefined)).toBe("480p 120, 720p 118")
    expect(progressLine("job 1", 120, 240, 60, renditionProgressText(progress, 240))).toBe(
      `job 1 [${"#".repeat(14)}${"-".repeat(14)}] 120/240 frames  2.0 fps  ETA 1:00  480p 120/240, 720p 118/240`
    )
  })
})

describe("startProgress", () => {
  it("writes nothing to a stream that is not a terminal, or when quiet", () => {
    const written: Array<string> = []
    const pipe = new PassThrough()
    pipe.on("data", (chunk: Buffer) => written.push(chunk.toString()))
    for (const quiet of [false, true]) {
      const progress = startProgress({
        label: "scoring",
        total: 10,
        quiet,
        stream: pipe as unknown as NodeJS.WriteStream
      })
      progress.update(5)
      progress.finish()
    }
    expect(written).toEqual([])
  })
})
