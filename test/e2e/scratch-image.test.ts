/**
 * Proves the FROM-scratch recipe of the Dockerfiles without Docker: scripts/rootfs.sh lays out
 * the executable and exactly the libraries ldd names in an empty directory, and the executable
 * runs there under chroot, with /proc mounted as a container runtime does. The services that
 * decode encoded inputs also carry ffmpeg and ffprobe (the extra executables their Dockerfile
 * names) with their libraries and licences, and ffmpeg decodes a video inside that root.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { repoRoot, requireBuilt, runCommand } from "../../local/executables.ts"
import { writeClip } from "../../local/clip.ts"

const isRoot = process.getuid?.() === 0
const executables = [
  "svc-server",
  "svc-controller",
  "svc-node",
  "svc-tester-report",
  "svc-mcp",
  "svc-operator"
] as const
const work = mkdtempSync(join(tmpdir(), "svc-rootfs-"))
afterAll(() => rmSync(work, { recursive: true, force: true }))

const listTree = (dir: string, prefix = ""): ReadonlyArray<string> =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? listTree(join(dir, entry.name), `${prefix}/${entry.name}`) : [`${prefix}/${entry.name}`]
  )

describe.skipIf(!isRoot)("scratch image recipe (chroot; needs root)", () => {
  it.each(
    executables
  )("%s runs --version from a root file system of only itself, its libraries and the ffmpeg its Dockerfile adds", async (name) => {
    const rootfs = join(work, name)
    const dockerfile = readFileSync(join(repoRoot, "apps", name, "Dockerfile"), "utf8")
    expect(dockerfile).toMatch(/^FROM scratch$/m)
    expect(dockerfile).toContain(`rootfs.sh /build/${name} /rootfs`)
    // The executables the Dockerfile adds after the root's directory (ffmpeg, ffprobe).
    const extras = (new RegExp(`rootfs\\.sh /build/${name} /rootfs((?: /[^\\s\\\\]+)*)`).exec(dockerfile)?.[1] ?? "")
      .split(" ")
      .filter((path) => path !== "")
    const layout = await runCommand(["sh", join(repoRoot, "scripts/rootfs.sh"), requireBuilt(name), rootfs, ...extras])
    expect(layout.code, layout.stderr).toBe(0)
    const files = listTree(rootfs)
    expect(files).toContain(`/${name}`)
    const expected = (file: string) =>
      file === `/${name}` ||
      extras.includes(file) ||
      /\/lib[^/]*\.so[.\d]*$|ld-linux/.test(file) ||
      (extras.length > 0 && /^\/usr\/share\/doc\/[^/]+\/copyright$/.test(file))
    expect(files.filter((file) => !expected(file))).toEqual([])
    const inRoot = (command: string, extraFiles = "") =>
      runCommand(
        [
          "unshare",
          "--mount",
          "--propagation",
          "private",
          "sh",
          "-c",
          `mkdir -p "$1/proc" && mount -t proc proc "$1/proc" && ${extraFiles} exec chroot "$1" ${command}`,
          "sh",
          rootfs
        ],
        { env: {} }
      )
    const run = await inRoot(`"/${name}" --version`)
    expect(run.stderr).toBe("")
    expect(run.code).toBe(0)
    expect(run.stdout).toMatch(new RegExp(`^${name} \\S+ \\(\\S+\\)\\n$`))
    if (extras.length > 0) {
      expect(extras).toEqual(["/usr/bin/ffmpeg", "/usr/bin/ffprobe"])
      expect(dockerfile).toContain("ENV SVC_FFMPEG=/usr/bin/ffmpeg")
      expect(files).toContain("/usr/share/doc/ffmpeg/copyright")
      const clip = join(work, `${name}.mkv`)
      await writeClip(clip, { width: 64, height: 48, rate: 5, frames: 5, codec: "libx264" })
      const decode = await inRoot(
        "/usr/bin/ffmpeg -hide_banner -nostdin -v error -i /tmp/clip.mkv -f framemd5 -",
        `cp "${clip}" "$1/tmp/clip.mkv" &&`
      )
      expect(decode.stderr).toBe("")
      expect(decode.code).toBe(0)
      // framemd5: one line per decoded frame after the comment lines.
      expect(decode.stdout.split("\n").filter((line) => /^0,/.test(line))).toHaveLength(5)
      const probe = await inRoot("/usr/bin/ffprobe -version")
      expect(probe.stdout).toMatch(/^ffprobe version /)
    }
  })
})

describe.skipIf(isRoot)("scratch image recipe", () => {
  it("is skipped: chroot needs root (run the suite as root to prove the Dockerfiles' recipe)", () => {
    expect(isRoot).toBe(false)
  })
})
