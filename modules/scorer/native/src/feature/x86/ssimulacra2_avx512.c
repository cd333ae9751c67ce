/*
 * ssimulacra2's AVX-512 kernels (ssimulacra2.h), the AVX2 kernels' sixteen-lane twins: the blur's
 * row pass on sixteen rows at once (one row per lane, transposed through a scratch buffer), its
 * column pass on sixteen columns at once, and the XYB conversion on sixteen pixels at once, the
 * last group of a row or plane masked. Each lane performs the scalar code's operations in its
 * order, fused (vfmadd) exactly where the scalar code calls fmaf, so the results are
 * bit-identical to it.
 */
#include <immintrin.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "../ssimulacra2.h"

/* Lanes [0, n) of sixteen on: the mask of a partial group. */
static __mmask16 lanes(int n) { return n >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << n) - 1); }

/* One output of the row pass in every lane (blur_step). */
static __m512 row_step16(const svc_s2_gauss *g, __m512 sum, __m512 prev[3], __m512 prev2[3]) {
    __m512 y[3];
    for (int k = 0; k < 3; k++) {
        const __m512 o = _mm512_mul_ps(sum, _mm512_set1_ps(g->in[k][0]));
        y[k] = _mm512_fmadd_ps(_mm512_set1_ps(g->prev[k][0]), prev[k],
                               _mm512_fmadd_ps(_mm512_set1_ps(g->prev2[k][0]), prev2[k], o));
        prev2[k] = prev[k];
        prev[k] = y[k];
    }
    return _mm512_add_ps(y[0], _mm512_add_ps(y[1], y[2]));
}

/* The row pass over the sixteen transposed rows t (t[16 x + lane]) of n samples into o. */
static void rows16(const svc_s2_gauss *g, const float *t, float *o, int n) {
    const int r = g->radius;
    const int first_group = (r + 1 + 3) / 4 * 4;
    const __m512 zero = _mm512_setzero_ps();
    __m512 prev[3] = { zero, zero, zero }, prev2[3] = { zero, zero, zero };
    int i = -r + 1;
    for (; i < (first_group < n ? first_group : n); i++) {
        const int left = i - r - 1, right = i + r - 1;
        const __m512 sum = _mm512_add_ps(left >= 0 ? _mm512_loadu_ps(t + 16 * left) : zero,
                                         right < n ? _mm512_loadu_ps(t + 16 * right) : zero);
        const __m512 y = row_step16(g, sum, prev, prev2);
        if (i >= 0) _mm512_storeu_ps(o + 16 * i, y);
    }
    for (; i < n - r + 1 - 3; i += 4) {
        __m512 sum[4], y[3][4];
        for (int j = 0; j < 4; j++)
            sum[j] = _mm512_add_ps(_mm512_loadu_ps(t + 16 * (i + j - r - 1)), _mm512_loadu_ps(t + 16 * (i + j + r - 1)));
        for (int k = 0; k < 3; k++) {
            for (int j = 0; j < 4; j++) {
                __m512 v = _mm512_mul_ps(sum[0], _mm512_set1_ps(g->in[k][j]));
                for (int q = 1; q <= j; q++) v = _mm512_fmadd_ps(_mm512_set1_ps(g->in[k][j - q]), sum[q], v);
                v = _mm512_fmadd_ps(_mm512_set1_ps(g->prev2[k][j]), prev2[k], v);
                y[k][j] = _mm512_fmadd_ps(_mm512_set1_ps(g->prev[k][j]), prev[k], v);
            }
            prev2[k] = y[k][2];
            prev[k] = y[k][3];
        }
        for (int j = 0; j < 4; j++) _mm512_storeu_ps(o + 16 * (i + j), _mm512_add_ps(y[0][j], _mm512_add_ps(y[1][j], y[2][j])));
    }
    for (; i < n; i++) {
        const int left = i - r - 1, right = i + r - 1;
        const __m512 sum = _mm512_add_ps(left >= 0 ? _mm512_loadu_ps(t + 16 * left) : zero,
                                         right < n ? _mm512_loadu_ps(t + 16 * right) : zero);
        _mm512_storeu_ps(o + 16 * i, row_step16(g, sum, prev, prev2));
    }
}

void svc_s2_blur_rows_avx512(const svc_s2_gauss *g, const float *in, float *out, int w, int h, float *scratch) {
    float *t = scratch, *o = scratch + 16 * (size_t)w;
    for (int y0 = 0; y0 < h; y0 += 16) {
        const int rows = h - y0 < 16 ? h - y0 : 16;
        /* A partial group repeats its last row in the spare lanes (their outputs are dropped). */
        for (int lane = 0; lane < 16; lane++) {
            const float *row = in + (size_t)(y0 + (lane < rows ? lane : rows - 1)) * w;
            for (int x = 0; x < w; x++) t[16 * (size_t)x + lane] = row[x];
        }
        rows16(g, t, o, w);
        for (int lane = 0; lane < rows; lane++) {
            float *row = out + (size_t)(y0 + lane) * w;
            for (int x = 0; x < w; x++) row[x] = o[16 * (size_t)x + lane];
        }
    }
}

void svc_s2_blur_cols_avx512(const svc_s2_gauss *g, const float *in, float *out, int w, int h, float *state) {
    const int r = g->radius;
    float *p1 = state, *p2 = state + 3 * (size_t)w;
    memset(state, 0, sizeof(float) * 6 * (size_t)w);
    __m512 n2[3], neg_d1[3];
    for (int k = 0; k < 3; k++) {
        n2[k] = _mm512_set1_ps(g->n2[k]);
        neg_d1[k] = _mm512_set1_ps(-g->d1[k]);
    }
    for (int i = -r + 1; i < h; i++) {
        const int top = i - r - 1, bottom = i + r - 1;
        const float *a = top >= 0 ? in + (size_t)top * w : NULL;
        const float *b = bottom < h ? in + (size_t)bottom * w : NULL;
        float *row = i >= 0 ? out + (size_t)i * w : NULL;
        int x = 0;
        for (; x + 16 <= w; x += 16) {
            const __m512 va = a ? _mm512_loadu_ps(a + x) : _mm512_setzero_ps();
            const __m512 vb = b ? _mm512_loadu_ps(b + x) : _mm512_setzero_ps();
            /* One row in range: its value alone, as the scalar pass takes it. */
            const __m512 sum = a && b ? _mm512_add_ps(va, vb) : a ? va : vb;
            __m512 v[3];
            for (int k = 0; k < 3; k++) {
                float *q1 = p1 + (size_t)k * w + x, *q2 = p2 + (size_t)k * w + x;
                const __m512 y1 = _mm512_loadu_ps(q1), y2 = _mm512_loadu_ps(q2);
                /* fmaf(n2, sum, fmaf(-d1, y1, -y2)) */
                v[k] = _mm512_fmadd_ps(n2[k], sum, _mm512_fmsub_ps(neg_d1[k], y1, y2));
                _mm512_storeu_ps(q2, y1);
                _mm512_storeu_ps(q1, v[k]);
            }
            if (row) _mm512_storeu_ps(row + x, _mm512_add_ps(v[0], _mm512_add_ps(v[1], v[2])));
        }
        /* The last columns: the same with masked loads and stores. */
        if (x < w) {
            const __mmask16 on = lanes(w - x);
            const __m512 va = a ? _mm512_maskz_loadu_ps(on, a + x) : _mm512_setzero_ps();
            const __m512 vb = b ? _mm512_maskz_loadu_ps(on, b + x) : _mm512_setzero_ps();
            const __m512 sum = a && b ? _mm512_add_ps(va, vb) : a ? va : vb;
            __m512 v[3];
            for (int k = 0; k < 3; k++) {
                float *q1 = p1 + (size_t)k * w + x, *q2 = p2 + (size_t)k * w + x;
                const __m512 y1 = _mm512_maskz_loadu_ps(on, q1), y2 = _mm512_maskz_loadu_ps(on, q2);
                v[k] = _mm512_fmadd_ps(n2[k], sum, _mm512_fmsub_ps(neg_d1[k], y1, y2));
                _mm512_mask_storeu_ps(q2, on, y1);
                _mm512_mask_storeu_ps(q1, on, v[k]);
            }
            if (row) _mm512_mask_storeu_ps(row + x, on, _mm512_add_ps(v[0], _mm512_add_ps(v[1], v[2])));
        }
    }
}

/* cbrt(x) + add in every lane, as cbrt_add. */
static __m512 cbrt_add16(__m512 x, __m512 add) {
    const __m512i bits = _mm512_castps_si512(x);
    const __m512i guess = _mm512_sub_epi32(_mm512_set1_epi32(0x54800000),
                                           _mm512_mullo_epi32(_mm512_srli_epi32(bits, 23), _mm512_set1_epi32(0x002AAAAA)));
    const __mmask16 nonzero = _mm512_cmpneq_epi32_mask(bits, _mm512_setzero_si512());
    __m512 r = _mm512_castsi512_ps(_mm512_maskz_mov_epi32(nonzero, guess));
    const __m512 third = _mm512_set1_ps(1.0f / 3), four_thirds = _mm512_set1_ps(4.0f / 3);
    const __m512 x_third = _mm512_mul_ps(third, x);
    for (int i = 0; i < 3; i++) {
        const __m512 r2 = _mm512_mul_ps(r, r);
        r = _mm512_fnmadd_ps(x_third, _mm512_mul_ps(r2, r2), _mm512_mul_ps(four_thirds, r));
    }
    __m512 r2 = _mm512_mul_ps(r, r);
    r = _mm512_fmadd_ps(third, _mm512_fnmadd_ps(x, _mm512_mul_ps(r2, r2), r), r);
    r2 = _mm512_mul_ps(r, r);
    return _mm512_fmadd_ps(r2, x, add);
}

void svc_s2_xyb_avx512(const float *const lin[3], float *const xyb[3], size_t n) {
    const __m512 bias = _mm512_set1_ps(svc_s2_opsin_bias);
    const __m512 neg_bias_cbrt = _mm512_set1_ps(-cbrtf(svc_s2_opsin_bias));
    const __m512 half = _mm512_set1_ps(0.5f), zero = _mm512_setzero_ps();
    for (size_t i = 0; i < n; i += 16) {
        const __mmask16 on = lanes(n - i < 16 ? (int)(n - i) : 16);
        const __m512 r = _mm512_maskz_loadu_ps(on, lin[0] + i), g = _mm512_maskz_loadu_ps(on, lin[1] + i),
                     b = _mm512_maskz_loadu_ps(on, lin[2] + i);
        __m512 mixed[3];
        for (int k = 0; k < 3; k++) {
            const __m512 blue = _mm512_fmadd_ps(_mm512_set1_ps(svc_s2_opsin[k][2]), b, bias);
            const __m512 green = _mm512_fmadd_ps(_mm512_set1_ps(svc_s2_opsin[k][1]), g, blue);
            const __m512 v = _mm512_fmadd_ps(_mm512_set1_ps(svc_s2_opsin[k][0]), r, green);
            /* v > 0 ? v : 0 */
            mixed[k] = cbrt_add16(_mm512_maskz_mov_ps(_mm512_cmp_ps_mask(v, zero, _CMP_GT_OQ), v), neg_bias_cbrt);
        }
        const __m512 x = _mm512_mul_ps(half, _mm512_sub_ps(mixed[0], mixed[1]));
        const __m512 y = _mm512_mul_ps(half, _mm512_add_ps(mixed[0], mixed[1]));
        _mm512_mask_storeu_ps(xyb[0] + i, on, _mm512_add_ps(_mm512_mul_ps(x, _mm512_set1_ps(14.0f)), _mm512_set1_ps(0.42f)));
        _mm512_mask_storeu_ps(xyb[1] + i, on, _mm512_add_ps(y, _mm512_set1_ps(0.01f)));
        _mm512_mask_storeu_ps(xyb[2] + i, on, _mm512_add_ps(_mm512_sub_ps(mixed[2], y), _mm512_set1_ps(0.55f)));
    }
}

size_t svc_s2_error_sums_avx512(const float *const p[7], size_t n, double sum[6]) {
    const __m256 c2 = _mm256_set1_ps(0.0009f), one_f = _mm256_set1_ps(1.0f), two_f = _mm256_set1_ps(2.0f);
    const __m256 abs_f = _mm256_castsi256_ps(_mm256_set1_epi32(0x7FFFFFFF));
    const __m512d one = _mm512_set1_pd(1.0), zero = _mm512_setzero_pd();
    const size_t m = n / 8 * 8;
    double terms[6][8];
    for (size_t i = 0; i < m; i += 8) {
        const __m256 mu1 = _mm256_loadu_ps(p[0] + i), mu2 = _mm256_loadu_ps(p[1] + i);
        const __m256 s11 = _mm256_loadu_ps(p[2] + i), s22 = _mm256_loadu_ps(p[3] + i), s12 = _mm256_loadu_ps(p[4] + i);
        const __m256 i1 = _mm256_loadu_ps(p[5] + i), i2 = _mm256_loadu_ps(p[6] + i);
        /* The scalar code's float expressions, operation by operation. */
        const __m256 mu11 = _mm256_mul_ps(mu1, mu1), mu22 = _mm256_mul_ps(mu2, mu2), mu12 = _mm256_mul_ps(mu1, mu2);
        const __m256 diff = _mm256_sub_ps(mu1, mu2);
        const __m256 num_m = _mm256_sub_ps(one_f, _mm256_mul_ps(diff, diff));
        const __m256 num_s = _mm256_add_ps(_mm256_mul_ps(two_f, _mm256_sub_ps(s12, mu12)), c2);
        const __m256 den_s = _mm256_add_ps(_mm256_add_ps(_mm256_sub_ps(s11, mu11), _mm256_sub_ps(s22, mu22)), c2);
        const __m256 q = _mm256_div_ps(_mm256_mul_ps(num_m, num_s), den_s);
        __m512d d = _mm512_sub_pd(one, _mm512_cvtps_pd(q));
        d = _mm512_mask_mov_pd(d, _mm512_cmp_pd_mask(d, zero, _CMP_LT_OQ), zero);
        const __m512d a2 = _mm512_cvtps_pd(_mm256_and_ps(_mm256_sub_ps(i2, mu2), abs_f));
        const __m512d a1 = _mm512_cvtps_pd(_mm256_and_ps(_mm256_sub_ps(i1, mu1), abs_f));
        const __m512d edge = _mm512_sub_pd(_mm512_div_pd(_mm512_add_pd(one, a2), _mm512_add_pd(one, a1)), one);
        const __m512d ringing = _mm512_maskz_mov_pd(_mm512_cmp_pd_mask(edge, zero, _CMP_GT_OQ), edge);
        const __m512d blurring =
            _mm512_maskz_mov_pd(_mm512_cmp_pd_mask(edge, zero, _CMP_LT_OQ), _mm512_sub_pd(zero, edge));
        const __m512d v[3] = { d, ringing, blurring };
        for (int k = 0; k < 3; k++) {
            const __m512d sq = _mm512_mul_pd(v[k], v[k]);
            _mm512_storeu_pd(terms[2 * k], v[k]);
            _mm512_storeu_pd(terms[2 * k + 1], _mm512_mul_pd(sq, sq));
        }
        /* The sums in pixel order, as the scalar loop adds them. */
        for (int j = 0; j < 8; j++)
            for (int k = 0; k < 6; k++) sum[k] += terms[k][j];
    }
    return m;
}
