/**
 * Segment jobs in the job service on both stores (issue 30): the plan, fair claiming, the
 * 5.6 rule on a segment's lease with its byte-exact message, re-queue of a lost node's segment
 * with its maximum of attempts, an input error failing the job and cancelling its other
 * segments, cancel, the merge by the last segment, the controller default and the limits.
 */
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Fiber, Layer, Option, TestClock } from "effect"
import { PermissionDenied } from "../policy/errors.ts"
import type { ScoreResult } from "../scorer/index.ts"
import type { Job } from "./model.ts"
import { MAX_SEGMENT_ATTEMPTS } from "./model.ts"
import { cutTitle, JobService, type JobServiceShape } from "./service.ts"
import { DEFAULT_SESSION_SETTINGS } from "./sessions.ts"
import type { Backend } from "../../test/support/job-store/backends.ts"
import { describeContract } from "../../test/support/job-store/contract.ts"
import {
  ladderRequest,
  ladderResult,
  node,
  request,
  result,
  serviceLayerAt,
  writer
} from "../../test/support/job-store/support.ts"

const info = { name: "host", slots: 4, version: "t", scoresSegments: true }
const { ttlMillis, requeueGraceMillis, sweepIntervalMillis } = DEFAULT_SESSION_SETTINGS

/** The service on a fresh store of the backend, SVC_* settings from `env`. */
const runOn =
  (backend: () => Backend) =>
  <A, E>(body: (jobs: JobServiceShape) => Effect.Effect<A, E>, env: Record<string, string> = {}) =>
    Effect.suspend(() =>
      Effect.flatMap(JobService, body).pipe(
        Effect.provide(serviceLayerAt(backend())),
        Effect.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env)))))
      )
    )

const segmentJob = (frames = 24) => ({ ...request("title"), options: { per_frame: true, segment_frames: frames } })

/** A segment's lossless result: its frames numbered from `first`, each scored `score + frame`. */
const segmentResult = (first: number, count: number): ScoreResult => {
  const base = result(0, count)
  return {
    ...base,
    frames: Array.from({ length: count }, (_, k) => ({ frame: first + k, metrics: { vmaf: 50 + ((first + k) % 7) } }))
  }
}

/** What a sync job's plan found: 40 pairs, reference frame 7 dropped. */
const alignment = {
  reference_start: 3,
  distorted_start: 0,
  frames: 40,
  reference_frames_dropped: [7],
  distorted_frames_inserted: [],
  distorted_frames_repeated: [],
  confidence: 0.9,
  window: 120
}

/** A node that pulls the job's plan and reports `frames`. */
const planned = (jobs: JobServiceShape, frames: number) =>
  Effect.gen(function* () {
    const { nodeId } = yield* jobs.register(node("a"), info)
    const [plan] = yield* jobs.pullWork(node("a"), nodeId, 1)
    if (plan === undefined) throw new Error("no plan handed out")
    expect(plan.plan).toBe(true)
    const job = yield* jobs.reportResult(node("a"), nodeId, plan.id, {
      final: false,
      framesDone: 0,
      planFrames: frames
    })
    return { nodeId, job }
  })

const finishSegment = (jobs: JobServiceShape, nodeId: string, job: Job, index: number) => {
  const segment = job.segments[index]
  if (segment === undefined) throw new Error(`no segment ${index}`)
  return jobs.reportResult(node("a"), nodeId, job.id, {
    final: true,
    segmentIndex: index,
    result: segmentResult(segment.firstFrame, segment.frameCount),
    framesDone: segment.frameCount
  })
}

describe("cutting a title", () => {
  it("cuts a title into segments of the asked size, the last taking the rest, at most 10000", () => {
    expect(cutTitle(100, 24)).toEqual([
      { firstFrame: 0, frameCount: 24 },
      { firstFrame: 24, frameCount: 24 },
      { firstFrame: 48, frameCount: 24 },
      { firstFrame: 72, frameCount: 24 },
      { firstFrame: 96, frameCount: 4 }
    ])
    expect(cutTitle(1_000_000, 24)).toHaveLength(10_000)
  })
})

describeContract("segment jobs", ({ backend }) => {
  const run = runOn(backend)

  it.effect("plan, segments on several nodes, and the exact merge by the last one", () =>
    run((jobs) =>
      Effect.gen(function* () {
        const submitted = yield* jobs.submit(writer("a"), segmentJob(24))
        const { nodeId: planner, job } = yield* planned(jobs, 60)
        expect(job.state).toBe("running")
        expect(job.nodeId).toBeUndefined()
        expect(job.segments.map((s) => [s.index, s.firstFrame, s.frameCount, s.state])).toEqual([
          [0, 0, 24, "pending"],
          [1, 24, 24, "pending"],
          [2, 48, 12, "pending"]
        ])
        const other = (yield* jobs.register(node("a"), info)).nodeId
        const mine = yield* jobs.pullWork(node("a"), planner, 2)
        const theirs = yield* jobs.pullWork(node("a"), other, 2)
        expect(mine.map((pulled) => pulled.segment?.index)).toEqual([0, 1])
        expect(theirs.map((pulled) => pulled.segment?.index)).toEqual([2])
        // Progress sums the segments'.
        const progressed = yield* jobs.reportResult(node("a"), planner, submitted.id, {
          final: false,
          segmentIndex: 0,
          framesDone: 10
        })
        expect(progressed.framesDone).toBe(10)
        yield* finishSegment(jobs, other, progressed, 2)
        yield* finishSegment(jobs, planner, progressed, 0)
        const done = yield* finishSegment(jobs, planner, progressed, 1)
        expect(done.state).toBe("finished")
        expect(done.framesDone).toBe(60)
        expect(done.segments.every((s) => s.state === "finished" && s.attempts === 1)).toBe(true)
        const merged = done.result as ScoreResult
        expect(merged.frames.map((frame) => frame.frame)).toEqual(Array.from({ length: 60 }, (_, k) => k))
        const values = merged.frames.map((frame) => frame.metrics.vmaf ?? 0)
        expect(merged.features.vmaf).toBe(values.reduce((sum, v) => sum + v, 0) / 60)
        expect(merged.score).toBe(merged.features.vmaf)
        expect(merged.pooled.min.vmaf).toBe(50)
        expect(merged.pooled.max.vmaf).toBe(56)
        // A repeated final report changes nothing.
        expect((yield* finishSegment(jobs, planner, progressed, 1)).state).toBe("finished")
      })
    )
  )

  it.effect("a segment's report by another live node is refused with the job's 5.6 message", () =>
    run((jobs) =>
      Effect.gen(function* () {
        const submitted = yield* jobs.submit(writer("a"), segmentJob(24))
        const { nodeId } = yield* planned(jobs, 48)
        yield* jobs.pullWork(node("a"), nodeId, 1)
        const intruder = (yield* jobs.register(node("a"), info)).nodeId
        const refused = yield* Effect.flip(
          jobs.reportResult(node("a"), intruder, submitted.id, { final: false, segmentIndex: 0, framesDone: 1 })
        )
        expect(refused).toBeInstanceOf(PermissionDenied)
        expect(refused.message).toBe(`job "${submitted.id}" is not assigned to node "${intruder}"`)
        // A pending segment (not handed out) is refused the same way.
        const pending = yield* Effect.flip(
          jobs.reportResult(node("a"), nodeId, submitted.id, { final: false, segmentIndex: 1, framesDone: 1 })
        )
        expect(pending.message).toBe(`job "${submitted.id}" is not assigned to node "${nodeId}"`)
        // Another tenant's node cannot report on it either.
        const b = (yield* jobs.register(node("b"), info)).nodeId
        const other = yield* Effect.flip(
          jobs.reportResult(node("b"), b, submitted.id, { final: false, segmentIndex: 0, framesDone: 1 })
        )
        expect(other.message).toBe(`job "${submitted.id}" is not assigned to node "${b}"`)
      })
    )
  )

  it.effect("a short job of the tenant is handed out before a title's further segments", () =>
    run((jobs) =>
      Effect.gen(function* () {
        yield* jobs.submit(writer("a"), segmentJob(24))
        const { nodeId } = yield* planned(jobs, 240)
        const short = yield* jobs.submit(writer("a"), request("short"))
        const [segment, next] = yield* jobs.pullWork(node("a"), nodeId, 2)
        // The title has no unit running and is older: its first segment; then the short job (0
        // units running) before the title's second segment (1 running).
        expect(segment?.segment?.index).toBe(0)
        expect(next?.id).toBe(short.id)
      })
    )
  )

  it.effect("a lost node's segment is handed out again; lost too often, it fails the job", () =>
    run((jobs) =>
      Effect.gen(function* () {
        const submitted = yield* jobs.submit(writer("a"), segmentJob(24))
        yield* planned(jobs, 24)
        // Another tenant's node keeps heartbeating: time passes with the store answering (a
        // PostgreSQL store does not count time it could not be reached against sessions).
        const watcher = (yield* jobs.register(node("b"), info)).nodeId
        const tick = (millis: number) =>
          Effect.forEach(Array.from({ length: millis / 1000 }), () =>
            Effect.zipRight(TestClock.adjust(1000), jobs.heartbeat(node("b"), watcher, []))
          )
        const lose = Effect.gen(function* () {
          const { nodeId } = yield* jobs.register(node("a"), info)
          const [pulled] = yield* jobs.pullWork(node("a"), nodeId, 1)
          expect(pulled?.segment?.index).toBe(0)
          yield* tick(ttlMillis + requeueGraceMillis + sweepIntervalMillis)
          yield* jobs.requeueOrphans
          return yield* jobs.get(writer("a"), submitted.id)
        })
        for (let attempt = 1; attempt < MAX_SEGMENT_ATTEMPTS; attempt++) {
          const job = yield* lose
          expect(job.state).toBe("running")
          expect(job.segments[0]).toMatchObject({ state: "pending", attempts: attempt, nodeId: undefined })
        }
        const failed = yield* lose
        expect(failed.state).toBe("failed")
        expect(failed.error).toBe(
          `segment 0 was lost with its node ${MAX_SEGMENT_ATTEMPTS} times (at most ${MAX_SEGMENT_ATTEMPTS} attempts)`
        )
      })
    )
  )

  it.effect(
    "a segment handed back for memory: its need recorded, not an attempt, skipped by claims with less free, woken and taken with enough",
    () =>
      run((jobs) =>
        Effect.gen(function* () {
          const submitted = yield* jobs.submit(writer("a"), segmentJob(24))
          const { nodeId } = yield* planned(jobs, 48)
          expect((yield* jobs.pullWork(node("a"), nodeId, 2)).map((pulled) => pulled.segment?.index)).toEqual([0, 1])
          const scarce = { freeBytes: 99, budgetBytes: 200 }
          const enough = { freeBytes: 100, budgetBytes: 200 }
          // The node keeps segment 0 (named) and hands back segment 1 with its need, over and over:
          // a hand-back is no attempt, so the job never fails for it.
          const handBack = jobs.heartbeat(
            node("a"),
            nodeId,
            [submitted.id],
            true,
            [{ jobId: submitted.id, bytes: 100, segment: 1 }],
            [{ jobId: submitted.id, index: 0 }]
          )
          for (let round = 0; round <= MAX_SEGMENT_ATTEMPTS; round++) {
            expect(yield* handBack).toBe(true)
            const job = yield* jobs.get(writer("a"), submitted.id)
            expect(job.segments.map((s) => [s.state, s.nodeId, s.attempts])).toEqual([
              ["running", nodeId, 1],
              ["pending", undefined, 0]
            ])
            expect(yield* jobs.pullWork(node("a"), nodeId, 1, 0, scarce)).toEqual([])
            const [again] = yield* jobs.pullWork(node("a"), nodeId, 1, 0, enough)
            expect([again?.segment?.index, again?.segment?.attempts]).toEqual([1, 1])
          }
          // Two nodes wait, the first with too little free: the hand-back wakes both.
          const short = (yield* jobs.register(node("a"), info)).nodeId
          const roomy = (yield* jobs.register(node("a"), info)).nodeId
          const tooLittle = yield* Effect.fork(jobs.pullWork(node("a"), short, 1, 20_000, scarce))
          for (let turn = 0; turn < 5; turn++) yield* Effect.yieldNow()
          const waiting = yield* Effect.fork(jobs.pullWork(node("a"), roomy, 1, 20_000, enough))
          for (let turn = 0; turn < 5; turn++) yield* Effect.yieldNow()
          expect(yield* handBack).toBe(true)
          expect((yield* Fiber.join(waiting)).map((pulled) => [pulled.segment?.index, pulled.segment?.nodeId])).toEqual(
            [[1, roomy]]
          )
          expect(Option.isNone(yield* Fiber.poll(tooLittle))).toBe(true)
          yield* Fiber.interrupt(tooLittle)
          // A node whose whole budget it exceeds gets it, to fail it with the reason; a lost claim
          // (not handed back with a need) still counts.
          yield* jobs.heartbeat(node("a"), roomy, [], true, [])
          const [whole] = yield* jobs.pullWork(node("a"), short, 1, 0, { freeBytes: 50, budgetBytes: 80 })
          expect([whole?.segment?.index, whole?.segment?.attempts]).toEqual([1, 2])
          // An older node lists the job only: every segment of a listed job is kept.
          expect(yield* jobs.heartbeat(node("a"), short, [submitted.id], true, [])).toBe(true)
          expect((yield* jobs.get(writer("a"), submitted.id)).segments[1]?.state).toBe("running")
          // One claim of several units counts the known needs of those it took before.
          yield* jobs.heartbeat(node("a"), short, [], true, [{ jobId: submitted.id, bytes: 100, segment: 1 }])
          yield* jobs.heartbeat(node("a"), nodeId, [], true, [{ jobId: submitted.id, bytes: 100, segment: 0 }])
          const roomForOne = { freeBytes: 150, budgetBytes: 200 }
          const pulled = (budget: typeof roomForOne) =>
            Effect.map(jobs.pullWork(node("a"), roomy, 2, 0, budget), (units) =>
              units.map((unit) => unit.segment?.index)
            )
          expect(yield* pulled(roomForOne)).toEqual([0])
          expect(yield* pulled(roomForOne)).toEqual([1])
        })
      )
  )

  it.effect(
    "a plan nobody probed goes to a node with any free memory; handed back with a need, it waits for the room",
    () =>
      run((jobs) =>
        Effect.gen(function* () {
          const submitted = yield* jobs.submit(writer("a"), segmentJob(24))
          const { nodeId } = yield* jobs.register(node("a"), info)
          const [plan] = yield* jobs.pullWork(node("a"), nodeId, 1, 0, { freeBytes: 1, budgetBytes: 200 })
          expect([plan?.id, plan?.plan]).toEqual([submitted.id, true])
          yield* jobs.heartbeat(node("a"), nodeId, [], true, [{ jobId: submitted.id, bytes: 100 }])
          expect(yield* jobs.pullWork(node("a"), nodeId, 1, 0, { freeBytes: 99, budgetBytes: 200 })).toEqual([])
          const [again] = yield* jobs.pullWork(node("a"), nodeId, 1, 0, { freeBytes: 100, budgetBytes: 200 })
          expect([again?.id, again?.plan]).toEqual([submitted.id, true])
        })
      )
  )

  it.effect("an input error fails the job and cancels its other segments; the other nodes stop", () =>
    run((jobs) =>
      Effect.gen(function* () {
        const submitted = yield* jobs.submit(writer("a"), segmentJob(24))
        const { nodeId } = yield* planned(jobs, 72)
        yield* jobs.pullWork(node("a"), nodeId, 2)
        const failed = yield* jobs.reportResult(node("a"), nodeId, submitted.id, {
          final: true,
          segmentIndex: 1,
          error: "input is not a video",
          framesDone: 0
        })
        expect(failed.state).toBe("failed")
        expect(failed.error).toBe("segment 1: input is not a video")
        expect(failed.segments.map((s) => s.state)).toEqual(["cancelled", "failed", "cancelled"])
        // The node scoring segment 0 learns it from its next progress report.
        const seen = yield* jobs.reportResult(node("a"), nodeId, submitted.id, {
          final: false,
          segmentIndex: 0,
          framesDone: 3
        })
        expect(seen.state).toBe("failed")
        expect(yield* jobs.pullWork(node("a"), nodeId, 4)).toEqual([])
      })
    )
  )

  it.effect("cancelling the job cancels every segment", () =>
    run((jobs) =>
      Effect.gen(function* () {
        const submitted = yield* jobs.submit(writer("a"), segmentJob(24))
        const { nodeId } = yield* planned(jobs, 72)
        yield* jobs.pullWork(node("a"), nodeId, 1)
        const cancelled = yield* jobs.cancel(writer("a"), submitted.id)
        expect(cancelled.state).toBe("cancelled")
        expect(cancelled.segments.map((s) => s.state)).toEqual(["cancelled", "cancelled", "cancelled"])
        expect(yield* jobs.pullWork(node("a"), nodeId, 4)).toEqual([])
      })
    )
  )

  it.effect("a node that does not score segments gets the job whole, before any plan", () =>
    run((jobs) =>
      Effect.gen(function* () {
        const submitted = yield* jobs.submit(writer("a"), segmentJob(24))
        const { nodeId } = yield* jobs.register(node("a"), { name: "old", slots: 1, version: "t" })
        const [whole] = yield* jobs.pullWork(node("a"), nodeId, 1)
        expect(whole).toMatchObject({ id: submitted.id, plan: false, segment: undefined })
        const done = yield* jobs.reportResult(node("a"), nodeId, submitted.id, {
          final: true,
          result: result(70),
          framesDone: 2
        })
        expect(done).toMatchObject({ state: "finished", segments: [] })
      })
    )
  )

  it.effect("a sync job aligns once in its plan: the alignment is kept, handed with every segment, and merged", () =>
    run((jobs) =>
      Effect.gen(function* () {
        yield* jobs.submit(writer("a"), {
          ...segmentJob(24),
          options: { per_frame: true, segment_frames: 24, sync: "auto" }
        })
        const { nodeId } = yield* jobs.register(node("a"), info)
        const [plan] = yield* jobs.pullWork(node("a"), nodeId, 1)
        if (plan === undefined) throw new Error("no plan handed out")
        expect(plan.plan).toBe(true)
        // A sync job's plan without its alignment is refused; with more frames than pairs too.
        const bare = yield* Effect.flip(
          jobs.reportResult(node("a"), nodeId, plan.id, { final: false, framesDone: 0, planFrames: 40 })
        )
        expect(bare.message).toBe(`job "${plan.id}" aligns (options.sync "auto"): its plan carries plan_alignment`)
        const over = yield* Effect.flip(
          jobs.reportResult(node("a"), nodeId, plan.id, {
            final: false,
            framesDone: 0,
            planFrames: 41,
            planAlignment: alignment
          })
        )
        expect(over.message).toBe("plan_frames 41 is more than plan_alignment's 40 pairs")
        const job = yield* jobs.reportResult(node("a"), nodeId, plan.id, {
          final: false,
          framesDone: 0,
          planFrames: 40,
          planAlignment: alignment
        })
        expect(job.planAlignment).toEqual(alignment)
        expect(job.segments.map((s) => [s.firstFrame, s.frameCount])).toEqual([
          [0, 24],
          [24, 16]
        ])
        const pulled = yield* jobs.pullWork(node("a"), nodeId, 2)
        expect(pulled.map((unit) => [unit.segment?.index, unit.planAlignment])).toEqual([
          [0, alignment],
          [1, alignment]
        ])
        yield* finishSegment(jobs, nodeId, job, 0)
        const done = yield* finishSegment(jobs, nodeId, job, 1)
        expect(done.state).toBe("finished")
        expect(done.result && "alignment" in done.result ? done.result.alignment : undefined).toEqual(alignment)
        // Any other job's plan carries none.
        yield* jobs.submit(writer("a"), segmentJob(24))
        const [other] = yield* jobs.pullWork(node("a"), nodeId, 1)
        if (other === undefined) throw new Error("no plan handed out")
        const stray = yield* Effect.flip(
          jobs.reportResult(node("a"), nodeId, other.id, {
            final: false,
            framesDone: 0,
            planFrames: 40,
            planAlignment: alignment
          })
        )
        expect(stray.message).toBe(`job "${other.id}" does not align: its plan carries no plan_alignment`)
      })
    )
  )

  it.effect(
    "a ladder sync job aligns once in its plan: each rendition's alignment is kept, handed with every segment, and merged",
    () =>
      run((jobs) =>
        Effect.gen(function* () {
          const labels = ["hi", "lo"]
          yield* jobs.submit(writer("a"), {
            ladder: { ...ladderRequest(labels), options: { segment_frames: 24, sync: "auto" } }
          })
          const { nodeId } = yield* jobs.register(node("a"), info)
          const [plan] = yield* jobs.pullWork(node("a"), nodeId, 1)
          if (plan === undefined) throw new Error("no plan handed out")
          expect(plan.plan).toBe(true)
          // The "lo" rendition starts 2 frames later into its own clip and drops the same frame.
          const own = { ...alignment, distorted_start: 2, frames: 38, confidence: 0.7, warning: "low" }
          const planReport = (report: object) =>
            jobs.reportResult(node("a"), nodeId, plan.id, { final: false, framesDone: 0, planFrames: 38, ...report })
          // A ladder's plan carries one alignment per rendition, never a pair's; no more frames than
          // the reference frames its renditions span (3..43).
          const refusals = yield* Effect.forEach(
            [
              {},
              { planAlignment: alignment },
              { planRenditionAlignments: [alignment] },
              { planRenditionAlignments: [alignment, own], planFrames: 42 }
            ],
            (report) => Effect.flip(planReport(report))
          )
          expect(refusals.map((error) => error.message)).toEqual([
            `job "${plan.id}" aligns (options.sync "auto"): its plan carries plan_rendition_alignments`,
            `job "${plan.id}" is a ladder job: its plan carries no plan_alignment`,
            "plan_rendition_alignments: 1 alignments for 2 renditions",
            "plan_frames 42 is more than the 41 reference frames plan_rendition_alignments spans"
          ])
          const job = yield* planReport({ planRenditionAlignments: [alignment, own] })
          expect(job.planAlignment).toBeUndefined()
          expect(job.planRenditionAlignments).toEqual([alignment, own])
          expect(job.segments.map((s) => [s.firstFrame, s.frameCount])).toEqual([
            [0, 24],
            [24, 14]
          ])
          // Kept with the job: every segment is handed both, read back from the store.
          const pulled = yield* jobs.pullWork(node("a"), nodeId, 2)
          expect(pulled.map((unit) => [unit.segment?.index, unit.planRenditionAlignments])).toEqual([
            [0, [alignment, own]],
            [1, [alignment, own]]
          ])
          expect((yield* jobs.get(writer("a"), job.id)).planRenditionAlignments).toEqual([alignment, own])
          for (const segment of job.segments) {
            const result = ladderResult(labels, segment.frameCount)
            yield* jobs.reportResult(node("a"), nodeId, job.id, {
              final: true,
              segmentIndex: segment.index,
              result: {
                ...result,
                renditions: result.renditions.map((rendition) => ({
                  ...rendition,
                  frames: rendition.frames.map((frame) => ({ ...frame, frame: segment.firstFrame + frame.frame }))
                }))
              },
              framesDone: segment.frameCount
            })
          }
          const done = yield* jobs.get(writer("a"), job.id)
          expect(done.state).toBe("finished")
          const merged = done.result && "renditions" in done.result ? done.result.renditions : []
          expect(merged.map((rendition) => [rendition.label, rendition.frame_count, rendition.alignment])).toEqual([
            ["hi", 38, alignment],
            ["lo", 38, own]
          ])
        })
      )
  )

  it.effect("SVC_SEGMENT_FRAMES is the default of pair and ladder jobs that do not set it, sync auto or not", () =>
    run(
      (jobs) =>
        Effect.gen(function* () {
          const job = yield* jobs.submit(writer("a"), request("plain"))
          expect("ladder" in job.request ? undefined : job.request.options?.segment_frames).toBe(48)
          const own = yield* jobs.submit(writer("a"), segmentJob(30))
          expect("ladder" in own.request ? undefined : own.request.options?.segment_frames).toBe(30)
          const ladderOf = (options: object) => ({
            ladder: {
              reference: "/media/a/ref.y4m",
              renditions: [{ label: "x", distorted: "/media/a/x.mp4" }],
              options
            }
          })
          const ladder = yield* jobs.submit(writer("a"), ladderOf({}))
          expect("ladder" in ladder.request ? ladder.request.ladder.options?.segment_frames : undefined).toBe(48)
          const ownLadder = yield* jobs.submit(writer("a"), ladderOf({ segment_frames: 30 }))
          expect("ladder" in ownLadder.request ? ownLadder.request.ladder.options?.segment_frames : undefined).toBe(30)
          // A ladder that aligns does so once, in its plan, as a pair does: segments as any ladder.
          const alignedLadder = yield* jobs.submit(writer("a"), ladderOf({ segment_frames: 30, sync: "auto" }))
          expect(
            "ladder" in alignedLadder.request ? alignedLadder.request.ladder.options?.segment_frames : undefined
          ).toBe(30)
          const syncLadder = yield* jobs.submit(writer("a"), ladderOf({ sync: "auto" }))
          expect("ladder" in syncLadder.request ? syncLadder.request.ladder.options?.segment_frames : 0).toBe(48)
          // Shots and xpsnr are scored in segments too (their context frames are read): the
          // default applies to them as to any pair job.
          const shots = yield* jobs.submit(writer("a"), { ...request("shots"), options: { shots: true } })
          expect("ladder" in shots.request ? undefined : shots.request.options?.segment_frames).toBe(48)
          const xpsnr = yield* jobs.submit(writer("a"), {
            ...segmentJob(30),
            options: { segment_frames: 30, features: ["xpsnr"] }
          })
          expect("ladder" in xpsnr.request ? undefined : xpsnr.request.options?.segment_frames).toBe(30)
          // A pair job that aligns does so once, in its plan: segments as any pair job, the default applied.
          const sync = yield* jobs.submit(writer("a"), {
            ...segmentJob(30),
            options: { segment_frames: 30, sync: "auto" }
          })
          expect("ladder" in sync.request ? undefined : sync.request.options?.segment_frames).toBe(30)
          const aligned = yield* jobs.submit(writer("a"), { ...request("sync"), options: { sync: "auto" } })
          expect("ladder" in aligned.request ? undefined : aligned.request.options?.segment_frames).toBe(48)
        }),
      { SVC_SEGMENT_FRAMES: "48" }
    )
  )
})
