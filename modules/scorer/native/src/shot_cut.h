/* The hard-cut measure of shot detection (shot_cut.c). */
#ifndef SVC_SHOT_CUT_H
#define SVC_SHOT_CUT_H

#include "internal.h"

#define SVC_SHOT_BINS 64

/* The luma histogram of a reference picture (a quarter of its samples). */
void svc_shot_histogram(const svc_picture *ref, uint32_t hist[SVC_SHOT_BINS]);
/* Histogram distance of two frames, 0..1. */
double svc_shot_distance(const uint32_t a[SVC_SHOT_BINS], const uint32_t b[SVC_SHOT_BINS]);

#endif
