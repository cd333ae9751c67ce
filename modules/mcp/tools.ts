/**
 * svc-mcp's tools: the controller's job and scoring calls, and the result tools an assistant needs
 * to explain a score. Every tool has input and output schemas with descriptions written for a
 * model; it answers with structured content plus a one-line summary, and any failure (a
 * controller refusal with its status and message verbatim, an unreachable controller, an
 * unreadable token file) becomes a tool error (`isError: true`), never a crashed server.
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import type { CallToolResult, ServerNotification, ServerRequest } from "@modelcontextprotocol/sdk/types.js"
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js"
import { Data, Duration, Effect, Runtime } from "effect"
import * as z from "zod"
import type { TokenFileError } from "../config/token-file.ts"
import type { TrackedCall } from "./cancellation.ts"
import { buildInfo } from "../runtime/build-info.ts"
import type { Controller, ControllerError } from "./controller.ts"
import { builtinModels } from "./models.ts"
import {
  type Comparison,
  ComparisonSchema,
  compareFrames,
  isFinal,
  jobLine,
  JobSchema,
  JobStateSchema,
  jobView,
  type JobView,
  ladderLine,
  LadderViewSchema,
  ladderView,
  ModelListSchema,
  modelListView,
  type ScoreSummary,
  ScoreSummarySchema,
  scoreLine,
  scoreSummary,
  toWireState,
  WorstFramesSchema,
  worstFrames,
  worstShotsOf
} from "./views.ts"
import type {
  Outgoing,
  RenditionOptions,
  ScoreLadderRequest,
  ScoreOptions,
  ScoreRequest
} from "../transport/grpc/svc-v1.ts"

/** A request the tool itself cannot serve (for example worst frames of an unfinished job). */
export class ToolRefusal extends Data.TaggedError("ToolRefusal")<{ readonly message: string }> {}

export type ToolFailure = ControllerError | TokenFileError | ToolRefusal

export type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>

/** What the tools of one server instance use. */
export interface ToolContext {
  readonly controller: Controller
  /** The bearer token to send for this call (stdio: the configured one; HTTP: the request's). */
  readonly bearer: (extra: Extra) => Effect.Effect<string | undefined, TokenFileError>
  readonly runtime: Runtime.Runtime<never>
  /** Where a call registers to be cancellable from another request (stateless HTTP). */
  readonly track?: (extra: Extra) => TrackedCall
}

/** The text of a tool error: the controller's status and message verbatim. */
export const failureText = (failure: ToolFailure): string => {
  switch (failure._tag) {
    case "ControllerRefusal":
      return `the controller refused ${failure.method}: ${failure.status}: ${failure.message}`
    case "ControllerUnreachable":
      if (failure.status === "DEADLINE_EXCEEDED")
        return `the controller at ${failure.address} did not answer in time (${failure.status}: ${failure.message})`
      return (
        `the controller at ${failure.address} is unreachable (${failure.status}: ${failure.message}); ` +
        "check that svc-controller is running and SVC_CONTROLLER_ADDR names it"
      )
    case "TokenFileError":
      return `cannot read the controller token file ${failure.path}: ${failure.message}`
    case "ToolRefusal":
      return failure.message
  }
}

// --- input schemas ----------------------------------------------------------------------------

const jobId = z.string().min(1).describe("Job identifier (UUID) as submit_job or list_jobs returned it")

const ScoreOptionsSchema = z
  .object({
    width: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe("Frame width in pixels. Required for raw .yuv, ignored for .y4m"),
    height: z.number().int().min(1).optional().describe("Frame height in pixels. Required for raw .yuv"),
    pixel_format: z.enum(["420", "422", "444"]).optional().describe("Chroma subsampling of raw .yuv input"),
    bitdepth: z
      .union([z.literal(8), z.literal(10), z.literal(12), z.literal(16)])
      .optional()
      .describe("Bits per sample of raw .yuv input (above 8: 16-bit little-endian words)"),
    features: z
      .array(z.string().min(1))
      .max(32)
      .optional()
      .describe(
        "Extra metrics besides VMAF's own features: psnr, float_ssim, float_ms_ssim, float_vif, float_adm, float_motion, float_psnr, ciede, psnr_hvs, cambi, xpsnr (FFmpeg's XPSNR per plane; identical planes give null, infinity), ssimulacra2 (SSIMULACRA 2.1, 100 = identical)"
      ),
    subsample: z.number().int().min(1).max(1000).optional().describe("Score every Nth frame only (faster)"),
    frame_cnt: z.number().int().min(1).optional().describe("Score at most this many frames"),
    frame_skip_ref: z.number().int().min(0).optional().describe("Frames to skip at the start of the reference"),
    frame_skip_dist: z.number().int().min(0).optional().describe("Frames to skip at the start of the distorted clip"),
    threads: z.number().int().min(1).max(64).optional().describe("Threads for this score (results do not change)"),
    shots: z
      .boolean()
      .optional()
      .describe(
        "Find the reference's hard cuts and score each shot (scene); describe_worst_frames then names the worst shots"
      ),
    shot_threshold: z
      .number()
      .min(0)
      .max(1)
      .optional()
      .describe("Cut threshold, a histogram distance 0..1 (default 0.3)"),
    shot_min_frames: z.number().int().min(0).max(100000).optional().describe("Shortest shot in frames (default 8)"),
    frame_rate: z
      .number()
      .min(0)
      .max(1000)
      .optional()
      .describe("Frames per second for xpsnr's temporal term; default the input's own (raw input: 25)"),
    sync: z
      .enum(["off", "auto"])
      .optional()
      .describe(
        "auto: find where each clip starts (late start, slate, leader) and frames dropped or inserted mid-clip, then score the paired frames; the result's alignment says what was found (default off)"
      ),
    sync_window: z
      .number()
      .int()
      .min(0)
      .max(10000)
      .optional()
      .describe("With sync auto: the largest offset searched, in frames (default 120)")
  })
  .describe("Geometry of raw input and scoring options; .y4m inputs need none")

const scoreInput = {
  reference: z
    .string()
    .min(1)
    .describe("Absolute path (or file:// URL) of the pristine reference clip, .yuv or .y4m, under a scoring root"),
  distorted: z.string().min(1).describe("Absolute path of the encoded clip to judge, same geometry as the reference"),
  model: z
    .string()
    .optional()
    .describe(
      'VMAF model name (see list_models); default vmaf_v0.6.1; "auto" picks the 4K model for a 2160p reference'
    ),
  options: ScoreOptionsSchema.optional()
}

/** submit_job's input: a score's, and how to split it into segments across the nodes. */
const submitInput = {
  ...scoreInput,
  segment_frames: z
    .number()
    .int()
    .min(0)
    .optional()
    .describe(
      "Split a long clip into segments of this many frames (at least 24), scored in parallel by the tenant's nodes and merged exactly (the same values as one pass); 0 or absent: one piece (or the controller's default)"
    )
}

type ScoreOptionsInput = z.infer<typeof ScoreOptionsSchema>

const ladderInput = {
  reference: scoreInput.reference,
  renditions: z
    .array(
      z.object({
        label: z
          .string()
          .regex(/^[A-Za-z0-9][A-Za-z0-9._+-]{0,63}$/)
          .describe('Unique short name of the rendition, e.g. "1080p-6M" (letters, digits, . _ + -)'),
        distorted: z.string().min(1).describe("Absolute path of the rendition's encoded clip, under a scoring root"),
        options: z
          .object({
            width: z.number().int().min(1).optional().describe("Width of a raw .yuv rendition"),
            height: z.number().int().min(1).optional().describe("Height of a raw .yuv rendition"),
            pixel_format: z.enum(["420", "422", "444"]).optional(),
            bitdepth: z.union([z.literal(8), z.literal(10), z.literal(12), z.literal(16)]).optional(),
            scale: z
              .enum(["bicubic", "lanczos", "bilinear", "neighbor", "none"])
              .optional()
              .describe("How a rendition of another size is scaled to the reference's (default bicubic)"),
            frame_skip_dist: z.number().int().min(0).optional().describe("Frames to skip at the rendition's start")
          })
          .optional()
          .describe("What one rendition may set for itself; everything else is the ladder's options")
      })
    )
    .min(1)
    .max(16)
    .describe("The renditions (encodes of the reference at several sizes/bitrates/settings), 1 to 16"),
  model: scoreInput.model,
  options: ScoreOptionsSchema.optional().describe(
    "The whole ladder's options (raw reference geometry, frames to score, extra features)"
  )
}

/** submit_ladder_job's input: a ladder's, and how to split its title into segments across the nodes. */
const submitLadderInput = { ...ladderInput, segment_frames: submitInput.segment_frames }

type LadderInput = {
  readonly reference: string
  readonly renditions: ReadonlyArray<{
    readonly label: string
    readonly distorted: string
    readonly options?: Outgoing<RenditionOptions> | undefined
  }>
  readonly model?: string | undefined
  readonly options?: (ScoreOptionsInput & { readonly segment_frames?: number }) | undefined
}

const wireLadder = (input: LadderInput, perFrame: boolean): Outgoing<ScoreLadderRequest> => ({
  reference: input.reference,
  renditions: input.renditions.map((rendition) => ({
    label: rendition.label,
    distorted: rendition.distorted,
    options: rendition.options ?? null
  })),
  model: input.model ?? "",
  options: { ...input.options, per_frame: perFrame }
})

const distortedIn = (input: LadderInput) => (label: string) =>
  input.renditions.find((rendition) => rendition.label === label)?.distorted ?? ""

const wireRequest = (
  reference: string,
  distorted: string,
  model: string | undefined,
  options: (ScoreOptionsInput & { readonly segment_frames?: number }) | undefined,
  perFrame: boolean
): Outgoing<ScoreRequest> => {
  const wireOptions: Outgoing<ScoreOptions> = { ...options, per_frame: perFrame }
  return { reference, distorted, model: model ?? "", options: wireOptions }
}

// --- results ----------------------------------------------------------------------------------

interface Answer<A> {
  readonly structured: A
  readonly text: string
}

const toResult = <A extends Record<string, unknown>>(answer: Answer<A>): CallToolResult => ({
  content: [{ type: "text", text: answer.text }],
  structuredContent: answer.structured
})

const toError = (failure: ToolFailure): CallToolResult => ({
  content: [{ type: "text", text: failureText(failure) }],
  isError: true
})

/** How often wait_job asks for the job. */
const waitPollInterval = Duration.millis(500)

// --- the server -------------------------------------------------------------------------------

const instructions = [
  "svc scores video quality with VMAF (0-100, higher is better; ~93+ is usually indistinguishable from the source).",
  "Use `score` for a quick synchronous score of one reference/distorted pair, `submit_job` then `wait_job` for long clips,",
  "`describe_worst_frames` to explain a low score, `compare` to pick the better of two encodes of one reference,",
  "`score_ladder` (or `submit_ladder_job`) to score a whole encoding ladder against one reference in one pass.",
  "Inputs are paths on the scoring machines and must lie under the tenant's scoring roots; raw .yuv needs",
  "options.width, options.height, options.pixel_format and options.bitdepth."
].join(" ")

/** An MCP server whose tools call the controller with the token `context.bearer` gives. */
export const makeMcpServer = (context: ToolContext): McpServer => {
  const server = new McpServer(
    { name: "svc-mcp", title: "svc video quality (VMAF)", version: buildInfo.version },
    { capabilities: { tools: {} }, instructions }
  )
  const { controller } = context
  /** Runs one tool call with the caller's token; one log line per call (never the token). */
  const run = <A extends Record<string, unknown>>(
    tool: string,
    extra: Extra,
    answer: (token: string | undefined) => Effect.Effect<Answer<A>, ToolFailure>
  ): Promise<CallToolResult> => {
    const call = context.track?.(extra) ?? { signal: extra.signal, release: () => undefined }
    return Runtime.runPromise(context.runtime)(
      context.bearer(extra).pipe(
        Effect.flatMap(answer),
        Effect.timed,
        Effect.tapBoth({
          onFailure: (failure) =>
            Effect.logInfo("tool call").pipe(Effect.annotateLogs({ outcome: "error", error: failureText(failure) })),
          onSuccess: ([elapsed]) =>
            Effect.logInfo("tool call").pipe(
              Effect.annotateLogs({ outcome: "ok", duration_ms: Math.round(Duration.toMillis(elapsed)) })
            )
        }),
        Effect.onInterrupt(() => Effect.logInfo("tool call").pipe(Effect.annotateLogs({ outcome: "cancelled" }))),
        Effect.match({ onFailure: toError, onSuccess: ([, result]) => toResult(result) }),
        Effect.annotateLogs({ tool })
      ),
      { signal: call.signal }
    ).finally(call.release)
  }

  const jobAnswer = (job: JobView): Answer<JobView> => ({ structured: job, text: jobLine(job) })

  server.registerTool(
    "submit_job",
    {
      title: "Submit a scoring job",
      description:
        "Queue an asynchronous VMAF score of a distorted clip against its reference; a compute node runs it. " +
        "Returns the job (id and state). Follow it with wait_job or get_job. Needs the svc:writer role.",
      inputSchema: submitInput,
      outputSchema: JobSchema,
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false }
    },
    ({ reference, distorted, model, options, segment_frames }, extra) =>
      run("submit_job", extra, (token) =>
        Effect.map(
          controller.submitJob(
            token,
            wireRequest(
              reference,
              distorted,
              model,
              segment_frames === undefined ? options : { ...options, segment_frames },
              false
            )
          ),
          (job) => jobAnswer(jobView(job))
        )
      )
  )

  server.registerTool(
    "get_job",
    {
      title: "Get a job",
      description:
        "The current state of one job of your tenant: pending, running (frames scored so far), finished (with the " +
        "score and pooled features), cancelled or failed (with the reason). Needs svc:reader.",
      inputSchema: { job_id: jobId },
      outputSchema: JobSchema,
      annotations: { readOnlyHint: true, openWorldHint: false }
    },
    ({ job_id }, extra) =>
      run("get_job", extra, (token) => Effect.map(controller.getJob(token, job_id), (job) => jobAnswer(jobView(job))))
  )

  server.registerTool(
    "cancel_job",
    {
      title: "Cancel a job",
      description:
        "Cancel a pending or running job; a job already finished, failed or cancelled is returned unchanged. " +
        "Needs svc:writer.",
      inputSchema: { job_id: jobId },
      outputSchema: JobSchema,
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false }
    },
    ({ job_id }, extra) =>
      run("cancel_job", extra, (token) =>
        Effect.map(controller.cancelJob(token, job_id), (job) => jobAnswer(jobView(job)))
      )
  )

  server.registerTool(
    "list_jobs",
    {
      title: "List jobs",
      description: "Your tenant's jobs, newest first, optionally only those in some states. Needs svc:reader.",
      inputSchema: {
        states: z.array(JobStateSchema).optional().describe("Only jobs in these states (default: all)"),
        limit: z.number().int().min(1).max(1000).optional().describe("At most this many jobs (default 20)")
      },
      outputSchema: { jobs: z.array(JobSchema).describe("Newest first"), count: z.number().int() },
      annotations: { readOnlyHint: true, openWorldHint: false }
    },
    ({ states, limit }, extra) =>
      run("list_jobs", extra, (token) =>
        Effect.map(controller.listJobs(token, (states ?? []).map(toWireState), limit ?? 20), (wire) => {
          const jobs = wire.map(jobView)
          const counts = new Map<string, number>()
          for (const job of jobs) counts.set(job.state, (counts.get(job.state) ?? 0) + 1)
          const byState = [...counts].map(([state, count]) => `${count} ${state}`).join(", ")
          return {
            structured: { jobs, count: jobs.length },
            text:
              jobs.length === 0 ? "no jobs" : `${jobs.length} jobs (${byState}); newest: ${jobLine(jobs[0] as JobView)}`
          }
        })
      )
  )

  server.registerTool(
    "wait_job",
    {
      title: "Wait for a job",
      description:
        "Wait until a job is finished, failed or cancelled, or until the timeout passes, sending progress " +
        "notifications (frames scored) meanwhile. Returns the job and timed_out=true when it is still running: " +
        "call again to keep waiting. Needs svc:reader.",
      inputSchema: {
        job_id: jobId,
        timeout_seconds: z
          .number()
          .min(1)
          .max(3600)
          .optional()
          .describe("How long to wait at most (default 50, so the call fits an assistant's usual 60 s limit)")
      },
      outputSchema: JobSchema.extend({
        timed_out: z.boolean().describe("true: the job had not reached a final state when the timeout passed")
      }),
      annotations: { readOnlyHint: true, openWorldHint: false }
    },
    ({ job_id, timeout_seconds }, extra) =>
      run("wait_job", extra, (token) =>
        Effect.gen(function* () {
          const progressToken = extra._meta?.progressToken
          const deadline = Date.now() + (timeout_seconds ?? 50) * 1000
          let reported = -1
          for (;;) {
            const job = jobView(yield* controller.getJob(token, job_id))
            const timedOut = !isFinal(job.state) && Date.now() >= deadline
            // Only when no answer follows at once (a final or timed-out job's answer carries its
            // state): the SDK's client handles a notification a microtask after a response read
            // with it, when the call's progress token is gone ("unknown token").
            if (progressToken !== undefined && !isFinal(job.state) && !timedOut && job.frames_done > reported) {
              reported = job.frames_done
              yield* Effect.ignore(
                Effect.tryPromise(() =>
                  extra.sendNotification({
                    method: "notifications/progress",
                    params: { progressToken, progress: job.frames_done, message: jobLine(job) }
                  })
                )
              )
            }
            if (isFinal(job.state) || timedOut)
              return {
                structured: { ...job, timed_out: timedOut },
                text: timedOut ? `still waiting: ${jobLine(job)}` : jobLine(job)
              }
            yield* Effect.sleep(waitPollInterval)
          }
        })
      )
  )

  server.registerTool(
    "score",
    {
      title: "Score a pair now",
      description:
        "Score a distorted clip against its reference synchronously on the controller and return the VMAF score, " +
        "pooled features (mean, min, max, harmonic mean) and the model used. Best for short clips; use submit_job " +
        "for long ones. Needs svc:writer.",
      inputSchema: scoreInput,
      outputSchema: ScoreSummarySchema,
      annotations: { readOnlyHint: true, openWorldHint: false }
    },
    ({ reference, distorted, model, options }, extra) =>
      run("score", extra, (token) =>
        Effect.map(controller.score(token, wireRequest(reference, distorted, model, options, false)), (wire) => {
          const summary = scoreSummary(wire)
          return { structured: summary, text: scoreLine(summary) }
        })
      )
  )

  server.registerTool(
    "describe_worst_frames",
    {
      title: "Worst frames of a job",
      description:
        "The N lowest-scoring frames of a finished job with every feature value, worst first: where the encode " +
        "hurts and why (low integer_vif_scale*: lost detail/blur; low integer_adm2: structural artefacts such as " +
        "blocking or ringing; high integer_motion2: fast motion). A ladder job names the rendition. Needs svc:reader.",
      inputSchema: {
        job_id: jobId,
        count: z.number().int().min(1).max(100).optional().describe("How many frames (default 5)"),
        metric: z.string().optional().describe("Metric to rank by (default vmaf; e.g. psnr_y if it was computed)"),
        rendition: z
          .string()
          .optional()
          .describe("A ladder job: the label of the rendition to look at (required there)")
      },
      outputSchema: WorstFramesSchema,
      annotations: { readOnlyHint: true, openWorldHint: false }
    },
    ({ job_id, count, metric, rendition }, extra) =>
      run("describe_worst_frames", extra, (token) =>
        Effect.gen(function* () {
          const wire = yield* controller.getJob(token, job_id)
          const job = jobView(wire)
          const labels = wire.ladder?.renditions.map((entry) => entry.label) ?? []
          if (wire.ladder && !labels.includes(rendition ?? ""))
            return yield* new ToolRefusal({
              message: `job ${job_id} is a ladder: name one of its renditions in rendition (${labels.join(", ")})`
            })
          const result = wire.ladder
            ? (wire.ladder_result?.renditions.find((entry) => entry.label === rendition) ?? null)
            : wire.result
          if (job.state !== "finished" || result === null)
            return yield* new ToolRefusal({
              message: `job ${job_id} is ${job.state}; worst frames need a finished job (wait_job first)`
            })
          const ranking = metric ?? "vmaf"
          const frames = worstFrames(result.frames, ranking, count ?? 5)
          if (frames.length === 0)
            return yield* new ToolRefusal({ message: `job ${job_id} has no per-frame values of "${ranking}"` })
          const listed = frames.map((frame) => `frame ${frame.frame}: ${frame.value.toFixed(3)}`).join(", ")
          const shots = worstShotsOf(result.shots, result.worst_shots)
          const shotText =
            shots === undefined
              ? ""
              : `; worst shots: ${shots
                  .map(
                    (shot) =>
                      `shot ${shot.shot} (frames ${shot.first_frame}-${shot.first_frame + shot.frame_count - 1}): ` +
                      `${shot.score.toFixed(3)}, min ${shot.min.toFixed(3)} at frame ${shot.worst_frame}`
                  )
                  .join("; ")}`
          return {
            structured: {
              job_id,
              metric: ranking,
              frame_count: result.frame_count,
              score: result.score,
              frames,
              ...(shots === undefined ? {} : { worst_shots: shots })
            },
            text: `worst ${frames.length} of ${result.frame_count} frames by ${ranking} (score ${result.score.toFixed(3)}): ${listed}${shotText}`
          }
        })
      )
  )

  server.registerTool(
    "list_models",
    {
      title: "List VMAF models",
      description:
        "The VMAF models a score or job may name, which one is the default, and whether this build can use each; " +
        "and the extra features (xpsnr, ssimulacra2, psnr, ...) options.features may add, with their outputs. " +
        "Needs svc:reader.",
      inputSchema: {},
      outputSchema: ModelListSchema,
      annotations: { readOnlyHint: true, openWorldHint: false }
    },
    (_input, extra) =>
      run("list_models", extra, (token) =>
        controller.listModels(token).pipe(
          Effect.map(modelListView),
          // A controller without ListModels: the models its scorer supports by default.
          Effect.catchIf(
            (failure) => failure._tag === "ControllerRefusal" && failure.status === "UNIMPLEMENTED",
            () => Effect.succeed(builtinModels)
          ),
          Effect.map((list) => ({
            structured: list,
            text: `models: ${list.models
              .filter((model) => model.usable)
              .map((model) => model.name + (model.default ? " (default)" : ""))
              .join(", ")}; features: ${list.features.map((feature) => feature.name).join(", ")}`
          }))
        )
      )
  )

  server.registerTool(
    "compare",
    {
      title: "Compare two encodes",
      description:
        "Score two distorted clips (for example two encoder settings) against one reference and compare them: " +
        "both scores, which is better, and the frame-by-frame difference (mean, how many frames each wins, the " +
        "frames with the largest gain and loss). Scores synchronously on the controller. Needs svc:writer.",
      inputSchema: {
        reference: scoreInput.reference,
        distorted_a: z.string().min(1).describe("First encoded clip (A)"),
        distorted_b: z.string().min(1).describe("Second encoded clip (B)"),
        model: scoreInput.model,
        options: scoreInput.options,
        metric: z.string().optional().describe("Per-frame metric to compare (default vmaf)")
      },
      outputSchema: ComparisonSchema,
      annotations: { readOnlyHint: true, openWorldHint: false }
    },
    ({ reference, distorted_a, distorted_b, model, options, metric }, extra) =>
      run("compare", extra, (token) =>
        Effect.gen(function* () {
          // One after the other: two at once could hit the controller's concurrency cap.
          const a = yield* controller.score(token, wireRequest(reference, distorted_a, model, options, true))
          const b = yield* controller.score(token, wireRequest(reference, distorted_b, model, options, true))
          const ranking = metric ?? "vmaf"
          const side = (summary: ScoreSummary, distorted: string) => ({ ...summary, distorted })
          const delta = b.score - a.score
          const comparison: Comparison = {
            reference,
            metric: ranking,
            a: side(scoreSummary(a), distorted_a),
            b: side(scoreSummary(b), distorted_b),
            score_delta: delta,
            better: delta > 0 ? "b" : delta < 0 ? "a" : "equal",
            per_frame: compareFrames(a.frames, b.frames, ranking)
          }
          const verdict =
            comparison.better === "equal" ? "they score the same" : `${comparison.better.toUpperCase()} is better`
          return {
            structured: comparison,
            text:
              `A: VMAF ${a.score.toFixed(3)}, B: VMAF ${b.score.toFixed(3)}; ${verdict} by ${Math.abs(delta).toFixed(3)}; ` +
              `B wins ${comparison.per_frame.frames_b_better} of ${comparison.per_frame.frames_compared} frames`
          }
        })
      )
  )

  server.registerTool(
    "score_ladder",
    {
      title: "Score a ladder now",
      description:
        "Score an encoding ladder (several renditions of one title: sizes, bitrates or encoder settings) against " +
        "one reference in a single pass over the reference, synchronously on the controller. Returns per " +
        "rendition the pooled VMAF, p1/p5 percentiles, worst frames, bitrate, resolution and codec, which one " +
        "scores best and which lie on the bitrate-vs-score convex hull (the efficient ones). Needs svc:writer.",
      inputSchema: {
        ...ladderInput,
        include_frames: z
          .boolean()
          .optional()
          .describe("Also return every rendition's per-frame VMAF (large for long clips; default false)")
      },
      outputSchema: LadderViewSchema,
      annotations: { readOnlyHint: true, openWorldHint: false }
    },
    (input, extra) =>
      run("score_ladder", extra, (token) =>
        Effect.map(controller.scoreLadder(token, wireLadder(input, input.include_frames === true)), (wire) => {
          const view = ladderView(input.reference, wire, distortedIn(input), input.include_frames === true)
          return { structured: view, text: ladderLine(view) }
        })
      )
  )

  server.registerTool(
    "submit_ladder_job",
    {
      title: "Submit a ladder job",
      description:
        "Queue an encoding ladder (several renditions against one reference, scored in one pass over it) as an " +
        "asynchronous job a compute node runs. Returns the job; follow it with wait_job or get_job, whose " +
        "`ladder` field then holds every rendition's scores and the convex hull. Needs svc:writer.",
      inputSchema: submitLadderInput,
      outputSchema: JobSchema,
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false }
    },
    ({ segment_frames, ...input }, extra) =>
      run("submit_ladder_job", extra, (token) =>
        Effect.map(
          controller.submitLadderJob(
            token,
            wireLadder(
              segment_frames === undefined ? input : { ...input, options: { ...input.options, segment_frames } },
              false
            )
          ),
          (job) => jobAnswer(jobView(job))
        )
      )
  )

  return server
}
