import { Effect, Schema } from "effect"
import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import {
  detectContainer,
  type HostSources,
  hostFromSources,
  osReleasePrettyName,
  parseAuxv,
  parseCpuinfo,
  readHost
} from "../../modules/report/host.ts"
import { Host } from "../../modules/report/schema.ts"

const x86Cpuinfo = `processor\t: 0
vendor_id\t: AuthenticAMD
model name\t: AMD EPYC 7B13
cpu MHz\t\t: 2596.134
flags\t\t: fpu sse2 avx2 fma
power management:

processor\t: 1
vendor_id\t: AuthenticAMD
model name\t: AMD EPYC 7B13
cpu MHz\t\t: 2400.000
flags\t\t: fpu sse2 avx2 fma
`

const arm64Cpuinfo = `processor\t: 0
BogoMIPS\t: 108.00
Features\t: fp asimd evtstrm sve
CPU implementer\t: 0x41
CPU part\t: 0xd40

processor\t: 1
BogoMIPS\t: 108.00
Features\t: fp asimd evtstrm sve
CPU implementer\t: 0x41
CPU part\t: 0xd40

Hardware\t: BCM2835
Revision\t: c03115
Serial\t\t: 10000000a1b2c3d4
Model\t\t: Raspberry Pi 4 Model B Rev 1.5
`

const AT_HWCAP = 16
const AT_HWCAP2 = 26
const AT_PAGESZ = 6

const auxvOf = (
  pairs: ReadonlyArray<readonly [number, bigint]>,
  wordBytes: 4 | 8,
  littleEndian: boolean
): Uint8Array => {
  const bytes = new Uint8Array((pairs.length + 1) * 2 * wordBytes + 16)
  const view = new DataView(bytes.buffer)
  pairs.forEach(([type, value], index) => {
    const offset = index * 2 * wordBytes
    if (wordBytes === 8) {
      view.setBigUint64(offset, BigInt(type), littleEndian)
      view.setBigUint64(offset + 8, value, littleEndian)
    } else {
      view.setUint32(offset, type, littleEndian)
      view.setUint32(offset + 4, Number(value), littleEndian)
    }
  })
  // AT_NULL is the zeroed pair after the last; the bytes after it must be ignored.
  bytes.fill(0xff, (pairs.length + 1) * 2 * wordBytes)
  return bytes
}

const baseSources: HostSources = {
  platform: "linux",
  machine: "x86_64",
  kernelRelease: "6.8.0-45-generic",
  cpuinfo: x86Cpuinfo,
  auxv: null,
  auxvWordBytes: 8,
  littleEndian: true,
  dockerenvExists: false,
  containerenvExists: false,
  initCgroup: "0::/\n",
  osRelease: 'NAME="Debian GNU/Linux"\nPRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\n',
  hardwareModel: null,
  runtimeCpuModel: "fallback model",
  runtimeLogicalCores: 64
}
const dispatch = { dispatchFlags: ["avx2"], dispatchFlagsSource: "svc_cpu_flags()" }

describe("cpuinfo", () => {
  it("keeps the first processor's fields without the momentary clock, and counts processors", () => {
    const { fields, processorCount } = parseCpuinfo(x86Cpuinfo)
    expect(processorCount).toBe(2)
    expect(fields).toEqual({
      processor: "0",
      vendor_id: "AuthenticAMD",
      "model name": "AMD EPYC 7B13",
      flags: "fpu sse2 avx2 fma",
      "power management": ""
    })
  })

  it("adds the arm64 machine-wide trailer but not the board serial number", () => {
    const { fields, processorCount } = parseCpuinfo(arm64Cpuinfo)
    expect(processorCount).toBe(2)
    expect(fields["Hardware"]).toBe("BCM2835")
    expect(fields["Model"]).toBe("Raspberry Pi 4 Model B Rev 1.5")
    expect(fields).not.toHaveProperty("Serial")
  })
})

describe("auxv", () => {
  it("reads AT_HWCAP and AT_HWCAP2 from a 64-bit little-endian vector and stops at AT_NULL", () => {
    const auxv = auxvOf(
      [
        [AT_PAGESZ, 4096n],
        [AT_HWCAP, 0x178bfbffn],
        [AT_HWCAP2, 2n]
      ],
      8,
      true
    )
    expect(parseAuxv(auxv, 8, true)).toEqual({ hwcap: 0x178bfbffn, hwcap2: 2n })
  })

  it("reads a 32-bit big-endian vector", () => {
    expect(parseAuxv(auxvOf([[AT_HWCAP, 0x1234n]], 4, false), 4, false)).toEqual({ hwcap: 0x1234n, hwcap2: null })
  })

  it("reports absent entries as null", () => {
    expect(parseAuxv(auxvOf([[AT_PAGESZ, 4096n]], 8, true), 8, true)).toEqual({ hwcap: null, hwcap2: null })
  })
})

describe("container detection", () => {
  const none = { dockerenvExists: false, containerenvExists: false, initCgroup: "0::/\n" }
  it.each([
    ["/.dockerenv", { ...none, dockerenvExists: true }, true],
    ["/run/.containerenv", { ...none, containerenvExists: true }, true],
    ["a docker cgroup of PID 1", { ...none, initCgroup: "12:pids:/docker/3f2a\n0::/\n" }, true],
    ["a kubernetes cgroup of PID 1", { ...none, initCgroup: "0::/kubepods/burstable/pod1\n" }, true],
    ["none of them", none, false],
    ["no /proc/1/cgroup", { ...none, initCgroup: null }, false]
  ])("%s -> %s", (_name, sources, expected) => {
    expect(detectContainer(sources)).toBe(expected)
  })
})

describe("host section", () => {
  it("is built from x86 sources", () => {
    const auxv = auxvOf(
      [
        [AT_HWCAP, 1n << 22n],
        [AT_HWCAP2, 2n]
      ],
      8,
      true
    )
    const host = hostFromSources({ ...baseSources, auxv, dockerenvExists: true }, dispatch)
    expect(host).toEqual({
      platform: "linux",
      machine: "x86_64",
      kernel_release: "6.8.0-45-generic",
      in_container: true,
      cpu_model: "AMD EPYC 7B13",
      cpuinfo: parseCpuinfo(x86Cpuinfo).fields,
      cpu_features: ["fpu", "sse2", "avx2", "fma"],
      hwcap: 1 << 22,
      hwcap2: 2,
      // Bit 22 is SVE only on arm64.
      sve_in_hwcap: false,
      dispatch_flags: ["avx2"],
      dispatch_flags_source: "svc_cpu_flags()",
      logical_cores: 2,
      os_version: "Debian GNU/Linux 12 (bookworm)",
      hw_model: null,
      accel_device: null
    })
    expect(Schema.is(Host)(host)).toBe(true)
  })

  it("is built from arm64 sources, with SVE from AT_HWCAP bit 22", () => {
    const auxv = auxvOf([[AT_HWCAP, (1n << 22n) | 0xffn]], 8, true)
    const host = hostFromSources({ ...baseSources, machine: "aarch64", cpuinfo: arm64Cpuinfo, auxv }, dispatch)
    expect(host.sve_in_hwcap).toBe(true)
    expect(host.cpu_model).toBe("Raspberry Pi 4 Model B Rev 1.5")
    expect(host.cpu_features).toEqual(["fp", "asimd", "evtstrm", "sve"])
    expect(host.hwcap2).toBeNull()
  })

  it("reports a mask wider than a JSON number holds exactly as null", () => {
    const auxv = auxvOf([[AT_HWCAP2, 1n << 60n]], 8, true)
    expect(hostFromSources({ ...baseSources, auxv }, dispatch).hwcap2).toBeNull()
  })

  it("falls back to the runtime's CPU list without /proc/cpuinfo", () => {
    const host = hostFromSources({ ...baseSources, cpuinfo: null, platform: "darwin", osRelease: null }, dispatch)
    expect(host).toMatchObject({
      platform: "osb",
      cpu_model: "fallback model",
      logical_cores: 64,
      cpuinfo: {},
      os_version: null
    })
  })

  it("names the os-release PRETTY_NAME", () => {
    expect(osReleasePrettyName('ID=alpine\nPRETTY_NAME="Alpine Linux v3.20"\n')).toBe("Alpine Linux v3.20")
    expect(osReleasePrettyName("ID=alpine\n")).toBeNull()
  })

  it("is read from this machine and fits the schema", async () => {
    const host = await Effect.runPromise(readHost(dispatch))
    expect(Schema.is(Host)(host)).toBe(true)
    expect(host.kernel_release).toBe(readFileSync("/proc/sys/kernel/osrelease", "utf8").trim())
    expect(host.hwcap).not.toBeNull()
  })
})
