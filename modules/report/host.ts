// The report's `host` section: facts about the machine the tester runs on.
// readHostSources gathers the raw inputs (files under /proc, /sys, /etc and the `os` module);
// hostFromSources turns them into the section without touching the system, so it is tested
// with recorded inputs from other machines.
import { Effect } from "effect"
import { readFile, stat } from "node:fs/promises"
import os from "node:os"
import type { Host } from "./schema.ts"

/** Everything hostFromSources reads; null where the source does not exist on this host. */
export interface HostSources {
  /** process.platform */
  readonly platform: string
  /** uname -m (os.machine()) */
  readonly machine: string
  /** /proc/sys/kernel/osrelease, else uname -r (os.release()) */
  readonly kernelRelease: string
  readonly cpuinfo: string | null
  /** /proc/self/auxv, the ELF auxiliary vector of this process */
  readonly auxv: Uint8Array | null
  /** Size of one auxv word: 8 on 64-bit processes, 4 on 32-bit ones. */
  readonly auxvWordBytes: 4 | 8
  readonly littleEndian: boolean
  readonly dockerenvExists: boolean
  readonly containerenvExists: boolean
  /** /proc/1/cgroup: the cgroups of the init process of this PID namespace */
  readonly initCgroup: string | null
  /** /etc/os-release */
  readonly osRelease: string | null
  /** /sys/firmware/devicetree/base/model or /sys/class/dmi/id/product_name */
  readonly hardwareModel: string | null
  /** os.cpus(): the fallback where /proc/cpuinfo is absent */
  readonly runtimeCpuModel: string | null
  readonly runtimeLogicalCores: number
}

/** What the scorer reports about its CPU dispatch, and the accelerator it found, if any. */
export interface DispatchFacts {
  readonly dispatchFlags: ReadonlyArray<string>
  /** How the flags were obtained, e.g. the scorer function that reported them. */
  readonly dispatchFlagsSource: string
  readonly accelDevice?: { readonly [name: string]: string } | null
}

export interface CpuinfoFacts {
  /** The first processor's fields and the machine-wide trailer (ARM "Hardware", "Revision"). */
  readonly fields: { readonly [name: string]: string }
  readonly processorCount: number
}

// "cpu MHz" is a momentary clock reading, not a fact; "Serial" identifies one board.
const leftOutCpuinfoFields: ReadonlySet<string> = new Set(["cpu MHz", "Serial"])

export const parseCpuinfo = (text: string): CpuinfoFacts => {
  const blocks = text
    .split(/\n\s*\n/)
    .map((block) =>
      block.split("\n").flatMap((line): ReadonlyArray<readonly [string, string]> => {
        const separator = line.indexOf(":")
        return separator < 0 ? [] : [[line.slice(0, separator).trim(), line.slice(separator + 1).trim()]]
      })
    )
    .filter((block) => block.length > 0)
  const processorBlocks = blocks.filter((block) => block.some(([name]) => name === "processor"))
  const trailerBlocks = blocks.filter((block) => !block.some(([name]) => name === "processor"))
  const fields = Object.fromEntries(
    [...(processorBlocks[0] ?? []), ...trailerBlocks.flat()].filter(([name]) => !leftOutCpuinfoFields.has(name))
  )
  return { fields, processorCount: processorBlocks.length }
}

const AT_NULL = 0n
const AT_HWCAP = 16n
const AT_HWCAP2 = 26n
/** arm64 HWCAP_SVE (arch/arm64/include/uapi/asm/hwcap.h). */
const ARM64_HWCAP_SVE = 1n << 22n

export interface Hwcaps {
  readonly hwcap: bigint | null
  readonly hwcap2: bigint | null
}

/** Reads AT_HWCAP and AT_HWCAP2 from an auxiliary vector: (type, value) word pairs up to AT_NULL. */
export const parseAuxv = (auxv: Uint8Array, wordBytes: 4 | 8, littleEndian: boolean): Hwcaps => {
  const view = new DataView(auxv.buffer, auxv.byteOffset, auxv.byteLength)
  const word = (offset: number): bigint =>
    wordBytes === 8 ? view.getBigUint64(offset, littleEndian) : BigInt(view.getUint32(offset, littleEndian))
  let hwcap: bigint | null = null
  let hwcap2: bigint | null = null
  for (let offset = 0; offset + 2 * wordBytes <= auxv.byteLength; offset += 2 * wordBytes) {
    const type = word(offset)
    if (type === AT_NULL) break
    if (type === AT_HWCAP) hwcap = word(offset + wordBytes)
    if (type === AT_HWCAP2) hwcap2 = word(offset + wordBytes)
  }
  return { hwcap, hwcap2 }
}

// A JSON number holds integers exactly only up to 2^53; a wider mask is reported as unknown
// rather than rounded.
const asJsonInteger = (value: bigint | null): number | null =>
  value !== null && value <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(value) : null

const containerCgroup = /docker|kubepods|containerd|libpod|podman|lxc/

export const detectContainer = (
  sources: Pick<HostSources, "dockerenvExists" | "containerenvExists" | "initCgroup">
): boolean =>
  sources.dockerenvExists ||
  sources.containerenvExists ||
  (sources.initCgroup !== null && containerCgroup.test(sources.initCgroup))

export const osReleasePrettyName = (osRelease: string): string | null => {
  const line = osRelease.split("\n").find((candidate) => candidate.startsWith("PRETTY_NAME="))
  return line === undefined ? null : line.slice("PRETTY_NAME=".length).replace(/^"(.*)"$/, "$1")
}

// `osb` and `osc` are the seed's neutral names for the two desktop platforms the packages
// target; the format has no other name, and any other Unix is closest to linux.
const platformName = (platform: string): Host["platform"] =>
  platform === "darwin" ? "osb" : platform === "win32" ? "osc" : "linux"

const isArm64 = (machine: string): boolean => machine === "aarch64" || machine === "arm64"

export const hostFromSources = (sources: HostSources, dispatch: DispatchFacts): Host => {
  const cpuinfo = sources.cpuinfo === null ? { fields: {}, processorCount: 0 } : parseCpuinfo(sources.cpuinfo)
  const hwcaps =
    sources.auxv === null
      ? { hwcap: null, hwcap2: null }
      : parseAuxv(sources.auxv, sources.auxvWordBytes, sources.littleEndian)
  const featureList = cpuinfo.fields["flags"] ?? cpuinfo.fields["Features"] ?? ""
  const logicalCores = cpuinfo.processorCount > 0 ? cpuinfo.processorCount : sources.runtimeLogicalCores
  return {
    platform: platformName(sources.platform),
    machine: sources.machine,
    kernel_release: sources.kernelRelease,
    in_container: detectContainer(sources),
    cpu_model:
      cpuinfo.fields["model name"] ??
      cpuinfo.fields["Model"] ??
      cpuinfo.fields["Hardware"] ??
      sources.runtimeCpuModel ??
      "unknown",
    cpuinfo: cpuinfo.fields,
    cpu_features: featureList.split(/\s+/).filter((feature) => feature !== ""),
    hwcap: asJsonInteger(hwcaps.hwcap),
    hwcap2: asJsonInteger(hwcaps.hwcap2),
    sve_in_hwcap: isArm64(sources.machine) && hwcaps.hwcap !== null && (hwcaps.hwcap & ARM64_HWCAP_SVE) !== 0n,
    dispatch_flags: [...dispatch.dispatchFlags],
    dispatch_flags_source: dispatch.dispatchFlagsSource,
    logical_cores: logicalCores > 0 ? logicalCores : null,
    os_version: sources.osRelease === null ? null : osReleasePrettyName(sources.osRelease),
    hw_model: sources.hardwareModel,
    accel_device: dispatch.accelDevice ?? null
  }
}

const readText = (path: string): Effect.Effect<string | null> =>
  Effect.tryPromise(() => readFile(path, "utf8")).pipe(Effect.orElseSucceed(() => null))

const readBytes = (path: string): Effect.Effect<Uint8Array | null> =>
  Effect.tryPromise(() => readFile(path)).pipe(Effect.orElseSucceed(() => null))

const exists = (path: string): Effect.Effect<boolean> =>
  Effect.tryPromise(() => stat(path)).pipe(
    Effect.as(true),
    Effect.orElseSucceed(() => false)
  )

// Device-tree strings end in NUL.
const cleanModel = (text: string | null): string | null => {
  const model = text?.replaceAll("\u0000", "").trim()
  return model === undefined || model === "" ? null : model
}

const sixtyFourBitArchitectures: ReadonlySet<string> = new Set([
  "x64",
  "arm64",
  "ppc64",
  "s390x",
  "riscv64",
  "loong64",
  "mips64el"
])

/** Reads every source of the host section; a source this host lacks becomes null. Never fails. */
export const readHostSources: Effect.Effect<HostSources> = Effect.gen(function* () {
  const [
    osrelease,
    cpuinfo,
    auxv,
    dockerenvExists,
    containerenvExists,
    initCgroup,
    osRelease,
    deviceTreeModel,
    dmiProduct
  ] = yield* Effect.all(
    [
      readText("/proc/sys/kernel/osrelease"),
      readText("/proc/cpuinfo"),
      readBytes("/proc/self/auxv"),
      exists("/.dockerenv"),
      exists("/run/.containerenv"),
      readText("/proc/1/cgroup"),
      readText("/etc/os-release"),
      readText("/sys/firmware/devicetree/base/model"),
      readText("/sys/class/dmi/id/product_name")
    ],
    { concurrency: "unbounded" }
  )
  const cpus = os.cpus()
  return {
    platform: process.platform,
    machine: os.machine(),
    kernelRelease: osrelease?.trim() || os.release(),
    cpuinfo,
    auxv,
    auxvWordBytes: sixtyFourBitArchitectures.has(process.arch) ? 8 : 4,
    littleEndian: os.endianness() === "LE",
    dockerenvExists,
    containerenvExists,
    initCgroup,
    osRelease,
    hardwareModel: cleanModel(deviceTreeModel) ?? cleanModel(dmiProduct),
    runtimeCpuModel: cpus[0]?.model ?? null,
    runtimeLogicalCores: cpus.length
  }
})

/** The host section of this machine. */
export const readHost = (dispatch: DispatchFacts): Effect.Effect<Host> =>
  Effect.map(readHostSources, (sources) => hostFromSources(sources, dispatch))
