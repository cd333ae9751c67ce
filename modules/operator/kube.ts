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
/** Largest response read from the API (a list page of SvcJobs). */
const MAX_BODY_BYTES = 16 * 1024 * 1024

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
            const length = Number(response.headers.get("content-length") ?? "0")
            if (length > MAX_BODY_BYTES)
              return yield* new KubeError({ status: 0, reason: "TooLarge", message: `${path}: response too large` })
            const text = yield* Effect.tryPromise({
              try: () => response.text(),
              catch: (cause) =>
                new KubeError({ status: 0, reason: "Unreachable", message: `${method} ${path}: ${describe(cause)}` })
            })
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
            const text = yield* Effect.promise(() => response.text().catch(() => ""))
            return yield* failure("GET", url, response.status, text)
          }
          const body = response.body
          return Stream.fromReadableStream({
            evaluate: () => body,
            onError: (cause) =>
              new KubeError({ status: 0, reason: "Unreachable", message: `watch ${path}: ${describe(cause)}` })
          }).pipe(
            Stream.decodeText(),
            Stream.splitLines,
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
