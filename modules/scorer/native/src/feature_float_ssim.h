/* SSIM core shared by float_ssim and float_ms_ssim (feature_float_ssim.c), numerically
 * matching libvmaf's IQA-derived float SSIM: 11x11 Gaussian window (sigma 1.5) applied as two
 * separable 1-D passes over the "valid" region only, float samples, double accumulators. */
#ifndef SVC_FEATURE_FLOAT_SSIM_H
#define SVC_FEATURE_FLOAT_SSIM_H

#include <stddef.h>

#include "internal.h"

#define SVC_SSIM_WIN 11 /* window side: SSIM needs images at least this large */

/* Means over the valid region of the SSIM map and of its luminance, contrast and structure
 * terms, each rounded to float as the reference does. */
typedef struct svc_ssim_means {
    float ssim, l, c, s;
} svc_ssim_means;

/* Floats needed by svc_ssim_core's scratch for a w x h image. */
size_t svc_ssim_scratch_len(int w, int h);
/* ref/cmp: w x h floats, row stride w. w, h >= SVC_SSIM_WIN. avx2 selects the AVX2 kernels
 * (bit-identical). */
void svc_ssim_core(const float *ref, const float *cmp, int w, int h, float *scratch, int avx2,
                   svc_ssim_means *out);
/* Luma plane to floats on the 8-bit scale, as libvmaf's picture_copy: v at 8 bits,
 * v / 2^(bpc-8) above. dst has stride w. */
void svc_ssim_luma_to_float(const svc_picture *pic, float *dst);

#endif
