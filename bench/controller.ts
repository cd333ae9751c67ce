/**
 * The gateway's cost: `POST /v1/score` requests per second against the compiled controller with
 * RS256 bearer tokens (single-provider mode, JWKS served here) and against the same executable
 * with SVC_AUTH_DISABLED=true; the ratio is what authentication, the role table and the
 * scoring-root check (symlinks resolved) cost. Each score is one 320x240 frame, so the gateway's
 * share is visible. Then `SubmitJob` calls per second (durable SQLite insert each).
 */
import * as grpc from "@grpc/grpc-js"
import { mkdtempSync, rmSync } from "node:fs"
import { cpus, tmpdir } from "node:os"
import { join } from "node:path"
import { jsonHandler, jwksBody, LoopbackServer, makeKey, signToken } from "../local/auth.ts"
import { serviceDefinition } from "../modules/transport/grpc/proto.ts"
import { fixturesDir, type RunningService, startService } from "../local/executables.ts"

const seconds = 3
const concurrency = Math.min(4, cpus().length)
const issuer = "https://idp.bench.test"

const scoreRequest = {
  reference: join(fixturesDir, "v01_testsrc2_420_8_x264.ref.yuv"),
  distorted: join(fixturesDir, "v01_testsrc2_420_8_x264.dis.yuv"),
  options: { width: 320, height: 240, pixel_format: "420", bitdepth: 8, frame_cnt: 1 }
}

/** Runs `once` from `concurrency` loops for `seconds`; returns successful calls per second. */
const throughput = async (
  once: () => Promise<boolean>
): Promise<{ readonly perSecond: number; readonly failed: number }> => {
  const deadline = performance.now() + seconds * 1000
  let ok = 0
  let failed = 0
  const loop = async () => {
    while (performance.now() < deadline) {
      if (await once()) ok++
      else failed++
    }
  }
  const started = performance.now()
  await Promise.all(Array.from({ length: concurrency }, loop))
  return { perSecond: ok / ((performance.now() - started) / 1000), failed }
}

const postScore = (controller: RunningService, token: string | undefined) => async () => {
  const response = await fetch(`${controller.http}/v1/score`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      ...(token === undefined ? {} : { authorization: `Bearer ${token}` })
    },
    body: JSON.stringify(scoreRequest)
  })
  await response.arrayBuffer()
  return response.status === 200
}

const submitJobs = (controller: RunningService, token: string) => {
  const client = new grpc.Client(controller.grpc ?? "", grpc.credentials.createInsecure())
  const { path, requestSerialize, responseDeserialize } = serviceDefinition("svc.v1.Jobs")["SubmitJob"] ?? {}
  if (path === undefined || requestSerialize === undefined || responseDeserialize === undefined)
    throw new Error("no SubmitJob in the contract")
  const metadata = new grpc.Metadata()
  metadata.set("authorization", `Bearer ${token}`)
  const once = () =>
    new Promise<boolean>((resolve) =>
      client.makeUnaryRequest(
        path,
        requestSerialize,
        responseDeserialize,
        { request: scoreRequest },
        metadata,
        (error) => resolve(error === null)
      )
    )
  return { once, close: () => client.close() }
}

export const benchController = async (): Promise<void> => {
  const scratch = mkdtempSync(join(tmpdir(), "svc-bench-controller-"))
  const key = makeKey("bench")
  const jwks = new LoopbackServer(jsonHandler(() => jwksBody(key.jwk)))
  const token = await signToken(
    key,
    { iss: issuer, tid: "bench", svc_roles: ["svc:writer"] },
    Math.floor(Date.now() / 1000)
  )
  const common = {
    SVC_SCORING_ROOTS: fixturesDir,
    SVC_LOG_LEVEL: "info",
    SVC_MAX_CONCURRENT_SCORES: String(concurrency)
  }
  const start = (name: string, env: Record<string, string>) =>
    startService("svc-controller", {
      env: { ...common, SVC_STORE_PATH: join(scratch, `${name}.sqlite`), ...env },
      listeners: ["http", "grpc"]
    })
  const authenticated = await start("auth", { SVC_JWKS_ENDPOINT: jwks.url("/jwks"), SVC_AUTH_ISSUER: issuer })
  const disabled = await start("disabled", { SVC_AUTH_DISABLED: "true" })
  try {
    console.log(`controller: POST /v1/score (1 frame of 320x240), ${concurrency} concurrent clients, ${seconds} s each`)
    // One warm-up request each: the JWKS fetch and the scorer's first model load are not measured.
    await postScore(authenticated, token)()
    await postScore(disabled, undefined)()
    const withAuth = await throughput(postScore(authenticated, token))
    const withoutAuth = await throughput(postScore(disabled, undefined))
    console.log(
      `  authenticated (RS256, roles, roots): ${withAuth.perSecond.toFixed(1)} req/s (${withAuth.failed} failed)`
    )
    console.log(
      `  SVC_AUTH_DISABLED=true:              ${withoutAuth.perSecond.toFixed(1)} req/s (${withoutAuth.failed} failed)`
    )
    console.log(
      `  ratio authenticated / disabled: ${(withAuth.perSecond / withoutAuth.perSecond).toFixed(3)} (the gateway's cost)`
    )
    const submit = submitJobs(authenticated, token)
    const submitted = await throughput(submit.once)
    submit.close()
    console.log(
      `controller: SubmitJob (authenticated, durable insert): ${submitted.perSecond.toFixed(1)} jobs/s (${submitted.failed} failed)`
    )
  } finally {
    await authenticated.stop()
    await disabled.stop()
    jwks.stop()
    rmSync(scratch, { recursive: true, force: true })
  }
}
