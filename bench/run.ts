/**
 * `npm run bench`: prints throughput and latency figures. No targets are asserted here.
 * `npm run bench -- vs-reference`: only the side-by-side comparison with the reference vmaf;
 * `bun bench/shots.ts`: only the cost of shot detection.
 */
import { benchController } from "./controller.ts"
import { benchEncoded } from "./encoded.ts"
import { benchJobStores } from "./job-store.ts"
import { benchLadder } from "./ladder.ts"
import { benchScorer } from "./scorer.ts"
import { benchSegments } from "./segments.ts"
import { benchServer } from "./server.ts"
import { benchShots } from "./shots.ts"
import { benchVsReference } from "./vs-reference.ts"

if (process.argv.includes("vs-reference")) {
  benchVsReference()
} else {
  benchScorer()
  benchShots()
  benchEncoded()
  benchLadder()
  await benchSegments()
  await benchController()
  await benchJobStores()
  await benchServer()
}
