/*
 * AVX2 filtering kernels of the integer VIF (see integer_vif.c for the algorithm
 * and the kernel contracts). Integer only, so results are bit-identical to the scalar
 * kernels: 8 columns per vector in 32-bit lanes; sums of squares, which need 64 bits,
 * are split into even and odd lanes multiplied with _mm256_mul_epu32. Columns left over
 * after the last full vector go to the scalar kernel (integer_vif.h).
 * Built with -mavx2 in the library; the target attribute lets the dev harness build it
 * without that flag.
 *
 * The second half of the file holds the fused row kernels (svc_vif_stat_row_avx2,
 * svc_vif_down_row_avx2), the AVX2 twins of x86/integer_vif_avx512.c: one call per output
 * row, vertical pass + padding + horizontal pass + statistic (or decimation), filters on
 * offset 16-bit halves two taps per vpmaddwd, 8-bit scale 0 read from the pictures' rows.
 * The arithmetic argument is written there; what differs here is noted at each kernel.
 */
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>

#include "../integer_vif.h"

#define AVX2_FN __attribute__((target("avx2")))

/* Accumulates a * b (u32 lanes, products up to 64 bits) into even/odd u64 sums. */
AVX2_FN static inline void mac64(__m256i a, __m256i b, __m256i *even, __m256i *odd) {
    *even = _mm256_add_epi64(*even, _mm256_mul_epu32(a, b));
    *odd = _mm256_add_epi64(*odd, _mm256_mul_epu32(_mm256_srli_epi64(a, 32), _mm256_srli_epi64(b, 32)));
}

/* (sum + round) >> shift per u64 lane, truncated to u32 and put back in lane order. */
AVX2_FN static inline __m256i narrow64(__m256i even, __m256i odd, __m256i rnd, __m128i sh) {
    even = _mm256_srl_epi64(_mm256_add_epi64(even, rnd), sh);
    odd = _mm256_srl_epi64(_mm256_add_epi64(odd, rnd), sh);
    return _mm256_blend_epi32(even, _mm256_slli_epi64(odd, 32), 0xAA);
}

/* (a * b + 2^31) >> 32 per u32 lane. */
AVX2_FN static inline __m256i mulhi_round(__m256i a, __m256i b) {
    const __m256i rnd = _mm256_set1_epi64x(0x80000000LL);
    const __m256i even = _mm256_srli_epi64(_mm256_add_epi64(_mm256_mul_epu32(a, b), rnd), 32);
    const __m256i odd = _mm256_add_epi64(
        _mm256_mul_epu32(_mm256_srli_epi64(a, 32), _mm256_srli_epi64(b, 32)), rnd);
    return _mm256_blend_epi32(even, odd, 0xAA); /* odd's high half already sits in place */
}

AVX2_FN static inline __m256i load_u16x8(const uint16_t *p) {
    return _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)p));
}

AVX2_FN static inline __m256i loadu32(const uint32_t *p) {
    return _mm256_loadu_si256((const __m256i *)p);
}

AVX2_FN void svc_vif_stat_vert_avx2(const uint16_t *const *rref, const uint16_t *const *rdis,
                                    const uint16_t *filt, int fw, int j0, int j1,
                                    int mu_shift, int sq_shift, uint32_t *mu1, uint32_t *mu2,
                                    uint32_t *xx, uint32_t *yy, uint32_t *xy) {
    const __m256i mu_rnd = _mm256_set1_epi32((int)(1u << (mu_shift - 1)));
    const __m128i mu_sh = _mm_cvtsi32_si128(mu_shift);
    const __m256i sq_rnd = _mm256_set1_epi64x(sq_shift ? (int64_t)1 << (sq_shift - 1) : 0);
    const __m128i sq_sh = _mm_cvtsi32_si128(sq_shift);
    int j = j0;
    for (; j + 8 <= j1; j += 8) {
        __m256i a1 = _mm256_setzero_si256(), a2 = a1;
        __m256i e11 = a1, o11 = a1, e22 = a1, o22 = a1, e12 = a1, o12 = a1;
        for (int k = 0; k < fw; k++) {
            const __m256i f = _mm256_set1_epi32(filt[k]);
            const __m256i r = load_u16x8(rref[k] + j), d = load_u16x8(rdis[k] + j);
            const __m256i fr = _mm256_mullo_epi32(f, r), fd = _mm256_mullo_epi32(f, d);
            a1 = _mm256_add_epi32(a1, fr);
            a2 = _mm256_add_epi32(a2, fd);
            mac64(fr, r, &e11, &o11);
            mac64(fd, d, &e22, &o22);
            mac64(fr, d, &e12, &o12);
        }
        _mm256_storeu_si256((__m256i *)(mu1 + j), _mm256_srl_epi32(_mm256_add_epi32(a1, mu_rnd), mu_sh));
        _mm256_storeu_si256((__m256i *)(mu2 + j), _mm256_srl_epi32(_mm256_add_epi32(a2, mu_rnd), mu_sh));
        _mm256_storeu_si256((__m256i *)(xx + j), narrow64(e11, o11, sq_rnd, sq_sh));
        _mm256_storeu_si256((__m256i *)(yy + j), narrow64(e22, o22, sq_rnd, sq_sh));
        _mm256_storeu_si256((__m256i *)(xy + j), narrow64(e12, o12, sq_rnd, sq_sh));
    }
    svc_vif_stat_vert_c(rref, rdis, filt, fw, j, j1, mu_shift, sq_shift, mu1, mu2, xx, yy, xy);
}

AVX2_FN void svc_vif_stat_horz_avx2(const uint32_t *mu1, const uint32_t *mu2, const uint32_t *xx,
                                    const uint32_t *yy, const uint32_t *xy, const uint16_t *filt,
                                    int fw, int j0, int j1, int32_t *s11, int32_t *s22,
                                    int32_t *s12) {
    const int r = fw / 2;
    const __m256i rnd16 = _mm256_set1_epi64x(32768);
    const __m128i sh16 = _mm_cvtsi32_si128(16);
    int j = j0;
    for (; j + 8 <= j1; j += 8) {
        __m256i a1 = _mm256_setzero_si256(), a2 = a1;
        __m256i e11 = a1, o11 = a1, e22 = a1, o22 = a1, e12 = a1, o12 = a1;
        for (int k = 0; k < fw; k++) {
            const int x = j - r + k;
            const __m256i f = _mm256_set1_epi32(filt[k]);
            a1 = _mm256_add_epi32(a1, _mm256_mullo_epi32(f, loadu32(mu1 + x)));
            a2 = _mm256_add_epi32(a2, _mm256_mullo_epi32(f, loadu32(mu2 + x)));
            mac64(loadu32(xx + x), f, &e11, &o11);
            mac64(loadu32(yy + x), f, &e22, &o22);
            mac64(loadu32(xy + x), f, &e12, &o12);
        }
        const __m256i v11 = _mm256_sub_epi32(narrow64(e11, o11, rnd16, sh16), mulhi_round(a1, a1));
        const __m256i v22 = _mm256_sub_epi32(narrow64(e22, o22, rnd16, sh16), mulhi_round(a2, a2));
        const __m256i v12 = _mm256_sub_epi32(narrow64(e12, o12, rnd16, sh16), mulhi_round(a1, a2));
        _mm256_storeu_si256((__m256i *)(s11 + j), v11);
        _mm256_storeu_si256((__m256i *)(s22 + j), v22);
        _mm256_storeu_si256((__m256i *)(s12 + j), v12);
    }
    svc_vif_stat_horz_c(mu1, mu2, xx, yy, xy, filt, fw, j, j1, s11, s22, s12);
}

AVX2_FN void svc_vif_down_vert_avx2(const uint16_t *const *rref, const uint16_t *const *rdis,
                                    const uint16_t *filt, int fw, int j0, int j1,
                                    int shift, uint32_t *tref, uint32_t *tdis) {
    const __m256i rnd = _mm256_set1_epi32((int)(1u << (shift - 1)));
    const __m128i sh = _mm_cvtsi32_si128(shift);
    int j = j0;
    for (; j + 8 <= j1; j += 8) {
        __m256i ar = _mm256_setzero_si256(), ad = ar;
        for (int k = 0; k < fw; k++) {
            const __m256i f = _mm256_set1_epi32(filt[k]);
            ar = _mm256_add_epi32(ar, _mm256_mullo_epi32(f, load_u16x8(rref[k] + j)));
            ad = _mm256_add_epi32(ad, _mm256_mullo_epi32(f, load_u16x8(rdis[k] + j)));
        }
        _mm256_storeu_si256((__m256i *)(tref + j), _mm256_srl_epi32(_mm256_add_epi32(ar, rnd), sh));
        _mm256_storeu_si256((__m256i *)(tdis + j), _mm256_srl_epi32(_mm256_add_epi32(ad, rnd), sh));
    }
    svc_vif_down_vert_c(rref, rdis, filt, fw, j, j1, shift, tref, tdis);
}

/* Lanes 0, 2, ..., 14 of the 16 u32 starting at p. */
AVX2_FN static inline __m256i load_even16(const uint32_t *p) {
    const __m256 lo = _mm256_castsi256_ps(loadu32(p)), hi = _mm256_castsi256_ps(loadu32(p + 8));
    const __m256 ev = _mm256_shuffle_ps(lo, hi, _MM_SHUFFLE(2, 0, 2, 0));
    return _mm256_permute4x64_epi64(_mm256_castps_si256(ev), _MM_SHUFFLE(3, 1, 2, 0));
}

/* Eight u32 (< 2^16) to eight u16 in order. */
AVX2_FN static inline void store_u16x8(uint16_t *p, __m256i v) {
    const __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(v, v), _MM_SHUFFLE(3, 1, 2, 0));
    _mm_storeu_si128((__m128i *)p, _mm256_castsi256_si128(packed));
}

AVX2_FN void svc_vif_down_horz_avx2(const uint32_t *tref, const uint32_t *tdis,
                                    const uint16_t *filt, int fw, int j0, int j1,
                                    uint16_t *oref, uint16_t *odis) {
    const int r = fw / 2;
    const __m256i rnd = _mm256_set1_epi32(32768);
    int j = j0;
    /* The last vector reads one sample past the last even tap; the line's mirrored
     * margin covers it because the source is at least 2 * j1 wide. */
    for (; j + 8 <= j1; j += 8) {
        __m256i ar = _mm256_setzero_si256(), ad = ar;
        for (int k = 0; k < fw; k++) {
            const int x = 2 * j - r + k;
            const __m256i f = _mm256_set1_epi32(filt[k]);
            ar = _mm256_add_epi32(ar, _mm256_mullo_epi32(f, load_even16(tref + x)));
            ad = _mm256_add_epi32(ad, _mm256_mullo_epi32(f, load_even16(tdis + x)));
        }
        store_u16x8(oref + j, _mm256_srli_epi32(_mm256_add_epi32(ar, rnd), 16));
        store_u16x8(odis + j, _mm256_srli_epi32(_mm256_add_epi32(ad, rnd), 16));
    }
    svc_vif_down_horz_c(tref, tdis, filt, fw, j, j1, oref, odis);
}

/* ---- fused row kernels ---- */

#define N_LINES 8
#define LINE_MARGIN 32 /* words before and after each scratch line */
#define SIGMA_NSQ (2 << 16)

static size_t line_len(int w) { return (size_t)w + 3 * LINE_MARGIN; }

size_t svc_vif_avx2_scratch_len(int w) { return N_LINES * line_len(w); }

/* Taps k and k+1 as the word pair of every dword lane (tap fw is 0). */
AVX2_FN static inline __m256i tap_pair(const uint16_t *filt, int fw, int k) {
    const uint32_t hi = k + 1 < fw ? filt[k + 1] : 0;
    return _mm256_set1_epi32((int)(filt[k] | hi << 16));
}

AVX2_FN static inline __m256i dot(__m256i acc, __m256i a, __m256i b) {
    return _mm256_add_epi32(acc, _mm256_madd_epi16(a, b));
}

/* Mirrors r words on both sides of a w-word line (no edge repeat). */
static void pad_words(uint16_t *l, int w, int r) {
    for (int f = 1; f <= r; f++) {
        l[-f] = l[f];
        l[w - 1 + f] = l[w - 1 - f];
    }
}

/* 16 samples of a source row from column j: bytes (u8) or 16-bit words. */
AVX2_FN static inline __m256i load_row16(const void *row, int j, int u8) {
    return u8 ? _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)((const uint8_t *)row + j)))
              : _mm256_loadu_si256((const __m256i *)((const uint16_t *)row + j));
}

/* Columns in order from the dwords of an unpacklo (lo: columns 0-3, 8-11) and unpackhi (hi:
 * 4-7, 12-15) pair, each below 2^16: packus keeps the 128-bit lanes, which is that order. */
AVX2_FN static inline void store_cols(uint16_t *dst, __m256i lo, __m256i hi) {
    const __m256i flip = _mm256_set1_epi16((short)0x8000);
    _mm256_storeu_si256((__m256i *)dst, _mm256_xor_si256(_mm256_packus_epi32(lo, hi), flip));
}

/* Offset low and high halves of 32-bit quantities in unpacklo/unpackhi column order. */
AVX2_FN static inline void store_split_cols(uint16_t *lo_dst, uint16_t *hi_dst, __m256i lo, __m256i hi) {
    const __m256i low16 = _mm256_set1_epi32(0xFFFF);
    store_cols(lo_dst, _mm256_and_si256(lo, low16), _mm256_and_si256(hi, low16));
    store_cols(hi_dst, _mm256_srli_epi32(lo, 16), _mm256_srli_epi32(hi, 16));
}

/* Start of the 16-column step at j: the last step is moved back to end at w (w >= 16), so it
 * recomputes a few columns instead of reading past the rows. */
static inline int step16(int j, int w) { return j + 16 <= w ? j : w - 16; }

/* Vertical pass, 8-bit samples at scale 0 (mu_shift 8, sq_shift 0), 16 columns a step. Ten
 * accumulators (unpacklo and unpackhi halves of 5 quantities) and their operands do not fit
 * AVX2's 16 registers, so the step goes over its rows twice: means and squares, then the
 * cross products, from the interleaved rows the first pass kept on the stack. */
AVX2_FN static void vert_8bit(const void *const *rref, const void *const *rdis, int u8,
                              const uint16_t *filt, int fw, int w, uint16_t *const *line) {
    const __m256i flip = _mm256_set1_epi16((short)0x8000), zero = _mm256_setzero_si256();
    const __m256i mu_rnd = _mm256_set1_epi32(128), bias = _mm256_set1_epi32((int)0x80000000u);
    const int n_pairs = (fw + 1) / 2;
    __m256i f[9], il[9][4];
    for (int p = 0; p < n_pairs; p++) f[p] = tap_pair(filt, fw, 2 * p);
    for (int j0 = 0; j0 < w; j0 += 16) {
        const int j = step16(j0, w);
        __m256i m1l = zero, m1h = zero, m2l = zero, m2h = zero, xxl = zero, xxh = zero, yyl = zero, yyh = zero;
        for (int p = 0, k = 0; p < n_pairs; p++, k += 2) {
            const __m256i r0 = load_row16(rref[k], j, u8), d0 = load_row16(rdis[k], j, u8);
            const __m256i r1 = k + 1 < fw ? load_row16(rref[k + 1], j, u8) : zero;
            const __m256i d1 = k + 1 < fw ? load_row16(rdis[k + 1], j, u8) : zero;
            const __m256i rl = _mm256_unpacklo_epi16(r0, r1), rh = _mm256_unpackhi_epi16(r0, r1);
            const __m256i dl = _mm256_unpacklo_epi16(d0, d1), dh = _mm256_unpackhi_epi16(d0, d1);
            il[p][0] = rl;
            il[p][1] = rh;
            il[p][2] = dl;
            il[p][3] = dh;
            m1l = dot(m1l, rl, f[p]);
            m1h = dot(m1h, rh, f[p]);
            m2l = dot(m2l, dl, f[p]);
            m2h = dot(m2h, dh, f[p]);
            xxl = dot(xxl, _mm256_xor_si256(_mm256_mullo_epi16(rl, rl), flip), f[p]);
            xxh = dot(xxh, _mm256_xor_si256(_mm256_mullo_epi16(rh, rh), flip), f[p]);
            yyl = dot(yyl, _mm256_xor_si256(_mm256_mullo_epi16(dl, dl), flip), f[p]);
            yyh = dot(yyh, _mm256_xor_si256(_mm256_mullo_epi16(dh, dh), flip), f[p]);
        }
        store_cols(line[0] + j, _mm256_srli_epi32(_mm256_add_epi32(m1l, mu_rnd), 8),
                   _mm256_srli_epi32(_mm256_add_epi32(m1h, mu_rnd), 8));
        store_cols(line[1] + j, _mm256_srli_epi32(_mm256_add_epi32(m2l, mu_rnd), 8),
                   _mm256_srli_epi32(_mm256_add_epi32(m2h, mu_rnd), 8));
        store_split_cols(line[2] + j, line[3] + j, _mm256_add_epi32(xxl, bias), _mm256_add_epi32(xxh, bias));
        store_split_cols(line[4] + j, line[5] + j, _mm256_add_epi32(yyl, bias), _mm256_add_epi32(yyh, bias));
        __m256i xyl = zero, xyh = zero;
        for (int p = 0; p < n_pairs; p++) {
            xyl = dot(xyl, _mm256_xor_si256(_mm256_mullo_epi16(il[p][0], il[p][2]), flip), f[p]);
            xyh = dot(xyh, _mm256_xor_si256(_mm256_mullo_epi16(il[p][1], il[p][3]), flip), f[p]);
        }
        store_split_cols(line[6] + j, line[7] + j, _mm256_add_epi32(xyl, bias), _mm256_add_epi32(xyh, bias));
    }
}

/* Offset low (and high) halves of 8 u32 lanes in order. */
AVX2_FN static inline void store_halves8(uint16_t *lo, uint16_t *hi, __m256i v) {
    const __m256i low16 = _mm256_set1_epi32(0xFFFF), flip = _mm256_set1_epi16((short)0x8000);
    /* packus per 128-bit lane: [lo 0-3, hi 0-3 | lo 4-7, hi 4-7]; the permute puts lo first. */
    const __m256i packed = _mm256_permute4x64_epi64(
        _mm256_packus_epi32(_mm256_and_si256(v, low16), _mm256_srli_epi32(v, 16)), _MM_SHUFFLE(3, 1, 2, 0));
    const __m256i offset = _mm256_xor_si256(packed, flip);
    _mm_storeu_si128((__m128i *)lo, _mm256_castsi256_si128(offset));
    if (hi) _mm_storeu_si128((__m128i *)hi, _mm256_extracti128_si256(offset, 1));
}

/* Vertical pass, any depth and scale (16-bit samples), 8 columns a step with 64-bit sums of
 * squares (the first-half kernel's arithmetic), stored as offset halves. w >= 8. */
AVX2_FN static void vert_wide(const uint16_t *const *rref, const uint16_t *const *rdis,
                              const uint16_t *filt, int fw, int w, int mu_shift, int sq_shift,
                              uint16_t *const *line) {
    const __m256i mu_rnd = _mm256_set1_epi32((int)(1u << (mu_shift - 1)));
    const __m128i mu_sh = _mm_cvtsi32_si128(mu_shift);
    const __m256i sq_rnd = _mm256_set1_epi64x(sq_shift ? (int64_t)1 << (sq_shift - 1) : 0);
    const __m128i sq_sh = _mm_cvtsi32_si128(sq_shift);
    for (int j0 = 0; j0 < w; j0 += 8) {
        const int j = j0 + 8 <= w ? j0 : w - 8;
        __m256i a1 = _mm256_setzero_si256(), a2 = a1;
        __m256i e11 = a1, o11 = a1, e22 = a1, o22 = a1, e12 = a1, o12 = a1;
        for (int k = 0; k < fw; k++) {
            const __m256i f = _mm256_set1_epi32(filt[k]);
            const __m256i r = load_u16x8(rref[k] + j), d = load_u16x8(rdis[k] + j);
            const __m256i fr = _mm256_mullo_epi32(f, r), fd = _mm256_mullo_epi32(f, d);
            a1 = _mm256_add_epi32(a1, fr);
            a2 = _mm256_add_epi32(a2, fd);
            mac64(fr, r, &e11, &o11);
            mac64(fd, d, &e22, &o22);
            mac64(fr, d, &e12, &o12);
        }
        store_halves8(line[0] + j, NULL, _mm256_srl_epi32(_mm256_add_epi32(a1, mu_rnd), mu_sh));
        store_halves8(line[1] + j, NULL, _mm256_srl_epi32(_mm256_add_epi32(a2, mu_rnd), mu_sh));
        store_halves8(line[2] + j, line[3] + j, narrow64(e11, o11, sq_rnd, sq_sh));
        store_halves8(line[4] + j, line[5] + j, narrow64(e22, o22, sq_rnd, sq_sh));
        store_halves8(line[6] + j, line[7] + j, narrow64(e12, o12, sq_rnd, sq_sh));
    }
}

typedef struct row_acc {
    __m256i num_log, den_log, num_lin; /* int64 lanes */
    int64_t num_tab, den_tab;          /* the table parts of num_log and den_log */
    int64_t den_lin;
} row_acc;

/* log2(v) * 2048 of integer-valued doubles v in [2^17, 2^53), as the scalar log2_q11_32 /
 * log2_q11_64, in two parts: with v = 2^e (1 + m / 2^52), the table index v >> (e - 15) is
 * 2^15 + (m >> 37) and the shift e - 15 is the scalar's k; the value is lut[index] + 2048 k.
 * The shifts stay in int64 lanes; the table entries are summed by scalar loads, which cost
 * less than gathers here, the index of a lane that does not count set to 0 (an entry that is
 * 0). */
AVX2_FN static inline __m256i log2_index(__m256d v, __m256i count) {
    const __m256i bits = _mm256_castpd_si256(v);
    const __m256i idx = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi64(bits, 37), _mm256_set1_epi64x(0x7FFF)),
                                        _mm256_set1_epi64x(0x8000));
    return _mm256_and_si256(idx, count);
}

AVX2_FN static inline __m256i log2_shift_q11(__m256d v) {
    const __m256i k = _mm256_sub_epi64(_mm256_srli_epi64(_mm256_castpd_si256(v), 52), _mm256_set1_epi64x(1023 + 15));
    return _mm256_slli_epi64(k, 11);
}

AVX2_FN static inline int64_t table_sum(const uint16_t *lut, __m256i idx) {
    uint64_t i[4];
    _mm256_storeu_si256((__m256i *)i, idx);
    return (int64_t)lut[i[0]] + lut[i[1]] + lut[i[2]] + lut[i[3]];
}

/* The statistic of 4 pixels (int32 lanes of the halves; valid: the lanes that count, all ones
 * or zero per int32), as accumulate_row in integer_vif.c. Doubles do the scalar code's
 * operations in its order; every integer the scalar code forms here is exact in a double. */
AVX2_FN static inline __attribute__((always_inline)) void statistic4(const uint16_t *lut, __m256d limit,
                                                                     __m128i valid, __m128i s11, __m128i s22,
                                                                     __m128i s12, row_acc *acc) {
    const __m128i zero = _mm_setzero_si128(), nsq = _mm_set1_epi32(SIGMA_NSQ);
    s22 = _mm_max_epi32(s22, zero);
    const __m128i lin = _mm_and_si128(valid, _mm_cmplt_epi32(s11, nsq));
    const __m128i logm = _mm_andnot_si128(lin, valid);
    acc->den_lin += __builtin_popcount((unsigned)_mm_movemask_ps(_mm_castsi128_ps(lin)));
    acc->num_lin = _mm256_add_epi64(acc->num_lin, _mm256_cvtepi32_epi64(_mm_and_si128(lin, s22)));
    if (!_mm_movemask_ps(_mm_castsi128_ps(logm))) return;
    const __m256i log64 = _mm256_cvtepi32_epi64(logm);
    const __m256d d11 = _mm256_cvtepi32_pd(s11);
    const __m256d nsq_d = _mm256_set1_pd(SIGMA_NSQ);
    const __m256d den_v = _mm256_add_pd(d11, nsq_d);
    acc->den_tab += table_sum(lut, log2_index(den_v, log64));
    acc->den_log = _mm256_add_epi64(
        acc->den_log, _mm256_and_si256(log64, _mm256_sub_epi64(log2_shift_q11(den_v), _mm256_set1_epi64x(2048 * 17))));
    const __m128i numm = _mm_and_si128(logm, _mm_and_si128(_mm_cmpgt_epi32(s12, zero), _mm_cmpgt_epi32(s22, zero)));
    if (!_mm_movemask_ps(_mm_castsi128_ps(numm))) return;
    const __m256i num64 = _mm256_cvtepi32_epi64(numm);
    const __m256d eps = _mm256_set1_pd(65536 * 1.0e-10);
    const __m256d d12 = _mm256_cvtepi32_pd(s12);
    __m256d g = _mm256_div_pd(d12, _mm256_add_pd(d11, eps));
    __m128i sv = _mm256_cvttpd_epi32(_mm256_sub_pd(_mm256_cvtepi32_pd(s22), _mm256_mul_pd(g, d12)));
    sv = _mm_max_epi32(sv, zero);
    g = _mm256_min_pd(g, limit);
    const __m256d noise = _mm256_add_pd(_mm256_cvtepi32_pd(sv), nsq_d);
    const __m256d gain = _mm256_round_pd(_mm256_mul_pd(_mm256_mul_pd(g, g), d11), _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
    const __m256d signal = _mm256_add_pd(gain, noise);
    acc->num_tab += table_sum(lut, log2_index(signal, num64)) - table_sum(lut, log2_index(noise, num64));
    acc->num_log = _mm256_add_epi64(
        acc->num_log, _mm256_and_si256(num64, _mm256_sub_epi64(log2_shift_q11(signal), log2_shift_q11(noise))));
}

/* Filtered sums of two offset lines at the 8 even (e) and 8 odd (o) columns from x + r (the
 * load at x gives taps k, k+1 of even columns, the load at x + 1 those of odd columns), back
 * to unsigned by adding 2^31. */
AVX2_FN static inline void hsum2(const uint16_t *la, const uint16_t *lb, const __m256i *f, int n_pairs, int x,
                                 __m256i out[4]) {
    __m256i ae = _mm256_setzero_si256(), ao = ae, be = ae, bo = ae;
    for (int p = 0; p < n_pairs; p++, x += 2) {
        ae = dot(ae, _mm256_loadu_si256((const __m256i *)(la + x)), f[p]);
        ao = dot(ao, _mm256_loadu_si256((const __m256i *)(la + x + 1)), f[p]);
        be = dot(be, _mm256_loadu_si256((const __m256i *)(lb + x)), f[p]);
        bo = dot(bo, _mm256_loadu_si256((const __m256i *)(lb + x + 1)), f[p]);
    }
    const __m256i bias = _mm256_set1_epi32((int)0x80000000u);
    out[0] = _mm256_add_epi32(ae, bias);
    out[1] = _mm256_add_epi32(ao, bias);
    out[2] = _mm256_add_epi32(be, bias);
    out[3] = _mm256_add_epi32(bo, bias);
}

/* The horizontal pass of the statistic over the offset lines, 16 columns a step, and the
 * statistic itself. Eight lines of even and odd sums are 16 accumulators, as many as AVX2 has
 * registers, so the lines go two at a time. */
AVX2_FN static void horz_stat(uint16_t *const *line, const uint16_t *filt, int fw, int w, const uint16_t *lut,
                              double gain_limit, row_acc *acc) {
    const __m256d limit = _mm256_set1_pd(gain_limit);
    const int r = fw / 2, n_pairs = (fw + 1) / 2;
    __m256i f[9];
    for (int p = 0; p < n_pairs; p++) f[p] = tap_pair(filt, fw, 2 * p);
    const __m256i rnd16 = _mm256_set1_epi32(32768), lane = _mm256_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14);
    for (int j = 0; j < w; j += 16) {
        __m256i mu[4], xx[4], yy[4], xy[4]; /* [0]/[1]: even/odd of the first line, [2]/[3] the second */
        hsum2(line[0], line[1], f, n_pairs, j - r, mu);
        hsum2(line[2], line[3], f, n_pairs, j - r, xx);
        hsum2(line[4], line[5], f, n_pairs, j - r, yy);
        hsum2(line[6], line[7], f, n_pairs, j - r, xy);
        for (int p = 0; p < 2; p++) {
            /* Lane i is column j + 2i + p. */
            const __m256i valid = _mm256_cmpgt_epi32(_mm256_set1_epi32(w - j - p), lane);
            const __m256i a1 = mu[p], a2 = mu[2 + p];
            const __m256i vxx = _mm256_add_epi32(xx[2 + p], _mm256_srli_epi32(_mm256_add_epi32(xx[p], rnd16), 16));
            const __m256i vyy = _mm256_add_epi32(yy[2 + p], _mm256_srli_epi32(_mm256_add_epi32(yy[p], rnd16), 16));
            const __m256i vxy = _mm256_add_epi32(xy[2 + p], _mm256_srli_epi32(_mm256_add_epi32(xy[p], rnd16), 16));
            const __m256i s11 = _mm256_sub_epi32(vxx, mulhi_round(a1, a1));
            const __m256i s22 = _mm256_sub_epi32(vyy, mulhi_round(a2, a2));
            const __m256i s12 = _mm256_sub_epi32(vxy, mulhi_round(a1, a2));
            statistic4(lut, limit, _mm256_castsi256_si128(valid), _mm256_castsi256_si128(s11),
                       _mm256_castsi256_si128(s22), _mm256_castsi256_si128(s12), acc);
            statistic4(lut, limit, _mm256_extracti128_si256(valid, 1), _mm256_extracti128_si256(s11, 1),
                       _mm256_extracti128_si256(s22, 1), _mm256_extracti128_si256(s12, 1), acc);
        }
    }
}

static inline int64_t sum_epi64(__m256i v) {
    int64_t l[4];
    _mm256_storeu_si256((__m256i *)l, v);
    return l[0] + l[1] + l[2] + l[3];
}

AVX2_FN void svc_vif_stat_row_avx2(const void *const *rref, const void *const *rdis, int u8, const uint16_t *filt,
                                   int fw, int w, int mu_shift, int sq_shift, const uint16_t *log2_lut,
                                   double gain_limit, uint16_t *scratch, int64_t sums[4]) {
    uint16_t *line[N_LINES];
    for (int q = 0; q < N_LINES; q++) line[q] = scratch + (size_t)q * line_len(w) + LINE_MARGIN;
    if (mu_shift == 8 && sq_shift == 0) vert_8bit(rref, rdis, u8, filt, fw, w, line);
    else vert_wide((const uint16_t *const *)rref, (const uint16_t *const *)rdis, filt, fw, w, mu_shift, sq_shift, line);
    for (int q = 0; q < N_LINES; q++) pad_words(line[q], w, fw / 2);
    row_acc acc = { _mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_setzero_si256(), 0, 0, 0 };
    horz_stat(line, filt, fw, w, log2_lut, gain_limit, &acc);
    sums[0] += sum_epi64(acc.num_log) + acc.num_tab;
    sums[1] += sum_epi64(acc.den_log) + acc.den_tab;
    sums[2] += sum_epi64(acc.num_lin);
    sums[3] += acc.den_lin;
}

AVX2_FN void svc_vif_down_row_avx2(const void *const *rref, const void *const *rdis, int u8, const uint16_t *filt,
                                   int fw, int w, int shift, uint16_t *scratch, int wo, uint16_t *oref,
                                   uint16_t *odis) {
    const int r = fw / 2, n_pairs = (fw + 1) / 2;
    uint16_t *tref = scratch + LINE_MARGIN, *tdis = scratch + line_len(w) + LINE_MARGIN;
    const __m256i flip = _mm256_set1_epi16((short)0x8000), bias = _mm256_set1_epi32((int)0x80000000u);
    const __m256i rnd = _mm256_set1_epi32((int)(1u << (shift - 1)));
    const __m128i sh = _mm_cvtsi32_si128(shift);
    __m256i f[9];
    for (int p = 0; p < n_pairs; p++) f[p] = tap_pair(filt, fw, 2 * p);
    /* Vertical: offset samples, taps k and k+1 interleaved, exact 32-bit sums. */
    for (int j0 = 0; j0 < w; j0 += 16) {
        const int j = step16(j0, w);
        __m256i rl = _mm256_setzero_si256(), rh = rl, dl = rl, dh = rl;
        for (int p = 0, k = 0; p < n_pairs; p++, k += 2) {
            const __m256i r0 = _mm256_xor_si256(load_row16(rref[k], j, u8), flip);
            const __m256i d0 = _mm256_xor_si256(load_row16(rdis[k], j, u8), flip);
            const __m256i r1 = k + 1 < fw ? _mm256_xor_si256(load_row16(rref[k + 1], j, u8), flip) : flip;
            const __m256i d1 = k + 1 < fw ? _mm256_xor_si256(load_row16(rdis[k + 1], j, u8), flip) : flip;
            rl = dot(rl, _mm256_unpacklo_epi16(r0, r1), f[p]);
            rh = dot(rh, _mm256_unpackhi_epi16(r0, r1), f[p]);
            dl = dot(dl, _mm256_unpacklo_epi16(d0, d1), f[p]);
            dh = dot(dh, _mm256_unpackhi_epi16(d0, d1), f[p]);
        }
#define NARROW(v) _mm256_srl_epi32(_mm256_add_epi32(_mm256_add_epi32(v, bias), rnd), sh)
        store_cols(tref + j, NARROW(rl), NARROW(rh));
        store_cols(tdis + j, NARROW(dl), NARROW(dh));
#undef NARROW
    }
    pad_words(tref, w, r);
    pad_words(tdis, w, r);
    /* Horizontal at even columns: dword i of a load at 2j - r + k is taps k, k+1 of output
     * j + i; 8 outputs a step, the last step moved back to end at wo (wo >= 8). */
    const __m256i rnd16 = _mm256_set1_epi32(32768);
    for (int j0 = 0; j0 < wo; j0 += 8) {
        const int j = j0 + 8 <= wo ? j0 : wo - 8;
        __m256i ar = _mm256_setzero_si256(), ad = ar;
        for (int p = 0, x = 2 * j - r; p < n_pairs; p++, x += 2) {
            ar = dot(ar, _mm256_loadu_si256((const __m256i *)(tref + x)), f[p]);
            ad = dot(ad, _mm256_loadu_si256((const __m256i *)(tdis + x)), f[p]);
        }
        ar = _mm256_srli_epi32(_mm256_add_epi32(_mm256_add_epi32(ar, bias), rnd16), 16);
        ad = _mm256_srli_epi32(_mm256_add_epi32(_mm256_add_epi32(ad, bias), rnd16), 16);
        store_u16x8(oref + j, ar);
        store_u16x8(odis + j, ad);
    }
}

/* ---- ladders: the statistic row split into the reference's side and the distorted side ----
 * The operations of vert_8bit / vert_wide / horz_stat on the lines of one side; the
 * reference's a1 and sigma1^2 are kept per output row in horz_stat's lane order: word
 * j + 8p + i of a row is column j + 2i + p of the 16-column step at j (rows of
 * svc_vif_ladder_row_len(w) words). */

/* Vertical pass of the reference alone, 8-bit samples at scale 0: lines 0 (mu1), 2 and 3 (xx). */
AVX2_FN static void vert_8bit_ref(const void *const *rref, int u8, const uint16_t *filt, int fw, int w,
                                  uint16_t *const *line) {
    const __m256i flip = _mm256_set1_epi16((short)0x8000), zero = _mm256_setzero_si256();
    const __m256i mu_rnd = _mm256_set1_epi32(128), bias = _mm256_set1_epi32((int)0x80000000u);
    const int n_pairs = (fw + 1) / 2;
    __m256i f[9];
    for (int p = 0; p < n_pairs; p++) f[p] = tap_pair(filt, fw, 2 * p);
    for (int j0 = 0; j0 < w; j0 += 16) {
        const int j = step16(j0, w);
        __m256i m1l = zero, m1h = zero, xxl = zero, xxh = zero;
        for (int p = 0, k = 0; p < n_pairs; p++, k += 2) {
            const __m256i r0 = load_row16(rref[k], j, u8);
            const __m256i r1 = k + 1 < fw ? load_row16(rref[k + 1], j, u8) : zero;
            const __m256i rl = _mm256_unpacklo_epi16(r0, r1), rh = _mm256_unpackhi_epi16(r0, r1);
            m1l = dot(m1l, rl, f[p]);
            m1h = dot(m1h, rh, f[p]);
            xxl = dot(xxl, _mm256_xor_si256(_mm256_mullo_epi16(rl, rl), flip), f[p]);
            xxh = dot(xxh, _mm256_xor_si256(_mm256_mullo_epi16(rh, rh), flip), f[p]);
        }
        store_cols(line[0] + j, _mm256_srli_epi32(_mm256_add_epi32(m1l, mu_rnd), 8),
                   _mm256_srli_epi32(_mm256_add_epi32(m1h, mu_rnd), 8));
        store_split_cols(line[2] + j, line[3] + j, _mm256_add_epi32(xxl, bias), _mm256_add_epi32(xxh, bias));
    }
}

/* Vertical pass of the distorted side, 8-bit samples at scale 0: lines 1 (mu2), 4 and 5 (yy),
 * 6 and 7 (xy, with the reference's rows). */
AVX2_FN static void vert_8bit_dis(const void *const *rref, const void *const *rdis, int u8, const uint16_t *filt,
                                  int fw, int w, uint16_t *const *line) {
    const __m256i flip = _mm256_set1_epi16((short)0x8000), zero = _mm256_setzero_si256();
    const __m256i mu_rnd = _mm256_set1_epi32(128), bias = _mm256_set1_epi32((int)0x80000000u);
    const int n_pairs = (fw + 1) / 2;
    __m256i f[9];
    for (int p = 0; p < n_pairs; p++) f[p] = tap_pair(filt, fw, 2 * p);
    for (int j0 = 0; j0 < w; j0 += 16) {
        const int j = step16(j0, w);
        __m256i m2l = zero, m2h = zero, yyl = zero, yyh = zero, xyl = zero, xyh = zero;
        for (int p = 0, k = 0; p < n_pairs; p++, k += 2) {
            const __m256i r0 = load_row16(rref[k], j, u8), d0 = load_row16(rdis[k], j, u8);
            const __m256i r1 = k + 1 < fw ? load_row16(rref[k + 1], j, u8) : zero;
            const __m256i d1 = k + 1 < fw ? load_row16(rdis[k + 1], j, u8) : zero;
            const __m256i dl = _mm256_unpacklo_epi16(d0, d1), dh = _mm256_unpackhi_epi16(d0, d1);
            m2l = dot(m2l, dl, f[p]);
            m2h = dot(m2h, dh, f[p]);
            yyl = dot(yyl, _mm256_xor_si256(_mm256_mullo_epi16(dl, dl), flip), f[p]);
            yyh = dot(yyh, _mm256_xor_si256(_mm256_mullo_epi16(dh, dh), flip), f[p]);
            xyl = dot(xyl, _mm256_xor_si256(_mm256_mullo_epi16(_mm256_unpacklo_epi16(r0, r1), dl), flip), f[p]);
            xyh = dot(xyh, _mm256_xor_si256(_mm256_mullo_epi16(_mm256_unpackhi_epi16(r0, r1), dh), flip), f[p]);
        }
        store_cols(line[1] + j, _mm256_srli_epi32(_mm256_add_epi32(m2l, mu_rnd), 8),
                   _mm256_srli_epi32(_mm256_add_epi32(m2h, mu_rnd), 8));
        store_split_cols(line[4] + j, line[5] + j, _mm256_add_epi32(yyl, bias), _mm256_add_epi32(yyh, bias));
        store_split_cols(line[6] + j, line[7] + j, _mm256_add_epi32(xyl, bias), _mm256_add_epi32(xyh, bias));
    }
}

/* Vertical pass of the reference alone, 16-bit samples: lines 0, 2, 3 as vert_wide. */
AVX2_FN static void vert_wide_ref(const uint16_t *const *rref, const uint16_t *filt, int fw, int w, int mu_shift,
                                  int sq_shift, uint16_t *const *line) {
    const __m256i mu_rnd = _mm256_set1_epi32((int)(1u << (mu_shift - 1)));
    const __m128i mu_sh = _mm_cvtsi32_si128(mu_shift);
    const __m256i sq_rnd = _mm256_set1_epi64x(sq_shift ? (int64_t)1 << (sq_shift - 1) : 0);
    const __m128i sq_sh = _mm_cvtsi32_si128(sq_shift);
    for (int j0 = 0; j0 < w; j0 += 8) {
        const int j = j0 + 8 <= w ? j0 : w - 8;
        __m256i a1 = _mm256_setzero_si256(), e11 = a1, o11 = a1;
        for (int k = 0; k < fw; k++) {
            const __m256i f = _mm256_set1_epi32(filt[k]);
            const __m256i r = load_u16x8(rref[k] + j);
            const __m256i fr = _mm256_mullo_epi32(f, r);
            a1 = _mm256_add_epi32(a1, fr);
            mac64(fr, r, &e11, &o11);
        }
        store_halves8(line[0] + j, NULL, _mm256_srl_epi32(_mm256_add_epi32(a1, mu_rnd), mu_sh));
        store_halves8(line[2] + j, line[3] + j, narrow64(e11, o11, sq_rnd, sq_sh));
    }
}

/* Vertical pass of the distorted side, 16-bit samples: lines 1, 4..7 as vert_wide. */
AVX2_FN static void vert_wide_dis(const uint16_t *const *rref, const uint16_t *const *rdis, const uint16_t *filt,
                                  int fw, int w, int mu_shift, int sq_shift, uint16_t *const *line) {
    const __m256i mu_rnd = _mm256_set1_epi32((int)(1u << (mu_shift - 1)));
    const __m128i mu_sh = _mm_cvtsi32_si128(mu_shift);
    const __m256i sq_rnd = _mm256_set1_epi64x(sq_shift ? (int64_t)1 << (sq_shift - 1) : 0);
    const __m128i sq_sh = _mm_cvtsi32_si128(sq_shift);
    for (int j0 = 0; j0 < w; j0 += 8) {
        const int j = j0 + 8 <= w ? j0 : w - 8;
        __m256i a2 = _mm256_setzero_si256(), e22 = a2, o22 = a2, e12 = a2, o12 = a2;
        for (int k = 0; k < fw; k++) {
            const __m256i f = _mm256_set1_epi32(filt[k]);
            const __m256i r = load_u16x8(rref[k] + j), d = load_u16x8(rdis[k] + j);
            const __m256i fr = _mm256_mullo_epi32(f, r), fd = _mm256_mullo_epi32(f, d);
            a2 = _mm256_add_epi32(a2, fd);
            mac64(fd, d, &e22, &o22);
            mac64(fr, d, &e12, &o12);
        }
        store_halves8(line[1] + j, NULL, _mm256_srl_epi32(_mm256_add_epi32(a2, mu_rnd), mu_sh));
        store_halves8(line[4] + j, line[5] + j, narrow64(e22, o22, sq_rnd, sq_sh));
        store_halves8(line[6] + j, line[7] + j, narrow64(e12, o12, sq_rnd, sq_sh));
    }
}

/* hsum2 of one offset line: out[0] even, out[1] odd columns. */
AVX2_FN static inline void hsum1(const uint16_t *la, const __m256i *f, int n_pairs, int x, __m256i out[2]) {
    __m256i ae = _mm256_setzero_si256(), ao = ae;
    for (int p = 0; p < n_pairs; p++, x += 2) {
        ae = dot(ae, _mm256_loadu_si256((const __m256i *)(la + x)), f[p]);
        ao = dot(ao, _mm256_loadu_si256((const __m256i *)(la + x + 1)), f[p]);
    }
    const __m256i bias = _mm256_set1_epi32((int)0x80000000u);
    out[0] = _mm256_add_epi32(ae, bias);
    out[1] = _mm256_add_epi32(ao, bias);
}

/* The statistic's denominators of 4 pixels (valid: the lanes that count), from sigma1^2 alone:
 * den_log, den_tab and den_lin as statistic4 adds them. */
AVX2_FN static inline void statistic4_den(const uint16_t *lut, __m128i valid, __m128i s11, row_acc *acc) {
    const __m128i nsq = _mm_set1_epi32(SIGMA_NSQ);
    const __m128i lin = _mm_and_si128(valid, _mm_cmplt_epi32(s11, nsq));
    const __m128i logm = _mm_andnot_si128(lin, valid);
    acc->den_lin += __builtin_popcount((unsigned)_mm_movemask_ps(_mm_castsi128_ps(lin)));
    if (!_mm_movemask_ps(_mm_castsi128_ps(logm))) return;
    const __m256i log64 = _mm256_cvtepi32_epi64(logm);
    const __m256d den_v = _mm256_add_pd(_mm256_cvtepi32_pd(s11), _mm256_set1_pd(SIGMA_NSQ));
    acc->den_tab += table_sum(lut, log2_index(den_v, log64));
    acc->den_log = _mm256_add_epi64(
        acc->den_log, _mm256_and_si256(log64, _mm256_sub_epi64(log2_shift_q11(den_v), _mm256_set1_epi64x(2048 * 17))));
}

/* The rest of statistic4: num_log, num_tab and num_lin. */
AVX2_FN static inline __attribute__((always_inline)) void statistic4_num(const uint16_t *lut, __m256d limit,
                                                                         __m128i valid, __m128i s11, __m128i s22,
                                                                         __m128i s12, row_acc *acc) {
    const __m128i zero = _mm_setzero_si128(), nsq = _mm_set1_epi32(SIGMA_NSQ);
    s22 = _mm_max_epi32(s22, zero);
    const __m128i lin = _mm_and_si128(valid, _mm_cmplt_epi32(s11, nsq));
    const __m128i logm = _mm_andnot_si128(lin, valid);
    acc->num_lin = _mm256_add_epi64(acc->num_lin, _mm256_cvtepi32_epi64(_mm_and_si128(lin, s22)));
    const __m128i numm = _mm_and_si128(logm, _mm_and_si128(_mm_cmpgt_epi32(s12, zero), _mm_cmpgt_epi32(s22, zero)));
    if (!_mm_movemask_ps(_mm_castsi128_ps(numm))) return;
    const __m256i num64 = _mm256_cvtepi32_epi64(numm);
    const __m256d nsq_d = _mm256_set1_pd(SIGMA_NSQ);
    const __m256d eps = _mm256_set1_pd(65536 * 1.0e-10);
    const __m256d d11 = _mm256_cvtepi32_pd(s11);
    const __m256d d12 = _mm256_cvtepi32_pd(s12);
    __m256d g = _mm256_div_pd(d12, _mm256_add_pd(d11, eps));
    __m128i sv = _mm256_cvttpd_epi32(_mm256_sub_pd(_mm256_cvtepi32_pd(s22), _mm256_mul_pd(g, d12)));
    sv = _mm_max_epi32(sv, zero);
    g = _mm256_min_pd(g, limit);
    const __m256d noise = _mm256_add_pd(_mm256_cvtepi32_pd(sv), nsq_d);
    const __m256d gain = _mm256_round_pd(_mm256_mul_pd(_mm256_mul_pd(g, g), d11), _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
    const __m256d signal = _mm256_add_pd(gain, noise);
    acc->num_tab += table_sum(lut, log2_index(signal, num64)) - table_sum(lut, log2_index(noise, num64));
    acc->num_log = _mm256_add_epi64(
        acc->num_log, _mm256_and_si256(num64, _mm256_sub_epi64(log2_shift_q11(signal), log2_shift_q11(noise))));
}

/* Adds a row's accumulators to sums (num_log, den_log, num_lin, den_lin). */
static inline void add_sums(const row_acc *acc, int64_t sums[4]) {
    sums[0] += sum_epi64(acc->num_log) + acc->num_tab;
    sums[1] += sum_epi64(acc->den_log) + acc->den_tab;
    sums[2] += sum_epi64(acc->num_lin);
    sums[3] += acc->den_lin;
}

/* Horizontal pass of the reference's lines: a1 and sigma1^2 in lane order (see above), and the
 * row's denominators. */
AVX2_FN static void horz_ref(uint16_t *const *line, const uint16_t *filt, int fw, int w, uint32_t *a1, int32_t *s11,
                             const uint16_t *lut, row_acc *acc) {
    const __m256i lane = _mm256_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14);
    const int r = fw / 2, n_pairs = (fw + 1) / 2;
    __m256i f[9];
    for (int p = 0; p < n_pairs; p++) f[p] = tap_pair(filt, fw, 2 * p);
    const __m256i rnd16 = _mm256_set1_epi32(32768);
    for (int j = 0; j < w; j += 16) {
        __m256i mu[2], xl[2], xh[2];
        hsum1(line[0], f, n_pairs, j - r, mu);
        hsum1(line[2], f, n_pairs, j - r, xl);
        hsum1(line[3], f, n_pairs, j - r, xh);
        for (int p = 0; p < 2; p++) {
            const __m256i vxx = _mm256_add_epi32(xh[p], _mm256_srli_epi32(_mm256_add_epi32(xl[p], rnd16), 16));
            const __m256i v11 = _mm256_sub_epi32(vxx, mulhi_round(mu[p], mu[p]));
            const __m256i valid = _mm256_cmpgt_epi32(_mm256_set1_epi32(w - j - p), lane);
            _mm256_storeu_si256((__m256i *)(a1 + j + 8 * p), mu[p]);
            _mm256_storeu_si256((__m256i *)(s11 + j + 8 * p), v11);
            statistic4_den(lut, _mm256_castsi256_si128(valid), _mm256_castsi256_si128(v11), acc);
            statistic4_den(lut, _mm256_extracti128_si256(valid, 1), _mm256_extracti128_si256(v11, 1), acc);
        }
    }
}

/* Horizontal pass of the distorted side's lines and the statistic's numerators, with the
 * reference's a1 and sigma1^2 of the row. */
AVX2_FN static void horz_dis(uint16_t *const *line, const uint16_t *filt, int fw, int w, const uint32_t *ra1,
                             const int32_t *rs11, const uint16_t *lut, double gain_limit, row_acc *acc) {
    const __m256d limit = _mm256_set1_pd(gain_limit);
    const int r = fw / 2, n_pairs = (fw + 1) / 2;
    __m256i f[9];
    for (int p = 0; p < n_pairs; p++) f[p] = tap_pair(filt, fw, 2 * p);
    const __m256i rnd16 = _mm256_set1_epi32(32768), lane = _mm256_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14);
    for (int j = 0; j < w; j += 16) {
        __m256i mu[2], yy[4], xy[4];
        hsum1(line[1], f, n_pairs, j - r, mu);
        hsum2(line[4], line[5], f, n_pairs, j - r, yy);
        hsum2(line[6], line[7], f, n_pairs, j - r, xy);
        for (int p = 0; p < 2; p++) {
            const __m256i valid = _mm256_cmpgt_epi32(_mm256_set1_epi32(w - j - p), lane);
            const __m256i a1 = _mm256_loadu_si256((const __m256i *)(ra1 + j + 8 * p)), a2 = mu[p];
            const __m256i s11 = _mm256_loadu_si256((const __m256i *)(rs11 + j + 8 * p));
            const __m256i vyy = _mm256_add_epi32(yy[2 + p], _mm256_srli_epi32(_mm256_add_epi32(yy[p], rnd16), 16));
            const __m256i vxy = _mm256_add_epi32(xy[2 + p], _mm256_srli_epi32(_mm256_add_epi32(xy[p], rnd16), 16));
            const __m256i s22 = _mm256_sub_epi32(vyy, mulhi_round(a2, a2));
            const __m256i s12 = _mm256_sub_epi32(vxy, mulhi_round(a1, a2));
            statistic4_num(lut, limit, _mm256_castsi256_si128(valid), _mm256_castsi256_si128(s11),
                           _mm256_castsi256_si128(s22), _mm256_castsi256_si128(s12), acc);
            statistic4_num(lut, limit, _mm256_extracti128_si256(valid, 1), _mm256_extracti128_si256(s11, 1),
                           _mm256_extracti128_si256(s22, 1), _mm256_extracti128_si256(s12, 1), acc);
        }
    }
}

AVX2_FN void svc_vif_ref_row_avx2(const void *const *rref, int u8, const uint16_t *filt, int fw, int w, int mu_shift,
                                  int sq_shift, const uint16_t *log2_lut, uint16_t *scratch, uint32_t *a1, int32_t *s11,
                                  int64_t sums[4]) {
    uint16_t *line[N_LINES];
    for (int q = 0; q < N_LINES; q++) line[q] = scratch + (size_t)q * line_len(w) + LINE_MARGIN;
    if (mu_shift == 8 && sq_shift == 0) vert_8bit_ref(rref, u8, filt, fw, w, line);
    else vert_wide_ref((const uint16_t *const *)rref, filt, fw, w, mu_shift, sq_shift, line);
    pad_words(line[0], w, fw / 2);
    pad_words(line[2], w, fw / 2);
    pad_words(line[3], w, fw / 2);
    row_acc acc = { _mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_setzero_si256(), 0, 0, 0 };
    horz_ref(line, filt, fw, w, a1, s11, log2_lut, &acc);
    add_sums(&acc, sums);
}

AVX2_FN void svc_vif_dis_row_avx2(const void *const *rref, const void *const *rdis, int u8, const uint16_t *filt,
                                  int fw, int w, int mu_shift, int sq_shift, const uint32_t *a1, const int32_t *s11,
                                  const uint16_t *log2_lut, double gain_limit, uint16_t *scratch, int64_t sums[4]) {
    uint16_t *line[N_LINES];
    for (int q = 0; q < N_LINES; q++) line[q] = scratch + (size_t)q * line_len(w) + LINE_MARGIN;
    if (mu_shift == 8 && sq_shift == 0) vert_8bit_dis(rref, rdis, u8, filt, fw, w, line);
    else vert_wide_dis((const uint16_t *const *)rref, (const uint16_t *const *)rdis, filt, fw, w, mu_shift, sq_shift,
                       line);
    pad_words(line[1], w, fw / 2);
    for (int q = 4; q < N_LINES; q++) pad_words(line[q], w, fw / 2);
    row_acc acc = { _mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_setzero_si256(), 0, 0, 0 };
    horz_dis(line, filt, fw, w, a1, s11, log2_lut, gain_limit, &acc);
    add_sums(&acc, sums);
}

/* svc_vif_down_row_avx2 of one side: the ladders' pyramids (the reference's once per frame, then
 * each rendition's). */
AVX2_FN void svc_vif_down1_row_avx2(const void *const *rows, int u8, const uint16_t *filt, int fw, int w, int shift,
                                    uint16_t *scratch, int wo, uint16_t *out) {
    const int r = fw / 2, n_pairs = (fw + 1) / 2;
    uint16_t *t = scratch + LINE_MARGIN;
    const __m256i flip = _mm256_set1_epi16((short)0x8000), bias = _mm256_set1_epi32((int)0x80000000u);
    const __m256i rnd = _mm256_set1_epi32((int)(1u << (shift - 1)));
    const __m128i sh = _mm_cvtsi32_si128(shift);
    __m256i f[9];
    for (int p = 0; p < n_pairs; p++) f[p] = tap_pair(filt, fw, 2 * p);
    for (int j0 = 0; j0 < w; j0 += 16) {
        const int j = step16(j0, w);
        __m256i lo = _mm256_setzero_si256(), hi = lo;
        for (int p = 0, k = 0; p < n_pairs; p++, k += 2) {
            const __m256i r0 = _mm256_xor_si256(load_row16(rows[k], j, u8), flip);
            const __m256i r1 = k + 1 < fw ? _mm256_xor_si256(load_row16(rows[k + 1], j, u8), flip) : flip;
            lo = dot(lo, _mm256_unpacklo_epi16(r0, r1), f[p]);
            hi = dot(hi, _mm256_unpackhi_epi16(r0, r1), f[p]);
        }
#define NARROW(v) _mm256_srl_epi32(_mm256_add_epi32(_mm256_add_epi32(v, bias), rnd), sh)
        store_cols(t + j, NARROW(lo), NARROW(hi));
#undef NARROW
    }
    pad_words(t, w, r);
    const __m256i rnd16 = _mm256_set1_epi32(32768);
    for (int j0 = 0; j0 < wo; j0 += 8) {
        const int j = j0 + 8 <= wo ? j0 : wo - 8;
        __m256i a = _mm256_setzero_si256();
        for (int p = 0, x = 2 * j - r; p < n_pairs; p++, x += 2)
            a = dot(a, _mm256_loadu_si256((const __m256i *)(t + x)), f[p]);
        store_u16x8(out + j, _mm256_srli_epi32(_mm256_add_epi32(_mm256_add_epi32(a, bias), rnd16), 16));
    }
}
#endif
