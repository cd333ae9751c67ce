/**
 * svc-server under load: requests per second and latency percentiles of `GET /v1/health` and of
 * `POST /v1/score` on a tiny pair (64x64 4:2:0 8-bit, 3 frames, generated here), each with 64
 * concurrent connections against the compiled executable. Figures only; nothing is asserted.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { startService } from "../local/executables.ts"

const seconds = 3
const connections = 64

interface Run {
  readonly requests: number
  readonly failures: ReadonlyMap<number, number>
  readonly perSecond: number
  /** Milliseconds, sorted. */
  readonly latencies: ReadonlyArray<number>
}

/** `connections` loops issuing `request` back to back for `seconds`; every latency is kept. */
const load = async (request: () => Promise<Response>): Promise<Run> => {
  const latencies: Array<number> = []
  const failures = new Map<number, number>()
  const deadline = performance.now() + seconds * 1000
  const loop = async () => {
    while (performance.now() < deadline) {
      const started = performance.now()
      const response = await request()
      await response.arrayBuffer()
      latencies.push(performance.now() - started)
      if (response.status !== 200) failures.set(response.status, (failures.get(response.status) ?? 0) + 1)
    }
  }
  const started = performance.now()
  await Promise.all(Array.from({ length: connections }, loop))
  const elapsed = (performance.now() - started) / 1000
  return {
    requests: latencies.length,
    failures,
    perSecond: latencies.length / elapsed,
    latencies: latencies.sort((a, b) => a - b)
  }
}

const percentile = (sorted: ReadonlyArray<number>, p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN

const report = (name: string, run: Run) => {
  const ms = (p: number) => `${percentile(run.latencies, p).toFixed(2)} ms`
  const failed = [...run.failures].map(([status, count]) => `${count}x${status}`).join(", ") || "none"
  console.log(`  ${name}: ${run.perSecond.toFixed(0)} req/s (${run.requests} requests; non-200: ${failed})`)
  console.log(`    latency p50 ${ms(50)}, p90 ${ms(90)}, p99 ${ms(99)}, max ${ms(100)}`)
}

/** A tiny raw pair: a gradient and the same gradient with noise, 64x64 4:2:0 8-bit, 3 frames. */
const tinyPair = (dir: string) => {
  const width = 64
  const height = 64
  const frameBytes = (width * height * 3) / 2
  const reference = new Uint8Array(frameBytes * 3)
  for (let i = 0; i < reference.length; i++) reference[i] = (i * 7 + (i >> 6) * 3) & 0xff
  const distorted = reference.map((value, i) => Math.max(0, Math.min(255, value + ((i * 2654435761) % 9) - 4)))
  const paths = { reference: join(dir, "tiny.ref.yuv"), distorted: join(dir, "tiny.dis.yuv") }
  writeFileSync(paths.reference, reference)
  writeFileSync(paths.distorted, distorted)
  return { ...paths, options: { width, height, pixel_format: "420", bitdepth: 8 } }
}

export const benchServer = async (): Promise<void> => {
  const scratch = mkdtempSync(join(tmpdir(), "svc-bench-server-"))
  const body = JSON.stringify(tinyPair(scratch))
  // The cap is not what is measured here: let every connection score.
  const server = await startService("svc-server", { env: { SVC_MAX_CONCURRENT_SCORES: String(connections) } })
  try {
    const health = () => fetch(`${server.http}/v1/health`)
    const score = () =>
      fetch(`${server.http}/v1/score`, { method: "POST", headers: { "content-type": "application/json" }, body })
    const warmUp = await score()
    if (warmUp.status !== 200) throw new Error(`the tiny pair does not score: ${warmUp.status} ${await warmUp.text()}`)
    console.log(`svc-server: ${connections} concurrent connections, ${seconds} s each`)
    report("GET /v1/health", await load(health))
    report("POST /v1/score (64x64 4:2:0 8-bit, 3 frames)", await load(score))
  } finally {
    await server.stop()
    rmSync(scratch, { recursive: true, force: true })
  }
}

if (import.meta.main) await benchServer()
