/**
 * svc-node against a Nodes controller played by the test (the compiled node, real gRPC):
 * - it keeps the session it registered last. Its loops each call under the session they started
 *   with; when the controller forgets the node (a restart), one loop registers again while
 *   another's call of the old session is still in flight. That call's refusal must not end the
 *   new session: the controller holds the old session's PullWork until the node heartbeats under
 *   its new session, then refuses it;
 * - it stops scoring a job whose progress report is refused as not its own while its session is
 *   live (the job was re-queued or taken over): no second score, no final report;
 * - a long-poll it cancels because a score gave memory back may have claimed work it never reads:
 *   its next PullWork is answered at once (so the controller has handled the cancel) and a
 *   hand-back Heartbeat follows before it long-polls again (the controller re-queues at once what
 *   the node does not list). The test holds the job's first progress report until the long-poll
 *   short of memory has arrived, so the order is the same on every run.
 */
import * as grpc from "@grpc/grpc-js"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { serviceDefinition } from "../../modules/transport/grpc/proto.ts"
import { startService } from "../../local/executables.ts"
import { waitFor } from "./controller-support.ts"
import { repeatFile, v01 } from "./server-support.ts"

type Callback = grpc.sendUnaryData<object>
type Call = grpc.ServerUnaryCall<{ node_id?: string; final?: boolean; job_id?: string }, object>

const notFound = (nodeId: string) => ({
  code: grpc.status.NOT_FOUND,
  details: `node session "${nodeId}" is not registered`
})

/** A Nodes service on a loopback port, and svc-node started against it. */
const fakeController = async (handlers: grpc.UntypedServiceImplementation, env: Record<string, string> = {}) => {
  const server = new grpc.Server()
  server.addService(serviceDefinition("svc.v1.Nodes"), handlers)
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (error, bound) =>
      error ? reject(error) : resolve(bound)
    )
  )
  const node = await startService("svc-node", {
    env: {
      SVC_CONTROLLER_ADDR: `127.0.0.1:${port}`,
      SVC_NODE_NAME: "node-s",
      SVC_NODE_POLL_INTERVAL_MS: "50",
      SVC_LOG_LEVEL: "info",
      ...env
    }
  })
  return {
    node,
    stop: async () => {
      await node.stop()
      server.forceShutdown()
    }
  }
}

describe("svc-node sessions", () => {
  const registrations: Array<string> = []
  /** PullWork calls of the first session, answered once the node uses its second one. */
  const heldPulls: Array<Callback> = []
  let controller: Awaited<ReturnType<typeof fakeController>>

  beforeAll(async () => {
    controller = await fakeController({
      RegisterNode: (_call: Call, callback: Callback) => {
        registrations.push(`session-${registrations.length + 1}`)
        callback(null, { node_id: registrations.at(-1), heartbeat_interval_ms: 100, session_ttl_ms: 10_000 })
      },
      // The first session is forgotten at once (as by a restarted controller); later ones live.
      Heartbeat: (call: Call, callback: Callback) => {
        const nodeId = call.request.node_id ?? ""
        callback(null, { ok: nodeId !== "session-1" })
        // The old session's pull comes back refused only now, once the node uses its new session.
        if (nodeId === "session-2") for (const held of heldPulls.splice(0)) held(notFound("session-1"))
      },
      PullWork: (call: Call, callback: Callback) => {
        const nodeId = call.request.node_id ?? ""
        if (nodeId === "session-1" && registrations.length < 2) heldPulls.push(callback)
        else if (nodeId === registrations.at(-1)) callback(null, { jobs: [] })
        else callback(notFound(nodeId))
      },
      ReportResult: (call: Call, callback: Callback) => callback(notFound(call.request.node_id ?? ""))
    })
  })
  afterAll(() => controller?.stop())

  it("a refusal of a call made under an older session does not end the session registered since", async () => {
    const { node } = controller
    await waitFor(async () => (registrations.length >= 2 ? true : undefined), 60_000, "the second registration")
    const registeredLogsOfSecond = () =>
      node.logs.filter((line) => line.message === "registered" && line.annotations.node_id === "session-2").length
    await waitFor(
      async () => (registeredLogsOfSecond() === 1 ? true : undefined),
      60_000,
      "the node's log of session-2"
    )
    // Then the new session is used for a while: it pulls and heartbeats many times over.
    await Bun.sleep(1500)
    expect(registrations).toEqual(["session-1", "session-2"])
    expect(node.logs.filter((line) => line.message === "registered")).toHaveLength(2)
    expect(heldPulls).toHaveLength(0)
  })
})

describe("svc-node and a job that is no longer its own", () => {
  const media = mkdtempSync(join(tmpdir(), "svc-node-session-"))
  const reference = join(media, "long.ref.yuv")
  const distorted = join(media, "long.dis.yuv")
  const job = {
    id: "job-1",
    tenant_id: "a",
    state: "JOB_STATE_RUNNING",
    request: { reference, distorted, model: "", options: v01.options },
    scoring_roots: [media]
  }
  let handedOut = false
  const reports: Array<{ final: boolean }> = []
  let controller: Awaited<ReturnType<typeof fakeController>>

  beforeAll(async () => {
    repeatFile(v01.reference, reference, 20)
    repeatFile(v01.distorted, distorted, 20)
    controller = await fakeController({
      RegisterNode: (_call: Call, callback: Callback) =>
        callback(null, { node_id: "session-1", heartbeat_interval_ms: 100, session_ttl_ms: 10_000 }),
      Heartbeat: (_call: Call, callback: Callback) => callback(null, { ok: true }),
      PullWork: (_call: Call, callback: Callback) => {
        callback(null, { jobs: handedOut ? [] : [job] })
        handedOut = true
      },
      // As a controller that re-queued the job to another node: every report is refused.
      ReportResult: (call: Call, callback: Callback) => {
        reports.push({ final: call.request.final ?? false })
        callback({
          code: grpc.status.PERMISSION_DENIED,
          details: `job "${call.request.job_id}" is not assigned to node "${call.request.node_id}"`
        })
      }
    })
  })
  afterAll(async () => {
    await controller?.stop()
    rmSync(media, { recursive: true, force: true })
  })

  it("a progress report refused as not its own, while its session is live, stops the scoring: no final report", async () => {
    const { node } = controller
    await waitFor(
      async () =>
        node.logs.some((line) => line.message === "job job-1 withdrawn; scoring stopped") ? true : undefined,
      120_000,
      "the node to stop scoring job-1"
    )
    expect(node.logs.filter((line) => line.message === "job finished")).toEqual([])
    expect(reports.filter((report) => report.final)).toEqual([])
  }, 150_000)
})

describe("svc-node and a controller without ReportResults (older, mid-upgrade)", () => {
  const job = {
    id: "job-2",
    tenant_id: "a",
    state: "JOB_STATE_RUNNING",
    request: { reference: v01.reference, distorted: v01.distorted, model: "", options: v01.options },
    scoring_roots: [dirname(v01.reference)]
  }
  let handedOut = false
  const finals: Array<string> = []
  let controller: Awaited<ReturnType<typeof fakeController>>

  beforeAll(async () => {
    // No ReportResults handler: the server answers it UNIMPLEMENTED.
    controller = await fakeController({
      RegisterNode: (_call: Call, callback: Callback) =>
        callback(null, { node_id: "session-1", heartbeat_interval_ms: 1_000, session_ttl_ms: 10_000 }),
      Heartbeat: (_call: Call, callback: Callback) => callback(null, { ok: true }),
      PullWork: (_call: Call, callback: Callback) => {
        callback(null, { jobs: handedOut ? [] : [job] })
        handedOut = true
      },
      ReportResult: (call: Call, callback: Callback) => {
        if (call.request.final === true) finals.push(call.request.job_id ?? "")
        callback(null, { job: { ...job, state: call.request.final ? "JOB_STATE_FINISHED" : "JOB_STATE_RUNNING" } })
      }
    })
  })
  afterAll(async () => {
    await controller?.stop()
  })

  it("the final report the node would batch goes as ReportResult, once", async () => {
    await waitFor(async () => (finals.length > 0 ? true : undefined), 120_000, "the final report of job-2")
    expect(finals).toEqual(["job-2"])
  }, 150_000)
})

describe("svc-node and a long-poll it cancels because memory came back", () => {
  const media = mkdtempSync(join(tmpdir(), "svc-node-memory-"))
  const reference = join(media, "long.ref.yuv")
  const distorted = join(media, "long.dis.yuv")
  const job = {
    id: "job-3",
    tenant_id: "a",
    state: "JOB_STATE_RUNNING",
    request: { reference, distorted, model: "", options: v01.options },
    scoring_roots: [media]
  }
  /** What the node did, in order: its PullWork calls, their cancellation, its hand-back Heartbeats. */
  const events: Array<string> = []
  let pulls = 0
  /** The job's first progress report, answered once the long-poll short of memory arrived. */
  let heldProgress: (() => void) | undefined
  let shortPullArrived = false
  let controller: Awaited<ReturnType<typeof fakeController>>

  type PullCall = grpc.ServerUnaryCall<
    { free_memory_bytes?: number; memory_budget_bytes?: number; wait_ms?: number },
    object
  >
  type HeartbeatCall = grpc.ServerUnaryCall<{ hand_back_unlisted?: boolean }, object>
  type ReportCall = grpc.ServerUnaryCall<{ final?: boolean }, object>

  beforeAll(async () => {
    repeatFile(v01.reference, reference, 20)
    repeatFile(v01.distorted, distorted, 20)
    const answerProgress = (final: boolean, callback: Callback) =>
      callback(null, { job: { ...job, state: final ? "JOB_STATE_FINISHED" : "JOB_STATE_RUNNING" } })
    controller = await fakeController(
      {
        RegisterNode: (_call: Call, callback: Callback) =>
          callback(null, { node_id: "session-1", heartbeat_interval_ms: 1_000, session_ttl_ms: 10_000 }),
        Heartbeat: (call: HeartbeatCall, callback: Callback) => {
          if (call.request.hand_back_unlisted === true) events.push("hand-back")
          callback(null, { ok: true })
        },
        PullWork: (call: PullCall, callback: Callback) => {
          pulls += 1
          const pull = `pull ${pulls}`
          events.push(call.request.wait_ms === 0 ? `${pull} at once` : pull)
          if (pulls === 1) return callback(null, { jobs: [job] })
          const short = (call.request.free_memory_bytes ?? 0) < (call.request.memory_budget_bytes ?? 0)
          if (pulls === 2 && short) {
            // Held (a long-poll with nothing to hand out) until the node cancels it.
            call.on("cancelled", () => events.push(`${pull} cancelled`))
            shortPullArrived = true
            heldProgress?.()
            return
          }
          callback(null, { jobs: [] })
        },
        ReportResult: (call: ReportCall, callback: Callback) => {
          const final = call.request.final === true
          if (final || heldProgress !== undefined || shortPullArrived) return answerProgress(final, callback)
          heldProgress = () => answerProgress(false, callback)
        }
      },
      { SVC_NODE_SLOTS: "2" }
    )
  })
  afterAll(async () => {
    await controller?.stop()
    rmSync(media, { recursive: true, force: true })
  })

  it("after the cancel it pulls at once, then hands back before it long-polls again", async () => {
    await waitFor(async () => (events.includes("pull 4") ? true : undefined), 120_000, "the long-poll after the cancel")
    // The order the controller saw the calls in (its cancel event may come after a later call's).
    expect(events.filter((event) => event !== "pull 2 cancelled")).toEqual([
      "pull 1",
      "pull 2",
      "pull 3 at once",
      "hand-back",
      "pull 4"
    ])
    expect(events).toContain("pull 2 cancelled")
  }, 150_000)
})
