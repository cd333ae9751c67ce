/**
 * Shots and percentiles through the compiled controller and its node: the three-source clip
 * (modules/scorer/test/shots-clips.ts) scored with options.shots by the controller's
 * POST /v1/score (JSON) and as a job a node runs (gRPC, stored in SQLite, read back with GetJob)
 * carries the three shots, the worst shots, their thumbnails and pooled p1..p99, the same in both.
 */
import { describe, expect, it } from "vitest"
import { clipGeometry, writeThreeSources } from "../../modules/scorer/test/shots-clips.ts"
import { expectOk, jobInState, postScore, useControllerAndNode } from "./controller-support.ts"

interface ShotsResult {
  readonly score: number
  readonly pooled: Readonly<Record<string, Readonly<Record<string, number>>>>
  readonly shots: ReadonlyArray<{ readonly first_frame: number; readonly frame_count: number; readonly score: number }>
  readonly worst_shots: ReadonlyArray<number>
  readonly thumbnails: ReadonlyArray<{ readonly frame: number; readonly reference: string; readonly distorted: string }>
}

let request: { reference: string; distorted: string; options: object }
const setup = useControllerAndNode(async (scratch) => {
  const clip = await writeThreeSources(scratch.rootA)
  request = { ...clip, options: { ...clipGeometry, pixel_format: "420", shots: true } }
})

const expectThreeShots = (result: ShotsResult) => {
  expect(result.shots.map((shot) => [shot.first_frame, shot.frame_count])).toEqual([
    [0, 30],
    [30, 45],
    [75, 35]
  ])
  const byScore = [...result.shots.keys()].sort((a, b) => (result.shots[a]?.score ?? 0) - (result.shots[b]?.score ?? 0))
  expect(result.worst_shots).toEqual(byScore)
  expect(result.thumbnails).toHaveLength(3)
  for (const thumbnail of result.thumbnails) expect(thumbnail.reference).toMatch(/^data:image\/png;base64,/)
  const ranked = ["p1", "p5", "p10", "p25", "p50", "p75", "p90", "p95", "p99"].map(
    (p) => result.pooled[p]?.["vmaf"] ?? Number.NaN
  )
  expect(ranked.every(Number.isFinite)).toBe(true)
  expect(ranked).toEqual([...ranked].sort((a, b) => a - b))
}

describe("options.shots through the controller", () => {
  let scored: ShotsResult
  it("POST /v1/score answers with shots, worst shots, thumbnails and percentiles", async () => {
    const response = await postScore(setup.controller.http, request, setup.tokens.aWriter)
    expect(response.status).toBe(200)
    scored = (await response.json()) as ShotsResult
    expectThreeShots(scored)
  }, 120_000)

  it("a job run by a node stores and returns the same", async () => {
    const submitted = expectOk(await setup.client.submit(request, setup.tokens.aWriter))
    const id = String(submitted["id"])
    const job = await jobInState(setup.client, id, setup.tokens.aReader, "JOB_STATE_FINISHED")
    const result = job["result"] as ShotsResult
    expectThreeShots(result)
    expect(result.shots).toEqual(scored.shots)
    expect(result.pooled["p5"]).toEqual(scored.pooled["p5"])
    expect(result.thumbnails).toEqual(scored.thumbnails)
  }, 180_000)
})
