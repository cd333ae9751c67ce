/*
 * cambi: the no-reference banding score of the distorted luma (Tandon et al., "CAMBI: Contrast-
 * aware Multiscale Banding Index", PCS 2021), with the reference's defaults: window 65 at 4K
 * (scaled to the frame), top 60% pooling, visibility threshold 0.019 under BT.1886, contrasts of
 * 1..4 levels at 10 bits.
 *
 * Steps per frame:
 *   1. The luma on a 10-bit scale (8-bit samples << 2, 12/16-bit rounded down to 10); below 10
 *      bits a 2x2 box average removes dithering.
 *   2. A mask of flat pixels: a pixel is "flat" when it equals its right and lower neighbours
 *      (frame edges count as equal); a pixel is kept when more than a resolution-dependent
 *      number of the 7x7 pixels around it are flat.
 *   3. Five scales (halving, nearest sample), each: a 3x3 separable mode filter (rows, then
 *      columns; outer rows and columns unchanged), then for every masked pixel of value v the
 *      histogram of masked values in the window around it gives p0 = count(v), and for each
 *      contrast d the larger neighbour count p = max(count(v+d), count(v-d)); the pixel's
 *      c-value is the largest w_d * p0 * p / (p0 + p) over the contrasts visible at v.
 *   4. Each scale pools its c-values as the mean of the top 60%; the score is the weighted sum
 *      (16, 8, 4, 2, 1) over the scales divided by the number of pixels in the window.
 * The histograms slide down the rows, one per column, as a box filter over the masked values;
 * their range updates are the kernel with an AVX2 variant (feature_cambi_avx2.c).
 *
 * Options, as model files set them (the vmaf_v1.0.16 models), named in the outputs as the
 * reference names them ("cambi_hrs_1080_cmxv_17_vlt_0.06"):
 *   cambi_max_val (cmxv, default 1000): the score is capped there;
 *   cambi_vis_lum_threshold (vlt, nits, default 0): contrast d at a pixel is ignored when the
 *     brighter of the two levels (v + d on the 10-bit scale) is still darker than the threshold
 *     (at most the largest 10-bit level whose luminance is below it);
 *   cambi_high_res_speedup (hrs, default 0): 1080, 1440 or 2160, and the frame has at least
 *     that many pixels (1920x1080, 2560x1440, 3840x2160): the flat mask is taken at full size,
 *     then image and mask are halved before scale 0 (five scales from half size) and the window
 *     is halved (rounded up); any other value, or a smaller frame, changes nothing.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "extractor.h"
#include "feature_cambi.h"

#define CAMBI_SCALES 5
#define CAMBI_MASK_SIZE 7
#define CAMBI_LEVELS 1024 /* 10-bit working scale */
#define CAMBI_WINDOW 65   /* ~1 degree at 4K */
#define CAMBI_TOPK 0.6
#define CAMBI_TVI 0.019
#define CAMBI_MAX_LOG_CONTRAST 2
#define CAMBI_DIFFS (1 << CAMBI_MAX_LOG_CONTRAST)
#define CAMBI_MIN_SIDE 216 /* the reference refuses frames smaller than this on both sides */

static const char *const names[1] = { "cambi" };

static const int scale_weights[CAMBI_SCALES] = { 16, 8, 4, 2, 1 };
/* Suprathreshold contrast response for contrasts 1..32 levels. */
static const int contrast_weights[32] = { 1, 2, 3, 4, 4, 5, 5, 6, 6, 6, 6, 7, 7, 7, 7, 8,
                                          8, 8, 8, 8, 8, 8, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9 };

typedef struct cambi_state {
    int w, h, bpc;
    double max_val;                /* cambi_max_val */
    int vlt_level;                 /* largest 10-bit level darker than cambi_vis_lum_threshold */
    int window;                    /* window side for this resolution */
    int high_res;                  /* cambi_high_res_speedup applies: scale 0 is already halved */
    int tvi_limit[CAMBI_DIFFS];    /* largest 10-bit value at which contrast d+1 is visible */
    uint16_t *image, *mask;        /* w * h, stride w */
    uint16_t *rows;                /* 3 * w: the mode filter's horizontal results */
    uint32_t *dp;                  /* (CAMBI_MASK_SIZE + 1) rows of summed-area table */
    uint16_t *hist;                /* (CAMBI_LEVELS + 2 * CAMBI_DIFFS) * w, one histogram per column */
    float *cvals;                  /* w * h */
    svc_cambi_range_add range_add; /* the histogram update kernel */
    const char *backend;
} cambi_state;

/* ---- luminance (BT.1886, limited range, 10 bits) ---- */

static double bt1886(double v) {
    const double lw = 300.0, lb = 0.01, gamma = 2.4;
    const double span = pow(lw, 1.0 / gamma) - pow(lb, 1.0 / gamma);
    const double a = pow(span, gamma), b = pow(lb, 1.0 / gamma) / span;
    return a * pow(v + b > 0 ? v + b : 0, gamma);
}

static double luminance10(int sample) {
    const int foot = 64, head = 940;
    const int c = sample < foot ? foot : sample > head ? head : sample;
    return bt1886((double)(c - foot) / (head - foot));
}

/* Contrast diff is visible at sample when it raises luminance by more than tvi * L. */
static int visible(int sample, int diff) {
    const double l = luminance10(sample);
    return luminance10(sample + diff) - l > CAMBI_TVI * l;
}

/* The largest sample at which contrast diff is visible (visibility falls with brightness):
 * a bisection on [foot, head - diff - 1], as the reference searches it. */
static int tvi_limit(int diff) {
    int lo = 64, hi = 940 - diff - 1;
    if (!visible(lo, diff)) return 0;
    if (!visible(lo + 1, diff)) return lo;
    if (visible(hi, diff)) return visible(hi + 1, diff) ? CAMBI_LEVELS - 1 : hi;
    for (;;) {
        const int mid = lo + (hi - lo) / 2;
        if (!visible(mid, diff)) hi = mid;
        else if (visible(mid + 1, diff)) lo = mid;
        else return mid;
    }
}

/* ---- state ---- */

static void cambi_destroy(void *state) {
    cambi_state *s = state;
    if (!s) return;
    free(s->image);
    free(s->mask);
    free(s->rows);
    free(s->dp);
    free(s->hist);
    free(s->cvals);
    free(s);
}

enum { OPT_HIGH_RES_SPEEDUP, OPT_MAX_VAL, OPT_VIS_LUM_THRESHOLD, N_OPTIONS };
/* In the order the reference appends them to output names. */
static const svc_extractor_option cambi_options[N_OPTIONS] = {
    { .name = "cambi_high_res_speedup", .alias = "hrs", .def = 0.0, .min = 0.0, .max = 2160.0 },
    { .name = "cambi_max_val", .alias = "cmxv", .def = 1000.0, .min = 0.0, .max = 1000.0 },
    { .name = "cambi_vis_lum_threshold", .alias = "vlt", .def = 0.0, .min = 0.0, .max = 300.0 },
};

static void range_add_c(uint16_t *row, int lo, int hi, int delta) {
    for (int c = lo; c < hi; c++) row[c] = (uint16_t)(row[c] + delta);
}

static void *cambi_create_with(int w, int h, int pix_fmt, int bpc, int cpu, const double *options) {
    if (svc_frame_bytes(w, h, pix_fmt, bpc) < 0) return NULL;
    if (w < CAMBI_MIN_SIDE && h < CAMBI_MIN_SIDE) return NULL;
    cambi_state *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->w = w;
    s->h = h;
    s->bpc = bpc;
    s->max_val = options[OPT_MAX_VAL];
    s->range_add = range_add_c;
    s->backend = "scalar";
#if defined(__x86_64__) || defined(__i386__)
    if (cpu >= SVC_CPU_AVX2) { /* AVX-512 CPUs run the AVX2 kernels */
        s->range_add = svc_cambi_range_add_avx2;
        s->backend = "avx2";
    }
#endif
    for (int v = 0; v < CAMBI_LEVELS; v++)
        if (luminance10(v) < options[OPT_VIS_LUM_THRESHOLD]) s->vlt_level = v;
    /* Window scaled by (w + h) / (3840 + 2160), in the reference's integer arithmetic. */
    s->window = ((CAMBI_WINDOW * (w + h)) / 375) >> 4;
    const double hrs = options[OPT_HIGH_RES_SPEEDUP];
    const int64_t pixels = (int64_t)w * h;
    s->high_res = (hrs == 1080 && pixels >= 1920 * 1080) || (hrs == 1440 && pixels >= 2560 * 1440) ||
                  (hrs == 2160 && pixels >= 3840 * 2160);
    if (s->high_res) s->window = (s->window + 1) >> 1;
    for (int d = 0; d < CAMBI_DIFFS; d++) s->tvi_limit[d] = tvi_limit(d + 1);
    const size_t n = (size_t)w * h;
    s->image = malloc(n * sizeof *s->image);
    s->mask = malloc(n * sizeof *s->mask);
    s->rows = malloc(3 * (size_t)w * sizeof *s->rows);
    s->dp = malloc((size_t)(CAMBI_MASK_SIZE + 1) * (w + CAMBI_MASK_SIZE) * sizeof *s->dp);
    s->hist = malloc((size_t)(CAMBI_LEVELS + 2 * CAMBI_DIFFS) * w * sizeof *s->hist);
    s->cvals = malloc(n * sizeof *s->cvals);
    if (!s->image || !s->mask || !s->rows || !s->dp || !s->hist || !s->cvals) {
        cambi_destroy(s);
        return NULL;
    }
    return s;
}

static void *cambi_create(int w, int h, int pix_fmt, int bpc, int cpu) {
    const double defaults[N_OPTIONS] = { cambi_options[0].def, cambi_options[1].def, cambi_options[2].def };
    return cambi_create_with(w, h, pix_fmt, bpc, cpu, defaults);
}

static const char *cambi_backend(const void *state) { return ((const cambi_state *)state)->backend; }

/* ---- step 1: 10-bit luma ---- */

static void load_luma(cambi_state *s, const svc_plane *p) {
    const int w = s->w, h = s->h;
    for (int y = 0; y < h; y++) {
        uint16_t *dst = s->image + (size_t)y * w;
        if (s->bpc == 8) {
            const uint8_t *src = (const uint8_t *)p->data + y * p->stride;
            for (int x = 0; x < w; x++) dst[x] = (uint16_t)(src[x] << 2);
        } else {
            const uint16_t *src = (const uint16_t *)((const uint8_t *)p->data + y * p->stride);
            const int shift = s->bpc - 10, round = shift ? 1 << (shift - 1) : 0;
            for (int x = 0; x < w; x++) dst[x] = (uint16_t)((src[x] + round) >> shift);
        }
    }
    if (s->bpc >= 10) return;
    /* Anti-dithering: each sample becomes the mean of its 2x2 block (in place, reading the
     * right and lower neighbours before they change), the last row and column of pairs. */
    for (int y = 0; y < h - 1; y++) {
        uint16_t *r = s->image + (size_t)y * w, *below = r + w;
        for (int x = 0; x < w - 1; x++) r[x] = (uint16_t)((r[x] + r[x + 1] + below[x] + below[x + 1]) >> 2);
        r[w - 1] = (uint16_t)((r[w - 1] + below[w - 1]) >> 1);
    }
    uint16_t *last = s->image + (size_t)(h - 1) * w;
    for (int x = 0; x < w - 1; x++) last[x] = (uint16_t)((last[x] + last[x + 1]) >> 1);
}

/* ---- step 2: flat-pixel mask ---- */

static int ceil_log2(uint32_t n) {
    int bits = 0;
    for (uint32_t t = n ? n - 1 : 0; t; t >>= 1) bits++;
    return bits;
}

/* How many of the 7x7 neighbours must be flat: half the square, more at higher resolutions. */
static int mask_threshold(int w, int h) {
    const uint32_t blocks = (uint32_t)(w >> 6) * (uint32_t)(h >> 6);
    return (CAMBI_MASK_SIZE * CAMBI_MASK_SIZE + 3 * (ceil_log2(blocks) - 11) - 1) >> 1;
}

static int is_flat(const uint16_t *img, int w, int h, int x, int y) {
    const uint16_t v = img[(size_t)y * w + x];
    return (x == w - 1 || v == img[(size_t)y * w + x + 1]) && (y == h - 1 || v == img[(size_t)(y + 1) * w + x]);
}

/* Box sums of the flat indicator over 7x7 with a rolling summed-area table of 8 rows. */
static void flat_mask(cambi_state *s) {
    const int w = s->w, h = s->h, pad = CAMBI_MASK_SIZE >> 1, rows = CAMBI_MASK_SIZE + 1;
    const int dw = w + 2 * pad + 1;
    const int threshold = mask_threshold(w, h);
    uint32_t *dp = s->dp;
    memset(dp, 0, (size_t)rows * dw * sizeof *dp);
    /* Table row r holds the prefix sums of image rows up to (r's image row); image row y lives
     * in table row (y + pad + 1) % rows, and column x in table column x + pad + 1. */
    for (int y = 0; y < h + pad; y++) {
        const int cur = (y + pad + 1) % rows, prev = (y + pad) % rows;
        for (int x = 0; x < w + pad; x++) {
            const int v = y < h && x < w ? is_flat(s->image, w, h, x, y) : 0;
            const int c = x + pad + 1;
            dp[cur * dw + c] = (uint32_t)v + dp[prev * dw + c] + dp[cur * dw + c - 1] - dp[prev * dw + c - 1];
        }
        const int oy = y - pad; /* output row whose 7x7 square ends at image row y */
        if (oy < 0) continue;
        const int bottom = cur, top = (oy + rows) % rows; /* table row of image row oy - pad - 1 */
        for (int x = 0; x < w; x++) {
            const int c = x + pad + 1;
            const int64_t sum = (int64_t)dp[bottom * dw + c + pad] - dp[bottom * dw + c - pad - 1] -
                                dp[top * dw + c + pad] + dp[top * dw + c - pad - 1];
            s->mask[(size_t)oy * w + x] = sum > threshold;
        }
    }
}

/* ---- step 3: per scale ---- */

/* In place: plane (stride sw) keeps every other sample of every other row, to w x h. */
static void decimate(uint16_t *plane, int sw, int w, int h) {
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) plane[(size_t)y * w + x] = plane[(size_t)(2 * y) * sw + 2 * x];
}

static uint16_t mode3(uint16_t a, uint16_t b, uint16_t c) {
    if (a == b || a == c) return a;
    if (b == c) return b;
    return a < b ? (a < c ? a : c) : (b < c ? b : c);
}

/* 3x3 mode as a horizontal then a vertical 3-tap mode; the first and last rows and columns
 * keep their values. */
static void mode_filter(cambi_state *s, int w, int h) {
    uint16_t *img = s->image, *rows = s->rows;
    for (int y = 0; y < h; y++) {
        uint16_t *out = rows + (size_t)(y % 3) * w;
        const uint16_t *in = img + (size_t)y * w;
        out[0] = in[0];
        for (int x = 1; x < w - 1; x++) out[x] = mode3(in[x - 1], in[x], in[x + 1]);
        out[w - 1] = in[w - 1];
        if (y < 2) continue;
        uint16_t *dst = img + (size_t)(y - 1) * w;
        for (int x = 0; x < w; x++) dst[x] = mode3(rows[x], rows[w + x], rows[2 * w + x]);
    }
}

/* Adds delta, for each masked pixel of image row y with value v, to the histograms of
 * columns [x - pad, x + pad] at bin v + CAMBI_DIFFS. */
static void hist_row(cambi_state *s, int w, int y, int pad, int delta) {
    const uint16_t *img = s->image + (size_t)y * w, *m = s->mask + (size_t)y * w;
    for (int x = 0; x < w; x++) {
        if (!m[x]) continue;
        const int lo = x - pad < 0 ? 0 : x - pad, hi = x + pad + 1 > w ? w : x + pad + 1;
        s->range_add(s->hist + (size_t)(img[x] + CAMBI_DIFFS) * w, lo, hi, delta);
    }
}

static float c_value(const cambi_state *s, int w, int x, int value) {
    const int v = value + CAMBI_DIFFS;
    const uint16_t *hist = s->hist;
    const uint16_t p0 = hist[(size_t)v * w + x];
    float best = 0.0f;
    for (int d = 0; d < CAMBI_DIFFS; d++) {
        if (v > s->tvi_limit[d] + CAMBI_DIFFS || v + d + 1 <= s->vlt_level) continue;
        const uint16_t up = hist[(size_t)(v + d + 1) * w + x], down = hist[(size_t)(v - d - 1) * w + x];
        const uint16_t p = up > down ? up : down;
        const float val = (float)(contrast_weights[d] * p0 * p) / (float)(p + p0);
        if (val > best) best = val;
    }
    return best;
}

static void c_values(cambi_state *s, int w, int h) {
    const int pad = s->window >> 1;
    memset(s->cvals, 0, (size_t)w * h * sizeof *s->cvals);
    memset(s->hist, 0, (size_t)(CAMBI_LEVELS + 2 * CAMBI_DIFFS) * w * sizeof *s->hist);
    for (int y = 0; y < pad && y < h; y++) hist_row(s, w, y, pad, 1);
    for (int y = 0; y < h; y++) {
        if (y - pad - 1 >= 0) hist_row(s, w, y - pad - 1, pad, -1);
        if (y + pad < h) hist_row(s, w, y + pad, pad, 1);
        const uint16_t *img = s->image + (size_t)y * w, *m = s->mask + (size_t)y * w;
        for (int x = 0; x < w; x++)
            if (m[x]) s->cvals[(size_t)y * w + x] = c_value(s, w, x, img[x]);
    }
}

/* Partially orders a so that its k largest values come first (Hoare selection, as the
 * reference's: the same elements are selected, so the same sum up to summation order). */
static void select_top(float *a, int n, int k) {
    if (n == k) return;
    int left = 0, right = n - 1;
    while (left < right) {
        const float pivot = a[k];
        int i = left, j = right;
        do {
            while (a[i] > pivot) i++;
            while (a[j] < pivot) j--;
            if (i <= j) {
                const float t = a[i];
                a[i] = a[j];
                a[j] = t;
                i++;
                j--;
            }
        } while (i <= j);
        if (j < k) left = i;
        if (k < i) right = j;
    }
}

static double pool_top(float *a, int n) {
    double kd = CAMBI_TOPK * n;
    int k = kd < 1 ? 1 : kd > n ? n : (int)kd;
    select_top(a, n, k);
    double sum = 0;
    for (int i = 0; i < k; i++) sum += a[i];
    return sum / k;
}

static int cambi_compute(void *state, const svc_picture *ref, const svc_picture *dis, double *out) {
    cambi_state *s = state;
    (void)ref;
    const svc_plane *p = &dis->plane[0];
    if (p->w != s->w || p->h != s->h) return SVC_E_GEOMETRY;
    load_luma(s, p);
    flat_mask(s);
    int w = s->w, h = s->h;
    double score = 0;
    for (int scale = 0; scale < CAMBI_SCALES; scale++) {
        if (scale > 0 || s->high_res) {
            const int nw = (w + 1) >> 1, nh = (h + 1) >> 1;
            decimate(s->image, w, nw, nh);
            decimate(s->mask, w, nw, nh);
            w = nw;
            h = nh;
        }
        mode_filter(s, w, h);
        c_values(s, w, h);
        score += pool_top(s->cvals, w * h) * scale_weights[scale];
    }
    const int side = 2 * (s->window >> 1) + 1;
    score /= side * side;
    out[0] = score < s->max_val ? score : s->max_val;
    return SVC_OK;
}

const svc_extractor svc_extractor_cambi = {
    .name = "cambi",
    .n_outputs = 1,
    .output_names = names,
    .create = cambi_create,
    .backend = cambi_backend,
    .compute = cambi_compute,
    .destroy = cambi_destroy,
    .n_options = N_OPTIONS,
    .options = cambi_options,
    .create_with = cambi_create_with,
};
