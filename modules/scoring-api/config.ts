/** SVC_* settings of the scoring surface (svc-server; the controller reuses them). */
import { type Config, type ConfigError, Effect, Either, Option } from "effect"
import { defaultConcurrency, flag, integerIn, invalid, optionalText } from "../config/env.ts"
import { processMemoryLimit } from "../config/memory-limit.ts"

/** Scores in flight across HTTP and gRPC; the next one is refused at once (429). */
export const maxConcurrentScores = integerIn("SVC_MAX_CONCURRENT_SCORES", defaultConcurrency(), 1, 4096)

/**
 * Score slots one tenant may hold at once on the controller (SVC_TENANT_MAX_CONCURRENT_SCORES);
 * unset: no cap of its own, only the shared one.
 */
export const tenantMaxConcurrentScores: Effect.Effect<Option.Option<number>, ConfigError.ConfigError> = Effect.flatMap(
  optionalText("SVC_TENANT_MAX_CONCURRENT_SCORES"),
  Option.match({
    onNone: () => Effect.succeed(Option.none()),
    onSome: () => Effect.map(integerIn("SVC_TENANT_MAX_CONCURRENT_SCORES", 1, 1, 4096), Option.some)
  })
)

/** Enables "Try it out" in /apidocs; off so that nobody scores by accident in production. */
export const apidocsTryIt = flag("SVC_APIDOCS_TRY_IT", false)

/** Largest POST /v1/score body (seed 001, section 8). */
export const maxBodyBytes = 1024 * 1024

const binaryUnits: Readonly<Record<string, number>> = { "": 1, Ki: 1024, Mi: 1024 ** 2, Gi: 1024 ** 3, Ti: 1024 ** 4 }

/** Bytes with an optional binary suffix: `1073741824`, `512Mi`, `2Gi`. */
export const parseByteSize = (text: string): Either.Either<number, string> => {
  const match = /^(\d+)(Ki|Mi|Gi|Ti)?$/.exec(text.trim())
  const value = match ? Number(match[1]) * (binaryUnits[match[2] ?? ""] ?? Number.NaN) : Number.NaN
  return Number.isSafeInteger(value) && value > 0
    ? Either.right(value)
    : Either.left(`must be a positive number of bytes, optionally with Ki, Mi, Gi or Ti; got "${text}"`)
}

/** The memory limit of this process's cgroups (v2 `memory.max`, v1 `memory.limit_in_bytes`), else the host's memory. */
const memoryLimit = Effect.promise(processMemoryLimit)

/**
 * Memory that the scores in flight may hold together (SVC_MAX_SCORE_MEMORY); default half the
 * process's memory limit. A score is admitted on the native library's estimate of its needs.
 */
export const maxScoreMemory: Effect.Effect<number, ConfigError.ConfigError> = Effect.flatMap(
  optionalText("SVC_MAX_SCORE_MEMORY"),
  Option.match({
    onNone: () => Effect.map(memoryLimit, (limit) => Math.floor(limit / 2)),
    onSome: (text) =>
      Either.match(parseByteSize(text), {
        onLeft: (rule) => Effect.fail(invalid("SVC_MAX_SCORE_MEMORY", rule)),
        onRight: Effect.succeed
      })
  })
)

/** svc-server's optional allowlist of input directories (comma-separated); unset: any path. */
export const inputRoots: Config.Config<Option.Option<string>> = optionalText("SVC_INPUT_ROOTS")
