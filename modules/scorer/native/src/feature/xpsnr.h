/*
 * xpsnr's SIMD kernels (x86/xpsnr_avx2.c, x86/xpsnr_avx512.c) for samples of at most 12 bits on
 * the full-resolution path, bit-identical to the scalar loops of xpsnr.c (integer sums, in
 * 32-bit lanes that cannot overflow at 12 bits, added into 64-bit totals). Planes are packed
 * 16-bit lumas of width w.
 */
#ifndef SVC_FEATURE_XPSNR_H
#define SVC_FEATURE_XPSNR_H

#include <stdint.h>

/* Sum of squared differences of the bw x bh block at (x0, y0). */
uint64_t svc_xpsnr_sse_avx2(const uint16_t *a, const uint16_t *b, int w, int x0, int y0, int bw, int bh);
/* Sum of |3x3 high-pass| over [x_lo, x_hi) x [y_lo, y_hi) (absolute coordinates). */
uint64_t svc_xpsnr_spatial_avx2(const uint16_t *o, int w, int x_lo, int x_hi, int y_lo, int y_hi);
/* Sum of |first| or |second-order difference| over the block (p1, p2 NULL: zero), before the gamma. */
uint64_t svc_xpsnr_temporal_avx2(const uint16_t *o, const uint16_t *p1, const uint16_t *p2, int second_order, int w,
                                 int x0, int y0, int bw, int bh);

uint64_t svc_xpsnr_sse_avx512(const uint16_t *a, const uint16_t *b, int w, int x0, int y0, int bw, int bh);
uint64_t svc_xpsnr_spatial_avx512(const uint16_t *o, int w, int x_lo, int x_hi, int y_lo, int y_hi);
uint64_t svc_xpsnr_temporal_avx512(const uint16_t *o, const uint16_t *p1, const uint16_t *p2, int second_order, int w,
                                   int x0, int y0, int bw, int bh);

/* One backend's kernels, as the state calls them. */
typedef struct svc_xpsnr_kernels {
    const char *name; /* "avx2", "avx512" */
    uint64_t (*sse)(const uint16_t *a, const uint16_t *b, int w, int x0, int y0, int bw, int bh);
    uint64_t (*spatial)(const uint16_t *o, int w, int x_lo, int x_hi, int y_lo, int y_hi);
    uint64_t (*temporal)(const uint16_t *o, const uint16_t *p1, const uint16_t *p2, int second_order, int w, int x0,
                         int y0, int bw, int bh);
} svc_xpsnr_kernels;

#endif
