import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import fc from "fast-check"
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { locateInput } from "../inputs/open.ts"
import {
  hasParentElement,
  invalidRootTemplate,
  parseRoot,
  RootSet,
  rootsForTenant,
  splitRootList,
  unsubstitutableTenant
} from "./scoring-roots.ts"

const rootsOf = (...texts: ReadonlyArray<string>) => {
  for (const text of texts) expect(Either.isRight(parseRoot(text)), text).toBe(true)
  return RootSet.fromValidTexts(texts)
}
const admitted = (roots: RootSet, input: string) => Either.isRight(Effect.runSync(Effect.either(roots.check(input))))

const element = fc.stringMatching(/^[A-Za-z0-9_-]{1,6}$/)
const elements = fc.array(element, { maxLength: 5 })
const pathOf = (parts: ReadonlyArray<string>) => `/${parts.join("/")}`

describe("scoring roots: absolute directories", () => {
  it("admits by path element, not by string prefix", () => {
    const roots = rootsOf("/media/x")
    expect(admitted(roots, "/media/x/a.mp4")).toBe(true)
    expect(admitted(roots, "/media/x")).toBe(true)
    expect(admitted(roots, "/media/x-old")).toBe(false)
    expect(admitted(roots, "/media/x-old/a.mp4")).toBe(false)
    expect(admitted(roots, "/media")).toBe(false)
  })

  it("normalises duplicate slashes and `.` elements on both sides", () => {
    expect(admitted(rootsOf("/media//x/"), "/media/./x//sub/a.mp4")).toBe(true)
  })

  it("admits file:// URLs under a directory root", () => {
    const roots = rootsOf("/media/x")
    expect(admitted(roots, "file:///media/x/a.mp4")).toBe(true)
    expect(admitted(roots, "file://localhost/media/x/a%20b.mp4")).toBe(true)
    expect(admitted(roots, "file:///media/y/a.mp4")).toBe(false)
    expect(admitted(roots, "file://remote-host/media/x/a.mp4")).toBe(false)
    expect(admitted(roots, "file:media/x/a.mp4")).toBe(false)
  })

  it("property: an accepted input is element-wise under some root after normalisation", () => {
    fc.assert(
      fc.property(fc.array(elements, { maxLength: 4 }), elements, (rootParts, inputParts) => {
        const roots = RootSet.fromValidTexts(rootParts.map(pathOf))
        const input = pathOf(inputParts)
        const underSome = rootParts.some((root) => root.every((part, index) => inputParts[index] === part))
        expect(admitted(roots, input)).toBe(underSome)
      })
    )
  })

  it("property: an input extending a root is accepted", () => {
    fc.assert(
      fc.property(elements, elements, (rootParts, rest) => {
        expect(admitted(RootSet.fromValidTexts([pathOf(rootParts)]), pathOf([...rootParts, ...rest]))).toBe(true)
      })
    )
  })
})

describe("scoring roots: refusals", () => {
  const everything = rootsOf("/", "https://cdn.example.com/", "s3:", "s3://", ":local:/")

  it("refuses every input when the tenant has no roots", () => {
    fc.assert(
      fc.property(fc.string(), (input) => {
        expect(admitted(new RootSet([]), input)).toBe(false)
      })
    )
  })

  it("refuses relative inputs", () => {
    for (const input of ["media/x/a.mp4", "a.mp4", "./a.mp4", "", " /media/x"])
      expect(admitted(everything, input)).toBe(false)
  })

  const dotDot = fc.constantFrom("..", "%2e%2e", "%2E%2E", ".%2e", "%2e.", "%252e%252e", "%2E%2e")
  it("property: any input with a `..` element, raw or percent-encoded, is refused", () => {
    const prefix = fc.constantFrom("/", "file:///", "https://cdn.example.com/", "s3:", "s3://", ":local:/")
    fc.assert(
      fc.property(
        prefix,
        elements,
        dotDot,
        elements,
        fc.constantFrom("/", "\\"),
        (start, before, parent, after, separator) => {
          const input = `${start}${[...before, parent, ...after].join("/")}`
          expect(hasParentElement(input)).toBe(true)
          expect(admitted(everything, input)).toBe(false)
          expect(admitted(everything, `${start}${[...before, parent].join("/")}${separator}x`)).toBe(false)
        }
      )
    )
  })

  it("sees a `..` behind an encoded separator, a malformed escape or a control character", () => {
    const roots = rootsOf("https://cdn.example.com/t1", "/media/t1", "s3:bucket/t1")
    for (const input of [
      "https://cdn.example.com/t1/x%2F..%2F..%2Ft2/v.mp4",
      "https://cdn.example.com/t1/x%2f%2e%2e%2ft2%zz/v.mp4",
      "https://cdn.example.com/t1/.\t./t2/v.mp4",
      "https://cdn.example.com/t1\\..\\t2/v.mp4",
      "/media/t1/..%2Ft2/v.mp4",
      "s3:bucket/t1/..%2ft2",
      "/media/t1/\n/v.mp4"
    ]) {
      expect(admitted(roots, input), JSON.stringify(input)).toBe(false)
    }
  })

  it("property: percent-encoding any characters of a `..` element never gets it past the check", () => {
    const encodeSome = (text: string, mask: ReadonlyArray<boolean>) =>
      [...text]
        .map((char, index) => (mask[index] ? `%${char.charCodeAt(0).toString(16).padStart(2, "0")}` : char))
        .join("")
    fc.assert(
      fc.property(
        fc.array(fc.boolean(), { minLength: 4, maxLength: 4 }),
        fc.boolean(),
        elements,
        (mask, twice, rest) => {
          const once = encodeSome("/../", mask)
          const escaped = twice ? once.replaceAll("%", "%25") : once
          expect(admitted(rootsOf("/media/t1"), `/media/t1${escaped}${rest.join("/")}`)).toBe(false)
        }
      )
    )
  })

  it("does not mistake names containing dots for parent elements", () => {
    expect(admitted(rootsOf("/media"), "/media/..a/b...mp4")).toBe(true)
    expect(admitted(rootsOf("/media"), "/media/a..b")).toBe(true)
  })

  it("refuses with PERMISSION_DENIED and the seed's message", () =>
    Effect.runPromise(
      Effect.gen(function* () {
        const error = yield* Effect.flip(rootsOf("/media/x").check("/etc/passwd"))
        expect(error._tag).toBe("PermissionDenied")
        expect(error.message).toBe(`scoring input "/etc/passwd" is outside the tenant's scoring roots`)
      })
    ))
})

describe("scoring roots: http(s) prefixes", () => {
  const roots = rootsOf("https://CDN.Example.com/Tenant-A")

  it("compares scheme and host case-insensitively, the path exactly and by element", () => {
    expect(admitted(roots, "https://cdn.example.com/Tenant-A/v.mp4")).toBe(true)
    expect(admitted(roots, "HTTPS://cdn.EXAMPLE.com/Tenant-A/v.mp4?sig=1")).toBe(true)
    expect(admitted(roots, "https://cdn.example.com/tenant-a/v.mp4")).toBe(false)
    expect(admitted(roots, "https://cdn.example.com/Tenant-AB/v.mp4")).toBe(false)
    expect(admitted(roots, "http://cdn.example.com/Tenant-A/v.mp4")).toBe(false)
    expect(admitted(roots, "https://cdn.example.com:8443/Tenant-A/v.mp4")).toBe(false)
    expect(admitted(roots, "https://other.example.com/Tenant-A/v.mp4")).toBe(false)
  })

  it("refuses user information that could disguise the host", () => {
    expect(admitted(roots, "https://cdn.example.com@evil.example/Tenant-A/v.mp4")).toBe(false)
    expect(admitted(roots, "https://user:pw@cdn.example.com/Tenant-A/v.mp4")).toBe(false)
  })

  it("property: scheme and host case never change the decision", () => {
    fc.assert(
      fc.property(elements, fc.boolean(), (rest, upper) => {
        const host = upper ? "HTTPS://CDN.EXAMPLE.COM" : "https://cdn.example.com"
        expect(admitted(roots, `${host}/Tenant-A/${rest.join("/")}`)).toBe(true)
      })
    )
  })
})

describe("scoring roots: remote-storage prefixes", () => {
  it("admits remote paths under `name:path`, `name://path` and `:local:/path`", () => {
    const roots = rootsOf("s3:bucket/acme", "gcs://bucket/acme", ":local:/srv/acme")
    expect(admitted(roots, "s3:bucket/acme/v.mp4")).toBe(true)
    expect(admitted(roots, "s3:bucket/acme-old/v.mp4")).toBe(false)
    expect(admitted(roots, "s3:bucket/other/v.mp4")).toBe(false)
    expect(admitted(roots, "s4:bucket/acme/v.mp4")).toBe(false)
    expect(admitted(roots, "gcs://bucket/acme/x/v.mp4")).toBe(true)
    expect(admitted(roots, "gcs:bucket/acme/v.mp4")).toBe(false)
    expect(admitted(roots, ":local:/srv/acme/v.mp4")).toBe(true)
    expect(admitted(roots, ":local:/srv/other/v.mp4")).toBe(false)
    expect(admitted(roots, "/srv/acme/v.mp4")).toBe(false)
  })
})

describe("parseRoot", () => {
  it("refuses relative roots, parent elements and URL roots with queries", () => {
    for (const text of [
      "media",
      "",
      "/media/../etc",
      "https://h/a/%2e%2e",
      "https://h/a?x=1",
      "file:///media",
      "http:relative"
    ]) {
      expect(Either.isLeft(parseRoot(text)), text).toBe(true)
    }
  })
})

describe("SVC_SCORING_ROOTS", () => {
  it("splits on commas and trims", () => {
    expect(splitRootList(" /a , /b/{tenant},, ")).toEqual(["/a", "/b/{tenant}"])
  })

  it("substitutes {tenant} with the caller's tenant ID", () => {
    const roots = rootsForTenant(["/media/{tenant}", "https://cdn.example.com/{tenant}/in"], "acme")
    expect(roots.texts).toEqual(["/media/acme", "https://cdn.example.com/acme/in"])
    expect(admitted(roots, "/media/acme/v.mp4")).toBe(true)
    expect(admitted(roots, "/media/globex/v.mp4")).toBe(false)
  })

  it("refuses tenant IDs with `/`, a backslash or `:`, `.` and `..` instead of substituting them", () => {
    for (const tenant of ["a/b", "a\\b", "a:b", ".", "..", ""]) {
      expect(unsubstitutableTenant(tenant)).toBeDefined()
      const roots = rootsForTenant(["/media/{tenant}", "/shared"], tenant)
      expect(roots.texts).toEqual(["/shared"])
      expect(admitted(roots, "/media/x/v.mp4")).toBe(false)
    }
  })

  it("property: a substituted root never admits another tenant's directory", () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1 }), element, element, (tenant, other, file) => {
        fc.pre(other !== tenant)
        const roots = rootsForTenant(["/media/{tenant}"], tenant)
        expect(admitted(roots, `/media/${other}/${file}`)).toBe(false)
      })
    )
  })

  it("names an invalid entry", () => {
    expect(invalidRootTemplate("media/{tenant}")).toBe(`scoring root "media/{tenant}" is relative`)
    expect(invalidRootTemplate("/media/{tenant}")).toBeUndefined()
  })
})

describe("inputGuard (inputs this process reads, checked on the opened descriptor)", () => {
  let base = ""
  beforeAll(() => {
    base = mkdtempSync(join(tmpdir(), "svc-roots-"))
    mkdirSync(join(base, "root/sub"), { recursive: true })
    mkdirSync(join(base, "outside"))
    mkdirSync(join(base, "real-root"))
    writeFileSync(join(base, "root/sub/in.mp4"), "x")
    writeFileSync(join(base, "outside/secret.mp4"), "x")
    writeFileSync(join(base, "real-root/v.mp4"), "x")
    symlinkSync(join(base, "outside/secret.mp4"), join(base, "root/escape.mp4"))
    symlinkSync(join(base, "outside"), join(base, "root/escape-dir"))
    symlinkSync(join(base, "root/sub/in.mp4"), join(base, "root/inner-link.mp4"))
    symlinkSync(join(base, "real-root"), join(base, "linked-root"))
    symlinkSync(join(base, "outside/nothing.mp4"), join(base, "root/dangling-out.mp4"))
    symlinkSync(join(base, "root/sub/nothing.mp4"), join(base, "root/dangling-in.mp4"))
  })
  afterAll(() => rmSync(base, { recursive: true, force: true }))

  /** What the scorer does: check as written, locate once (O_PATH), check where the descriptor points. */
  const admitted = (roots: RootSet, input: string) => {
    const guard = roots.inputGuard()
    return Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          yield* guard.beforeOpen(input)
          const opened = yield* locateInput(input).pipe(
            Effect.catchTags({ InputMissing: () => guard.missing(input), InputUnopenable: Effect.die })
          )
          yield* guard.opened(opened)
          return opened.realPath
        })
      ).pipe(Effect.either)
    )
  }
  const refusal = (input: string) => `scoring input "${input}" is outside the tenant's scoring roots`

  it("admits a link inside a root to a file in the same root", async () => {
    const result = await admitted(RootSet.fromValidTexts([join(base, "root")]), join(base, "root/inner-link.mp4"))
    expect(Either.getOrThrow(result)).toBe(join(base, "root/sub/in.mp4"))
  })

  it("refuses a link inside a root that points outside every root", async () => {
    const roots = RootSet.fromValidTexts([join(base, "root")])
    for (const input of [join(base, "root/escape.mp4"), join(base, "root/escape-dir/secret.mp4")]) {
      const result = await admitted(roots, input)
      expect(Either.isLeft(result) && result.left.message).toBe(refusal(input))
    }
  })

  it("admits inputs under a root that is itself a link", async () => {
    const result = await admitted(RootSet.fromValidTexts([join(base, "linked-root")]), join(base, "linked-root/v.mp4"))
    expect(Either.getOrThrow(result)).toBe(join(base, "real-root/v.mp4"))
  })

  it("says a missing input under a root does not exist, and refuses one whose parent is outside", async () => {
    const roots = RootSet.fromValidTexts([join(base, "root")])
    const missing = join(base, "root/sub/missing.mp4")
    const inside = await admitted(roots, missing)
    expect(Either.isLeft(inside) && [inside.left._tag, inside.left.message]).toEqual([
      "InputNotFound",
      `input "${missing}" does not exist`
    ])
    const deep = join(base, "root/no/such/dir/x.mp4")
    const deepResult = await admitted(roots, deep)
    expect(Either.isLeft(deepResult) && deepResult.left._tag).toBe("InputNotFound")
    // A dangling link that points outside is refused like any input outside: existence leaks nothing.
    const dangling = join(base, "root/dangling-out.mp4")
    const out = await admitted(roots, dangling)
    expect(Either.isLeft(out) && out.left.message).toBe(refusal(dangling))
    const danglingIn = await admitted(roots, join(base, "root/dangling-in.mp4"))
    expect(Either.isLeft(danglingIn) && danglingIn.left._tag).toBe("InputNotFound")
  })

  it("opens nothing that is not a local path under a root", async () => {
    const roots = rootsOf("https://cdn.example.com/a", join(base, "root"))
    for (const input of ["https://cdn.example.com/a/v.mp4", join(base, "outside/secret.mp4"), "relative.mp4"]) {
      const result = await admitted(roots, input)
      expect(Either.isLeft(result) && result.left.message).toBe(refusal(input))
    }
  })
})
