/* Dev benchmark for integer_adm: frames per second (process CPU time) of each backend on a
 * raw pair, repeating the file's frames until at least 2 s of work per backend.
 * Build: cc -O2 -std=c11 -Isrc test/adm_bench.c src/picture.c src/cpu.c \
 *          src/feature/integer_adm*.c src/feature/x86/integer_adm*.c -lm -o /tmp/adm_bench
 * Run:   /tmp/adm_bench REF DIS W H PIXFMT BPC [scalar|avx2]   (default: both) */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../src/feature/extractor.h"

extern const svc_extractor svc_extractor_integer_adm;

static double cpu_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
    if (argc < 7) {
        fprintf(stderr, "usage: %s REF DIS W H PIXFMT BPC\n", argv[0]);
        return 2;
    }
    const int w = atoi(argv[3]), h = atoi(argv[4]), fmt = atoi(argv[5]), bpc = atoi(argv[6]);
    const int64_t fb = svc_frame_bytes(w, h, fmt, bpc);
    FILE *fr = fopen(argv[1], "rb"), *fd = fopen(argv[2], "rb");
    if (fb <= 0 || !fr || !fd) return 1;
    enum { MAXF = 32 };
    svc_picture ref[MAXF], dis[MAXF];
    uint8_t *buf = malloc((size_t)fb);
    int n = 0;
    while (n < MAXF && fread(buf, 1, (size_t)fb, fr) == (size_t)fb) {
        svc_picture_alloc(&ref[n], w, h, fmt, bpc);
        svc_picture_from_raw(&ref[n], buf, (size_t)fb);
        if (fread(buf, 1, (size_t)fb, fd) != (size_t)fb) break;
        svc_picture_alloc(&dis[n], w, h, fmt, bpc);
        svc_picture_from_raw(&dis[n], buf, (size_t)fb);
        n++;
    }
    if (!n) return 1;
    const int cpus[2] = {SVC_CPU_SCALAR, SVC_CPU_AVX2};
    for (int c = 0; c < (svc_cpu_has_avx2() ? 2 : 1); c++) {
        if (argc > 7 && strcmp(argv[7], c ? "avx2" : "scalar") != 0) continue;
        void *st = svc_extractor_integer_adm.create(w, h, fmt, bpc, cpus[c]);
        if (!st) return 1;
        double out[8];
        int frames = 0;
        const double t0 = cpu_seconds();
        while (cpu_seconds() - t0 < 2.0)
            for (int i = 0; i < n; i++, frames++)
                svc_extractor_integer_adm.compute(st, &ref[i], &dis[i], out);
        const double dt = cpu_seconds() - t0;
        printf("%s: %d frames of %dx%d in %.2f s CPU = %.1f frames/s\n",
               svc_extractor_integer_adm.backend(st), frames, w, h, dt, frames / dt);
        svc_extractor_integer_adm.destroy(st);
    }
    return 0;
}
