/**
 * The one decode for the search and the score (alignment-once.ts) in a real memory budget
 * (SVC_MAX_SCORE_MEMORY) where holding the frames fits but holding them and scoring does not,
 * while two decodes fit: the held frames are given back and the pair is searched and scored by
 * two decodes, so the score succeeds (200, not 429 on an idle server) with the two decodes'
 * result. The budget is found from the code's own admissions, recorded on the same request
 * without a limit (held) and with no room for the held frames only (two decodes, as the fallback
 * runs them): above everything the held path admits before the score and above the two decodes'
 * peak, below the held frames plus the score. Through the service with the real budget (the decoders'
 * runs counted: held, then searched and scored again) and through svc-server.
 *
 * For the arithmetic to work, the held frames must outweigh a decoder (its 64 MiB base and its
 * frames): about 300 frames of 320x240 10-bit. The distorted clip drops reference frames, so the
 * Y4M reference's cut is decoded by ffmpeg too and the score's admission carries that decoder.
 */
import { join } from "node:path"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { writeClip } from "../../../local/clip.ts"
import { type RunningService, startService } from "../../../local/executables.ts"
import { ffmpegRunAsync, scratchDir } from "../../../test/support/media.ts"
import { memoryLedger, type ScoreResult } from "../../scorer/index.ts"
import { countingRuntime, frameBits, refusing } from "./held-support.ts"

const scratch = scratchDir("svc-held-budget-")
const { runtime, score, heldAdmission: heldAdmissionOf } = countingRuntime()
afterAll(async () => {
  await runtime.dispose()
  scratch.remove()
})

const geometry = { width: 320, height: 240, pixelFormat: 420, bitdepth: 10 } as const
/** The distorted clip: from reference frame 3, without reference frames 150 and 151. */
const distortedFrames = 310
const referenceFrames = distortedFrames + 5

let reference = ""
let distorted = ""
beforeAll(async () => {
  reference = await writeClip(join(scratch.dir, "reference.y4m"), {
    width: geometry.width,
    height: geometry.height,
    frames: referenceFrames,
    pixelFormat: "yuv420p10le",
    extra: ["-strict", "-1"]
  })
  distorted = join(scratch.dir, "distorted.mkv")
  await ffmpegRunAsync([
    ...[
      "-i",
      reference,
      "-vf",
      "trim=start_frame=3,setpts=PTS-STARTPTS,select='not(between(n\\,147\\,148))',setpts=N/25/TB"
    ],
    ...["-c:v", "libx264", "-threads", "1", "-preset", "ultrafast", "-crf", "30"],
    ...["-pix_fmt", "yuv420p10le", "-fflags", "+bitexact", "-y", distorted]
  ])
}, 60_000)

/**
 * A budget without a limit that records each admission and what was in use before it; `refused`
 * sizes (the held frames') find no room and are not recorded.
 */
const recordingBudget = (refused: ReadonlyArray<number> = []) => {
  let inUse = 0
  const admissions: Array<{ readonly bytes: number; readonly before: number }> = []
  const admitMemory = (bytes: number) =>
    Effect.zipRight(
      refusing(refused)(bytes),
      Effect.acquireRelease(
        Effect.sync(() => {
          admissions.push({ bytes, before: inUse })
          inUse += bytes
        }),
        () =>
          Effect.sync(() => {
            inUse -= bytes
          })
      )
    )
  return { admitMemory, admissions, inUse: () => inUse }
}
const peakOf = (admissions: ReadonlyArray<{ readonly bytes: number; readonly before: number }>) =>
  Math.max(...admissions.map((admission) => admission.before + admission.bytes))

/**
 * The request: a window of the clip's frames (held where the budget lets it). Every frame is
 * decoded, held and searched; every 8th pair is scored (39, across the cut), to stay lean.
 */
const request = () => ({
  reference,
  distorted,
  options: { sync: "auto", sync_window: distortedFrames, subsample: 8, per_frame: true, precision: "lossless" }
})
const expectedAlignment = { reference_start: 3, distorted_start: 0, frames: 310, reference_frames_dropped: [150, 151] }

describe("held frames in a real budget that has no room for them and the score together", () => {
  let budget = 0
  let byTwoDecodes: ScoreResult | undefined

  it("the budget the code's own admissions call for: holding fits, holding and scoring do not, two decodes do", async () => {
    const once = recordingBudget()
    const heldRun = await score(request(), { admitMemory: once.admitMemory })
    expect(heldRun.runs).toEqual({ searchDecodes: 0, scoringDecodes: 1, decodesOnce: 1 })
    expect(heldRun.result.alignment).toMatchObject(expectedAlignment)
    // First the held frames, for the most the container allows, with their thumbnails.
    const [heldAdmission] = once.admissions
    const heldSize = await heldAdmissionOf(distortedFrames, geometry)
    expect(heldAdmission?.bytes).toBe(heldSize)
    // Last the score's own (the library's estimate and the reference cut's decoder), while held.
    const scoreAdmission = once.admissions.at(-1)
    expect(scoreAdmission?.before).toBeGreaterThanOrEqual(heldSize)
    // The two decodes, as the fallback runs them: the same request, no room for the held frames.
    const twice = recordingBudget([heldSize])
    const twoDecodeRun = await score(request(), { admitMemory: twice.admitMemory })
    expect(twoDecodeRun.runs).toEqual({ searchDecodes: 1, scoringDecodes: 2, decodesOnce: 0 })
    byTwoDecodes = twoDecodeRun.result
    expect(byTwoDecodes.frames).toHaveLength(39)
    expect(frameBits(heldRun.result.frames)).toEqual(frameBits(byTwoDecodes.frames))
    for (const ledger of [once, twice]) expect(ledger.inUse()).toBe(0)

    const fitsHeld = peakOf(once.admissions.slice(0, -1))
    const fitsTwoDecodes = peakOf(twice.admissions)
    const heldAndScore = (scoreAdmission?.before ?? 0) + (scoreAdmission?.bytes ?? 0)
    // The case exists for these clips: a budget fitting both ways without the score while held.
    expect(Math.max(fitsHeld, fitsTwoDecodes)).toBeLessThan(heldAndScore)
    budget = Math.floor((Math.max(fitsHeld, fitsTwoDecodes) + heldAndScore) / 2)
  }, 60_000)

  it("through the service with that budget: held, given back, then searched and scored by two decodes", async () => {
    expect(budget).toBeGreaterThan(0)
    const ledger = await Effect.runPromise(memoryLedger(budget))
    const { result, runs } = await score(request(), { admitMemory: ledger.admit, memoryBudget: budget })
    expect(runs).toEqual({ searchDecodes: 1, scoringDecodes: 2, decodesOnce: 1 })
    expect(await Effect.runPromise(ledger.free)).toBe(budget)
    expect(result.alignment).toEqual(byTwoDecodes?.alignment)
    expect(frameBits(result.frames)).toEqual(frameBits(byTwoDecodes?.frames ?? []))
    expect(result.score).toBe(byTwoDecodes?.score)
  }, 60_000)

  describe("svc-server with SVC_MAX_SCORE_MEMORY at that budget", () => {
    let server: RunningService | undefined
    afterAll(async () => {
      if (server) expect(await server.stop()).toBe(0)
    })

    it("answers 200 on an idle server, with the two decodes' result", async () => {
      expect(budget).toBeGreaterThan(0)
      server = await startService("svc-server", { env: { SVC_MAX_SCORE_MEMORY: String(budget) } })
      const response = await fetch(`${server.http}/v1/score`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(request())
      })
      const answer = (await response.json()) as ScoreResult
      expect(response.status, JSON.stringify(answer).slice(0, 400)).toBe(200)
      expect(answer.alignment).toEqual(byTwoDecodes?.alignment)
      expect(frameBits(answer.frames)).toEqual(frameBits(byTwoDecodes?.frames ?? []))
      expect(answer.score).toBe(byTwoDecodes?.score)
    }, 60_000)
  })
})
