/* Developer check: integer VIF and motion on synthetic frames of awkward sizes and every
 * bit depth, scalar against AVX2 (must be bit-identical), plus the small-size limits.
 * Build: cc -O2 -std=c11 -Isrc test/vif_motion_stress.c src/picture.c src/cpu.c \
 *          src/feature/integer_vif*.c src/feature/x86/integer_vif*.c src/feature/integer_motion*.c src/feature/x86/integer_motion*.c -lm -o /tmp/vif_motion_stress
 * Run:   /tmp/vif_motion_stress   (exit 0 when every case matches) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../src/feature/extractor.h"
#include "../src/feature/integer_motion.h"

/* The descriptors under test (registry.c declares them for the library). */
extern const svc_extractor svc_extractor_integer_vif;

static uint32_t rng = 12345;
static uint32_t next_rand(void) {
    rng = rng * 1664525u + 1013904223u;
    return rng >> 8;
}

/* pattern 0: noise; 1: smooth gradient plus small noise; 2: extremes (0 / max stripes). */
static void fill(svc_picture *p, int pattern, int shift) {
    const svc_plane *pl = &p->plane[0];
    const uint32_t maxv = (1u << p->bpc) - 1;
    for (int y = 0; y < pl->h; y++) {
        uint8_t *row = (uint8_t *)pl->data + y * pl->stride;
        for (int x = 0; x < pl->w; x++) {
            uint32_t v;
            if (pattern == 0) v = next_rand() & maxv;
            else if (pattern == 1) v = (((uint32_t)(x + shift) * 7 + (uint32_t)y * 3) * (maxv / 255) + (next_rand() & 3)) % (maxv + 1);
            else v = ((x + y + shift) / 3) & 1 ? maxv : 0;
            if (p->bpc == 8) row[x] = (uint8_t)v;
            else ((uint16_t *)row)[x] = (uint16_t)v;
        }
    }
}

static int vif_case(int w, int h, int bpc, int pattern) {
    svc_picture r, d;
    if (svc_picture_alloc(&r, w, h, SVC_PIX_420, bpc) || svc_picture_alloc(&d, w, h, SVC_PIX_420, bpc)) return 1;
    fill(&r, pattern, 0);
    fill(&d, pattern == 2 ? 2 : 0, 1);
    void *s0 = svc_extractor_integer_vif.create(w, h, SVC_PIX_420, bpc, SVC_CPU_SCALAR);
    void *s1 = svc_extractor_integer_vif.create(w, h, SVC_PIX_420, bpc, SVC_CPU_AVX2);
    double o0[4], o1[4];
    int bad = !s0 || !s1 || svc_extractor_integer_vif.compute(s0, &r, &d, o0) ||
              svc_extractor_integer_vif.compute(s1, &r, &d, o1) || memcmp(o0, o1, sizeof o0);
    if (bad) printf("VIF MISMATCH %dx%d bpc %d pattern %d\n", w, h, bpc, pattern);
    svc_extractor_integer_vif.destroy(s0);
    svc_extractor_integer_vif.destroy(s1);
    svc_picture_free(&r);
    svc_picture_free(&d);
    return bad;
}

static int motion_case(int w, int h, int bpc, int pattern) {
    svc_picture a, b;
    if (svc_picture_alloc(&a, w, h, SVC_PIX_420, bpc) || svc_picture_alloc(&b, w, h, SVC_PIX_420, bpc)) return 1;
    fill(&a, pattern, 0);
    fill(&b, pattern, 2);
    svc_motion *m0 = svc_motion_create(w, h, bpc, SVC_CPU_SCALAR);
    svc_motion *m1 = svc_motion_create(w, h, bpc, SVC_CPU_AVX2);
    if (!m0 || !m1) return 1;
    const size_t n = svc_motion_blur_len(m0);
    uint16_t *fa = malloc(n * 2), *fb = malloc(n * 2), *ga = malloc(n * 2), *gb = malloc(n * 2);
    int bad = svc_motion_blur(m0, &a, fa) || svc_motion_blur(m0, &b, fb) ||
              svc_motion_blur(m1, &a, ga) || svc_motion_blur(m1, &b, gb);
    const double s0 = svc_motion_sad(m0, fa, fb), s1 = svc_motion_sad(m1, ga, gb);
    bad |= s0 != s1;
    if (bad) printf("MOTION MISMATCH %dx%d bpc %d pattern %d: %.17g vs %.17g\n", w, h, bpc, pattern, s0, s1);
    free(fa); free(fb); free(ga); free(gb);
    svc_motion_destroy(m0);
    svc_motion_destroy(m1);
    svc_picture_free(&a);
    svc_picture_free(&b);
    return bad;
}

int main(void) {
    static const int sizes[][2] = { { 16, 16 }, { 17, 19 }, { 23, 16 }, { 33, 47 }, { 100, 37 },
                                    { 131, 77 }, { 352, 288 }, { 721, 35 } };
    static const int depths[] = { 8, 10, 12, 16 };
    int fails = 0, cases = 0;
    if (!svc_cpu_has_avx2()) {
        printf("no AVX2 on this CPU\n");
        return 0;
    }
    for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++)
        for (size_t di = 0; di < 4; di++)
            for (int pat = 0; pat < 3; pat++) {
                fails += vif_case(sizes[si][0], sizes[si][1], depths[di], pat);
                fails += motion_case(sizes[si][0], sizes[si][1], depths[di], pat);
                cases += 2;
            }
    /* Below the supported sizes create must fail cleanly. */
    fails += svc_extractor_integer_vif.create(15, 64, SVC_PIX_420, 8, SVC_CPU_SCALAR) != NULL;
    fails += svc_extractor_integer_vif.create(64, 15, SVC_PIX_420, 8, SVC_CPU_AVX2) != NULL;
    fails += svc_motion_create(2, 64, 8, SVC_CPU_SCALAR) != NULL;
    fails += motion_case(3, 3, 8, 0);
    cases += 5;
    printf("%d cases, %d failures\n", cases, fails);
    return fails != 0;
}
