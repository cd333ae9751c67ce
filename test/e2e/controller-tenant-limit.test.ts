/**
 * SVC_TENANT_MAX_CONCURRENT_SCORES on the compiled controller (issue 11.3): a tenant at its cap
 * gets 429 while another tenant still scores.
 */
import { closeSync, ftruncateSync, mkdirSync, openSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { jsonHandler, jwksBody, LoopbackServer, makeKey, signToken } from "../../local/auth.ts"
import type { RunningService } from "../../local/executables.ts"
import { postScore, Scratch, startController } from "./controller-support.ts"

const ISSUER = "https://login.example.test"
const key = makeKey("limit-key")
const provider = new LoopbackServer(jsonHandler(() => jwksBody(key.jwk)))
const scratch = new Scratch()
let controller: RunningService

const token = (org: string) =>
  signToken(key, { iss: ISSUER, org, sub: `user@${org}`, svc_roles: ["svc:writer"] }, Math.floor(Date.now() / 1000))

// 1080p 4:4:4 zeros, 400 frames: a score that runs long enough to hold its slot.
const frameBytes = 1920 * 1080 * 3
const slowPair = (tenant: string) => {
  const path = scratch.path("roots", tenant, "slow.yuv")
  return { reference: path, distorted: path, options: { width: 1920, height: 1080, pixel_format: "444" } }
}

beforeAll(async () => {
  for (const tenant of ["acme", "globex"]) {
    mkdirSync(scratch.path("roots", tenant), { recursive: true })
    const fd = openSync(slowPair(tenant).reference, "w")
    ftruncateSync(fd, 400 * frameBytes)
    closeSync(fd)
  }
  controller = await startController({
    SVC_JWKS_ENDPOINT: provider.url("/jwks"),
    SVC_AUTH_ISSUER: ISSUER,
    SVC_AUTH_TENANT_CLAIM: "org",
    SVC_SCORING_ROOTS: join(scratch.path("roots"), "{tenant}"),
    SVC_STORE_PATH: scratch.path("jobs.sqlite"),
    SVC_TENANT_MAX_CONCURRENT_SCORES: "1",
    SVC_MAX_CONCURRENT_SCORES: "8"
  })
})

afterAll(async () => {
  await controller?.stop()
  provider.stop()
  scratch.remove()
})

describe("SVC_TENANT_MAX_CONCURRENT_SCORES", () => {
  it("refuses a tenant's second score in flight with 429 while another tenant scores", async () => {
    const acme = await token("acme")
    const leaving = new AbortController()
    const first = fetch(`${controller.http}/v1/score`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${acme}` },
      body: JSON.stringify(slowPair("acme")),
      signal: leaving.signal
    }).catch(() => undefined)
    const inFlight = async () =>
      Number(/^svc_scores_in_flight (\d+)/m.exec(await (await fetch(`${controller.http}/metrics`)).text())?.[1])
    while ((await inFlight()) < 1) await Bun.sleep(20)

    const second = await postScore(controller.http, slowPair("acme"), acme)
    expect(second.status).toBe(429)
    expect(((await second.json()) as { error: string }).error).toMatch(/this tenant has 1 scores in flight, its limit/)

    const other = slowPair("globex")
    const globex = await postScore(
      controller.http,
      { ...other, options: { ...other.options, frame_cnt: 1 } },
      await token("globex")
    )
    expect(globex.status).toBe(200)
    leaving.abort()
    await first
  }, 60_000)
})
