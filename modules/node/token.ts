/**
 * The node's bearer token from SVC_CONTROLLER_TOKEN_FILE, re-read whenever the file changes
 * (secret rotation by the orchestrator replaces it), checked on every call: a stat is cheap.
 */
import { Data, Effect, Option, Ref } from "effect"
import { readFileSync, statSync } from "node:fs"

export class TokenFileError extends Data.TaggedError("TokenFileError")<{
  readonly path: string
  readonly message: string
}> {}

interface Cached {
  readonly stamp: string
  readonly token: string
}

const stampOf = (path: string): string => {
  const stat = statSync(path)
  return `${stat.ino}:${stat.size}:${stat.mtimeMs}`
}

/** Returns an Effect that yields the current token (undefined when no file is configured). */
export const makeTokenSource = (path: Option.Option<string>) =>
  Effect.map(Ref.make<Cached | undefined>(undefined), (cache) =>
    Option.match(path, {
      onNone: () => Effect.succeed<string | undefined>(undefined),
      onSome: (file) =>
        Effect.flatMap(Ref.get(cache), (cached) =>
          Effect.try({
            try: () => {
              const stamp = stampOf(file)
              if (cached?.stamp === stamp) return cached
              return { stamp, token: readFileSync(file, "utf8").trim() }
            },
            catch: (error) =>
              new TokenFileError({ path: file, message: error instanceof Error ? error.message : String(error) })
          }).pipe(
            Effect.tap((fresh) => (fresh === cached ? Effect.void : Ref.set(cache, fresh))),
            Effect.map((fresh): string | undefined => fresh.token)
          )
        )
    })
  )
