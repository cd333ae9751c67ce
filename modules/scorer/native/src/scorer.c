/*
 * The job driver behind svc_scorer.h: options, inputs, worker threads, motion, prediction,
 * results and pooling, for file jobs and pushed-frame streams alike.
 *
 * Frames are claimed in input order by `threads` workers; each worker owns its extractor
 * states and pictures and writes a frame's values into that frame's own row, so results do
 * not depend on the thread count. Motion needs consecutive reference lumas: a worker stores
 * its frame's luma in a ring slot, and whichever of frames i-1 and i is stored second computes
 * sad[i]; a slot is reused once the SAD that reads it is done. Frames are then finalised in
 * order (motion outputs, model prediction) by one worker at a time, which is what
 * svc_job_frames_done / svc_stream_frames_ready count.
 *
 * Choices where libvmaf's CLI is the model:
 *  - frame_skip_ref / frame_skip_dist drop leading frames; frame_cnt caps the frames read
 *    after the skips. If either input ends before the other (and before frame_cnt) the job
 *    fails with SVC_E_GEOMETRY, as the CLI fails on inputs of different lengths.
 *  - subsample N scores frames 0, N, 2N, ... of those read; motion still compares
 *    consecutive input frames. Results and pooling cover the scored frames only.
 *  - Streams: frame_cnt caps the pushed pairs that are scored (later pushes are accepted and
 *    ignored); frame skips are rejected (a stream has nothing to skip to).
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

#define MAX_THREADS 256
#define N_REGISTERED 5
/* Extractor instances of a job: each registered extractor, plus one per other set of
 * option values that the model's features ask for. */
#define MAX_EXTRACTORS (N_REGISTERED + SVC_MODEL_MAX_FEATURES)
#define ERR_LEN 512

/* Per-frame extractors in the order their outputs become metrics, with the option flag that
 * asks for each (0: run only when the model needs it). */
static const struct {
    const svc_extractor *ex;
    int flag;
} extractors[N_REGISTERED] = {
    { &svc_extractor_integer_vif, 0 },
    { &svc_extractor_integer_adm, 0 },
    { &svc_extractor_psnr, SVC_FEAT_PSNR },
    { &svc_extractor_float_ssim, SVC_FEAT_FLOAT_SSIM },
    { &svc_extractor_float_ms_ssim, SVC_FEAT_FLOAT_MS_SSIM },
};

/* Motion outputs, named as libvmaf reports them by default (derivation: motion.c). */
enum { MOTION2, MOTION3, MOTION_SAD, N_MOTION };
static const char *const motion_names[N_MOTION] = { "integer_motion2", "integer_motion3",
                                                    "VMAF_integer_feature_motion_sad_score" };

int svc_feature_source(const char *name, const svc_extractor **ex, int *output) {
    for (int e = 0; e < N_REGISTERED; e++)
        for (int k = 0; k < extractors[e].ex->n_outputs; k++)
            if (strcmp(extractors[e].ex->output_names[k], name) == 0) {
                *ex = extractors[e].ex;
                *output = k;
                return 1;
            }
    for (int k = 0; k < N_MOTION; k++)
        if (strcmp(motion_names[k], name) == 0) {
            *ex = NULL;
            *output = k;
            return 2;
        }
    return 0;
}

typedef struct {
    double *vals;  /* metric values; scored frames only */
    uint8_t *raw;  /* stream: pushed ref then dis bytes until a worker decodes them */
    double sad;
    unsigned char stored, sad_done, done;
} frame_rec;

struct svc_job {
    const svc_model *model;
    int geo[4]; /* width, height, pix_fmt, bitdepth */
    int cpu, n_threads, subsample;
    svc_video *ref, *dis; /* file jobs */
    int64_t skip_ref, skip_dis;
    int64_t frame_bytes;  /* streams: bytes of one picture */
    int frame_cap;        /* streams: frames scored at most (0 = no cap) */

    int n_ex, ex_col[MAX_EXTRACTORS];
    const svc_extractor *ex[MAX_EXTRACTORS];
    double ex_opts[MAX_EXTRACTORS][SVC_MODEL_MAX_OPTIONS]; /* option values per instance */
    int ex_custom[MAX_EXTRACTORS]; /* some option differs from its default */
    int motion, motion_col;
    const char *backend[MAX_EXTRACTORS + 1]; /* per extractor, then motion; set by a worker */
    int n_metrics, n_outputs; /* metrics [0, n_outputs) are the model's outputs */
    const char **metric_names;
    char *names_buf; /* the metric names this job composed (outputs, optioned features) */
    int model_col[SVC_MODEL_MAX_FEATURES];

    pthread_mutex_t mu;
    pthread_cond_t cv;
    frame_rec *frames;
    int n_frames, cap, finished; /* frames known so far; no more will come */
    int next_claim, final_next, finalising, active;
    uint16_t *ring;
    size_t luma_len;
    int ring_len;
    pthread_t *threads;
    int n_started;
    int err_code;
    char err_msg[ERR_LEN];

    atomic_int state;     /* 0 running, 1 done, < 0 failed */
    atomic_int cancel;
    atomic_int done_out;  /* scored frames finalised */
};

struct svc_stream {
    svc_job job;
};

typedef struct {
    void *state[MAX_EXTRACTORS];
    svc_motion *motion;
    svc_picture ref, dis;
} worker_ctx;

static int64_t opt(const int32_t *opts, int n, int i) { return i < n ? opts[i] : 0; }

static int is_scored(const svc_job *j, int i) { return i % j->subsample == 0; }

static uint16_t *ring_slot(const svc_job *j, int i) {
    return j->ring + (size_t)(i % j->ring_len) * j->luma_len;
}

/* Records the first failure; workers stop claiming frames. Called with the lock held. */
static void fail_locked(svc_job *j, int code, const char *msg) {
    if (!j->err_code) {
        j->err_code = code;
        snprintf(j->err_msg, sizeof j->err_msg, "%s", msg);
    }
    pthread_cond_broadcast(&j->cv);
}

static int stopped(svc_job *j) { return j->err_code || atomic_load(&j->cancel); }

static void worker_free(svc_job *j, worker_ctx *w) {
    for (int e = 0; e < j->n_ex; e++)
        if (w->state[e]) j->ex[e]->destroy(w->state[e]);
    if (w->motion) svc_motion_destroy(w->motion);
    svc_picture_free(&w->ref);
    svc_picture_free(&w->dis);
}

static int worker_init(svc_job *j, worker_ctx *w, char *err) {
    const int wd = j->geo[0], ht = j->geo[1], fmt = j->geo[2], bpc = j->geo[3];
    memset(w, 0, sizeof *w);
    if (svc_picture_alloc(&w->ref, wd, ht, fmt, bpc) || svc_picture_alloc(&w->dis, wd, ht, fmt, bpc)) {
        snprintf(err, ERR_LEN, "out of memory for %dx%d pictures", wd, ht);
        return SVC_E_NOMEM;
    }
    for (int e = 0; e < j->n_ex; e++) {
        w->state[e] = j->ex_custom[e] ? j->ex[e]->create_with(wd, ht, fmt, bpc, j->cpu, j->ex_opts[e])
                                      : j->ex[e]->create(wd, ht, fmt, bpc, j->cpu);
        if (!w->state[e]) {
            snprintf(err, ERR_LEN, "extractor %s cannot run on %dx%d %d %d-bit input (unsupported size or out of memory)",
                     j->ex[e]->name, wd, ht, fmt, bpc);
            return SVC_E_GEOMETRY;
        }
    }
    if (j->motion && !(w->motion = svc_motion_create(wd, ht, bpc, j->cpu))) {
        snprintf(err, ERR_LEN, "motion cannot run on %dx%d %d-bit input (unsupported size or out of memory)", wd, ht, bpc);
        return SVC_E_GEOMETRY;
    }
    pthread_mutex_lock(&j->mu);
    for (int e = 0; e < j->n_ex; e++) j->backend[e] = j->ex[e]->backend(w->state[e]);
    if (j->motion) {
        j->backend[j->n_ex] = svc_motion_backend(w->motion);
        if (!j->ring) {
            j->luma_len = svc_motion_blur_len(w->motion);
            j->ring = malloc(sizeof *j->ring * j->luma_len * (size_t)j->ring_len);
        }
    }
    const int ok = !j->motion || j->ring;
    pthread_mutex_unlock(&j->mu);
    if (!ok) {
        snprintf(err, ERR_LEN, "out of memory for the motion frame ring");
        return SVC_E_NOMEM;
    }
    return SVC_OK;
}

/* Motion outputs and the prediction of scored frame f, whose inputs are all final. */
static void finalise_frame(svc_job *j, int f, double *v, double sad, double sad_next, int last) {
    if (j->motion) {
        v[j->motion_col + MOTION_SAD] = sad;
        v[j->motion_col + MOTION2] = f == 0 || last ? sad : (sad < sad_next ? sad : sad_next);
        v[j->motion_col + MOTION3] = f == 0 ? (last ? 0.0 : sad_next) : v[j->motion_col + MOTION2];
    }
    double features[SVC_MODEL_MAX_FEATURES];
    for (int k = 0; k < svc_model_feature_count(j->model); k++) features[k] = v[j->model_col[k]];
    svc_model_predict(j->model, features, v);
}

/* Finalises frames in order while their inputs are complete. One worker at a time does it;
 * the others leave, and the one in charge rechecks under the lock before it stops. */
static void advance(svc_job *j) {
    pthread_mutex_lock(&j->mu);
    if (j->finalising) {
        pthread_mutex_unlock(&j->mu);
        return;
    }
    j->finalising = 1;
    while (!stopped(j) && j->final_next < j->n_frames) {
        const int f = j->final_next;
        const frame_rec *fr = &j->frames[f];
        const int has_next = f + 1 < j->n_frames;
        if (!fr->done || (j->motion && (!fr->sad_done || (has_next ? !j->frames[f + 1].sad_done : !j->finished))))
            break;
        if (is_scored(j, f)) {
            /* Copied under the lock: a push may move the frame array meanwhile. */
            double *vals = fr->vals;
            const double sad = fr->sad, sad_next = has_next ? j->frames[f + 1].sad : 0.0;
            pthread_mutex_unlock(&j->mu);
            finalise_frame(j, f, vals, sad, sad_next, !has_next);
            pthread_mutex_lock(&j->mu);
        }
        j->final_next++;
        atomic_store(&j->done_out, (j->final_next + j->subsample - 1) / j->subsample);
    }
    j->finalising = 0;
    pthread_mutex_unlock(&j->mu);
}

/* Loads frame i into the worker's pictures: the reference always (motion needs it), the
 * distorted when the frame is scored. */
static int load_frame(svc_job *j, worker_ctx *w, int i, const uint8_t *raw, char *err) {
    const int scored = is_scored(j, i);
    if (raw) {
        if (svc_picture_from_raw(&w->ref, raw, (size_t)j->frame_bytes) ||
            (scored && svc_picture_from_raw(&w->dis, raw + j->frame_bytes, (size_t)j->frame_bytes))) {
            snprintf(err, ERR_LEN, "frame %d: cannot decode the pushed frame", i);
            return SVC_E_INTERNAL;
        }
        return SVC_OK;
    }
    int rc = svc_video_read(j->ref, j->skip_ref + i, &w->ref, err, ERR_LEN);
    if (!rc && scored) rc = svc_video_read(j->dis, j->skip_dis + i, &w->dis, err, ERR_LEN);
    return rc;
}

/* Stores frame i's luma and computes the SADs that became computable. */
static int motion_step(svc_job *j, worker_ctx *w, int i, char *err) {
    if (svc_motion_blur(w->motion, &w->ref, ring_slot(j, i)) != SVC_OK) {
        snprintf(err, ERR_LEN, "frame %d: motion failed", i);
        return SVC_E_INTERNAL;
    }
    pthread_mutex_lock(&j->mu);
    j->frames[i].stored = 1;
    if (i == 0) j->frames[0].sad_done = 1; /* sad[0] = 0 */
    /* The second of two neighbours to be stored computes their SAD. */
    const int do_prev = i > 0 && j->frames[i - 1].stored;
    const int do_next = i + 1 < j->n_frames && j->frames[i + 1].stored;
    pthread_mutex_unlock(&j->mu);
    const double sad_prev = do_prev ? svc_motion_sad(w->motion, ring_slot(j, i - 1), ring_slot(j, i)) : 0.0;
    const double sad_next = do_next ? svc_motion_sad(w->motion, ring_slot(j, i), ring_slot(j, i + 1)) : 0.0;
    pthread_mutex_lock(&j->mu);
    if (do_prev) { j->frames[i].sad = sad_prev; j->frames[i].sad_done = 1; }
    if (do_next) { j->frames[i + 1].sad = sad_next; j->frames[i + 1].sad_done = 1; }
    pthread_cond_broadcast(&j->cv); /* ring slots may have been freed */
    pthread_mutex_unlock(&j->mu);
    return SVC_OK;
}

static int compute_frame(svc_job *j, worker_ctx *w, int i, double *v, char *err) {
    for (int e = 0; e < j->n_ex; e++) {
        if (atomic_load(&j->cancel)) return SVC_E_CANCELLED;
        const int rc = j->ex[e]->compute(w->state[e], &w->ref, &w->dis, v + j->ex_col[e]);
        if (rc != SVC_OK) {
            snprintf(err, ERR_LEN, "frame %d: extractor %s failed (status %d)", i, j->ex[e]->name, rc);
            return rc;
        }
    }
    return SVC_OK;
}

/* Frame i may use its ring slot once both SADs that read the slot's previous frame k are done. */
static int slot_free(const svc_job *j, int i) {
    const int k = i - j->ring_len;
    return !j->motion || k < 0 || (j->frames[k].sad_done && j->frames[k + 1].sad_done);
}

static void *worker(void *arg) {
    svc_job *j = arg;
    worker_ctx w;
    char err[ERR_LEN] = "";
    int rc = worker_init(j, &w, err);
    pthread_mutex_lock(&j->mu);
    if (rc) fail_locked(j, rc, err);
    for (;;) {
        while (!stopped(j) && j->next_claim >= j->n_frames && !j->finished) pthread_cond_wait(&j->cv, &j->mu);
        if (stopped(j) || j->next_claim >= j->n_frames) break;
        const int i = j->next_claim++;
        while (!stopped(j) && !slot_free(j, i)) pthread_cond_wait(&j->cv, &j->mu);
        if (stopped(j)) break;
        uint8_t *raw = j->frames[i].raw;
        double *vals = j->frames[i].vals;
        j->frames[i].raw = NULL;
        pthread_mutex_unlock(&j->mu);

        rc = load_frame(j, &w, i, raw, err);
        free(raw);
        if (!rc && j->motion) rc = motion_step(j, &w, i, err);
        if (!rc && is_scored(j, i)) rc = compute_frame(j, &w, i, vals, err);

        pthread_mutex_lock(&j->mu);
        if (rc == SVC_E_CANCELLED) break;
        if (rc) {
            fail_locked(j, rc, err);
            break;
        }
        j->frames[i].done = 1;
        pthread_mutex_unlock(&j->mu);
        advance(j);
        pthread_mutex_lock(&j->mu);
    }
    pthread_mutex_unlock(&j->mu);
    advance(j); /* the input may have ended: the last frame can be final now */
    worker_free(j, &w);
    pthread_mutex_lock(&j->mu);
    if (--j->active == 0) {
        /* Complete unless a failure or a cancel stopped the work first. */
        const int complete = j->finished && j->final_next == j->n_frames;
        atomic_store(&j->state, j->err_code ? j->err_code : complete ? 1 : SVC_E_CANCELLED);
    }
    pthread_mutex_unlock(&j->mu);
    return NULL;
}

/* ------------------------------------------------------------ job setup ---- */

/* How a model feature is computed: extractor (NULL: motion), output, option values. */
typedef struct {
    const svc_extractor *ex;
    int output;
    int custom; /* an option differs from its default: an instance of its own */
    double opts[SVC_MODEL_MAX_OPTIONS];
} feature_use;

/* Resolves model feature k through the extractor table, applying the options its file sets;
 * a feature svc does not compute, or an option its extractor does not take, is refused by name. */
static int resolve_feature(const svc_model *m, int k, feature_use *use, char *err, size_t err_len) {
    const char *name = svc_model_feature_name(m, k);
    memset(use, 0, sizeof *use);
    const int kind = svc_feature_source(name, &use->ex, &use->output);
    if (!kind) {
        svc_set_err(err, err_len, "model: feature %s is not computed by svc, which has the integer VIF, ADM and "
                    "motion extractors (and psnr, float_ssim, float_ms_ssim on request)", name);
        return SVC_E_MODEL;
    }
    const int n_known = use->ex ? use->ex->n_options : 0;
    for (int o = 0; o < n_known; o++) use->opts[o] = use->ex->options[o].def;
    for (int o = 0; o < svc_model_feature_option_count(m, k); o++) {
        double value;
        const char *key = svc_model_feature_option(m, k, o, &value);
        int at = 0;
        while (at < n_known && strcmp(use->ex->options[at].name, key) != 0) at++;
        if (at == n_known) {
            svc_set_err(err, err_len, "model: feature option '%s' of %s is not supported%s%s", key, name,
                        use->ex && n_known ? " (it takes " : "", use->ex && n_known ? use->ex->options[0].name : "");
            if (use->ex && n_known) {
                const size_t len = strlen(err);
                for (int q = 1; q < n_known && len + 2 < err_len; q++)
                    snprintf(err + strlen(err), err_len - strlen(err), ", %s", use->ex->options[q].name);
                snprintf(err + strlen(err), err_len - strlen(err), ")");
            }
            return SVC_E_MODEL;
        }
        const svc_extractor_option *opt = &use->ex->options[at];
        if (!(value >= opt->min && value <= opt->max)) {
            svc_set_err(err, err_len, "model: feature option '%s' of %s is %g, outside %g to %g", key, name, value,
                        opt->min, opt->max);
            return SVC_E_MODEL;
        }
        use->opts[at] = value;
        use->custom |= value != opt->def;
    }
    return SVC_OK;
}

int svc_model_check(const svc_model *m, char *err, size_t err_len) {
    if (!m) {
        svc_set_err(err, err_len, "svc_model_check: NULL model");
        return SVC_E_INVALID_ARG;
    }
    feature_use use;
    for (int k = 0; k < svc_model_feature_count(m); k++) {
        const int rc = resolve_feature(m, k, &use, err, err_len);
        if (rc) return rc;
    }
    svc_set_err(err, err_len, "%s", "");
    return SVC_OK;
}

/* The job's instance of ex with these option values (NULL: defaults); -1 if none. */
static int instance_of(const svc_job *j, const svc_extractor *ex, const double *opts) {
    for (int e = 0; e < j->n_ex; e++) {
        if (j->ex[e] != ex) continue;
        int same = 1;
        for (int o = 0; o < ex->n_options; o++)
            same &= j->ex_opts[e][o] == (opts ? opts[o] : ex->options[o].def);
        if (same) return e;
    }
    return -1;
}

static void add_instance(svc_job *j, const svc_extractor *ex, const double *opts) {
    if (instance_of(j, ex, opts) >= 0) return;
    const int e = j->n_ex++;
    j->ex[e] = ex;
    for (int o = 0; o < ex->n_options; o++) {
        j->ex_opts[e][o] = opts ? opts[o] : ex->options[o].def;
        j->ex_custom[e] |= j->ex_opts[e][o] != ex->options[o].def;
    }
}

/* Metric names: the model's outputs, then each instance's outputs with its non-default
 * options appended as the reference does ("integer_adm2_egl_1"), then motion's. */
static int name_metrics(svc_job *j) {
    char name[256];
    size_t total = 0;
    for (int pass = 0; pass < 2; pass++) {
        char *at = j->names_buf;
        for (int k = 0; k < j->n_metrics; k++) {
            const int is_output = k < j->n_outputs;
            int e = -1;
            for (int q = 0; q < j->n_ex; q++)
                if (k >= j->ex_col[q] && k < j->ex_col[q] + j->ex[q]->n_outputs) e = q;
            if (!is_output && (e < 0 || !j->ex_custom[e])) {
                if (pass) j->metric_names[k] = e >= 0 ? j->ex[e]->output_names[k - j->ex_col[e]]
                                                      : motion_names[k - j->motion_col];
                continue;
            }
            if (is_output) svc_model_output_name(j->model, k, name, sizeof name);
            else {
                int len = snprintf(name, sizeof name, "%s", j->ex[e]->output_names[k - j->ex_col[e]]);
                for (int o = 0; o < j->ex[e]->n_options; o++)
                    if (j->ex_opts[e][o] != j->ex[e]->options[o].def && len < (int)sizeof name)
                        len += snprintf(name + len, sizeof name - (size_t)len, "_%s_%g", j->ex[e]->options[o].alias,
                                        j->ex_opts[e][o]);
            }
            const size_t n = strlen(name) + 1;
            if (pass) {
                memcpy(at, name, n);
                j->metric_names[k] = at;
                at += n;
            } else {
                total += n;
            }
        }
        if (!pass && !(j->names_buf = malloc(total ? total : 1))) return SVC_E_NOMEM;
    }
    return SVC_OK;
}

static int job_options(svc_job *j, const int32_t *opts, int n_opts, char *err, size_t err_len) {
    if (n_opts < 0 || (n_opts > 0 && !opts)) {
        svc_set_err(err, err_len, "options: NULL array or negative length");
        return SVC_E_INVALID_ARG;
    }
    for (int i = SVC_OPT_COUNT; i < n_opts; i++)
        if (opts[i]) {
            svc_set_err(err, err_len, "option %d is unknown to this library (ABI %d.%d)", i, SVC_ABI_MAJOR, svc_abi_minor());
            return SVC_E_INVALID_ARG;
        }
    const int64_t threads = opt(opts, n_opts, SVC_OPT_THREADS), cpu = opt(opts, n_opts, SVC_OPT_CPU);
    const int64_t feats = opt(opts, n_opts, SVC_OPT_FEATURES), sub = opt(opts, n_opts, SVC_OPT_SUBSAMPLE);
    const int64_t cnt = opt(opts, n_opts, SVC_OPT_FRAME_CNT);
    j->skip_ref = opt(opts, n_opts, SVC_OPT_FRAME_SKIP_REF);
    j->skip_dis = opt(opts, n_opts, SVC_OPT_FRAME_SKIP_DIST);
    const char *bad = threads < 0 || threads > MAX_THREADS ? "threads must be 0..256"
                      : cpu < SVC_CPU_AUTO || cpu > SVC_CPU_AVX2 ? "cpu must be 0 (auto), 1 (scalar) or 2 (avx2)"
                      : feats & ~(int64_t)(SVC_FEAT_PSNR | SVC_FEAT_FLOAT_SSIM | SVC_FEAT_FLOAT_MS_SSIM) ? "unknown feature flag"
                      : sub < 0 ? "subsample must not be negative"
                      : cnt < 0 ? "frame_cnt must not be negative"
                      : j->skip_ref < 0 || j->skip_dis < 0 ? "frame skips must not be negative"
                      : NULL;
    if (bad) {
        svc_set_err(err, err_len, "options: %s", bad);
        return SVC_E_INVALID_ARG;
    }
    if ((j->cpu = svc_cpu_resolve((int)cpu)) < 0) {
        svc_set_err(err, err_len, "options: the avx2 backend was requested but this CPU lacks AVX2");
        return SVC_E_INVALID_ARG;
    }
    j->n_threads = threads ? (int)threads : 1;
    j->subsample = sub > 1 ? (int)sub : 1;
    j->frame_cap = (int)cnt;

    /* Extractors: those asked for (default options), then those the model reads. */
    int need[N_REGISTERED] = { 0 };
    for (int e = 0; e < N_REGISTERED; e++) need[e] = (feats & extractors[e].flag) != 0;
    const int n_model = svc_model_feature_count(j->model);
    feature_use use[SVC_MODEL_MAX_FEATURES];
    for (int k = 0; k < n_model; k++) {
        int rc = resolve_feature(j->model, k, &use[k], err, err_len);
        if (rc) return rc;
        if (!use[k].ex) j->motion = 1;
        for (int e = 0; e < N_REGISTERED; e++) need[e] |= !use[k].custom && extractors[e].ex == use[k].ex;
    }
    for (int e = 0; e < N_REGISTERED; e++)
        if (need[e]) add_instance(j, extractors[e].ex, NULL);
    for (int k = 0; k < n_model; k++)
        if (use[k].custom) add_instance(j, use[k].ex, use[k].opts);
    j->n_outputs = svc_model_output_count(j->model);
    j->n_metrics = j->n_outputs;
    for (int e = 0; e < j->n_ex; e++) {
        j->ex_col[e] = j->n_metrics;
        j->n_metrics += j->ex[e]->n_outputs;
    }
    j->motion_col = j->n_metrics;
    if (j->motion) j->n_metrics += N_MOTION;
    if (!(j->metric_names = malloc(sizeof *j->metric_names * (size_t)j->n_metrics))) return SVC_E_NOMEM;
    if (name_metrics(j)) return SVC_E_NOMEM;
    for (int k = 0; k < n_model; k++) {
        const int e = use[k].ex ? instance_of(j, use[k].ex, use[k].opts) : -1;
        j->model_col[k] = e >= 0 ? j->ex_col[e] + use[k].output : j->motion_col + use[k].output;
    }
    j->ring_len = j->n_threads + 2;
    return SVC_OK;
}

/* j is zeroed memory. */
static void job_init(svc_job *j, const svc_model *m) {
    pthread_mutex_init(&j->mu, NULL);
    pthread_cond_init(&j->cv, NULL);
    j->model = svc_model_retain(m);
}

/* Room for frames up to n (the caller holds the lock when workers run). */
static int reserve_frames(svc_job *j, int n) {
    if (n <= j->cap) return SVC_OK;
    int cap = j->cap ? j->cap : 64;
    while (cap < n) cap *= 2;
    frame_rec *fr = realloc(j->frames, sizeof *fr * (size_t)cap);
    if (!fr) return SVC_E_NOMEM;
    memset(fr + j->cap, 0, sizeof *fr * (size_t)(cap - j->cap));
    j->frames = fr;
    j->cap = cap;
    return SVC_OK;
}

/* A new frame record at index n_frames (not yet visible to workers). */
static int add_frame(svc_job *j, uint8_t *raw) {
    const int i = j->n_frames;
    if (reserve_frames(j, i + 1)) return SVC_E_NOMEM;
    if (is_scored(j, i) && !(j->frames[i].vals = calloc((size_t)j->n_metrics, sizeof(double)))) return SVC_E_NOMEM;
    j->frames[i].raw = raw;
    return SVC_OK;
}

static int start_threads(svc_job *j, char *err, size_t err_len) {
    if (!(j->threads = calloc((size_t)j->n_threads, sizeof *j->threads))) return SVC_E_NOMEM;
    pthread_mutex_lock(&j->mu);
    for (int t = 0; t < j->n_threads; t++) {
        if (pthread_create(&j->threads[t], NULL, worker, j) != 0) break;
        j->n_started++;
        j->active++;
    }
    pthread_mutex_unlock(&j->mu);
    /* Fewer threads than asked still give the same results; none is an error. */
    if (j->n_started == 0) {
        svc_set_err(err, err_len, "cannot start worker threads");
        return SVC_E_INTERNAL;
    }
    return SVC_OK;
}

static void job_destroy(svc_job *j) {
    svc_job_cancel(j);
    for (int t = 0; t < j->n_started; t++) pthread_join(j->threads[t], NULL);
    free(j->threads);
    for (int i = 0; i < j->n_frames; i++) {
        free(j->frames[i].vals);
        free(j->frames[i].raw);
    }
    free(j->frames);
    free(j->ring);
    free(j->metric_names);
    free(j->names_buf);
    if (j->ref) svc_video_close(j->ref);
    if (j->dis) svc_video_close(j->dis);
    svc_model_free((svc_model *)j->model);
    pthread_cond_destroy(&j->cv);
    pthread_mutex_destroy(&j->mu);
}

static int fail_start(svc_job *j, int rc, char *err, size_t err_len) {
    if (rc == SVC_E_NOMEM) svc_set_err(err, err_len, "out of memory starting the job");
    job_destroy(j);
    free(j);
    return rc;
}

/* Frames to read after the skips, libvmaf-CLI style (see the top of this file). */
static int frame_count(svc_job *j, const char *ref_path, const char *dis_path, char *err, size_t err_len) {
    const int64_t nr = svc_video_frame_count(j->ref), nd = svc_video_frame_count(j->dis);
    const int64_t ar = nr > j->skip_ref ? nr - j->skip_ref : 0, ad = nd > j->skip_dis ? nd - j->skip_dis : 0;
    int64_t n = ar < ad ? ar : ad;
    if (j->frame_cap && n >= j->frame_cap) n = j->frame_cap;
    else if (ar != ad) {
        svc_set_err(err, err_len, "%s has %lld frames after skipping %lld, %s has %lld after skipping %lld: lengths differ",
                    ref_path, (long long)ar, (long long)j->skip_ref, dis_path, (long long)ad, (long long)j->skip_dis);
        return -1;
    }
    if (n == 0 || n > INT32_MAX) {
        svc_set_err(err, err_len, n ? "too many frames" : "no frames to score after the skips");
        return -1;
    }
    return (int)n;
}

int svc_job_start(const svc_model *m, const char *ref_path, const char *dis_path, const int32_t *opts,
                  int n_opts, svc_job **out, char *err, size_t err_len) {
    if (!m || !ref_path || !dis_path || !out) {
        svc_set_err(err, err_len, "svc_job_start: NULL model, path or output");
        return SVC_E_INVALID_ARG;
    }
    *out = NULL;
    svc_job *j = calloc(1, sizeof *j);
    if (!j) return SVC_E_NOMEM;
    job_init(j, m);
    int rc = job_options(j, opts, n_opts, err, err_len);
    if (rc) return fail_start(j, rc, err, err_len);
    const int kind = (int)opt(opts, n_opts, SVC_OPT_INPUT_KIND);
    int g[4];
    for (int k = 0; k < 4; k++) g[k] = (int)opt(opts, n_opts, SVC_OPT_WIDTH + k);
    if ((rc = svc_video_open(ref_path, kind, g[0], g[1], g[2], g[3], &j->ref, err, err_len)) ||
        (rc = svc_video_open(dis_path, kind, g[0], g[1], g[2], g[3], &j->dis, err, err_len)))
        return fail_start(j, rc, err, err_len);
    int gd[4];
    svc_video_geometry(j->ref, &j->geo[0], &j->geo[1], &j->geo[2], &j->geo[3]);
    svc_video_geometry(j->dis, &gd[0], &gd[1], &gd[2], &gd[3]);
    if (memcmp(j->geo, gd, sizeof gd) != 0) {
        svc_set_err(err, err_len, "geometry differs: %s is %dx%d %d %d-bit, %s is %dx%d %d %d-bit", ref_path, j->geo[0],
                    j->geo[1], j->geo[2], j->geo[3], dis_path, gd[0], gd[1], gd[2], gd[3]);
        return fail_start(j, SVC_E_GEOMETRY, err, err_len);
    }
    const int n = frame_count(j, ref_path, dis_path, err, err_len);
    if (n < 0) return fail_start(j, SVC_E_GEOMETRY, err, err_len);
    for (int i = 0; i < n; i++, j->n_frames++)
        if (add_frame(j, NULL)) return fail_start(j, SVC_E_NOMEM, err, err_len);
    j->finished = 1;
    if (j->n_threads > n) j->n_threads = n;
    if ((rc = start_threads(j, err, err_len))) return fail_start(j, rc, err, err_len);
    *out = j;
    return SVC_OK;
}

/* ------------------------------------------------------------- queries ---- */

const char *svc_version(void) { return "0.1.0"; }
int svc_abi_minor(void) { return 2; } /* 1: svc_job_frame_values_from; 2: svc_model_check, svc_model_bundle */
int svc_abi_patch(void) { return 0; }

int svc_job_poll(svc_job *j) { return j ? atomic_load(&j->state) : SVC_E_INVALID_ARG; }

int svc_job_frames_done(const svc_job *j) { return j ? atomic_load(&((svc_job *)j)->done_out) : 0; }

void svc_job_cancel(svc_job *j) {
    if (!j) return;
    atomic_store(&j->cancel, 1);
    pthread_mutex_lock(&j->mu);
    pthread_cond_broadcast(&j->cv);
    pthread_mutex_unlock(&j->mu);
}

int svc_job_error(const svc_job *j, char *err, size_t err_len) {
    if (!j) return SVC_E_INVALID_ARG;
    const int state = atomic_load(&((svc_job *)j)->state);
    if (state >= 0) {
        svc_set_err(err, err_len, "%s", "");
        return SVC_OK;
    }
    /* The message was written before the state was published. */
    svc_set_err(err, err_len, "%s", state == SVC_E_CANCELLED ? "cancelled" : j->err_msg);
    return state;
}

int svc_job_geometry(const svc_job *j, int32_t *out4) {
    if (!j || !out4) return SVC_E_INVALID_ARG;
    for (int k = 0; k < 4; k++) out4[k] = j->geo[k];
    return SVC_OK;
}

int svc_job_frame_count(const svc_job *j) { return svc_job_frames_done(j); }

int svc_job_metric_count(const svc_job *j) { return j ? j->n_metrics : 0; }

const char *svc_job_metric_name(const svc_job *j, int metric) {
    return j && metric >= 0 && metric < j->n_metrics ? j->metric_names[metric] : NULL;
}

int svc_job_extractor_count(const svc_job *j) { return j ? j->n_ex + j->motion : 0; }

const char *svc_job_extractor_name(const svc_job *j, int i) {
    if (!j || i < 0 || i >= svc_job_extractor_count(j)) return NULL;
    return i < j->n_ex ? j->ex[i]->name : "integer_motion";
}

const char *svc_job_extractor_backend(const svc_job *j, int i) {
    if (!j || i < 0 || i >= svc_job_extractor_count(j) || atomic_load(&((svc_job *)j)->state) != 1) return NULL;
    return j->backend[i];
}

/* Values of finalised frames only: those never change again. */
int svc_job_frame_values_from(const svc_job *j, int metric, int first, double *out, int n) {
    if (!j || !out || n < 0 || first < 0 || metric < 0 || metric >= j->n_metrics) return SVC_E_INVALID_ARG;
    const int done = svc_job_frames_done(j);
    if (first >= done) return 0;
    const int cnt = n < done - first ? n : done - first;
    for (int k = 0; k < cnt; k++) out[k] = j->frames[(size_t)(first + k) * (size_t)j->subsample].vals[metric];
    return cnt;
}

int svc_job_frame_values(const svc_job *j, int metric, double *out, int n) {
    return svc_job_frame_values_from(j, metric, 0, out, n);
}

int svc_job_pooled(const svc_job *j, int metric, int pool, double *out) {
    const int n = svc_job_frames_done(j);
    if (!j || !out || metric < 0 || metric >= j->n_metrics || pool < SVC_POOL_MEAN || pool > SVC_POOL_HARMONIC_MEAN || n == 0)
        return SVC_E_INVALID_ARG;
    double sum = 0.0, inv_sum = 0.0, mn = 0.0, mx = 0.0;
    for (int k = 0; k < n; k++) {
        const double v = j->frames[(size_t)k * (size_t)j->subsample].vals[metric];
        sum += v;
        inv_sum += 1.0 / (v + 1.0);
        if (k == 0 || v < mn) mn = v;
        if (k == 0 || v > mx) mx = v;
    }
    switch (pool) {
    case SVC_POOL_MEAN: *out = sum / n; break;
    case SVC_POOL_MIN: *out = mn; break;
    case SVC_POOL_MAX: *out = mx; break;
    default: *out = n / inv_sum - 1.0; break; /* libvmaf's harmonic mean */
    }
    return SVC_OK;
}

void svc_job_free(svc_job *j) {
    if (!j) return;
    job_destroy(j);
    free(j);
}

/* ------------------------------------------------------------- streams ---- */

int svc_stream_create(const svc_model *m, const int32_t *opts, int n_opts, svc_stream **out, char *err,
                      size_t err_len) {
    if (!m || !out) {
        svc_set_err(err, err_len, "svc_stream_create: NULL model or output");
        return SVC_E_INVALID_ARG;
    }
    *out = NULL;
    svc_stream *s = calloc(1, sizeof *s);
    if (!s) return SVC_E_NOMEM;
    svc_job *j = &s->job;
    job_init(j, m);
    int rc = job_options(j, opts, n_opts, err, err_len);
    if (!rc && (j->skip_ref || j->skip_dis)) {
        svc_set_err(err, err_len, "options: frame skips do not apply to streams");
        rc = SVC_E_INVALID_ARG;
    }
    for (int k = 0; !rc && k < 4; k++) j->geo[k] = (int)opt(opts, n_opts, SVC_OPT_WIDTH + k);
    if (!rc && (j->frame_bytes = svc_frame_bytes(j->geo[0], j->geo[1], j->geo[2], j->geo[3])) < 0) {
        svc_set_err(err, err_len, "options: a stream needs a valid width, height, pix_fmt (420/422/444) and bitdepth (8/10/12/16)");
        rc = SVC_E_GEOMETRY;
    }
    if (!rc) rc = start_threads(j, err, err_len);
    if (rc) {
        if (rc == SVC_E_NOMEM) svc_set_err(err, err_len, "out of memory creating the stream");
        job_destroy(j);
        free(s);
        return rc;
    }
    *out = s;
    return SVC_OK;
}

int64_t svc_stream_frame_bytes(const svc_stream *s) { return s ? s->job.frame_bytes : -1; }

int svc_stream_push(svc_stream *s, const uint8_t *ref, size_t ref_len, const uint8_t *dis, size_t dis_len, char *err,
                    size_t err_len) {
    if (!s || !ref || !dis) {
        svc_set_err(err, err_len, "svc_stream_push: NULL stream or frame");
        return SVC_E_INVALID_ARG;
    }
    svc_job *j = &s->job;
    const size_t fb = (size_t)j->frame_bytes;
    if (ref_len != fb || dis_len != fb) {
        svc_set_err(err, err_len, "frame sizes %zu and %zu bytes, expected %zu", ref_len, dis_len, fb);
        return SVC_E_GEOMETRY;
    }
    const int state = atomic_load(&j->state);
    if (state < 0) return svc_job_error(j, err, err_len);
    pthread_mutex_lock(&j->mu);
    const int finished = j->finished, full = j->frame_cap && j->n_frames >= j->frame_cap;
    pthread_mutex_unlock(&j->mu);
    if (finished) {
        svc_set_err(err, err_len, "svc_stream_push: the stream is finished");
        return SVC_E_INVALID_ARG;
    }
    if (full) return SVC_OK; /* beyond frame_cnt: accepted, not scored */
    uint8_t *raw = malloc(2 * fb);
    if (!raw) {
        svc_set_err(err, err_len, "out of memory queueing a frame");
        return SVC_E_NOMEM;
    }
    memcpy(raw, ref, fb);
    memcpy(raw + fb, dis, fb);
    pthread_mutex_lock(&j->mu);
    int rc = add_frame(j, raw);
    if (rc == SVC_OK) {
        j->n_frames++;
        pthread_cond_broadcast(&j->cv);
    } else {
        free(raw);
        svc_set_err(err, err_len, "out of memory queueing a frame");
    }
    pthread_mutex_unlock(&j->mu);
    return rc;
}

int svc_stream_finish(svc_stream *s) {
    if (!s) return SVC_E_INVALID_ARG;
    pthread_mutex_lock(&s->job.mu);
    s->job.finished = 1;
    pthread_cond_broadcast(&s->job.cv);
    pthread_mutex_unlock(&s->job.mu);
    return SVC_OK;
}

int svc_stream_frames_ready(const svc_stream *s) { return s ? svc_job_frames_done(&s->job) : 0; }

int svc_stream_poll(svc_stream *s) { return s ? svc_job_poll(&s->job) : SVC_E_INVALID_ARG; }

const svc_job *svc_stream_job(const svc_stream *s) { return s ? &s->job : NULL; }

void svc_stream_free(svc_stream *s) {
    if (!s) return;
    job_destroy(&s->job);
    free(s);
}
