/* AVX2 kernels of float_vif (contract in float_vif.h), bit-identical to the scalar ones. */
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>

#include "../float_vif.h"

#define AVX2_FN __attribute__((target("avx2")))

#define DEFINE_AXPY(NAME, VPRODUCT, PRODUCT)                                                 \
    AVX2_FN static void NAME(float *acc, float c, const float *x, const float *y, int n) { \
        const __m256 vc = _mm256_set1_ps(c);                                                \
        int j = 0;                                                                          \
        for (; j + 8 <= n; j += 8) {                                                        \
            const __m256 vx = _mm256_loadu_ps(x + j), vy = _mm256_loadu_ps(y + j);          \
            (void)vx, (void)vy;                                                             \
            const __m256 p = _mm256_mul_ps(vc, (VPRODUCT));                                 \
            _mm256_storeu_ps(acc + j, _mm256_add_ps(_mm256_loadu_ps(acc + j), p));          \
        }                                                                                   \
        for (; j < n; j++) acc[j] += c * (PRODUCT);                                         \
    }

DEFINE_AXPY(axpy_x, vx, x[j])
DEFINE_AXPY(axpy_y, vy, y[j])
DEFINE_AXPY(axpy_xx, _mm256_mul_ps(vx, vx), x[j] * x[j])
DEFINE_AXPY(axpy_yy, _mm256_mul_ps(vy, vy), y[j] * y[j])
DEFINE_AXPY(axpy_xy, _mm256_mul_ps(vx, vy), x[j] * y[j])

const svc_fvif_axpy svc_fvif_axpy_avx2[SVC_FVIF_PRODUCTS] = { axpy_x, axpy_y, axpy_xx, axpy_yy, axpy_xy };
#else
typedef int svc_no_avx2_float_vif; /* an empty translation unit is not ISO C */
#endif
