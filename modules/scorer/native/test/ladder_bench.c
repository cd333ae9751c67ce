/* Dev benchmark of ladders through the public ABI: one reference against N raw 4:2:0 8-bit
 * renditions scored as one ladder (svc_ladder_create) and as N separate streams of one pair each,
 * from memory (the files are read before timing). Prints wall and process CPU seconds of each and
 * their ratios, and checks that every rendition's per-frame VMAF is the same both ways.
 * Build: cc -O2 -std=c11 test/ladder_bench.c -Lbuild -Wl,-rpath,$PWD/build -lsvc_scorer -o /tmp/ladder_bench
 * Run:   /tmp/ladder_bench MODEL.json REF W H FRAMES THREADS [scalar|auto|avx2|avx512] DIS1 [DIS2 ...]
 * (the bench pair of bench/pair.ts: $TMPDIR/svc-bench/ref_1920x1080_48_v2.yuv and its distorted). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../include/svc_scorer.h"

static double now(clockid_t clock) {
    struct timespec t;
    clock_gettime(clock, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static uint8_t *read_frames(const char *path, size_t bytes) {
    FILE *f = fopen(path, "rb");
    uint8_t *buf = f ? malloc(bytes) : NULL;
    if (buf && fread(buf, 1, bytes, f) != bytes) {
        free(buf);
        buf = NULL;
    }
    if (f) fclose(f);
    return buf;
}

static int wait_stream(svc_stream *s) {
    const struct timespec tick = { 0, 1000000 };
    int rc;
    while ((rc = svc_stream_poll(s)) == 0) nanosleep(&tick, NULL);
    return rc;
}

int main(int argc, char **argv) {
    if (argc < 9) {
        fprintf(stderr, "usage: %s MODEL.json REF W H FRAMES THREADS scalar|auto|avx2|avx512 DIS1 [DIS2 ...]\n", argv[0]);
        return 2;
    }
    const int w = atoi(argv[3]), h = atoi(argv[4]), frames = atoi(argv[5]), threads = atoi(argv[6]);
    const char *cpu_name = argv[7];
    const int cpu = !strcmp(cpu_name, "scalar") ? SVC_CPU_SCALAR
                    : !strcmp(cpu_name, "avx2") ? SVC_CPU_AVX2
                    : !strcmp(cpu_name, "avx512") ? SVC_CPU_AVX512
                                                  : SVC_CPU_AUTO;
    const int n = argc - 8;
    const size_t fb = (size_t)w * (size_t)h * 3 / 2, total = fb * (size_t)frames;
    char err[512] = "";
    FILE *mf = fopen(argv[1], "rb");
    static char json[1 << 20];
    const size_t jlen = mf ? fread(json, 1, sizeof json, mf) : 0;
    if (mf) fclose(mf);
    svc_model *m = NULL;
    if (svc_model_load(json, jlen, &m, err, sizeof err)) {
        fprintf(stderr, "model: %s\n", err);
        return 1;
    }
    uint8_t *ref = read_frames(argv[2], total), **dis = calloc((size_t)n, sizeof *dis);
    uint8_t *row = malloc(fb * (size_t)n);
    for (int r = 0; r < n && dis; r++) dis[r] = read_frames(argv[8 + r], total);
    for (int r = 0; r < n; r++)
        if (!ref || !dis || !dis[r] || !row) {
            fprintf(stderr, "cannot read %d frames of %s or %s\n", frames, argv[2], argv[8 + r]);
            return 1;
        }
    int32_t opts[SVC_OPT_COUNT] = { [SVC_OPT_WIDTH] = w, [SVC_OPT_HEIGHT] = h, [SVC_OPT_PIX_FMT] = 420,
                                    [SVC_OPT_BITDEPTH] = 8, [SVC_OPT_THREADS] = threads, [SVC_OPT_CPU] = cpu };
    double *vmaf_ladder = calloc((size_t)n * (size_t)frames, sizeof(double));
    double *vmaf_alone = calloc((size_t)n * (size_t)frames, sizeof(double));

    /* One ladder of n renditions. */
    double wall0 = now(CLOCK_MONOTONIC), cpu0 = now(CLOCK_PROCESS_CPUTIME_ID);
    svc_stream *lad;
    if (svc_ladder_create(m, n, opts, SVC_OPT_COUNT, &lad, err, sizeof err)) {
        fprintf(stderr, "ladder: %s\n", err);
        return 1;
    }
    for (int f = 0; f < frames; f++) {
        for (int r = 0; r < n; r++) memcpy(row + (size_t)r * fb, dis[r] + (size_t)f * fb, fb);
        if (svc_stream_push(lad, ref + (size_t)f * fb, fb, row, fb * (size_t)n, err, sizeof err)) {
            fprintf(stderr, "ladder push: %s\n", err);
            return 1;
        }
    }
    svc_stream_finish(lad);
    if (wait_stream(lad) != 1) return 1;
    const double ladder_wall = now(CLOCK_MONOTONIC) - wall0, ladder_cpu = now(CLOCK_PROCESS_CPUTIME_ID) - cpu0;
    for (int r = 0; r < n; r++)
        svc_job_frame_values(svc_ladder_rendition(lad, r), 0, vmaf_ladder + (size_t)r * frames, frames);
    svc_stream_free(lad);

    /* The same pairs, one stream each, in turn (LADDER_BENCH_ONLY=1: not, e.g. to profile the ladder). */
    if (getenv("LADDER_BENCH_ONLY")) {
        printf("ladder      wall %.2f s  cpu %.2f s\n", ladder_wall, ladder_cpu);
        return 0;
    }
    wall0 = now(CLOCK_MONOTONIC);
    cpu0 = now(CLOCK_PROCESS_CPUTIME_ID);
    for (int r = 0; r < n; r++) {
        svc_stream *s;
        if (svc_stream_create(m, opts, SVC_OPT_COUNT, &s, err, sizeof err)) return 1;
        for (int f = 0; f < frames; f++)
            if (svc_stream_push(s, ref + (size_t)f * fb, fb, dis[r] + (size_t)f * fb, fb, err, sizeof err)) return 1;
        svc_stream_finish(s);
        if (wait_stream(s) != 1) return 1;
        svc_job_frame_values(svc_stream_job(s), 0, vmaf_alone + (size_t)r * frames, frames);
        svc_stream_free(s);
    }
    const double alone_wall = now(CLOCK_MONOTONIC) - wall0, alone_cpu = now(CLOCK_PROCESS_CPUTIME_ID) - cpu0;
    const int same = memcmp(vmaf_ladder, vmaf_alone, sizeof(double) * (size_t)n * (size_t)frames) == 0;
    printf("%dx%d, %d frames, %d renditions, %d threads, cpu %s (library ABI minor %d)\n", w, h, frames, n, threads,
           cpu_name, svc_abi_minor());
    printf("ladder      wall %.2f s  cpu %.2f s\n", ladder_wall, ladder_cpu);
    printf("%d separate  wall %.2f s  cpu %.2f s\n", n, alone_wall, alone_cpu);
    printf("ratio       wall %.2f    cpu %.2f    per-frame vmaf %s\n", ladder_wall / alone_wall, ladder_cpu / alone_cpu,
           same ? "identical" : "DIFFERENT");
    svc_model_free(m);
    return same ? 0 : 1;
}
