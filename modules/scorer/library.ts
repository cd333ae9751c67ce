/**
 * The native library as an Effect service: opened once per process, closed at shutdown.
 * Everything that talks to the C ABI goes through NativeScorerLibrary.
 */
import { Effect } from "effect"
import { accessSync, constants } from "node:fs"
import { openNativeLibrary, readNativeFeatures } from "./native.ts"
import { nativeFeatures } from "./native-features.ts"

export interface LibraryInfo {
  readonly version: string
  readonly abi_minor: number
  readonly abi_patch: number
  /** Best backend of this CPU. */
  readonly active_backend: string
}

export class NativeScorerLibrary extends Effect.Service<NativeScorerLibrary>()("svc/NativeScorerLibrary", {
  scoped: Effect.gen(function* () {
    const library = yield* Effect.acquireRelease(Effect.sync(openNativeLibrary), (opened) =>
      Effect.sync(() => opened.close())
    )
    const { symbols } = library
    const info: LibraryInfo = {
      version: String(symbols.svc_version()),
      abi_minor: symbols.svc_abi_minor(),
      abi_patch: symbols.svc_abi_patch(),
      active_backend: String(symbols.svc_cpu_best())
    }
    // The request schema, OpenAPI and help texts were built from native-features.ts: a library with
    // another feature list (an old or foreign build) would score what they do not describe.
    if (JSON.stringify(readNativeFeatures(symbols)) !== JSON.stringify(nativeFeatures))
      return yield* Effect.dieMessage(
        `the native library at ${library.path} has another feature list than this build (native-features.ts): rebuild with npm run build`
      )
    yield* Effect.logDebug("native scorer loaded").pipe(Effect.annotateLogs({ path: library.path, ...info }))
    /** The library file is still where it was loaded from and is executable (readiness). */
    const intact = Effect.sync(() => {
      try {
        accessSync(library.path, constants.R_OK | constants.X_OK)
        return true
      } catch {
        return false
      }
    })
    return { symbols, info, path: library.path, intact } as const
  })
}) {}
