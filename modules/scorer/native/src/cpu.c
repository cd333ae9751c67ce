/* Runtime CPU dispatch: which backend a request resolves to on this machine. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

int svc_cpu_has_avx2(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2");
#else
    return 0;
#endif
}

/* The AVX-512 kernels use F, BW, VL, DQ (64-bit conversions) and CD (leading-zero counts);
 * the compiler's check includes the OS's saving of the ZMM and mask state. */
int svc_cpu_has_avx512(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    return svc_cpu_has_avx2() && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
           __builtin_cpu_supports("avx512cd");
#else
    return 0;
#endif
}

int svc_cpu_has_avx512_vnni(void) {
#if defined(__x86_64__) || defined(__i386__)
    return svc_cpu_has_avx512() && __builtin_cpu_supports("avx512vnni");
#else
    return 0;
#endif
}

int svc_cpu_supported(int cpu) {
    switch (cpu) {
    case SVC_CPU_AUTO:
    case SVC_CPU_SCALAR: return 1;
    case SVC_CPU_AVX2: return svc_cpu_has_avx2();
    case SVC_CPU_AVX512: return svc_cpu_has_avx512();
    default: return 0;
    }
}

const char *svc_cpu_best(void) {
    return svc_cpu_has_avx512() ? "avx512" : svc_cpu_has_avx2() ? "avx2" : "scalar";
}

int svc_cpu_resolve(int requested) {
    /* SVC_SCORER_CPU=scalar forces the reference path for every request (operators' switch). */
    const char *env = getenv("SVC_SCORER_CPU");
    if (env && strcmp(env, "scalar") == 0) return SVC_CPU_SCALAR;
    if (requested == SVC_CPU_SCALAR) return SVC_CPU_SCALAR;
    if (requested == SVC_CPU_AVX2) return svc_cpu_has_avx2() ? SVC_CPU_AVX2 : -1;
    if (requested == SVC_CPU_AVX512) return svc_cpu_has_avx512() ? SVC_CPU_AVX512 : -1;
    return svc_cpu_has_avx512() ? SVC_CPU_AVX512 : svc_cpu_has_avx2() ? SVC_CPU_AVX2 : SVC_CPU_SCALAR;
}
