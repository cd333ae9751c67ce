/* Dev check for integer_adm on odd geometries: creation must fail cleanly below the minimum
 * size and every accepted size must compute finite scores (run under ASan/UBSan), with the
 * scalar and AVX2 backends agreeing bit for bit when both are built in.
 * Build: cc -O1 -g -std=c11 -fsanitize=address,undefined -Isrc test/adm_sizes.c \
 *          src/picture.c src/cpu.c src/feature/integer_adm*.c src/feature/x86/integer_adm*.c -lm -o /tmp/adm_sizes
 *        (add -mavx2 only to the *_avx2.c file when compiling it separately) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../src/feature/extractor.h"

static uint32_t rng = 12345;
static uint32_t next(void) { rng = rng * 1664525u + 1013904223u; return rng >> 8; }

static int get(const svc_picture *p, int x, int y) {
    const svc_plane *pl = &p->plane[0];
    return p->bpc == 8 ? ((const uint8_t *)pl->data)[y * pl->stride + x]
                       : ((const uint16_t *)((const uint8_t *)pl->data + y * pl->stride))[x];
}

/* Distorted from reference: contrast boost around mid-grey (enhancement path) or inversion
 * (opposite-sign details). */
static void derive(svc_picture *d, const svc_picture *r, int invert) {
    const svc_plane *pl = &d->plane[0];
    const int maxv = (1 << d->bpc) - 1;
    for (int y = 0; y < pl->h; y++)
        for (int x = 0; x < pl->w; x++) {
            const int v0 = get(r, x, y);
            int v = invert ? maxv - v0 : (v0 - maxv / 2) * 3 / 2 + maxv / 2;
            v = v < 0 ? 0 : (v > maxv ? maxv : v);
            if (d->bpc == 8) ((uint8_t *)pl->data)[y * pl->stride + x] = (uint8_t)v;
            else ((uint16_t *)((uint8_t *)pl->data + y * pl->stride))[x] = (uint16_t)v;
        }
}

static void fill(svc_picture *p, int kind, int seed) {
    const svc_plane *pl = &p->plane[0];
    const int maxv = (1 << p->bpc) - 1;
    for (int y = 0; y < pl->h; y++)
        for (int x = 0; x < pl->w; x++) {
            int v;
            switch (kind) {
            case 0: v = (int)(next() % (uint32_t)(maxv + 1)); break;      /* noise */
            case 1: v = ((x / 3 + y / 2 + seed) & 1) ? maxv : 0; break; /* hard edges */
            default: v = (x * 7 + y * 3 + seed) % (maxv + 1); break;     /* ramps */
            }
            if (p->bpc == 8) ((uint8_t *)pl->data)[y * pl->stride + x] = (uint8_t)v;
            else ((uint16_t *)((uint8_t *)pl->data + y * pl->stride))[x] = (uint16_t)v;
        }
}

int main(void) {
    extern const svc_extractor svc_extractor_integer_adm;
    const svc_extractor *ex = &svc_extractor_integer_adm;
    const int avx2 = svc_cpu_has_avx2();
    int bad = 0, runs = 0, failed = 0;
    const int small[][2] = {{16, 16}, {32, 32}, {32, 200}, {200, 32}, {1, 1}};
    for (size_t i = 0; i < sizeof small / sizeof small[0]; i++)
        if (ex->create(small[i][0], small[i][1], 420, 8, SVC_CPU_SCALAR)) {
            printf("FAIL %dx%d accepted\n", small[i][0], small[i][1]);
            bad = 1;
        }
    const int sizes[][2] = {{33, 33}, {33, 97}, {47, 35}, {64, 64}, {79, 41}, {100, 150},
                            {150, 33}, {161, 121}, {320, 240}, {353, 289}};
    const int bpcs[] = {8, 10, 12, 16};
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++)
        for (size_t bi = 0; bi < 4; bi++)
            for (int kind = 0; kind < 5; kind++) {
                const int w = sizes[si][0], h = sizes[si][1], bpc = bpcs[bi];
                svc_picture r, d;
                svc_picture_alloc(&r, w, h, 420, bpc);
                svc_picture_alloc(&d, w, h, 420, bpc);
                fill(&r, kind < 3 ? kind : 2 * (kind - 3), 0);
                if (kind < 3) fill(&d, kind, 1);
                else derive(&d, &r, kind == 4);
                double out[2][8];
                const int bad_before = bad;
                for (int be = 0; be < (avx2 ? 2 : 1); be++) {
                    void *st = ex->create(w, h, 420, bpc, be ? SVC_CPU_AVX2 : SVC_CPU_SCALAR);
                    if (!st || ex->compute(st, &r, &d, out[be]) != SVC_OK) {
                        printf("FAIL %dx%d bpc %d: create/compute\n", w, h, bpc);
                        bad = 1;
                    }
                    ex->destroy(st);
                }
                for (int k = 0; k < ex->n_outputs; k++) {
                    if (!isfinite(out[0][k])) {
                        printf("FAIL %dx%d bpc %d kind %d: %s = %g\n", w, h, bpc, kind,
                               ex->output_names[k], out[0][k]);
                        bad = 1;
                    }
                    if (avx2 && memcmp(&out[0][k], &out[1][k], sizeof(double)) != 0) {
                        printf("FAIL %dx%d bpc %d kind %d: %s scalar %.17g avx2 %.17g\n", w, h,
                               bpc, kind, ex->output_names[k], out[0][k], out[1][k]);
                        bad = 1;
                    }
                }
                runs++;
                failed += bad != bad_before;
                svc_picture_free(&r);
                svc_picture_free(&d);
            }
    printf("%d passed, %d failed\n", runs - failed, failed + (bad && !failed));
    return bad;
}
