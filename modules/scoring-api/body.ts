/**
 * Reads a JSON request body of at most `limit` bytes. A declared Content-Length over the limit
 * is refused before any byte is read; a chunked body is counted as it streams and reading
 * stops at the first chunk past the limit, so an oversized body never sits in memory.
 */
import type { HttpServerRequest } from "@effect/platform"
import { Effect, Stream } from "effect"
import { InvalidScoreRequest } from "../scorer/index.ts"
import { BodyTooLarge, UnsupportedMediaType } from "./errors.ts"

/** Deepest nesting of arrays and objects a body may have; a score request needs three. */
export const maxJsonDepth = 64

/**
 * The deepest nesting of `[`/`{` outside strings, stopping once past `limit` (so a body nested
 * 20,000 deep is refused before the parser recurses into it).
 */
const nestingDepth = (text: string, limit: number): number => {
  let depth = 0
  let deepest = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 0x5c)
        i++ // backslash: skip the escaped character
      else if (c === 0x22) inString = false
    } else if (c === 0x22) inString = true
    else if (c === 0x5b || c === 0x7b) {
      depth++
      if (depth > deepest) deepest = depth
      if (deepest > limit) return deepest
    } else if (c === 0x5d || c === 0x7d) depth--
  }
  return deepest
}

/** `application/json` or a `+json` type, any parameters; an absent header is taken as JSON. */
const isJsonMediaType = (header: string | undefined): boolean => {
  if (header === undefined || header.trim() === "") return true
  const type = header.split(";")[0]?.trim().toLowerCase() ?? ""
  return type === "application/json" || /^application\/[a-z0-9.+-]+\+json$/.test(type)
}

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
): Effect.Effect<unknown, BodyTooLarge | InvalidScoreRequest | UnsupportedMediaType> =>
  Effect.gen(function* () {
    const contentType = request.headers["content-type"]
    if (!isJsonMediaType(contentType)) return yield* new UnsupportedMediaType({ contentType: contentType ?? "" })
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
    if (nestingDepth(text, maxJsonDepth) > maxJsonDepth)
      return yield* new InvalidScoreRequest({
        message: `the request body nests arrays and objects deeper than ${maxJsonDepth} levels`
      })
    return yield* Effect.try({
      try: (): unknown => JSON.parse(text),
      catch: (error) =>
        new InvalidScoreRequest({
          message: `the request body is not valid JSON: ${error instanceof Error ? error.message : String(error)}`
        })
    })
  })
