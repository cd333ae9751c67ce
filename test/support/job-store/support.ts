/** Shared fixtures of the job tests: temp store files, principals, requests, results, layers. */
import { Effect, Either, Layer } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { Principal } from "../../../modules/policy/principal.ts"
import { RootSet } from "../../../modules/policy/scoring-roots.ts"
import {
  defaultModel,
  type LadderResult,
  type ScoreRequest,
  type ScoreResult,
  UnknownModel
} from "../../../modules/scorer/index.ts"
import {
  JobMetricsHooks,
  type JobMetricsHooksShape,
  JobModels,
  JobService,
  type JobServiceShape,
  jobServiceLayer,
  TenantRoots
} from "../../../modules/jobs/service.ts"
import type { ResultReport } from "../../../modules/jobs/model.ts"
import type { ReportContext } from "../../../modules/jobs/store.ts"
import { DEFAULT_SESSION_SETTINGS, type SessionSettings } from "../../../modules/jobs/sessions.ts"
import { type Backend, sqliteBackend } from "./backends.ts"

/** A fresh directory for store files, removed by the returned cleanup. */
export const tempDir = (): { readonly dir: string; readonly cleanup: () => void } => {
  const dir = mkdtempSync(join(tmpdir(), "svc-jobs-"))
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) }
}

export const writer = (tenantId: string, subject = `user-of-${tenantId}`): Principal => ({
  tenantId,
  roles: ["svc:writer"],
  subject
})
export const node = (tenantId: string): Principal => ({ tenantId, roles: ["svc:node"], subject: `node-of-${tenantId}` })

export const request = (name = "clip"): ScoreRequest => ({
  reference: `/media/${name}/ref.y4m`,
  distorted: `/media/${name}/dist.y4m`,
  model: "vmaf_v0.6.1",
  options: { threads: 2, per_frame: true }
})

export const result = (score: number, frames = 2): ScoreResult => ({
  score,
  features: { vmaf: score, psnr_y: Number.NaN },
  provenance: {
    library: { abi_minor: 1, abi_patch: 0, active_backend: "avx2", n_extractors: 3, version: "test" },
    model: "vmaf_v0.6.1",
    model_sha256: "0".repeat(64),
    backend_used: "avx2",
    feature_backends: [{ extractor: "vif", backend: "avx2" }],
    precision: "lossless"
  },
  frames: Array.from({ length: frames }, (_, frame) => ({ frame, metrics: { vmaf: score } })),
  frame_count: frames,
  pooled: { min: { vmaf: score }, max: { vmaf: score }, harmonic_mean: { vmaf: score } }
})

/** A ladder request of renditions with these labels (encoded files, so no geometry). */
export const ladderRequest = (labels: ReadonlyArray<string>) => ({
  reference: "/media/a/ref.y4m",
  renditions: labels.map((label) => ({ label, distorted: `/media/a/${label}.mp4` }))
})

/** A ladder's result: one rendition per label, each scored `frames` frames. */
export const ladderResult = (labels: ReadonlyArray<string>, frames: number): LadderResult => {
  const { provenance } = result(0)
  return {
    renditions: labels.map((label, index) => ({
      ...result(40 + index, frames),
      label,
      summary: {
        p1: 40,
        p5: 40,
        worst_frames: [],
        width: 8,
        height: 8,
        codec: "h264",
        bitrate_bps: 1000 * (index + 1),
        duration_s: 1,
        on_hull: true
      }
    })),
    provenance: {
      reference_passes: 1,
      reference_decoders: 0,
      reference_frames: frames,
      shared: ["reference read"],
      library: provenance.library,
      model: provenance.model,
      model_sha256: provenance.model_sha256,
      backend_used: provenance.backend_used,
      precision: provenance.precision
    }
  }
}

/**
 * The store migration tests' takeover of the migrated job "old-ladder": a live node of tenant "a"
 * registers and reports 4 frames done with `renditionProgress`; returns the job as reported.
 */
export const reportOldLadderProgress = (
  jobs: JobServiceShape,
  renditionProgress: NonNullable<ResultReport["renditionProgress"]>
) =>
  Effect.gen(function* () {
    const { nodeId } = yield* jobs.register(node("a"), { name: "host", slots: 1, version: "t" })
    return yield* jobs.reportResult(node("a"), nodeId, "old-ladder", { final: false, framesDone: 4, renditionProgress })
  })

/**
 * A progress report (`framesDone`, no result) by a session of `tenantId`, for the store's `report`
 * called directly; `live` are the tenant's live node ids.
 */
export const reportBy = (
  nodeId: string,
  framesDone: number,
  live: ReadonlyArray<string>,
  tenantId = "a"
): ReportContext => ({
  reporter: { nodeId, sessionTenantId: tenantId, live: live.includes(nodeId) },
  liveNodeIds: new Set(live),
  update: () => Either.right({ nodeId, result: undefined, framesDone, renditionProgress: [], outcome: undefined })
})

/**
 * Roots as a registry would give them: one directory per tenant, plus the shared `/media` that
 * every request of these tests (`/media/<name>/...`) lies under, so SubmitJob admits them.
 */
export const rootsOf = (tenantId: string): ReadonlyArray<string> => [`/media/${tenantId}`, "/media"]

export const testRoots = Layer.succeed(TenantRoots, {
  rootsFor: (tenantId) => Effect.succeed(RootSet.fromValidTexts(rootsOf(tenantId)))
})

/** The models of a scorer that knows only the default model (what the tests' requests name). */
export const testModels = Layer.succeed(JobModels, {
  check: (model) =>
    model === defaultModel ? Effect.void : Effect.fail(new UnknownModel({ model, message: `unknown model "${model}"` }))
})

const backendOf = (target: Backend | string): Backend => (typeof target === "string" ? sqliteBackend(target) : target)

/**
 * JobService on the store (a SQLite file path, or a contract backend), with its node sessions (in
 * memory for SQLite: a fresh table, so this is a "controller boot").
 */
export const serviceLayerAt = (
  target: Backend | string,
  settings: SessionSettings = DEFAULT_SESSION_SETTINGS,
  hooks = JobMetricsHooks.none
) =>
  jobServiceLayer.pipe(Layer.provide(Layer.mergeAll(backendOf(target).layer(settings), testRoots, testModels, hooks)))

/** Runs `body` against one controller boot on the store. */
export const withController = <A, E>(
  target: Backend | string,
  body: (jobs: JobServiceShape) => Effect.Effect<A, E>,
  settings?: SessionSettings
) => Effect.flatMap(JobService, body).pipe(Effect.provide(serviceLayerAt(target, settings)))

/** Hooks that record every sample. */
export const recordingHooks = () => {
  const queueWaits: Array<number> = []
  const durations: Array<{ readonly seconds: number; readonly outcome: string }> = []
  const hooks: JobMetricsHooksShape = {
    observeQueueWait: (seconds) => void queueWaits.push(seconds),
    observeJobDuration: (seconds, outcome) => void durations.push({ seconds, outcome })
  }
  return { queueWaits, durations, layer: Layer.succeed(JobMetricsHooks, hooks) }
}
