/*
 * float_motion: the reference's "float_motion" with default options - luma on the 8-bit float
 * scale minus 128, blurred by the 5-tap Gaussian {0.054488685, 0.244201342, 0.402619947,
 * 0.244201342, 0.054488685} (vertical pass, then horizontal; borders reflect without
 * repeating the edge, -1 -> 1, n -> n-2), and the mean absolute difference of two
 * consecutive blurred frames.
 * Outputs per frame, from d[i] = diff(frame i-1, frame i) (d[0] = 0), as the integer motion:
 *   motion = d[i];  motion2 = min(d[i], d[i+1]) (d[i] on the first and last frames);
 *   motion3 = motion2, except on the first frame: d[1] (0 for a one-frame input).
 * The blur sums its taps in order in float (one multiply, one add per tap, from 0), as the
 * reference's convolution does in its vector loops and at the borders alike; the differences
 * |a - b| are summed per row in float, the row sums in float, and that sum divided in float by
 * w h (as the reference's image SAD does; summing the rows in double, as before, was up to
 * 1.5e-5 off on the fixtures).
 */
#include <math.h>
#include <stdlib.h>

#include "extractor.h"

#define TAPS 5
#define RADIUS 2

static const float blur_taps[TAPS] = { 0.054488685f, 0.244201342f, 0.402619947f, 0.244201342f, 0.054488685f };

static const char *const names[3] = { "motion2", "motion3", "motion" };
enum { OUT_MOTION2, OUT_MOTION3, OUT_MOTION };

typedef struct fmotion_state {
    int w, h, bpc;
} fmotion_state;

static void *fm_create(int w, int h, int bpc, int cpu) {
    (void)cpu;
    if (w < RADIUS + 1 || h < RADIUS + 1 || w > 16384 || h > 16384) return NULL;
    if (bpc != 8 && bpc != 10 && bpc != 12 && bpc != 16) return NULL;
    fmotion_state *s = malloc(sizeof *s);
    if (s) *s = (fmotion_state){ .w = w, .h = h, .bpc = bpc };
    return s;
}

static const char *fm_backend(const void *state) {
    (void)state;
    return "scalar";
}

static void fm_destroy(void *state) { free(state); }

static inline int reflect(int i, int n) { return i < 0 ? -i : (i >= n ? 2 * n - i - 2 : i); }

/* One tap sum in order: one multiply and one add per tap, from 0. */
static inline float seq_sum(const float *v) {
    float acc = 0.0f;
    for (int k = 0; k < TAPS; k++) acc += blur_taps[k] * v[k];
    return acc;
}

/* One blurred row i of a luma (w x h, packed 16-bit) into out, using col (w floats). */
static void blur_row(const fmotion_state *s, const uint16_t *luma, int i, float *col, float *out) {
    const int w = s->w, h = s->h;
    const float div = s->bpc == 8 ? 1.0f : (float)(1 << (s->bpc - 8));
    float v[TAPS];
    for (int j = 0; j < w; j++) {
        for (int k = 0; k < TAPS; k++) {
            const float x = (float)luma[(size_t)reflect(i - RADIUS + k, h) * w + j];
            v[k] = (s->bpc == 8 ? x : x / div) - 128.0f;
        }
        col[j] = seq_sum(v);
    }
    for (int j = 0; j < w; j++) {
        for (int k = 0; k < TAPS; k++) v[k] = col[reflect(j - RADIUS + k, w)];
        out[j] = seq_sum(v);
    }
}

static double fm_diff(const void *state, const uint16_t *a, const uint16_t *b) {
    const fmotion_state *s = state;
    float *buf = malloc(sizeof(float) * (size_t)s->w * 3);
    if (!buf) return NAN;
    float *col = buf, *ra = buf + s->w, *rb = buf + 2 * s->w;
    float sum = 0.0f;
    for (int i = 0; i < s->h; i++) {
        blur_row(s, a, i, col, ra);
        blur_row(s, b, i, col, rb);
        float row = 0.0f;
        for (int j = 0; j < s->w; j++) row += fabsf(ra[j] - rb[j]);
        sum += row;
    }
    free(buf);
    return (double)(sum / (float)(s->w * s->h));
}

static void fm_derive(double d, double d_next, int first, int last, const double *opts, double *out) {
    (void)opts;
    out[OUT_MOTION] = d;
    out[OUT_MOTION2] = first || last ? d : (d < d_next ? d : d_next);
    out[OUT_MOTION3] = first ? (last ? 0.0 : d_next) : out[OUT_MOTION2];
}

const svc_temporal svc_temporal_float_motion = {
    .name = "float_motion",
    .n_outputs = 3,
    .output_names = names,
    .create = fm_create,
    .backend = fm_backend,
    .diff = fm_diff,
    .destroy = fm_destroy,
    .derive = fm_derive,
};
