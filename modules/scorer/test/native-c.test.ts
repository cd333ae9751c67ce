/**
 * The native library's own C tests (modules/scorer/native/test), built by `npm run build`:
 * the ABI test (model parsing, job errors, thread/backend/stream determinism, cancellation)
 * the reader test (raw and Y4M layouts, truncation, garbage, a bounded fuzz loop) and the SIMD
 * property test (integer VIF, ADM and motion on random frames of odd sizes at every depth, each
 * SIMD path the CPU has against scalar, bit for bit; a path the CPU lacks prints a SKIP line), and
 * the fed-stream test (a library thread reading a raw file and pipes: ends, lengths, skips, cancel).
 */
import { spawnSync } from "bun"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { repoRoot, sharedDir } from "../../../test/support/executables.ts"
import { skipWithoutFixtures } from "../../../test/support/fixtures.ts"

/** The ABI test scores fixture pairs: without the golden fixture set it is skipped, one line saying so. */
const withoutFixtures = skipWithoutFixtures("the native ABI test (scorer_test), which scores fixture pairs")

const buildDir = join(repoRoot, "modules/scorer/native/build")

/** Programs that read fixture pairs from the shared directory. */
const needsFixtures = new Set(["scorer_test", "feed_test"])

describe.each(["scorer_test", "reader_test", "simd_test", "feed_test"])("native %s", (program) => {
  it.skipIf(needsFixtures.has(program) && withoutFixtures)("passes every case", () => {
    // The ABI and feed tests read models/ and fixtures/ under the shared directory they are given.
    const run = spawnSync([join(buildDir, program), sharedDir], { cwd: buildDir })
    const output = `${run.stdout.toString()}${run.stderr.toString()}`
    const summary = /(\d+) passed, (\d+) failed/.exec(output)
    expect(summary, output).not.toBeNull()
    expect(Number(summary?.[2]), output).toBe(0)
    expect(Number(summary?.[1])).toBeGreaterThan(0)
    expect(run.exitCode, output).toBe(0)
  })
})
