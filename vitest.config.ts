import { defineConfig } from "vitest/config"

// Tests run under Bun (`bun --bun vitest run`) so bun:ffi and bun:sqlite resolve.
export default defineConfig({
  test: {
    include: ["modules/**/*.test.ts", "test/**/*.test.ts"],
    pool: "forks",
    testTimeout: 60_000,
    hookTimeout: 120_000,
    server: { deps: { external: [/^bun:/] } }
  }
})
