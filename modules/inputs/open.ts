/**
 * Opening an input once. Every later step (the kind check, the scoring-roots check on the real
 * path, reading, handing it to the scorer or to a decoder) works on the descriptor this returns,
 * never on the path again: a path can be swapped (rename, symlink) between a check and a use, a
 * descriptor cannot.
 *
 * Two steps, so that nothing is opened for reading before it is known to be allowed: the path is
 * first resolved to an `O_PATH` descriptor (symlinks followed, seed 000 §5.5.4: what counts is
 * where the file really is), which names the file without opening it (a FIFO's writer is not
 * released, a device's driver is not called); the caller checks its real path and kind on that
 * descriptor; only then is a regular file opened for reading through `/proc/self/fd/N`, which
 * reopens the very file the descriptor names (the rename race stays closed). The read open uses
 * O_NONBLOCK in any case. What an `O_PATH` walk still does: it crosses the directories on the
 * way, so an automount point on the way is mounted by the walk (README, "Inputs").
 */
import { Data, Effect, type Scope } from "effect"
import { constants } from "node:fs"
import { type FileHandle, open, readlink } from "node:fs/promises"
import { InputNotFound, UnreadableInput, UnsupportedInput } from "../scorer/index.ts"

/** What the opened descriptor is, in words a caller's error message can use. */
export type InputKind = "regular file" | "directory" | "FIFO" | "socket" | "character device" | "block device" | "other"

export interface LocatedInput {
  /** The input as the caller wrote it. */
  readonly path: string
  /** An `O_PATH` descriptor: names the file, reads nothing; closed when the scope closes. */
  readonly pathFd: number
  /** Where the descriptor really points (`/proc/self/fd/N`), symlinks resolved. */
  readonly realPath: string
  readonly kind: InputKind
  /** Bytes, for a regular file. */
  readonly size: number
}

export interface OpenedInput extends LocatedInput {
  /** The descriptor open for reading; closed when the scope closes. */
  readonly fd: number
}

/** The path does not exist (or a link in it dangles). */
export class InputMissing extends Data.TaggedError("InputMissing")<{ readonly path: string }> {}

/** The path exists but cannot be opened (permissions, loops, too many links, I/O). */
export class InputUnopenable extends Data.TaggedError("InputUnopenable")<{
  readonly path: string
  readonly reason: string
}> {}

export type OpenInputError = InputMissing | InputUnopenable

const kindOf = (stats: {
  isFile(): boolean
  isDirectory(): boolean
  isFIFO(): boolean
  isSocket(): boolean
  isCharacterDevice(): boolean
  isBlockDevice(): boolean
}): InputKind => {
  if (stats.isFile()) return "regular file"
  if (stats.isDirectory()) return "directory"
  if (stats.isFIFO()) return "FIFO"
  if (stats.isSocket()) return "socket"
  if (stats.isCharacterDevice()) return "character device"
  if (stats.isBlockDevice()) return "block device"
  return "other"
}

const errorCode = (cause: unknown): string =>
  typeof cause === "object" && cause !== null && "code" in cause ? String(cause.code) : "unknown"

// Linux value; node:fs does not export it. A child process inherits a descriptor only when it is
// mapped into the child explicitly, never by accident.
const O_CLOEXEC = 0o2000000
const O_PATH = 0o10000000
const locateFlags = O_PATH | O_CLOEXEC
const openFlags = constants.O_RDONLY | constants.O_NONBLOCK | O_CLOEXEC

/** The kernel's name for the file behind a descriptor; a deleted file keeps its old name plus a marker. */
const realPathOf = (fd: number) => Effect.promise(() => readlink(`/proc/self/fd/${fd}`))

const failure = (path: string) => (cause: unknown) =>
  errorCode(cause) === "ENOENT" || errorCode(cause) === "ENOTDIR"
    ? new InputMissing({ path })
    : new InputUnopenable({ path, reason: errorCode(cause) })

/** An open, closed with the scope. */
const scopedOpen = (target: string, flags: number, path: string) =>
  Effect.acquireRelease(
    Effect.tryPromise({ try: () => open(target, flags), catch: failure(path) }),
    (opened: FileHandle) => Effect.promise(() => opened.close())
  )

/**
 * Resolves `path` to an `O_PATH` descriptor for the lifetime of the enclosing scope: where it
 * really is and what it is, with nothing opened for reading. A path with a NUL byte is refused
 * before the system sees it (the C string would end there and name another file).
 */
export const locateInput = (path: string): Effect.Effect<LocatedInput, OpenInputError, Scope.Scope> =>
  Effect.gen(function* () {
    if (path.includes("\0")) return yield* new InputUnopenable({ path, reason: "contains a NUL byte" })
    const handle = yield* scopedOpen(path, locateFlags, path)
    const stats = yield* Effect.tryPromise({
      try: () => handle.stat(),
      catch: (cause) => new InputUnopenable({ path, reason: errorCode(cause) })
    })
    const realPath = yield* realPathOf(handle.fd)
    return { path, pathFd: handle.fd, realPath, kind: kindOf(stats), size: stats.size }
  })

/**
 * Opens a located regular file for reading, through its `O_PATH` descriptor (never the path
 * again), for the lifetime of the enclosing scope. The caller checks the kind first: only a
 * regular file gets here.
 */
export const openLocated = (located: LocatedInput): Effect.Effect<OpenedInput, OpenInputError, Scope.Scope> =>
  Effect.map(scopedOpen(`/proc/self/fd/${located.pathFd}`, openFlags, located.path), (handle) => ({
    ...located,
    fd: handle.fd
  }))

/**
 * Who may be read: the scoring roots of the caller, applied around the one open of each input.
 * `beforeOpen` sees the input as written (nothing outside the roots is even located), `opened`
 * sees where the located (`O_PATH`, not yet opened) descriptor really points, `missing` decides
 * what a missing input reports.
 */
export interface InputGuard<E> {
  /** `shown`: the input as the request wrote it (a file:// URL), quoted by refusals; default the path. */
  readonly beforeOpen: (path: string, shown?: string) => Effect.Effect<void, E>
  readonly opened: (input: LocatedInput, shown?: string) => Effect.Effect<void, E>
  readonly missing: (path: string, shown?: string) => Effect.Effect<never, E | InputNotFound>
}

/** No roots (svc-server without SVC_INPUT_ROOTS): any path, a missing one reported as missing. */
export const unguarded: InputGuard<never> = {
  beforeOpen: () => Effect.void,
  opened: () => Effect.void,
  missing: (path, shown = path) => Effect.fail(new InputNotFound({ path: shown }))
}

/**
 * Opens an input once, for the scope, and checks it on its descriptor: the guard before and
 * after the open, then its kind (only regular files are scored; a FIFO or device is never read).
 */
export const openChecked = <E>(
  path: string,
  guard: InputGuard<E>,
  shown: string = path
): Effect.Effect<OpenedInput, E | InputNotFound | UnreadableInput | UnsupportedInput, Scope.Scope> =>
  Effect.gen(function* () {
    yield* guard.beforeOpen(path, shown)
    const unopenable = {
      InputMissing: () => guard.missing(path, shown),
      InputUnopenable: (error: { readonly reason: string }) =>
        Effect.fail(new UnreadableInput({ message: `input "${path}" cannot be opened: ${error.reason}` }))
    }
    // Located, not opened: its real path and kind are checked before anything is opened for reading.
    const located = yield* locateInput(path).pipe(Effect.catchTags(unopenable))
    yield* guard.opened(located, shown)
    if (located.kind !== "regular file") {
      const article = located.kind === "other" ? "not a regular file" : `a ${located.kind}`
      return yield* new UnsupportedInput({
        message: `input "${path}" is ${article}; only regular files are scored`
      })
    }
    return yield* openLocated(located).pipe(Effect.catchTags(unopenable))
  })
