/**
 * Building blocks for reading SVC_* variables with Effect Config. Every refusal names the
 * variable and the rule, so a start-up failure says exactly what to fix.
 */
import { Config, ConfigError, Either, Option } from "effect"
import { cpus } from "node:os"

export const invalid = (variable: string, rule: string): ConfigError.ConfigError =>
  ConfigError.InvalidData([variable], rule)

const parsed = <A>(
  variable: string,
  config: Config.Config<string>,
  parse: (text: string) => Either.Either<A, string>
) => config.pipe(Config.mapOrFail((text) => Either.mapLeft(parse(text.trim()), (rule) => invalid(variable, rule))))

export interface ListenAddress {
  readonly host: string
  readonly port: number
}

/** `host:port`, `[v6]:port` or `:port` (all interfaces). */
export const parseListenAddress = (text: string): Either.Either<ListenAddress, string> => {
  const match = /^(?:\[([0-9a-fA-F:.]+)\]|([^:[\]]*)):(\d{1,5})$/.exec(text)
  const port = match ? Number(match[3]) : Number.NaN
  if (!match || port > 65535) return Either.left(`must be host:port with a port from 0 to 65535; got "${text}"`)
  return Either.right({ host: match[1] ?? (match[2] === "" ? "0.0.0.0" : (match[2] ?? "0.0.0.0")), port })
}

export const listenAddress = (variable: string, fallback: string): Config.Config<ListenAddress> =>
  parsed(variable, Config.string(variable).pipe(Config.withDefault(fallback)), parseListenAddress)

/** A whole number within [min, max]. */
export const integerIn = (variable: string, fallback: number, min: number, max: number): Config.Config<number> =>
  parsed(variable, Config.string(variable).pipe(Config.withDefault(String(fallback))), (text) => {
    const value = /^-?\d+$/.test(text) ? Number(text) : Number.NaN
    return Number.isSafeInteger(value) && value >= min && value <= max
      ? Either.right(value)
      : Either.left(`must be a whole number from ${min} to ${max}; got "${text}"`)
  })

const truthy = new Set(["true", "1", "yes", "on"])
const falsy = new Set(["false", "0", "no", "off", ""])

export const flag = (variable: string, fallback = false): Config.Config<boolean> =>
  parsed(variable, Config.string(variable).pipe(Config.withDefault(String(fallback))), (text) => {
    const lower = text.toLowerCase()
    if (truthy.has(lower)) return Either.right(true)
    if (falsy.has(lower)) return Either.right(false)
    return Either.left(`must be true or false; got "${text}"`)
  })

/** A non-empty string; absent gives the fallback. */
export const text = (variable: string, fallback: string): Config.Config<string> =>
  parsed(variable, Config.string(variable).pipe(Config.withDefault(fallback)), (value) =>
    value === "" ? Either.left("must not be empty") : Either.right(value)
  )

/** An optional non-empty string. */
export const optionalText = (variable: string): Config.Config<Option.Option<string>> =>
  Config.option(Config.string(variable)).pipe(Config.map(Option.filter((value) => value.trim() !== "")))

/** Model directory shared by every executable that scores; unset: the built-in models only. */
export const modelDir: Config.Config<Option.Option<string>> = optionalText("SVC_MODEL_DIR")

export const defaultConcurrency = (): number => Math.max(1, cpus().length)
