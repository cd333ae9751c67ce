/**
 * The circle check run by `npm run lint` (scripts/check-cycles.ts): it finds TypeScript import
 * circles between files and between modules, imports past a sealed module's index.ts, and C
 * include and call circles in small trees written here, and the project has none.
 */
import { spawnSync } from "bun"
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import {
  cGraphs,
  circles,
  layeringBreaches,
  moduleGraph,
  publicFaceBreaches,
  tsGraph
} from "../../scripts/check-cycles.ts"
import { repoRoot } from "../../local/executables.ts"

const dir = mkdtempSync(join(tmpdir(), "svc-cycles-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const write = (name: string, text: string) => {
  const path = join(dir, name)
  writeFileSync(path, text)
  return path
}
const names = (found: string[][]) => found.map((c) => c.map((f) => f.slice(dir.length + 1)))

describe("check-cycles", () => {
  it("finds a TypeScript import circle, type-only and dynamic imports included", () => {
    const a = write("a.ts", 'import type { B } from "./b.ts"\nexport type A = B\n')
    const b = write("b.ts", 'export type B = number\nexport const load = () => import("./c")\n')
    const c = write("c.ts", '// import { x } from "./a.ts" (a comment is not an import)\nexport { A } from "./a.ts"\n')
    const d = write("d.ts", 'import { load } from "./b.ts"\nexport const d = load\n')
    expect(names(circles(tsGraph([a, b, c, d])))).toEqual([["a.ts", "b.ts", "c.ts"]])
  })

  it("finds a circle between modules that no file circle closes, leaving test code out", () => {
    for (const folder of ["modules/low", "modules/high", "modules/low/test"])
      mkdirSync(join(dir, folder), { recursive: true })
    const open = write("modules/low/open.ts", "export const open = 1\n")
    const score = write("modules/high/score.ts", 'import { open } from "../low/open.ts"\nexport const score = open\n')
    const lowTest = write(
      "modules/low/test/run.ts",
      'import { score } from "../../high/score.ts"\nexport const run = score\n'
    )
    const files = [open, score, lowTest]
    expect(circles(tsGraph(files))).toEqual([])
    expect(circles(moduleGraph(tsGraph(files), dir))).toEqual([])
    const scorer = write(
      "modules/low/scorer.ts",
      'import type { score } from "../high/score.ts"\nexport type S = typeof score\n'
    )
    files.push(scorer)
    expect(circles(tsGraph(files))).toEqual([])
    expect(circles(moduleGraph(tsGraph(files), dir))).toEqual([["modules/high", "modules/low"]])
  })

  it("finds an import past a sealed module's index.ts, not one from inside it or from a test", () => {
    for (const folder of ["modules/sealed", "modules/user"]) mkdirSync(join(dir, folder), { recursive: true })
    const inner = write("modules/sealed/inner.ts", "export const inner = 1\n")
    const index = write("modules/sealed/index.ts", 'export { inner } from "./inner.ts"\n')
    const viaIndex = write("modules/user/a.ts", 'import { inner } from "../sealed/index.ts"\nexport const a = inner\n')
    const past = write("modules/user/b.ts", 'import { inner } from "../sealed/inner.ts"\nexport const b = inner\n')
    const test = write("modules/user/b.test.ts", 'import { inner } from "../sealed/inner.ts"\nexport const t = inner\n')
    const graph = tsGraph([inner, index, viaIndex, past, test])
    expect(publicFaceBreaches(graph, dir, ["modules/sealed"])).toEqual([
      "modules/user/b.ts imports modules/sealed/inner.ts"
    ])
  })

  it("finds a C call circle between a scalar file and its SIMD variant, not a one-way call", () => {
    const scalar = write(
      "k.c",
      '#include "k.h"\nstatic int helper(void) { return 1; }\nint k_c(int x) { return x + helper(); }\n' +
        "int k_run(int x) { return k_avx2(x); }\n"
    )
    const simd = write("k_avx2.c", '#include "k.h"\nint k_avx2(int x) { /* k_c */ return x; }\n')
    const header = write("k.h", "int k_c(int x);\nint k_avx2(int x);\n")
    expect(names(circles(cGraphs([scalar, simd, header]).calls))).toEqual([])
    writeFileSync(simd, '#include "k.h"\nint k_avx2(int x) { return k_c(x); }\n')
    expect(names(circles(cGraphs([scalar, simd, header]).calls))).toEqual([["k.c", "k_avx2.c"]])
  })

  it("finds a C call circle through a descriptor object, and an include circle", () => {
    const reg = write("reg.c", "extern const struct ex ex_psnr;\nint reg_count(void) { return ex_psnr.n; }\n")
    const psnr = write("psnr.c", "const struct ex ex_psnr = { .n = 3 };\nint use(void) { return reg_count(); }\n")
    const h1 = write("h1.h", '#include "h2.h"\n')
    const h2 = write("h2.h", '#include "h1.h"\n')
    const graphs = cGraphs([reg, psnr, h1, h2])
    expect(names(circles(graphs.calls))).toEqual([["psnr.c", "reg.c"]])
    expect(names(circles(graphs.includes))).toEqual([["h1.h", "h2.h"]])
  })

  it("finds a domain module importing a transport library, not the transport, a client or a test", () => {
    for (const folder of ["modules/jobs", "modules/transport/grpc", "modules/node"])
      mkdirSync(join(dir, folder), { recursive: true })
    const grpcImport = 'import { status } from "@grpc/grpc-js"\nexport const s = status\n'
    const domain = write("modules/jobs/service.ts", `// import "@grpc/grpc-js" in a comment is fine\n${grpcImport}`)
    const domainTest = write("modules/jobs/service.test.ts", grpcImport)
    const transport = write("modules/transport/grpc/server.ts", grpcImport)
    const client = write("modules/node/agent.ts", 'import type * as grpc from "@grpc/grpc-js"\n')
    expect(layeringBreaches([domain, domainTest, transport, client], dir)).toEqual([
      "modules/jobs/service.ts imports @grpc/grpc-js"
    ])
  })

  it("passes on the project (TypeScript and the native scorer)", () => {
    const run = spawnSync([process.execPath, join(repoRoot, "scripts/check-cycles.ts")], { cwd: repoRoot })
    expect(run.stderr.toString()).toBe("")
    expect(run.stdout.toString()).toMatch(/^check-cycles: no circles/)
    expect(run.exitCode).toBe(0)
  })
})
