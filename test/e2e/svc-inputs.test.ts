/**
 * `svc` end to end on the compiled executables, with inputs as users have them: the committed
 * H.264 pair (test/e2e/media, golden values of the reference tool on its decoded frames) and
 * files ffmpeg makes from it here (a remuxed .mkv, decoded .y4m, a half-size rendition). The
 * local CLI goes through the server's input pipeline, so every form scores as the server does.
 * Also the command line's traps (-h, model paths), relative paths with --server and jobs, the
 * svc-server's input roots, `svc models` both ways, `jobs list` and port conflicts.
 */
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ExtraFeature, goldenTolerance } from "../../modules/scorer/index.ts"
import { requireBuilt, runCommand, type RunningService, startService } from "../../local/executables.ts"
import { ffmpegRun } from "../support/media.ts"
import { svc } from "./svc-support.ts"

const media = join(import.meta.dirname, "media")
const golden = JSON.parse(readFileSync(join(media, "pair.libvmaf.json"), "utf8")) as {
  frames: ReadonlyArray<{ frameNum: number; metrics: Record<string, number> }>
  pooled_metrics: Record<string, Record<string, number>>
}

interface JsonReport {
  frames: ReadonlyArray<{ frameNum: number; metrics: Record<string, number> }>
  pooled_metrics: Record<string, Record<string, number>>
  provenance: {
    model: string
    scaling?: string
    reference_input?: { codec: string; width: number; height: number }
    distorted_input?: { codec: string; width: number; height: number }
  }
}

// Everything this file writes: the media copies (with relative paths below it) and a server's directory.
const scratch = mkdtempSync(join(tmpdir(), "svc-inputs-"))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))
const clips = join(scratch, "clips")
const clip = (name: string) => join(clips, name)

beforeAll(() => {
  mkdirSync(clips)
  copyFileSync(join(media, "ref.mp4"), clip("ref.mp4"))
  copyFileSync(join(media, "dis.mp4"), clip("dis.mp4"))
  // Remuxed (no re-encoding: the same frames), decoded to Y4M (decoding is exact), and a
  // half-size rendition (its encode differs per host; it is compared with the server's score).
  ffmpegRun(["-i", clip("ref.mp4"), "-c", "copy", "-y", clip("ref.mkv")])
  ffmpegRun(["-i", clip("dis.mp4"), "-c", "copy", "-y", clip("dis.mkv")])
  ffmpegRun(["-i", clip("ref.mp4"), "-pix_fmt", "yuv420p", "-y", clip("ref.y4m")])
  ffmpegRun(["-i", clip("dis.mp4"), "-vf", "scale=160:120", "-c:v", "libx264", "-crf", "30", "-y", clip("half.mp4")])
  writeFileSync(clip("notes.txt"), "not a video\n".repeat(100))
})

const scoreJson = async (args: ReadonlyArray<string>, options: { cwd?: string } = {}) => {
  const result = await runCommand([requireBuilt("svc"), "score", ...args, "--json", "-q"], options)
  expect(result.stderr).toBe("")
  expect(result.code).toBe(0)
  return JSON.parse(result.stdout) as JsonReport
}

const expectGolden = (report: JsonReport) => {
  expect(report.frames).toHaveLength(golden.frames.length)
  report.frames.forEach((frame, index) => {
    const want = golden.frames[index]?.metrics["vmaf"] ?? Number.NaN
    expect(Math.abs((frame.metrics["vmaf"] ?? Number.NaN) - want), `frame ${index}`).toBeLessThanOrEqual(
      goldenTolerance
    )
  })
  for (const pool of ["min", "max", "mean", "harmonic_mean"])
    expect(
      Math.abs((report.pooled_metrics["vmaf"]?.[pool] ?? Number.NaN) - (golden.pooled_metrics["vmaf"]?.[pool] ?? 0))
    ).toBeLessThanOrEqual(goldenTolerance)
}

describe("svc score with encoded inputs, locally", () => {
  it("ref.mp4 dis.mp4: per-frame VMAF of the reference tool on the decoded frames", async () => {
    const report = await scoreJson([clip("ref.mp4"), clip("dis.mp4")])
    expectGolden(report)
    expect(report.provenance.reference_input).toMatchObject({ codec: "h264", width: 320, height: 240 })
    // The reference layout's quality size is the decoded size.
    const xml = await svc(["score", clip("ref.mp4"), clip("dis.mp4"), "--xml", "-q"])
    expect(xml.stdout).toContain('<params qualityWidth="320" qualityHeight="240" />')
  })

  it("the same frames as .mkv, as a .y4m reference, or mixed, give the same scores", async () => {
    const mp4 = await scoreJson([clip("ref.mp4"), clip("dis.mp4")])
    for (const [reference, distorted] of [
      ["ref.mkv", "dis.mkv"],
      ["ref.y4m", "dis.mp4"],
      ["ref.y4m", "dis.mkv"]
    ] as const) {
      const report = await scoreJson([clip(reference), clip(distorted)])
      expect(report.frames, `${reference} ${distorted}`).toEqual(mp4.frames)
    }
  })

  it("a file that is no video says so (exit 1), with or without a video beside it", async () => {
    for (const pair of [
      [clip("notes.txt"), clip("notes.txt")],
      [clip("ref.mp4"), clip("notes.txt")]
    ]) {
      const result = await svc(["score", ...pair, "-q"])
      expect(result.code).toBe(1)
      expect(result.stdout).toBe("")
      expect(result.stderr).toBe(
        `svc: input "${clip("notes.txt")}" is not a video: neither Y4M nor a format ffmpeg recognises (raw YUV needs --width and --height)\n`
      )
    }
  })

  it("SVC_MAX_SCORE_MEMORY applies to the local score", async () => {
    const result = await svc(["score", clip("ref.mp4"), clip("dis.mp4"), "-q"], { SVC_MAX_SCORE_MEMORY: "1Mi" })
    expect(result.code).toBe(1)
    expect(result.stderr).toMatch(
      /^svc: this score needs about [\d.]+ MiB of memory, more than the whole budget of 1\.0 MiB \(SVC_MAX_SCORE_MEMORY\)/
    )
    const bad = await svc(["score", clip("ref.mp4"), clip("dis.mp4"), "-q"], { SVC_MAX_SCORE_MEMORY: "lots" })
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain("SVC_MAX_SCORE_MEMORY")
  })

  it("-o FILE writes the file and still prints the summary line on stderr (not with -q)", async () => {
    const file = join(scratch, "out.json")
    const loud = await svc(["score", clip("ref.mp4"), clip("dis.mp4"), "-o", file])
    expect(loud.code).toBe(0)
    expect(loud.stdout).toBe("")
    const mean = golden.pooled_metrics["vmaf"]?.["mean"] ?? Number.NaN
    const summary = /^VMAF score: ([\d.]+) {2}\(12 frames, model vmaf_v0\.6\.1\) -> (.*)\n$/.exec(loud.stderr)
    expect(summary?.[2]).toBe(file)
    expect(Math.abs(Number(summary?.[1]) - mean)).toBeLessThanOrEqual(goldenTolerance)
    expectGolden(JSON.parse(readFileSync(file, "utf8")))
    const quiet = await svc(["score", clip("ref.mp4"), clip("dis.mp4"), "-o", file, "-q"])
    expect([quiet.code, quiet.stdout, quiet.stderr]).toEqual([0, "", ""])
  })
})

describe("the command line's traps", () => {
  it("-h with other arguments is an error naming --height (exit 2); -h or --help alone is help (exit 0)", async () => {
    const trap = await svc(["score", clip("ref.mp4"), clip("dis.mp4"), "-w", "640", "-h", "360"])
    expect(trap.code).toBe(2)
    expect(trap.stdout).toBe("")
    expect(trap.stderr).toContain("--height")
    for (const help of [["score", "-h"], ["score", "--help"], ["-h"], ["jobs", "submit", "-h"]]) {
      const result = await svc(help)
      expect(result.code, help.join(" ")).toBe(0)
      expect(result.stdout).toContain(`$ svc ${help.slice(0, -1).join(" ")}`.trimEnd())
    }
    // A built-in that would end a score with 0 and no score is refused after a command.
    for (const builtIn of ["--version", "--wizard"]) {
      const result = await svc(["score", clip("ref.mp4"), clip("dis.mp4"), builtIn])
      expect([result.code, result.stdout]).toEqual([2, ""])
    }
  })

  it("help comes from the request's lists: every feature, the models, what REF accepts; no filler", async () => {
    const help = (await svc(["score", "--help"])).stdout
    expect(help).toMatch(/^\$ svc score /m)
    expect(help).not.toMatch(/^\$ score/m)
    expect(help).not.toContain("A user-defined piece of text.")
    for (const feature of ExtraFeature.literals) expect(help).toContain(feature)
    expect(help).toContain("vmaf_v1.0.16_3d0h")
    expect(help).toMatch(/<REF>\n\n {2}reference \(pristine\) video, recognised by its bytes: .*\.mp4.*\.y4m.*raw YUV/)
  })

  it("a model file or SVC_MODEL_DIR that does not exist is an error naming it; an unknown model lists the names", async () => {
    const pair = [clip("ref.mp4"), clip("dis.mp4"), "-q"]
    for (const model of ["/nope/vmaf_v0.6.1.json", "path=/nope/vmaf_v0.6.1.json"]) {
      const result = await svc(["score", ...pair, "-m", model])
      expect([result.code, result.stderr]).toEqual([1, "svc: model file /nope/vmaf_v0.6.1.json does not exist\n"])
    }
    const noDirectory = await svc(["score", ...pair], { SVC_MODEL_DIR: "/nonexistent" })
    expect([noDirectory.code, noDirectory.stderr]).toEqual([1, "svc: SVC_MODEL_DIR /nonexistent does not exist\n"])
    const models = await svc(["models"], { SVC_MODEL_DIR: "/nonexistent" })
    expect([models.code, models.stderr]).toEqual([1, "svc: SVC_MODEL_DIR /nonexistent does not exist\n"])
    const unknown = await svc(["score", ...pair, "-m", "vmaf_v9"])
    expect(unknown.code).toBe(1)
    expect(unknown.stderr).toMatch(/^svc: unknown model "vmaf_v9"; the models are: .*vmaf_v0\.6\.1, vmaf_v0\.6\.1neg, /)
  })
})

describe("on svc-server", () => {
  let server: RunningService
  const serverDir = join(scratch, "server-home")
  beforeAll(async () => {
    mkdirSync(serverDir)
    // Started in another directory; its roots cover the clips.
    server = await startService("svc-server", { cwd: serverDir, env: { SVC_INPUT_ROOTS: clips } })
  })
  afterAll(() => server?.stop())

  it("relative inputs are resolved by the CLI, so the server scores the files meant", async () => {
    const remote = await scoreJson(["clips/ref.mp4", "clips/dis.mp4", "--server", server.http], { cwd: scratch })
    expectGolden(remote)
  })

  it("a scaled rendition and a .y4m pair score as locally", async () => {
    for (const pair of [
      ["clips/ref.mp4", "clips/half.mp4"],
      ["clips/ref.y4m", "clips/dis.mkv"]
    ]) {
      const local = await scoreJson(pair, { cwd: scratch })
      const remote = await scoreJson([...pair, "--server", server.http], { cwd: scratch })
      expect(remote.frames).toEqual(local.frames)
      expect(remote.pooled_metrics).toEqual(local.pooled_metrics)
    }
    const scaled = await scoreJson([clip("ref.mp4"), clip("half.mp4")])
    expect(scaled.provenance.scaling).toBe("bicubic 160x120 -> 320x240")
  })

  it("a roots refusal of a path typed relative gets the CLI's hint; the server's message stays its own", async () => {
    writeFileSync(join(scratch, "outside.mp4"), readFileSync(clip("dis.mp4")))
    const result = await svc(["score", "clips/ref.mp4", "outside.mp4", "--server", server.http], {}, scratch)
    expect(result.code).toBe(1)
    expect(result.stderr).toBe(
      `svc: ${server.http}/v1/score: 403: scoring input "${join(scratch, "outside.mp4")}" is outside the tenant's scoring roots (svc sent "outside.mp4" as "${join(scratch, "outside.mp4")}"; give an absolute path inside the roots)\n`
    )
  })

  it("an unknown model on the server: its refusal, then the server's model names", async () => {
    const result = await svc(["score", clip("ref.mp4"), clip("dis.mp4"), "-m", "vmaf_v9", "--server", server.http])
    expect(result.code).toBe(1)
    expect(result.stderr).toMatch(
      /^svc: http:\/\/.*\/v1\/score: 400: unknown model "vmaf_v9"; the server's models are: .*vmaf_v0\.6\.1, /
    )
  })

  it("svc models prints the same table locally and with --server, and the same JSON", async () => {
    const local = await svc(["models"])
    const remote = await svc(["models", "--server", server.http])
    expect(local.code).toBe(0)
    expect(remote.stdout).toBe(local.stdout)
    expect(local.stdout.split("\n")[0]).toMatch(/^MODEL\s+SOURCE\s+SHA-256$/)
    expect(local.stdout).toMatch(/^vmaf_v0\.6\.1\s+builtin\s+[0-9a-f]{64}$/m)
    const localJson = JSON.parse((await svc(["models", "--json"])).stdout)
    const remoteJson = JSON.parse((await svc(["models", "--json", "--server", server.http])).stdout)
    expect(remoteJson).toEqual(localJson)
    expect(localJson.models.map((model: { name: string }) => model.name)).toContain("vmaf_v0.6.1")
  })
})

describe("svc-server's input roots", () => {
  it("unset: confined to its working directory (logged), where relative inputs are read", async () => {
    const home = join(scratch, "confined")
    mkdirSync(home)
    copyFileSync(clip("ref.mp4"), join(home, "ref.mp4"))
    copyFileSync(clip("dis.mp4"), join(home, "dis.mp4"))
    const server = await startService("svc-server", { cwd: home, env: { SVC_INPUT_ROOTS: "" } })
    try {
      expect(
        server.logs.find((line) => line.message.startsWith("inputs confined to the working directory"))?.annotations
      ).toEqual({
        roots: [home],
        source: "working directory"
      })
      const post = (body: object) =>
        fetch(`${server.http}/v1/score`, { method: "POST", body: JSON.stringify(body) }).then(async (response) => ({
          status: response.status,
          body: (await response.json()) as { score?: number; error?: string }
        }))
      const relative = await post({ reference: "ref.mp4", distorted: "dis.mp4" })
      expect(relative.status).toBe(200)
      expect(Math.abs((relative.body.score ?? 0) - (golden.pooled_metrics["vmaf"]?.["mean"] ?? 0))).toBeLessThanOrEqual(
        goldenTolerance
      )
      const outside = await post({ reference: "ref.mp4", distorted: clip("dis.mp4") })
      expect(outside).toEqual({
        status: 403,
        body: { error: `scoring input "${clip("dis.mp4")}" is outside the tenant's scoring roots` }
      })
    } finally {
      await server.stop()
    }
  })
})

describe("jobs and start-up", () => {
  it("jobs submit resolves relative paths; jobs list has a header and says why a job failed", async () => {
    const controller = await startService("svc-controller", {
      env: { SVC_AUTH_DISABLED: "true", SVC_STORE_PATH: join(scratch, "jobs.sqlite"), SVC_SCORING_ROOTS: clips },
      listeners: ["http", "grpc"]
    })
    const node = await startService("svc-node", {
      env: { SVC_CONTROLLER_ADDR: controller.grpc ?? "", SVC_NODE_POLL_INTERVAL_MS: "100" }
    })
    try {
      const env = { SVC_CONTROLLER_ADDR: controller.grpc ?? "" }
      const submit = (args: ReadonlyArray<string>) => svc(["jobs", "submit", ...args], env, scratch)
      const good = await submit(["clips/ref.mp4", "clips/dis.mp4"])
      expect([good.code, good.stderr]).toEqual([0, ""])
      const bad = await submit(["clips/ref.mp4", "clips/notes.txt"])
      const waited = await svc(["jobs", "wait", good.stdout.trim(), "--timeout", "120", "--json", "-q"], env)
      expect(waited.code).toBe(0)
      expectGolden(JSON.parse(waited.stdout))
      const failed = await svc(["jobs", "wait", bad.stdout.trim(), "--timeout", "120", "-q"], env)
      expect(failed.code).toBe(1)
      const listed = await svc(["jobs", "list"], env)
      const [header, ...rows] = listed.stdout.trimEnd().split("\n")
      expect(header).toMatch(/^JOB\s+STATE\s+CREATED\s+INPUT\s+RESULT$/)
      expect(rows.find((row) => row.startsWith(bad.stdout.trim()))).toMatch(
        new RegExp(`failed .* ${clip("notes.txt")}  error: .*is not a video`)
      )
      expect(rows.find((row) => row.startsWith(good.stdout.trim()))).toMatch(/finished .* \d+\.\d{6}$/)
      // Outside the roots, typed relative: the controller's text, then the CLI's hint.
      const outside = await svc(["jobs", "submit", "ref.mp4", "dis.mp4"], env, scratch)
      expect(outside.code).toBe(1)
      expect(outside.stderr).toContain(
        `is outside the tenant's scoring roots (svc sent "ref.mp4" as "${join(scratch, "ref.mp4")}"; give an absolute path inside the roots)`
      )
    } finally {
      await node.stop()
      await controller.stop()
    }
  }, 180_000)

  it("a port in use: one JSON log line naming the address, exit 1", async () => {
    const first = await startService("svc-server", { listeners: ["http", "grpc"] })
    try {
      const http = first.http.replace(/^http:\/\//, "")
      for (const env of [
        { SVC_HTTP_ADDR: http, SVC_GRPC_ADDR: "127.0.0.1:0" },
        { SVC_HTTP_ADDR: "127.0.0.1:0", SVC_GRPC_ADDR: first.grpc ?? "" }
      ]) {
        const result = await runCommand([requireBuilt("svc-server")], { env: { ...env, SVC_LOG_LEVEL: "error" } })
        expect(result.code).toBe(1)
        const lines = result.stderr.trimEnd().split("\n")
        expect(lines).toHaveLength(1)
        const line = JSON.parse(lines[0] ?? "") as { message: string; logLevel: string }
        const [variable, address] = Object.entries(env).find(([, value]) => !value.endsWith(":0")) ?? []
        expect(line.logLevel).toBe("ERROR")
        expect(line.message).toContain(`${variable}: cannot listen on ${address}: address already in use`)
      }
    } finally {
      await first.stop()
    }
  })
})
