/**
 * Reads a JSON request body of at most `limit` bytes. A declared Content-Length over the limit
 * is refused before any byte is read; a chunked body is counted as it streams and reading
 * stops at the first chunk past the limit, so an oversized body never sits in memory.
 */
import type { HttpServerRequest } from "@effect/platform"
import { Effect, Stream } from "effect"
import { InvalidScoreRequest } from "../scorer/errors.ts"
import { BodyTooLarge } from "./errors.ts"

const concat = (chunks: ReadonlyArray<Uint8Array>, size: number): Uint8Array => {
  const bytes = new Uint8Array(size)
  let offset = 0
  for (const chunk of chunks) {
    bytes.set(chunk, offset)
    offset += chunk.length
  }
  return bytes
}

const utf8 = new TextDecoder("utf-8", { fatal: true })

export const readJsonBody = (
  request: HttpServerRequest.HttpServerRequest,
  limit: number
): Effect.Effect<unknown, BodyTooLarge | InvalidScoreRequest> =>
  Effect.gen(function* () {
    const declared = request.headers["content-length"]
    if (declared !== undefined && Number(declared) > limit) return yield* new BodyTooLarge({ limit })
    // A request without a body has no stream to read (reading it fails): it is "", which JSON refuses.
    const absent = request.source instanceof Request && request.source.body === null
    const chunks: Array<Uint8Array> = []
    const size = absent
      ? 0
      : yield* request.stream.pipe(
          Stream.mapError(() => new InvalidScoreRequest({ message: "the request body could not be read" })),
          Stream.runFoldEffect(0, (total, chunk) => {
            const next = total + chunk.length
            if (next > limit) return Effect.fail(new BodyTooLarge({ limit }))
            chunks.push(chunk)
            return Effect.succeed(next)
          })
        )
    const text = yield* Effect.try({
      try: () => utf8.decode(concat(chunks, size)),
      catch: () => new InvalidScoreRequest({ message: "the request body is not UTF-8 text" })
    })
    return yield* Effect.try({
      try: (): unknown => JSON.parse(text),
      catch: (error) =>
        new InvalidScoreRequest({
          message: `the request body is not valid JSON: ${error instanceof Error ? error.message : String(error)}`
        })
    })
  })
