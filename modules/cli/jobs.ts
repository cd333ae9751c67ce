/**
 * `svc jobs submit|get|list|cancel|wait` against a controller's svc.v1.Jobs (address and token
 * as a compute node reads them; see connection.ts). `wait` follows a job to its end with a
 * progress line and writes its result like `svc score` does.
 */
import * as grpc from "@grpc/grpc-js"
import { Args, Command, Options } from "@effect/cli"
import { Duration, Effect, Option } from "effect"
import { defaultControllerAddress } from "../config/ports.ts"
import type { LadderResponseLike } from "../formats/ladder.ts"
import { reportOf } from "../formats/libvmaf.ts"
import type { ScoreResult } from "../scorer/index.ts"
import { bearerMetadata, type ClientOptions, callUnary, type GrpcCallError } from "../transport/grpc/client.ts"
import { controllerClient, controllerOptions, readToken } from "./connection.ts"
import { CommandFailed, UsageError } from "./errors.ts"
import { inputsOf, parseModels, scoreFlags, scoreRequest } from "./flags.ts"
import { writeLadderOutputs } from "./ladder.ts"
import { type LadderRequestBody, ladderRequest, parseRenditions, renditionFlag } from "./ladder-flags.ts"
import { expectedFrames } from "./inputs.ts"
import { chosenFormat, type OutputChoice, outputFlags, writeOutputs } from "./output.ts"
import { hintingRoots, sentPath } from "./paths.ts"
import { type RenditionProgressLike, renditionProgressText, startProgress } from "./progress.ts"

/** A job as the controller sends it (proto field names). */
interface Job {
  readonly id: string
  readonly tenant_id: string
  readonly state: string
  readonly request: {
    readonly reference: string
    readonly distorted: string
    readonly model: string
    readonly options?: Readonly<Record<string, unknown>> | null
  } | null
  readonly created_at?: { readonly seconds: number; readonly nanos: number } | null
  readonly started_at?: { readonly seconds: number; readonly nanos: number } | null
  readonly finished_at?: { readonly seconds: number; readonly nanos: number } | null
  readonly node_id: string
  readonly result: ScoreResult | null
  /** A ladder job: its request and result (request and result are then null). */
  readonly ladder?: LadderRequestBody | null
  readonly ladder_result?: LadderResponseLike | null
  readonly error: string
  readonly frames_done: number
  /** A ladder job's frames scored per rendition (absent from an older controller). */
  readonly rendition_progress?: ReadonlyArray<RenditionProgressLike> | null
  /** A segment job's segments (absent from an older controller). */
  readonly segments?: ReadonlyArray<{ readonly state: string; readonly node_id: string }> | null
}

/** "segments 4/6 on 3 nodes" for a segment job: finished of all, the nodes that took them. */
const segmentsText = (job: Job): string => {
  const segments = job.segments ?? []
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

const stateNames = ["pending", "running", "finished", "cancelled", "failed"] as const
const wireState = (name: string) => `JOB_STATE_${name.toUpperCase()}`
const shortState = (state: string) => state.replace(/^JOB_STATE_/, "").toLowerCase()

const failedCall = (error: GrpcCallError) =>
  new CommandFailed({ message: `${error.method}: ${grpc.status[error.code] ?? error.code}: ${error.message}` })

/** One unary Jobs call with the token, failures as one line. */
const jobsCall = <A>(options: ClientOptions, method: string, request: object) =>
  Effect.scoped(
    Effect.gen(function* () {
      const client = yield* controllerClient("svc.v1.Jobs", options)
      const token = yield* readToken
      return yield* callUnary<A>(client, method, request, bearerMetadata(token)).pipe(Effect.mapError(failedCall))
    })
  )

/** The caller's jobs (StreamJobs without follow). */
const listJobs = (options: ClientOptions, request: object) =>
  Effect.scoped(
    Effect.gen(function* () {
      const client = yield* controllerClient("svc.v1.Jobs", options)
      const token = yield* readToken
      return yield* Effect.async<ReadonlyArray<Job>, CommandFailed>((resume) => {
        const jobs: Array<Job> = []
        const start: unknown = Reflect.get(client, "StreamJobs")
        if (typeof start !== "function") {
          resume(Effect.fail(new CommandFailed({ message: "the controller client has no StreamJobs" })))
          return
        }
        const deadline = new Date(Date.now() + 30_000)
        const call: grpc.ClientReadableStream<Job> = start.call(client, request, bearerMetadata(token), { deadline })
        call.on("data", (job: Job) => jobs.push(job))
        call.on("error", (error: grpc.ServiceError) =>
          resume(
            Effect.fail(
              new CommandFailed({ message: `StreamJobs: ${grpc.status[error.code] ?? error.code}: ${error.details}` })
            )
          )
        )
        call.on("end", () => resume(Effect.succeed(jobs)))
        return Effect.sync(() => call.cancel())
      })
    })
  )

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
  return `${job.id} ${shortState(job.state)}${score}${error}`
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
        const ladder = ladderRequest(
          sentPath(reference.value),
          renditions.map((rendition) => ({ ...rendition, distorted: sentPath(rendition.distorted) })),
          flags,
          models[0],
          false
        )
        const typed = [reference.value, ...renditions.map((rendition) => rendition.distorted)]
        const job = yield* hintingRoots(typed, jobsCall<Job>(options, "SubmitJob", { ladder }))
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
        jobsCall<Job>(options, "SubmitJob", { request })
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
  Effect.flatMap(controllerOptions(controller), (options) =>
    Effect.flatMap(jobsCall<Job>(options, "GetJob", { id }), printJson)
  )
).pipe(Command.withDescription("Print a job as JSON (--json says so explicitly), with its segments"))

const list = Command.make(
  "list",
  {
    state: Options.choice("state", stateNames).pipe(
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
        states: flags.state.map(wireState),
        follow: false,
        limit: Option.getOrElse(flags.limit, () => 0)
      })
      if (flags.json) return yield* printJson(jobs)
      const rows = jobs.map((job) => {
        const created = seconds(job.created_at)
        const what = job.ladder ? `ladder of ${job.ladder.renditions.length}` : (job.request?.distorted ?? "")
        const progress =
          job.state === "JOB_STATE_RUNNING" ? renditionProgressText(job.rendition_progress ?? [], undefined) : ""
        // What became of it: the score, the progress, or why it failed.
        const outcome = [scoreText(job), progress, segmentsText(job), job.error === "" ? "" : `error: ${job.error}`]
          .filter((part) => part !== "")
          .join("  ")
        return [
          job.id,
          shortState(job.state),
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
    const job = yield* jobsCall<Job>(options, "CancelJob", { id })
    yield* Effect.sync(() => process.stdout.write(`${describeJob(job)}\n`))
  })
).pipe(Command.withDescription("Cancel a pending or running job"))

/** A numeric option of a scoring request (0 when absent). */
const optionNumber = (options: Readonly<Record<string, unknown>>, name: string) =>
  typeof options[name] === "number" ? Number(options[name]) : 0

/** The raw-YUV geometry in a scoring request's options; undefined without a width (containers). */
const rawGeometry = (options: Readonly<Record<string, unknown>>) => {
  const number = (name: string) => optionNumber(options, name)
  return number("width") > 0
    ? {
        width: number("width"),
        height: number("height"),
        pixelFormat: String(options["pixel_format"] || "420"),
        bitdepth: number("bitdepth") || 8
      }
    : undefined
}

const finalStates = new Set(["JOB_STATE_FINISHED", "JOB_STATE_CANCELLED", "JOB_STATE_FAILED"])

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
      const first = yield* jobsCall<Job>(options, "GetJob", { id: flags.id })
      const request = first.request
      const rawOptions = request?.options ?? {}
      const number = (name: string) => optionNumber(rawOptions, name)
      const raw = rawGeometry(rawOptions)
      // The inputs may be readable here too (one machine); then the bar knows its total. A
      // ladder's renditions all give as many frames as its reference (else the job fails).
      const ladderReference = first.ladder?.reference
      const total =
        request !== null
          ? yield* Effect.promise(() =>
              expectedFrames(request.reference, request.distorted, raw, {
                frameCount: number("frame_cnt"),
                frameSkipRef: number("frame_skip_ref"),
                frameSkipDist: number("frame_skip_dist"),
                subsample: number("subsample") || 1
              })
            )
          : ladderReference !== undefined
            ? yield* Effect.promise(() => ladderFrames(ladderReference, first.ladder?.options ?? {}))
            : undefined
      const progress = startProgress({ label: `job ${flags.id.slice(0, 8)}`, total, quiet: flags.quiet })
      const poll = Effect.gen(function* () {
        for (;;) {
          const job = yield* jobsCall<Job>(options, "GetJob", { id: flags.id })
          progress.update(
            job.frames_done,
            [renditionProgressText(job.rendition_progress ?? [], total), segmentsText(job)]
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
      if (job.state !== "JOB_STATE_FINISHED" || job.result === null)
        return yield* new CommandFailed({
          message: `job ${job.id} ${shortState(job.state)}${job.error ? `: ${job.error}` : ""}`
        })
      const started = seconds(job.started_at)
      const finished = seconds(job.finished_at)
      const features = rawOptions["features"]
      // The size scored: the raw options', else what the node's pipeline read (Y4M, any container).
      const scored = job.result.provenance.reference_input
      const report = reportOf(job.result, {
        width: raw?.width ?? scored?.width ?? 0,
        height: raw?.height ?? scored?.height ?? 0,
        seconds: started !== undefined && finished !== undefined ? finished - started : 0,
        extras: Array.isArray(features) ? features.map(String) : undefined
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
const ladderFrames = (reference: string, options: Readonly<Record<string, unknown>>) => {
  const number = (name: string) => optionNumber(options, name)
  return expectedFrames(reference, reference, rawGeometry(options), {
    frameCount: number("frame_cnt"),
    frameSkipRef: number("frame_skip_ref"),
    frameSkipDist: number("frame_skip_ref"),
    subsample: number("subsample") || 1
  })
}

/** Every page of a finished ladder job's per-frame results (GetJob with frames_offset). */
const wholeLadderResult = (options: ClientOptions, job: Job, result: LadderResponseLike) =>
  Effect.gen(function* () {
    const frames = result.renditions.map((rendition) => [...rendition.frames])
    const total = Math.max(0, ...result.renditions.map((rendition) => rendition.frame_count))
    while (frames.some((list, index) => list.length < (result.renditions[index]?.frame_count ?? 0))) {
      const offset = Math.min(...frames.map((list) => list.length))
      if (offset >= total) break
      const page = yield* jobsCall<Job>(options, "GetJob", { id: job.id, frames_offset: offset })
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
const writeLadderJob = (options: ClientOptions, job: Job, ladder: LadderRequestBody, flags: OutputChoice) =>
  Effect.gen(function* () {
    if (job.state !== "JOB_STATE_FINISHED" || !job.ladder_result)
      return yield* new CommandFailed({
        message: `job ${job.id} ${shortState(job.state)}${job.error ? `: ${job.error}` : ""}`
      })
    const result = yield* wholeLadderResult(options, job, job.ladder_result)
    const started = seconds(job.started_at)
    const finished = seconds(job.finished_at)
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
        seconds: started !== undefined && finished !== undefined ? finished - started : 0,
        extras: Array.isArray(features) ? features.map(String) : []
      }
    )
  })

export const jobsCommand = Command.make("jobs").pipe(
  Command.withDescription("Jobs on a controller: submit, get, list, cancel, wait"),
  Command.withSubcommands([submit, get, list, cancel, wait])
)
