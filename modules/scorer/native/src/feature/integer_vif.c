/*
 * Fixed-point VIF (visual information fidelity), bit-compatible with libvmaf's default
 * "vif" extractor (integer_vif_scale0..3).
 *
 * Per scale s (0..3) the luma planes are low-passed with a Gaussian of width 17/9/5/3
 * taps; local means, variances and the covariance give per pixel
 *     den = log2(1 + sigma1^2 / N),  num = log2(1 + g^2 sigma1^2 / (sv^2 + N)),
 * N = 2 (sigma_nsq), g = sigma12 / sigma1^2 capped at vif_enhn_gain_limit (default 100;
 * the NEG models set 1, which stops enhancement such as sharpening from raising the score), sv^2 = sigma2^2 - g sigma12. Where sigma1^2 < N the pixel counts
 * 1 - 4 sigma2^2 / 255^2 in num and 1 in den instead; num is 0 where sigma12 <= 0 or
 * sigma2^2 <= 0. The scale score is sum(num)/sum(den)
 * in float. Scale s+1 is scale s filtered with the scale s+1 kernel and decimated by two
 * (even rows and columns). Borders mirror without repeating the edge sample.
 *
 * Fixed point, as in the reference: kernels sum to 65536; the scale-0 vertical pass
 * brings means to 16 bits (>> bpc) and squares to 8-bit units (>> 2*(bpc-8)); later
 * scales hold 16-bit samples and every pass rounds >> 16. Variances are therefore
 * pixel^2 * 65536 in 8-bit units, N = 2 << 16, and log2 is a 2048-scaled table lookup
 * on the 16 most significant bits.
 *
 * The filtering passes are integer kernels (scalar in integer_vif_scalar.c, AVX2 in
 * x86/integer_vif_avx2.c, bit-identical, interface in integer_vif.h); the
 * per-pixel statistic is shared. The AVX2 and AVX-512 paths run fused row kernels instead
 * (vertical pass, horizontal pass and statistic or decimation in one call per row) wherever
 * their conditions hold (filter_fits_words, row_min_w), the per-pass kernels elsewhere.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "integer_vif.h"
#include "extractor.h"

#define VIF_SCALES 4
#define VIF_MAX_RADIUS 8
#define VIF_SIGMA_NSQ (2 << 16)
#define VIF_MIN_SIZE 16 /* scale 3 must keep >= 2 samples for its 3-tap mirror */

/* Gaussian kernels per scale, each summing to 65536 (libvmaf's vif_filter1d_table). */
static const uint16_t vif_kernel_17[17] = { 489,  935,  1640, 2640, 3896, 5274, 6547, 7455, 7784,
                                            7455, 6547, 5274, 3896, 2640, 1640, 935,  489 };
static const uint16_t vif_kernel_9[9] = { 1244, 3663, 7925, 12590, 14692, 12590, 7925, 3663, 1244 };
static const uint16_t vif_kernel_5[5] = { 3571, 16004, 26386, 16004, 3571 };
static const uint16_t vif_kernel_3[3] = { 10904, 43728, 10904 };
static const uint16_t *const vif_kernel[VIF_SCALES] = { vif_kernel_17, vif_kernel_9, vif_kernel_5,
                                                        vif_kernel_3 };
static const int vif_taps[VIF_SCALES] = { 17, 9, 5, 3 };

/* Integer kernels (contracts in integer_vif.h), all over columns [j0, j1). */
typedef struct vif_kernels {
    void (*stat_vert)(const uint16_t *const *rref, const uint16_t *const *rdis,
                      const uint16_t *filt, int fw, int j0, int j1, int mu_shift, int sq_shift,
                      uint32_t *mu1, uint32_t *mu2, uint32_t *xx, uint32_t *yy, uint32_t *xy);
    void (*stat_horz)(const uint32_t *mu1, const uint32_t *mu2, const uint32_t *xx,
                      const uint32_t *yy, const uint32_t *xy, const uint16_t *filt, int fw,
                      int j0, int j1, int32_t *s11, int32_t *s22, int32_t *s12);
    void (*down_vert)(const uint16_t *const *rref, const uint16_t *const *rdis,
                      const uint16_t *filt, int fw, int j0, int j1, int shift, uint32_t *tref,
                      uint32_t *tdis);
    void (*down_horz)(const uint32_t *tref, const uint32_t *tdis, const uint16_t *filt, int fw,
                      int j0, int j1, uint16_t *oref, uint16_t *odis);
} vif_kernels;

static const vif_kernels kernels_c = { svc_vif_stat_vert_c, svc_vif_stat_horz_c,
                                       svc_vif_down_vert_c, svc_vif_down_horz_c };
#if defined(__x86_64__) || defined(__i386__)
static const vif_kernels kernels_avx2 = { svc_vif_stat_vert_avx2, svc_vif_stat_horz_avx2,
                                          svc_vif_down_vert_avx2, svc_vif_down_horz_avx2 };
#endif

typedef struct vif_sums {
    int64_t num_log, den_log, num_lin, den_lin;
} vif_sums;

typedef struct vif_state {
    int w, h, bpc;
    const vif_kernels *k;
    const char *backend;
    double gain_limit;              /* vif_enhn_gain_limit */
    /* Fused row kernels (AVX2 or AVX-512; contracts in integer_vif.h): their lines, NULL
     * on the scalar path, and the narrowest scale width they take. */
    uint16_t *row_scratch;
    int row_min_w;
    void (*stat_row)(const void *const *, const void *const *, int, const uint16_t *, int, int,
                     int, int, const uint16_t *, double, uint16_t *, int64_t *);
    void (*down_row)(const void *const *, const void *const *, int, const uint16_t *, int, int,
                     int, uint16_t *, int, uint16_t *, uint16_t *);
    /* 8-bit input on the fused path: scale 0 is read from the pictures' own rows. */
    const svc_plane *luma8[2];
    uint16_t *log2_lut;             /* log2(i) * 2048 for i in [32768, 65535] */
    uint16_t *img[VIF_SCALES][2];   /* ref/dis per scale, 16-bit */
    int sw[VIF_SCALES], sh[VIF_SCALES];
    uint32_t *line[5];              /* vertical-pass rows, padded by VIF_MAX_RADIUS */
    int32_t *sig[3];                /* sigma1^2, sigma2^2, sigma12 of one row */
    const uint16_t **rows;          /* 2 * 17 mirrored row pointers */
    /* Ladders (vif_ladder_prepare): the fused kernels' ladder variants (NULL: the backend scores
     * ladders pair by pair), and per scale the reference's a1 and sigma1^2 of every pixel
     * (lstride words a row, in the layout of the kernel that made them), allocated on the first
     * ladder frame; the reference's pyramid stays in img[sc][0]. junk: the unused output row
     * of a one-sided decimation. */
    void (*ref_row)(const void *const *, int, const uint16_t *, int, int, int, int, const uint16_t *, uint16_t *,
                    uint32_t *, int32_t *, int64_t *);
    void (*dis_row)(const void *const *, const void *const *, int, const uint16_t *, int, int, int, int,
                    const uint32_t *, const int32_t *, const uint16_t *, double, uint16_t *, int64_t *);
    void (*down1_row)(const void *const *, int, const uint16_t *, int, int, int, uint16_t *, int, uint16_t *);
    uint32_t *la1[VIF_SCALES];
    int32_t *ls11[VIF_SCALES];
    size_t lstride[VIF_SCALES];
    vif_sums lden[VIF_SCALES]; /* the reference's denominators per scale (den_log, den_lin) */
    uint16_t *junk;
} vif_state;

static const char *const vif_names[VIF_SCALES] = { "integer_vif_scale0", "integer_vif_scale1",
                                                   "integer_vif_scale2", "integer_vif_scale3" };

/* Mirror without edge repeat: -1 -> 1, n -> n-2. Callers guarantee n > radius. */
static inline int mirror(int i, int n) {
    if (i < 0) return -i;
    if (i >= n) return 2 * n - i - 2;
    return i;
}

static void pad_line(uint32_t *l, int w, int r) {
    for (int f = 1; f <= r; f++) {
        l[-f] = l[f];
        l[w - 1 + f] = l[w - 1 - f];
    }
}

/* Table lookup on the 16 leading bits: log2(v) * 2048. Same arithmetic as libvmaf:
 * k = 16 - clz for 32-bit inputs (v >= 2^17 here), 48 - clz for 64-bit ones. */
static inline int32_t log2_q11_32(const uint16_t *lut, uint32_t v) {
    const int k = 16 - __builtin_clz(v);
    return lut[v >> k] + 2048 * k;
}

static inline int32_t log2_q11_64(const uint16_t *lut, uint64_t v) {
    const int k = 48 - __builtin_clzll(v);
    return lut[v >> k] + 2048 * k;
}


/* The statistic of one pixel, in two parts: the denominator (sigma1^2 alone decides it) and
 * the rest. accumulate_row does both; a ladder's reference row the first (accumulate_den),
 * each rendition's row the second (accumulate_num). */
static inline __attribute__((always_inline)) void pixel_den(const uint16_t *lut, int32_t sigma1_sq, vif_sums *acc) {
    if (sigma1_sq < VIF_SIGMA_NSQ) acc->den_lin++;
    else acc->den_log += log2_q11_32(lut, (uint32_t)(VIF_SIGMA_NSQ + sigma1_sq)) - 2048 * 17;
}

static inline __attribute__((always_inline)) void pixel_num(const uint16_t *lut, double gain_limit, int32_t sigma1_sq,
                                                            int32_t s22, int32_t sigma12, vif_sums *acc) {
    const double eps = 65536 * 1.0e-10;
    const int32_t sigma2_sq = s22 > 0 ? s22 : 0;
    if (sigma1_sq < VIF_SIGMA_NSQ) {
        acc->num_lin += sigma2_sq;
        return;
    }
    if (sigma12 <= 0 || sigma2_sq <= 0) return;
    double g = sigma12 / (sigma1_sq + eps);
    /* Truncating double -> int conversions are part of the reference arithmetic; an
     * FMA-contracted build (-mfma, -march=native) could round them differently. */
    int32_t sv_sq = (int32_t)(sigma2_sq - g * sigma12);
    if (sv_sq < 0) sv_sq = 0;
    if (g > gain_limit) g = gain_limit;
    const uint32_t noise = (uint32_t)sv_sq + VIF_SIGMA_NSQ;
    const int64_t signal = (int64_t)(g * g * sigma1_sq) + noise;
    acc->num_log += log2_q11_64(lut, (uint64_t)signal) - log2_q11_64(lut, noise);
}

static void accumulate_den(const vif_state *s, const int32_t *s11, int w, vif_sums *acc) {
    const uint16_t *lut = s->log2_lut;
    for (int j = 0; j < w; j++) pixel_den(lut, s11[j], acc);
}

static void accumulate_num(const vif_state *s, const int32_t *s11, const int32_t *s22, const int32_t *s12, int w,
                           vif_sums *acc) {
    const uint16_t *lut = s->log2_lut;
    const double gain_limit = s->gain_limit;
    for (int j = 0; j < w; j++) pixel_num(lut, gain_limit, s11[j], s22[j], s12[j], acc);
}

static void accumulate_row(const vif_state *s, const int32_t *s11, const int32_t *s22,
                           const int32_t *s12, int w, vif_sums *acc) {
    const uint16_t *lut = s->log2_lut;
    const double gain_limit = s->gain_limit;
    for (int j = 0; j < w; j++) {
        pixel_den(lut, s11[j], acc);
        pixel_num(lut, gain_limit, s11[j], s22[j], s12[j], acc);
    }
}

/* Fills fw mirrored row pointers for output row i of a w-wide, h-high 16-bit image. */
static void gather_rows(const uint16_t **dst, const uint16_t *img, int w, int h, int fw, int i) {
    const int r = fw / 2;
    for (int k = 0; k < fw; k++) dst[k] = img + (size_t)mirror(i - r + k, h) * (size_t)w;
}

/* The same over a picture plane (its own stride), as untyped rows for the fused kernels. */
static void gather_plane_rows(const void **dst, const svc_plane *p, int fw, int i) {
    const int r = fw / 2;
    for (int k = 0; k < fw; k++) dst[k] = (const uint8_t *)p->data + (ptrdiff_t)mirror(i - r + k, p->h) * p->stride;
}

/* The fused row kernels filter signed 16-bit words: every coefficient must be below 32768
 * (all but the 3-tap kernel of scale 3). */
static int filter_fits_words(const uint16_t *filt, int fw) {
    for (int k = 0; k < fw; k++)
        if (filt[k] >= 32768) return 0;
    return 1;
}

/* 1 when the fused row kernels take a w-wide scale filtered with filt. */
static int fused_rows(const vif_state *s, const uint16_t *filt, int fw, int w) {
    return s->row_scratch && w >= s->row_min_w && filter_fits_words(filt, fw);
}

/* Fills fw row pointers of output row i of scale sc for the fused kernels; 1 when they are
 * the 8-bit picture rows. */
static int fused_row_ptrs(const vif_state *s, int sc, int fw, int i, const void **rr, const void **rd) {
    if (sc == 0 && s->luma8[0]) {
        gather_plane_rows(rr, s->luma8[0], fw, i);
        gather_plane_rows(rd, s->luma8[1], fw, i);
        return 1;
    }
    gather_rows((const uint16_t **)rr, s->img[sc][0], s->sw[sc], s->sh[sc], fw, i);
    gather_rows((const uint16_t **)rd, s->img[sc][1], s->sw[sc], s->sh[sc], fw, i);
    return 0;
}

/* The scale score from its sums: the reference keeps num and den in float and divides in float. */
static double sums_score(const vif_sums *acc) {
    const float num = (float)(acc->num_log / 2048.0 + (acc->den_lin - (acc->num_lin / 16384.0) / 65025.0));
    const float den = (float)(acc->den_log / 2048.0 + acc->den_lin);
    return (double)(num / den);
}

static double scale_score(vif_state *s, int sc) {
    const int w = s->sw[sc], h = s->sh[sc], fw = vif_taps[sc], r = fw / 2;
    const uint16_t *filt = vif_kernel[sc];
    const int mu_shift = sc == 0 ? s->bpc : 16;
    const int sq_shift = sc == 0 ? 2 * (s->bpc - 8) : 16;
    const uint16_t **rr = s->rows, **rd = s->rows + 17;
    uint32_t *const *l = s->line;
    vif_sums acc = { 0, 0, 0, 0 };
    int first_row = 0; /* rows before it are done by a fused row kernel */
#if defined(__x86_64__) || defined(__i386__)
    if (fused_rows(s, filt, fw, w)) {
        int64_t sums[4] = { 0, 0, 0, 0 };
        const void *fr[17], *fd[17];
        for (int i = 0; i < h; i++) {
            const int u8 = fused_row_ptrs(s, sc, fw, i, fr, fd);
            s->stat_row(fr, fd, u8, filt, fw, w, mu_shift, sq_shift, s->log2_lut, s->gain_limit, s->row_scratch,
                        sums);
        }
        acc = (vif_sums){ sums[0], sums[1], sums[2], sums[3] };
        first_row = h;
    }
#endif
    for (int i = first_row; i < h; i++) {
        gather_rows(rr, s->img[sc][0], w, h, fw, i);
        gather_rows(rd, s->img[sc][1], w, h, fw, i);
        s->k->stat_vert(rr, rd, filt, fw, 0, w, mu_shift, sq_shift, l[0], l[1], l[2], l[3], l[4]);
        for (int q = 0; q < 5; q++) pad_line(l[q], w, r);
        s->k->stat_horz(l[0], l[1], l[2], l[3], l[4], filt, fw, 0, w, s->sig[0], s->sig[1],
                        s->sig[2]);
        accumulate_row(s, s->sig[0], s->sig[1], s->sig[2], w, &acc);
    }
    return sums_score(&acc);
}

/* Scale sc+1 = scale sc filtered with the scale sc+1 kernel, even rows and columns. */
static void downscale(vif_state *s, int sc) {
    const int w = s->sw[sc], h = s->sh[sc], fw = vif_taps[sc + 1], r = fw / 2;
    const uint16_t *filt = vif_kernel[sc + 1];
    const int shift = sc == 0 ? s->bpc : 16;
    const int wo = s->sw[sc + 1], ho = s->sh[sc + 1];
    const uint16_t **rr = s->rows, **rd = s->rows + 17;
#if defined(__x86_64__) || defined(__i386__)
    if (fused_rows(s, filt, fw, w)) {
        const void *fr[17], *fd[17];
        for (int i = 0; i < ho; i++) {
            const int u8 = fused_row_ptrs(s, sc, fw, 2 * i, fr, fd);
            s->down_row(fr, fd, u8, filt, fw, w, shift, s->row_scratch, wo, s->img[sc + 1][0] + (size_t)i * wo,
                        s->img[sc + 1][1] + (size_t)i * wo);
        }
        return;
    }
#endif
    for (int i = 0; i < ho; i++) {
        gather_rows(rr, s->img[sc][0], w, h, fw, 2 * i);
        gather_rows(rd, s->img[sc][1], w, h, fw, 2 * i);
        s->k->down_vert(rr, rd, filt, fw, 0, w, shift, s->line[0], s->line[1]);
        pad_line(s->line[0], w, r);
        pad_line(s->line[1], w, r);
        s->k->down_horz(s->line[0], s->line[1], filt, fw, 0, wo, s->img[sc + 1][0] + (size_t)i * wo,
                        s->img[sc + 1][1] + (size_t)i * wo);
    }
}

static void load_luma(const svc_plane *p, int bpc, uint16_t *dst) {
    for (int y = 0; y < p->h; y++) {
        const uint8_t *row = (const uint8_t *)p->data + y * p->stride;
        uint16_t *out = dst + (size_t)y * p->w;
        if (bpc == 8) {
            svc_widen_u8(row, out, p->w);
        } else {
            memcpy(out, row, (size_t)p->w * sizeof(uint16_t));
        }
    }
}

static void vif_destroy(void *state) {
    vif_state *s = state;
    if (!s) return;
    free(s->log2_lut);
    for (int sc = 0; sc < VIF_SCALES; sc++) {
        free(s->img[sc][0]);
        free(s->img[sc][1]);
    }
    for (int q = 0; q < 5; q++) free(s->line[q] ? s->line[q] - VIF_MAX_RADIUS : NULL);
    for (int q = 0; q < 3; q++) free(s->sig[q]);
    free(s->rows);
    free(s->row_scratch);
    for (int sc = 0; sc < VIF_SCALES; sc++) {
        free(s->la1[sc]);
        free(s->ls11[sc]);
    }
    free(s->junk);
    free(s);
}

enum { OPT_GAIN_LIMIT, N_OPTIONS };
static const svc_extractor_option vif_options[N_OPTIONS] = {
    { .name = "vif_enhn_gain_limit", .alias = "egl", .def = 100.0, .min = 1.0, .max = 100.0 },
};

static void *vif_create_with(int w, int h, int pix_fmt, int bpc, int cpu, const double *options) {
    (void)pix_fmt;
    if (w < VIF_MIN_SIZE || h < VIF_MIN_SIZE || w > 16384 || h > 16384) return NULL;
    if (bpc != 8 && bpc != 10 && bpc != 12 && bpc != 16) return NULL;
    vif_state *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->w = w;
    s->h = h;
    s->bpc = bpc;
    s->gain_limit = options[OPT_GAIN_LIMIT];
    s->k = &kernels_c;
    s->backend = "scalar";
#if defined(__x86_64__) || defined(__i386__)
    if (cpu == SVC_CPU_AVX2) {
        /* The per-pass kernels where the fused ones do not apply (scale 3, narrow scales). */
        s->k = &kernels_avx2;
        s->backend = "avx2";
        s->row_scratch = calloc(svc_vif_avx2_scratch_len(w), sizeof(uint16_t));
        s->row_min_w = 16;
        s->stat_row = svc_vif_stat_row_avx2;
        s->down_row = svc_vif_down_row_avx2;
        s->ref_row = svc_vif_ref_row_avx2;
        s->down1_row = svc_vif_down1_row_avx2;
        s->dis_row = svc_vif_dis_row_avx2;
    }
    if (cpu == SVC_CPU_AVX512) {
        s->k = &kernels_avx2;
        s->backend = "avx512";
        s->row_scratch = calloc(svc_vif_avx512_scratch_len(w), sizeof(uint16_t));
        s->row_min_w = 1;
        const int vnni = svc_cpu_has_avx512_vnni();
        s->stat_row = vnni ? svc_vif_stat_row_avx512_vnni : svc_vif_stat_row_avx512;
        s->down_row = vnni ? svc_vif_down_row_avx512_vnni : svc_vif_down_row_avx512;
        s->ref_row = vnni ? svc_vif_ref_row_avx512_vnni : svc_vif_ref_row_avx512;
        s->down1_row = vnni ? svc_vif_down1_row_avx512_vnni : svc_vif_down1_row_avx512;
        s->dis_row = vnni ? svc_vif_dis_row_avx512_vnni : svc_vif_dis_row_avx512;
    }
    if ((cpu == SVC_CPU_AVX2 || cpu == SVC_CPU_AVX512) && !s->row_scratch) {
        free(s);
        return NULL;
    }
#else
    (void)cpu;
#endif
    int ok = 1;
    for (int sc = 0; sc < VIF_SCALES; sc++) {
        s->sw[sc] = sc ? s->sw[sc - 1] / 2 : w;
        s->sh[sc] = sc ? s->sh[sc - 1] / 2 : h;
        const size_t n = (size_t)s->sw[sc] * (size_t)s->sh[sc];
        ok &= (s->img[sc][0] = malloc(n * sizeof(uint16_t))) != NULL;
        ok &= (s->img[sc][1] = malloc(n * sizeof(uint16_t))) != NULL;
    }
    /* Lines get mirrored margins plus slack so SIMD kernels may read a full vector. */
    const size_t line_len = (size_t)w + 2 * VIF_MAX_RADIUS + 16;
    for (int q = 0; q < 5; q++) {
        uint32_t *l = calloc(line_len, sizeof(uint32_t));
        s->line[q] = l ? l + VIF_MAX_RADIUS : NULL;
        ok &= l != NULL;
    }
    for (int q = 0; q < 3; q++) ok &= (s->sig[q] = malloc(((size_t)w + 16) * sizeof(int32_t))) != NULL;
    ok &= (s->rows = malloc(2 * 17 * sizeof *s->rows)) != NULL;
    /* One entry past the end: the AVX-512 gathers read 32 bits at the last index. Entries below
     * 32767 stay 0: the AVX2 statistic reads entry 0 for the lanes that do not count. */
    ok &= (s->log2_lut = calloc(65536 + 1, sizeof(uint16_t))) != NULL;
    if (!ok) {
        vif_destroy(s);
        return NULL;
    }
    /* Same float rounding as the reference's table. */
    for (unsigned i = 32767; i < 65536; i++) s->log2_lut[i] = (uint16_t)round(log2f((float)i) * 2048);
    return s;
}

static void *vif_create(int w, int h, int pix_fmt, int bpc, int cpu) {
    const double defaults[N_OPTIONS] = { vif_options[OPT_GAIN_LIMIT].def };
    return vif_create_with(w, h, pix_fmt, bpc, cpu, defaults);
}

static const char *vif_backend(const void *state) { return ((const vif_state *)state)->backend; }

static int check_pictures(const vif_state *s, const svc_picture *ref, const svc_picture *dis) {
    if (!s || !ref || !dis) return SVC_E_INVALID_ARG;
    const svc_plane *pr = &ref->plane[0], *pd = &dis->plane[0];
    if (pr->w != s->w || pr->h != s->h || pd->w != s->w || pd->h != s->h || ref->bpc != s->bpc ||
        dis->bpc != s->bpc)
        return SVC_E_GEOMETRY;
    return SVC_OK;
}

/* When scale 0 and the first decimation both run the fused kernels, at 8 bits they read the
 * pictures directly and the widened copy is not needed. */
static int reads_8bit_pictures(const vif_state *s) {
    return s->bpc == 8 && fused_rows(s, vif_kernel[0], vif_taps[0], s->w) &&
           fused_rows(s, vif_kernel[1], vif_taps[1], s->w);
}

static int vif_compute(void *state, const svc_picture *ref, const svc_picture *dis, double *out) {
    vif_state *s = state;
    const int rc = out ? check_pictures(s, ref, dis) : SVC_E_INVALID_ARG;
    if (rc) return rc;
    const svc_plane *pr = &ref->plane[0], *pd = &dis->plane[0];
    if (reads_8bit_pictures(s)) {
        s->luma8[0] = pr;
        s->luma8[1] = pd;
    } else {
        load_luma(pr, s->bpc, s->img[0][0]);
        load_luma(pd, s->bpc, s->img[0][1]);
    }
    for (int sc = 0; sc < VIF_SCALES; sc++) {
        if (sc > 0) downscale(s, sc - 1);
        out[sc] = scale_score(s, sc);
    }
    return SVC_OK;
}

/* ---- ladders ----
 * The reference's side (vif_ladder_prepare, once per frame): its pyramid, and per scale its
 * filtered mean a1 and sigma1^2 at every pixel. Each rendition (vif_ladder_compute): its own
 * pyramid, its filtered mean and square, the cross term with the reference's rows and the
 * statistic, from the same integers the pair path computes. */

/* Fills fw row pointers of output row i of scale sc of one side (0 reference, 1 distorted);
 * 1 when they are the 8-bit picture rows. */
static int side_rows(const vif_state *s, int sc, int side, int fw, int i, const void **rows) {
    if (sc == 0 && s->luma8[side]) {
        gather_plane_rows(rows, s->luma8[side], fw, i);
        return 1;
    }
    gather_rows((const uint16_t **)rows, s->img[sc][side], s->sw[sc], s->sh[sc], fw, i);
    return 0;
}

/* Scale sc+1 of one side from its scale sc (the per-pass kernels' other output row is junk). */
static void ladder_downscale(vif_state *s, int sc, int side) {
    const int w = s->sw[sc], fw = vif_taps[sc + 1], r = fw / 2;
    const uint16_t *filt = vif_kernel[sc + 1];
    const int shift = sc == 0 ? s->bpc : 16;
    const int wo = s->sw[sc + 1], ho = s->sh[sc + 1];
    const void *rows[17];
    for (int i = 0; i < ho; i++) {
        uint16_t *out = s->img[sc + 1][side] + (size_t)i * wo;
        const int u8 = side_rows(s, sc, side, fw, 2 * i, rows);
#if defined(__x86_64__) || defined(__i386__)
        if (fused_rows(s, filt, fw, w)) {
            s->down1_row(rows, u8, filt, fw, w, shift, s->row_scratch, wo, out);
            continue;
        }
#endif
        const uint16_t *const *rr = (const uint16_t *const *)rows;
        s->k->down_vert(rr, rr, filt, fw, 0, w, shift, s->line[0], s->line[1]);
        pad_line(s->line[0], w, r);
        pad_line(s->line[1], w, r);
        s->k->down_horz(s->line[0], s->line[1], filt, fw, 0, wo, out, s->junk);
    }
}

static void ladder_ref_stats(vif_state *s, int sc) {
    const int w = s->sw[sc], h = s->sh[sc], fw = vif_taps[sc], r = fw / 2;
    const uint16_t *filt = vif_kernel[sc];
    const int mu_shift = sc == 0 ? s->bpc : 16;
    const int sq_shift = sc == 0 ? 2 * (s->bpc - 8) : 16;
    const void *rows[17];
    vif_sums acc = { 0, 0, 0, 0 };
    int64_t sums[4] = { 0, 0, 0, 0 };
    for (int i = 0; i < h; i++) {
        uint32_t *a1 = s->la1[sc] + (size_t)i * s->lstride[sc];
        int32_t *s11 = s->ls11[sc] + (size_t)i * s->lstride[sc];
        const int u8 = side_rows(s, sc, 0, fw, i, rows);
#if defined(__x86_64__) || defined(__i386__)
        if (fused_rows(s, filt, fw, w)) {
            s->ref_row(rows, u8, filt, fw, w, mu_shift, sq_shift, s->log2_lut, s->row_scratch, a1, s11, sums);
            continue;
        }
#endif
        svc_vif_ref_vert_c((const uint16_t *const *)rows, filt, fw, 0, w, mu_shift, sq_shift, s->line[0], s->line[2]);
        pad_line(s->line[0], w, r);
        pad_line(s->line[2], w, r);
        svc_vif_ref_horz_c(s->line[0], s->line[2], filt, fw, 0, w, a1, s11);
        accumulate_den(s, s11, w, &acc);
    }
    s->lden[sc] = (vif_sums){ 0, acc.den_log + sums[1], 0, acc.den_lin + sums[3] };
}

static double ladder_scale_score(vif_state *s, int sc) {
    const int w = s->sw[sc], h = s->sh[sc], fw = vif_taps[sc], r = fw / 2;
    const uint16_t *filt = vif_kernel[sc];
    const int mu_shift = sc == 0 ? s->bpc : 16;
    const int sq_shift = sc == 0 ? 2 * (s->bpc - 8) : 16;
    const void *rr[17], *rd[17];
    uint32_t *const *l = s->line;
    vif_sums acc = { 0, 0, 0, 0 };
    int64_t sums[4] = { 0, 0, 0, 0 };
    for (int i = 0; i < h; i++) {
        const uint32_t *a1 = s->la1[sc] + (size_t)i * s->lstride[sc];
        const int32_t *s11 = s->ls11[sc] + (size_t)i * s->lstride[sc];
        const int u8 = side_rows(s, sc, 0, fw, i, rr);
        side_rows(s, sc, 1, fw, i, rd);
#if defined(__x86_64__) || defined(__i386__)
        if (fused_rows(s, filt, fw, w)) {
            s->dis_row(rr, rd, u8, filt, fw, w, mu_shift, sq_shift, a1, s11, s->log2_lut, s->gain_limit,
                       s->row_scratch, sums);
            continue;
        }
#endif
        svc_vif_dis_vert_c((const uint16_t *const *)rr, (const uint16_t *const *)rd, filt, fw, 0, w, mu_shift,
                           sq_shift, l[1], l[3], l[4]);
        for (int q = 1; q < 5; q += q == 1 ? 2 : 1) pad_line(l[q], w, r);
        svc_vif_dis_horz_c(a1, l[1], l[3], l[4], filt, fw, 0, w, s->sig[1], s->sig[2]);
        accumulate_num(s, s11, s->sig[1], s->sig[2], w, &acc);
    }
    /* Each row goes one way or the other for the whole scale: the sums add up, with the
     * denominators the reference's side summed. */
    acc.num_log += sums[0];
    acc.den_log = s->lden[sc].den_log + sums[1];
    acc.num_lin += sums[2];
    acc.den_lin = s->lden[sc].den_lin + sums[3];
    return sums_score(&acc);
}

static int vif_ladder_prepare(void *state, const svc_picture *ref) {
    vif_state *s = state;
    const int rc = check_pictures(s, ref, ref);
    if (rc) return rc;
    if (s->row_scratch && !s->ref_row) return SVC_LADDER_PER_PAIR;
    if (!s->junk) {
        for (int sc = 0; sc < VIF_SCALES; sc++) {
#if defined(__x86_64__) || defined(__i386__)
            const size_t len = s->ref_row ? svc_vif_ladder_row_len(s->sw[sc]) : (size_t)s->sw[sc];
#else
            const size_t len = (size_t)s->sw[sc];
#endif
            s->lstride[sc] = len;
            s->la1[sc] = malloc(len * (size_t)s->sh[sc] * sizeof(uint32_t));
            s->ls11[sc] = malloc(len * (size_t)s->sh[sc] * sizeof(int32_t));
            if (!s->la1[sc] || !s->ls11[sc]) return SVC_E_NOMEM;
        }
        if (!(s->junk = malloc((size_t)s->w * sizeof(uint16_t)))) return SVC_E_NOMEM;
    }
    s->luma8[1] = NULL;
    if (reads_8bit_pictures(s)) s->luma8[0] = &ref->plane[0];
    else load_luma(&ref->plane[0], s->bpc, s->img[0][0]);
    for (int sc = 0; sc < VIF_SCALES; sc++) {
        if (sc > 0) ladder_downscale(s, sc - 1, 0);
        ladder_ref_stats(s, sc);
    }
    return SVC_OK;
}

static int vif_ladder_compute(void *state, const svc_picture *ref, const svc_picture *dis, double *out) {
    vif_state *s = state;
    const int rc = out ? check_pictures(s, ref, dis) : SVC_E_INVALID_ARG;
    if (rc) return rc;
    if (reads_8bit_pictures(s)) {
        s->luma8[0] = &ref->plane[0];
        s->luma8[1] = &dis->plane[0];
    } else {
        load_luma(&dis->plane[0], s->bpc, s->img[0][1]);
    }
    for (int sc = 0; sc < VIF_SCALES; sc++) {
        if (sc > 0) ladder_downscale(s, sc - 1, 1);
        out[sc] = ladder_scale_score(s, sc);
    }
    return SVC_OK;
}

const svc_extractor svc_extractor_integer_vif = {
    .name = "integer_vif",
    .n_outputs = VIF_SCALES,
    .output_names = vif_names,
    .create = vif_create,
    .backend = vif_backend,
    .compute = vif_compute,
    .destroy = vif_destroy,
    .n_options = N_OPTIONS,
    .options = vif_options,
    .create_with = vif_create_with,
    .ladder_prepare = vif_ladder_prepare,
    .ladder_compute = vif_ladder_compute,
};
