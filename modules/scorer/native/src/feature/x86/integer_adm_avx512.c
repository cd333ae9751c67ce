/*
 * AVX-512 (F/BW/VL/DQ) kernels of the integer ADM: the DWT rows, decoupling (scale 0), CSF,
 * masking and cube sums of every scale, twice as wide as their AVX2 twins in
 * x86/integer_adm_avx2.c, whose arithmetic (and its proofs of range) they repeat lane for
 * lane; see that file and integer_adm.c for the contracts. Each kernel runs whole
 * 512-bit vectors, hands what is left to its AVX2 twin (8 columns a step) and returns where
 * that stopped; the scalar code finishes the row. Integer only, bit-identical.
 */
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#include <stdint.h>

#define AVX512_FN __attribute__((target("avx2,avx512f,avx512bw,avx512vl,avx512dq")))

/* The AVX2 twins (x86/integer_adm_avx2.c). */
int svc_adm_vpass_u8_avx2(const uint8_t *const rows[4], int w, int16_t *lo, int16_t *hi);
int svc_adm_vpass_u16_avx2(const uint16_t *const rows[4], int w, int bpc, int16_t *lo, int16_t *hi);
int svc_adm_vpass_s32_avx2(const int32_t *const rows[4], int w, int64_t round, int shift, int32_t *lo,
                           int32_t *hi);
int svc_adm_hpass_s16_avx2(const int16_t *lo, const int16_t *hi, int j0, int j1, int32_t *const out[4]);
int svc_adm_hpass_s32_avx2(const int32_t *lo, const int32_t *hi, int j0, int j1, int64_t round, int shift,
                           int32_t *const out[4]);
int svc_adm_decouple_s16_avx2(const int32_t *const o[3], const int32_t *const t[3], int n, const int32_t *recip,
                              float cos1_sq, int gain_limit, int32_t *const r[3], int32_t *const a[3]);
int svc_adm_csf_s16_avx2(const int32_t *const src[3], int n, int wrap16, int32_t *msum, int32_t *mctr,
                         const int32_t rf[3]);
int svc_adm_mask_s16_avx2(const int32_t *m0, const int32_t *m1, const int32_t *m2, const int32_t *ctr,
                          const int32_t *const src[3], int j0, int j1, const int cub[3], int64_t in[3],
                          const int32_t rf[3]);
int svc_adm_csf_s32_avx2(const int32_t *const src[3], int n, const uint32_t irf[3], int32_t *msum, int32_t *mctr);
int svc_adm_mask_s32_avx2(const int32_t *m0, const int32_t *m1, const int32_t *m2, const int32_t *ctr,
                          const int32_t *const src[3], int j0, int j1, const uint32_t irf[3], int cub, int64_t in[3]);
int svc_adm_cubes_avx2(const int32_t *const band[3], int n, int sq, uint32_t sq_add, int cub, uint32_t cub_add,
                       uint64_t in[3]);

static const int16_t LO[4] = { 15826, 27411, 7345, -4240 };
static const int16_t HI[4] = { -4240, -7345, 27411, -15826 };

AVX512_FN static inline __m512i pair(int16_t a, int16_t b) {
    return _mm512_set1_epi32((int32_t)((uint32_t)(uint16_t)a | ((uint32_t)(uint16_t)b << 16)));
}

/* Vertical pass of 32 recentred samples per row (unpack and pack are lane-local, so the
 * column order comes back). */
AVX512_FN static inline void vpass32(__m512i s0, __m512i s1, __m512i s2, __m512i s3, __m128i sh, __m512i round,
                                     int16_t *lo, int16_t *hi) {
    const __m512i a_lo = _mm512_unpacklo_epi16(s0, s1), a_hi = _mm512_unpackhi_epi16(s0, s1);
    const __m512i b_lo = _mm512_unpacklo_epi16(s2, s3), b_hi = _mm512_unpackhi_epi16(s2, s3);
    const __m512i l01 = pair(LO[0], LO[1]), l23 = pair(LO[2], LO[3]);
    const __m512i h01 = pair(HI[0], HI[1]), h23 = pair(HI[2], HI[3]);
    __m512i l0 = _mm512_add_epi32(_mm512_madd_epi16(a_lo, l01), _mm512_madd_epi16(b_lo, l23));
    __m512i l1 = _mm512_add_epi32(_mm512_madd_epi16(a_hi, l01), _mm512_madd_epi16(b_hi, l23));
    __m512i h0 = _mm512_add_epi32(_mm512_madd_epi16(a_lo, h01), _mm512_madd_epi16(b_lo, h23));
    __m512i h1 = _mm512_add_epi32(_mm512_madd_epi16(a_hi, h01), _mm512_madd_epi16(b_hi, h23));
    l0 = _mm512_sra_epi32(_mm512_add_epi32(l0, round), sh);
    l1 = _mm512_sra_epi32(_mm512_add_epi32(l1, round), sh);
    h0 = _mm512_sra_epi32(_mm512_add_epi32(h0, round), sh);
    h1 = _mm512_sra_epi32(_mm512_add_epi32(h1, round), sh);
    _mm512_storeu_si512(lo, _mm512_packs_epi32(l0, l1));
    _mm512_storeu_si512(hi, _mm512_packs_epi32(h0, h1));
}

AVX512_FN int svc_adm_vpass_u8_avx512(const uint8_t *const rows[4], int w, int16_t *lo, int16_t *hi) {
    const __m512i centre = _mm512_set1_epi16(128), round = _mm512_set1_epi32(128);
    const __m128i sh = _mm_cvtsi32_si128(8);
    int j = 0;
    for (; j + 32 <= w; j += 32) {
        __m512i s[4];
        for (int k = 0; k < 4; k++)
            s[k] = _mm512_sub_epi16(_mm512_cvtepu8_epi16(_mm256_loadu_si256((const __m256i *)(rows[k] + j))), centre);
        vpass32(s[0], s[1], s[2], s[3], sh, round, lo + j, hi + j);
    }
    const uint8_t *const rest[4] = { rows[0] + j, rows[1] + j, rows[2] + j, rows[3] + j };
    return j + svc_adm_vpass_u8_avx2(rest, w - j, lo + j, hi + j);
}

AVX512_FN int svc_adm_vpass_u16_avx512(const uint16_t *const rows[4], int w, int bpc, int16_t *lo, int16_t *hi) {
    const int half = 1 << (bpc - 1);
    const __m512i centre = _mm512_set1_epi16((int16_t)(uint16_t)half), round = _mm512_set1_epi32(half);
    const __m128i sh = _mm_cvtsi32_si128(bpc);
    int j = 0;
    for (; j + 32 <= w; j += 32) {
        __m512i s[4];
        for (int k = 0; k < 4; k++) s[k] = _mm512_sub_epi16(_mm512_loadu_si512(rows[k] + j), centre);
        vpass32(s[0], s[1], s[2], s[3], sh, round, lo + j, hi + j);
    }
    const uint16_t *const rest[4] = { rows[0] + j, rows[1] + j, rows[2] + j, rows[3] + j };
    return j + svc_adm_vpass_u16_avx2(rest, w - j, bpc, lo + j, hi + j);
}

AVX512_FN int svc_adm_hpass_s16_avx512(const int16_t *lo, const int16_t *hi, int j0, int j1, int32_t *const out[4]) {
    const __m512i l01 = pair(LO[0], LO[1]), l23 = pair(LO[2], LO[3]);
    const __m512i h01 = pair(HI[0], HI[1]), h23 = pair(HI[2], HI[3]);
    const __m512i round = _mm512_set1_epi32(32768);
    int j = j0;
    for (; j + 16 <= j1; j += 16) {
        const __m512i lo0 = _mm512_loadu_si512(lo + 2 * j - 1), lo2 = _mm512_loadu_si512(lo + 2 * j + 1);
        const __m512i hi0 = _mm512_loadu_si512(hi + 2 * j - 1), hi2 = _mm512_loadu_si512(hi + 2 * j + 1);
        const __m512i band[4] = {
            _mm512_add_epi32(_mm512_madd_epi16(lo0, l01), _mm512_madd_epi16(lo2, l23)),
            _mm512_add_epi32(_mm512_madd_epi16(hi0, l01), _mm512_madd_epi16(hi2, l23)),
            _mm512_add_epi32(_mm512_madd_epi16(lo0, h01), _mm512_madd_epi16(lo2, h23)),
            _mm512_add_epi32(_mm512_madd_epi16(hi0, h01), _mm512_madd_epi16(hi2, h23)),
        };
        for (int b = 0; b < 4; b++)
            _mm512_storeu_si512(out[b] + j, _mm512_srai_epi32(_mm512_add_epi32(band[b], round), 16));
    }
    return svc_adm_hpass_s16_avx2(lo, hi, j, j1, out);
}

/* sum_k c[k] * x_k over the even (odd = 0) or odd 32-bit lanes, in 64 bits. */
AVX512_FN static inline __m512i dot4(const __m512i x[4], const int16_t c[4], int odd) {
    __m512i s = _mm512_setzero_si512();
    for (int k = 0; k < 4; k++) {
        const __m512i v = odd ? _mm512_srli_epi64(x[k], 32) : x[k];
        s = _mm512_add_epi64(s, _mm512_mul_epi32(v, _mm512_set1_epi64(c[k])));
    }
    return s;
}

AVX512_FN static inline __m512i merge(__m512i even, __m512i odd, __m512i round, __m128i sh) {
    even = _mm512_srl_epi64(_mm512_add_epi64(even, round), sh);
    odd = _mm512_srl_epi64(_mm512_add_epi64(odd, round), sh);
    return _mm512_mask_blend_epi32(0xAAAA, even, _mm512_slli_epi64(odd, 32));
}

/* Scales 1-3 on 16-bit halves. Every input of these passes is below 2^31 - 2^15 in magnitude
 * (the bound follows from the taps: |LO| and |HI| sum to 54822; scale 0's A band is within
 * 22931, scale 1's vertical pass within 1.26e9 and its A band within 2.11e9, and scales 2-3
 * shrink), so x = 65536 * xh + xl with xl = (int16)x and xh = (x + 2^15) >> 16 both fit int16,
 * and a 4-tap sum splits into S_h = sum c * xh and S_l = sum c * xl, each within
 * 54822 * 2^15 < 2^31: exact in vpmaddwd's 32-bit sums. Then, exactly,
 * (65536 * S_h + S_l + round) >> shift = (S_h << (16 - shift)) + ((S_l + round) >> shift)
 * for shift <= 16, and the scalar code keeps the low 32 bits of that, as the 32-bit lanes do. */
AVX512_FN static inline __m512i split_combine(__m512i sh_sum, __m512i sl_sum, __m512i round, int shift) {
    return _mm512_add_epi32(_mm512_sll_epi32(sh_sum, _mm_cvtsi32_si128(16 - shift)),
                            _mm512_sra_epi32(_mm512_add_epi32(sl_sum, round), _mm_cvtsi32_si128(shift)));
}

/* Lane j of two rows a, b: the low halves (xl) or the high halves (xh) of a[j], b[j] as a
 * word pair. */
AVX512_FN static inline __m512i pair_lo(__m512i a, __m512i b) {
    return _mm512_mask_blend_epi16(0xAAAAAAAA, a, _mm512_slli_epi32(b, 16));
}
AVX512_FN static inline __m512i pair_hi(__m512i a, __m512i b) {
    const __m512i h = _mm512_set1_epi32(32768);
    return _mm512_mask_blend_epi16(0xAAAAAAAA, _mm512_srli_epi32(_mm512_add_epi32(a, h), 16), _mm512_add_epi32(b, h));
}

AVX512_FN int svc_adm_vpass_s32_avx512(const int32_t *const rows[4], int w, int64_t round, int shift, int32_t *lo,
                                       int32_t *hi) {
    if (shift > 16) {
        const int32_t *const rest[4] = { rows[0], rows[1], rows[2], rows[3] };
        return svc_adm_vpass_s32_avx2(rest, w, round, shift, lo, hi);
    }
    const __m512i rnd = _mm512_set1_epi32((int32_t)round);
    const __m512i l01 = pair(LO[0], LO[1]), l23 = pair(LO[2], LO[3]);
    const __m512i h01 = pair(HI[0], HI[1]), h23 = pair(HI[2], HI[3]);
    int j = 0;
    for (; j + 16 <= w; j += 16) {
        const __m512i x0 = _mm512_loadu_si512(rows[0] + j), x1 = _mm512_loadu_si512(rows[1] + j);
        const __m512i x2 = _mm512_loadu_si512(rows[2] + j), x3 = _mm512_loadu_si512(rows[3] + j);
        const __m512i pl01 = pair_lo(x0, x1), pl23 = pair_lo(x2, x3);
        const __m512i ph01 = pair_hi(x0, x1), ph23 = pair_hi(x2, x3);
        const __m512i lo_h = _mm512_add_epi32(_mm512_madd_epi16(ph01, l01), _mm512_madd_epi16(ph23, l23));
        const __m512i lo_l = _mm512_add_epi32(_mm512_madd_epi16(pl01, l01), _mm512_madd_epi16(pl23, l23));
        const __m512i hi_h = _mm512_add_epi32(_mm512_madd_epi16(ph01, h01), _mm512_madd_epi16(ph23, h23));
        const __m512i hi_l = _mm512_add_epi32(_mm512_madd_epi16(pl01, h01), _mm512_madd_epi16(pl23, h23));
        _mm512_storeu_si512(lo + j, split_combine(lo_h, lo_l, rnd, shift));
        _mm512_storeu_si512(hi + j, split_combine(hi_h, hi_l, rnd, shift));
    }
    const int32_t *const rest[4] = { rows[0] + j, rows[1] + j, rows[2] + j, rows[3] + j };
    return j + svc_adm_vpass_s32_avx2(rest, w - j, round, shift, lo + j, hi + j);
}

/* Word index vectors picking the low (even words) / high (odd words) halves of 32 consecutive
 * int32 held in two vectors. */
AVX512_FN static inline __m512i word_pick(int odd) {
    uint16_t idx[32];
    for (int c = 0; c < 32; c++) idx[c] = (uint16_t)(2 * c + odd);
    return _mm512_loadu_si512(idx);
}

AVX512_FN int svc_adm_hpass_s32_avx512(const int32_t *lo, const int32_t *hi, int j0, int j1, int64_t round,
                                       int shift, int32_t *const out[4]) {
    if (shift > 16) return svc_adm_hpass_s32_avx2(lo, hi, j0, j1, round, shift, out);
    const __m512i rnd = _mm512_set1_epi32((int32_t)round);
    const __m512i l01 = pair(LO[0], LO[1]), l23 = pair(LO[2], LO[3]);
    const __m512i h01 = pair(HI[0], HI[1]), h23 = pair(HI[2], HI[3]);
    const __m512i ev = word_pick(0), od = word_pick(1), half = _mm512_set1_epi32(32768);
    int j = j0;
    for (; j + 16 <= j1; j += 16) {
        /* lane m of p0 (p2): the taps 2(j+m)-1, 2(j+m) (2(j+m)+1, 2(j+m)+2) as word pairs */
        __m512i pl[2][2], ph[2][2]; /* [row lo/hi][taps 01/23] */
        for (int r = 0; r < 2; r++) {
            const int32_t *x = r ? hi : lo;
            for (int t = 0; t < 2; t++) {
                const __m512i a = _mm512_loadu_si512(x + 2 * j - 1 + 2 * t);
                const __m512i b = _mm512_loadu_si512(x + 2 * j + 15 + 2 * t);
                pl[r][t] = _mm512_permutex2var_epi16(a, ev, b);
                ph[r][t] = _mm512_permutex2var_epi16(_mm512_add_epi32(a, half), od, _mm512_add_epi32(b, half));
            }
        }
        /* A: lo row, LO taps; H: hi row, LO taps; V: lo row, HI taps; D: hi row, HI taps */
        for (int band = 0; band < 4; band++) {
            const int r = band & 1;
            const __m512i c01 = band < 2 ? l01 : h01, c23 = band < 2 ? l23 : h23;
            const __m512i sh_sum = _mm512_add_epi32(_mm512_madd_epi16(ph[r][0], c01), _mm512_madd_epi16(ph[r][1], c23));
            const __m512i sl_sum = _mm512_add_epi32(_mm512_madd_epi16(pl[r][0], c01), _mm512_madd_epi16(pl[r][1], c23));
            _mm512_storeu_si512(out[band] + j, split_combine(sh_sum, sl_sum, rnd, shift));
        }
    }
    return svc_adm_hpass_s32_avx2(lo, hi, j, j1, round, shift, out);
}

/* ---- scale 0: decoupling, CSF, masking (see the AVX2 twins for the ranges) ---- */

AVX512_FN static inline __m512i dot2(__m512i a0, __m512i b0, __m512i a1, __m512i b1) {
    return _mm512_add_epi32(_mm512_mullo_epi32(a0, b0), _mm512_mullo_epi32(a1, b1));
}

/* The angle test of 8 lanes: dot >= 0 && dot^2 >= cos1_sq * |o|^2 * |t|^2, each product
 * rounded to float then scaled by 2^-12 in double, as the scalar code. */
AVX512_FN static inline __mmask8 angle_half(__m256 dot, __m256 om, __m256 tm, __m512d cs) {
    const __m512d inv = _mm512_set1_pd(1.0 / 4096.0);
    const __m512d d = _mm512_mul_pd(_mm512_cvtps_pd(dot), inv);
    const __m512d o = _mm512_mul_pd(_mm512_cvtps_pd(om), inv);
    const __m512d t = _mm512_mul_pd(_mm512_cvtps_pd(tm), inv);
    const __m512d lhs = _mm512_mul_pd(d, d), rhs = _mm512_mul_pd(_mm512_mul_pd(cs, o), t);
    return _mm512_cmp_pd_mask(d, _mm512_setzero_pd(), _CMP_GE_OQ) & _mm512_cmp_pd_mask(lhs, rhs, _CMP_GE_OQ);
}

AVX512_FN int svc_adm_decouple_s16_avx512(const int32_t *const o[3], const int32_t *const t[3], int n,
                                          const int32_t *recip, float cos1_sq, int gain_limit,
                                          int32_t *const r[3], int32_t *const a[3]) {
    const __m512d cs = _mm512_set1_pd((double)cos1_sq);
    const __m512i zero = _mm512_setzero_si512(), one = _mm512_set1_epi32(32768);
    const __m512i r14 = _mm512_set1_epi64(1 << 14), r15 = _mm512_set1_epi32(16384);
    const __m512i gain = _mm512_set1_epi32(gain_limit); /* whole, 1..100 (adm_enhn_gain_limit) */
    int j = 0;
    for (; j + 16 <= n; j += 16) {
        __m512i ov[3], tv[3];
        for (int b = 0; b < 3; b++) {
            ov[b] = _mm512_loadu_si512(o[b] + j);
            tv[b] = _mm512_loadu_si512(t[b] + j);
        }
        const __m512 fd = _mm512_cvtepi32_ps(dot2(ov[0], tv[0], ov[1], tv[1]));
        const __m512 fo = _mm512_cvtepi32_ps(dot2(ov[0], ov[0], ov[1], ov[1]));
        const __m512 ft = _mm512_cvtepi32_ps(dot2(tv[0], tv[0], tv[1], tv[1]));
        const __mmask8 lo = angle_half(_mm512_castps512_ps256(fd), _mm512_castps512_ps256(fo),
                                       _mm512_castps512_ps256(ft), cs);
        const __mmask8 hi = angle_half(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(fd), 1)),
                                       _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(fo), 1)),
                                       _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(ft), 1)), cs);
        const __mmask16 angle = (__mmask16)(lo | (hi << 8));
        for (int b = 0; b < 3; b++) {
            const __mmask16 neg = _mm512_cmplt_epi32_mask(ov[b], zero), pos = _mm512_cmpgt_epi32_mask(ov[b], zero);
            const __m512i rec = _mm512_i32gather_epi32(_mm512_abs_epi32(ov[b]), recip, 4);
            /* t with o's sign applied (o = 0 gets k = 1 below whatever this gives) */
            const __m512i ts = _mm512_mask_sub_epi32(tv[b], neg, zero, tv[b]);
            const __m512i pe = _mm512_mul_epi32(rec, ts);
            const __m512i po = _mm512_mul_epi32(_mm512_srli_epi64(rec, 32), _mm512_srli_epi64(ts, 32));
            const __m512i qe = _mm512_srli_epi64(_mm512_add_epi64(pe, r14), 15);
            const __m512i qo = _mm512_srli_epi64(_mm512_add_epi64(po, r14), 15);
            __m512i k = _mm512_mask_blend_epi32(0xAAAA, qe, _mm512_slli_epi64(qo, 32));
            k = _mm512_min_epi32(_mm512_max_epi32(k, zero), one);
            k = _mm512_mask_mov_epi32(k, ~(neg | pos), one);
            __m512i rst = _mm512_srai_epi32(_mm512_add_epi32(_mm512_mullo_epi32(k, ov[b]), r15), 15);
            const __mmask16 boost = angle & _mm512_cmpgt_epi32_mask(k, zero);
            const __m512i g = _mm512_mullo_epi32(rst, gain);
            rst = _mm512_mask_mov_epi32(rst, boost & pos, _mm512_min_epi32(g, tv[b]));
            rst = _mm512_mask_mov_epi32(rst, boost & neg, _mm512_max_epi32(g, tv[b]));
            _mm512_storeu_si512(r[b] + j, rst);
            _mm512_storeu_si512(a[b] + j, _mm512_sub_epi32(tv[b], rst));
        }
    }
    const int32_t *const orest[3] = { o[0] + j, o[1] + j, o[2] + j };
    const int32_t *const trest[3] = { t[0] + j, t[1] + j, t[2] + j };
    int32_t *const rrest[3] = { r[0] + j, r[1] + j, r[2] + j };
    int32_t *const arest[3] = { a[0] + j, a[1] + j, a[2] + j };
    return j + svc_adm_decouple_s16_avx2(orest, trest, n - j, recip, cos1_sq, gain_limit, rrest, arest);
}

AVX512_FN int svc_adm_csf_s16_avx512(const int32_t *const src[3], int n, int wrap16, int32_t *msum, int32_t *mctr,
                                     const int32_t rf[3]) {
    const int32_t add[3] = { 16384, 16384, 65535 };
    const int sh[3] = { 15, 15, 17 };
    const __m512i r12 = _mm512_set1_epi32(2048);
    const __m512i by30 = _mm512_set1_epi32(4369), by15 = _mm512_set1_epi32(8738);
    int j = 0;
    for (; j + 16 <= n; j += 16) {
        __m512i ms = _mm512_setzero_si512(), mc = _mm512_setzero_si512();
        for (int b = 0; b < 3; b++) {
            const __m512i x = _mm512_loadu_si512(src[b] + j);
            const __m512i xr = _mm512_mullo_epi32(x, _mm512_set1_epi32(rf[b]));
            const __m512i d = _mm512_abs_epi32(
                _mm512_sra_epi32(_mm512_add_epi32(xr, _mm512_set1_epi32(add[b])), _mm_cvtsi32_si128(sh[b])));
            const __m512i m = _mm512_srai_epi32(_mm512_add_epi32(_mm512_mullo_epi32(d, by30), r12), 12);
            __m512i c = _mm512_srai_epi32(_mm512_add_epi32(_mm512_mullo_epi32(d, by15), r12), 12);
            if (wrap16) c = _mm512_srai_epi32(_mm512_slli_epi32(c, 16), 16);
            ms = _mm512_add_epi32(ms, m);
            mc = _mm512_add_epi32(mc, _mm512_sub_epi32(c, m));
        }
        _mm512_storeu_si512(msum + j, ms);
        _mm512_storeu_si512(mctr + j, mc);
    }
    const int32_t *const rest[3] = { src[0] + j, src[1] + j, src[2] + j };
    return j + svc_adm_csf_s16_avx2(rest, n - j, wrap16, msum + j, mctr + j, rf);
}

AVX512_FN static inline __m512i cube_lanes(__m512i x, int sq, int cub) {
    const __m512i sq_add = _mm512_set1_epi64((int64_t)1 << (sq - 1));
    const __m512i cub_add = _mm512_set1_epi64(cub > 0 ? (int64_t)1 << (cub - 1) : 0);
    const __m512i sqr = _mm512_srl_epi64(_mm512_add_epi64(_mm512_mul_epu32(x, x), sq_add), _mm_cvtsi32_si128(sq));
    return _mm512_srl_epi64(_mm512_add_epi64(_mm512_mul_epu32(sqr, x), cub_add), _mm_cvtsi32_si128(cub));
}

AVX512_FN int svc_adm_mask_s16_avx512(const int32_t *m0, const int32_t *m1, const int32_t *m2, const int32_t *ctr,
                                      const int32_t *const src[3], int j0, int j1, const int cub[3], int64_t in[3],
                                      const int32_t rf[3]) {
    const int sub[3] = { 10, 10, 12 }, sq[3] = { 29, 29, 30 };
    __m512i acc[3] = { _mm512_setzero_si512(), _mm512_setzero_si512(), _mm512_setzero_si512() };
    int j = j0;
    for (; j + 16 <= j1; j += 16) {
        __m512i thr = _mm512_loadu_si512(ctr + j);
        const int32_t *const m[3] = { m0, m1, m2 };
        for (int r = 0; r < 3; r++)
            for (int d = -1; d <= 1; d++) thr = _mm512_add_epi32(thr, _mm512_loadu_si512(m[r] + j + d));
        for (int b = 0; b < 3; b++) {
            const __m512i v = _mm512_loadu_si512(src[b] + j);
            const __m512i xr = _mm512_abs_epi32(_mm512_mullo_epi32(v, _mm512_set1_epi32(rf[b])));
            __m512i x = _mm512_sub_epi32(xr, _mm512_sll_epi32(thr, _mm_cvtsi32_si128(sub[b])));
            x = _mm512_max_epi32(x, _mm512_setzero_si512());
            acc[b] = _mm512_add_epi64(acc[b], cube_lanes(x, sq[b], cub[b]));
            acc[b] = _mm512_add_epi64(acc[b], cube_lanes(_mm512_srli_epi64(x, 32), sq[b], cub[b]));
        }
    }
    /* Wrapping lane sums: the same two's-complement bits as the AVX2 and scalar sums. */
    for (int b = 0; b < 3; b++) in[b] += (int64_t)(uint64_t)_mm512_reduce_add_epi64(acc[b]);
    return svc_adm_mask_s16_avx2(m0, m1, m2, ctr, src, j, j1, cub, in, rf);
}

/* ---- scales 1-3: 32-bit coefficients, 64-bit products in even/odd lanes ---- */

AVX512_FN static inline __m512i lanes64(__m512i x, int odd) {
    return odd ? _mm512_srli_epi64(x, 32) : _mm512_and_si512(x, _mm512_set1_epi64(0xFFFFFFFF));
}

AVX512_FN static inline __m512i join(__m512i even, __m512i odd) {
    return _mm512_mask_blend_epi32(0xAAAA, even, _mm512_slli_epi64(odd, 32));
}

/* (int32)((x * c + 2^27) >> 28) per 32-bit lane (see the AVX2 twin). */
AVX512_FN static inline __m512i csf_q28(__m512i x, uint32_t c) {
    const __m512i cv = _mm512_set1_epi64(c), r = _mm512_set1_epi64(1 << 27);
    const __m512i pe = _mm512_mul_epi32(x, cv), po = _mm512_mul_epi32(_mm512_srli_epi64(x, 32), cv);
    return join(_mm512_srli_epi64(_mm512_add_epi64(pe, r), 28), _mm512_srli_epi64(_mm512_add_epi64(po, r), 28));
}

/* (int32)((c * |d| - 2^31) >> 32). */
AVX512_FN static inline __m512i q32_floor(__m512i ad, uint32_t c) {
    const __m512i cv = _mm512_set1_epi64(c), r = _mm512_set1_epi64(2147483648LL);
    const __m512i e = _mm512_sub_epi64(_mm512_mul_epu32(ad, cv), r);
    const __m512i o = _mm512_sub_epi64(_mm512_mul_epu32(_mm512_srli_epi64(ad, 32), cv), r);
    return _mm512_mask_blend_epi32(0xAAAA, _mm512_srli_epi64(e, 32), o);
}

AVX512_FN int svc_adm_csf_s32_avx512(const int32_t *const src[3], int n, const uint32_t irf[3], int32_t *msum,
                                     int32_t *mctr) {
    int j = 0;
    for (; j + 16 <= n; j += 16) {
        __m512i ms = _mm512_setzero_si512(), mc = _mm512_setzero_si512();
        for (int b = 0; b < 3; b++) {
            const __m512i ad = _mm512_abs_epi32(csf_q28(_mm512_loadu_si512(src[b] + j), irf[b]));
            const __m512i m = q32_floor(ad, 143165577u), c = q32_floor(ad, 286331153u);
            ms = _mm512_add_epi32(ms, m);
            mc = _mm512_add_epi32(mc, _mm512_sub_epi32(c, m));
        }
        _mm512_storeu_si512(msum + j, ms);
        _mm512_storeu_si512(mctr + j, mc);
    }
    const int32_t *const rest[3] = { src[0] + j, src[1] + j, src[2] + j };
    return j + svc_adm_csf_s32_avx2(rest, n - j, irf, msum + j, mctr + j);
}

AVX512_FN int svc_adm_mask_s32_avx512(const int32_t *m0, const int32_t *m1, const int32_t *m2, const int32_t *ctr,
                                      const int32_t *const src[3], int j0, int j1, const uint32_t irf[3], int cub,
                                      int64_t in[3]) {
    const __m512i sq_add = _mm512_set1_epi64(1 << 29);
    const __m512i cub_add = _mm512_set1_epi64((int64_t)1 << (cub - 1));
    const __m128i sh_sq = _mm_cvtsi32_si128(30), sh_cub = _mm_cvtsi32_si128(cub);
    __m512i acc[3] = { _mm512_setzero_si512(), _mm512_setzero_si512(), _mm512_setzero_si512() };
    int j = j0;
    for (; j + 16 <= j1; j += 16) {
        __m512i thr = _mm512_loadu_si512(ctr + j);
        const int32_t *const m[3] = { m0, m1, m2 };
        for (int r = 0; r < 3; r++)
            for (int d = -1; d <= 1; d++) thr = _mm512_add_epi32(thr, _mm512_loadu_si512(m[r] + j + d));
        for (int b = 0; b < 3; b++) {
            __m512i x = csf_q28(_mm512_loadu_si512(src[b] + j), irf[b]);
            x = _mm512_max_epi32(_mm512_sub_epi32(_mm512_abs_epi32(x), thr), _mm512_setzero_si512());
            for (int odd = 0; odd < 2; odd++) {
                const __m512i xl = lanes64(x, odd);
                /* xsq keeps its low 32 bits as a signed int32; the cube sum shifts arithmetically. */
                const __m512i xsq = _mm512_srl_epi64(_mm512_add_epi64(_mm512_mul_epu32(xl, xl), sq_add), sh_sq);
                const __m512i v = _mm512_add_epi64(_mm512_mul_epi32(xsq, xl), cub_add);
                acc[b] = _mm512_add_epi64(acc[b], _mm512_sra_epi64(v, sh_cub));
            }
        }
    }
    for (int b = 0; b < 3; b++) in[b] += (int64_t)(uint64_t)_mm512_reduce_add_epi64(acc[b]);
    return svc_adm_mask_s32_avx2(m0, m1, m2, ctr, src, j, j1, irf, cub, in);
}

/* Scale 1-3 decoupling with its own angle test (the AVX2 path takes the test precomputed by
 * the scalar code): its int64 products and sums are rounded to float by vcvtqq2ps, which
 * rounds to nearest like the scalar (float) cast of an int64, then compared in double as
 * angle_half does. Even (odd = 0) or odd 32-bit lanes of the four vectors, 8 pixels. */
AVX512_FN static inline __mmask8 angle_s32_half(__m512i oh, __m512i ov, __m512i th, __m512i tv, int odd,
                                                __m512d cs) {
    if (odd) {
        oh = _mm512_srli_epi64(oh, 32);
        ov = _mm512_srli_epi64(ov, 32);
        th = _mm512_srli_epi64(th, 32);
        tv = _mm512_srli_epi64(tv, 32);
    }
    const __m512i dot = _mm512_add_epi64(_mm512_mul_epi32(oh, th), _mm512_mul_epi32(ov, tv));
    const __m512i om = _mm512_add_epi64(_mm512_mul_epi32(oh, oh), _mm512_mul_epi32(ov, ov));
    const __m512i tm = _mm512_add_epi64(_mm512_mul_epi32(th, th), _mm512_mul_epi32(tv, tv));
    return angle_half(_mm512_cvtepi64_ps(dot), _mm512_cvtepi64_ps(om), _mm512_cvtepi64_ps(tm), cs);
}

#define AVX512CD_FN __attribute__((target("avx2,avx512f,avx512bw,avx512vl,avx512dq,avx512cd")))

/* The scalar restored() of 16 pixels of one band (see svc_adm_decouple_s32_avx2 for the
 * steps): |o| reduced to 15 significant bits (its log2 from lzcnt), the Q30 reciprocal
 * gathered, k = (recip * t * sign(o) + 2^(14+sh)) >> (15+sh) clamped to [0, 2^15] in 64-bit
 * lanes (arithmetic shift), r = (k * o + 2^14) >> 15, then the gain where the angle test
 * passed. r and t - r are kept as their low 32 bits, as the scalar code narrows them. */
AVX512CD_FN int svc_adm_decouple_s32_angle_avx512(const int32_t *const o[3], const int32_t *const t[3], int n,
                                                   const int32_t *recip, float cos1_sq, int gain_limit,
                                                   int32_t *const r[3], int32_t *const a[3]) {
    const __m512d cs = _mm512_set1_pd((double)cos1_sq);
    const __m512i zero = _mm512_setzero_si512(), one = _mm512_set1_epi32(32768);
    const __m512i one64 = _mm512_set1_epi64(32768), unit64 = _mm512_set1_epi64(1);
    const __m512i r15 = _mm512_set1_epi64(16384);
    const __m512i s14 = _mm512_set1_epi64(14), s15 = _mm512_set1_epi64(15);
    const __m512i big = _mm512_set1_epi32(INT32_MAX / gain_limit), gain = _mm512_set1_epi32(gain_limit);
    const __m512i nbig = _mm512_sub_epi32(zero, big);
    const __m512i low32 = _mm512_set1_epi64(0xFFFFFFFF);
    int j = 0;
    for (; j + 16 <= n; j += 16) {
        __m512i ov[3], tv[3];
        for (int b = 0; b < 3; b++) {
            ov[b] = _mm512_loadu_si512(o[b] + j);
            tv[b] = _mm512_loadu_si512(t[b] + j);
        }
        const __mmask8 ae = angle_s32_half(ov[0], ov[1], tv[0], tv[1], 0, cs);
        const __mmask8 ao = angle_s32_half(ov[0], ov[1], tv[0], tv[1], 1, cs);
        /* even / odd 64-bit lane masks back to 16 pixel bits */
        const __m512i av = _mm512_or_si512(_mm512_maskz_mov_epi64(ae, low32),
                                           _mm512_maskz_mov_epi64(ao, _mm512_slli_epi64(low32, 32)));
        const __mmask16 angle = _mm512_test_epi32_mask(av, av);
        for (int b = 0; b < 3; b++) {
            const __m512i m = _mm512_abs_epi32(ov[b]);
            const __m512i lg = _mm512_sub_epi32(_mm512_set1_epi32(31), _mm512_lzcnt_epi32(m));
            const __m512i sh = _mm512_max_epi32(_mm512_sub_epi32(lg, _mm512_set1_epi32(14)), zero);
            const __m512i half = _mm512_srli_epi32(_mm512_sllv_epi32(_mm512_set1_epi32(1), sh), 1);
            const __m512i idx = _mm512_srlv_epi32(_mm512_add_epi32(m, half), sh);
            const __m512i rec = _mm512_i32gather_epi32(idx, recip, 4);
            const __mmask16 neg = _mm512_cmplt_epi32_mask(ov[b], zero), pos = _mm512_cmpgt_epi32_mask(ov[b], zero);
            __m512i k[2], rs[2];
            for (int odd = 0; odd < 2; odd++) {
                const __m512i shl = odd ? _mm512_srli_epi64(sh, 32) : _mm512_and_si512(sh, low32);
                /* o's sign over the 64-bit lane: q = recip * t, negated in 64 bits where o < 0 */
                const __m512i ng = _mm512_srai_epi64(odd ? ov[b] : _mm512_slli_epi64(ov[b], 32), 63);
                __m512i q = _mm512_mul_epi32(odd ? _mm512_srli_epi64(rec, 32) : rec,
                                             odd ? _mm512_srli_epi64(tv[b], 32) : tv[b]);
                q = _mm512_sub_epi64(_mm512_xor_si512(q, ng), ng);
                q = _mm512_add_epi64(q, _mm512_sllv_epi64(unit64, _mm512_add_epi64(shl, s14)));
                __m512i kk = _mm512_srav_epi64(q, _mm512_add_epi64(shl, s15));
                kk = _mm512_min_epi64(_mm512_max_epi64(kk, _mm512_setzero_si512()), one64);
                k[odd] = kk;
                const __m512i prod = _mm512_mul_epi32(kk, odd ? _mm512_srli_epi64(ov[b], 32) : ov[b]);
                rs[odd] = _mm512_srli_epi64(_mm512_add_epi64(prod, r15), 15);
            }
            __m512i kv = join(k[0], k[1]);
            kv = _mm512_mask_mov_epi32(kv, ~(neg | pos), one);
            __m512i rst = join(rs[0], rs[1]);
            const __mmask16 boost = angle & _mm512_cmpgt_epi32_mask(kv, zero);
            /* rst * gain saturated to int32: beyond that range the min/max picks t anyway. */
            __m512i g = _mm512_mullo_epi32(rst, gain);
            g = _mm512_mask_mov_epi32(g, _mm512_cmpgt_epi32_mask(rst, big), _mm512_set1_epi32(INT32_MAX));
            g = _mm512_mask_mov_epi32(g, _mm512_cmpgt_epi32_mask(nbig, rst), _mm512_set1_epi32(INT32_MIN));
            rst = _mm512_mask_mov_epi32(rst, boost & pos, _mm512_min_epi32(g, tv[b]));
            rst = _mm512_mask_mov_epi32(rst, boost & neg, _mm512_max_epi32(g, tv[b]));
            _mm512_storeu_si512(r[b] + j, rst);
            _mm512_storeu_si512(a[b] + j, _mm512_sub_epi32(tv[b], rst));
        }
    }
    return j;
}

AVX512_FN int svc_adm_cubes_avx512(const int32_t *const band[3], int n, int sq, uint32_t sq_add, int cub,
                                   uint32_t cub_add, uint64_t in[3]) {
    const __m512i sqa = _mm512_set1_epi64(sq_add), cuba = _mm512_set1_epi64(cub_add);
    const __m128i shs = _mm_cvtsi32_si128(sq), shc = _mm_cvtsi32_si128(cub);
    __m512i acc[3] = { _mm512_setzero_si512(), _mm512_setzero_si512(), _mm512_setzero_si512() };
    int j = 0;
    for (; j + 16 <= n; j += 16)
        for (int b = 0; b < 3; b++) {
            const __m512i v = _mm512_abs_epi32(_mm512_loadu_si512(band[b] + j));
            for (int odd = 0; odd < 2; odd++) {
                const __m512i vl = lanes64(v, odd);
                const __m512i s2 = _mm512_srl_epi64(_mm512_add_epi64(_mm512_mul_epu32(vl, vl), sqa), shs);
                acc[b] = _mm512_add_epi64(acc[b], _mm512_srl_epi64(_mm512_add_epi64(_mm512_mul_epu32(s2, vl), cuba), shc));
            }
        }
    for (int b = 0; b < 3; b++) in[b] += (uint64_t)_mm512_reduce_add_epi64(acc[b]);
    const int32_t *const rest[3] = { band[0] + j, band[1] + j, band[2] + j };
    return j + svc_adm_cubes_avx2(rest, n - j, sq, sq_add, cub, cub_add, in);
}
#endif
