/**
 * The 500 row of seed 001 section 7. No request reaches it through the compiled server: every
 * input the contract accepts either scores or fails as a 400 (unreadable input, geometry, model)
 * because the native library reports those by status; SVC_E_INTERNAL/NOMEM are faults inside the
 * library. So this test puts a scorer that fails that way behind the real REST surface and checks
 * the translation: 500, the generic body, the detail only in the log, counted by kind.
 */
import { HttpApp, HttpRouter } from "@effect/platform"
import { status as GrpcStatus } from "@grpc/grpc-js"
import { ConfigProvider, Effect, Layer, Logger, ManagedRuntime, Option } from "effect"
import { dirname } from "node:path"
import { describe, expect, it } from "vitest"
import { fixture, rawOptions } from "../../test/support/fixtures.ts"
import { ScoringMetricsService } from "../observability/metrics.ts"
import { ModelStore, Scorer, ScorerInternal } from "../scorer/index.ts"
import { grpcStatusOf } from "../transport/errors.ts"
import { scoringRoutes } from "./http.ts"
import { ScorerState } from "./scorer-state.ts"
import { ScoringApi } from "./scoring.ts"

const v01 = fixture("v01")
const detail = "status -6: worker thread failed to allocate its ring"

const failingScorer = Scorer.make({
  score: () => Effect.fail(new ScorerInternal({ detail })),
  countFrames: () => Effect.fail(new ScorerInternal({ detail })),
  checkFrame: () => Effect.void,
  scoreStream: () => Effect.fail(new ScorerInternal({ detail })),
  scoreFed: () => Effect.fail(new ScorerInternal({ detail })),
  scoreLadder: () => Effect.fail(new ScorerInternal({ detail })),
  pipe: Effect.fail(new ScorerInternal({ detail })),
  library: { version: "test", abi_minor: 0, abi_patch: 0, active_backend: "scalar" },
  models: ModelStore.make({
    load: () => Effect.die("not used"),
    list: Effect.die("not used"),
    directory: Option.none()
  })
})

const scorerState = Layer.succeed(ScorerState, {
  scorer: Effect.succeed(failingScorer),
  readiness: () => Effect.succeed({ ready: true })
})

describe("a scorer's internal failure", () => {
  it('is 500 with {"error":"internal scoring error"}; the detail is only in the log', async () => {
    const logs: Array<{ readonly message: unknown; readonly annotations: Record<string, unknown> }> = []
    const capture = Logger.make(({ message, annotations }) => {
      logs.push({ message, annotations: Object.fromEntries(annotations) })
    })
    const layer = ScoringApi.Default.pipe(
      Layer.provideMerge(scorerState),
      // svc-server reads only under its roots (default: the working directory): the inputs' folder.
      Layer.provide(
        Layer.setConfigProvider(
          ConfigProvider.fromMap(new Map([["SVC_INPUT_ROOTS", dirname(v01.reference)]])).pipe(
            ConfigProvider.orElse(() => ConfigProvider.fromEnv())
          )
        )
      ),
      Layer.provideMerge(ScoringMetricsService.layer("test")),
      Layer.provideMerge(Logger.replace(Logger.defaultLogger, capture))
    )
    const runtime = ManagedRuntime.make(layer)
    try {
      const routes = await runtime.runPromise(scoringRoutes)
      const app = await runtime.runPromise(HttpRouter.toHttpApp(routes))
      const handler = HttpApp.toWebHandlerRuntime(await runtime.runtime())(app)
      const response = await handler(
        new Request("http://test/v1/score", {
          method: "POST",
          // Real files: the scoring path opens and recognises inputs before the scorer sees them.
          body: JSON.stringify({ reference: v01.reference, distorted: v01.distorted, options: rawOptions(v01) })
        })
      )
      expect(response.status).toBe(500)
      const body = await response.text()
      expect(JSON.parse(body)).toEqual({ error: "internal scoring error" })
      expect(body).not.toContain("worker thread")
      const line = logs.find((log) => JSON.stringify(log.message).includes("score"))
      expect(line?.annotations).toMatchObject({ status: 500, kind: "ScorerInternal", detail, route: "POST /v1/score" })
      const metrics = await runtime.runPromise(
        Effect.flatMap(ScoringMetricsService, (service) => Effect.promise(() => service.registry.metrics()))
      )
      expect(metrics).toMatch(/^svc_score_errors_total\{transport="http",kind="ScorerInternal"\} 1$/m)
    } finally {
      await runtime.dispose()
    }
  })

  it("is INTERNAL over gRPC, with the same generic message", () => {
    expect(grpcStatusOf(new ScorerInternal({ detail }))).toEqual({
      code: GrpcStatus.INTERNAL,
      message: "internal scoring error"
    })
  })
})
