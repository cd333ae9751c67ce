/* AVX2 kernels of cambi (contracts in cambi.h): the run histogram update at 16 columns,
 * the run c-values at 8 columns, the 3-tap mode filter passes at 16 columns. */
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>

#include "../cambi.h"

/* Columns past hi (within the row's slack, or past the run's reach) get k <= 0, clamped to 0. */
__attribute__((target("avx2"))) void svc_cambi_run_add_avx2(uint16_t *row, int lo, int hi, int a, int n, int pad,
                                                            int delta) {
    const __m256i iota = _mm256_setr_epi16(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    const __m256i last = _mm256_set1_epi16((short)(n - 1)), vpad = _mm256_set1_epi16((short)pad);
    const __m256i zero = _mm256_setzero_si256(), one = _mm256_set1_epi16(1);
    for (int c = lo; c < hi; c += 16) {
        const __m256i t = _mm256_add_epi16(_mm256_set1_epi16((short)(c - a)), iota);
        const __m256i top = _mm256_min_epi16(_mm256_add_epi16(t, vpad), last);
        const __m256i bottom = _mm256_max_epi16(_mm256_sub_epi16(t, vpad), zero);
        const __m256i k = _mm256_max_epi16(_mm256_add_epi16(_mm256_sub_epi16(top, bottom), one), zero);
        __m256i *at = (__m256i *)(row + c);
        const __m256i h = _mm256_loadu_si256(at);
        _mm256_storeu_si256(at, delta > 0 ? _mm256_add_epi16(h, k) : _mm256_sub_epi16(h, k));
    }
}

static inline __attribute__((target("avx2"))) __m256i load8(const uint16_t *p) {
    return _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)p));
}

__attribute__((target("avx2"))) void svc_cambi_run_cvalues_avx2(const uint16_t *h0, ptrdiff_t stride, int n,
                                                                const int *diffs, const int *weights, int nd,
                                                                float *out) {
    const __m256i iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    for (int i = 0; i < n; i += 8) {
        const __m256i p0 = load8(h0 + i);
        __m256 best = _mm256_setzero_ps();
        for (int j = 0; j < nd; j++) {
            const ptrdiff_t off = (ptrdiff_t)(diffs[j] + 1) * stride;
            const __m256i p = _mm256_max_epi32(load8(h0 + i + off), load8(h0 + i - off));
            const __m256i num = _mm256_mullo_epi32(_mm256_mullo_epi32(_mm256_set1_epi32(weights[j]), p0), p);
            const __m256 val = _mm256_div_ps(_mm256_cvtepi32_ps(num), _mm256_cvtepi32_ps(_mm256_add_epi32(p, p0)));
            best = _mm256_max_ps(val, best); /* val > best ? val : best, as the scalar code */
        }
        if (i + 8 <= n) _mm256_storeu_ps(out + i, best);
        else _mm256_maskstore_ps(out + i, _mm256_cmpgt_epi32(_mm256_set1_epi32(n - i), iota), best);
    }
}

static inline __attribute__((target("avx2"))) __m256i mode3(__m256i a, __m256i b, __m256i c) {
    const __m256i least = _mm256_min_epu16(a, _mm256_min_epu16(b, c));
    const __m256i r = _mm256_blendv_epi8(least, b, _mm256_cmpeq_epi16(b, c));
    const __m256i a_pair = _mm256_or_si256(_mm256_cmpeq_epi16(a, b), _mm256_cmpeq_epi16(a, c));
    return _mm256_blendv_epi8(r, a, a_pair);
}

static uint16_t mode3_c(uint16_t a, uint16_t b, uint16_t c) {
    if (a == b || a == c) return a;
    if (b == c) return b;
    return a < b ? (a < c ? a : c) : (b < c ? b : c);
}

__attribute__((target("avx2"))) void svc_cambi_mode_h_avx2(const uint16_t *in, uint16_t *out, int w) {
    const int end = w - 1; /* outputs [1, end) */
    if (end - 1 < 16) {
        for (int x = 1; x < end; x++) out[x] = mode3_c(in[x - 1], in[x], in[x + 1]);
        return;
    }
    for (int x = 1;; x += 16) {
        if (x + 16 > end) x = end - 16; /* the last step ends at end, recomputing a few columns */
        const __m256i r = mode3(_mm256_loadu_si256((const __m256i *)(in + x - 1)),
                                _mm256_loadu_si256((const __m256i *)(in + x)),
                                _mm256_loadu_si256((const __m256i *)(in + x + 1)));
        _mm256_storeu_si256((__m256i *)(out + x), r);
        if (x + 16 >= end) break;
    }
}

__attribute__((target("avx2"))) void svc_cambi_mode_v_avx2(const uint16_t *a, const uint16_t *b, const uint16_t *c,
                                                           uint16_t *out, int w) {
    int x = 0;
    for (; x + 16 <= w; x += 16) {
        const __m256i r = mode3(_mm256_loadu_si256((const __m256i *)(a + x)),
                                _mm256_loadu_si256((const __m256i *)(b + x)),
                                _mm256_loadu_si256((const __m256i *)(c + x)));
        _mm256_storeu_si256((__m256i *)(out + x), r);
    }
    for (; x < w; x++) out[x] = mode3_c(a[x], b[x], c[x]);
}

static inline __attribute__((target("avx2"))) __m256i widen(const uint8_t *p) {
    return _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)p));
}

__attribute__((target("avx2"))) void svc_cambi_luma8_row_avx2(const uint8_t *r, const uint8_t *below, uint16_t *dst,
                                                              int w) {
    int x = 0;
    for (; x + 16 <= w - 1; x += 16) {
        const __m256i pair = _mm256_add_epi16(widen(r + x), widen(r + x + 1));
        const __m256i sum = below ? _mm256_add_epi16(pair, _mm256_add_epi16(widen(below + x), widen(below + x + 1)))
                                  : _mm256_add_epi16(pair, pair);
        _mm256_storeu_si256((__m256i *)(dst + x), sum);
    }
    for (; x < w - 1; x++)
        dst[x] = (uint16_t)(below ? r[x] + r[x + 1] + below[x] + below[x + 1] : 2 * (r[x] + r[x + 1]));
    dst[w - 1] = (uint16_t)(below ? 2 * (r[w - 1] + below[w - 1]) : r[w - 1] << 2);
}

__attribute__((target("avx2"))) void svc_cambi_flat_row_avx2(const uint16_t *r, const uint16_t *below, uint16_t *f,
                                                             int w) {
    const __m256i one = _mm256_set1_epi16(1);
    int x = 0;
    for (; x + 16 <= w - 1; x += 16) {
        const __m256i v = _mm256_loadu_si256((const __m256i *)(r + x));
        __m256i eq = _mm256_cmpeq_epi16(v, _mm256_loadu_si256((const __m256i *)(r + x + 1)));
        if (below) eq = _mm256_and_si256(eq, _mm256_cmpeq_epi16(v, _mm256_loadu_si256((const __m256i *)(below + x))));
        _mm256_storeu_si256((__m256i *)(f + x), _mm256_and_si256(eq, one));
    }
    for (; x < w; x++)
        f[x] = (uint16_t)((x == w - 1 || r[x] == r[x + 1]) && (!below || r[x] == below[x]));
}

__attribute__((target("avx2"))) void svc_cambi_mask_row_avx2(uint16_t *cs, const uint16_t *add, const uint16_t *sub,
                                                             uint16_t *m, int w, int threshold) {
    uint16_t *col = cs + 3;
    int x = 0;
    if (add || sub) {
        for (; x + 16 <= w; x += 16) {
            __m256i c = _mm256_loadu_si256((const __m256i *)(col + x));
            if (add) c = _mm256_add_epi16(c, _mm256_loadu_si256((const __m256i *)(add + x)));
            if (sub) c = _mm256_sub_epi16(c, _mm256_loadu_si256((const __m256i *)(sub + x)));
            _mm256_storeu_si256((__m256i *)(col + x), c);
        }
        for (; x < w; x++) col[x] = (uint16_t)(col[x] + (add ? add[x] : 0) - (sub ? sub[x] : 0));
    }
    const __m256i t = _mm256_set1_epi16((short)threshold), one = _mm256_set1_epi16(1);
    for (x = 0; x + 16 <= w; x += 16) {
        __m256i sum = _mm256_loadu_si256((const __m256i *)(cs + x));
        for (int k = 1; k < 7; k++) sum = _mm256_add_epi16(sum, _mm256_loadu_si256((const __m256i *)(cs + x + k)));
        _mm256_storeu_si256((__m256i *)(m + x), _mm256_and_si256(_mm256_cmpgt_epi16(sum, t), one));
    }
    for (; x < w; x++) {
        const int sum = cs[x] + cs[x + 1] + cs[x + 2] + cs[x + 3] + cs[x + 4] + cs[x + 5] + cs[x + 6];
        m[x] = sum > threshold;
    }
}
#else
typedef int svc_no_avx2_cambi; /* an empty translation unit is not ISO C */
#endif
