/**
 * svc-operator end to end (issue 21): the compiled svc-operator against a Kubernetes API double
 * served by the test over TLS (the service-account CA, token and namespace in a directory), a real
 * compiled svc-controller (JWKS served by the test) and svc-node. Where a job must stay running
 * for as long as the test needs, the test itself acts as a node through the controller's node API
 * (RegisterNode + PullWork with an svc:node token), so nothing depends on timing.
 */
import { writeFileSync } from "node:fs"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { opensslAvailable } from "../../local/auth.ts"
import type { RunningService } from "../../local/executables.ts"
import { FINALIZER, type Resource, useOperatorSetup } from "./operator-support.ts"
import {
  expectOk,
  GOLDEN_V01_VMAF,
  IdentityProviders,
  makeTokens,
  startNode,
  tenantsDocument,
  type Tokens,
  v01,
  waitFor
} from "./controller-support.ts"

const NAMESPACE = "media"

const idp = new IdentityProviders()
let tokens: Tokens
beforeAll(async () => {
  tokens = await makeTokens(idp)
})
afterAll(() => idp.stop())

describe.skipIf(!opensslAvailable)("svc-operator with a controller, a node and the API double", () => {
  // ca.crt starts as another self-signed certificate: the first test shows TLS refusing it.
  const setup = useOperatorSetup({
    namespace: NAMESPACE,
    tenants: (scratch) => tenantsDocument(idp, scratch),
    trustApi: false
  })
  const { scratch, apiTls, api, accountDir, running } = setup

  const job = (name: string): Resource | undefined =>
    api.get("svc.dev", "svcjobs", NAMESPACE, name) as Resource | undefined
  const apply = (name: string, spec: Record<string, unknown> = v01Spec) =>
    api.create("svc.dev", "svcjobs", NAMESPACE, {
      apiVersion: "svc.dev/v1",
      kind: "SvcJob",
      metadata: { name },
      spec
    })
  const v01Spec = { reference: v01.reference, distorted: v01.distorted, options: v01.options }
  const inPhase = (name: string, phase: string, timeoutMs = 30_000) =>
    waitFor(async () => (job(name)?.status?.phase === phase ? job(name) : undefined), timeoutMs, `${name} ${phase}`)
  /** The tenant's controller jobs (as a's reader sees them). */
  const controllerJobs = async () =>
    expectOk(await setup.client.streamJobs({ states: [], follow: false, limit: 0 }, tokens.aReader))

  const startOperator = (
    identity: string,
    token: string,
    lease: string,
    extra: Record<string, string> = {}
  ): Promise<RunningService> =>
    setup.startOperator({
      SVC_CONTROLLER_TOKEN_FILE: scratch.write(`${identity}.token`, token),
      SVC_OPERATOR_IDENTITY: identity,
      SVC_OPERATOR_LEASE_NAME: lease,
      ...extra
    })
  const eventsOf = (name: string) => setup.eventsOf(NAMESPACE, name)
  const leading = (service: RunningService) => service.logs.some((line) => line.message === "leading")
  const submittedBy = (service: RunningService, name: string) =>
    service.logs.filter((line) => line.message === "submitted" && line.annotations.svcjob === `${NAMESPACE}/${name}`)

  /** The test as a node of tenant a: takes the oldest pending job and keeps it running. */
  const takeJob = async () => {
    const registered = expectOk(
      await setup.client.unary(
        "svc.v1.Nodes",
        "RegisterNode",
        { name: "test-node", slots: 1, version: "t" },
        tokens.aNode
      )
    )
    const nodeId = String(registered.node_id)
    const pulled = expectOk(
      await setup.client.unary("svc.v1.Nodes", "PullWork", { node_id: nodeId, max_jobs: 1 }, tokens.aNode)
    )
    return { nodeId, jobs: pulled.jobs as Array<{ id: string }> }
  }

  it("refuses an API server whose certificate the service-account CA does not sign", async () => {
    // ca.crt above is another self-signed certificate: TLS must fail, nothing is written.
    const service = await startOperator("untrusted", tokens.aWriter, "lease-untrusted")
    apply("untrusted")
    await waitFor(
      async () => service.logs.find((line) => /lease renewal failed/.test(line.message)),
      20_000,
      "a TLS failure"
    )
    expect(job("untrusted")?.metadata.finalizers).toBeUndefined()
    await service.stop("SIGKILL")
    api.delete("svc.dev", "svcjobs", NAMESPACE, "untrusted")
  })

  describe("with the API's own CA", () => {
    beforeAll(() => {
      writeFileSync(`${accountDir}/ca.crt`, apiTls.cert)
    })

    it("runs a SvcJob Pending → Running → Finished with the golden score, and mirrors the node as a SvcNode", async () => {
      const operator = await startOperator("op-golden", tokens.aWriter, "lease-golden")
      apply("golden")
      await inPhase("golden", "Pending")
      // The node starts once the job is queued, so every phase is seen in order.
      const node = await startNode(scratch, setup.controller.grpc ?? "", tokens.aNode, "node-a")
      running.push(node)
      const finished = await inPhase("golden", "Finished")
      const phases = api
        .history("svc.dev", "svcjobs", NAMESPACE)
        .filter((event) => event.object.metadata.name === "golden")
        .map((event) => (event.object as Resource).status?.phase)
        .filter((phase, index, all) => phase !== undefined && phase !== all[index - 1])
      expect(phases).toEqual(["Pending", "Running", "Finished"])
      expect(Math.abs((finished.status?.score ?? 0) - GOLDEN_V01_VMAF)).toBeLessThanOrEqual(1e-4)
      expect(finished.status?.framesDone).toBe(30)
      expect((finished.status?.features as Record<string, number>).vmaf).toBe(finished.status?.score)
      expect(finished.status?.conditions?.map((c) => [c.type, c.status])).toEqual([
        ["Submitted", "True"],
        ["Complete", "True"]
      ])
      expect(finished.status?.observedGeneration).toBe(1)
      // The controller holds exactly one job for it, under the SvcJob's uid as idempotency key.
      const [controllerJob] = (await controllerJobs()).filter((entry) => entry.id === finished.status?.jobId)
      expect(controllerJob?.state).toBe("JOB_STATE_FINISHED")
      // A final job needs no finalizer any more.
      await waitFor(
        async () => (job("golden")?.metadata.finalizers ?? []).length === 0 || undefined,
        10_000,
        "finalizer removed"
      )
      // SvcNode of node-a: Ready while heartbeats arrive.
      const svcNode = await waitFor(
        async () => api.get("svc.dev", "svcnodes", NAMESPACE, `${NAMESPACE}.node-a`) as Resource | undefined,
        15_000,
        "the SvcNode"
      )
      const nodeStatus = await waitFor(
        async () => (api.get("svc.dev", "svcnodes", NAMESPACE, `${NAMESPACE}.node-a`) as Resource | undefined)?.status,
        15_000,
        "the SvcNode status"
      )
      expect(svcNode.metadata.name).toBe(`${NAMESPACE}.node-a`)
      expect(nodeStatus).toMatchObject({ name: "node-a", slots: 1 })
      expect((nodeStatus.conditions ?? []).find((c) => c.type === "Ready")?.status).toBe("True")
      expect(submittedBy(operator, "golden")).toHaveLength(1)
      expect(eventsOf("golden").map((event) => [event.type, event.reason])).toEqual([["Normal", "Submitted"]])
      await node.stop()
      await operator.stop()
    }, 90_000)

    it("a deleted SvcJob's running controller job is cancelled, then the finalizer goes", async () => {
      const operator = await startOperator("op-delete", tokens.aWriter, "lease-delete")
      apply("doomed")
      const pending = await inPhase("doomed", "Pending")
      expect(pending.metadata.finalizers).toEqual([FINALIZER])
      const taken = await takeJob()
      expect(taken.jobs.map((entry) => entry.id)).toEqual([pending.status?.jobId])
      await inPhase("doomed", "Running")
      api.delete("svc.dev", "svcjobs", NAMESPACE, "doomed")
      await waitFor(async () => (job("doomed") === undefined ? true : undefined), 20_000, "the SvcJob gone")
      const controllerJob = expectOk(await setup.client.getJob(String(pending.status?.jobId), tokens.aReader))
      expect(controllerJob.state).toBe("JOB_STATE_CANCELLED")
      await operator.stop()
    }, 60_000)

    it("kill -9 of the operator mid-run and a restart neither lose nor duplicate the job", async () => {
      const first = await startOperator("op-crash", tokens.aWriter, "lease-crash")
      apply("survivor")
      const pending = await inPhase("survivor", "Pending")
      const jobId = String(pending.status?.jobId)
      const taken = await takeJob()
      await inPhase("survivor", "Running")
      await first.stop("SIGKILL")
      // While no operator runs, the node finishes the job.
      const result = {
        score: 42.5,
        features: { vmaf: 42.5 },
        frame_count: 3,
        frames: [],
        provenance: {
          library: { abi_minor: 1, abi_patch: 0, active_backend: "scalar", n_extractors: 3, version: "test" },
          model: "vmaf_v0.6.1",
          model_sha256: "0".repeat(64),
          backend_used: "scalar",
          feature_backends: [],
          precision: "lossless"
        },
        pooled: { min: { vmaf: 42.5 }, max: { vmaf: 42.5 }, harmonic_mean: { vmaf: 42.5 } }
      }
      expectOk(
        await setup.client.unary(
          "svc.v1.Nodes",
          "ReportResult",
          { node_id: taken.nodeId, job_id: jobId, final: true, result, frames_done: 3 },
          tokens.aNode
        )
      )
      // A SvcJob created meanwhile whose submit "happened" before a crash: its uid already keys a job.
      apply("half-done")
      const uid = String(job("half-done")?.metadata.uid)
      const early = expectOk(
        await setup.client.unary("svc.v1.Jobs", "SubmitJob", { request: v01Spec, idempotency_key: uid }, tokens.aWriter)
      )
      const before = (await controllerJobs()).length
      const second = await startOperator("op-crash-2", tokens.aWriter, "lease-crash")
      const finished = await inPhase("survivor", "Finished")
      expect(finished.status?.jobId).toBe(jobId)
      expect(finished.status?.score).toBe(42.5)
      const adopted = await waitFor(async () => job("half-done")?.status?.jobId, 20_000, "half-done adopted")
      expect(adopted).toBe(early.id)
      expect((await controllerJobs()).length).toBe(before)
      expect(submittedBy(first, "survivor")).toHaveLength(1)
      await second.stop()
      // Clean up the pending job of half-done so later tests' node pulls see only their own.
      expectOk(await setup.client.unary("svc.v1.Jobs", "CancelJob", { id: early.id }, tokens.aWriter))
    }, 90_000)

    it("a reader-only token is refused at submit with a clear condition", async () => {
      const operator = await startOperator("op-reader", tokens.aReader, "lease-reader")
      apply("unauthorized")
      const failed = await inPhase("unauthorized", "Failed")
      const submitted = failed.status?.conditions?.find((condition) => condition.type === "Submitted")
      expect(submitted).toMatchObject({ status: "False", reason: "SubmitRefused" })
      expect(submitted?.message).toContain("PERMISSION_DENIED")
      expect(submitted?.message).toContain("role required: svc:writer, svc:admin")
      expect(failed.status?.jobId).toBeUndefined()
      // The event is recorded after the status write: wait for it.
      const warning = await waitFor(async () => eventsOf("unauthorized")[0], 10_000, "unauthorized's event")
      expect(warning).toMatchObject({ type: "Warning", reason: "SubmitRefused" })
      await operator.stop()
    }, 60_000)

    it("two replicas: one leader acts; when it dies the other takes over", async () => {
      // An 8 s lease, not 2 s: a leader (or the API double in this process) stalled by a loaded
      // machine for longer than the lease would lose it to op-b while still alive.
      const lease = { SVC_OPERATOR_LEASE_SECONDS: "8" }
      const a = await startOperator("op-a", tokens.aWriter, "lease-pair", lease)
      await waitFor(async () => leading(a) || undefined, 20_000, "op-a leading")
      const b = await startOperator("op-b", tokens.aWriter, "lease-pair", lease)
      apply("pair-1")
      await inPhase("pair-1", "Pending")
      await Bun.sleep(2_500)
      expect(leading(b)).toBe(false)
      expect(submittedBy(a, "pair-1")).toHaveLength(1)
      expect(submittedBy(b, "pair-1")).toHaveLength(0)
      await a.stop("SIGKILL")
      await waitFor(async () => leading(b) || undefined, 40_000, "op-b leading")
      apply("pair-2")
      await inPhase("pair-2", "Pending")
      expect(submittedBy(b, "pair-2")).toHaveLength(1)
      const held = api.get("coordination.k8s.io", "leases", NAMESPACE, "lease-pair") as unknown as {
        spec: { holderIdentity: string; leaseTransitions: number }
      }
      expect(held.spec.holderIdentity).toBe("op-b")
      expect(held.spec.leaseTransitions).toBe(1)
      await b.stop()
    }, 120_000)

    it("status writes survive resourceVersion conflicts", async () => {
      const operator = await startOperator("op-conflict", tokens.aWriter, "lease-conflict")
      api.injectConflicts(3)
      apply("contested")
      const pending = await inPhase("contested", "Pending")
      expect(pending.status?.jobId).toBeDefined()
      expect(api.writes.filter((write) => write.endsWith(" 409")).length).toBeGreaterThanOrEqual(3)
      await operator.stop()
      expectOk(await setup.client.unary("svc.v1.Jobs", "CancelJob", { id: pending.status?.jobId }, tokens.aWriter))
    }, 60_000)
  })
})
