/**
 * Proves the FROM-scratch recipe of the Dockerfiles without Docker: scripts/rootfs.sh lays out
 * the executable and exactly the libraries ldd names in an empty directory, and the executable
 * runs there under chroot, with /proc mounted as a container runtime does.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { repoRoot, requireBuilt, runCommand } from "../support/executables.ts"

const isRoot = process.getuid?.() === 0
const executables = ["svc-server", "svc-controller", "svc-node", "svc-tester-report", "svc-mcp"] as const
const work = mkdtempSync(join(tmpdir(), "svc-rootfs-"))
afterAll(() => rmSync(work, { recursive: true, force: true }))

const listTree = (dir: string, prefix = ""): ReadonlyArray<string> =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? listTree(join(dir, entry.name), `${prefix}/${entry.name}`) : [`${prefix}/${entry.name}`]
  )

describe.skipIf(!isRoot)("scratch image recipe (chroot; needs root)", () => {
  it.each(executables)("%s runs --version from a root file system of only itself and its libraries", async (name) => {
    const rootfs = join(work, name)
    const layout = await runCommand(["sh", join(repoRoot, "scripts/rootfs.sh"), requireBuilt(name), rootfs])
    expect(layout.code, layout.stderr).toBe(0)
    const files = listTree(rootfs)
    expect(files).toContain(`/${name}`)
    expect(files.every((file) => file === `/${name}` || /\/lib[^/]*\.so[.\d]*$|ld-linux/.test(file))).toBe(true)
    const dockerfile = readFileSync(join(repoRoot, "apps", name, "Dockerfile"), "utf8")
    expect(dockerfile).toMatch(/^FROM scratch$/m)
    expect(dockerfile).toContain(`rootfs.sh /build/${name} /rootfs`)
    const run = await runCommand(
      [
        "unshare",
        "--mount",
        "--propagation",
        "private",
        "sh",
        "-c",
        `mkdir -p "$1/proc" && mount -t proc proc "$1/proc" && exec chroot "$1" "/$2" --version`,
        "sh",
        rootfs,
        name
      ],
      { env: {} }
    )
    expect(run.stderr).toBe("")
    expect(run.code).toBe(0)
    expect(run.stdout).toMatch(new RegExp(`^${name} \\S+ \\(\\S+\\)\\n$`))
  })
})

describe.skipIf(isRoot)("scratch image recipe", () => {
  it("is skipped: chroot needs root (run the suite as root to prove the Dockerfiles' recipe)", () => {
    expect(isRoot).toBe(false)
  })
})
