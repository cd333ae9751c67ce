/** The compiled executables' common contract: --version, usage errors, clean start and stop. */
import { copyFileSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import packageJson from "../../package.json" with { type: "json" }
import { requireBuilt, runCommand, startService } from "../../local/executables.ts"

const executables = [
  "svc-server",
  "svc-controller",
  "svc-node",
  "svc-tester-report",
  "svc-mcp",
  "svc-operator"
] as const
const services = ["svc-server", "svc-controller", "svc-node", "svc-mcp"] as const

const emptyDir = mkdtempSync(join(tmpdir(), "svc-exe-"))
/** What every service needs besides its defaults here: no auth provider, a writable job store,
 * svc-mcp on HTTP (its stdio mode has no listener). */
const storeDir = mkdtempSync(join(tmpdir(), "svc-store-"))
const serviceEnv = {
  SVC_AUTH_DISABLED: "true",
  SVC_STORE_PATH: join(storeDir, "jobs.sqlite"),
  SVC_MCP_TRANSPORT: "http"
}
afterAll(() => {
  rmSync(emptyDir, { recursive: true, force: true })
  rmSync(storeDir, { recursive: true, force: true })
})

describe.each(executables)("%s", (name) => {
  it("answers --version with one line from an empty directory, with nothing beside it", async () => {
    const alone = join(emptyDir, name)
    copyFileSync(requireBuilt(name), alone)
    const result = await runCommand([alone, "--version"], { cwd: emptyDir })
    expect(result.code).toBe(0)
    expect(result.stdout).toMatch(
      new RegExp(`^${name} ${packageJson.version.replace(/\./g, "\\.")} \\([0-9a-f]{7,40}|dev|unknown\\)\\n$`)
    )
    rmSync(alone)
  })

  it.each(["--help", "--foo", "-v"])("refuses %s with a usage error and exit 2", async (flag) => {
    const result = await runCommand([requireBuilt(name), flag])
    expect(result.code).toBe(2)
    expect(result.stderr).toContain(`unexpected argument '${flag}'`)
    expect(result.stdout).toBe("")
  })

  it("refuses --version followed by another argument", async () => {
    const result = await runCommand([requireBuilt(name), "--version", "extra"])
    expect(result.code).toBe(2)
  })
})

describe("svc (the client, which takes flags)", () => {
  it("answers --version with one line from an empty directory, with nothing beside it", async () => {
    const alone = join(emptyDir, "svc")
    copyFileSync(requireBuilt("svc"), alone)
    const result = await runCommand([alone, "--version"], { cwd: emptyDir })
    expect(result.code).toBe(0)
    expect(result.stdout).toMatch(
      new RegExp(`^svc ${packageJson.version.replace(/\./g, "\\.")} \\([0-9a-f]{7,40}|dev|unknown\\)\\n$`)
    )
    rmSync(alone)
  })

  it("answers --help with its commands, and refuses an unknown one with exit 2", async () => {
    const help = await runCommand([requireBuilt("svc"), "--help"])
    expect(help.code).toBe(0)
    expect(help.stdout).toMatch(/score/)
    const unknown = await runCommand([requireBuilt("svc"), "frobnicate"])
    expect(unknown.code).toBe(2)
    expect(unknown.stdout).toBe("")
  })
})

describe.each(services)("%s as a service", (name) => {
  it.each(["SIGTERM", "SIGINT"] as const)("serves /v1/health and stops cleanly on %s", async (signal) => {
    const service = await startService(name, { env: serviceEnv })
    const response = await fetch(`${service.http}/v1/health`)
    expect(response.status).toBe(200)
    expect(response.headers.get("content-type")).toContain("application/json")
    expect(await response.json()).toEqual({ status: "ok" })
    expect(await service.stop(signal)).toBe(0)
  })

  it("fails to start, naming the variable and the rule, on a bad listen address", async () => {
    const result = await runCommand([requireBuilt(name)], { env: { ...serviceEnv, SVC_HTTP_ADDR: "localhost:http" } })
    expect(result.code).toBe(1)
    expect(result.stderr).toContain("SVC_HTTP_ADDR")
    expect(result.stderr).toContain("must be host:port")
  })

  it("fails to start on an unknown log level, naming SVC_LOG_LEVEL", async () => {
    const result = await runCommand([requireBuilt(name)], { env: { ...serviceEnv, SVC_LOG_LEVEL: "loud" } })
    expect(result.code).toBe(1)
    expect(result.stderr).toContain("SVC_LOG_LEVEL")
  })

  it("logs structured JSON lines on stderr", async () => {
    const service = await startService(name, { env: serviceEnv })
    await service.stop()
    const listening = service.logs.find((line) => line.message === "listening")
    expect(listening?.logLevel).toBe("INFO")
    expect(listening?.annotations.service).toBe(name)
  })
})
