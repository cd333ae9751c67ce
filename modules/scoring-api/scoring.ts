/**
 * The one scoring path of seed 001 (section 4): HTTP and gRPC hand it an untrusted request and
 * get a ScoreResult or a typed failure back. Validation, the shared concurrency cap, metrics and
 * the one structured log line per request all live here; the transports only translate.
 */
import { isAbsolute, resolve } from "node:path"
import {
  extraFeatureList,
  InputNotFound,
  InvalidScoreRequest,
  type LadderResult,
  memoryBudget,
  type ModelInfo,
  parseLadderRequest,
  parseScoreRequest,
  type ScoreError,
  ScorerBusy,
  type ScoreResult,
  ScorerInternal,
  type StreamEvent
} from "../scorer/index.ts"
import type { InputGuard } from "../inputs/open.ts"
import { Cause, Effect, Either, Exit, Layer, Option, Ref, Schema, Sink, Stream } from "effect"
import { invalid } from "../config/env.ts"
import { wireStatus } from "../errors/index.ts"
import { Ffmpeg } from "../inputs/ffmpeg.ts"
import { scoreLadderInputs } from "../inputs/ladder.ts"
import { scoreInputs } from "../inputs/score.ts"
import { ScoringMetricsService } from "../observability/metrics.ts"
import { Gauge } from "prom-client"
import type { PermissionDenied } from "../policy/errors.ts"
import { parseRoot, RootSet, splitRootList } from "../policy/scoring-roots.ts"
import { inputRoots, maxConcurrentScores, maxScoreMemory, tenantMaxConcurrentScores } from "./config.ts"
import { type ScorerNotReady, TenantScoresBusy } from "./errors.ts"
import { ScorerState } from "./scorer-state.ts"

export type Transport = "http" | "grpc"

/** Where a request came from, for its log line and metrics. */
export interface ScoreCall {
  readonly transport: Transport
  /** "POST /v1/score" or the gRPC method path. */
  readonly route: string
  /** The caller's tenant, on the controller: SVC_TENANT_MAX_CONCURRENT_SCORES caps its slots. */
  readonly tenant?: string
}

export type ScoringError = ScoreError | ScorerNotReady | PermissionDenied | TenantScoresBusy

/** svc-server's input roots as written: SVC_INPUT_ROOTS, else its working directory alone. */
const serverRootTexts = Effect.map(inputRoots, (roots) =>
  Option.match(roots, {
    onNone: () => ({ texts: [process.cwd()], configured: false }),
    onSome: (text) => ({ texts: splitRootList(text), configured: true })
  })
)

/**
 * The guard of calls that bring none (svc-server): its roots, an invalid entry stopping the
 * start. A relative input is the server's own working directory's (as the open reads it), so
 * it is checked there; the controller, which brings its callers' guards, refuses them.
 */
const defaultGuard = Effect.flatMap(serverRootTexts, ({ texts }) =>
  Effect.map(
    Effect.forEach(texts, (entry) =>
      Either.match(parseRoot(entry), {
        onLeft: (why) => Effect.fail(invalid("SVC_INPUT_ROOTS", `entry "${entry}" ${why}`)),
        onRight: () => Effect.succeed(entry)
      })
    ),
    (entries): InputGuard<PermissionDenied> => {
      const guard = RootSet.fromValidTexts(entries).inputGuard()
      const here = (path: string) =>
        path === "" || isAbsolute(path) || /^:?[A-Za-z0-9_][A-Za-z0-9_.+@-]*:/.test(path) ? path : resolve(path)
      return {
        // A NUL byte is refused by the open itself, before any system call, naming it.
        // Refusals quote the input as sent (`shown`: a file:// URL, a relative path).
        beforeOpen: (path, shown = path) => (path.includes("\0") ? Effect.void : guard.beforeOpen(here(path), shown)),
        opened: guard.opened,
        missing: (path, shown = path) =>
          guard
            .missing(here(path), shown)
            .pipe(Effect.catchTag("InputNotFound", () => Effect.fail(new InputNotFound({ path: shown }))))
      }
    }
  )
)

/**
 * svc-server's start-up line saying where inputs may come from: its working directory when
 * SVC_INPUT_ROOTS is unset, the configured roots otherwise, and a warning when a root is `/`.
 */
export const inputRootsNotice = Layer.effectDiscard(
  Effect.flatMap(serverRootTexts, ({ texts, configured }) => {
    const annotations = { roots: texts, source: configured ? "SVC_INPUT_ROOTS" : "working directory" }
    return texts.includes("/")
      ? Effect.logWarning(
          "input roots include /: POST /v1/score and Score may read any file this process can open"
        ).pipe(Effect.annotateLogs(annotations))
      : Effect.logInfo(
          configured
            ? "inputs confined to SVC_INPUT_ROOTS"
            : "inputs confined to the working directory (SVC_INPUT_ROOTS unset; set it to your media directories, or / for any file)"
        ).pipe(Effect.annotateLogs(annotations))
  })
)

/** The first message of a ScoreStream: model and options (raw geometry required). */
const StreamMessage = Schema.Union(
  Schema.Struct({
    message: Schema.Literal("header"),
    header: Schema.Struct({ model: Schema.optional(Schema.String), options: Schema.optional(Schema.Unknown) })
  }),
  Schema.Struct({
    message: Schema.Literal("frame"),
    frame: Schema.Struct({ reference: Schema.Uint8ArrayFromSelf, distorted: Schema.Uint8ArrayFromSelf })
  })
)
const decodeStreamMessage = Schema.decodeUnknown(StreamMessage)

/**
 * Stream frames come from memory, so the request has no files: the header is validated as a
 * ScoreRequest of raw (".yuv") inputs, which makes width and height required as streams need.
 */
const streamInput = "stream.yuv"

export class ScoringApi extends Effect.Service<ScoringApi>()("svc/ScoringApi", {
  effect: Effect.gen(function* () {
    const metrics = yield* ScoringMetricsService
    const state = yield* ScorerState
    const limit = yield* maxConcurrentScores
    const ffmpeg = yield* Ffmpeg
    const inFlight = yield* Ref.make(0)

    // A non-blocking cap: a full server refuses at once rather than queueing.
    const takeSlot = Effect.flatMap(
      Ref.modify(inFlight, (n): readonly [boolean, number] => (n < limit ? [true, n + 1] : [false, n])),
      (taken) => (taken ? Effect.sync(() => metrics.scoresInFlight.inc()) : Effect.fail(new ScorerBusy({ limit })))
    )
    const releaseSlot = Effect.zipRight(
      Ref.update(inFlight, (n) => n - 1),
      Effect.sync(() => metrics.scoresInFlight.dec())
    )
    const sharedSlot = Effect.acquireRelease(takeSlot, () => releaseSlot)

    // Per tenant: taken before a shared slot, so a tenant at its cap holds none of the others'.
    const tenantLimit = yield* tenantMaxConcurrentScores
    const tenantSlots = yield* Ref.make(new Map<string, number>())
    const tenantSlot = (tenant: string, limit: number) =>
      Effect.acquireRelease(
        Effect.flatMap(
          Ref.modify(tenantSlots, (held): readonly [boolean, Map<string, number>] => {
            const count = held.get(tenant) ?? 0
            return count < limit ? [true, new Map(held).set(tenant, count + 1)] : [false, held]
          }),
          (taken) => (taken ? Effect.void : Effect.fail(new TenantScoresBusy({ limit })))
        ),
        () =>
          Ref.update(tenantSlots, (held) => {
            const count = (held.get(tenant) ?? 1) - 1
            const next = new Map(held)
            if (count <= 0) next.delete(tenant)
            else next.set(tenant, count)
            return next
          })
      )
    const slot = (call: ScoreCall) =>
      call.tenant !== undefined && Option.isSome(tenantLimit)
        ? Effect.zipRight(tenantSlot(call.tenant, tenantLimit.value), sharedSlot)
        : sharedSlot

    // Memory: admitted on the library's estimate, before anything per frame is allocated.
    const budget = yield* maxScoreMemory
    const admitMemory = yield* memoryBudget(budget)
    const serverGuard = yield* defaultGuard
    // The decoders' share of the budget, as /metrics shows it: admitted, and the peak observed.
    new Gauge({
      name: "svc_decoder_memory_reserved_bytes",
      help: "Memory admitted for the running decoders (counted in SVC_MAX_SCORE_MEMORY with the scorer's).",
      registers: [metrics.registry],
      collect() {
        this.set(ffmpeg.usage.reserved)
      }
    })
    new Gauge({
      name: "svc_decoder_memory_peak_bytes",
      help: "Highest resident memory (VmHWM) a decoder of this process reached, sampled every 250 ms.",
      registers: [metrics.registry],
      collect() {
        this.set(ffmpeg.usage.peak)
      }
    })

    /** What a request got to before it ended, for its log line. */
    interface Progress {
      model: string | undefined
      frames: number
      /** A slot was taken and the scorer ran: the score duration histogram counts it. */
      ran: boolean
    }
    const progress = (): Progress => ({ model: undefined, frames: 0, ran: false })

    /** Metrics and the request's one log line, from its outcome. */
    const record = (call: ScoreCall, started: number, seen: Progress, exit: Exit.Exit<unknown, unknown>) =>
      Effect.suspend(() => {
        const seconds = (performance.now() - started) / 1000
        const line = {
          route: call.route,
          transport: call.transport,
          duration_ms: Math.round(seconds * 1e6) / 1e3,
          model: seen.model,
          frames: seen.frames
        }
        if (Exit.isSuccess(exit)) {
          metrics.scoreDuration.observe({ transport: call.transport, outcome: "ok" }, seconds)
          metrics.framesScored.inc({ transport: call.transport }, seen.frames)
          const status = call.transport === "http" ? 200 : "OK"
          return Effect.logInfo("score").pipe(Effect.annotateLogs({ ...line, status }))
        }
        const error = Option.getOrUndefined(Cause.failureOption(exit.cause))
        const interrupted = Cause.isInterruptedOnly(exit.cause)
        const wire = wireStatus(error)
        const kind = interrupted
          ? "Cancelled"
          : error instanceof Object && "_tag" in error
            ? String(error._tag)
            : "Defect"
        if (seen.ran) metrics.scoreDuration.observe({ transport: call.transport, outcome: kind }, seconds)
        metrics.errors.inc({ transport: call.transport, kind })
        // Interrupted: the client went away (logged as 499, the usual "client closed request").
        const status = interrupted
          ? call.transport === "http"
            ? 499
            : "CANCELLED"
          : call.transport === "http"
            ? wire.http
            : wire.grpc
        // Internal details (ScorerInternal.detail, defects) go to the log only.
        const detail =
          error instanceof ScorerInternal
            ? error.detail
            : error === undefined && !interrupted
              ? Cause.pretty(exit.cause)
              : undefined
        const message = interrupted ? "cancelled" : wire.message
        const failed = { ...line, status, kind, error: message, ...(detail === undefined ? {} : { detail }) }
        return wire.http >= 500 && !interrupted
          ? Effect.logError("score").pipe(Effect.annotateLogs(failed))
          : Effect.logWarning("score").pipe(Effect.annotateLogs(failed))
      })

    /**
     * Reads the request (`body` may fail: too large, not JSON), validates it, takes a slot and
     * scores. The body is read before a slot is taken, so slow uploads hold none.
     */
    const score = <E, G = PermissionDenied>(
      call: ScoreCall,
      body: Effect.Effect<unknown, E>,
      guard?: InputGuard<G>
    ): Effect.Effect<ScoreResult, E | G | ScoringError> =>
      Effect.suspend(() => {
        const started = performance.now()
        const seen = progress()
        return Effect.gen(function* () {
          const job = yield* Effect.flatMap(body, parseScoreRequest)
          seen.model = job.model
          const scorer = yield* state.scorer
          return yield* Effect.scoped(
            Effect.gen(function* () {
              yield* slot(call)
              seen.ran = true
              const result = yield* Effect.provideService(
                scoreInputs<G | PermissionDenied>(scorer, job, {
                  guard: guard ?? serverGuard,
                  admitMemory,
                  memoryBudget: budget
                }),
                Ffmpeg,
                ffmpeg
              )
              seen.frames = result.frame_count
              return result
            })
          )
        }).pipe(Effect.onExit((exit) => record(call, started, seen, exit)))
      })

    /**
     * POST /v1/ladder and ScoreLadder: as `score`, for one reference and its renditions. A ladder
     * holds one score slot (its one pass is one native job) and every path passes the guard.
     */
    const ladder = <E, G = PermissionDenied>(
      call: ScoreCall,
      body: Effect.Effect<unknown, E>,
      guard?: InputGuard<G>
    ): Effect.Effect<LadderResult, E | G | ScoringError> =>
      Effect.suspend(() => {
        const started = performance.now()
        const seen = progress()
        return Effect.gen(function* () {
          const job = yield* Effect.flatMap(body, parseLadderRequest)
          seen.model = job.renditions[0]?.job.model
          const scorer = yield* state.scorer
          return yield* Effect.scoped(
            Effect.gen(function* () {
              yield* slot(call)
              seen.ran = true
              const result = yield* Effect.provideService(
                scoreLadderInputs<G | PermissionDenied>(scorer, job, {
                  guard: guard ?? serverGuard,
                  admitMemory,
                  memoryBudget: budget
                }),
                Ffmpeg,
                ffmpeg
              )
              seen.frames = result.provenance.reference_frames * result.renditions.length
              return result
            })
          )
        }).pipe(Effect.onExit((exit) => record(call, started, seen, exit)))
      })

    /**
     * ScoreStream: the first message is the header, then frame pairs. A slot is held for the
     * stream's whole life; its log line comes when it ends.
     */
    const scoreStream = <E>(
      call: ScoreCall,
      requests: Stream.Stream<unknown, E>
    ): Stream.Stream<StreamEvent, E | ScoringError> =>
      Stream.suspend(() => {
        const started = performance.now()
        const seen = progress()
        return Stream.unwrapScoped(
          Effect.gen(function* () {
            const [first, rest] = yield* Stream.peel(requests, Sink.head())
            const header = yield* decodeStreamMessage(Option.getOrUndefined(first)).pipe(
              Effect.flatMap((message) =>
                message.message === "header" ? Effect.succeed(message.header) : Effect.fail(message)
              ),
              Effect.mapError(
                () => new InvalidScoreRequest({ message: "the first message of a stream must be a header" })
              )
            )
            const job = yield* parseScoreRequest({
              reference: streamInput,
              distorted: streamInput,
              model: header.model,
              options: header.options
            })
            seen.model = job.model
            const scorer = yield* state.scorer
            yield* slot(call)
            seen.ran = true
            const pairs = rest.pipe(
              Stream.mapEffect((message) =>
                decodeStreamMessage(message).pipe(
                  Effect.flatMap((decoded) =>
                    decoded.message === "frame" ? Effect.succeed(decoded.frame) : Effect.fail(decoded)
                  ),
                  Effect.mapError(
                    () => new InvalidScoreRequest({ message: "after the header, every message must be a frame pair" })
                  )
                )
              )
            )
            return scorer.scoreStream(job, pairs, { admitMemory }).pipe(
              Stream.tap((event) =>
                Effect.sync(() => {
                  if (event._tag === "Aggregate") seen.frames = event.result.frame_count
                })
              )
            )
          })
        ).pipe(Stream.ensuringWith((exit) => record(call, started, seen, exit)))
      })

    /** GET /v1/models and ListModels: the models a request may name (no score slot needed). */
    const listModels: Effect.Effect<
      { readonly models: ReadonlyArray<ModelInfo>; readonly features: ReturnType<typeof extraFeatureList> },
      ScorerNotReady
    > = Effect.flatMap(state.scorer, (scorer) =>
      Effect.map(scorer.models.list, (models) => ({ models, features: extraFeatureList() }))
    )

    return { score, ladder, scoreStream, listModels, limit, readiness: state.readiness } as const
  }),
  dependencies: [Ffmpeg.Default]
}) {
  /** The scoring surface with its scorer and metrics (executable names the metrics' build info). */
  static readonly layer = (executable: string) =>
    ScoringApi.Default.pipe(
      Layer.provideMerge(ScorerState.layer),
      Layer.provideMerge(ScoringMetricsService.layer(executable))
    )
}
