/**
 * The memory this process may use, for SVC_MAX_SCORE_MEMORY's default: the smallest memory limit
 * of the cgroups it is in (cgroup v2 `memory.max`, or v1 `memory.limit_in_bytes`, of its own
 * cgroup and every ancestor, as `/proc/self/cgroup` names them), and never more than the host's
 * memory. In a container the cgroup file system usually shows the container's cgroup as its root
 * while `/proc/self/cgroup` may name the host's path: levels that do not exist are skipped, so the
 * walk up ends at the mount's root, which is the container's own limit.
 */
import { readFile } from "node:fs/promises"
import { totalmem } from "node:os"
import { join } from "node:path"

/** v1's "no limit" is the largest page-aligned 64-bit number; anything near it means none. */
const unlimitedV1 = 2 ** 60

/** The limit written at `file` (bytes), undefined for "max", a v1 "unlimited" or a missing file. */
const limitAt = async (file: string): Promise<number | undefined> => {
  const text = await readFile(file, "utf8").then(
    (content) => content.trim(),
    () => ""
  )
  if (!/^\d+$/.test(text)) return undefined
  const bytes = Number(text)
  return bytes > 0 && bytes < unlimitedV1 ? bytes : undefined
}

/**
 * `path` ("/a/b/c") and each of its ancestors up to "/". A path through ".." (a cgroup outside
 * this namespace's view) is the mount's root alone: nothing outside the mount is read.
 */
const selfAndAncestors = (path: string): ReadonlyArray<string> => {
  const parts = path.split("/").filter((part) => part !== "" && part !== ".")
  if (parts.includes("..")) return ["/"]
  return Array.from({ length: parts.length + 1 }, (_, depth) => `/${parts.slice(0, parts.length - depth).join("/")}`)
}

/**
 * The smallest cgroup memory limit of the process described by `procSelfCgroup` (the text of
 * /proc/self/cgroup) under the cgroup file system at `cgroupRoot` (/sys/fs/cgroup); undefined
 * when no level sets one.
 */
export const cgroupMemoryLimit = async (cgroupRoot: string, procSelfCgroup: string): Promise<number | undefined> => {
  const files: Array<string> = []
  for (const line of procSelfCgroup.split("\n")) {
    const [, controllers, path] = /^\d+:([^:]*):(.*)$/.exec(line.trim()) ?? []
    if (path === undefined) continue
    if (controllers === "") {
      // v2: the unified hierarchy is mounted at the root (pure v2) or at unified/ (hybrid).
      for (const mount of [cgroupRoot, join(cgroupRoot, "unified")])
        for (const level of selfAndAncestors(path)) files.push(join(mount, level, "memory.max"))
    } else if (controllers?.split(",").includes("memory")) {
      for (const level of selfAndAncestors(path)) files.push(join(cgroupRoot, "memory", level, "memory.limit_in_bytes"))
    }
  }
  const limits = (await Promise.all(files.map(limitAt))).filter((bytes) => bytes !== undefined)
  return limits.length === 0 ? undefined : Math.min(...limits)
}

/** This process's memory limit: its cgroups' smallest, else (and at most) the host's memory. */
export const processMemoryLimit = async (): Promise<number> => {
  const procSelfCgroup = await readFile("/proc/self/cgroup", "utf8").catch(() => "")
  const limit = await cgroupMemoryLimit("/sys/fs/cgroup", procSelfCgroup)
  return Math.min(limit ?? Number.POSITIVE_INFINITY, totalmem())
}
