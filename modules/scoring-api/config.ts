/** SVC_* settings of the scoring surface (svc-server; the controller reuses them). */
import { defaultConcurrency, flag, integerIn } from "../config/env.ts"

/** Scores in flight across HTTP and gRPC; the next one is refused at once (429). */
export const maxConcurrentScores = integerIn("SVC_MAX_CONCURRENT_SCORES", defaultConcurrency(), 1, 4096)

/** Enables "Try it out" in /apidocs; off so that nobody scores by accident in production. */
export const apidocsTryIt = flag("SVC_APIDOCS_TRY_IT", false)

/** Largest POST /v1/score body (seed 001, section 8). */
export const maxBodyBytes = 1024 * 1024
