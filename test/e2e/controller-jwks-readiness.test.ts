/**
 * Readiness follows the JWKS endpoint in single-provider mode (issue 11.5), on the compiled
 * controller: /readyz is 503 until the endpoint has answered once, and after it recovers the keys
 * are fetched in the background (once per 30 s), so a valid token is accepted without a token
 * having to trigger the fetch and wait out the failed fetch's cooldown.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { jsonHandler, jwksBody, LoopbackServer, makeKey, signToken } from "../../local/auth.ts"
import type { RunningService } from "../../local/executables.ts"
import { postScore, Scratch, startController, v01 } from "./controller-support.ts"

const ISSUER = "https://login.example.test"
const key = makeKey("recovering-key")
let answering = false
const provider = new LoopbackServer((request) =>
  answering ? jsonHandler(() => jwksBody(key.jwk))(request) : new Response("down for maintenance", { status: 503 })
)
const scratch = new Scratch()
let controller: RunningService

beforeAll(async () => {
  controller = await startController({
    SVC_JWKS_ENDPOINT: provider.url("/jwks"),
    SVC_AUTH_ISSUER: ISSUER,
    SVC_SCORING_ROOTS: scratch.rootA,
    SVC_STORE_PATH: scratch.path("jobs.sqlite")
  })
})

afterAll(async () => {
  await controller?.stop()
  provider.stop()
  scratch.remove()
})

const readyz = async () => {
  const response = await fetch(`${controller.http}/readyz`)
  return { status: response.status, body: (await response.json()) as { reason?: string } }
}

describe("single-provider readiness and the JWKS endpoint", () => {
  it("is 503 until the endpoint answers, then ready and accepting tokens within one fetch interval", async () => {
    const down = await readyz()
    expect(down.status).toBe(503)
    expect(down.body.reason).toBe(`no JWKS fetched yet from ${provider.url("/jwks")}`)
    // A token now is refused (no keys) and starts the failed-fetch cooldown.
    const token = await signToken(
      key,
      { iss: ISSUER, tid: "acme", sub: "u@acme", svc_roles: ["svc:writer"] },
      Math.floor(Date.now() / 1000)
    )
    const body = { reference: `${scratch.rootA}/linked.ref.yuv`, distorted: `${scratch.rootA}/linked.dis.yuv` }
    expect((await postScore(controller.http, body, token)).status).toBe(401)

    answering = true
    const recovered = Date.now()
    let ready = await readyz()
    while (ready.status !== 200 && Date.now() - recovered < 45_000) {
      await Bun.sleep(250)
      ready = await readyz()
    }
    expect(ready.status).toBe(200)
    // Keys are there: the token is verified (the request then fails only on what it asks for).
    const accepted = await postScore(controller.http, { ...body, options: v01.options }, token)
    expect(accepted.status).not.toBe(401)
  }, 60_000)
})
