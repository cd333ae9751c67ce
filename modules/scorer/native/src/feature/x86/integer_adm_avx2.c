/*
 * AVX2 kernels of the integer ADM: DWT rows, decoupling, CSF masker planes, masked and
 * detail cube sums (see integer_adm.c for the algorithm and the kernel contract:
 * each kernel does a prefix of the columns and returns where it stopped). Integer only
 * (the angle test's float steps are replayed exactly), so results are bit-identical to the
 * scalar code:
 *  - the scale-0 DWT works on int16 pairs with _mm256_madd_epi16. Samples are recentred on
 *    0 first (p - 2^(bpc-1) fits int16 for every bit depth); since the low-pass taps sum to
 *    LO_SUM and the high-pass taps to 0, this equals the reference's
 *    "sum - LO_SUM * 2^(bpc-1)", and every partial sum stays below 54822 * 32768 < 2^31;
 *  - the other scale-0 stages see coefficients of at most 22931 in magnitude, so their
 *    products fit 32-bit lanes (only the cube sums need 64);
 *  - scales 1-3 need 64-bit products: even and odd 32-bit lanes are multiplied separately
 *    with _mm256_mul_epi32. Where only the low 32 bits of a shifted sum are kept (as the
 *    reference's int32 stores do), a logical shift of at most 32 gives the same bits as an
 *    arithmetic one.
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

/* 64-bit products: the passes below for shifts past 16 (none in use). */
AVX2_FN static int vpass_s32_64(const int32_t *const rows[4], int w, int64_t round,
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

AVX2_FN static int hpass_s32_64(const int32_t *lo, const int32_t *hi, int j0, int j1,
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
/* Scales 1-3 on exact 16-bit halves (the range proof is in x86/integer_adm_avx512.c's
 * twins: every input is below 2^31 - 2^15, so x = 65536 * xh + xl with xl = (int16)x and
 * xh = (x + 2^15) >> 16, each 4-tap half sum is exact in vpmaddwd's 32 bits, and
 * (65536 * S_h + S_l + round) >> shift = (S_h << (16 - shift)) + ((S_l + round) >> shift)). */
AVX2_FN static inline __m256i split_combine(__m256i sh_sum, __m256i sl_sum, __m256i round, int shift) {
    return _mm256_add_epi32(_mm256_sll_epi32(sh_sum, _mm_cvtsi32_si128(16 - shift)),
                            _mm256_sra_epi32(_mm256_add_epi32(sl_sum, round), _mm_cvtsi32_si128(shift)));
}

AVX2_FN int svc_adm_vpass_s32_avx2(const int32_t *const rows[4], int w, int64_t round,
                                   int shift, int32_t *lo, int32_t *hi) {
    if (shift > 16) return vpass_s32_64(rows, w, round, shift, lo, hi);
    const __m256i rnd = _mm256_set1_epi32((int32_t)round), half = _mm256_set1_epi32(32768);
    const __m256i l01 = pair(LO[0], LO[1]), l23 = pair(LO[2], LO[3]);
    const __m256i h01 = pair(HI[0], HI[1]), h23 = pair(HI[2], HI[3]);
    int j = 0;
    for (; j + 8 <= w; j += 8) {
        __m256i x[4], xp[4];
        for (int k = 0; k < 4; k++) {
            x[k] = _mm256_loadu_si256((const __m256i *)(rows[k] + j));
            xp[k] = _mm256_add_epi32(x[k], half);
        }
        const __m256i pl01 = _mm256_blend_epi16(x[0], _mm256_slli_epi32(x[1], 16), 0xAA);
        const __m256i pl23 = _mm256_blend_epi16(x[2], _mm256_slli_epi32(x[3], 16), 0xAA);
        const __m256i ph01 = _mm256_blend_epi16(_mm256_srli_epi32(xp[0], 16), xp[1], 0xAA);
        const __m256i ph23 = _mm256_blend_epi16(_mm256_srli_epi32(xp[2], 16), xp[3], 0xAA);
        const __m256i lo_h = _mm256_add_epi32(_mm256_madd_epi16(ph01, l01), _mm256_madd_epi16(ph23, l23));
        const __m256i lo_l = _mm256_add_epi32(_mm256_madd_epi16(pl01, l01), _mm256_madd_epi16(pl23, l23));
        const __m256i hi_h = _mm256_add_epi32(_mm256_madd_epi16(ph01, h01), _mm256_madd_epi16(ph23, h23));
        const __m256i hi_l = _mm256_add_epi32(_mm256_madd_epi16(pl01, h01), _mm256_madd_epi16(pl23, h23));
        _mm256_storeu_si256((__m256i *)(lo + j), split_combine(lo_h, lo_l, rnd, shift));
        _mm256_storeu_si256((__m256i *)(hi + j), split_combine(hi_h, hi_l, rnd, shift));
    }
    return j;
}

/* Words 0..15 of 16 consecutive int32 a (0..7), b (8..15) held as values in [0, 65535]:
 * packus keeps them exactly, in 128-bit lane order, which the qword permute restores. */
AVX2_FN static inline __m256i pack_words(__m256i a, __m256i b) {
    return _mm256_permute4x64_epi64(_mm256_packus_epi32(a, b), 0xD8);
}

AVX2_FN int svc_adm_hpass_s32_avx2(const int32_t *lo, const int32_t *hi, int j0, int j1,
                                   int64_t round, int shift, int32_t *const out[4]) {
    if (shift > 16) return hpass_s32_64(lo, hi, j0, j1, round, shift, out);
    const __m256i rnd = _mm256_set1_epi32((int32_t)round), half = _mm256_set1_epi32(32768);
    const __m256i low16 = _mm256_set1_epi32(0xFFFF);
    const __m256i l01 = pair(LO[0], LO[1]), l23 = pair(LO[2], LO[3]);
    const __m256i h01 = pair(HI[0], HI[1]), h23 = pair(HI[2], HI[3]);
    int j = j0;
    for (; j + 8 <= j1; j += 8) {
        /* lane m: taps 2(j+m)-1, 2(j+m) (t = 0) or 2(j+m)+1, 2(j+m)+2 (t = 1) as word pairs */
        __m256i pl[2][2], ph[2][2];
        for (int r = 0; r < 2; r++) {
            const int32_t *x = r ? hi : lo;
            for (int t = 0; t < 2; t++) {
                const __m256i a = _mm256_loadu_si256((const __m256i *)(x + 2 * j - 1 + 2 * t));
                const __m256i b = _mm256_loadu_si256((const __m256i *)(x + 2 * j + 7 + 2 * t));
                pl[r][t] = pack_words(_mm256_and_si256(a, low16), _mm256_and_si256(b, low16));
                ph[r][t] = pack_words(_mm256_srli_epi32(_mm256_add_epi32(a, half), 16),
                                      _mm256_srli_epi32(_mm256_add_epi32(b, half), 16));
            }
        }
        for (int band = 0; band < 4; band++) {
            const int r = band & 1;
            const __m256i c01 = band < 2 ? l01 : h01, c23 = band < 2 ? l23 : h23;
            const __m256i sh_sum = _mm256_add_epi32(_mm256_madd_epi16(ph[r][0], c01), _mm256_madd_epi16(ph[r][1], c23));
            const __m256i sl_sum = _mm256_add_epi32(_mm256_madd_epi16(pl[r][0], c01), _mm256_madd_epi16(pl[r][1], c23));
            _mm256_storeu_si256((__m256i *)(out[band] + j), split_combine(sh_sum, sl_sum, rnd, shift));
        }
    }
    return hpass_s32_64(lo, hi, j, j1, round, shift, out);
}

/* ---- scale-0 decoupling, CSF and masking (values within the 16-bit pipeline's range:
 * |coefficient| <= 22931, so products like o*t, k*o and |x|^2 / 2^29 fit 32 bits) ---- */

/* a0 * b0 + a1 * b1 in 32-bit lanes. */
AVX2_FN static inline __m256i dot2(__m256i a0, __m256i b0, __m256i a1, __m256i b1) {
    return _mm256_add_epi32(_mm256_mullo_epi32(a0, b0), _mm256_mullo_epi32(a1, b1));
}

/* Four 64-bit lane masks (from two double compares) narrowed to eight 32-bit lane masks. */
AVX2_FN static inline __m256i narrow_masks(__m256d lo, __m256d hi) {
    const __m256i pick = _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6);
    const __m128i l =
        _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(_mm256_castpd_si256(lo), pick));
    const __m128i h =
        _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(_mm256_castpd_si256(hi), pick));
    return _mm256_inserti128_si256(_mm256_castsi128_si256(l), h, 1);
}

/* dot >= 0 && dot^2 >= cos1_sq * |o|^2 * |t|^2 with each product rounded to float and then
 * scaled by 2^-12 in double, as the scalar code. */
AVX2_FN static inline __m256d angle_half(__m128 dot, __m128 om, __m128 tm, __m256d cs) {
    const __m256d inv = _mm256_set1_pd(1.0 / 4096.0);
    const __m256d d = _mm256_mul_pd(_mm256_cvtps_pd(dot), inv);
    const __m256d o = _mm256_mul_pd(_mm256_cvtps_pd(om), inv);
    const __m256d t = _mm256_mul_pd(_mm256_cvtps_pd(tm), inv);
    const __m256d lhs = _mm256_mul_pd(d, d), rhs = _mm256_mul_pd(_mm256_mul_pd(cs, o), t);
    return _mm256_and_pd(_mm256_cmp_pd(d, _mm256_setzero_pd(), _CMP_GE_OQ),
                         _mm256_cmp_pd(lhs, rhs, _CMP_GE_OQ));
}

AVX2_FN int svc_adm_decouple_s16_avx2(const int32_t *const o[3], const int32_t *const t[3], int n,
                                      const int32_t *recip, float cos1_sq, int gain_limit,
                                      int32_t *const r[3], int32_t *const a[3]) {
    const __m256d cs = _mm256_set1_pd((double)cos1_sq);
    const __m256i zero = _mm256_setzero_si256(), one = _mm256_set1_epi32(32768);
    const __m256i r14 = _mm256_set1_epi64x(1 << 14), r15 = _mm256_set1_epi32(16384);
    const __m256i gain = _mm256_set1_epi32(gain_limit);
    int j = 0;
    for (; j + 8 <= n; j += 8) {
        __m256i ov[3], tv[3];
        for (int b = 0; b < 3; b++) {
            ov[b] = _mm256_loadu_si256((const __m256i *)(o[b] + j));
            tv[b] = _mm256_loadu_si256((const __m256i *)(t[b] + j));
        }
        const __m256 fd = _mm256_cvtepi32_ps(dot2(ov[0], tv[0], ov[1], tv[1]));
        const __m256 fo = _mm256_cvtepi32_ps(dot2(ov[0], ov[0], ov[1], ov[1]));
        const __m256 ft = _mm256_cvtepi32_ps(dot2(tv[0], tv[0], tv[1], tv[1]));
        const __m256d lo = angle_half(_mm256_castps256_ps128(fd), _mm256_castps256_ps128(fo),
                                      _mm256_castps256_ps128(ft), cs);
        const __m256d hi = angle_half(_mm256_extractf128_ps(fd, 1), _mm256_extractf128_ps(fo, 1),
                                      _mm256_extractf128_ps(ft, 1), cs);
        const __m256i angle = narrow_masks(lo, hi);
        for (int b = 0; b < 3; b++) {
            /* k = clamp(t / o, 0, 1) in Q15 via the Q30 reciprocal of |o| and t's sign flipped
             * with o's; the shifted products fit 32 bits, so the low halves suffice. */
            const __m256i rec = _mm256_i32gather_epi32(recip, _mm256_abs_epi32(ov[b]), 4);
            const __m256i ts = _mm256_sign_epi32(tv[b], ov[b]);
            const __m256i pe = _mm256_mul_epi32(rec, ts);
            const __m256i po =
                _mm256_mul_epi32(_mm256_srli_epi64(rec, 32), _mm256_srli_epi64(ts, 32));
            const __m256i qe = _mm256_srli_epi64(_mm256_add_epi64(pe, r14), 15);
            const __m256i qo = _mm256_srli_epi64(_mm256_add_epi64(po, r14), 15);
            __m256i k = _mm256_blend_epi32(qe, _mm256_slli_epi64(qo, 32), 0xAA);
            k = _mm256_min_epi32(_mm256_max_epi32(k, zero), one);
            k = _mm256_blendv_epi8(k, one, _mm256_cmpeq_epi32(ov[b], zero));
            __m256i rst = _mm256_mullo_epi32(k, ov[b]);
            rst = _mm256_srai_epi32(_mm256_add_epi32(rst, r15), 15);
            const __m256i boost = _mm256_and_si256(angle, _mm256_cmpgt_epi32(k, zero));
            const __m256i g = _mm256_mullo_epi32(rst, gain);
            rst = _mm256_blendv_epi8(rst, _mm256_min_epi32(g, tv[b]),
                                     _mm256_and_si256(boost, _mm256_cmpgt_epi32(ov[b], zero)));
            rst = _mm256_blendv_epi8(rst, _mm256_max_epi32(g, tv[b]),
                                     _mm256_and_si256(boost, _mm256_cmpgt_epi32(zero, ov[b])));
            _mm256_storeu_si256((__m256i *)(r[b] + j), rst);
            _mm256_storeu_si256((__m256i *)(a[b] + j), _mm256_sub_epi32(tv[b], rst));
        }
    }
    return j;
}

AVX2_FN int svc_adm_csf_s16_avx2(const int32_t *const src[3], int n, int wrap16, int32_t *msum,
                                 int32_t *mctr, const int32_t rf[3]) {
    const int32_t add[3] = {16384, 16384, 65535};
    const int sh[3] = {15, 15, 17};
    const __m256i r12 = _mm256_set1_epi32(2048);
    const __m256i by30 = _mm256_set1_epi32(4369), by15 = _mm256_set1_epi32(8738);
    int j = 0;
    for (; j + 8 <= n; j += 8) {
        __m256i ms = _mm256_setzero_si256(), mc = _mm256_setzero_si256();
        for (int b = 0; b < 3; b++) {
            const __m256i x = _mm256_loadu_si256((const __m256i *)(src[b] + j));
            const __m256i xr = _mm256_mullo_epi32(x, _mm256_set1_epi32(rf[b]));
            const __m256i d = _mm256_abs_epi32(_mm256_sra_epi32(
                _mm256_add_epi32(xr, _mm256_set1_epi32(add[b])), _mm_cvtsi32_si128(sh[b])));
            const __m256i m =
                _mm256_srai_epi32(_mm256_add_epi32(_mm256_mullo_epi32(d, by30), r12), 12);
            __m256i c = _mm256_srai_epi32(_mm256_add_epi32(_mm256_mullo_epi32(d, by15), r12), 12);
            if (wrap16) c = _mm256_srai_epi32(_mm256_slli_epi32(c, 16), 16);
            ms = _mm256_add_epi32(ms, m);
            mc = _mm256_add_epi32(mc, _mm256_sub_epi32(c, m));
        }
        _mm256_storeu_si256((__m256i *)(msum + j), ms);
        _mm256_storeu_si256((__m256i *)(mctr + j), mc);
    }
    return j;
}

/* Masking threshold of the 8 pixels at j (scale 0 and scales 1-3 alike): the 3x3 sum of
 * msum over rows m0..m2 plus the centre correction ctr, in wrapping 32-bit lanes. */
AVX2_FN static inline __m256i mask_threshold(const int32_t *m0, const int32_t *m1,
                                             const int32_t *m2, const int32_t *ctr, int j) {
    __m256i thr = _mm256_loadu_si256((const __m256i *)(ctr + j));
    const int32_t *const m[3] = {m0, m1, m2};
    for (int r = 0; r < 3; r++)
        for (int d = -1; d <= 1; d++)
            thr = _mm256_add_epi32(thr, _mm256_loadu_si256((const __m256i *)(m[r] + j + d)));
    return thr;
}

/* Sum of the four 64-bit lanes of v, for the kernels' row totals; it wraps, so signed
 * callers get the same two's-complement bits as a signed sum. */
AVX2_FN static inline uint64_t sum_lanes64(__m256i v) {
    uint64_t l[4];
    _mm256_storeu_si256((__m256i *)l, v);
    return l[0] + l[1] + l[2] + l[3];
}

/* Adds (x^2 + 2^(sq-1)) >> sq, times x, + cub_add, >> cub over the even (odd) lanes of x. */
AVX2_FN static inline __m256i cube_lanes(__m256i x, int sq, int cub) {
    const __m256i sq_add = _mm256_set1_epi64x((int64_t)1 << (sq - 1));
    const __m256i cub_add = _mm256_set1_epi64x(cub > 0 ? (int64_t)1 << (cub - 1) : 0);
    const __m256i sqr =
        _mm256_srl_epi64(_mm256_add_epi64(_mm256_mul_epu32(x, x), sq_add), _mm_cvtsi32_si128(sq));
    return _mm256_srl_epi64(_mm256_add_epi64(_mm256_mul_epu32(sqr, x), cub_add),
                            _mm_cvtsi32_si128(cub));
}

AVX2_FN int svc_adm_mask_s16_avx2(const int32_t *m0, const int32_t *m1, const int32_t *m2,
                                  const int32_t *ctr, const int32_t *const src[3], int j0, int j1,
                                  const int cub[3], int64_t in[3], const int32_t rf[3]) {
    const int sub[3] = {10, 10, 12}, sq[3] = {29, 29, 30};
    __m256i acc[3] = {_mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_setzero_si256()};
    int j = j0;
    for (; j + 8 <= j1; j += 8) {
        const __m256i thr = mask_threshold(m0, m1, m2, ctr, j);
        for (int b = 0; b < 3; b++) {
            const __m256i v = _mm256_loadu_si256((const __m256i *)(src[b] + j));
            const __m256i xr = _mm256_abs_epi32(_mm256_mullo_epi32(v, _mm256_set1_epi32(rf[b])));
            __m256i x = _mm256_sub_epi32(xr, _mm256_sll_epi32(thr, _mm_cvtsi32_si128(sub[b])));
            x = _mm256_max_epi32(x, _mm256_setzero_si256());
            acc[b] = _mm256_add_epi64(acc[b], cube_lanes(x, sq[b], cub[b]));
            acc[b] = _mm256_add_epi64(acc[b], cube_lanes(_mm256_srli_epi64(x, 32), sq[b], cub[b]));
        }
    }
    for (int b = 0; b < 3; b++) in[b] += (int64_t)sum_lanes64(acc[b]);
    return j;
}
/* ---- scales 1-3: 32-bit coefficients, 64-bit products in even/odd lanes ---- */

/* Even (odd = 0) or odd (odd = 1) 32-bit lanes of x as zero-extended 64-bit lanes. */
AVX2_FN static inline __m256i lanes64(__m256i x, int odd) {
    return odd ? _mm256_srli_epi64(x, 32) : _mm256_and_si256(x, _mm256_set1_epi64x(0xFFFFFFFF));
}

/* Low 32 bits of the 64-bit lanes of even and odd, back in 32-bit lane order. */
AVX2_FN static inline __m256i join(__m256i even, __m256i odd) {
    return _mm256_blend_epi32(even, _mm256_slli_epi64(odd, 32), 0xAA);
}

/* (int32)((x * c + 2^27) >> 28) per 32-bit lane, c < 2^31: only bits 28..59 of the product
 * matter, which a logical shift gives as well. */
AVX2_FN static inline __m256i csf_q28(__m256i x, uint32_t c) {
    const __m256i cv = _mm256_set1_epi64x(c), r = _mm256_set1_epi64x(1 << 27);
    __m256i v[2];
    for (int odd = 0; odd < 2; odd++) {
        const __m256i p = _mm256_mul_epi32(odd ? _mm256_srli_epi64(x, 32) : x, cv);
        v[odd] = _mm256_srli_epi64(_mm256_add_epi64(p, r), 28);
    }
    return join(v[0], v[1]);
}

/* (int32)((c * |d| - 2^31) >> 32): the high half of the 64-bit difference. */
AVX2_FN static inline __m256i q32_floor(__m256i ad, uint32_t c) {
    const __m256i cv = _mm256_set1_epi64x(c), r = _mm256_set1_epi64x(2147483648LL);
    const __m256i e = _mm256_sub_epi64(_mm256_mul_epu32(ad, cv), r);
    const __m256i o = _mm256_sub_epi64(_mm256_mul_epu32(_mm256_srli_epi64(ad, 32), cv), r);
    return _mm256_blend_epi32(_mm256_srli_epi64(e, 32), o, 0xAA);
}

AVX2_FN int svc_adm_csf_s32_avx2(const int32_t *const src[3], int n, const uint32_t irf[3],
                                 int32_t *msum, int32_t *mctr) {
    int j = 0;
    for (; j + 8 <= n; j += 8) {
        __m256i ms = _mm256_setzero_si256(), mc = _mm256_setzero_si256();
        for (int b = 0; b < 3; b++) {
            const __m256i d = csf_q28(_mm256_loadu_si256((const __m256i *)(src[b] + j)), irf[b]);
            const __m256i ad = _mm256_abs_epi32(d);
            const __m256i m = q32_floor(ad, 143165577u), c = q32_floor(ad, 286331153u);
            ms = _mm256_add_epi32(ms, m);
            mc = _mm256_add_epi32(mc, _mm256_sub_epi32(c, m));
        }
        _mm256_storeu_si256((__m256i *)(msum + j), ms);
        _mm256_storeu_si256((__m256i *)(mctr + j), mc);
    }
    return j;
}

AVX2_FN int svc_adm_mask_s32_avx2(const int32_t *m0, const int32_t *m1, const int32_t *m2,
                                  const int32_t *ctr, const int32_t *const src[3], int j0, int j1,
                                  const uint32_t irf[3], int cub, int64_t in[3]) {
    const __m256i sq_add = _mm256_set1_epi64x(1 << 29);
    const __m256i cub_add = _mm256_set1_epi64x((int64_t)1 << (cub - 1));
    const __m128i sh_sq = _mm_cvtsi32_si128(30), sh_cub = _mm_cvtsi32_si128(cub);
    const __m128i sh_sign = _mm_cvtsi32_si128(64 - cub);
    __m256i acc[3] = {_mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_setzero_si256()};
    int j = j0;
    for (; j + 8 <= j1; j += 8) {
        const __m256i thr = mask_threshold(m0, m1, m2, ctr, j);
        for (int b = 0; b < 3; b++) {
            __m256i x = csf_q28(_mm256_loadu_si256((const __m256i *)(src[b] + j)), irf[b]);
            x = _mm256_sub_epi32(_mm256_abs_epi32(x), thr);
            x = _mm256_max_epi32(x, _mm256_setzero_si256());
            for (int odd = 0; odd < 2; odd++) {
                const __m256i xl = lanes64(x, odd);
                /* xsq keeps only its low 32 bits, as a signed int32 (mul_epi32 reads them so);
                 * the cube sum then needs an arithmetic shift. */
                const __m256i xsq =
                    _mm256_srl_epi64(_mm256_add_epi64(_mm256_mul_epu32(xl, xl), sq_add), sh_sq);
                const __m256i v = _mm256_add_epi64(_mm256_mul_epi32(xsq, xl), cub_add);
                const __m256i sign = _mm256_cmpgt_epi64(_mm256_setzero_si256(), v);
                acc[b] = _mm256_add_epi64(acc[b], _mm256_or_si256(_mm256_srl_epi64(v, sh_cub),
                                                                  _mm256_sll_epi64(sign, sh_sign)));
            }
        }
    }
    for (int b = 0; b < 3; b++) in[b] += (int64_t)sum_lanes64(acc[b]);
    return j;
}

/* floor(log2(x)) of the 8 positive int32 lanes of x (-1023 for 0), exact through double. */
AVX2_FN static inline __m256i ilog2(__m256i x) {
    const __m256i pick = _mm256_setr_epi32(1, 3, 5, 7, 1, 3, 5, 7);
    const __m256i lo = _mm256_castpd_si256(_mm256_cvtepi32_pd(_mm256_castsi256_si128(x)));
    const __m256i hi = _mm256_castpd_si256(_mm256_cvtepi32_pd(_mm256_extracti128_si256(x, 1)));
    const __m128i l = _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(lo, pick));
    const __m128i h = _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(hi, pick));
    const __m256i e = _mm256_inserti128_si256(_mm256_castsi128_si256(l), h, 1);
    return _mm256_sub_epi32(_mm256_srli_epi32(e, 20), _mm256_set1_epi32(1023));
}

AVX2_FN int svc_adm_decouple_s32_avx2(const int32_t *const o[3], const int32_t *const t[3],
                                      const int32_t *angle, int n, const int32_t *recip,
                                      int gain_limit, int32_t *const r[3], int32_t *const a[3]) {
    const __m256i zero = _mm256_setzero_si256(), one = _mm256_set1_epi32(32768);
    const __m256i one64 = _mm256_set1_epi64x(32768), unit64 = _mm256_set1_epi64x(1);
    const __m256i r15 = _mm256_set1_epi64x(16384);
    const __m256i s14 = _mm256_set1_epi64x(14), s15 = _mm256_set1_epi64x(15);
    const __m256i big = _mm256_set1_epi32(INT32_MAX / gain_limit), gain = _mm256_set1_epi32(gain_limit);
    int j = 0;
    for (; j + 8 <= n; j += 8) {
        const __m256i ang = _mm256_loadu_si256((const __m256i *)(angle + j));
        for (int b = 0; b < 3; b++) {
            const __m256i ov = _mm256_loadu_si256((const __m256i *)(o[b] + j));
            const __m256i tv = _mm256_loadu_si256((const __m256i *)(t[b] + j));
            /* |o| reduced to 15 significant bits with rounding: shift = log2|o| - 14. */
            const __m256i m = _mm256_abs_epi32(ov);
            const __m256i sh =
                _mm256_max_epi32(_mm256_sub_epi32(ilog2(m), _mm256_set1_epi32(14)), zero);
            const __m256i half = _mm256_srli_epi32(_mm256_sllv_epi32(_mm256_set1_epi32(1), sh), 1);
            const __m256i idx = _mm256_srlv_epi32(_mm256_add_epi32(m, half), sh);
            const __m256i rec = _mm256_i32gather_epi32(recip, idx, 4);
            const __m256i neg = _mm256_srai_epi32(ov, 31);
            /* o's sign spread over the 64-bit lanes of its even / odd 32-bit lanes */
            const __m256i neg64[2] = {_mm256_shuffle_epi32(neg, 0xA0),
                                      _mm256_shuffle_epi32(neg, 0xF5)};
            __m256i k[2], rs[2];
            for (int odd = 0; odd < 2; odd++) {
                const __m256i shl = lanes64(sh, odd);
                const __m256i ng = neg64[odd];
                __m256i q = _mm256_mul_epi32(odd ? _mm256_srli_epi64(rec, 32) : rec,
                                             odd ? _mm256_srli_epi64(tv, 32) : tv);
                q = _mm256_sub_epi64(_mm256_xor_si256(q, ng), ng);
                const __m256i round = _mm256_sllv_epi64(unit64, _mm256_add_epi64(shl, s14));
                q = _mm256_add_epi64(q, round);
                /* Negative sums clamp to 0, so a logical shift is enough for the rest. */
                __m256i kk = _mm256_srlv_epi64(q, _mm256_add_epi64(shl, s15));
                kk = _mm256_blendv_epi8(kk, one64, _mm256_cmpgt_epi64(kk, one64));
                k[odd] = _mm256_andnot_si256(_mm256_cmpgt_epi64(zero, q), kk);
                const __m256i prod = _mm256_mul_epi32(k[odd], odd ? _mm256_srli_epi64(ov, 32) : ov);
                rs[odd] = _mm256_srli_epi64(_mm256_add_epi64(prod, r15), 15);
            }
            __m256i kv = join(k[0], k[1]);
            kv = _mm256_blendv_epi8(kv, one, _mm256_cmpeq_epi32(ov, zero));
            __m256i rst = join(rs[0], rs[1]);
            const __m256i boost = _mm256_and_si256(ang, _mm256_cmpgt_epi32(kv, zero));
            /* rst * gain saturated to int32: beyond that range the min/max picks t anyway. */
            __m256i g = _mm256_mullo_epi32(rst, gain);
            g = _mm256_blendv_epi8(g, _mm256_set1_epi32(INT32_MAX), _mm256_cmpgt_epi32(rst, big));
            g = _mm256_blendv_epi8(g, _mm256_set1_epi32(INT32_MIN),
                                   _mm256_cmpgt_epi32(_mm256_sub_epi32(zero, big), rst));
            const __m256i up = _mm256_and_si256(boost, _mm256_cmpgt_epi32(ov, zero));
            rst = _mm256_blendv_epi8(rst, _mm256_min_epi32(g, tv), up);
            rst = _mm256_blendv_epi8(rst, _mm256_max_epi32(g, tv), _mm256_and_si256(boost, neg));
            _mm256_storeu_si256((__m256i *)(r[b] + j), rst);
            _mm256_storeu_si256((__m256i *)(a[b] + j), _mm256_sub_epi32(tv, rst));
        }
    }
    return j;
}

AVX2_FN int svc_adm_cubes_avx2(const int32_t *const band[3], int n, int sq, uint32_t sq_add,
                               int cub, uint32_t cub_add, uint64_t in[3]) {
    const __m256i sqa = _mm256_set1_epi64x(sq_add), cuba = _mm256_set1_epi64x(cub_add);
    const __m128i shs = _mm_cvtsi32_si128(sq), shc = _mm_cvtsi32_si128(cub);
    __m256i acc[3] = {_mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_setzero_si256()};
    int j = 0;
    for (; j + 8 <= n; j += 8)
        for (int b = 0; b < 3; b++) {
            const __m256i v = _mm256_abs_epi32(_mm256_loadu_si256((const __m256i *)(band[b] + j)));
            for (int odd = 0; odd < 2; odd++) {
                const __m256i vl = lanes64(v, odd);
                const __m256i s2 =
                    _mm256_srl_epi64(_mm256_add_epi64(_mm256_mul_epu32(vl, vl), sqa), shs);
                const __m256i c3 =
                    _mm256_srl_epi64(_mm256_add_epi64(_mm256_mul_epu32(s2, vl), cuba), shc);
                acc[b] = _mm256_add_epi64(acc[b], c3);
            }
        }
    for (int b = 0; b < 3; b++) in[b] += sum_lanes64(acc[b]);
    return j;
}
#endif
