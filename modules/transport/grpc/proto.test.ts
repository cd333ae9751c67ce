/** The embedded contract compiles and carries every method the seeds name. */
import type * as grpc from "@grpc/grpc-js"
import { describe, expect, it } from "vitest"
import { methodPaths, packageDefinition, serviceDefinition } from "./proto.ts"

const seedMethods = {
  "svc.v1.Jobs": { SubmitJob: "unary", GetJob: "unary", StreamJobs: "server-stream", CancelJob: "unary" },
  // ReportResults: several reports in one call (issue 35).
  "svc.v1.Nodes": {
    RegisterNode: "unary",
    Heartbeat: "unary",
    PullWork: "unary",
    ReportResult: "unary",
    ReportResults: "unary"
  },
  // ListNodes: added for svc-operator's SvcNode status (issue 21), outside the node-only service.
  "svc.v1.NodeStatus": { ListNodes: "unary" },
  // ListModels: added with the built-in models (issue 14), beside the seed's three; ScoreLadder: ladders (issue 18).
  "svc.v1.SvcScoring": {
    Score: "unary",
    ScoreStream: "bidi",
    Health: "unary",
    ListModels: "unary",
    ScoreLadder: "unary"
  }
} as const

const kind = (method: grpc.MethodDefinition<unknown, unknown>) =>
  method.requestStream
    ? method.responseStream
      ? "bidi"
      : "client-stream"
    : method.responseStream
      ? "server-stream"
      : "unary"

describe("svc.v1 proto", () => {
  it.each(Object.entries(seedMethods))("%s has exactly the seed's methods", (service, methods) => {
    const definition = serviceDefinition(service as keyof typeof seedMethods)
    const found = Object.fromEntries(Object.entries(definition).map(([name, method]) => [name, kind(method)]))
    expect(found).toEqual(methods)
  })

  it("lists method paths as gRPC sees them", () => {
    expect(methodPaths()).toContain("/svc.v1.Jobs/SubmitJob")
    expect(methodPaths()).toHaveLength(15)
  })

  it("Heartbeat returns a boolean ok and PullWork returns jobs carrying scoring_roots", () => {
    const heartbeat = serviceDefinition("svc.v1.Nodes").Heartbeat
    expect(heartbeat?.responseDeserialize(heartbeat.responseSerialize({ ok: true }))).toEqual({ ok: true })
    const pull = serviceDefinition("svc.v1.Nodes").PullWork
    const encoded = pull?.responseSerialize({ jobs: [{ id: "j1", tenant_id: "a", scoring_roots: ["/media/a"] }] })
    expect(Buffer.isBuffer(encoded)).toBe(true)
    const decoded = pull?.responseDeserialize(encoded ?? Buffer.alloc(0)) as {
      jobs: Array<{ scoring_roots: Array<string> }>
    }
    expect(decoded.jobs[0]?.scoring_roots).toEqual(["/media/a"])
  })

  it("round-trips a ScoreRequest with the seed's field names", () => {
    const score = serviceDefinition("svc.v1.SvcScoring").Score
    const request = {
      reference: "/r.yuv",
      distorted: "/d.yuv",
      model: "vmaf_v0.6.1",
      options: { width: 320, height: 240, pixel_format: "420", bitdepth: 8 }
    }
    const decoded = score?.requestDeserialize(score.requestSerialize(request)) as typeof request
    expect(decoded.reference).toBe("/r.yuv")
    expect(decoded.options).toMatchObject(request.options)
    expect(Object.keys(packageDefinition)).toContain("svc.v1.Provenance")
  })
})
