/*
 * float_ms_ssim: luma MS-SSIM (Wang et al. 2003) as libvmaf's "float_ms_ssim" reports it.
 * Five scales; each coarser scale is the previous one filtered by the 9x9 (9/7 biorthogonal)
 * low-pass with symmetric edges and sampled at even positions, so odd sizes round up
 * (w -> w/2 + (w & 1)). Per scale the mean luminance, contrast and structure terms of SSIM
 * (float_ssim.c core) are raised to that scale's exponent and multiplied together.
 * Frames need 11 samples per side at the coarsest scale, measured like the reference with
 * rounding-down halvings: width and height >= 176; create fails for smaller frames (the
 * driver reports the unsupported size) instead of reading out of bounds.
 */
#include <math.h>
#include <stdlib.h>

#include "float_ssim.h"

#define SCALES 5
#define LPF 9
#define MIN_SIDE (SVC_SSIM_WIN << (SCALES - 1))

/* The reference's 2-D low-pass taps (6 decimals; not exactly the outer product of its 1-D
 * taps, and the reference filters with this 2-D table). */
static const float lpf[LPF][LPF] = {
    { 0.000714f, -0.000450f, -0.002090f, 0.007132f, 0.016114f, 0.007132f, -0.002090f, -0.000450f, 0.000714f },
    { -0.000450f, 0.000283f, 0.001316f, -0.004490f, -0.010146f, -0.004490f, 0.001316f, 0.000283f, -0.000450f },
    { -0.002090f, 0.001316f, 0.006115f, -0.020867f, -0.047149f, -0.020867f, 0.006115f, 0.001316f, -0.002090f },
    { 0.007132f, -0.004490f, -0.020867f, 0.071207f, 0.160885f, 0.071207f, -0.020867f, -0.004490f, 0.007132f },
    { 0.016114f, -0.010146f, -0.047149f, 0.160885f, 0.363505f, 0.160885f, -0.047149f, -0.010146f, 0.016114f },
    { 0.007132f, -0.004490f, -0.020867f, 0.071207f, 0.160885f, 0.071207f, -0.020867f, -0.004490f, 0.007132f },
    { -0.002090f, 0.001316f, 0.006115f, -0.020867f, -0.047149f, -0.020867f, 0.006115f, 0.001316f, -0.002090f },
    { -0.000450f, 0.000283f, 0.001316f, -0.004490f, -0.010146f, -0.004490f, 0.001316f, 0.000283f, -0.000450f },
    { 0.000714f, -0.000450f, -0.002090f, 0.007132f, 0.016114f, 0.007132f, -0.002090f, -0.000450f, 0.000714f },
};

/* Exponents per scale (luminance only at the coarsest), as floats like the reference. */
static const float alpha[SCALES] = { 0.0f, 0.0f, 0.0f, 0.0f, 0.1333f };
static const float beta[SCALES] = { 0.0448f, 0.2856f, 0.3001f, 0.2363f, 0.1333f };
static const float gamma_[SCALES] = { 0.0448f, 0.2856f, 0.3001f, 0.2363f, 0.1333f };

#if defined(__x86_64__) || defined(__i386__)
/* x86/float_ms_ssim_avx2.c: lpf_decimate with taps[v * 9 + u], bit-identical. */
void svc_ms_ssim_decimate_avx2(const float *src, int w, int h, const float *taps, float *dst,
                               int dw, int dh);
#endif

static const char *const names[1] = { "float_ms_ssim" };

typedef struct ms_ssim_state {
    int w[SCALES], h[SCALES], bpc, avx2;
    float *ref[SCALES], *dis[SCALES];
    float *scratch;
} ms_ssim_state;

static void ms_destroy(void *state) {
    ms_ssim_state *s = state;
    if (!s) return;
    for (int i = 0; i < SCALES; i++) {
        free(s->ref[i]);
        free(s->dis[i]);
    }
    free(s->scratch);
    free(s);
}

static void *ms_create(int w, int h, int pix_fmt, int bpc, int cpu) {
    if (svc_frame_bytes(w, h, pix_fmt, bpc) < 0) return NULL;
    if (w < MIN_SIDE || h < MIN_SIDE) return NULL;
    ms_ssim_state *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->bpc = bpc;
    s->avx2 = svc_ssim_avx2_built() && cpu >= SVC_CPU_AVX2;
    for (int i = 0; i < SCALES; i++) {
        s->w[i] = i ? s->w[i - 1] / 2 + (s->w[i - 1] & 1) : w;
        s->h[i] = i ? s->h[i - 1] / 2 + (s->h[i - 1] & 1) : h;
        s->ref[i] = malloc((size_t)s->w[i] * s->h[i] * sizeof(float));
        s->dis[i] = malloc((size_t)s->w[i] * s->h[i] * sizeof(float));
        if (!s->ref[i] || !s->dis[i]) {
            ms_destroy(s);
            return NULL;
        }
    }
    s->scratch = malloc(svc_ssim_scratch_len(w, h) * sizeof(float));
    if (!s->scratch) {
        ms_destroy(s);
        return NULL;
    }
    return s;
}

static const char *ms_backend(const void *state) {
    return ((const ms_ssim_state *)state)->avx2 ? "avx2" : "scalar";
}

/* Symmetric boundary (edge sample repeated), mirrored once: enough for a 4-sample radius
 * on images of 11 or more samples. */
static int mirror(int i, int n) {
    if (i < 0) return -1 - i;
    if (i >= n) return 2 * n - i - 1;
    return i;
}

/* One 9x9 low-pass tap sum per output, centred on (2x, 2y): float products summed in double
 * in row-major tap order, as the reference's 2-D filter_pixel. */
static void lpf_decimate(const float *src, int w, int h, const float *taps, float *dst, int dw,
                         int dh) {
    for (int y = 0; y < dh; y++) {
        for (int x = 0; x < dw; x++) {
            double sum = 0.0;
            for (int v = 0; v < LPF; v++) {
                const float *row = src + (size_t)mirror(2 * y + v - LPF / 2, h) * w;
                for (int u = 0; u < LPF; u++) sum += row[mirror(2 * x + u - LPF / 2, w)] * taps[v * LPF + u];
            }
            dst[(size_t)y * dw + x] = (float)sum;
        }
    }
}

static int ms_compute(void *state, const svc_picture *ref, const svc_picture *dis, double *out) {
    ms_ssim_state *s = state;
    if (ref->plane[0].w != s->w[0] || ref->plane[0].h != s->h[0] || dis->plane[0].w != s->w[0] ||
        dis->plane[0].h != s->h[0] || ref->bpc != s->bpc || dis->bpc != s->bpc)
        return SVC_E_GEOMETRY;
    svc_ssim_luma_to_float(ref, s->ref[0]);
    svc_ssim_luma_to_float(dis, s->dis[0]);
    void (*decimate)(const float *, int, int, const float *, float *, int, int) = lpf_decimate;
#if defined(__x86_64__) || defined(__i386__)
    if (s->avx2) decimate = svc_ms_ssim_decimate_avx2;
#endif
    for (int i = 1; i < SCALES; i++) {
        decimate(s->ref[i - 1], s->w[i - 1], s->h[i - 1], &lpf[0][0], s->ref[i], s->w[i], s->h[i]);
        decimate(s->dis[i - 1], s->w[i - 1], s->h[i - 1], &lpf[0][0], s->dis[i], s->w[i], s->h[i]);
    }
    double msssim = 1.0;
    for (int i = 0; i < SCALES; i++) {
        svc_ssim_means m;
        svc_ssim_core(s->ref[i], s->dis[i], s->w[i], s->h[i], s->scratch, s->avx2, &m);
        msssim *= pow(m.l, alpha[i]) * pow(m.c, beta[i]) * pow(m.s, gamma_[i]);
    }
    out[0] = msssim;
    return SVC_OK;
}

const svc_extractor svc_extractor_float_ms_ssim = {
    .name = "float_ms_ssim",
    .n_outputs = 1,
    .output_names = names,
    .create = ms_create,
    .backend = ms_backend,
    .compute = ms_compute,
    .destroy = ms_destroy,
};
