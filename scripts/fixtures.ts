/**
 * The golden fixture set, kept in the repository (test/fixtures): index.jsonl, SHA256SUMS, the
 * reference tool's output per pair (NAME.libvmaf.json) and the raw YUV pairs as one zstd-compressed
 * tar (yuv.tar.zst, 57.5 MB of raw frames in 6.1 MB). The raw files are restored beside it
 * (gitignored) by `npm run build`, by the test run's global set-up and by `npm run fixtures`, and
 * every restored file is checked against SHA256SUMS.
 *
 *   bun scripts/fixtures.ts                        restore (nothing to do when every file is intact)
 *   bun scripts/fixtures.ts pack DIR               re-make yuv.tar.zst from the raw files in DIR
 *   bun scripts/fixtures.ts record REFERENCE_VMAF  re-record NAME.libvmaf.json with the reference tool
 *
 * `record` runs, for each pair of index.jsonl (single thread, default model vmaf_v0.6.1):
 *   vmaf -r NAME.ref.yuv -d NAME.dis.yuv -w W -h H -p PIXFMT -b BPC --threads 1 \
 *        --feature psnr --feature float_ssim --feature float_ms_ssim --json -q -o NAME.libvmaf.json
 * and, with the tool's default threads (which order the features as svc's output does):
 *   vmaf -r ... -b BPC --feature psnr --feature float_ssim --feature float_ms_ssim --FORMAT -q -o NAME.layout.FORMAT
 * for FORMAT json, xml, csv and sub: the layouts the svc client's output is held to.
 *
 * Why zstd in a tar: Bun decompresses and unpacks both itself, so restoring needs no host tool
 * (measured on this set: xz -9e 5.2 MB but needs xz; gzip -9 10.0 MB; FFV1 in Matroska,
 * bit-exact through ffmpeg, 1.5 times xz file by file).
 */
import { spawnSync } from "bun"
import {
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync
} from "node:fs"
import { join, resolve } from "node:path"

export const fixturesDir = join(import.meta.dirname, "..", "test", "fixtures")
const archive = join(fixturesDir, "yuv.tar.zst")

interface IndexEntry {
  readonly name: string
  readonly width: number
  readonly height: number
  readonly pixel_format: string
  readonly bitdepth: number
}

const readIndex = (): ReadonlyArray<IndexEntry> =>
  readFileSync(join(fixturesDir, "index.jsonl"), "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as IndexEntry)

/** File name -> SHA-256 as SHA256SUMS records it. */
const expectedSums = (): ReadonlyMap<string, string> =>
  new Map(
    readFileSync(join(fixturesDir, "SHA256SUMS"), "utf8")
      .split("\n")
      .filter((line) => line.trim() !== "")
      .map((line) => {
        const [sum = "", file = ""] = line.split(/\s+/)
        return [file, sum] as const
      })
  )

const sha256 = (path: string): string => new Bun.CryptoHasher("sha256").update(readFileSync(path)).digest("hex")

/** The files of `dir` whose bytes differ from SHA256SUMS (missing ones included). */
const damaged = (dir: string, sums: ReadonlyMap<string, string>): ReadonlyArray<string> =>
  [...sums]
    .filter(([file, sum]) => !existsSync(join(dir, file)) || sha256(join(dir, file)) !== sum)
    .map(([file]) => file)

/**
 * Puts the raw pairs beside the archive unless every one is already there intact. Unpacks into a
 * temporary folder first and renames each checked file into place, so a run that stops halfway
 * leaves no half-written fixture. Throws, naming the files, when the archive does not give the
 * recorded bytes.
 */
export const restoreFixtures = async (): Promise<void> => {
  const sums = expectedSums()
  if (damaged(fixturesDir, sums).length === 0) return
  const scratch = mkdtempSync(join(fixturesDir, ".restore-"))
  try {
    const tar = Bun.zstdDecompressSync(await Bun.file(archive).bytes())
    await new Bun.Archive(tar).extract(scratch)
    const wrong = damaged(scratch, sums)
    if (wrong.length > 0)
      throw new Error(`${archive} does not hold the bytes SHA256SUMS records for: ${wrong.join(", ")}`)
    for (const file of sums.keys()) renameSync(join(scratch, file), join(fixturesDir, file))
  } finally {
    rmSync(scratch, { recursive: true, force: true })
  }
}

/** Re-makes the archive from raw files in `source` (checked against SHA256SUMS first). */
const pack = async (source: string): Promise<void> => {
  const sums = expectedSums()
  const wrong = damaged(source, sums)
  if (wrong.length > 0) throw new Error(`${source}: not the recorded bytes: ${wrong.join(", ")}`)
  const files = Object.fromEntries([...sums.keys()].sort().map((file) => [file, readFileSync(join(source, file))]))
  const tar = await new Bun.Archive(files).bytes()
  writeFileSync(archive, Bun.zstdCompressSync(tar, { level: 22 }))
  console.log(`wrote ${archive}: ${statSync(archive).size} bytes for ${tar.length} bytes of tar`)
}

/** The layouts of the reference tool's output the svc client's output is held to. */
export const referenceLayouts = ["json", "xml", "csv", "sub"] as const

const runTool = (tool: string, entry: IndexEntry, args: ReadonlyArray<string>, out: string): void => {
  const run = spawnSync(
    [
      tool,
      ...["-r", join(fixturesDir, `${entry.name}.ref.yuv`), "-d", join(fixturesDir, `${entry.name}.dis.yuv`)],
      ...["-w", `${entry.width}`, "-h", `${entry.height}`, "-p", entry.pixel_format, "-b", `${entry.bitdepth}`],
      ...args,
      ...["-q", "-o", out]
    ],
    { stderr: "pipe" }
  )
  if (run.exitCode !== 0) throw new Error(`${tool} failed on ${entry.name}: ${run.stderr.toString()}`)
  console.log(`recorded ${out}`)
}

/** Re-records each pair's golden output and its layouts with the reference tool (the commands in the header). */
const record = async (tool: string): Promise<void> => {
  await restoreFixtures()
  const extraFeatures = ["--feature", "psnr", "--feature", "float_ssim", "--feature", "float_ms_ssim"]
  for (const entry of readIndex()) {
    runTool(
      tool,
      entry,
      ["--threads", "1", ...extraFeatures, "--json"],
      join(fixturesDir, `${entry.name}.libvmaf.json`)
    )
    for (const layout of referenceLayouts)
      runTool(tool, entry, [...extraFeatures, `--${layout}`], join(fixturesDir, `${entry.name}.layout.${layout}`))
  }
}

if (import.meta.main) {
  const [command, argument] = process.argv.slice(2)
  if (command === undefined) {
    await restoreFixtures()
    const restored = readdirSync(fixturesDir).filter((file) => file.endsWith(".yuv")).length
    console.log(`fixtures: ${restored} raw files in ${fixturesDir}, checked against SHA256SUMS`)
  } else if (command === "pack" && argument) await pack(resolve(argument))
  else if (command === "record" && argument) await record(resolve(argument))
  else {
    console.error("usage: bun scripts/fixtures.ts [pack RAW_DIR | record REFERENCE_VMAF]")
    process.exit(2)
  }
}
