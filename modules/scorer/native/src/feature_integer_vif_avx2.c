/*
 * AVX2 filtering kernels of the integer VIF (see feature_integer_vif.c for the algorithm
 * and the kernel contracts). Integer only, so results are bit-identical to the scalar
 * kernels: 8 columns per vector in 32-bit lanes; sums of squares, which need 64 bits,
 * are split into even and odd lanes multiplied with _mm256_mul_epu32. Columns left over
 * after the last full vector go to the scalar kernel (feature_integer_vif.h).
 * Built with -mavx2 in the library; the target attribute lets the dev harness build it
 * without that flag.
 */
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#include <stdint.h>

#include "feature_integer_vif.h"

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
#endif
