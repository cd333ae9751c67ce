/*
 * AVX2 row kernel of the integer motion (see integer_motion.c): 5-tap filter of the difference of
 * two frames, vertical then horizontal, sum of |value|, bit-identical to the scalar row.
 * Both passes can exceed 32 bits (16-bit samples vertically, any depth horizontally), so
 * each input v is split as v = 256*hi + lo (hi signed, 0 <= lo < 256) and with the
 * kernel f (sum 65536)
 *     (sum f*v + 2^(s-1)) >> s  ==  (sum f*hi + ((sum f*lo + 2^(s-1)) >> 8)) >> (s-8)
 * for s >= 8 with arithmetic shifts, every term fitting in 32 bits.
 * Built with -mavx2 in the library; the target attribute lets the dev harness build it
 * without that flag.
 *
 * svc_motion_row_sad_avx2_words is the faster kernel for depths up to 12 bits (differences
 * fit a signed 16-bit word) and rows of 16 samples or more, the AVX2 twin of
 * x86/integer_motion_avx512.c: one vpmaddwd per two taps in both passes, the split
 * vertical values stored as two word lines in the caller's scratch.
 */
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>

#define AVX2_FN __attribute__((target("avx2")))
#define TAPS 5
#define RADIUS 2
#define TILE 256

static const int32_t kernel5[TAPS] = { 3571, 16004, 26386, 16004, 3571 };

static inline int mirror(int i, int n) {
    if (i < 0) return -i;
    if (i >= n) return 2 * n - i - 2;
    return i;
}

AVX2_FN uint64_t svc_motion_row_sad_avx2(const uint16_t *const *ra, const uint16_t *const *rb,
                                         int w, int bpc) {
    /* Split vertical-pass values of one tile, columns x0-2 .. x1+1. */
    int32_t yh[TILE + 2 * RADIUS], yl[TILE + 2 * RADIUS];
    const __m256i lo_mask = _mm256_set1_epi32(255);
    const __m256i vround = _mm256_set1_epi32(1 << (bpc - 1));
    const __m128i vshift = _mm_cvtsi32_si128(bpc - 8);
    const __m256i hround = _mm256_set1_epi32(1 << 15);
    __m256i lane_sum = _mm256_setzero_si256();
    uint64_t sad = 0;
    for (int x0 = 0; x0 < w; x0 += TILE) {
        const int x1 = x0 + TILE < w ? x0 + TILE : w;
        for (int c = x0 - RADIUS; c < x1 + RADIUS;) {
            const int t = c - x0 + RADIUS;
            if (c >= 0 && c + 8 <= w && c + 8 <= x1 + RADIUS) {
                __m256i hi = _mm256_setzero_si256(), lo = hi;
                for (int k = 0; k < TAPS; k++) {
                    const __m256i a = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(ra[k] + c)));
                    const __m256i b = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(rb[k] + c)));
                    const __m256i d = _mm256_sub_epi32(a, b);
                    const __m256i f = _mm256_set1_epi32(kernel5[k]);
                    hi = _mm256_add_epi32(hi, _mm256_mullo_epi32(f, _mm256_srai_epi32(d, 8)));
                    lo = _mm256_add_epi32(lo, _mm256_mullo_epi32(f, _mm256_and_si256(d, lo_mask)));
                }
                const __m256i y = _mm256_sra_epi32(
                    _mm256_add_epi32(hi, _mm256_srai_epi32(_mm256_add_epi32(lo, vround), 8)), vshift);
                _mm256_storeu_si256((__m256i *)(yh + t), _mm256_srai_epi32(y, 8));
                _mm256_storeu_si256((__m256i *)(yl + t), _mm256_and_si256(y, lo_mask));
                c += 8;
            } else {
                const int cc = mirror(c, w);
                int64_t acc = 0;
                for (int k = 0; k < TAPS; k++) acc += kernel5[k] * ((int32_t)ra[k][cc] - rb[k][cc]);
                const int32_t y = (int32_t)((acc + ((int64_t)1 << (bpc - 1))) >> bpc);
                yh[t] = y >> 8;
                yl[t] = y & 255;
                c++;
            }
        }
        int x = x0;
        for (; x + 8 <= x1; x += 8) {
            __m256i hi = _mm256_setzero_si256(), lo = hi;
            for (int k = 0; k < TAPS; k++) {
                const __m256i f = _mm256_set1_epi32(kernel5[k]);
                hi = _mm256_add_epi32(hi, _mm256_mullo_epi32(f, _mm256_loadu_si256((const __m256i *)(yh + x - x0 + k))));
                lo = _mm256_add_epi32(lo, _mm256_mullo_epi32(f, _mm256_loadu_si256((const __m256i *)(yl + x - x0 + k))));
            }
            const __m256i v = _mm256_srai_epi32(
                _mm256_add_epi32(hi, _mm256_srai_epi32(_mm256_add_epi32(lo, hround), 8)), 8);
            lane_sum = _mm256_add_epi32(lane_sum, _mm256_abs_epi32(v));
        }
        for (; x < x1; x++) {
            int32_t hi = 0, lo = 0;
            for (int k = 0; k < TAPS; k++) {
                hi += kernel5[k] * yh[x - x0 + k];
                lo += kernel5[k] * yl[x - x0 + k];
            }
            const int32_t v = (hi + ((lo + (1 << 15)) >> 8)) >> 8;
            sad += (uint64_t)(v < 0 ? -v : v);
        }
        /* Lane sums stay below 2^31: |v| < 2^17 and at most 32 vectors per lane per tile. */
        uint32_t lanes[8];
        _mm256_storeu_si256((__m256i *)lanes, lane_sum);
        for (int i = 0; i < 8; i++) sad += lanes[i];
        lane_sum = _mm256_setzero_si256();
    }
    return sad;
}

#define MARGIN 32

size_t svc_motion_avx2_scratch_len(int w) { return 2 * ((size_t)w + 3 * MARGIN); }

AVX2_FN static inline __m256i tap_pair(int k) {
    const uint32_t hi = k + 1 < TAPS ? (uint32_t)kernel5[k + 1] : 0;
    return _mm256_set1_epi32((int)((uint32_t)kernel5[k] | hi << 16));
}

static void pad2(int16_t *l, int w) {
    for (int f = 1; f <= RADIUS; f++) {
        l[-f] = l[f];
        l[w - 1 + f] = l[w - 1 - f];
    }
}

AVX2_FN uint64_t svc_motion_row_sad_avx2_words(const uint16_t *const *ra, const uint16_t *const *rb, int w, int bpc,
                                               int16_t *scratch) {
    int16_t *yh = scratch + MARGIN, *yl = scratch + (size_t)w + 3 * MARGIN + MARGIN;
    const __m256i vround = _mm256_set1_epi32(1 << (bpc - 1)), lo_mask = _mm256_set1_epi32(255);
    const __m128i vshift = _mm_cvtsi32_si128(bpc);
    const __m256i f01 = tap_pair(0), f23 = tap_pair(2), f4 = tap_pair(4);
    /* Vertical: differences of taps k and k+1 interleaved; 16 columns a step, the last one
     * moved back to end at w (w >= 16) rather than reading past the rows. */
    for (int j0 = 0; j0 < w; j0 += 16) {
        const int j = j0 + 16 <= w ? j0 : w - 16;
        /* The next output row's new rows (packed, w apart), as the AVX-512 kernel does. */
        if (!(j0 & 31)) {
            _mm_prefetch((const char *)(ra[4] + w + j), _MM_HINT_T0);
            _mm_prefetch((const char *)(rb[4] + w + j), _MM_HINT_T0);
        }
#define DIFF(k) \
    _mm256_sub_epi16(_mm256_loadu_si256((const __m256i *)(ra[k] + j)), _mm256_loadu_si256((const __m256i *)(rb[k] + j)))
        const __m256i d0 = DIFF(0), d1 = DIFF(1), d2 = DIFF(2), d3 = DIFF(3), d4 = DIFF(4);
#undef DIFF
        const __m256i zero = _mm256_setzero_si256();
        __m256i lo = _mm256_add_epi32(_mm256_madd_epi16(_mm256_unpacklo_epi16(d0, d1), f01),
                                      _mm256_madd_epi16(_mm256_unpacklo_epi16(d2, d3), f23));
        __m256i hi = _mm256_add_epi32(_mm256_madd_epi16(_mm256_unpackhi_epi16(d0, d1), f01),
                                      _mm256_madd_epi16(_mm256_unpackhi_epi16(d2, d3), f23));
        lo = _mm256_add_epi32(lo, _mm256_madd_epi16(_mm256_unpacklo_epi16(d4, zero), f4));
        hi = _mm256_add_epi32(hi, _mm256_madd_epi16(_mm256_unpackhi_epi16(d4, zero), f4));
        lo = _mm256_sra_epi32(_mm256_add_epi32(lo, vround), vshift);
        hi = _mm256_sra_epi32(_mm256_add_epi32(hi, vround), vshift);
        /* lo holds columns 0-3 and 8-11, hi 4-7 and 12-15: packs per 128-bit lane puts them in
         * order; every value fits (hi parts in [-256, 255], low parts in [0, 255]). */
        _mm256_storeu_si256((__m256i *)(yh + j), _mm256_packs_epi32(_mm256_srai_epi32(lo, 8), _mm256_srai_epi32(hi, 8)));
        _mm256_storeu_si256((__m256i *)(yl + j),
                            _mm256_packs_epi32(_mm256_and_si256(lo, lo_mask), _mm256_and_si256(hi, lo_mask)));
    }
    pad2(yh, w);
    pad2(yl, w);
    const __m256i hround = _mm256_set1_epi32(1 << 15), lane = _mm256_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14);
    __m256i sum = _mm256_setzero_si256();
    for (int j = 0; j < w; j += 16) {
        __m256i he = _mm256_setzero_si256(), ho = he, le = he, lo = he;
        for (int k = 0; k < TAPS; k += 2) {
            const __m256i f = k == 0 ? f01 : k == 2 ? f23 : f4;
            const int x = j - RADIUS + k;
            he = _mm256_add_epi32(he, _mm256_madd_epi16(_mm256_loadu_si256((const __m256i *)(yh + x)), f));
            ho = _mm256_add_epi32(ho, _mm256_madd_epi16(_mm256_loadu_si256((const __m256i *)(yh + x + 1)), f));
            le = _mm256_add_epi32(le, _mm256_madd_epi16(_mm256_loadu_si256((const __m256i *)(yl + x)), f));
            lo = _mm256_add_epi32(lo, _mm256_madd_epi16(_mm256_loadu_si256((const __m256i *)(yl + x + 1)), f));
        }
        const __m256i ve = _mm256_srai_epi32(_mm256_add_epi32(he, _mm256_srai_epi32(_mm256_add_epi32(le, hround), 8)), 8);
        const __m256i vo = _mm256_srai_epi32(_mm256_add_epi32(ho, _mm256_srai_epi32(_mm256_add_epi32(lo, hround), 8)), 8);
        /* Lane i is column j + 2i (even) or j + 2i + 1 (odd); columns past w do not count. */
        const __m256i me = _mm256_cmpgt_epi32(_mm256_set1_epi32(w - j), lane);
        const __m256i mo = _mm256_cmpgt_epi32(_mm256_set1_epi32(w - j - 1), lane);
        sum = _mm256_add_epi32(sum, _mm256_and_si256(me, _mm256_abs_epi32(ve)));
        sum = _mm256_add_epi32(sum, _mm256_and_si256(mo, _mm256_abs_epi32(vo)));
    }
    /* |v| < 2^17 and at most w / 8 values per lane: below 2^31 for w <= 16384. */
    uint32_t lanes[8];
    _mm256_storeu_si256((__m256i *)lanes, sum);
    uint64_t sad = 0;
    for (int i = 0; i < 8; i++) sad += lanes[i];
    return sad;
}
#endif
