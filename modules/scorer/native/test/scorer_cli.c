/* Developer CLI: scores a pair through the public ABI and prints "frame metric value" lines
 * (the input of test/compare_golden.py) on stdout and the pooled values on stderr.
 * Usage: scorer_cli MODEL.json REF DIS W H PIXFMT BPC [threads] [scalar|auto|avx2|avx512] [features-mask]
 * features-mask: svc_feature_flag bits, e.g. 7 = psnr + float_ssim + float_ms_ssim. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../include/svc_scorer.h"

static char *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *buf = NULL;
    if (fseek(f, 0, SEEK_END) == 0) {
        const long n = ftell(f);
        if (n >= 0 && fseek(f, 0, SEEK_SET) == 0 && (buf = malloc((size_t)n + 1)) &&
            fread(buf, 1, (size_t)n, f) != (size_t)n) {
            free(buf);
            buf = NULL;
        }
        *len = (size_t)n;
    }
    fclose(f);
    return buf;
}

int main(int argc, char **argv) {
    if (argc < 8) {
        fprintf(stderr, "usage: %s MODEL.json REF DIS W H PIXFMT BPC [threads] [scalar|auto|avx2|avx512] [features-mask]\n",
                argv[0]);
        return 2;
    }
    char err[512] = "";
    size_t len = 0;
    char *json = read_file(argv[1], &len);
    if (!json) {
        fprintf(stderr, "cannot read %s\n", argv[1]);
        return 1;
    }
    svc_model *model;
    int rc = svc_model_load(json, len, &model, err, sizeof err);
    free(json);
    if (rc) {
        fprintf(stderr, "model: %s (%d)\n", err, rc);
        return 1;
    }
    int32_t opts[SVC_OPT_COUNT] = { 0 };
    opts[SVC_OPT_WIDTH] = atoi(argv[4]);
    opts[SVC_OPT_HEIGHT] = atoi(argv[5]);
    opts[SVC_OPT_PIX_FMT] = atoi(argv[6]);
    opts[SVC_OPT_BITDEPTH] = atoi(argv[7]);
    opts[SVC_OPT_THREADS] = argc > 8 ? atoi(argv[8]) : 1;
    opts[SVC_OPT_CPU] = argc > 9 ? (strcmp(argv[9], "scalar") == 0 ? SVC_CPU_SCALAR
                                    : strcmp(argv[9], "avx2") == 0 ? SVC_CPU_AVX2
                                    : strcmp(argv[9], "avx512") == 0 ? SVC_CPU_AVX512 : SVC_CPU_AUTO) : SVC_CPU_AUTO;
    opts[SVC_OPT_FEATURES] = argc > 10 ? atoi(argv[10]) : 0;
    svc_job *job;
    if ((rc = svc_job_start(model, argv[2], argv[3], opts, SVC_OPT_COUNT, &job, err, sizeof err))) {
        fprintf(stderr, "start: %s (%d)\n", err, rc);
        svc_model_free(model);
        return 1;
    }
    const struct timespec tick = { 0, 2000000 };
    while ((rc = svc_job_poll(job)) == 0) nanosleep(&tick, NULL);
    if (rc < 0) {
        svc_job_error(job, err, sizeof err);
        fprintf(stderr, "job: %s (%d)\n", err, rc);
    } else {
        const int n = svc_job_frame_count(job), nm = svc_job_metric_count(job);
        double *v = malloc(sizeof *v * (size_t)n * (size_t)nm);
        for (int m = 0; m < nm; m++) svc_job_frame_values(job, m, v + (size_t)m * n, n);
        for (int f = 0; f < n; f++)
            for (int m = 0; m < nm; m++) printf("%d %s %.17g\n", f, svc_job_metric_name(job, m), v[(size_t)m * n + f]);
        free(v);
        static const char *const pools[] = { "mean", "min", "max", "harmonic_mean" };
        for (int m = 0; m < nm; m++) {
            fprintf(stderr, "%-40s", svc_job_metric_name(job, m));
            for (int p = 0; p < 4; p++) {
                double x;
                svc_job_pooled(job, m, p, &x);
                fprintf(stderr, " %s=%.6f", pools[p], x);
            }
            fprintf(stderr, "\n");
        }
        for (int e = 0; e < svc_job_extractor_count(job); e++)
            fprintf(stderr, "extractor %s: %s\n", svc_job_extractor_name(job, e), svc_job_extractor_backend(job, e));
        rc = 0;
    }
    svc_job_free(job);
    svc_model_free(model);
    return rc < 0 ? 1 : 0;
}
