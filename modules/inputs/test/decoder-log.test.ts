/**
 * A decoder's log read line by line (ffmpeg at -loglevel level+info): the filters' notes on frames
 * of another size or pixel format become runs (in ffmpeg 5's and 7's wording, a colour-space-only
 * note is not a change), the first change is heard once, and only error lines are kept for
 * messages, without their level tags.
 */
import { describe, expect, it } from "vitest"
import { watchDecoderLog } from "../ffmpeg.ts"

/** The lines as a stream cut at awkward places (inside lines and UTF-8 sequences). */
const streamOf = (text: string) => {
  const bytes = new TextEncoder().encode(text)
  return new ReadableStream<Uint8Array>({
    start(controller) {
      for (let at = 0; at < bytes.length; at += 37) controller.enqueue(bytes.subarray(at, at + 37))
      controller.close()
    }
  })
}

const note5 = (w: number, h: number, fmt: number, t: string) =>
  `[graph 0 input from stream 0:0 @ 0x55] [info] filter context - w: 320 h: 240 fmt: 0, incoming frame - w: ${w} h: ${h} fmt: ${fmt} pts_time: ${t}\n[graph 0 input from stream 0:0 @ 0x55] [warning] Changing video frame properties on the fly is not supported by all filters.\n`
const note7 = (csp: string, t: string) =>
  `[graph -1 input from stream 0:0 @ 0x7f] [info] filter context - w: 320 h: 240 fmt: 0 csp: bt709 range: tv, incoming frame - w: 320 h: 240 fmt: 0 csp: ${csp} range: tv pts_time: ${t}\n`

describe("a decoder's log", () => {
  it("runs of changed frames, the first change heard once, errors kept without their tags", async () => {
    let heard = 0
    const log = watchDecoderLog(
      streamOf(
        [
          "[info] Input #0, matroska,webm, from 'file:/dev/fd/3':\n",
          note5(640, 480, 0, "0.6"),
          note5(640, 480, 0, "0.64"),
          note7("bt470bg", "0.68"),
          note5(320, 240, 62, "1.2"),
          "[h264 @ 0x5599] [error] no frame! “é”\n",
          "[fatal] Conversion failed!"
        ].join("")
      ),
      () => {
        heard++
      }
    )
    await log.done
    expect(log.runs()).toEqual([
      { firstSeconds: 0.6, width: 640, height: 480, format: 0, frames: 2 },
      { firstSeconds: 1.2, width: 320, height: 240, format: 62, frames: 1 }
    ])
    expect(heard).toBe(1)
    expect(log.text()).toBe("[h264 @ 0x5599] no frame! “é”\nConversion failed!")
  })
})
