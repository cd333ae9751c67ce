/**
 * A small Kubernetes API client for svc-operator over Bun's `fetch` with the service-account CA
 * (`tls.ca`): `@kubernetes/client-node` 2.x under Bun ignores the agent that carries the CA, so TLS
 * to a real API server fails with it. The API is located as the tenant source does
 * (modules/auth/tenant-source.ts): KUBERNETES_SERVICE_HOST/_PORT and the service-account files;
 * the token is re-read on every request (projected tokens rotate).
 */
import { Data, Duration, Effect, Stream } from "effect"
import { readFile } from "node:fs/promises"

export class KubeError extends Data.TaggedError("KubeError")<{
  readonly status: number
  readonly reason: string
  readonly message: string
}> {}

/** Where and how to reach the API. */
export interface KubeAccess {
  readonly apiBase: string
  readonly tokenPath: string
  /** PEM bundle trusted for the API server; undefined for plain http. */
  readonly caPath: string | undefined
}

export interface KubeObject {
  readonly apiVersion?: string
  readonly kind?: string
  readonly metadata: {
    readonly name: string
    readonly namespace?: string
    readonly uid?: string
    readonly resourceVersion?: string
    readonly generation?: number
    readonly finalizers?: ReadonlyArray<string>
    readonly deletionTimestamp?: string
    readonly creationTimestamp?: string
  }
  readonly spec?: unknown
  readonly status?: unknown
}

export interface KubeList<T> {
  readonly metadata: { readonly resourceVersion: string; readonly continue?: string }
  readonly items: ReadonlyArray<T>
}

export interface WatchEvent<T> {
  readonly type: "ADDED" | "MODIFIED" | "DELETED" | "BOOKMARK" | "ERROR"
  readonly object: T
}

const REQUEST_TIMEOUT = Duration.seconds(15)
/**
 * Most bytes read of one response or one watch event, however the response is framed (a
 * Content-Length, chunked, or neither): counted as they arrive, the read stops past it. The
 * API server stores objects of at most about 1.5 MB (etcd's request limit), so one object always
 * fits; a list page that does not is asked again with a smaller `limit` (operator.ts).
 */
export const MAX_RESPONSE_BYTES = 2 * 1024 * 1024

const tooLarge = (what: string) =>
  new KubeError({ status: 0, reason: "TooLarge", message: `${what}: more than ${MAX_RESPONSE_BYTES} bytes` })

export const isTooLarge = (error: KubeError) => error.reason === "TooLarge"

/**
 * Reads a body up to `limit` bytes; past it, cancels the body and answers undefined. A declared
 * length is read into one buffer of that size (no copy to join the chunks).
 */
const readCapped = async (
  body: ReadableStream<Uint8Array> | null,
  limit: number,
  declared = 0
): Promise<string | undefined> => {
  if (body === null) return ""
  const reader = body.getReader()
  let buffer = new Uint8Array(declared > 0 && declared <= limit ? declared : 64 * 1024)
  let total = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    if (total + value.byteLength > limit) {
      await reader.cancel().catch(() => undefined)
      return undefined
    }
    if (total + value.byteLength > buffer.byteLength) {
      const grown = new Uint8Array(Math.min(limit, Math.max(buffer.byteLength * 2, total + value.byteLength)))
      grown.set(buffer.subarray(0, total))
      buffer = grown
    }
    buffer.set(value, total)
    total += value.byteLength
  }
  return new TextDecoder().decode(buffer.subarray(0, total))
}

/** Lines of a watch stream, each at most `limit` bytes (a longer one fails the watch). */
async function* cappedLines(body: ReadableStream<Uint8Array>, limit: number, what: string): AsyncGenerator<string> {
  const reader = body.getReader()
  let pending: Array<Uint8Array> = []
  let pendingBytes = 0
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      let start = 0
      for (let newline = value.indexOf(10); newline >= 0; newline = value.indexOf(10, start)) {
        const part = value.subarray(start, newline)
        if (pendingBytes + part.byteLength > limit) throw tooLarge(what)
        const line = new TextDecoder().decode(Buffer.concat([...pending, part]))
        pending = []
        pendingBytes = 0
        start = newline + 1
        yield line
      }
      const rest = value.subarray(start)
      pendingBytes += rest.byteLength
      if (pendingBytes > limit) throw tooLarge(what)
      if (rest.byteLength > 0) pending.push(rest)
    }
  } finally {
    await reader.cancel().catch(() => undefined)
  }
}

const describe = (cause: unknown) => (cause instanceof Error ? cause.message : String(cause))

export interface KubeClient {
  readonly request: <T>(method: string, path: string, body?: unknown) => Effect.Effect<T, KubeError>
  /** Watch events of a collection from `resourceVersion`; ends when the server closes the stream. */
  readonly watch: <T>(path: string, resourceVersion: string) => Stream.Stream<WatchEvent<T>, KubeError>
}

export const makeKubeClient = (access: KubeAccess): Effect.Effect<KubeClient, KubeError> =>
  Effect.gen(function* () {
    const ca = yield* Effect.tryPromise({
      try: () =>
        access.caPath !== undefined && access.apiBase.startsWith("https:")
          ? readFile(access.caPath, "utf8")
          : Promise.resolve(undefined),
      catch: (cause) =>
        new KubeError({
          status: 0,
          reason: "Configuration",
          message: `cannot read ${access.caPath}: ${describe(cause)}`
        })
    })
    const token = Effect.tryPromise({
      try: () => readFile(access.tokenPath, "utf8").then((text) => text.trim()),
      catch: (cause) =>
        new KubeError({
          status: 0,
          reason: "Configuration",
          message: `cannot read ${access.tokenPath}: ${describe(cause)}`
        })
    })
    const send = (method: string, path: string, body: unknown, signal: AbortSignal) =>
      Effect.flatMap(token, (bearer) =>
        Effect.tryPromise({
          try: () =>
            fetch(`${access.apiBase}${path}`, {
              method,
              signal,
              headers: {
                authorization: `Bearer ${bearer}`,
                accept: "application/json",
                ...(body === undefined ? {} : { "content-type": "application/json" })
              },
              ...(body === undefined ? {} : { body: JSON.stringify(body) }),
              ...(ca === undefined ? {} : { tls: { ca } })
            }),
          catch: (cause) =>
            new KubeError({ status: 0, reason: "Unreachable", message: `${method} ${path}: ${describe(cause)}` })
        })
      )
    const failure = (method: string, path: string, status: number, text: string) => {
      let reason = "Unknown"
      let message = text.slice(0, 500)
      try {
        const parsed = JSON.parse(text) as { reason?: string; message?: string }
        reason = parsed.reason ?? reason
        message = parsed.message ?? message
      } catch {
        // not a Status object: keep the text
      }
      return new KubeError({ status, reason, message: `${method} ${path}: ${status} ${message}` })
    }

    const request = <T>(method: string, path: string, body?: unknown): Effect.Effect<T, KubeError> =>
      Effect.acquireUseRelease(
        Effect.sync(() => new AbortController()),
        (abort) =>
          Effect.gen(function* () {
            const response = yield* send(method, path, body, abort.signal)
            // A declared length over the cap is refused unread; any other body is counted as it comes.
            const length = Number(response.headers.get("content-length") ?? "0")
            if (length > MAX_RESPONSE_BYTES) return yield* tooLarge(`${method} ${path}`)
            const text = yield* Effect.tryPromise({
              try: () => readCapped(response.body, MAX_RESPONSE_BYTES, length),
              catch: (cause) =>
                new KubeError({ status: 0, reason: "Unreachable", message: `${method} ${path}: ${describe(cause)}` })
            })
            if (text === undefined) return yield* tooLarge(`${method} ${path}`)
            if (response.status >= 300) return yield* failure(method, path, response.status, text)
            return JSON.parse(text) as T
          }).pipe(
            Effect.timeoutFail({
              duration: REQUEST_TIMEOUT,
              onTimeout: () => new KubeError({ status: 0, reason: "Timeout", message: `${method} ${path}: timed out` })
            })
          ),
        (abort) => Effect.sync(() => abort.abort())
      )

    const watch = <T>(path: string, resourceVersion: string): Stream.Stream<WatchEvent<T>, KubeError> =>
      Stream.unwrapScoped(
        Effect.gen(function* () {
          const abort = yield* Effect.acquireRelease(
            Effect.sync(() => new AbortController()),
            (controller) => Effect.sync(() => controller.abort())
          )
          const separator = path.includes("?") ? "&" : "?"
          const url = `${path}${separator}watch=true&allowWatchBookmarks=true&resourceVersion=${encodeURIComponent(resourceVersion)}`
          const response = yield* send("GET", url, undefined, abort.signal)
          if (response.status >= 300 || response.body === null) {
            const text = yield* Effect.promise(() =>
              readCapped(response.body, 64 * 1024)
                .then((read) => read ?? "")
                .catch(() => "")
            )
            return yield* failure("GET", url, response.status, text)
          }
          const lines = cappedLines(response.body, MAX_RESPONSE_BYTES, `watch ${path}`)
          // The stream's finalizer awaits the generator's return, which an async generator queues
          // behind its pending read: a quiet watch would hold an interrupted resync round or a
          // SIGTERM until the server next wrote. Aborting the request first ends that read.
          const abortable: AsyncIterable<string> = {
            [Symbol.asyncIterator]: () => ({
              next: () => lines.next(),
              return: () => {
                abort.abort()
                return lines.return(undefined)
              }
            })
          }
          return Stream.fromAsyncIterable(abortable, (cause) =>
            cause instanceof KubeError
              ? cause
              : new KubeError({ status: 0, reason: "Unreachable", message: `watch ${path}: ${describe(cause)}` })
          ).pipe(
            Stream.filter((line) => line.trim() !== ""),
            Stream.map((line) => JSON.parse(line) as WatchEvent<T>)
          )
        })
      )

    return { request, watch }
  })

/** Whether a failure is an optimistic-concurrency conflict (resourceVersion changed). */
export const isConflict = (error: KubeError) => error.status === 409
export const isNotFound = (error: KubeError) => error.status === 404
