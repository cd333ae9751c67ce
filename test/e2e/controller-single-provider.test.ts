/**
 * svc-controller in single-provider mode (seed 5.3, 5.5.7): one issuer and JWKS endpoint for every
 * tenant, the tenant from a renamed claim, roots from SVC_SCORING_ROOTS with {tenant} substituted.
 */
import * as grpc from "@grpc/grpc-js"
import { mkdirSync, symlinkSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { jsonHandler, jwksBody, LoopbackServer, makeKey, signToken } from "../../local/auth.ts"
import type { RunningService } from "../../local/executables.ts"
import {
  ControllerClient,
  expectOk,
  GOLDEN_V01_VMAF,
  postScore,
  Scratch,
  startController,
  v01
} from "./controller-support.ts"

const ISSUER = "https://login.example.test"
const key = makeKey("single-key")
const provider = new LoopbackServer(jsonHandler(() => jwksBody(key.jwk)))
const scratch = new Scratch()
let controller: RunningService
let client: ControllerClient

const now = () => Math.floor(Date.now() / 1000)
/** A token of the provider naming its tenant in the `org` claim, as SVC_AUTH_TENANT_CLAIM says. */
const token = (org: string, roles: ReadonlyArray<string>, extra: Record<string, unknown> = {}) =>
  signToken(key, { iss: ISSUER, org, sub: `user@${org}`, svc_roles: roles, ...extra }, now())

/** roots/<tenant>/ holds links to the v01 pair. */
const rootOf = (tenant: string) => scratch.path("roots", tenant)
const pairIn = (tenant: string) => ({
  reference: join(rootOf(tenant), "v01.ref.yuv"),
  distorted: join(rootOf(tenant), "v01.dis.yuv"),
  options: v01.options
})

beforeAll(async () => {
  for (const tenant of ["acme", "globex"]) {
    mkdirSync(rootOf(tenant), { recursive: true })
    symlinkSync(v01.reference, join(rootOf(tenant), "v01.ref.yuv"))
    symlinkSync(v01.distorted, join(rootOf(tenant), "v01.dis.yuv"))
  }
  controller = await startController({
    SVC_JWKS_ENDPOINT: provider.url("/jwks"),
    SVC_AUTH_ISSUER: ISSUER,
    SVC_AUTH_TENANT_CLAIM: "org",
    // The links resolve to the fixtures, so the fixtures directory is a root too.
    SVC_SCORING_ROOTS: `${scratch.path("roots")}/{tenant},${join(v01.reference, "..")}`,
    SVC_STORE_PATH: scratch.path("jobs.sqlite")
  })
  client = new ControllerClient(controller.grpc ?? "")
})

afterAll(async () => {
  client?.close()
  await controller?.stop()
  provider.stop()
  scratch.remove()
})

describe("svc-controller, single provider", () => {
  it("scores for any tenant the provider names, under that tenant's substituted root", async () => {
    const response = await postScore(controller.http, pairIn("acme"), await token("acme", ["svc:writer"]))
    expect(response.status).toBe(200)
    const body = (await response.json()) as { score: number }
    expect(Math.abs(body.score - GOLDEN_V01_VMAF)).toBeLessThanOrEqual(1e-4)
  })

  it("refuses another tenant's root with 403 and the seed's message", async () => {
    const input = pairIn("globex")
    const response = await postScore(controller.http, input, await token("acme", ["svc:writer"]))
    expect(response.status).toBe(403)
    expect(await response.json()).toEqual({
      error: `scoring input "${input.reference}" is outside the tenant's scoring roots`
    })
  })

  it("refuses every input of a tenant whose ID cannot be substituted", async () => {
    // Only the fixtures root remains for such a tenant: its {tenant} entry is refused, not
    // substituted, so even a real directory at the substituted path admits nothing.
    const fixtures = { reference: v01.reference, distorted: v01.distorted, options: v01.options }
    for (const tenant of ["a/b", "c:d", "e\\f"]) {
      mkdirSync(rootOf(tenant), { recursive: true })
      symlinkSync(v01.reference, join(rootOf(tenant), "v01.ref.yuv"))
      expect((await postScore(controller.http, fixtures, await token(tenant, ["svc:writer"]))).status, tenant).toBe(200)
      const substituted = { ...fixtures, reference: join(rootOf(tenant), "v01.ref.yuv") }
      expect((await postScore(controller.http, substituted, await token(tenant, ["svc:writer"]))).status, tenant).toBe(
        403
      )
    }
    // A tenant that can be substituted is admitted at the same kind of path (the control case).
    expect(
      (
        await postScore(
          controller.http,
          { ...fixtures, reference: pairIn("acme").reference },
          await token("acme", ["svc:writer"])
        )
      ).status
    ).toBe(200)
  })

  it("keeps tenants apart: jobs are stamped with the caller's tenant", async () => {
    const job = expectOk(await client.submit(pairIn("globex"), await token("globex", ["svc:writer"])))
    expect(job.tenant_id).toBe("globex")
    const other = await client.getJob(String(job.id), await token("acme", ["svc:reader"]))
    expect(other).toEqual({
      ok: false,
      code: grpc.status.PERMISSION_DENIED,
      details: "resource belongs to another tenant"
    })
    const own = expectOk(await client.getJob(String(job.id), await token("globex", ["svc:reader"])))
    expect(own.id).toBe(job.id)
  })

  it("refuses a token of another issuer, one without the configured tenant claim, and an expired one", async () => {
    const refusals = [
      await signToken(key, { iss: "https://other.example.test", org: "acme", svc_roles: ["svc:writer"] }, now()),
      await signToken(key, { iss: ISSUER, tid: "acme", svc_roles: ["svc:writer"] }, now()),
      await token("acme", ["svc:writer"], { exp: now() - 60 })
    ]
    for (const refused of refusals) {
      const response = await postScore(controller.http, pairIn("acme"), refused)
      expect(response.status).toBe(401)
      expect(response.headers.get("www-authenticate")).toContain("Bearer")
      expect(await response.json()).toEqual({ error: "invalid or missing token" })
    }
  })

  it("gives a token without roles nothing", async () => {
    const response = await postScore(controller.http, pairIn("acme"), await token("acme", []))
    expect(response.status).toBe(403)
    expect(((await response.json()) as { error: string }).error).toMatch(/^role required: /)
  })
})
