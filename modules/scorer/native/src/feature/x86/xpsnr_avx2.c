/*
 * xpsnr's AVX2 kernels (xpsnr.h): eight samples a step in 32-bit lanes, the row's sums
 * widened into 64-bit totals, the columns left over by a step done one by one with the same
 * integer arithmetic. Exact integer sums: the same results as the scalar loops.
 */
#include <immintrin.h>
#include <stdlib.h>

#include "../xpsnr.h"

static inline __m256i load8(const uint16_t *p) { return _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)p)); }

/* The eight 32-bit lanes' sum, as a 64-bit integer (each lane non-negative). */
static inline uint64_t lanes_sum(__m256i v) {
    const __m256i wide = _mm256_add_epi64(_mm256_cvtepu32_epi64(_mm256_castsi256_si128(v)),
                                          _mm256_cvtepu32_epi64(_mm256_extracti128_si256(v, 1)));
    const __m128i half = _mm_add_epi64(_mm256_castsi256_si128(wide), _mm256_extracti128_si256(wide, 1));
    return (uint64_t)_mm_cvtsi128_si64(half) + (uint64_t)_mm_extract_epi64(half, 1);
}

uint64_t svc_xpsnr_sse_avx2(const uint16_t *a, const uint16_t *b, int w, int x0, int y0, int bw, int bh) {
    uint64_t sse = 0;
    for (int y = y0; y < y0 + bh; y++) {
        const uint16_t *ra = a + (ptrdiff_t)y * w, *rb = b + (ptrdiff_t)y * w;
        __m256i acc = _mm256_setzero_si256();
        int x = x0;
        /* At 12 bits a square is below 2^24: 128 of them per lane stay below 2^31. */
        for (int n = 0; x + 8 <= x0 + bw; x += 8, n++) {
            const __m256i d = _mm256_sub_epi32(load8(ra + x), load8(rb + x));
            acc = _mm256_add_epi32(acc, _mm256_mullo_epi32(d, d));
            if (n == 127) {
                sse += lanes_sum(acc);
                acc = _mm256_setzero_si256();
                n = -1;
            }
        }
        sse += lanes_sum(acc);
        for (; x < x0 + bw; x++) {
            const int64_t e = (int64_t)ra[x] - rb[x];
            sse += (uint64_t)(e * e);
        }
    }
    return sse;
}

/* |12 c - 2 (l + r + u + d) - (ul + ur + dl + dr)| of one sample. */
static inline int high_pass(const uint16_t *up, const uint16_t *mid, const uint16_t *down, int x) {
    const int f = 12 * mid[x] - 2 * (mid[x - 1] + mid[x + 1] + up[x] + down[x]) -
                  (up[x - 1] + up[x + 1] + down[x - 1] + down[x + 1]);
    return abs(f);
}

uint64_t svc_xpsnr_spatial_avx2(const uint16_t *o, int w, int x_lo, int x_hi, int y_lo, int y_hi) {
    uint64_t sum = 0;
    const __m256i twelve = _mm256_set1_epi32(12);
    for (int y = y_lo; y < y_hi; y++) {
        const uint16_t *up = o + (ptrdiff_t)(y - 1) * w, *mid = up + w, *down = mid + w;
        /* At 12 bits |f| < 2^17: a row of up to 2^14 samples stays below 2^31 per lane. */
        __m256i acc = _mm256_setzero_si256();
        int x = x_lo;
        for (; x + 8 <= x_hi; x += 8) {
            const __m256i cross = _mm256_add_epi32(_mm256_add_epi32(load8(mid + x - 1), load8(mid + x + 1)),
                                                   _mm256_add_epi32(load8(up + x), load8(down + x)));
            const __m256i corners = _mm256_add_epi32(_mm256_add_epi32(load8(up + x - 1), load8(up + x + 1)),
                                                     _mm256_add_epi32(load8(down + x - 1), load8(down + x + 1)));
            const __m256i f = _mm256_sub_epi32(_mm256_sub_epi32(_mm256_mullo_epi32(twelve, load8(mid + x)),
                                                                _mm256_slli_epi32(cross, 1)),
                                               corners);
            acc = _mm256_add_epi32(acc, _mm256_abs_epi32(f));
        }
        sum += lanes_sum(acc);
        for (; x < x_hi; x++) sum += (uint64_t)high_pass(up, mid, down, x);
    }
    return sum;
}

uint64_t svc_xpsnr_temporal_avx2(const uint16_t *o, const uint16_t *p1, const uint16_t *p2, int second_order, int w,
                                 int x0, int y0, int bw, int bh) {
    uint64_t sum = 0;
    const __m256i zero = _mm256_setzero_si256();
    for (int y = y0; y < y0 + bh; y++) {
        const ptrdiff_t row = (ptrdiff_t)y * w;
        __m256i acc = zero;
        int x = x0;
        for (; x + 8 <= x0 + bw; x += 8) {
            const __m256i c = load8(o + row + x);
            const __m256i m1 = p1 ? load8(p1 + row + x) : zero, m2 = p2 ? load8(p2 + row + x) : zero;
            const __m256i t = second_order ? _mm256_add_epi32(_mm256_sub_epi32(c, _mm256_slli_epi32(m1, 1)), m2)
                                           : _mm256_sub_epi32(c, m1);
            acc = _mm256_add_epi32(acc, _mm256_abs_epi32(t));
        }
        sum += lanes_sum(acc);
        for (; x < x0 + bw; x++) {
            const int c = o[row + x], m1 = p1 ? p1[row + x] : 0, m2 = p2 ? p2[row + x] : 0;
            sum += (uint64_t)abs(second_order ? c - 2 * m1 + m2 : c - m1);
        }
    }
    return sum;
}
