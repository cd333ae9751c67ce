/**
 * `svc jobs submit|get|list|cancel|wait` against a controller's svc.v1.Jobs (address and token
 * as a compute node reads them; see connection.ts). `wait` follows a job to its end with a
 * progress line and writes its result like `svc score` does.
 */
import { Args, Command, Options } from "@effect/cli"
import { Chunk, Duration, Effect, Option, Stream } from "effect"
import { defaultControllerAddress } from "../config/ports.ts"
import type { LadderResponseLike } from "../formats/ladder.ts"
import { reportOf } from "../formats/libvmaf.ts"
import type { ScoreResult } from "../scorer/index.ts"
import {
  type CallOptions,
  type ClientOptions,
  type GrpcCallError,
  type ServiceClient,
  serviceClient,
  statusName
} from "../transport/grpc/client.ts"
import { SHORT_JOB_STATES, shortJobState, WIRE_JOB_STATES } from "../transport/grpc/job-states.ts"
import type {
  Job,
  JobState,
  Outgoing,
  ScoreLadderRequest,
  ScoreLadderResponse,
  ScoreOptions,
  ScoreResponse,
  StreamJobsRequest
} from "../transport/grpc/svc-v1.ts"
import { controllerOptions, readToken } from "./connection.ts"
import { CommandFailed, UsageError } from "./errors.ts"
import { inputsOf, parseModels, scoreFlags, scoreRequest } from "./flags.ts"
import { writeLadderOutputs } from "./ladder.ts"
import { ladderRequest, parseRenditions, renditionFlag } from "./ladder-flags.ts"
import { expectedFrames } from "./inputs.ts"
import { chosenFormat, type OutputChoice, outputFlags, writeOutputs } from "./output.ts"
import { hintingRoots, sentPath } from "./paths.ts"
import { renditionProgressText, startProgress } from "./progress.ts"

/** "segments 4/6 on 3 nodes" for a segment job: finished of all, the nodes that took them. */
const segmentsText = (job: Job): string => {
  const segments = job.segments
  if (segments.length === 0) return ""
  const finished = segments.filter((segment) => segment.state === "JOB_STATE_FINISHED").length
  const nodes = new Set(segments.map((segment) => segment.node_id).filter((id) => id !== "")).size
  return `segments ${finished}/${segments.length} on ${nodes} node${nodes === 1 ? "" : "s"}`
}

const controller = Options.text("controller").pipe(
  Options.withPseudoName("HOST:PORT"),
  Options.withDescription(
    `the controller's gRPC address host:port (default: SVC_CONTROLLER_ADDR, else ${defaultControllerAddress})`
  ),
  Options.optional
)
const asJson = Options.boolean("json").pipe(Options.withDescription("print JSON"))

const failedCall = (error: GrpcCallError) =>
  new CommandFailed({ message: `${error.method}: ${statusName(error.code)}: ${error.message}` })

/** Calls on the controller's Jobs service with the token, failures as one line. */
const withJobs = <A>(
  options: ClientOptions,
  use: (jobs: ServiceClient<"svc.v1.Jobs">, call: CallOptions) => Effect.Effect<A, GrpcCallError>
) =>
  Effect.scoped(
    Effect.gen(function* () {
      const jobs = yield* serviceClient("svc.v1.Jobs", options)
      const bearer = yield* readToken
      return yield* use(jobs, { bearer }).pipe(Effect.mapError(failedCall))
    })
  )

const getJob = (options: ClientOptions, id: string, framesOffset = 0) =>
  withJobs(options, (jobs, call) => jobs.GetJob({ id, frames_offset: framesOffset }, call))

/** The caller's jobs (StreamJobs without follow). */
const listJobs = (options: ClientOptions, request: Outgoing<StreamJobsRequest>) =>
  withJobs(options, (jobs, call) =>
    Effect.map(
      Stream.runCollect(jobs.StreamJobs(request, { ...call, timeout: Duration.seconds(30) })),
      Chunk.toReadonlyArray
    )
  )

/** A finished job's result as the score's readers take it; undefined when a part is missing. */
const scoreResultOf = (
  result: Omit<ScoreResponse, "thumbnails"> & Partial<Pick<ScoreResponse, "thumbnails">>
): ScoreResult | undefined => {
  const { provenance, pooled } = result
  if (provenance?.library == null || pooled === null) return undefined
  const { alignment, ...rest } = result
  return {
    ...rest,
    ...(alignment ? { alignment } : {}),
    pooled,
    provenance: {
      ...provenance,
      library: provenance.library,
      reference_input: provenance.reference_input ?? undefined,
      distorted_input: provenance.distorted_input ?? undefined
    }
  }
}

/** A finished ladder job's result as the ladder's readers take it; undefined when a part is missing. */
const ladderResultOf = (response: ScoreLadderResponse): LadderResponseLike | undefined => {
  const renditions = response.renditions.flatMap((rendition) => {
    const scored = scoreResultOf(rendition)
    return scored === undefined || rendition.summary === null
      ? []
      : [{ ...scored, label: rendition.label, summary: rendition.summary }]
  })
  if (response.provenance === null || renditions.length !== response.renditions.length) return undefined
  return { renditions, provenance: response.provenance }
}

const printJson = (value: unknown) => Effect.sync(() => process.stdout.write(`${JSON.stringify(value, null, 2)}\n`))

const seconds = (stamp: Job["created_at"]) => (stamp ? stamp.seconds + stamp.nanos / 1e9 : undefined)

/** The pooled score(s) of a finished job: one, or one per ladder rendition. */
const scoreText = (job: Job): string =>
  job.state !== "JOB_STATE_FINISHED"
    ? ""
    : job.ladder_result
      ? job.ladder_result.renditions.map((rendition) => `${rendition.label} ${rendition.score.toFixed(6)}`).join(", ")
      : job.result
        ? job.result.score.toFixed(6)
        : ""

/** Rows as columns two spaces apart (the last one unpadded), one line each. */
const columns = (rows: ReadonlyArray<ReadonlyArray<string>>): string => {
  const widths = (rows[0] ?? []).map((_, column) => Math.max(...rows.map((row) => row[column]?.length ?? 0)))
  return rows
    .map((row) =>
      row
        .map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column] ?? 0)))
        .join("  ")
        .trimEnd()
    )
    .map((line) => `${line}\n`)
    .join("")
}

const describeJob = (job: Job): string => {
  const score = scoreText(job) === "" ? "" : ` score ${scoreText(job)}`
  const error = job.error === "" ? "" : ` error: ${job.error}`
  return `${job.id} ${shortJobState(job.state)}${score}${error}`
}

/** `--segment_frames N` (also `--segment-frames`): split the job into segments of N frames. */
const segmentFramesFlag = Options.integer("segment_frames").pipe(
  Options.withAlias("segment-frames"),
  Options.withDescription(
    "split the title into segments of N frames scored in parallel by the controller's nodes and merged exactly (0: one piece; at least 24)"
  ),
  Options.optional
)

const submit = Command.make(
  "submit",
  { ...scoreFlags, rendition: renditionFlag, segmentFrames: segmentFramesFlag, controller },
  (flags) =>
    Effect.gen(function* () {
      const models = yield* parseModels(flags.model)
      if (models.length > 1 || models.some((model) => model.directory !== undefined))
        return yield* new UsageError({
          message: "a job scores with one model, named as the controller's nodes know it"
        })
      const options = yield* controllerOptions(flags.controller)
      if (flags.rendition.length > 0) {
        // A ladder job: REF and its renditions (no DIS).
        const reference = Option.orElse(flags.reference, () => flags.referenceFlag)
        if (Option.isNone(reference) || Option.isSome(flags.distorted) || Option.isSome(flags.distortedFlag))
          return yield* new UsageError({
            message:
              "a ladder job takes the reference and its renditions: svc jobs submit REF --rendition LABEL=PATH ..."
          })
        const renditions = yield* parseRenditions(flags.rendition)
        const built = ladderRequest(
          sentPath(reference.value),
          renditions.map((rendition) => ({ ...rendition, distorted: sentPath(rendition.distorted) })),
          flags,
          models[0],
          false
        )
        // --segment-frames is the whole ladder's option: every rendition is scored over the same segments.
        const ladder = Option.match(flags.segmentFrames, {
          onNone: () => built,
          onSome: (segmentFrames) => ({ ...built, options: { ...built.options, segment_frames: segmentFrames } })
        })
        const typed = [reference.value, ...renditions.map((rendition) => rendition.distorted)]
        const job = yield* hintingRoots(
          typed,
          withJobs(options, (jobs, call) => jobs.SubmitJob({ ladder }, call))
        )
        return yield* Effect.sync(() => process.stdout.write(`${job.id}\n`))
      }
      const inputs = yield* inputsOf(flags)
      const scored = scoreRequest(
        { reference: sentPath(inputs.reference), distorted: sentPath(inputs.distorted) },
        flags,
        models[0],
        false
      )
      const request = Option.match(flags.segmentFrames, {
        onNone: () => scored,
        onSome: (segmentFrames) => ({ ...scored, options: { ...scored.options, segment_frames: segmentFrames } })
      })
      const job = yield* hintingRoots(
        [inputs.reference, inputs.distorted],
        withJobs(options, (jobs, call) => jobs.SubmitJob({ request }, call))
      )
      yield* Effect.sync(() => process.stdout.write(`${job.id}\n`))
    })
).pipe(
  Command.withDescription(
    "Queue a score (REF DIS) or a ladder (REF --rendition LABEL=PATH ...) on the controller's nodes; prints the job's id"
  )
)

const jobId = Args.text({ name: "JOB_ID" })

const get = Command.make("get", { id: jobId, json: asJson, controller }, ({ id, controller }) =>
  Effect.flatMap(controllerOptions(controller), (options) => Effect.flatMap(getJob(options, id), printJson))
).pipe(Command.withDescription("Print a job as JSON (--json says so explicitly), with its segments"))

const list = Command.make(
  "list",
  {
    state: Options.choice("state", SHORT_JOB_STATES).pipe(
      Options.withDescription("only jobs in this state; repeatable"),
      Options.repeated
    ),
    limit: Options.integer("limit").pipe(Options.withDescription("at most N jobs (newest first)"), Options.optional),
    json: asJson,
    controller
  },
  (flags) =>
    Effect.gen(function* () {
      const options = yield* controllerOptions(flags.controller)
      const jobs = yield* listJobs(options, {
        states: flags.state.map((state) => WIRE_JOB_STATES[state]),
        follow: false,
        limit: Option.getOrElse(flags.limit, () => 0)
      })
      if (flags.json) return yield* printJson(jobs)
      const rows = jobs.map((job) => {
        const created = seconds(job.created_at)
        const what = job.ladder ? `ladder of ${job.ladder.renditions.length}` : (job.request?.distorted ?? "")
        const progress =
          job.state === "JOB_STATE_RUNNING" ? renditionProgressText(job.rendition_progress, undefined) : ""
        // What became of it: the score, the progress, or why it failed.
        const outcome = [scoreText(job), progress, segmentsText(job), job.error === "" ? "" : `error: ${job.error}`]
          .filter((part) => part !== "")
          .join("  ")
        return [
          job.id,
          shortJobState(job.state),
          created === undefined ? "" : new Date(created * 1000).toISOString(),
          what,
          outcome
        ]
      })
      yield* Effect.sync(() => process.stdout.write(columns([["JOB", "STATE", "CREATED", "INPUT", "RESULT"], ...rows])))
    })
).pipe(Command.withDescription("List your tenant's jobs, newest first"))

const cancel = Command.make("cancel", { id: jobId, controller }, ({ id, controller }) =>
  Effect.gen(function* () {
    const options = yield* controllerOptions(controller)
    const job = yield* withJobs(options, (jobs, call) => jobs.CancelJob({ id }, call))
    yield* Effect.sync(() => process.stdout.write(`${describeJob(job)}\n`))
  })
).pipe(Command.withDescription("Cancel a pending or running job"))

/** The raw-YUV geometry in a scoring request's options; undefined without a width (containers). */
const rawGeometry = (options: ScoreOptions | null) =>
  options !== null && options.width > 0
    ? {
        width: options.width,
        height: options.height,
        pixelFormat: options.pixel_format || "420",
        bitdepth: options.bitdepth || 8
      }
    : undefined

const finalStates: ReadonlySet<JobState> = new Set(["JOB_STATE_FINISHED", "JOB_STATE_CANCELLED", "JOB_STATE_FAILED"])

const wait = Command.make(
  "wait",
  {
    id: jobId,
    controller,
    timeout: Options.integer("timeout").pipe(
      Options.withDescription("give up after N seconds (exit 1); default: wait as long as it takes"),
      Options.optional
    ),
    quiet: Options.boolean("quiet").pipe(Options.withAlias("q"), Options.withDescription("no progress bar")),
    ...outputFlags
  },
  (flags) =>
    Effect.gen(function* () {
      const options = yield* controllerOptions(flags.controller)
      const first = yield* getJob(options, flags.id)
      const request = first.request
      const requestOptions = request?.options ?? null
      const raw = rawGeometry(requestOptions)
      // The inputs may be readable here too (one machine); then the bar knows its total. A
      // ladder's renditions all give as many frames as its reference (else the job fails).
      const ladderReference = first.ladder?.reference
      const total =
        request !== null
          ? yield* Effect.promise(() =>
              expectedFrames(request.reference, request.distorted, raw, {
                frameCount: requestOptions?.frame_cnt ?? 0,
                frameSkipRef: requestOptions?.frame_skip_ref ?? 0,
                frameSkipDist: requestOptions?.frame_skip_dist ?? 0,
                subsample: requestOptions?.subsample || 1
              })
            )
          : ladderReference !== undefined
            ? yield* Effect.promise(() => ladderFrames(ladderReference, first.ladder?.options ?? null))
            : undefined
      const progress = startProgress({ label: `job ${flags.id.slice(0, 8)}`, total, quiet: flags.quiet })
      const poll = Effect.gen(function* () {
        for (;;) {
          const job = yield* getJob(options, flags.id)
          progress.update(
            job.frames_done,
            [renditionProgressText(job.rendition_progress, total), segmentsText(job)]
              .filter((text) => text !== "")
              .join(" ")
          )
          if (finalStates.has(job.state)) return job
          yield* Effect.sleep(Duration.millis(500))
        }
      })
      const limited = Option.match(flags.timeout, {
        onNone: () => poll,
        onSome: (limit) =>
          poll.pipe(
            Effect.timeoutFail({
              duration: Duration.seconds(limit),
              onTimeout: () => new CommandFailed({ message: `job ${flags.id} did not end within ${limit} s` })
            })
          )
      })
      const job = finalStates.has(first.state)
        ? first
        : yield* limited.pipe(Effect.ensuring(Effect.sync(progress.finish)))
      progress.finish()
      if (job.ladder) return yield* writeLadderJob(options, job, job.ladder, flags)
      const result = job.state === "JOB_STATE_FINISHED" && job.result !== null ? scoreResultOf(job.result) : undefined
      if (result === undefined)
        return yield* new CommandFailed({
          message: `job ${job.id} ${shortJobState(job.state)}${job.error ? `: ${job.error}` : ""}`
        })
      const started = seconds(job.started_at)
      const finished = seconds(job.finished_at)
      const features = requestOptions?.features
      // The size scored: the raw options', else what the node's pipeline read (Y4M, any container).
      const scored = result.provenance.reference_input
      const report = reportOf(result, {
        width: raw?.width ?? scored?.width ?? 0,
        height: raw?.height ?? scored?.height ?? 0,
        seconds: started !== undefined && finished !== undefined ? finished - started : 0,
        extras: features
      })
      yield* writeOutputs(flags, report, {
        reference: request?.reference ?? "",
        distorted: request?.distorted ?? "",
        scoredOn: `controller ${options.address}, node ${job.node_id || "?"}`,
        scoreName: "vmaf",
        quiet: flags.quiet
      })
    })
).pipe(Command.withDescription("Wait for a job to end (progress on a terminal), then print its result like svc score"))

/** Frames of a ladder's reference after its skips and window, when it can be read here. */
const ladderFrames = (reference: string, options: ScoreOptions | null) =>
  expectedFrames(reference, reference, rawGeometry(options), {
    frameCount: options?.frame_cnt ?? 0,
    frameSkipRef: options?.frame_skip_ref ?? 0,
    frameSkipDist: options?.frame_skip_ref ?? 0,
    subsample: options?.subsample || 1
  })

/** Every page of a finished ladder job's per-frame results (GetJob with frames_offset). */
const wholeLadderResult = (options: ClientOptions, job: Job, result: LadderResponseLike) =>
  Effect.gen(function* () {
    const frames = result.renditions.map((rendition) => [...rendition.frames])
    const total = Math.max(0, ...result.renditions.map((rendition) => rendition.frame_count))
    while (frames.some((list, index) => list.length < (result.renditions[index]?.frame_count ?? 0))) {
      const offset = Math.min(...frames.map((list) => list.length))
      if (offset >= total) break
      const page = yield* getJob(options, job.id, offset)
      const renditions = page.ladder_result?.renditions ?? []
      if (renditions.every((rendition) => rendition.frames.length === 0))
        return yield* new CommandFailed({ message: `job ${job.id}: no frames from ${offset} on` })
      renditions.forEach((rendition, index) => {
        const list = frames[index]
        if (list !== undefined) list.splice(offset, list.length - offset, ...rendition.frames)
      })
    }
    return {
      ...result,
      renditions: result.renditions.map((rendition, index) => ({ ...rendition, frames: frames[index] ?? [] }))
    }
  })

/** `jobs wait` of a ladder job: its result like `svc ladder` writes it. */
const writeLadderJob = (options: ClientOptions, job: Job, ladder: ScoreLadderRequest, flags: OutputChoice) =>
  Effect.gen(function* () {
    const finished =
      job.state === "JOB_STATE_FINISHED" && job.ladder_result ? ladderResultOf(job.ladder_result) : undefined
    if (finished === undefined)
      return yield* new CommandFailed({
        message: `job ${job.id} ${shortJobState(job.state)}${job.error ? `: ${job.error}` : ""}`
      })
    const result = yield* wholeLadderResult(options, job, finished)
    const started = seconds(job.started_at)
    const ended = seconds(job.finished_at)
    const layout = chosenFormat(flags)
    const features = ladder.options?.features
    yield* writeLadderOutputs(
      {
        format: layout === "json" && Option.isNone(flags.output) ? "json" : "table",
        output: flags.output,
        layout: layout === "table" ? "json" : layout,
        html: flags.html
      },
      result,
      {
        reference: ladder.reference,
        distorted: (label) => ladder.renditions.find((rendition) => rendition.label === label)?.distorted ?? "",
        scoredOn: `controller ${options.address}, node ${job.node_id || "?"}`,
        seconds: started !== undefined && ended !== undefined ? ended - started : 0,
        extras: features ?? []
      }
    )
  })

export const jobsCommand = Command.make("jobs").pipe(
  Command.withDescription("Jobs on a controller: submit, get, list, cancel, wait"),
  Command.withSubcommands([submit, get, list, cancel, wait])
)
