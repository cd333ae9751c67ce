/**
 * svc-operator acting for each namespace's own tenant, and bounded under hostile objects (issue
 * 34): the compiled svc-operator against the TLS Kubernetes API double, a real compiled
 * svc-controller in registry mode with tenants a and b (JWKS served by the test) and real svc-nodes
 * (one per tenant). Namespace `acme` is tenant a's, `globex` tenant b's, `stray` is watched with
 * no tenant. The inputs are small .y4m pairs the test writes under each tenant's root, so nothing
 * outside the repository is read.
 */
import * as grpc from "@grpc/grpc-js"
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { opensslAvailable, tenantDocument } from "../../local/auth.ts"
import { type RunningService, startService } from "../../local/executables.ts"
import { FINALIZER, type Resource, useOperatorSetup } from "./operator-support.ts"
import {
  expectOk,
  IdentityProviders,
  ISSUER_A,
  ISSUER_B,
  AUDIENCE_A,
  makeTokens,
  startNode,
  type Tokens,
  waitFor
} from "./controller-support.ts"

const RELEASE_NAMESPACE = "svc-system"
const ACME = "acme"
const GLOBEX = "globex"
const STRAY = "stray"
/** The chart's memory limit of the operator (operator.resources.limits.memory). */
const MEMORY_LIMIT_BYTES = 256 * 1024 * 1024
/** A field of 1.4 MB, as in the issue's hostile SvcJobs. */
const HUGE = "m".repeat(1_400_000)

/** A small 4:2:0 8-bit .y4m: a moving gradient, with `noise` added to every luma sample's low bits. */
const y4m = (frames: number, noise: number): Buffer => {
  const width = 176
  const height = 144
  const parts: Array<Buffer> = [Buffer.from(`YUV4MPEG2 W${width} H${height} F25:1 Ip A1:1 C420jpeg\n`)]
  for (let frame = 0; frame < frames; frame++) {
    const picture = Buffer.alloc((width * height * 3) / 2, 128)
    for (let y = 0; y < height; y++)
      for (let x = 0; x < width; x++)
        picture[y * width + x] = (x * 2 + y + frame * 5 + (noise > 0 ? (x * 7 + y * 13) % noise : 0)) & 0xff
    parts.push(Buffer.from("FRAME\n"), picture)
  }
  return Buffer.concat(parts)
}

/** Resident-set high-water mark of a process (Linux /proc), in bytes. */
const peakMemory = async (pid: number): Promise<number> => {
  const status = await Bun.file(`/proc/${pid}/status`).text()
  const kib = /VmHWM:\s+(\d+) kB/.exec(status)?.[1]
  if (kib === undefined) throw new Error("no VmHWM")
  return Number(kib) * 1024
}

const idp = new IdentityProviders()
let tokens: Tokens
beforeAll(async () => {
  tokens = await makeTokens(idp)
})
afterAll(() => idp.stop())

describe.skipIf(!opensslAvailable)("svc-operator with a tenant per namespace (two tenants, real nodes)", () => {
  const setup = useOperatorSetup({
    namespace: RELEASE_NAMESPACE,
    tenants: () => tenantsFile(false),
    trustApi: true,
    prepare: (scratch) => {
      for (const root of [scratch.rootA, scratch.rootB]) {
        writeFileSync(join(root, "ref.y4m"), y4m(3, 0))
        writeFileSync(join(root, "dis.y4m"), y4m(3, 5))
      }
    }
  })
  const { scratch, api, running } = setup
  const pairA = { reference: join(scratch.rootA, "ref.y4m"), distorted: join(scratch.rootA, "dis.y4m") }
  const pairB = { reference: join(scratch.rootB, "ref.y4m"), distorted: join(scratch.rootB, "dis.y4m") }

  const tenantsFile = (suspendB: boolean) =>
    JSON.stringify({
      apiVersion: "v1",
      kind: "List",
      items: [
        tenantDocument("a", {
          oidc: { issuer: ISSUER_A, jwksEndpoint: idp.jwks("a"), audience: AUDIENCE_A },
          rbac: { allowedRoles: ["svc:reader", "svc:writer", "svc:node"], defaultRole: "svc:reader" },
          scoring: { roots: [scratch.rootA] }
        }),
        tenantDocument("b", {
          enabled: !suspendB,
          oidc: { issuer: ISSUER_B, jwksEndpoint: idp.jwks("b") },
          rbac: { allowedRoles: ["svc:reader", "svc:writer", "svc:node"], defaultRole: "svc:reader" },
          scoring: { roots: [scratch.rootB] }
        })
      ]
    })

  const get = (namespace: string, name: string) =>
    api.get("svc.dev", "svcjobs", namespace, name) as Resource | undefined
  const apply = (namespace: string, name: string, spec: Record<string, unknown>) =>
    api.create("svc.dev", "svcjobs", namespace, { apiVersion: "svc.dev/v1", kind: "SvcJob", metadata: { name }, spec })
  const inPhase = (namespace: string, name: string, phase: string, timeoutMs = 60_000) =>
    waitFor(
      async () => (get(namespace, name)?.status?.phase === phase ? get(namespace, name) : undefined),
      timeoutMs,
      `${namespace}/${name} ${phase}`
    )
  const gone = (namespace: string, name: string) =>
    waitFor(async () => (get(namespace, name) === undefined ? true : undefined), 60_000, `${namespace}/${name} gone`)
  const eventsOf = setup.eventsOf
  /** A tenant's controller jobs, as its reader sees them. */
  const jobsOf = async (token: string) =>
    expectOk(await setup.client.streamJobs({ states: [], follow: false, limit: 0 }, token)) as ReadonlyArray<{
      id: string
      state: string
      idempotency_key: string
    }>

  const startOperator = (identity: string, extra: Record<string, string> = {}): Promise<RunningService> =>
    setup.startOperator({
      SVC_OPERATOR_TENANT_TOKENS: `${ACME}=${scratch.write("acme.token", tokens.aWriter)},${GLOBEX}=${scratch.write("globex.token", tokens.bWriter)}`,
      SVC_OPERATOR_NAMESPACES: STRAY,
      SVC_OPERATOR_IDENTITY: identity,
      SVC_OPERATOR_LEASE_NAME: "lease-tenants",
      SVC_OPERATOR_LIST_PAGE_SIZE: "8",
      ...extra
    })

  it("a shared token with several namespaces stops the operator, naming the settings", async () => {
    const service = await startService("svc-operator", {
      env: {
        ...setup.operatorEnv(),
        SVC_CONTROLLER_TOKEN_FILE: scratch.write("shared.token", tokens.aWriter),
        SVC_OPERATOR_NAMESPACES: `${ACME},${GLOBEX}`
      }
    }).catch((error: unknown) => error)
    let text: string
    if (service instanceof Error) text = service.message
    else {
      const started = service as RunningService
      await waitFor(async () => (started.process.exitCode !== null ? true : undefined), 20_000, "the operator to stop")
      text = JSON.stringify(started.logs)
      expect(started.process.exitCode).not.toBe(0)
    }
    expect(text).toContain("SVC_CONTROLLER_TOKEN_FILE")
    expect(text).toContain("SVC_OPERATOR_TENANT_TOKENS")
  }, 30_000)

  it("each namespace scores as its own tenant, with its roots; the other tenant's files and an unmapped namespace are refused", async () => {
    const operator = await startOperator("op-tenants")
    apply(ACME, "scored", pairA)
    apply(GLOBEX, "scored", pairB)
    apply(GLOBEX, "borrowed", pairA)
    apply(STRAY, "orphan", pairA)
    const nodeA = await startNode(scratch, setup.controller.grpc ?? "", tokens.aNode, "node-a")
    const nodeB = await startNode(scratch, setup.controller.grpc ?? "", tokens.bNode, "node-b")
    running.push(nodeA, nodeB)
    const acme = await inPhase(ACME, "scored", "Finished")
    const globex = await inPhase(GLOBEX, "scored", "Finished")
    expect(acme.status?.score).toBeGreaterThan(0)
    expect(globex.status?.score).toBeGreaterThan(0)
    // Each controller job belongs to its namespace's tenant, keyed by the SvcJob's uid.
    const aJobs = await jobsOf(tokens.aReader)
    const bJobs = await jobsOf(tokens.bReader)
    expect(aJobs.find((job) => job.id === acme.status?.jobId)?.idempotency_key).toBe(acme.metadata.uid)
    expect(bJobs.find((job) => job.id === globex.status?.jobId)?.idempotency_key).toBe(globex.metadata.uid)
    expect(aJobs.some((job) => job.id === globex.status?.jobId)).toBe(false)
    expect(bJobs.some((job) => job.id === acme.status?.jobId)).toBe(false)
    const crossRead = await setup.client.getJob(String(acme.status?.jobId), tokens.bReader)
    expect(crossRead.ok ? undefined : crossRead.code).toBe(grpc.status.PERMISSION_DENIED)
    // globex naming tenant a's files: refused as outside b's roots, final.
    const borrowed = await inPhase(GLOBEX, "borrowed", "Failed")
    expect(borrowed.status?.error).toContain("PERMISSION_DENIED")
    expect(borrowed.status?.error).toContain("outside the tenant's scoring roots")
    expect(borrowed.status?.jobId).toBeUndefined()
    // A namespace without a tenant: Failed with an Event, never submitted as anyone.
    const orphan = await inPhase(STRAY, "orphan", "Failed")
    expect(orphan.status?.conditions?.find((c) => c.type === "Submitted")?.reason).toBe("NoTenant")
    expect(orphan.metadata.finalizers ?? []).toEqual([])
    await waitFor(async () => eventsOf(STRAY, "orphan").find((e) => e.reason === "NoTenant"), 10_000, "NoTenant event")
    const keys = [...(await jobsOf(tokens.aReader)), ...(await jobsOf(tokens.bReader))].map(
      (job) => job.idempotency_key
    )
    expect(keys).not.toContain(orphan.metadata.uid)
    expect(keys).not.toContain(borrowed.metadata.uid)
    // Each tenant's nodes are mirrored from its own session list, in the release namespace.
    await waitFor(
      async () => api.get("svc.dev", "svcnodes", RELEASE_NAMESPACE, `${ACME}.node-a`),
      20_000,
      "acme's SvcNode"
    )
    await waitFor(
      async () => api.get("svc.dev", "svcnodes", RELEASE_NAMESPACE, `${GLOBEX}.node-b`),
      20_000,
      "globex's SvcNode"
    )
    expect(api.get("svc.dev", "svcnodes", RELEASE_NAMESPACE, `${ACME}.node-b`)).toBeUndefined()
    expect(api.list("svc.dev", "svcnodes", ACME)).toEqual([])
    console.log(
      `operator peak resident memory (no hostile objects): ${((await peakMemory(operator.process.pid)) / 1024 / 1024).toFixed(1)} MiB`
    )
    await nodeA.stop()
    await nodeB.stop()
  }, 180_000)

  it("an unknown model ends Failed at once (NOT_FOUND is final), and is not submitted again", async () => {
    const operator = await startOperator("op-model")
    apply(ACME, "unknown-model", { ...pairA, model: "no_such_model" })
    const failed = await inPhase(ACME, "unknown-model", "Failed")
    expect(failed.status?.error).toContain("NOT_FOUND")
    expect(failed.status?.error).toContain("no_such_model")
    // Several resyncs later: still Failed, the finalizer gone, refused once and never resubmitted.
    await Bun.sleep(3_000)
    expect(get(ACME, "unknown-model")?.status?.phase).toBe("Failed")
    expect(get(ACME, "unknown-model")?.metadata.finalizers ?? []).toEqual([])
    const refusals = operator.logs.filter(
      (line) => line.message === "SvcJob refused" && line.annotations.svcjob === `${ACME}/unknown-model`
    )
    expect(refusals).toHaveLength(1)
    const keys = (await jobsOf(tokens.aReader)).map((job) => job.idempotency_key)
    expect(keys).not.toContain(failed.metadata.uid)
  }, 60_000)

  it("deleting a SvcJob whose status names another job's id cancels only its own job", async () => {
    const first = await startOperator("op-forge")
    apply(ACME, "victim", pairA)
    apply(ACME, "forger", pairA)
    const victim = await inPhase(ACME, "victim", "Pending")
    const forger = await inPhase(ACME, "forger", "Pending")
    await first.stop("SIGKILL")
    // Someone with rights on the status subresource points the forger at the victim's job, then deletes it.
    api.setStatus("svc.dev", "svcjobs", ACME, "forger", { ...forger.status, jobId: victim.status?.jobId })
    api.delete("svc.dev", "svcjobs", ACME, "forger")
    await startOperator("op-forge-2")
    await gone(ACME, "forger")
    const victimJob = expectOk(await setup.client.getJob(String(victim.status?.jobId), tokens.aReader))
    expect(victimJob.state).toBe("JOB_STATE_PENDING")
    const forgerJob = expectOk(await setup.client.getJob(String(forger.status?.jobId), tokens.aReader))
    expect(forgerJob.state).toBe("JOB_STATE_CANCELLED")
    // A forged id on a live SvcJob is replaced by the proven one, never read into its status.
    api.setStatus("svc.dev", "svcjobs", ACME, "victim", { ...victim.status, jobId: String(forger.status?.jobId) })
    await waitFor(
      async () => (get(ACME, "victim")?.status?.jobId === victim.status?.jobId ? true : undefined),
      20_000,
      "victim's own id back"
    )
    expect(get(ACME, "victim")?.status?.phase).toBe("Pending")
    expectOk(await setup.client.unary("svc.v1.Jobs", "CancelJob", { id: victim.status?.jobId }, tokens.aWriter))
  }, 90_000)

  it("twelve SvcJobs with 1.4 MB fields delay no other namespace's SvcJob and end Failed; memory stays bounded, also with chunked lists", async () => {
    for (let index = 0; index < 12; index++) apply(GLOBEX, `hostile-${index}`, { ...pairB, model: HUGE })
    apply(GLOBEX, "legit", pairB)
    api.chunked = true
    // The default resync (30 s) is what a deployment sees; 5 s still re-lists every hostile page twice here.
    const operator = await startOperator("op-hostile", { SVC_OPERATOR_RESYNC_MS: "5000" })
    apply(ACME, "neighbour", pairA)
    await inPhase(ACME, "neighbour", "Pending")
    // The hostile namespace is worked through page by page: its own legitimate SvcJob is submitted too.
    await inPhase(GLOBEX, "legit", "Pending", 120_000)
    for (let index = 0; index < 12; index++) {
      const hostile = await inPhase(GLOBEX, `hostile-${index}`, "Failed", 120_000)
      expect(hostile.status?.conditions?.find((c) => c.type === "Submitted")?.reason).toBe("Oversized")
    }
    const hostileUids = new Set(
      api
        .list("svc.dev", "svcjobs", GLOBEX)
        .filter((item) => String(item.metadata.name).startsWith("hostile-"))
        .map((item) => item.metadata.uid)
    )
    expect((await jobsOf(tokens.bReader)).filter((job) => hostileUids.has(job.idempotency_key))).toEqual([])
    // A server that answers every list whole (chunked, no Content-Length): the read cap holds.
    api.ignoreLimit = true
    apply(ACME, "neighbour-2", pairA)
    await inPhase(ACME, "neighbour-2", "Pending")
    await waitFor(
      async () => operator.logs.find((line) => /more than \d+ bytes/.test(line.message)),
      30_000,
      "a capped read"
    )
    const peak = await peakMemory(operator.process.pid)
    console.log(`operator peak resident memory: ${(peak / 1024 / 1024).toFixed(1)} MiB`)
    expect(peak).toBeLessThan(MEMORY_LIMIT_BYTES)
    api.ignoreLimit = false
    api.chunked = false
    for (const name of ["neighbour", "neighbour-2"]) {
      const id = get(ACME, name)?.status?.jobId
      expectOk(await setup.client.unary("svc.v1.Jobs", "CancelJob", { id }, tokens.aWriter))
    }
    const legit = get(GLOBEX, "legit")?.status?.jobId
    expectOk(await setup.client.unary("svc.v1.Jobs", "CancelJob", { id: legit }, tokens.bWriter))
  }, 240_000)

  it("a cancel the controller keeps refusing is tried a bounded number of times, then the finalizer goes with a Warning", async () => {
    const operator = await startOperator("op-refused")
    apply(GLOBEX, "stuck", pairB)
    const pending = await inPhase(GLOBEX, "stuck", "Pending")
    expect(pending.metadata.finalizers).toEqual([FINALIZER])
    // Tenant b suspended: every call of its token is refused with PERMISSION_DENIED.
    scratch.write("tenants.json", tenantsFile(true))
    await waitFor(
      async () => {
        const outcome = await setup.client.getJob(String(pending.status?.jobId), tokens.bReader)
        return !outcome.ok && outcome.code === grpc.status.PERMISSION_DENIED ? true : undefined
      },
      20_000,
      "tenant b suspended"
    )
    api.delete("svc.dev", "svcjobs", GLOBEX, "stuck")
    await gone(GLOBEX, "stuck")
    const warning = eventsOf(GLOBEX, "stuck").find((event) => event.reason === "CancelAbandoned")
    expect(warning?.type).toBe("Warning")
    expect(warning?.message).toContain("may still run")
    const retries = operator.logs.filter(
      (line) =>
        line.message === "cannot cancel the controller job; will retry" && line.annotations.svcjob === `${GLOBEX}/stuck`
    )
    expect(retries).toHaveLength(4)
    scratch.write("tenants.json", tenantsFile(false))
  }, 120_000)

  it("the controller refuses a 1.4 MB model name, path or node name without echoing it, and the connection's other calls go on", async () => {
    const seen: Array<string> = []
    const followed = setup.client.followJobs(tokens.aReader, (job) => {
      seen.push(String(job.id))
      return job.idempotency_key === "after-the-refusal"
    })
    const refused = await setup.client.unary(
      "svc.v1.Jobs",
      "SubmitJob",
      { request: { ...pairA, model: HUGE } },
      tokens.aWriter
    )
    expect(refused.ok ? undefined : refused.code).toBe(grpc.status.INVALID_ARGUMENT)
    expect(refused.ok ? 0 : refused.details.length).toBeLessThan(300)
    const huge = await setup.client.unary(
      "svc.v1.Jobs",
      "SubmitJob",
      { request: { ...pairA, reference: `/${"r".repeat(1_400_000)}` } },
      tokens.aWriter
    )
    expect(huge.ok ? undefined : huge.code).toBe(grpc.status.INVALID_ARGUMENT)
    expect(huge.ok ? 0 : huge.details.length).toBeLessThan(300)
    const node = await setup.client.unary(
      "svc.v1.Nodes",
      "RegisterNode",
      { name: "n".repeat(1_400_000), slots: 1, version: "t" },
      tokens.aNode
    )
    expect(node.ok ? undefined : node.code).toBe(grpc.status.INVALID_ARGUMENT)
    expect(node.ok ? 0 : node.details.length).toBeLessThan(300)
    const after = expectOk(
      await setup.client.unary(
        "svc.v1.Jobs",
        "SubmitJob",
        { request: pairA, idempotency_key: "after-the-refusal" },
        tokens.aWriter
      )
    )
    await followed
    expect(seen).toContain(after.id)
    expectOk(await setup.client.unary("svc.v1.Jobs", "CancelJob", { id: after.id }, tokens.aWriter))
  }, 60_000)
})
