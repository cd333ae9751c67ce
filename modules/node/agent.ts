/**
 * The compute node's work loop (seed 000, 5.5 and 5.6): register with the controller as the
 * token's tenant, heartbeat, pull that tenant's jobs, check every input against the job's
 * scoring roots on this node's own file system (symlinks followed), score, and report
 * progress and the final result. A controller restart shows as a refused heartbeat: the node
 * registers again and reports, under its new session, what it finished meanwhile.
 */
import * as grpc from "@grpc/grpc-js"
import { Duration, Effect, Option, Ref, Schedule } from "effect"
import { readFileSync } from "node:fs"
import { RootSet } from "../policy/scoring-roots.ts"
import { buildInfo } from "../runtime/build-info.ts"
import { parseScoreRequest } from "../scorer/request.ts"
import { Scorer, type ScoreResult } from "../scorer/scorer.ts"
import { bearerMetadata, callUnary, type GrpcCallError, makeClient } from "../transport/grpc/client.ts"
import { nodeConfig } from "./config.ts"
import { makeTokenSource, type TokenFileError } from "./token.ts"

/** A job as PullWork hands it out (proto field names). */
interface WireJob {
  readonly id: string
  readonly request: {
    readonly reference: string
    readonly distorted: string
    readonly model: string
    readonly options: object | null
  } | null
  readonly scoring_roots: ReadonlyArray<string>
}

interface Session {
  readonly nodeId: string
  readonly heartbeatMs: number
}

interface Report {
  readonly job_id: string
  readonly final: boolean
  readonly result?: ScoreResult
  readonly error?: string
  readonly frames_done: number
}

/** Progress reports at most this often per job. */
const progressEvery = Duration.seconds(1)

/** Failures that mean the session is gone (controller restarted, session expired). */
const sessionLost = (error: GrpcCallError | TokenFileError) =>
  error._tag === "GrpcCallError" &&
  (error.code === grpc.status.PERMISSION_DENIED ||
    error.code === grpc.status.NOT_FOUND ||
    error.code === grpc.status.UNAUTHENTICATED)

const describe = (error: unknown): string =>
  typeof error === "object" && error !== null && "message" in error && typeof error.message === "string"
    ? error.message
    : String(error)

export class NodeAgent extends Effect.Service<NodeAgent>()("svc/NodeAgent", {
  scoped: Effect.gen(function* () {
    const config = yield* nodeConfig
    const scorer = yield* Scorer
    const token = yield* makeTokenSource(config.tokenFile)
    const caPem = Option.getOrUndefined(Option.map(config.caFile, (path) => readFileSync(path)))
    const client = yield* Effect.acquireRelease(
      Effect.sync(() => makeClient("svc.v1.Nodes", { address: config.controllerAddress, tls: config.tls, caPem })),
      (opened) => Effect.sync(() => opened.close())
    )
    const session = yield* Ref.make(Option.none<Session>())
    /** Final reports the controller has not acknowledged yet, by job id. */
    const unreported = yield* Ref.make(new Map<string, Report>())
    const running = yield* Ref.make(new Set<string>())

    const call = <Response>(method: string, request: object) =>
      Effect.flatMap(token, (bearer) => callUnary<Response>(client, method, request, bearerMetadata(bearer)))

    const register = Effect.gen(function* () {
      const response = yield* call<{ node_id: string; heartbeat_interval_ms: number }>("RegisterNode", {
        name: config.name,
        slots: config.slots,
        version: buildInfo.version
      })
      const registered: Session = {
        nodeId: response.node_id,
        heartbeatMs: Math.max(100, response.heartbeat_interval_ms || 10_000)
      }
      yield* Ref.set(session, Option.some(registered))
      yield* Effect.logInfo("registered").pipe(
        Effect.annotateLogs({ node_id: registered.nodeId, controller: config.controllerAddress })
      )
      return registered
    })

    const registering = yield* Effect.makeSemaphore(1)
    const registerUntilAccepted = register.pipe(
      Effect.tapError((error) => Effect.logWarning(`cannot register: ${describe(error)}`)),
      Effect.retry(
        Schedule.exponential(Duration.millis(200)).pipe(Schedule.union(Schedule.spaced(Duration.seconds(5))))
      ),
      Effect.orDie
    )
    /** The current session, registering (with back-off while the controller is away) if there is none.
     * One registration at a time: the heartbeat and pull loops may both find no session. */
    const currentSession: Effect.Effect<Session> = Effect.flatMap(
      Ref.get(session),
      Option.match({
        onSome: Effect.succeed,
        onNone: () =>
          registering.withPermits(1)(
            Effect.flatMap(
              Ref.get(session),
              Option.match({ onSome: Effect.succeed, onNone: () => registerUntilAccepted })
            )
          )
      })
    )

    const dropSession = (why: string) =>
      Effect.zipRight(Ref.set(session, Option.none()), Effect.logWarning(`session lost: ${why}; registering again`))

    /** True unless the controller says the session is gone (a failed call proves nothing). */
    const sessionAlive = (nodeId: string) =>
      Effect.map(Effect.either(call<{ ok: boolean }>("Heartbeat", { node_id: nodeId, running_job_ids: [] })), (beat) =>
        beat._tag === "Left" ? !sessionLost(beat.left) : beat.right.ok
      )

    /** A final report the controller acknowledged or refused for good: nothing left to resend. */
    const forget = (report: Report) =>
      report.final
        ? Ref.update(unreported, (map) => {
            map.delete(report.job_id)
            return map
          })
        : Effect.void

    /** Sends a report under the current session; keeps an unacknowledged final report for later. */
    const sendReport = (report: Report, mayRetry = true): Effect.Effect<void> =>
      Effect.gen(function* () {
        const { nodeId } = yield* currentSession
        const sent = yield* Effect.either(call("ReportResult", { node_id: nodeId, ...report }))
        if (sent._tag === "Right") return yield* forget(report)
        const error = sent.left
        // A restarted controller refuses reports of a session it never registered: register
        // again and send once more, so a job finished across the restart is not scored twice.
        if (mayRetry && report.final && sessionLost(error) && !(yield* sessionAlive(nodeId))) {
          yield* dropSession(`report refused: ${error.message}`)
          return yield* sendReport(report, false)
        }
        if (error._tag === "GrpcCallError" && error.code === grpc.status.PERMISSION_DENIED) {
          // Not ours any more (cancelled, or re-queued to another node): nothing to keep.
          yield* Effect.logWarning(`report refused for job ${report.job_id}: ${error.message}`)
          return yield* forget(report)
        }
        if (report.final) yield* Ref.update(unreported, (map) => map.set(report.job_id, report))
        yield* Effect.logWarning(`report for job ${report.job_id} not delivered: ${error.message}`)
      })

    const flushUnreported = Effect.flatMap(Ref.get(unreported), (map) =>
      Effect.forEach([...map.values()], (report) => sendReport(report), { discard: true })
    )

    const fail = (job: WireJob, message: string) =>
      Effect.zipRight(
        Effect.logWarning(`job ${job.id} failed: ${message}`),
        sendReport({ job_id: job.id, final: true, error: message, frames_done: 0 })
      )

    /** Scores both inputs on this node's file system, each checked against the job's roots once opened. */
    const runJob = (job: WireJob): Effect.Effect<void> =>
      Effect.gen(function* () {
        if (job.scoring_roots.length === 0) return yield* fail(job, "job arrived without scoring roots; refused")
        if (job.request === null) return yield* fail(job, "job carries no score request")
        // Each input is opened once by the scorer and checked on its descriptor (seed 5.5.5).
        const guard = RootSet.fromValidTexts(job.scoring_roots).inputGuard()
        const parsed = yield* Effect.either(parseScoreRequest(job.request))
        if (parsed._tag === "Left") return yield* fail(job, parsed.left.message)
        const lastProgress = yield* Ref.make(0)
        const onProgress = (framesDone: number) =>
          Effect.flatMap(Ref.get(lastProgress), (last) =>
            Date.now() - last < Duration.toMillis(progressEvery)
              ? Effect.void
              : Effect.zipRight(
                  Ref.set(lastProgress, Date.now()),
                  sendReport({ job_id: job.id, final: false, frames_done: framesDone })
                )
          )
        const scoreJob = {
          ...parsed.right,
          perFrame: true,
          threads: Math.max(parsed.right.threads, config.threadsPerJob)
        }
        const scored = yield* Effect.either(scorer.score(scoreJob, { onProgress, guard }))
        if (scored._tag === "Left") return yield* fail(job, scored.left.message)
        yield* Effect.logInfo("job finished").pipe(
          Effect.annotateLogs({ job_id: job.id, frames: scored.right.frame_count, score: scored.right.score })
        )
        yield* sendReport({ job_id: job.id, final: true, result: scored.right, frames_done: scored.right.frame_count })
      }).pipe(
        Effect.ensuring(
          Ref.update(running, (set) => {
            set.delete(job.id)
            return set
          })
        ),
        Effect.annotateLogs({ job_id: job.id })
      )

    const heartbeatLoop = Effect.gen(function* () {
      for (;;) {
        const current = yield* currentSession
        yield* Effect.sleep(Duration.millis(current.heartbeatMs))
        const runningIds = [...(yield* Ref.get(running))]
        const beat = yield* Effect.either(
          call<{ ok: boolean }>("Heartbeat", { node_id: current.nodeId, running_job_ids: runningIds })
        )
        if (beat._tag === "Left") {
          if (sessionLost(beat.left)) yield* dropSession(beat.left.message)
          else yield* Effect.logWarning(`heartbeat failed: ${beat.left.message}`)
          continue
        }
        if (!beat.right.ok) {
          yield* dropSession("heartbeat refused")
          yield* currentSession
          yield* flushUnreported
        }
      }
    })

    const pullLoop = Effect.gen(function* () {
      for (;;) {
        const current = yield* currentSession
        const free = config.slots - (yield* Ref.get(running)).size
        if (free === 0) {
          yield* Effect.sleep(Duration.millis(config.pollIntervalMs))
          continue
        }
        const pulled = yield* Effect.either(
          call<{ jobs: ReadonlyArray<WireJob> }>("PullWork", { node_id: current.nodeId, max_jobs: free })
        )
        if (pulled._tag === "Left") {
          if (sessionLost(pulled.left)) yield* dropSession(pulled.left.message)
          else yield* Effect.logWarning(`pull failed: ${pulled.left.message}`)
          yield* Effect.sleep(Duration.millis(config.pollIntervalMs))
          continue
        }
        for (const job of pulled.right.jobs) {
          yield* Ref.update(running, (set) => set.add(job.id))
          yield* Effect.forkDaemon(runJob(job))
        }
        if (pulled.right.jobs.length === 0) yield* Effect.sleep(Duration.millis(config.pollIntervalMs))
      }
    })

    yield* Effect.forkScoped(heartbeatLoop)
    yield* Effect.forkScoped(pullLoop)
    return {
      /** True while the node holds a session (readiness). */
      registered: Effect.map(Ref.get(session), Option.isSome)
    } as const
  })
}) {}
