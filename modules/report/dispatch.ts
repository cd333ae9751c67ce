// What the native library says about its CPU dispatch on this host (host.dispatch_flags).
import { NativeCpu, type NativeSymbols } from "../scorer/index.ts"
import type { DispatchFacts } from "./host.ts"
import { type SimdPath, simdPaths } from "./measure.ts"

/** What this CPU lacks for a SIMD path (the reason it is not exercised). */
export const missingFeature: Record<SimdPath, string> = {
  avx2: "AVX2",
  avx512: "AVX-512 (F, BW, VL, DQ, CD)"
}

/** The SIMD paths this CPU can run. */
export const supportedSimdPaths = (symbols: Pick<NativeSymbols, "svc_cpu_supported">): ReadonlyArray<SimdPath> =>
  simdPaths.filter((path) => symbols.svc_cpu_supported(NativeCpu[path]) !== 0)

/** The backends this CPU can run, as svc_cpu_supported reports them (non-zero: yes). */
export const dispatchFacts = (symbols: Pick<NativeSymbols, "svc_cpu_best" | "svc_cpu_supported">): DispatchFacts => {
  const supported = (["scalar", ...simdPaths] as const).filter(
    (backend) => symbols.svc_cpu_supported(NativeCpu[backend]) !== 0
  )
  return {
    dispatchFlags: supported,
    dispatchFlagsSource: `svc_cpu_supported; svc_cpu_best (default dispatch) = ${String(symbols.svc_cpu_best())}`
  }
}
