/**
 * A small bounded HTTP GET used by the JWKS cache and the orchestrator source: a
 * timeout over the whole exchange, a response-size bound, and redirects followed by
 * hand so that none leads to plain http outside loopback (seed 5.1.6).
 */
import { Data, Duration, Effect } from "effect"
import { isLoopbackHost } from "./urls.ts"

export class HttpGetError extends Data.TaggedError("HttpGetError")<{ readonly message: string }> {}

export interface HttpGetOptions {
  readonly timeoutMillis: number
  readonly maxBodyBytes: number
  readonly maxRedirects: number
  readonly headers?: Readonly<Record<string, string>>
  /** PEM bundle of trusted CAs for https (the orchestrator's `ca.crt`). */
  readonly caCertificates?: string
}

export interface HttpGetResponse {
  readonly status: number
  readonly body: string
}

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308])

const readBounded = async (response: Response, maxBytes: number): Promise<string | undefined> => {
  if (response.body === null) return ""
  const reader = response.body.getReader()
  const chunks: Array<Uint8Array> = []
  let size = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.byteLength
    if (size > maxBytes) {
      await reader.cancel()
      return undefined
    }
    chunks.push(value)
  }
  return new TextDecoder().decode(Buffer.concat(chunks))
}

/** Why a redirect target is refused, or undefined when it may be followed. */
export const redirectProblem = (target: URL): string | undefined => {
  if (target.protocol === "https:") return undefined
  if (target.protocol === "http:" && isLoopbackHost(target.hostname)) return undefined
  return `redirect to ${target.protocol}//${target.host} refused: only https, or plain http to loopback`
}

export const httpGet = (url: string, options: HttpGetOptions): Effect.Effect<HttpGetResponse, HttpGetError> => {
  const fail = (at: string, message: string) => new HttpGetError({ message: `GET ${at}: ${message}` })
  // One signal for the whole exchange, body included, aborted when it ends or times out.
  const abort = new AbortController()
  const exchange = Effect.gen(function* () {
    let current = url
    for (let hop = 0; hop <= options.maxRedirects; hop++) {
      const target = current
      const response = yield* Effect.tryPromise({
        try: () =>
          fetch(target, {
            redirect: "manual",
            signal: abort.signal,
            headers: options.headers,
            ...(options.caCertificates === undefined ? {} : { tls: { ca: options.caCertificates } })
          }),
        catch: (cause) => fail(target, `request failed: ${String(cause)}`)
      })
      const location = response.headers.get("location")
      if (REDIRECT_STATUSES.has(response.status) && location !== null) {
        yield* Effect.promise(() => response.body?.cancel() ?? Promise.resolve())
        const next = URL.parse(location, target)
        if (next === null) return yield* Effect.fail(fail(target, `invalid redirect location "${location}"`))
        const problem = redirectProblem(next)
        if (problem !== undefined) return yield* Effect.fail(fail(target, problem))
        current = next.href
        continue
      }
      const body = yield* Effect.tryPromise({
        try: () => readBounded(response, options.maxBodyBytes),
        catch: (cause) => fail(target, `reading the response failed: ${String(cause)}`)
      })
      if (body === undefined)
        return yield* Effect.fail(fail(target, `response larger than ${options.maxBodyBytes} bytes`))
      return { status: response.status, body }
    }
    return yield* Effect.fail(fail(url, `more than ${options.maxRedirects} redirects`))
  })
  return exchange.pipe(
    Effect.ensuring(Effect.sync(() => abort.abort())),
    Effect.timeoutFail({
      duration: Duration.millis(options.timeoutMillis),
      onTimeout: () => fail(url, `no complete response within ${options.timeoutMillis} ms`)
    })
  )
}
