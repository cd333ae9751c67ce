/** `npm run bench`: prints throughput and latency figures. No targets are asserted here. */
import { benchScorer } from "./scorer.ts"

benchScorer()
