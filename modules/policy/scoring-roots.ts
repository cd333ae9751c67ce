/**
 * Scoring-root rules (seed 2.5, 5.5): what a root may be, which inputs it admits,
 * and the controller-side re-check after symlinks are resolved. All rules live here.
 */
import { Effect, Either } from "effect"
import { lstat, readlink, realpath } from "node:fs/promises"
import { dirname, resolve } from "node:path"
import type { LocatedInput } from "../inputs/open.ts"
import { InputNotFound } from "../scorer/index.ts"
import type { InputGuard } from "../inputs/open.ts"
import { PermissionDenied } from "./errors.ts"

/** At most this many roots per tenant (seed 8). */
export const MAX_ROOTS_PER_TENANT = 32

/** Placeholder in `SVC_SCORING_ROOTS` replaced by the caller's tenant ID (seed 5.5.7). */
export const TENANT_PLACEHOLDER = "{tenant}"

export type ScoringRoot =
  | { readonly kind: "directory"; readonly text: string; readonly elements: ReadonlyArray<string> }
  | {
      readonly kind: "http"
      readonly text: string
      /** `scheme://host[:port]`, lower-cased: scheme and host compare case-insensitively. */
      readonly origin: string
      readonly elements: ReadonlyArray<string>
    }
  | {
      readonly kind: "remote"
      readonly text: string
      /** `name:`, `name://` or `:backend:`, compared exactly. */
      readonly remote: string
      readonly absolute: boolean
      readonly elements: ReadonlyArray<string>
    }

/** An input in the form the matcher compares. */
type Location =
  | { readonly kind: "local"; readonly path: string; readonly elements: ReadonlyArray<string> }
  | { readonly kind: "http"; readonly origin: string; readonly elements: ReadonlyArray<string> }
  | {
      readonly kind: "remote"
      readonly remote: string
      readonly absolute: boolean
      readonly elements: ReadonlyArray<string>
    }

/** An input that passed the check; `path` is set for inputs read from the local file system. */
export interface AdmittedInput {
  readonly input: string
  readonly kind: Location["kind"]
  readonly localPath: string | undefined
}

const HTTP_URL = /^https?:\/\//i
const FILE_URL = /^file:/i
// rclone-style remotes: `name:path`, `name://path`, and on-the-fly backends `:local:/path`.
const REMOTE = /^(:?[A-Za-z0-9_][A-Za-z0-9_.+@-]*:)(\/\/)?(.*)$/s

/** Path elements with empty and `.` elements removed: the normal form both sides compare in. */
const elementsOf = (path: string): ReadonlyArray<string> => path.split("/").filter((e) => e !== "" && e !== ".")

// Byte-wise and lenient (a malformed `%zz` elsewhere must not stop the decoding): only
// ASCII dots and separators matter here.
const percentDecodedBytes = (text: string): string =>
  text.replace(/%([0-9A-Fa-f]{2})/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)))

/**
 * True when any element between `/`, `\` or `:` (the remote separator) is `..`, raw or
 * percent-encoded, once or more (`%2e%2e`, `%252e%252e`, `a%2F..%2Fb`).
 */
export const hasParentElement = (text: string): boolean => {
  let current = text
  for (let round = 0; round < 8; round++) {
    if (current.split(/[/\\:]/).some((element) => element === "..")) return true
    const decoded = percentDecodedBytes(current)
    if (decoded === current) return false
    current = decoded
  }
  return true
}

/** Why a text is not a valid location, or the location. Shared by roots and inputs. */
const locate = (text: string): Either.Either<Location, string> => {
  // URL parsers drop tabs and newlines, which could hide a `..`; no input needs control characters.
  // biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
  if (/[\u0000-\u001f\u007f]/.test(text)) return Either.left("contains a control character")
  if (hasParentElement(text)) return Either.left("contains a `..` element")
  if (text.startsWith("/")) return Either.right({ kind: "local", path: text, elements: elementsOf(text) })
  if (HTTP_URL.test(text)) {
    let url: URL
    try {
      url = new URL(text)
    } catch {
      return Either.left("is not a valid URL")
    }
    if (url.username !== "" || url.password !== "") return Either.left("carries user information")
    if (url.hostname === "") return Either.left("has no host")
    return Either.right({
      kind: "http",
      origin: `${url.protocol}//${url.host}`.toLowerCase(),
      elements: elementsOf(url.pathname)
    })
  }
  if (FILE_URL.test(text)) {
    let url: URL
    try {
      url = new URL(text)
    } catch {
      return Either.left("is not a valid file URL")
    }
    if (!/^file:\/\//i.test(text) || (url.hostname !== "" && url.hostname !== "localhost")) {
      return Either.left("is not a local file URL")
    }
    let path: string
    try {
      path = decodeURIComponent(url.pathname)
    } catch {
      return Either.left("is not a valid file URL")
    }
    return Either.right({ kind: "local", path, elements: elementsOf(path) })
  }
  const remote = REMOTE.exec(text)
  if (remote !== null) {
    const [, name = "", slashes = "", rest = ""] = remote
    if (/^(https?|file):$/i.test(name)) return Either.left("is not a valid URL")
    return Either.right({
      kind: "remote",
      remote: name + slashes,
      absolute: rest.startsWith("/"),
      elements: elementsOf(rest)
    })
  }
  return Either.left("is relative")
}

/** Parses one scoring root; `Left` names why it is invalid (an invalid root makes a tenant invalid). */
export const parseRoot = (text: string): Either.Either<ScoringRoot, string> =>
  Either.flatMap(locate(text), (location): Either.Either<ScoringRoot, string> => {
    switch (location.kind) {
      case "local":
        return text.startsWith("/")
          ? Either.right({ kind: "directory", text, elements: location.elements })
          : Either.left("must be an absolute directory, not a file URL")
      case "http": {
        const url = new URL(text)
        if (url.search !== "" || url.hash !== "") return Either.left("must not carry a query or fragment")
        return Either.right({ kind: "http", text, origin: location.origin, elements: location.elements })
      }
      case "remote":
        return Either.right({
          kind: "remote",
          text,
          remote: location.remote,
          absolute: location.absolute,
          elements: location.elements
        })
    }
  })

const startsWithElements = (elements: ReadonlyArray<string>, prefix: ReadonlyArray<string>): boolean =>
  prefix.length <= elements.length && prefix.every((element, index) => elements[index] === element)

const admits = (root: ScoringRoot, location: Location): boolean => {
  switch (root.kind) {
    case "directory":
      return location.kind === "local" && startsWithElements(location.elements, root.elements)
    case "http":
      return (
        location.kind === "http" &&
        location.origin === root.origin &&
        startsWithElements(location.elements, root.elements)
      )
    case "remote":
      return (
        location.kind === "remote" &&
        location.remote === root.remote &&
        location.absolute === root.absolute &&
        startsWithElements(location.elements, root.elements)
      )
  }
}

/**
 * The roots of one tenant. `check` applies the rules to an input as written;
 * `inputGuard` is for inputs this process reads itself (seed 5.5.4), on their descriptors.
 */
export class RootSet {
  constructor(readonly roots: ReadonlyArray<ScoringRoot>) {}

  static fromValidTexts(texts: ReadonlyArray<string>): RootSet {
    return new RootSet(
      texts.flatMap((text) => Either.match(parseRoot(text), { onLeft: () => [], onRight: (root) => [root] }))
    )
  }

  /** Root texts as configured, e.g. for `Job.scoring_roots`. */
  get texts(): ReadonlyArray<string> {
    return this.roots.map((root) => root.text)
  }

  check(input: string): Effect.Effect<AdmittedInput, PermissionDenied> {
    const location = Either.getOrUndefined(locate(input))
    if (location === undefined || !this.roots.some((root) => admits(root, location))) {
      return Effect.fail(PermissionDenied.inputOutsideRoots(input))
    }
    return Effect.succeed({
      input,
      kind: location.kind,
      localPath: location.kind === "local" ? location.path : undefined
    })
  }

  /** The roots as written plus, for a directory root that is a link, where it really is. */
  private resolvedRoots(): Effect.Effect<ReadonlyArray<ScoringRoot>> {
    return Effect.map(
      Effect.forEach(this.roots, (root) =>
        root.kind === "directory"
          ? Effect.promise(() =>
              realpath(root.text).then(
                (path) => [root, ...RootSet.fromValidTexts([path]).roots],
                () => [root]
              )
            )
          : Effect.succeed([root])
      ),
      (lists) => lists.flat()
    )
  }

  /**
   * The check of seed 5.5.4 for inputs this process reads, around the one open of each input
   * (modules/inputs/open.ts): the input as written must be a local path under a root (nothing
   * else is opened), and where the opened descriptor really is (symlinks followed) must lie
   * under a root as written or as resolved. A link in a root to a file in any root is fine; a
   * link that ends outside every root is refused. The check is on the descriptor, so swapping
   * the path after it changes nothing. A missing input is `input "<path>" does not exist` only
   * when the deepest existing parent (a dangling link followed) really lies under a root;
   * otherwise it is refused like an input outside the roots, so existence outside leaks nothing.
   */
  inputGuard(): InputGuard<PermissionDenied> {
    const resolved = Effect.runSync(Effect.cached(this.resolvedRoots()))
    const under = (path: string) =>
      Effect.map(resolved, (roots) =>
        roots.some((root) => admits(root, { kind: "local", path, elements: elementsOf(path) }))
      )
    return {
      beforeOpen: (path, shown = path) =>
        Effect.flatMap(
          Effect.mapError(this.check(path), () => PermissionDenied.inputOutsideRoots(shown)),
          (admitted) =>
            admitted.kind === "local" ? Effect.void : Effect.fail(PermissionDenied.inputOutsideRoots(shown))
        ),
      opened: (input: LocatedInput, shown = input.path) =>
        Effect.flatMap(under(input.realPath), (inside) =>
          inside ? Effect.void : Effect.fail(PermissionDenied.inputOutsideRoots(shown))
        ),
      missing: (path, shown = path) =>
        Effect.flatMap(
          Effect.promise(() => deepestExistingParent(path)),
          (parent) =>
            Effect.flatMap(parent === undefined ? Effect.succeed(false) : under(parent), (inside) =>
              Effect.fail(inside ? new InputNotFound({ path: shown }) : PermissionDenied.inputOutsideRoots(shown))
            )
        )
    }
  }
}

/**
 * The real path of the deepest directory that exists on the way to `path`, following a
 * dangling link to where it points (at most 40 links, as the kernel allows); undefined if none.
 */
const deepestExistingParent = async (path: string, links = 0): Promise<string | undefined> => {
  // Never rejects: the path may change under it (a rename race), which counts as "not there".
  const link = await lstat(path).then(
    (stats) => (stats.isSymbolicLink() ? readlink(path).catch(() => undefined) : undefined),
    () => undefined
  )
  if (link !== undefined) return links < 40 ? deepestExistingParent(resolve(dirname(path), link), links + 1) : undefined
  const parent = dirname(path)
  if (parent === path) return undefined
  const real = await realpath(parent).catch(() => undefined)
  return real ?? deepestExistingParent(parent, links)
}

/** Why a tenant ID cannot be substituted for `{tenant}`, or undefined when it can. */
export const unsubstitutableTenant = (tenantId: string): string | undefined => {
  if (tenantId === "" || tenantId === "." || tenantId === "..")
    return `tenant ID "${tenantId}" is a reserved path element`
  if (/[/\\:]/.test(tenantId)) return `tenant ID "${tenantId}" contains "/", "\\" or ":"`
  return undefined
}

/**
 * The roots `SVC_SCORING_ROOTS` gives one tenant: `{tenant}` replaced by its ID. An
 * entry whose substitution is refused, or that is invalid after it, is left out, so
 * inputs under it are refused.
 */
export const rootsForTenant = (templates: ReadonlyArray<string>, tenantId: string): RootSet => {
  const substitutable = unsubstitutableTenant(tenantId) === undefined
  return RootSet.fromValidTexts(
    templates.flatMap((template) => {
      if (!template.includes(TENANT_PLACEHOLDER)) return [template]
      return substitutable ? [template.split(TENANT_PLACEHOLDER).join(tenantId)] : []
    })
  )
}

/** Splits `SVC_SCORING_ROOTS`: comma-separated, entries trimmed, empty entries ignored. */
export const splitRootList = (text: string): ReadonlyArray<string> =>
  text
    .split(",")
    .map((entry) => entry.trim())
    .filter((entry) => entry !== "")

/** Why a `SVC_SCORING_ROOTS` entry is invalid whatever the tenant, or undefined. */
export const invalidRootTemplate = (template: string): string | undefined =>
  Either.match(parseRoot(template.split(TENANT_PLACEHOLDER).join("tenant")), {
    onLeft: (why) => `scoring root "${template}" ${why}`,
    onRight: () => undefined
  })
