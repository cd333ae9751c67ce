/*
 * The hard-cut measure of shot detection, on the reference only: the histogram distance of the
 * lumas of two consecutive reference frames, half the sum of absolute differences of their
 * normalised 64-bin luma histograms (0: the same distribution, 1: disjoint ones). A histogram
 * ignores where things are, so motion (even fast) moves it little, while a cut to other content
 * moves most of it. Each frame's histogram is taken once, on every second sample of every second
 * row (a quarter of the luma: a few hundred-thousandths of a frame's scoring time at 1080p),
 * and needs no other frame: the distance of frame i needs only frame i - 1, as motion does.
 * Which distances are cuts (threshold, neighbours, shortest shot) is decided by the caller over
 * the per-frame series (modules/scorer/shots.ts).
 */
#include "shot_cut.h"

void svc_shot_histogram(const svc_picture *ref, uint32_t hist[SVC_SHOT_BINS]) {
    const svc_plane *y = &ref->plane[0];
    const int shift = ref->bpc - 6; /* 64 bins over the sample range */
    for (int b = 0; b < SVC_SHOT_BINS; b++) hist[b] = 0;
    for (int row = 0; row < y->h; row += 2) {
        const uint8_t *line = (const uint8_t *)y->data + (ptrdiff_t)row * y->stride;
        if (ref->bpc == 8) {
            for (int x = 0; x < y->w; x += 2) hist[line[x] >> 2]++;
        } else {
            const uint16_t *wide = (const uint16_t *)line;
            for (int x = 0; x < y->w; x += 2) {
                const unsigned bin = (unsigned)wide[x] >> shift;
                hist[bin < SVC_SHOT_BINS ? bin : SVC_SHOT_BINS - 1]++;
            }
        }
    }
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
