/*
 * Private interface between cambi (cambi.c) and its AVX2 kernels
 * (x86/cambi_avx2.c). Integer arithmetic for the histograms and the
 * scalar code's float operations in the same order for the c-values: every backend gives the
 * same histograms and the same c-values, bit for bit.
 *
 * Histogram rows (one per bin, one counter per column) have a stride of at least the width plus
 * CAMBI_HIST_SLACK columns: a SIMD kernel may read, and add 0 to, columns up to
 * CAMBI_HIST_SLACK - 1 past the last column it was asked for.
 */
#ifndef SVC_FEATURE_CAMBI_H
#define SVC_FEATURE_CAMBI_H

#include <stddef.h>
#include <stdint.h>

#define CAMBI_HIST_SLACK 16

/* A run of n masked pixels of one value starting at column a of a row adds (delta = +1) or
 * removes (-1) itself to the histogram row `row` (the run's bin) of every column c in [lo, hi),
 * lo = max(a - pad, 0), hi = min(a + n + pad, w): column c counts the run's pixels within
 * [c - pad, c + pad], min(n - 1, c - a + pad) - max(0, c - a - pad) + 1 of them. */
typedef void (*svc_cambi_run_add)(uint16_t *row, int lo, int hi, int a, int n, int pad, int delta);

/* The c-values of a run of n masked pixels of one value: h0 points at the run's first column in
 * the histogram row of its value, stride is the histogram's row stride; for the nd contrasts
 * d = diffs[j] (0-based, each visible at that value) weighted weights[j], p0 = h0[i] and
 * p = max(h0[i + (d + 1) * stride], h0[i - (d + 1) * stride]); out[i] is the largest
 * (float)(weight * p0 * p) / (float)(p + p0). */
typedef void (*svc_cambi_run_cvalues)(const uint16_t *h0, ptrdiff_t stride, int n, const int *diffs,
                                      const int *weights, int nd, float *out);

/* 3-tap mode of in[x - 1], in[x], in[x + 1] for x in [1, w - 1) (horizontal pass, out[x]), or of
 * a[x], b[x], c[x] for x in [0, w) (vertical pass): the value two of them share, else the least. */
typedef void (*svc_cambi_mode_h)(const uint16_t *in, uint16_t *out, int w);
typedef void (*svc_cambi_mode_v)(const uint16_t *a, const uint16_t *b, const uint16_t *c, uint16_t *out, int w);

/* The flat indicator of a row r (below: the next row, NULL for the last): f[x] = 1 where
 * r[x] == r[x + 1] and r[x] == below[x], a missing neighbour counting as equal; else 0. */
typedef void (*svc_cambi_flat_row)(const uint16_t *r, const uint16_t *below, uint16_t *f, int w);
/* cs[x + 3] (x in [0, w)) is column x's 7-row sum of the indicator, cs[0..2] and cs[w+3..w+5]
 * are 0: first cs[x + 3] += add[x] - sub[x] (either may be NULL), then m[x] = 1 when
 * cs[x] + ... + cs[x + 6] > threshold, else 0. */
typedef void (*svc_cambi_mask_row)(uint16_t *cs, const uint16_t *add, const uint16_t *sub, uint16_t *m, int w,
                                   int threshold);

/* An 8-bit row r on the 10-bit scale averaged over 2x2 blocks (below: the next row, NULL for
 * the last): dst[x] = r[x] + r[x + 1] + below[x] + below[x + 1], a missing row or column
 * counted by doubling the pair there is (the corner: 4 r[x]). */
typedef void (*svc_cambi_luma8_row)(const uint8_t *r, const uint8_t *below, uint16_t *dst, int w);

#if defined(__x86_64__) || defined(__i386__)
void svc_cambi_luma8_row_avx2(const uint8_t *r, const uint8_t *below, uint16_t *dst, int w);
void svc_cambi_flat_row_avx2(const uint16_t *r, const uint16_t *below, uint16_t *f, int w);
void svc_cambi_mask_row_avx2(uint16_t *cs, const uint16_t *add, const uint16_t *sub, uint16_t *m, int w,
                             int threshold);
void svc_cambi_run_add_avx2(uint16_t *row, int lo, int hi, int a, int n, int pad, int delta);
void svc_cambi_run_cvalues_avx2(const uint16_t *h0, ptrdiff_t stride, int n, const int *diffs, const int *weights,
                                int nd, float *out);
void svc_cambi_mode_h_avx2(const uint16_t *in, uint16_t *out, int w);
void svc_cambi_mode_v_avx2(const uint16_t *a, const uint16_t *b, const uint16_t *c, uint16_t *out, int w);
#endif

#endif
