/**
 * The golden fixtures in ../shared/fixtures: geometry, checksums and libvmaf's values. A clone
 * outside this workspace has no fixture set: `fixturesPresent` is false, the lists are empty,
 * and the tests that need it skip with one line saying so (`skipWithoutFixtures`).
 */
import { createHash } from "node:crypto"
import { existsSync, readFileSync } from "node:fs"
import { it } from "vitest"
import { join } from "node:path"
import { fixturesDir } from "./executables.ts"

export interface Fixture {
  readonly name: string
  readonly width: number
  readonly height: number
  readonly pixel_format: "420" | "422" | "444"
  readonly bitdepth: 8 | 10 | 12 | 16
  readonly frames: number
  readonly reference: string
  readonly distorted: string
}

export interface GoldenOutput {
  readonly frames: ReadonlyArray<{ readonly frameNum: number; readonly metrics: Readonly<Record<string, number>> }>
  readonly pooled_metrics: Readonly<Record<string, Readonly<Record<"min" | "max" | "mean" | "harmonic_mean", number>>>>
}

/** The fixture set is there (its index): golden and fixture-scoring tests can run. */
export const fixturesPresent = existsSync(join(fixturesDir, "index.jsonl"))

/** Title prefix of the one skipped test that stands for a file's fixture tests (the summary reporter reads it). */
export const fixturesSkipTitle = "skipped: needs the golden fixture set"

/**
 * Without the fixture set, declares one skipped test saying what did not run and why, and
 * returns true; the caller skips its fixture suites (`describe.skipIf(...)`, or declares none).
 * The summary reporter prints that title with the number of the file's skipped tests.
 */
export const skipWithoutFixtures = (what: string): boolean => {
  if (fixturesPresent) return false
  it.skip(`${fixturesSkipTitle} (${fixturesDir}, absent here): ${what}`, () => {})
  return true
}

export const fixtures: ReadonlyArray<Fixture> = (
  fixturesPresent ? readFileSync(join(fixturesDir, "index.jsonl"), "utf8") : ""
)
  .split("\n")
  .filter((line) => line.trim() !== "")
  .map((line) => {
    const entry = JSON.parse(line) as Omit<Fixture, "reference" | "distorted">
    return {
      ...entry,
      reference: join(fixturesDir, `${entry.name}.ref.yuv`),
      distorted: join(fixturesDir, `${entry.name}.dis.yuv`)
    }
  })

/** Stands in for a fixture while the set is absent: its suites are skipped, never run. */
const absentFixture = (name: string): Fixture => ({
  name,
  width: 0,
  height: 0,
  pixel_format: "420",
  bitdepth: 8,
  frames: 0,
  reference: join(fixturesDir, `${name}.ref.yuv`),
  distorted: join(fixturesDir, `${name}.dis.yuv`)
})

export const fixture = (name: string): Fixture => {
  if (!fixturesPresent) return absentFixture(name)
  const found = fixtures.find((entry) => entry.name === name || entry.name.startsWith(`${name}_`))
  if (!found) throw new Error(`no fixture ${name}`)
  return found
}

export const golden = (entry: Fixture): GoldenOutput =>
  JSON.parse(readFileSync(join(fixturesDir, `${entry.name}.libvmaf.json`), "utf8")) as GoldenOutput

const checksums = new Map(
  (fixturesPresent ? readFileSync(join(fixturesDir, "SHA256SUMS"), "utf8") : "")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => {
      const [sum, file] = line.split(/\s+/)
      return [file ?? "", sum ?? ""] as const
    })
)

/** The SHA-256 the fixture set records for a file, and the one of the bytes on disk. */
export const checksum = (path: string) => ({
  expected: checksums.get(path.split("/").pop() ?? ""),
  actual: createHash("sha256").update(readFileSync(path)).digest("hex")
})

/** The options of a score request for a fixture's raw geometry. */
export const rawOptions = (entry: Fixture) => ({
  width: entry.width,
  height: entry.height,
  pixel_format: entry.pixel_format,
  bitdepth: entry.bitdepth
})
