/* Property test of the SIMD paths: integer VIF, integer ADM, float VIF, motion, cambi and speed_chroma on
 * random frames of odd and awkward sizes at every bit depth (with the default enhancement gain limit and with 1,
 * the NEG models' value), each path this CPU supports (AVX2, AVX-512)
 * against the scalar reference path; every output must be bit-identical. A path the CPU
 * lacks is skipped with a line saying so ("SKIP avx512: ...", a case of the tester report).
 * Usage: simd_test [SEED] [ROUNDS]   (default: a fixed seed, 1 round of random sizes)
 * Exit 0 when every check passed; prints "N passed, M failed". */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <stdint.h>

#include "../src/feature/extractor.h"
#include "../src/feature/integer_adm_decouple.h"
#include "../src/feature/integer_motion.h"
#include "../src/feature/integer_vif.h"
#include "check.h"

/* The descriptors under test (registry.c declares them for the library). */
extern const svc_extractor svc_extractor_integer_vif;
extern const svc_extractor svc_extractor_float_vif;
extern const svc_extractor svc_extractor_integer_adm;
extern const svc_extractor svc_extractor_cambi;
extern const svc_extractor svc_extractor_speed_chroma;
extern const svc_extractor svc_extractor_ssimulacra2;
extern const svc_extractor svc_extractor_xpsnr;

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

static uint32_t rng = 20261123;
static uint32_t next_rand(void) {
    rng ^= rng << 13;
    rng ^= rng >> 17;
    rng ^= rng << 5;
    return rng;
}

/* pattern 0: noise; 1: smooth gradient plus small noise; 2: extremes (0 / max stripes);
 * 3: a noisy copy of nothing in particular (blocks of random levels, like coarse coding). */
static void fill(svc_picture *p, int pattern, int shift) {
    const svc_plane *pl = &p->plane[0];
    const uint32_t maxv = (1u << p->bpc) - 1;
    const uint32_t block = next_rand();
    for (int y = 0; y < pl->h; y++) {
        uint8_t *row = (uint8_t *)pl->data + y * pl->stride;
        for (int x = 0; x < pl->w; x++) {
            uint32_t v;
            if (pattern == 0) v = next_rand() & maxv;
            else if (pattern == 1)
                v = (((uint32_t)(x + shift) * 7 + (uint32_t)y * 3) * (maxv / 255) + (next_rand() & 3)) % (maxv + 1);
            else if (pattern == 2) v = ((x + y + shift) / 3) & 1 ? maxv : 0;
            else v = (((uint32_t)(x / 8) * 2654435761u ^ (uint32_t)(y / 8) * 40503u ^ block) & maxv) ^ (next_rand() & 7 & maxv);
            if (p->bpc == 8) row[x] = (uint8_t)v;
            else ((uint16_t *)row)[x] = (uint16_t)v;
        }
    }
}

static const char *cpu_name(int cpu) { return cpu == SVC_CPU_AVX512 ? "avx512" : "avx2"; }

/* One frame pair through one extractor on the scalar path and on `cpu`. */
/* gain: the enhancement gain limit option (VIF's and ADM's only option; 0 = the default). */
static void extractor_case(const svc_extractor *ex, int cpu, const svc_picture *r, const svc_picture *d,
                           double gain) {
    const int w = r->plane[0].w, h = r->plane[0].h, bpc = r->bpc;
    const double options[1] = { gain };
    const int with = gain > 0 && ex->n_options == 1 && ex->create_with;
    void *s0 = with ? ex->create_with(w, h, SVC_PIX_420, bpc, SVC_CPU_SCALAR, options)
                    : ex->create(w, h, SVC_PIX_420, bpc, SVC_CPU_SCALAR);
    void *s1 = with ? ex->create_with(w, h, SVC_PIX_420, bpc, cpu, options) : ex->create(w, h, SVC_PIX_420, bpc, cpu);
    CHECK(s0 && s1, "%s: create failed at %dx%d %d-bit", ex->name, w, h, bpc);
    if (!s0 || !s1) return;
    double o0[16], o1[16];
    /* Twice on the same state: buffers reused across frames must not carry anything over. */
    for (int round = 0; round < 2; round++) {
        const int rc0 = ex->compute(s0, r, d, o0), rc1 = ex->compute(s1, r, d, o1);
        CHECK(rc0 == SVC_OK && rc1 == SVC_OK, "%s: compute failed", ex->name);
        for (int k = 0; k < ex->n_outputs; k++)
            CHECK(memcmp(&o0[k], &o1[k], sizeof o0[k]) == 0, "%s %s at %dx%d %d-bit: scalar %.17g, %s %.17g",
                  ex->output_names[k], ex->backend(s1), w, h, bpc, o0[k], cpu_name(cpu), o1[k]);
    }
    /* Ladders: the reference analysed once (ladder_prepare), then the distorted picture and the
     * reference itself scored against it, on both paths, each equal to the scalar pair path. */
    if (ex->ladder_prepare) {
        double self[16], l[16];
        CHECK(ex->compute(s0, r, r, self) == SVC_OK, "%s: compute failed", ex->name);
        for (int side = 0; side < 2; side++) {
            void *st = side ? s1 : s0;
            CHECK(ex->ladder_prepare(st, r) == SVC_OK, "%s %s: ladder_prepare", ex->name, ex->backend(st));
            for (int round = 0; round < 3; round++) {
                const double *want = round == 1 ? self : o0;
                CHECK(ex->ladder_compute(st, r, round == 1 ? r : d, l) == SVC_OK, "%s: ladder_compute", ex->name);
                for (int k = 0; k < ex->n_outputs; k++)
                    CHECK(memcmp(&want[k], &l[k], sizeof l[k]) == 0,
                          "ladder %s %s at %dx%d %d-bit: pair %.17g, ladder %.17g", ex->output_names[k],
                          ex->backend(st), w, h, bpc, want[k], l[k]);
            }
        }
    }
    ex->destroy(s0);
    ex->destroy(s1);
}

static void motion_case(int cpu, const svc_picture *a, const svc_picture *b) {
    const int w = a->plane[0].w, h = a->plane[0].h, bpc = a->bpc;
    svc_motion *m0 = svc_motion_create(w, h, bpc, SVC_CPU_SCALAR), *m1 = svc_motion_create(w, h, bpc, cpu);
    CHECK(m0 && m1, "motion: create failed at %dx%d %d-bit", w, h, bpc);
    if (!m0 || !m1) return;
    const size_t n = svc_motion_blur_len(m0);
    uint16_t *fa = malloc(n * 2), *fb = malloc(n * 2);
    CHECK(fa && fb && !svc_motion_blur(m0, a, fa) && !svc_motion_blur(m0, b, fb), "motion: blur failed");
    if (fa && fb) {
        const double s0 = svc_motion_sad(m0, fa, fb), s1 = svc_motion_sad(m1, fa, fb);
        CHECK(memcmp(&s0, &s1, sizeof s0) == 0, "motion %s at %dx%d %d-bit: scalar %.17g, %s %.17g",
              svc_motion_backend(m1), w, h, bpc, s0, cpu_name(cpu), s1);
    }
    free(fa);
    free(fb);
    svc_motion_destroy(m0);
    svc_motion_destroy(m1);
}

static void size_case(int cpu, int w, int h, int bpc, int pattern) {
    svc_picture r, d;
    if (svc_picture_alloc(&r, w, h, SVC_PIX_420, bpc) || svc_picture_alloc(&d, w, h, SVC_PIX_420, bpc)) {
        CHECK(0, "picture alloc %dx%d", w, h);
        return;
    }
    fill(&r, pattern, 0);
    /* The distorted frame: another pattern, or the reference plus noise (a likely encode). */
    if (pattern == 1 || pattern == 3) {
        const uint32_t maxv = (1u << bpc) - 1;
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++) {
                const uint8_t *rr = (const uint8_t *)r.plane[0].data + y * r.plane[0].stride;
                uint8_t *dr = (uint8_t *)d.plane[0].data + y * d.plane[0].stride;
                const int32_t v = (bpc == 8 ? rr[x] : ((const uint16_t *)rr)[x]) + (int32_t)(next_rand() % 9) - 4;
                const uint32_t c = v < 0 ? 0 : (uint32_t)v > maxv ? maxv : (uint32_t)v;
                if (bpc == 8) dr[x] = (uint8_t)c;
                else ((uint16_t *)dr)[x] = (uint16_t)c;
            }
    } else {
        fill(&d, pattern == 2 ? 2 : 0, 1);
    }
    /* The default gain limit (100), and 1 as the NEG models set it. */
    const double gain = (pattern & 1) ? 1.0 : 0.0;
    if (w >= 16 && h >= 16) extractor_case(&svc_extractor_integer_vif, cpu, &r, &d, gain);
    if (w >= 16 && h >= 16) extractor_case(&svc_extractor_float_vif, cpu, &r, &d, gain);
    if (w >= 33 && h >= 33) extractor_case(&svc_extractor_integer_adm, cpu, &r, &d, gain);
    motion_case(cpu, &r, &d);
    svc_picture_free(&r);
    svc_picture_free(&d);
}

/* ---- the fused VIF row kernels' ladder variants, each build (AVX2, AVX-512, AVX-512 VNNI)
 * called directly: the reference's side (denominators) then the distorted side (numerators) add
 * up to the statistic sums of the pair kernel, for 8-bit picture rows, 8-bit samples widened and
 * deeper samples. ---- */

static const uint16_t vif_k17[17] = { 489, 935, 1640, 2640, 3896, 5274, 6547, 7455, 7784,
                                      7455, 6547, 5274, 3896, 2640, 1640, 935, 489 };
static const uint16_t vif_k9[9] = { 1244, 3663, 7925, 12590, 14692, 12590, 7925, 3663, 1244 };
static const uint16_t vif_k5[5] = { 3571, 16004, 26386, 16004, 3571 };

typedef void (*stat_row_fn)(const void *const *, const void *const *, int, const uint16_t *, int, int, int, int,
                            const uint16_t *, double, uint16_t *, int64_t *);
typedef void (*ref_row_fn)(const void *const *, int, const uint16_t *, int, int, int, int, const uint16_t *,
                           uint16_t *, uint32_t *, int32_t *, int64_t *);
typedef void (*dis_row_fn)(const void *const *, const void *const *, int, const uint16_t *, int, int, int, int,
                           const uint32_t *, const int32_t *, const uint16_t *, double, uint16_t *, int64_t *);

typedef void (*down_row_fn)(const void *const *, const void *const *, int, const uint16_t *, int, int, int, uint16_t *,
                            int, uint16_t *, uint16_t *);
typedef void (*down1_row_fn)(const void *const *, int, const uint16_t *, int, int, int, uint16_t *, int, uint16_t *);

static down_row_fn down;
static down1_row_fn down1;

static void vif_row_case(const char *name, stat_row_fn stat, ref_row_fn ref_row, dis_row_fn dis_row, size_t scratch_len,
                         const uint16_t *lut, int w, int bpc, int u8, int scale, double gain) {
    static const uint16_t *const filts[3] = { vif_k17, vif_k9, vif_k5 };
    static const int fws[3] = { 17, 9, 5 };
    const int fw = fws[scale];
    const int mu_shift = scale ? 16 : bpc, sq_shift = scale ? 16 : 2 * (bpc - 8);
    const int maxv = scale ? 65535 : (1 << bpc) - 1;
    uint16_t *scratch = calloc(scratch_len, sizeof(uint16_t));
    uint8_t *rows = malloc((size_t)2 * fw * ((size_t)w + 64) * 2);
    const size_t len = svc_vif_ladder_row_len(w);
    uint32_t *a1 = malloc(len * sizeof *a1);
    int32_t *s11 = malloc(len * sizeof *s11);
    if (!scratch || !rows || !a1 || !s11) {
        CHECK(0, "alloc");
    } else {
        const void *rr[17], *rd[17];
        for (int k = 0; k < 2 * fw; k++) {
            uint8_t *row = rows + (size_t)k * ((size_t)w + 64) * 2;
            for (int x = 0; x < w + 32; x++) {
                /* The distorted rows: the reference's plus noise, or unrelated (odd rows). */
                const uint32_t v = next_rand() % (uint32_t)(maxv + 1);
                if (u8) row[x] = (uint8_t)v;
                else ((uint16_t *)row)[x] = (uint16_t)v;
            }
            if (k < fw) rr[k] = row;
            else rd[k - fw] = row;
        }
        for (int k = 0; k < fw; k += 2)
            for (int x = 0; x < w; x++) {
                const int delta = (int)(next_rand() % 5) - 2;
                if (u8) {
                    const int v = ((const uint8_t *)rr[k])[x] + delta;
                    ((uint8_t *)rd[k])[x] = (uint8_t)(v < 0 ? 0 : v > maxv ? maxv : v);
                } else {
                    const int v = ((const uint16_t *)rr[k])[x] + delta;
                    ((uint16_t *)rd[k])[x] = (uint16_t)(v < 0 ? 0 : v > maxv ? maxv : v);
                }
            }
        int64_t want[4] = { 0, 0, 0, 0 }, got[4] = { 0, 0, 0, 0 };
        stat(rr, rd, u8, filts[scale], fw, w, mu_shift, sq_shift, lut, gain, scratch, want);
        ref_row(rr, u8, filts[scale], fw, w, mu_shift, sq_shift, lut, scratch, a1, s11, got);
        dis_row(rr, rd, u8, filts[scale], fw, w, mu_shift, sq_shift, a1, s11, lut, gain, scratch, got);
        /* The one-sided decimation row equals the pair kernel's reference output. */
        if (down1 && scale < 2) {
            const int dfw = fws[scale + 1], wo = (w + 1) / 2;
            uint16_t *o_ref = calloc((size_t)w + 16, 2), *o_dis = calloc((size_t)w + 16, 2), *o1 = calloc((size_t)w + 16, 2);
            if (o_ref && o_dis && o1) {
                const int shift = scale ? 16 : bpc;
                down(rr, rd, u8, filts[scale + 1], dfw, w, shift, scratch, wo, o_ref, o_dis);
                down1(rr, u8, filts[scale + 1], dfw, w, shift, scratch, wo, o1);
                CHECK(memcmp(o_ref, o1, (size_t)wo * 2) == 0, "%s one-sided decimation row, w %d, %d-bit%s", name, w,
                      bpc, u8 ? " (picture rows)" : "");
            }
            free(o_ref);
            free(o_dis);
            free(o1);
        }
        CHECK(memcmp(want, got, sizeof want) == 0,
              "%s ladder row, w %d, %d-bit%s, scale %d: sums %lld %lld %lld %lld, ladder %lld %lld %lld %lld", name, w,
              bpc, u8 ? " (picture rows)" : "", scale, (long long)want[0], (long long)want[1], (long long)want[2],
              (long long)want[3], (long long)got[0], (long long)got[1], (long long)got[2], (long long)got[3]);
    }
    free(scratch);
    free(rows);
    free(a1);
    free(s11);
}

static void vif_ladder_rows(void) {
    uint16_t *lut = calloc(65537, sizeof *lut);
    if (!lut) return;
    for (unsigned i = 32767; i < 65536; i++) lut[i] = (uint16_t)round(log2f((float)i) * 2048);
    struct {
        const char *name;
        int cpu;
        stat_row_fn stat;
        ref_row_fn ref;
        dis_row_fn dis;
        size_t (*scratch)(int);
        int min_w;
        down_row_fn down;
        down1_row_fn down1;
    } builds[] = {
        { "avx2", SVC_CPU_AVX2, svc_vif_stat_row_avx2, svc_vif_ref_row_avx2, svc_vif_dis_row_avx2,
          svc_vif_avx2_scratch_len, 16, svc_vif_down_row_avx2, svc_vif_down1_row_avx2 },
        { "avx512", SVC_CPU_AVX512, svc_vif_stat_row_avx512, svc_vif_ref_row_avx512, svc_vif_dis_row_avx512,
          svc_vif_avx512_scratch_len, 1, svc_vif_down_row_avx512, svc_vif_down1_row_avx512 },
        { "avx512_vnni", -1, svc_vif_stat_row_avx512_vnni, svc_vif_ref_row_avx512_vnni, svc_vif_dis_row_avx512_vnni,
          svc_vif_avx512_scratch_len, 1, svc_vif_down_row_avx512_vnni, svc_vif_down1_row_avx512_vnni },
    };
    static const int widths[] = { 16, 17, 31, 33, 64, 97, 203, 721 };
    for (size_t b = 0; b < sizeof builds / sizeof *builds; b++) {
        const int ok = builds[b].cpu < 0 ? svc_cpu_has_avx512_vnni() : svc_cpu_supported(builds[b].cpu);
        if (!ok) {
            printf("SKIP vif ladder rows %s: not supported by this CPU\n", builds[b].name);
            continue;
        }
        down = builds[b].down;
        down1 = builds[b].down1;
        for (size_t wi = 0; wi < sizeof widths / sizeof *widths; wi++) {
            const int w = widths[wi];
            if (w < builds[b].min_w) continue;
            for (int round = 0; round < 2; round++) {
                const double gain = round ? 1.0 : 100.0;
                const size_t sl = builds[b].scratch(w);
                vif_row_case(builds[b].name, builds[b].stat, builds[b].ref, builds[b].dis, sl, lut, w, 8, 1, 0, gain);
                vif_row_case(builds[b].name, builds[b].stat, builds[b].ref, builds[b].dis, sl, lut, w, 8, 0, 0, gain);
                vif_row_case(builds[b].name, builds[b].stat, builds[b].ref, builds[b].dis, sl, lut, w, 10, 0, 0, gain);
                vif_row_case(builds[b].name, builds[b].stat, builds[b].ref, builds[b].dis, sl, lut, w, 16, 0, 0, gain);
                for (int sc = 1; sc < 3; sc++)
                    vif_row_case(builds[b].name, builds[b].stat, builds[b].ref, builds[b].dis, sl, lut, w, 16, 0, sc,
                                 gain);
            }
        }
    }
    free(lut);
}

/* ---- kernel case: ADM's scale 1-3 decoupling with its own angle test (AVX-512) ----
 * Against the scalar code's restored() and same_direction() (feature/integer_adm_decouple.h),
 * on coefficient pairs chosen to hit every branch: zeros, signs, |o| above 2^15 (the reciprocal's
 * rounding shift), t near a multiple of o (the clamp of k and the gain), vectors within and
 * just outside 1 degree (the angle test's boundary), magnitudes up to 2^24. */
int svc_adm_decouple_s32_angle_avx512(const int32_t *const o[3], const int32_t *const t[3], int n,
                                      const int32_t *recip, float cos1_sq, int gain, int32_t *const r[3],
                                      int32_t *const a[3]);


static int32_t rand_coef(void) {
    const int bits = (int)(next_rand() % 25); /* magnitudes 0 .. 2^24 */
    const int32_t m = bits ? (int32_t)(next_rand() & ((1u << bits) - 1)) : 0;
    return next_rand() & 1 ? -m : m;
}

static void decouple_s32_case(void) {
    enum { N = 4099 };
    int32_t *recip = malloc(32769 * sizeof *recip), *buf = malloc(6 * (size_t)N * sizeof *buf);
    CHECK(recip && buf, "decouple_s32: alloc");
    if (!recip || !buf) {
        free(recip);
        free(buf);
        return;
    }
    recip[0] = 0;
    for (int n = 1; n <= 32768; n++) recip[n] = (int32_t)(1073741824 / n);
    const float cos1_sq = (float)(cos(M_PI / 180.0) * cos(M_PI / 180.0));
    int32_t *o[3], *t[3], *r[3], *a[3];
    for (int b = 0; b < 3; b++) {
        o[b] = buf + b * N;
        t[b] = buf + (3 + b) * N;
    }
    int32_t *ra = malloc(6 * (size_t)N * sizeof *ra);
    CHECK(ra != NULL, "decouple_s32: alloc");
    if (!ra) {
        free(recip);
        free(buf);
        return;
    }
    for (int b = 0; b < 3; b++) {
        r[b] = ra + b * N;
        a[b] = ra + (3 + b) * N;
    }
    static const int gains[] = { 1, 2, 100 };
    for (int round = 0; round < 40; round++) {
        for (int j = 0; j < N; j++) {
            const int kind = (int)(next_rand() % 6);
            for (int b = 0; b < 3; b++) {
                o[b][j] = rand_coef();
                if (kind == 0) t[b][j] = rand_coef();
                else if (kind == 1) t[b][j] = 0;
                else if (kind == 2) o[b][j] = 0, t[b][j] = rand_coef();
                else if (kind == 3) /* a multiple of o plus a little: near the clamp and the gain */
                    t[b][j] = (int32_t)(((int64_t)o[b][j] * (int64_t)(next_rand() % 5)) / 2 + (int32_t)(next_rand() % 7) - 3);
                else /* nearly parallel: within or just past 1 degree */
                    t[b][j] = (int32_t)((int64_t)o[b][j] * 3 / 2 + ((int32_t)(next_rand() % 2001) - 1000) *
                                                                       (o[b][j] / 2048 + 1) / 16);
            }
        }
        const int gain = gains[round % 3];
        const int done = svc_adm_decouple_s32_angle_avx512((const int32_t *const *)o, (const int32_t *const *)t, N,
                                                           recip, cos1_sq, gain, r, a);
        CHECK(done > N - 16 && done <= N, "decouple_s32_angle: stopped at %d of %d", done, N);
        int bad = 0;
        for (int j = 0; j < done && !bad; j++) {
            const int ok = same_direction(o[0][j], o[1][j], t[0][j], t[1][j], cos1_sq);
            for (int b = 0; b < 3 && !bad; b++) {
                const int32_t rn = (int32_t)restored(o[b][j], t[b][j], ok, recip, gain);
                const int32_t an = (int32_t)((int64_t)t[b][j] - rn);
                if (r[b][j] != rn || a[b][j] != an) {
                    bad = 1;
                    CHECK(0, "decouple_s32_angle avx512 at %d band %d: o %d t %d: r %d a %d, scalar r %d a %d", j, b,
                          o[b][j], t[b][j], r[b][j], a[b][j], rn, an);
                }
            }
        }
        CHECK(!bad, "decouple_s32_angle avx512 round %d", round);
    }
    free(ra);
    free(recip);
    free(buf);
}

/* ---- kernel case: ADM's scale 1-3 DWT passes (AVX2 and AVX-512, on 16-bit halves) ----
 * Against the scalar 64-bit sums on inputs anywhere in the range the kernels are proved for
 * (|x| < 2^31 - 2^15), at every (round, shift) the orchestration uses. */
int svc_adm_vpass_s32_avx512(const int32_t *const rows[4], int w, int64_t round, int shift, int32_t *lo,
                             int32_t *hi);
int svc_adm_hpass_s32_avx512(const int32_t *lo, const int32_t *hi, int j0, int j1, int64_t round, int shift,
                             int32_t *const out[4]);
int svc_adm_vpass_s32_avx2(const int32_t *const rows[4], int w, int64_t round, int shift, int32_t *lo,
                           int32_t *hi);
int svc_adm_hpass_s32_avx2(const int32_t *lo, const int32_t *hi, int j0, int j1, int64_t round, int shift,
                           int32_t *const out[4]);

static int32_t rand_wide(void) {
    const int bits = 1 + (int)(next_rand() % 31);
    int64_t m = (int64_t)(((uint64_t)next_rand() << 32 | next_rand()) & (((uint64_t)1 << bits) - 1));
    if (m > 2147483647LL - 32768) m = 2147483647LL - 32768;
    return (int32_t)(next_rand() & 1 ? -m : m);
}

static void dwt_s32_case(int cpu) {
    int (*vpass)(const int32_t *const *, int, int64_t, int, int32_t *, int32_t *) =
        cpu == SVC_CPU_AVX512 ? svc_adm_vpass_s32_avx512 : svc_adm_vpass_s32_avx2;
    int (*hpass)(const int32_t *, const int32_t *, int, int, int64_t, int, int32_t *const *) =
        cpu == SVC_CPU_AVX512 ? svc_adm_hpass_s32_avx512 : svc_adm_hpass_s32_avx2;
    static const int32_t LOt[4] = { 15826, 27411, 7345, -4240 }, HIt[4] = { -4240, -7345, 27411, -15826 };
    static const int64_t rounds[4] = { 0, 32768, 16384, 32768 };
    static const int shifts[4] = { 0, 16, 15, 16 };
    enum { W = 517 };
    static int32_t rows[4][W + 8], lo[W + 8], hi[W + 8], out[4][W + 8];
    for (int round = 0; round < 64; round++) {
        const int64_t rnd = rounds[round % 4];
        const int sh = shifts[round % 4];
        for (int k = 0; k < 4; k++)
            for (int j = 0; j < W; j++) rows[k][j] = rand_wide();
        const int32_t *const rp[4] = { rows[0], rows[1], rows[2], rows[3] };
        if (round % 4 < 2) {
            const int done = vpass(rp, W, rnd, sh, lo, hi);
            int bad = 0;
            for (int j = 0; j < done && !bad; j++) {
                int64_t l = rnd, h = rnd;
                for (int k = 0; k < 4; k++) {
                    l += (int64_t)LOt[k] * rows[k][j];
                    h += (int64_t)HIt[k] * rows[k][j];
                }
                if (lo[j] != (int32_t)(l >> sh) || hi[j] != (int32_t)(h >> sh)) {
                    bad = 1;
                    CHECK(0, "vpass_s32 %s column %d shift %d: %d %d, scalar %d %d", cpu_name(cpu), j, sh, lo[j], hi[j],
                          (int32_t)(l >> sh), (int32_t)(h >> sh));
                }
            }
            CHECK(!bad && done > W - 16, "vpass_s32 %s round %d (done %d)", cpu_name(cpu), round, done);
        } else {
            int32_t *const op[4] = { out[0], out[1], out[2], out[3] };
            const int j1 = (W - 1) / 2;
            const int done = hpass(rows[0], rows[1], 1, j1, rnd, sh, op);
            int bad = 0;
            for (int j = 1; j < done && !bad; j++) {
                int64_t sum[4] = { rnd, rnd, rnd, rnd };
                for (int k = 0; k < 4; k++) {
                    const int64_t l = rows[0][2 * j - 1 + k], h = rows[1][2 * j - 1 + k];
                    sum[0] += LOt[k] * l;
                    sum[1] += LOt[k] * h;
                    sum[2] += HIt[k] * l;
                    sum[3] += HIt[k] * h;
                }
                for (int b = 0; b < 4 && !bad; b++)
                    if (out[b][j] != (int32_t)(sum[b] >> sh)) {
                        bad = 1;
                        CHECK(0, "hpass_s32 %s column %d band %d shift %d: %d, scalar %d", cpu_name(cpu), j, b, sh, out[b][j],
                              (int32_t)(sum[b] >> sh));
                    }
            }
            CHECK(!bad && done >= j1 - 8, "hpass_s32 %s round %d (done %d)", cpu_name(cpu), round, done);
        }
    }
}

static const int depths[] = { 8, 10, 12, 16 };

/* cambi needs flat areas and bands to do any work: a staircase of levels (bands `step` pixels
 * wide, diagonal), a rectangle of noise, and blocks of one random level; at depths above 8 the
 * low bits vary slowly so that rounding to 10 bits merges some levels and splits others. */
static void fill_banded(svc_picture *p) {
    const svc_plane *pl = &p->plane[0];
    const int step = 3 + (int)(next_rand() % 40), lsb = p->bpc - 8;
    const int nx0 = (int)(next_rand() % (unsigned)pl->w), ny0 = (int)(next_rand() % (unsigned)pl->h);
    const int nx1 = nx0 + (int)(next_rand() % 80), ny1 = ny0 + (int)(next_rand() % 60);
    const int base = 16 + (int)(next_rand() % 64);
    for (int y = 0; y < pl->h; y++) {
        uint8_t *row = (uint8_t *)pl->data + y * pl->stride;
        for (int x = 0; x < pl->w; x++) {
            uint32_t v8 = (uint32_t)(base + ((x + 2 * y) / step) % 160);
            if (x >= nx0 && x < nx1 && y >= ny0 && y < ny1) v8 = next_rand() % 256;
            else if (((x / 24) + (y / 24)) % 5 == 0) v8 = (uint32_t)(base + ((x / 24) * 7 + (y / 24) * 13) % 40);
            if (p->bpc == 8) row[x] = (uint8_t)v8;
            else ((uint16_t *)row)[x] = (uint16_t)((v8 << lsb) | ((uint32_t)(x / 11 + y / 7) & ((1u << lsb) - 1)));
        }
    }
}

/* cambi on the scalar path and on `cpu`, with its defaults and with options as the
 * vmaf_v1.0.16 models set them (hrs 1080, cmxv 17, vlt 0.06) and a high visibility threshold. */
static void cambi_case(int cpu, int w, int h, int bpc) {
    svc_picture d;
    if (svc_picture_alloc(&d, w, h, SVC_PIX_420, bpc)) {
        CHECK(0, "picture alloc %dx%d", w, h);
        return;
    }
    fill_banded(&d);
    static const double option_sets[3][3] = { { 0, 1000, 0 }, { 1080, 17, 0.06 }, { 0, 1000, 10 } };
    const svc_extractor *ex = &svc_extractor_cambi;
    for (int o = 0; o < 3; o++) {
        void *s0 = ex->create_with(w, h, SVC_PIX_420, bpc, SVC_CPU_SCALAR, option_sets[o]);
        void *s1 = ex->create_with(w, h, SVC_PIX_420, bpc, cpu, option_sets[o]);
        CHECK(s0 && s1, "cambi: create failed at %dx%d %d-bit", w, h, bpc);
        if (s0 && s1) {
            double o0 = -1, o1 = -2;
            for (int round = 0; round < 2; round++) {
                const int rc0 = ex->compute(s0, &d, &d, &o0), rc1 = ex->compute(s1, &d, &d, &o1);
                CHECK(rc0 == SVC_OK && rc1 == SVC_OK, "cambi: compute failed");
                CHECK(memcmp(&o0, &o1, sizeof o0) == 0, "cambi (options %d) %s at %dx%d %d-bit: scalar %.17g, %s %.17g",
                      o, ex->backend(s1), w, h, bpc, o0, cpu_name(cpu), o1);
            }
            CHECK(o != 0 || w < 220 || o0 > 0, "cambi at %dx%d %d-bit: the banded frame scored 0", w, h, bpc);
        }
        if (s0) ex->destroy(s0);
        if (s1) ex->destroy(s1);
    }
    svc_picture_free(&d);
}

/* Chroma planes of a textured pair (gradients plus noise; the distorted one a noisier copy). */
static void fill_chroma(svc_picture *r, svc_picture *d) {
    const uint32_t maxv = (1u << r->bpc) - 1;
    for (int c = 1; c < 3; c++) {
        const svc_plane *pr = &r->plane[c], *pd = &d->plane[c];
        for (int y = 0; y < pr->h; y++)
            for (int x = 0; x < pr->w; x++) {
                const uint32_t v = ((uint32_t)(x * (3 + c) + y * 5) * (maxv / 255) + (next_rand() & (maxv / 16))) % (maxv + 1);
                const int32_t dv = (int32_t)v + (int32_t)(next_rand() % 33) - 16;
                const uint32_t vd = dv < 0 ? 0 : (uint32_t)dv > maxv ? maxv : (uint32_t)dv;
                uint8_t *rr = (uint8_t *)pr->data + y * pr->stride, *dr = (uint8_t *)pd->data + y * pd->stride;
                if (r->bpc == 8) {
                    rr[x] = (uint8_t)v;
                    dr[x] = (uint8_t)vd;
                } else {
                    ((uint16_t *)rr)[x] = (uint16_t)v;
                    ((uint16_t *)dr)[x] = (uint16_t)vd;
                }
            }
    }
}

/* speed_chroma on the scalar path and on `cpu`: defaults, the vmaf_v1.0.16 models' options, and
 * a bilinear prescale. */
static void speed_case(int cpu, int w, int h, int bpc) {
    svc_picture r, d;
    if (svc_picture_alloc(&r, w, h, SVC_PIX_420, bpc) || svc_picture_alloc(&d, w, h, SVC_PIX_420, bpc)) {
        CHECK(0, "picture alloc %dx%d", w, h);
        return;
    }
    fill_chroma(&r, &d);
    /* ks, mxv, nnf, ps, psm, snn, wvm */
    static const double option_sets[3][7] = { { 1, 1000, 0, 1, 0, 0.29, 0 },
                                              { 1, 45, 0.1, 1, 0, 0.19, 5 },
                                              { 1, 1000, 0.1, 0.6, 1, 0.29, 6 } };
    const svc_extractor *ex = &svc_extractor_speed_chroma;
    for (int o = 0; o < 3; o++) {
        void *s0 = ex->create_with(w, h, SVC_PIX_420, bpc, SVC_CPU_SCALAR, option_sets[o]);
        void *s1 = ex->create_with(w, h, SVC_PIX_420, bpc, cpu, option_sets[o]);
        if (!s0 && !s1) continue; /* too small under these options, on both paths */
        CHECK(s0 && s1, "speed_chroma: create failed at %dx%d %d-bit", w, h, bpc);
        if (s0 && s1) {
            double o0[3], o1[3];
            for (int round = 0; round < 2; round++) {
                const int rc0 = ex->compute(s0, &r, &d, o0), rc1 = ex->compute(s1, &r, &d, o1);
                CHECK(rc0 == rc1, "speed_chroma: compute returned %d and %d", rc0, rc1);
                for (int k = 0; rc0 == SVC_OK && k < 3; k++)
                    CHECK(memcmp(&o0[k], &o1[k], sizeof o0[k]) == 0,
                          "%s (options %d) %s at %dx%d %d-bit: scalar %.17g, %s %.17g", ex->output_names[k], o,
                          ex->backend(s1), w, h, bpc, o0[k], cpu_name(cpu), o1[k]);
            }
        }
        if (s0) ex->destroy(s0);
        if (s1) ex->destroy(s1);
    }
    svc_picture_free(&r);
    svc_picture_free(&d);
}

static void speed_sizes(int cpu) {
    static const int sizes[][2] = { { 160, 160 }, { 171, 165 }, { 333, 257 }, { 641, 359 }, { 1920, 1080 } };
    for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++)
        for (size_t di = 0; di < 4; di++) speed_case(cpu, sizes[si][0], sizes[si][1], depths[di]);
}

static void cambi_sizes(int cpu, int random) {
    static const int sizes[][2] = { { 216, 17 }, { 217, 37 }, { 19, 216 }, { 250, 231 }, { 301, 219 }, { 333, 257 },
                                    { 1920, 1080 } };
    if (!random) {
        for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++)
            for (size_t di = 0; di < 4; di++) {
                if (sizes[si][0] == 1920 && depths[di] > 10) continue; /* full HD: hrs; 8 and 10 bits */
                cambi_case(cpu, sizes[si][0], sizes[si][1], depths[di]);
            }
        return;
    }
    for (int k = 0; k < 6; k++) {
        const int w = 216 + (int)(next_rand() % 400), h = 8 + (int)(next_rand() % 300);
        cambi_case(cpu, w, h, depths[next_rand() % 4]);
    }
}

static void fixed_sizes(int cpu) {
    static const int sizes[][2] = { { 16, 16 }, { 17, 19 }, { 33, 33 }, { 34, 47 }, { 63, 65 },
                                    { 100, 37 }, { 131, 77 }, { 193, 101 }, { 721, 35 }, { 97, 203 } };
    for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++)
        for (size_t di = 0; di < 4; di++)
            for (int pat = 0; pat < 4; pat++) size_case(cpu, sizes[si][0], sizes[si][1], depths[di], pat);
}

static void random_sizes(int cpu, int n) {
    for (int k = 0; k < n; k++) {
        const int w = 16 + (int)(next_rand() % 400), h = 16 + (int)(next_rand() % 120);
        const int bpc = depths[next_rand() % 4], pattern = (int)(next_rand() % 4);
        size_case(cpu, w, h, bpc, pattern);
    }
}

/* xpsnr and ssimulacra2 on the scalar path and on `cpu` for a textured pair of w x h (chroma of
 * pix_fmt), xpsnr with the previous two reference lumas of a moved copy as its history, at a low
 * and a high frame rate (first- and second-order temporal term). */
static void metrics_case(int cpu, int w, int h, int pix_fmt, int bpc) {
    svc_picture r, d, prev;
    if (svc_picture_alloc(&r, w, h, pix_fmt, bpc) || svc_picture_alloc(&d, w, h, pix_fmt, bpc) ||
        svc_picture_alloc(&prev, w, h, pix_fmt, bpc)) {
        CHECK(0, "picture alloc %dx%d", w, h);
        return;
    }
    fill_banded(&r);
    fill_banded(&d);
    fill_banded(&prev);
    fill_chroma(&r, &d);
    /* The distorted luma: the reference's plus noise of a few levels; the history: another noise. */
    const int maxv = (1 << bpc) - 1;
    for (int k = 0; k < 2; k++) {
        const svc_plane *p = k ? &prev.plane[0] : &d.plane[0];
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++) {
                uint8_t *row = (uint8_t *)p->data + y * p->stride;
                const int v = (bpc == 8 ? row[x] : ((uint16_t *)row)[x]) + (int)(next_rand() % 9) - 4;
                const int c = v < 0 ? 0 : v > maxv ? maxv : v;
                if (bpc == 8) row[x] = (uint8_t)c;
                else ((uint16_t *)row)[x] = (uint16_t)c;
            }
    }
    uint16_t *luma[2] = { malloc(sizeof(uint16_t) * (size_t)w * h), malloc(sizeof(uint16_t) * (size_t)w * h) };
    svc_luma_u16(&prev, luma[0]);
    svc_luma_u16(&d, luma[1]);
    for (int which = 0; which < 2; which++) {
        const svc_extractor *ex = which ? &svc_extractor_ssimulacra2 : &svc_extractor_xpsnr;
        void *s0 = ex->create(w, h, pix_fmt, bpc, SVC_CPU_SCALAR), *s1 = ex->create(w, h, pix_fmt, bpc, cpu);
        CHECK(s0 && s1, "%s: create failed at %dx%d %d-bit", ex->name, w, h, bpc);
        /* Both have kernels for every backend (xpsnr up to 12 bits, below 2048x1152). */
        if (s1 && (which || bpc <= 12))
            CHECK(strcmp(ex->backend(s1), cpu_name(cpu)) == 0, "%s runs %s, not %s", ex->name, ex->backend(s1), cpu_name(cpu));
        for (int rate = 0; s0 && s1 && rate < 2; rate++) {
            const svc_history past = { .luma = { luma[0], luma[1] }, .frame_rate = rate ? 60 : 24 };
            double o0[3], o1[3];
            const int rc0 = ex->compute_history ? ex->compute_history(s0, &r, &d, &past, o0) : ex->compute(s0, &r, &d, o0);
            const int rc1 = ex->compute_history ? ex->compute_history(s1, &r, &d, &past, o1) : ex->compute(s1, &r, &d, o1);
            CHECK(rc0 == SVC_OK && rc1 == SVC_OK, "%s: compute failed", ex->name);
            for (int k = 0; k < ex->n_outputs; k++)
                CHECK(memcmp(&o0[k], &o1[k], sizeof o0[k]) == 0, "%s %s at %dx%d %d %d-bit: scalar %.17g, %s %.17g",
                      ex->output_names[k], ex->backend(s1), w, h, pix_fmt, bpc, o0[k], cpu_name(cpu), o1[k]);
        }
        if (s0) ex->destroy(s0);
        if (s1) ex->destroy(s1);
    }
    free(luma[0]);
    free(luma[1]);
    svc_picture_free(&r);
    svc_picture_free(&d);
    svc_picture_free(&prev);
}

static void metrics_sizes(int cpu, int rounds) {
    static const int fmts[] = { SVC_PIX_420, SVC_PIX_422, SVC_PIX_444 }, depths[] = { 8, 10, 12, 16 };
    metrics_case(cpu, 64, 48, SVC_PIX_420, 8);
    metrics_case(cpu, 123, 77, SVC_PIX_444, 10);
    /* xpsnr's blocks of 44 at 720p: whole vectors and a partial one per row. */
    metrics_case(cpu, 1280, 720, SVC_PIX_420, 10);
    for (int r = 0; r < rounds; r++) {
        const int fmt = fmts[next_rand() % 3];
        const int w = 8 + (int)(next_rand() % 300), h = 8 + (int)(next_rand() % 120);
        metrics_case(cpu, fmt == SVC_PIX_444 ? w : w & ~1, fmt == SVC_PIX_420 ? h & ~1 : h, fmt, depths[next_rand() % 4]);
    }
}

int main(int argc, char **argv) {
    if (argc > 1) rng = (uint32_t)strtoul(argv[1], NULL, 10) | 1u;
    const int rounds = argc > 2 ? atoi(argv[2]) : 1;
    static const int cpus[] = { SVC_CPU_AVX2, SVC_CPU_AVX512 };
    printf("seed %u\n", rng);
    for (size_t c = 0; c < sizeof cpus / sizeof *cpus; c++) {
        const int cpu = cpus[c];
        if (!svc_cpu_supported(cpu)) {
            printf("SKIP %s: this CPU lacks %s; its kernels are not exercised here\n", cpu_name(cpu),
                   cpu == SVC_CPU_AVX512 ? "AVX-512 (F/BW/VL/DQ/CD)" : "AVX2");
            continue;
        }
        char name[64];
        snprintf(name, sizeof name, "%s_fixed_sizes", cpu_name(cpu));
        RUN_CASE(name, fixed_sizes(cpu));
        snprintf(name, sizeof name, "%s_random_sizes", cpu_name(cpu));
        RUN_CASE(name, random_sizes(cpu, 12 * rounds));
        snprintf(name, sizeof name, "%s_cambi_fixed_sizes", cpu_name(cpu));
        RUN_CASE(name, cambi_sizes(cpu, 0));
        snprintf(name, sizeof name, "%s_cambi_random_sizes", cpu_name(cpu));
        for (int r = 0; r < rounds; r++) RUN_CASE(name, cambi_sizes(cpu, 1));
        snprintf(name, sizeof name, "%s_speed_chroma", cpu_name(cpu));
        RUN_CASE(name, speed_sizes(cpu));
        if (cpu == SVC_CPU_AVX512) RUN_CASE("avx512_adm_decouple_s32_kernel", decouple_s32_case());
        snprintf(name, sizeof name, "%s_adm_dwt_s32_kernels", cpu_name(cpu));
        RUN_CASE(name, dwt_s32_case(cpu));
        snprintf(name, sizeof name, "%s_xpsnr_ssimulacra2", cpu_name(cpu));
        RUN_CASE(name, metrics_sizes(cpu, 6 * rounds));
    }
    RUN_CASE("vif_ladder_rows", vif_ladder_rows());
    return finish_checks();
}
