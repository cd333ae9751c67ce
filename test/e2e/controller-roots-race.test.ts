/**
 * Issue 11.1 on the compiled controller: a caller swaps a directory inside its root with a link to
 * a directory outside (by rename) while parallel clients score through it. The scorer opens each
 * input once and checks where the descriptor really points, so no score is ever computed on a file
 * outside the roots: every 200 equals the score of the pair inside.
 */
import { spawn } from "bun"
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { RunningService } from "../../local/executables.ts"
import { status as GrpcStatus } from "@grpc/grpc-js"
import { ControllerClient, postScore, Scratch, startController, v01 } from "./controller-support.ts"

const RACE_SECONDS = 12
const CLIENTS = 4
const frameBytes = (320 * 240 * 3) / 2

const scratch = new Scratch()
let controller: RunningService

const root = scratch.path("race-root")
const outside = scratch.path("race-outside")
const request = (dir: string) => ({
  reference: join(dir, "ref.yuv"),
  distorted: join(dir, "dis.yuv"),
  options: { width: 320, height: 240 }
})

beforeAll(async () => {
  const a = readFileSync(v01.reference).subarray(0, 2 * frameBytes)
  const b = readFileSync(v01.distorted).subarray(0, 2 * frameBytes)
  // Inside: (A, B). Outside: (B, A). Any mix of the two gives (A, A), (B, B) or (B, A): another score.
  for (const dir of [join(root, "real"), join(root, "static")]) {
    mkdirSync(dir, { recursive: true })
    writeFileSync(join(dir, "ref.yuv"), a)
    writeFileSync(join(dir, "dis.yuv"), b)
  }
  mkdirSync(outside)
  writeFileSync(join(outside, "ref.yuv"), b)
  writeFileSync(join(outside, "dis.yuv"), a)
  symlinkSync(outside, join(root, "link"))
  controller = await startController({
    SVC_AUTH_DISABLED: "true",
    SVC_SCORING_ROOTS: root,
    SVC_STORE_PATH: scratch.path("jobs.sqlite"),
    SVC_MAX_CONCURRENT_SCORES: "64"
  })
})

afterAll(async () => {
  await controller?.stop()
  scratch.remove()
})

describe("scoring roots under a rename race", () => {
  it(`scores nothing outside the roots while a directory and a link swap places (${RACE_SECONDS} s)`, async () => {
    const inside = await postScore(controller.http, request(join(root, "static")), undefined)
    expect(inside.status).toBe(200)
    const insideScore = ((await inside.json()) as { score: number }).score

    const swapped = join(root, "d")
    const swapper = spawn(
      [
        "python3",
        "-c",
        `import os, time
real, link, d = ${JSON.stringify(join(root, "real"))}, ${JSON.stringify(join(root, "link"))}, ${JSON.stringify(swapped)}
end = time.time() + ${RACE_SECONDS}
while time.time() < end:
    os.rename(real, d); os.rename(d, real)
    os.rename(link, d); os.rename(d, link)`
      ],
      { stdout: "ignore", stderr: "pipe" }
    )
    const outcomes = { inside: 0, outside: 0, refused: 0 }
    const client = async () => {
      while (swapper.exitCode === null) {
        const response = await postScore(controller.http, request(swapped), undefined)
        const body = (await response.json()) as { score?: number; error?: string }
        if (response.status !== 200) {
          expect([403, 404], JSON.stringify(body)).toContain(response.status)
          outcomes.refused++
        } else if (body.score === insideScore) outcomes.inside++
        else outcomes.outside++
      }
    }
    await Promise.all(Array.from({ length: CLIENTS }, client))
    expect(await swapper.exited, await new Response(swapper.stderr).text()).toBe(0)
    // Both kinds of answer happened, so the race really ran; none came from outside.
    expect(outcomes.inside, JSON.stringify(outcomes)).toBeGreaterThan(0)
    expect(outcomes.refused, JSON.stringify(outcomes)).toBeGreaterThan(0)
    expect(outcomes.outside, JSON.stringify(outcomes)).toBe(0)
  }, 60_000)
})

describe("requests the controller refuses before anything exists (issues 11.6, 13.4)", () => {
  it("SubmitJob validates the model as Score does: an unknown model makes no job", async () => {
    const client = new ControllerClient(controller.grpc ?? "")
    try {
      const refused = await client.submit({ ...request(join(root, "static")), model: "no_such_model" }, "")
      expect(refused.ok).toBe(false)
      if (!refused.ok) {
        expect(refused.code).toBe(GrpcStatus.NOT_FOUND)
        expect(refused.details).toMatch(/no_such_model/)
      }
      const bad = await client.submit({ ...request(join(root, "static")), options: { bitdepth: 9 } }, "")
      expect(!bad.ok && bad.details).toBe("options.bitdepth: 9 is not one of 8, 10, 12, 16 (0: 8)")
    } finally {
      client.close()
    }
  })

  it("a 100 KB job id is refused with INVALID_ARGUMENT and a short message", async () => {
    const client = new ControllerClient(controller.grpc ?? "")
    try {
      const outcome = await client.getJob("x".repeat(100_000), undefined)
      expect(outcome.ok).toBe(false)
      if (!outcome.ok) {
        expect(outcome.code).toBe(GrpcStatus.INVALID_ARGUMENT)
        expect(outcome.details).toMatch(/^id: "x{32}…" \(100000 characters\) is longer than 128 characters$/)
      }
    } finally {
      client.close()
    }
  })
})
