/**
 * A full-length title through the compiled controller and node: a 20,000-frame job (48x48, the
 * smallest size every default feature accepts, written by the test). Its per-frame results (about
 * 10 MB of them) travel in pages both ways: the node reports them in pages, and GetJob hands them
 * out a page at a time, so no message needs more than grpc-js's default 4 MiB, which this test's
 * own client keeps.
 */
import { describe, expect, it } from "vitest"
import { closeSync, openSync, writeSync } from "node:fs"
import { join } from "node:path"
import { MAX_FRAMES_PER_MESSAGE } from "../../modules/jobs/model.ts"
import { expectOk, jobInState, useControllerAndNode } from "./controller-support.ts"

const FRAMES = 20_000
const SIDE = 48

/** A Y4M clip of `FRAMES` 48x48 4:2:0 frames: a moving gradient, `shift` making the distorted one differ. */
const writeClip = (path: string, shift: number) => {
  const fd = openSync(path, "w")
  writeSync(fd, `YUV4MPEG2 W${SIDE} H${SIDE} F25:1 Ip A1:1 C420jpeg\n`)
  const size = (SIDE * SIDE * 3) / 2
  const frame = Buffer.alloc(size)
  for (let index = 0; index < FRAMES; index++) {
    for (let i = 0; i < size; i++) frame[i] = (i * 3 + index + ((i * shift) % 5)) & 0xff
    writeSync(fd, "FRAME\n")
    writeSync(fd, frame)
  }
  closeSync(fd)
}

describe("a 20,000-frame job through controller and node", () => {
  const setup = useControllerAndNode((scratch) => {
    writeClip(join(scratch.rootA, "long.ref.y4m"), 0)
    writeClip(join(scratch.rootA, "long.dis.y4m"), 1)
  })

  it("finishes, and every per-frame value comes back page by page", async () => {
    const submitted = expectOk(
      await setup.client.submit(
        { reference: join(setup.scratch.rootA, "long.ref.y4m"), distorted: join(setup.scratch.rootA, "long.dis.y4m") },
        setup.tokens.aWriter
      )
    )
    const id = String(submitted.id)
    const finished = await jobInState(setup.client, id, setup.tokens.aReader, "JOB_STATE_FINISHED", 300_000)
    const result = finished.result as { readonly frame_count: number; readonly frames: ReadonlyArray<unknown> }
    expect(result.frame_count).toBe(FRAMES)
    expect(result.frames.length).toBe(MAX_FRAMES_PER_MESSAGE)
    const frames: Array<{ readonly frame: number; readonly metrics: Record<string, number> }> = []
    while (frames.length < FRAMES) {
      const page = expectOk(
        await setup.client.unary("svc.v1.Jobs", "GetJob", { id, frames_offset: frames.length }, setup.tokens.aReader)
      )
      const pageFrames = (page.result as { readonly frames: typeof frames }).frames
      expect(pageFrames.length).toBeGreaterThan(0)
      expect(pageFrames.length).toBeLessThanOrEqual(MAX_FRAMES_PER_MESSAGE)
      frames.push(...pageFrames)
    }
    expect(frames.map((frame) => frame.frame)).toEqual(Array.from({ length: FRAMES }, (_, index) => index))
    for (const frame of frames) expect(typeof frame.metrics["vmaf"]).toBe("number")
    // Past the end: an empty page, not an error.
    const beyond = expectOk(
      await setup.client.unary("svc.v1.Jobs", "GetJob", { id, frames_offset: FRAMES }, setup.tokens.aReader)
    )
    expect((beyond.result as { readonly frames: ReadonlyArray<unknown> }).frames).toEqual([])
    // The node's final report went through on its first attempt, nothing was resent, and it came
    // in pages: at least FRAMES / MAX_FRAMES_PER_MESSAGE ReportResult calls were answered OK.
    expect(setup.node.logs.filter((line) => line.message.includes("not delivered"))).toEqual([])
    const metrics = await (await fetch(`${setup.controller.http}/metrics`)).text()
    const reports = metrics
      .split("\n")
      .find(
        (line) =>
          line.startsWith("svc_grpc_requests_total{") &&
          line.includes("/svc.v1.Nodes/ReportResult") &&
          line.includes('code="OK"')
      )
    expect(Number(reports?.split(" ").at(-1))).toBeGreaterThanOrEqual(FRAMES / MAX_FRAMES_PER_MESSAGE)
  }, 400_000)
})
