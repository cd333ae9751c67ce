/**
 * Structured logging: one JSON object per line on stderr (stdout is kept for command output),
 * minimum level from SVC_LOG_LEVEL.
 */
import { Config, Either, Layer, Logger, LogLevel } from "effect"
import { invalid } from "../config/env.ts"

const levels: Readonly<Record<string, LogLevel.LogLevel>> = {
  all: LogLevel.All,
  trace: LogLevel.Trace,
  debug: LogLevel.Debug,
  info: LogLevel.Info,
  warning: LogLevel.Warning,
  warn: LogLevel.Warning,
  error: LogLevel.Error,
  fatal: LogLevel.Fatal,
  none: LogLevel.None
}

export const logLevelConfig: Config.Config<LogLevel.LogLevel> = Config.string("SVC_LOG_LEVEL").pipe(
  Config.withDefault("info"),
  Config.mapOrFail((text) => {
    const level = levels[text.trim().toLowerCase()]
    return level
      ? Either.right(level)
      : Either.left(invalid("SVC_LOG_LEVEL", `must be one of ${Object.keys(levels).join(", ")}; got "${text}"`))
  })
)

/** JSON lines on stderr at the configured level; replaces Effect's default console logger. */
export const JsonLoggerLive = Layer.unwrapEffect(
  Config.map(logLevelConfig, (level) =>
    Layer.merge(
      Logger.replace(Logger.defaultLogger, Logger.withConsoleError(Logger.jsonLogger)),
      Logger.minimumLogLevel(level)
    )
  )
)
