/* SSIM core shared by float_ssim and float_ms_ssim (float_ssim.c), numerically
 * matching libvmaf's IQA-derived float SSIM: 11x11 Gaussian window (sigma 1.5) applied as two
 * separable 1-D passes over the "valid" region only, float samples, double accumulators. */
#ifndef SVC_FEATURE_FLOAT_SSIM_H
#define SVC_FEATURE_FLOAT_SSIM_H

#include <stddef.h>

#include "extractor.h"

#define SVC_SSIM_WIN 11 /* window side: SSIM needs images at least this large */

/* The reference's 1-D Gaussian taps (sigma 1.5, 6 decimals, as floats). Defined here, not in
 * float_ssim.c, so the AVX2 passes read them without calling back into the scalar file. */
static const float svc_ssim_gauss[SVC_SSIM_WIN] = {
    0.001028f, 0.007599f, 0.036001f, 0.109361f, 0.213006f, 0.266012f,
    0.213006f, 0.109361f, 0.036001f, 0.007599f, 0.001028f,
};

/* Per-sample quantity a horizontal pass filters: the float value the reference stores
 * before filtering (a, a*a, b*b or a*b). */
enum { SVC_SSIM_A, SVC_SSIM_AA, SVC_SSIM_BB, SVC_SSIM_AB };

#if defined(__x86_64__) || defined(__i386__)
/* AVX2 passes (x86/float_ssim_avx2.c), bit-identical to the scalar ones: horizontal over
 * every row of a w x h image, valid columns only, into h x (w - 10); vertical over a dw x h
 * image into dw x (h - 10). */
void svc_ssim_hpass_avx2(const float *a, const float *b, int what, int w, int h, float *out);
void svc_ssim_vpass_avx2(const float *in, int dw, int h, float *out);
#endif

/* Means over the valid region of the SSIM map and of its luminance, contrast and structure
 * terms, each rounded to float as the reference does. */
typedef struct svc_ssim_means {
    float ssim, l, c, s;
} svc_ssim_means;

/* Floats needed by svc_ssim_core's scratch for a w x h image. */
size_t svc_ssim_scratch_len(int w, int h);
/* ref/cmp: w x h floats, row stride w. w, h >= SVC_SSIM_WIN. avx2 selects the AVX2 passes
 * (ignored where they are not built). */
void svc_ssim_core(const float *ref, const float *cmp, int w, int h, float *scratch, int avx2,
                   svc_ssim_means *out);
/* 1 where the AVX2 passes are built (x86); extractors use them only when asked for AVX2. */
int svc_ssim_avx2_built(void);
/* Luma plane to floats on the 8-bit scale, as libvmaf's picture_copy: v at 8 bits,
 * v / 2^(bpc-8) above. dst has stride w. */
void svc_ssim_luma_to_float(const svc_picture *pic, float *dst);

#endif
