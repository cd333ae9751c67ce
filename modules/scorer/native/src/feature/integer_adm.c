/*
 * Fixed-point ADM ("integer_adm"), numerically equal to the reference library's default
 * integer ADM (Watson CSF, view distance 3H at 1080 lines, enhancement gain limit 100,
 * noise weight 1/32, DLM weight 0.5), and to it with the options model files set: the gain
 * limit (adm_enhn_gain_limit, 1 to 100; the NEG models set 1: the SIMD decoupling runs
 * whole-number limits, any other value decouples on the scalar path), and the vmaf_v1.0.16
 * models' adm_csf_mode 2 (the tabulated Barten-Watson blend) with its viewing geometry
 * (adm_norm_view_dist, adm_ref_display_height), adm_noise_weight, adm_dlm_weight (adm3's
 * weighting of ADM2 against 1 - AIM) and adm_min_val (adm3's floor). Weights other than the
 * default viewing's take the same SIMD kernels (the scale-0 weights are their parameter).
 *
 * Per scale (4 levels of a db2 DWT on luma):
 *   1. DWT of reference and distorted (scale 0 from pixels in 16-bit precision, scales 1-3
 *      from the previous approximation band in 32-bit precision);
 *   2. decoupling: the distorted detail is split into a "restored" part (reference detail
 *      times a clamped gain) and an "additive" part (the rest), with the gain allowed above
 *      1 when the two detail vectors point the same way (angle < 1 degree);
 *   3. CSF weighting and contrast masking: the restored part is measured against a
 *      threshold built from the CSF-weighted additive part of the 3x3 neighbourhood
 *      (AIM swaps the roles);
 *   4. Minkowski-3 pooling over the frame minus a 10% border, normalised by the pooled
 *      CSF-weighted reference detail.
 * Every shift, rounding constant and narrowing cast below is the reference's; several are
 * quirks (a rounding term that subtracts, an add of 65535 instead of 65536) that the
 * published scores depend on. Where the reference's x86 AVX2 build (the one that produced
 * the published scores) differs from its own scalar code, we follow the AVX2 build; the two
 * places are marked.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "adm_csf.h"
#include "integer_adm_decouple.h"
#include "extractor.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

/* Every DWT level mirrors its 4-tap filter inside its input, which needs >= 5 samples:
 * ceil(n / 8) >= 5 at the last level. */
#define ADM_MIN_DIM 33

#define NOISE_WEIGHT 0.03125 /* adm_noise_weight's default */

static const int32_t LO[4] = {15826, 27411, 7345, -4240};
static const int32_t HI[4] = {-4240, -7345, 27411, -15826};
#define LO_SUM 46342 /* sum of LO; HI sums to 0 */

/* Index of tap k of a filter centred on a decimated sample, mirrored at the borders the
 * way the reference does: -1 -> 1 and n + m -> n - 1 - m. */
static inline int mirror(int k, int n) {
    if (k < 0) return -k;
    if (k >= n) return 2 * n - k - 1;
    return k;
}

/* ---- DWT row kernels ----
 * Scale 0 filters pixels into int16 rows (the reference's 16-bit pipeline: every
 * intermediate provably fits, |v| <= 27411, so 32-bit arithmetic is exact there); scales
 * 1-3 filter int32 rows with 64-bit sums. Each output row is a vertical pass over 4
 * mirrored source rows into a lo and a hi row, then a horizontal pass giving A, H, V, D.
 * The AVX2 kernels (x86/integer_adm_avx2.c, bit-identical) each do a prefix of the
 * columns and return where they stopped; the scalar code finishes the row. */

typedef struct adm_simd {
    int (*vpass_u8)(const uint8_t *const rows[4], int w, int16_t *lo, int16_t *hi);
    int (*vpass_u16)(const uint16_t *const rows[4], int w, int bpc, int16_t *lo, int16_t *hi);
    int (*vpass_s32)(const int32_t *const rows[4], int w, int64_t round, int shift, int32_t *lo,
                     int32_t *hi);
    /* Horizontal passes over output columns [j0, j1), whose taps need no mirroring. */
    int (*hpass_s16)(const int16_t *lo, const int16_t *hi, int j0, int j1,
                     int32_t *const out[4]);
    int (*hpass_s32)(const int32_t *lo, const int32_t *hi, int j0, int j1, int64_t round,
                     int shift, int32_t *const out[4]);
    /* Scale-0 stages on row segments (all values within the 16-bit pipeline's range):
     * decoupling of n pixels, the CSF masker planes of n pixels (wrap16: truncate the
     * threshold's centre term to int16), and the masked cube sums of columns [j0, j1) into
     * in[3] (m0..m2: the msum rows i-1..i+1; columns j0-1 .. j1 must exist). */
    int (*decouple_s16)(const int32_t *const o[3], const int32_t *const t[3], int n,
                        const int32_t *recip, float cos1_sq, int gain, int32_t *const r[3],
                        int32_t *const a[3]);
    int (*csf_s16)(const int32_t *const src[3], int n, int wrap16, int32_t *msum, int32_t *mctr,
                   const int32_t rf[3]);
    int (*mask_s16)(const int32_t *m0, const int32_t *m1, const int32_t *m2, const int32_t *ctr,
                    const int32_t *const src[3], int j0, int j1, const int cub[3],
                    int64_t in[3], const int32_t rf[3]);
    /* The same stages at scales 1-3 (32-bit coefficients, 64-bit products); the angle test
     * comes precomputed per pixel (0 or -1) since it needs int64 -> float conversions. */
    int (*decouple_s32)(const int32_t *const o[3], const int32_t *const t[3], const int32_t *angle,
                        int n, const int32_t *recip, int gain, int32_t *const r[3], int32_t *const a[3]);
    int (*csf_s32)(const int32_t *const src[3], int n, const uint32_t irf[3], int32_t *msum,
                   int32_t *mctr);
    int (*mask_s32)(const int32_t *m0, const int32_t *m1, const int32_t *m2, const int32_t *ctr,
                    const int32_t *const src[3], int j0, int j1, const uint32_t irf[3], int cub,
                    int64_t in[3]);
    /* Reference detail sums of n pixels: ((|v|^2 + sq_add) >> sq) * |v| + cub_add) >> cub. */
    int (*cubes)(const int32_t *const band[3], int n, int sq, uint32_t sq_add, int cub,
                 uint32_t cub_add, uint64_t in[3]);
    /* Scale 1-3 decoupling with the angle test done in the kernel (NULL: decouple_s32 with the
     * test precomputed by the scalar code). */
    int (*decouple_s32_angle)(const int32_t *const o[3], const int32_t *const t[3], int n,
                              const int32_t *recip, float cos1_sq, int gain, int32_t *const r[3],
                              int32_t *const a[3]);
} adm_simd;

#if defined(__x86_64__) || defined(__i386__)
int svc_adm_vpass_u8_avx2(const uint8_t *const rows[4], int w, int16_t *lo, int16_t *hi);
int svc_adm_vpass_u16_avx2(const uint16_t *const rows[4], int w, int bpc, int16_t *lo,
                           int16_t *hi);
int svc_adm_vpass_s32_avx2(const int32_t *const rows[4], int w, int64_t round, int shift,
                           int32_t *lo, int32_t *hi);
int svc_adm_hpass_s16_avx2(const int16_t *lo, const int16_t *hi, int j0, int j1,
                           int32_t *const out[4]);
int svc_adm_hpass_s32_avx2(const int32_t *lo, const int32_t *hi, int j0, int j1, int64_t round,
                           int shift, int32_t *const out[4]);
int svc_adm_decouple_s16_avx2(const int32_t *const o[3], const int32_t *const t[3], int n,
                              const int32_t *recip, float cos1_sq, int gain, int32_t *const r[3],
                              int32_t *const a[3]);
int svc_adm_csf_s16_avx2(const int32_t *const src[3], int n, int wrap16, int32_t *msum,
                         int32_t *mctr, const int32_t rf[3]);
int svc_adm_mask_s16_avx2(const int32_t *m0, const int32_t *m1, const int32_t *m2,
                          const int32_t *ctr, const int32_t *const src[3], int j0, int j1,
                          const int cub[3], int64_t in[3], const int32_t rf[3]);
int svc_adm_decouple_s32_avx2(const int32_t *const o[3], const int32_t *const t[3],
                              const int32_t *angle, int n, const int32_t *recip, int gain,
                              int32_t *const r[3], int32_t *const a[3]);
int svc_adm_csf_s32_avx2(const int32_t *const src[3], int n, const uint32_t irf[3],
                         int32_t *msum, int32_t *mctr);
int svc_adm_mask_s32_avx2(const int32_t *m0, const int32_t *m1, const int32_t *m2,
                          const int32_t *ctr, const int32_t *const src[3], int j0, int j1,
                          const uint32_t irf[3], int cub, int64_t in[3]);
int svc_adm_cubes_avx2(const int32_t *const band[3], int n, int sq, uint32_t sq_add, int cub,
                       uint32_t cub_add, uint64_t in[3]);

/* x86/integer_adm_avx512.c: every stage twice as wide; the scale 1-3 decoupling also does
 * its angle test (the AVX2 path's decouple_s32 stays unused there). */
int svc_adm_vpass_u8_avx512(const uint8_t *const rows[4], int w, int16_t *lo, int16_t *hi);
int svc_adm_vpass_u16_avx512(const uint16_t *const rows[4], int w, int bpc, int16_t *lo, int16_t *hi);
int svc_adm_vpass_s32_avx512(const int32_t *const rows[4], int w, int64_t round, int shift, int32_t *lo,
                             int32_t *hi);
int svc_adm_hpass_s16_avx512(const int16_t *lo, const int16_t *hi, int j0, int j1, int32_t *const out[4]);
int svc_adm_hpass_s32_avx512(const int32_t *lo, const int32_t *hi, int j0, int j1, int64_t round, int shift,
                             int32_t *const out[4]);
int svc_adm_decouple_s16_avx512(const int32_t *const o[3], const int32_t *const t[3], int n, const int32_t *recip,
                                float cos1_sq, int gain, int32_t *const r[3], int32_t *const a[3]);
int svc_adm_csf_s16_avx512(const int32_t *const src[3], int n, int wrap16, int32_t *msum, int32_t *mctr,
                           const int32_t rf[3]);
int svc_adm_mask_s16_avx512(const int32_t *m0, const int32_t *m1, const int32_t *m2, const int32_t *ctr,
                            const int32_t *const src[3], int j0, int j1, const int cub[3], int64_t in[3],
                            const int32_t rf[3]);

int svc_adm_csf_s32_avx512(const int32_t *const src[3], int n, const uint32_t irf[3], int32_t *msum, int32_t *mctr);
int svc_adm_mask_s32_avx512(const int32_t *m0, const int32_t *m1, const int32_t *m2, const int32_t *ctr,
                            const int32_t *const src[3], int j0, int j1, const uint32_t irf[3], int cub, int64_t in[3]);
int svc_adm_cubes_avx512(const int32_t *const band[3], int n, int sq, uint32_t sq_add, int cub, uint32_t cub_add,
                         uint64_t in[3]);
int svc_adm_decouple_s32_angle_avx512(const int32_t *const o[3], const int32_t *const t[3], int n,
                                      const int32_t *recip, float cos1_sq, int gain, int32_t *const r[3],
                                      int32_t *const a[3]);

static const adm_simd simd_avx512 = {
    svc_adm_vpass_u8_avx512,     svc_adm_vpass_u16_avx512, svc_adm_vpass_s32_avx512,
    svc_adm_hpass_s16_avx512,    svc_adm_hpass_s32_avx512, svc_adm_decouple_s16_avx512,
    svc_adm_csf_s16_avx512,      svc_adm_mask_s16_avx512,  svc_adm_decouple_s32_avx2,
    svc_adm_csf_s32_avx512,      svc_adm_mask_s32_avx512,  svc_adm_cubes_avx512,
    svc_adm_decouple_s32_angle_avx512,
};

static const adm_simd simd_avx2 = {
    svc_adm_vpass_u8_avx2,     svc_adm_vpass_u16_avx2, svc_adm_vpass_s32_avx2,
    svc_adm_hpass_s16_avx2,    svc_adm_hpass_s32_avx2, svc_adm_decouple_s16_avx2,
    svc_adm_csf_s16_avx2,      svc_adm_mask_s16_avx2,  svc_adm_decouple_s32_avx2,
    svc_adm_csf_s32_avx2,      svc_adm_mask_s32_avx2,  svc_adm_cubes_avx2,
    NULL,
};
#endif

static inline int32_t sample(const void *row, int is16, int j) {
    return is16 ? ((const uint16_t *)row)[j] : ((const uint8_t *)row)[j];
}

static inline void vpass_pix_c(const void *const rows[4], int is16, int j0, int w, int bpc,
                               int16_t *lo, int16_t *hi) {
    const int32_t half = 1 << (bpc - 1);
    const int64_t offset = (int64_t)LO_SUM * half; /* recentres [0, 2^bpc) on 0 */
    for (int j = j0; j < w; j++) {
        int64_t l = -offset, h = 0;
        for (int k = 0; k < 4; k++) {
            const int32_t p = sample(rows[k], is16, j);
            l += (int64_t)LO[k] * p;
            h += (int64_t)HI[k] * p;
        }
        lo[j] = (int16_t)((l + half) >> bpc);
        hi[j] = (int16_t)((h + half) >> bpc);
    }
}

static void vpass_s32_c(const int32_t *const rows[4], int j0, int w, int64_t round, int shift,
                        int32_t *lo, int32_t *hi) {
    for (int j = j0; j < w; j++) {
        const int64_t p0 = rows[0][j], p1 = rows[1][j], p2 = rows[2][j], p3 = rows[3][j];
        lo[j] = (int32_t)((LO[0] * p0 + LO[1] * p1 + LO[2] * p2 + LO[3] * p3 + round) >> shift);
        hi[j] = (int32_t)((HI[0] * p0 + HI[1] * p1 + HI[2] * p2 + HI[3] * p3 + round) >> shift);
    }
}

static inline int32_t tap(const void *row, int is16, int k) {
    return is16 ? ((const int16_t *)row)[k] : ((const int32_t *)row)[k];
}

/* Horizontal pass over output columns [j0, j1) of a row of input width w; is16 selects the
 * scale-0 layout (int16 input, int16 output range). out: A, H, V, D. */
static inline void hpass_c(const void *lo, const void *hi, int is16, int w, int j0, int j1,
                           int64_t round, int shift, int32_t *const out[4]) {
    for (int j = j0; j < j1; j++) {
        int64_t s[4] = {0, 0, 0, 0};
        for (int k = 0; k < 4; k++) {
            const int c = mirror(2 * j - 1 + k, w);
            const int32_t l = tap(lo, is16, c), h = tap(hi, is16, c);
            s[0] += (int64_t)LO[k] * l; /* A: low V, low H */
            s[1] += (int64_t)LO[k] * h; /* H: high V, low H */
            s[2] += (int64_t)HI[k] * l; /* V: low V, high H */
            s[3] += (int64_t)HI[k] * h; /* D: high V, high H */
        }
        for (int b = 0; b < 4; b++) {
            const int64_t v = (s[b] + round) >> shift;
            out[b][j] = is16 ? (int16_t)v : (int32_t)v;
        }
    }
}

/* ---- per-thread state ---- */

enum { B_A, B_H, B_V, B_D };

typedef struct adm_state {
    int w, h, bpc;
    const adm_simd *simd;   /* NULL: scalar only */
    const char *backend;
    double gain_limit;      /* adm_enhn_gain_limit */
    int simd_gain;          /* the same as a whole number for the SIMD decoupling; 0: not whole */
    ptrdiff_t stride;       /* elements per row of every coefficient plane */
    int32_t *mem;
    int32_t *ref[4], *dis[4]; /* A, H, V, D of the current scale */
    int32_t *ref_a2, *dis_a2; /* second A plane: the next DWT's input while A is rewritten */
    int32_t *rest[3], *add[3]; /* decoupled restored / additive detail: H, V, D */
    int32_t *msum;            /* sum over H, V, D of the masker's |CSF| / 30 */
    int32_t *mctr;            /* per-pixel centre correction of the masking threshold */
    int32_t *msum_r, *mctr_r; /* the same for the restored part's masker (AIM) */
    int ref_ring;             /* ref[B_H..B_D] are rings of ADM_RING rows (see ref_row) */
    int32_t *tmp;             /* DWT vertical pass: lo row, hi row */
    int32_t *angle;           /* per-pixel angle test of one row (SIMD decoupling) */
    int32_t *recip;           /* 2^30 / n, n = 0..32768 */
    float rfac[4][3];         /* CSF weight per scale for H/V, H/V, D */
    uint32_t irfac[4][3];     /* the same in Q32 (scales 1-3) */
    int32_t rf0[3];           /* scale 0's in Q21, Q21, Q23 */

    double noise_weight, dlm_weight, min_val;
    /* Ladders (adm_ladder_prepare): the reference's H, V, D bands of every scale (rows of the
     * same stride, allocated on the first ladder frame) and its detail sums, kept for all the
     * renditions of a frame. */
    int32_t *lmem;
    int32_t *lband[4][3];
    float lden[4];
} adm_state;

/* Both pictures' H, V, D bands and the decoupled and masker planes (rest, add, msum, mctr,
 * msum_r, mctr_r) hold ADM_RING rows, row i at i mod ADM_RING: run_scale's blocks need only
 * rows y0 - 2 .. y1 - 1 of them at a time (see there), so they stay in L2 instead of being
 * written back to memory as whole planes. Only the A bands (the next scale's input) are whole. */
#define ADM_BLOCK_ROWS 8
#define ADM_RING 16 /* a power of two >= ADM_BLOCK_ROWS + 2 */

static inline ptrdiff_t ring_row(const adm_state *s, int i) {
    return (ptrdiff_t)(i & (ADM_RING - 1)) * s->stride;
}

/* Row i of the reference's H, V, D bands: a ring row as well, unless ref_ring is 0 (whole
 * planes, e.g. bands kept for several distorted pictures). */
static inline ptrdiff_t ref_row(const adm_state *s, int i) {
    return s->ref_ring ? ring_row(s, i) : (ptrdiff_t)i * s->stride;
}

/* ---- decoupling ---- */

typedef struct rect {
    int x0, y0, x1, y1;
} rect;

/* Pooling rectangle: the frame minus about 10% on each side. */
static rect pool_rect(int w, int h) {
    const int left = (int)(w * 0.1 - 0.5), top = (int)(h * 0.1 - 0.5);
    return (rect){left, top, w - left, h - top};
}

/* The decoupled and CSF planes are needed one sample further out for the 3x3 window. */
static rect grow1(rect r, int w, int h) {
    return (rect){r.x0 > 0 ? r.x0 - 1 : 0, r.y0 > 0 ? r.y0 - 1 : 0, r.x1 < w ? r.x1 + 1 : w,
                  r.y1 < h ? r.y1 + 1 : h};
}

static void decouple(adm_state *s, int narrow16, rect rc) {
    const float cos1_sq = cos(1.0 * M_PI / 180.0) * cos(1.0 * M_PI / 180.0);
    const int n = rc.x1 - rc.x0;
    for (int i = rc.y0; i < rc.y1; i++) {
        const ptrdiff_t row = ref_row(s, i) + rc.x0, rrow = ring_row(s, i) + rc.x0;
        int j = 0;
        if (s->simd && s->simd_gain) {
            const int32_t *const o[3] = {s->ref[B_H] + row, s->ref[B_V] + row, s->ref[B_D] + row};
            const int32_t *const t[3] = {s->dis[B_H] + rrow, s->dis[B_V] + rrow, s->dis[B_D] + rrow};
            int32_t *const r[3] = {s->rest[0] + rrow, s->rest[1] + rrow, s->rest[2] + rrow};
            int32_t *const a[3] = {s->add[0] + rrow, s->add[1] + rrow, s->add[2] + rrow};
            if (narrow16) {
                j = s->simd->decouple_s16(o, t, n, s->recip, cos1_sq, s->simd_gain, r, a);
            } else if (s->simd->decouple_s32_angle) {
                j = s->simd->decouple_s32_angle(o, t, n, s->recip, cos1_sq, s->simd_gain, r, a);
            } else {
                for (int k = 0; k < n; k++)
                    s->angle[k] = -same_direction(o[0][k], o[1][k], t[0][k], t[1][k], cos1_sq);
                j = s->simd->decouple_s32(o, t, s->angle, n, s->recip, s->simd_gain, r, a);
            }
        }
        for (; j < n; j++) {
            const ptrdiff_t p = row + j, q = rrow + j;
            const int32_t oh = s->ref[B_H][p], ov = s->ref[B_V][p], od = s->ref[B_D][p];
            const int32_t th = s->dis[B_H][q], tv = s->dis[B_V][q], td = s->dis[B_D][q];
            const int angle_ok = same_direction(oh, ov, th, tv, cos1_sq);
            const int32_t o[3] = {oh, ov, od}, t[3] = {th, tv, td};
            for (int b = 0; b < 3; b++) {
                const int64_t r = restored(o[b], t[b], angle_ok, s->recip, s->gain_limit);
                const int32_t rn = narrow16 ? (int16_t)r : (int32_t)r;
                s->rest[b][q] = rn;
                s->add[b][q] = narrow16 ? (int16_t)(t[b] - rn) : (int32_t)((int64_t)t[b] - rn);
            }
        }
    }
}

/* ---- CSF and masking ---- */

/* Scale 0 runs in 16-bit precision: Q21/Q23 CSF weights (RF0: the reference's constants for
 * the default viewing conditions; others are converted from the weights, s->rf0). */
static const int32_t RF0[3] = {36453, 36453, 49417};
static const int32_t RF0_ADD[3] = {16384, 16384, 65535};
static const int RF0_SHIFT[3] = {15, 15, 17};

/* CSF-weights the masker and folds it into the two planes the threshold needs:
 * msum = sum_b |csf_b| / 30 and mctr = sum_b (|csf_b| / 15 - |csf_b| / 30), so that the
 * threshold at (i, j) is the 3x3 sum of msum plus mctr(i, j). At scale 0 the |csf| / 15
 * term is truncated to int16 outside `wide` (see wide_rect). */
static void csf_segment(adm_state *s, int scale, int32_t *const src[3], int32_t *msum_p,
                        int32_t *mctr_p, ptrdiff_t row, int j0, int j1, int wrap16) {
    int j = j0;
    if (s->simd && j1 > j0) {
        const int32_t *const in[3] = {src[0] + row + j0, src[1] + row + j0, src[2] + row + j0};
        int32_t *ms = msum_p + row + j0, *mc = mctr_p + row + j0;
        j += scale == 0 ? s->simd->csf_s16(in, j1 - j0, wrap16, ms, mc, s->rf0)
                        : s->simd->csf_s32(in, j1 - j0, s->irfac[scale], ms, mc);
    }
    for (; j < j1; j++) {
        const ptrdiff_t p = row + j;
        uint32_t msum = 0, mctr = 0; /* the reference sums in wrapping 32-bit */
        for (int b = 0; b < 3; b++) {
            int32_t m, c;
            if (scale == 0) {
                const int32_t d = (int16_t)((s->rf0[b] * src[b][p] + RF0_ADD[b]) >> RF0_SHIFT[b]);
                m = (int16_t)((4369 * abs(d) + 2048) >> 12); /* 2^17 / 30 */
                c = (8738 * abs(d) + 2048) >> 12;            /* 2^17 / 15 */
                if (wrap16) c = (int16_t)c;
            } else {
                const int32_t d =
                    (int32_t)(((int64_t)s->irfac[scale][b] * src[b][p] + (1 << 27)) >> 28);
                const int64_t ad = llabs((int64_t)d);
                /* The reference's "+2^31" rounding term is stored in an int32 and so
                 * subtracts 2^31. */
                m = (int32_t)((143165577LL * ad - 2147483648LL) >> 32); /* 2^32 / 30 */
                c = (int32_t)((286331153LL * ad - 2147483648LL) >> 32); /* 2^32 / 15 */
            }
            msum += (uint32_t)m;
            mctr += (uint32_t)c - (uint32_t)m;
        }
        msum_p[p] = (int32_t)msum;
        mctr_p[p] = (int32_t)mctr;
    }
}

static void csf_masker(adm_state *s, int scale, int32_t *const src[3], int32_t *msum,
                       int32_t *mctr, rect rc, rect wide) {
    for (int i = rc.y0; i < rc.y1; i++) {
        const ptrdiff_t row = ring_row(s, i);
        if (scale == 0 && i >= wide.y0 && i < wide.y1 && wide.x0 < wide.x1) {
            csf_segment(s, scale, src, msum, mctr, row, rc.x0, wide.x0, 1);
            csf_segment(s, scale, src, msum, mctr, row, wide.x0, wide.x1, 0);
            csf_segment(s, scale, src, msum, mctr, row, wide.x1, rc.x1, 1);
        } else {
            csf_segment(s, scale, src, msum, mctr, row, rc.x0, rc.x1, 1);
        }
    }
}

/* Pixels whose scale-0 masking threshold keeps its centre term in 32 bits. The published
 * scores come from the reference's AVX2 build, whose masking kernel vectorises the interior
 * columns 6 at a time without the int16 truncation of its scalar code; the leftover columns,
 * the first/last rows and frames whose pooling rectangle touches the edge go through the
 * scalar code, which truncates. */
static rect wide_rect(int w, int h) {
    const rect pr = pool_rect(w, h);
    if (pr.x0 <= 0) return (rect){0, 0, 0, 0};
    const int c0 = pr.x0, c1 = pr.x1 < w - 1 ? pr.x1 : w - 1;
    return (rect){c0, pr.y0 > 1 ? pr.y0 : 1, c1 - (c1 - c0) % 6, pr.y1 < h - 1 ? pr.y1 : h - 1};
}

static inline int ceil_log2(double x) { return (int)ceil(log2(x)); }

/* Masked Minkowski-3 sum of src over the pooling rectangle, as the reference's num_scale:
 * rows [r0, r1) of the rectangle are added to acc (exact integers, so rows may come in any
 * blocks), and the score of the rows summed so far is returned. msum/mctr: the masker's
 * planes (csf_masker), rows r0 - 1 .. r1 of them. */
static float masked_sum(const adm_state *s, int scale, int w, int h, int32_t *const src[3],
                        double noise_weight, const int32_t *msum, const int32_t *mctr, int r0,
                        int r1, int64_t acc[3]) {
    const rect rc = pool_rect(w, h);
    int sub[3], sq[3], cub[3];
    int64_t sq_add[3], cub_add[3];
    const int inner = ceil_log2(h);
    const int64_t inner_add = (int64_t)1 << (inner - 1);
    for (int b = 0; b < 3; b++) {
        if (scale == 0) {
            sub[b] = b == 2 ? 12 : 10;
            sq[b] = b == 2 ? 30 : 29;
            cub[b] = (int)ceil(log2(w) - (b == 2 ? 3 : 4));
        } else {
            sub[b] = 0;
            sq[b] = 30;
            cub[b] = ceil_log2(w);
        }
        sq_add[b] = (int64_t)1 << (sq[b] - 1);
        cub_add[b] = cub[b] > 0 ? (int64_t)1 << (cub[b] - 1) : 0;
    }
    const int y0 = r0 > rc.y0 ? r0 : rc.y0, y1 = r1 < rc.y1 ? r1 : rc.y1;
    for (int i = y0; i < y1; i++) {
        const ptrdiff_t ri = ring_row(s, i);
        const int32_t *m0 = msum + ring_row(s, mirror(i - 1, h));
        const int32_t *m1 = msum + ri;
        const int32_t *m2 = msum + ring_row(s, i + 1 < h ? i + 1 : h - 1);
        int64_t in[3] = {0, 0, 0};
        int j = rc.x0;
        if (s->simd && j >= 1) {
            const int32_t *const rows[3] = {src[0] + ri, src[1] + ri, src[2] + ri};
            const int end = rc.x1 < w - 1 ? rc.x1 : w - 1;
            j = scale == 0 ? s->simd->mask_s16(m0, m1, m2, mctr + ri, rows, j, end, cub, in, s->rf0)
                           : s->simd->mask_s32(m0, m1, m2, mctr + ri, rows, j, end,
                                               s->irfac[scale], cub[0], in);
        }
        for (; j < rc.x1; j++) {
            const int jl = mirror(j - 1, w), jr = j + 1 < w ? j + 1 : w - 1;
            const uint32_t thr = (uint32_t)m0[jl] + (uint32_t)m0[j] + (uint32_t)m0[jr] +
                                 (uint32_t)m1[jl] + (uint32_t)m1[jr] + (uint32_t)m2[jl] +
                                 (uint32_t)m2[j] + (uint32_t)m2[jr] + (uint32_t)m1[j] +
                                 (uint32_t)mctr[ri + j];
            for (int b = 0; b < 3; b++) {
                const int32_t v = src[b][ri + j];
                int32_t x;
                if (scale == 0) x = v * s->rf0[b];
                else x = (int32_t)(((int64_t)v * s->irfac[scale][b] + (1 << 27)) >> 28);
                x = (int32_t)((uint32_t)abs(x) - (thr << sub[b]));
                if (x < 0) x = 0;
                const int32_t xsq = (int32_t)(((int64_t)x * x + sq_add[b]) >> sq[b]);
                in[b] += ((int64_t)xsq * x + cub_add[b]) >> cub[b];
            }
        }
        for (int b = 0; b < 3; b++) acc[b] += (in[b] + inner_add) >> inner;
    }
    float f[3];
    if (scale == 0) {
        f[0] = (float)(acc[0] / pow(2, 52 - cub[0] - inner));
        f[1] = (float)(acc[1] / pow(2, 52 - cub[1] - inner));
        f[2] = (float)(acc[2] / pow(2, 57 - cub[2] - inner));
    } else {
        static const int total[4] = {0, 45, 39, 36};
        const float fs = (float)pow(2, total[scale] - cub[0] - inner);
        for (int b = 0; b < 3; b++) f[b] = (float)acc[b] / fs;
    }
    const float floor_term =
        powf((float)((rc.y1 - rc.y0) * (rc.x1 - rc.x0) * noise_weight), 1.0f / 3.0f);
    float sum = 0.0f;
    for (int b = 0; b < 3; b++) sum += powf(f[b], 1.0f / 3.0f) + floor_term;
    return sum;
}

typedef struct detail_rows {
    const int32_t *b[3];
} detail_rows;

static inline detail_rows band_rows(const adm_state *s, ptrdiff_t off) {
    return (detail_rows){{s->ref[B_H] + off, s->ref[B_V] + off, s->ref[B_D] + off}};
}

/* Minkowski-3 sum of the CSF-weighted reference detail (the reference's den_scale): rows
 * [r0, r1) of the pooling rectangle added to acc, the score of the rows so far returned. */
static float detail_sum_rows(const adm_state *s, int scale, int w, int h, double noise_weight,
                             int r0, int r1, uint64_t acc[3]) {
    const rect rc = pool_rect(w, h);
    const int rows = rc.y1 - rc.y0, cols = rc.x1 - rc.x0;
    const int y0 = r0 > rc.y0 ? r0 : rc.y0, y1 = r1 < rc.y1 ? r1 : rc.y1;
    double norm;
    if (scale == 0) {
        int sh = (int)ceil(log2(rows * cols) - 20);
        sh = sh > 0 ? sh : 0;
        const uint64_t add = sh > 0 ? (uint64_t)1 << (sh - 1) : 0;
        for (int i = y0; i < y1; i++) {
            uint64_t in[3] = {0, 0, 0};
            int j = rc.x0;
            if (s->simd) j += s->simd->cubes(band_rows(s, ref_row(s, i) + j).b, cols, 0, 0, 0, 0, in);
            for (; j < rc.x1; j++)
                for (int b = 0; b < 3; b++) {
                    const uint64_t v = (uint16_t)abs(s->ref[B_H + b][ref_row(s, i) + j]);
                    in[b] += v * v * v;
                }
            for (int b = 0; b < 3; b++) acc[b] += (in[b] + add) >> sh;
        }
        norm = pow(2, 18 - sh);
    } else {
        static const int sq_shift[4] = {0, 31, 30, 31};
        static const int to_float[4] = {0, 32, 27, 23};
        const int sq = sq_shift[scale];
        const uint64_t sq_add = (uint64_t)1 << sq; /* sic: a full unit, not half */
        const int cub = ceil_log2(cols), inner = ceil_log2(rows);
        const uint64_t cub_add = (uint64_t)1 << (cub - 1), inner_add = (uint64_t)1 << (inner - 1);
        for (int i = y0; i < y1; i++) {
            uint64_t in[3] = {0, 0, 0};
            int j = rc.x0;
            if (s->simd)
                j += s->simd->cubes(band_rows(s, ref_row(s, i) + j).b, cols, sq, (uint32_t)sq_add, cub,
                                    (uint32_t)cub_add, in);
            for (; j < rc.x1; j++)
                for (int b = 0; b < 3; b++) {
                    const uint64_t v = (uint32_t)abs(s->ref[B_H + b][ref_row(s, i) + j]);
                    in[b] += ((((v * v) + sq_add) >> sq) * v + cub_add) >> cub;
                }
            for (int b = 0; b < 3; b++) acc[b] += (in[b] + inner_add) >> inner;
        }
        norm = pow(2, to_float[scale] - inner - cub);
    }
    const float floor_term = powf((float)(rows * cols * noise_weight), 1.0f / 3.0f);
    float sum = 0.0f;
    for (int b = 0; b < 3; b++) {
        const double csf = (double)(acc[b] / norm) * pow(s->rfac[scale][b], 3);
        sum += powf((float)csf, 1.0f / 3.0f) + floor_term;
    }
    return sum;
}

/* ---- DWT of one image ---- */

static void hpass_row(const adm_state *s, const void *lo, const void *hi, int is16, int w,
                      int64_t round, int shift, int32_t *const out[4]) {
    const int inner_end = (w - 1) / 2; /* columns [1, inner_end) need no mirrored tap */
    int j = 1;
    hpass_c(lo, hi, is16, w, 0, 1, round, shift, out);
    if (s->simd)
        j = is16 ? s->simd->hpass_s16(lo, hi, 1, inner_end, out)
                 : s->simd->hpass_s32(lo, hi, 1, inner_end, round, shift, out);
    hpass_c(lo, hi, is16, w, j, (w + 1) / 2, round, shift, out);
}

/* Output rows [i0, i1) of the scale-0 DWT. */
static void dwt_scale0_rows(adm_state *s, const svc_plane *pl, int32_t *const out[4], int i0,
                            int i1, int ring_hvd) {
    const int w = s->w, h = s->h, is16 = s->bpc > 8;
    const ptrdiff_t sstride = is16 ? pl->stride / 2 : pl->stride;
    int16_t *lo = (int16_t *)s->tmp, *hi = lo + s->w;
    for (int i = i0; i < i1; i++) {
        const void *rows[4];
        for (int k = 0; k < 4; k++) {
            const ptrdiff_t off = mirror(2 * i - 1 + k, h) * sstride;
            rows[k] = is16 ? (const void *)((const uint16_t *)pl->data + off)
                           : (const void *)((const uint8_t *)pl->data + off);
        }
        int j = 0;
        if (s->simd)
            j = is16 ? s->simd->vpass_u16((const uint16_t *const *)rows, w, s->bpc, lo, hi)
                     : s->simd->vpass_u8((const uint8_t *const *)rows, w, lo, hi);
        if (is16) vpass_pix_c(rows, 1, j, w, s->bpc, lo, hi);
        else vpass_pix_c(rows, 0, j, w, 8, lo, hi);
        const ptrdiff_t hvd = ring_hvd ? ring_row(s, i) : i * s->stride;
        int32_t *const orow[4] = {out[0] + i * s->stride, out[1] + hvd, out[2] + hvd, out[3] + hvd};
        hpass_row(s, lo, hi, 1, w, 32768, 16, orow);
    }
}

/* Output rows [i0, i1) of the DWT of scale 1-3 of src (w x h). */
static void dwt_scale_n_rows(adm_state *s, int scale, const int32_t *src, int w, int h,
                             int32_t *const out[4], int i0, int i1, int ring_hvd) {
    static const int64_t vround[4] = {0, 0, 32768, 32768};
    static const int vshift[4] = {0, 0, 16, 16};
    static const int64_t hround[4] = {0, 16384, 32768, 16384};
    static const int hshift[4] = {0, 15, 16, 15};
    int32_t *lo = s->tmp, *hi = s->tmp + s->w;
    for (int i = i0; i < i1; i++) {
        const int32_t *rows[4];
        for (int k = 0; k < 4; k++) rows[k] = src + mirror(2 * i - 1 + k, h) * s->stride;
        int j = 0;
        if (s->simd) j = s->simd->vpass_s32(rows, w, vround[scale], vshift[scale], lo, hi);
        vpass_s32_c(rows, j, w, vround[scale], vshift[scale], lo, hi);
        const ptrdiff_t hvd = ring_hvd ? ring_row(s, i) : i * s->stride;
        int32_t *const orow[4] = {out[0] + i * s->stride, out[1] + hvd, out[2] + hvd, out[3] + hvd};
        hpass_row(s, lo, hi, 0, w, hround[scale], hshift[scale], orow);
    }
}

/* ---- one scale in blocks of rows ----
 * Every stage of a scale runs on a block of ADM_BLOCK_ROWS output rows before the next block
 * starts (DWT of both pictures, decoupling, the reference detail sums, both maskers, the
 * masked sums one row behind, since row i's threshold needs the masker's row i + 1), so the
 * block's rows of the coefficient planes are still in L2 when the next stage reads them
 * instead of coming back from memory (a 1080p scale-0 plane is 2 MB). The sums are exact
 * integers added row by row, so the blocks change no value. The two maskers (of the additive
 * part for the numerator, of the restored part for AIM) have planes of their own. */
typedef struct scale_sums {
    float num, den, aim;
} scale_sums;

/* Output rows [i0, i1) of the DWT of scale sc: of the picture pl at scale 0, else of the
 * previous scale's A band src (w_in x h_in); ring_hvd: H, V, D into rings (else whole planes). */
static void dwt_rows(adm_state *s, int sc, const svc_plane *pl, const int32_t *src, int w_in,
                     int h_in, int32_t *const out[4], int i0, int i1, int ring_hvd) {
    if (sc == 0) dwt_scale0_rows(s, pl, out, i0, i1, ring_hvd);
    else dwt_scale_n_rows(s, sc, src, w_in, h_in, out, i0, i1, ring_hvd);
}

/* Scale sc of ref/dis: the picture planes at scale 0, else the previous scale's A bands
 * (w_in x h_in). With lden (ladders), the reference's H, V, D bands of the scale are already
 * in s->ref (whole planes, ref_ring = 0) and *lden is its detail sum: the reference's DWT and
 * detail_sum_rows are skipped (rp and ra unused). */
static scale_sums run_scale(adm_state *s, int sc, const svc_plane *rp, const svc_plane *dp,
                            const int32_t *ra, const int32_t *da, int w_in, int h_in,
                            const float *lden) {
    const int w = (w_in + 1) / 2, h = (h_in + 1) / 2;
    const rect work = grow1(pool_rect(w, h), w, h);
    const rect wide = wide_rect(w, h);
    uint64_t dacc[3] = {0, 0, 0};
    int64_t nacc[3] = {0, 0, 0}, aacc[3] = {0, 0, 0};
    scale_sums r = {0.0f, 0.0f, 0.0f};
    for (int y0 = 0; y0 < h; y0 += ADM_BLOCK_ROWS) {
        const int y1 = y0 + ADM_BLOCK_ROWS < h ? y0 + ADM_BLOCK_ROWS : h;
        if (!lden) dwt_rows(s, sc, rp, ra, w_in, h_in, s->ref, y0, y1, s->ref_ring);
        dwt_rows(s, sc, dp, da, w_in, h_in, s->dis, y0, y1, 1);
        rect blk = work;
        blk.y0 = blk.y0 > y0 ? blk.y0 : y0;
        blk.y1 = blk.y1 < y1 ? blk.y1 : y1;
        if (blk.y0 < blk.y1) {
            decouple(s, sc == 0, blk);
            csf_masker(s, sc, s->add, s->msum, s->mctr, blk, wide);
            csf_masker(s, sc, s->rest, s->msum_r, s->mctr_r, blk, wide);
        }
        if (!lden) r.den = detail_sum_rows(s, sc, w, h, s->noise_weight, y0, y1, dacc);
        const int m1 = y1 == h ? h : y1 - 1;
        r.num = masked_sum(s, sc, w, h, s->rest, s->noise_weight, s->msum, s->mctr, y0 - 1, m1, nacc);
        r.aim = masked_sum(s, sc, w, h, s->add, 0.0, s->msum_r, s->mctr_r, y0 - 1, m1, aacc);
    }
    if (lden) r.den = *lden;
    return r;
}

/* ---- extractor ---- */

static const char *const output_names[] = {
    "integer_adm2",       "integer_adm_scale0", "integer_adm_scale1", "integer_adm_scale2",
    "integer_adm_scale3", "integer_aim",        "integer_adm3",
};

static void adm_destroy(void *state) {
    adm_state *s = state;
    if (!s) return;
    free(s->mem);
    free(s->lmem);
    free(s->recip);
    free(s);
}

/* In the order of their names: optioned outputs are named in that order, as the reference does
 * (integer_adm2_csf_2_dlmw_0.7_egl_1_min_0.5_nw_0.02_nvd_5). */
enum { OPT_CSF_MODE, OPT_DLM_WEIGHT, OPT_GAIN_LIMIT, OPT_MIN_VAL, OPT_NOISE_WEIGHT, OPT_VIEW_DIST, OPT_DISPLAY_HEIGHT, N_OPTIONS };
static const svc_extractor_option adm_options[N_OPTIONS] = {
    { .name = "adm_csf_mode", .alias = "csf", .def = 0.0, .min = 0.0, .max = 2.0 },
    { .name = "adm_dlm_weight", .alias = "dlmw", .def = 0.5, .min = 0.0, .max = 1.0 },
    { .name = "adm_enhn_gain_limit", .alias = "egl", .def = 100.0, .min = 1.0, .max = 100.0 },
    { .name = "adm_min_val", .alias = "min", .def = 0.0, .min = 0.0, .max = 1.0 },
    { .name = "adm_noise_weight", .alias = "nw", .def = NOISE_WEIGHT, .min = 0.0, .max = 1500.0 },
    { .name = "adm_norm_view_dist", .alias = "nvd", .def = 3.0, .min = 0.75, .max = 24.0 },
    { .name = "adm_ref_display_height", .alias = "rdh", .def = 1080.0, .min = 1.0, .max = 4320.0 },
};

/* Option values svc cannot compute as the reference does, or NULL. */
static const char *adm_check(const double *options) {
    const double mode = options[OPT_CSF_MODE];
    if (mode != SVC_ADM_CSF_WATSON && mode != SVC_ADM_CSF_BLEND)
        return "adm_csf_mode must be 0 (Watson) or 2 (Barten-Watson blend); mode 1 (Barten) overflows the "
               "reference's fixed-point weights";
    if (options[OPT_DISPLAY_HEIGHT] != floor(options[OPT_DISPLAY_HEIGHT])) return "adm_ref_display_height must be a whole number";
    float w[2];
    svc_adm_csf_weights(0, (int)mode, options[OPT_VIEW_DIST], (int)options[OPT_DISPLAY_HEIGHT], w);
    if (mode == SVC_ADM_CSF_BLEND && w[0] < 0.0f)
        return "adm_csf_mode 2 is tabulated for adm_ref_display_height/adm_norm_view_dist 1080/3, 1080/5, "
               "2160/1.5, 2160/3, 2160/5, 720/3, 720/5, 480/3 and 480/5 only";
    return NULL;
}

static void *adm_create_with(int w, int h, int pix_fmt, int bpc, int cpu, const double *options) {
    (void)pix_fmt;
    if (w < ADM_MIN_DIM || h < ADM_MIN_DIM || w > 16384 || h > 16384) return NULL;
    if (bpc != 8 && bpc != 10 && bpc != 12 && bpc != 16) return NULL;
    adm_state *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->w = w;
    s->h = h;
    s->bpc = bpc;
    if (adm_check(options)) {
        free(s);
        return NULL;
    }
    s->gain_limit = options[OPT_GAIN_LIMIT];
    s->noise_weight = options[OPT_NOISE_WEIGHT];
    s->dlm_weight = options[OPT_DLM_WEIGHT];
    s->min_val = options[OPT_MIN_VAL];
    s->simd_gain = s->gain_limit == floor(s->gain_limit) ? (int)s->gain_limit : 0;
    s->backend = "scalar";
#if defined(__x86_64__) || defined(__i386__)
    if (cpu == SVC_CPU_AVX2) {
        s->simd = &simd_avx2;
        s->backend = "avx2";
    }
    if (cpu == SVC_CPU_AVX512) {
        s->simd = &simd_avx512;
        s->backend = "avx512";
    }
#else
    (void)cpu;
#endif
    const int w0 = (w + 1) / 2, h0 = (h + 1) / 2;
    /* Rows padded to 8 elements so SIMD kernels may store whole vectors. */
    s->stride = (w0 + 7) & ~7;
    const size_t plane = (size_t)s->stride * (size_t)h0;
    const size_t n_planes = 1 + 1 + 2;
    const size_t ring = (size_t)s->stride * ADM_RING, n_rings = 3 + 3 + 3 + 3 + 4;
    const size_t tmp_len = 2 * (size_t)((w + 7) & ~7) + (size_t)s->stride;
    s->mem = calloc(n_planes * plane + n_rings * ring + tmp_len, sizeof(int32_t));
    s->recip = malloc(32769 * sizeof(int32_t));
    if (!s->mem || !s->recip) {
        adm_destroy(s);
        return NULL;
    }
    int32_t *p = s->mem;
    s->ref[B_A] = p;
    p += plane;
    for (int b = B_H; b <= B_D; b++, p += ring) s->ref[b] = p;
    s->ref_ring = 1;
    s->dis[B_A] = p;
    p += plane;
    for (int b = B_H; b <= B_D; b++, p += ring) s->dis[b] = p;
    s->ref_a2 = p;
    p += plane;
    s->dis_a2 = p;
    p += plane;
    for (int b = 0; b < 3; b++, p += ring) s->rest[b] = p;
    for (int b = 0; b < 3; b++, p += ring) s->add[b] = p;
    s->msum = p;
    p += ring;
    s->mctr = p;
    p += ring;
    s->msum_r = p;
    p += ring;
    s->mctr_r = p;
    p += ring;
    s->tmp = p;
    s->angle = p + 2 * (size_t)((w + 7) & ~7);
    s->recip[0] = 0;
    for (int n = 1; n <= 32768; n++) s->recip[n] = (int32_t)(1073741824 / n);
    const int mode = (int)options[OPT_CSF_MODE], height = (int)options[OPT_DISPLAY_HEIGHT];
    const double dist = options[OPT_VIEW_DIST];
    for (int sc = 0; sc < 4; sc++) {
        float wt[2];
        svc_adm_csf_weights(sc, mode, dist, height, wt);
        const float f[3] = {wt[0], wt[0], wt[1]};
        for (int b = 0; b < 3; b++) {
            s->rfac[sc][b] = f[b];
            s->irfac[sc][b] = (uint32_t)(f[b] * pow(2, 32));
        }
    }
    /* The reference keeps its tabulated constants for Watson at 3H x 1080 lines (the product
     * decides) and converts any other weights itself. */
    const int rf0_default = mode == SVC_ADM_CSF_WATSON && fabs(dist * height - 3.0 * 1080) < 1.0e-8;
    for (int b = 0; b < 3; b++)
        s->rf0[b] = rf0_default ? RF0[b] : (int32_t)(uint16_t)(s->rfac[0][b] * pow(2, b == 2 ? 23 : 21));
    return s;
}

static void *adm_create(int w, int h, int pix_fmt, int bpc, int cpu) {
    double defaults[N_OPTIONS];
    for (int o = 0; o < N_OPTIONS; o++) defaults[o] = adm_options[o].def;
    return adm_create_with(w, h, pix_fmt, bpc, cpu, defaults);
}

static const char *adm_backend(const void *state) { return ((const adm_state *)state)->backend; }

static int check_pictures(const adm_state *s, const svc_picture *ref, const svc_picture *dis) {
    if (!s || !ref || !dis) return SVC_E_INVALID_ARG;
    const svc_plane *rp = &ref->plane[0], *dp = &dis->plane[0];
    if (rp->w != s->w || rp->h != s->h || dp->w != s->w || dp->h != s->h || ref->bpc != s->bpc ||
        dis->bpc != s->bpc)
        return SVC_E_GEOMETRY;
    return SVC_OK;
}

/* Scores dis against ref; with `ladder`, the reference's bands and detail sums are those
 * adm_ladder_prepare kept (the same integers compute would derive from ref): run_scale then
 * reads the reference's bands as whole planes (lband, ref_ring = 0) and skips its DWT and
 * detail sums. */
static int adm_run(adm_state *s, const svc_plane *rp, const svc_plane *dp, int ladder, double *out) {
    double num = 0, den = 0, aim = 0, scale_ratio[4];
    int32_t *const base_ref[3] = {s->ref[B_H], s->ref[B_V], s->ref[B_D]};
    const int base_ring = s->ref_ring;
    int w = s->w, h = s->h;
    if (ladder) s->ref_ring = 0;
    for (int sc = 0; sc < 4; sc++) {
        const int32_t *ra = NULL, *da = NULL;
        if (sc > 0) {
            /* The previous A band becomes this scale's input; A is rewritten elsewhere. */
            da = s->dis[B_A];
            s->dis[B_A] = s->dis_a2;
            s->dis_a2 = (int32_t *)da;
            if (!ladder) {
                ra = s->ref[B_A];
                s->ref[B_A] = s->ref_a2;
                s->ref_a2 = (int32_t *)ra;
            }
        }
        if (ladder)
            for (int b = 0; b < 3; b++) s->ref[B_H + b] = s->lband[sc][b];
        const scale_sums sums = run_scale(s, sc, rp, dp, ra, da, w, h, ladder ? &s->lden[sc] : NULL);
        w = (w + 1) / 2;
        h = (h + 1) / 2;
        const float num_sc = sums.num, den_sc = sums.den, aim_sc = sums.aim;
        num += num_sc;
        den += den_sc;
        aim += aim_sc;
        scale_ratio[sc] = (double)num_sc / den_sc;
    }
    for (int b = 0; b < 3; b++) s->ref[B_H + b] = base_ref[b];
    s->ref_ring = base_ring;
    const double limit = 1e-10 * (s->w * s->h) / (1920.0 * 1080.0);
    num = num < limit ? 0 : num;
    den = den < limit ? 0 : den;
    const double adm2 = den == 0.0 ? 1.0 : num / den;
    const double aim_score = den == 0.0 ? 0.0 : aim / den;
    double adm3 = adm2 * s->dlm_weight + (1 - aim_score) * (1 - s->dlm_weight);
    if (adm3 < s->min_val) adm3 = s->min_val;
    out[0] = adm2;
    for (int sc = 0; sc < 4; sc++) out[1 + sc] = scale_ratio[sc];
    out[5] = aim_score;
    out[6] = adm3;
    return SVC_OK;
}

static int adm_compute(void *state, const svc_picture *ref, const svc_picture *dis, double *out) {
    adm_state *s = state;
    const int rc = out ? check_pictures(s, ref, dis) : SVC_E_INVALID_ARG;
    return rc ? rc : adm_run(s, &ref->plane[0], &dis->plane[0], 0, out);
}

/* Ladders: the reference's DWT bands of every scale and its detail sums (the CSF-weighted
 * denominators), once per frame; each rendition then runs only its own DWT, the decoupling,
 * the masking and the numerators (adm_ladder_compute). */
static int adm_ladder_prepare(void *state, const svc_picture *ref) {
    adm_state *s = state;
    const int rc = check_pictures(s, ref, ref);
    if (rc) return rc;
    int hs[4], sum_h = 0;
    for (int sc = 0, h = s->h; sc < 4; sc++) {
        h = (h + 1) / 2;
        hs[sc] = h;
        sum_h += h;
    }
    if (!s->lmem) {
        if (!(s->lmem = malloc(3 * (size_t)sum_h * (size_t)s->stride * sizeof(int32_t)))) return SVC_E_NOMEM;
        int32_t *p = s->lmem;
        for (int sc = 0; sc < 4; sc++)
            for (int b = 0; b < 3; b++, p += (size_t)hs[sc] * (size_t)s->stride) s->lband[sc][b] = p;
    }
    int32_t *const base_ref[3] = {s->ref[B_H], s->ref[B_V], s->ref[B_D]};
    const int base_ring = s->ref_ring;
    s->ref_ring = 0;
    int w = s->w, h = s->h;
    for (int sc = 0; sc < 4; sc++) {
        const int32_t *ra = NULL;
        if (sc > 0) {
            /* The previous A band becomes this scale's input; A is rewritten elsewhere. */
            ra = s->ref[B_A];
            s->ref[B_A] = s->ref_a2;
            s->ref_a2 = (int32_t *)ra;
        }
        for (int b = 0; b < 3; b++) s->ref[B_H + b] = s->lband[sc][b];
        const int w_in = w, h_in = h;
        w = (w + 1) / 2;
        h = (h + 1) / 2;
        /* The DWT into whole planes, each block's detail sums while its rows are in cache
         * (the same blocks and sums as run_scale's). */
        uint64_t dacc[3] = {0, 0, 0};
        for (int y0 = 0; y0 < h; y0 += ADM_BLOCK_ROWS) {
            const int y1 = y0 + ADM_BLOCK_ROWS < h ? y0 + ADM_BLOCK_ROWS : h;
            dwt_rows(s, sc, &ref->plane[0], ra, w_in, h_in, s->ref, y0, y1, 0);
            s->lden[sc] = detail_sum_rows(s, sc, w, h, s->noise_weight, y0, y1, dacc);
        }
    }
    for (int b = 0; b < 3; b++) s->ref[B_H + b] = base_ref[b];
    s->ref_ring = base_ring;
    return SVC_OK;
}

static int adm_ladder_compute(void *state, const svc_picture *ref, const svc_picture *dis, double *out) {
    adm_state *s = state;
    const int rc = out ? check_pictures(s, ref, dis) : SVC_E_INVALID_ARG;
    return rc ? rc : adm_run(s, NULL, &dis->plane[0], 1, out);
}

const svc_extractor svc_extractor_integer_adm = {
    .name = "integer_adm",
    .n_outputs = 7,
    .output_names = output_names,
    .create = adm_create,
    .backend = adm_backend,
    .compute = adm_compute,
    .destroy = adm_destroy,
    .n_options = N_OPTIONS,
    .options = adm_options,
    .create_with = adm_create_with,
    .check = adm_check,
    .ladder_prepare = adm_ladder_prepare,
    .ladder_compute = adm_ladder_compute,
};
