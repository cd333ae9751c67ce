// What the native library says about its CPU dispatch on this host (host.dispatch_flags).
import { NativeCpu, type NativeSymbols } from "../scorer/native.ts"
import type { DispatchFacts } from "./host.ts"

/** The backends this CPU can run, as svc_cpu_supported reports them (non-zero: yes). */
export const dispatchFacts = (symbols: Pick<NativeSymbols, "svc_cpu_best" | "svc_cpu_supported">): DispatchFacts => {
  const supported = (["scalar", "avx2"] as const).filter(
    (backend) => symbols.svc_cpu_supported(NativeCpu[backend]) !== 0
  )
  return {
    dispatchFlags: supported,
    dispatchFlagsSource: `svc_cpu_supported; svc_cpu_best (default dispatch) = ${String(symbols.svc_cpu_best())}`
  }
}
