/**
 * `npm run bench -- vs-reference`: svc's scorer side by side with the reference `vmaf`
 * executable (libvmaf's `vmaf`, a yardstick only, from SVC_REFERENCE_VMAF) on the same generated
 * 8-bit 4:2:0 pairs (1080p and 2160p), at 1, 2 and nproc threads.
 *
 * svc runs as `scorer_cli`, the C driver built beside the native library (same library, same
 * job API, same threads as the services), so both sides are one native process that reads
 * two files and scores them: no JavaScript start-up or HTTP in svc's column. Each
 * configuration runs the two executables alternately, `SVC_BENCH_RUNS` times (default 5),
 * and prints the medians of wall time, CPU time (user + system) and peak RSS, and the
 * ratios svc / reference. The pooled VMAF means must agree within the golden bound (1e-4).
 * Environment: SVC_BENCH_RUNS, SVC_BENCH_SIZES (e.g. "1080" or "1080,2160"),
 * SVC_BENCH_THREADS (e.g. "1,2"), SVC_REFERENCE_VMAF (unset: svc's columns alone, saying so),
 * SVC_BENCH_MODEL (a built-in model's name, e.g. "vmaf_v1.0.16_3d0h"; default vmaf_v0.6.1),
 * SVC_BENCH_ISA: "avx2" emulates an AVX2-only host on an AVX-512 one (svc's backend forced to
 * avx2, the reference run with `--cpumask 48`, which clears its AVX-512 and AVX-512 ICL flags);
 * unset, both sides use the best path of the CPU.
 */
import { spawnSync } from "bun"
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync } from "node:fs"
import { availableParallelism, tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { writeClip } from "../local/clip.ts"
import { referenceAbsence, referenceVmaf } from "./reference-tool.ts"

const root = resolve(import.meta.dirname, "..")
const benchModel = process.env.SVC_BENCH_MODEL
const modelName = benchModel ?? "vmaf_v0.6.1"
const modelPath = benchModel
  ? join(root, "modules/scorer/models", `${benchModel}.json`)
  : resolve(process.env.SVC_MODEL_DIR ?? join(root, "modules/scorer/models"), "vmaf_v0.6.1.json")
const scorerCli = join(root, "modules/scorer/native/build/scorer_cli")
const workDir = join(process.env.TMPDIR ?? tmpdir(), "svc-bench")
const runs = Number(process.env.SVC_BENCH_RUNS ?? 5)
const goldenBound = 1e-4

/** An instruction-set restriction applied to both sides alike. */
interface Isa {
  readonly label: string
  /** scorer_cli's backend argument. */
  readonly svcBackend: string
  /** Extra arguments of the reference executable. */
  readonly referenceArgs: ReadonlyArray<string>
}

const isas: Readonly<Record<string, Isa>> = {
  best: { label: "best path of this CPU on both sides", svcBackend: "auto", referenceArgs: [] },
  // libvmaf's --cpumask clears the flags it names: 16 | 32 = AVX-512 and AVX-512 (Ice Lake).
  avx2: {
    label: "AVX2 only (svc backend avx2, reference --cpumask 48)",
    svcBackend: "avx2",
    referenceArgs: ["--cpumask", "48"]
  }
}

const selectedIsa = (): Isa => {
  const name = process.env.SVC_BENCH_ISA ?? "best"
  const isa = isas[name]
  if (!isa) throw new Error(`SVC_BENCH_ISA=${name}: expected one of ${Object.keys(isas).join(", ")}`)
  return isa
}

interface Clip {
  readonly label: string
  readonly width: number
  readonly height: number
  readonly frames: number
}

const clips: ReadonlyArray<Clip> = [
  { label: "1080p", width: 1920, height: 1080, frames: 48 },
  { label: "2160p", width: 3840, height: 2160, frames: 12 }
]

interface Pair {
  readonly reference: string
  readonly distorted: string
}

const run = (argv: ReadonlyArray<string>) => {
  const child = spawnSync([...argv], { stdout: "pipe", stderr: "pipe" })
  if (child.exitCode !== 0) throw new Error(`${argv[0]} failed: ${child.stderr.toString().slice(-2000)}`)
  return child
}

/** A textured moving clip (ffmpeg's testsrc2 plus film grain) and its x264 encode, decoded. */
const generatePair = async (clip: Clip): Promise<Pair> => {
  mkdirSync(workDir, { recursive: true })
  const base = join(workDir, `vsref_${clip.width}x${clip.height}_${clip.frames}`)
  const pair = { reference: `${base}.ref.yuv`, distorted: `${base}.dis.yuv` }
  if (existsSync(pair.reference) && existsSync(pair.distorted)) return pair
  const size = `${clip.width}x${clip.height}`
  await writeClip(`${pair.reference}.tmp`, {
    width: clip.width,
    height: clip.height,
    frames: clip.frames,
    rate: 24,
    filter: "noise=c0s=10:c0f=t+u,format=yuv420p",
    format: "rawvideo"
  })
  run([
    "ffmpeg",
    "-v",
    "error",
    "-y",
    "-f",
    "rawvideo",
    "-pix_fmt",
    "yuv420p",
    "-s",
    size,
    "-i",
    `${pair.reference}.tmp`,
    "-c:v",
    "libx264",
    "-preset",
    "veryfast",
    "-crf",
    "30",
    `${base}.mp4`
  ])
  run([
    "ffmpeg",
    "-v",
    "error",
    "-y",
    "-i",
    `${base}.mp4`,
    "-f",
    "rawvideo",
    "-pix_fmt",
    "yuv420p",
    `${pair.distorted}`
  ])
  renameSync(`${pair.reference}.tmp`, pair.reference)
  return pair
}

interface Sample {
  readonly wall: number
  readonly cpu: number
  readonly rssMiB: number
  readonly vmaf: number
}

const measure = (argv: ReadonlyArray<string>, vmafOf: (stdout: string, stderr: string) => number): Sample => {
  const started = performance.now()
  const child = run(argv)
  const wall = (performance.now() - started) / 1000
  const usage = child.resourceUsage
  return {
    wall,
    cpu: Number(usage.cpuTime.total) / 1e6,
    rssMiB: usage.maxRSS / (1024 * 1024),
    vmaf: vmafOf(child.stdout.toString(), child.stderr.toString())
  }
}

const geometry = (clip: Clip) => [String(clip.width), String(clip.height), "420", "8"]

const svcSample = (clip: Clip, pair: Pair, threads: number, isa: Isa): Sample =>
  measure(
    [scorerCli, modelPath, pair.reference, pair.distorted, ...geometry(clip), String(threads), isa.svcBackend],
    (_out, err) => {
      const match = /^vmaf\s+mean=([-0-9.e]+)/m.exec(err)
      if (!match?.[1]) throw new Error(`scorer_cli printed no pooled vmaf:\n${err}`)
      return Number(match[1])
    }
  )

const referenceSample = (clip: Clip, pair: Pair, threads: number, isa: Isa): Sample => {
  // Per process: several benches may share the pair directory.
  const output = join(workDir, `reference-output-${process.pid}.json`)
  return measure(
    [
      referenceVmaf,
      "-r",
      pair.reference,
      "-d",
      pair.distorted,
      "-w",
      String(clip.width),
      "-h",
      String(clip.height),
      "-p",
      "420",
      "-b",
      "8",
      "-m",
      `path=${modelPath}`,
      "--threads",
      String(threads),
      "-q",
      "--json",
      "-o",
      output,
      ...isa.referenceArgs
    ],
    () => {
      const parsed = JSON.parse(readFileSync(output, "utf8")) as { pooled_metrics: { vmaf: { mean: number } } }
      rmSync(output)
      return parsed.pooled_metrics.vmaf.mean
    }
  )
}

const median = (values: ReadonlyArray<number>) => {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 ? (sorted[mid] ?? 0) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2
}

const summary = (samples: ReadonlyArray<Sample>) => ({
  wall: median(samples.map((s) => s.wall)),
  cpu: median(samples.map((s) => s.cpu)),
  rssMiB: median(samples.map((s) => s.rssMiB)),
  vmaf: samples[0]?.vmaf ?? Number.NaN
})

const figures = (s: ReturnType<typeof summary>) =>
  `wall ${s.wall.toFixed(2)} s  cpu ${s.cpu.toFixed(2)} s  rss ${s.rssMiB.toFixed(0)} MiB`

export const benchVsReference = async (): Promise<void> => {
  if (!existsSync(scorerCli)) throw new Error(`${scorerCli} is missing: run \`npx bun scripts/build.ts native\``)
  const withReference = referenceAbsence === undefined
  const isa = selectedIsa()
  const sizes = (process.env.SVC_BENCH_SIZES ?? "1080,2160").split(",")
  const threadCounts = [
    ...new Set((process.env.SVC_BENCH_THREADS ?? `1,2,${availableParallelism()}`).split(",").map(Number))
  ]
  console.log(
    `vs-reference: svc (scorer_cli, native library) against the reference vmaf, ${modelName}, 8-bit 4:2:0, median of ${runs} alternating runs; ${isa.label}`
  )
  if (!withReference) console.log(`  reference columns skipped: ${referenceAbsence}`)
  for (const clip of clips.filter((c) => sizes.some((s) => c.label.startsWith(s)))) {
    const pair = await generatePair(clip)
    console.log(`  ${clip.label}: ${clip.width}x${clip.height}, ${clip.frames} frames (${pair.reference})`)
    for (const threads of threadCounts) {
      const svc: Sample[] = []
      const ref: Sample[] = []
      for (let r = 0; r < runs; r++) {
        // Alternate which goes first, so drift in the machine's load hits both sides alike.
        if (r % 2 === 0) svc.push(svcSample(clip, pair, threads, isa))
        if (withReference) ref.push(referenceSample(clip, pair, threads, isa))
        if (r % 2 === 1) svc.push(svcSample(clip, pair, threads, isa))
      }
      const s = summary(svc)
      let line = `    threads=${threads}  svc ${figures(s)}`
      if (withReference) {
        const f = summary(ref)
        const agree = Math.abs(s.vmaf - f.vmaf) <= goldenBound
        line += `  | reference ${figures(f)}  | ratio wall ${(s.wall / f.wall).toFixed(2)}  cpu ${(s.cpu / f.cpu).toFixed(2)}  rss ${(s.rssMiB / f.rssMiB).toFixed(2)}`
        line += `  | vmaf ${s.vmaf.toFixed(6)} vs ${f.vmaf.toFixed(6)} ${agree ? "agree" : "DISAGREE"}`
        if (!agree) process.exitCode = 1
      } else {
        line += `  vmaf ${s.vmaf.toFixed(6)}`
      }
      console.log(line)
    }
  }
}

if (import.meta.main) await benchVsReference()
