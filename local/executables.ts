/**
 * Starts the compiled executables in dist/ for end-to-end tests: real processes, loopback
 * ports chosen by the executables themselves (port 0), addresses read from their JSON logs.
 */
import { type Subprocess, spawn } from "bun"
import { existsSync } from "node:fs"
import { join } from "node:path"

export const repoRoot = join(import.meta.dirname, "..")
export const distPath = (name: string): string => join(repoRoot, "dist", name)
/** A model directory the test run was given (SVC_MODEL_DIR); unset, the built-in models serve. */
export const modelDirEnv: Readonly<Record<string, string>> = process.env.SVC_MODEL_DIR
  ? { SVC_MODEL_DIR: process.env.SVC_MODEL_DIR }
  : {}
/** The built-in models' source directory (data files beside the code). */
export const builtinModelDir = join(repoRoot, "modules", "scorer", "models")
/** The golden fixture set in the repository; the raw pairs are restored by the build and the test set-up. */
export const fixturesDir = join(repoRoot, "test", "fixtures")

export const requireBuilt = (name: string): string => {
  const path = distPath(name)
  if (!existsSync(path)) throw new Error(`${path} is missing: run \`npm run build\` first (npm test does)`)
  return path
}

export interface LogLine {
  readonly message: string
  readonly logLevel: string
  readonly annotations: Readonly<Record<string, unknown>>
}

export interface RunningService {
  readonly process: Subprocess<"ignore", "pipe", "pipe">
  /** Base URL of the HTTP listener, e.g. "http://127.0.0.1:40123". */
  readonly http: string
  /** host:port of the gRPC listener, when the service has one. */
  readonly grpc: string | undefined
  readonly logs: ReadonlyArray<LogLine>
  /** Sends a signal and waits for the exit code. */
  readonly stop: (signal?: NodeJS.Signals) => Promise<number>
}

const parseLogLine = (line: string): LogLine | undefined => {
  try {
    const value: unknown = JSON.parse(line)
    if (typeof value === "object" && value !== null && "message" in value) return value as LogLine
  } catch {
    return undefined
  }
  return undefined
}

/** Reads stderr lines as they come, into `sink`; resolves when the stream ends. */
const collectLines = async (stream: ReadableStream<Uint8Array>, sink: Array<LogLine>, raw: Array<string>) => {
  const decoder = new TextDecoder()
  let pending = ""
  for await (const chunk of stream) {
    pending += decoder.decode(chunk, { stream: true })
    let newline = pending.indexOf("\n")
    while (newline >= 0) {
      const line = pending.slice(0, newline)
      pending = pending.slice(newline + 1)
      raw.push(line)
      const parsed = parseLogLine(line)
      if (parsed) sink.push(parsed)
      newline = pending.indexOf("\n")
    }
  }
}

export interface StartOptions {
  readonly env?: Readonly<Record<string, string>>
  /** Listener transports to wait for ("http", "grpc"). */
  readonly listeners?: ReadonlyArray<"http" | "grpc">
  readonly timeoutMs?: number
  readonly cwd?: string
}

export const startService = async (name: string, options: StartOptions = {}): Promise<RunningService> => {
  const listeners = options.listeners ?? ["http"]
  const child = spawn([requireBuilt(name)], {
    cwd: options.cwd ?? repoRoot,
    env: {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      TMPDIR: process.env.TMPDIR ?? "/tmp",
      SVC_HTTP_ADDR: "127.0.0.1:0",
      SVC_GRPC_ADDR: "127.0.0.1:0",
      // svc-server reads the tests' media wherever they are (temporary folders): every file,
      // explicitly. Tests of the roots set their own.
      SVC_INPUT_ROOTS: "/",
      ...modelDirEnv,
      SVC_LOG_LEVEL: "debug",
      ...options.env
    },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe"
  })
  const logs: Array<LogLine> = []
  const raw: Array<string> = []
  const done = collectLines(child.stderr, logs, raw)
  // Generous: a loaded machine only makes a start slower, and a passing start returns at once.
  const deadline = Date.now() + (options.timeoutMs ?? 120_000)
  const address = (transport: string): string | undefined => {
    const line = logs.find((log) => log.message === "listening" && log.annotations.transport === transport)
    return typeof line?.annotations.address === "string" ? line.annotations.address : undefined
  }
  while (listeners.some((transport) => address(transport) === undefined)) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill("SIGKILL")
      await done
      throw new Error(`${name} did not start (exit ${child.exitCode}):\n${raw.join("\n")}`)
    }
    await Bun.sleep(20)
  }
  return {
    process: child,
    http: address("http") ?? "",
    grpc: address("grpc")?.replace(/^grpc:\/\//, ""),
    logs,
    stop: async (signal = "SIGTERM") => {
      if (child.exitCode === null) child.kill(signal)
      const code = await child.exited
      await done
      return code
    }
  }
}

export interface CommandResult {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

/** Runs an executable to completion. */
export const runCommand = async (
  argv: ReadonlyArray<string>,
  options: { readonly env?: Readonly<Record<string, string>>; readonly cwd?: string } = {}
): Promise<CommandResult> => {
  const child = spawn([...argv], {
    cwd: options.cwd ?? repoRoot,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", TMPDIR: process.env.TMPDIR ?? "/tmp", ...options.env },
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
