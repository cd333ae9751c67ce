import { describe, expect, it } from "@effect/vitest"
import {
  Chunk,
  Clock,
  ConfigProvider,
  Context,
  Effect,
  Either,
  Fiber,
  Layer,
  Option,
  Schedule,
  Stream,
  TestClock
} from "effect"
import { join } from "node:path"
import { JobServiceLive } from "./index.ts"
import type { Job } from "./model.ts"
import {
  JobMetricsHooks,
  JobService,
  type JobServiceShape,
  jobServiceLayer,
  MAX_PULL,
  MAX_PULL_WAIT_MILLIS
} from "./service.ts"
import { DEFAULT_SESSION_SETTINGS, NodeSessions, type NodeSessionsShape } from "./sessions.ts"
import { JobStore, type JobStoreShape } from "./store.ts"
import type { Backend } from "../../test/support/job-store/backends.ts"
import { describeContract } from "../../test/support/job-store/contract.ts"
import {
  ladderRequest,
  ladderResult,
  node,
  recordingHooks,
  request,
  result,
  rootsOf,
  serviceLayerAt,
  tempDir,
  testModels,
  testRoots,
  withController,
  writer
} from "../../test/support/job-store/support.ts"

const info = { name: "host", slots: 1, version: "t" }
const { ttlMillis, requeueGraceMillis, sweepIntervalMillis, heartbeatIntervalMillis } = DEFAULT_SESSION_SETTINGS
const OTHER_TENANT = "resource belongs to another tenant"
const notAssigned = (jobId: string, nodeId: string) => `job "${jobId}" is not assigned to node "${nodeId}"`

/** Registers a node of the tenant and pulls up to `max` jobs. */
const nodeWithJobs = (jobs: JobServiceShape, tenant: string, max = 1) =>
  Effect.gen(function* () {
    const { nodeId } = yield* jobs.register(node(tenant), info)
    const pulled = yield* jobs.pullWork(node(tenant), nodeId, max)
    return { nodeId, pulled }
  })

/**
 * A controller whose next ReportResult is interleaved: the effect given to `between` runs after the
 * service has read the sessions it passes to the store (its last read) and before the store's
 * write transaction, i.e. the job changes between the report's reads and its commit. A store that
 * reads the sessions itself (PostgreSQL's `sessionBound`) gets the change just before its call;
 * its own read-to-write window is covered by postgres-store.test.ts (a report's write waiting on
 * a row lock).
 */
const racing = <A, E>(
  target: Backend,
  body: (
    jobs: JobServiceShape,
    between: (change: () => Effect.Effect<unknown, unknown>) => void,
    store: JobStoreShape
  ) => Effect.Effect<A, E>
) => {
  let change: (() => Effect.Effect<unknown, unknown>) | undefined
  const between = (next: () => Effect.Effect<unknown, unknown>) => {
    change = next
  }
  const interleaved = Layer.effectContext(
    Effect.gen(function* () {
      const store = yield* JobStore
      const sessions = yield* NodeSessions
      const interleave = Effect.suspend(() => {
        const pending = change
        change = undefined
        return pending === undefined ? Effect.void : Effect.orDie(pending())
      })
      const ofTenant: NodeSessionsShape["ofTenant"] = (tenantId) =>
        interleave.pipe(Effect.zipRight(sessions.ofTenant(tenantId)))
      const bound = store.sessionBound
      const interleaved: JobStoreShape =
        bound === undefined
          ? store
          : {
              ...store,
              sessionBound: {
                ...bound,
                report: (tenantId, nodeId, reports) =>
                  interleave.pipe(Effect.zipRight(bound.report(tenantId, nodeId, reports)))
              }
            }
      return Context.make(JobStore, interleaved).pipe(Context.add(NodeSessions, { ...sessions, ofTenant }))
    })
  ).pipe(Layer.provide(target.layer(DEFAULT_SESSION_SETTINGS)))
  const layer = Layer.merge(
    jobServiceLayer.pipe(Layer.provide(Layer.mergeAll(interleaved, testRoots, testModels, JobMetricsHooks.none))),
    interleaved
  )
  return Effect.gen(function* () {
    return yield* body(yield* JobService, between, yield* JobStore)
  }).pipe(Effect.provide(layer))
}

const first = (pulled: ReadonlyArray<Job>): Job => {
  const [job] = pulled
  if (job === undefined) throw new Error("no job pulled")
  return job
}

describeContract("job service", ({ name, backend }) => {
  const run = <A, E>(body: (jobs: JobServiceShape) => Effect.Effect<A, E>) => withController(backend(), body)
  /** One pass of the re-queue sweep, besides the background one (both may run: that must be safe). */
  const sweep = (jobs: JobServiceShape) => jobs.requeueOrphans
  const inMemorySessions = name === "sqlite"

  describe("idempotency keys and ListNodes (issue 21)", () => {
    it.effect("a repeated key returns the first job, per tenant; no key always queues", () =>
      run((jobs) =>
        Effect.gen(function* () {
          const first = yield* jobs.submit(writer("a"), request("one"), "uid-1")
          expect(yield* jobs.submit(writer("a"), request("two"), "uid-1")).toEqual(first)
          expect((yield* jobs.submit(writer("b"), request("one"), "uid-1")).id).not.toBe(first.id)
          const plain = yield* jobs.submit(writer("a"), request("one"))
          expect((yield* jobs.submit(writer("a"), request("one"), "")).id).not.toBe(plain.id)
          expect(yield* jobs.list(writer("a"), {})).toHaveLength(3)
        })
      )
    )

    it.effect("ListNodes shows the caller's tenant's sessions with their running jobs", () =>
      run((jobs) =>
        Effect.gen(function* () {
          const a = yield* jobs.register(node("a"), { name: "host-a", slots: 2, version: "v" })
          yield* jobs.register(node("b"), { name: "host-b", slots: 1, version: "v" })
          const job = yield* jobs.submit(writer("a"), request())
          yield* jobs.pullWork(node("a"), a.nodeId, 1)
          const seen = yield* jobs.nodes(writer("a"))
          expect(seen.map((view) => [view.nodeId, view.name, view.slots, view.live, view.runningJobIds])).toEqual([
            [a.nodeId, "host-a", 2, true, [job.id]]
          ])
          expect(yield* jobs.nodes(writer("c"))).toEqual([])
        })
      )
    )
  })

  describe("submit, get, cancel, list", () => {
    it.effect("submit stamps the caller's tenant and subject; get returns it to its tenant only", () =>
      run((jobs) =>
        Effect.gen(function* () {
          yield* TestClock.adjust(1234)
          const job = yield* jobs.submit(writer("acme", "alice"), request())
          expect(job).toMatchObject({
            tenantId: "acme",
            state: "pending",
            submittedBy: "alice",
            createdAt: 1234,
            framesDone: 0,
            request: request()
          })
          expect(job.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
          expect(yield* jobs.get({ tenantId: "acme", roles: ["svc:reader"], subject: "bob" }, job.id)).toEqual(job)
          for (const tenant of ["globex", "Acme", "acme ", ""]) {
            const refused = yield* Effect.flip(jobs.get(writer(tenant), job.id))
            expect(refused).toMatchObject({ _tag: "PermissionDenied", message: OTHER_TENANT })
            expect(refused.message).not.toContain("acme")
          }
          const unknown = yield* Effect.flip(jobs.get(writer("acme"), "00000000-0000-4000-8000-000000000000"))
          expect(unknown).toMatchObject({
            _tag: "JobNotFound",
            message: `job "00000000-0000-4000-8000-000000000000" not found`
          })
        })
      )
    )

    it.effect("a caller without a tenant can neither submit nor register", () =>
      run((jobs) =>
        Effect.gen(function* () {
          expect(yield* Effect.flip(jobs.submit(writer(""), request()))).toMatchObject({ _tag: "InvalidJobRequest" })
          expect(yield* Effect.flip(jobs.register(node(""), info))).toMatchObject({ _tag: "InvalidJobRequest" })
        })
      )
    )

    it.effect("submit checks the model, then every input against the caller's roots, and stores nothing refused", () =>
      run((jobs) =>
        Effect.gen(function* () {
          const outside = { ...request(), distorted: "/elsewhere/dist.y4m" }
          expect(yield* Effect.flip(jobs.submit(writer("a"), { ...outside, model: "no_such_model" }))).toMatchObject({
            _tag: "UnknownModel",
            model: "no_such_model"
          })
          expect(yield* Effect.flip(jobs.submit(writer("a"), outside))).toMatchObject({
            _tag: "PermissionDenied",
            message: 'scoring input "/elsewhere/dist.y4m" is outside the tenant\'s scoring roots'
          })
          const ladder = ladderRequest(["low"])
          const renditions = [...ladder.renditions, { label: "high", distorted: "/elsewhere/high.mp4" }]
          expect(yield* Effect.flip(jobs.submit(writer("a"), { ladder: { ...ladder, renditions } }))).toMatchObject({
            _tag: "PermissionDenied",
            message: 'scoring input "/elsewhere/high.mp4" is outside the tenant\'s scoring roots'
          })
          expect(yield* jobs.list(writer("a"), {})).toEqual([])
        })
      )
    )

    it.effect(
      "cancel: pending and running become cancelled, final jobs stay, another tenant's is refused unchanged",
      () =>
        run((jobs) =>
          Effect.gen(function* () {
            const running = yield* jobs.submit(writer("a"), request("r"))
            const finished = yield* jobs.submit(writer("a"), request("f"))
            const { nodeId } = yield* jobs.register(node("a"), info)
            yield* jobs.pullWork(node("a"), nodeId, 2)
            const done = yield* jobs.reportResult(node("a"), nodeId, finished.id, {
              final: true,
              result: result(80),
              framesDone: 2
            })
            const pending = yield* jobs.submit(writer("a"), request("p"))

            for (const job of [running, pending]) {
              const refused = yield* Effect.flip(jobs.cancel(writer("b"), job.id))
              expect(refused).toMatchObject({ _tag: "PermissionDenied", message: OTHER_TENANT })
            }
            expect((yield* jobs.get(writer("a"), running.id)).state).toBe("running")
            expect((yield* jobs.get(writer("a"), pending.id)).state).toBe("pending")

            yield* TestClock.adjust(500)
            const cancelled = yield* jobs.cancel(writer("a"), running.id)
            expect(cancelled).toMatchObject({ state: "cancelled", finishedAt: 500, nodeId })
            expect(yield* jobs.cancel(writer("a"), pending.id)).toMatchObject({
              state: "cancelled",
              finishedAt: 500,
              nodeId: undefined
            })
            expect(yield* jobs.cancel(writer("a"), finished.id)).toEqual(done)
            expect(yield* jobs.cancel(writer("a"), running.id)).toEqual(cancelled)
            // The node's late report on the cancelled job is accepted and tells it the job is cancelled.
            expect(
              yield* jobs.reportResult(node("a"), nodeId, running.id, { final: true, result: result(1), framesDone: 1 })
            ).toEqual(cancelled)
            // A cancelled job is never handed out.
            expect(yield* jobs.pullWork(node("a"), nodeId, 10)).toEqual([])
            expect((yield* Effect.flip(jobs.cancel(writer("a"), "nope")))._tag).toBe("JobNotFound")
          })
        )
    )

    it.effect("list: only the caller's tenant, newest first, by state, limited", () =>
      run((jobs) =>
        Effect.gen(function* () {
          const mine = yield* Effect.forEach([1, 2, 3, 4], (i) => jobs.submit(writer("a"), request(`a${i}`)))
          yield* jobs.submit(writer("b"), request("b"))
          const { nodeId } = yield* jobs.register(node("a"), info)
          yield* jobs.pullWork(node("a"), nodeId, 1)
          const ids = (list: ReadonlyArray<Job>) => list.map((job) => job.id)
          expect(ids(yield* jobs.list(writer("a"), {}))).toEqual(mine.map((job) => job.id).reverse())
          expect(ids(yield* jobs.list(writer("a"), { states: ["running"] }))).toEqual([mine[0]?.id])
          expect(ids(yield* jobs.list(writer("a"), { states: ["pending"], limit: 2 }))).toEqual([
            mine[3]?.id,
            mine[2]?.id
          ])
          expect(ids(yield* jobs.list(writer("a"), { states: ["finished", "failed"] }))).toEqual([])
          expect((yield* jobs.list(writer("b"), {})).map((job) => job.tenantId)).toEqual(["b"])
          expect((yield* Effect.flip(jobs.list(writer("a"), { limit: -1 })))._tag).toBe("InvalidJobRequest")
        })
      )
    )

    it.scoped("stream with follow: the listing, then the tenant's changes only", () =>
      Effect.gen(function* () {
        const jobs = yield* JobService
        const old = yield* jobs.submit(writer("a"), request("old"))
        const pull = yield* Stream.toPull(
          Stream.rechunk(jobs.stream(writer("a"), { follow: true, states: ["pending", "cancelled"] }), 1)
        )
        // A change may come twice (committed around the subscription): repeats are skipped here.
        const seen = new Map<string, string>()
        const next: Effect.Effect<Job | undefined, Option.Option<unknown>> = Effect.flatMap(pull, (chunk) => {
          const job = Chunk.toReadonlyArray(chunk)[0]
          if (job === undefined || seen.get(job.id) === JSON.stringify(job)) return next
          seen.set(job.id, JSON.stringify(job))
          return Effect.succeed(job)
        })
        expect((yield* next)?.id).toBe(old.id)
        yield* jobs.submit(writer("b"), request("theirs"))
        const theirs = yield* jobs.list(writer("b"), {})
        yield* jobs.cancel(writer("b"), theirs[0]?.id ?? "")
        const fresh = yield* jobs.submit(writer("a"), request("new"))
        expect(yield* next).toMatchObject({ id: fresh.id, tenantId: "a", state: "pending" })
        const { nodeId } = yield* jobs.register(node("a"), info)
        yield* jobs.pullWork(node("a"), nodeId, 1) // running: filtered out
        yield* jobs.cancel(writer("a"), fresh.id)
        expect(yield* next).toMatchObject({ id: fresh.id, state: "cancelled" })
      }).pipe(Effect.provide(serviceLayerAt(backend())))
    )

    it.effect("stream without follow ends after the listing", () =>
      run((jobs) =>
        Effect.gen(function* () {
          yield* jobs.submit(writer("a"), request())
          const listed = yield* Stream.runCollect(jobs.stream(writer("a"), { follow: false }))
          expect(Chunk.size(listed)).toBe(1)
        })
      )
    )
  })

  describe("node API", () => {
    it.effect("pullWork hands out the tenant's pending jobs FIFO, running on the node, with the tenant's roots", () =>
      run((jobs) =>
        Effect.gen(function* () {
          const a = yield* Effect.forEach([1, 2, 3], (i) => jobs.submit(writer("a"), request(`a${i}`)))
          yield* jobs.submit(writer("b"), request("b"))
          const { nodeId } = yield* jobs.register(node("a"), info)
          yield* TestClock.adjust(2000)
          const one = yield* jobs.pullWork(node("a"), nodeId, 0) // 0 means 1
          expect(one.map((job) => job.id)).toEqual([a[0]?.id])
          expect(one[0]).toMatchObject({
            state: "running",
            nodeId,
            startedAt: 2000,
            scoringRoots: rootsOf("a"),
            tenantId: "a"
          })
          const rest = yield* jobs.pullWork(node("a"), nodeId, 10)
          expect(rest.map((job) => job.id)).toEqual([a[1]?.id, a[2]?.id])
          expect(yield* jobs.pullWork(node("a"), nodeId, 10)).toEqual([])
          const b = yield* nodeWithJobs(jobs, "b", 10)
          expect(b.pulled.map((job) => [job.tenantId, job.scoringRoots])).toEqual([["b", rootsOf("b")]])
        })
      )
    )

    it.effect(`pullWork hands out at most ${MAX_PULL} jobs`, () =>
      run((jobs) =>
        Effect.gen(function* () {
          yield* Effect.forEach(Array.from({ length: MAX_PULL + 1 }), () => jobs.submit(writer("a"), request()))
          const { pulled } = yield* nodeWithJobs(jobs, "a", 1000)
          expect(pulled.length).toBe(MAX_PULL)
          const { nodeId } = yield* jobs.register(node("a"), info)
          expect((yield* Effect.flip(jobs.pullWork(node("a"), nodeId, -1)))._tag).toBe("InvalidJobRequest")
        })
      )
    )

    it.effect(
      "a hand-back (Heartbeat with hand_back_unlisted) re-queues at once what the node does not list, waking a waiting node",
      () =>
        run((jobs) =>
          Effect.gen(function* () {
            const kept = yield* jobs.submit(writer("a"), request("kept"))
            const handed = yield* jobs.submit(writer("a"), request("handed"))
            const busy = yield* jobs.register(node("a"), info)
            const idle = yield* jobs.register(node("a"), info)
            yield* TestClock.adjust(1000)
            const pulled = yield* jobs.pullWork(node("a"), busy.nodeId, 2)
            expect(pulled.map((job) => job.id)).toEqual([kept.id, handed.id])
            // The claims are a moment old: a plain heartbeat leaves an unlisted one alone (its
            // PullWork answer may still be on its way) ...
            expect(yield* jobs.heartbeat(node("a"), busy.nodeId, [kept.id])).toBe(true)
            expect((yield* jobs.get(writer("a"), handed.id)).state).toBe("running")
            // ... a hand-back does not wait: pending again at once, and a waiting node takes it.
            const waiting = yield* Effect.fork(jobs.pullWork(node("a"), idle.nodeId, 1, 20_000))
            expect(yield* jobs.heartbeat(node("a"), busy.nodeId, [kept.id], true)).toBe(true)
            expect((yield* Fiber.join(waiting)).map((job) => [job.id, job.nodeId])).toEqual([[handed.id, idle.nodeId]])
            expect(yield* jobs.get(writer("a"), kept.id)).toMatchObject({ state: "running", nodeId: busy.nodeId })
            // The fence moved on: the busy node's late report of the handed-back job is refused.
            const late = yield* Effect.flip(
              jobs.reportResult(node("a"), busy.nodeId, handed.id, { final: true, error: "late", framesDone: 0 })
            )
            expect(late._tag).toBe("PermissionDenied")
          })
        )
    )

    it.effect(
      "a job handed back with its memory need is skipped by claims with less free memory, woken and taken with enough",
      () =>
        run((jobs) =>
          Effect.gen(function* () {
            const big = yield* jobs.submit(writer("a"), request("big"))
            // Nodes as svc-node registers them (segment-capable: the segment claim path) and as an older node does.
            const busy = yield* jobs.register(node("a"), { ...info, scoresSegments: true })
            const short = yield* jobs.register(node("a"), { ...info, scoresSegments: true })
            const roomy = yield* jobs.register(node("a"), info)
            expect((yield* jobs.pullWork(node("a"), busy.nodeId, 1)).map((job) => job.id)).toEqual([big.id])
            // Both wait; the one waiting first has too little free memory: the hand-back wakes both.
            const tooLittle = yield* Effect.fork(
              jobs.pullWork(node("a"), short.nodeId, 1, 20_000, { freeBytes: 99, budgetBytes: 200 })
            )
            for (let turn = 0; turn < 5; turn++) yield* Effect.yieldNow()
            const enough = yield* Effect.fork(
              jobs.pullWork(node("a"), roomy.nodeId, 1, 20_000, { freeBytes: 100, budgetBytes: 200 })
            )
            for (let turn = 0; turn < 5; turn++) yield* Effect.yieldNow()
            expect(yield* jobs.heartbeat(node("a"), busy.nodeId, [], true, [{ jobId: big.id, bytes: 100 }])).toBe(true)
            expect((yield* Fiber.join(enough)).map((job) => [job.id, job.nodeId])).toEqual([[big.id, roomy.nodeId]])
            expect(Option.isNone(yield* Fiber.poll(tooLittle))).toBe(true)
            yield* Fiber.interrupt(tooLittle)
            // Handed back again: a newer job that fits goes first; the big one waits for the room.
            expect(yield* jobs.heartbeat(node("a"), roomy.nodeId, [], true, [{ jobId: big.id, bytes: 100 }])).toBe(true)
            const small = yield* jobs.submit(writer("a"), request("small"))
            const scarce = { freeBytes: 99, budgetBytes: 200 }
            expect((yield* jobs.pullWork(node("a"), short.nodeId, 1, 0, scarce)).map((job) => job.id)).toEqual([
              small.id
            ])
            expect(yield* jobs.pullWork(node("a"), short.nodeId, 1, 0, scarce)).toEqual([])
            // A node whose whole budget it exceeds gets it, to fail it with the reason.
            const tiny = { freeBytes: 50, budgetBytes: 80 }
            expect((yield* jobs.pullWork(node("a"), busy.nodeId, 1, 0, tiny)).map((job) => job.id)).toEqual([big.id])
          })
        )
    )

    it.effect("long-poll: an idle PullWork is woken by a submit; it answers none when its wait is up", () =>
      run((jobs) =>
        Effect.gen(function* () {
          const first = yield* jobs.register(node("a"), info)
          const second = yield* jobs.register(node("a"), info)
          const woken = yield* Effect.fork(jobs.pullWork(node("a"), first.nodeId, 1, 20_000))
          const submitted = yield* jobs.submit(writer("a"), request())
          expect((yield* Fiber.join(woken)).map((job) => job.id)).toEqual([submitted.id])
          // Nothing pending: the wait runs out (the test clock moves until the call answers).
          const idle = yield* Effect.fork(jobs.pullWork(node("a"), second.nodeId, 1, 20_000))
          let answer = yield* Fiber.poll(idle)
          for (let step = 0; Option.isNone(answer) && step < 500; step++) {
            yield* TestClock.adjust(1_000)
            yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 10)))
            answer = yield* Fiber.poll(idle)
          }
          expect(yield* Fiber.join(idle)).toEqual([])
          const refused = yield* Effect.flip(jobs.pullWork(node("a"), second.nodeId, 1, MAX_PULL_WAIT_MILLIS + 1))
          expect(refused._tag).toBe("InvalidJobRequest")
        })
      )
    )

    it.effect("reportResults: several reports in one call; a refused one changes nothing, the others apply", () =>
      run((jobs) =>
        Effect.gen(function* () {
          yield* Effect.forEach([1, 2], () => jobs.submit(writer("a"), request()))
          const { nodeId, pulled } = yield* nodeWithJobs(jobs, "a", 2)
          const [one, two] = pulled.map((job) => job.id)
          const waiting = yield* jobs.submit(writer("a"), request())
          const outcomes = yield* jobs.reportResults(node("a"), nodeId, [
            { jobId: one ?? "", report: { final: true, result: result(70), framesDone: 2 } },
            { jobId: waiting.id, report: { final: true, result: result(70), framesDone: 2 } },
            { jobId: two ?? "", report: { final: false, result: result(60, 1), framesDone: 1 } },
            { jobId: two ?? "", report: { final: true, result: result(60), framesDone: 2 } }
          ])
          expect(
            outcomes.map((outcome) => (Either.isRight(outcome) ? outcome.right.job.state : outcome.left.message))
          ).toEqual(["finished", notAssigned(waiting.id, nodeId), "running", "finished"])
          expect(yield* jobs.get(writer("a"), waiting.id)).toMatchObject({ state: "pending", nodeId: undefined })
          expect(yield* jobs.get(writer("a"), two ?? "")).toMatchObject({ state: "finished", framesDone: 2 })
          // Another tenant's token: every report refused.
          const foreign = yield* jobs.reportResults(node("b"), nodeId, [
            { jobId: waiting.id, report: { final: false, framesDone: 1 } }
          ])
          expect(foreign.map(Either.isLeft)).toEqual([true])
        })
      )
    )

    it.effect(
      "another tenant's session: heartbeat ok=false, pullWork PERMISSION_DENIED without naming the tenant",
      () =>
        run((jobs) =>
          Effect.gen(function* () {
            yield* jobs.submit(writer("a"), request())
            const { nodeId } = yield* jobs.register(node("a"), info)
            expect(yield* jobs.heartbeat(node("b"), nodeId, [])).toBe(false)
            const refused = yield* Effect.flip(jobs.pullWork(node("b"), nodeId, 1))
            expect(refused).toMatchObject({ _tag: "PermissionDenied", message: OTHER_TENANT })
            expect((yield* jobs.list(writer("a"), {}))[0]?.state).toBe("pending")
            expect(yield* jobs.heartbeat(node("a"), nodeId, [])).toBe(true)
          })
        )
    )

    it.effect("unknown or expired sessions: heartbeat ok=false, pullWork NodeSessionNotLive", () =>
      run((jobs) =>
        Effect.gen(function* () {
          yield* jobs.submit(writer("a"), request())
          expect(yield* jobs.heartbeat(node("a"), "unknown", [])).toBe(false)
          expect((yield* Effect.flip(jobs.pullWork(node("a"), "unknown", 1)))._tag).toBe("NodeSessionNotLive")
          const { nodeId } = yield* jobs.register(node("a"), info)
          yield* TestClock.adjust(ttlMillis)
          expect(yield* jobs.heartbeat(node("a"), nodeId, [])).toBe(false)
          const refused = yield* Effect.flip(jobs.pullWork(node("a"), nodeId, 1))
          expect(refused).toMatchObject({
            _tag: "NodeSessionNotLive",
            message: `node session "${nodeId}" is not live; register again`
          })
        })
      )
    )
  })

  describe("ReportResult (seed 000, 5.6)", () => {
    it.effect("the assigned node reports progress, then a final result", () =>
      run((jobs) =>
        Effect.gen(function* () {
          yield* jobs.submit(writer("a"), request())
          const { nodeId, pulled } = yield* nodeWithJobs(jobs, "a")
          const job = first(pulled)
          const partial = yield* jobs.reportResult(node("a"), nodeId, job.id, {
            final: false,
            result: result(70, 1),
            framesDone: 1
          })
          expect(partial).toMatchObject({ state: "running", framesDone: 1, nodeId, finishedAt: undefined })
          expect(partial.result).toMatchObject({ score: 70 })
          const progress = yield* jobs.reportResult(node("a"), nodeId, job.id, { final: false, framesDone: 2 })
          expect(progress.result).toMatchObject({ score: 70 }) // a report without result keeps the last one
          yield* TestClock.adjust(3000)
          const done = yield* jobs.reportResult(node("a"), nodeId, job.id, {
            final: true,
            result: result(75.25),
            framesDone: 2
          })
          expect(done).toMatchObject({ state: "finished", framesDone: 2, finishedAt: 3000, error: undefined })
          expect(done.result).toEqual({ ...result(75.25) })
          expect(yield* jobs.get(writer("a"), job.id)).toEqual(done)
        })
      )
    )

    it.effect("a final error fails the job; a final report with neither result nor error is invalid", () =>
      run((jobs) =>
        Effect.gen(function* () {
          yield* jobs.submit(writer("a"), request())
          const { nodeId, pulled } = yield* nodeWithJobs(jobs, "a")
          const job = first(pulled)
          const invalid = yield* Effect.flip(
            jobs.reportResult(node("a"), nodeId, job.id, { final: true, error: "", framesDone: 0 })
          )
          expect(invalid._tag).toBe("InvalidJobRequest")
          expect((yield* jobs.get(writer("a"), job.id)).state).toBe("running")
          const error = `scoring input "/etc/passwd" is outside the tenant's scoring roots`
          const failed = yield* jobs.reportResult(node("a"), nodeId, job.id, { final: true, error, framesDone: 0 })
          expect(failed).toMatchObject({ state: "failed", error })
        })
      )
    )

    it.effect("per-frame results arrive in pages: each continues the stored frames from its offset", () =>
      run((jobs) =>
        Effect.gen(function* () {
          yield* jobs.submit(writer("a"), request())
          const { nodeId, pulled } = yield* nodeWithJobs(jobs, "a")
          const job = first(pulled)
          const full = result(64, 5)
          const page = (offset: number, count: number) => ({
            ...full,
            frames: full.frames.slice(offset, offset + count)
          })
          yield* jobs.reportResult(node("a"), nodeId, job.id, {
            final: false,
            result: page(0, 2),
            framesOffset: 0,
            framesDone: 5
          })
          const beyond = yield* Effect.flip(
            jobs.reportResult(node("a"), nodeId, job.id, {
              final: false,
              result: page(3, 2),
              framesOffset: 3,
              framesDone: 5
            })
          )
          expect(beyond).toMatchObject({ _tag: "InvalidJobRequest" })
          expect(beyond.message).toContain("frames_offset 3 is beyond the 2 frames")
          // Sent again (a resend after a lost answer): replaces from its offset, nothing doubled.
          yield* jobs.reportResult(node("a"), nodeId, job.id, {
            final: false,
            result: page(2, 2),
            framesOffset: 2,
            framesDone: 5
          })
          yield* jobs.reportResult(node("a"), nodeId, job.id, {
            final: false,
            result: page(2, 2),
            framesOffset: 2,
            framesDone: 5
          })
          const done = yield* jobs.reportResult(node("a"), nodeId, job.id, {
            final: true,
            result: page(4, 1),
            framesOffset: 4,
            framesDone: 5
          })
          expect(done.state).toBe("finished")
          expect(done.result).toEqual(full)
          expect((yield* jobs.get(writer("a"), job.id)).result).toEqual(full)
        })
      )
    )

    it.effect("a ladder job is stored whole and its pages continue every rendition's frames", () =>
      run((jobs) =>
        Effect.gen(function* () {
          const ladder = {
            reference: "/media/a/ref.y4m",
            renditions: [
              { label: "low", distorted: "/media/a/low.mp4" },
              { label: "high", distorted: "/media/a/high.mp4" }
            ]
          }
          const submitted = yield* jobs.submit(writer("a"), { ladder })
          expect(submitted.request).toEqual({ ladder })
          const { nodeId, pulled } = yield* nodeWithJobs(jobs, "a")
          const job = first(pulled)
          expect(job.request).toEqual({ ladder })
          const full = ladderResult(["low", "high"], 5)
          const page = (offset: number, count: number) => ({
            ...full,
            renditions: full.renditions.map((entry) => ({
              ...entry,
              frames: entry.frames.slice(offset, offset + count)
            }))
          })
          yield* jobs.reportResult(node("a"), nodeId, job.id, {
            final: false,
            result: page(0, 3),
            framesOffset: 0,
            framesDone: 5
          })
          const beyond = yield* Effect.flip(
            jobs.reportResult(node("a"), nodeId, job.id, {
              final: false,
              result: page(4, 1),
              framesOffset: 4,
              framesDone: 5
            })
          )
          expect(beyond.message).toContain("frames_offset 4 is beyond the 3 frames")
          const done = yield* jobs.reportResult(node("a"), nodeId, job.id, {
            final: true,
            result: page(3, 2),
            framesOffset: 3,
            framesDone: 5
          })
          expect(done.state).toBe("finished")
          expect(done.result).toEqual(full)
          expect((yield* jobs.get(writer("a"), job.id)).result).toEqual(full)
        })
      )
    )

    it.effect("a ladder job's progress per rendition: merged by label, checked, kept, completed by the result", () =>
      run((jobs) =>
        Effect.gen(function* () {
          const labels = ["480p", "720p", "1080p"]
          const submitted = yield* jobs.submit(writer("a"), { ladder: ladderRequest(labels) })
          expect(submitted.renditionProgress).toEqual([])
          const { nodeId, pulled } = yield* nodeWithJobs(jobs, "a")
          const job = first(pulled)
          const report = (renditionProgress: ReadonlyArray<{ label: string; framesDone: number }>) =>
            jobs.reportResult(node("a"), nodeId, job.id, { final: false, framesDone: 4, renditionProgress })
          // Listed in any order, stored in the ladder's; a rendition not reported yet is absent.
          const progressed = yield* report([
            { label: "720p", framesDone: 3 },
            { label: "480p", framesDone: 4 }
          ])
          expect(progressed.renditionProgress).toEqual([
            { label: "480p", framesDone: 4 },
            { label: "720p", framesDone: 3 }
          ])
          // A later report replaces the counts it lists and keeps the others.
          yield* report([{ label: "720p", framesDone: 4 }])
          yield* report([])
          const merged = [
            { label: "480p", framesDone: 4 },
            { label: "720p", framesDone: 4 }
          ]
          expect((yield* jobs.get(writer("a"), job.id)).renditionProgress).toEqual(merged)
          // Refused whole, nothing written: an unknown label, one given twice, a negative count.
          for (const bad of [
            [{ label: "4k", framesDone: 1 }],
            [
              { label: "480p", framesDone: 5 },
              { label: "480p", framesDone: 6 }
            ],
            [{ label: "1080p", framesDone: -1 }]
          ]) {
            const refused = yield* Effect.flip(report(bad))
            expect(refused._tag).toBe("InvalidJobRequest")
            expect(refused.message).toContain("rendition_progress:")
          }
          expect((yield* jobs.get(writer("a"), job.id)).renditionProgress).toEqual(merged)
          // The final result completes the renditions it was not told about with their frame_count.
          const done = yield* jobs.reportResult(node("a"), nodeId, job.id, {
            final: true,
            result: ladderResult(labels, 6),
            framesDone: 6,
            renditionProgress: [{ label: "480p", framesDone: 6 }]
          })
          expect(done.state).toBe("finished")
          const complete = labels.map((label) => ({ label, framesDone: 6 }))
          expect(done.renditionProgress).toEqual(complete)
          expect((yield* jobs.get(writer("a"), job.id)).renditionProgress).toEqual(complete)
          expect((yield* jobs.list(writer("a"), {}))[0]?.renditionProgress).toEqual(complete)
        })
      )
    )

    it.effect("a pair job reports no progress per rendition", () =>
      run((jobs) =>
        Effect.gen(function* () {
          yield* jobs.submit(writer("a"), request())
          const { nodeId, pulled } = yield* nodeWithJobs(jobs, "a")
          const job = first(pulled)
          const refused = yield* Effect.flip(
            jobs.reportResult(node("a"), nodeId, job.id, {
              final: false,
              framesDone: 1,
              renditionProgress: [{ label: "x", framesDone: 1 }]
            })
          )
          expect(refused.message).toBe("rendition_progress: only a ladder job reports progress per rendition")
          expect(yield* jobs.get(writer("a"), job.id)).toMatchObject({ framesDone: 0, renditionProgress: [] })
        })
      )
    )

    it.effect("a re-queue clears a ladder job's progress per rendition with its frames", () =>
      racing(backend(), (jobs, _between, store) =>
        Effect.gen(function* () {
          yield* jobs.submit(writer("a"), { ladder: ladderRequest(["low", "high"]) })
          const { nodeId, pulled } = yield* nodeWithJobs(jobs, "a")
          const job = first(pulled)
          yield* jobs.reportResult(node("a"), nodeId, job.id, {
            final: false,
            framesDone: 2,
            renditionProgress: [
              { label: "low", framesDone: 2 },
              { label: "high", framesDone: 2 }
            ]
          })
          const [requeued] = yield* store.requeueNode("a", nodeId)
          expect(requeued).toMatchObject({ state: "pending", framesDone: 0, renditionProgress: [] })
          expect((yield* jobs.get(writer("a"), job.id)).renditionProgress).toEqual([])
        })
      )
    )

    it.effect("a repeated final report of a finished job succeeds without changing it", () =>
      run((jobs) =>
        Effect.gen(function* () {
          yield* jobs.submit(writer("a"), request())
          const { nodeId, pulled } = yield* nodeWithJobs(jobs, "a")
          const job = first(pulled)
          const done = yield* jobs.reportResult(node("a"), nodeId, job.id, {
            final: true,
            result: result(60),
            framesDone: 2
          })
          yield* TestClock.adjust(1000)
          const again = yield* jobs.reportResult(node("a"), nodeId, job.id, {
            final: true,
            result: result(99),
            framesDone: 9
          })
          expect(again).toEqual(done)
          const late = yield* jobs.reportResult(node("a"), nodeId, job.id, {
            final: false,
            result: result(1),
            framesDone: 1
          })
          expect(late).toEqual(done)
          expect(yield* jobs.get(writer("a"), job.id)).toEqual(done)
        })
      )
    )

    it.effect(
      "refused, changing nothing: another tenant's job, a pending job, a job of another live node, an unknown job",
      () =>
        run((jobs) =>
          Effect.gen(function* () {
            yield* jobs.submit(writer("a"), request("a-running"))
            yield* jobs.submit(writer("b"), request("b-running"))
            const a = yield* nodeWithJobs(jobs, "a")
            const b = yield* nodeWithJobs(jobs, "b")
            const aJob = first(a.pulled)
            const bJob = first(b.pulled)
            const aPending = yield* jobs.submit(writer("a"), request("a-pending"))
            const a2 = yield* jobs.register(node("a"), info)
            const snapshot = yield* Effect.all([jobs.list(writer("a"), {}), jobs.list(writer("b"), {})])
            const report = { final: true, result: result(50), framesDone: 2 }
            const refusals: ReadonlyArray<readonly [string, string, string]> = [
              ["a", a.nodeId, bJob.id], // another tenant's job, by my node
              ["b", b.nodeId, aJob.id], // another tenant's job, by its own tenant's node
              ["a", a.nodeId, aPending.id], // a pending job
              ["a", a2.nodeId, aJob.id], // a job of another live node
              ["a", a.nodeId, "no-such-job"], // unknown job
              ["a", b.nodeId, bJob.id], // a session of another tenant
              ["a", "no-such-node", aJob.id] // a session this controller never registered
            ]
            for (const [tenant, nodeId, jobId] of refusals) {
              const refused = yield* Effect.flip(jobs.reportResult(node(tenant), nodeId, jobId, report))
              expect(refused).toMatchObject({ _tag: "PermissionDenied", message: notAssigned(jobId, nodeId) })
            }
            expect(yield* Effect.all([jobs.list(writer("a"), {}), jobs.list(writer("b"), {})])).toEqual(snapshot)
          })
        )
    )

    it.effect("a report is decided on the job its write commits on: a cancel after the service's reads wins", () =>
      racing(backend(), (jobs, between) =>
        Effect.gen(function* () {
          yield* jobs.submit(writer("a"), request())
          const { nodeId, pulled } = yield* nodeWithJobs(jobs, "a")
          const job = first(pulled)
          between(() => jobs.cancel(writer("a"), job.id))
          const answer = yield* jobs.reportResult(node("a"), nodeId, job.id, {
            final: false,
            result: result(70, 1),
            framesDone: 1
          })
          expect(answer).toMatchObject({ state: "cancelled", framesDone: 0, result: undefined, nodeId })
          expect(yield* jobs.get(writer("a"), job.id)).toEqual(answer)
        })
      )
    )

    it.effect(
      "a report is decided on the job its write commits on: a re-queue after the service's reads refuses it",
      () =>
        racing(backend(), (jobs, between, store) =>
          Effect.gen(function* () {
            yield* jobs.submit(writer("a"), request())
            const { nodeId, pulled } = yield* nodeWithJobs(jobs, "a")
            const job = first(pulled)
            between(() => store.requeueNode("a", nodeId))
            const refused = yield* Effect.flip(
              jobs.reportResult(node("a"), nodeId, job.id, { final: true, result: result(70), framesDone: 2 })
            )
            expect(refused).toMatchObject({ _tag: "PermissionDenied", message: notAssigned(job.id, nodeId) })
            expect(yield* jobs.get(writer("a"), job.id)).toMatchObject({ state: "pending", nodeId: undefined })
          })
        )
    )

    it.effect("a running job whose node is no longer live may be reported by another live node of the tenant", () =>
      run((jobs) =>
        Effect.gen(function* () {
          yield* jobs.submit(writer("a"), request())
          const gone = yield* nodeWithJobs(jobs, "a")
          const job = first(gone.pulled)
          yield* TestClock.adjust(ttlMillis) // no heartbeat: the session expires
          const fresh = yield* jobs.register(node("a"), info)
          const other = yield* jobs.register(node("b"), info)
          const crossTenant = yield* Effect.flip(
            jobs.reportResult(node("b"), other.nodeId, job.id, { final: false, framesDone: 1 })
          )
          expect(crossTenant.message).toBe(notAssigned(job.id, other.nodeId))
          const taken = yield* jobs.reportResult(node("a"), fresh.nodeId, job.id, {
            final: false,
            result: result(10, 1),
            framesDone: 1
          })
          expect(taken).toMatchObject({ state: "running", nodeId: fresh.nodeId, framesDone: 1 })
          // The expired node's report is now one of a job of another live node.
          const late = yield* Effect.flip(
            jobs.reportResult(node("a"), gone.nodeId, job.id, { final: true, result: result(1), framesDone: 2 })
          )
          expect(late.message).toBe(notAssigned(job.id, gone.nodeId))
          // The taken-over job is not re-queued when the old session's grace ends.
          yield* Effect.forEach(Array.from({ length: 10 }), () =>
            Effect.zipRight(
              TestClock.adjust(heartbeatIntervalMillis),
              jobs.heartbeat(node("a"), fresh.nodeId, [job.id])
            )
          )
          expect((yield* jobs.get(writer("a"), job.id)).state).toBe("running")
        })
      )
    )

    it.effect("an expired node's own late report is still accepted while nobody took the job over", () =>
      run((jobs) =>
        Effect.gen(function* () {
          yield* jobs.submit(writer("a"), request())
          const { nodeId, pulled } = yield* nodeWithJobs(jobs, "a")
          yield* TestClock.adjust(ttlMillis + 1)
          const done = yield* jobs.reportResult(node("a"), nodeId, first(pulled).id, {
            final: true,
            result: result(42),
            framesDone: 2
          })
          expect(done.state).toBe("finished")
        })
      )
    )

    // In-memory sessions die with the controller; PostgreSQL sessions outlive it (tested below).
    it.effect.skipIf(!inMemorySessions)(
      "a node that registered again after a controller restart reports what it finished",
      () =>
        Effect.gen(function* () {
          const { job, oldNode } = yield* run((jobs) =>
            Effect.gen(function* () {
              const mine = yield* jobs.submit(writer("a"), request())
              yield* jobs.submit(writer("b"), request())
              yield* nodeWithJobs(jobs, "b")
              const { nodeId, pulled } = yield* nodeWithJobs(jobs, "a")
              expect(first(pulled).id).toBe(mine.id)
              return { job: mine, oldNode: nodeId }
            })
          )
          yield* TestClock.adjust(5_000)
          yield* run((jobs) =>
            Effect.gen(function* () {
              // The old session died with the controller.
              expect(yield* jobs.heartbeat(node("a"), oldNode, [])).toBe(false)
              const stale = yield* Effect.flip(
                jobs.reportResult(node("a"), oldNode, job.id, { final: true, result: result(88), framesDone: 2 })
              )
              expect(stale.message).toBe(notAssigned(job.id, oldNode))
              const { nodeId } = yield* jobs.register(node("a"), info)
              const bJob = (yield* jobs.list(writer("b"), {}))[0]
              const refused = yield* Effect.flip(
                jobs.reportResult(node("a"), nodeId, bJob?.id ?? "", { final: true, result: result(1), framesDone: 1 })
              )
              expect(refused.message).toBe(notAssigned(bJob?.id ?? "", nodeId))
              const done = yield* jobs.reportResult(node("a"), nodeId, job.id, {
                final: true,
                result: result(88),
                framesDone: 2
              })
              expect(done).toMatchObject({ state: "finished", nodeId, framesDone: 2 })
              expect(
                yield* jobs.reportResult(node("a"), nodeId, job.id, { final: true, result: result(3), framesDone: 2 })
              ).toEqual(done)
            })
          )
        })
    )
  })

  describe("re-queue after the grace period", () => {
    it.effect("a claim the node never received (absent from its heartbeats for a session TTL) is re-queued", () =>
      run((jobs) =>
        Effect.gen(function* () {
          yield* Effect.forEach([1, 2], (i) => jobs.submit(writer("a"), request(`j${i}`)))
          const holder = yield* nodeWithJobs(jobs, "a", 2)
          const [kept, lost] = holder.pulled
          if (kept === undefined || lost === undefined) throw new Error("two jobs pulled")
          // The node got only `kept` (the answer carrying `lost` was lost on the way).
          const beat = Effect.zipRight(
            TestClock.adjust(heartbeatIntervalMillis),
            jobs.heartbeat(node("a"), holder.nodeId, [kept.id])
          )
          for (let waited = heartbeatIntervalMillis; waited <= ttlMillis; waited += heartbeatIntervalMillis) {
            expect(yield* beat).toBe(true)
            expect((yield* jobs.get(writer("a"), lost.id)).state).toBe("running")
          }
          expect(yield* beat).toBe(true)
          expect((yield* jobs.get(writer("a"), lost.id)).state).toBe("pending")
          expect((yield* jobs.get(writer("a"), kept.id)).state).toBe("running")
          // The re-queued job runs elsewhere; the listed one is still the node's to report.
          const other = yield* nodeWithJobs(jobs, "a", 1)
          expect(first(other.pulled).id).toBe(lost.id)
          const done = yield* jobs.reportResult(node("a"), holder.nodeId, kept.id, {
            final: true,
            result: result(80),
            framesDone: 2
          })
          expect(done.state).toBe("finished")
        })
      )
    )

    it.effect("running jobs of an expired session go back to pending, FIFO position kept, and run elsewhere", () =>
      run((jobs) =>
        Effect.gen(function* () {
          const submitted = yield* Effect.forEach([1, 2], (i) => jobs.submit(writer("a"), request(`j${i}`)))
          const gone = yield* nodeWithJobs(jobs, "a", 1)
          const job = first(gone.pulled)
          yield* jobs.reportResult(node("a"), gone.nodeId, job.id, {
            final: false,
            result: result(5, 1),
            framesDone: 1
          })
          const stay = yield* jobs.submit(writer("b"), request("b"))
          const bNode = yield* nodeWithJobs(jobs, "b", 1)
          expect(first(bNode.pulled).id).toBe(stay.id)
          // Node b keeps heartbeating; node a goes silent.
          const tick = (millis: number) =>
            Effect.forEach(Array.from({ length: millis / 1000 }), () =>
              Effect.zipRight(TestClock.adjust(1000), jobs.heartbeat(node("b"), bNode.nodeId, [stay.id]))
            )
          yield* tick(ttlMillis + requeueGraceMillis - sweepIntervalMillis)
          expect(yield* sweep(jobs)).toEqual([])
          expect((yield* jobs.get(writer("a"), job.id)).state).toBe("running")
          yield* tick(sweepIntervalMillis)
          yield* sweep(jobs)
          // The background sweep may hold the sweep lock at that moment (then it re-queues): wait for it.
          const requeued = yield* jobs.get(writer("a"), job.id).pipe(
            Effect.filterOrFail((found) => found.state === "pending"),
            Effect.retry(Schedule.intersect(Schedule.spaced("20 millis"), Schedule.recurs(250))),
            Effect.withClock(Clock.make()),
            Effect.orElse(() => jobs.get(writer("a"), job.id))
          )
          expect(requeued).toMatchObject({
            state: "pending",
            nodeId: undefined,
            startedAt: undefined,
            result: undefined,
            framesDone: 0
          })
          expect((yield* jobs.get(writer("b"), stay.id)).state).toBe("running")
          const again = yield* nodeWithJobs(jobs, "a", 2)
          expect(again.pulled.map((j) => j.id)).toEqual(submitted.map((j) => j.id))
          const stale = yield* Effect.flip(
            jobs.reportResult(node("a"), gone.nodeId, job.id, { final: true, result: result(1), framesDone: 1 })
          )
          expect(stale.message).toBe(notAssigned(job.id, gone.nodeId))
        })
      )
    )

    it.effect.skipIf(!inMemorySessions)(
      "after a controller restart, jobs of pre-restart sessions are re-queued one grace period after boot",
      () =>
        Effect.gen(function* () {
          const job = yield* run((jobs) =>
            Effect.map(Effect.zipRight(jobs.submit(writer("a"), request()), nodeWithJobs(jobs, "a")), (n) =>
              first(n.pulled)
            )
          )
          yield* run((jobs) =>
            Effect.gen(function* () {
              yield* TestClock.adjust(requeueGraceMillis - 1)
              expect((yield* jobs.get(writer("a"), job.id)).state).toBe("running")
              yield* TestClock.adjust(sweepIntervalMillis)
              expect((yield* jobs.get(writer("a"), job.id)).state).toBe("pending")
            })
          )
        })
    )
  })

  describe("metrics hooks", () => {
    it.effect("queue wait and duration samples, jobs by state and live nodes", () =>
      Effect.gen(function* () {
        const recorder = recordingHooks()
        yield* Effect.gen(function* () {
          const jobs = yield* JobService
          yield* jobs.submit(writer("a"), request())
          yield* jobs.submit(writer("a"), request())
          yield* jobs.submit(writer("b"), request())
          yield* TestClock.adjust(1500)
          const { nodeId, pulled } = yield* nodeWithJobs(jobs, "a", 2)
          yield* TestClock.adjust(2500)
          yield* jobs.reportResult(node("a"), nodeId, first(pulled).id, {
            final: true,
            result: result(1),
            framesDone: 2
          })
          yield* jobs.reportResult(node("a"), nodeId, pulled[1]?.id ?? "", {
            final: true,
            error: "unreadable",
            framesDone: 0
          })
          yield* jobs.register(node("b"), info)
          expect(yield* jobs.gauges).toEqual({
            jobsByState: { pending: 1, running: 0, finished: 1, cancelled: 0, failed: 1 },
            liveNodes: 2
          })
        }).pipe(Effect.provide(serviceLayerAt(backend(), DEFAULT_SESSION_SETTINGS, recorder.layer)))
        expect(recorder.queueWaits).toEqual([1.5, 1.5])
        expect(recorder.durations).toEqual([
          { seconds: 2.5, outcome: "finished" },
          { seconds: 2.5, outcome: "failed" }
        ])
      })
    )
  })
})

describe("JobServiceLive", () => {
  it.scoped("opens SVC_STORE_PATH and serves with the controller's roots and hooks", () =>
    Effect.gen(function* () {
      const { dir, cleanup } = tempDir()
      yield* Effect.addFinalizer(() => Effect.sync(cleanup))
      const path = () => join(dir, "jobs.sqlite")
      const run = <A, E>(body: (jobs: JobServiceShape) => Effect.Effect<A, E>) => withController(path(), body)
      const live = JobServiceLive.pipe(Layer.provide(Layer.mergeAll(testRoots, testModels, JobMetricsHooks.none)))
      const provider = ConfigProvider.fromMap(new Map([["SVC_STORE_PATH", path()]]))
      const job = yield* Effect.flatMap(JobService, (jobs) => jobs.submit(writer("a"), request())).pipe(
        Effect.provide(live),
        Effect.withConfigProvider(provider)
      )
      expect(yield* run((jobs) => jobs.get(writer("a"), job.id))).toEqual(job)
    })
  )
})
