import { readFileSync } from "node:fs"
import { defineConfig, type Plugin } from "vitest/config"

/** Virtual module id of a `with { type: "file" }` import of a JSON file (the built-in models). */
const jsonFilePrefix = "\0bun-file:"
const jsonFileSuffix = ".as-file"

/**
 * Bun's import attributes, as vite does not know them: `with { type: "text" }` (protos, HTML,
 * JSON Schemas kept as text) gives the file's text; `with { type: "file" }` (the native
 * library, the built-in models) gives its path, which under `bun build --compile` is the
 * embedded copy's path. A JSON file imported as a file gets a virtual id not ending in ".json",
 * so vite's JSON plugin leaves it alone.
 */
const bunImportAttributes = (): Plugin => ({
  name: "bun-import-attributes",
  enforce: "pre",
  // vite's SSR transform drops import attributes, so the importer's text says which imports are files.
  async resolveId(source, importer, options) {
    if (!source.endsWith(".json") || !importer) return undefined
    const text = readFileSync(importer.split("?")[0] ?? importer, "utf8")
    if (!text.includes(`from ${JSON.stringify(source)} with { type: "file" }`)) return undefined
    const resolved = await this.resolve(source, importer, { ...options, skipSelf: true })
    return resolved ? `${jsonFilePrefix}${resolved.id}${jsonFileSuffix}` : undefined
  },
  load(id) {
    if (id.startsWith(jsonFilePrefix))
      return `export default ${JSON.stringify(id.slice(jsonFilePrefix.length, -jsonFileSuffix.length))}`
    const path = id.split("?")[0] ?? id
    if (/\.(proto|html)$/.test(path)) return `export default ${JSON.stringify(readFileSync(path, "utf8"))}`
    if (/(\.so|\/svc-exec)$/.test(path)) return `export default ${JSON.stringify(path)}`
    return undefined
  }
})

// Tests run under Bun (`bun --bun vitest run`) so bun:ffi and bun:sqlite resolve.
export default defineConfig({
  plugins: [bunImportAttributes()],
  test: {
    include: ["modules/**/*.test.ts", "test/**/*.test.ts"],
    reporters: ["default", "./test/support/summary-reporter.ts"],
    globalSetup: ["./test/support/global-setup.ts"],
    pool: "forks",
    testTimeout: 60_000,
    hookTimeout: 120_000,
    server: { deps: { external: [/^bun:/] } }
  }
})
