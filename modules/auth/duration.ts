/** Go-style durations (`30s`, `1m30s`, `1.5h`, `500ms`), as used by `SVC_AUTH_TENANTS_REFRESH`. */

const UNIT_MILLIS: Readonly<Record<string, number>> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000
}

const WHOLE = /^(?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|µs|ms|s|m|h)(?:(?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|µs|ms|s|m|h))*$/
const PART = /(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)/g

/** Milliseconds, or undefined when the text is not a positive Go duration. */
export const parseGoDuration = (text: string): number | undefined => {
  if (text === "0") return 0
  if (!WHOLE.test(text)) return undefined
  let total = 0
  for (const [, amount = "0", unit = "ms"] of text.matchAll(PART)) total += Number(amount) * (UNIT_MILLIS[unit] ?? 0)
  return total
}
