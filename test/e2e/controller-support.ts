/**
 * Helpers of the svc-controller end-to-end tests: an identity provider double (JWKS endpoints
 * served by the test with keys it generates), a tenants file, tokens, the compiled controller and
 * node, and a gRPC client that returns statuses instead of throwing.
 */
import * as grpc from "@grpc/grpc-js"
import { mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll } from "vitest"
import {
  jsonHandler,
  jwksBody,
  LoopbackServer,
  makeKey,
  signToken,
  tenantDocument,
  type TestKey
} from "../../local/auth.ts"
import { serviceDefinition, type ServiceName } from "../../modules/transport/grpc/proto.ts"
import { fixturesDir, type RunningService, startService } from "../../local/executables.ts"

/** A free loopback port (for a controller that must come back on the same address). */
export { freePort } from "../../local/free-port.ts"

export const GOLDEN_V01_VMAF = 75.423021

export const v01 = {
  reference: join(fixturesDir, "v01_testsrc2_420_8_x264.ref.yuv"),
  distorted: join(fixturesDir, "v01_testsrc2_420_8_x264.dis.yuv"),
  options: { width: 320, height: 240, pixel_format: "420", bitdepth: 8 }
} as const

export const ISSUER_A = "https://idp-a.example.test"
export const ISSUER_B = "https://idp-b.example.test"
/** Tenants c and d share one provider with different tenant claims: a token naming both is ambiguous. */
export const ISSUER_CD = "https://idp-cd.example.test"
/** Tenant e is suspended from the start. */
export const ISSUER_E = "https://idp-e.example.test"
export const AUDIENCE_A = "svc-a"
const ALL_ROLES = ["svc:reader", "svc:writer", "svc:admin", "svc:node"]

/** A scratch directory: tenant roots, links, the tenants file, the job store, token files. */
export class Scratch {
  readonly dir = mkdtempSync(join(tmpdir(), "svc-controller-e2e-"))
  /** Tenant a's second root: a link to a fixture (resolves under the fixtures root) and one escaping every root. */
  readonly rootA = join(this.dir, "roots", "a")
  readonly rootB = join(this.dir, "roots", "b")
  readonly outside = join(this.dir, "outside")
  readonly tenantsFile = join(this.dir, "tenants.json")

  constructor() {
    for (const dir of [this.rootA, this.rootB, this.outside]) mkdirSync(dir, { recursive: true })
    symlinkSync(v01.reference, join(this.rootA, "linked.ref.yuv"))
    symlinkSync(v01.distorted, join(this.rootA, "linked.dis.yuv"))
    writeFileSync(join(this.outside, "secret.yuv"), "")
    symlinkSync(join(this.outside, "secret.yuv"), join(this.rootA, "escape.yuv"))
  }

  path(...parts: ReadonlyArray<string>): string {
    return join(this.dir, ...parts)
  }

  /** Writes `name` with `text` atomically (the controller may read it at any moment). */
  write(name: string, text: string): string {
    const target = this.path(name)
    writeFileSync(`${target}.tmp`, text)
    renameSync(`${target}.tmp`, target)
    return target
  }

  remove(): void {
    rmSync(this.dir, { recursive: true, force: true })
  }
}

/** The identity providers of the tenants: one key and JWKS endpoint each, served on loopback. */
export class IdentityProviders {
  readonly keys = { a: makeKey("key-a"), b: makeKey("key-b"), cd: makeKey("key-cd"), e: makeKey("key-e") }
  /** Published in A's JWKS but below 2048 bits: skipped, tokens signed with it refused. */
  readonly smallKey = makeKey("key-small", 1024)
  private readonly server = new LoopbackServer((request) => {
    const path = new URL(request.url).pathname
    const published: Record<string, ReadonlyArray<TestKey>> = {
      "/a/jwks": [this.keys.a, this.smallKey],
      "/b/jwks": [this.keys.b],
      "/cd/jwks": [this.keys.cd],
      "/e/jwks": [this.keys.e]
    }
    const keys = published[path]
    return keys === undefined
      ? new Response("not found", { status: 404 })
      : jsonHandler(() => jwksBody(...keys.map((key) => key.jwk)))(request)
  })

  jwks(provider: "a" | "b" | "cd" | "e"): string {
    return this.server.url(`/${provider}/jwks`)
  }

  stop(): void {
    this.server.stop()
  }
}

export interface TenantOptions {
  readonly suspendB?: boolean
  /** Tenant b without scoring roots (its jobs reach a node without roots). */
  readonly noRootsB?: boolean
}

/** Tenants a and b (the two of the issue), c and d (one shared provider), e (suspended). */
export const tenantsDocument = (idp: IdentityProviders, scratch: Scratch, options: TenantOptions = {}): string => {
  const rbac = { allowedRoles: ALL_ROLES, defaultRole: "svc:reader" }
  return JSON.stringify({
    apiVersion: "v1",
    kind: "List",
    items: [
      tenantDocument("a", {
        oidc: { issuer: ISSUER_A, jwksEndpoint: idp.jwks("a"), audience: AUDIENCE_A },
        rbac,
        scoring: { roots: [fixturesDir, scratch.rootA] }
      }),
      tenantDocument("b", {
        enabled: options.suspendB !== true,
        oidc: { issuer: ISSUER_B, jwksEndpoint: idp.jwks("b") },
        rbac,
        scoring: { roots: options.noRootsB === true ? [] : [scratch.rootB] }
      }),
      tenantDocument("c", { oidc: { issuer: ISSUER_CD, jwksEndpoint: idp.jwks("cd") }, rbac }),
      tenantDocument("d", { oidc: { issuer: ISSUER_CD, jwksEndpoint: idp.jwks("cd"), tenantClaim: "org" }, rbac }),
      tenantDocument("e", { enabled: false, oidc: { issuer: ISSUER_E, jwksEndpoint: idp.jwks("e") }, rbac })
    ]
  })
}

const now = () => Math.floor(Date.now() / 1000)

/** Tokens of every caller the tests need (valid for an hour). */
export const makeTokens = async (idp: IdentityProviders) => {
  const a = (roles: ReadonlyArray<string>, extra: Record<string, unknown> = {}) =>
    signToken(
      idp.keys.a,
      { iss: ISSUER_A, aud: AUDIENCE_A, tid: "a", sub: "user@a", svc_roles: roles, ...extra },
      now()
    )
  const b = (roles: ReadonlyArray<string>) =>
    signToken(idp.keys.b, { iss: ISSUER_B, tid: "b", sub: "user@b", svc_roles: roles }, now())
  return {
    aReader: await a(["svc:reader"]),
    aWriter: await a(["svc:writer"]),
    aAdmin: await a(["svc:admin"]),
    aNode: await a(["svc:node"]),
    bReader: await b(["svc:reader"]),
    bWriter: await b(["svc:writer"]),
    bNode: await b(["svc:node"]),
    /** Issued for tenant a, with the token signed by a's key: helpers for the refusal rows. */
    a
  }
}
export type Tokens = Awaited<ReturnType<typeof makeTokens>>

export const controllerEnv = (scratch: Scratch, extra: Record<string, string> = {}): Record<string, string> => ({
  SVC_AUTH_TENANTS_SOURCE: "file",
  SVC_AUTH_TENANTS_FILE: scratch.tenantsFile,
  SVC_AUTH_TENANTS_REFRESH: "1s",
  SVC_STORE_PATH: scratch.path("jobs.sqlite"),
  SVC_LOG_LEVEL: "info",
  ...extra
})

export const startController = (env: Record<string, string>): Promise<RunningService> =>
  startService("svc-controller", { env, listeners: ["http", "grpc"] })

/** svc-node with a token file holding `token`, polling often so jobs start at once. */
export const startNode = (
  scratch: Scratch,
  controllerGrpc: string,
  token: string,
  name: string
): Promise<RunningService> =>
  startService("svc-node", {
    env: {
      SVC_CONTROLLER_ADDR: controllerGrpc,
      SVC_CONTROLLER_TOKEN_FILE: scratch.write(`${name}.token`, token),
      SVC_NODE_NAME: name,
      SVC_NODE_POLL_INTERVAL_MS: "100",
      SVC_LOG_LEVEL: "info"
    }
  })

/** What `useControllerAndNode` starts; the services are there from the first test on. */
export interface ControllerAndNode {
  readonly scratch: Scratch
  readonly idp: IdentityProviders
  tokens: Tokens
  controller: RunningService
  node: RunningService
  client: ControllerClient
}

/**
 * The set-up the controller-and-node e2e files share: a scratch folder with tenant roots, the
 * identity providers and their tokens, the tenants file, the compiled controller in registry mode
 * and one node of tenant a. `prepare` writes the inputs into the scratch folder before the
 * controller starts. Registers the calling file's (or describe's) beforeAll and afterAll.
 */
export const useControllerAndNode = (
  prepare: (scratch: Scratch) => void | Promise<void> = () => undefined
): ControllerAndNode => {
  const setup = { scratch: new Scratch(), idp: new IdentityProviders() } as ControllerAndNode
  beforeAll(async () => {
    setup.tokens = await makeTokens(setup.idp)
    setup.scratch.write("tenants.json", tenantsDocument(setup.idp, setup.scratch))
    await prepare(setup.scratch)
    setup.controller = await startController(controllerEnv(setup.scratch))
    setup.client = new ControllerClient(setup.controller.grpc ?? "")
    setup.node = await startNode(setup.scratch, setup.controller.grpc ?? "", setup.tokens.aNode, "node-a")
  }, 180_000)
  afterAll(async () => {
    setup.client?.close()
    await setup.node?.stop()
    await setup.controller?.stop()
    setup.idp.stop()
    setup.scratch.remove()
  })
  return setup
}

/** The outcome of a call: the response, or the status the server sent. */
export type Outcome<T = Record<string, unknown>> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly code: grpc.status; readonly details: string }

const failureOf = (error: grpc.ServiceError): Outcome<never> => ({
  ok: false,
  code: error.code,
  details: error.details
})

/** A gRPC client of the controller's three services; every call takes the bearer token to send. */
export class ControllerClient {
  private readonly client: grpc.Client

  constructor(address: string) {
    this.client = new grpc.Client(address, grpc.credentials.createInsecure())
  }

  private definition(service: ServiceName, method: string) {
    const definition = serviceDefinition(service)[method]
    if (definition === undefined) throw new Error(`no method ${service}/${method}`)
    return definition
  }

  /**
   * A hung call fails with DEADLINE_EXCEEDED; generous, because a loaded machine makes a
   * 30-frame ScoreStream take tens of seconds (a call that answers returns at once).
   */
  private options(): grpc.CallOptions {
    return { deadline: Date.now() + 120_000 }
  }

  private metadata(token: string | undefined): grpc.Metadata {
    const metadata = new grpc.Metadata()
    if (token !== undefined) metadata.set("authorization", token.includes(" ") ? token : `Bearer ${token}`)
    return metadata
  }

  unary(service: ServiceName, method: string, request: object, token: string | undefined): Promise<Outcome> {
    const { path, requestSerialize, responseDeserialize } = this.definition(service, method)
    return new Promise((resolve) => {
      this.client.makeUnaryRequest<object, Record<string, unknown>>(
        path,
        requestSerialize,
        responseDeserialize,
        request,
        this.metadata(token),
        this.options(),
        (error, response) => resolve(error ? failureOf(error) : { ok: true, value: response ?? {} })
      )
    })
  }

  /** StreamJobs without follow: every message until the end. */
  streamJobs(request: object, token: string | undefined): Promise<Outcome<ReadonlyArray<Record<string, unknown>>>> {
    const { path, requestSerialize, responseDeserialize } = this.definition("svc.v1.Jobs", "StreamJobs")
    const call = this.client.makeServerStreamRequest<object, Record<string, unknown>>(
      path,
      requestSerialize,
      responseDeserialize,
      request,
      this.metadata(token),
      this.options()
    )
    const received: Array<Record<string, unknown>> = []
    return new Promise((resolve) => {
      call.on("data", (message: Record<string, unknown>) => received.push(message))
      call.on("error", (error: grpc.ServiceError) => resolve(failureOf(error)))
      call.on("end", () => resolve({ ok: true, value: received }))
    })
  }

  /** StreamJobs with follow: every message until one satisfies `until`, then the call is cancelled. */
  followJobs(
    token: string,
    until: (job: Record<string, unknown>) => boolean
  ): Promise<ReadonlyArray<Record<string, unknown>>> {
    const { path, requestSerialize, responseDeserialize } = this.definition("svc.v1.Jobs", "StreamJobs")
    const request = { states: [], follow: true, limit: 0 }
    const call = this.client.makeServerStreamRequest<object, Record<string, unknown>>(
      path,
      requestSerialize,
      responseDeserialize,
      request,
      this.metadata(token),
      this.options()
    )
    const received: Array<Record<string, unknown>> = []
    return new Promise((resolve, reject) => {
      call.on("data", (message: Record<string, unknown>) => {
        received.push(message)
        if (until(message)) {
          call.cancel()
          resolve(received)
        }
      })
      call.on("error", (error: grpc.ServiceError) => {
        if (error.code !== grpc.status.CANCELLED) reject(error)
      })
    })
  }

  /** ScoreStream with the given messages. */
  scoreStream(
    messages: ReadonlyArray<object>,
    token: string | undefined
  ): Promise<Outcome<ReadonlyArray<Record<string, unknown>>>> {
    const { path, requestSerialize, responseDeserialize } = this.definition("svc.v1.SvcScoring", "ScoreStream")
    const call = this.client.makeBidiStreamRequest<object, Record<string, unknown>>(
      path,
      requestSerialize,
      responseDeserialize,
      this.metadata(token),
      this.options()
    )
    const received: Array<Record<string, unknown>> = []
    return new Promise((resolve) => {
      call.on("data", (message: Record<string, unknown>) => received.push(message))
      call.on("error", (error: grpc.ServiceError) => resolve(failureOf(error)))
      call.on("end", () => resolve({ ok: true, value: received }))
      for (const message of messages) call.write(message)
      call.end()
    })
  }

  submit(request: object, token: string) {
    return this.unary("svc.v1.Jobs", "SubmitJob", { request }, token)
  }

  getJob(id: string, token: string | undefined) {
    return this.unary("svc.v1.Jobs", "GetJob", { id }, token)
  }

  close(): void {
    this.client.close()
  }
}

/** The response of a call that must succeed. */
export const expectOk = <T>(outcome: Outcome<T>): T => {
  if (!outcome.ok) throw new Error(`call failed: ${grpc.status[outcome.code]} ${outcome.details}`)
  return outcome.value
}

/** Polls `probe` until it returns a value (not undefined) or `timeoutMs` passes. */
export const waitFor = async <T>(probe: () => Promise<T | undefined>, timeoutMs: number, what: string): Promise<T> => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await probe()
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await Bun.sleep(50)
  }
}

/** The job once it is in `state` (polled with GetJob). */
/** Waits (up to two minutes: the machine may be loaded) for a job to reach `state`. */
export const jobInState = (client: ControllerClient, id: string, token: string, state: string, timeoutMs = 120_000) =>
  waitFor(
    async () => {
      const outcome = await client.getJob(id, token)
      return outcome.ok && outcome.value.state === state ? outcome.value : undefined
    },
    timeoutMs,
    `job ${id} to be ${state}`
  )

/** POST /v1/score with an optional bearer token. */
export const postScore = (http: string, body: unknown, token: string | undefined) =>
  fetch(`${http}/v1/score`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      ...(token === undefined ? {} : { authorization: `Bearer ${token}` })
    },
    body: JSON.stringify(body)
  })
