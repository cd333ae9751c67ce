/*
 * psnr: per-plane PSNR as libvmaf's integer "psnr" extractor reports it with default options.
 *  - peak: 255 at 8 bits, (1 << bpc) - 1 above (no reduced_hbd_peak);
 *  - MSE floored at 1e-16 before the log, the score capped at 6 * bpc + 12 dB (60 dB at 8 bits),
 *    so identical planes give exactly that cap rather than infinity (min_sse = 0 default);
 *  - SSE accumulated exactly in integers, so the result does not depend on summation order.
 */
#include <math.h>
#include <stdlib.h>

#include "extractor.h"

static const char *const names[3] = { "psnr_y", "psnr_cb", "psnr_cr" };

typedef struct psnr_state {
    int w, h, pix_fmt, bpc;
    double peak_sq; /* peak * peak, exact */
    double psnr_max;
} psnr_state;

static void *psnr_create(int w, int h, int pix_fmt, int bpc, int cpu) {
    (void)cpu;
    if (svc_frame_bytes(w, h, pix_fmt, bpc) < 0) return NULL;
    psnr_state *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    const uint32_t peak = (1u << bpc) - 1;
    *s = (psnr_state){ .w = w, .h = h, .pix_fmt = pix_fmt, .bpc = bpc,
                       .peak_sq = (double)(peak * peak), .psnr_max = 6.0 * bpc + 12.0 };
    return s;
}

static const char *psnr_backend(const void *state) {
    (void)state;
    return "scalar";
}

static uint64_t sse_8(const svc_plane *a, const svc_plane *b) {
    uint64_t sse = 0;
    for (int y = 0; y < a->h; y++) {
        const uint8_t *ra = (const uint8_t *)a->data + y * a->stride;
        const uint8_t *rb = (const uint8_t *)b->data + y * b->stride;
        for (int x = 0; x < a->w; x++) {
            const int64_t e = (int)ra[x] - (int)rb[x];
            sse += (uint64_t)(e * e);
        }
    }
    return sse;
}

static uint64_t sse_16(const svc_plane *a, const svc_plane *b) {
    uint64_t sse = 0;
    for (int y = 0; y < a->h; y++) {
        const uint16_t *ra = (const uint16_t *)((const uint8_t *)a->data + y * a->stride);
        const uint16_t *rb = (const uint16_t *)((const uint8_t *)b->data + y * b->stride);
        for (int x = 0; x < a->w; x++) {
            const int64_t e = (int)ra[x] - (int)rb[x];
            sse += (uint64_t)(e * e);
        }
    }
    return sse;
}

static int psnr_compute(void *state, const svc_picture *ref, const svc_picture *dis, double *out) {
    const psnr_state *s = state;
    if (ref->bpc != s->bpc || dis->bpc != s->bpc || ref->pix_fmt != s->pix_fmt ||
        dis->pix_fmt != s->pix_fmt || ref->plane[0].w != s->w || ref->plane[0].h != s->h ||
        dis->plane[0].w != s->w || dis->plane[0].h != s->h)
        return SVC_E_GEOMETRY;
    for (int p = 0; p < 3; p++) {
        const svc_plane *a = &ref->plane[p], *b = &dis->plane[p];
        const uint64_t sse = s->bpc == 8 ? sse_8(a, b) : sse_16(a, b);
        const double mse = (double)sse / (double)((int64_t)a->w * a->h);
        const double score = 10.0 * log10(s->peak_sq / (mse > 1e-16 ? mse : 1e-16));
        out[p] = score < s->psnr_max ? score : s->psnr_max;
    }
    return SVC_OK;
}

static void psnr_destroy(void *state) { free(state); }

const svc_extractor svc_extractor_psnr = {
    .name = "psnr",
    .n_outputs = 3,
    .output_names = names,
    .create = psnr_create,
    .backend = psnr_backend,
    .compute = psnr_compute,
    .destroy = psnr_destroy,
};
