/*
 * xpsnr's AVX-512 kernels (xpsnr.h): sixteen samples a step in 32-bit lanes, the last step of a
 * row masked (masked-off lanes load zeros in every operand, so they add 0), the row's sums
 * widened into 64-bit totals. Exact integer sums: the same results as the scalar loops.
 */
#include <immintrin.h>

#include "../xpsnr.h"

/* Lanes [0, n) of 16 (n >= 16: all). */
static inline __mmask16 first_lanes(int n) { return n >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << n) - 1); }

static inline __m512i load16(const uint16_t *p, __mmask16 m) {
    return _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m, p));
}

/* The sixteen 32-bit lanes' sum, as a 64-bit integer (each lane non-negative). */
static inline uint64_t lanes_sum(__m512i v) {
    const __m512i wide = _mm512_add_epi64(_mm512_cvtepu32_epi64(_mm512_castsi512_si256(v)),
                                          _mm512_cvtepu32_epi64(_mm512_extracti64x4_epi64(v, 1)));
    return (uint64_t)_mm512_reduce_add_epi64(wide);
}

uint64_t svc_xpsnr_sse_avx512(const uint16_t *a, const uint16_t *b, int w, int x0, int y0, int bw, int bh) {
    uint64_t sse = 0;
    for (int y = y0; y < y0 + bh; y++) {
        const uint16_t *ra = a + (ptrdiff_t)y * w, *rb = b + (ptrdiff_t)y * w;
        __m512i acc = _mm512_setzero_si512();
        /* At 12 bits a square is below 2^24: 128 of them per lane stay below 2^31. */
        for (int x = x0, n = 0; x < x0 + bw; x += 16, n++) {
            const __mmask16 m = first_lanes(x0 + bw - x);
            const __m512i d = _mm512_sub_epi32(load16(ra + x, m), load16(rb + x, m));
            acc = _mm512_add_epi32(acc, _mm512_mullo_epi32(d, d));
            if (n == 127) {
                sse += lanes_sum(acc);
                acc = _mm512_setzero_si512();
                n = -1;
            }
        }
        sse += lanes_sum(acc);
    }
    return sse;
}

uint64_t svc_xpsnr_spatial_avx512(const uint16_t *o, int w, int x_lo, int x_hi, int y_lo, int y_hi) {
    uint64_t sum = 0;
    const __m512i twelve = _mm512_set1_epi32(12);
    for (int y = y_lo; y < y_hi; y++) {
        const uint16_t *up = o + (ptrdiff_t)(y - 1) * w, *mid = up + w, *down = mid + w;
        /* At 12 bits |f| < 2^17: a row of up to 2^14 samples stays below 2^31 per lane. */
        __m512i acc = _mm512_setzero_si512();
        for (int x = x_lo; x < x_hi; x += 16) {
            const __mmask16 m = first_lanes(x_hi - x);
            const __m512i cross = _mm512_add_epi32(_mm512_add_epi32(load16(mid + x - 1, m), load16(mid + x + 1, m)),
                                                   _mm512_add_epi32(load16(up + x, m), load16(down + x, m)));
            const __m512i corners = _mm512_add_epi32(_mm512_add_epi32(load16(up + x - 1, m), load16(up + x + 1, m)),
                                                     _mm512_add_epi32(load16(down + x - 1, m), load16(down + x + 1, m)));
            const __m512i f = _mm512_sub_epi32(_mm512_sub_epi32(_mm512_mullo_epi32(twelve, load16(mid + x, m)),
                                                                _mm512_slli_epi32(cross, 1)),
                                               corners);
            acc = _mm512_add_epi32(acc, _mm512_abs_epi32(f));
        }
        sum += lanes_sum(acc);
    }
    return sum;
}

uint64_t svc_xpsnr_temporal_avx512(const uint16_t *o, const uint16_t *p1, const uint16_t *p2, int second_order, int w,
                                   int x0, int y0, int bw, int bh) {
    uint64_t sum = 0;
    const __m512i zero = _mm512_setzero_si512();
    for (int y = y0; y < y0 + bh; y++) {
        const ptrdiff_t row = (ptrdiff_t)y * w;
        __m512i acc = zero;
        for (int x = x0; x < x0 + bw; x += 16) {
            const __mmask16 m = first_lanes(x0 + bw - x);
            const __m512i c = load16(o + row + x, m);
            const __m512i m1 = p1 ? load16(p1 + row + x, m) : zero, m2 = p2 ? load16(p2 + row + x, m) : zero;
            const __m512i t = second_order ? _mm512_add_epi32(_mm512_sub_epi32(c, _mm512_slli_epi32(m1, 1)), m2)
                                           : _mm512_sub_epi32(c, m1);
            acc = _mm512_add_epi32(acc, _mm512_abs_epi32(t));
        }
        sum += lanes_sum(acc);
    }
    return sum;
}
