/* AVX2 kernel of cambi (contract in feature_cambi.h): 16 histogram counters per add. */
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>

#include "feature_cambi.h"

__attribute__((target("avx2"))) void svc_cambi_range_add_avx2(uint16_t *row, int lo, int hi, int delta) {
    const __m256i d = _mm256_set1_epi16((short)delta);
    int c = lo;
    for (; c + 16 <= hi; c += 16) {
        __m256i *at = (__m256i *)(row + c);
        _mm256_storeu_si256(at, _mm256_add_epi16(_mm256_loadu_si256(at), d));
    }
    for (; c < hi; c++) row[c] = (uint16_t)(row[c] + delta);
}
#else
typedef int svc_no_avx2_cambi; /* an empty translation unit is not ISO C */
#endif
