/**
 * `npm run bench`: prints throughput and latency figures. No targets are asserted here.
 * `npm run bench -- vs-reference`: only the side-by-side comparison with the reference vmaf;
 * `npm run bench -- job-store`: only the job stores under load (SQLite, PostgreSQL 1 and 2 replicas);
 * `npm run bench -- metrics`: only the extra metrics' cost (xpsnr, ssimulacra2) beside VMAF's and the reference tools.
 * `npm run bench -- alignment`: only the cost of options.sync "auto" (1080p, H.264 and raw YUV; 720p longer than the window).
 * `npm run bench -- decoders`: only the decoders' memory under the budget (adversarial inputs, peak RSS of the process tree).
 * `npm run bench -- shots` (or `bun bench/shots.ts`): only the cost of shot detection (options.shots).
 * `npm run bench -- segments` (or `bun bench/segments.ts`): only segment jobs against one pass (a pair and a ladder).
 */
import { benchAlignment } from "./alignment.ts"
import { benchController } from "./controller.ts"
import { benchDecoders } from "./decoders.ts"
import { benchEncoded } from "./encoded.ts"
import { benchJobStores } from "./job-store.ts"
import { benchLadder } from "./ladder.ts"
import { benchMetrics } from "./metrics.ts"
import { benchScorer } from "./scorer.ts"
import { benchSegments } from "./segments.ts"
import { benchServer } from "./server.ts"
import { benchShots } from "./shots.ts"
import { benchVsReference } from "./vs-reference.ts"

if (process.argv.includes("vs-reference")) {
  await benchVsReference()
} else if (process.argv.includes("job-store")) {
  await benchJobStores()
} else if (process.argv.includes("metrics")) {
  benchMetrics()
} else if (process.argv.includes("alignment")) {
  await benchAlignment()
} else if (process.argv.includes("decoders")) {
  await benchDecoders()
} else if (process.argv.includes("shots")) {
  benchShots()
} else if (process.argv.includes("segments")) {
  await benchSegments()
} else {
  benchScorer()
  benchShots()
  benchMetrics()
  benchEncoded()
  await benchAlignment()
  await benchDecoders()
  benchLadder()
  await benchSegments()
  await benchController()
  await benchJobStores()
  await benchServer()
}
