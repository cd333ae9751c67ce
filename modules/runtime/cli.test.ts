import { describe, expect, it } from "vitest"
import { versionLine } from "./build-info.ts"
import { parseCommandLine } from "./cli.ts"

describe("command line", () => {
  const service = { executable: "svc-server" }
  const tool = { executable: "svc-tester-report", commands: ["check", "run"] }

  it("runs a service with no arguments", () => {
    expect(parseCommandLine(service, [])).toEqual({ kind: "run", command: undefined, args: [] })
  })

  it("knows --version and nothing else", () => {
    expect(parseCommandLine(service, ["--version"])).toEqual({ kind: "version" })
    for (const argv of [["--help"], ["-h"], ["--version", "x"], ["check"], ["--port=1"]]) {
      const parsed = parseCommandLine(service, argv)
      expect(parsed.kind).toBe("usage-error")
    }
  })

  it("accepts declared sub-commands with their arguments", () => {
    expect(parseCommandLine(tool, ["check", "a.json", "b.json"])).toEqual({
      kind: "run",
      command: "check",
      args: ["a.json", "b.json"]
    })
    const refused = parseCommandLine(tool, ["lint"])
    expect(refused.kind === "usage-error" && refused.message).toContain("commands: check, run")
  })

  it("prints svc-<name> <semver> (<commit>)", () => {
    expect(versionLine("svc-node")).toMatch(/^svc-node \d+\.\d+\.\d+ \(\S+\)$/)
  })
})
