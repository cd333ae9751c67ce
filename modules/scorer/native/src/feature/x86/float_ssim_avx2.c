/*
 * AVX2 Gaussian passes of the float SSIM core (see float_ssim.c). Bit-identical to the
 * scalar passes because each lane performs the same IEEE operations in the same order: the
 * float product (sample, or sample x sample, times tap) is rounded to float, widened exactly
 * to double and added to a double accumulator tap by tap, and the sum is rounded to float once.
 * 8 outputs per step (two 4 x double accumulators); leftover columns take the scalar formula.
 * No FMA: a fused multiply-add would skip the float rounding of the product.
 * Built with -mavx2 in the library; the target attribute lets the dev harness build it
 * without that flag.
 */
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>

#include "../float_ssim.h"

#define AVX2_FN __attribute__((target("avx2")))

AVX2_FN static inline __m256 quantity(const float *ra, const float *rb, int what, int i) {
    const __m256 a = _mm256_loadu_ps(ra + i);
    switch (what) {
    case SVC_SSIM_AA: return _mm256_mul_ps(a, a);
    case SVC_SSIM_BB: {
        const __m256 b = _mm256_loadu_ps(rb + i);
        return _mm256_mul_ps(b, b);
    }
    case SVC_SSIM_AB: return _mm256_mul_ps(a, _mm256_loadu_ps(rb + i));
    default: return a;
    }
}

static inline float quantity1(const float *ra, const float *rb, int what, int i) {
    switch (what) {
    case SVC_SSIM_AA: return ra[i] * ra[i];
    case SVC_SSIM_BB: return rb[i] * rb[i];
    case SVC_SSIM_AB: return ra[i] * rb[i];
    default: return ra[i];
    }
}

/* acc += (double)(v * tap), lanes 0-3 into lo and 4-7 into hi. */
AVX2_FN static inline void mac(__m256 v, __m256 tap, __m256d *lo, __m256d *hi) {
    const __m256 p = _mm256_mul_ps(v, tap);
    *lo = _mm256_add_pd(*lo, _mm256_cvtps_pd(_mm256_castps256_ps128(p)));
    *hi = _mm256_add_pd(*hi, _mm256_cvtps_pd(_mm256_extractf128_ps(p, 1)));
}

AVX2_FN static inline void store8(float *o, __m256d lo, __m256d hi) {
    _mm_storeu_ps(o, _mm256_cvtpd_ps(lo));
    _mm_storeu_ps(o + 4, _mm256_cvtpd_ps(hi));
}

AVX2_FN void svc_ssim_hpass_avx2(const float *a, const float *b, int what, int w, int h, float *out) {
    const int dw = w - SVC_SSIM_WIN + 1;
    __m256 taps[SVC_SSIM_WIN];
    for (int k = 0; k < SVC_SSIM_WIN; k++) taps[k] = _mm256_set1_ps(svc_ssim_gauss[k]);
    for (int y = 0; y < h; y++) {
        const float *ra = a + (size_t)y * w, *rb = b + (size_t)y * w;
        float *o = out + (size_t)y * dw;
        int x = 0;
        for (; x + 8 <= dw; x += 8) {
            __m256d lo = _mm256_setzero_pd(), hi = _mm256_setzero_pd();
            for (int k = 0; k < SVC_SSIM_WIN; k++) mac(quantity(ra, rb, what, x + k), taps[k], &lo, &hi);
            store8(o + x, lo, hi);
        }
        for (; x < dw; x++) {
            double sum = 0.0;
            for (int k = 0; k < SVC_SSIM_WIN; k++) sum += quantity1(ra, rb, what, x + k) * svc_ssim_gauss[k];
            o[x] = (float)sum;
        }
    }
}

AVX2_FN void svc_ssim_vpass_avx2(const float *in, int dw, int h, float *out) {
    const int dh = h - SVC_SSIM_WIN + 1;
    __m256 taps[SVC_SSIM_WIN];
    for (int k = 0; k < SVC_SSIM_WIN; k++) taps[k] = _mm256_set1_ps(svc_ssim_gauss[k]);
    for (int y = 0; y < dh; y++) {
        const float *r = in + (size_t)y * dw;
        float *o = out + (size_t)y * dw;
        int x = 0;
        for (; x + 8 <= dw; x += 8) {
            __m256d lo = _mm256_setzero_pd(), hi = _mm256_setzero_pd();
            for (int k = 0; k < SVC_SSIM_WIN; k++)
                mac(_mm256_loadu_ps(r + (size_t)k * dw + x), taps[k], &lo, &hi);
            store8(o + x, lo, hi);
        }
        for (; x < dw; x++) {
            double sum = 0.0;
            for (int k = 0; k < SVC_SSIM_WIN; k++) sum += r[(size_t)k * dw + x] * svc_ssim_gauss[k];
            o[x] = (float)sum;
        }
    }
}
#endif
