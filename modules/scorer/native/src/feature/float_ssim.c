/*
 * float_ssim: luma SSIM as libvmaf's "float_ssim" reports it with default options.
 * Samples go to float on the 8-bit scale (v / 2^(bpc-8) above 8 bits) so the constants stay
 * C1 = (0.01 * 255)^2, C2 = (0.03 * 255)^2 for every bit depth. Frames whose smaller side is
 * at least 384 are first box-filtered and decimated by round(min(w, h) / 256), as Wang's
 * reference does. The mixed float/double arithmetic mirrors the reference expression by
 * expression: the reported values are exact only if the rounding steps are the same.
 */
#include <math.h>
#include <stdlib.h>

#include "float_ssim.h"

/* Horizontal pass over every row, valid columns only, of a quantity computed on the fly. */
static void hpass(const float *a, const float *b, int what, int w, int h, float *out) {
    const int dw = w - SVC_SSIM_WIN + 1;
    for (int y = 0; y < h; y++) {
        const float *ra = a + (size_t)y * w, *rb = b + (size_t)y * w;
        float *o = out + (size_t)y * dw;
        for (int x = 0; x < dw; x++) {
            double sum = 0.0;
            for (int k = 0; k < SVC_SSIM_WIN; k++) {
                const int i = x + k;
                float v;
                switch (what) {
                case SVC_SSIM_AA: v = ra[i] * ra[i]; break;
                case SVC_SSIM_BB: v = rb[i] * rb[i]; break;
                case SVC_SSIM_AB: v = ra[i] * rb[i]; break;
                default: v = ra[i]; break;
                }
                sum += v * svc_ssim_gauss[k];
            }
            o[x] = (float)sum;
        }
    }
}

static void vpass(const float *in, int dw, int h, float *out) {
    const int dh = h - SVC_SSIM_WIN + 1;
    for (int y = 0; y < dh; y++) {
        for (int x = 0; x < dw; x++) {
            double sum = 0.0;
            for (int k = 0; k < SVC_SSIM_WIN; k++)
                sum += in[(size_t)(y + k) * dw + x] * svc_ssim_gauss[k];
            out[(size_t)y * dw + x] = (float)sum;
        }
    }
}

size_t svc_ssim_scratch_len(int w, int h) {
    const size_t dw = (size_t)(w - SVC_SSIM_WIN + 1), dh = (size_t)(h - SVC_SSIM_WIN + 1);
    return dw * (size_t)h + 5 * dw * dh;
}

void svc_ssim_core(const float *ref, const float *cmp, int w, int h, float *scratch, int avx2,
                   svc_ssim_means *out) {
    const int dw = w - SVC_SSIM_WIN + 1, dh = h - SVC_SSIM_WIN + 1;
    const size_t n = (size_t)dw * dh;
    float *cache = scratch, *mu_a = cache + (size_t)dw * h, *mu_b = mu_a + n;
    float *var_a = mu_b + n, *var_b = var_a + n, *cov = var_b + n;

    void (*hp)(const float *, const float *, int, int, int, float *) = hpass;
    void (*vp)(const float *, int, int, float *) = vpass;
#if defined(__x86_64__) || defined(__i386__)
    if (avx2) {
        hp = svc_ssim_hpass_avx2;
        vp = svc_ssim_vpass_avx2;
    }
#else
    (void)avx2;
#endif
    static const int what[5] = { SVC_SSIM_A, SVC_SSIM_A, SVC_SSIM_AA, SVC_SSIM_BB, SVC_SSIM_AB };
    float *const dst[5] = { mu_a, mu_b, var_a, var_b, cov };
    for (int q = 0; q < 5; q++) {
        /* The second mean filters cmp: swap the inputs rather than add a mode. */
        hp(q == 1 ? cmp : ref, q == 1 ? ref : cmp, what[q], w, h, cache);
        vp(cache, dw, h, dst[q]);
    }

    /* Constants computed in float like the reference (K * L rounded, then squared). */
    const float c1 = (0.01f * 255) * (0.01f * 255);
    const float c2 = (0.03f * 255) * (0.03f * 255);
    const float c3 = c2 / 2.0f;
    double ssim_sum = 0.0, l_sum = 0.0, c_sum = 0.0, s_sum = 0.0;
    for (size_t i = 0; i < n; i++) {
        const float ma = mu_a[i], mb = mu_b[i];
        float va = var_a[i] - ma * ma, vb = var_b[i] - mb * mb;
        /* Rounding can make a variance slightly negative: clamp as the reference does. */
        if (va < 0.0f) va = 0.0f;
        if (vb < 0.0f) vb = 0.0f;
        float cv = cov[i] - ma * mb;
        const float sab = (float)sqrt(va * vb);
        const double l = (2.0 * ma * mb + c1) / (ma * ma + mb * mb + c1);
        const double c = (2.0 * sab + c2) / (va + vb + c2);
        /* Identical flat patches: float rounding may leave a tiny negative covariance while
         * both deviations are 0; the reference forces structure to 1 there. */
        if (cv < 0.0f && sab <= 0.0f) cv = 0.0f;
        const double s = (cv + c3) / (sab + c3);
        ssim_sum += l * c * s;
        l_sum += l;
        c_sum += c;
        s_sum += s;
    }
    out->ssim = (float)(ssim_sum / (double)n);
    out->l = (float)(l_sum / (double)n);
    out->c = (float)(c_sum / (double)n);
    out->s = (float)(s_sum / (double)n);
}

int svc_ssim_avx2_built(void) {
#if defined(__x86_64__) || defined(__i386__)
    return 1;
#else
    return 0;
#endif
}

void svc_ssim_luma_to_float(const svc_picture *pic, float *dst) {
    const svc_plane *p = &pic->plane[0];
    if (pic->bpc == 8) {
        for (int y = 0; y < p->h; y++) {
            const uint8_t *row = (const uint8_t *)p->data + y * p->stride;
            for (int x = 0; x < p->w; x++) dst[(size_t)y * p->w + x] = (float)row[x];
        }
        return;
    }
    const float div = (float)(1 << (pic->bpc - 8));
    for (int y = 0; y < p->h; y++) {
        const uint16_t *row = (const uint16_t *)((const uint8_t *)p->data + y * p->stride);
        for (int x = 0; x < p->w; x++) dst[(size_t)y * p->w + x] = (float)row[x] / div;
    }
}

/* ---- the float_ssim extractor ---- */

static const char *const names[1] = { "float_ssim" };

typedef struct ssim_state {
    int w, h, bpc, scale, sw, sh, avx2;
    float *ref, *dis;         /* w x h */
    float *ref_s, *dis_s;     /* sw x sh after decimation (alias ref/dis when scale == 1) */
    float *scratch;
} ssim_state;

/* IQA's _round on a positive float: halves round up. */
static int round_pos(float a) { return a - (int)a >= 0.5f ? (int)a + 1 : (int)a; }

static void ssim_destroy(void *state) {
    ssim_state *s = state;
    if (!s) return;
    if (s->ref_s != s->ref) free(s->ref_s);
    if (s->dis_s != s->dis) free(s->dis_s);
    free(s->ref);
    free(s->dis);
    free(s->scratch);
    free(s);
}

static void *ssim_create(int w, int h, int pix_fmt, int bpc, int cpu) {
    if (svc_frame_bytes(w, h, pix_fmt, bpc) < 0) return NULL;
    const int m = w < h ? w : h;
    int scale = round_pos((float)m / 256.0f);
    if (scale < 1) scale = 1;
    /* The reference's decimated size: w / f, plus one when w is odd (not a ceiling for f > 2). */
    const int sw = scale > 1 ? w / scale + (w & 1) : w, sh = scale > 1 ? h / scale + (h & 1) : h;
    /* Smaller than the window: the driver reports the unsupported size when create fails. */
    if (sw < SVC_SSIM_WIN || sh < SVC_SSIM_WIN) return NULL;
    ssim_state *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    *s = (ssim_state){ .w = w, .h = h, .bpc = bpc, .scale = scale, .sw = sw, .sh = sh,
                       .avx2 = svc_ssim_avx2_built() && cpu >= SVC_CPU_AVX2 };
    s->ref = malloc((size_t)w * h * sizeof(float));
    s->dis = malloc((size_t)w * h * sizeof(float));
    if (s->scale > 1) {
        s->ref_s = malloc((size_t)s->sw * s->sh * sizeof(float));
        s->dis_s = malloc((size_t)s->sw * s->sh * sizeof(float));
    } else {
        s->ref_s = s->ref;
        s->dis_s = s->dis;
    }
    s->scratch = malloc(svc_ssim_scratch_len(s->sw, s->sh) * sizeof(float));
    if (!s->ref || !s->dis || !s->ref_s || !s->dis_s || !s->scratch) {
        ssim_destroy(s);
        return NULL;
    }
    return s;
}

static const char *ssim_backend(const void *state) {
    return ((const ssim_state *)state)->avx2 ? "avx2" : "scalar";
}

/* IQA's symmetric boundary: mirror once about the edge (the edge sample repeats). */
static int mirror(int i, int n) {
    if (i < 0) return -1 - i;
    if (i >= n) return 2 * n - i - 1;
    return i;
}

/* Box low-pass and decimation by f: each output sample is the f x f window whose centre is
 * (x*f, y*f) (rows/columns -f/2 .. f-1-f/2), weights 1/(f*f) as a float, double sum. */
static void box_decimate(const float *src, int w, int h, int f, float *dst, int sw, int sh) {
    const float wgt = 1.0f / (float)(f * f);
    const int c = f / 2;
    for (int y = 0; y < sh; y++) {
        for (int x = 0; x < sw; x++) {
            double sum = 0.0;
            for (int v = -c; v < f - c; v++) {
                const float *row = src + (size_t)mirror(y * f + v, h) * w;
                for (int u = -c; u < f - c; u++) sum += row[mirror(x * f + u, w)] * wgt;
            }
            dst[(size_t)y * sw + x] = (float)sum;
        }
    }
}

static int ssim_compute(void *state, const svc_picture *ref, const svc_picture *dis, double *out) {
    ssim_state *s = state;
    if (ref->plane[0].w != s->w || ref->plane[0].h != s->h || dis->plane[0].w != s->w ||
        dis->plane[0].h != s->h || ref->bpc != s->bpc || dis->bpc != s->bpc)
        return SVC_E_GEOMETRY;
    svc_ssim_luma_to_float(ref, s->ref);
    svc_ssim_luma_to_float(dis, s->dis);
    if (s->scale > 1) {
        box_decimate(s->ref, s->w, s->h, s->scale, s->ref_s, s->sw, s->sh);
        box_decimate(s->dis, s->w, s->h, s->scale, s->dis_s, s->sw, s->sh);
    }
    svc_ssim_means m;
    svc_ssim_core(s->ref_s, s->dis_s, s->sw, s->sh, s->scratch, s->avx2, &m);
    out[0] = m.ssim;
    return SVC_OK;
}

const svc_extractor svc_extractor_float_ssim = {
    .name = "float_ssim",
    .n_outputs = 1,
    .output_names = names,
    .create = ssim_create,
    .backend = ssim_backend,
    .compute = ssim_compute,
    .destroy = ssim_destroy,
};
