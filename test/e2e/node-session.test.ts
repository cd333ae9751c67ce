/**
 * svc-node keeps the session it registered last. Its loops each call under the session they
 * started with; when the controller forgets the node (a restart), one loop registers again
 * while another's call of the old session is still in flight. That call's refusal must not end
 * the new session: the compiled node against a Nodes controller played by the test, which
 * holds the old session's PullWork until the node heartbeats under its new session, then
 * refuses it.
 */
import * as grpc from "@grpc/grpc-js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { serviceDefinition } from "../../modules/transport/grpc/proto.ts"
import { type RunningService, startService } from "../support/executables.ts"
import { waitFor } from "./controller-support.ts"

type Callback = grpc.sendUnaryData<object>
type Call = grpc.ServerUnaryCall<{ node_id?: string }, object>

const registrations: Array<string> = []
/** PullWork calls of the first session, answered once the node has registered again. */
const heldPulls: Array<Callback> = []
let server: grpc.Server
let node: RunningService

const notFound = (nodeId: string) => ({
  code: grpc.status.NOT_FOUND,
  details: `node session "${nodeId}" is not registered`
})

beforeAll(async () => {
  server = new grpc.Server()
  server.addService(serviceDefinition("svc.v1.Nodes"), {
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
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (error, bound) =>
      error ? reject(error) : resolve(bound)
    )
  )
  node = await startService("svc-node", {
    env: { SVC_CONTROLLER_ADDR: `127.0.0.1:${port}`, SVC_NODE_NAME: "node-s", SVC_NODE_POLL_INTERVAL_MS: "50" }
  })
})

afterAll(async () => {
  await node?.stop()
  server?.forceShutdown()
})

describe("svc-node sessions", () => {
  it("a refusal of a call made under an older session does not end the session registered since", async () => {
    await waitFor(async () => (registrations.length >= 2 ? true : undefined), 60_000, "the second registration")
    // Then the new session is used for a while: it pulls and heartbeats many times over.
    const registeredLogsOfSecond = () =>
      node.logs.filter((line) => line.message === "registered" && line.annotations.node_id === "session-2").length
    await waitFor(
      async () => (registeredLogsOfSecond() === 1 ? true : undefined),
      60_000,
      "the node's log of session-2"
    )
    await Bun.sleep(1500)
    expect(registrations).toEqual(["session-1", "session-2"])
    expect(node.logs.filter((line) => line.message === "registered")).toHaveLength(2)
    expect(heldPulls).toHaveLength(0)
  })
})
