/**
 * The `svc` client end to end on the compiled executable: its command line (flag spellings,
 * help, exit codes), the progress bar under a pseudo-terminal and its absence in a pipe, scores
 * on a real svc-server (and that server's content negotiation), and jobs on a real controller
 * and node.
 */
import { createHash } from "node:crypto"
import { readFileSync, rmSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { goldenTolerance } from "../../modules/scorer/index.ts"
import {
  fixturesDir,
  modelDirEnv,
  requireBuilt,
  runCommand,
  type RunningService,
  startService
} from "../../local/executables.ts"
import { fixture, golden } from "../support/fixtures.ts"
import { geometryArgs, modelFile, scratchDir, svc, xmlShape } from "./svc-support.ts"

const v01 = fixture("v01")
const v06 = fixture("v06")
const v01Golden = golden(v01)
const v01Vmaf = v01Golden.pooled_metrics["vmaf"]?.mean ?? Number.NaN
const pairArgs = (entry = v01) => [entry.reference, entry.distorted, ...geometryArgs(entry)]
const scratch = scratchDir("svc-client-")
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

const jsonOutput = async (args: ReadonlyArray<string>) => {
  const result = await svc(["score", ...args, "--format", "json", "-q"])
  expect(result.stderr).toBe("")
  expect(result.code).toBe(0)
  return JSON.parse(result.stdout) as {
    frames: ReadonlyArray<{ frameNum: number; metrics: Record<string, number> }>
    pooled_metrics: Record<string, Record<string, number>>
    provenance: { model: string; model_sha256: string }
  }
}

/** Runs a shell command under a pseudo-terminal (`script`), returning what the terminal showed. */
const underTerminal = async (command: ReadonlyArray<string>, env: Record<string, string> = {}) => {
  const quoted = command.map((part) => `'${part.replace(/'/g, "'\\''")}'`).join(" ")
  return runCommand(["script", "-qec", quoted, "/dev/null"], {
    env: { ...modelDirEnv, TERM: "xterm", COLUMNS: "120", ...env }
  })
}

describe("svc command line", () => {
  it("prints the table by default: the score and every feature's pooled values", async () => {
    const result = await svc(["score", ...pairArgs()])
    expect(result.code).toBe(0)
    expect(result.stderr).toBe("")
    expect(result.stdout).toContain(`VMAF score: ${v01Vmaf.toFixed(6)}`)
    // min, max, mean, harmonic_mean, then p1, p5, p10, p25, p50, p75, p90, p95, p99.
    expect(result.stdout).toMatch(/^vmaf(\s+[\d.]+){13}$/m)
  })

  it("takes the reference tool's spellings, their hyphenated aliases and -r/-d alike", async () => {
    const underscores = await jsonOutput([
      ...pairArgs(v06),
      "--frame_cnt",
      "3",
      "--frame_skip_ref",
      "1",
      "--frame_skip_dist",
      "1"
    ])
    const hyphens = await jsonOutput([
      "-r",
      v06.reference,
      "-d",
      v06.distorted,
      "-w",
      "320",
      "--height",
      "240",
      "--pixel-format",
      "420",
      "--frame-cnt",
      "3",
      "--frame-skip-ref",
      "1",
      "--frame-skip-dist",
      "1"
    ])
    expect(underscores.frames).toHaveLength(3)
    expect(hyphens.frames).toEqual(underscores.frames)
  })

  it("-h is help, never the height", async () => {
    const result = await svc(["score", "-h"])
    expect(result.code).toBe(0)
    expect(result.stdout).toContain("--height")
    expect(result.stdout).not.toMatch(/-h, --height/)
    // Plain text into a pipe: no terminal styling.
    expect(result.stdout).not.toContain("\x1b[")
  })

  it("exit 2 for usage errors, 1 when scoring fails, each one line on stderr", async () => {
    const missingGeometry = await svc(["score", v01.reference, v01.distorted])
    expect(missingGeometry.code).toBe(2)
    expect(missingGeometry.stderr).toBe("svc: --width and --height are required for raw (non-.y4m) input\n")
    const unknownFlag = await svc(["score", ...pairArgs(), "--bogus"])
    expect(unknownFlag.code).toBe(2)
    expect(unknownFlag.stderr).toBe("svc: Received unknown argument: '--bogus' (see svc --help)\n")
    const badNumber = await svc(["score", ...pairArgs(), "--threads", "many"])
    expect(badNumber.code).toBe(2)
    expect(badNumber.stderr).toBe("svc: 'many' is not a integer (see svc --help)\n")
    const missingFile = await svc(["score", join(scratch, "absent.yuv"), v01.distorted, ...geometryArgs(v01)])
    expect(missingFile.code).toBe(1)
    expect(missingFile.stderr.trimEnd().split("\n")).toHaveLength(1)
    expect(missingFile.stderr).toMatch(/^svc: .*absent\.yuv/)
    const unknownModel = await svc(["score", ...pairArgs(), "--model", "no_such_model"])
    expect(unknownModel.code).toBe(1)
    expect(unknownModel.stderr).toMatch(/^svc: unknown model "no_such_model"; the models are: vmaf_4k_v0\.6\.1, .*\n$/)
    expect(missingGeometry.stdout + unknownFlag.stdout + missingFile.stdout + unknownModel.stdout).toBe("")
  })

  it("--model path=FILE scores with that file; several models give a score column each", async () => {
    const byPath = await jsonOutput([...pairArgs(v06), "--frame_cnt", "2", "-m", `path=${modelFile("vmaf_v0.6.1")}`])
    const sha = createHash("sha256")
      .update(readFileSync(modelFile("vmaf_v0.6.1")))
      .digest("hex")
    expect(byPath.provenance.model_sha256).toBe(sha)
    const both = await svc([
      "score",
      ...pairArgs(v06),
      "--frame_cnt",
      "2",
      "-m",
      "vmaf_v0.6.1",
      "-m",
      "vmaf_4k_v0.6.1",
      "--csv",
      "-q"
    ])
    expect(both.code).toBe(0)
    expect(both.stdout.split("\n")[0]).toMatch(/,integer_motion3,vmaf_v0\.6\.1,vmaf_4k_v0\.6\.1,$/)
  })

  it("svc models lists what the model store loads, with the SHA-256 scores name", async () => {
    const result = await svc(["models", "--json"])
    expect(result.code).toBe(0)
    const { models } = JSON.parse(result.stdout) as {
      models: ReadonlyArray<{ name: string; usable: boolean; reason?: string }>
    }
    const sha = createHash("sha256")
      .update(readFileSync(modelFile("vmaf_v0.6.1")))
      .digest("hex")
    expect(models.find((model) => model.name === "vmaf_v0.6.1")).toMatchObject({ usable: true, sha256: sha })
    // Every entry is usable or says why not.
    for (const model of models) expect(model.usable || (model.reason ?? "") !== "").toBe(true)
  })
})

describe("progress bar", () => {
  const output = join(scratch, "progress.json")
  it("is drawn on a terminal: frames done / total, fps, ETA", async () => {
    const shown = await underTerminal([requireBuilt("svc"), "score", ...pairArgs(), "-o", output])
    expect(shown.code).toBe(0)
    expect(shown.stdout).toMatch(/scoring \[[#-]+\] \d+\/30 frames {2}[\d.]+ fps {2}ETA /)
    // Erased at the end: the line clear, then only the summary line (the result is in the file).
    const cleared = shown.stdout.lastIndexOf("\x1b[K")
    expect(cleared).toBeGreaterThan(0)
    expect(shown.stdout.slice(cleared + 3)).toMatch(
      /^\r?\n?VMAF score: [\d.]+ {2}\(30 frames, model vmaf_v0\.6\.1\) -> .*\r?\n$/
    )
    expect(JSON.parse(readFileSync(output, "utf8")).frames).toHaveLength(30)
  })

  it("is quiet with -q on a terminal", async () => {
    const shown = await underTerminal([requireBuilt("svc"), "score", ...pairArgs(), "-o", output, "-q"])
    expect(shown.code).toBe(0)
    expect(shown.stdout).not.toContain("fps")
  })

  it("is absent when stderr is a pipe: only the summary line", async () => {
    const result = await svc(["score", ...pairArgs(), "-o", output])
    expect(result.code).toBe(0)
    expect(result.stderr).toBe(`VMAF score: ${v01Vmaf.toFixed(6)}  (30 frames, model vmaf_v0.6.1) -> ${output}\n`)
  })
})

describe("on a scoring server", () => {
  let server: RunningService
  beforeAll(async () => {
    server = await startService("svc-server", { listeners: ["http", "grpc"] })
  })
  afterAll(async () => {
    await server.stop()
  })

  it("svc score --server gives the numbers of a local score", async () => {
    const remote = await jsonOutput([...pairArgs(), "--server", server.http])
    const local = await jsonOutput(pairArgs())
    expect(remote.frames).toEqual(local.frames)
    expect(remote.pooled_metrics).toEqual(local.pooled_metrics)
    expect(Math.abs((remote.pooled_metrics["vmaf"]?.["mean"] ?? 0) - v01Vmaf)).toBeLessThanOrEqual(goldenTolerance)
  })

  it("svc score --server --shots: the server renders the worst shots' pictures into the HTML report, as a local score", async () => {
    // The client does not read the inputs for a server's score: the pictures come in the answer.
    const pictures = async (where: ReadonlyArray<string>, name: string) => {
      const report = join(scratch, name)
      const scored = await svc(["score", ...pairArgs(), ...where, "--shots", "--html", report, "-q"])
      expect(scored.code, scored.stderr).toBe(0)
      return [...readFileSync(report, "utf8").matchAll(/<figure data-frame="(\d+)"><img [^>]*src="([^"]+)"/g)].map(
        ([, frame, src]) => ({ frame, src })
      )
    }
    const remote = await pictures(["--server", server.http], "remote.html")
    expect(remote).toHaveLength(1)
    expect(remote[0]?.src).toMatch(/^data:image\/png;base64,/)
    expect(remote).toEqual(await pictures([], "local.html"))
  })

  it("POST /v1/score answers Accept: application/xml and text/csv in the reference layouts; JSON by default", async () => {
    const body = JSON.stringify({
      reference: v01.reference,
      distorted: v01.distorted,
      options: { width: 320, height: 240, pixel_format: "420", bitdepth: 8 }
    })
    const post = (accept: string | undefined) =>
      fetch(`${server.http}/v1/score`, {
        method: "POST",
        body,
        headers: accept === undefined ? {} : { accept }
      })
    const localXml = (await svc(["score", ...pairArgs(), "--xml", "-q"])).stdout
    const xml = await post("application/xml")
    expect(xml.status).toBe(200)
    expect(xml.headers.get("content-type")).toContain("application/xml")
    const xmlText = await xml.text()
    expect(xmlShape(xmlText)).toEqual(xmlShape(localXml))
    expect(xmlText).toContain('<params qualityWidth="320" qualityHeight="240" />')
    const csv = await post("text/csv")
    expect(csv.headers.get("content-type")).toContain("text/csv")
    const csvRows = (await csv.text()).trimEnd().split("\n")
    const localCsv = (await svc(["score", ...pairArgs(), "--csv", "-q"])).stdout.trimEnd().split("\n")
    expect(csvRows).toEqual(localCsv)
    const json = await post(undefined)
    expect(json.headers.get("content-type")).toContain("application/json")
    const response = (await json.json()) as Record<string, unknown>
    expect(Object.keys(response)).toEqual(expect.arrayContaining(["score", "features", "provenance"]))
    expect(response["frames"]).toEqual([])
    const refused = await fetch(`${server.http}/v1/score`, {
      method: "POST",
      body: "{",
      headers: { accept: "text/csv" }
    })
    expect(refused.status).toBe(400)
    expect(refused.headers.get("content-type")).toContain("application/json")
  })

  it("the API description and /apidocs carry no internal document names", async () => {
    const spec = await (await fetch(`${server.http}/apidocs/spec.json`)).text()
    const page = await (await fetch(`${server.http}/apidocs`)).text()
    expect(spec).not.toMatch(/seed/i)
    expect(page).not.toMatch(/seed/i)
  })
})

describe("jobs on a controller and a node", () => {
  let controller: RunningService
  let node: RunningService | undefined
  const store = join(scratch, "jobs.sqlite")
  let env: Record<string, string>
  beforeAll(async () => {
    controller = await startService("svc-controller", {
      env: { SVC_AUTH_DISABLED: "true", SVC_STORE_PATH: store, SVC_SCORING_ROOTS: fixturesDir },
      listeners: ["http", "grpc"]
    })
    env = { SVC_CONTROLLER_ADDR: controller.grpc ?? "" }
  })
  afterAll(async () => {
    await node?.stop()
    await controller.stop()
  })

  it("submit, get, list, cancel and wait on a job no node has taken", async () => {
    const submitted = await svc(["jobs", "submit", ...pairArgs()], env)
    expect(submitted.stderr).toBe("")
    expect(submitted.code).toBe(0)
    const id = submitted.stdout.trim()
    expect(id).toMatch(/^[0-9a-f-]{36}$/)
    const got = await svc(["jobs", "get", id], env)
    expect(JSON.parse(got.stdout)).toMatchObject({ id, state: "JOB_STATE_PENDING", tenant_id: "dev" })
    const cancelled = await svc(["jobs", "cancel", id, "--controller", controller.grpc ?? ""])
    expect(cancelled.code).toBe(0)
    expect(cancelled.stdout).toBe(`${id} cancelled\n`)
    const listed = await svc(["jobs", "list", "--state", "cancelled"], env)
    expect(listed.stdout).toMatch(new RegExp(`^${id} {2}cancelled`, "m"))
    const waited = await svc(["jobs", "wait", id], env)
    expect(waited.code).toBe(1)
    expect(waited.stderr).toBe(`svc: job ${id} cancelled\n`)
  })

  it("a node scores a submitted job; wait writes its result like svc score", async () => {
    node = await startService("svc-node", {
      env: { SVC_CONTROLLER_ADDR: controller.grpc ?? "", SVC_NODE_POLL_INTERVAL_MS: "100", SVC_NODE_NAME: "node-1" }
    })
    const id = (await svc(["jobs", "submit", ...pairArgs(), "--feature", "psnr"], env)).stdout.trim()
    const output = join(scratch, "job.json")
    const waited = await svc(
      ["jobs", "wait", id, "--timeout", "120", "-o", output, "--html", join(scratch, "job.html")],
      env
    )
    expect(waited.stderr).toMatch(/^VMAF score: [\d.]+ {2}\(30 frames, model vmaf_v0\.6\.1\) -> .*job\.json\n$/)
    expect(waited.code).toBe(0)
    const report = JSON.parse(readFileSync(output, "utf8"))
    expect(report.frames).toHaveLength(30)
    expect(Math.abs(report.pooled_metrics.vmaf.mean - v01Vmaf)).toBeLessThanOrEqual(goldenTolerance)
    expect(
      Math.abs(report.pooled_metrics.psnr_y.mean - (v01Golden.pooled_metrics["psnr_y"]?.mean ?? 0))
    ).toBeLessThanOrEqual(goldenTolerance)
    expect(readFileSync(join(scratch, "job.html"), "utf8")).toContain('<svg id="chart"')
    const listed = await svc(["jobs", "list", "--json"], env)
    expect(JSON.parse(listed.stdout).map((job: { id: string }) => job.id)).toContain(id)
  })

  it("wait shows its progress line on a terminal", async () => {
    const id = (await svc(["jobs", "submit", ...pairArgs(v06)], env)).stdout.trim()
    const shown = await underTerminal([requireBuilt("svc"), "jobs", "wait", id, "-o", join(scratch, "waited.csv")], env)
    expect(shown.code).toBe(0)
    expect(shown.stdout).toContain(`job ${id.slice(0, 8)} `)
    expect(readFileSync(join(scratch, "waited.csv"), "utf8").trimEnd().split("\n")).toHaveLength(21)
  })

  it("the controller's POST /v1/score negotiates the layouts too", async () => {
    const response = await fetch(`${controller.http}/v1/score`, {
      method: "POST",
      headers: { accept: "text/csv" },
      body: JSON.stringify({
        reference: v06.reference,
        distorted: v06.distorted,
        options: { width: 320, height: 240, frame_cnt: 2 }
      })
    })
    expect(response.status).toBe(200)
    const rows = (await response.text()).trimEnd().split("\n")
    expect(rows[0]).toMatch(/^Frame,integer_adm2,.*,vmaf,$/)
    expect(rows).toHaveLength(3)
  })
})
