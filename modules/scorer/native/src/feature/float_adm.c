/*
 * float_adm: ADM (detail loss, Li et al. 2011) in single precision, as the reference's
 * "float_adm" reports it with default options (Watson CSF at view distance 3H, 1080 lines,
 * border factor 0.1): adm2, adm_scale0..3, aim, adm3. Its one option, as model files set it:
 * adm_enhn_gain_limit (alias egl, 1..100, default 100), the gain limit below.
 *
 * Luma goes to float on the 8-bit scale minus 128. Per scale (4 levels of a db2 DWT, each from
 * the previous level's approximation band, sizes rounding up; taps mirrored -1 -> 1, n -> n-1):
 *   - decoupling of each detail band (H, V, D): k = clamp(dis / (ref + 1e-30), 0, 1),
 *     restored r = k * ref; where (ref_h, ref_v) and (dis_h, dis_v) are within 1 degree, r may
 *     grow up to dis by the gain limit; additive a = dis - r;
 *   - CSF: each band times 1 / quantisation step (adm_csf.h);
 *   - masking: |csf(r)| minus a threshold from the 3x3 neighbourhood of csf(a) (1/30 of each
 *     neighbour's magnitude, 1/15 of the centre's, over the three bands), clamped at 0;
 *   - pooling over the frame minus a 10% border: (sum x^3)^(1/3) + (area / 32)^(1/3) per band,
 *     the three bands added; the denominator pools |csf(ref)| the same way.
 * adm_scaleN = num_N / den_N, adm2 = sum num / sum den; aim swaps the roles (the additive part
 * masked by the restored part, no area term) over the same denominator, and
 * adm3 = max(0, adm2 / 2 + (1 - aim) / 2). Sums run per row in float, rows in float.
 */
#include <math.h>
#include <stdlib.h>

#include "adm_csf.h"
#include "extractor.h"

#define ADM_MIN_DIM 33 /* every level's 4-tap mirror needs >= 5 samples at the last level */
#define BORDER_FACTOR 0.1
#define ONE_BY_30 0.0333333351f
#define ONE_BY_15 0.0666666701f

static const float lo[4] = { 0.482962913144690f, 0.836516303737469f, 0.224143868041857f, -0.129409522550921f };
static const float hi[4] = { -0.129409522550921f, -0.224143868041857f, 0.836516303737469f, -0.482962913144690f };

static const char *const names[7] = { "adm2", "adm_scale0", "adm_scale1", "adm_scale2", "adm_scale3", "aim", "adm3" };

enum { B_H, B_V, B_D };

typedef struct fadm_state {
    int w, h, bpc;
    float *img[2];       /* luma, then each level's approximation band (ref, dis) */
    float *ra[2];        /* approximation band being written */
    float *band[2][3];   /* detail bands of ref and dis */
    float *r[3], *a[3];  /* decoupled restored and additive parts */
    float *csf[3], *flt[3];
    float *lo_row, *hi_row;
    float rfac[4][3];
    double gain_limit; /* adm_enhn_gain_limit */
} fadm_state;

static void fadm_destroy(void *state) {
    fadm_state *s = state;
    if (!s) return;
    for (int k = 0; k < 2; k++) {
        free(s->img[k]);
        free(s->ra[k]);
        for (int b = 0; b < 3; b++) free(s->band[k][b]);
    }
    for (int b = 0; b < 3; b++) {
        free(s->r[b]);
        free(s->a[b]);
        free(s->csf[b]);
        free(s->flt[b]);
    }
    free(s->lo_row);
    free(s->hi_row);
    free(s);
}

enum { OPT_GAIN_LIMIT, N_OPTIONS };
static const svc_extractor_option fadm_options[N_OPTIONS] = {
    { .name = "adm_enhn_gain_limit", .alias = "egl", .def = 100.0, .min = 1.0, .max = 100.0 },
};

static void *fadm_create_with(int w, int h, int pix_fmt, int bpc, int cpu, const double *options) {
    (void)cpu;
    if (svc_frame_bytes(w, h, pix_fmt, bpc) < 0 || w < ADM_MIN_DIM || h < ADM_MIN_DIM) return NULL;
    fadm_state *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->w = w;
    s->h = h;
    s->bpc = bpc;
    s->gain_limit = options[OPT_GAIN_LIMIT];
    const size_t full = (size_t)w * h, half = (size_t)((w + 1) / 2) * ((h + 1) / 2);
    int ok = 1;
    for (int k = 0; k < 2; k++) {
        ok = ok && (s->img[k] = malloc(full * sizeof(float))) && (s->ra[k] = malloc(half * sizeof(float)));
        for (int b = 0; ok && b < 3; b++) ok = (s->band[k][b] = malloc(half * sizeof(float))) != NULL;
    }
    for (int b = 0; ok && b < 3; b++)
        ok = (s->r[b] = malloc(half * sizeof(float))) && (s->a[b] = malloc(half * sizeof(float))) &&
             (s->csf[b] = malloc(half * sizeof(float))) && (s->flt[b] = malloc(half * sizeof(float)));
    ok = ok && (s->lo_row = malloc((size_t)w * sizeof(float))) && (s->hi_row = malloc((size_t)w * sizeof(float)));
    if (!ok) {
        fadm_destroy(s);
        return NULL;
    }
    for (int sc = 0; sc < 4; sc++) {
        const float f1 = 1.0f / svc_adm_quant_step(sc, 1), f2 = 1.0f / svc_adm_quant_step(sc, 2);
        s->rfac[sc][B_H] = f1;
        s->rfac[sc][B_V] = f1;
        s->rfac[sc][B_D] = f2;
    }
    return s;
}

static void *fadm_create(int w, int h, int pix_fmt, int bpc, int cpu) {
    const double defaults[N_OPTIONS] = { fadm_options[OPT_GAIN_LIMIT].def };
    return fadm_create_with(w, h, pix_fmt, bpc, cpu, defaults);
}

static const char *fadm_backend(const void *state) {
    (void)state;
    return "scalar";
}

static inline int mirror(int k, int n) { return k < 0 ? -k : (k >= n ? 2 * n - k - 1 : k); }

static inline float taps4(const float *f, float s0, float s1, float s2, float s3) {
    float acc = 0;
    acc += f[0] * s0;
    acc += f[1] * s1;
    acc += f[2] * s2;
    acc += f[3] * s3;
    return acc;
}

/* One DWT level of src (w x h) into A (out_a) and the H, V, D bands, each ((w+1)/2) x ((h+1)/2). */
static void dwt2(fadm_state *s, const float *src, int w, int h, float *out_a, float *const bands[3]) {
    const int dw = (w + 1) / 2, dh = (h + 1) / 2;
    for (int i = 0; i < dh; i++) {
        const float *r0 = src + (size_t)mirror(2 * i - 1, h) * w, *r1 = src + (size_t)mirror(2 * i, h) * w;
        const float *r2 = src + (size_t)mirror(2 * i + 1, h) * w, *r3 = src + (size_t)mirror(2 * i + 2, h) * w;
        for (int j = 0; j < w; j++) {
            s->lo_row[j] = taps4(lo, r0[j], r1[j], r2[j], r3[j]);
            s->hi_row[j] = taps4(hi, r0[j], r1[j], r2[j], r3[j]);
        }
        for (int j = 0; j < dw; j++) {
            const int j0 = mirror(2 * j - 1, w), j1 = mirror(2 * j, w), j2 = mirror(2 * j + 1, w), j3 = mirror(2 * j + 2, w);
            const float *l = s->lo_row, *hh = s->hi_row;
            const size_t at = (size_t)i * dw + j;
            out_a[at] = taps4(lo, l[j0], l[j1], l[j2], l[j3]);
            bands[B_V][at] = taps4(hi, l[j0], l[j1], l[j2], l[j3]);
            bands[B_H][at] = taps4(lo, hh[j0], hh[j1], hh[j2], hh[j3]);
            bands[B_D][at] = taps4(hi, hh[j0], hh[j1], hh[j2], hh[j3]);
        }
    }
}

/* The restored part may grow towards the distorted one up to gain times (in double, as the
 * reference multiplies by its double option). */
static inline float clamp_gain(float rst, float t, int angle, double gain) {
    if (angle && rst > 0.0f) return (float)fmin((double)rst * gain, (double)t);
    if (angle && rst < 0.0f) return (float)fmax((double)rst * gain, (double)t);
    return rst;
}

static void decouple(fadm_state *s, int w, int h) {
    const float cos1_sq = (float)(cos(1.0 * M_PI / 180.0) * cos(1.0 * M_PI / 180.0));
    const float eps = 1e-30f;
    for (size_t at = 0; at < (size_t)w * h; at++) {
        const float oh = s->band[0][B_H][at], ov = s->band[0][B_V][at], od = s->band[0][B_D][at];
        const float th = s->band[1][B_H][at], tv = s->band[1][B_V][at], td = s->band[1][B_D][at];
        float kh = th / (oh + eps), kv = tv / (ov + eps), kd = td / (od + eps);
        kh = kh < 0.0f ? 0.0f : (kh > 1.0f ? 1.0f : kh);
        kv = kv < 0.0f ? 0.0f : (kv > 1.0f ? 1.0f : kv);
        kd = kd < 0.0f ? 0.0f : (kd > 1.0f ? 1.0f : kd);
        const float ot_dp = oh * th + ov * tv, o_mag_sq = oh * oh + ov * ov, t_mag_sq = th * th + tv * tv;
        const int angle = ot_dp >= 0.0f && ot_dp * ot_dp >= cos1_sq * o_mag_sq * t_mag_sq;
        const float rh = clamp_gain(kh * oh, th, angle, s->gain_limit), rv = clamp_gain(kv * ov, tv, angle, s->gain_limit),
                    rd = clamp_gain(kd * od, td, angle, s->gain_limit);
        s->r[B_H][at] = rh;
        s->r[B_V][at] = rv;
        s->r[B_D][at] = rd;
        s->a[B_H][at] = th - rh;
        s->a[B_V][at] = tv - rv;
        s->a[B_D][at] = td - rd;
    }
}

typedef struct pool_rect {
    int left, top, right, bottom;
} pool_rect;

static pool_rect pool_area(int w, int h) {
    const int left = (int)(w * BORDER_FACTOR - 0.5), top = (int)(h * BORDER_FACTOR - 0.5);
    return (pool_rect){ left, top, w - left, h - top };
}

static float area_term(pool_rect p) { return powf((float)((p.bottom - p.top) * (p.right - p.left)) / 32.0f, 1.0f / 3.0f); }

/* Pooled |rfac * band| of the reference's detail bands. */
static float den_sum(const fadm_state *s, int sc, int w, int h) {
    const pool_rect p = pool_area(w, h);
    float total = 0.0f;
    for (int b = 0; b < 3; b++) {
        float acc = 0.0f;
        for (int i = p.top; i < p.bottom; i++) {
            float row = 0.0f;
            for (int j = p.left; j < p.right; j++) {
                const float v = fabsf(s->rfac[sc][b] * s->band[0][b][(size_t)i * w + j]);
                row += v * v * v;
            }
            acc += row;
        }
        total += powf(acc, 1.0f / 3.0f) + area_term(p);
    }
    return total;
}

/* CSF of the masking part into csf, and its 1/30 magnitudes into flt. */
static void csf_masker(fadm_state *s, int sc, float *const part[3], int w, int h) {
    for (int b = 0; b < 3; b++)
        for (size_t at = 0; at < (size_t)w * h; at++) {
            const float v = s->rfac[sc][b] * part[b][at];
            s->csf[b][at] = v;
            s->flt[b][at] = ONE_BY_30 * fabsf(v);
        }
}

/* Pooled masked CSF of part against the masker in csf/flt; with_area adds the area term. */
static float masked_sum(const fadm_state *s, int sc, float *const part[3], int w, int h, int with_area) {
    const pool_rect p = pool_area(w, h);
    float acc[3] = { 0.0f, 0.0f, 0.0f };
    for (int i = p.top; i < p.bottom; i++) {
        const int i0 = i == 0 ? 1 : i - 1, i2 = i == h - 1 ? h - 1 : i + 1;
        float row[3] = { 0.0f, 0.0f, 0.0f };
        for (int j = p.left; j < p.right; j++) {
            const int j0 = j == 0 ? 1 : j - 1, j2 = j == w - 1 ? w - 1 : j + 1;
            float thr = 0.0f;
            for (int b = 0; b < 3; b++) {
                const float *f = s->flt[b];
                float sum = 0.0f;
                sum += f[(size_t)i0 * w + j0];
                sum += f[(size_t)i0 * w + j];
                sum += f[(size_t)i0 * w + j2];
                sum += f[(size_t)i * w + j0];
                sum += ONE_BY_15 * fabsf(s->csf[b][(size_t)i * w + j]);
                sum += f[(size_t)i * w + j2];
                sum += f[(size_t)i2 * w + j0];
                sum += f[(size_t)i2 * w + j];
                sum += f[(size_t)i2 * w + j2];
                thr += sum;
            }
            for (int b = 0; b < 3; b++) {
                float x = fabsf(part[b][(size_t)i * w + j] * s->rfac[sc][b]) - thr;
                x = x < 0.0f ? 0.0f : x;
                row[b] += x * x * x;
            }
        }
        for (int b = 0; b < 3; b++) acc[b] += row[b];
    }
    float total = 0.0f;
    for (int b = 0; b < 3; b++) total += powf(acc[b], 1.0f / 3.0f) + (with_area ? area_term(p) : 0.0f);
    return total;
}

static int fadm_compute(void *state, const svc_picture *ref, const svc_picture *dis, double *out) {
    fadm_state *s = state;
    if (ref->plane[0].w != s->w || ref->plane[0].h != s->h || dis->plane[0].w != s->w || dis->plane[0].h != s->h)
        return SVC_E_GEOMETRY;
    svc_plane_to_float(&ref->plane[0], s->bpc, -128.0f, s->img[0]);
    svc_plane_to_float(&dis->plane[0], s->bpc, -128.0f, s->img[1]);
    double num = 0.0, den = 0.0, aim = 0.0;
    int w = s->w, h = s->h;
    for (int sc = 0; sc < 4; sc++) {
        for (int k = 0; k < 2; k++) dwt2(s, s->img[k], w, h, s->ra[k], s->band[k]);
        w = (w + 1) / 2;
        h = (h + 1) / 2;
        decouple(s, w, h);
        const float den_sc = den_sum(s, sc, w, h);
        csf_masker(s, sc, s->a, w, h);
        const float num_sc = masked_sum(s, sc, s->r, w, h, 1);
        csf_masker(s, sc, s->r, w, h);
        const float aim_sc = masked_sum(s, sc, s->a, w, h, 0);
        out[1 + sc] = (double)num_sc / (double)den_sc;
        num += num_sc;
        den += den_sc;
        aim += aim_sc;
        /* The approximation band is the next level's input; after the 4 levels (an even number
         * of swaps) img is the full-size buffer again. */
        for (int k = 0; k < 2; k++) {
            float *t = s->img[k];
            s->img[k] = s->ra[k];
            s->ra[k] = t;
        }
    }
    const double limit = 1e-10 * (s->w * s->h) / (1920.0 * 1080.0);
    num = num < limit ? 0 : num;
    den = den < limit ? 0 : den;
    const double adm2 = den == 0.0 ? 1.0 : num / den;
    const double aim_score = den == 0.0 ? 0.0 : aim / den;
    const double adm3 = adm2 * 0.5 + (1.0 - aim_score) * 0.5;
    out[0] = adm2;
    out[5] = aim_score;
    out[6] = adm3 < 0.0 ? 0.0 : adm3;
    return SVC_OK;
}

const svc_extractor svc_extractor_float_adm = {
    .name = "float_adm",
    .n_outputs = 7,
    .output_names = names,
    .create = fadm_create,
    .backend = fadm_backend,
    .compute = fadm_compute,
    .destroy = fadm_destroy,
    .n_options = N_OPTIONS,
    .options = fadm_options,
    .create_with = fadm_create_with,
};
