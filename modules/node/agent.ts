/**
 * The compute node's work loop (seed 000, 5.5 and 5.6): register with the controller as the
 * token's tenant, heartbeat, pull that tenant's jobs, check every input against the job's
 * scoring roots on this node's own file system (symlinks followed), score, and report
 * progress and the final result. A controller restart shows as a refused heartbeat: the node
 * registers again and reports, under its new session, what it finished meanwhile.
 */
import { Chunk, Clock, Deferred, Duration, Effect, Option, Queue, Ref, Schedule } from "effect"
import { readFileSync } from "node:fs"
import { framesPerRenditionPage, MAX_FRAMES_PER_MESSAGE, MAX_REPORTS_PER_CALL } from "../config/pages.ts"
import { Ffmpeg } from "../inputs/ffmpeg.ts"
import { alignLadder, countLadderFrames, scoreLadderInputs } from "../inputs/ladder.ts"
import { alignTitle, countTitleFrames, scoreInputs } from "../inputs/score.ts"
import { RootSet } from "../policy/scoring-roots.ts"
import { maxScoreMemory } from "../scoring-api/config.ts"
import { buildInfo } from "../runtime/build-info.ts"
import {
  type AdmitMemory,
  type AlignmentReport,
  type LadderResult,
  memoryLedger,
  parseLadderRequest,
  parsePrecision,
  parseScoreRequest,
  Scorer,
  ScoreMemoryBusy,
  type ScoreResult,
  type Segment
} from "../scorer/index.ts"
import { type CallOptions, GrpcCallError, type ServiceClient, Status, serviceClient } from "../transport/grpc/client.ts"
import type {
  Alignment,
  HeldSegment,
  Job,
  JobMemoryNeed,
  JobSegment,
  Outgoing,
  RenditionProgress,
  ReportResultRequest,
  ScoreLadderRequest,
  ScoreRequest
} from "../transport/grpc/svc-v1.ts"
import { nodeConfig } from "./config.ts"
import { makeTokenSource, type TokenFileError } from "../config/token-file.ts"

/**
 * How long PullWork may hold an idle node's call until a job arrives (long-poll, issue 35):
 * within the controller's 20 s bound and the client's 30 s deadline. A node with free slots is
 * answered as soon as work is submitted, instead of at its next poll.
 */
const PULL_WAIT_MS = 15_000

interface Session {
  readonly nodeId: string
  readonly heartbeatMs: number
}

/** A report this node sends (and keeps until acknowledged when final): ReportResultRequest's fields, with the domain's results. */
interface Report
  extends Pick<ReportResultRequest, "job_id" | "final" | "frames_done">,
    Partial<
      Pick<
        ReportResultRequest,
        | "error"
        | "rendition_progress"
        | "segment_index"
        | "plan_frames"
        | "plan_alignment"
        | "plan_rendition_alignments"
      >
    > {
  readonly result?: ScoreResult
  /** A ladder job's result (instead of result). */
  readonly ladder_result?: LadderResult
}

/** What this node holds of a job: the job, or one of its segments ("<job id>#<index>"). */
const workKey = (jobId: string, segment: number | undefined) => (segment === undefined ? jobId : `${jobId}#${segment}`)
const jobIdOf = (key: string) => key.split("#")[0] ?? key
const reportKey = (report: Report) => workKey(report.job_id, report.segment_index)

/** A segment report's marker fields (none for a job's own report). */
const segmentFields = (report: Report) =>
  report.segment_index === undefined ? {} : { segment: true, segment_index: report.segment_index }

/**
 * The ReportResult messages of one report. A result with more per-frame values than one message
 * carries goes as pages: progress reports with the earlier pages (`frames_offset` where each
 * continues), then the report itself with the last page. Sending them all again is harmless:
 * a page replaces the frames from its offset.
 */
const reportMessages = (nodeId: string, report: Report): ReadonlyArray<Outgoing<ReportResultRequest>> => {
  if (report.ladder_result !== undefined) return ladderReportMessages(nodeId, report, report.ladder_result)
  const frames = report.result?.frames ?? []
  if (report.result === undefined || frames.length <= MAX_FRAMES_PER_MESSAGE) {
    return [{ node_id: nodeId, ...report, ...segmentFields(report), frames_offset: 0 }]
  }
  const messages: Array<Outgoing<ReportResultRequest>> = []
  for (let offset = 0; offset < frames.length; offset += MAX_FRAMES_PER_MESSAGE) {
    const last = offset + MAX_FRAMES_PER_MESSAGE >= frames.length
    messages.push({
      node_id: nodeId,
      job_id: report.job_id,
      final: last && report.final,
      result: { ...report.result, frames: frames.slice(offset, offset + MAX_FRAMES_PER_MESSAGE) },
      error: report.error ?? "",
      frames_done: report.frames_done,
      frames_offset: offset,
      ...segmentFields(report)
    })
  }
  return messages
}

/**
 * A ladder's ReportResult messages: every rendition's frames go page by page from one offset,
 * at most `framesPerRenditionPage` each, so a message holds at most MAX_FRAMES_PER_MESSAGE.
 */
const ladderReportMessages = (
  nodeId: string,
  report: Report,
  result: LadderResult
): ReadonlyArray<Outgoing<ReportResultRequest>> => {
  const page = framesPerRenditionPage(result.renditions.length)
  const longest = Math.max(0, ...result.renditions.map((rendition) => rendition.frames.length))
  const messages: Array<Outgoing<ReportResultRequest>> = []
  for (let offset = 0; offset === 0 || offset < longest; offset += page) {
    messages.push({
      node_id: nodeId,
      job_id: report.job_id,
      final: offset + page >= longest && report.final,
      ladder_result: {
        ...result,
        renditions: result.renditions.map((rendition) => ({
          ...rendition,
          frames: rendition.frames.slice(offset, offset + page)
        }))
      },
      error: report.error ?? "",
      frames_done: report.frames_done,
      rendition_progress: report.rendition_progress ?? [],
      frames_offset: offset,
      ...segmentFields(report)
    })
  }
  return messages
}

/** Progress reports at most this often per job. */
const progressEvery = Duration.seconds(1)

/** Failures that mean the session is gone (controller restarted, session expired). */
/** The controller does not have the call (an older one, mid-upgrade). */
const unimplemented = (error: GrpcCallError | TokenFileError) =>
  error._tag === "GrpcCallError" && error.code === Status.UNIMPLEMENTED

const sessionLost = (error: GrpcCallError | TokenFileError) =>
  error._tag === "GrpcCallError" &&
  (error.code === Status.PERMISSION_DENIED || error.code === Status.NOT_FOUND || error.code === Status.UNAUTHENTICATED)

/** The controller replica did not answer at all (down, restarting, unreachable). */
const unreachable = (error: GrpcCallError) =>
  error.code === Status.UNAVAILABLE || error.code === Status.DEADLINE_EXCEEDED

/** A wire alignment as the scorer reports one: no warning when proto3's is "". */
const alignmentOf = ({ warning, ...found }: Alignment): AlignmentReport =>
  warning === "" ? found : { ...found, warning }

/**
 * A sync job's segment is scored with the alignment its plan found (a ladder's rendition, with
 * its own): not searched again. None: the job does not align.
 */
const planAlignmentOf = (alignment: Alignment | undefined) =>
  alignment === undefined ? {} : { sync: undefined, alignment: alignmentOf(alignment) }

const describe = (error: unknown): string =>
  typeof error === "object" && error !== null && "message" in error && typeof error.message === "string"
    ? error.message
    : String(error)

export class NodeAgent extends Effect.Service<NodeAgent>()("svc/NodeAgent", {
  scoped: Effect.gen(function* () {
    const agentScope = yield* Effect.scope
    const config = yield* nodeConfig
    const scorer = yield* Scorer
    const ffmpeg = yield* Ffmpeg
    // The same memory budget as svc-server's (SVC_MAX_SCORE_MEMORY), decoders included: a job that
    // can never fit fails with the reason; one that may fit later is handed back with its need
    // (pending again, for another node or this one later). Each PullWork says how much is free,
    // and the controller skips a job whose recorded need is more: no job waits on a node for
    // memory it may never get, and none is pulled again by a node that still lacks the room.
    const budget = yield* maxScoreMemory
    const ledger = yield* memoryLedger(budget)
    const admitScore = ledger.admit
    /**
     * A job handed back since memory was last given back came again: the controller does not
     * skip by free memory (an older one). Nothing more is pulled until a score gives memory back.
     */
    const memoryShort = yield* Ref.make(false)
    /** Jobs and segments ("<job id>#<index>") handed back since an admitted score last gave its memory back. */
    const handedBack = yield* Ref.make(new Set<string>())
    /** Scores holding admitted memory now. */
    const admitted = yield* Ref.make(0)
    /** Completed (and replaced) whenever an admitted score gives its memory back. */
    const memoryFreed = yield* Effect.flatMap(Deferred.make<void>(), (first) => Ref.make(first))
    const giveBackMemory = Effect.gen(function* () {
      yield* Ref.update(admitted, (count) => count - 1)
      yield* Ref.set(memoryShort, false)
      yield* Ref.set(handedBack, new Set<string>())
      const next = yield* Deferred.make<void>()
      yield* Deferred.succeed(yield* Ref.getAndSet(memoryFreed, next), undefined)
    })
    /** Jobs were handed back: the pull loop's next Heartbeat (with hand_back_unlisted) re-queues them. */
    const handBackDue = yield* Ref.make(false)
    /** A long-poll was cancelled because memory came back (its claim, if any, never read). */
    const pullCancelled = yield* Ref.make(false)
    /** The memory needs of the jobs handed back, for that Heartbeat (the controller records them). */
    const handBackNeeds = yield* Ref.make<ReadonlyArray<JobMemoryNeed>>([])
    /**
     * Admission for one job, segment or plan; `settled` is completed once its memory is admitted.
     * Nothing to admit (a plan counting raw frames: no decoder) only settles.
     */
    const admitFor =
      (settled: Deferred.Deferred<void>): AdmitMemory =>
      (bytes) =>
        bytes <= 0
          ? Effect.asVoid(Deferred.succeed(settled, undefined))
          : admitScore(bytes).pipe(
              Effect.zipLeft(
                Effect.acquireRelease(
                  Ref.update(admitted, (count) => count + 1),
                  () => giveBackMemory
                )
              ),
              Effect.zipLeft(Deferred.succeed(settled, undefined))
            )
    const token = yield* makeTokenSource(config.tokenFile)
    const caPem = Option.getOrUndefined(Option.map(config.caFile, (path) => readFileSync(path)))
    const clients = yield* Effect.forEach(config.controllerAddresses, (address) =>
      Effect.map(serviceClient("svc.v1.Nodes", { address, tls: config.tls, caPem }), (nodes) => ({ address, nodes }))
    )
    /** Index of the controller replica in use; moves on when it stops answering. */
    const current = yield* Ref.make(0)
    const controller = Effect.map(Ref.get(current), (index) => clients[index % clients.length] ?? clients[0])
    const session = yield* Ref.make(Option.none<Session>())
    /** Final reports the controller has not acknowledged yet, by job id. */
    const unreported = yield* Ref.make(new Map<string, Report>())
    const running = yield* Ref.make(new Set<string>())

    /** A call to the replica in use; when it is unreachable the next call goes to the next replica. */
    const call = <Response>(
      method: (nodes: ServiceClient<"svc.v1.Nodes">, options: CallOptions) => Effect.Effect<Response, GrpcCallError>
    ) =>
      Effect.gen(function* () {
        const bearer = yield* token
        const target = yield* controller
        if (target === undefined) return yield* Effect.die(new Error("SVC_CONTROLLER_ADDR names no controller"))
        return yield* method(target.nodes, { bearer }).pipe(
          Effect.tapError((error) =>
            clients.length > 1 && unreachable(error)
              ? Effect.zipRight(
                  Ref.update(current, (index) => (index + 1) % clients.length),
                  Effect.logWarning(`controller ${target.address} unreachable (${error.message}); failing over`)
                )
              : Effect.void
          )
        )
      })

    /**
     * Final reports that fit in one message go out together in ReportResults calls: the first at
     * once, and those that finish while a call is in flight in the next one (no timer, so none
     * waits for more than one call). Each report's outcome answers it as ReportResult would.
     */
    const finals = yield* Queue.unbounded<{
      readonly message: Outgoing<ReportResultRequest>
      readonly sent: Deferred.Deferred<void, GrpcCallError | TokenFileError>
    }>()
    const sendFinals = Effect.gen(function* () {
      const batch = Chunk.toReadonlyArray(yield* Queue.takeBetween(finals, 1, MAX_REPORTS_PER_CALL))
      // One session per call: a report queued under an older session goes in a call of its own.
      for (const nodeId of new Set(batch.map((queued) => queued.message.node_id ?? ""))) {
        const group = batch.filter((queued) => (queued.message.node_id ?? "") === nodeId)
        const answered = yield* Effect.either(
          call((nodes, options) =>
            nodes.ReportResults({ node_id: nodeId, reports: group.map((queued) => queued.message) }, options)
          )
        )
        // A controller without the batch call (older, mid-upgrade): each report on its own.
        if (answered._tag === "Left" && unimplemented(answered.left)) {
          yield* Effect.forEach(
            group,
            (queued) =>
              Deferred.complete(
                queued.sent,
                Effect.asVoid(call((nodes, options) => nodes.ReportResult(queued.message, options)))
              ),
            { concurrency: "unbounded", discard: true }
          )
          continue
        }
        yield* Effect.forEach(group, (queued, index) => {
          if (answered._tag === "Left") return Deferred.fail(queued.sent, answered.left)
          const outcome = answered.right.outcomes[index]
          const code = outcome === undefined ? Status.INTERNAL : outcome.code
          return code === Status.OK
            ? Deferred.succeed(queued.sent, undefined)
            : Deferred.fail(
                queued.sent,
                new GrpcCallError({
                  method: "ReportResults",
                  code,
                  message: outcome?.message ?? "the controller answered no outcome for the report"
                })
              )
        })
      }
    })
    yield* Effect.forkScoped(Effect.forever(sendFinals))
    const sendFinal = (message: Outgoing<ReportResultRequest>) =>
      Effect.flatMap(Deferred.make<void, GrpcCallError | TokenFileError>(), (sent) =>
        Effect.zipRight(Queue.offer(finals, { message, sent }), Deferred.await(sent))
      )

    const register = Effect.gen(function* () {
      const response = yield* call((nodes, options) =>
        nodes.RegisterNode(
          { name: config.name, slots: config.slots, version: buildInfo.version, scores_segments: true },
          options
        )
      )
      const registered: Session = {
        nodeId: response.node_id,
        heartbeatMs: Math.max(100, response.heartbeat_interval_ms || 10_000)
      }
      yield* Ref.set(session, Option.some(registered))
      yield* Effect.logInfo("registered").pipe(
        Effect.annotateLogs({ node_id: registered.nodeId, controller: (yield* controller)?.address ?? "" })
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

    /**
     * Forgets session `nodeId` when the controller says it is gone. Only that session: the loops
     * and reports each call under the session they started with, so a refusal can answer a call
     * of an older session after another loop has registered again, and must not end the new one.
     */
    const dropSession = (nodeId: string, why: string) =>
      Effect.flatMap(
        Ref.modify(session, (held) =>
          Option.isSome(held) && held.value.nodeId === nodeId ? [true, Option.none<Session>()] : [false, held]
        ),
        (dropped) => (dropped ? Effect.logWarning(`session lost: ${why}; registering again`) : Effect.void)
      )

    /**
     * What this node has, as its heartbeats list it: the jobs and segments it is scoring and
     * those whose final report is not acknowledged yet. The controller re-queues a job or segment
     * claimed for the node long ago that it does not list (the PullWork answer never arrived).
     * Segments are named (running_segments) and their jobs listed too, as an older controller
     * keeps a segment by its job: a newer one, given segment names, keeps exactly those named.
     */
    const held = Effect.map(Effect.all([Ref.get(running), Ref.get(unreported)]), ([scoring, finished]) => {
      const keys = [...new Set([...scoring, ...finished.keys()])]
      return {
        running_job_ids: [...new Set(keys.map(jobIdOf))],
        running_segments: keys.flatMap((key): ReadonlyArray<HeldSegment> => {
          const [jobId = key, index] = key.split("#")
          return index === undefined ? [] : [{ job_id: jobId, index: Number(index) }]
        })
      }
    })

    /** True unless the controller says the session is gone (a failed call proves nothing). */
    const sessionAlive = (nodeId: string) =>
      Effect.flatMap(held, (listed) =>
        Effect.map(
          Effect.either(call((nodes, options) => nodes.Heartbeat({ node_id: nodeId, ...listed }, options))),
          (beat) => (beat._tag === "Left" ? !sessionLost(beat.left) : beat.right.ok)
        )
      )

    /** A final report the controller acknowledged or refused for good: nothing left to resend. */
    const forget = (report: Report) =>
      report.final
        ? Ref.update(unreported, (map) => {
            map.delete(reportKey(report))
            return map
          })
        : Effect.void

    /** Sends a report under the current session; keeps an unacknowledged final report for later. */
    const sendReport = (report: Report, mayRetry = true): Effect.Effect<void> =>
      Effect.gen(function* () {
        const { nodeId } = yield* currentSession
        const messages = reportMessages(nodeId, report)
        const [only] = messages
        const sent = yield* Effect.either(
          report.final && only !== undefined && messages.length === 1
            ? sendFinal(only)
            : Effect.forEach(messages, (message) => call((nodes, options) => nodes.ReportResult(message, options)), {
                discard: true
              })
        )
        if (sent._tag === "Right") return yield* forget(report)
        const error = sent.left
        // A restarted controller refuses reports of a session it never registered: register
        // again and send once more, so a job finished across the restart is not scored twice.
        if (mayRetry && report.final && sessionLost(error) && !(yield* sessionAlive(nodeId))) {
          yield* dropSession(nodeId, `report refused: ${error.message}`)
          return yield* sendReport(report, false)
        }
        if (error._tag === "GrpcCallError" && error.code === Status.PERMISSION_DENIED) {
          // Not ours any more (cancelled, or re-queued to another node): nothing to keep.
          yield* Effect.logWarning(`report refused for job ${report.job_id}: ${error.message}`)
          return yield* forget(report)
        }
        if (report.final) yield* Ref.update(unreported, (map) => map.set(reportKey(report), report))
        yield* Effect.logWarning(`report for job ${report.job_id} not delivered: ${error.message}`)
      })

    const flushUnreported = Effect.flatMap(Ref.get(unreported), (map) =>
      Effect.forEach([...map.values()], (report) => sendReport(report), { discard: true })
    )

    /**
     * Sends a progress report; true when the job is no longer this node's to score: cancelled,
     * or refused as not assigned to this node while its session is live (the job was re-queued
     * or taken over, and scoring on would only score it twice). Any other refusal proves nothing
     * (after a controller restart the session is unknown, and the job is still this node's to
     * finish and report under its next session).
     */
    const reportProgress = (
      jobId: string,
      framesDone: number,
      renditionProgress: ReadonlyArray<RenditionProgress>,
      segment?: number
    ): Effect.Effect<boolean> =>
      Effect.gen(function* () {
        const { nodeId } = yield* currentSession
        const sent = yield* Effect.either(
          call((nodes, options) =>
            nodes.ReportResult(
              {
                node_id: nodeId,
                job_id: jobId,
                final: false,
                frames_done: framesDone,
                rendition_progress: renditionProgress,
                ...(segment === undefined ? {} : { segment: true, segment_index: segment })
              },
              options
            )
          )
        )
        const state = sent._tag === "Right" ? sent.right.job?.state : undefined
        // A segment stops too once its job failed (another segment's input error) or finished.
        if (segment !== undefined && (state === "JOB_STATE_FAILED" || state === "JOB_STATE_FINISHED")) return true
        if (sent._tag === "Right") return state === "JOB_STATE_CANCELLED"
        const refusal = sent.left
        if (
          refusal._tag === "GrpcCallError" &&
          refusal.code === Status.PERMISSION_DENIED &&
          (yield* sessionAlive(nodeId))
        ) {
          yield* Effect.logWarning(`job ${jobId} is no longer this node's (${refusal.message}); scoring stopped`)
          return true
        }
        yield* Effect.logWarning(`progress report for job ${jobId} not delivered: ${refusal.message}`)
        return false
      })

    /**
     * A job, segment or plan that may fit later but not now (it needs `needed` bytes): no longer
     * this node's (off the list its heartbeats send, before the hand-back is due, so the
     * hand-back's list never holds it); the pull loop hands it back with its need before it pulls
     * again. The controller records the need on the job or the segment and skips it for nodes
     * with less free; a segment's hand-back is not counted as one of its attempts.
     */
    const handBack = (job: Job, needed: number) =>
      Effect.gen(function* () {
        const key = workKey(job.id, job.segment?.index)
        yield* Ref.update(running, (set) => {
          set.delete(key)
          return set
        })
        const again = (yield* Ref.get(handedBack)).has(key)
        yield* Ref.update(handedBack, (set) => set.add(key))
        if (again) yield* Ref.set(memoryShort, true)
        const need: JobMemoryNeed = {
          job_id: job.id,
          memory_bytes: needed,
          segment: job.segment !== null,
          segment_index: job.segment?.index ?? 0
        }
        yield* Ref.update(handBackNeeds, (needs) => [...needs, need])
        yield* Ref.set(handBackDue, true)
        const what = job.segment === null ? `job ${job.id}` : `job ${job.id} segment ${job.segment.index}`
        yield* Effect.logInfo(`${what} does not fit in the memory free now; handed back`)
      })

    const fail = (job: Job, message: string) =>
      Effect.zipRight(
        Effect.logWarning(`job ${job.id} failed: ${message}`),
        sendReport({ job_id: job.id, final: true, error: message, frames_done: 0 })
      )

    /**
     * Runs `score` with progress reports (at most one per `progressEvery`); None when a progress
     * report showed the job cancelled or no longer this node's: scoring stops (its decoders are
     * killed with it).
     */
    const withProgress = <A, E>(
      jobId: string,
      score: (onProgress: (framesDone: number) => Effect.Effect<void>) => Effect.Effect<A, E>,
      renditionsAt: (framesDone: number) => ReadonlyArray<RenditionProgress> = () => [],
      segment?: number
    ) =>
      Effect.gen(function* () {
        const lastProgress = yield* Ref.make(0)
        // Completed when a progress report shows the job cancelled or no longer this node's:
        // scoring stops (its decoders are killed with it) and no final report is sent.
        const withdrawn = yield* Deferred.make<void>()
        const onProgress = (framesDone: number) =>
          Effect.flatMap(Ref.get(lastProgress), (last) =>
            Date.now() - last < Duration.toMillis(progressEvery)
              ? Effect.void
              : Effect.zipRight(
                  Ref.set(lastProgress, Date.now()),
                  Effect.flatMap(reportProgress(jobId, framesDone, renditionsAt(framesDone), segment), (gone) =>
                    gone ? Deferred.succeed(withdrawn, undefined) : Effect.void
                  )
                )
          )
        return yield* Effect.raceFirst(
          Effect.map(Effect.either(score(onProgress)), Option.some),
          Effect.as(Deferred.await(withdrawn), Option.none())
        )
      })

    /** Scores both inputs on this node's file system, each checked against the job's roots once opened. */
    const runPair = (
      job: Job,
      request: ScoreRequest,
      guard: ReturnType<RootSet["inputGuard"]>,
      admitMemory: AdmitMemory
    ) =>
      Effect.gen(function* () {
        const parsed = yield* Effect.either(parseScoreRequest(request))
        if (parsed._tag === "Left") return yield* fail(job, parsed.left.message)
        const scoreJob = {
          ...parsed.right,
          perFrame: true,
          threads: Math.max(parsed.right.threads, config.threadsPerJob)
        }
        const outcome = yield* withProgress(job.id, (onProgress) =>
          Effect.provideService(
            scoreInputs(scorer, scoreJob, { onProgress, guard, admitMemory, memoryBudget: budget }),
            Ffmpeg,
            ffmpeg
          )
        )
        if (Option.isNone(outcome)) return yield* Effect.logInfo(`job ${job.id} withdrawn; scoring stopped`)
        const scored = outcome.value
        if (scored._tag === "Left")
          return yield* scored.left._tag === "ScoreMemoryBusy"
            ? handBack(job, scored.left.needed)
            : fail(job, scored.left.message)
        yield* Effect.logInfo("job finished").pipe(
          Effect.annotateLogs({ job_id: job.id, frames: scored.right.frame_count, score: scored.right.score })
        )
        yield* sendReport({ job_id: job.id, final: true, result: scored.right, frames_done: scored.right.frame_count })
      })

    /**
     * Scores a ladder in one pass over the reference, every rendition checked against the job's
     * roots once opened; a cancel stops the reference's and every rendition's decoder.
     */
    const runLadder = (
      job: Job,
      request: ScoreLadderRequest,
      guard: ReturnType<RootSet["inputGuard"]>,
      admitMemory: AdmitMemory
    ) =>
      Effect.gen(function* () {
        const parsed = yield* Effect.either(parseLadderRequest(request))
        if (parsed._tag === "Left") return yield* fail(job, parsed.left.message)
        const ladder = {
          ...parsed.right,
          renditions: parsed.right.renditions.map((rendition) => ({
            ...rendition,
            job: { ...rendition.job, perFrame: true, threads: Math.max(rendition.job.threads, config.threadsPerJob) }
          }))
        }
        // Frames read or decoded per rendition. The native ladder scores every rendition's frame
        // together, so a rendition's frames scored are the ladder's, never more than it has read.
        const read = ladder.renditions.map(() => 0)
        const renditionsAt = (framesDone: number) =>
          ladder.renditions.map((rendition, index) => ({
            label: rendition.label,
            frames_done: Math.min(read[index] ?? 0, framesDone)
          }))
        const outcome = yield* withProgress(
          job.id,
          (onProgress) =>
            Effect.provideService(
              scoreLadderInputs(scorer, ladder, {
                onProgress,
                guard,
                admitMemory,
                memoryBudget: budget,
                onRenditionProgress: (index, frames) =>
                  Effect.sync(() => {
                    read[index] = frames
                  })
              }),
              Ffmpeg,
              ffmpeg
            ),
          renditionsAt
        )
        if (Option.isNone(outcome)) return yield* Effect.logInfo(`job ${job.id} withdrawn; scoring stopped`)
        const scored = outcome.value
        if (scored._tag === "Left")
          return yield* scored.left._tag === "ScoreMemoryBusy"
            ? handBack(job, scored.left.needed)
            : fail(job, scored.left.message)
        // Renditions aligned at their own offsets score their own frames: the ladder's are the most.
        const frames = Math.max(0, ...scored.right.renditions.map((rendition) => rendition.frame_count))
        yield* Effect.logInfo("job finished").pipe(
          Effect.annotateLogs({ job_id: job.id, frames, renditions: scored.right.renditions.length })
        )
        yield* sendReport({
          job_id: job.id,
          final: true,
          ladder_result: scored.right,
          frames_done: frames,
          rendition_progress: scored.right.renditions.map((rendition) => ({
            label: rendition.label,
            frames_done: rendition.frame_count
          }))
        })
      })

    /**
     * The plan of a segment job: counts the title's frames (its inputs checked against the roots
     * as a score checks them; a ladder's reference and every rendition) and reports them; the
     * controller cuts the job into segments. An input error fails the job. Its memory is admitted
     * as a score's (the frame counter an encoded input starts; for sync "auto" the alignment
     * search's decoders, thumbnails and search table): one that can never fit fails the job with
     * the reason, one that may fit later is handed back with its need.
     */
    const runPlan = (job: Job, guard: ReturnType<RootSet["inputGuard"]>, admitMemory: AdmitMemory) =>
      Effect.gen(function* () {
        const hooks = { guard, admitMemory, memoryBudget: budget }
        const refused = (error: { readonly _tag: string; readonly message: string }) =>
          error instanceof ScoreMemoryBusy ? handBack(job, error.needed) : fail(job, error.message)
        // A pair job that aligns does so once, here, over the whole inputs: its title is the pairs found.
        if (job.ladder === null) {
          const parsed = yield* Effect.either(parseScoreRequest(job.request))
          if (parsed._tag === "Left") return yield* fail(job, parsed.left.message)
          const sync = parsed.right.sync
          if (sync !== undefined) {
            const aligned = yield* Effect.either(
              Effect.provideService(alignTitle(parsed.right, sync.window, hooks), Ffmpeg, ffmpeg)
            )
            if (aligned._tag === "Left") return yield* refused(aligned.left)
            const { frameCount } = parsed.right
            const pairs = frameCount > 0 ? Math.min(frameCount, aligned.right.frames) : aligned.right.frames
            yield* Effect.logInfo("job planned").pipe(Effect.annotateLogs({ job_id: job.id, frames: pairs }))
            return yield* sendReport({
              job_id: job.id,
              final: false,
              frames_done: 0,
              plan_frames: pairs,
              // proto3 has no absent string: no warning is "".
              plan_alignment: { ...aligned.right, warning: aligned.right.warning ?? "" }
            })
          }
        }
        // A ladder job that aligns does so once, here: each rendition with the reference over the
        // whole inputs; its title is the reference frames any rendition pairs (each scores its own).
        if (job.ladder !== null) {
          const parsed = yield* Effect.either(parseLadderRequest(job.ladder))
          if (parsed._tag === "Left") return yield* fail(job, parsed.left.message)
          if (parsed.right.renditions[0]?.job.sync !== undefined) {
            const aligned = yield* Effect.either(
              Effect.provideService(alignLadder(parsed.right, hooks), Ffmpeg, ffmpeg)
            )
            if (aligned._tag === "Left") return yield* refused(aligned.left)
            yield* Effect.logInfo("job planned").pipe(
              Effect.annotateLogs({ job_id: job.id, frames: aligned.right.frames })
            )
            return yield* sendReport({
              job_id: job.id,
              final: false,
              frames_done: 0,
              plan_frames: aligned.right.frames,
              // proto3 has no absent string: no warning is "".
              plan_rendition_alignments: aligned.right.alignments.map((alignment) => ({
                ...alignment,
                warning: alignment.warning ?? ""
              }))
            })
          }
        }
        const counting =
          job.ladder !== null
            ? Effect.map(parseLadderRequest(job.ladder), (ladder) => countLadderFrames(scorer, ladder, hooks))
            : Effect.map(parseScoreRequest(job.request), (parsed) => countTitleFrames(scorer, parsed, hooks))
        const counted = yield* Effect.either(
          Effect.flatMap(counting, (count) => Effect.provideService(count, Ffmpeg, ffmpeg))
        )
        if (counted._tag === "Left") return yield* refused(counted.left)
        yield* Effect.logInfo("job planned").pipe(Effect.annotateLogs({ job_id: job.id, frames: counted.right }))
        yield* sendReport({ job_id: job.id, final: false, frames_done: 0, plan_frames: counted.right })
      })

    /**
     * How one segment of a job is scored, from the job's request: a pair, or a ladder (the
     * reference and every rendition over the same frames), lossless and per frame so the
     * controller's merge is exact, every input checked against the job's roots once opened.
     */
    const segmentScorer = (
      job: Job,
      range: Segment,
      guard: ReturnType<RootSet["inputGuard"]>,
      admitMemory: AdmitMemory
    ) => {
      const settings = <J extends { readonly threads: number }>(scoreJob: J) => ({
        ...scoreJob,
        perFrame: true,
        precision: parsePrecision("lossless"),
        threads: Math.max(scoreJob.threads, config.threadsPerJob),
        segment: range
      })
      type Scored = Pick<Report, "result" | "ladder_result" | "frames_done">
      type Score = (
        onProgress: (framesDone: number) => Effect.Effect<void>
      ) => Effect.Effect<Scored, { readonly message: string }>
      if (job.ladder !== null)
        return Effect.map(
          parseLadderRequest(job.ladder),
          (parsed): Score =>
            (onProgress) =>
              Effect.provideService(
                scoreLadderInputs(
                  scorer,
                  {
                    ...parsed,
                    renditions: parsed.renditions.map((rendition, index) => ({
                      ...rendition,
                      job: { ...settings(rendition.job), ...planAlignmentOf(job.plan_rendition_alignments[index]) }
                    }))
                  },
                  { onProgress, guard, admitMemory, memoryBudget: budget }
                ),
                Ffmpeg,
                ffmpeg
              ).pipe(
                Effect.map((result) => ({
                  ladder_result: result,
                  frames_done: Math.max(0, ...result.renditions.map((rendition) => rendition.frame_count))
                }))
              )
        )
      return Effect.map(
        parseScoreRequest(job.request),
        (parsed): Score =>
          (onProgress) =>
            Effect.provideService(
              scoreInputs(
                scorer,
                {
                  ...settings(parsed),
                  // A sync job's segment is a range of the pairs its plan found: scored with them, not searched again.
                  ...planAlignmentOf(job.plan_alignment ?? undefined)
                },
                { onProgress, guard, admitMemory, memoryBudget: budget }
              ),
              Ffmpeg,
              ffmpeg
            ).pipe(Effect.map((result) => ({ result, frames_done: result.frame_count })))
      )
    }

    /**
     * Scores one segment of a segment job: its frames and one reference context frame on each
     * side (none at the title's ends), lossless and per frame, so the controller's merge is
     * exact; reports count within the segment. An input error fails the segment, and with it
     * the job. Its memory is admitted as a job's is: one that can never fit fails the segment
     * (and its job) with the reason; one that may fit later is handed back with its need.
     */
    const runSegment = (
      job: Job,
      segment: JobSegment,
      guard: ReturnType<RootSet["inputGuard"]>,
      admitMemory: AdmitMemory
    ) =>
      Effect.gen(function* () {
        const segmentFail = (message: string) =>
          Effect.zipRight(
            Effect.logWarning(`job ${job.id} segment ${segment.index} failed: ${message}`),
            sendReport({ job_id: job.id, segment_index: segment.index, final: true, error: message, frames_done: 0 })
          )
        const range = {
          first: segment.first_frame,
          frames: segment.frame_count,
          last: segment.index === job.segments.length - 1
        }
        const score = yield* Effect.either(segmentScorer(job, range, guard, admitMemory))
        if (score._tag === "Left") return yield* segmentFail(score.left.message)
        const outcome = yield* withProgress(job.id, score.right, () => [], segment.index)
        if (Option.isNone(outcome))
          return yield* Effect.logInfo(`job ${job.id} segment ${segment.index} withdrawn; scoring stopped`)
        const scored = outcome.value
        if (scored._tag === "Left")
          return yield* scored.left instanceof ScoreMemoryBusy
            ? handBack(job, scored.left.needed)
            : segmentFail(scored.left.message)
        yield* Effect.logInfo("segment finished").pipe(
          Effect.annotateLogs({ job_id: job.id, segment: segment.index, frames: scored.right.frames_done })
        )
        yield* sendReport({ job_id: job.id, segment_index: segment.index, final: true, ...scored.right })
      })

    /** Runs a pulled job; `settled` is completed once its memory is admitted, or when it ends. */
    const runJob = (job: Job, settled: Deferred.Deferred<void>): Effect.Effect<void> =>
      Effect.gen(function* () {
        if (job.scoring_roots.length === 0) return yield* fail(job, "job arrived without scoring roots; refused")
        // Each input is opened once by the scorer and checked on its descriptor (seed 5.5.5).
        const guard = RootSet.fromValidTexts(job.scoring_roots).inputGuard()
        if (job.ladder === null && job.request === null) return yield* fail(job, "job carries no score request")
        if (job.segment !== null) return yield* runSegment(job, job.segment, guard, admitFor(settled))
        if (job.plan) return yield* runPlan(job, guard, admitFor(settled))
        if (job.ladder !== null) return yield* runLadder(job, job.ladder, guard, admitFor(settled))
        if (job.request === null) return yield* fail(job, "job carries no score request")
        return yield* runPair(job, job.request, guard, admitFor(settled))
      }).pipe(
        Effect.ensuring(
          Effect.zipRight(
            Ref.update(running, (set) => {
              set.delete(workKey(job.id, job.segment?.index))
              return set
            }),
            Deferred.succeed(settled, undefined)
          )
        ),
        Effect.annotateLogs({ job_id: job.id })
      )

    /**
     * Hands back the jobs that did not fit: a Heartbeat listing every job this node has, sent
     * between pulls (no PullWork of this node is in flight, so every claim it holds is listed).
     */
    const sendHandBack = (nodeId: string) =>
      Effect.gen(function* () {
        if (!(yield* Ref.getAndSet(handBackDue, false))) return
        const listed = yield* held
        const needs = yield* Ref.getAndSet(handBackNeeds, [])
        const beat = yield* Effect.either(
          call((nodes, options) =>
            nodes.Heartbeat({ node_id: nodeId, ...listed, hand_back_unlisted: true, memory_needs: needs }, options)
          )
        )
        // A lost session's jobs are re-queued by the controller anyway; a failed call is tried again.
        if (beat._tag === "Right" && !beat.right.ok) return yield* dropSession(nodeId, "heartbeat refused")
        if (beat._tag === "Left") {
          if (sessionLost(beat.left)) return yield* dropSession(nodeId, beat.left.message)
          yield* Ref.update(handBackNeeds, (later) => [...needs, ...later])
          yield* Ref.set(handBackDue, true)
          yield* Effect.logWarning(`hand-back failed: ${beat.left.message}`)
          yield* Effect.sleep(Duration.millis(config.pollIntervalMs))
        }
      })

    const heartbeatLoop = Effect.gen(function* () {
      for (;;) {
        const current = yield* currentSession
        yield* Effect.sleep(Duration.millis(current.heartbeatMs))
        const listed = yield* held
        const beat = yield* Effect.either(
          call((nodes, options) => nodes.Heartbeat({ node_id: current.nodeId, ...listed }, options))
        )
        if (beat._tag === "Left") {
          if (sessionLost(beat.left)) yield* dropSession(current.nodeId, beat.left.message)
          else yield* Effect.logWarning(`heartbeat failed: ${beat.left.message}`)
          continue
        }
        if (!beat.right.ok) {
          yield* dropSession(current.nodeId, "heartbeat refused")
          yield* currentSession
        }
        // Final reports that found the controller (or its database) unreachable are sent again.
        yield* flushUnreported
      }
    })

    const pullLoop = Effect.gen(function* () {
      for (;;) {
        const current = yield* currentSession
        yield* sendHandBack(current.nodeId)
        const free = config.slots - (yield* Ref.get(running)).size
        // A controller that does not skip by free memory handed a job back again: nothing more is
        // pulled until a score gives its memory back.
        if (free === 0 || ((yield* Ref.get(memoryShort)) && (yield* Ref.get(admitted)) > 0)) {
          yield* Effect.sleep(Duration.millis(config.pollIntervalMs))
          continue
        }
        const freed = yield* Ref.get(memoryFreed)
        const freeMemory = yield* ledger.free
        const asked = yield* Clock.currentTimeMillis
        // Right after a cancelled long-poll: a PullWork answered at once, then a hand-back.
        const afterCancel = yield* Ref.getAndSet(pullCancelled, false)
        const pull = call((nodes, options) =>
          nodes.PullWork(
            {
              node_id: current.nodeId,
              max_jobs: free,
              wait_ms: afterCancel ? 0 : PULL_WAIT_MS,
              // 0 would read as "unknown" (no job skipped).
              free_memory_bytes: Math.max(1, freeMemory),
              memory_budget_bytes: budget
            },
            options
          )
        )
        // A wait that began short of memory ends when a score gives memory back (the call is
        // cancelled): the next PullWork says the new free memory, and gets a job skipped before.
        const pulled = yield* Effect.either(
          freeMemory < budget && !afterCancel
            ? Effect.raceFirst(pull, Effect.as(Deferred.await(freed), undefined))
            : pull
        )
        // The controller may have claimed work for the cancelled call just before it ended, an
        // answer this node never reads. The next PullWork (answered at once) reaches the
        // controller after the cancel, which interrupts that call (a hand-back Heartbeat sent
        // straight after the cancel may be handled before it); the hand-back after it lists every
        // claim this node holds, and the controller re-queues the one it never read at once
        // instead of a session TTL later.
        if (afterCancel) yield* Ref.set(handBackDue, true)
        if (pulled._tag === "Left") {
          if (sessionLost(pulled.left)) yield* dropSession(current.nodeId, pulled.left.message)
          else yield* Effect.logWarning(`pull failed: ${pulled.left.message}`)
          yield* Effect.sleep(Duration.millis(config.pollIntervalMs))
          continue
        }
        const answer = pulled.right
        if (answer === undefined) {
          yield* Ref.set(pullCancelled, true)
          continue
        }
        const settling = yield* Effect.forEach(answer.jobs, (job) =>
          Effect.gen(function* () {
            const settled = yield* Deferred.make<void>()
            yield* Ref.update(running, (set) => set.add(workKey(job.id, job.segment?.index)))
            // In the agent's scope: when the node stops, running jobs are interrupted and their
            // decoders killed (an unfinished job is re-queued by the controller).
            yield* Effect.forkIn(runJob(job, settled), agentScope)
            return settled
          })
        )
        // The memory free is known only once the jobs just pulled are admitted (or handed back).
        yield* Effect.forEach(settling, Deferred.await, { discard: true })
        // The controller held the call until work arrived or the wait was up; one that answers
        // "none" at once does not long-poll (an older controller): poll at the interval.
        const answeredAfter = (yield* Clock.currentTimeMillis) - asked
        if (answer.jobs.length === 0 && answeredAfter < PULL_WAIT_MS / 2 && !afterCancel)
          yield* Effect.sleep(Duration.millis(config.pollIntervalMs))
      }
    })

    yield* Effect.forkScoped(heartbeatLoop)
    yield* Effect.forkScoped(pullLoop)
    return {
      /** True while the node holds a session (readiness). */
      registered: Effect.map(Ref.get(session), Option.isSome)
    } as const
  }),
  dependencies: [Ffmpeg.Default]
}) {}
