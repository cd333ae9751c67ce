/**
 * Opening an input once. Every later step (the kind check, the scoring-roots check on the real
 * path, reading, handing it to the scorer or to a decoder) works on the descriptor this returns,
 * never on the path again: a path can be swapped (rename, symlink) between a check and a use, a
 * descriptor cannot.
 *
 * The open follows symlinks (seed 000 §5.5.4: what counts is where the opened file really is) and
 * uses O_NONBLOCK, so a FIFO or a device cannot hold the event loop; the caller refuses anything
 * that is not a regular file before reading.
 */
import { Data, Effect, type Scope } from "effect"
import { constants } from "node:fs"
import { type FileHandle, open, readlink } from "node:fs/promises"

/** What the opened descriptor is, in words a caller's error message can use. */
export type InputKind = "regular file" | "directory" | "FIFO" | "socket" | "character device" | "block device" | "other"

export interface OpenedInput {
  /** The input as the caller wrote it. */
  readonly path: string
  /** The open descriptor; closed when the scope closes. */
  readonly fd: number
  /** Where the descriptor really points (`/proc/self/fd/N`), symlinks resolved. */
  readonly realPath: string
  readonly kind: InputKind
  /** Bytes, for a regular file. */
  readonly size: number
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
const openFlags = constants.O_RDONLY | constants.O_NONBLOCK | O_CLOEXEC

/** The kernel's name for the file behind a descriptor; a deleted file keeps its old name plus a marker. */
const realPathOf = (fd: number) => Effect.promise(() => readlink(`/proc/self/fd/${fd}`))

/**
 * Opens `path` read-only, once, for the lifetime of the enclosing scope. A path with a NUL byte
 * is refused before the system sees it (the C string would end there and name another file).
 */
export const openInput = (path: string): Effect.Effect<OpenedInput, OpenInputError, Scope.Scope> =>
  Effect.gen(function* () {
    if (path.includes("\0")) return yield* new InputUnopenable({ path, reason: "contains a NUL byte" })
    const handle: FileHandle = yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: () => open(path, openFlags),
        catch: (cause) =>
          errorCode(cause) === "ENOENT" || errorCode(cause) === "ENOTDIR"
            ? new InputMissing({ path })
            : new InputUnopenable({ path, reason: errorCode(cause) })
      }),
      (opened) => Effect.promise(() => opened.close())
    )
    const stats = yield* Effect.tryPromise({
      try: () => handle.stat(),
      catch: (cause) => new InputUnopenable({ path, reason: errorCode(cause) })
    })
    const realPath = yield* realPathOf(handle.fd)
    return { path, fd: handle.fd, realPath, kind: kindOf(stats), size: stats.size }
  })
