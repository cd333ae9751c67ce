/**
 * Child process of the PostgreSQL transaction tests: one controller on a small pool (2
 * connections) that submits, claims (several jobs per call) and reports (several results per
 * call) as many nodes at once, forever, while other nodes register, heartbeat (their own sessions
 * and another tenant's), list their sessions and run the re-queue sweep (session lookup, prune,
 * outage bridge): every node-session operation under the same load. A second tenant's segment
 * jobs run beside them: segment-capable nodes claim plans and segments, report plans and segment
 * results (batched and one by one), the last segment merging. Each write is printed to
 * stdout only after the service acknowledged it: `submitted <id>`, `finished <id>`, `segmented <id>` (a
 * segment job finished by its last segment's report),
 * `registered <node id>`. The parent kills it with SIGKILL.
 *
 * Usage: pg-load-child.ts <postgres url> <password file>
 */
import { Effect, Option } from "effect"

import { writeSync } from "node:fs"
import type { Job, PulledJob, ResultReport } from "../../../modules/jobs/model.ts"
import { postgresBackend } from "../../../modules/jobs/postgres/store.ts"
import { DEFAULT_SESSION_SETTINGS } from "../../../modules/jobs/sessions.ts"
import type { Backend } from "./backends.ts"
import { node, request, result, withController, writer } from "./support.ts"

const [url, passwordFile] = process.argv.slice(2)
if (url === undefined || passwordFile === undefined) throw new Error("usage: pg-load-child.ts <url> <password file>")

const backend: Backend = {
  name: "postgres",
  sharedSessions: true,
  layer: (settings) => postgresBackend({ url, passwordFile: Option.some(passwordFile), poolMax: 2 }, settings),
  rows: () => Promise.resolve([])
}

const NODES = 12
const SUBMITTERS = 24
/** Segment jobs (issue 30) of another tenant, planned and scored in segments by segment-capable nodes. */
const SEGMENT_NODES = 4
const SEGMENT_SUBMITTERS = 1
/** A segment job's title: three segments of 24 frames. */
const TITLE_FRAMES = 72
const SEGMENT_FRAMES = 24
/** Nodes of another tenant that only register, heartbeat, list and sweep. */
const SESSION_CHURNERS = 8
const info = { name: "load", slots: 8, version: "t" }
const segmentInfo = { ...info, scoresSegments: true }

/** A segment's result: its frames numbered from the segment's first frame. */
const segmentResult = (first: number, count: number) => ({
  ...result(80, count),
  frames: Array.from({ length: count }, (_, k) => ({ frame: first + k, metrics: { vmaf: 80 } }))
})

/** What a segment-capable node reports for a pulled unit: the plan, its segment's result, or the whole job's. */
const reportFor = (job: PulledJob): ResultReport =>
  job.plan
    ? { final: false, framesDone: 0, planFrames: TITLE_FRAMES }
    : job.segment === undefined
      ? { final: true, result: result(80), framesDone: 2 }
      : {
          final: true,
          segmentIndex: job.segment.index,
          result: segmentResult(job.segment.firstFrame, job.segment.frameCount),
          framesDone: job.segment.frameCount
        }

// Synchronous writes: the parent sees an acknowledgement as soon as it is made.
const acknowledge = (line: string) => Effect.sync(() => writeSync(1, `${line}\n`))

const program = withController(
  backend,
  (jobs) =>
    Effect.gen(function* () {
      const submitter = Effect.forever(
        Effect.flatMap(jobs.submit(writer("load"), request()), (job) => acknowledge(`submitted ${job.id}`))
      )
      const worker = Effect.scoped(
        Effect.gen(function* () {
          const { nodeId } = yield* jobs.register(node("load"), info)
          yield* Effect.forkScoped(
            Effect.forever(Effect.zipRight(Effect.sleep("5 seconds"), jobs.heartbeat(node("load"), nodeId, [])))
          )
          yield* Effect.forever(
            Effect.gen(function* () {
              const pulled = yield* jobs.pullWork(node("load"), nodeId, 4, 50)
              // Half the jobs in one ReportResults call, the rest one ReportResult each, at once.
              const batch = pulled.slice(0, Math.ceil(pulled.length / 2))
              const single = pulled.slice(batch.length)
              yield* Effect.all(
                [
                  Effect.flatMap(
                    jobs.reportResults(
                      node("load"),
                      nodeId,
                      batch.map((job) => ({
                        jobId: job.id,
                        report: { final: true, result: result(80), framesDone: 2 }
                      }))
                    ),
                    (outcomes) =>
                      Effect.forEach(outcomes, (outcome) =>
                        outcome._tag === "Right" ? acknowledge(`finished ${outcome.right.job.id}`) : Effect.void
                      )
                  ),
                  Effect.forEach(
                    single,
                    (job) =>
                      Effect.flatMap(
                        jobs.reportResult(node("load"), nodeId, job.id, {
                          final: true,
                          result: result(80),
                          framesDone: 2
                        }),
                        (done) => acknowledge(`finished ${done.id}`)
                      ),
                    { concurrency: "unbounded" }
                  )
                ],
                { concurrency: "unbounded" }
              )
            })
          )
        })
      )
      const segmentSubmitter = Effect.forever(
        Effect.flatMap(
          jobs.submit(writer("seg"), {
            ...request(),
            options: { ...request().options, segment_frames: SEGMENT_FRAMES }
          }),
          (job) => acknowledge(`submitted ${job.id}`)
        )
      )
      // Plans, then segments, reported half in one ReportResults call and the rest one by one; a
      // segment job counts as finished when its last segment's report answered with it finished.
      const segmentWorker = Effect.scoped(
        Effect.gen(function* () {
          const { nodeId } = yield* jobs.register(node("seg"), segmentInfo)
          yield* Effect.forkScoped(
            Effect.forever(Effect.zipRight(Effect.sleep("5 seconds"), jobs.heartbeat(node("seg"), nodeId, [])))
          )
          const finishedJob = (job: Job) =>
            job.state === "finished" && job.segments.length === TITLE_FRAMES / SEGMENT_FRAMES
              ? acknowledge(`segmented ${job.id}`)
              : Effect.void
          yield* Effect.forever(
            Effect.gen(function* () {
              const pulled = yield* jobs.pullWork(node("seg"), nodeId, 4, 50)
              const batch = pulled.slice(0, Math.ceil(pulled.length / 2))
              const single = pulled.slice(batch.length)
              yield* Effect.all(
                [
                  Effect.flatMap(
                    jobs.reportResults(
                      node("seg"),
                      nodeId,
                      batch.map((job) => ({ jobId: job.id, report: reportFor(job) }))
                    ),
                    (outcomes) =>
                      Effect.forEach(outcomes, (outcome) =>
                        outcome._tag === "Right" ? finishedJob(outcome.right.job) : Effect.void
                      )
                  ),
                  Effect.forEach(
                    single,
                    (job) =>
                      Effect.flatMap(jobs.reportResult(node("seg"), nodeId, job.id, reportFor(job)), finishedJob),
                    { concurrency: "unbounded" }
                  )
                ],
                { concurrency: "unbounded" }
              )
            })
          )
        })
      )
      // A fresh session each round: its own heartbeat must be accepted, the same heartbeat from
      // the load tenant refused (row-level security and the tenant clause), and it must be listed.
      const churner = Effect.forever(
        Effect.gen(function* () {
          const { nodeId } = yield* jobs.register(node("churn"), info)
          yield* acknowledge(`registered ${nodeId}`)
          const own = yield* jobs.heartbeat(node("churn"), nodeId, [])
          const foreign = yield* jobs.heartbeat(node("load"), nodeId, [])
          const listed = (yield* jobs.nodes(writer("churn"))).some((session) => session.nodeId === nodeId)
          if (!own || foreign || !listed) {
            return yield* Effect.die(new Error(`session ${nodeId}: own ${own}, foreign ${foreign}, listed ${listed}`))
          }
          yield* jobs.requeueOrphans
          yield* jobs.gauges
        })
      )
      yield* Effect.all(
        [
          ...Array.from({ length: SUBMITTERS }, () => submitter),
          ...Array.from({ length: NODES }, () => worker),
          ...Array.from({ length: SEGMENT_SUBMITTERS }, () => segmentSubmitter),
          ...Array.from({ length: SEGMENT_NODES }, () => segmentWorker),
          ...Array.from({ length: SESSION_CHURNERS }, () => churner)
        ],
        { concurrency: "unbounded" }
      )
    }),
  // Sessions outlive a slow run: a churner's session is not heartbeated after its round, and
  // one pruned after its TTL and grace (legitimately) would read as a lost registration.
  { ...DEFAULT_SESSION_SETTINGS, ttlMillis: 600_000, requeueGraceMillis: 600_000 }
)

await Effect.runPromise(program)
