/*
 * AVX2 low-pass decimation of float_ms_ssim (see lpf_decimate in float_ms_ssim.c).
 * Bit-identical to the scalar code: every lane rounds sample x tap to float, widens it exactly
 * to double and adds it in the same row-major tap order, and rounds the sum once. Eight
 * outputs per step need the even columns 2x+u-4 .. 2x+u+10: two loads, de-interleaved in
 * registers. Outputs whose window crosses the left or right edge take the scalar formula
 * with the mirrored boundary; rows are mirrored by index, so every row is vectorised.
 * No FMA. Built with -mavx2 in the library; the target attribute lets the dev harness build
 * it without that flag.
 */
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#include <stddef.h>

#define AVX2_FN __attribute__((target("avx2")))
#define LPF 9

static int mirror(int i, int n) {
    if (i < 0) return -1 - i;
    if (i >= n) return 2 * n - i - 1;
    return i;
}

/* Samples p[0], p[2], ..., p[14]. */
AVX2_FN static inline __m256 evens(const float *p) {
    const __m256 a = _mm256_loadu_ps(p), b = _mm256_loadu_ps(p + 8);
    /* per 128-bit lane: a0 a2 b0 b2 | a4 a6 b4 b6; then 64-bit blocks reordered to a.. b.. */
    const __m256 s = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0));
    return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(s), _MM_SHUFFLE(3, 1, 2, 0)));
}

AVX2_FN void svc_ms_ssim_decimate_avx2(const float *src, int w, int h, const float *taps,
                                       float *dst, int dw, int dh) {
    __m256 t[LPF * LPF];
    for (int k = 0; k < LPF * LPF; k++) t[k] = _mm256_set1_ps(taps[k]);
    /* Vector outputs x .. x+7 read columns 2x-4 .. 2x+19: x >= 2 and 2x + 19 < w. */
    const int x_lo = 2, x_hi = (w - 20) / 2;
    for (int y = 0; y < dh; y++) {
        const float *rows[LPF];
        for (int v = 0; v < LPF; v++) rows[v] = src + (size_t)mirror(2 * y + v - LPF / 2, h) * w;
        float *o = dst + (size_t)y * dw;
        for (int x = 0; x < dw;) {
            if (x >= x_lo && x <= x_hi && x + 8 <= dw) {
                __m256d lo = _mm256_setzero_pd(), hi = _mm256_setzero_pd();
                for (int v = 0; v < LPF; v++)
                    for (int u = 0; u < LPF; u++) {
                        const __m256 p = _mm256_mul_ps(evens(rows[v] + 2 * x + u - LPF / 2), t[v * LPF + u]);
                        lo = _mm256_add_pd(lo, _mm256_cvtps_pd(_mm256_castps256_ps128(p)));
                        hi = _mm256_add_pd(hi, _mm256_cvtps_pd(_mm256_extractf128_ps(p, 1)));
                    }
                _mm_storeu_ps(o + x, _mm256_cvtpd_ps(lo));
                _mm_storeu_ps(o + x + 4, _mm256_cvtpd_ps(hi));
                x += 8;
                continue;
            }
            double sum = 0.0;
            for (int v = 0; v < LPF; v++)
                for (int u = 0; u < LPF; u++) sum += rows[v][mirror(2 * x + u - LPF / 2, w)] * taps[v * LPF + u];
            o[x] = (float)sum;
            x++;
        }
    }
}
#endif
