/**
 * The golden fixtures in test/fixtures: geometry, checksums and libvmaf's values. The raw pairs
 * are restored from test/fixtures/yuv.tar.zst by the build and by the test run's global set-up
 * (test/support/global-setup.ts), so every test finds them.
 */
import { createHash } from "node:crypto"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { fixturesDir } from "../../local/executables.ts"

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

export const fixtures: ReadonlyArray<Fixture> = readFileSync(join(fixturesDir, "index.jsonl"), "utf8")
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

export const fixture = (name: string): Fixture => {
  const found = fixtures.find((entry) => entry.name === name || entry.name.startsWith(`${name}_`))
  if (!found) throw new Error(`no fixture ${name}`)
  return found
}

export const golden = (entry: Fixture): GoldenOutput =>
  JSON.parse(readFileSync(join(fixturesDir, `${entry.name}.libvmaf.json`), "utf8")) as GoldenOutput

const checksums = new Map(
  readFileSync(join(fixturesDir, "SHA256SUMS"), "utf8")
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
