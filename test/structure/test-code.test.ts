/**
 * Test code has one home (issue 33): shared test support under test/ (test/support/), a module's
 * own tests as `*.test.ts` beside its sources or in its `test/` folder. No production file
 * (modules/, apps/) imports test code, no test double or test helper lives among a module's
 * sources, and the benchmarks import no test helper: what both need to run the product locally
 * (start the executables, PostgreSQL, a JWKS issuer; write sample pairs and images) lives in local/.
 */
import { spawnSync } from "bun"
import { readFileSync } from "node:fs"
import { dirname, join, normalize } from "node:path"
import { describe, expect, it } from "vitest"
import { repoRoot } from "../../local/executables.ts"

/** A test file or a file of a test folder (test/ at the root or inside a module). */
const isTestCode = (path: string): boolean =>
  /\.test\.ts$/.test(path) || path.startsWith("test/") || /(^|\/)test\//.test(path)

/** A name that says test double or test helper: it belongs under test/, not among sources. */
const testHelperName =
  /(^|[/-])(double|doubles|fake|fakes|stub|stubs|mock|mocks|testing|test-support|test-utils)([/.-]|$)/

/** The relative imports of a TypeScript file (static, dynamic and `export … from`), as written. */
const relativeImports = (text: string): ReadonlyArray<string> =>
  [...text.matchAll(/(?:\bfrom\s+|\bimport\s*\(\s*|\bimport\s+)["'](\.{1,2}\/[^"']+)["']/g)].flatMap((match) =>
    match[1] === undefined ? [] : [match[1]]
  )

const typescriptFiles = (): ReadonlyArray<string> =>
  spawnSync(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard", "*.ts"], { cwd: repoRoot })
    .stdout.toString()
    .split("\0")
    .filter((file) => file !== "")

const readIfPresent = (file: string): string | undefined => {
  try {
    return readFileSync(join(repoRoot, file), "utf8")
  } catch {
    return undefined // listed by git but deleted in the working tree
  }
}

/** `importer -> imported` for every import of `files` that reaches test code. */
const importsOfTestCode = (files: ReadonlyArray<string>): ReadonlyArray<string> =>
  files.flatMap((file) => {
    const text = readIfPresent(file)
    if (text === undefined) return []
    return relativeImports(text)
      .map((spec) => normalize(join(dirname(file), spec)))
      .filter(isTestCode)
      .map((target) => `${file} -> ${target}`)
  })

describe("test code lives under test/ or beside its module's sources as tests", () => {
  it("tells test code and test helper names from production code", () => {
    expect(isTestCode("test/support/auth.ts")).toBe(true)
    expect(isTestCode("modules/scorer/test/png.ts")).toBe(true)
    expect(isTestCode("modules/jobs/service.test.ts")).toBe(true)
    expect(isTestCode("modules/jobs/service.ts")).toBe(false)
    expect(isTestCode("modules/report/unit-tests.ts")).toBe(false)
    expect(testHelperName.test("modules/auth/kubernetes-double.ts")).toBe(true)
    expect(testHelperName.test("modules/jobs/testing/support.ts")).toBe(true)
    expect(testHelperName.test("modules/auth/test-support.ts")).toBe(true)
    expect(testHelperName.test("modules/scorer/precision.ts")).toBe(false)
    expect(relativeImports(`import { a } from "../../test/support/auth.ts"\nconst b = await import("./x.ts")`)).toEqual(
      ["../../test/support/auth.ts", "./x.ts"]
    )
  })

  it("no production file (modules/, apps/) imports test code", () => {
    const production = typescriptFiles().filter((file) => /^(modules|apps)\//.test(file) && !isTestCode(file))
    expect(production.length).toBeGreaterThan(100)
    expect(importsOfTestCode(production)).toEqual([])
  })

  it("no test double or test helper among a module's sources", () => {
    const found = typescriptFiles().filter(
      (file) => /^(modules|apps)\//.test(file) && !isTestCode(file) && testHelperName.test(file)
    )
    expect(found).toEqual([])
  })

  it("the benchmarks (bench/) and local/ import no test code", () => {
    const files = typescriptFiles().filter((file) => /^(bench|local)\//.test(file))
    expect(files.filter((file) => file.startsWith("bench/")).length).toBeGreaterThan(10)
    expect(importsOfTestCode(files)).toEqual([])
  })
})
