/**
 * The README as a new user follows it (issue 26): its shell blocks up to "## Executables" (the
 * first score and the ten-minute tour) run in order, as written, in a copy of the repository in
 * a temporary folder with nothing beside it (the files git tracks, the installed node_modules and
 * the build linked in: the install and build lines are marked `# not run`, and so is opening a
 * browser). The default ports are replaced by free ones, the way a user on a busy machine would
 * set them: SVC_HTTP_ADDR/SVC_GRPC_ADDR before each service, SVC_CONTROLLER_ADDR for the client
 * and the node. Then the compiled server, started in that copy without SVC_MODEL_DIR, scores the
 * README's first request with each built-in model.
 */
import { spawn, spawnSync } from "bun"
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { ModelInfo, ScoreResult } from "../../modules/scorer/index.ts"
import { repoRoot, requireBuilt, type RunningService, startService } from "../../local/executables.ts"
import { WORKSPACE_FOLDER, workspaceReads } from "../support/workspace.ts"

const readme = readFileSync(join(repoRoot, "README.md"), "utf8")

/** The `sh` blocks before "## Executables", each as its lines. */
const blocks: ReadonlyArray<ReadonlyArray<string>> = [
  ...(readme.split(/^## Executables$/m)[0] ?? "").matchAll(/^```sh\n([\s\S]*?)^```$/gm)
].map((match) => (match[1] ?? "").trimEnd().split("\n"))

/** The README's defaults: listener port of each service, by variable. */
const defaultPorts = {
  serverHttp: 8080,
  serverGrpc: 50051,
  controllerHttp: 8081,
  controllerGrpc: 50052,
  nodeHttp: 8082
}
type Ports = Record<keyof typeof defaultPorts, number>

/** A port below the kernel's ephemeral range (so no port-0 bind elsewhere takes it) that is free now. */
const freePort = async (taken: Set<number>): Promise<number> => {
  for (;;) {
    const port = 20000 + Math.floor(Math.random() * 12000)
    if (taken.has(port)) continue
    const free = await new Promise<boolean>((resolve) => {
      const server = createServer()
      server.once("error", () => resolve(false))
      server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)))
    })
    if (free) {
      taken.add(port)
      return port
    }
  }
}

/** A README line as the test runs it: default ports replaced, each service given its listeners. */
const withPorts = (line: string, ports: Ports): string => {
  let out = line
  for (const [name, port] of Object.entries(defaultPorts))
    out = out.replaceAll(`localhost:${port}`, `localhost:${ports[name as keyof Ports]}`)
  const listeners: Record<string, string> = {
    "svc-server": `SVC_HTTP_ADDR=127.0.0.1:${ports.serverHttp} SVC_GRPC_ADDR=127.0.0.1:${ports.serverGrpc}`,
    "svc-controller": `SVC_HTTP_ADDR=127.0.0.1:${ports.controllerHttp} SVC_GRPC_ADDR=127.0.0.1:${ports.controllerGrpc}`,
    "svc-node": `SVC_HTTP_ADDR=127.0.0.1:${ports.nodeHttp}`
  }
  return out.replace(
    /(^|\s)dist\/(svc-server|svc-controller|svc-node)(?=\s|$)/,
    (_, before: string, name: string) => `${before}${listeners[name]} dist/${name}`
  )
}

/** The script of one block: lines marked `# not run` left out; background services stopped at its end. */
const script = (lines: ReadonlyArray<string>, ports: Ports): string =>
  [
    "set -e -o pipefail",
    "trap 'status=$?; kill $(jobs -p) 2>/dev/null; wait; exit $status' EXIT",
    ...lines.filter((line) => !line.includes("# not run")).map((line) => withPorts(line, ports))
  ].join("\n")

const scratch = mkdtempSync(join(tmpdir(), "svc-readme-"))
const copy = join(scratch, "svc")
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

/** A copy of what a clone holds (the files git tracks, and new ones it does not ignore), built. */
const makeCopy = () => {
  const listed = spawnSync(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], { cwd: repoRoot })
  for (const file of listed.stdout
    .toString()
    .split("\0")
    .filter((entry) => entry !== "")) {
    if (!existsSync(join(repoRoot, file))) continue
    mkdirSync(dirname(join(copy, file)), { recursive: true })
    cpSync(join(repoRoot, file), join(copy, file))
  }
  requireBuilt("svc")
  symlinkSync(join(repoRoot, "node_modules"), join(copy, "node_modules"))
  symlinkSync(join(repoRoot, "dist"), join(copy, "dist"))
}

/** Runs a block in the copy, bounded: timeout stops the shell and every service it started. */
const runBlock = async (lines: ReadonlyArray<string>, ports: Ports) => {
  const child = spawn(["timeout", "-k", "5", "240", "bash", "-c", script(lines, ports)], {
    cwd: copy,
    env: {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: process.env.HOME ?? scratch,
      TMPDIR: process.env.TMPDIR ?? tmpdir(),
      SVC_CONTROLLER_ADDR: `localhost:${ports.controllerGrpc}`
    },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe"
  })
  const [stdout, stderr, code] = await Promise.all([
    new Response(child.stdout).text(),
    new Response(child.stderr).text(),
    child.exited
  ])
  return { code, stdout, stderr }
}

const vmafLines = (stdout: string): ReadonlyArray<number> =>
  [...stdout.matchAll(/^VMAF score: ([0-9.]+)/gm)].map((match) => Number(match[1]))
const jsonLines = (stdout: string): ReadonlyArray<Record<string, unknown>> =>
  stdout
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as Record<string, unknown>)

describe("the README, followed as written in a copy with nothing beside it", () => {
  let ports: Ports
  beforeAll(async () => {
    makeCopy()
    const taken = new Set<number>()
    ports = {
      serverHttp: await freePort(taken),
      serverGrpc: await freePort(taken),
      controllerHttp: await freePort(taken),
      controllerGrpc: await freePort(taken),
      nodeHttp: await freePort(taken)
    }
  })

  it("has the blocks the test expects: install and test lines marked, then the first score and the tour", () => {
    expect(blocks).toHaveLength(3)
    expect(blocks[0]?.every((line) => line.includes("# not run"))).toBe(true)
    expect(blocks[1]?.some((line) => line.startsWith("curl -s localhost:8080/v1/score"))).toBe(true)
    expect(blocks[2]?.some((line) => line.includes("dist/svc jobs submit"))).toBe(true)
    // Nothing the blocks name lies beside the repository (the workspace folder).
    expect(workspaceReads(blocks.flat().join("\n"))).toEqual([])
    expect(existsSync(join(dirname(copy), WORKSPACE_FOLDER))).toBe(false)
  })

  it("first score: the sample pair over HTTP, the mp4 giving the same score as its decoded frames", async () => {
    const run = await runBlock(blocks[1] ?? [], ports)
    expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(0)
    const [y4m, mp4, models] = jsonLines(run.stdout)
    expect(y4m?.["score"], run.stdout).toBeGreaterThan(20)
    expect(y4m?.["score"]).toBeLessThan(100)
    expect(mp4?.["score"]).toBe(y4m?.["score"])
    expect((models?.["models"] as ReadonlyArray<unknown>).length).toBeGreaterThanOrEqual(13)
    expect(existsSync(join(copy, "sample", "distorted-240p.mp4"))).toBe(true)
  })

  it("tour: local score, JSON and HTML report, ladder, a job on a node, the server: one score for one pair", async () => {
    const run = await runBlock(blocks[2] ?? [], ports)
    expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(0)
    // Local, the job's (the node decodes the mp4) and the server's (likewise): the same frames.
    const scores = vmafLines(run.stdout)
    expect(scores, run.stdout).toHaveLength(3)
    expect(new Set(scores).size, run.stdout).toBe(1)
    expect(run.stdout).toMatch(/^360p\s+([0-9.]+)/m)
    expect(Number(/^360p\s+([0-9.]+)/m.exec(run.stdout)?.[1])).toBe(scores[0])
    expect(run.stdout).toMatch(/^240p\s+[0-9.]+/m)
    expect(run.stdout).toMatch(/\sfinished\s.*distorted\.mp4/)
    const json = JSON.parse(readFileSync(join(copy, "sample", "score.json"), "utf8")) as {
      frames: ReadonlyArray<{ metrics: Record<string, number> }>
      pooled_metrics: Record<string, { mean: number }>
    }
    expect(json.frames).toHaveLength(20)
    expect(json.frames[0]?.metrics["psnr_y"]).toBeGreaterThan(20)
    expect(json.pooled_metrics["vmaf"]?.mean).toBeCloseTo(scores[0] ?? Number.NaN, 6)
    for (const page of ["report.html", "job.html"])
      expect(readFileSync(join(copy, "sample", page), "utf8")).toMatch(/^<!doctype html>/i)
  })
})

const readmeRequest = ((): { reference: string; distorted: string } => {
  const body = /curl -s localhost:8080\/v1\/score -d '([^']+)'/.exec(readme)?.[1]
  if (!body) throw new Error("README.md has no curl score example")
  return JSON.parse(body) as { reference: string; distorted: string }
})()

const score = async (service: RunningService, body: object) => {
  const response = await fetch(`${service.http}/v1/score`, { method: "POST", body: JSON.stringify(body) })
  return { status: response.status, body: (await response.json()) as ScoreResult & { error?: string } }
}

describe("the sample in that copy, on the compiled server's built-in models", () => {
  let service: RunningService | undefined
  beforeAll(async () => {
    // The README blocks above made the sample; run alone, this suite makes it itself.
    if (!existsSync(join(copy, "sample", "distorted.y4m"))) {
      const sample = spawnSync([process.execPath, "scripts/sample.ts"], { cwd: copy, stderr: "pipe" })
      expect(sample.exitCode, sample.stderr.toString()).toBe(0)
    }
    service = await startService("svc-server", { cwd: copy, env: { SVC_MODEL_DIR: "" } })
  })
  const started = (): RunningService => {
    if (!service) throw new Error("svc-server did not start")
    return service
  }
  afterAll(async () => {
    if (service) expect(await service.stop()).toBe(0)
  })

  it("is ready on the built-in models and scores the README's first request (default model)", async () => {
    expect(readmeRequest).toEqual({ reference: "sample/reference.y4m", distorted: "sample/distorted.y4m" })
    expect((await fetch(`${started().http}/readyz`)).status).toBe(200)
    const { status, body } = await score(started(), readmeRequest)
    expect(status, body.error).toBe(200)
    expect(body.provenance).toMatchObject({ model: "vmaf_v0.6.1", model_source: "builtin" })
    expect(body.score).toBeGreaterThan(20)
    expect(body.score).toBeLessThan(100)
  })

  it("scores the sample with each built-in model; the ones this build cannot compute say why", async () => {
    const listing = (await (await fetch(`${started().http}/v1/models`)).json()) as { models: ReadonlyArray<ModelInfo> }
    expect(listing.models.length).toBeGreaterThanOrEqual(13)
    for (const model of listing.models) {
      const { status, body } = await score(started(), { ...readmeRequest, model: model.name })
      if (model.usable) {
        expect(status, `${model.name}: ${body.error}`).toBe(200)
        expect(body.provenance).toMatchObject({
          model: model.name,
          model_sha256: model.sha256,
          model_source: "builtin"
        })
        expect(body.score, model.name).toBeGreaterThanOrEqual(0)
        expect(body.score, model.name).toBeLessThanOrEqual(100)
      } else {
        expect(status, model.name).toBe(400)
        expect(body.error).toBe(model.reason)
      }
    }
    expect(listing.models.filter((model) => model.usable).map((model) => model.name)).toEqual(
      expect.arrayContaining([
        "vmaf_v0.6.1",
        "vmaf_v0.6.1neg",
        "vmaf_4k_v0.6.1",
        "vmaf_4k_v0.6.1neg",
        "vmaf_b_v0.6.3",
        "vmaf_v1.0.16_5d0h",
        "vmaf_v1.0.16_3d0h",
        "vmaf_v1.0.16_3d0h_2160",
        "vmaf_v1.0.16_1d5h_2160"
      ])
    )
    // The newest family lists what it reads, as the reference names the features.
    expect(listing.models.find((model) => model.name === "vmaf_v1.0.16_3d0h")?.features).toEqual([
      "Cambi_feature_cambi_score",
      "Speed_chroma_feature_speed_chroma_uv_score",
      "VMAF_integer_feature_adm3_score",
      "VMAF_integer_feature_motion3_score"
    ])
  })

  it("scores every usable built-in model in one pass, keyed by model name; auto picks the 1080p model", async () => {
    const listing = (await (await fetch(`${started().http}/v1/models`)).json()) as { models: ReadonlyArray<ModelInfo> }
    const usable = listing.models.filter((model) => model.usable).map((model) => model.name)
    const together = await score(started(), { ...readmeRequest, models: usable })
    expect(together.status, together.body.error).toBe(200)
    for (const name of usable) {
      const alone = await score(started(), { ...readmeRequest, model: name })
      expect(together.body.scores?.[name], name).toBe(alone.body.score)
    }
    const auto = await score(started(), { ...readmeRequest, model: "auto" })
    expect(auto.body.provenance.model).toBe("vmaf_v0.6.1")
  })
})
