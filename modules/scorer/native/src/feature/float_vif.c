/*
 * float_vif: VIF (Sheikh & Bovik's visual information fidelity, pixel domain, 4 scales) in
 * single precision, as the reference's "float_vif" reports it with default options
 * (vif_kernelscale 1): vif_scale0..3, each sum(num) / sum(den). Its one option, as model files set
 * it: vif_enhn_gain_limit (alias egl, 1..100, default 100), the cap on the gain g below.
 *
 * Luma goes to float on the 8-bit scale minus 128. Per scale s the image is low-passed by a
 * separable Gaussian of 17/9/5/3 taps, computed at start as the reference computes them (see
 * gaussian_taps; not the 9-digit table older releases carried), vertical pass, then horizontal,
 * each output summing its taps in order in float (one multiply, one add per tap, from 0), as
 * the reference's convolution does both in its vector loops and at the borders; scale s > 0
 * first filters scale s-1 with scale s's kernel and keeps its even rows and columns. Borders
 * reflect without repeating the edge: -1 -> 1, n -> n-2.
 * Per pixel, with mu, sigma^2 and sigma12 from the filtered images, sigma_nsq N = 2 and
 * eps = 1e-10 ("matching_matlab" mode):
 *   sigma1^2, sigma2^2 clamped at 0; g = sigma12 / (sigma1^2 + eps); sv^2 = sigma2^2 - g sigma12;
 *   sigma1^2 < eps: g = 0, sv^2 = sigma2^2, sigma1^2 = 0;  sigma2^2 < eps: g = 0, sv^2 = 0;
 *   g < 0: sv^2 = sigma2^2, g = 0;  sv^2 = max(sv^2, eps);  g = min(g, gain limit);
 *   num = log2(1 + g^2 sigma1^2 / (sv^2 + N)), den = log2(1 + sigma1^2 / N), the arguments
 *   evaluated in double (N is a double there) and rounded to float once;
 *   sigma12 < 0: num = 0;  sigma1^2 < N: num = 1 - sigma2^2 * 4 / 255^2, den = 1.
 * log2 is the reference's fast approximation (its published scores use it): exponent plus a
 * degree-8 polynomial in the mantissa - 1, evaluated by Horner in float; it is off from log2f
 * by up to ~1e-5, enough to move a scale score by several 1e-4.
 * Sums run per row in float, then over rows in float. A scale whose sums are both zero
 * cannot occur (den >= 1 where sigma1^2 < N, > 0 elsewhere).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "extractor.h"
#include "float_vif.h"

#define VIF_SCALES 4
#define VIF_MAX_TAPS 17
#define PAD 8 /* the widest kernel's radius */
#define VIF_MIN_SIZE 16 /* every scale keeps more samples than its kernel radius (scale 3: 16 / 8 > 1) */

static const int vif_width[VIF_SCALES] = { 17, 9, 5, 3 };

static const char *const names[VIF_SCALES] = { "vif_scale0", "vif_scale1", "vif_scale2", "vif_scale3" };

typedef struct fvif_state {
    int w, h, bpc;
    float *ref, *dis;       /* w x h: scale 0, then scales 2 */
    float *ref_n, *dis_n;   /* (w/2) x (h/2): scales 1 and 3 */
    float *col[5];          /* vertical-pass rows: ref, dis, ref^2, dis^2, ref*dis */
    float *hrow[5];         /* the same after the horizontal pass */
    float *pad;             /* one row with reflected borders */
    float taps[VIF_SCALES][VIF_MAX_TAPS];
    const svc_fvif_axpy *axpy;
    const char *backend;
    double gain_limit; /* vif_enhn_gain_limit */
} fvif_state;

/* Coefficients of the reference's log2 polynomial on [1, 2), highest degree first. */
static const float log2_poly[9] = { -0.012671635276421f, 0.064841182402670f, -0.157048836463065f,
                                    0.257167726303123f,  -0.353800560300520f, 0.480131410397451f,
                                    -0.721314327952201f, 1.442694803896991f,  0.0f };

/* log2 of x > 0 (the statistic never passes less than 1). */
static float fast_log2(float x) {
    uint32_t bits;
    memcpy(&bits, &x, sizeof bits);
    const int exponent = (int)((bits >> 23) & 0xff) - 127;
    const uint32_t mant_bits = (bits & 0x007fffffu) | 0x3f800000u; /* mantissa in [1, 2) */
    float mant;
    memcpy(&mant, &mant_bits, sizeof mant);
    const float t = mant - 1.0f;
    float acc = 0.0f;
    for (int i = 0; i < 9; i++) acc = acc * t + log2_poly[i];
    return (float)exponent + acc;
}

/*
 * The reference's filter of n taps (n odd): a Gaussian of standard deviation n / 5 sampled at
 * -n/2..n/2 and normalised to sum 1, with its roundings: each sample is
 * (float)exp(-x^2 / 2 sd^2) divided in float by (float)(1 / (sd sqrt(2 pi))) (both in double
 * before rounding), the samples summed in float in order, each divided by that sum in float.
 * These taps are a few units in the last place from the usual 9-digit table (the centre tap of
 * 17 by 14 units); near-flat bars of large |level - 128| amplify that into 3.5e-4 of vif_scale0.
 */
static void gaussian_taps(int n, float *out) {
    const float sd = (float)n / 5.0f;
    const double norm = 1.0 / ((double)sd * sqrt(2.0 * 3.14159265358979323846));
    const float inv_scale = (float)norm;
    float sum = 0.0f;
    for (int i = 0; i < n; i++) {
        const double x = (double)(float)(i - n / 2);
        const float e = (float)exp(-0.5 * x / (double)sd * x / (double)sd);
        out[i] = e / inv_scale;
        sum += out[i];
    }
    for (int i = 0; i < n; i++) out[i] /= sum;
}

static inline int reflect(int i, int n) { return i < 0 ? -i : (i >= n ? 2 * n - i - 2 : i); }

/* Scalar kernels (contract in float_vif.h). */
#define DEFINE_AXPY(NAME, PRODUCT)                                                      \
    static void NAME(float *acc, float c, const float *x, const float *y, int n) {     \
        (void)x, (void)y;                                                               \
        for (int j = 0; j < n; j++) acc[j] += c * (PRODUCT);                            \
    }
DEFINE_AXPY(axpy_x, x[j])
DEFINE_AXPY(axpy_y, y[j])
DEFINE_AXPY(axpy_xx, x[j] * x[j])
DEFINE_AXPY(axpy_yy, y[j] * y[j])
DEFINE_AXPY(axpy_xy, x[j] * y[j])
static const svc_fvif_axpy axpy_c[SVC_FVIF_PRODUCTS] = { axpy_x, axpy_y, axpy_xx, axpy_yy, axpy_xy };

static void fvif_destroy(void *state) {
    fvif_state *s = state;
    if (!s) return;
    free(s->ref);
    free(s->dis);
    free(s->ref_n);
    free(s->dis_n);
    for (int k = 0; k < 5; k++) {
        free(s->col[k]);
        free(s->hrow[k]);
    }
    free(s->pad);
    free(s);
}

enum { OPT_GAIN_LIMIT, N_OPTIONS };
static const svc_extractor_option fvif_options[N_OPTIONS] = {
    { .name = "vif_enhn_gain_limit", .alias = "egl", .def = 100.0, .min = 1.0, .max = 100.0 },
};

static void *fvif_create_with(int w, int h, int pix_fmt, int bpc, int cpu, const double *options) {
    if (svc_frame_bytes(w, h, pix_fmt, bpc) < 0 || w < VIF_MIN_SIZE || h < VIF_MIN_SIZE) return NULL;
    fvif_state *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    *s = (fvif_state){
        .w = w, .h = h, .bpc = bpc, .axpy = axpy_c, .backend = "scalar", .gain_limit = options[OPT_GAIN_LIMIT]
    };
#if defined(__x86_64__) || defined(__i386__)
    if (cpu >= SVC_CPU_AVX2) { /* AVX-512 CPUs run the AVX2 kernels */
        s->axpy = svc_fvif_axpy_avx2;
        s->backend = "avx2";
    }
#endif
    const size_t n = (size_t)w * h;
    int ok = (s->ref = malloc(n * sizeof(float))) && (s->dis = malloc(n * sizeof(float))) &&
             (s->ref_n = malloc(n / 4 * sizeof(float) + sizeof(float))) &&
             (s->dis_n = malloc(n / 4 * sizeof(float) + sizeof(float)));
    for (int k = 0; ok && k < 5; k++)
        ok = (s->col[k] = malloc((size_t)w * sizeof(float))) && (s->hrow[k] = malloc((size_t)w * sizeof(float)));
    ok = ok && (s->pad = malloc(((size_t)w + 2 * PAD) * sizeof(float)));
    if (!ok) {
        fvif_destroy(s);
        return NULL;
    }
    for (int sc = 0; sc < VIF_SCALES; sc++) gaussian_taps(vif_width[sc], s->taps[sc]);
    return s;
}

static void *fvif_create(int w, int h, int pix_fmt, int bpc, int cpu) {
    const double defaults[N_OPTIONS] = { fvif_options[OPT_GAIN_LIMIT].def };
    return fvif_create_with(w, h, pix_fmt, bpc, cpu, defaults);
}

static const char *fvif_backend(const void *state) { return ((const fvif_state *)state)->backend; }

/* Vertical pass of one output row for one product, from the fw reflected source rows of each
 * image: every column sums its taps in order, one multiply and one add per tap. */
static void vpass(svc_fvif_axpy axpy, const float *const *ra, const float *const *rb, const float *f, int fw, int w,
                  float *o) {
    for (int j = 0; j < w; j++) o[j] = 0.0f;
    for (int k = 0; k < fw; k++) axpy(o, f[k], ra[k], rb[k], w);
}

/* Horizontal pass of a row v (w samples) into out: the row padded by reflection into pad, then
 * every column's taps in order. */
static void hpass(svc_fvif_axpy axpy_x_kernel, const float *v, const float *f, int fw, int w, float *pad, float *out) {
    const int r = fw / 2;
    for (int j = 0; j < w; j++) pad[PAD + j] = v[j];
    for (int m = 1; m <= r; m++) {
        pad[PAD - m] = v[m];
        pad[PAD + w - 1 + m] = v[w - 1 - m];
    }
    const float *src = pad + PAD - r; /* src[j + k] is tap k of output j */
    for (int j = 0; j < w; j++) out[j] = 0.0f;
    for (int k = 0; k < fw; k++) axpy_x_kernel(out, f[k], src + k, src + k, w);
}

/* Filters src (w x h) with f and keeps even rows and columns into dst ((w/2) x (h/2)). */
static void decimate(fvif_state *s, const float *src, int w, int h, const float *f, int fw, float *dst) {
    const int r = fw / 2, dw = w / 2, dh = h / 2;
    const float *rows[VIF_MAX_TAPS];
    for (int i = 0; i < dh; i++) {
        for (int k = 0; k < fw; k++) rows[k] = src + (size_t)reflect(2 * i - r + k, h) * w;
        vpass(s->axpy[SVC_FVIF_X], rows, rows, f, fw, w, s->col[0]);
        hpass(s->axpy[SVC_FVIF_X], s->col[0], f, fw, w, s->pad, s->hrow[0]);
        for (int j = 0; j < dw; j++) dst[(size_t)i * dw + j] = s->hrow[0][2 * j];
    }
}

/* num and den of one scale over a w x h image pair. */
static void scale_sums(fvif_state *s, const float *ref, const float *dis, int w, int h, const float *f, int fw,
                       float *num_out, float *den_out) {
    static const double sigma_nsq = 2.0;
    static const float eps = 1.0e-10f;
    static const float sigma_max_inv = (float)(4.0 / (255.0 * 255.0));
    const int r = fw / 2;
    float num = 0.0f, den = 0.0f;
    const float *ra[VIF_MAX_TAPS], *rd[VIF_MAX_TAPS];
    for (int i = 0; i < h; i++) {
        for (int k = 0; k < fw; k++) {
            ra[k] = ref + (size_t)reflect(i - r + k, h) * w;
            rd[k] = dis + (size_t)reflect(i - r + k, h) * w;
        }
        for (int q = 0; q < 5; q++) vpass(s->axpy[q], ra, rd, f, fw, w, s->col[q]);
        for (int q = 0; q < 5; q++) hpass(s->axpy[SVC_FVIF_X], s->col[q], f, fw, w, s->pad, s->hrow[q]);
        float row_num = 0.0f, row_den = 0.0f;
        for (int j = 0; j < w; j++) {
            float m[5];
            for (int q = 0; q < 5; q++) m[q] = s->hrow[q][j];
            float sigma1_sq = m[2] - m[0] * m[0];
            float sigma2_sq = m[3] - m[1] * m[1];
            const float sigma12 = m[4] - m[0] * m[1];
            sigma1_sq = sigma1_sq > 0.0f ? sigma1_sq : 0.0f;
            sigma2_sq = sigma2_sq > 0.0f ? sigma2_sq : 0.0f;
            float g = sigma12 / (sigma1_sq + eps);
            float sv_sq = sigma2_sq - g * sigma12;
            if (sigma1_sq < eps) {
                g = 0.0f;
                sv_sq = sigma2_sq;
                sigma1_sq = 0.0f;
            }
            if (sigma2_sq < eps) {
                g = 0.0f;
                sv_sq = 0.0f;
            }
            if (g < 0.0f) {
                sv_sq = sigma2_sq;
                g = 0.0f;
            }
            sv_sq = sv_sq > eps ? sv_sq : eps;
            g = (float)fmin((double)g, s->gain_limit);
            /* The two log arguments in double, rounded to float once (sigma_nsq is a double). */
            const float num_arg = (float)(1.0 + (double)(g * g * sigma1_sq) / ((double)sv_sq + sigma_nsq));
            const float den_arg = (float)(1.0 + (double)sigma1_sq / sigma_nsq);
            float num_val = fast_log2(num_arg);
            float den_val = fast_log2(den_arg);
            if (sigma12 < 0.0f) num_val = 0.0f;
            if (sigma1_sq < sigma_nsq) {
                num_val = 1.0f - sigma2_sq * sigma_max_inv;
                den_val = 1.0f;
            }
            row_num += num_val;
            row_den += den_val;
        }
        num += row_num;
        den += row_den;
    }
    *num_out = num;
    *den_out = den;
}

static int fvif_compute(void *state, const svc_picture *ref, const svc_picture *dis, double *out) {
    fvif_state *s = state;
    if (ref->plane[0].w != s->w || ref->plane[0].h != s->h || dis->plane[0].w != s->w || dis->plane[0].h != s->h)
        return SVC_E_GEOMETRY;
    svc_plane_to_float(&ref->plane[0], s->bpc, -128.0f, s->ref);
    svc_plane_to_float(&dis->plane[0], s->bpc, -128.0f, s->dis);
    float *r = s->ref, *d = s->dis, *rn = s->ref_n, *dn = s->dis_n;
    int w = s->w, h = s->h;
    for (int sc = 0; sc < VIF_SCALES; sc++) {
        const float *f = s->taps[sc];
        const int fw = vif_width[sc];
        if (sc > 0) {
            decimate(s, r, w, h, f, fw, rn);
            decimate(s, d, w, h, f, fw, dn);
            w /= 2;
            h /= 2;
            float *t = r;
            r = rn;
            rn = t;
            t = d;
            d = dn;
            dn = t;
        }
        float num, den;
        scale_sums(s, r, d, w, h, f, fw, &num, &den);
        out[sc] = (double)num / (double)den;
    }
    return SVC_OK;
}

const svc_extractor svc_extractor_float_vif = {
    .name = "float_vif",
    .n_outputs = VIF_SCALES,
    .output_names = names,
    .create = fvif_create,
    .backend = fvif_backend,
    .compute = fvif_compute,
    .destroy = fvif_destroy,
    .n_options = N_OPTIONS,
    .options = fvif_options,
    .create_with = fvif_create_with,
};
