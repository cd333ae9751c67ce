/**
 * The repository is self-contained (issue 26): no test, source, script, bench or CI file reads a
 * folder beside the checkout (the workspace folder with the fixtures, models and reference tools
 * it was written in: test/support/workspace.ts). A clone with nothing beside it runs the whole suite; the inputs
 * and golden values live in test/fixtures, the models in modules/scorer/models.
 */
import { spawnSync } from "bun"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { repoRoot } from "../../local/executables.ts"
import { WORKSPACE_FOLDER, workspaceReads } from "../support/workspace.ts"

/** Code and configuration: what runs (prose in Markdown may mention the workspace). */
const code = /\.(?:[cm]?[jt]s|c|h|sh|json|ya?ml|toml)$|(?:^|\/)(?:run|Dockerfile)$/
const thisFile = "test/structure/self-contained.test.ts"

const trackedCode = (): ReadonlyArray<string> =>
  spawnSync(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], { cwd: repoRoot })
    .stdout.toString()
    .split("\0")
    .filter((file) => code.test(file) && file !== thisFile && file !== "package-lock.json")

describe("no reader of a folder beside the repository", () => {
  it("recognises each spelling of such a path, and not other uses of the word", () => {
    const folder = WORKSPACE_FOLDER
    expect(workspaceReads(`const dir = join(root, "..", "${folder}")`)).toHaveLength(1)
    expect(workspaceReads(`FIX=$FIXTURES:-../${folder}/fixtures`)).toHaveLength(1)
    expect(workspaceReads(`static char dir[64] = "/work/${folder}/reference/vmaf";`)).toHaveLength(1)
    expect(
      workspaceReads(`import x from '@modelcontextprotocol/sdk/${folder}/protocol.js'\n${folder} libraries`)
    ).toEqual([])
  })

  it("finds none in any test, source, script, bench or CI file", () => {
    const files = trackedCode()
    expect(files).toContain(".ci/run")
    expect(files).toContain("test/support/fixtures.ts")
    const found = files.flatMap((file) => {
      let text: string
      try {
        text = readFileSync(join(repoRoot, file), "utf8")
      } catch {
        return [] // listed by git but deleted in the working tree
      }
      return workspaceReads(text).map((line) => `${file}:${line}`)
    })
    expect(found).toEqual([])
  })
})
