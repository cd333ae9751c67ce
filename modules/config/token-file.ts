/**
 * A bearer token read from a file (SVC_CONTROLLER_TOKEN_FILE), re-read whenever the file changes
 * (secret rotation by the orchestrator replaces it), checked on every call: a stat is cheap.
 * Shared by the clients of the controller (svc-node, svc-mcp). No blocking call: stat and read
 * run off the JavaScript thread.
 */
import { Data, Effect, Option, Ref } from "effect"
import { readFile, stat } from "node:fs/promises"

export class TokenFileError extends Data.TaggedError("TokenFileError")<{
  readonly path: string
  readonly message: string
}> {}

interface Cached {
  readonly stamp: string
  readonly token: string
}

const describe = (error: unknown): string => (error instanceof Error ? error.message : String(error))

/** Returns an Effect that yields the current token (undefined when no file is configured). */
export const makeTokenSource = (path: Option.Option<string>) =>
  Effect.map(Ref.make<Cached | undefined>(undefined), (cache) =>
    Option.match(path, {
      onNone: () => Effect.succeed<string | undefined>(undefined),
      onSome: (file) =>
        Effect.flatMap(Ref.get(cache), (cached) =>
          Effect.tryPromise({
            try: async () => {
              const info = await stat(file)
              const stamp = `${info.ino}:${info.size}:${info.mtimeMs}`
              if (cached?.stamp === stamp) return cached
              return { stamp, token: (await readFile(file, "utf8")).trim() }
            },
            catch: (error) => new TokenFileError({ path: file, message: describe(error) })
          }).pipe(
            Effect.tap((fresh) => (fresh === cached ? Effect.void : Ref.set(cache, fresh))),
            Effect.map((fresh): string | undefined => fresh.token)
          )
        )
    })
  )
