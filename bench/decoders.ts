/**
 * Decoders inside the memory budget (issue 27): the compiled svc-server with
 * SVC_MAX_SCORE_MEMORY=256Mi, fed the adversarial inputs (a 320x240 clip against two 16000x16000
 * frames, twice at once; 16-rendition ladders of 8000x8000 and of 16000x16000 frames; 16 and 2
 * renditions of the small clip), each answer with the peak resident memory of the server's whole
 * process tree (server and ffmpeg children, summed every 100 ms from /proc) and the wall time.
 * Without the budget's decoder estimates these took 2.95 GB, 5.5-6.3 GB and about 22 GB. Figures
 * only; the limits themselves are asserted in test/e2e/decoders.test.ts.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { gunzipSync } from "node:zlib"
import { writeClip } from "../local/clip.ts"
import { repoRoot, type RunningService, startService } from "../local/executables.ts"
import { peakWhile } from "../local/process-tree.ts"

const budget = "256Mi"
const mebibyte = 1024 * 1024

const post = (service: RunningService, path: string, body: unknown) =>
  fetch(`${service.http}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body)
  }).then(async (response) => {
    const answer = (await response.json()) as { error?: string }
    return `${response.status}${answer.error ? ` (${answer.error.slice(0, 70)}...)` : ""}`
  })

export const benchDecoders = async (): Promise<void> => {
  const dir = mkdtempSync(join(tmpdir(), "svc-bench-decoders-"))
  const service = await startService("svc-server", { env: { SVC_MAX_SCORE_MEMORY: budget } })
  try {
    const unpack = (name: string) => {
      const path = join(dir, name)
      writeFileSync(path, gunzipSync(readFileSync(join(repoRoot, "test", "media", `${name}.gz`))))
      return path
    }
    const huge = unpack("gray-16000x16000.mp4")
    const big = unpack("gray-8000x8000.mp4")
    const small = await writeClip(join(dir, "small.mp4"), {
      width: 320,
      height: 240,
      frames: 10,
      codec: "libx264",
      preset: "ultrafast"
    })
    const ladder = (distorted: string, count: number) => ({
      reference: small,
      renditions: Array.from({ length: count }, (_, i) => ({ label: `r${i}`, distorted }))
    })
    const cases: ReadonlyArray<readonly [string, () => Promise<ReadonlyArray<string>>]> = [
      [
        "2 concurrent scores, 320x240 vs 16000x16000",
        () =>
          Promise.all([
            post(service, "/v1/score", { reference: small, distorted: huge }),
            post(service, "/v1/score", { reference: small, distorted: huge })
          ])
      ],
      ["ladder, 16 renditions of 8000x8000", async () => [await post(service, "/v1/ladder", ladder(big, 16))]],
      ["ladder, 16 renditions of 16000x16000", async () => [await post(service, "/v1/ladder", ladder(huge, 16))]],
      ["ladder, 16 renditions of 320x240", async () => [await post(service, "/v1/ladder", ladder(small, 16))]],
      [
        "ladder, 2 renditions of 320x240 (fits: scored)",
        async () => [await post(service, "/v1/ladder", ladder(small, 2))]
      ]
    ]
    console.log(`decoders under SVC_MAX_SCORE_MEMORY=${budget}: peak RSS of svc-server's process tree (every 100 ms)`)
    console.log(`  idle server: ${(peakIdle(service) / mebibyte).toFixed(0)} MiB`)
    for (const [name, run] of cases) {
      const started = performance.now()
      const { result, peak } = await peakWhile(service.process.pid, run())
      const seconds = (performance.now() - started) / 1000
      console.log(
        `  ${name}: peak ${(peak / mebibyte).toFixed(0)} MiB, ${seconds.toFixed(2)} s; answers ${result.join(", ")}`
      )
    }
    const metrics = await fetch(`${service.http}/metrics`).then((response) => response.text())
    const decoderPeak = Number(/^svc_decoder_memory_peak_bytes (\d+)$/m.exec(metrics)?.[1] ?? 0)
    console.log(
      `  /metrics svc_decoder_memory_peak_bytes (largest decoder VmHWM): ${(decoderPeak / mebibyte).toFixed(0)} MiB`
    )
  } finally {
    await service.stop()
    rmSync(dir, { recursive: true, force: true })
  }
}

/** The idle server's resident memory (its tree has no children yet). */
const peakIdle = (service: RunningService) => {
  const status = readFileSync(`/proc/${service.process.pid}/status`, "utf8")
  return Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1] ?? 0) * 1024
}

if (import.meta.main) await benchDecoders()
