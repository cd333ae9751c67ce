/**
 * The scorer, initialised in the background so that the transports listen at once and
 * readiness can say "not ready" (with the reason) until the native library and model store
 * are up, or for good if they fail to start.
 */
import { statSync } from "node:fs"
import { Cause, Context, Effect, Layer, Option, Ref } from "effect"
import { ModelStore, NativeScorerLibrary, Scorer } from "../scorer/index.ts"
import { ScorerNotReady } from "./errors.ts"

type State =
  | { readonly _tag: "Starting" }
  | {
      readonly _tag: "Ready"
      readonly scorer: Scorer
      readonly library: NativeScorerLibrary
      readonly models: ModelStore
    }
  | { readonly _tag: "Failed"; readonly reason: string }

export type Readiness = { readonly ready: true } | { readonly ready: false; readonly reason: string }

const scorerLayer = Scorer.DefaultWithoutDependencies.pipe(
  Layer.provideMerge(ModelStore.DefaultWithoutDependencies),
  Layer.provideMerge(NativeScorerLibrary.Default)
)

const isDirectory = (path: string) => {
  try {
    return statSync(path).isDirectory()
  } catch {
    return false
  }
}

export class ScorerState extends Context.Tag("svc/ScorerState")<
  ScorerState,
  {
    /** The scorer once initialised, else ScorerNotReady. */
    readonly scorer: Effect.Effect<Scorer, ScorerNotReady>
    /**
     * `strict: false`: the scorer is initialised (/v1/ready). `strict: true` adds that the
     * native library file is still there and executable, and SVC_MODEL_DIR, when set, is a directory (/readyz).
     */
    readonly readiness: (strict: boolean) => Effect.Effect<Readiness>
  }
>() {
  static readonly layer = Layer.scoped(
    ScorerState,
    Effect.gen(function* () {
      const state = yield* Ref.make<State>({ _tag: "Starting" })
      const scope = yield* Effect.scope
      yield* Layer.buildWithScope(scorerLayer, scope).pipe(
        Effect.flatMap((context) =>
          Ref.set(state, {
            _tag: "Ready",
            scorer: Context.get(context, Scorer),
            library: Context.get(context, NativeScorerLibrary),
            models: Context.get(context, ModelStore)
          })
        ),
        Effect.zipRight(Effect.logInfo("scorer ready")),
        Effect.catchAllCause((cause) => {
          const reason = `scorer failed to start: ${Cause.pretty(cause).split("\n")[0] ?? "unknown failure"}`
          return Ref.set(state, { _tag: "Failed", reason }).pipe(
            Effect.zipRight(Effect.logError(reason).pipe(Effect.annotateLogs({ cause: Cause.pretty(cause) })))
          )
        }),
        Effect.forkScoped
      )

      const notReady = (current: Exclude<State, { _tag: "Ready" }>) =>
        current._tag === "Starting" ? "scorer is initialising" : current.reason

      const scorer = Effect.flatMap(Ref.get(state), (current) =>
        current._tag === "Ready"
          ? Effect.succeed(current.scorer)
          : Effect.fail(new ScorerNotReady({ reason: notReady(current) }))
      )

      const readiness = (strict: boolean): Effect.Effect<Readiness> =>
        Effect.gen(function* () {
          const current = yield* Ref.get(state)
          if (current._tag !== "Ready") return { ready: false, reason: notReady(current) }
          if (!strict) return { ready: true }
          if (!(yield* current.library.intact)) {
            return { ready: false, reason: `scoring library ${current.library.path} is missing or not executable` }
          }
          // Unset, there is no directory to check: the built-in models are always there.
          const directory = current.models.directory
          if (Option.isSome(directory) && !isDirectory(directory.value)) {
            return { ready: false, reason: `SVC_MODEL_DIR ${directory.value} is not a directory` }
          }
          return { ready: true }
        })

      return { scorer, readiness }
    })
  )
}
