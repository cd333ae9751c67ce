import { spawnSync } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { reportDigest } from "../../modules/report/canonical.ts"
import { checkReport } from "../../modules/report/check.ts"
import { type CliOutput, ExitCode, testerReportCli } from "../../modules/report/cli.ts"
import { invalidCases, type InvalidCase, type SampleVersion } from "./invalid-cases.ts"
import { applyEdit } from "./json-pointer-edit.ts"
import { acceptedByAjv, acceptedByEffectSchema, loadSample, samplePath } from "./validators.ts"

const runCli = (argv: ReadonlyArray<string>, output: CliOutput) => Effect.runPromise(testerReportCli(argv, output))

const capture = () => {
  const out: Array<string> = []
  const err: Array<string> = []
  const output: CliOutput = { out: (line) => out.push(line), err: (line) => err.push(line) }
  return { out, err, output }
}

const isRecord = (value: unknown): value is { [field: string]: unknown } =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const invalidDocument = (invalid: InvalidCase): unknown => {
  const document = loadSample(invalid.sample)
  for (const edit of invalid.edits) applyEdit(document, edit)
  if (invalid.recomputeDigest !== false && isRecord(document)) document.report_sha256 = reportDigest(document)
  return document
}

const scratch = mkdtempSync(join(tmpdir(), "tester-report-"))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))
const writeScratch = (name: string, text: string): string => {
  const file = join(scratch, name)
  writeFileSync(file, text)
  return file
}

const versions: ReadonlyArray<SampleVersion> = ["v1", "v2", "v3"]

describe("valid sample reports", () => {
  it.each(versions)("%s is accepted by the checker, Ajv and the Effect Schema", async (version) => {
    const document = loadSample(version)
    expect(checkReport(document)).toEqual([])
    expect(acceptedByAjv(document)).toBe(true)
    expect(acceptedByEffectSchema(document)).toBe(true)
    const { out, err, output } = capture()
    expect(await runCli(["check", samplePath(version)], output)).toBe(ExitCode.valid)
    expect(out).toEqual([`${samplePath(version)}: valid`])
    expect(err).toEqual([])
  })

  it("a note edited after the run keeps the digest valid", () => {
    const document = loadSample("v3")
    applyEdit(document, { set: "/note", value: "annotated by a reviewer" })
    expect(checkReport(document)).toEqual([])
  })
})

describe("invalid sample reports, one rule broken each", () => {
  it("there are at least 40, with distinct names", () => {
    expect(invalidCases.length).toBeGreaterThanOrEqual(40)
    expect(new Set(invalidCases.map((invalid) => invalid.name)).size).toBe(invalidCases.length)
  })

  it.each(
    invalidCases.map((invalid) => [invalid.name, invalid] as const)
  )("%s: refused at the expected path", async (_name, invalid) => {
    const document = invalidDocument(invalid)
    const file = writeScratch(`${invalid.name.replaceAll(" ", "-")}.json`, JSON.stringify(document, null, 2))
    const { out, err, output } = capture()
    expect(await runCli(["check", file], output)).toBe(ExitCode.invalid)
    expect(err).toEqual([])
    expect(out).toHaveLength(1)
    const prefix = `${file}: ${invalid.path}: `
    expect(out[0]?.startsWith(prefix)).toBe(true)
    expect(out[0]?.slice(prefix.length)).toMatch(
      typeof invalid.rule === "string" ? new RegExp(`^${RegExp.escape(invalid.rule)}$`) : invalid.rule
    )
    // The schema cases break a JSON Schema rule; the semantic ones only the checker's own rules.
    const schemaValid = invalid.kind === "semantic"
    expect(acceptedByAjv(document)).toBe(schemaValid)
    expect(acceptedByEffectSchema(document)).toBe(schemaValid)
  })
})

describe("check exit codes", () => {
  const invalidFile = () => writeScratch("invalid.json", JSON.stringify({ schema_version: "3" }))

  it("exits 2 on an unreadable file and names it on stderr", async () => {
    const { out, err, output } = capture()
    const missing = join(scratch, "missing.json")
    expect(await runCli(["check", missing], output)).toBe(ExitCode.unusable)
    expect(out).toEqual([])
    expect(err).toEqual([expect.stringMatching(new RegExp(`^${RegExp.escape(missing)}: cannot read: `))])
  })

  it("exits 2 on a file that is not JSON", async () => {
    const { err, output } = capture()
    const file = writeScratch("broken.json", '{ "schema_version": ')
    expect(await runCli(["check", file], output)).toBe(ExitCode.unusable)
    expect(err).toEqual([expect.stringMatching(new RegExp(`^${RegExp.escape(file)}: not JSON: `))])
  })

  it("exits 1 when one of several files is invalid and reports every file", async () => {
    const { out, output } = capture()
    const file = invalidFile()
    expect(await runCli(["check", samplePath("v1"), file], output)).toBe(ExitCode.invalid)
    expect(out[0]).toBe(`${samplePath("v1")}: valid`)
    expect(out.slice(1).every((line) => line.startsWith(`${file}: /`))).toBe(true)
  })

  it("exits 2 when one file is unusable even if another is invalid", async () => {
    const { output } = capture()
    expect(await runCli(["check", invalidFile(), join(scratch, "absent.json")], output)).toBe(ExitCode.unusable)
  })

  it("reports a document that is not an object at (document)", async () => {
    const { out, output } = capture()
    const file = writeScratch("array.json", "[]")
    expect(await runCli(["check", file], output)).toBe(ExitCode.invalid)
    expect(out).toEqual([`${file}: (document): must be object`])
  })

  it("exits 2 with usage when no file is given", async () => {
    const { err, output } = capture()
    expect(await runCli(["check"], output)).toBe(ExitCode.unusable)
    expect(err.join("\n")).toContain("usage: svc-tester-report check FILE...")
  })
})

describe("the svc-tester-report executable, from source", () => {
  const repository = new URL("../../", import.meta.url).pathname
  const runExecutable = (args: ReadonlyArray<string>) =>
    spawnSync(join(repository, "node_modules/.bin/bun"), ["apps/svc-tester-report/main.ts", ...args], {
      cwd: repository,
      encoding: "utf8"
    })

  it("accepts the valid samples", () => {
    const result = runExecutable(["check", ...versions.map(samplePath)])
    expect(result.status).toBe(ExitCode.valid)
    expect(result.stdout.trim().split("\n")).toEqual(versions.map((version) => `${samplePath(version)}: valid`))
  })

  it("refuses every invalid sample with its expected path, in one run", () => {
    const files = invalidCases.map((invalid, index) =>
      writeScratch(`executable-${index}.json`, JSON.stringify(invalidDocument(invalid)))
    )
    const result = runExecutable(["check", ...files])
    expect(result.status).toBe(ExitCode.invalid)
    const lines = result.stdout.trim().split("\n")
    expect(lines).toHaveLength(invalidCases.length)
    invalidCases.forEach((invalid, index) => {
      expect(lines[index]?.startsWith(`${files[index]}: ${invalid.path}: `)).toBe(true)
    })
  })

  it("exits 2 on non-JSON input", () => {
    const result = runExecutable(["check", writeScratch("executable-broken.json", "not json")])
    expect(result.status).toBe(ExitCode.unusable)
    expect(result.stderr).toContain("not JSON")
  })
})
