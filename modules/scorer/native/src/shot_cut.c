/*
 * The hard-cut measure of shot detection, on the reference only: the histogram distance of the
 * lumas of two consecutive reference frames, half the sum of absolute differences of their
 * normalised 64-bin luma histograms (0: the same distribution, 1: disjoint ones). A histogram
 * ignores where things are, so motion (even fast) moves it little, while a cut to other content
 * moves most of it. Each frame's histogram is taken once, on 1/16 of its luma samples (see
 * svc_shot_histogram), and needs no other frame: the distance of frame i needs only frame i - 1,
 * as motion does.
 * Which distances are cuts (threshold, neighbours, shortest shot) is decided by the caller over
 * the per-frame series (modules/scorer/shots.ts).
 */
#include "shot_cut.h"

/* Every fourth sample of every fourth row: 1/16 of the luma (130 thousand samples at 1080p, 4800
 * at 320x240), plenty for 64 bins. Two interleaved counts halve the store-to-load chains of a
 * flat area (every sample in one bin). */
#define SVC_SHOT_STEP 4

void svc_shot_histogram(const svc_picture *ref, uint32_t hist[SVC_SHOT_BINS]) {
    const svc_plane *y = &ref->plane[0];
    const int shift = ref->bpc - 6; /* 64 bins over the sample range */
    uint32_t even[SVC_SHOT_BINS] = { 0 }, odd[SVC_SHOT_BINS] = { 0 };
    for (int row = 0; row < y->h; row += SVC_SHOT_STEP) {
        const uint8_t *line = (const uint8_t *)y->data + (ptrdiff_t)row * y->stride;
        const uint16_t *wide = (const uint16_t *)line;
        int x = 0;
        for (; x + SVC_SHOT_STEP < y->w; x += 2 * SVC_SHOT_STEP) {
            const unsigned a = ref->bpc == 8 ? line[x] : wide[x];
            const unsigned b = ref->bpc == 8 ? line[x + SVC_SHOT_STEP] : wide[x + SVC_SHOT_STEP];
            even[(a >> shift) & (SVC_SHOT_BINS - 1)]++;
            odd[(b >> shift) & (SVC_SHOT_BINS - 1)]++;
        }
        if (x < y->w) even[((ref->bpc == 8 ? line[x] : wide[x]) >> shift) & (SVC_SHOT_BINS - 1)]++;
    }
    for (int b = 0; b < SVC_SHOT_BINS; b++) hist[b] = even[b] + odd[b];
}

double svc_shot_distance(const uint32_t a[SVC_SHOT_BINS], const uint32_t b[SVC_SHOT_BINS]) {
    uint64_t count = 0, moved = 0;
    for (int k = 0; k < SVC_SHOT_BINS; k++) {
        count += a[k];
        moved += a[k] > b[k] ? a[k] - b[k] : b[k] - a[k];
    }
    /* Both histograms count the same samples (one geometry per job). */
    return count ? (double)moved / (2.0 * (double)count) : 0.0;
}
