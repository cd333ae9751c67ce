/*
 * float_psnr: luma PSNR as the reference's "float_psnr" reports it. The reference converts
 * samples to floats on the 8-bit scale (v / 2^(bpc-8)) with the peak (2^bpc - 1) / 2^(bpc-8)
 * on that scale; every difference and square is exact there,
 * so the score is the integer luma PSNR: 10 log10(peak^2 / MSE) with the peak 2^bpc - 1, MSE
 * floored at 1e-10 (on the 8-bit scale) and the score capped at 6 * bpc + 12 dB (60 dB at 8 bits).
 */
#include <math.h>
#include <stdlib.h>

#include "extractor.h"

static const char *const names[1] = { "float_psnr" };

typedef struct fpsnr_state {
    int w, h, bpc;
} fpsnr_state;

static void *fpsnr_create(int w, int h, int pix_fmt, int bpc, int cpu) {
    (void)cpu;
    if (svc_frame_bytes(w, h, pix_fmt, bpc) < 0) return NULL;
    fpsnr_state *s = malloc(sizeof *s);
    if (s) *s = (fpsnr_state){ .w = w, .h = h, .bpc = bpc };
    return s;
}

static const char *fpsnr_backend(const void *state) {
    (void)state;
    return "scalar";
}

static int fpsnr_compute(void *state, const svc_picture *ref, const svc_picture *dis, double *out) {
    const fpsnr_state *s = state;
    const svc_plane *a = &ref->plane[0], *b = &dis->plane[0];
    if (a->w != s->w || a->h != s->h || b->w != s->w || b->h != s->h) return SVC_E_GEOMETRY;
    uint64_t sse = 0;
    for (int y = 0; y < a->h; y++) {
        if (s->bpc == 8) {
            const uint8_t *ra = (const uint8_t *)a->data + y * a->stride, *rb = (const uint8_t *)b->data + y * b->stride;
            for (int x = 0; x < a->w; x++) sse += (uint64_t)((ra[x] - rb[x]) * (ra[x] - rb[x]));
        } else {
            const uint16_t *ra = (const uint16_t *)((const uint8_t *)a->data + y * a->stride);
            const uint16_t *rb = (const uint16_t *)((const uint8_t *)b->data + y * b->stride);
            for (int x = 0; x < a->w; x++) {
                const int64_t e = (int64_t)ra[x] - rb[x];
                sse += (uint64_t)(e * e);
            }
        }
    }
    const double scale = (double)(1 << (s->bpc - 8));
    const double peak = ((double)(1 << s->bpc) - 1.0) / scale;
    const double mse = (double)sse / (scale * scale) / ((double)a->w * a->h);
    const double score = 10.0 * log10(peak * peak / (mse > 1e-10 ? mse : 1e-10));
    const double cap = 6.0 * s->bpc + 12.0;
    out[0] = score < cap ? score : cap;
    return SVC_OK;
}

static void fpsnr_destroy(void *state) { free(state); }

const svc_extractor svc_extractor_float_psnr = {
    .name = "float_psnr",
    .n_outputs = 1,
    .output_names = names,
    .create = fpsnr_create,
    .backend = fpsnr_backend,
    .compute = fpsnr_compute,
    .destroy = fpsnr_destroy,
};
