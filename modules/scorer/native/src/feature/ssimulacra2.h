/*
 * ssimulacra2's kernels shared by its scalar code (ssimulacra2.c) and its SIMD kernels
 * (x86/ssimulacra2_avx2.c with FMA, x86/ssimulacra2_avx512.c): the recursive Gaussian's
 * coefficients and the passes they run eight (AVX2) or sixteen (AVX-512) rows or columns at a
 * time, bit-identical to the scalar
 * passes (the same operations, fused where the scalar code calls fmaf, in the same order).
 */
#ifndef SVC_FEATURE_SSIMULACRA2_H
#define SVC_FEATURE_SSIMULACRA2_H

#include <stddef.h>

/* The recursive Gaussian: per cosine term k, y[n] = n2 (x[n-R-1] + x[n+R-1]) - d1 y[n-1] - y[n-2].
 * The reference runs the rows four outputs at a time, each output expanded over the four inputs
 * and the two outputs before the group (in[j], prev[j], prev2[j]: the multipliers of output j of a
 * group), with fused multiply-adds; svc evaluates the same expressions in the same order, so its
 * roundings are the reference's (SSIMULACRA 2 moves by about 0.02 when they differ). */
typedef struct svc_s2_gauss {
    int radius;
    float n2[3], d1[3];
    float in[3][4], prev[3][4], prev2[3][4];
} svc_s2_gauss;

/* The row pass of a w x h plane into out; scratch holds 16 w floats (eight rows transposed, in and out). */
void svc_s2_blur_rows_avx2(const svc_s2_gauss *g, const float *in, float *out, int w, int h, float *scratch);
/* The column pass of a w x h plane into out; state holds 6 w floats. */
void svc_s2_blur_cols_avx2(const svc_s2_gauss *g, const float *in, float *out, int w, int h, float *state);
/* Linear RGB planes to the rescaled XYB planes, n samples. */
void svc_s2_xyb_avx2(const float *const lin[3], float *const xyb[3], size_t n);
/* The AVX-512 twins: scratch of the row pass holds 32 w floats (sixteen rows transposed, in and out). */
void svc_s2_blur_rows_avx512(const svc_s2_gauss *g, const float *in, float *out, int w, int h, float *scratch);
void svc_s2_blur_cols_avx512(const svc_s2_gauss *g, const float *in, float *out, int w, int h, float *state);
void svc_s2_xyb_avx512(const float *const lin[3], float *const xyb[3], size_t n);
/* The error maps' terms of pixels [0, m) with m the largest multiple of 8 <= n, added into sum[6]
 * (d, d^4, ringing, ringing^4, blurring, blurring^4) pixel by pixel in order, as scale_norms adds
 * them; p: mu1, mu2, sigma11, sigma22, sigma12, i1, i2. Returns m. */
size_t svc_s2_error_sums_avx512(const float *const p[7], size_t n, double sum[6]);
size_t svc_s2_error_sums_avx2(const float *const p[7], size_t n, double sum[6]);

/* One backend's kernels, as the state calls them. */
typedef struct svc_s2_kernels {
    const char *name; /* "avx2", "avx512" */
    void (*blur_rows)(const svc_s2_gauss *g, const float *in, float *out, int w, int h, float *scratch);
    void (*blur_cols)(const svc_s2_gauss *g, const float *in, float *out, int w, int h, float *state);
    void (*xyb)(const float *const lin[3], float *const xyb[3], size_t n);
    size_t (*error_sums)(const float *const p[7], size_t n, double sum[6]);
} svc_s2_kernels;

/* The opsin absorbance matrix (rows: the three cone responses) and its bias; the third column as
 * the reference computes it, one minus the others in float. */
static const float svc_s2_opsin[3][3] = {
    { 0.30f, 1.0f - 0.078f - 0.30f, 0.078f },
    { 0.23f, 1.0f - 0.078f - 0.23f, 0.078f },
    { 0.24342268924547819f, 0.20476744424496821f, 1.0f - 0.24342268924547819f - 0.20476744424496821f },
};
static const float svc_s2_opsin_bias = 0.0037930732552754493f;

#endif
