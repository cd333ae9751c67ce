/*
 * ssimulacra2's AVX2 kernels (ssimulacra2.h): the blur's row pass on eight rows at once
 * (one row per lane, transposed through a scratch buffer), its column pass on eight columns at
 * once, and the XYB conversion on eight pixels at once. Each lane performs the scalar code's
 * operations in its order, fused (vfmadd) exactly where the scalar code calls fmaf, so the
 * results are bit-identical to it. Needs FMA besides AVX2 (the extractor checks the CPU).
 */
#include <immintrin.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "../ssimulacra2.h"

#define TARGET __attribute__((target("avx2,fma")))

/* Lanes [0, n) on, the others off: the mask of a partial group of eight. */
TARGET static __m256i lanes(int n) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

/* One output of the row pass in every lane (blur_step). */
TARGET static __m256 row_step(const svc_s2_gauss *g, __m256 sum, __m256 prev[3], __m256 prev2[3]) {
    __m256 y[3];
    for (int k = 0; k < 3; k++) {
        const __m256 o = _mm256_mul_ps(sum, _mm256_set1_ps(g->in[k][0]));
        y[k] = _mm256_fmadd_ps(_mm256_set1_ps(g->prev[k][0]), prev[k],
                               _mm256_fmadd_ps(_mm256_set1_ps(g->prev2[k][0]), prev2[k], o));
        prev2[k] = prev[k];
        prev[k] = y[k];
    }
    return _mm256_add_ps(y[0], _mm256_add_ps(y[1], y[2]));
}

/* The row pass over the eight transposed rows t (t[8 x + lane]) of n samples into o. */
TARGET static void rows8(const svc_s2_gauss *g, const float *t, float *o, int n) {
    const int r = g->radius;
    const int first_group = (r + 1 + 3) / 4 * 4;
    const __m256 zero = _mm256_setzero_ps();
    __m256 prev[3] = { zero, zero, zero }, prev2[3] = { zero, zero, zero };
    int i = -r + 1;
    for (; i < (first_group < n ? first_group : n); i++) {
        const int left = i - r - 1, right = i + r - 1;
        const __m256 sum = _mm256_add_ps(left >= 0 ? _mm256_loadu_ps(t + 8 * left) : zero,
                                         right < n ? _mm256_loadu_ps(t + 8 * right) : zero);
        const __m256 y = row_step(g, sum, prev, prev2);
        if (i >= 0) _mm256_storeu_ps(o + 8 * i, y);
    }
    for (; i < n - r + 1 - 3; i += 4) {
        __m256 sum[4], y[3][4];
        for (int j = 0; j < 4; j++)
            sum[j] = _mm256_add_ps(_mm256_loadu_ps(t + 8 * (i + j - r - 1)), _mm256_loadu_ps(t + 8 * (i + j + r - 1)));
        for (int k = 0; k < 3; k++) {
            for (int j = 0; j < 4; j++) {
                __m256 v = _mm256_mul_ps(sum[0], _mm256_set1_ps(g->in[k][j]));
                for (int q = 1; q <= j; q++) v = _mm256_fmadd_ps(_mm256_set1_ps(g->in[k][j - q]), sum[q], v);
                v = _mm256_fmadd_ps(_mm256_set1_ps(g->prev2[k][j]), prev2[k], v);
                y[k][j] = _mm256_fmadd_ps(_mm256_set1_ps(g->prev[k][j]), prev[k], v);
            }
            prev2[k] = y[k][2];
            prev[k] = y[k][3];
        }
        for (int j = 0; j < 4; j++) _mm256_storeu_ps(o + 8 * (i + j), _mm256_add_ps(y[0][j], _mm256_add_ps(y[1][j], y[2][j])));
    }
    for (; i < n; i++) {
        const int left = i - r - 1, right = i + r - 1;
        const __m256 sum = _mm256_add_ps(left >= 0 ? _mm256_loadu_ps(t + 8 * left) : zero,
                                         right < n ? _mm256_loadu_ps(t + 8 * right) : zero);
        _mm256_storeu_ps(o + 8 * i, row_step(g, sum, prev, prev2));
    }
}

TARGET void svc_s2_blur_rows_avx2(const svc_s2_gauss *g, const float *in, float *out, int w, int h, float *scratch) {
    float *t = scratch, *o = scratch + 8 * (size_t)w;
    for (int y0 = 0; y0 < h; y0 += 8) {
        const int rows = h - y0 < 8 ? h - y0 : 8;
        /* A partial group repeats its last row in the spare lanes (their outputs are dropped). */
        for (int lane = 0; lane < 8; lane++) {
            const float *row = in + (size_t)(y0 + (lane < rows ? lane : rows - 1)) * w;
            for (int x = 0; x < w; x++) t[8 * (size_t)x + lane] = row[x];
        }
        rows8(g, t, o, w);
        for (int lane = 0; lane < rows; lane++) {
            float *row = out + (size_t)(y0 + lane) * w;
            for (int x = 0; x < w; x++) row[x] = o[8 * (size_t)x + lane];
        }
    }
}

TARGET void svc_s2_blur_cols_avx2(const svc_s2_gauss *g, const float *in, float *out, int w, int h, float *state) {
    const int r = g->radius;
    float *p1 = state, *p2 = state + 3 * (size_t)w;
    memset(state, 0, sizeof(float) * 6 * (size_t)w);
    __m256 n2[3], neg_d1[3];
    for (int k = 0; k < 3; k++) {
        n2[k] = _mm256_set1_ps(g->n2[k]);
        neg_d1[k] = _mm256_set1_ps(-g->d1[k]);
    }
    for (int i = -r + 1; i < h; i++) {
        const int top = i - r - 1, bottom = i + r - 1;
        const float *a = top >= 0 ? in + (size_t)top * w : NULL;
        const float *b = bottom < h ? in + (size_t)bottom * w : NULL;
        float *row = i >= 0 ? out + (size_t)i * w : NULL;
        int x = 0;
        for (; x + 8 <= w; x += 8) {
            const __m256 va = a ? _mm256_loadu_ps(a + x) : _mm256_setzero_ps();
            const __m256 vb = b ? _mm256_loadu_ps(b + x) : _mm256_setzero_ps();
            /* One row in range: its value alone, as the scalar pass takes it. */
            const __m256 sum = a && b ? _mm256_add_ps(va, vb) : a ? va : vb;
            __m256 v[3];
            for (int k = 0; k < 3; k++) {
                float *q1 = p1 + (size_t)k * w + x, *q2 = p2 + (size_t)k * w + x;
                const __m256 y1 = _mm256_loadu_ps(q1), y2 = _mm256_loadu_ps(q2);
                /* fmaf(n2, sum, fmaf(-d1, y1, -y2)) */
                v[k] = _mm256_fmadd_ps(n2[k], sum, _mm256_fmsub_ps(neg_d1[k], y1, y2));
                _mm256_storeu_ps(q2, y1);
                _mm256_storeu_ps(q1, v[k]);
            }
            if (row) _mm256_storeu_ps(row + x, _mm256_add_ps(v[0], _mm256_add_ps(v[1], v[2])));
        }
        /* The last columns: the same with masked loads and stores. */
        if (x < w) {
            const __m256i on = lanes(w - x);
            const __m256 va = a ? _mm256_maskload_ps(a + x, on) : _mm256_setzero_ps();
            const __m256 vb = b ? _mm256_maskload_ps(b + x, on) : _mm256_setzero_ps();
            const __m256 sum = a && b ? _mm256_add_ps(va, vb) : a ? va : vb;
            __m256 v[3];
            for (int k = 0; k < 3; k++) {
                float *q1 = p1 + (size_t)k * w + x, *q2 = p2 + (size_t)k * w + x;
                const __m256 y1 = _mm256_maskload_ps(q1, on), y2 = _mm256_maskload_ps(q2, on);
                v[k] = _mm256_fmadd_ps(n2[k], sum, _mm256_fmsub_ps(neg_d1[k], y1, y2));
                _mm256_maskstore_ps(q2, on, y1);
                _mm256_maskstore_ps(q1, on, v[k]);
            }
            if (row) _mm256_maskstore_ps(row + x, on, _mm256_add_ps(v[0], _mm256_add_ps(v[1], v[2])));
        }
    }
}

/* cbrt(x) + add in every lane, as cbrt_add. */
TARGET static __m256 cbrt_add8(__m256 x, __m256 add) {
    const __m256i bits = _mm256_castps_si256(x);
    const __m256i guess = _mm256_sub_epi32(_mm256_set1_epi32(0x54800000),
                                           _mm256_mullo_epi32(_mm256_srli_epi32(bits, 23), _mm256_set1_epi32(0x002AAAAA)));
    const __m256i is_zero = _mm256_cmpeq_epi32(bits, _mm256_setzero_si256());
    __m256 r = _mm256_castsi256_ps(_mm256_andnot_si256(is_zero, guess));
    const __m256 third = _mm256_set1_ps(1.0f / 3), four_thirds = _mm256_set1_ps(4.0f / 3);
    const __m256 x_third = _mm256_mul_ps(third, x);
    for (int i = 0; i < 3; i++) {
        const __m256 r2 = _mm256_mul_ps(r, r);
        r = _mm256_fnmadd_ps(x_third, _mm256_mul_ps(r2, r2), _mm256_mul_ps(four_thirds, r));
    }
    __m256 r2 = _mm256_mul_ps(r, r);
    r = _mm256_fmadd_ps(third, _mm256_fnmadd_ps(x, _mm256_mul_ps(r2, r2), r), r);
    r2 = _mm256_mul_ps(r, r);
    return _mm256_fmadd_ps(r2, x, add);
}

TARGET void svc_s2_xyb_avx2(const float *const lin[3], float *const xyb[3], size_t n) {
    const __m256 bias = _mm256_set1_ps(svc_s2_opsin_bias);
    const __m256 neg_bias_cbrt = _mm256_set1_ps(-cbrtf(svc_s2_opsin_bias));
    const __m256 half = _mm256_set1_ps(0.5f), zero = _mm256_setzero_ps();
    for (size_t i = 0; i < n; i += 8) {
        const __m256i on = lanes(n - i < 8 ? (int)(n - i) : 8);
        const __m256 r = _mm256_maskload_ps(lin[0] + i, on), g = _mm256_maskload_ps(lin[1] + i, on),
                     b = _mm256_maskload_ps(lin[2] + i, on);
        __m256 mixed[3];
        for (int k = 0; k < 3; k++) {
            const __m256 blue = _mm256_fmadd_ps(_mm256_set1_ps(svc_s2_opsin[k][2]), b, bias);
            const __m256 green = _mm256_fmadd_ps(_mm256_set1_ps(svc_s2_opsin[k][1]), g, blue);
            const __m256 v = _mm256_fmadd_ps(_mm256_set1_ps(svc_s2_opsin[k][0]), r, green);
            /* v > 0 ? v : 0 */
            mixed[k] = cbrt_add8(_mm256_and_ps(v, _mm256_cmp_ps(v, zero, _CMP_GT_OQ)), neg_bias_cbrt);
        }
        const __m256 x = _mm256_mul_ps(half, _mm256_sub_ps(mixed[0], mixed[1]));
        const __m256 y = _mm256_mul_ps(half, _mm256_add_ps(mixed[0], mixed[1]));
        _mm256_maskstore_ps(xyb[0] + i, on, _mm256_add_ps(_mm256_mul_ps(x, _mm256_set1_ps(14.0f)), _mm256_set1_ps(0.42f)));
        _mm256_maskstore_ps(xyb[1] + i, on, _mm256_add_ps(y, _mm256_set1_ps(0.01f)));
        _mm256_maskstore_ps(xyb[2] + i, on, _mm256_add_ps(_mm256_sub_ps(mixed[2], y), _mm256_set1_ps(0.55f)));
    }
}

/* Four pixels' error terms (d, ringing, blurring and their fourth powers) from their float parts. */
TARGET static void error_terms4(__m128 q, __m128 a1, __m128 a2, double terms[6][8], int at) {
    const __m256d one = _mm256_set1_pd(1.0), zero = _mm256_setzero_pd();
    __m256d d = _mm256_sub_pd(one, _mm256_cvtps_pd(q));
    d = _mm256_blendv_pd(d, zero, _mm256_cmp_pd(d, zero, _CMP_LT_OQ));
    const __m256d edge = _mm256_sub_pd(
        _mm256_div_pd(_mm256_add_pd(one, _mm256_cvtps_pd(a2)), _mm256_add_pd(one, _mm256_cvtps_pd(a1))), one);
    const __m256d ringing = _mm256_and_pd(edge, _mm256_cmp_pd(edge, zero, _CMP_GT_OQ));
    const __m256d blurring = _mm256_and_pd(_mm256_sub_pd(zero, edge), _mm256_cmp_pd(edge, zero, _CMP_LT_OQ));
    const __m256d v[3] = { d, ringing, blurring };
    for (int k = 0; k < 3; k++) {
        const __m256d sq = _mm256_mul_pd(v[k], v[k]);
        _mm256_storeu_pd(terms[2 * k] + at, v[k]);
        _mm256_storeu_pd(terms[2 * k + 1] + at, _mm256_mul_pd(sq, sq));
    }
}

TARGET size_t svc_s2_error_sums_avx2(const float *const p[7], size_t n, double sum[6]) {
    const __m256 c2 = _mm256_set1_ps(0.0009f), one_f = _mm256_set1_ps(1.0f), two_f = _mm256_set1_ps(2.0f);
    const __m256 abs_f = _mm256_castsi256_ps(_mm256_set1_epi32(0x7FFFFFFF));
    const size_t m = n / 8 * 8;
    double terms[6][8];
    for (size_t i = 0; i < m; i += 8) {
        const __m256 mu1 = _mm256_loadu_ps(p[0] + i), mu2 = _mm256_loadu_ps(p[1] + i);
        const __m256 s11 = _mm256_loadu_ps(p[2] + i), s22 = _mm256_loadu_ps(p[3] + i), s12 = _mm256_loadu_ps(p[4] + i);
        const __m256 i1 = _mm256_loadu_ps(p[5] + i), i2 = _mm256_loadu_ps(p[6] + i);
        /* The scalar code's float expressions, operation by operation (no fused multiply-adds). */
        const __m256 mu11 = _mm256_mul_ps(mu1, mu1), mu22 = _mm256_mul_ps(mu2, mu2), mu12 = _mm256_mul_ps(mu1, mu2);
        const __m256 diff = _mm256_sub_ps(mu1, mu2);
        const __m256 num_m = _mm256_sub_ps(one_f, _mm256_mul_ps(diff, diff));
        const __m256 num_s = _mm256_add_ps(_mm256_mul_ps(two_f, _mm256_sub_ps(s12, mu12)), c2);
        const __m256 den_s = _mm256_add_ps(_mm256_add_ps(_mm256_sub_ps(s11, mu11), _mm256_sub_ps(s22, mu22)), c2);
        const __m256 q = _mm256_div_ps(_mm256_mul_ps(num_m, num_s), den_s);
        const __m256 a2 = _mm256_and_ps(_mm256_sub_ps(i2, mu2), abs_f), a1 = _mm256_and_ps(_mm256_sub_ps(i1, mu1), abs_f);
        error_terms4(_mm256_castps256_ps128(q), _mm256_castps256_ps128(a1), _mm256_castps256_ps128(a2), terms, 0);
        error_terms4(_mm256_extractf128_ps(q, 1), _mm256_extractf128_ps(a1, 1), _mm256_extractf128_ps(a2, 1), terms, 4);
        /* The sums in pixel order, as the scalar loop adds them. */
        for (int j = 0; j < 8; j++)
            for (int k = 0; k < 6; k++) sum[k] += terms[k][j];
    }
    return m;
}
