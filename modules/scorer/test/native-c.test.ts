/**
 * The native library's own C tests (modules/scorer/native/test), built by `npm run build`:
 * the ABI test (model parsing, job errors, thread/backend/stream determinism, cancellation)
 * the reader test (raw and Y4M layouts, truncation, garbage, a bounded fuzz loop) and the SIMD
 * property test (integer VIF, ADM and motion on random frames of odd sizes at every depth, each
 * SIMD path the CPU has against scalar, bit for bit; a path the CPU lacks prints a SKIP line), and
 * the fed-stream test (a library thread reading a raw file and pipes: ends, lengths, skips, cancel).
 */
import { spawn } from "bun"
import { mkdtempSync, rmSync, symlinkSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { builtinModelDir, fixturesDir, repoRoot } from "../../../local/executables.ts"

const buildDir = join(repoRoot, "modules/scorer/native/build")

// The ABI and feed tests read models/ and fixtures/ under the folder they are given: two links
// to the repository's built-in models and fixture set stand for it.
const dataDir = mkdtempSync(join(tmpdir(), "svc-native-data-"))
symlinkSync(builtinModelDir, join(dataDir, "models"))
symlinkSync(fixturesDir, join(dataDir, "fixtures"))
afterAll(() => rmSync(dataDir, { recursive: true, force: true }))

describe.each(["scorer_test", "reader_test", "simd_test", "feed_test", "registry_test"])("native %s", (program) => {
  // Spawned, not spawnSync: a program runs up to a minute on a loaded host, and a worker blocked
  // that long misses vitest's RPC deadline ("Timeout calling onTaskUpdate").
  it("passes every case", async () => {
    const run = spawn([join(buildDir, program), dataDir], { cwd: buildDir, stdout: "pipe", stderr: "pipe" })
    const [stdout, stderr] = await Promise.all([new Response(run.stdout).text(), new Response(run.stderr).text()])
    await run.exited
    const output = `${stdout}${stderr}`
    const summary = /(\d+) passed, (\d+) failed/.exec(output)
    expect(summary, output).not.toBeNull()
    expect(Number(summary?.[2]), output).toBe(0)
    expect(Number(summary?.[1])).toBeGreaterThan(0)
    expect(run.exitCode, output).toBe(0)
  }, 300_000)
})
