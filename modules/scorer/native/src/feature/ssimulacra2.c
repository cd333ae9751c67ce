/*
 * ssimulacra2: SSIMULACRA 2.1 (Sneyers, Cloudinary, 2023) of each frame pair, the reference
 * picture as the original, on the frames turned into full-range 8-bit RGB by one pinned
 * conversion (ssimulacra2.h): the result is what the ssimulacra2 tool prints for the two
 * frames written as 8-bit sRGB PNGs by that conversion.
 *
 * The metric: both pictures go to linear RGB (sRGB transfer), then, at 6 scales (each a 2x2 box
 * average of the previous scale's linear RGB, edge samples repeated; scales under 8 pixels wide or
 * high are dropped), to the XYB opsin space rescaled to about 0..1 (X * 14 + 0.42, Y + 0.01,
 * B - Y + 0.55). Per scale and channel, with mu and sigma from a recursive Gaussian blur
 * (sigma 1.5, zero outside the picture; Charalampidis 2016, the three-cosine IIR), three error
 * maps: 1 - SSIM without the luminance denominator, "ringing" (the distorted has edges where the
 * original is smooth) and "blurring" (the reverse), each summarised by its mean and its 4-norm.
 * The 108 numbers are weighted (the published 2.1 weights), and the sum mapped to a score where
 * 100 means identical.
 *
 * The RGB conversion (pinned; the "as FFmpeg's scale does with in_color_matrix=bt709:
 * in_range=tv:out_range=pc:flags=bicubic+accurate_rnd+full_chroma_int"): the matrix of the job's
 * colour metadata (SVC_OPT_COLOR_MATRIX: BT.709 unless told), limited range in (Y' 16..235, C 16..240
 * scaled by 2^(bpc-8)), full-range 8-bit R'G'B' out, rounded to nearest; 4:2:0 and 4:2:2 chroma
 * upsampled to every pixel with swscale's bicubic (B = 0, C = 0.6: Keys' cubic with a = -0.6) on
 * chroma sited at the centre of its luma samples, as swscale places it by default, edge samples
 * repeated. In floating point where swscale works in integers: an 8-bit RGB value may differ by one.
 *
 * Floats as the reference keeps them (pictures, blur, per-pixel terms), doubles for the sums;
 * the reference's vector code rounds its blur and cube root a little differently, so scores agree
 * to about 1e-3, not bit for bit.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "extractor.h"
#include "ssimulacra2.h"

static const char *const names[1] = { "ssimulacra2" };

#define SCALES 6

/* The published SSIMULACRA 2.1 weights (cloudinary/ssimulacra2, BSD licence): per channel X, Y, B,
 * per scale, per norm (1, 4): SSIM, ringing, blurring. */
static const double weight[108] = {
    0.0,
    0.0007376606707406586,
    0.0,
    0.0,
    0.0007793481682867309,
    0.0,
    0.0,
    0.0004371155730107379,
    0.0,
    1.1041726426657346,
    0.00066284834129271,
    0.00015231632783718752,
    0.0,
    0.0016406437456599754,
    0.0,
    1.8422455520539298,
    11.441172603757666,
    0.0,
    0.0007989109436015163,
    0.000176816438078653,
    0.0,
    1.8787594979546387,
    10.94906990605142,
    0.0,
    0.0007289346991508072,
    0.9677937080626833,
    0.0,
    0.00014003424285435884,
    0.9981766977854967,
    0.00031949755934435053,
    0.0004550992113792063,
    0.0,
    0.0,
    0.0013648766163243398,
    0.0,
    0.0,
    0.0,
    0.0,
    0.0,
    7.466890328078848,
    0.0,
    17.445833984131262,
    0.0006235601634041466,
    0.0,
    0.0,
    6.683678146179332,
    0.00037724407979611296,
    1.027889937768264,
    225.20515300849274,
    0.0,
    0.0,
    19.213238186143016,
    0.0011401524586618361,
    0.001237755635509985,
    176.39317598450694,
    0.0,
    0.0,
    24.43300999870476,
    0.28520802612117757,
    0.0004485436923833408,
    0.0,
    0.0,
    0.0,
    34.77906344483772,
    44.835625328877896,
    0.0,
    0.0,
    0.0,
    0.0,
    0.0,
    0.0,
    0.0,
    0.0,
    0.0008680556573291698,
    0.0,
    0.0,
    0.0,
    0.0,
    0.0,
    0.0005313191874358747,
    0.0,
    0.00016533814161379112,
    0.0,
    0.0,
    0.0,
    0.0,
    0.0,
    0.0004179171803251336,
    0.0017290828234722833,
    0.0,
    0.0020827005846636437,
    0.0,
    0.0,
    8.826982764996862,
    23.19243343998926,
    0.0,
    95.1080498811086,
    0.9863978034400682,
    0.9834382792465353,
    0.0012286405048278493,
    171.2667255897307,
    0.9807858872435379,
    0.0,
    0.0,
    0.0,
    0.0005130064588990679,
    0.0,
    0.00010854057858411537,
};

typedef svc_s2_gauss gauss;

/* Coefficients for sigma (Charalampidis 2016, eqs. 33-57, three cosines k = 1, 3, 5). */
static gauss gauss_for(double sigma) {
    const double pi = 3.141592653589793238;
    const double radius = roundf((float)(3.2795 * sigma + 0.2546));
    double omega[3], p[3], r[3], rho[3];
    for (int i = 0; i < 3; i++) {
        omega[i] = (2 * i + 1) * pi / (2.0 * radius);
        const double sign = i == 1 ? -1.0 : 1.0;
        p[i] = sign / tan(0.5 * omega[i]);
        r[i] = sign * p[i] * p[i] / sin(omega[i]);
        rho[i] = exp(-0.5 * sigma * sigma * omega[i] * omega[i]) / radius;
    }
    const double d13 = p[0] * r[1] - r[0] * p[1], d35 = p[1] * r[2] - r[1] * p[2], d51 = p[2] * r[0] - r[2] * p[0];
    const double zeta15 = d35 / d13, zeta35 = d51 / d13;
    /* beta solves A beta = gamma, A's rows (p), (r), (zeta15, zeta35, 1): Cramer's rule. */
    const double a[3][3] = { { p[0], p[1], p[2] }, { r[0], r[1], r[2] }, { zeta15, zeta35, 1.0 } };
    const double g[3] = { 1.0, radius * radius - sigma * sigma, zeta15 * rho[0] + zeta35 * rho[1] + rho[2] };
    const double det = a[0][0] * (a[1][1] * a[2][2] - a[1][2] * a[2][1]) - a[0][1] * (a[1][0] * a[2][2] - a[1][2] * a[2][0]) +
                       a[0][2] * (a[1][0] * a[2][1] - a[1][1] * a[2][0]);
    gauss out = { .radius = (int)radius };
    for (int i = 0; i < 3; i++) {
        double m[3][3];
        memcpy(m, a, sizeof m);
        for (int row = 0; row < 3; row++) m[row][i] = g[row];
        const double di = m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) -
                          m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0]) +
                          m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]);
        const double beta = di / det;
        const double n2 = -beta * cos(omega[i] * (radius + 1.0)), d1 = -2.0 * cos(omega[i]), d_2 = d1 * d1;
        out.n2[i] = (float)n2;
        out.d1[i] = (float)d1;
        /* Output j of a group of four from o[j] = n2 in[j] - d1 o[j-1] - o[j-2], expanded. */
        const double prev[4] = { -d1, d_2 - 1.0, -d_2 * d1 + 2.0 * d1, d_2 * d_2 - 3.0 * d_2 + 1.0 };
        const double prev2[4] = { -1.0, d1, -d_2 + 1.0, d_2 * d1 - 2.0 * d1 };
        const double in[4] = { n2, -d1 * n2, d_2 * n2 - n2, -d_2 * d1 * n2 + 2.0 * d1 * n2 };
        for (int j = 0; j < 4; j++) {
            out.prev[i][j] = (float)prev[j];
            out.prev2[i][j] = (float)prev2[j];
            out.in[i][j] = (float)in[j];
        }
    }
    return out;
}

typedef struct s2_state {
    int w, h, pix_fmt, bpc, matrix;
    gauss g;
    uint8_t *rgb;           /* one side as interleaved 8-bit RGB */
    float *lin[2][3];       /* linear RGB of each side, the current scale */
    float *xyb[2][3];       /* XYB of each side, the current scale */
    float *mu[2], *sig[3];  /* blurred planes of one channel: mu1, mu2, s11, s22, s12 */
    float *mul, *tmp;       /* a product before its blur; the horizontal pass */
    float *col;             /* the column pass's state: 6 values per column (y[n-1], y[n-2] per cosine) */
    float *rows;            /* SIMD: eight or sixteen rows transposed, in and out (32 w floats) */
    const svc_s2_kernels *simd; /* the AVX2 (with FMA) or AVX-512 kernels of the blur and the XYB conversion, or NULL */
    int *taps;              /* chroma upsampling: four source columns per column */
    double *tap_weights;    /* and their weights */
    float srgb_to_linear[256];
} s2_state;

static void s2_destroy(void *state) {
    s2_state *s = state;
    if (!s) return;
    free(s->rgb);
    for (int k = 0; k < 2; k++)
        for (int c = 0; c < 3; c++) {
            free(s->lin[k][c]);
            free(s->xyb[k][c]);
        }
    free(s->mu[0]);
    free(s->mu[1]);
    for (int c = 0; c < 3; c++) free(s->sig[c]);
    free(s->mul);
    free(s->tmp);
    free(s->col);
    free(s->rows);
    free(s->taps);
    free(s->tap_weights);
    free(s);
}

/* The sRGB transfer as the reference's colour management applies it to 8-bit input (v / 255 as
 * v * (1 / 255)): the linear segment below 0.04045, above it libjxl's rational (4 over 4)
 * approximation of ((e + 0.055) / 1.055)^2.4 (its published coefficients, BSD licence), evaluated
 * by Horner's rule with fused multiply-adds. Its error (about 1e-5) moves SSIMULACRA 2 by a few
 * hundredths on pairs that differ by a code value or so, so svc uses it rather than the exact power. */
static float srgb_to_linear(int v) {
    static const float p[5] = { 2.200248328e-04f, 1.043637593e-02f, 1.624820318e-01f, 7.961564959e-01f,
                                8.210152774e-01f };
    static const float q[5] = { 2.631846970e-01f, 1.076976492e+00f, 4.987528350e-01f, -5.512498495e-02f,
                                6.521209011e-03f };
    const float e = (float)v * (1.0f / 255);
    if (!(e > 0.04045f)) return e * (1.0f / 12.92f);
    float num = p[4], den = q[4];
    for (int k = 3; k >= 0; k--) {
        num = fmaf(num, e, p[k]);
        den = fmaf(den, e, q[k]);
    }
    return num / den;
}

static void *s2_create_matrix(int w, int h, int pix_fmt, int bpc, int cpu, int matrix) {
    if (svc_frame_bytes(w, h, pix_fmt, bpc) < 0 || matrix < SVC_MATRIX_BT709 || matrix > SVC_MATRIX_BT2020) return NULL;
    s2_state *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    static const svc_s2_kernels avx2 = { "avx2", svc_s2_blur_rows_avx2, svc_s2_blur_cols_avx2, svc_s2_xyb_avx2,
                                         svc_s2_error_sums_avx2 };
    static const svc_s2_kernels avx512 = { "avx512", svc_s2_blur_rows_avx512, svc_s2_blur_cols_avx512, svc_s2_xyb_avx512,
                                           svc_s2_error_sums_avx512 };
    *s = (s2_state){ .w = w, .h = h, .pix_fmt = pix_fmt, .bpc = bpc, .matrix = matrix, .g = gauss_for(1.5),
                     .simd = cpu >= SVC_CPU_AVX512                               ? &avx512
                             : cpu >= SVC_CPU_AVX2 && __builtin_cpu_supports("fma") ? &avx2
                                                                                 : NULL };
    const size_t n = (size_t)w * (size_t)h;
    int ok = (s->rgb = malloc(3 * n)) != NULL;
    for (int k = 0; k < 2; k++)
        for (int c = 0; c < 3; c++) {
            ok &= (s->lin[k][c] = malloc(sizeof(float) * n)) != NULL;
            ok &= (s->xyb[k][c] = malloc(sizeof(float) * n)) != NULL;
        }
    ok &= (s->mu[0] = malloc(sizeof(float) * n)) != NULL;
    ok &= (s->mu[1] = malloc(sizeof(float) * n)) != NULL;
    for (int c = 0; c < 3; c++) ok &= (s->sig[c] = malloc(sizeof(float) * n)) != NULL;
    ok &= (s->mul = malloc(sizeof(float) * n)) != NULL;
    ok &= (s->tmp = malloc(sizeof(float) * n)) != NULL;
    ok &= (s->col = malloc(sizeof(float) * 6 * (size_t)w)) != NULL;
    ok &= (s->rows = malloc(sizeof(float) * 32 * (size_t)w)) != NULL;
    ok &= (s->taps = malloc(sizeof(int) * 4 * (size_t)w)) != NULL;
    ok &= (s->tap_weights = malloc(sizeof(double) * 4 * (size_t)w)) != NULL;
    if (!ok) {
        s2_destroy(s);
        return NULL;
    }
    for (int v = 0; v < 256; v++) s->srgb_to_linear[v] = srgb_to_linear(v);
    return s;
}

static void *s2_create(int w, int h, int pix_fmt, int bpc, int cpu) {
    return s2_create_matrix(w, h, pix_fmt, bpc, cpu, SVC_MATRIX_BT709);
}

static void *s2_create_for(int w, int h, int pix_fmt, int bpc, int cpu, int color_matrix) {
    return s2_create_matrix(w, h, pix_fmt, bpc, cpu, color_matrix);
}

static const char *s2_backend(const void *state) {
    const s2_state *s = state;
    return s->simd ? s->simd->name : "scalar";
}

/* One output of the row pass, from the inputs' sum and the state of the three cosines. */
static float blur_step(const gauss *g, float sum, float prev[3], float prev2[3]) {
    float y[3];
    for (int k = 0; k < 3; k++) {
        y[k] = fmaf(g->prev[k][0], prev[k], fmaf(g->prev2[k][0], prev2[k], sum * g->in[k][0]));
        prev2[k] = prev[k];
        prev[k] = y[k];
    }
    return y[0] + (y[1] + y[2]);
}

/* The row pass over n samples (zero outside) into out: single outputs where an input falls outside
 * (the first group of four aligned past the radius, and the tail), groups of four between. */
static void blur_row(const gauss *g, const float *in, float *out, int n) {
    const int r = g->radius;
    const int first_group = (r + 1 + 3) / 4 * 4;
    float prev[3] = { 0, 0, 0 }, prev2[3] = { 0, 0, 0 };
    int i = -r + 1;
    for (; i < (first_group < n ? first_group : n); i++) {
        const int left = i - r - 1, right = i + r - 1;
        const float y = blur_step(g, (left >= 0 ? in[left] : 0.0f) + (right < n ? in[right] : 0.0f), prev, prev2);
        if (i >= 0) out[i] = y;
    }
    for (; i < n - r + 1 - 3; i += 4) {
        float sum[4], y[3][4];
        for (int j = 0; j < 4; j++) sum[j] = in[i + j - r - 1] + in[i + j + r - 1];
        for (int k = 0; k < 3; k++) {
            for (int j = 0; j < 4; j++) {
                float o = sum[0] * g->in[k][j];
                for (int q = 1; q <= j; q++) o = fmaf(g->in[k][j - q], sum[q], o);
                o = fmaf(g->prev2[k][j], prev2[k], o);
                y[k][j] = fmaf(g->prev[k][j], prev[k], o);
            }
            prev2[k] = y[k][2];
            prev[k] = y[k][3];
        }
        for (int j = 0; j < 4; j++) out[i + j] = y[0][j] + (y[1][j] + y[2][j]);
    }
    for (; i < n; i++) {
        const int left = i - r - 1, right = i + r - 1;
        out[i] = blur_step(g, (left >= 0 ? in[left] : 0.0f) + (right < n ? in[right] : 0.0f), prev, prev2);
    }
}

/* The blur of a w x h plane: rows, then columns (all columns of a row at a time, their states in
 * s->col: y[n-1] and y[n-2] of each cosine). */
static void blur(s2_state *s, const float *in, float *out, int w, int h) {
    const gauss *g = &s->g;
    const int r = g->radius;
    if (s->simd) {
        s->simd->blur_rows(g, in, s->tmp, w, h, s->rows);
        s->simd->blur_cols(g, s->tmp, out, w, h, s->col);
        return;
    }
    for (int y = 0; y < h; y++) blur_row(g, in + (size_t)y * w, s->tmp + (size_t)y * w, w);
    /* Cosine k's y[n-1] at p1[k w + x], y[n-2] at p2[k w + x]. */
    float *p1 = s->col, *p2 = s->col + 3 * (size_t)w;
    memset(s->col, 0, sizeof(float) * 6 * (size_t)w);
    for (int i = -r + 1; i < h; i++) {
        const int top = i - r - 1, bottom = i + r - 1;
        const float *a = top >= 0 ? s->tmp + (size_t)top * w : NULL;
        const float *b = bottom < h ? s->tmp + (size_t)bottom * w : NULL;
        float *row = i >= 0 ? out + (size_t)i * w : NULL;
        for (int x = 0; x < w; x++) {
            const float sum = a && b ? a[x] + b[x] : a ? a[x] : b ? b[x] : 0.0f;
            float v[3];
            for (int k = 0; k < 3; k++) {
                const size_t at = (size_t)k * w + x;
                v[k] = fmaf(g->n2[k], sum, fmaf(-g->d1[k], p1[at], -p2[at]));
                p2[at] = p1[at];
                p1[at] = v[k];
            }
            if (row) row[x] = v[0] + (v[1] + v[2]);
        }
    }
}

/* cbrt(x) + add for x >= 0 as the reference rounds it: Newton's iterations on x^(-1/3) from an
 * exponent-thirding first guess (three, then a last one of Halley-like form), then x r^2 + add. */
static float cbrt_add(float x, float add) {
    int32_t bits;
    memcpy(&bits, &x, sizeof bits);
    const int32_t guess = bits == 0 ? 0 : (int32_t)(0x54800000u - (uint32_t)(bits >> 23) * 0x002AAAAAu);
    float r;
    memcpy(&r, &guess, sizeof r);
    const float third = 1.0f / 3, four_thirds = 4.0f / 3, x_third = third * x;
    for (int i = 0; i < 3; i++) {
        const float r2 = r * r;
        r = fmaf(-x_third, r2 * r2, four_thirds * r);
    }
    float r2 = r * r;
    r = fmaf(third, fmaf(-x, r2 * r2, r), r);
    r2 = r * r;
    return fmaf(r2, x, add);
}

/* Linear RGB to the rescaled XYB (opsin absorbance, cube root, then X * 14 + 0.42, Y + 0.01,
 * B - Y + 0.55). */
static void to_xyb(const float *const lin[3], float *const xyb[3], size_t n, const svc_s2_kernels *simd) {
    if (simd) {
        simd->xyb(lin, xyb, n);
        return;
    }
    const float(*m)[3] = svc_s2_opsin;
    const float bias = svc_s2_opsin_bias;
    const float neg_bias_cbrt = -cbrtf(bias);
    for (size_t i = 0; i < n; i++) {
        const float r = lin[0][i], g = lin[1][i], b = lin[2][i];
        float mixed[3];
        for (int k = 0; k < 3; k++) {
            const float v = fmaf(m[k][0], r, fmaf(m[k][1], g, fmaf(m[k][2], b, bias)));
            mixed[k] = cbrt_add(v > 0.0f ? v : 0.0f, neg_bias_cbrt);
        }
        const float x = 0.5f * (mixed[0] - mixed[1]), y = 0.5f * (mixed[0] + mixed[1]);
        xyb[0][i] = x * 14.0f + 0.42f;
        xyb[1][i] = y + 0.01f;
        xyb[2][i] = (mixed[2] - y) + 0.55f;
    }
}

/* 2x2 box average in place (packed rows of w, then of (w + 1) / 2), edge samples repeated. */
static void halve(float *p, int w, int h) {
    const int ow = (w + 1) / 2, oh = (h + 1) / 2;
    for (int oy = 0; oy < oh; oy++)
        for (int ox = 0; ox < ow; ox++) {
            float sum = 0.0f;
            for (int iy = 0; iy < 2; iy++)
                for (int ix = 0; ix < 2; ix++) {
                    const int x = 2 * ox + ix < w - 1 ? 2 * ox + ix : w - 1;
                    const int y = 2 * oy + iy < h - 1 ? 2 * oy + iy : h - 1;
                    sum += p[(size_t)y * w + x];
                }
            p[(size_t)oy * ow + ox] = sum * 0.25f;
        }
}

static double fourth(double x) {
    x *= x;
    return x * x;
}

/* The six norms of channel c at one scale: SSIM (mean, 4-norm), ringing and blurring (each mean,
 * 4-norm), in the order ssim1, ssim4, ring1, ring4, blur1, blur4. */
static void scale_norms(s2_state *s, int c, int w, int h, double out[6]) {
    const size_t n = (size_t)w * h;
    const float *i1 = s->xyb[0][c], *i2 = s->xyb[1][c];
    for (size_t i = 0; i < n; i++) s->mul[i] = i1[i] * i1[i];
    blur(s, s->mul, s->sig[0], w, h);
    for (size_t i = 0; i < n; i++) s->mul[i] = i2[i] * i2[i];
    blur(s, s->mul, s->sig[1], w, h);
    for (size_t i = 0; i < n; i++) s->mul[i] = i1[i] * i2[i];
    blur(s, s->mul, s->sig[2], w, h);
    blur(s, i1, s->mu[0], w, h);
    blur(s, i2, s->mu[1], w, h);
    const float c2 = 0.0009f;
    double sum[6] = { 0 };
    const float *const planes[7] = { s->mu[0], s->mu[1], s->sig[0], s->sig[1], s->sig[2], i1, i2 };
    for (size_t i = s->simd ? s->simd->error_sums(planes, n, sum) : 0; i < n; i++) {
        const float mu1 = s->mu[0][i], mu2 = s->mu[1][i];
        const float mu11 = mu1 * mu1, mu22 = mu2 * mu2, mu12 = mu1 * mu2;
        const float num_m = 1.0f - (mu1 - mu2) * (mu1 - mu2);
        const float num_s = 2 * (s->sig[2][i] - mu12) + c2;
        const float den_s = (s->sig[0][i] - mu11) + (s->sig[1][i] - mu22) + c2;
        double d = 1.0 - (double)(num_m * num_s / den_s);
        if (d < 0.0) d = 0.0;
        sum[0] += d;
        sum[1] += fourth(d);
        const double edge = (1.0 + fabs((double)(i2[i] - mu2))) / (1.0 + fabs((double)(i1[i] - mu1))) - 1.0;
        const double ringing = edge > 0.0 ? edge : 0.0, blurring = edge < 0.0 ? -edge : 0.0;
        sum[2] += ringing;
        sum[3] += fourth(ringing);
        sum[4] += blurring;
        sum[5] += fourth(blurring);
    }
    const double per_pixel = 1.0 / (double)n;
    for (int k = 0; k < 6; k++) out[k] = k % 2 ? sqrt(sqrt(per_pixel * sum[k])) : per_pixel * sum[k];
}

/* The score of the two linear RGB pictures in s->lin (overwritten by the downscaled ones). */
static double score_linear(s2_state *s) {
    double norms[SCALES][3][6];
    int w = s->w, h = s->h, scales = 0;
    for (int scale = 0; scale < SCALES; scale++) {
        if (w < 8 || h < 8) break;
        if (scale) {
            for (int k = 0; k < 2; k++)
                for (int c = 0; c < 3; c++) halve(s->lin[k][c], w, h);
            w = (w + 1) / 2;
            h = (h + 1) / 2;
            /* The reference tests the size before halving: a scale may be smaller than 8. */
        }
        for (int k = 0; k < 2; k++) to_xyb((const float *const *)s->lin[k], s->xyb[k], (size_t)w * h, s->simd);
        for (int c = 0; c < 3; c++) scale_norms(s, c, w, h, norms[scale][c]);
        scales++;
    }
    double sum = 0.0;
    int i = 0;
    for (int c = 0; c < 3; c++)
        for (int scale = 0; scale < scales; scale++)
            for (int n = 0; n < 2; n++) {
                sum += weight[i++] * fabs(norms[scale][c][n]);     /* SSIM */
                sum += weight[i++] * fabs(norms[scale][c][2 + n]); /* ringing */
                sum += weight[i++] * fabs(norms[scale][c][4 + n]); /* blurring */
            }
    sum *= 0.9562382616834844;
    sum = 2.326765642916932 * sum - 0.020884521182843837 * sum * sum + 6.248496625763138e-05 * sum * sum * sum;
    return sum > 0.0 ? 100.0 - 10.0 * pow(sum, 0.6276336467831387) : 100.0;
}

/* Keys' cubic with a = -0.6 (swscale's bicubic, B = 0, C = 0.6) at distance t. */
static double cubic(double t) {
    t = fabs(t);
    if (t < 1.0) return (1.4 * t - 2.4) * t * t + 1.0;
    if (t < 2.0) return ((-0.6 * t + 3.0) * t - 4.8) * t + 2.4;
    return 0.0;
}

/* Chroma plane p (cw x ch) upsampled to w x h into out, through tmp (w x ch): centre-sited
 * samples, 4 taps per direction, edges repeated; a direction not subsampled is copied. */
static void upsample(const svc_plane *p, int bpc, int w, int h, float *tmp, float *out, int *taps, double *weights) {
    const int cw = p->w, ch = p->h;
    /* Column x's four source columns (edges repeated) and their weights, the same for every row. */
    for (int x = 0; cw != w && x < w; x++) {
        const double u = (x + 0.5) * cw / w - 0.5;
        const int base = (int)floor(u);
        for (int k = -1; k <= 2; k++) {
            const int at = base + k;
            taps[4 * x + k + 1] = at < 0 ? 0 : at >= cw ? cw - 1 : at;
            weights[4 * x + k + 1] = cubic(u - at);
        }
    }
    for (int y = 0; y < ch; y++) {
        const uint8_t *row = (const uint8_t *)p->data + (ptrdiff_t)y * p->stride;
        const uint16_t *row16 = (const uint16_t *)row;
        float *dst = tmp + (size_t)y * w;
        for (int x = 0; x < w; x++) {
            if (cw == w) {
                dst[x] = bpc == 8 ? row[x] : row16[x];
                continue;
            }
            double sum = 0.0;
            for (int k = 0; k < 4; k++)
                sum += weights[4 * x + k] * (bpc == 8 ? row[taps[4 * x + k]] : row16[taps[4 * x + k]]);
            dst[x] = (float)sum;
        }
    }
    for (int y = 0; y < h; y++) {
        if (ch == h) {
            memcpy(out + (size_t)y * w, tmp + (size_t)y * w, sizeof(float) * (size_t)w);
            continue;
        }
        const double u = (y + 0.5) * ch / h - 0.5;
        const int base = (int)floor(u);
        double c[4];
        const float *rows[4];
        for (int k = -1; k <= 2; k++) {
            int at = base + k;
            at = at < 0 ? 0 : at >= ch ? ch - 1 : at;
            c[k + 1] = cubic(u - (base + k));
            rows[k + 1] = tmp + (size_t)at * w;
        }
        for (int x = 0; x < w; x++)
            out[(size_t)y * w + x] =
                (float)(c[0] * rows[0][x] + c[1] * rows[1][x] + c[2] * rows[2][x] + c[3] * rows[3][x]);
    }
}

/* swscale's Y'CbCr -> R'G'B' multipliers of limited-range input per svc_color_matrix (BT.709, BT.601,
 * BT.2020), in 1/65536: Cr to R, Cb to B, Cb to G, Cr to G (the last two subtracted), range
 * expansion 255/224 included. */
static const int32_t chroma_gain[3][4] = {
    { 117489, 138438, 13975, 34925 },
    { 104597, 132201, 25675, 53279 },
    { 110013, 140363, 12277, 42626 },
};

/* A 1/65536 multiplier as swscale's 1/8192 output coefficient, rounded. */
static int32_t coefficient(int64_t gain) { return (int32_t)((gain * 8192 + 32768) >> 16); }

/* A 30-bit colour sum to 8 bits, clipped as swscale clips it. */
static uint8_t to_8bit(int32_t v) { return (uint8_t)((v < 0 ? 0 : v > (1 << 30) - 1 ? (1 << 30) - 1 : v) >> 22); }

/* Picture p as interleaved full-range 8-bit R'G'B' into s->rgb, in swscale's integer steps: each
 * sample on its 15-bit intermediate scale (upsampled chroma rounded to it), then its fixed-point
 * matrix (scratch: s->tmp, s->mul, s->sig). */
static void to_rgb8(s2_state *s, const svc_picture *p) {
    const int w = s->w, h = s->h, bpc = s->bpc;
    float *cb = s->sig[0], *cr = s->sig[1];
    upsample(&p->plane[1], bpc, w, h, s->tmp, cb, s->taps, s->tap_weights);
    upsample(&p->plane[2], bpc, w, h, s->mul, cr, s->taps, s->tap_weights);
    const int32_t *gain = chroma_gain[s->matrix];
    const int32_t y_coeff = coefficient((int64_t)65536 * 255 / 219), y_offset = 16 << 9;
    const int32_t v2r = coefficient(gain[0]), u2b = coefficient(gain[1]), u2g = coefficient(-gain[2]),
                  v2g = coefficient(-gain[3]);
    /* To the 15-bit scale: 8 bits << 7; deeper samples down to 15 bits. */
    const float to15 = bpc <= 15 ? (float)(1 << (15 - bpc)) : 0.5f;
    for (int y = 0; y < h; y++) {
        const uint8_t *row = (const uint8_t *)p->plane[0].data + (ptrdiff_t)y * p->plane[0].stride;
        for (int x = 0; x < w; x++) {
            const size_t i = (size_t)y * w + x;
            const int32_t y15 = (int32_t)((bpc == 8 ? row[x] : ((const uint16_t *)row)[x]) * to15);
            const int32_t u15 = (int32_t)floorf(cb[i] * to15 + 0.5f), v15 = (int32_t)floorf(cr[i] * to15 + 0.5f);
            const int32_t luma = (y15 * 4 - y_offset) * y_coeff + (1 << 21);
            const int32_t u = (u15 - (128 << 7)) * 4, v = (v15 - (128 << 7)) * 4;
            s->rgb[3 * i] = to_8bit(luma + v * v2r);
            s->rgb[3 * i + 1] = to_8bit(luma + v * v2g + u * u2g);
            s->rgb[3 * i + 2] = to_8bit(luma + u * u2b);
        }
    }
}

static int s2_compute(void *state, const svc_picture *ref, const svc_picture *dis, double *out) {
    s2_state *s = state;
    const svc_picture *side[2] = { ref, dis };
    for (int k = 0; k < 2; k++) {
        const svc_picture *p = side[k];
        if (p->bpc != s->bpc || p->pix_fmt != s->pix_fmt || p->plane[0].w != s->w || p->plane[0].h != s->h)
            return SVC_E_GEOMETRY;
        to_rgb8(s, p);
        const size_t n = (size_t)s->w * s->h;
        for (size_t i = 0; i < n; i++)
            for (int c = 0; c < 3; c++) s->lin[k][c][i] = s->srgb_to_linear[s->rgb[3 * i + c]];
    }
    out[0] = score_linear(s);
    return SVC_OK;
}

const svc_extractor svc_extractor_ssimulacra2 = {
    .name = "ssimulacra2",
    .n_outputs = 1,
    .output_names = names,
    .create = s2_create,
    .backend = s2_backend,
    .compute = s2_compute,
    .destroy = s2_destroy,
    .create_for_matrix = s2_create_for,
};
