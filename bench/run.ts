/** `npm run bench`: prints throughput and latency figures. No targets are asserted here. */
import { benchController } from "./controller.ts"
import { benchEncoded } from "./encoded.ts"
import { benchJobStores } from "./job-store.ts"
import { benchScorer } from "./scorer.ts"
import { benchServer } from "./server.ts"

benchScorer()
benchEncoded()
await benchController()
await benchJobStores()
await benchServer()
