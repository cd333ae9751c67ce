/*
 * AVX-512 (F/BW/VL/DQ/CD) row kernels of the integer VIF (algorithm and scalar contracts in
 * integer_vif.c and integer_vif.h). Bit-identical to the scalar path: every
 * integer sum below is exact, and the per-pixel statistic does the scalar code's double
 * operations in the same order (IEEE division, multiplication and truncating conversions
 * round the same in vector lanes; the library is built with -ffp-contract=off).
 *
 * One call does a whole output row, fused: the vertical pass, the mirrored padding, the
 * horizontal pass and the statistic (or the decimation), so the intermediate rows stay in
 * L1/L2 and the sigma rows are never stored.
 *
 * The filters run on 16-bit words with vpmaddwd, two taps per instruction:
 *  - Every filtered quantity is split into 16-bit halves stored "offset": w ^ 0x8000, i.e.
 *    w - 32768 as a signed word. The kernels sum to 65536, so sum f*(w - 32768) = sum f*w -
 *    2^31, an int32 that is exact; adding 2^31 back gives the unsigned sum, which is below
 *    2^32 for every quantity here. A 32-bit quantity q = 65536*hi + lo filtered and rounded
 *    >> 16 is sum f*hi + ((sum f*lo + 32768) >> 16), both sums exact in 32 bits.
 *  - The vertical pass interleaves two source rows (taps k, k+1) word by word; the
 *    horizontal pass reads the row at an odd and an even start, so one vpmaddwd gives taps
 *    k and k+1 of 16 even (or odd) output columns. The statistic only sums over the row,
 *    so even and odd columns need not be put back in order.
 *  - At scale 0 of 8-bit input the squares fit 16 bits (255^2) and their filtered sums fit 32
 *    bits (sq_shift 0): the vertical pass is vpmullw + vpmaddwd. Other scales and depths
 *    take 64-bit sums (vpmuludq) as the AVX2 kernels do.
 * Kernels with a coefficient of 32768 or more (the 3-tap one of scale 3) do not fit a
 * signed word: the caller checks and runs the per-pass AVX2 kernels there.
 */
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>

#include "../integer_vif.h"
#include "../integer_vif_rows.h"

/* The build compiles this file twice: plain, and with SVC_AVX512_VNNI for CPUs with AVX512-VNNI,
 * where vpdpwssd does each multiply-add-accumulate in one instruction (suffix _vnni). */
#ifdef SVC_AVX512_VNNI
#define AVX512_FN __attribute__((target("avx2,avx512f,avx512bw,avx512vl,avx512dq,avx512cd,avx512vnni")))
#define VARIANT(name) name##_vnni
#else
#define AVX512_FN __attribute__((target("avx2,avx512f,avx512bw,avx512vl,avx512dq,avx512cd")))
#define VARIANT(name) name
#endif
#ifndef SVC_AVX512_VNNI
size_t svc_vif_avx512_scratch_len(int w) { return N_LINES * line_len(w); }
#endif

/* Taps k and k+1 as the word pair of every dword lane (tap fw is 0). */
AVX512_FN static inline __m512i tap_pair(const uint16_t *filt, int fw, int k) {
    const uint32_t hi = k + 1 < fw ? filt[k + 1] : 0;
    return _mm512_set1_epi32((int)(filt[k] | hi << 16));
}

AVX512_FN static inline __m512i dot(__m512i acc, __m512i a, __m512i b) {
#ifdef SVC_AVX512_VNNI
    return _mm512_dpwssd_epi32(acc, a, b);
#else
    return _mm512_add_epi32(acc, _mm512_madd_epi16(a, b));
#endif
}

AVX512_FN static inline __mmask32 mask32(int n) {
    return n >= 32 ? (__mmask32)0xFFFFFFFFu : (__mmask32)((1u << n) - 1);
}

AVX512_FN static inline __mmask16 mask16(int n) {
    return n >= 16 ? (__mmask16)0xFFFF : n <= 0 ? 0 : (__mmask16)((1u << n) - 1);
}

/* (a * b + 2^31) >> 32 per u32 lane. */
AVX512_FN static inline __m512i mulhi_round(__m512i a, __m512i b) {
    const __m512i rnd = _mm512_set1_epi64(0x80000000LL);
    const __m512i even = _mm512_srli_epi64(_mm512_add_epi64(_mm512_mul_epu32(a, b), rnd), 32);
    const __m512i odd =
        _mm512_add_epi64(_mm512_mul_epu32(_mm512_srli_epi64(a, 32), _mm512_srli_epi64(b, 32)), rnd);
    return _mm512_mask_blend_epi32(0xAAAA, even, odd);
}

/* Word c of the column-ordered low (or high, +1) halves, from the dwords of an unpacklo (LO)
 * and unpackhi (HI) pair: LO dword 4L+q is column 8L+q, HI dword 4L+q is column 8L+4+q. */
AVX512_FN static inline __m512i halves_index(int high) {
    uint16_t idx[32];
    for (int c = 0; c < 32; c++) {
        const int lane = c / 8, q = c % 8;
        idx[c] = (uint16_t)((q < 4 ? 2 * (4 * lane + q) : 32 + 2 * (4 * lane + q - 4)) + high);
    }
    return _mm512_loadu_si512(idx);
}

/* 32 samples of a source row from column j (masked): bytes (u8) or 16-bit words. */
AVX512_FN static inline __m512i load_row(const void *row, int j, __mmask32 m, int u8) {
    return u8 ? _mm512_cvtepu8_epi16(_mm256_maskz_loadu_epi8(m, (const uint8_t *)row + j))
              : _mm512_maskz_loadu_epi16(m, (const uint16_t *)row + j);
}

/* Vertical pass, 8-bit samples at scale 0 (mu_shift 8, sq_shift 0), 32 columns a step; the
 * accumulators (unpacklo and unpackhi halves of up to 5 quantities) are named to stay in
 * registers. Lines: mu1, mu2, then low and high halves of xx, yy, xy. */
AVX512_FN static ALWAYS_INLINE void vert_8bit(const void *const *rref, const void *const *rdis, int u8,
                                              const uint16_t *filt, int fw, int w, uint16_t *const *line,
                                              int sides) {
    const __m512i flip = _mm512_set1_epi16((short)0x8000);
    const __m512i lo_idx = halves_index(0), hi_idx = halves_index(1);
    const __m512i mu_rnd = _mm512_set1_epi32(128), bias = _mm512_set1_epi32((int)0x80000000u);
    for (int j = 0; j < w; j += 32) {
        const __mmask32 m = mask32(w - j);
        __m512i m1l = _mm512_setzero_si512(), m1h = m1l, m2l = m1l, m2h = m1l, xxl = m1l, xxh = m1l;
        __m512i yyl = m1l, yyh = m1l, xyl = m1l, xyh = m1l;
        for (int k = 0; k < fw; k += 2) {
            const __m512i f = tap_pair(filt, fw, k);
            const __m512i r0 = load_row(rref[k], j, m, u8);
            const __m512i r1 = k + 1 < fw ? load_row(rref[k + 1], j, m, u8) : _mm512_setzero_si512();
            const __m512i rl = _mm512_unpacklo_epi16(r0, r1), rh = _mm512_unpackhi_epi16(r0, r1);
            if (sides & SIDE_REF) {
                m1l = dot(m1l, rl, f);
                m1h = dot(m1h, rh, f);
                xxl = dot(xxl, _mm512_xor_si512(_mm512_mullo_epi16(rl, rl), flip), f);
                xxh = dot(xxh, _mm512_xor_si512(_mm512_mullo_epi16(rh, rh), flip), f);
            }
            if (sides & SIDE_DIS) {
                const __m512i d0 = load_row(rdis[k], j, m, u8);
                const __m512i d1 = k + 1 < fw ? load_row(rdis[k + 1], j, m, u8) : _mm512_setzero_si512();
                const __m512i dl = _mm512_unpacklo_epi16(d0, d1), dh = _mm512_unpackhi_epi16(d0, d1);
                m2l = dot(m2l, dl, f);
                m2h = dot(m2h, dh, f);
                yyl = dot(yyl, _mm512_xor_si512(_mm512_mullo_epi16(dl, dl), flip), f);
                yyh = dot(yyh, _mm512_xor_si512(_mm512_mullo_epi16(dh, dh), flip), f);
                xyl = dot(xyl, _mm512_xor_si512(_mm512_mullo_epi16(rl, dl), flip), f);
                xyh = dot(xyh, _mm512_xor_si512(_mm512_mullo_epi16(rh, dh), flip), f);
            }
        }
#define STORE(dst, lo, hi, idx) \
    _mm512_mask_storeu_epi16((dst) + j, m, _mm512_xor_si512(_mm512_permutex2var_epi16(lo, idx, hi), flip))
#define STORE_MU(dst, l, h)                                         \
    STORE(dst, _mm512_srli_epi32(_mm512_add_epi32(l, mu_rnd), 8), \
          _mm512_srli_epi32(_mm512_add_epi32(h, mu_rnd), 8), lo_idx)
#define STORE_SQ(dlo, dhi, l, h)                \
    l = _mm512_add_epi32(l, bias);              \
    h = _mm512_add_epi32(h, bias);              \
    STORE(dlo, l, h, lo_idx);                   \
    STORE(dhi, l, h, hi_idx)
        if (sides & SIDE_REF) {
            STORE_MU(line[0], m1l, m1h);
            STORE_SQ(line[2], line[3], xxl, xxh);
        }
        if (sides & SIDE_DIS) {
            STORE_MU(line[1], m2l, m2h);
            STORE_SQ(line[4], line[5], yyl, yyh);
            STORE_SQ(line[6], line[7], xyl, xyh);
        }
#undef STORE_SQ
#undef STORE_MU
#undef STORE
    }
}

/* Accumulates a * b (u32 lanes, products up to 64 bits) into even/odd u64 sums. */
AVX512_FN static inline void mac64(__m512i a, __m512i b, __m512i *even, __m512i *odd) {
    *even = _mm512_add_epi64(*even, _mm512_mul_epu32(a, b));
    *odd = _mm512_add_epi64(*odd, _mm512_mul_epu32(_mm512_srli_epi64(a, 32), _mm512_srli_epi64(b, 32)));
}

/* (sum + round) >> shift per u64 lane, truncated to u32, back in lane order. */
AVX512_FN static inline __m512i narrow64(__m512i even, __m512i odd, __m512i rnd, __m128i sh) {
    even = _mm512_srl_epi64(_mm512_add_epi64(even, rnd), sh);
    odd = _mm512_srl_epi64(_mm512_add_epi64(odd, rnd), sh);
    return _mm512_mask_blend_epi32(0xAAAA, even, _mm512_slli_epi64(odd, 32));
}

/* Stores the offset low and high halves of 16 u32 lanes. */
AVX512_FN static inline void store_halves(uint16_t *lo, uint16_t *hi, __mmask16 m, __m512i v) {
    const __m512i flip = _mm512_set1_epi32((int)0x80008000u);
    v = _mm512_xor_si512(v, flip);
    _mm256_mask_storeu_epi16(lo, m, _mm512_cvtepi32_epi16(v));
    if (hi) _mm256_mask_storeu_epi16(hi, m, _mm512_cvtepi32_epi16(_mm512_srli_epi32(v, 16)));
}


/* Vertical pass, any depth and scale (16-bit samples), 16 columns a step, of the given sides. */
AVX512_FN static ALWAYS_INLINE void vert_wide(const uint16_t *const *rref, const uint16_t *const *rdis,
                                              const uint16_t *filt, int fw, int w, int mu_shift, int sq_shift,
                                              uint16_t *const *line, int sides) {
    const __m512i mu_rnd = _mm512_set1_epi32((int)(1u << (mu_shift - 1)));
    const __m128i mu_sh = _mm_cvtsi32_si128(mu_shift);
    const __m512i sq_rnd = _mm512_set1_epi64(sq_shift ? (int64_t)1 << (sq_shift - 1) : 0);
    const __m128i sq_sh = _mm_cvtsi32_si128(sq_shift);
    for (int j = 0; j < w; j += 16) {
        const __mmask16 m = mask16(w - j);
        __m512i a1 = _mm512_setzero_si512(), a2 = a1;
        __m512i e11 = a1, o11 = a1, e22 = a1, o22 = a1, e12 = a1, o12 = a1;
        for (int k = 0; k < fw; k++) {
            const __m512i f = _mm512_set1_epi32(filt[k]);
            const __m512i r = _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m, rref[k] + j));
            const __m512i fr = _mm512_mullo_epi32(f, r);
            if (sides & SIDE_REF) {
                a1 = _mm512_add_epi32(a1, fr);
                mac64(fr, r, &e11, &o11);
            }
            if (sides & SIDE_DIS) {
                const __m512i d = _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m, rdis[k] + j));
                const __m512i fd = _mm512_mullo_epi32(f, d);
                a2 = _mm512_add_epi32(a2, fd);
                mac64(fd, d, &e22, &o22);
                mac64(fr, d, &e12, &o12);
            }
        }
        if (sides & SIDE_REF) {
            store_halves(line[0] + j, NULL, m, _mm512_srl_epi32(_mm512_add_epi32(a1, mu_rnd), mu_sh));
            store_halves(line[2] + j, line[3] + j, m, narrow64(e11, o11, sq_rnd, sq_sh));
        }
        if (sides & SIDE_DIS) {
            store_halves(line[1] + j, NULL, m, _mm512_srl_epi32(_mm512_add_epi32(a2, mu_rnd), mu_sh));
            store_halves(line[4] + j, line[5] + j, m, narrow64(e22, o22, sq_rnd, sq_sh));
            store_halves(line[6] + j, line[7] + j, m, narrow64(e12, o12, sq_rnd, sq_sh));
        }
    }
}

/* The vertical pass of a statistic row, of the given sides. */
AVX512_FN static ALWAYS_INLINE void vert_stat(const void *const *rref, const void *const *rdis, int u8,
                                              const uint16_t *filt, int fw, int w, int mu_shift, int sq_shift,
                                              uint16_t *const *line, int sides) {
    if (mu_shift == 8 && sq_shift == 0) vert_8bit(rref, rdis, u8, filt, fw, w, line, sides);
    else vert_wide((const uint16_t *const *)rref, (const uint16_t *const *)rdis, filt, fw, w, mu_shift, sq_shift,
                   line, sides);
}

/* log2(v) * 2048 from the 16 leading bits, as the scalar log2_q11_32 / log2_q11_64. */
AVX512_FN static inline __m512i log2_q11_32(const uint16_t *lut, __mmask16 m, __m512i v) {
    const __m512i k = _mm512_sub_epi32(_mm512_set1_epi32(16), _mm512_lzcnt_epi32(v));
    const __m512i idx = _mm512_srlv_epi32(v, k);
    const __m512i t = _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), m, idx, lut, 2);
    return _mm512_add_epi32(_mm512_and_si512(t, _mm512_set1_epi32(0xFFFF)), _mm512_slli_epi32(k, 11));
}

AVX512_FN static inline __m256i log2_q11_64(const uint16_t *lut, __mmask8 m, __m512i v) {
    const __m512i k = _mm512_sub_epi64(_mm512_set1_epi64(48), _mm512_lzcnt_epi64(v));
    const __m512i idx = _mm512_srlv_epi64(v, k);
    const __m256i t = _mm512_mask_i64gather_epi32(_mm256_setzero_si256(), m, idx, lut, 2);
    return _mm256_add_epi32(_mm256_and_si256(t, _mm256_set1_epi32(0xFFFF)),
                            _mm512_cvtepi64_epi32(_mm512_slli_epi64(k, 11)));
}

typedef struct row_acc {
    __m512i num_log, den_log; /* int32 lanes: one row's sums stay far below 2^31 */
    __m512i num_lin;          /* int64 lanes */
    int64_t den_lin;
} row_acc;


/* The statistic of 16 pixels (lanes in m), as accumulate_row in integer_vif.c, in two
 * pieces: statistic_den from sigma1^2 alone (den_log, den_lin), statistic_num the rest
 * (num_log, num_lin). A pair row calls both; a ladder's reference row the first, each
 * rendition's row the second. */
AVX512_FN static ALWAYS_INLINE void statistic_den(const uint16_t *lut, __mmask16 m, __m512i s11, row_acc *acc) {
    const __m512i nsq = _mm512_set1_epi32(SIGMA_NSQ);
    const __mmask16 lin = _mm512_mask_cmplt_epi32_mask(m, s11, nsq);
    const __mmask16 logm = m & ~lin;
    acc->den_lin += __builtin_popcount(lin);
    if (!logm) return;
    const __m512i den = _mm512_sub_epi32(log2_q11_32(lut, logm, _mm512_add_epi32(nsq, s11)),
                                         _mm512_set1_epi32(2048 * 17));
    acc->den_log = _mm512_mask_add_epi32(acc->den_log, logm, acc->den_log, den);
}

AVX512_FN static ALWAYS_INLINE void statistic_num(const uint16_t *lut, __m512d limit, __mmask16 m, __m512i s11,
                                                  __m512i s22, __m512i s12, row_acc *acc) {
    const __m512i nsq = _mm512_set1_epi32(SIGMA_NSQ);
    s22 = _mm512_max_epi32(s22, _mm512_setzero_si512());
    const __mmask16 lin = _mm512_mask_cmplt_epi32_mask(m, s11, nsq);
    const __mmask16 logm = m & ~lin;
    const __m512i lin22 = _mm512_maskz_mov_epi32(lin, s22);
    acc->num_lin = _mm512_add_epi64(acc->num_lin, _mm512_cvtepi32_epi64(_mm512_castsi512_si256(lin22)));
    acc->num_lin = _mm512_add_epi64(acc->num_lin, _mm512_cvtepi32_epi64(_mm512_extracti64x4_epi64(lin22, 1)));
    const __mmask16 numm = logm & _mm512_cmpgt_epi32_mask(s12, _mm512_setzero_si512()) &
                           _mm512_cmpgt_epi32_mask(s22, _mm512_setzero_si512());
    if (!numm) return;
    const __m512d eps = _mm512_set1_pd(65536 * 1.0e-10);
    for (int half = 0; half < 2; half++) {
        const __mmask8 hm = (__mmask8)(numm >> (8 * half));
        if (!hm) continue;
        const __m256i h11 = half ? _mm512_extracti64x4_epi64(s11, 1) : _mm512_castsi512_si256(s11);
        const __m256i h22 = half ? _mm512_extracti64x4_epi64(s22, 1) : _mm512_castsi512_si256(s22);
        const __m256i h12 = half ? _mm512_extracti64x4_epi64(s12, 1) : _mm512_castsi512_si256(s12);
        const __m512d d11 = _mm512_cvtepi32_pd(h11), d12 = _mm512_cvtepi32_pd(h12);
        __m512d g = _mm512_div_pd(d12, _mm512_add_pd(d11, eps));
        __m256i sv = _mm512_cvttpd_epi32(_mm512_sub_pd(_mm512_cvtepi32_pd(h22), _mm512_mul_pd(g, d12)));
        sv = _mm256_max_epi32(sv, _mm256_setzero_si256());
        g = _mm512_min_pd(g, limit);
        const __m512i noise = _mm512_cvtepu32_epi64(_mm256_add_epi32(sv, _mm256_set1_epi32(SIGMA_NSQ)));
        const __m512i signal = _mm512_add_epi64(_mm512_cvttpd_epi64(_mm512_mul_pd(_mm512_mul_pd(g, g), d11)), noise);
        const __m256i num = _mm256_sub_epi32(log2_q11_64(lut, hm, signal), log2_q11_64(lut, hm, noise));
        const __m512i num16 = half ? _mm512_inserti64x4(_mm512_setzero_si512(), num, 1)
                                   : _mm512_zextsi256_si512(num);
        acc->num_log = _mm512_mask_add_epi32(acc->num_log, (__mmask16)(hm << (8 * half)), acc->num_log, num16);
    }
}

/* Adds a row's accumulators to sums (num_log, den_log, num_lin, den_lin). */
AVX512_FN static inline void add_sums(const row_acc *acc, int64_t sums[4]) {
    sums[0] += _mm512_reduce_add_epi64(_mm512_add_epi64(_mm512_cvtepi32_epi64(_mm512_castsi512_si256(acc->num_log)),
                                                        _mm512_cvtepi32_epi64(_mm512_extracti64x4_epi64(acc->num_log, 1))));
    sums[1] += _mm512_reduce_add_epi64(_mm512_add_epi64(_mm512_cvtepi32_epi64(_mm512_castsi512_si256(acc->den_log)),
                                                        _mm512_cvtepi32_epi64(_mm512_extracti64x4_epi64(acc->den_log, 1))));
    sums[2] += _mm512_reduce_add_epi64(acc->num_lin);
    sums[3] += acc->den_lin;
}

/* Horizontal pass of the statistic over the offset lines of the given sides and the statistic
 * (its pieces of those sides). The accumulators are named so that they stay in registers.
 * A ladder's reference row (SIDE_REF) stores a1 (v0) and sigma1^2 per output row in the lane
 * order of this loop, word j + 16p + i being column j + 2i + p of the 32-column step at j; a
 * rendition's row (SIDE_DIS) reads them back from there. */
AVX512_FN static ALWAYS_INLINE void horz_stat(uint16_t *const *line, const uint16_t *filt, int fw, int w,
                                              const uint16_t *lut, double gain_limit, uint32_t *a1_out,
                                              int32_t *s11_out, const uint32_t *a1_in, const int32_t *s11_in,
                                              row_acc *acc, int sides) {
    const __m512d limit = _mm512_set1_pd(gain_limit);
    const int r = fw / 2;
    const __m512i bias = _mm512_set1_epi32((int)0x80000000u), rnd16 = _mm512_set1_epi32(32768);
    const uint16_t *const l0 = line[0], *const l1 = line[1], *const l2 = line[2], *const l3 = line[3];
    const uint16_t *const l4 = line[4], *const l5 = line[5], *const l6 = line[6], *const l7 = line[7];
    for (int j = 0; j < w; j += 32) {
        __m512i e0 = _mm512_setzero_si512(), e1 = e0, e2 = e0, e3 = e0, e4 = e0, e5 = e0, e6 = e0, e7 = e0;
        __m512i o0 = e0, o1 = e0, o2 = e0, o3 = e0, o4 = e0, o5 = e0, o6 = e0, o7 = e0;
        for (int k = 0; k < fw; k += 2) {
            const __m512i f = tap_pair(filt, fw, k);
            const int x = j - r + k;
#define HTAP(e, o, l)                                          \
    e = dot(e, _mm512_loadu_si512(l + x), f);                  \
    o = dot(o, _mm512_loadu_si512(l + x + 1), f)
            if (sides & SIDE_REF) {
                HTAP(e0, o0, l0);
                HTAP(e2, o2, l2);
                HTAP(e3, o3, l3);
            }
            if (sides & SIDE_DIS) {
                HTAP(e1, o1, l1);
                HTAP(e4, o4, l4);
                HTAP(e5, o5, l5);
                HTAP(e6, o6, l6);
                HTAP(e7, o7, l7);
            }
#undef HTAP
        }
        for (int p = 0; p < 2; p++) {
            /* Lane i is column j + 2i + p. */
            const __mmask16 m = mask16((w - j - p + 1) / 2);
            __m512i v0, s11;
            if (sides & SIDE_REF) {
                v0 = _mm512_add_epi32(p ? o0 : e0, bias);
                const __m512i v2 = _mm512_add_epi32(p ? o2 : e2, bias), v3 = _mm512_add_epi32(p ? o3 : e3, bias);
                const __m512i xx = _mm512_add_epi32(v3, _mm512_srli_epi32(_mm512_add_epi32(v2, rnd16), 16));
                s11 = _mm512_sub_epi32(xx, mulhi_round(v0, v0));
                if (!(sides & SIDE_DIS)) {
                    _mm512_storeu_si512(a1_out + j + 16 * p, v0);
                    _mm512_storeu_si512(s11_out + j + 16 * p, s11);
                }
                statistic_den(lut, m, s11, acc);
            } else {
                v0 = _mm512_loadu_si512(a1_in + j + 16 * p);
                s11 = _mm512_loadu_si512(s11_in + j + 16 * p);
            }
            if (sides & SIDE_DIS) {
                const __m512i v1 = _mm512_add_epi32(p ? o1 : e1, bias);
                const __m512i v4 = _mm512_add_epi32(p ? o4 : e4, bias), v5 = _mm512_add_epi32(p ? o5 : e5, bias);
                const __m512i v6 = _mm512_add_epi32(p ? o6 : e6, bias), v7 = _mm512_add_epi32(p ? o7 : e7, bias);
                const __m512i yy = _mm512_add_epi32(v5, _mm512_srli_epi32(_mm512_add_epi32(v4, rnd16), 16));
                const __m512i xy = _mm512_add_epi32(v7, _mm512_srli_epi32(_mm512_add_epi32(v6, rnd16), 16));
                const __m512i s22 = _mm512_sub_epi32(yy, mulhi_round(v1, v1));
                const __m512i s12 = _mm512_sub_epi32(xy, mulhi_round(v0, v1));
                statistic_num(lut, limit, m, s11, s22, s12, acc);
            }
        }
    }
}

/* A statistic row of the given sides: vertical pass, mirrored padding, horizontal pass and
 * statistic, added to sums. */
AVX512_FN static ALWAYS_INLINE void stat_row(const void *const *rref, const void *const *rdis, int u8,
                                             const uint16_t *filt, int fw, int w, int mu_shift, int sq_shift,
                                             const uint16_t *lut, double gain_limit, uint16_t *scratch,
                                             uint32_t *a1_out, int32_t *s11_out, const uint32_t *a1_in,
                                             const int32_t *s11_in, int64_t sums[4], int sides) {
    uint16_t *line[N_LINES];
    scratch_lines(scratch, w, line);
    vert_stat(rref, rdis, u8, filt, fw, w, mu_shift, sq_shift, line, sides);
    pad_lines(line, w, fw / 2, sides);
    row_acc acc = { _mm512_setzero_si512(), _mm512_setzero_si512(), _mm512_setzero_si512(), 0 };
    horz_stat(line, filt, fw, w, lut, gain_limit, a1_out, s11_out, a1_in, s11_in, &acc, sides);
    add_sums(&acc, sums);
}

AVX512_FN void VARIANT(svc_vif_stat_row_avx512)(const void *const *rref, const void *const *rdis, int u8,
                                       const uint16_t *filt, int fw, int w, int mu_shift,
                                       int sq_shift, const uint16_t *log2_lut, double gain_limit,
                                       uint16_t *scratch, int64_t sums[4]) {
    stat_row(rref, rdis, u8, filt, fw, w, mu_shift, sq_shift, log2_lut, gain_limit, scratch, NULL, NULL, NULL, NULL,
             sums, SIDE_BOTH);
}

/* One side's decimation row: the vertical pass into the scratch line t (offset samples, taps k
 * and k+1 interleaved, exact 32-bit sums), its mirrored padding, and the horizontal pass at
 * even columns (dword i of a load at 2j - r + k is taps k, k+1 of output j + i). */
AVX512_FN static ALWAYS_INLINE void down_side(const void *const *rows, int u8, const uint16_t *filt, int fw, int w,
                                              int shift, uint16_t *t, int wo, uint16_t *out) {
    const int r = fw / 2;
    const __m512i flip = _mm512_set1_epi16((short)0x8000), bias = _mm512_set1_epi32((int)0x80000000u);
    const __m512i lo_idx = halves_index(0);
    const __m512i rnd = _mm512_set1_epi32((int)(1u << (shift - 1)));
    const __m128i sh = _mm_cvtsi32_si128(shift);
    for (int j = 0; j < w; j += 32) {
        const __mmask32 m = mask32(w - j);
        __m512i lo = _mm512_setzero_si512(), hi = lo;
        for (int k = 0; k < fw; k += 2) {
            const __m512i f = tap_pair(filt, fw, k);
            const __m512i r0 = _mm512_xor_si512(load_row(rows[k], j, m, u8), flip);
            const __m512i r1 = k + 1 < fw ? _mm512_xor_si512(load_row(rows[k + 1], j, m, u8), flip) : flip;
            lo = dot(lo, _mm512_unpacklo_epi16(r0, r1), f);
            hi = dot(hi, _mm512_unpackhi_epi16(r0, r1), f);
        }
        lo = _mm512_srl_epi32(_mm512_add_epi32(_mm512_add_epi32(lo, bias), rnd), sh);
        hi = _mm512_srl_epi32(_mm512_add_epi32(_mm512_add_epi32(hi, bias), rnd), sh);
        _mm512_mask_storeu_epi16(t + j, m, _mm512_xor_si512(_mm512_permutex2var_epi16(lo, lo_idx, hi), flip));
    }
    pad_words(t, w, r);
    const __m512i rnd16 = _mm512_set1_epi32(32768);
    for (int j = 0; j < wo; j += 16) {
        const __mmask16 m = mask16(wo - j);
        __m512i a = _mm512_setzero_si512();
        for (int k = 0; k < fw; k += 2) a = dot(a, _mm512_loadu_si512(t + 2 * j - r + k), tap_pair(filt, fw, k));
        a = _mm512_srli_epi32(_mm512_add_epi32(_mm512_add_epi32(a, bias), rnd16), 16);
        _mm256_mask_storeu_epi16(out + j, m, _mm512_cvtepi32_epi16(a));
    }
}

AVX512_FN void VARIANT(svc_vif_down_row_avx512)(const void *const *rref, const void *const *rdis, int u8,
                                       const uint16_t *filt, int fw, int w, int shift,
                                       uint16_t *scratch, int wo, uint16_t *oref, uint16_t *odis) {
    down_side(rref, u8, filt, fw, w, shift, scratch + LINE_MARGIN, wo, oref);
    down_side(rdis, u8, filt, fw, w, shift, scratch + line_len(w) + LINE_MARGIN, wo, odis);
}

/* ---- ladders: the statistic row split into the reference's side and the distorted side ---- */

#ifndef SVC_AVX512_VNNI
size_t svc_vif_ladder_row_len(int w) { return ((size_t)w + 31) & ~(size_t)31; }
#endif

AVX512_FN void VARIANT(svc_vif_ref_row_avx512)(const void *const *rref, int u8, const uint16_t *filt, int fw, int w,
                                               int mu_shift, int sq_shift, const uint16_t *log2_lut,
                                               uint16_t *scratch, uint32_t *a1, int32_t *s11, int64_t sums[4]) {
    stat_row(rref, NULL, u8, filt, fw, w, mu_shift, sq_shift, log2_lut, 0.0, scratch, a1, s11, NULL, NULL, sums,
             SIDE_REF);
}

AVX512_FN void VARIANT(svc_vif_dis_row_avx512)(const void *const *rref, const void *const *rdis, int u8,
                                               const uint16_t *filt, int fw, int w, int mu_shift, int sq_shift,
                                               const uint32_t *a1, const int32_t *s11, const uint16_t *log2_lut,
                                               double gain_limit, uint16_t *scratch, int64_t sums[4]) {
    stat_row(rref, rdis, u8, filt, fw, w, mu_shift, sq_shift, log2_lut, gain_limit, scratch, NULL, NULL, a1, s11,
             sums, SIDE_DIS);
}

/* svc_vif_down_row_avx512 of one side: the ladders' pyramids (the reference's once per frame,
 * then each rendition's). */
AVX512_FN void VARIANT(svc_vif_down1_row_avx512)(const void *const *rows, int u8, const uint16_t *filt, int fw, int w,
                                                 int shift, uint16_t *scratch, int wo, uint16_t *out) {
    down_side(rows, u8, filt, fw, w, shift, scratch + LINE_MARGIN, wo, out);
}
#endif
