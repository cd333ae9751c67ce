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
 * The histograms slide down the rows, one per column, as a box filter over the masked values.
 * A row is taken as runs of masked pixels of one value (banding is flat, so runs are long): a run
 * updates each column in its reach once, by the number of its pixels in that column's window
 * (not once per pixel), and its c-values read contiguous histogram columns. The run update, the
 * run c-values, the mode filter passes, the flat mask rows and the 8-bit luma rows have AVX2
 * variants (x86/cambi_avx2.c), bit-identical to the scalar ones (integer histograms; the
 * same float operations per c-value, IEEE division and comparison in every lane).
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
#include "cambi.h"

#define CAMBI_SCALES 5
#define CAMBI_MASK_SIZE 7
#define CAMBI_LEVELS 1024 /* 10-bit working scale */
#define CAMBI_WINDOW 65   /* ~1 degree at 4K */
#define CAMBI_TOPK 0.6
#define CAMBI_TVI 0.019
#define CAMBI_MAX_LOG_CONTRAST 2
#define CAMBI_DIFFS (1 << CAMBI_MAX_LOG_CONTRAST)
#define CAMBI_HIST_BINS (CAMBI_LEVELS + 4 * CAMBI_DIFFS) /* bins v + CAMBI_DIFFS +- d, v up to 1024 */
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
    uint16_t *flat;                /* CAMBI_MASK_SIZE rows of w: the flat indicator, a ring */
    uint16_t *flat_out;            /* w: the indicator row leaving the 7-row sums */
    uint16_t *colsum;              /* w + CAMBI_MASK_SIZE: 7-row sums of the indicator, zero-padded */
    uint16_t *hist;                /* CAMBI_HIST_BINS rows of (w + CAMBI_HIST_SLACK), one histogram per column */
    float *cvals;                  /* w * h */
    uint16_t *run_start, *run_len; /* (2 * pad + 2) * w: the runs of the rows in the window, a ring */
    int *run_count;                /* 2 * pad + 2 */
    svc_cambi_run_add run_add;     /* the kernels (cambi.h) */
    svc_cambi_run_cvalues run_cvalues;
    svc_cambi_mode_h mode_h;
    svc_cambi_mode_v mode_v;
    svc_cambi_flat_row flat_row;
    svc_cambi_luma8_row luma8_row;
    svc_cambi_mask_row mask_row;
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
    free(s->flat);
    free(s->colsum);
    free(s->flat_out);
    free(s->run_start);
    free(s->run_len);
    free(s->run_count);
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

static void run_add_c(uint16_t *row, int lo, int hi, int a, int n, int pad, int delta) {
    for (int c = lo; c < hi; c++) {
        const int t = c - a;
        const int k = (t + pad < n - 1 ? t + pad : n - 1) - (t - pad > 0 ? t - pad : 0) + 1;
        row[c] = (uint16_t)(row[c] + delta * k);
    }
}

static void run_cvalues_c(const uint16_t *h0, ptrdiff_t stride, int n, const int *diffs, const int *weights, int nd,
                          float *out) {
    for (int i = 0; i < n; i++) {
        const uint16_t p0 = h0[i];
        float best = 0.0f;
        for (int j = 0; j < nd; j++) {
            const ptrdiff_t off = (ptrdiff_t)(diffs[j] + 1) * stride;
            const uint16_t up = h0[i + off], down = h0[i - off];
            const uint16_t p = up > down ? up : down;
            const float val = (float)(weights[j] * p0 * p) / (float)(p + p0);
            if (val > best) best = val;
        }
        out[i] = best;
    }
}

static uint16_t mode3(uint16_t a, uint16_t b, uint16_t c) {
    if (a == b || a == c) return a;
    if (b == c) return b;
    return a < b ? (a < c ? a : c) : (b < c ? b : c);
}

static void mode_h_c(const uint16_t *in, uint16_t *out, int w) {
    for (int x = 1; x < w - 1; x++) out[x] = mode3(in[x - 1], in[x], in[x + 1]);
}

static void mode_v_c(const uint16_t *a, const uint16_t *b, const uint16_t *c, uint16_t *out, int w) {
    for (int x = 0; x < w; x++) out[x] = mode3(a[x], b[x], c[x]);
}

static void luma8_row_c(const uint8_t *r, const uint8_t *below, uint16_t *dst, int w) {
    for (int x = 0; x < w - 1; x++)
        dst[x] = (uint16_t)(below ? r[x] + r[x + 1] + below[x] + below[x + 1] : 2 * (r[x] + r[x + 1]));
    dst[w - 1] = (uint16_t)(below ? 2 * (r[w - 1] + below[w - 1]) : r[w - 1] << 2);
}

static void flat_row_c(const uint16_t *r, const uint16_t *below, uint16_t *f, int w) {
    for (int x = 0; x < w; x++) f[x] = (uint16_t)((x == w - 1 || r[x] == r[x + 1]) && (!below || r[x] == below[x]));
}

static void mask_row_c(uint16_t *cs, const uint16_t *add, const uint16_t *sub, uint16_t *m, int w, int threshold) {
    uint16_t *col = cs + 3;
    for (int x = 0; x < w; x++) col[x] = (uint16_t)(col[x] + (add ? add[x] : 0) - (sub ? sub[x] : 0));
    for (int x = 0; x < w; x++) {
        const int sum = cs[x] + cs[x + 1] + cs[x + 2] + cs[x + 3] + cs[x + 4] + cs[x + 5] + cs[x + 6];
        m[x] = sum > threshold;
    }
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
    s->run_add = run_add_c;
    s->run_cvalues = run_cvalues_c;
    s->mode_h = mode_h_c;
    s->mode_v = mode_v_c;
    s->flat_row = flat_row_c;
    s->luma8_row = luma8_row_c;
    s->mask_row = mask_row_c;
    s->backend = "scalar";
#if defined(__x86_64__) || defined(__i386__)
    if (cpu >= SVC_CPU_AVX2) { /* AVX-512 CPUs run these too: 32-lane variants measured no faster */
        s->run_add = svc_cambi_run_add_avx2;
        s->run_cvalues = svc_cambi_run_cvalues_avx2;
        s->mode_h = svc_cambi_mode_h_avx2;
        s->mode_v = svc_cambi_mode_v_avx2;
        s->flat_row = svc_cambi_flat_row_avx2;
        s->luma8_row = svc_cambi_luma8_row_avx2;
        s->mask_row = svc_cambi_mask_row_avx2;
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
    s->flat = malloc((size_t)CAMBI_MASK_SIZE * w * sizeof *s->flat);
    s->flat_out = malloc((size_t)w * sizeof *s->flat_out);
    s->colsum = malloc((size_t)(w + CAMBI_MASK_SIZE) * sizeof *s->colsum);
    s->hist = malloc((size_t)CAMBI_HIST_BINS * (w + CAMBI_HIST_SLACK) * sizeof *s->hist);
    s->cvals = malloc(n * sizeof *s->cvals);
    const size_t slots = 2 * (size_t)(s->window >> 1) + 2;
    s->run_start = malloc(slots * w * sizeof *s->run_start);
    s->run_len = malloc(slots * w * sizeof *s->run_len);
    s->run_count = malloc(slots * sizeof *s->run_count);
    if (!s->image || !s->mask || !s->rows || !s->flat || !s->flat_out || !s->colsum || !s->hist || !s->cvals || !s->run_start || !s->run_len || !s->run_count) {
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

/* Below 10 bits each sample becomes the mean of its 2x2 block of 10-bit samples (the last row
 * and column of pairs, the corner kept): at 8 bits (4a + 4b + 4c + 4d) >> 2 = a + b + c + d and
 * (4a + 4b) >> 1 = 2 (a + b), computed from the 8-bit rows directly. */
static void load_luma(cambi_state *s, const svc_plane *p) {
    const int w = s->w, h = s->h;
    if (s->bpc == 8) {
        for (int y = 0; y < h; y++) {
            const uint8_t *r = (const uint8_t *)p->data + y * p->stride;
            s->luma8_row(r, y == h - 1 ? NULL : r + p->stride, s->image + (size_t)y * w, w);
        }
        return;
    }
    for (int y = 0; y < h; y++) {
        uint16_t *dst = s->image + (size_t)y * w;
        const uint16_t *src = (const uint16_t *)((const uint8_t *)p->data + y * p->stride);
        const int shift = s->bpc - 10, round = shift ? 1 << (shift - 1) : 0;
        for (int x = 0; x < w; x++) dst[x] = (uint16_t)((src[x] + round) >> shift);
    }
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

/* 7x7 box sums of the flat indicator (a pixel equal to its right and lower neighbours, frame
 * edges counting as equal; zero outside the frame): a running 7-row column sum (one row added,
 * one removed per output row), then seven of those added across. */
static void flat_mask(cambi_state *s) {
    const int w = s->w, h = s->h, pad = CAMBI_MASK_SIZE >> 1;
    const int threshold = mask_threshold(w, h);
    uint16_t *cs = s->colsum; /* cs[x + pad] is column x's sum; pad zeros either side */
    memset(cs, 0, (size_t)(w + 2 * pad) * sizeof *cs);
    for (int y = 0; y < pad && y < h; y++) {
        uint16_t *f = s->flat + (size_t)(y % CAMBI_MASK_SIZE) * w;
        const uint16_t *r = s->image + (size_t)y * w;
        s->flat_row(r, y == h - 1 ? NULL : r + w, f, w);
        for (int x = 0; x < w; x++) cs[x + pad] = (uint16_t)(cs[x + pad] + f[x]);
    }
    for (int oy = 0; oy < h; oy++) {
        const int in = oy + pad, out = oy - pad - 1;
        /* the row leaving and the row entering share a ring slot: read the first, then fill */
        uint16_t *slot = s->flat + (size_t)(in % CAMBI_MASK_SIZE) * w;
        const uint16_t *sub = NULL, *add = NULL;
        if (out >= 0) {
            memcpy(s->flat_out, slot, (size_t)w * sizeof *slot);
            sub = s->flat_out;
        }
        if (in < h) {
            const uint16_t *r = s->image + (size_t)in * w;
            s->flat_row(r, in == h - 1 ? NULL : r + w, slot, w);
            add = slot;
        }
        s->mask_row(cs, add, sub, s->mask + (size_t)oy * w, w, threshold);
    }
}

/* ---- step 3: per scale ---- */

/* In place: plane (stride sw) keeps every other sample of every other row, to w x h. */
static void decimate(uint16_t *plane, int sw, int w, int h) {
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) plane[(size_t)y * w + x] = plane[(size_t)(2 * y) * sw + 2 * x];
}

/* 3x3 mode as a horizontal then a vertical 3-tap mode; the first and last rows and columns
 * keep their values. */
static void mode_filter(cambi_state *s, int w, int h) {
    uint16_t *img = s->image, *rows = s->rows;
    for (int y = 0; y < h; y++) {
        uint16_t *out = rows + (size_t)(y % 3) * w;
        const uint16_t *in = img + (size_t)y * w;
        out[0] = in[0];
        s->mode_h(in, out, w);
        out[w - 1] = in[w - 1];
        if (y < 2) continue;
        s->mode_v(rows, rows + w, rows + 2 * w, img + (size_t)(y - 1) * w, w);
    }
}

/* The next run of masked pixels of one value in a row at or after *x: its start, length and
 * value; 0 when there is none. */
static uint64_t load4(const uint16_t *p) {
    uint64_t q;
    memcpy(&q, p, sizeof q);
    return q;
}

static int next_run(const uint16_t *img, const uint16_t *m, int w, int *x, int *a, int *n) {
    int i = *x;
    /* four mask words at a time (mask values are 0 or 1) */
    while (i + 4 <= w && !load4(m + i)) i += 4;
    while (i < w && !m[i]) i++;
    if (i >= w) return 0;
    const uint16_t v = img[i];
    const uint64_t ones = 0x0001000100010001u, vs = v * ones;
    int j = i + 1;
    while (j + 4 <= w && load4(m + j) == ones && load4(img + j) == vs) j += 4;
    while (j < w && m[j] && img[j] == v) j++;
    *a = i;
    *n = j - i;
    *x = j;
    return 1;
}

/* The runs of image row y, found once per row and scale and kept in the ring slot of the row
 * while it is in the window (2 * pad + 2 slots: the row leaving and the row entering differ). */
typedef struct cambi_runs {
    int count;
    uint16_t *start, *len; /* w each */
} cambi_runs;

static void find_runs(const cambi_state *s, int w, int y, uint16_t *start, uint16_t *len, int *count) {
    const uint16_t *img = s->image + (size_t)y * w, *m = s->mask + (size_t)y * w;
    int x = 0, a, n, k = 0;
    while (next_run(img, m, w, &x, &a, &n)) {
        start[k] = (uint16_t)a;
        len[k++] = (uint16_t)n;
    }
    *count = k;
}

/* Adds delta, for each masked pixel of image row y with value v, to the histograms of
 * columns [x - pad, x + pad] at bin v + CAMBI_DIFFS, a run of equal values at a time. */
static void hist_row(cambi_state *s, int w, size_t stride, int y, int pad, int delta, int slot) {
    const uint16_t *img = s->image + (size_t)y * w;
    const uint16_t *start = s->run_start + (size_t)slot * w, *len = s->run_len + (size_t)slot * w;
    for (int r = 0; r < s->run_count[slot]; r++) {
        const int a = start[r], n = len[r];
        const int lo = a - pad < 0 ? 0 : a - pad, hi = a + n + pad > w ? w : a + n + pad;
        s->run_add(s->hist + (size_t)(img[a] + CAMBI_DIFFS) * stride, lo, hi, a, n, pad, delta);
    }
}

/* A masked pixel's c-value is the largest w_d * p0 * p / (p0 + p) over the contrasts d visible
 * at its value (the same for a whole run). */
static void c_values(cambi_state *s, int w, int h) {
    const int pad = s->window >> 1, slots = 2 * pad + 2;
    const size_t stride = (size_t)w + CAMBI_HIST_SLACK;
    memset(s->cvals, 0, (size_t)w * h * sizeof *s->cvals);
    memset(s->hist, 0, (size_t)CAMBI_HIST_BINS * stride * sizeof *s->hist);
    for (int y = 0; y < pad && y < h; y++) {
        find_runs(s, w, y, s->run_start + (size_t)(y % slots) * w, s->run_len + (size_t)(y % slots) * w,
                  &s->run_count[y % slots]);
        hist_row(s, w, stride, y, pad, 1, y % slots);
    }
    for (int y = 0; y < h; y++) {
        if (y - pad - 1 >= 0) hist_row(s, w, stride, y - pad - 1, pad, -1, (y - pad - 1) % slots);
        if (y + pad < h) {
            const int slot = (y + pad) % slots;
            find_runs(s, w, y + pad, s->run_start + (size_t)slot * w, s->run_len + (size_t)slot * w,
                      &s->run_count[slot]);
            hist_row(s, w, stride, y + pad, pad, 1, slot);
        }
        const uint16_t *img = s->image + (size_t)y * w;
        const int slot = y % slots;
        const uint16_t *start = s->run_start + (size_t)slot * w, *len = s->run_len + (size_t)slot * w;
        for (int r = 0; r < s->run_count[slot]; r++) {
            const int a = start[r], n = len[r];
            const int v = img[a] + CAMBI_DIFFS;
            int diffs[CAMBI_DIFFS], weights[CAMBI_DIFFS], nd = 0;
            for (int d = 0; d < CAMBI_DIFFS; d++) {
                if (v > s->tvi_limit[d] + CAMBI_DIFFS || v + d + 1 <= s->vlt_level) continue;
                diffs[nd] = d;
                weights[nd++] = contrast_weights[d];
            }
            if (nd) s->run_cvalues(s->hist + (size_t)v * stride + a, (ptrdiff_t)stride, n, diffs, weights, nd,
                                   s->cvals + (size_t)y * w + a);
        }
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
