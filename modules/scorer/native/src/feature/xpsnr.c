/*
 * xpsnr: the extended perceptually weighted PSNR (Helmrich et al., "XPSNR: a low-complexity
 * extension of the perceptually weighted peak signal-to-noise ratio", ICASSP 2020) per plane, as
 * FFmpeg 7.1's xpsnr filter reports it with the reference as its first input:
 *  - the luma is cut into square blocks whose side grows with the picture (4 * round(8 * sqrt of
 *    the picture's share of UHD)); each block's squared error is weighted by the inverse of its
 *    activity: the mean absolute high-pass of the reference (a 3x3 Laplacian-like filter, or on
 *    pictures above 2048x1152 pixels a 4x4 filter on every second sample) plus a temporal term,
 *    twice the mean absolute difference to the previous reference frame (first order, below 32
 *    frames per second) or of the two previous differences (second order, 32 and above), floored
 *    at 2^(bpc-6); earlier frames before the first count as zero, as the filter's zeroed history;
 *  - pictures of at most 640x480 smooth the weights in line with the filter's "minimum" pass;
 *  - chroma blocks are the luma blocks scaled to the chroma plane and take the luma block's weight;
 *  - a plane's weighted SSE is scaled to the picture and rounded to an integer, the frame's XPSNR
 *    is 10 log10(w h peak^2 / wsse), +infinity for wsse 0 (identical planes).
 * What the filter does and svc repeats: integer frames per second (num / den, so 29.97 is 29);
 * samples read as signed 16-bit (16-bit values above 32767 turn negative in the activities);
 * blocks too thin for the activity window keep weight 1; on the downsampled path a block whose
 * active width is 12 or less has no spatial activity (the filter drops that sum).
 * A picture too small for 4-pixel blocks gives the plain PSNR of each plane.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "extractor.h"
#include "xpsnr.h"

static const char *const names[3] = { "xpsnr_y", "xpsnr_u", "xpsnr_v" };

typedef struct xpsnr_state {
    int w, h, pix_fmt, bpc;
    int block;            /* luma block side; < 4: plain PSNR */
    int n_blocks, w_blocks;
    int downsampled;      /* pictures above 2048x1152: the activities on every second sample */
    double scale;         /* the filter's sqrt(a_pic) */
    double *weights, *sse;
    uint16_t *org, *rec;  /* current reference and distorted luma, packed */
    uint16_t *org_c, *rec_c; /* one chroma plane of each, packed */
    const svc_xpsnr_kernels *simd; /* AVX2 or AVX-512 kernels (12 bits at most, full-resolution path), else NULL */
} xpsnr_state;

static void xpsnr_destroy(void *state);

static void *xpsnr_create(int w, int h, int pix_fmt, int bpc, int cpu) {
    if (svc_frame_bytes(w, h, pix_fmt, bpc) < 0) return NULL;
    xpsnr_state *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    const uint32_t pixels = (uint32_t)w * (uint32_t)h;
    const double uhd_share = (double)pixels / (3840.0 * 2160.0);
    s->w = w;
    s->h = h;
    s->pix_fmt = pix_fmt;
    s->bpc = bpc;
    s->block = 4 * (int)(32.0 * sqrt(uhd_share) + 0.5);
    s->downsampled = pixels > 2048u * 1152u;
    static const svc_xpsnr_kernels avx2 = { "avx2", svc_xpsnr_sse_avx2, svc_xpsnr_spatial_avx2, svc_xpsnr_temporal_avx2 };
    static const svc_xpsnr_kernels avx512 = { "avx512", svc_xpsnr_sse_avx512, svc_xpsnr_spatial_avx512,
                                              svc_xpsnr_temporal_avx512 };
    if (bpc <= 12 && !s->downsampled) s->simd = cpu >= SVC_CPU_AVX512 ? &avx512 : cpu >= SVC_CPU_AVX2 ? &avx2 : NULL;
    s->scale = sqrt(16.0 * (double)(1 << (2 * bpc - 9)) / sqrt(uhd_share > 0.00001 ? uhd_share : 0.00001));
    if (s->block >= 4) {
        s->w_blocks = (w + s->block - 1) / s->block;
        s->n_blocks = s->w_blocks * ((h + s->block - 1) / s->block);
    }
    s->weights = malloc(sizeof(double) * (size_t)(s->n_blocks + 1));
    s->sse = malloc(sizeof(double) * (size_t)(s->n_blocks + 1));
    s->org = malloc(sizeof(uint16_t) * (size_t)pixels);
    s->rec = malloc(sizeof(uint16_t) * (size_t)pixels);
    s->org_c = malloc(sizeof(uint16_t) * (size_t)pixels);
    s->rec_c = malloc(sizeof(uint16_t) * (size_t)pixels);
    if (!s->weights || !s->sse || !s->org || !s->rec || !s->org_c || !s->rec_c) {
        xpsnr_destroy(s);
        return NULL;
    }
    return s;
}

static const char *xpsnr_backend(const void *state) {
    const xpsnr_state *s = state;
    return s->simd ? s->simd->name : "scalar";
}

static void xpsnr_destroy(void *state) {
    xpsnr_state *s = state;
    if (!s) return;
    free(s->weights);
    free(s->sse);
    free(s->org);
    free(s->rec);
    free(s->org_c);
    free(s->rec_c);
    free(s);
}

/* Plane p packed as 16-bit samples (width p->w). */
static void pack(const svc_plane *p, int bpc, uint16_t *dst) {
    for (int y = 0; y < p->h; y++) {
        const uint8_t *row = (const uint8_t *)p->data + (ptrdiff_t)y * p->stride;
        uint16_t *out = dst + (size_t)y * (size_t)p->w;
        if (bpc == 8) svc_widen_u8(row, out, p->w);
        else memcpy(out, row, sizeof(uint16_t) * (size_t)p->w);
    }
}

/* Sum of squared differences of the bw x bh block at (x0, y0) of two packed planes of width w. */
static uint64_t block_sse(const xpsnr_state *s, const uint16_t *a, const uint16_t *b, int w, int x0, int y0, int bw,
                          int bh) {
    if (s->simd) return s->simd->sse(a, b, w, x0, y0, bw, bh);
    uint64_t sse = 0;
    for (int y = y0; y < y0 + bh; y++)
        for (int x = x0; x < x0 + bw; x++) {
            const int64_t e = (int64_t)a[(ptrdiff_t)y * w + x] - b[(ptrdiff_t)y * w + x];
            sse += (uint64_t)(e * e);
        }
    return sse;
}

/* The filter reads its samples as int16_t. */
#define S(p, i) ((int)(int16_t)(p)[i])

/* Spatial activity of the window [x_lo, x_hi) x [y_lo, y_hi) of the packed plane o (stride w). */
static uint64_t spatial_full(const uint16_t *o, int w, int x_lo, int x_hi, int y_lo, int y_hi) {
    uint64_t sum = 0;
    for (int y = y_lo; y < y_hi; y++) {
        const uint16_t *up = o + (ptrdiff_t)(y - 1) * w, *mid = up + w, *down = mid + w;
        for (int x = x_lo; x < x_hi; x++) {
            const int f = 12 * S(mid, x) - 2 * (S(mid, x - 1) + S(mid, x + 1) + S(up, x) + S(down, x)) -
                          (S(up, x - 1) + S(up, x + 1) + S(down, x - 1) + S(down, x + 1));
            sum += (uint64_t)abs(f);
        }
    }
    return sum;
}

/* The same on every second sample with the filter's 4x4 high-pass over each 2x2 group. */
static uint64_t spatial_down(const uint16_t *o, int w, int x_lo, int x_hi, int y_lo, int y_hi) {
    uint64_t sum = 0;
    for (int y = y_lo; y < y_hi; y += 2) {
        const uint16_t *r[6];
        for (int k = 0; k < 6; k++) r[k] = o + (ptrdiff_t)(y - 2 + k) * w; /* rows y-2 .. y+3 */
        for (int x = x_lo; x < x_hi; x += 2) {
            const int centre = S(r[2], x) + S(r[2], x + 1) + S(r[3], x) + S(r[3], x + 1);
            const int vertical = S(r[1], x) + S(r[1], x + 1) + S(r[4], x) + S(r[4], x + 1);
            const int horizontal = S(r[2], x - 1) + S(r[2], x + 2) + S(r[3], x - 1) + S(r[3], x + 2);
            const int corners = S(r[1], x - 1) + S(r[1], x + 2) + S(r[4], x - 1) + S(r[4], x + 2);
            const int rim = S(r[0], x - 1) + S(r[0], x) + S(r[0], x + 1) + S(r[0], x + 2) + S(r[5], x - 1) +
                            S(r[5], x) + S(r[5], x + 1) + S(r[5], x + 2) + S(r[1], x - 2) + S(r[2], x - 2) +
                            S(r[3], x - 2) + S(r[4], x - 2) + S(r[1], x + 3) + S(r[2], x + 3) + S(r[3], x + 3) +
                            S(r[4], x + 3);
            const int f = 12 * centre - 3 * vertical - 3 * horizontal - 2 * corners - rim;
            sum += (uint64_t)abs(f);
        }
    }
    return sum;
}

/* Temporal activity of the block (sum of absolute first or second differences, times the filter's
 * gamma of 2); p1, p2 are the previous reference lumas (NULL: zero). Downsampled: over 2x2 sums. */
static uint64_t temporal(const uint16_t *o, const uint16_t *p1, const uint16_t *p2, int second_order, int down,
                         int w, int x0, int y0, int bw, int bh) {
    uint64_t sum = 0;
    const int step = down ? 2 : 1;
    for (int y = y0; y < y0 + bh; y += step)
        for (int x = x0; x < x0 + bw; x += step) {
            int c = 0, m1 = 0, m2 = 0;
            for (int dy = 0; dy < step; dy++)
                for (int dx = 0; dx < step; dx++) {
                    const ptrdiff_t i = (ptrdiff_t)(y + dy) * w + x + dx;
                    c += S(o, i);
                    m1 += p1 ? S(p1, i) : 0;
                    m2 += p2 ? S(p2, i) : 0;
                }
            const int t = second_order ? c - 2 * m1 + m2 : c - m1;
            sum += (uint64_t)abs(t);
        }
    return 2 * sum;
}

/* The filter's in-line "minimum smoothing" of small pictures, after block idx at column x, row y. */
static void smooth(double *wt, int idx, int x, int y, int b, int w, int h, int w_blk) {
    double prev;
    if (x == 0) prev = idx > 1 ? wt[idx - 2] : 0;
    else prev = x > b ? fmax(wt[idx - 2], wt[idx]) : wt[idx];
    if (idx > w_blk) prev = fmax(prev, wt[idx - 1 - w_blk]);
    if (idx > 0 && wt[idx - 1] > prev) wt[idx - 1] = prev;
    if (x + b >= w && y + b >= h && idx > w_blk) {
        prev = fmax(wt[idx - 1], wt[idx - w_blk]);
        if (wt[idx] > prev) wt[idx] = prev;
    }
}

/* XPSNR in dB of a plane of w x h samples with weighted SSE wsse (the filter's per-frame average). */
static double to_db(uint64_t wsse, int w, int h, int bpc) {
    const double root = sqrt((double)wsse);
    if (!(root >= 1.0)) return INFINITY;
    const uint64_t peak = ((uint64_t)1 << bpc) - 1;
    const uint64_t num = (uint64_t)w * (uint64_t)h * peak * peak;
    return 10.0 * log10((double)num / (root * root));
}

static int xpsnr_compute_history(void *state, const svc_picture *ref, const svc_picture *dis,
                                 const svc_history *past, double *out) {
    xpsnr_state *s = state;
    if (ref->bpc != s->bpc || dis->bpc != s->bpc || ref->pix_fmt != s->pix_fmt || dis->pix_fmt != s->pix_fmt ||
        ref->plane[0].w != s->w || ref->plane[0].h != s->h || dis->plane[0].w != s->w || dis->plane[0].h != s->h)
        return SVC_E_GEOMETRY;
    const int w = s->w, h = s->h, b = s->block, bpc = s->bpc;
    uint64_t wsse[3] = { 0, 0, 0 };
    if (b < 4) {
        for (int c = 0; c < 3; c++) {
            pack(&ref->plane[c], bpc, s->org_c);
            pack(&dis->plane[c], bpc, s->rec_c);
            wsse[c] = block_sse(s, s->org_c, s->rec_c, ref->plane[c].w, 0, 0, ref->plane[c].w, ref->plane[c].h);
        }
    } else {
        pack(&ref->plane[0], bpc, s->org);
        pack(&dis->plane[0], bpc, s->rec);
        const int second_order = past->frame_rate >= 32, bv = s->downsampled ? 2 : 1;
        const int smoothing = (uint32_t)w * (uint32_t)h <= 640u * 480u;
        const double floor_act = (double)(1 << (bpc - 6));
        int idx = 0;
        for (int y = 0; y < h; y += b) {
            const int bh = y + b > h ? h - y : b;
            for (int x = 0; x < w; x += b, idx++) {
                const int bw = x + b > w ? w - x : b;
                s->sse[idx] = (double)block_sse(s, s->org, s->rec, w, x, y, bw, bh);
                /* The activity window: the block less the picture's outer rows and columns. */
                const int x_lo = x > 0 ? 0 : bv, y_lo = y > 0 ? 0 : bv;
                const int x_hi = x + bw < w ? bw : bw - bv, y_hi = y + bh < h ? bh : bh - bv;
                double act = 1.0;
                if (x_hi > x_lo && y_hi > y_lo) {
                    uint64_t spatial = 0;
                    if (s->simd) spatial = s->simd->spatial(s->org, w, x + x_lo, x + x_hi, y + y_lo, y + y_hi);
                    else if (!s->downsampled) spatial = spatial_full(s->org, w, x + x_lo, x + x_hi, y + y_lo, y + y_hi);
                    else if (x_hi > 12) spatial = spatial_down(s->org, w, x + x_lo, x + x_hi, y + y_lo, y + y_hi);
                    act = (double)spatial / ((double)(x_hi - x_lo) * (double)(y_hi - y_lo));
                    const uint64_t moving =
                        s->simd ? 2 * s->simd->temporal(s->org, past->luma[0], past->luma[1], second_order, w, x, y, bw, bh)
                                : temporal(s->org, past->luma[0], past->luma[1], second_order, s->downsampled, w, x, y, bw,
                                           bh);
                    act += (double)moving / ((double)bw * (double)bh);
                    if (act < floor_act) act = floor_act;
                    act *= act;
                }
                s->weights[idx] = 1.0 / sqrt(act);
                if (smoothing) smooth(s->weights, idx, x, y, b, w, h, s->w_blocks);
            }
        }
        double luma = 0.0;
        for (int k = 0; k < idx; k++) luma += s->sse[k] * s->weights[k];
        wsse[0] = luma <= 0.0 ? 0 : (uint64_t)(luma * s->scale + 0.5);
        for (int c = 1; c < 3; c++) {
            const int wp = ref->plane[c].w, hp = ref->plane[c].h, bx = b * wp / w, by = b * hp / h;
            pack(&ref->plane[c], bpc, s->org_c);
            pack(&dis->plane[c], bpc, s->rec_c);
            double chroma = 0.0;
            int k = 0;
            for (int y = 0; y < hp; y += by) {
                const int bh = y + by > hp ? hp - y : by;
                for (int x = 0; x < wp; x += bx, k++) {
                    const int bw = x + bx > wp ? wp - x : bx;
                    chroma += (double)block_sse(s, s->org_c, s->rec_c, wp, x, y, bw, bh) * s->weights[k];
                }
            }
            wsse[c] = chroma <= 0.0 ? 0 : (uint64_t)(chroma * s->scale + 0.5);
        }
    }
    for (int c = 0; c < 3; c++) out[c] = to_db(wsse[c], ref->plane[c].w, ref->plane[c].h, bpc);
    return SVC_OK;
}

/* A plane's pooled value from its per-frame dB values, as the filter's summary: the square-mean-root
 * of the weighted distortions, else the mean of the dB values. */
static double xpsnr_pooled(const double *db, int n, int plane, int w, int h, int pix_fmt, int bpc) {
    const int shift_w = plane && pix_fmt != SVC_PIX_444, shift_h = plane && pix_fmt == SVC_PIX_420;
    w = (w + shift_w) >> shift_w;
    h = (h + shift_h) >> shift_h;
    if (n <= 0) return INFINITY;
    const uint64_t peak = ((uint64_t)1 << bpc) - 1;
    const double num = (double)((uint64_t)w * (uint64_t)h * peak * peak);
    /* Each frame's root weighted SSE back from its dB (0 for an infinite frame), as the filter sums them. */
    double roots = 0.0, dbs = 0.0;
    for (int f = 0; f < n; f++) {
        roots += isinf(db[f]) ? 0.0 : sqrt(num / pow(10.0, db[f] / 10.0));
        dbs += db[f];
    }
    if (roots >= (double)n) {
        const double mean = roots / (double)n;
        return 10.0 * log10(num / (mean * mean));
    }
    return dbs / (double)n;
}

const svc_extractor svc_extractor_xpsnr = {
    .name = "xpsnr",
    .n_outputs = 3,
    .output_names = names,
    .create = xpsnr_create,
    .backend = xpsnr_backend,
    .destroy = xpsnr_destroy,
    .history = 2,
    .compute_history = xpsnr_compute_history,
    .pooled_mean = xpsnr_pooled,
};
