/* Self-contained test of the scorer's public ABI: model parsing errors, job errors, determinism
 * across threads and backends, streams against files, cancellation.
 * Usage: scorer_test [DATA_DIR]   (default .: the folder holding models/ and fixtures/)
 * Exit 0 when every check passed; prints "N passed, M failed". */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../include/svc_scorer.h"
#include "check.h"
#include "support.h"

/* Not in the public ABI (src/job.h): units (a frame's extractor) run by a worker other than the one
 * that loaded the frame. */
int64_t svc_loop_units_shared(const svc_job *j);
/* Not in the public ABI either: loaders leave their frames' units to the other workers. */
void svc_loop_test_hand_off(int on);

static char err[512];

/* v01: 320x240 4:2:0 8-bit, 30 frames. v06: same geometry, 20 frames. */
#define W 320
#define H 240
#define FRAME_BYTES (W * H * 3 / 2)

static int load(const char *text, size_t len, svc_model **m) {
    err[0] = '\0';
    return svc_model_load(text, len, m, err, sizeof err);
}

/* Copy of model text with the first occurrence of from inside model_dict replaced by to. */
static char *replaced(const char *text, const char *from, const char *to) {
    const char *dict = strstr(text, "\"model_dict\"");
    const char *at = dict ? strstr(dict, from) : NULL;
    if (!at) return NULL;
    char *out = malloc(strlen(text) + strlen(to) + 1);
    const size_t pre = (size_t)(at - text);
    memcpy(out, text, pre);
    strcpy(out + pre, to);
    strcat(out, at + strlen(from));
    return out;
}

static void expect_model_error(const char *text, const char *what, const char *needle) {
    svc_model *m = NULL;
    const int rc = load(text, strlen(text), &m);
    CHECK(rc == SVC_E_MODEL && m == NULL, "%s: status %d, want SVC_E_MODEL", what, rc);
    CHECK(strstr(err, needle) != NULL, "%s: message '%s' lacks '%s'", what, err, needle);
}

static void test_models(const char *json, size_t len) {
    svc_model *m = NULL;
    CHECK(load(json, len, &m) == SVC_OK, "default model loads: %s", err);
    CHECK(svc_model_feature_count(m) == 6, "6 features");
    CHECK(m && strcmp(svc_model_feature_name(m, 0), "integer_adm2") == 0, "feature 0 is integer_adm2");
    CHECK(m && strcmp(svc_model_feature_name(m, 1), "integer_motion2") == 0, "feature 1 is integer_motion2");
    svc_model_free(m);

    size_t l4k;
    char *j4k = slurp(path("models/vmaf_4k_v0.6.1.json"), &l4k);
    CHECK(j4k && load(j4k, l4k, &m) == SVC_OK, "4k model loads: %s", err);
    if (j4k) svc_model_free(m);
    free(j4k);

    /* The model parses what it reads; svc_model_check says whether svc computes it. */
    size_t lf;
    char *jfl = slurp(path("models/vmaf_float_v0.6.1.json"), &lf);
    /* The float models read the float extractors' outputs (adm2, motion2, vif_scale0..3). */
    CHECK(jfl && load(jfl, lf, &m) == SVC_OK, "float model loads: %s", err);
    CHECK(jfl && m && strcmp(svc_model_feature_name(m, 0), "adm2") == 0, "float model feature 0 is adm2");
    if (jfl) {
        CHECK(svc_model_check(m, err, sizeof err) == SVC_OK, "float model is computable: %s", err);
        svc_model_free(m);
    }
    free(jfl);
    char *jn = slurp(path("models/vmaf_v0.6.1neg.json"), &lf);
    CHECK(jn && load(jn, lf, &m) == SVC_OK, "neg model loads: %s", err);
    if (jn) {
        CHECK(svc_model_feature_option_count(m, 0) == 1, "adm2 carries one option");
        double v = 0;
        const char *key = svc_model_feature_option(m, 0, 0, &v);
        CHECK(key && strcmp(key, "adm_enhn_gain_limit") == 0 && v == 1.0, "adm_enhn_gain_limit = 1");
        CHECK(svc_model_check(m, err, sizeof err) == SVC_OK, "neg model is computable: %s", err);
        svc_model_free(m);
    }
    free(jn);
    char *jb = slurp(path("models/vmaf_b_v0.6.3.json"), &lf);
    CHECK(jb && load(jb, lf, &m) == SVC_OK, "bootstrap model loads: %s", err);
    if (jb) {
        CHECK(svc_model_output_count(m) == 25, "bootstrap: 21 members and 4 statistics");
        char name[64];
        svc_model_output_name(m, 24, name, sizeof name);
        CHECK(strcmp(name, "vmaf_ci_p95_hi") == 0, "last output is vmaf_ci_p95_hi, not %s", name);
        svc_model_free(m);
    }
    free(jb);
    char *jf = slurp(path("models/vmaf_v0.6.1.json"), &lf);
    if (jf) {
        /* An option no extractor takes is refused by name at the check. */
        char *odd = replaced(jf, "\"feature_names\"", "\"feature_opts_dicts\": [{\"adm_bogus\": 2}, {}, {}, {}, {}, {}], \"feature_names\"");
        CHECK(odd && load(odd, strlen(odd), &m) == SVC_OK, "model with an unknown option parses: %s", err);
        if (odd) {
            CHECK(svc_model_check(m, err, sizeof err) == SVC_E_MODEL && strstr(err, "adm_bogus") &&
                      strstr(err, "adm_enhn_gain_limit"),
                  "unknown option refused by name, listing the known ones: %s", err);
            svc_model_free(m);
        }
        free(odd);
    }
    free(jf);

    char *t = strndup(json, len / 2);
    expect_model_error(t, "truncated JSON", "model JSON");
    free(t);
    expect_model_error("", "empty input", "end of input");
    expect_model_error("{\"a\": [1, 2,]}", "trailing comma", "line 1");
    expect_model_error("{\"a\": 1, \"a\": 2}", "duplicate key", "duplicate key");
    expect_model_error("{\"a\": \"\\x\"}", "bad escape", "invalid escape");
    expect_model_error("{\"a\": 01}", "leading zero", "expected");
    expect_model_error("{\"a\": }", "missing value", "unexpected character");
    expect_model_error("{\"a\": 1e999}", "huge number", "out of range");
    expect_model_error("{\"a\": \"\\ud800\"}", "lone surrogate", "surrogate");
    expect_model_error("{} x", "trailing content", "trailing content");
    expect_model_error("[1]", "not an object", "model_dict");

    const struct { const char *from, *to, *what, *needle; } edits[] = {
        { "\"LIBSVMNUSVR\"", "\"XGBOOST\"", "unknown model_type", "model_type 'XGBOOST'" },
        { "\"LIBSVMNUSVR\"", "42", "model_type as number", "model_type must be a string" },
        { "\"slopes\": [", "\"slopes\": [\"x\", ", "slope as string", "slopes" },
        { "\"linear_rescale\"", "\"clip_0to1\"", "unknown norm_type", "norm_type 'clip_0to1'" },
        { "nu_svr", "epsilon_svr", "svm_type", "nu_svr" },
        { "kernel_type rbf", "kernel_type linear", "kernel_type", "rbf" },
        { "total_sv 211", "total_sv 212", "support vector count", "fewer support vectors" },
        { "\"score_clip\": [", "\"score_clip\": [1, ", "score_clip length", "score_clip has 3 values" },
        { "\"VMAF_integer_feature_vif_scale3_score\"", "\"VMAF_integer_feature_vif_scale2_score\"", "duplicate feature",
          "listed twice" },
    };
    for (size_t i = 0; i < sizeof edits / sizeof edits[0]; i++) {
        char *e = replaced(json, edits[i].from, edits[i].to);
        CHECK(e != NULL, "%s: pattern present", edits[i].what);
        if (e) expect_model_error(e, edits[i].what, edits[i].needle);
        free(e);
    }
}

typedef struct {
    int n, nm;
    char names[64][64];
    double *v; /* nm x n */
} results;

static void results_free(results *r) { free(r->v); }

static int wait_job(svc_job *j) {
    const struct timespec tick = { 0, 1000000 };
    int rc;
    while ((rc = svc_job_poll(j)) == 0) nanosleep(&tick, NULL);
    return rc;
}

static int collect(const svc_job *j, results *r) {
    r->n = svc_job_frame_count(j);
    r->nm = svc_job_metric_count(j);
    if (r->nm > 64) return -1;
    r->v = malloc(sizeof *r->v * (size_t)r->n * (size_t)r->nm);
    for (int m = 0; m < r->nm; m++) {
        snprintf(r->names[m], sizeof r->names[m], "%s", svc_job_metric_name(j, m));
        if (svc_job_frame_values(j, m, r->v + (size_t)m * r->n, r->n) != r->n) return -1;
    }
    /* A read from an offset gives the same values as the full read. */
    double tail[8];
    const int first = r->n / 2, want = r->n - first < 8 ? r->n - first : 8;
    CHECK(r->nm == 0 || svc_job_frame_values_from(j, 0, first, tail, 8) == want, "frame_values_from count");
    for (int k = 0; r->nm > 0 && k < want; k++)
        CHECK(memcmp(&tail[k], &r->v[first + k], sizeof tail[k]) == 0, "frame_values_from value %d", first + k);
    CHECK(svc_job_frame_values_from(j, 0, r->n, tail, 8) == 0, "nothing past the last frame");
    CHECK(svc_job_frame_values_from(j, 0, -1, tail, 8) == SVC_E_INVALID_ARG, "negative first refused");
    return 0;
}

/* svc_loop_units_shared of the last job run_file_n ran. */
/* The flags of psnr, float_ssim and float_ms_ssim, read from the library's feature list. */
static int extra_features(void) {
    int flags = 0;
    for (int i = 0; i < svc_feature_count(); i++)
        if (!strcmp(svc_feature_name(i), "psnr") || !strcmp(svc_feature_name(i), "float_ssim") ||
            !strcmp(svc_feature_name(i), "float_ms_ssim"))
            flags |= svc_feature_flag(i);
    return flags;
}

static int64_t last_units_shared;

/* The pair's first cnt frames (0: all) with psnr, float_ssim and float_ms_ssim besides the model's. */
static int run_file_n(const svc_model *m, const char *ref, const char *dis, int threads, int cpu, int cnt,
                      results *r) {
    int32_t opts[SVC_OPT_COUNT] = { 0 };
    opts[SVC_OPT_FRAME_CNT] = cnt;
    opts[SVC_OPT_WIDTH] = W;
    opts[SVC_OPT_HEIGHT] = H;
    opts[SVC_OPT_PIX_FMT] = 420;
    opts[SVC_OPT_BITDEPTH] = 8;
    opts[SVC_OPT_THREADS] = threads;
    opts[SVC_OPT_CPU] = cpu;
    opts[SVC_OPT_FEATURES] = extra_features();
    svc_job *j;
    int rc = svc_job_start(m, ref, dis, opts, SVC_OPT_COUNT, &j, err, sizeof err);
    if (rc) return rc;
    rc = wait_job(j);
    if (rc == 1 && collect(j, r) != 0) rc = -1;
    else svc_job_error(j, err, sizeof err);
    last_units_shared = svc_loop_units_shared(j);
    svc_job_free(j);
    return rc;
}

static int run_file(const svc_model *m, const char *ref, const char *dis, int threads, int cpu, results *r) {
    return run_file_n(m, ref, dis, threads, cpu, 0, r);
}

static int same_results(const results *a, const results *b) {
    if (a->n != b->n || a->nm != b->nm) return 0;
    for (int m = 0; m < a->nm; m++)
        if (strcmp(a->names[m], b->names[m]) != 0) return 0;
    return memcmp(a->v, b->v, sizeof *a->v * (size_t)a->n * (size_t)a->nm) == 0;
}

static double metric(const results *r, const char *name, int frame) {
    for (int m = 0; m < r->nm; m++)
        if (strcmp(r->names[m], name) == 0) return r->v[(size_t)m * r->n + frame];
    return NAN;
}

/* Golden per-frame vmaf values: the numbers after each "vmaf": key. */
static int golden_vmaf(const char *p, double *out, int max) {
    size_t len;
    char *text = slurp(p, &len);
    int n = 0;
    for (char *at = text; at && n < max && (at = strstr(at, "\"vmaf\":")); at += 7) out[n++] = strtod(at + 7, NULL);
    free(text);
    return n;
}

static void test_jobs(const svc_model *m) {
    const char *ref = path("fixtures/v01_testsrc2_420_8_x264.ref.yuv");
    const char *dis = path("fixtures/v01_testsrc2_420_8_x264.dis.yuv");
    results r1 = { 0 }, r2 = { 0 }, rs = { 0 };
    CHECK(run_file(m, ref, dis, 1, SVC_CPU_AUTO, &r1) == 1, "v01 1 thread: %s", err);
    CHECK(r1.n == 30, "30 frames, got %d", r1.n);
    CHECK(r1.nm > 0 && strcmp(r1.names[0], "vmaf") == 0, "metric 0 is vmaf");
    double gold[64];
    const int ng = golden_vmaf(path("fixtures/v01_testsrc2_420_8_x264.libvmaf.json"), gold, 64);
    double worst = 0;
    for (int f = 0; f < r1.n && f < ng; f++) worst = fmax(worst, fabs(metric(&r1, "vmaf", f) - gold[f]));
    CHECK(ng >= 30 && worst <= 1e-4, "vmaf within 1e-4 of golden (max %.3g)", worst);

    CHECK(run_file(m, ref, dis, 2, SVC_CPU_AUTO, &r2) == 1, "v01 2 threads: %s", err);
    CHECK(same_results(&r1, &r2), "1 and 2 threads give identical results");
    CHECK(run_file(m, ref, dis, 3, SVC_CPU_SCALAR, &rs) == 1, "v01 scalar: %s", err);
    CHECK(same_results(&r1, &rs), "scalar and auto give identical results");
    results_free(&r2);
    results_free(&rs);

    results r3 = { 0 };
    CHECK(run_file(m, path("fixtures/does-not-exist.yuv"), dis, 1, SVC_CPU_AUTO, &r3) == SVC_E_IO,
          "missing file is SVC_E_IO: %s", err);
    CHECK(run_file(m, ref, path("fixtures/v06_testsrc2_420_8_same.dis.yuv"), 1, SVC_CPU_AUTO, &r3) == SVC_E_GEOMETRY,
          "30 vs 20 frames is SVC_E_GEOMETRY");
    CHECK(strstr(err, "lengths differ") != NULL, "length message: %s", err);

    /* Geometry mismatch: two Y4M files of different sizes. */
    char y1[] = "/tmp/svc_scorer_test_XXXXXX", y2[] = "/tmp/svc_scorer_test_XXXXXX";
    const int fd1 = mkstemp(y1), fd2 = mkstemp(y2);
    char p1[64], p2[64];
    snprintf(p1, sizeof p1, "%s.y4m", y1);
    snprintf(p2, sizeof p2, "%s.y4m", y2);
    close(fd1);
    close(fd2);
    unlink(y1);
    unlink(y2);
    for (int k = 0; k < 2; k++) {
        const int w = k ? 64 : 48;
        FILE *f = fopen(k ? p2 : p1, "wb");
        fprintf(f, "YUV4MPEG2 W%d H48 F25:1 Ip C420\nFRAME\n", w);
        for (int b = 0; b < w * 48 * 3 / 2; b++) fputc(b & 0xff, f);
        fclose(f);
    }
    svc_job *j;
    int32_t opts[SVC_OPT_COUNT] = { 0 };
    CHECK(svc_job_start(m, p1, p2, opts, SVC_OPT_COUNT, &j, err, sizeof err) == SVC_E_GEOMETRY,
          "48x48 vs 64x48 Y4M is SVC_E_GEOMETRY: %s", err);
    unlink(p1);
    unlink(p2);
    opts[SVC_OPT_CPU] = 9;
    CHECK(svc_job_start(m, ref, dis, opts, SVC_OPT_COUNT, &j, err, sizeof err) == SVC_E_INVALID_ARG,
          "cpu 9 is SVC_E_INVALID_ARG");

    /* frame_cnt ends both inputs early, so differing lengths do not matter. */
    int32_t o2[SVC_OPT_COUNT] = { [SVC_OPT_WIDTH] = W, [SVC_OPT_HEIGHT] = H, [SVC_OPT_PIX_FMT] = 420,
                                  [SVC_OPT_BITDEPTH] = 8, [SVC_OPT_FRAME_CNT] = 10, [SVC_OPT_SUBSAMPLE] = 3 };
    int rc = svc_job_start(m, ref, path("fixtures/v06_testsrc2_420_8_same.dis.yuv"), o2, SVC_OPT_COUNT, &j, err,
                           sizeof err);
    CHECK(rc == SVC_OK, "frame_cnt 10 with inputs of 30 and 20 frames: %s", err);
    if (rc == SVC_OK) {
        CHECK(wait_job(j) == 1, "frame_cnt job finishes");
        CHECK(svc_job_frame_count(j) == 4, "frames 0,3,6,9 scored, got %d", svc_job_frame_count(j));
        svc_job_free(j);
    }

    /* Cancellation: poll reports SVC_E_CANCELLED once the threads stopped. */
    o2[SVC_OPT_FRAME_CNT] = 0;
    o2[SVC_OPT_SUBSAMPLE] = 0;
    rc = svc_job_start(m, ref, dis, o2, SVC_OPT_COUNT, &j, err, sizeof err);
    CHECK(rc == SVC_OK, "start for cancel: %s", err);
    if (rc == SVC_OK) {
        svc_job_cancel(j);
        CHECK(wait_job(j) == SVC_E_CANCELLED, "cancelled job polls SVC_E_CANCELLED");
        CHECK(svc_job_error(j, err, sizeof err) == SVC_E_CANCELLED && strcmp(err, "cancelled") == 0,
              "svc_job_error says cancelled: %s", err);
        svc_job_free(j);
    }
    /* Freeing a running job cancels and joins it. */
    if (svc_job_start(m, ref, dis, o2, SVC_OPT_COUNT, &j, err, sizeof err) == SVC_OK) svc_job_free(j);

    /* Stream fed from the same files gives the same numbers; frames_ready lags for motion. */
    int32_t so[SVC_OPT_COUNT] = { [SVC_OPT_WIDTH] = W, [SVC_OPT_HEIGHT] = H, [SVC_OPT_PIX_FMT] = 420,
                                  [SVC_OPT_BITDEPTH] = 8, [SVC_OPT_THREADS] = 2,
                                  [SVC_OPT_FEATURES] = extra_features() };
    svc_stream *s;
    rc = svc_stream_create(m, so, SVC_OPT_COUNT, &s, err, sizeof err);
    CHECK(rc == SVC_OK, "stream create: %s", err);
    if (rc != SVC_OK) return;
    CHECK(svc_stream_frame_bytes(s) == FRAME_BYTES, "stream frame bytes");
    size_t lr, ld;
    uint8_t *br = (uint8_t *)slurp(ref, &lr), *bd = (uint8_t *)slurp(dis, &ld);
    CHECK(br && bd && lr == 30 * (size_t)FRAME_BYTES && ld == lr, "fixture sizes");
    CHECK(svc_stream_push(s, br, 5, bd, FRAME_BYTES, err, sizeof err) == SVC_E_GEOMETRY, "short frame rejected");
    int lag_ok = 1;
    const struct timespec tick = { 0, 1000000 };
    for (int f = 0; br && bd && f < 30; f++) {
        rc = svc_stream_push(s, br + (size_t)f * FRAME_BYTES, FRAME_BYTES, bd + (size_t)f * FRAME_BYTES, FRAME_BYTES,
                             err, sizeof err);
        if (rc) break;
        if (f == 4) {
            while (svc_stream_frames_ready(s) < 4) nanosleep(&tick, NULL);
            nanosleep(&tick, NULL);
            lag_ok = svc_stream_frames_ready(s) == 4 && svc_stream_poll(s) == 0;
        }
    }
    CHECK(rc == SVC_OK, "pushes: %s", err);
    CHECK(lag_ok, "after 5 pushes exactly 4 frames are ready");
    svc_stream_finish(s);
    const struct timespec t2 = { 0, 1000000 };
    while ((rc = svc_stream_poll(s)) == 0) nanosleep(&t2, NULL);
    CHECK(rc == 1, "stream finishes");
    CHECK(svc_stream_push(s, br, FRAME_BYTES, bd, FRAME_BYTES, err, sizeof err) == SVC_E_INVALID_ARG,
          "push after finish rejected");
    results rst = { 0 };
    CHECK(collect(svc_stream_job(s), &rst) == 0 && same_results(&r1, &rst), "stream equals file job");
    double mean_s, mean_f;
    svc_job_pooled(svc_stream_job(s), 0, SVC_POOL_MEAN, &mean_s);
    double sum = 0;
    for (int f = 0; f < r1.n; f++) sum += r1.v[f];
    mean_f = sum / r1.n;
    CHECK(mean_s == mean_f, "pooled mean is the mean of the frames");
    results_free(&rst);
    svc_stream_free(s);
    free(br);
    free(bd);
    results_free(&r1);
}

/* A ladder of three renditions (the distorted, the reference itself, the distorted again) over
 * one pass of the reference equals, per rendition and bit for bit, each pair scored alone; the
 * reference is loaded once per frame and its motion computed once per frame pair. */
static void test_ladder(const svc_model *m) {
    const char *ref = path("fixtures/v01_testsrc2_420_8_x264.ref.yuv");
    const char *dis = path("fixtures/v01_testsrc2_420_8_x264.dis.yuv");
    results alone[2] = { { 0 }, { 0 } };
    CHECK(run_file(m, ref, dis, 1, SVC_CPU_AUTO, &alone[0]) == 1, "pair alone: %s", err);
    CHECK(run_file(m, ref, ref, 1, SVC_CPU_AUTO, &alone[1]) == 1, "reference against itself: %s", err);
    int32_t so[SVC_OPT_COUNT] = { [SVC_OPT_WIDTH] = W, [SVC_OPT_HEIGHT] = H, [SVC_OPT_PIX_FMT] = 420,
                                  [SVC_OPT_BITDEPTH] = 8, [SVC_OPT_THREADS] = 2,
                                  [SVC_OPT_FEATURES] = extra_features() };
    svc_stream *s;
    CHECK(svc_ladder_create(m, 0, so, SVC_OPT_COUNT, &s, err, sizeof err) == SVC_E_INVALID_ARG, "0 renditions refused");
    int rc = svc_ladder_create(m, 3, so, SVC_OPT_COUNT, &s, err, sizeof err);
    CHECK(rc == SVC_OK, "ladder create: %s", err);
    if (rc != SVC_OK) return;
    size_t lr, ld;
    uint8_t *br = (uint8_t *)slurp(ref, &lr), *bd = (uint8_t *)slurp(dis, &ld);
    uint8_t *three = malloc(3 * (size_t)FRAME_BYTES);
    CHECK(svc_stream_push(s, br, FRAME_BYTES, bd, FRAME_BYTES, err, sizeof err) == SVC_E_GEOMETRY,
          "a frame with one rendition's picture refused");
    for (int f = 0; br && bd && three && f < 30 && rc == SVC_OK; f++) {
        const size_t at = (size_t)f * FRAME_BYTES;
        memcpy(three, bd + at, FRAME_BYTES);
        memcpy(three + FRAME_BYTES, br + at, FRAME_BYTES);
        memcpy(three + 2 * (size_t)FRAME_BYTES, bd + at, FRAME_BYTES);
        rc = svc_stream_push(s, br + at, FRAME_BYTES, three, 3 * (size_t)FRAME_BYTES, err, sizeof err);
    }
    CHECK(rc == SVC_OK, "ladder pushes: %s", err);
    CHECK(svc_ladder_rendition(s, 0) == NULL, "no results before the ladder is done");
    svc_stream_finish(s);
    const struct timespec tick = { 0, 1000000 };
    while ((rc = svc_stream_poll(s)) == 0) nanosleep(&tick, NULL);
    CHECK(rc == 1, "ladder finishes");
    const int expect[3] = { 0, 1, 0 };
    for (int r = 0; r < 3; r++) {
        results got = { 0 };
        const svc_job *view = svc_ladder_rendition(s, r);
        CHECK(view && collect(view, &got) == 0 && same_results(&alone[expect[r]], &got),
              "rendition %d equals its pair scored alone", r);
        results_free(&got);
    }
    CHECK(svc_ladder_rendition(s, 3) == NULL, "no fourth rendition");
    CHECK(svc_ladder_reference_loads(s) == 30, "30 reference loads for 30 frames: %lld",
          (long long)svc_ladder_reference_loads(s));
    CHECK(svc_ladder_motion_diffs(s) == 29, "29 motion differences for 30 frames: %lld",
          (long long)svc_ladder_motion_diffs(s));
    svc_stream_free(s);
    free(three);
    free(br);
    free(bd);
    results_free(&alone[0]);
    results_free(&alone[1]);
}

/* Renditions over their own ranges (svc_ladder_range): one starting 5 frames late, one ending 10
 * frames early, one over every frame; each equals, bit for bit, its pair alone pushed over just
 * those frames (motion's first frame 0 and last-frame rule, subsampling from its own first frame,
 * xpsnr's history from its own frames), whatever the bytes pushed for a rendition outside its range. */
static void test_ladder_ranges(const svc_model *m, int subsample) {
    const char *ref = path("fixtures/v01_testsrc2_420_8_x264.ref.yuv");
    const char *dis = path("fixtures/v01_testsrc2_420_8_x264.dis.yuv");
    size_t lr, ld;
    uint8_t *br = (uint8_t *)slurp(ref, &lr), *bd = (uint8_t *)slurp(dis, &ld);
    CHECK(br && bd && lr >= 30 * (size_t)FRAME_BYTES && ld >= 30 * (size_t)FRAME_BYTES, "fixture read");
    if (!br || !bd) return;
    int xpsnr = 0;
    for (int i = 0; i < svc_feature_count(); i++)
        if (!strcmp(svc_feature_name(i), "xpsnr")) xpsnr = svc_feature_flag(i);
    int32_t so[SVC_OPT_COUNT] = { [SVC_OPT_WIDTH] = W, [SVC_OPT_HEIGHT] = H, [SVC_OPT_PIX_FMT] = 420,
                                  [SVC_OPT_BITDEPTH] = 8, [SVC_OPT_THREADS] = 2, [SVC_OPT_SUBSAMPLE] = subsample,
                                  [SVC_OPT_FEATURES] = extra_features() | xpsnr };
    enum { N = 3, FRAMES = 30 };
    const int first[N] = { 5, 0, 0 }, count[N] = { 25, 20, 30 };
    svc_stream *lad;
    int rc = svc_ladder_create(m, N, so, SVC_OPT_COUNT, &lad, err, sizeof err);
    CHECK(rc == SVC_OK, "ladder create: %s", err);
    if (rc != SVC_OK) return;
    CHECK(svc_ladder_range(lad, N, 0, 1, err, sizeof err) == SVC_E_INVALID_ARG, "no rendition %d", N);
    CHECK(svc_ladder_range(lad, 0, 0, 0, err, sizeof err) == SVC_E_INVALID_ARG, "an empty range refused");
    for (int r = 0; r < N; r++)
        CHECK(svc_ladder_range(lad, r, first[r], count[r], err, sizeof err) == SVC_OK, "range %d: %s", r, err);
    uint8_t *all = malloc(N * (size_t)FRAME_BYTES);
    for (int f = 0; all && f < FRAMES && rc == SVC_OK; f++) {
        const size_t at = (size_t)f * FRAME_BYTES;
        for (int r = 0; r < N; r++) {
            const int pairs = f >= first[r] && f < first[r] + count[r];
            /* Outside its range: the reference's bytes, which would score as a perfect frame if read. */
            memcpy(all + (size_t)r * FRAME_BYTES, (pairs ? bd : br) + at, FRAME_BYTES);
        }
        rc = svc_stream_push(lad, br + at, FRAME_BYTES, all, N * (size_t)FRAME_BYTES, err, sizeof err);
    }
    CHECK(rc == SVC_OK, "ladder pushes: %s", err);
    CHECK(svc_ladder_range(lad, 0, 0, 1, err, sizeof err) == SVC_E_INVALID_ARG, "no range after a push");
    svc_stream_finish(lad);
    const struct timespec tick = { 0, 1000000 };
    while ((rc = svc_stream_poll(lad)) == 0) nanosleep(&tick, NULL);
    CHECK(rc == 1, "ladder finishes");
    CHECK(svc_ladder_reference_loads(lad) == FRAMES, "one reference load per frame");
    for (int r = 0; r < N; r++) {
        svc_stream *one;
        rc = svc_stream_create(m, so, SVC_OPT_COUNT, &one, err, sizeof err);
        CHECK(rc == SVC_OK, "stream create: %s", err);
        if (rc != SVC_OK) break;
        for (int f = first[r]; f < first[r] + count[r] && rc == SVC_OK; f++)
            rc = svc_stream_push(one, br + (size_t)f * FRAME_BYTES, FRAME_BYTES, bd + (size_t)f * FRAME_BYTES,
                                 FRAME_BYTES, err, sizeof err);
        svc_stream_finish(one);
        while ((rc = svc_stream_poll(one)) == 0) nanosleep(&tick, NULL);
        results alone = { 0 }, got = { 0 };
        const svc_job *view = svc_ladder_rendition(lad, r);
        const int want = (count[r] + subsample - 1) / subsample;
        CHECK(rc == 1 && collect(svc_stream_job(one), &alone) == 0 && view && collect(view, &got) == 0 &&
                  got.n == want && same_results(&alone, &got),
              "subsample %d: rendition %d (frames %d to %d) equals its pair alone over them, bit for bit (%d frames, want %d)",
              subsample, r, first[r], first[r] + count[r] - 1, got.n, want);
        double pooled_alone = 0, pooled_got = 1;
        svc_job_pooled(svc_stream_job(one), 0, SVC_POOL_HARMONIC_MEAN, &pooled_alone);
        svc_job_pooled(view, 0, SVC_POOL_HARMONIC_MEAN, &pooled_got);
        CHECK(pooled_alone == pooled_got, "rendition %d: pooled over its own frames", r);
        results_free(&alone);
        results_free(&got);
        svc_stream_free(one);
    }
    svc_stream_free(lad);
    free(all);
    free(br);
    free(bd);
}

/* A frame's extractors run in parallel when fewer frames are in flight than threads: one frame
 * at 4 threads, and a stream whose frames arrive one at a time, give the values of 1 thread bit
 * for bit, with units run by workers other than the frame's loader. */
static void test_parallel(const svc_model *m) {
    const char *ref = path("fixtures/v01_testsrc2_420_8_x264.ref.yuv");
    const char *dis = path("fixtures/v01_testsrc2_420_8_x264.dis.yuv");
    results one = { 0 }, many = { 0 };
    CHECK(run_file_n(m, ref, dis, 1, SVC_CPU_AUTO, 1, &one) == 1, "1 frame, 1 thread: %s", err);
    CHECK(one.n == 1 && last_units_shared == 0, "1 thread: 1 frame, no unit shared (%lld)",
          (long long)last_units_shared);
    /* Left to the scheduler, the units spread or not: only the values are checked. */
    CHECK(run_file_n(m, ref, dis, 4, SVC_CPU_AUTO, 1, &many) == 1, "1 frame, 4 threads: %s", err);
    CHECK(same_results(&one, &many), "1 frame at 4 threads equals 1 thread");
    results_free(&many);
    many = (results){ 0 };
    /* With loaders handing off, every unit runs on a worker other than its frame's loader. */
    svc_loop_test_hand_off(1);
    CHECK(run_file_n(m, ref, dis, 4, SVC_CPU_AUTO, 1, &many) == 1, "1 frame, 4 threads, hand-off: %s", err);
    svc_loop_test_hand_off(0);
    const int64_t frame_units = last_units_shared;
    CHECK(same_results(&one, &many), "1 frame at 4 threads, every unit handed off, equals 1 thread");
    CHECK(frame_units >= 5, "1 frame at 4 threads: its %lld extractors ran on other threads than its loader",
          (long long)frame_units);
    results_free(&many);

    /* A stream fed one frame at a time: each push waits until the frames before it are final. */
    results all = { 0 }, got = { 0 };
    CHECK(run_file(m, ref, dis, 1, SVC_CPU_AUTO, &all) == 1, "v01 1 thread: %s", err);
    int32_t so[SVC_OPT_COUNT] = { [SVC_OPT_WIDTH] = W, [SVC_OPT_HEIGHT] = H, [SVC_OPT_PIX_FMT] = 420,
                                  [SVC_OPT_BITDEPTH] = 8, [SVC_OPT_THREADS] = 4,
                                  [SVC_OPT_FEATURES] = extra_features() };
    svc_stream *s;
    int rc = svc_stream_create(m, so, SVC_OPT_COUNT, &s, err, sizeof err);
    CHECK(rc == SVC_OK, "stream create: %s", err);
    if (rc != SVC_OK) return;
    svc_loop_test_hand_off(1);
    size_t lr, ld;
    uint8_t *br = (uint8_t *)slurp(ref, &lr), *bd = (uint8_t *)slurp(dis, &ld);
    const struct timespec tick = { 0, 1000000 };
    for (int f = 0; br && bd && f < 30 && rc == SVC_OK; f++) {
        rc = svc_stream_push(s, br + (size_t)f * FRAME_BYTES, FRAME_BYTES, bd + (size_t)f * FRAME_BYTES, FRAME_BYTES,
                             err, sizeof err);
        while (rc == SVC_OK && svc_stream_frames_ready(s) < f && svc_stream_poll(s) == 0) nanosleep(&tick, NULL);
    }
    CHECK(rc == SVC_OK, "pushes: %s", err);
    svc_stream_finish(s);
    while ((rc = svc_stream_poll(s)) == 0) nanosleep(&tick, NULL);
    svc_loop_test_hand_off(0);
    CHECK(rc == 1, "stream finishes");
    CHECK(collect(svc_stream_job(s), &got) == 0 && same_results(&all, &got),
          "stream fed one frame at a time equals 1 thread");
    const int64_t stream_shared = svc_loop_units_shared(svc_stream_job(s));
    CHECK(stream_shared == 30 * frame_units, "frames arriving one at a time: all %lld units on other threads (%lld)",
          (long long)(30 * frame_units), (long long)stream_shared);
    svc_stream_free(s);
    free(br);
    free(bd);
    results_free(&all);
    results_free(&got);
    results_free(&one);
}

/* Luma sample (x, y) of rendition r of frame f, from v01's reference and distorted lumas
 * (cropped at a per-frame offset): 0 the distorted, 1 the reference itself, 2 a blend, 3 the
 * distorted with a small pattern added; above 8 bits widened with low bits varying. */
static unsigned ladder_sample(const uint8_t *ref, const uint8_t *dis, int r, int f, int x, int y, int bpc) {
    const int ox = (f * 7) % 16, oy = (f * 5) % 16;
    const size_t at = (size_t)f * FRAME_BYTES + (size_t)(y + oy) * W + (size_t)(x + ox);
    const int R = ref[at], D = dis[at];
    int v = r == 0 ? D : r == 1 ? R : r == 2 ? (R + 3 * D + 2) / 4 : D + (x * 7 + y * 13 + f) % 9 - 4;
    v = v < 0 ? 0 : v > 255 ? 255 : v;
    return bpc == 8 ? (unsigned)v : (unsigned)v << (bpc - 8) | (unsigned)((x + y + r) & ((1 << (bpc - 8)) - 1));
}

/* One picture (all planes) of geometry w x h 4:2:0 at bpc into out (bytes long). */
static void ladder_picture(const uint8_t *ref, const uint8_t *dis, int r, int f, int w, int h, int bpc, uint8_t *out,
                           size_t bytes) {
    const int wide = bpc > 8;
    const size_t n = bytes >> wide;
    for (size_t k = 0; k < n; k++) {
        const unsigned mid = 128u << (bpc - 8);
        const size_t pix = (size_t)w * (size_t)h;
        const unsigned v = k < pix ? ladder_sample(ref, dis, r, f, (int)(k % (size_t)w), (int)(k / (size_t)w), bpc)
                                   : mid + (unsigned)((k + (size_t)r) % 5);
        if (wide) {
            out[2 * k] = (uint8_t)v;
            out[2 * k + 1] = (uint8_t)(v >> 8);
        } else {
            out[k] = (uint8_t)v;
        }
    }
}

/* A ladder of n renditions on backend cpu and geometry w x h at bpc, against each rendition scored
 * alone by a stream: bit-identical per frame; the reference is analysed once per frame per
 * extractor that shares its reference side (VIF and ADM), whatever n. */
static void ladder_case(const svc_model *m, int cpu, int w, int h, int bpc, int n, int frames, const uint8_t *ref,
                        const uint8_t *dis) {
    int32_t so[SVC_OPT_COUNT] = { [SVC_OPT_WIDTH] = w, [SVC_OPT_HEIGHT] = h, [SVC_OPT_PIX_FMT] = 420,
                                  [SVC_OPT_BITDEPTH] = bpc, [SVC_OPT_THREADS] = 2, [SVC_OPT_CPU] = cpu };
    char what[96];
    snprintf(what, sizeof what, "cpu %d, %dx%d %d-bit, %d renditions", cpu, w, h, bpc, n);
    svc_stream *lad;
    int rc = svc_ladder_create(m, n, so, SVC_OPT_COUNT, &lad, err, sizeof err);
    CHECK(rc == SVC_OK, "%s: ladder create: %s", what, err);
    if (rc != SVC_OK) return;
    const size_t fb = (size_t)svc_stream_frame_bytes(lad);
    uint8_t *pic = malloc(fb), *all = malloc(fb * (size_t)n);
    for (int f = 0; f < frames && rc == SVC_OK; f++) {
        ladder_picture(ref, dis, 1, f, w, h, bpc, pic, fb);
        for (int r = 0; r < n; r++) ladder_picture(ref, dis, r, f, w, h, bpc, all + (size_t)r * fb, fb);
        rc = svc_stream_push(lad, pic, fb, all, fb * (size_t)n, err, sizeof err);
    }
    CHECK(rc == SVC_OK, "%s: ladder pushes: %s", what, err);
    svc_stream_finish(lad);
    const struct timespec tick = { 0, 1000000 };
    while ((rc = svc_stream_poll(lad)) == 0) nanosleep(&tick, NULL);
    CHECK(rc == 1, "%s: ladder finishes", what);
    const svc_job *view = svc_ladder_rendition(lad, 0);
    int shared = 0; /* extractors sharing the reference side: VIF and ADM, where the backend has a ladder path */
    for (int e = 0; view && e < svc_job_extractor_count(view); e++) {
        const char *name = svc_job_extractor_name(view, e);
        shared += strcmp(name, "integer_adm") == 0 || strcmp(name, "integer_vif") == 0;
    }
    CHECK(shared == 2, "%s: VIF and ADM run (%d)", what, shared);
    CHECK(svc_ladder_reference_analyses(lad) == (int64_t)frames * shared,
          "%s: %lld reference analyses for %d frames, want one per frame per sharing extractor", what,
          (long long)svc_ladder_reference_analyses(lad), frames);
    CHECK(svc_ladder_reference_loads(lad) == frames, "%s: one reference load per frame", what);
    for (int r = 0; r < n; r++) {
        svc_stream *one;
        so[SVC_OPT_THREADS] = 1;
        rc = svc_stream_create(m, so, SVC_OPT_COUNT, &one, err, sizeof err);
        CHECK(rc == SVC_OK, "%s: stream create: %s", what, err);
        if (rc != SVC_OK) break;
        for (int f = 0; f < frames && rc == SVC_OK; f++) {
            ladder_picture(ref, dis, 1, f, w, h, bpc, pic, fb);
            ladder_picture(ref, dis, r, f, w, h, bpc, all, fb);
            rc = svc_stream_push(one, pic, fb, all, fb, err, sizeof err);
        }
        svc_stream_finish(one);
        while ((rc = svc_stream_poll(one)) == 0) nanosleep(&tick, NULL);
        results alone = { 0 }, got = { 0 };
        const svc_job *rv = svc_ladder_rendition(lad, r);
        CHECK(rc == 1 && collect(svc_stream_job(one), &alone) == 0 && rv && collect(rv, &got) == 0 &&
                  alone.n == frames && same_results(&alone, &got),
              "%s: rendition %d equals its pair scored alone, bit for bit", what, r);
        for (int e = 0; rv && e < svc_job_extractor_count(rv); e++)
            CHECK(strcmp(svc_job_extractor_backend(rv, e), svc_job_extractor_backend(svc_stream_job(one), e)) == 0,
                  "%s: same backend", what);
        results_free(&alone);
        results_free(&got);
        svc_stream_free(one);
    }
    svc_stream_free(lad);
    free(pic);
    free(all);
}

/* Ladders on every backend this CPU has, at even and odd sizes and at 8 and 10 bits. */
static void test_ladder_backends(const svc_model *m) {
    size_t lr, ld;
    uint8_t *ref = (uint8_t *)slurp(path("fixtures/v01_testsrc2_420_8_x264.ref.yuv"), &lr);
    uint8_t *dis = (uint8_t *)slurp(path("fixtures/v01_testsrc2_420_8_x264.dis.yuv"), &ld);
    CHECK(ref && dis && lr >= 6 * (size_t)FRAME_BYTES && ld >= 6 * (size_t)FRAME_BYTES, "fixture read");
    const int cpus[3] = { SVC_CPU_SCALAR, SVC_CPU_AVX2, SVC_CPU_AVX512 };
    for (int c = 0; ref && dis && c < 3; c++) {
        if (!svc_cpu_supported(cpus[c])) {
            printf("SKIP ladder on cpu %d: not supported by this CPU\n", cpus[c]);
            continue;
        }
        ladder_case(m, cpus[c], 304, 224, 8, 4, 4, ref, dis);
        ladder_case(m, cpus[c], 97, 61, 8, 4, 5, ref, dis);
        ladder_case(m, cpus[c], 97, 61, 8, 2, 5, ref, dis);
        ladder_case(m, cpus[c], 83, 47, 10, 3, 4, ref, dis);
        ladder_case(m, cpus[c], 33, 35, 12, 3, 3, ref, dis);
    }
    free(ref);
    free(dis);
}

/* vmaf of the first frames of v01 under a model. */
static int first_vmaf(const svc_model *m, double *out, int n) {
    int32_t opts[SVC_OPT_COUNT] = { [SVC_OPT_WIDTH] = W, [SVC_OPT_HEIGHT] = H, [SVC_OPT_PIX_FMT] = 420,
                                    [SVC_OPT_BITDEPTH] = 8, [SVC_OPT_FRAME_CNT] = n };
    svc_job *j;
    int rc = svc_job_start(m, path("fixtures/v01_testsrc2_420_8_x264.ref.yuv"),
                           path("fixtures/v01_testsrc2_420_8_x264.dis.yuv"), opts, SVC_OPT_COUNT, &j, err, sizeof err);
    if (rc) return rc;
    rc = wait_job(j);
    if (rc == 1 && svc_job_frame_values(j, 0, out, n) != n) rc = -1;
    svc_job_free(j);
    return rc;
}

/* The score transform is off by default (as in libvmaf) and applied with "enabled": true. */
static void test_transform(const char *json, const svc_model *plain) {
    char *text = replaced(json, "\"out_gte_in\": \"true\"", "\"out_gte_in\": \"true\", \"enabled\": true");
    svc_model *m = NULL;
    CHECK(text && load(text, strlen(text), &m) == SVC_OK, "model with enabled transform loads: %s", err);
    free(text);
    if (!m) return;
    double y[3], t[3];
    CHECK(first_vmaf(plain, y, 3) == 1 && first_vmaf(m, t, 3) == 1, "transform jobs run: %s", err);
    const double p0 = 1.70674692, p1 = 1.72643844, p2 = -0.00705305;
    for (int f = 0; f < 3; f++) {
        double want = 0.0;
        want += p0;
        want += p1 * y[f];
        want += p2 * y[f] * y[f];
        want = want < 0 ? 0 : want > 100 ? 100 : want;
        CHECK(y[f] > 0 && y[f] < 100 && t[f] == want, "frame %d: transformed %.17g, want %.17g", f, t[f], want);
    }
    svc_model_free(m);
}

/* Jobs on descriptors (ABI minor 4): the descriptor is read, never the path; only regular files;
 * the frame limit and the memory estimate are known before the job runs. */
static void test_descriptors(svc_model *m) {
    const char *ref = path("fixtures/v01_testsrc2_420_8_x264.ref.yuv");
    const char *dis = path("fixtures/v01_testsrc2_420_8_x264.dis.yuv");
    int32_t o[SVC_OPT_COUNT] = { [SVC_OPT_WIDTH] = W, [SVC_OPT_HEIGHT] = H, [SVC_OPT_PIX_FMT] = 420,
                                 [SVC_OPT_BITDEPTH] = 8, [SVC_OPT_REF_KIND] = SVC_INPUT_RAW,
                                 [SVC_OPT_DIS_KIND] = SVC_INPUT_RAW };
    svc_job *by_path = NULL, *by_fd = NULL;
    int rc = svc_job_start(m, ref, dis, o, SVC_OPT_COUNT, &by_path, err, sizeof err);
    CHECK(rc == SVC_OK, "path job: %s", err);
    const int rfd = open(ref, O_RDONLY | O_CLOEXEC), dfd = open(dis, O_RDONLY | O_CLOEXEC);
    rc = svc_job_open_fd(m, rfd, "ref", dfd, "dis", o, SVC_OPT_COUNT, &by_fd, err, sizeof err);
    CHECK(rc == SVC_OK, "descriptor job opens: %s", err);
    /* The library holds its own duplicates: the caller's descriptors may close at once. */
    close(rfd);
    close(dfd);
    while (rc == SVC_OK && svc_job_opened(by_fd) == 0) nanosleep(&(struct timespec){ .tv_nsec = 1000000 }, NULL);
    CHECK(rc != SVC_OK || svc_job_opened(by_fd) == 1, "validated on the library's thread");
    if (rc == SVC_OK) {
        const int64_t need = svc_job_memory(by_fd);
        CHECK(need > 2 * FRAME_BYTES && need < 64 << 20, "memory estimate %lld is plausible", (long long)need);
        CHECK(svc_job_run(by_fd, err, sizeof err) == SVC_OK, "run: %s", err);
        CHECK(svc_job_run(by_fd, err, sizeof err) == SVC_E_INVALID_ARG, "a second run is refused");
    }
    if (by_path && by_fd && wait_job(by_path) == 1 && wait_job(by_fd) == 1) {
        double a[30], b[30];
        const int na = svc_job_frame_values(by_path, 0, a, 30), nb = svc_job_frame_values(by_fd, 0, b, 30);
        CHECK(na == 30 && nb == 30 && memcmp(a, b, sizeof a) == 0, "descriptor and path jobs score alike");
    }
    svc_job_free(by_path);
    svc_job_free(by_fd);

    /* A FIFO is refused by its kind, at once (the library never waits for a writer). */
    char fifo[] = "/tmp/svc_scorer_test_fifo_XXXXXX";
    const int tmp = mkstemp(fifo);
    close(tmp);
    unlink(fifo);
    CHECK(mkfifo(fifo, 0600) == 0, "mkfifo");
    const int ffd = open(fifo, O_RDONLY | O_NONBLOCK | O_CLOEXEC), rfd2 = open(ref, O_RDONLY | O_CLOEXEC);
    rc = svc_job_start_fd(m, rfd2, "ref", ffd, "pipe", o, SVC_OPT_COUNT, &by_fd, err, sizeof err);
    CHECK(rc == SVC_E_IO && strstr(err, "pipe: is a FIFO") != NULL, "FIFO refused by kind: %d %s", rc, err);
    /* The same through open + opened: the failure and its message come from the job. */
    rc = svc_job_open_fd(m, rfd2, "ref", ffd, "pipe", o, SVC_OPT_COUNT, &by_fd, err, sizeof err);
    CHECK(rc == SVC_OK, "open returns at once: %s", err);
    if (rc == SVC_OK) {
        while (svc_job_opened(by_fd) == 0) nanosleep(&(struct timespec){ .tv_nsec = 1000000 }, NULL);
        CHECK(svc_job_opened(by_fd) == SVC_E_IO && svc_job_poll(by_fd) == SVC_E_IO, "the failure is the job's state");
        CHECK(svc_job_error(by_fd, err, sizeof err) == SVC_E_IO && strstr(err, "pipe: is a FIFO") != NULL,
              "the job's message: %s", err);
        CHECK(svc_job_run(by_fd, err, sizeof err) == SVC_E_INVALID_ARG, "a failed open does not run");
        svc_job_free(by_fd);
    }
    close(ffd);
    unlink(fifo);

    /* The frame limit refuses an input before anything per frame exists. */
    o[SVC_OPT_MAX_FRAMES] = 29;
    const int dfd2 = open(dis, O_RDONLY | O_CLOEXEC);
    rc = svc_job_start_fd(m, rfd2, "ref", dfd2, "dis", o, SVC_OPT_COUNT, &by_fd, err, sizeof err);
    CHECK(rc == SVC_E_GEOMETRY && strstr(err, "more than 29 frames") != NULL, "frame limit: %d %s", rc, err);
    o[SVC_OPT_MAX_FRAMES] = 30;
    rc = svc_job_open_fd(m, rfd2, "ref", dfd2, "dis", o, SVC_OPT_COUNT, &by_fd, err, sizeof err);
    CHECK(rc == SVC_OK, "30 frames pass a limit of 30: %s", err);
    if (rc == SVC_OK) svc_job_free(by_fd); /* opened (perhaps still validating), never run */
    close(rfd2);
    close(dfd2);
}

/* Streams `n` synthetic frames (the reference as the distorted picture) whose luma is a ramp of
 * 16 levels from 60, or from 180 from frame `cut` on, shifted by one sample per frame, with
 * SVC_OPT_SHOTS and `subsample`; the per-scored-frame cut measures into out (n_out of them). */
static int shot_stream(const svc_model *m, int n, int cut, int subsample, int threads, double *out, int n_out) {
    int32_t so[SVC_OPT_COUNT] = { [SVC_OPT_WIDTH] = W, [SVC_OPT_HEIGHT] = H, [SVC_OPT_PIX_FMT] = 420,
                                  [SVC_OPT_BITDEPTH] = 8, [SVC_OPT_THREADS] = threads,
                                  [SVC_OPT_SUBSAMPLE] = subsample, [SVC_OPT_SHOTS] = 1 };
    svc_stream *s;
    if (svc_stream_create(m, so, SVC_OPT_COUNT, &s, err, sizeof err) != SVC_OK) return -1;
    uint8_t *frame = malloc(FRAME_BYTES);
    int rc = frame ? SVC_OK : SVC_E_NOMEM;
    for (int f = 0; f < n && rc == SVC_OK; f++) {
        const int base = f < cut ? 60 : 180;
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++) frame[y * W + x] = (uint8_t)(base + (x + f) % 16);
        memset(frame + W * H, 128, FRAME_BYTES - W * H);
        rc = svc_stream_push(s, frame, FRAME_BYTES, frame, FRAME_BYTES, err, sizeof err);
    }
    svc_stream_finish(s);
    const struct timespec tick = { 0, 1000000 };
    while (rc == SVC_OK && (rc = svc_stream_poll(s)) == 0) nanosleep(&tick, NULL);
    const int got = rc == 1 ? svc_job_frame_cuts(svc_stream_job(s), 0, out, n_out) : -1;
    svc_stream_free(s);
    free(frame);
    return got;
}

/* The hard-cut measure of shots: 0 between frames of one ramp (the same histogram), 1 at the cut
 * (disjoint histograms), at any thread count; with subsample 3 the cut at input frame 20 lands on
 * scored frame 7 (input 21); a job without SVC_OPT_SHOTS has no measure. */
static void test_shots(const svc_model *m) {
    double one[40], two[40], sub[14];
    CHECK(shot_stream(m, 40, 20, 1, 1, one, 40) == 40, "40 cut measures: %s", err);
    CHECK(shot_stream(m, 40, 20, 1, 3, two, 40) == 40, "40 cut measures at 3 threads: %s", err);
    int zero_elsewhere = 1, same = 1;
    for (int f = 0; f < 40; f++) {
        if (f != 20 && one[f] != 0.0) zero_elsewhere = 0;
        if (one[f] != two[f]) same = 0;
    }
    CHECK(one[20] == 1.0, "the cut's measure is 1: %g", one[20]);
    CHECK(zero_elsewhere, "0 within each ramp");
    CHECK(same, "the same measures at 1 and 3 threads");
    CHECK(shot_stream(m, 40, 20, 3, 2, sub, 14) == 14, "14 scored frames with subsample 3: %s", err);
    int only_seven = 1;
    for (int k = 0; k < 14; k++)
        if ((k == 7) != (sub[k] == 1.0) || (k != 7 && sub[k] != 0.0)) only_seven = 0;
    CHECK(only_seven, "with subsample 3 the cut opens scored frame 7 alone");
    int32_t so[SVC_OPT_COUNT] = { [SVC_OPT_WIDTH] = W, [SVC_OPT_HEIGHT] = H, [SVC_OPT_PIX_FMT] = 420,
                                  [SVC_OPT_BITDEPTH] = 8 };
    svc_stream *s;
    if (svc_stream_create(m, so, SVC_OPT_COUNT, &s, err, sizeof err) == SVC_OK) {
        double cut;
        CHECK(svc_job_frame_cuts(svc_stream_job(s), 0, &cut, 1) == SVC_E_INVALID_ARG, "no measure without shots");
        svc_stream_free(s);
    }
}

int main(int argc, char **argv) {
    if (argc > 1) snprintf(data_dir, sizeof data_dir, "%s", argv[1]);
    int setup_passed = passed, setup_failed = failed;
    CHECK(strcmp(svc_version(), "0.1.0") == 0 && svc_abi_minor() == 16, "version and ABI minor");
    size_t len;
    char *json = slurp(path("models/vmaf_v0.6.1.json"), &len);
    CHECK(json != NULL, "read %s", path("models/vmaf_v0.6.1.json"));
    report_case("setup", setup_passed, setup_failed);
    if (json) {
        RUN_CASE("models", test_models(json, len));
        svc_model *m;
        if (load(json, len, &m) == SVC_OK) {
            RUN_CASE("jobs", test_jobs(m));
            RUN_CASE("descriptors", test_descriptors(m));
            RUN_CASE("ladder", test_ladder(m));
            RUN_CASE("ladder_ranges", test_ladder_ranges(m, 1));
            RUN_CASE("ladder_ranges_subsampled", test_ladder_ranges(m, 3));
            RUN_CASE("parallel", test_parallel(m));
            RUN_CASE("ladder_backends", test_ladder_backends(m));
            RUN_CASE("transform", test_transform(json, m));
            RUN_CASE("shots", test_shots(m));
            svc_model_free(m);
        }
    }
    free(json);
    return finish_checks();
}
