/* AVX-512 kernels of cambi (contracts in feature_cambi.h): the run histogram update at 32
 * columns (a single pixel's 17-column window in one step at 1080p), the run c-values at 16
 * columns with masked tails. */
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>

#include "feature_cambi.h"

void svc_cambi_run_add_avx512(uint16_t *row, int lo, int hi, int a, int n, int pad, int delta) {
    const __m512i iota = _mm512_set_epi16(31, 30, 29, 28, 27, 26, 25, 24, 23, 22, 21, 20, 19, 18, 17, 16, 15, 14, 13,
                                          12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
    const __m512i last = _mm512_set1_epi16((short)(n - 1)), vpad = _mm512_set1_epi16((short)pad);
    const __m512i zero = _mm512_setzero_si512(), one = _mm512_set1_epi16(1);
    for (int c = lo; c < hi; c += 32) {
        const __m512i t = _mm512_add_epi16(_mm512_set1_epi16((short)(c - a)), iota);
        const __m512i top = _mm512_min_epi16(_mm512_add_epi16(t, vpad), last);
        const __m512i bottom = _mm512_max_epi16(_mm512_sub_epi16(t, vpad), zero);
        const __m512i k = _mm512_max_epi16(_mm512_add_epi16(_mm512_sub_epi16(top, bottom), one), zero);
        const __m512i h = _mm512_loadu_si512(row + c);
        _mm512_storeu_si512(row + c, delta > 0 ? _mm512_add_epi16(h, k) : _mm512_sub_epi16(h, k));
    }
}

static inline __m512i load16(const uint16_t *p) {
    return _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)p));
}

void svc_cambi_run_cvalues_avx512(const uint16_t *h0, ptrdiff_t stride, int n, const int *diffs, const int *weights,
                                  int nd, float *out) {
    for (int i = 0; i < n; i += 16) {
        const __m512i p0 = load16(h0 + i);
        __m512 best = _mm512_setzero_ps();
        for (int j = 0; j < nd; j++) {
            const ptrdiff_t off = (ptrdiff_t)(diffs[j] + 1) * stride;
            const __m512i p = _mm512_max_epi32(load16(h0 + i + off), load16(h0 + i - off));
            const __m512i num = _mm512_mullo_epi32(_mm512_mullo_epi32(_mm512_set1_epi32(weights[j]), p0), p);
            const __m512 val = _mm512_div_ps(_mm512_cvtepi32_ps(num), _mm512_cvtepi32_ps(_mm512_add_epi32(p, p0)));
            /* val > best ? val : best, as the scalar code (vmaxps returns its second operand on
             * equality or NaN, as _mm256_max_ps does) */
            best = _mm512_mask_mov_ps(best, _mm512_cmp_ps_mask(val, best, _CMP_GT_OQ), val);
        }
        const __mmask16 keep = n - i >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (n - i)) - 1);
        _mm512_mask_storeu_ps(out + i, keep, best);
    }
}
#else
typedef int svc_no_avx512_cambi; /* an empty translation unit is not ISO C */
#endif
