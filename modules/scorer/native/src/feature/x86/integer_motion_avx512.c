/*
 * AVX-512 (F/BW) row kernel of the integer motion (see motion.c), bit-identical to the scalar
 * row, for depths up to 12 bits (differences fit a signed 16-bit word; 16-bit input takes
 * the AVX2 kernel).
 * Vertical pass: the difference rows of taps k and k+1 interleaved word by word, one
 * vpmaddwd per two taps (exact int32 sums), rounded >> bpc into y. As in motion_avx2.c, y
 * (up to 17 bits) is split y = 256*hi + lo (hi signed, 0 <= lo < 256), stored as two word
 * lines, and the horizontal pass computes ((sum f*hi) + ((sum f*lo + 2^15) >> 8)) >> 8.
 * Horizontal pass: one vpmaddwd per two taps on the line read at an even and at an odd
 * start, giving even and odd output columns; only the sum of |value| is kept, so their order
 * does not matter.
 */
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>

#define AVX512_FN __attribute__((target("avx2,avx512f,avx512bw,avx512vl")))
#define MARGIN 32

static const int32_t kernel5[5] = { 3571, 16004, 26386, 16004, 3571 };

size_t svc_motion_avx512_scratch_len(int w) { return 2 * ((size_t)w + 3 * MARGIN); }

AVX512_FN static inline __m512i pair(int k) {
    const uint32_t hi = k + 1 < 5 ? (uint32_t)kernel5[k + 1] : 0;
    return _mm512_set1_epi32((int)((uint32_t)kernel5[k] | hi << 16));
}

/* Word c of the column-ordered low halves of an unpacklo (LO) / unpackhi (HI) dword pair. */
AVX512_FN static inline __m512i low_halves_index(void) {
    uint16_t idx[32];
    for (int c = 0; c < 32; c++) {
        const int lane = c / 8, q = c % 8;
        idx[c] = (uint16_t)(q < 4 ? 2 * (4 * lane + q) : 32 + 2 * (4 * lane + q - 4));
    }
    return _mm512_loadu_si512(idx);
}

static void pad2(int16_t *l, int w) {
    for (int f = 1; f <= 2; f++) {
        l[-f] = l[f];
        l[w - 1 + f] = l[w - 1 - f];
    }
}

AVX512_FN uint64_t svc_motion_row_sad_avx512(const uint16_t *const *ra, const uint16_t *const *rb, int w,
                                             int bpc, int16_t *scratch) {
    int16_t *yh = scratch + MARGIN, *yl = scratch + (size_t)w + 3 * MARGIN + MARGIN;
    const __m512i idx = low_halves_index();
    const __m512i vround = _mm512_set1_epi32(1 << (bpc - 1)), lo_mask = _mm512_set1_epi32(255);
    const __m128i vshift = _mm_cvtsi32_si128(bpc);
    for (int j = 0; j < w; j += 32) {
        const __mmask32 m = w - j >= 32 ? (__mmask32)0xFFFFFFFFu : (__mmask32)((1u << (w - j)) - 1);
        /* The next output row's new rows (the ring's rows are packed, w apart): the loads of
         * the rows not yet in cache were most of this kernel's time. A prefetch past the
         * frame (the mirrored last rows) is harmless. */
        _mm_prefetch((const char *)(ra[4] + w + j), _MM_HINT_T0);
        _mm_prefetch((const char *)(rb[4] + w + j), _MM_HINT_T0);
        __m512i lo = _mm512_setzero_si512(), hi = lo;
        for (int k = 0; k < 5; k += 2) {
            const __m512i f = pair(k);
            const __m512i d0 = _mm512_sub_epi16(_mm512_maskz_loadu_epi16(m, ra[k] + j),
                                                _mm512_maskz_loadu_epi16(m, rb[k] + j));
            const __m512i d1 = k + 1 < 5 ? _mm512_sub_epi16(_mm512_maskz_loadu_epi16(m, ra[k + 1] + j),
                                                             _mm512_maskz_loadu_epi16(m, rb[k + 1] + j))
                                         : _mm512_setzero_si512();
            lo = _mm512_add_epi32(lo, _mm512_madd_epi16(_mm512_unpacklo_epi16(d0, d1), f));
            hi = _mm512_add_epi32(hi, _mm512_madd_epi16(_mm512_unpackhi_epi16(d0, d1), f));
        }
        lo = _mm512_sra_epi32(_mm512_add_epi32(lo, vround), vshift);
        hi = _mm512_sra_epi32(_mm512_add_epi32(hi, vround), vshift);
        _mm512_mask_storeu_epi16(yh + j, m, _mm512_permutex2var_epi16(_mm512_srai_epi32(lo, 8), idx,
                                                                      _mm512_srai_epi32(hi, 8)));
        _mm512_mask_storeu_epi16(yl + j, m, _mm512_permutex2var_epi16(_mm512_and_si512(lo, lo_mask), idx,
                                                                      _mm512_and_si512(hi, lo_mask)));
    }
    pad2(yh, w);
    pad2(yl, w);
    const __m512i hround = _mm512_set1_epi32(1 << 15);
    __m512i sum = _mm512_setzero_si512();
    for (int j = 0; j < w; j += 32) {
        __m512i he = _mm512_setzero_si512(), ho = he, le = he, lo = he;
        for (int k = 0; k < 5; k += 2) {
            const __m512i f = pair(k);
            const int x = j - 2 + k;
            he = _mm512_add_epi32(he, _mm512_madd_epi16(_mm512_loadu_si512(yh + x), f));
            ho = _mm512_add_epi32(ho, _mm512_madd_epi16(_mm512_loadu_si512(yh + x + 1), f));
            le = _mm512_add_epi32(le, _mm512_madd_epi16(_mm512_loadu_si512(yl + x), f));
            lo = _mm512_add_epi32(lo, _mm512_madd_epi16(_mm512_loadu_si512(yl + x + 1), f));
        }
        const __m512i ve = _mm512_srai_epi32(_mm512_add_epi32(he, _mm512_srai_epi32(_mm512_add_epi32(le, hround), 8)), 8);
        const __m512i vo = _mm512_srai_epi32(_mm512_add_epi32(ho, _mm512_srai_epi32(_mm512_add_epi32(lo, hround), 8)), 8);
        /* Lane i is column j + 2i (even) or j + 2i + 1 (odd). */
        const int ne = (w - j + 1) / 2, no = (w - j) / 2;
        const __mmask16 me = ne >= 16 ? 0xFFFF : (__mmask16)((1u << ne) - 1);
        const __mmask16 mo = no >= 16 ? 0xFFFF : (__mmask16)((1u << (no > 0 ? no : 0)) - 1);
        sum = _mm512_mask_add_epi32(sum, me, sum, _mm512_abs_epi32(ve));
        sum = _mm512_mask_add_epi32(sum, mo, sum, _mm512_abs_epi32(vo));
    }
    /* |v| < 2^17 and at most w / 16 values per lane: below 2^31 for w <= 16384. */
    return (uint64_t)_mm512_reduce_add_epi64(_mm512_add_epi64(_mm512_cvtepu32_epi64(_mm512_castsi512_si256(sum)),
                                                              _mm512_cvtepu32_epi64(_mm512_extracti64x4_epi64(sum, 1))));
}
#endif
