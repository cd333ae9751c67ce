/**
 * svc-mcp end to end (issue 17): the compiled svc-controller (tenants a and b, JWKS served by the
 * test), a's compiled svc-node and the compiled svc-mcp, driven through the MCP SDK's own client,
 * over stdio (token from SVC_CONTROLLER_TOKEN_FILE, re-read when it changes) and over streamable
 * HTTP (each request's bearer token forwarded). The same scenarios run on both transports.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Messages } from "../../modules/policy/errors.ts"
import { GrpcMethods, ROLE_TABLE } from "../../modules/policy/roles.ts"
import { serviceDefinition } from "../../modules/transport/grpc/proto.ts"
import { type LogLine, requireBuilt, type RunningService, runCommand, startService } from "../../local/executables.ts"
import { fixture, golden } from "../support/fixtures.ts"
import { type LadderMedia, makeLadderMedia } from "../support/ladder.ts"
import {
  ControllerClient,
  controllerEnv,
  expectOk,
  freePort,
  IdentityProviders,
  makeTokens,
  Scratch,
  startController,
  startNode,
  tenantsDocument,
  type Tokens,
  v01
} from "./controller-support.ts"

const goldenV01 = golden(fixture("v01"))
const GOLDEN_VMAF = goldenV01.pooled_metrics.vmaf?.mean ?? Number.NaN
const toolNames = [
  "submit_job",
  "get_job",
  "cancel_job",
  "list_jobs",
  "wait_job",
  "score",
  "describe_worst_frames",
  "list_models",
  "compare",
  "score_ladder",
  "submit_ladder_job"
]

const idp = new IdentityProviders()
const scratch = new Scratch()
let tokens: Tokens
let controller: RunningService
let node: RunningService
let ladder: LadderMedia
/** Per rendition label: the per-frame VMAF of its pair scored alone (the controller's Score). */
const separateVmaf = new Map<string, ReadonlyArray<number>>()

beforeAll(async () => {
  tokens = await makeTokens(idp)
  scratch.write("tenants.json", tenantsDocument(idp, scratch))
  ladder = makeLadderMedia(scratch.rootA)
  controller = await startController(controllerEnv(scratch))
  node = await startNode(scratch, controller.grpc ?? "", tokens.aNode, "node-a")
  const scoring = new ControllerClient(controller.grpc ?? "")
  for (const rendition of ladder.renditions) {
    const scored = expectOk(
      await scoring.unary(
        "svc.v1.SvcScoring",
        "Score",
        { reference: ladder.reference, distorted: rendition.distorted, options: { per_frame: true } },
        tokens.aWriter
      )
    )
    const frames = scored.frames as ReadonlyArray<{ metrics: Record<string, number> }>
    separateVmaf.set(
      rendition.label,
      frames.map((frame) => frame.metrics.vmaf ?? Number.NaN)
    )
  }
  scoring.close()
}, 180_000)
afterAll(async () => {
  await node?.stop()
  await controller?.stop()
  idp.stop()
  scratch.remove()
})

type Caller = "aWriter" | "aReader" | "bWriter"

/** One way of reaching svc-mcp: an MCP client acting with a given caller's token. */
interface Harness {
  readonly connect: (caller: Caller) => Promise<Client>
  readonly close: () => Promise<void>
  /** svc-mcp's log lines so far. */
  readonly logs: () => ReadonlyArray<LogLine>
}

const newClient = () => new Client({ name: "svc-mcp-e2e", version: "1.0.0" })

/** stdio: one svc-mcp child; the caller is switched by rewriting its token file. */
const stdioHarness = async (controllerAddress: string, name: string): Promise<Harness & { stderr: () => string }> => {
  const tokenFile = scratch.write(`${name}.token`, tokens.aWriter)
  let stderr = ""
  const transport = new StdioClientTransport({
    command: requireBuilt("svc-mcp"),
    env: {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      TMPDIR: process.env.TMPDIR ?? "/tmp",
      SVC_CONTROLLER_ADDR: controllerAddress,
      SVC_CONTROLLER_TOKEN_FILE: tokenFile,
      SVC_LOG_LEVEL: "debug"
    },
    stderr: "pipe"
  })
  transport.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString()
  })
  const client = newClient()
  const errors: Array<Error> = []
  client.onerror = (error) => errors.push(error)
  await client.connect(transport)
  return {
    connect: async (caller) => {
      scratch.write(`${name}.token`, tokens[caller])
      return client
    },
    close: async () => {
      // Nothing but JSON-RPC may reach stdout: a stray line would have been a client error.
      expect(errors).toEqual([])
      await client.close()
    },
    stderr: () => stderr,
    logs: () =>
      stderr
        .split("\n")
        .filter((line) => line.startsWith("{"))
        .map((line) => JSON.parse(line) as LogLine)
  }
}

/** Streamable HTTP: one svc-mcp listener; every client sends its caller's bearer token. */
const httpHarness = (mcp: () => RunningService): Harness => {
  const clients: Array<Client> = []
  return {
    connect: async (caller) => {
      const client = newClient()
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${mcp().http}/mcp`), {
          requestInit: { headers: { authorization: `Bearer ${tokens[caller]}` } }
        })
      )
      clients.push(client)
      return client
    },
    close: async () => {
      for (const client of clients) await client.close()
    },
    logs: () => mcp().logs
  }
}

/** The message of a JSON-RPC error body. */
const errorMessage = async (response: Response): Promise<string> => {
  const body = (await response.json()) as { error?: { message?: string } }
  return body.error?.message ?? ""
}

const text = (result: CallToolResult): string =>
  result.content.map((part) => (part.type === "text" ? part.text : "")).join("\n")

/** A successful call's structured content. */
const structured = <T = Record<string, unknown>>(result: CallToolResult): T => {
  if (result.isError) throw new Error(`tool failed: ${text(result)}`)
  expect(result.structuredContent).toBeDefined()
  expect(text(result).length).toBeGreaterThan(0)
  return result.structuredContent as T
}

const call = async (client: Client, name: string, args: Record<string, unknown> = {}) =>
  (await client.callTool({ name, arguments: args })) as CallToolResult

interface JobView {
  readonly id: string
  readonly state: string
  readonly tenant_id: string
  readonly frames_done: number
  readonly result?: { readonly score: number; readonly frame_count: number; readonly features: Record<string, number> }
}

const v01Args = { reference: v01.reference, distorted: v01.distorted, options: v01.options }

/** The scenarios of the issue, against one transport. */
const scenarios = (harness: () => Harness) => {
  let finishedJob = ""

  it("lists every tool with its input and output schemas and descriptions", async () => {
    const client = await harness().connect("aReader")
    const { tools } = await client.listTools()
    expect(tools.map((tool) => tool.name).sort()).toEqual([...toolNames].sort())
    for (const tool of tools) {
      expect(tool.description?.length, tool.name).toBeGreaterThan(30)
      expect(tool.inputSchema.type).toBe("object")
      expect(tool.outputSchema?.type, tool.name).toBe("object")
    }
    const submit = tools.find((tool) => tool.name === "submit_job")
    expect(submit?.inputSchema.required).toEqual(expect.arrayContaining(["reference", "distorted"]))
    expect(JSON.stringify(submit?.inputSchema.properties)).toContain("pixel_format")
    expect(submit?.outputSchema?.properties).toHaveProperty("state")
  })

  it("submits the fixture pair, waits with progress, and gets the golden score", async () => {
    const client = await harness().connect("aWriter")
    // wait_job sends progress only while the job is unfinished (a final progress right before the
    // answer would race the answer in the SDK's client), and this job takes about a second: under
    // load it could finish before wait_job first looks at it. With a's only node stopped it stays
    // pending until the first progress notification has arrived, which brings the node back.
    expect(await node.stop()).toBe(0)
    let restartedNode: Promise<RunningService> | undefined
    const restartNode = () => {
      restartedNode ??= startNode(scratch, controller.grpc ?? "", tokens.aNode, "node-a")
      return restartedNode
    }
    const progress: Array<number> = []
    try {
      const submitted = structured<JobView>(await call(client, "submit_job", v01Args))
      expect(submitted).toMatchObject({ tenant_id: "a", state: "pending" })
      const waited = (await client.callTool(
        { name: "wait_job", arguments: { job_id: submitted.id, timeout_seconds: 120 } },
        undefined,
        {
          onprogress: (update) => {
            progress.push(update.progress)
            void restartNode()
          },
          timeout: 150_000
        }
      )) as CallToolResult
      const done = structured<JobView & { timed_out: boolean }>(waited)
      expect(done).toMatchObject({ id: submitted.id, state: "finished", timed_out: false })
      // The first notification reports the pending job (no frame scored), then the count only grows.
      expect(progress[0]).toBe(0)
      expect(progress).toEqual([...progress].sort((x, y) => x - y))

      const got = structured<JobView>(await call(client, "get_job", { job_id: submitted.id }))
      expect(got.state).toBe("finished")
      expect(got.result?.frame_count).toBe(fixture("v01").frames)
      expect(got.result?.score).toBeCloseTo(GOLDEN_VMAF, 5)
      expect(got.result?.features.integer_adm2).toBeCloseTo(goldenV01.pooled_metrics.integer_adm2?.mean ?? 0, 5)
      expect(text(await call(client, "get_job", { job_id: submitted.id }))).toContain("finished")
      finishedJob = submitted.id
    } finally {
      node = await restartNode()
    }
  })

  it("lists the tenant's jobs with a state filter and a limit", async () => {
    const client = await harness().connect("aReader")
    const finished = structured<{ jobs: Array<JobView>; count: number }>(
      await call(client, "list_jobs", { states: ["finished"], limit: 1000 })
    )
    expect(finished.jobs.map((job) => job.id)).toContain(finishedJob)
    expect(finished.jobs.every((job) => job.state === "finished" && job.tenant_id === "a")).toBe(true)
    const one = structured<{ jobs: Array<JobView>; count: number }>(await call(client, "list_jobs", { limit: 1 }))
    expect(one.count).toBe(1)
  })

  it("describes the worst frames of the finished job against the golden per-frame values", async () => {
    const client = await harness().connect("aReader")
    const worst = structured<{ frames: Array<{ frame: number; value: number; metrics: Record<string, number> }> }>(
      await call(client, "describe_worst_frames", { job_id: finishedJob, count: 3 })
    )
    const expected = [...goldenV01.frames]
      .map((frame) => ({ frame: frame.frameNum, value: frame.metrics.vmaf ?? Number.NaN }))
      .sort((left, right) => left.value - right.value)
      .slice(0, 3)
    expect(worst.frames.map((frame) => frame.frame)).toEqual(expected.map((frame) => frame.frame))
    worst.frames.forEach((frame, index) => {
      expect(frame.value).toBeCloseTo(expected[index]?.value ?? Number.NaN, 5)
      expect(frame.metrics).toHaveProperty("integer_vif_scale0")
    })
  })

  it("names the worst shots of a job scored with shots, and carries its percentiles", async () => {
    const client = await harness().connect("aWriter")
    const submitted = structured<JobView>(
      await call(client, "submit_job", { ...v01Args, options: { ...v01.options, shots: true } })
    )
    const done = structured<JobView>(await call(client, "wait_job", { job_id: submitted.id, timeout_seconds: 120 }))
    expect(done.state).toBe("finished")
    const described = await call(client, "describe_worst_frames", { job_id: submitted.id, count: 1 })
    const worst = structured<{
      frames: Array<{ frame: number; value: number }>
      worst_shots: Array<{ shot: number; first_frame: number; frame_count: number; score: number; worst_frame: number }>
    }>(described)
    // The fixture has no cut: one shot over its 30 frames, its worst frame the clip's.
    const [lowest] = worst.frames
    expect(worst.worst_shots).toEqual([
      {
        shot: 0,
        first_frame: 0,
        frame_count: 30,
        score: expect.any(Number),
        min: lowest?.value,
        worst_frame: lowest?.frame
      }
    ])
    expect(worst.worst_shots[0]?.score).toBeCloseTo(GOLDEN_VMAF, 5)
    expect(text(described)).toContain(`worst shots: shot 0 (frames 0-29): ${GOLDEN_VMAF.toFixed(3)}`)
    // Nearest rank over the reference's 30 per-frame scores: p1 is rank 1, p50 rank 15.
    const got = structured<{ result: { percentiles: Record<string, Record<string, number>> } }>(
      await call(client, "get_job", { job_id: submitted.id })
    )
    const ascending = goldenV01.frames.map((frame) => frame.metrics.vmaf ?? Number.NaN).sort((a, b) => a - b)
    expect(got.result.percentiles["p1"]?.["vmaf"]).toBeCloseTo(ascending[0] ?? Number.NaN, 5)
    expect(got.result.percentiles["p50"]?.["vmaf"]).toBeCloseTo(ascending[14] ?? Number.NaN, 5)
  })

  it("cancels a second job", async () => {
    const client = await harness().connect("aWriter")
    const second = structured<JobView>(await call(client, "submit_job", v01Args))
    const cancelled = structured<JobView>(await call(client, "cancel_job", { job_id: second.id }))
    expect(cancelled).toMatchObject({ id: second.id })
    // A node may have finished it in the meantime; otherwise it is cancelled for good.
    expect(["cancelled", "finished"]).toContain(cancelled.state)
    const got = structured<JobView>(await call(client, "get_job", { job_id: second.id }))
    expect(got.state).toBe(cancelled.state)
  })

  it("gives a reader the controller's writer refusal on submit_job, verbatim", async () => {
    const client = await harness().connect("aReader")
    const refused = await call(client, "submit_job", v01Args)
    expect(refused.isError).toBe(true)
    expect(text(refused)).toContain(
      `PERMISSION_DENIED: ${Messages.roleRequired(ROLE_TABLE.get(GrpcMethods.SubmitJob) ?? [])}`
    )
  })

  it("keeps tenants apart: neither sees the other's job; b's inputs must lie under b's roots", async () => {
    const b = await harness().connect("bWriter")
    // b has no node: its job stays pending, and wait_job gives up at its timeout.
    const jobB = structured<JobView>(
      await call(b, "submit_job", {
        reference: join(scratch.rootB, "ref.yuv"),
        distorted: join(scratch.rootB, "dis.yuv"),
        options: v01.options
      })
    )
    expect(jobB).toMatchObject({ tenant_id: "b", state: "pending" })
    const waited = structured<JobView & { timed_out: boolean }>(
      await call(b, "wait_job", { job_id: jobB.id, timeout_seconds: 1 })
    )
    expect(waited).toMatchObject({ state: "pending", timed_out: true })
    const bSeesA = await call(b, "get_job", { job_id: finishedJob })
    expect(bSeesA.isError).toBe(true)
    expect(text(bSeesA)).toContain(`PERMISSION_DENIED: ${Messages.otherTenant}`)
    const bList = structured<{ jobs: Array<JobView> }>(await call(b, "list_jobs", { limit: 1000 }))
    expect(bList.jobs.map((job) => job.id)).not.toContain(finishedJob)
    const refusedRoots = await call(b, "submit_job", v01Args)
    expect(refusedRoots.isError).toBe(true)
    expect(text(refusedRoots)).toContain(`PERMISSION_DENIED: ${Messages.inputOutsideRoots(v01.reference)}`)

    const a = await harness().connect("aReader")
    for (const tool of ["get_job", "describe_worst_frames", "wait_job"]) {
      const aSeesB = await call(a, tool, { job_id: jobB.id })
      expect(aSeesB.isError, tool).toBe(true)
      expect(text(aSeesB)).toContain(`PERMISSION_DENIED: ${Messages.otherTenant}`)
    }
    const aList = structured<{ jobs: Array<JobView> }>(await call(a, "list_jobs", { limit: 1000 }))
    expect(aList.jobs.map((job) => job.id)).not.toContain(jobB.id)
  })

  it("scores synchronously and compares two encodes of one reference", async () => {
    const client = await harness().connect("aWriter")
    const scored = structured<{ score: number; frame_count: number }>(await call(client, "score", v01Args))
    expect(scored.score).toBeCloseTo(GOLDEN_VMAF, 5)
    // B is the reference itself: it wins every frame.
    const compared = structured<{
      a: { score: number }
      b: { score: number }
      better: string
      per_frame: { frames_compared: number; frames_b_better: number; mean_delta: number }
    }>(
      await call(client, "compare", {
        reference: v01.reference,
        distorted_a: v01.distorted,
        distorted_b: v01.reference,
        options: v01.options
      })
    )
    expect(compared.a.score).toBeCloseTo(GOLDEN_VMAF, 5)
    expect(compared.b.score).toBeGreaterThan(compared.a.score)
    expect(compared.better).toBe("b")
    expect(compared.per_frame.frames_compared).toBe(fixture("v01").frames)
    expect(compared.per_frame.frames_b_better).toBe(fixture("v01").frames)
    expect(compared.per_frame.mean_delta).toBeCloseTo(compared.b.score - compared.a.score, 9)
  })

  it("stops a wait_job its client cancels", async () => {
    const b = await harness().connect("bWriter")
    const pending = structured<JobView>(
      await call(b, "submit_job", {
        reference: join(scratch.rootB, "ref.yuv"),
        distorted: join(scratch.rootB, "dis.yuv"),
        options: v01.options
      })
    )
    const abort = new AbortController()
    const waiting = b.callTool(
      { name: "wait_job", arguments: { job_id: pending.id, timeout_seconds: 3600 } },
      undefined,
      { signal: abort.signal }
    )
    const cancelled = () =>
      harness()
        .logs()
        .some(
          (line) =>
            line.message === "tool call" &&
            line.annotations.tool === "wait_job" &&
            line.annotations.outcome === "cancelled"
        )
    await Bun.sleep(500)
    abort.abort()
    await expect(waiting).rejects.toThrow()
    for (let attempt = 0; attempt < 200 && !cancelled(); attempt++) await Bun.sleep(50)
    expect(cancelled()).toBe(true)
  })

  it("scores a ladder (score_ladder) and runs one as a job: per rendition, exactly the separate scores", async () => {
    const client = await harness().connect("aWriter")
    interface Rendition {
      readonly label: string
      readonly frames?: ReadonlyArray<number>
      readonly frame_count: number
      readonly on_hull: boolean
      readonly codec: string
    }
    interface Ladder {
      readonly renditions: ReadonlyArray<Rendition>
      readonly reference_passes: number
      readonly best: string
      readonly hull: ReadonlyArray<string>
    }
    const expectSeparate = (renditions: ReadonlyArray<Rendition>) =>
      expect(renditions.map((rendition) => [rendition.label, rendition.frames])).toEqual(
        ladder.renditions.map((rendition) => [rendition.label, separateVmaf.get(rendition.label)])
      )
    const scored = structured<Ladder>(
      await call(client, "score_ladder", {
        reference: ladder.reference,
        renditions: ladder.renditions,
        include_frames: true
      })
    )
    expectSeparate(scored.renditions)
    expect(scored.reference_passes).toBe(1)
    expect(scored.hull).toEqual(expect.arrayContaining(scored.renditions.filter((r) => r.on_hull).map((r) => r.label)))
    expect(scored.renditions.map((rendition) => rendition.codec)).toEqual(["h264", "hevc", "mpeg4", "mpeg2video"])

    const submitted = structured<JobView & { renditions: ReadonlyArray<{ label: string }> }>(
      await call(client, "submit_ladder_job", { reference: ladder.reference, renditions: ladder.renditions })
    )
    expect(submitted.renditions.map((rendition) => rendition.label)).toEqual(ladder.renditions.map((r) => r.label))
    const waited = structured<JobView & { ladder?: Ladder; timed_out: boolean }>(
      (await client.callTool(
        { name: "wait_job", arguments: { job_id: submitted.id, timeout_seconds: 120 } },
        undefined,
        { timeout: 150_000 }
      )) as CallToolResult
    )
    expect(waited).toMatchObject({ state: "finished", timed_out: false })
    // The job's view carries the summary; its pooled scores are the synchronous ladder's.
    expect(waited.ladder?.renditions.map((rendition) => [rendition.label, rendition.frame_count])).toEqual(
      scored.renditions.map((rendition) => [rendition.label, rendition.frame_count])
    )
    expect(waited.ladder?.best).toBe(scored.best)
    // The worst frames of one rendition of the ladder job: its separately scored lowest frames.
    const label = ladder.renditions[1]?.label ?? ""
    const worst = structured<{ frames: Array<{ frame: number; value: number }> }>(
      await call(client, "describe_worst_frames", { job_id: submitted.id, rendition: label, count: 3 })
    )
    const alone = (separateVmaf.get(label) ?? []).map((value, frame) => ({ frame, value }))
    expect(worst.frames.map((frame) => [frame.frame, frame.value])).toEqual(
      alone
        .sort((a, b) => a.value - b.value || a.frame - b.frame)
        .slice(0, 3)
        .map((frame) => [frame.frame, frame.value])
    )
    const unnamed = await call(client, "describe_worst_frames", { job_id: submitted.id })
    expect(unnamed.isError).toBe(true)
    expect(text(unnamed)).toContain("is a ladder: name one of its renditions")

    // The same ladder (its mp4 and mkv renditions) in segments of 24 frames: the same frames.
    const segmented = structured<JobView>(
      await call(client, "submit_ladder_job", {
        reference: ladder.reference,
        renditions: ladder.renditions.slice(0, 2),
        segment_frames: 24
      })
    )
    const segmentedDone = structured<JobView & { segments?: ReadonlyArray<unknown> }>(
      (await client.callTool(
        { name: "wait_job", arguments: { job_id: segmented.id, timeout_seconds: 120 } },
        undefined,
        { timeout: 150_000 }
      )) as CallToolResult
    )
    expect(segmentedDone).toMatchObject({ state: "finished", timed_out: false })
    expect(segmentedDone.segments).toHaveLength(2)
    const segmentedWorst = structured<{ frames: Array<{ frame: number; value: number }> }>(
      await call(client, "describe_worst_frames", { job_id: segmented.id, rendition: label, count: 3 })
    )
    expect(segmentedWorst.frames).toEqual(worst.frames)

    const reader = await harness().connect("aReader")
    const refused = await call(reader, "score_ladder", { reference: ladder.reference, renditions: ladder.renditions })
    expect(refused.isError).toBe(true)
    expect(text(refused)).toContain(
      `PERMISSION_DENIED: ${Messages.roleRequired(ROLE_TABLE.get(GrpcMethods.ScoreLadder) ?? [])}`
    )
  })

  it("lists the models (the controller's ListModels, or the built-in list without it)", async () => {
    const client = await harness().connect("aReader")
    const answer = await call(client, "list_models")
    const listed = structured<{
      models: Array<{ name: string; default: boolean; sha256?: string }>
      features: Array<{ name: string; outputs: Array<string>; implementation: string }>
      source: string
    }>(answer)
    expect(listed.models).toContainEqual(expect.objectContaining({ name: "vmaf_v0.6.1", default: true }))
    // The extra features too, each with its outputs and implementation (issue 32).
    expect(listed.features).toContainEqual({
      name: "xpsnr",
      outputs: ["xpsnr_y", "xpsnr_u", "xpsnr_v"],
      implementation: expect.stringContaining("xpsnr")
    })
    expect(listed.features.map((feature) => feature.name)).toContain("ssimulacra2")
    expect(text(answer)).toContain("features: ")
    if (Object.hasOwn(serviceDefinition("svc.v1.SvcScoring"), "ListModels")) {
      expect(listed.source).toContain("controller")
      for (const model of listed.models) expect(model.sha256).toMatch(/^[0-9a-f]{64}$/)
    } else expect(listed.source).toContain("built-in")
  })
}

describe("svc-mcp over stdio", () => {
  let stdio: Awaited<ReturnType<typeof stdioHarness>>
  beforeAll(async () => {
    stdio = await stdioHarness(controller.grpc ?? "", "stdio")
  })
  afterAll(async () => {
    await stdio.close()
    // Logs went to stderr, as JSON lines.
    const lines = stdio
      .stderr()
      .split("\n")
      .filter((line) => line.trim() !== "")
    expect(lines.length).toBeGreaterThan(0)
    for (const line of lines) expect(() => JSON.parse(line), line).not.toThrow()
    // One line per tool call, never a token.
    expect(stdio.stderr()).toContain('"message":"tool call"')
    expect(stdio.stderr()).toContain('"tool":"submit_job"')
    for (const token of [tokens.aWriter, tokens.aReader, tokens.bWriter]) expect(stdio.stderr()).not.toContain(token)
  })

  scenarios(() => stdio)

  it("sends SVC_CONTROLLER_TOKEN when it is given instead of a file", async () => {
    const client = newClient()
    await client.connect(
      new StdioClientTransport({
        command: requireBuilt("svc-mcp"),
        env: {
          PATH: process.env.PATH ?? "/usr/bin:/bin",
          SVC_CONTROLLER_ADDR: controller.grpc ?? "",
          SVC_CONTROLLER_TOKEN: tokens.bWriter
        },
        stderr: "ignore"
      })
    )
    try {
      const listed = structured<{ jobs: Array<JobView> }>(await call(client, "list_jobs", { limit: 1000 }))
      expect(listed.jobs.length).toBeGreaterThan(0)
      expect(listed.jobs.every((job) => job.tenant_id === "b")).toBe(true)
    } finally {
      await client.close()
    }
  })

  it("answers a tool error while the token file is missing, and picks the file up once it appears", async () => {
    const tokenFile = scratch.path("late.token")
    const client = newClient()
    await client.connect(
      new StdioClientTransport({
        command: requireBuilt("svc-mcp"),
        env: {
          PATH: process.env.PATH ?? "/usr/bin:/bin",
          SVC_CONTROLLER_ADDR: controller.grpc ?? "",
          SVC_CONTROLLER_TOKEN_FILE: tokenFile
        },
        stderr: "ignore"
      })
    )
    try {
      const refused = await call(client, "list_jobs")
      expect(refused.isError).toBe(true)
      expect(text(refused)).toContain(`cannot read the controller token file ${tokenFile}`)
      scratch.write("late.token", tokens.aReader)
      expect(structured<{ count: number }>(await call(client, "list_jobs")).count).toBeGreaterThan(0)
    } finally {
      await client.close()
    }
  })

  it("answers a tool error while the controller is down, and keeps serving", async () => {
    const down = await stdioHarness(`127.0.0.1:${await freePort()}`, "down")
    try {
      const client = await down.connect("aReader")
      for (const attempt of [1, 2]) {
        const refused = await call(client, "get_job", { job_id: `job-${attempt}` })
        expect(refused.isError).toBe(true)
        expect(text(refused)).toMatch(/controller at 127\.0\.0\.1:\d+ is unreachable \(UNAVAILABLE: /)
      }
      expect((await client.listTools()).tools).toHaveLength(toolNames.length)
    } finally {
      await down.close()
    }
  })
})

describe("svc-mcp over streamable HTTP", () => {
  let mcp: RunningService
  let downMcp: RunningService
  const http = httpHarness(() => mcp)
  const start = (controllerAddress: string) =>
    startService("svc-mcp", { env: { SVC_MCP_TRANSPORT: "http", SVC_CONTROLLER_ADDR: controllerAddress } })
  beforeAll(async () => {
    mcp = await start(controller.grpc ?? "")
    downMcp = await start(`127.0.0.1:${await freePort()}`)
  })
  afterAll(async () => {
    await http.close()
    expect(await mcp.stop()).toBe(0)
    expect(await downMcp.stop()).toBe(0)
  })

  scenarios(() => http)

  const initialize = {
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } }
  }
  const post = (body: unknown, headers: Record<string, string>) =>
    fetch(`${mcp.http}/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
      body: JSON.stringify(body)
    })

  it("refuses to start with a token of its own", async () => {
    for (const variable of ["SVC_CONTROLLER_TOKEN", "SVC_CONTROLLER_TOKEN_FILE"]) {
      const result = await runCommand([requireBuilt("svc-mcp")], {
        env: { SVC_MCP_TRANSPORT: "http", SVC_HTTP_ADDR: "127.0.0.1:0", [variable]: "x" }
      })
      expect(result.code).toBe(1)
      expect(result.stderr).toContain(variable)
      expect(result.stderr).toContain("stdio only")
    }
  })

  it("answers 401 without a bearer token and calls nothing", async () => {
    const marker = join(scratch.rootA, `unauthenticated-${Date.now()}.yuv`)
    const submit = {
      jsonrpc: "2.0",
      id: 2,
      method: "tools/call",
      params: { name: "submit_job", arguments: { reference: v01.reference, distorted: marker, options: v01.options } }
    }
    const attempts: ReadonlyArray<Record<string, string>> = [
      {},
      { authorization: "Basic dXNlcjpwYXNz" },
      { authorization: "Bearer" }
    ]
    for (const headers of attempts) {
      const response = await post(submit, headers)
      expect(response.status).toBe(401)
      expect(response.headers.get("www-authenticate")).toContain("Bearer")
      expect(await errorMessage(response)).toContain("bearer token")
    }
    const client = await http.connect("aReader")
    const listed = structured<{ jobs: Array<{ distorted: string }> }>(await call(client, "list_jobs", { limit: 1000 }))
    expect(listed.jobs.some((job) => job.distorted === marker)).toBe(false)
  })

  it("refuses a foreign Origin (DNS rebinding) and admits a loopback one", async () => {
    const authorization = `Bearer ${tokens.aReader}`
    const foreign = await post(initialize, { authorization, origin: "http://attacker.example" })
    expect(foreign.status).toBe(403)
    expect(await errorMessage(foreign)).toContain("origin")
    const local = await post(initialize, { authorization, origin: "http://localhost:6274" })
    expect(local.status).toBe(200)
  })

  it("is stateless: GET and DELETE get 405 (a call's notifications come on its POST's stream)", async () => {
    for (const method of ["GET", "DELETE"]) {
      const response = await fetch(`${mcp.http}/mcp`, {
        method,
        headers: { authorization: `Bearer ${tokens.aReader}`, accept: "text/event-stream" }
      })
      expect(response.status, method).toBe(405)
      expect(response.headers.get("allow")).toBe("POST")
    }
  })

  it("refuses a Host that is not a loopback name on its loopback listener", async () => {
    const response = await post(initialize, { authorization: `Bearer ${tokens.aReader}`, host: "attacker.example" })
    expect(response.status).toBe(403)
  })

  it("keeps a long call's event stream open: it carries keep-alive bytes while the tool is silent", async () => {
    // Bun closes a connection that carries no bytes for its idle timeout, a streamed response's
    // silences included, and sends a streamed response's headers only with its first bytes. A
    // wait_job on a job that stays pending (b has no node) and without a progress token sends
    // nothing until its timeout: without keep-alive comments this fetch fails with ECONNRESET.
    const b = await http.connect("bWriter")
    const pending = structured<JobView>(
      await call(b, "submit_job", {
        reference: join(scratch.rootB, "ref.yuv"),
        distorted: join(scratch.rootB, "dis.yuv"),
        options: v01.options
      })
    )
    const abort = new AbortController()
    try {
      const response = await fetch(`${mcp.http}/mcp`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          authorization: `Bearer ${tokens.bWriter}`
        },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "tools/call",
          params: { name: "wait_job", arguments: { job_id: pending.id, timeout_seconds: 3600 } }
        }),
        signal: abort.signal
      })
      expect(response.status).toBe(200)
      expect(response.headers.get("content-type")).toBe("text/event-stream")
      const first = await response.body?.getReader().read()
      expect(new TextDecoder().decode(first?.value)).toBe(": keepalive\n\n")
    } finally {
      abort.abort()
      await call(b, "cancel_job", { job_id: pending.id })
    }
  })

  it("answers a tool error while the controller is down, and keeps serving", async () => {
    const client = newClient()
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${downMcp.http}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${tokens.aReader}` } }
      })
    )
    try {
      for (const attempt of [1, 2]) {
        const refused = await call(client, "list_jobs", { limit: attempt })
        expect(refused.isError).toBe(true)
        expect(text(refused)).toMatch(/is unreachable \(UNAVAILABLE: /)
      }
      expect((await client.listTools()).tools).toHaveLength(toolNames.length)
      expect((await fetch(`${downMcp.http}/healthz`)).status).toBe(200)
    } finally {
      await client.close()
    }
  })
})
