/**
 * Child process of the PostgreSQL transaction tests: one controller on a small pool (2
 * connections) that submits, claims (several jobs per call) and reports (several results per
 * call) as many nodes at once, forever, while other nodes register, heartbeat (their own sessions
 * and another tenant's), list their sessions and run the re-queue sweep (session lookup, prune,
 * outage bridge): every node-session operation under the same load. Each write is printed to
 * stdout only after the service acknowledged it: `submitted <id>`, `finished <id>`,
 * `registered <node id>`. The parent kills it with SIGKILL.
 *
 * Usage: pg-load-child.ts <postgres url> <password file>
 */
import { Effect, Option } from "effect"

import { writeSync } from "node:fs"
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
/** Nodes of another tenant that only register, heartbeat, list and sweep. */
const SESSION_CHURNERS = 8
const info = { name: "load", slots: 8, version: "t" }

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
          ...Array.from({ length: SESSION_CHURNERS }, () => churner)
        ],
        { concurrency: "unbounded" }
      )
    }),
  DEFAULT_SESSION_SETTINGS
)

await Effect.runPromise(program)
