import { readFileSync } from "node:fs"
import { defineConfig, type Plugin } from "vitest/config"

/**
 * Bun's import attributes, as vite does not know them: `with { type: "text" }` (protos, HTML,
 * JSON Schemas kept as text) gives the file's text; `with { type: "file" }` (the native
 * library) gives its path, which under `bun build --compile` is the embedded copy's path.
 */
const bunImportAttributes = (): Plugin => ({
  name: "bun-import-attributes",
  enforce: "pre",
  load(id) {
    const path = id.split("?")[0] ?? id
    if (/\.(proto|html)$/.test(path)) return `export default ${JSON.stringify(readFileSync(path, "utf8"))}`
    if (/\.so$/.test(path)) return `export default ${JSON.stringify(path)}`
    return undefined
  }
})

// Tests run under Bun (`bun --bun vitest run`) so bun:ffi and bun:sqlite resolve.
export default defineConfig({
  plugins: [bunImportAttributes()],
  test: {
    include: ["modules/**/*.test.ts", "test/**/*.test.ts"],
    reporters: ["default", "./test/support/summary-reporter.ts"],
    pool: "forks",
    testTimeout: 60_000,
    hookTimeout: 120_000,
    server: { deps: { external: [/^bun:/] } }
  }
})
