/*
 * ciede: CIEDE2000 colour difference (Sharma, Wu & Dalal 2005) as the reference's "ciede"
 * reports it: per pixel, limited-range BT.709 Y'CbCr -> R'G'B' -> linear RGB (sRGB transfer,
 * threshold 10/255) -> XYZ (D65) -> CIELAB, then dE00 with k_L = 0.65, k_C = 1, k_H = 4; the
 * frame score is 45 - 20 log10(mean dE00) (identical frames give +infinity). Chroma is
 * upsampled by repeating samples (4:2:0: both directions; 4:2:2: horizontally). Above 8 bits
 * Y' is normalised as (Y' - 16 * 2^(bpc-8)) / (219 * 2^(bpc-8)) (Cb, Cr likewise around
 * 128 * 2^(bpc-8)). As the reference (libvmaf 3.2.0) computes it: Y'CbCr -> Lab in double (pow
 * for the transfer and the cube root), each of X, Y, Z rounded to float after the cube root and
 * L, a, b to float; dE00 in float variables with the double libm calls (sqrt, pow, atan2, cos,
 * sin, exp) and powf where the reference has them; the mean sums in double. The
 * single-precision calls of older releases (atan2f, cosf, sinf, powf in the colour conversion)
 * moved hue differences near pi across its branch (2.2e-4 on the 4:4:4 bars).
 *
 * Where the reference differs: its 4:2:2 path reads chroma rows at the wrong offsets; svc
 * upsamples 4:2:2 correctly, so there the scores differ from the reference's.
 */
#include <math.h>
#include <stdlib.h>

#include "extractor.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

static const char *const names[1] = { "ciede2000" };

typedef struct ciede_state {
    int w, h, pix_fmt, bpc;
} ciede_state;

typedef struct lab {
    float l, a, b;
} lab;

static void *ciede_create(int w, int h, int pix_fmt, int bpc, int cpu) {
    (void)cpu;
    if (svc_frame_bytes(w, h, pix_fmt, bpc) < 0) return NULL;
    ciede_state *s = malloc(sizeof *s);
    if (s) *s = (ciede_state){ .w = w, .h = h, .pix_fmt = pix_fmt, .bpc = bpc };
    return s;
}

static const char *ciede_backend(const void *state) {
    (void)state;
    return "scalar";
}

static void ciede_destroy(void *state) { free(state); }

static float h_prime(float x, float y) {
    if (x == 0.0f && y == 0.0f) return 0.0f;
    float angle = (float)atan2(x, y);
    if (angle < 0.0f) angle += 2. * M_PI;
    return angle;
}

static float delta_h_prime(float c1, float c2, float h1, float h2) {
    if (c1 == 0.0f || c2 == 0.0f) return 0.0f;
    if (fabsf(h1 - h2) <= M_PI) return h2 - h1;
    if (h2 <= h1) return h2 - h1 + 2. * M_PI;
    return h2 - h1 - 2. * M_PI;
}

static float h_bar_prime(float h1, float h2) {
    return fabs(h1 - h2) > M_PI ? (h1 + h2 + 2.0 * M_PI) / 2.0 : (h1 + h2) / 2.0;
}

static float upcase_t(float hb) {
    return 1.0 - 0.17 * cos(hb - M_PI / 6.0) + 0.24 * cos(2.0 * hb) + 0.32 * cos(3.0 * hb + M_PI / 30.0) -
           0.20 * cos(4.0 * hb - 7.0 * M_PI / 20.0);
}

static float r_sub_t(float c_bar_prime, float hb) {
    const float deg = ((float)(hb * (180.0 / M_PI)) - 275.0) * (1.0 / 25.0);
    const float rad = (float)(60.0 * exp(-(powf(deg, 2)))) * (M_PI / 180.0);
    return -2.0 * sqrt(powf(c_bar_prime, 7) / (powf(c_bar_prime, 7) + powf(25., 7))) * sin(rad);
}

static float de2000(lab c1_, lab c2_) {
    const float kl = 0.65f, kc = 1.0f, kh = 4.0f;
    const float delta_l = c2_.l - c1_.l;
    const float l_bar = (c1_.l + c2_.l) / 2;
    const float c1 = sqrt(pow(c1_.a, 2) + pow(c1_.b, 2));
    const float c2 = sqrt(pow(c2_.a, 2) + pow(c2_.b, 2));
    const float c_bar = (c1 + c2) / 2;
    const double g = 1 - sqrt(pow(c_bar, 7) / (pow(c_bar, 7) + pow(25, 7)));
    const float a1 = c1_.a + (c1_.a / 2) * g;
    const float a2 = c2_.a + (c2_.a / 2) * g;
    const float cp1 = sqrt(pow(a1, 2) + pow(c1_.b, 2));
    const float cp2 = sqrt(pow(a2, 2) + pow(c2_.b, 2));
    const float cp_bar = (cp1 + cp2) / 2;
    const float delta_c = cp2 - cp1;
    const float s_l = 1. + ((0.015 * pow(l_bar - 50, 2)) / sqrt(20 + pow(l_bar - 50, 2)));
    const float s_c = 1. + 0.045 * cp_bar;
    const float h1 = h_prime(c1_.b, a1), h2 = h_prime(c2_.b, a2);
    const float dh = delta_h_prime(c1, c2, h1, h2);
    const float delta_h = 2.0 * sqrt(cp1 * cp2) * sin(dh / 2.0);
    const float hb = h_bar_prime(h1, h2);
    const float s_h = 1.0 + 0.015 * cp_bar * upcase_t(hb);
    const float rt = r_sub_t(cp_bar, hb);
    const float lightness = delta_l / (kl * s_l);
    const float chroma = delta_c / (kc * s_c);
    const float hue = delta_h / (kh * s_h);
    return sqrt(pow(lightness, 2) + pow(chroma, 2) + pow(hue, 2) + rt * chroma * hue);
}

/* Colour conversion in double, as the reference's: only lab_map's result is rounded to float. */
static double to_linear(double c) {
    if (c > 10. / 255.) return pow((c + 0.055) * (1.0 / 1.055), 2.4);
    return c * (1.0 / 12.92);
}

static float lab_map(double c) {
    const double kappa = 24389.0 / 27.0, epsilon = 216.0 / 24389.0;
    return (float)(c > epsilon ? pow(c, 1.0 / 3.0) : (kappa * c + 16.0) * (1.0 / 116.0));
}

static lab to_lab(double y, double u, double v, int bpc) {
    const double scale = 1 << (bpc - 8);
    y = (y - 16. * scale) * (1. / (219. * scale));
    u = (u - 128. * scale) * (1. / (224. * scale));
    v = (v - 128. * scale) * (1. / (224. * scale));
    const double r = to_linear(y + 1.28033 * v);
    const double g = to_linear(y - 0.21482 * u - 0.38059 * v);
    const double b = to_linear(y + 2.12798 * u);
    const double x = lab_map((r * 0.4124564390896921 + g * 0.357576077643909 + b * 0.18043748326639894) *
                             (1.0 / 0.95047));
    const double yy = lab_map(r * 0.21267285140562248 + g * 0.715152155287818 + b * 0.07217499330655958);
    const double z = lab_map((r * 0.019333895582329317 + g * 0.119192025881303 + b * 0.9503040785363677) *
                             (1.0 / 1.08883));
    return (lab){ .l = (float)((116.0 * yy) - 16.0), .a = (float)(500.0 * (x - yy)), .b = (float)(200.0 * (yy - z)) };
}

static inline float sample(const svc_plane *p, int bpc, int x, int y) {
    const uint8_t *row = (const uint8_t *)p->data + y * p->stride;
    return bpc == 8 ? (float)row[x] : (float)((const uint16_t *)row)[x];
}

static int ciede_compute(void *state, const svc_picture *ref, const svc_picture *dis, double *out) {
    const ciede_state *s = state;
    if (ref->plane[0].w != s->w || ref->plane[0].h != s->h || dis->plane[0].w != s->w || dis->plane[0].h != s->h)
        return SVC_E_GEOMETRY;
    const int sx = s->pix_fmt == SVC_PIX_444 ? 0 : 1, sy = s->pix_fmt == SVC_PIX_420 ? 1 : 0;
    double sum = 0.0;
    for (int i = 0; i < s->h; i++)
        for (int j = 0; j < s->w; j++) {
            const int ci = i >> sy, cj = j >> sx;
            const lab a = to_lab(sample(&ref->plane[0], s->bpc, j, i), sample(&ref->plane[1], s->bpc, cj, ci),
                                 sample(&ref->plane[2], s->bpc, cj, ci), s->bpc);
            const lab b = to_lab(sample(&dis->plane[0], s->bpc, j, i), sample(&dis->plane[1], s->bpc, cj, ci),
                                 sample(&dis->plane[2], s->bpc, cj, ci), s->bpc);
            sum += de2000(a, b);
        }
    out[0] = 45. - 20. * log10(sum / ((double)s->w * s->h));
    return SVC_OK;
}

const svc_extractor svc_extractor_ciede = {
    .name = "ciede",
    .n_outputs = 1,
    .output_names = names,
    .create = ciede_create,
    .backend = ciede_backend,
    .compute = ciede_compute,
    .destroy = ciede_destroy,
};
