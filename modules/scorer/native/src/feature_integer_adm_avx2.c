/*
 * AVX2 DWT row kernels of the integer ADM (see feature_integer_adm.c for the algorithm and
 * the kernel contract: each kernel does a prefix of the columns and returns where it stopped).
 * Integer only, so results are bit-identical to the scalar code:
 *  - scale 0 works on int16 pairs with _mm256_madd_epi16. Samples are recentred on 0 first
 *    (p - 2^(bpc-1) fits int16 for every bit depth); since the low-pass taps sum to LO_SUM
 *    and the high-pass taps to 0, this equals the reference's "sum - LO_SUM * 2^(bpc-1)",
 *    and every partial sum stays below 54822 * 32768 < 2^31;
 *  - scales 1-3 need 64-bit products: even and odd 32-bit lanes are multiplied separately
 *    with _mm256_mul_epi32. Only the low 32 bits of each shifted sum are kept (as the
 *    reference's int32 store does), and for shifts <= 16 those bits are the same for a
 *    logical and an arithmetic shift.
 * Built with -mavx2 in the library; the target attribute lets the dev harness build it
 * without that flag.
 */
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#include <stdint.h>

#define AVX2_FN __attribute__((target("avx2")))

static const int16_t LO[4] = {15826, 27411, 7345, -4240};
static const int16_t HI[4] = {-4240, -7345, 27411, -15826};

/* Two int16 coefficients in every 32-bit lane, a in the low half (multiplies the first
 * sample of each pair in _mm256_madd_epi16). */
AVX2_FN static inline __m256i pair(int16_t a, int16_t b) {
    return _mm256_set1_epi32((int32_t)((uint32_t)(uint16_t)a | ((uint32_t)(uint16_t)b << 16)));
}

/* Vertical pass of 16 recentred samples per row: lo/hi rows, rounded >> bpc. */
AVX2_FN static inline void vpass16(__m256i s0, __m256i s1, __m256i s2, __m256i s3, __m128i sh,
                                   __m256i round, int16_t *lo, int16_t *hi) {
    const __m256i a_lo = _mm256_unpacklo_epi16(s0, s1), a_hi = _mm256_unpackhi_epi16(s0, s1);
    const __m256i b_lo = _mm256_unpacklo_epi16(s2, s3), b_hi = _mm256_unpackhi_epi16(s2, s3);
    const __m256i l01 = pair(LO[0], LO[1]), l23 = pair(LO[2], LO[3]);
    const __m256i h01 = pair(HI[0], HI[1]), h23 = pair(HI[2], HI[3]);
    __m256i l0 = _mm256_add_epi32(_mm256_madd_epi16(a_lo, l01), _mm256_madd_epi16(b_lo, l23));
    __m256i l1 = _mm256_add_epi32(_mm256_madd_epi16(a_hi, l01), _mm256_madd_epi16(b_hi, l23));
    __m256i h0 = _mm256_add_epi32(_mm256_madd_epi16(a_lo, h01), _mm256_madd_epi16(b_lo, h23));
    __m256i h1 = _mm256_add_epi32(_mm256_madd_epi16(a_hi, h01), _mm256_madd_epi16(b_hi, h23));
    l0 = _mm256_sra_epi32(_mm256_add_epi32(l0, round), sh);
    l1 = _mm256_sra_epi32(_mm256_add_epi32(l1, round), sh);
    h0 = _mm256_sra_epi32(_mm256_add_epi32(h0, round), sh);
    h1 = _mm256_sra_epi32(_mm256_add_epi32(h1, round), sh);
    /* unpack and pack both work within 128-bit lanes, so this restores column order;
     * the values fit int16, so the saturation never acts. */
    _mm256_storeu_si256((__m256i *)lo, _mm256_packs_epi32(l0, l1));
    _mm256_storeu_si256((__m256i *)hi, _mm256_packs_epi32(h0, h1));
}

AVX2_FN int svc_adm_vpass_u8_avx2(const uint8_t *const rows[4], int w, int16_t *lo,
                                  int16_t *hi) {
    const __m256i centre = _mm256_set1_epi16(128), round = _mm256_set1_epi32(128);
    const __m128i sh = _mm_cvtsi32_si128(8);
    int j = 0;
    for (; j + 16 <= w; j += 16) {
        __m256i s[4];
        for (int k = 0; k < 4; k++)
            s[k] = _mm256_sub_epi16(
                _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(rows[k] + j))), centre);
        vpass16(s[0], s[1], s[2], s[3], sh, round, lo + j, hi + j);
    }
    return j;
}

AVX2_FN int svc_adm_vpass_u16_avx2(const uint16_t *const rows[4], int w, int bpc, int16_t *lo,
                                   int16_t *hi) {
    const int half = 1 << (bpc - 1);
    const __m256i centre = _mm256_set1_epi16((int16_t)(uint16_t)half);
    const __m256i round = _mm256_set1_epi32(half);
    const __m128i sh = _mm_cvtsi32_si128(bpc);
    int j = 0;
    for (; j + 16 <= w; j += 16) {
        __m256i s[4];
        for (int k = 0; k < 4; k++) /* wrapping subtract: p - half always fits int16 */
            s[k] = _mm256_sub_epi16(_mm256_loadu_si256((const __m256i *)(rows[k] + j)), centre);
        vpass16(s[0], s[1], s[2], s[3], sh, round, lo + j, hi + j);
    }
    return j;
}

AVX2_FN int svc_adm_hpass_s16_avx2(const int16_t *lo, const int16_t *hi, int j0, int j1,
                                   int32_t *const out[4]) {
    const __m256i l01 = pair(LO[0], LO[1]), l23 = pair(LO[2], LO[3]);
    const __m256i h01 = pair(HI[0], HI[1]), h23 = pair(HI[2], HI[3]);
    const __m256i round = _mm256_set1_epi32(32768);
    int j = j0;
    /* Output j takes taps 2j-1 .. 2j+2: lanes of a load at 2j-1 hold taps (0, 1) of
     * outputs j .. j+7 as int16 pairs, a load at 2j+1 taps (2, 3). */
    for (; j + 8 <= j1; j += 8) {
        const __m256i lo0 = _mm256_loadu_si256((const __m256i *)(lo + 2 * j - 1));
        const __m256i lo2 = _mm256_loadu_si256((const __m256i *)(lo + 2 * j + 1));
        const __m256i hi0 = _mm256_loadu_si256((const __m256i *)(hi + 2 * j - 1));
        const __m256i hi2 = _mm256_loadu_si256((const __m256i *)(hi + 2 * j + 1));
        const __m256i band[4] = {
            _mm256_add_epi32(_mm256_madd_epi16(lo0, l01), _mm256_madd_epi16(lo2, l23)), /* A */
            _mm256_add_epi32(_mm256_madd_epi16(hi0, l01), _mm256_madd_epi16(hi2, l23)), /* H */
            _mm256_add_epi32(_mm256_madd_epi16(lo0, h01), _mm256_madd_epi16(lo2, h23)), /* V */
            _mm256_add_epi32(_mm256_madd_epi16(hi0, h01), _mm256_madd_epi16(hi2, h23)), /* D */
        };
        for (int b = 0; b < 4; b++)
            _mm256_storeu_si256((__m256i *)(out[b] + j),
                                _mm256_srai_epi32(_mm256_add_epi32(band[b], round), 16));
    }
    return j;
}

/* sum_k c[k] * x_k over the even (odd = 0) or odd (odd = 1) 32-bit lanes, in 64 bits. */
AVX2_FN static inline __m256i dot4(const __m256i x[4], const int16_t c[4], int odd) {
    __m256i s = _mm256_setzero_si256();
    for (int k = 0; k < 4; k++) {
        const __m256i v = odd ? _mm256_srli_epi64(x[k], 32) : x[k];
        s = _mm256_add_epi64(s, _mm256_mul_epi32(v, _mm256_set1_epi64x(c[k])));
    }
    return s;
}

/* (even + round) >> shift and (odd + round) >> shift, low 32 bits, back in lane order. */
AVX2_FN static inline __m256i merge(__m256i even, __m256i odd, __m256i round, __m128i sh) {
    even = _mm256_srl_epi64(_mm256_add_epi64(even, round), sh);
    odd = _mm256_srl_epi64(_mm256_add_epi64(odd, round), sh);
    return _mm256_blend_epi32(even, _mm256_slli_epi64(odd, 32), 0xAA);
}

AVX2_FN int svc_adm_vpass_s32_avx2(const int32_t *const rows[4], int w, int64_t round,
                                   int shift, int32_t *lo, int32_t *hi) {
    const __m256i rnd = _mm256_set1_epi64x(round);
    const __m128i sh = _mm_cvtsi32_si128(shift);
    int j = 0;
    for (; j + 8 <= w; j += 8) {
        __m256i x[4];
        for (int k = 0; k < 4; k++) x[k] = _mm256_loadu_si256((const __m256i *)(rows[k] + j));
        _mm256_storeu_si256((__m256i *)(lo + j), merge(dot4(x, LO, 0), dot4(x, LO, 1), rnd, sh));
        _mm256_storeu_si256((__m256i *)(hi + j), merge(dot4(x, HI, 0), dot4(x, HI, 1), rnd, sh));
    }
    return j;
}

AVX2_FN int svc_adm_hpass_s32_avx2(const int32_t *lo, const int32_t *hi, int j0, int j1,
                                   int64_t round, int shift, int32_t *const out[4]) {
    const __m256i rnd = _mm256_set1_epi64x(round);
    const __m128i sh = _mm_cvtsi32_si128(shift);
    const __m256i pick = _mm256_setr_epi32(0, 2, 4, 6, 0, 0, 0, 0);
    int j = j0;
    /* For outputs j .. j+3, the even/odd lanes of a load at 2j-1 are taps 0/1 and those of
     * a load at 2j+1 taps 2/3. */
    for (; j + 4 <= j1; j += 4) {
        const __m256i l0 = _mm256_loadu_si256((const __m256i *)(lo + 2 * j - 1));
        const __m256i l2 = _mm256_loadu_si256((const __m256i *)(lo + 2 * j + 1));
        const __m256i h0 = _mm256_loadu_si256((const __m256i *)(hi + 2 * j - 1));
        const __m256i h2 = _mm256_loadu_si256((const __m256i *)(hi + 2 * j + 1));
        const __m256i xl[4] = {l0, _mm256_srli_epi64(l0, 32), l2, _mm256_srli_epi64(l2, 32)};
        const __m256i xh[4] = {h0, _mm256_srli_epi64(h0, 32), h2, _mm256_srli_epi64(h2, 32)};
        const __m256i band[4] = {dot4(xl, LO, 0), dot4(xh, LO, 0), dot4(xl, HI, 0),
                                 dot4(xh, HI, 0)};
        for (int b = 0; b < 4; b++) {
            const __m256i v = _mm256_srl_epi64(_mm256_add_epi64(band[b], rnd), sh);
            _mm_storeu_si128((__m128i *)(out[b] + j),
                             _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(v, pick)));
        }
    }
    return j;
}
#endif
