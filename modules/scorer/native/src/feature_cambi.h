/*
 * Private interface between cambi (feature_cambi.c) and its AVX2 kernel
 * (feature_cambi_avx2.c): row[c] += delta for c in [lo, hi), the sliding-histogram update that
 * dominates cambi. Integer arithmetic: every backend gives the same histograms.
 */
#ifndef SVC_FEATURE_CAMBI_H
#define SVC_FEATURE_CAMBI_H

#include <stdint.h>

typedef void (*svc_cambi_range_add)(uint16_t *row, int lo, int hi, int delta);

#if defined(__x86_64__) || defined(__i386__)
void svc_cambi_range_add_avx2(uint16_t *row, int lo, int hi, int delta);
#endif

#endif
