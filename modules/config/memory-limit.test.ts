/**
 * SVC_MAX_SCORE_MEMORY's default follows the cgroup limits: the smallest of the process's cgroup
 * and its ancestors, v2 and v1, with the container layouts where /proc/self/cgroup names a path
 * the mount does not show. Each case is a real directory tree laid out like /sys/fs/cgroup.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { totalmem, tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { cgroupMemoryLimit, processMemoryLimit } from "./memory-limit.ts"

let root = ""
afterEach(() => rmSync(root, { recursive: true, force: true }))

/** A cgroup file system of `files` (path under the root -> content). */
const tree = (files: Record<string, string>) => {
  root = mkdtempSync(join(tmpdir(), "svc-cgroup-"))
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true })
    writeFileSync(join(root, path), content)
  }
  return root
}

const gib = 1024 ** 3

describe("the cgroup memory limit", () => {
  it("v2: the smallest memory.max of the process's cgroup and its ancestors; max means none", async () => {
    const at = tree({
      "kubepods.slice/memory.max": `${8 * gib}\n`,
      "kubepods.slice/pod1/memory.max": `${2 * gib}\n`,
      "kubepods.slice/pod1/ctr/memory.max": "max\n"
    })
    expect(await cgroupMemoryLimit(at, "0::/kubepods.slice/pod1/ctr\n")).toBe(2 * gib)
  })

  it("v2 in a container: the mount's root is the container's cgroup, the named path does not exist", async () => {
    const at = tree({ "memory.max": `${4 * gib}\n`, "kubepods/pod1/ctr/memory.max": `${gib}\n` })
    // A path through ".." is outside the namespace's view: only the mount's root is read.
    expect(await cgroupMemoryLimit(join(at, "kubepods", "pod1"), "0::/../../kubepods/pod1/ctr\n")).toBeUndefined()
    expect(await cgroupMemoryLimit(at, "0::/../../kubepods/pod1/ctr\n")).toBe(4 * gib)
    expect(await cgroupMemoryLimit(at, "0::/docker/abc\n")).toBe(4 * gib)
    expect(await cgroupMemoryLimit(at, "0::/\n")).toBe(4 * gib)
  })

  it("hybrid: v2 under unified/ and v1's memory controller both count", async () => {
    const at = tree({
      "unified/service/memory.max": `${6 * gib}\n`,
      "memory/docker/abc/memory.limit_in_bytes": `${3 * gib}\n`,
      "memory/memory.limit_in_bytes": "9223372036854771712\n"
    })
    expect(await cgroupMemoryLimit(at, "12:cpu,cpuacct:/docker/abc\n4:memory:/docker/abc\n0::/service\n")).toBe(3 * gib)
  })

  it("no limit anywhere: none (the host's memory then applies)", async () => {
    const at = tree({ "memory/memory.limit_in_bytes": "9223372036854771712\n", "memory.max": "max\n" })
    expect(await cgroupMemoryLimit(at, "4:memory:/\n0::/\n")).toBeUndefined()
  })

  it("this process: at most the host's memory", async () => {
    const limit = await processMemoryLimit()
    expect(limit).toBeGreaterThan(0)
    expect(limit).toBeLessThanOrEqual(totalmem())
  })
})
