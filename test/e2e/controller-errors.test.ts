/**
 * Seed 000, section 7, row by row against the compiled controller in registry mode: the exact
 * gRPC status and message, and where the row applies to `POST /v1/score` the HTTP status, the
 * body `{"error": "<message>"}` and, on 401, `WWW-Authenticate: Bearer`. The row "method absent
 * from the role table" needs a served method outside the table, which the real controller does
 * not have: controller-methods.test.ts proves it through the same server code in-process.
 */
import { status as GrpcStatus } from "@grpc/grpc-js"
import { sign } from "node:crypto"
import { rmSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeKey, signToken, type TestKey, unsignedToken } from "../../local/auth.ts"
import type { RunningService } from "../../local/executables.ts"
import {
  AUDIENCE_A,
  ControllerClient,
  controllerEnv,
  expectOk,
  IdentityProviders,
  ISSUER_A,
  ISSUER_CD,
  ISSUER_E,
  makeTokens,
  type Outcome,
  postScore,
  Scratch,
  startController,
  tenantsDocument,
  type Tokens,
  v01,
  waitFor
} from "./controller-support.ts"

const INVALID_TOKEN = "invalid or missing token"
const v01Request = { reference: v01.reference, distorted: v01.distorted, options: v01.options }
const now = () => Math.floor(Date.now() / 1000)

const idp = new IdentityProviders()
const scratch = new Scratch()
let controller: RunningService
let client: ControllerClient
let tokens: Tokens
/** A pending job of tenant a, a node session of a, and one of b (filled in beforeAll). */
let jobA = ""
let sessionA = ""
let sessionB = ""

beforeAll(async () => {
  tokens = await makeTokens(idp)
  scratch.write("tenants.json", tenantsDocument(idp, scratch))
  controller = await startController(controllerEnv(scratch))
  client = new ControllerClient(controller.grpc ?? "")
  jobA = String(expectOk(await client.submit(v01Request, tokens.aWriter)).id)
  const register = async (token: string) =>
    String(
      expectOk(await client.unary("svc.v1.Nodes", "RegisterNode", { name: "probe", slots: 1, version: "t" }, token))
        .node_id
    )
  sessionA = await register(tokens.aNode)
  sessionB = await register(tokens.bNode)
})
afterAll(async () => {
  client.close()
  expect(await controller.stop()).toBe(0)
  idp.stop()
  scratch.remove()
})

/** Claims of a valid writer token of tenant a, to be spoiled one field at a time. */
const claimsA = (extra: Record<string, unknown> = {}) => ({
  iss: ISSUER_A,
  aud: AUDIENCE_A,
  tid: "a",
  sub: "w@a",
  svc_roles: ["svc:writer"],
  ...extra
})
const signA = (extra: Record<string, unknown> = {}, key: TestKey = idp.keys.a) => signToken(key, claimsA(extra), now())
/** a's kid with b's private key: the signature does not verify. */
const forgedKey = (): TestKey => ({ ...idp.keys.a, privateKey: idp.keys.b.privateKey })
const unknownKey = makeKey("key-not-published")

/** jose refuses to sign with a key below 2048 bits, so this RS256 token is signed by hand. */
const signWithSmallKey = (): string => {
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString("base64url")
  const input = `${part({ alg: "RS256", kid: idp.smallKey.kid, typ: "JWT" })}.${part(claimsA({ exp: now() + 600 }))}`
  return `${input}.${sign("sha256", Buffer.from(input), idp.smallKey.privateKey).toString("base64url")}`
}

interface Row {
  readonly condition: string
  /** The token to send (undefined: none), or the whole authorization value when it has a space. */
  readonly token: () => Promise<string | undefined>
  /** Defaults to SubmitJob of the v01 pair. */
  readonly call?: (token: string | undefined) => Promise<Outcome>
  readonly code: GrpcStatus
  /** A function where the message names ids that exist only after beforeAll. */
  readonly message: string | (() => string)
  /** POST /v1/score with the same token, where the row applies to it. */
  readonly http?: { readonly status: number; readonly message: string }
}

const submit = (token: string | undefined) => client.unary("svc.v1.Jobs", "SubmitJob", { request: v01Request }, token)

const unauthenticated = (condition: string, token: () => Promise<string | undefined>): Row => ({
  condition,
  token,
  code: GrpcStatus.UNAUTHENTICATED,
  message: INVALID_TOKEN,
  http: { status: 401, message: INVALID_TOKEN }
})

const rows: ReadonlyArray<Row> = [
  unauthenticated("token missing", () => Promise.resolve(undefined)),
  unauthenticated("token malformed", () => Promise.resolve("not-a-jwt")),
  unauthenticated("not a bearer token", () => Promise.resolve("Basic dXNlcjpwYXNz")),
  unauthenticated("token expired", () => signA({ exp: now() - 60 })),
  unauthenticated("bad signature", () => signA({}, forgedKey())),
  unauthenticated("wrong issuer (no tenant for it)", () => signA({ iss: "https://unknown.example.test" })),
  unauthenticated("wrong audience", () => signA({ aud: "another-app" })),
  unauthenticated("alg HS256", () =>
    Promise.resolve(unsignedToken({ alg: "HS256", kid: "key-a", typ: "JWT" }, claimsA({ exp: now() + 600 })))
  ),
  unauthenticated("alg none", () =>
    Promise.resolve(unsignedToken({ alg: "none", kid: "key-a", typ: "JWT" }, claimsA({ exp: now() + 600 })))
  ),
  unauthenticated("key below 2048 bits", () => Promise.resolve(signWithSmallKey())),
  unauthenticated("unknown kid (refetch rate-limited)", () => signA({}, unknownKey)),
  unauthenticated("registry: no matching tenant (a's provider, b's ID)", () => signA({ tid: "b" })),
  unauthenticated("registry: two matching tenants", () =>
    signToken(idp.keys.cd, { iss: ISSUER_CD, tid: "c", org: "d", svc_roles: ["svc:writer"] }, now())
  ),
  {
    condition: "tenant has enabled: false",
    token: () => signToken(idp.keys.e, { iss: ISSUER_E, tid: "e", svc_roles: ["svc:writer"] }, now()),
    code: GrpcStatus.PERMISSION_DENIED,
    message: "tenant is suspended",
    http: { status: 403, message: "tenant is suspended" }
  },
  {
    condition: "reader calls SubmitJob / POST /v1/score",
    token: () => Promise.resolve(tokens.aReader),
    code: GrpcStatus.PERMISSION_DENIED,
    message: "role required: svc:writer, svc:admin",
    http: { status: 403, message: "role required: svc:writer, svc:admin" }
  },
  {
    condition: "node token calls GetJob",
    token: () => Promise.resolve(tokens.aNode),
    call: (token) => client.getJob(jobA, token),
    code: GrpcStatus.PERMISSION_DENIED,
    message: "role required: svc:reader, svc:writer, svc:admin",
    http: { status: 403, message: "role required: svc:writer, svc:admin" }
  },
  {
    condition: "admin calls PullWork (the node API is node only)",
    token: () => Promise.resolve(tokens.aAdmin),
    call: (token) => client.unary("svc.v1.Nodes", "PullWork", { node_id: sessionA, max_jobs: 1 }, token),
    code: GrpcStatus.PERMISSION_DENIED,
    message: "role required: svc:node"
  },
  {
    condition: "token whose roles are all unknown gets the default reader role",
    token: () => signA({ svc_roles: ["svc:root"] }),
    code: GrpcStatus.PERMISSION_DENIED,
    message: "role required: svc:writer, svc:admin",
    http: { status: 403, message: "role required: svc:writer, svc:admin" }
  },
  {
    condition: "GetJob on another tenant's job",
    token: () => Promise.resolve(tokens.bReader),
    call: (token) => client.getJob(jobA, token),
    code: GrpcStatus.PERMISSION_DENIED,
    message: "resource belongs to another tenant"
  },
  {
    condition: "CancelJob on another tenant's job",
    token: () => Promise.resolve(tokens.bWriter),
    call: (token) => client.unary("svc.v1.Jobs", "CancelJob", { id: jobA }, token),
    code: GrpcStatus.PERMISSION_DENIED,
    message: "resource belongs to another tenant"
  },
  {
    condition: "PullWork with another tenant's session",
    token: () => Promise.resolve(tokens.bNode),
    call: (token) => client.unary("svc.v1.Nodes", "PullWork", { node_id: sessionA, max_jobs: 1 }, token),
    code: GrpcStatus.PERMISSION_DENIED,
    message: "resource belongs to another tenant"
  },
  {
    condition: "ReportResult with another tenant's session",
    token: () => Promise.resolve(tokens.aNode),
    call: (token) =>
      client.unary("svc.v1.Nodes", "ReportResult", { node_id: sessionB, job_id: jobA, final: true, error: "x" }, token),
    code: GrpcStatus.PERMISSION_DENIED,
    message: () => `job "${jobA}" is not assigned to node "${sessionB}"`
  },
  {
    condition: "ReportResult for a job not assigned to the node (pending)",
    token: () => Promise.resolve(tokens.aNode),
    call: (token) =>
      client.unary("svc.v1.Nodes", "ReportResult", { node_id: sessionA, job_id: jobA, final: true, error: "x" }, token),
    code: GrpcStatus.PERMISSION_DENIED,
    message: () => `job "${jobA}" is not assigned to node "${sessionA}"`
  },
  {
    condition: "scoring input outside the tenant's roots (SubmitJob / POST /v1/score)",
    token: () => Promise.resolve(tokens.bWriter),
    code: GrpcStatus.PERMISSION_DENIED,
    message: `scoring input "${v01.reference}" is outside the tenant's scoring roots`,
    http: { status: 403, message: `scoring input "${v01.reference}" is outside the tenant's scoring roots` }
  },
  {
    condition: "scoring input outside the tenant's roots (Score)",
    token: () => Promise.resolve(tokens.bWriter),
    call: (token) => client.unary("svc.v1.SvcScoring", "Score", v01Request, token),
    code: GrpcStatus.PERMISSION_DENIED,
    message: `scoring input "${v01.reference}" is outside the tenant's scoring roots`
  }
]

describe("seed 000 section 7 over gRPC and HTTP", () => {
  it.each(rows)("$condition", async (row) => {
    const token = await row.token()
    const message = typeof row.message === "string" ? row.message : row.message()
    expect(await (row.call ?? submit)(token)).toEqual({ ok: false, code: row.code, details: message })
    if (row.http === undefined) return
    const response = await postScore(controller.http, v01Request, token)
    expect(response.status).toBe(row.http.status)
    expect(response.headers.get("content-type")).toContain("application/json")
    expect(response.headers.get("www-authenticate")).toBe(row.http.status === 401 ? "Bearer" : null)
    expect(await response.json()).toEqual({ error: row.http.message })
  })

  it("Heartbeat with another tenant's session answers ok=false (no error)", async () => {
    expect(
      await client.unary("svc.v1.Nodes", "Heartbeat", { node_id: sessionA, running_job_ids: [] }, tokens.bNode)
    ).toEqual({ ok: true, value: { ok: false } })
    expect(
      await client.unary("svc.v1.Nodes", "Heartbeat", { node_id: sessionA, running_job_ids: [] }, tokens.aNode)
    ).toEqual({ ok: true, value: { ok: true } })
  })

  it("the probes and metrics need no token", async () => {
    for (const path of ["/healthz", "/v1/health", "/readyz", "/v1/ready", "/metrics"]) {
      expect((await fetch(`${controller.http}${path}`)).status).toBe(200)
    }
  })

  it("serves nothing else without a token: /v1/models is 401, svc-server's /apidocs is not served", async () => {
    const models = await fetch(`${controller.http}/v1/models`)
    expect(models.status).toBe(401)
    expect(models.headers.get("www-authenticate")).toBe("Bearer")
    for (const path of ["/apidocs", "/apidocs/spec.json"]) {
      expect((await fetch(`${controller.http}${path}`)).status).toBe(404)
    }
  })

  it("tenant set stale: every call UNAVAILABLE, POST /v1/score 503, not ready", async () => {
    rmSync(join(scratch.dir, "tenants.json"))
    await waitFor(async () => ((await submit(tokens.aWriter)).ok ? undefined : true), 20_000, "the set to go stale")
    const stale = "tenant configuration is stale"
    for (const token of [tokens.aWriter, tokens.bReader, undefined]) {
      expect(await submit(token)).toEqual({ ok: false, code: GrpcStatus.UNAVAILABLE, details: stale })
      const response = await postScore(controller.http, v01Request, token)
      expect(response.status).toBe(503)
      expect(await response.json()).toEqual({ error: stale })
    }
    const ready = await fetch(`${controller.http}/v1/ready`)
    expect(ready.status).toBe(503)
  })
})
