/*
 * speed_chroma: SpEED-QA (Bampis, Gupta, Soundararajan and Bovik, "SpEED-QA: Spatial Efficient
 * Entropic Differencing for Image and Video Quality", IEEE SPL 2017) on the two chroma planes, as
 * the reference's "speed_chroma" reports it: speed_chroma_u, speed_chroma_v and their mean
 * speed_chroma_uv (the vmaf_v1.0.16 models read speed_chroma_uv).
 *
 * Per plane (samples on the 8-bit scale minus 128), for the reference and then the distorted one:
 *   1. optionally rescaled by speed_prescale (nearest or bilinear, the reference's own resamplers);
 *   2. low-passed by a 9-tap Gaussian (sigma 3.6, the sigma of 4 halvings) and decimated by 16;
 *   3. minus its local mean (3-tap Gaussian, sigma 0.6): the band-pass image;
 *   4. Gaussian scale mixture fit on 5x5 blocks: the 25x25 covariance K of the 5x5 neighbourhoods,
 *      its eigenvalues (Householder tridiagonalisation, then implicit symmetric QR steps), and
 *      per block the variance s = y' K^-1 y / 25 (K^-1 y by a Householder QR solve); the block's
 *      entropy is sum over the eigenvalues L of log2(L s + sigma_nn) + log2(2 pi e).
 * The plane's score is the mean over blocks of |H_ref w_ref - H_dis w_dis|, blocks whose two
 * entropies are both below 25 (log2((1 + nn_floor) sigma_nn) + log2(2 pi e)) counting 0, with
 * w = log2(1 + variance) weighted by speed_weight_var_mode (5: the reference's variance for
 * the reference, 0.75 ref + 0.25 dis for the distorted one). A plane whose covariance is singular
 * (a flat plane) has no score: when only one of ref/dis is singular the plane scores 0, when
 * only one plane of U/V is, uv takes the other's score. Each output is capped at speed_max_val.
 *
 * Everything runs in single precision in the reference's order of operations (the covariance
 * sums in double), which the scores depend on: eigenvalues and the solve are iterative.
 * Borders of both filters reflect without repeating the edge sample: -1 -> 1, n -> n - 2.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "extractor.h"
#include "speed_chroma.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif
#ifndef M_E
#define M_E 2.7182818284590452354
#endif

#define BLOCK SVC_SPEED_BLOCK
#define DIM SVC_SPEED_DIM /* 25: samples per block, size of the covariance */
#define DECIMATION_LOG2 4   /* 4 halvings: decimation by 16 */
#define EIG_EPS 1e-6
#define EIG_MAX_ITERS 500
#define MAX_TAPS 33

static const char *const names[3] = { "speed_chroma_u", "speed_chroma_v", "speed_chroma_uv" };

enum { SCALE_NEAREST, SCALE_BILINEAR };

/* In the order of their names: optioned outputs are named in that order, as the reference does
 * (speed_chroma_uv_mxv_45_nnf_0.1_ps_0.6_psm_bilinear_snn_0.19_wvm_5). */
enum { OPT_KERNELSCALE, OPT_MAX_VAL, OPT_NN_FLOOR, OPT_PRESCALE, OPT_PRESCALE_METHOD, OPT_SIGMA_NN, OPT_WEIGHT_VAR_MODE, N_OPTIONS };
static const char *const prescale_methods[] = { "nearest", "bilinear", NULL };
static const svc_extractor_option speed_options[N_OPTIONS] = {
    { .name = "speed_kernelscale", .alias = "ks", .def = 1.0, .min = 1.0, .max = 1.0 },
    { .name = "speed_max_val", .alias = "mxv", .def = 1000.0, .min = 0.0, .max = 1000.0 },
    { .name = "speed_nn_floor", .alias = "nnf", .def = 0.0, .min = 0.0, .max = 1.0 },
    { .name = "speed_prescale", .alias = "ps", .def = 1.0, .min = 0.1, .max = 4.0 },
    { .name = "speed_prescale_method", .alias = "psm", .def = SCALE_NEAREST, .min = 0, .max = 1, .choices = prescale_methods },
    { .name = "speed_sigma_nn", .alias = "snn", .def = 0.29, .min = 0.1, .max = 2.0 },
    { .name = "speed_weight_var_mode", .alias = "wvm", .def = 0.0, .min = 0.0, .max = 6.0 },
};

typedef struct speed_state {
    int luma_w, luma_h, bpc;
    int ow, oh;         /* chroma plane */
    int sw, sh;         /* after the prescale */
    int dw, dh;         /* after decimation by 16 */
    int nbh, nbv, nb;   /* blocks across, down, in all */
    int subw, subh;     /* positions of a 5x5 neighbourhood inside the whole blocks */
    int stride;         /* floats per row of the frame buffers */
    int method, mode, rescale;
    float sigma_nn, nn_floor;
    double max_val;
    float aa_taps[MAX_TAPS], mean_taps[MAX_TAPS];
    int aa_width, mean_width;
    float *frame, *copy, *filtered, *conv_tmp; /* conv_tmp: one padded row */
    float *y;          /* DIM x nb: the block samples (independent terms) */
    float *x;          /* DIM x nb: K^-1 y, then the per-block variance in its first row */
    float *work;       /* the QR solve's matrices */
    float *ent[2], *var[2]; /* per block, of ref (0) and dis (1) */
    svc_speed_mat_mul mat_mul; /* the kernels (speed_chroma.h) */
    svc_speed_covariance covariance;
    svc_speed_axpy axpy;
    svc_speed_load8 load8;
    const char *backend;
} speed_state;

/* ---------------------------------------------------------------- filters ---- */

static int odd_at_least(double f) {
    int c = (int)ceil(f);
    return c % 2 == 0 ? c + 1 : c;
}

/* Window of the reference's Gaussian at halving level `scale` (17, 9, 5, 3, 3 taps at kernelscale 1). */
static int window_size(int scale, float kernelscale) {
    const int n = (1 << (4 - scale)) + 1;
    const int w = odd_at_least(n * kernelscale);
    return w > 3 ? w : 3;
}

/* Normalised Gaussian taps with the reference's float/double mix. */
static void gaussian_taps(float *out, int size, float sigma) {
    const int half = (size - 1) / 2;
    float sum = 0;
    for (int i = 0; i < size; i++) {
        const float x = (float)(i - half);
        const float num = exp(-0.5 * x / sigma * x / sigma);
        const float den = 1 / (sigma * sqrt(2 * M_PI));
        out[i] = num / den;
        sum += out[i];
    }
    for (int i = 0; i < size; i++) out[i] /= sum;
}

static void axpy_c(float *row, float c, const float *in, int w) {
    for (int j = 0; j < w; j++) row[j] = row[j] + c * in[j];
}

static void load8_c(const uint8_t *in, float *out, int w) {
    for (int x = 0; x < w; x++) out[x] = (float)in[x] + -128;
}

static inline int reflect_edge(int i, int n) { return i < 0 ? -i : (i >= n ? 2 * n - i - 2 : i); }

/* Separable filter of a w x h image (rows of `stride` floats), kept at every step-th row and
 * column only (dst: (w / step) x (h / step) when step > 1, else w x h): vertical pass of a kept
 * row into a row padded by reflection, then the horizontal pass at the kept columns. Every output
 * sums its taps in float from zero in tap order, as the reference's full-size filter does (the
 * loops run tap-major so the compiler may vectorise them; the order per output is unchanged). */
static void filter2d(const float *taps, int width, const float *src, float *dst, float *pad, int w, int h, int stride,
                     int step, svc_speed_axpy axpy) {
    const int r = width / 2, oh = step > 1 ? h / step : h, ow = step > 1 ? w / step : w;
    float *row = pad + r; /* row[-r .. w + r) */
    for (int i = 0; i < oh; i++) {
        const int y = i * step;
        for (int j = 0; j < w; j++) row[j] = 0.0f;
        for (int k = 0; k < width; k++) {
            const float c = taps[k];
            axpy(row, c, src + (size_t)reflect_edge(y - r + k, h) * stride, w);
        }
        for (int m = 1; m <= r; m++) {
            row[-m] = row[reflect_edge(-m, w)];
            row[w - 1 + m] = row[reflect_edge(w - 1 + m, w)];
        }
        float *out = dst + (size_t)i * stride;
        if (step > 1) {
            for (int j = 0; j < ow; j++) {
                float acc = 0.0f;
                for (int k = 0; k < width; k++) acc += taps[k] * row[j * step - r + k];
                out[j] = acc;
            }
        } else {
            for (int j = 0; j < w; j++) out[j] = 0.0f;
            for (int k = 0; k < width; k++) {
                axpy(out, taps[k], row - r + k, w);
            }
        }
    }
}

static inline float mirror_f(float i, float right) { return i < 0 ? -i : (i > right ? 2 * right - i : i); }

/* The reference's resamplers (pixel centres aligned; bilinear mirrors at the borders and keeps
 * its weights relative to the mirrored sample, as the reference does). */
static void rescale(int method, const float *src, int sw, int sh, float *dst, int dw, int dh, int stride) {
    const float rx = (float)sw / dw, ry = (float)sh / dh;
    for (int y = 0; y < dh; y++) {
        for (int x = 0; x < dw; x++) {
            float v;
            if (method == SCALE_NEAREST) {
                v = src[(size_t)(int)(y * ry) * stride + (int)(x * rx)];
            } else {
                const float yy = (y + 0.5) * ry - 0.5, xx = (x + 0.5) * rx - 0.5;
                const int x1 = (int)mirror_f(floor(xx), sw - 1), x2 = (int)mirror_f(ceil(xx), sw - 1);
                const int y1 = (int)mirror_f(floor(yy), sh - 1), y2 = (int)mirror_f(ceil(yy), sh - 1);
                const float dx = xx - x1, dy = yy - y1;
                v = (1 - dy) * (1 - dx) * src[(size_t)y1 * stride + x1] + (1 - dy) * dx * src[(size_t)y1 * stride + x2] +
                    dy * (1 - dx) * src[(size_t)y2 * stride + x1] + dy * dx * src[(size_t)y2 * stride + x2];
            }
            dst[(size_t)y * stride + x] = v;
        }
    }
}

/* frame (ow x oh) -> its band-pass image at the decimated size, in place. */
static void band_pass(speed_state *s) {
    float *f = s->frame;
    if (s->rescale) {
        memcpy(s->copy, f, sizeof(float) * (size_t)s->stride * s->oh);
        rescale(s->method, s->copy, s->ow, s->oh, f, s->sw, s->sh, s->stride);
    }
    /* The low-pass is only needed at the samples decimation keeps. */
    filter2d(s->aa_taps, s->aa_width, f, s->filtered, s->conv_tmp, s->sw, s->sh, s->stride, 1 << DECIMATION_LOG2, s->axpy);
    for (int i = 0; i < s->dh; i++)
        for (int j = 0; j < s->dw; j++) f[(size_t)i * s->stride + j] = s->filtered[(size_t)i * s->stride + j];
    filter2d(s->mean_taps, s->mean_width, f, s->filtered, s->conv_tmp, s->dw, s->dh, s->stride, 1, s->axpy);
    for (int i = 0; i < s->dh; i++)
        for (int j = 0; j < s->dw; j++) f[(size_t)i * s->stride + j] -= s->filtered[(size_t)i * s->stride + j];
}

/* ------------------------------------------------------ linear algebra (float) ---- */

static inline float hypot_f(float a, float b) { return sqrt(a * a + b * b); }
static inline int sign_of(float v) { return v >= 0 ? 1 : -1; }

/* Householder vector annihilating a[start+1.., col] below a[start][col]: the column is divided
 * by (alpha - beta) in place (its head becomes beta); returns tau. */
static float householder(float *a, int col, int start) {
    if (DIM - start == 1) return 0.0f;
    float norm2 = 0;
    for (int i = start + 1; i < DIM; i++) norm2 += a[i * DIM + col] * a[i * DIM + col];
    const float xnorm = sqrt(norm2);
    if (xnorm == 0.0f) return 0.0f;
    const float alpha = a[start * DIM + col];
    const float beta = -sign_of(alpha) * hypot_f(alpha, xnorm);
    const float tau = (beta - alpha) / beta;
    const float div = alpha - beta;
    if (div != 0.0f) {
        for (int i = start; i < DIM; i++) a[i * DIM + col] /= div;
        a[start * DIM + col] = beta;
    }
    return tau;
}

/* Symmetric a (destroyed) -> diagonal d and subdiagonal e of a similar tridiagonal matrix. */
static void tridiagonalise(float *a, float *d, float *e) {
    float v[DIM], x[DIM];
    for (int i = 0; i < DIM - 2; i++) {
        const float tau = householder(a, i, i + 1);
        for (int j = i + 1; j < DIM; j++) v[j] = a[j * DIM + i];
        if (tau == 0.0f) continue;
        v[i + 1] = 1.0f;
        for (int r = i + 1; r < DIM; r++) {
            x[r] = 0.0f;
            for (int c = i + 1; c < DIM; c++) x[r] += tau * a[r * DIM + c] * v[c];
        }
        float xv = 0;
        for (int r = i + 1; r < DIM; r++) xv += x[r] * v[r];
        const float alpha = -0.5 * tau * xv;
        for (int r = i + 1; r < DIM; r++) x[r] += alpha * v[r];
        for (int r = i + 1; r < DIM; r++)
            for (int c = i + 1; c < DIM; c++) a[r * DIM + c] -= x[r] * v[c] + v[r] * x[c];
    }
    for (int i = 0; i < DIM; i++) d[i] = a[i * DIM + i];
    for (int i = 0; i < DIM - 1; i++) e[i] = a[(i + 1) * DIM + i];
}

static void chop(float *d, float *e, int n) {
    for (int i = 0; i < n - 1; i++)
        if (fabsf(e[i]) < EIG_EPS * (fabsf(d[i]) + fabsf(d[i + 1]))) e[i] = 0.0f;
}

/* Wilkinson shift from the trailing 2x2 block. */
static float wilkinson(const float *d, const float *e, int n) {
    const float ta = d[n - 2], tb = d[n - 1], tab = e[n - 2];
    const float dt = (ta - tb) / 2.0;
    if (dt > 0) return tb - tab * (tab / (dt + hypot_f(dt, tab)));
    if (dt == 0) return tb - fabsf(tab);
    return tb + tab * (tab / (-dt + hypot_f(dt, tab)));
}

static void givens(float a, float b, float *c, float *s) {
    if (b == 0) {
        *c = 1;
        *s = 0;
    } else if (fabsf(b) > fabsf(a)) {
        const float t = -a / b, s1 = 1.0 / sqrt(1 + t * t);
        *s = s1;
        *c = s1 * t;
    } else {
        const float t = -b / a, c1 = 1.0 / sqrt(1 + t * t);
        *c = c1;
        *s = c1 * t;
    }
}

/* One implicit symmetric QR step with Wilkinson shift on the unreduced block d[0..n), e[0..n-1). */
static void qr_step(float *d, float *e, int n) {
    float mu = wilkinson(d, e, n);
    if (EIG_EPS * fabsf(mu) > fabsf(d[0]) + fabsf(e[0])) mu = 0;
    float x = d[0] - mu, z = e[0];
    float ak = 0, bk = 0, zk = 0;
    float ap = d[0], bp = e[0], aq = d[1];
    if (n == 2) {
        float c, s;
        givens(x, z, &c, &s);
        const float ap1 = c * (c * ap - s * bp) + s * (s * aq - c * bp);
        const float bp1 = c * (s * ap + c * bp) - s * (s * bp + c * aq);
        const float aq1 = s * (s * ap + c * bp) + c * (s * bp + c * aq);
        d[0] = ap1;
        e[0] = bp1;
        d[1] = aq1;
        return;
    }
    float bq = e[1];
    for (int k = 0; k < n - 1; k++) {
        float c, s;
        givens(x, z, &c, &s);
        const float bk1 = c * bk - s * zk;
        const float ap1 = c * (c * ap - s * bp) + s * (s * aq - c * bp);
        const float bp1 = c * (s * ap + c * bp) - s * (s * bp + c * aq);
        const float zp1 = -s * bq;
        const float aq1 = s * (s * ap + c * bp) + c * (s * bp + c * aq);
        const float bq1 = c * bq;
        ak = ap1;
        bk = bp1;
        zk = zp1;
        ap = aq1;
        bp = bq1;
        if (k < n - 2) aq = d[k + 2];
        if (k < n - 3) bq = e[k + 2];
        d[k] = ak;
        if (k > 0) e[k - 1] = bk1;
        if (k < n - 2) e[k + 1] = bp;
        x = bk;
        z = zk;
    }
    d[n - 1] = ap;
    e[n - 2] = bk;
}

/* Eigenvalues (unordered) of the symmetric DIM x DIM matrix k. */
static void eigenvalues(const float *k, float *out) {
    float a[DIM * DIM], d[DIM], e[DIM];
    memcpy(a, k, sizeof a);
    tridiagonalise(a, d, e);
    chop(d, e, DIM);
    int b = DIM - 1, iter = 0;
    while (b > 0 && iter < EIG_MAX_ITERS) {
        if (e[b - 1] == 0.0f) {
            b--;
            continue;
        }
        int a0 = b - 1;
        while (a0 > 0 && e[a0 - 1] != 0.0f) a0--;
        qr_step(d + a0, e + a0, b - a0 + 1);
        chop(d + a0, e + a0, b - a0 + 1);
        iter++;
    }
    memcpy(out, d, sizeof d);
}

/* dst (rows x cols) = a (rows x DIM) * b (DIM x cols), each element summed over k in order. */
static void mat_mul_c(float *dst, const float *a, const float *b, int rows, int cols) {
    memset(dst, 0, sizeof(float) * (size_t)rows * cols);
    for (int i = 0; i < rows; i++)
        for (int k = 0; k < DIM; k++) {
            const float aik = a[i * DIM + k];
            for (int j = 0; j < cols; j++) dst[(size_t)i * cols + j] += aik * b[(size_t)k * cols + j];
        }
}

/* Solves k x = y (y: DIM x n) by Householder QR with an explicit Q; -1 when R has a diagonal
 * element below EIG_EPS in magnitude. work holds 3 DIM x DIM matrices and a DIM x n one. */
static int qr_solve(const float *k, const float *y, float *x, int n, float *work, svc_speed_mat_mul mat_mul) {
    float *q = work, *h = work + DIM * DIM, *z = work + 2 * DIM * DIM, *qty = work + 3 * DIM * DIM;
    float r[DIM * DIM], v[DIM];
    memcpy(z, k, sizeof(float) * DIM * DIM);
    for (int i = 0; i < DIM; i++)
        for (int j = 0; j < DIM; j++) q[i * DIM + j] = i == j;
    for (int c = 0; c < DIM - 1; c++) {
        for (int i = 0; i < DIM; i++)
            for (int j = 0; j < DIM; j++)
                if (i < c || j < c) z[i * DIM + j] = i == j;
        for (int i = 0; i < DIM; i++) v[i] = z[i * DIM + c];
        float n2 = 0;
        for (int i = 0; i < DIM; i++) n2 += v[i] * v[i];
        const float norm = sqrt(n2);
        v[c] += sign_of(k[c * DIM + c]) * norm;
        n2 = 0;
        for (int i = 0; i < DIM; i++) n2 += v[i] * v[i];
        const float vnorm = sqrt(n2);
        for (int i = 0; i < DIM; i++) v[i] = v[i] / vnorm;
        for (int i = 0; i < DIM; i++)
            for (int j = 0; j < DIM; j++) h[i * DIM + j] = -2 * v[i] * v[j];
        for (int i = 0; i < DIM; i++) h[i * DIM + i] += 1;
        mat_mul(r, h, z, DIM, DIM);
        memcpy(z, r, sizeof r);
        mat_mul(r, h, q, DIM, DIM);
        memcpy(q, r, sizeof r);
    }
    mat_mul(r, q, k, DIM, DIM); /* R = Q' k, with q holding Q' */
    mat_mul(qty, q, y, DIM, n);
    for (int i = DIM - 1; i >= 0; i--) {
        const float den = r[i * DIM + i];
        if (fabsf(den) < EIG_EPS) return -1;
        for (int j = 0; j < n; j++) {
            float t = qty[(size_t)i * n + j];
            for (int c = i + 1; c < DIM; c++) t -= x[(size_t)c * n + j] * r[i * DIM + c];
            x[(size_t)i * n + j] = t / den;
        }
    }
    return 0;
}

/* ---------------------------------------------------------- the GSM fit ---- */

static void covariance_c(const float *f, int st, int subw, int subh, const float *mean, float *cov) {
    for (int p = 0; p < DIM; p++)
        for (int q = 0; q <= p; q++) {
            const int rp = p / BLOCK, cp = p % BLOCK, rq = q / BLOCK, cq = q % BLOCK;
            const double mp = mean[p], mq = mean[q];
            double acc = 0;
            for (int i = 0; i < subh; i++)
                for (int j = 0; j < subw; j++) {
                    const double a = f[(size_t)(rp + i) * st + cp + j], b = f[(size_t)(rq + i) * st + cq + j];
                    acc += (a - mp) * (b - mq);
                }
            const float cv = acc / (double)((size_t)subw * (size_t)subh);
            cov[p * DIM + q] = cov[q * DIM + p] = cv;
        }
}

/* Entropy and variance per block of the band-pass image in s->frame; -1 when its covariance is
 * singular (then every variance is 0). */
static int block_statistics(speed_state *s, float *ent, float *var) {
    const float *f = s->frame;
    const int st = s->stride, nb = s->nb;
    float mean[DIM], cov[DIM * DIM], eig[DIM];
    const float count = (float)((size_t)s->subw * (size_t)s->subh);
    for (int r = 0; r < BLOCK; r++)
        for (int c = 0; c < BLOCK; c++) {
            float sum = 0;
            for (int i = 0; i < s->subh; i++)
                for (int j = 0; j < s->subw; j++) sum += f[(size_t)(r + i) * st + c + j];
            mean[r * BLOCK + c] = sum / count;
        }
    s->covariance(f, st, s->subw, s->subh, mean, cov);
    eigenvalues(cov, eig);
    for (int r = 0; r < BLOCK; r++)
        for (int c = 0; c < BLOCK; c++)
            for (int bi = 0; bi < s->nbv; bi++)
                for (int bj = 0; bj < s->nbh; bj++)
                    s->y[(size_t)(r * BLOCK + c) * nb + bi * s->nbh + bj] = f[(size_t)(bi * BLOCK + r) * st + bj * BLOCK + c];
    int regular = 1;
    for (int k = 0; k < DIM; k++) regular &= !(eig[k] < EIG_EPS);
    const int singular = !regular || qr_solve(cov, s->y, s->x, nb, s->work, s->mat_mul) != 0;
    if (singular) memset(s->x, 0, sizeof(float) * DIM * (size_t)nb);
    for (int k = 0; k < DIM * nb; k++) s->x[k] = (s->x[k] * s->y[k]) / (float)DIM;
    for (int k = 1; k < DIM; k++)
        for (int b = 0; b < nb; b++) s->x[b] += s->x[(size_t)k * nb + b];
    for (int b = 0; b < nb; b++) ent[b] = 0;
    for (int k = 0; k < DIM; k++) {
        const float l = eig[k] < 0 ? 0 : eig[k];
        for (int b = 0; b < nb; b++) ent[b] += log2(l * s->x[b] + s->sigma_nn) + log2(2 * M_PI * M_E);
    }
    memcpy(var, s->x, sizeof(float) * (size_t)nb);
    return singular ? -1 : 0;
}

static float entropic_difference(const speed_state *s) {
    const float *er = s->ent[0], *ed = s->ent[1], *vr = s->var[0], *vd = s->var[1];
    const float base = DIM * (log2((1 + s->nn_floor) * s->sigma_nn) + log2(2 * M_PI * M_E));
    float score = 0;
    for (int b = 0; b < s->nb; b++) {
        if (er[b] < base && ed[b] < base) continue;
        float wr, wd;
        switch (s->mode) {
        case 0: wr = er[b] * log2(1 + vr[b]); wd = ed[b] * log2(1 + vd[b]); break;
        case 1: wr = er[b] * log2(1 + vr[b]); wd = ed[b] * log2(1 + vr[b]); break;
        case 2: wr = er[b] * log2(1 + vd[b]); wd = ed[b] * log2(1 + vd[b]); break;
        case 3:
            wr = er[b] * log2(1 + (vr[b] + vd[b]) / 2.0);
            wd = ed[b] * log2(1 + (vr[b] + vd[b]) / 2.0);
            break;
        case 4: wr = er[b] * log2(1 + vr[b]); wd = ed[b] * log2(1 + (vr[b] + vd[b]) / 2.0); break;
        case 5: wr = er[b] * log2(1 + vr[b]); wd = ed[b] * log2(1 + (0.75 * vr[b] + 0.25 * vd[b])); break;
        default: wr = er[b] * log2(1 + vr[b]); wd = ed[b] * log2(1 + (0.25 * vr[b] + 0.75 * vd[b])); break;
        }
        score += fabsf(wr - wd);
    }
    return score / (float)s->nb;
}

/* Loads chroma plane c of pic into s->frame (ow x oh, 8-bit scale minus 128). */
static void load_plane(speed_state *s, const svc_picture *pic, int c) {
    const svc_plane *p = &pic->plane[c];
    const float div = (float)(1 << (s->bpc - 8));
    for (int y = 0; y < s->oh; y++) {
        float *out = s->frame + (size_t)y * s->stride;
        if (s->bpc == 8) {
            s->load8((const uint8_t *)p->data + y * p->stride, out, s->ow);
        } else {
            const uint16_t *row = (const uint16_t *)((const uint8_t *)p->data + y * p->stride);
            for (int x = 0; x < s->ow; x++) out[x] = (float)row[x] / div + -128;
        }
    }
}

/* Score of one chroma plane; -1 in *err when a covariance was singular. */
static float plane_score(speed_state *s, const svc_picture *ref, const svc_picture *dis, int c, int *err) {
    load_plane(s, ref, c);
    band_pass(s);
    const int err_ref = block_statistics(s, s->ent[0], s->var[0]);
    load_plane(s, dis, c);
    band_pass(s);
    const int err_dis = block_statistics(s, s->ent[1], s->var[1]);
    *err = err_ref || err_dis;
    if (!err_ref != !err_dis) return 0.0f;
    return entropic_difference(s);
}

/* ------------------------------------------------------------- extractor ---- */

static void speed_destroy(void *state) {
    speed_state *s = state;
    if (!s) return;
    free(s->frame);
    free(s->copy);
    free(s->filtered);
    free(s->conv_tmp);
    free(s->y);
    free(s->x);
    free(s->work);
    for (int k = 0; k < 2; k++) {
        free(s->ent[k]);
        free(s->var[k]);
    }
    free(s);
}

static void *speed_create_with(int w, int h, int pix_fmt, int bpc, int cpu, const double *options) {
    if (svc_frame_bytes(w, h, pix_fmt, bpc) < 0) return NULL;
    speed_state *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->mat_mul = mat_mul_c;
    s->covariance = covariance_c;
    s->axpy = axpy_c;
    s->load8 = load8_c;
    s->backend = "scalar";
#if defined(__x86_64__) || defined(__i386__)
    if (cpu >= SVC_CPU_AVX2) { /* AVX-512 CPUs run the AVX2 kernels */
        s->mat_mul = svc_speed_mat_mul_avx2;
        s->covariance = svc_speed_covariance_avx2;
        s->axpy = svc_speed_axpy_avx2;
        s->load8 = svc_speed_load8_avx2;
        s->backend = "avx2";
    }
#else
    (void)cpu;
#endif
    s->luma_w = w;
    s->luma_h = h;
    s->bpc = bpc;
    s->ow = pix_fmt == 444 ? w : w / 2;
    s->oh = pix_fmt == 420 ? h / 2 : h;
    const double prescale = options[OPT_PRESCALE];
    s->sw = (int)(s->ow * prescale + 0.5);
    s->sh = (int)(s->oh * prescale + 0.5);
    s->rescale = !(fabs(prescale - 1.0) < 1.0e-3);
    s->method = (int)options[OPT_PRESCALE_METHOD];
    s->mode = (int)options[OPT_WEIGHT_VAR_MODE];
    s->sigma_nn = (float)options[OPT_SIGMA_NN];
    s->nn_floor = (float)options[OPT_NN_FLOOR];
    s->max_val = options[OPT_MAX_VAL];
    s->dw = s->sw >> DECIMATION_LOG2;
    s->dh = s->sh >> DECIMATION_LOG2;
    s->nbh = s->dw / BLOCK;
    s->nbv = s->dh / BLOCK;
    s->nb = s->nbh * s->nbv;
    s->subw = s->nbh * BLOCK - BLOCK + 1;
    s->subh = s->nbv * BLOCK - BLOCK + 1;
    if (s->nb == 0) { /* the reference: "image too small, operating width or height is 0" */
        free(s);
        return NULL;
    }
    const float ks = (float)options[OPT_KERNELSCALE];
    s->aa_width = window_size(1, ks); /* the antialiasing filter has scale 1's size, sigma of 4 halvings */
    gaussian_taps(s->aa_taps, s->aa_width, sqrt(DECIMATION_LOG2) * s->aa_width / 5.0f);
    s->mean_width = window_size(DECIMATION_LOG2, ks);
    gaussian_taps(s->mean_taps, s->mean_width, s->mean_width / 5.0f);
    const int aw = s->ow > s->sw ? s->ow : s->sw, ah = s->oh > s->sh ? s->oh : s->sh;
    s->stride = aw;
    const size_t frame = (size_t)aw * ah;
    int ok = (s->frame = malloc(frame * sizeof(float))) && (s->copy = malloc(frame * sizeof(float))) &&
             (s->filtered = malloc(frame * sizeof(float))) && (s->conv_tmp = malloc(((size_t)aw + 2 * MAX_TAPS) * sizeof(float))) &&
             (s->y = malloc((size_t)DIM * s->nb * sizeof(float))) && (s->x = malloc((size_t)DIM * s->nb * sizeof(float))) &&
             (s->work = malloc(((size_t)3 * DIM * DIM + (size_t)DIM * s->nb) * sizeof(float)));
    for (int k = 0; ok && k < 2; k++)
        ok = (s->ent[k] = malloc((size_t)s->nb * sizeof(float))) && (s->var[k] = malloc((size_t)s->nb * sizeof(float)));
    if (!ok) {
        speed_destroy(s);
        return NULL;
    }
    return s;
}

static void *speed_create(int w, int h, int pix_fmt, int bpc, int cpu) {
    double defaults[N_OPTIONS];
    for (int o = 0; o < N_OPTIONS; o++) defaults[o] = speed_options[o].def;
    return speed_create_with(w, h, pix_fmt, bpc, cpu, defaults);
}

static const char *speed_backend(const void *state) { return ((const speed_state *)state)->backend; }

static int speed_compute(void *state, const svc_picture *ref, const svc_picture *dis, double *out) {
    speed_state *s = state;
    if (!s || !ref || !dis || !out) return SVC_E_INVALID_ARG;
    if (ref->plane[0].w != s->luma_w || ref->plane[0].h != s->luma_h || dis->plane[0].w != s->luma_w ||
        dis->plane[0].h != s->luma_h || ref->bpc != s->bpc || dis->bpc != s->bpc)
        return SVC_E_GEOMETRY;
    int err_u, err_v;
    const float u = plane_score(s, ref, dis, 1, &err_u);
    const float v = plane_score(s, ref, dis, 2, &err_v);
    float uv;
    if (err_u && !err_v) uv = v;
    else if (err_v && !err_u) uv = u;
    else uv = (u + v) / 2.0;
    out[0] = u < s->max_val ? u : s->max_val;
    out[1] = v < s->max_val ? v : s->max_val;
    out[2] = uv < s->max_val ? uv : s->max_val;
    return SVC_OK;
}

static const char *speed_too_small(int w, int h, int pix_fmt, const double *options) {
    const int cw = pix_fmt == 444 ? w : w / 2, ch = pix_fmt == 420 ? h / 2 : h;
    const double ps = options[OPT_PRESCALE];
    const int sw = (int)(cw * ps + 0.5), sh = (int)(ch * ps + 0.5);
    if ((sw >> DECIMATION_LOG2) >= BLOCK && (sh >> DECIMATION_LOG2) >= BLOCK) return NULL;
    return "its chroma planes, times speed_prescale, must be at least 80x80 (one 5x5 block after decimation by 16)";
}

static const char *speed_check(const double *options) {
    const double mode = options[OPT_WEIGHT_VAR_MODE];
    if (mode != floor(mode)) return "speed_weight_var_mode must be a whole number";
    return NULL;
}

const svc_extractor svc_extractor_speed_chroma = {
    .name = "speed_chroma",
    .n_outputs = 3,
    .output_names = names,
    .create = speed_create,
    .backend = speed_backend,
    .compute = speed_compute,
    .destroy = speed_destroy,
    .n_options = N_OPTIONS,
    .options = speed_options,
    .create_with = speed_create_with,
    .check = speed_check,
    .too_small = speed_too_small,
};
