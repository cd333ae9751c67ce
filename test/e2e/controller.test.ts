/**
 * svc-controller and svc-node end to end (seed 000, issue 5): the compiled executables, a JWKS
 * endpoint and a tenants file served by the test. A writer of tenant a submits a job, a's node
 * scores it, a's reader sees the score; every cross-tenant call of 5.5 and 5.6 is refused; a
 * suspension and a deleted tenants file take effect in time; `kill -9` loses no accepted job.
 */
import { status as GrpcStatus } from "@grpc/grpc-js"
import { rmSync } from "node:fs"
import { readFile } from "node:fs/promises"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest"
import { modelDirEnv, requireBuilt, runCommand, type RunningService } from "../../local/executables.ts"
import { repeatFile, v01Frames } from "./server-support.ts"
import {
  ControllerClient,
  controllerEnv,
  expectOk,
  freePort,
  GOLDEN_V01_VMAF,
  IdentityProviders,
  jobInState,
  makeTokens,
  postScore,
  Scratch,
  startController,
  startNode,
  tenantsDocument,
  type Tokens,
  v01,
  waitFor
} from "./controller-support.ts"

// Real processes, 600-frame scores and restarts: a loaded machine makes these tests slower, never
// wrong, so their limits are generous (a passing step returns as soon as its state is reached).
vi.setConfig({ testTimeout: 300_000, hookTimeout: 300_000 })

const v01Request = { reference: v01.reference, distorted: v01.distorted, options: v01.options }
const OTHER_TENANT = "resource belongs to another tenant"
const notAssigned = (jobId: string, nodeId: string) => `job "${jobId}" is not assigned to node "${nodeId}"`
const outsideRoots = (input: string) => `scoring input "${input}" is outside the tenant's scoring roots`

const idp = new IdentityProviders()
let tokens: Tokens
beforeAll(async () => {
  tokens = await makeTokens(idp)
})
afterAll(() => idp.stop())

describe("svc-controller with two tenants and a's node", () => {
  const scratch = new Scratch()
  let controller: RunningService
  let node: RunningService
  let client: ControllerClient
  /** A job of a, finished by a's node. */
  let jobA: Record<string, unknown>

  beforeAll(async () => {
    scratch.write("tenants.json", tenantsDocument(idp, scratch))
    controller = await startController(controllerEnv(scratch))
    client = new ControllerClient(controller.grpc ?? "")
    node = await startNode(scratch, controller.grpc ?? "", tokens.aNode, "node-a")
  })
  afterAll(async () => {
    client.close()
    await node.stop()
    expect(await controller.stop()).toBe(0)
    scratch.remove()
  })

  it("a's writer submits, a's node scores, a's reader sees the golden score", async () => {
    let followed = ""
    // a's reader follows a's jobs from before the submission to the final state.
    const following = client.followJobs(
      tokens.aReader,
      (job) => job.id === followed && job.state === "JOB_STATE_FINISHED"
    )
    const submitted = expectOk(await client.submit(v01Request, tokens.aWriter))
    followed = String(submitted.id)
    expect(submitted).toMatchObject({
      tenant_id: "a",
      state: "JOB_STATE_PENDING",
      submitted_by: "user@a",
      scoring_roots: []
    })
    const id = String(submitted.id)
    jobA = await jobInState(client, id, tokens.aReader, "JOB_STATE_FINISHED")
    const result = jobA.result as { readonly score: number; readonly frame_count: number }
    expect(Math.abs(result.score - GOLDEN_V01_VMAF)).toBeLessThan(1e-4)
    expect(result.frame_count).toBe(30)
    expect(jobA.tenant_id).toBe("a")
    const listed = expectOk(await client.streamJobs({ states: [], follow: false, limit: 0 }, tokens.aReader))
    expect(listed.map((job) => job.id)).toContain(id)
    const seen = (await following).filter((job) => job.id === id).map((job) => job.state)
    expect(seen[0]).toBe("JOB_STATE_PENDING")
    expect(seen.at(-1)).toBe("JOB_STATE_FINISHED")
    // The node sent its final report in a ReportResults call (it batches final reports); no
    // other caller has reported yet.
    const metrics = await (await fetch(`${controller.http}/metrics`)).text()
    expect(metrics).toMatch(/svc_grpc_requests_total\{method="\/svc\.v1\.Nodes\/ReportResults",code="OK"\} [1-9]/)
  })

  it("SvcScoring over the gateway: Health for a reader, ScoreStream for a writer only", async () => {
    expect(expectOk(await client.unary("svc.v1.SvcScoring", "Health", {}, tokens.aReader))).toMatchObject({
      status: "SERVING"
    })
    const frames = v01Frames()
    const header = { header: { model: "", options: v01.options } }
    const streamed = expectOk(await client.scoreStream([header, ...frames], tokens.aWriter))
    const aggregate = streamed.at(-1)?.aggregate as { readonly score: number } | undefined
    expect(Math.abs((aggregate?.score ?? 0) - GOLDEN_V01_VMAF)).toBeLessThan(1e-4)
    expect(await client.scoreStream([header, ...frames], tokens.aReader)).toEqual({
      ok: false,
      code: GrpcStatus.PERMISSION_DENIED,
      details: "role required: svc:writer, svc:admin"
    })
  })

  it("ListModels and GET /v1/models: reader, writer or admin; a node token or none is refused", async () => {
    const listed = expectOk(await client.unary("svc.v1.SvcScoring", "ListModels", {}, tokens.aReader))
    const models = listed.models as ReadonlyArray<{ readonly name: string; readonly source: string }>
    expect(models.find((model) => model.name === "vmaf_v0.6.1")).toMatchObject({ source: expect.any(String) })
    expect(await client.unary("svc.v1.SvcScoring", "ListModels", {}, tokens.aNode)).toEqual({
      ok: false,
      code: GrpcStatus.PERMISSION_DENIED,
      details: "role required: svc:reader, svc:writer, svc:admin"
    })
    const get = (token: string | undefined) =>
      fetch(`${controller.http}/v1/models`, token ? { headers: { authorization: `Bearer ${token}` } } : {})
    const ok = await get(tokens.aWriter)
    expect(ok.status).toBe(200)
    expect(((await ok.json()) as { models: ReadonlyArray<unknown> }).models).toHaveLength(models.length)
    const anonymous = await get(undefined)
    expect(anonymous.status).toBe(401)
    expect(anonymous.headers.get("www-authenticate")).toBe("Bearer")
    expect((await get(tokens.aNode)).status).toBe(403)
  })

  it("StreamJobs, GetJob and CancelJob of tenant b never reach a's job", async () => {
    const id = String(jobA.id)
    const get = await client.getJob(id, tokens.bReader)
    expect(get).toEqual({ ok: false, code: GrpcStatus.PERMISSION_DENIED, details: OTHER_TENANT })
    const cancel = await client.unary("svc.v1.Jobs", "CancelJob", { id }, tokens.bWriter)
    expect(cancel).toEqual({ ok: false, code: GrpcStatus.PERMISSION_DENIED, details: OTHER_TENANT })
    const listed = expectOk(await client.streamJobs({ states: [], follow: false, limit: 0 }, tokens.bReader))
    expect(listed.every((job) => job.tenant_id === "b")).toBe(true)
    expect(listed.map((job) => job.id)).not.toContain(id)
    // a's job is untouched.
    expect(expectOk(await client.getJob(id, tokens.aReader)).state).toBe("JOB_STATE_FINISHED")
  })

  it("node calls with another tenant's session: Heartbeat ok=false, PullWork and ReportResult PERMISSION_DENIED", async () => {
    const sessionA = String(
      expectOk(
        await client.unary("svc.v1.Nodes", "RegisterNode", { name: "probe-a", slots: 1, version: "t" }, tokens.aNode)
      ).node_id
    )
    expect(
      expectOk(
        await client.unary("svc.v1.Nodes", "Heartbeat", { node_id: sessionA, running_job_ids: [] }, tokens.aNode)
      )
    ).toEqual({ ok: true })
    expect(
      expectOk(
        await client.unary("svc.v1.Nodes", "Heartbeat", { node_id: sessionA, running_job_ids: [] }, tokens.bNode)
      )
    ).toEqual({ ok: false })
    const pull = await client.unary("svc.v1.Nodes", "PullWork", { node_id: sessionA, max_jobs: 1 }, tokens.bNode)
    expect(pull).toEqual({ ok: false, code: GrpcStatus.PERMISSION_DENIED, details: OTHER_TENANT })
    const jobId = String(jobA.id)
    const report = await client.unary(
      "svc.v1.Nodes",
      "ReportResult",
      { node_id: sessionA, job_id: jobId, final: true, error: "x", frames_done: 0 },
      tokens.bNode
    )
    expect(report).toEqual({ ok: false, code: GrpcStatus.PERMISSION_DENIED, details: notAssigned(jobId, sessionA) })
  })

  it("PullWork long-polls until a job arrives (issue 35); ReportResults answers each report on its own", async () => {
    const nodeB = String(
      expectOk(
        await client.unary(
          "svc.v1.Nodes",
          "RegisterNode",
          { name: "probe-b-batch", slots: 4, version: "t" },
          tokens.bNode
        )
      ).node_id
    )
    const input = join(scratch.rootB, "clip.yuv")
    const submit = async () =>
      String(
        expectOk(await client.submit({ reference: input, distorted: input, options: v01.options }, tokens.bWriter)).id
      )
    // b has no node of its own: the call waits until the submit (or claims it at once if it came second).
    const waiting = client.unary(
      "svc.v1.Nodes",
      "PullWork",
      { node_id: nodeB, max_jobs: 1, wait_ms: 20_000 },
      tokens.bNode
    )
    const first = await submit()
    const pulled = expectOk(await waiting).jobs as ReadonlyArray<Record<string, unknown>>
    expect(pulled.map((job) => job.id)).toEqual([first])
    const pending = await submit()
    const batch = expectOk(
      await client.unary(
        "svc.v1.Nodes",
        "ReportResults",
        {
          node_id: nodeB,
          reports: [
            { job_id: first, final: true, error: "failed on purpose", frames_done: 0 },
            { job_id: pending, final: true, error: "not mine", frames_done: 0 }
          ]
        },
        tokens.bNode
      )
    )
    expect(batch.outcomes).toMatchObject([
      { job_id: first, code: 0, job: { id: first, state: "JOB_STATE_FAILED" } },
      { job_id: pending, code: GrpcStatus.PERMISSION_DENIED, message: notAssigned(pending, nodeB), job: null }
    ])
    // The refused report changed nothing: the job is still pending, and a PullWork hands it out.
    const again = expectOk(
      await client.unary("svc.v1.Nodes", "PullWork", { node_id: nodeB, max_jobs: 1 }, tokens.bNode)
    )
    expect((again.jobs as ReadonlyArray<Record<string, unknown>>).map((job) => job.id)).toEqual([pending])
    const refused = await client.unary(
      "svc.v1.Nodes",
      "PullWork",
      { node_id: nodeB, max_jobs: 1, wait_ms: 20_001 },
      tokens.bNode
    )
    expect(refused).toMatchObject({ ok: false, code: GrpcStatus.INVALID_ARGUMENT })
  })

  it("ReportResult follows 5.6: own job yes; pending, live node's, other tenant's, unknown job no; repeated final unchanged", async () => {
    const register = async (token: string, name: string) =>
      String(
        expectOk(await client.unary("svc.v1.Nodes", "RegisterNode", { name, slots: 1, version: "t" }, token)).node_id
      )
    const report = (token: string, node: string, job: string, final: boolean, error = "") =>
      client.unary("svc.v1.Nodes", "ReportResult", { node_id: node, job_id: job, final, error, frames_done: 0 }, token)
    const nodeB1 = await register(tokens.bNode, "probe-b1")
    const nodeB2 = await register(tokens.bNode, "probe-b2")
    const nodeA = await register(tokens.aNode, "probe-a2")
    // b has no node of its own: its job stays pending until the probe session pulls it.
    const input = join(scratch.rootB, "clip.yuv")
    const jobB = String(
      expectOk(await client.submit({ reference: input, distorted: input, options: v01.options }, tokens.bWriter)).id
    )
    expect(await report(tokens.bNode, nodeB1, jobB, false)).toEqual({
      ok: false,
      code: GrpcStatus.PERMISSION_DENIED,
      details: notAssigned(jobB, nodeB1)
    })
    const pulled = expectOk(
      await client.unary("svc.v1.Nodes", "PullWork", { node_id: nodeB1, max_jobs: 4 }, tokens.bNode)
    )
    const jobs = pulled.jobs as ReadonlyArray<Record<string, unknown>>
    expect(jobs.map((job) => [job.id, job.tenant_id, job.scoring_roots])).toEqual([[jobB, "b", [scratch.rootB]]])
    expect(expectOk(await report(tokens.bNode, nodeB1, jobB, false)).job).toMatchObject({
      state: "JOB_STATE_RUNNING",
      node_id: nodeB1
    })
    // Assigned to a live node of the same tenant: refused, unchanged.
    expect(await report(tokens.bNode, nodeB2, jobB, true, "stolen")).toEqual({
      ok: false,
      code: GrpcStatus.PERMISSION_DENIED,
      details: notAssigned(jobB, nodeB2)
    })
    // Another tenant's job, through that tenant's own session.
    expect(await report(tokens.aNode, nodeA, jobB, true, "x")).toEqual({
      ok: false,
      code: GrpcStatus.PERMISSION_DENIED,
      details: notAssigned(jobB, nodeA)
    })
    const unknown = "00000000-0000-4000-8000-000000000000"
    expect(await report(tokens.bNode, nodeB1, unknown, true, "x")).toEqual({
      ok: false,
      code: GrpcStatus.PERMISSION_DENIED,
      details: notAssigned(unknown, nodeB1)
    })
    expect(expectOk(await client.getJob(jobB, tokens.bReader))).toMatchObject({ state: "JOB_STATE_RUNNING", error: "" })
    const failed = expectOk(await report(tokens.bNode, nodeB1, jobB, true, "input missing")).job
    expect(failed).toMatchObject({ state: "JOB_STATE_FAILED", error: "input missing" })
    const repeated = expectOk(await report(tokens.bNode, nodeB1, jobB, true, "another error")).job
    expect(repeated).toEqual(failed)
  })

  it("scoring roots: SubmitJob as written, Score and POST /v1/score after symlinks, per tenant", async () => {
    // A link in a's root to a file outside every root (Scratch makes it).
    const outsideLink = join(scratch.rootA, "escape.yuv")
    const submit = await client.submit({ ...v01Request, distorted: outsideLink }, tokens.aWriter)
    // Written under a's root: accepted; the node resolves it and fails the job.
    const escaped = String(expectOk(submit).id)
    const failed = await jobInState(client, escaped, tokens.aReader, "JOB_STATE_FAILED")
    expect(failed.error).toBe(outsideRoots(outsideLink))
    const relative = await client.submit({ ...v01Request, reference: "fixtures/x.yuv" }, tokens.aWriter)
    expect(relative).toEqual({ ok: false, code: GrpcStatus.PERMISSION_DENIED, details: outsideRoots("fixtures/x.yuv") })
    const dotdot = `${scratch.rootA}/../b/clip.yuv`
    expect(await client.submit({ ...v01Request, reference: dotdot }, tokens.aWriter)).toEqual({
      ok: false,
      code: GrpcStatus.PERMISSION_DENIED,
      details: outsideRoots(dotdot)
    })
    expect(await client.submit(v01Request, tokens.bWriter)).toEqual({
      ok: false,
      code: GrpcStatus.PERMISSION_DENIED,
      details: outsideRoots(v01.reference)
    })

    const score = (request: object, token: string) => client.unary("svc.v1.SvcScoring", "Score", request, token)
    const viaLinks = {
      ...v01Request,
      reference: join(scratch.rootA, "linked.ref.yuv"),
      distorted: join(scratch.rootA, "linked.dis.yuv")
    }
    const scored = expectOk(await score(viaLinks, tokens.aWriter))
    expect(Math.abs(Number(scored.score) - GOLDEN_V01_VMAF)).toBeLessThan(1e-4)
    expect(await score({ ...v01Request, distorted: outsideLink }, tokens.aWriter)).toEqual({
      ok: false,
      code: GrpcStatus.PERMISSION_DENIED,
      details: outsideRoots(outsideLink)
    })
    expect(await score(v01Request, tokens.bWriter)).toEqual({
      ok: false,
      code: GrpcStatus.PERMISSION_DENIED,
      details: outsideRoots(v01.reference)
    })

    const http = await postScore(controller.http, viaLinks, tokens.aAdmin)
    expect(http.status).toBe(200)
    expect(Math.abs(((await http.json()) as { readonly score: number }).score - GOLDEN_V01_VMAF)).toBeLessThan(1e-4)
    const refused = await postScore(controller.http, { ...v01Request, distorted: outsideLink }, tokens.aWriter)
    expect(refused.status).toBe(403)
    expect(await refused.json()).toEqual({ error: outsideRoots(outsideLink) })
  })

  it("the metrics name requests, refusals, tenant set, JWKS cache, jobs and nodes", async () => {
    expect((await client.submit(v01Request, tokens.aReader)).ok).toBe(false)
    expect((await client.getJob(String(jobA.id), undefined)).ok).toBe(false)
    const text = await (await fetch(`${controller.http}/metrics`)).text()
    expect(text).toMatch(/svc_grpc_requests_total\{method="\/svc\.v1\.Jobs\/SubmitJob",code="OK"\} [1-9]/)
    expect(text).toMatch(/svc_grpc_requests_total\{method="\/svc\.v1\.Jobs\/GetJob",code="PERMISSION_DENIED"\} [1-9]/)
    expect(text).toMatch(/svc_http_requests_total\{method="POST",route="\/v1\/score",status="403"\} [1-9]/)
    expect(text).toMatch(/svc_auth_refusals_total\{reason="role-required"\} [1-9]/)
    expect(text).toMatch(/svc_auth_refusals_total\{reason="missing-token"\} [1-9]/)
    expect(text).toMatch(/svc_auth_jwks_fetches_total\{endpoint="[^"]+\/a\/jwks",outcome="success"\} [1-9]/)
    expect(text).toMatch(/svc_auth_tenant_set_age_seconds \d/)
    expect(text).toMatch(/svc_auth_tenants 5/)
    expect(text).toContain(`svc_auth_jwks_cache_state{endpoint="${idp.jwks("a")}",state="fresh"} 1`)
    expect(text).toMatch(/svc_jobs\{state="finished"\} [1-9]/)
    expect(text).toMatch(/svc_nodes_live [1-9]/)
    expect(text).toMatch(/svc_job_queue_wait_seconds_count [1-9]/)
    expect(text).toMatch(/svc_job_duration_seconds_count\{outcome="finished"\} [1-9]/)
  })

  it("a node refuses a job that arrives without scoring roots (b's roots removed after submission)", async () => {
    const input = join(scratch.rootB, "clip.yuv")
    const id = String(
      expectOk(await client.submit({ reference: input, distorted: input, options: v01.options }, tokens.bWriter)).id
    )
    scratch.write("tenants.json", tenantsDocument(idp, scratch, { noRootsB: true }))
    // After the next refresh every input of b is refused: the new set is in place.
    await waitFor(
      async () =>
        (await client.submit({ reference: input, distorted: input, options: v01.options }, tokens.bWriter)).ok
          ? undefined
          : true,
      5_000,
      "b's roots to be gone"
    )
    const nodeB = await startNode(scratch, controller.grpc ?? "", tokens.bNode, "node-b")
    try {
      const failed = await jobInState(client, id, tokens.bReader, "JOB_STATE_FAILED")
      expect(failed.error).toBe("job arrived without scoring roots; refused")
    } finally {
      await nodeB.stop()
    }
  })

  it("suspending b in the file refuses b within one refresh interval; a is unaffected", async () => {
    expect(expectOk(await client.getJob(String(jobA.id), tokens.aReader)).state).toBe("JOB_STATE_FINISHED")
    scratch.write("tenants.json", tenantsDocument(idp, scratch, { suspendB: true }))
    // "Within one refresh interval" is checked against a test clock (modules/auth/registry.test.ts);
    // here, with real processes, that it takes effect without a restart: a wall-clock bound would
    // fail on a loaded machine.
    const refused = await waitFor(
      async () => {
        const outcome = await client.streamJobs({ states: [], follow: false, limit: 0 }, tokens.bReader)
        return outcome.ok ? undefined : outcome
      },
      60_000,
      "b to be refused"
    )
    expect(refused).toEqual({ ok: false, code: GrpcStatus.PERMISSION_DENIED, details: "tenant is suspended" })
    const http = await postScore(controller.http, v01Request, tokens.bWriter)
    expect(http.status).toBe(403)
    expect(await http.json()).toEqual({ error: "tenant is suspended" })
    expect(expectOk(await client.getJob(String(jobA.id), tokens.aReader)).state).toBe("JOB_STATE_FINISHED")
  })

  it("a deleted tenants file keeps the last set for ten intervals, then everyone gets UNAVAILABLE", async () => {
    rmSync(scratch.tenantsFile)
    const deleted = Date.now()
    const stale = await waitFor(
      async () => {
        const outcome = await client.getJob(String(jobA.id), tokens.aReader)
        return outcome.ok ? undefined : outcome
      },
      90_000,
      "the tenant set to go stale"
    )
    const elapsed = Date.now() - deleted
    // Stale is strictly older than ten intervals (10 s) since the last successful read (≤ 1 s before
    // the delete): never sooner. How soon after is checked against a test clock in
    // modules/auth/registry.test.ts (load only delays it here).
    expect(elapsed).toBeGreaterThan(8_500)
    expect(stale).toEqual({ ok: false, code: GrpcStatus.UNAVAILABLE, details: "tenant configuration is stale" })
    for (const token of [tokens.aWriter, tokens.aNode, tokens.bReader, undefined]) {
      expect(await client.unary("svc.v1.SvcScoring", "Health", {}, token)).toEqual({
        ok: false,
        code: GrpcStatus.UNAVAILABLE,
        details: "tenant configuration is stale"
      })
    }
    const http = await postScore(controller.http, v01Request, tokens.aWriter)
    expect(http.status).toBe(503)
    expect(await http.json()).toEqual({ error: "tenant configuration is stale" })
    const ready = await fetch(`${controller.http}/readyz`)
    expect(ready.status).toBe(503)
    expect(await ready.json()).toEqual({ status: "not ready", reason: "tenant configuration is stale" })
    expect((await fetch(`${controller.http}/healthz`)).status).toBe(200)
    expect((await fetch(`${controller.http}/metrics`)).status).toBe(200)
  })
})

/** Resolves once the process is stopped by a signal (state T in /proc), so it sends nothing more. */
const frozen = (pid: number) =>
  waitFor(
    async () => {
      const stat = await readFile(`/proc/${pid}/stat`, "utf8")
      // The state follows the parenthesised command name.
      return /\) [Tt] /.test(stat) ? true : undefined
    },
    5_000,
    `process ${pid} to stop`
  )

describe("kill -9 of the controller", () => {
  const scratch = new Scratch()
  let env: Record<string, string>
  let controller: RunningService
  let node: RunningService
  let client: ControllerClient

  beforeAll(async () => {
    scratch.write("tenants.json", tenantsDocument(idp, scratch))
    // Fixed ports: the node must find the restarted controller at the same address.
    env = controllerEnv(scratch, {
      SVC_GRPC_ADDR: `127.0.0.1:${await freePort()}`,
      SVC_HTTP_ADDR: `127.0.0.1:${await freePort()}`
    })
    controller = await startController(env)
    client = new ControllerClient(controller.grpc ?? "")
    node = await startNode(scratch, controller.grpc ?? "", tokens.aNode, "node-a")
  })
  afterAll(async () => {
    client.close()
    node.process.kill("SIGCONT")
    await node.stop()
    await controller.stop()
    scratch.remove()
  })

  it("loses no accepted job: after a restart on the same store the job is there and the re-registered node finishes it", async () => {
    const first = String(expectOk(await client.submit(v01Request, tokens.aWriter)).id)
    await jobInState(client, first, tokens.aReader, "JOB_STATE_FINISHED", 60_000)
    // A pending job needs a node that cannot pull: its one slot busy with a long job (a busy
    // node sends no PullWork), then frozen. Each state is waited for, not assumed.
    const reference = join(scratch.rootA, "busy.ref.yuv")
    const distorted = join(scratch.rootA, "busy.dis.yuv")
    repeatFile(v01.reference, reference, 20)
    repeatFile(v01.distorted, distorted, 20)
    const busy = String(
      expectOk(await client.submit({ reference, distorted, options: v01.options }, tokens.aWriter)).id
    )
    await jobInState(client, busy, tokens.aReader, "JOB_STATE_RUNNING", 60_000)
    node.process.kill("SIGSTOP")
    await frozen(node.process.pid)
    expect(expectOk(await client.getJob(busy, tokens.aReader)).state).toBe("JOB_STATE_RUNNING")
    const second = String(expectOk(await client.submit(v01Request, tokens.aWriter)).id)
    expect(expectOk(await client.getJob(second, tokens.aReader)).state).toBe("JOB_STATE_PENDING")
    expect(await controller.stop("SIGKILL")).not.toBe(0)

    controller = await startController(env)
    // The client's channel reconnects with a back-off: the first calls may still fail UNAVAILABLE.
    const before = await waitFor(
      async () => {
        const outcome = await client.getJob(first, tokens.aReader)
        return outcome.ok ? outcome.value : undefined
      },
      60_000,
      "the restarted controller"
    )
    expect(before.state).toBe("JOB_STATE_FINISHED")
    expect(expectOk(await client.getJob(second, tokens.aReader)).state).toBe("JOB_STATE_PENDING")
    expect(expectOk(await client.getJob(busy, tokens.aReader)).state).toBe("JOB_STATE_RUNNING")
    node.process.kill("SIGCONT")
    const finished = await jobInState(client, second, tokens.aReader, "JOB_STATE_FINISHED", 150_000)
    expect(Math.abs((finished.result as { readonly score: number }).score - GOLDEN_V01_VMAF)).toBeLessThan(1e-4)
    expect(expectOk(await client.getJob(busy, tokens.aReader)).state).toBe("JOB_STATE_FINISHED")
    expect(node.logs.filter((line) => line.message === "registered")).toHaveLength(2)
  })

  it("a job running across the restart is reported by the re-registered node (5.6) and not scored twice", async () => {
    // 600 frames: the score is still running when the node is frozen.
    const reference = join(scratch.rootA, "long.ref.yuv")
    const distorted = join(scratch.rootA, "long.dis.yuv")
    repeatFile(v01.reference, reference, 20)
    repeatFile(v01.distorted, distorted, 20)
    const id = String(expectOk(await client.submit({ reference, distorted, options: v01.options }, tokens.aWriter)).id)
    await waitFor(
      async () => {
        const outcome = await client.getJob(id, tokens.aReader)
        return outcome.ok && outcome.value.state === "JOB_STATE_RUNNING" ? true : undefined
      },
      60_000,
      "the long job to run"
    )
    node.process.kill("SIGSTOP")
    await frozen(node.process.pid)
    const registrations = node.logs.filter((line) => line.message === "registered").length
    await controller.stop("SIGKILL")
    controller = await startController(env)
    node.process.kill("SIGCONT")
    const finished = await jobInState(client, id, tokens.aReader, "JOB_STATE_FINISHED", 150_000)
    expect((finished.result as { readonly frame_count: number }).frame_count).toBe(600)
    // The node learns that its session is gone from whichever call comes first after the freeze
    // (a heartbeat that fell due, or the refused final report, which it then resends): either
    // way it registers once more and the new session reports the job.
    expect(node.logs.filter((line) => line.message === "registered")).toHaveLength(registrations + 1)
    expect(node.logs.filter((line) => line.message === "job finished" && line.annotations.job_id === id)).toHaveLength(
      1
    )
  })
})

describe("start-up refusals (exit 1, reason logged)", () => {
  const scratch = new Scratch()
  afterAll(() => scratch.remove())
  const start = (env: Record<string, string>) =>
    runCommand([requireBuilt("svc-controller")], {
      env: {
        SVC_HTTP_ADDR: "127.0.0.1:0",
        SVC_GRPC_ADDR: "127.0.0.1:0",
        ...modelDirEnv,
        SVC_STORE_PATH: scratch.path("jobs.sqlite"),
        ...env
      }
    })

  it("SVC_SCORING_ROOTS together with a tenant registry", async () => {
    scratch.write("tenants.json", tenantsDocument(idp, scratch))
    const result = await start({ ...controllerEnv(scratch), SVC_SCORING_ROOTS: scratch.rootA })
    expect(result.code).toBe(1)
    expect(result.stderr).toContain("SVC_SCORING_ROOTS cannot be combined with the tenant registry")
  })

  it("an unreadable tenants file", async () => {
    const result = await start(controllerEnv(scratch, { SVC_AUTH_TENANTS_FILE: scratch.path("missing.json") }))
    expect(result.code).toBe(1)
    expect(result.stderr).toContain("missing.json")
  })
})
