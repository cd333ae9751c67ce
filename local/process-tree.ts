/**
 * The resident memory of a process tree, from /proc: a process and all its descendants, summed,
 * and its peak sampled every 100 ms while some work runs (the decoders' tests and bench).
 */
import { readdirSync, readFileSync } from "node:fs"

/** Every process's parent and resident bytes, from /proc/PID/stat. */
const processTable = (): Map<number, { parent: number; rss: number }> => {
  const table = new Map<number, { parent: number; rss: number }>()
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8")
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
      // After the command: state, ppid, ...; rss (in pages) is stat's 24th field.
      table.set(Number(entry), { parent: Number(fields[1]), rss: Number(fields[21]) * 4096 })
    } catch {
      // gone meanwhile
    }
  }
  return table
}

/** Bytes resident in `root` and all its descendants now. */
export const treeRss = (root: number): number => {
  const table = processTable()
  const inTree = (pid: number): boolean => {
    for (let at: number | undefined = pid, hops = 0; at !== undefined && at > 1 && hops < 64; hops++) {
      if (at === root) return true
      at = table.get(at)?.parent
    }
    return false
  }
  let sum = 0
  for (const [pid, entry] of table) if (inTree(pid)) sum += entry.rss
  return sum
}

/** Samples the tree's RSS every 100 ms while `work` runs; the highest sum. */
export const peakWhile = async <T>(root: number, work: Promise<T>): Promise<{ result: T; peak: number }> => {
  let peak = treeRss(root)
  let running = true
  const sampler = (async () => {
    while (running) {
      peak = Math.max(peak, treeRss(root))
      await Bun.sleep(100)
    }
  })()
  const result = await work.finally(() => {
    running = false
  })
  await sampler
  return { result, peak }
}
