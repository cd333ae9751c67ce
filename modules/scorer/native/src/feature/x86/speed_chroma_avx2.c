/* AVX2 kernels of speed_chroma (contracts in speed_chroma.h): matrix products 8
 * columns a step, covariances 4 neighbourhood columns a step (the fifth in a scalar lane). */
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#include <stddef.h>

#include "../speed_chroma.h"

#define DIM SVC_SPEED_DIM
#define BLOCK SVC_SPEED_BLOCK

__attribute__((target("avx2"))) void svc_speed_mat_mul_avx2(float *dst, const float *a, const float *b, int rows,
                                                            int cols) {
    const __m256i iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const __m256i tail = _mm256_cmpgt_epi32(_mm256_set1_epi32(cols % 8), iota);
    for (int i = 0; i < rows; i++) {
        const float *ai = a + (size_t)i * DIM;
        float *di = dst + (size_t)i * cols;
        int j = 0;
        for (; j + 8 <= cols; j += 8) {
            __m256 acc = _mm256_setzero_ps();
            for (int k = 0; k < DIM; k++)
                acc = _mm256_add_ps(acc, _mm256_mul_ps(_mm256_set1_ps(ai[k]), _mm256_loadu_ps(b + (size_t)k * cols + j)));
            _mm256_storeu_ps(di + j, acc);
        }
        if (j < cols) {
            __m256 acc = _mm256_setzero_ps();
            for (int k = 0; k < DIM; k++)
                acc = _mm256_add_ps(acc, _mm256_mul_ps(_mm256_set1_ps(ai[k]), _mm256_maskload_ps(b + (size_t)k * cols + j, tail)));
            _mm256_maskstore_ps(di + j, tail, acc);
        }
    }
}

__attribute__((target("avx2"))) void svc_speed_covariance_avx2(const float *f, int st, int subw, int subh,
                                                               const float *mean, float *cov) {
    const double count = (double)((size_t)subw * (size_t)subh);
    for (int p = 0; p < DIM; p++) {
        const int rp = p / BLOCK, cp = p % BLOCK;
        const double mp = mean[p];
        for (int rq = 0; rq <= rp; rq++) {
            const __m256d mq4 = _mm256_cvtps_pd(_mm_loadu_ps(mean + rq * BLOCK));
            const double mq_last = mean[rq * BLOCK + 4];
            __m256d acc4 = _mm256_setzero_pd();
            double acc_last = 0;
            for (int i = 0; i < subh; i++) {
                const float *ra = f + (size_t)(rp + i) * st + cp, *rb = f + (size_t)(rq + i) * st;
                for (int j = 0; j < subw; j++) {
                    const double da = (double)ra[j] - mp;
                    const __m256d db = _mm256_sub_pd(_mm256_cvtps_pd(_mm_loadu_ps(rb + j)), mq4);
                    acc4 = _mm256_add_pd(acc4, _mm256_mul_pd(_mm256_set1_pd(da), db));
                    acc_last += da * ((double)rb[j + 4] - mq_last);
                }
            }
            double accs[BLOCK];
            _mm256_storeu_pd(accs, acc4);
            accs[4] = acc_last;
            for (int cq = 0; cq < BLOCK; cq++) {
                const int q = rq * BLOCK + cq;
                if (q > p) break;
                const float cv = (float)(accs[cq] / count);
                cov[p * DIM + q] = cov[q * DIM + p] = cv;
            }
        }
    }
}

__attribute__((target("avx2"))) void svc_speed_axpy_avx2(float *row, float c, const float *in, int w) {
    const __m256 vc = _mm256_set1_ps(c);
    int j = 0;
    for (; j + 8 <= w; j += 8)
        _mm256_storeu_ps(row + j, _mm256_add_ps(_mm256_loadu_ps(row + j), _mm256_mul_ps(vc, _mm256_loadu_ps(in + j))));
    for (; j < w; j++) row[j] = row[j] + c * in[j];
}

__attribute__((target("avx2"))) void svc_speed_load8_avx2(const uint8_t *in, float *out, int w) {
    const __m256 bias = _mm256_set1_ps(-128.0f);
    int x = 0;
    for (; x + 8 <= w; x += 8) {
        const __m128i v = _mm_loadl_epi64((const __m128i *)(in + x));
        _mm256_storeu_ps(out + x, _mm256_add_ps(_mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(v)), bias));
    }
    for (; x < w; x++) out[x] = (float)in[x] + -128;
}
#else
typedef int svc_no_avx2_speed_chroma; /* an empty translation unit is not ISO C */
#endif
