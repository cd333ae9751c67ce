/**
 * `npm run check-cycles` (run by `npm run lint`): fails when the code has a circle.
 *  - TypeScript: an import circle between project files (type-only imports included: a circle
 *    of types is still two modules that cannot be read one without the other), and a circle
 *    between modules (modules/<name>, apps/<name>): a imports b while b, through any of its files,
 *    imports a, even when no single file circle closes it. Test code (*.test.ts, test/ and
 *    testing/ folders) may reach across: it is left out of the module graph.
 *  - One public face: outside a module that declares one (`sealedModules`), code imports only its
 *    index.ts (tests included are not: they may reach inside).
 *  - C (the native scorer): an include circle between headers, or a call circle between source
 *    files — file a uses a non-static symbol (function or object) that file b defines while b,
 *    directly or through other files, uses one of a's. Scalar and SIMD variants of a kernel
 *    therefore share helpers through a third file or a header, never by calling each other.
 *  - Layering: a domain module (policy, jobs, scorer, scoring-api, inputs, auth, errors, ...)
 *    imports no transport library (`@grpc/*`). Only modules/transport and the gRPC clients
 *    (node, operator, cli, mcp) do, and tests.
 * Prints every circle or layering breach found (one line each) and exits 1, else one summary line.
 */
import { readdirSync, readFileSync, statSync } from "node:fs"
import { dirname, join, relative, resolve } from "node:path"

const root = resolve(dirname(new URL(import.meta.url).pathname), "..")
const skipDirs = new Set(["node_modules", "dist", "build", ".git", "coverage"])

function walk(dir: string, keep: (file: string) => boolean, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    if (skipDirs.has(name)) continue
    const path = join(dir, name)
    if (statSync(path).isDirectory()) walk(path, keep, out)
    else if (keep(path)) out.push(path)
  }
  return out
}

type Graph = Map<string, Set<string>>

/** Strongly connected components with more than one file, or a file that reaches itself (Tarjan). */
export function circles(graph: Graph): string[][] {
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const onStack = new Set<string>()
  const found: string[][] = []
  let next = 0
  const visit = (v: string) => {
    index.set(v, next)
    low.set(v, next++)
    stack.push(v)
    onStack.add(v)
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w)
        low.set(v, Math.min(low.get(v) ?? 0, low.get(w) ?? 0))
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v) ?? 0, index.get(w) ?? 0))
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = []
      let w: string | undefined
      do {
        w = stack.pop()
        if (w === undefined) break
        onStack.delete(w)
        component.push(w)
      } while (w !== v)
      if (component.length > 1 || graph.get(v)?.has(v)) found.push(component.sort())
    }
  }
  for (const v of [...graph.keys()].sort()) if (!index.has(v)) visit(v)
  return found
}

function addEdge(graph: Graph, from: string, to: string) {
  if (!graph.has(from)) graph.set(from, new Set())
  if (!graph.has(to)) graph.set(to, new Set())
  graph.get(from)?.add(to)
}

// ---- TypeScript ----

const importPattern =
  /(?:^|[;\s])(?:import|export)\s+(?:type\s+)?(?:[^;'"]*?\s+from\s+)?["'](\.{1,2}\/[^"']+)["']|import\(\s*["'](\.{1,2}\/[^"']+)["']\s*\)/g

function resolveTs(from: string, spec: string): string | undefined {
  const base = resolve(dirname(from), spec)
  for (const candidate of [base, `${base}.ts`, `${base}.tsx`, join(base, "index.ts")]) {
    try {
      if (statSync(candidate).isFile() && /\.tsx?$/.test(candidate)) return candidate
    } catch {}
  }
  return undefined
}

/** Removes comments (keeping strings, where import paths live). */
function stripTsComments(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|[^:"'`\\])\/\/.*$/gm, "$1")
}

export function tsGraph(files: string[]): Graph {
  const graph: Graph = new Map()
  for (const file of files) {
    if (!graph.has(file)) graph.set(file, new Set())
    const text = stripTsComments(readFileSync(file, "utf8"))
    for (const m of text.matchAll(importPattern)) {
      const target = resolveTs(file, m[1] ?? m[2] ?? "")
      if (target) addEdge(graph, file, target)
    }
  }
  return graph
}

/** The module a project file belongs to ("modules/scorer", "apps/svc-node"); undefined outside them. */
export function moduleOf(path: string): string | undefined {
  return /^((?:modules|apps)\/[^/]+)\//.exec(path)?.[1]
}

/** Test code: test files, test-support folders, and the tests' own tree. */
export const isTestCode = (path: string) => /\.test\.ts$/.test(path) || /(^|\/)(test|testing)\//.test(path)

/** The import graph between modules of the non-test files of `graph` (paths relative to `base`). */
export function moduleGraph(graph: Graph, base: string): Graph {
  const modules: Graph = new Map()
  for (const [file, targets] of graph) {
    const path = relative(base, file)
    const from = moduleOf(path)
    if (from === undefined || isTestCode(path)) continue
    if (!modules.has(from)) modules.set(from, new Set())
    for (const target of targets) {
      const to = moduleOf(relative(base, target))
      if (to !== undefined && to !== from && !isTestCode(relative(base, target))) addEdge(modules, from, to)
    }
  }
  return modules
}

/** Modules with one public face: other code imports only their index.ts. */
export const sealedModules = ["modules/scorer"]

/** Build scripts that write a sealed module's generated files, and so read its inside. */
export const moduleGenerators: Readonly<Record<string, string>> = { "scripts/native-features.ts": "modules/scorer" }

/** `file imports module/inner.ts` for every non-test import past a sealed module's index.ts (to its non-test code). */
export function publicFaceBreaches(
  graph: Graph,
  base: string,
  sealed: ReadonlyArray<string> = sealedModules
): string[] {
  const breaches: string[] = []
  for (const [file, targets] of graph) {
    const path = relative(base, file)
    if (isTestCode(path)) continue
    for (const target of targets) {
      const inner = relative(base, target)
      // A module's test helpers (golden recorders, synthetic clips) serve scripts and benchmarks too.
      const owner = isTestCode(inner) ? undefined : sealed.find((module) => inner.startsWith(`${module}/`))
      const inside = moduleOf(path) === owner || moduleGenerators[path] === owner
      if (owner && !inside && inner !== `${owner}/index.ts`) breaches.push(`${path} imports ${inner}`)
    }
  }
  return breaches
}

// ---- C ----

/** Source without comments, string and character literals (their contents are not code). */
export function stripC(text: string): string {
  return text
    .replace(/\/\*[\s\S]*?\*\//g, " ")
    .replace(/\/\/.*$/gm, "")
    .replace(/"(?:\\.|[^"\\\n])*"/g, '""')
    .replace(/'(?:\\.|[^'\\\n])*'/g, "''")
}

/** Non-static symbols a C file defines at file scope: functions with a body, initialised objects. */
export function cDefinitions(code: string): Set<string> {
  const defs = new Set<string>()
  const lines = code.replace(/^\s*#.*(?:\\\n.*)*$/gm, "")
  let depth = 0
  let statement = ""
  let functionBody = false // the brace at depth 0 opened a function body, which ends the statement
  for (const ch of lines) {
    if (ch === "}" || ch === ")" || ch === "]") depth--
    if (depth === 0) statement += ch
    if (ch === "{" || ch === "(" || ch === "[") {
      if (depth === 0 && ch === "{") {
        define(statement, defs)
        functionBody = /\)\s*\{$/.test(statement)
      }
      depth++
    }
    if (depth === 0 && (ch === ";" || (ch === "}" && functionBody))) statement = ""
  }
  return defs
}

function define(statement: string, defs: Set<string>) {
  const s = statement.trim()
  if (/^(static|typedef|extern|struct|enum|union)\b/.test(s) && !/^(struct|enum|union)\s+\w+\s+\**\w+/.test(s)) return
  if (/\bstatic\b/.test(s)) return
  // `type name(params) {` or `type name[...] = {` / `type name = {`
  const fn = /(\w+)\s*\([\s\S]*\)\s*\{$/.exec(s)
  const obj = /(\w+)\s*(?:\[[^\]]*\]\s*)*=\s*\{$/.exec(s)
  const name = obj?.[1] ?? fn?.[1]
  if (name) defs.add(name)
}

export function cGraphs(files: string[]): { includes: Graph; calls: Graph } {
  const includes: Graph = new Map()
  const calls: Graph = new Map()
  const code = new Map(files.map((f) => [f, readFileSync(f, "utf8")]))
  for (const [file, text] of code) {
    if (!includes.has(file)) includes.set(file, new Set())
    for (const m of text.matchAll(/^\s*#\s*include\s*"([^"]+)"/gm)) {
      const target = resolve(dirname(file), m[1] ?? "")
      if (code.has(target)) addEdge(includes, file, target)
    }
  }
  const sources = files.filter((f) => f.endsWith(".c"))
  const definedIn = new Map<string, string>()
  const used = new Map<string, Set<string>>()
  for (const file of sources) {
    const stripped = stripC(code.get(file) ?? "")
    for (const name of cDefinitions(stripped)) definedIn.set(name, file)
    used.set(file, new Set(stripped.match(/[A-Za-z_]\w*/g) ?? []))
  }
  for (const file of sources) {
    calls.set(file, calls.get(file) ?? new Set())
    for (const name of used.get(file) ?? []) {
      const owner = definedIn.get(name)
      if (owner && owner !== file) addEdge(calls, file, owner)
    }
  }
  return { includes, calls }
}

// ---- Layering ----

/** Transport libraries, and the only places allowed to import them (paths from the repository root). */
const transportLibrary =
  /(?:^|[;\s])(?:import|export)\s+(?:type\s+)?(?:[^;'"]*?\s+from\s+)?["'](@grpc\/[^"']+)["']|import\(\s*["'](@grpc\/[^"']+)["']\s*\)/g
export const transportImporters = [
  "modules/transport/",
  "modules/node/",
  "modules/operator/",
  "modules/cli/",
  "modules/mcp/"
]

const isTestFile = (path: string) => /\.test\.ts$/.test(path) || path.includes("/test/") || path.startsWith("test/")

/** `file imports @grpc/...` for every project file outside the transport and client modules that does. */
export function layeringBreaches(files: string[], base: string): string[] {
  const breaches: string[] = []
  for (const file of files) {
    const path = relative(base, file)
    if (isTestFile(path) || !/^(modules|apps)\//.test(path)) continue
    if (transportImporters.some((prefix) => path.startsWith(prefix))) continue
    for (const m of stripTsComments(readFileSync(file, "utf8")).matchAll(transportLibrary)) {
      breaches.push(`${path} imports ${m[1] ?? m[2]}`)
    }
  }
  return breaches
}

// ---- main ----

if (import.meta.main) {
  const tsFiles = walk(root, (f) => /\.tsx?$/.test(f) && !f.endsWith(".d.ts"))
  const native = join(root, "modules/scorer/native")
  const cFiles = walk(native, (f) => /\.[ch]$/.test(f) && !f.includes(`${join(native, "test")}/`))
  const { includes, calls } = cGraphs(cFiles)
  const report: string[] = []
  const show = (kind: string, found: string[][]) => {
    for (const c of found) report.push(`${kind} circle: ${c.map((f) => relative(root, f)).join(" <-> ")}`)
  }
  const graph = tsGraph(tsFiles)
  show("TypeScript import", circles(graph))
  for (const circle of circles(moduleGraph(graph, root))) report.push(`module circle: ${circle.join(" <-> ")}`)
  for (const breach of publicFaceBreaches(graph, root))
    report.push(`public face: ${breach} (import the module's index.ts)`)
  show("C include", circles(includes))
  show("C call", circles(calls))
  for (const breach of layeringBreaches(tsFiles, root))
    report.push(`layering: ${breach} (only ${transportImporters.join(", ")} may)`)
  if (report.length > 0) {
    for (const line of report) console.error(line)
    process.exit(1)
  }
  console.log(
    `check-cycles: no circles, no transport library outside transport and clients (${tsFiles.length} TypeScript files and their modules, ${cFiles.length} C files: includes and calls between files)`
  )
}
