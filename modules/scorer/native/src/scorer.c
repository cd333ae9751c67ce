/*
 * The public job ABI (svc_scorer.h): options, inputs, job start, results and pooling, for file
 * jobs and pushed-frame streams alike. The work itself runs in the frame loop (frame_loop.c).
 *
 * Choices where libvmaf's CLI is the model:
 *  - frame_skip_ref / frame_skip_dist drop leading frames; frame_cnt caps the frames read
 *    after the skips. If either input ends before the other (and before frame_cnt) the job
 *    fails with SVC_E_GEOMETRY, as the CLI fails on inputs of different lengths.
 *  - subsample N scores frames 0, N, 2N, ... of those read; motion still compares
 *    consecutive input frames. Results and pooling cover the scored frames only.
 *  - Segments (SVC_OPT_SEGMENT_*, svc_scorer.h): the frames read are the segment's context and
 *    own frames; subsampling and motion's first/last follow the title's frame index.
 *  - Streams: frame_cnt caps the pushed pairs that are scored (later pushes are accepted and
 *    ignored); frame skips are rejected (a stream has nothing to skip to).
 */
#define _POSIX_C_SOURCE 200809L
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "feed.h"

struct svc_stream {
    svc_job job;
    svc_job *views; /* ladders: one result view per rendition, filled once the ladder is done */
    svc_feed *feed; /* fed streams: the thread reading the inputs */
};

static int64_t opt(const int32_t *opts, int n, int i) { return i < n ? opts[i] : 0; }

/* ------------------------------------------------------------ job setup ---- */

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
    const int64_t cnt = opt(opts, n_opts, SVC_OPT_FRAME_CNT), max_frames = opt(opts, n_opts, SVC_OPT_MAX_FRAMES);
    j->max_frames = max_frames > 0 ? max_frames : SVC_MAX_FRAMES_DEFAULT;
    j->skip_ref = opt(opts, n_opts, SVC_OPT_FRAME_SKIP_REF);
    j->skip_dis = opt(opts, n_opts, SVC_OPT_FRAME_SKIP_DIST);
    const int64_t seg_first = opt(opts, n_opts, SVC_OPT_SEGMENT_FIRST), seg_own = opt(opts, n_opts, SVC_OPT_SEGMENT_FRAMES);
    const int64_t seg_ctx = opt(opts, n_opts, SVC_OPT_SEGMENT_CONTEXT);
    const int before = (seg_ctx & SVC_SEGMENT_CONTEXT_BEFORE) != 0;
    const int64_t lead = opt(opts, n_opts, SVC_OPT_SEGMENT_LEAD);
    const char *bad_segment = seg_first < 0 || seg_own < 0 ? "segment first frame and frames must not be negative"
                              : seg_ctx & ~(int64_t)(SVC_SEGMENT_CONTEXT_BEFORE | SVC_SEGMENT_CONTEXT_AFTER)
                                  ? "unknown segment context bits"
                              : !seg_own && (seg_first || seg_ctx) ? "a segment needs its frames (SVC_OPT_SEGMENT_FRAMES)"
                              : seg_own && cnt ? "frame_cnt does not apply to a segment (it reads its own frames)"
                              : before != (seg_first > 0)
                                  ? "a segment has a context frame before it exactly when it does not start the title"
                              : lead < 0 || lead > seg_first || (lead && !before)
                                  ? "a segment's context frames before it are at most the title's frames before it"
                              : NULL;
    const char *bad = bad_segment ? bad_segment : threads < 0 || threads > SVC_MAX_THREADS ? "threads must be 0..256"
                      : cpu < SVC_CPU_AUTO || cpu > SVC_CPU_AVX512 ? "cpu must be 0 (auto), 1 (scalar), 2 (avx2) or 3 (avx512)"
                      : feats & ~(int64_t)svc_registry_flags() ? "unknown feature flag"
                      : sub < 0 ? "subsample must not be negative"
                      : cnt < 0 ? "frame_cnt must not be negative"
                      : j->skip_ref < 0 || j->skip_dis < 0 ? "frame skips must not be negative"
                      : max_frames < 0 ? "max_frames must not be negative"
                      : NULL;
    if (bad) {
        svc_set_err(err, err_len, "options: %s", bad);
        return SVC_E_INVALID_ARG;
    }
    if ((j->cpu = svc_cpu_resolve((int)cpu)) < 0) {
        svc_set_err(err, err_len, "options: the %s backend was requested but this CPU lacks %s",
                    cpu == SVC_CPU_AVX512 ? "avx512" : "avx2", cpu == SVC_CPU_AVX512 ? "AVX-512" : "AVX2");
        return SVC_E_INVALID_ARG;
    }
    const int64_t rate = opt(opts, n_opts, SVC_OPT_FRAME_RATE), matrix = opt(opts, n_opts, SVC_OPT_COLOR_MATRIX);
    if (rate < 0 || rate > 100000 || matrix < SVC_MATRIX_BT709 || matrix > SVC_MATRIX_BT2020) {
        svc_set_err(err, err_len, "options: %s", rate < 0 || rate > 100000 ? "frame_rate must be 0..100000"
                                                                           : "color matrix must be 0 (bt709), 1 (bt601) or 2 (bt2020)");
        return SVC_E_INVALID_ARG;
    }
    j->frame_rate = rate ? (int)rate : SVC_DEFAULT_FRAME_RATE;
    j->frame_rate_given = rate > 0;
    j->color_matrix = (int)matrix;
    j->n_threads = threads ? (int)threads : 1;
    j->subsample = sub > 1 ? (int)sub : 1;
    j->frame_cap = (int)cnt;
    if (seg_own) {
        j->seg_first = (int)seg_first;
        j->seg_own = (int)seg_own;
        j->seg_lead = lead ? (int)lead : before;
        j->seg_tail = (seg_ctx & SVC_SEGMENT_CONTEXT_AFTER) != 0;
        j->frame_cap = j->seg_lead + j->seg_own + j->seg_tail; /* exactly these are read */
    }
    j->shots = opt(opts, n_opts, SVC_OPT_SHOTS) != 0;

    return svc_loop_plan(j, feats, err, err_len);
}

/* Everything a job holds: the opener thread and its descriptors and names, then the loop's part. */
static void job_release(svc_job *j) {
    svc_loop_cancel(j);
    if (j->opener_started) pthread_join(j->opener, NULL);
    for (int k = 0; k < 2; k++) {
        if (j->fds[k] >= 0) close(j->fds[k]);
        free(j->names[k]);
    }
    svc_loop_destroy(j);
}

static int fail_start(svc_job *j, int rc, char *err, size_t err_len) {
    if (rc == SVC_E_NOMEM) svc_set_err(err, err_len, "out of memory starting the job");
    job_release(j);
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

/* A job with its options checked; no input yet. */
static int job_new(const svc_model *m, const int32_t *opts, int n_opts, svc_job **out, char *err, size_t err_len) {
    *out = NULL;
    svc_job *j = calloc(1, sizeof *j);
    if (!j) return SVC_E_NOMEM;
    svc_loop_init(j, m);
    const int rc = job_options(j, opts, n_opts, err, err_len);
    if (rc) return fail_start(j, rc, err, err_len);
    const int kind = (int)opt(opts, n_opts, SVC_OPT_INPUT_KIND);
    const int ref_kind = (int)opt(opts, n_opts, SVC_OPT_REF_KIND), dis_kind = (int)opt(opts, n_opts, SVC_OPT_DIS_KIND);
    j->kinds[0] = ref_kind ? ref_kind : kind;
    j->kinds[1] = dis_kind ? dis_kind : kind;
    for (int k = 0; k < 4; k++) j->g[k] = (int)opt(opts, n_opts, SVC_OPT_WIDTH + k);
    *out = j;
    return SVC_OK;
}

/* Opens both inputs (from j->fds when set, else from the paths), checks their geometry and frame
 * counts; no frame record, picture or thread yet. */
static int open_inputs(svc_job *j, const char *ref_name, const char *dis_name, char *err, size_t err_len) {
    const int *g = j->g;
    int rc;
    if (j->fds[0] >= 0) {
        if ((rc = svc_video_open_fd(j->fds[0], ref_name, j->kinds[0], g[0], g[1], g[2], g[3], j->max_frames, &j->ref, err,
                                    err_len)) ||
            (rc = svc_video_open_fd(j->fds[1], dis_name, j->kinds[1], g[0], g[1], g[2], g[3], j->max_frames, &j->dis, err,
                                    err_len)))
            return rc;
    } else if ((rc = svc_video_open(ref_name, j->kinds[0], g[0], g[1], g[2], g[3], &j->ref, err, err_len)) ||
               (rc = svc_video_open(dis_name, j->kinds[1], g[0], g[1], g[2], g[3], &j->dis, err, err_len))) {
        return rc;
    }
    int gd[4];
    svc_video_geometry(j->ref, &j->geo[0], &j->geo[1], &j->geo[2], &j->geo[3]);
    svc_video_geometry(j->dis, &gd[0], &gd[1], &gd[2], &gd[3]);
    if (memcmp(j->geo, gd, sizeof gd) != 0) {
        svc_set_err(err, err_len, "geometry differs: %s is %dx%d %d %d-bit, %s is %dx%d %d %d-bit", ref_name, j->geo[0],
                    j->geo[1], j->geo[2], j->geo[3], dis_name, gd[0], gd[1], gd[2], gd[3]);
        return SVC_E_GEOMETRY;
    }
    if (!j->frame_rate_given && svc_video_frame_rate(j->ref)) j->frame_rate = svc_video_frame_rate(j->ref);
    const int n = frame_count(j, ref_name, dis_name, err, err_len);
    if (n < 0) return SVC_E_GEOMETRY;
    j->total = n;
    /* A frame's extractors run in parallel (frame_loop.c), so threads beyond the frames can help. */
    const int64_t units = (int64_t)n * (j->n_ex > 1 ? j->n_ex : 1);
    if (j->n_threads > units) j->n_threads = (int)units;
    return SVC_OK;
}

static void *opener(void *arg) {
    svc_job *j = arg;
    char err[SVC_ERR_LEN] = "";
    const int rc = open_inputs(j, j->names[0], j->names[1], err, sizeof err);
    if (rc) {
        snprintf(j->err_msg, sizeof j->err_msg, "%s", err);
        j->err_code = rc;
        atomic_store(&j->state, rc); /* the message is written before the state is published */
    }
    atomic_store(&j->opened, rc ? rc : 1);
    return NULL;
}

int svc_job_run(svc_job *j, char *err, size_t err_len) {
    if (j && j->opener_started) {
        pthread_join(j->opener, NULL);
        j->opener_started = 0;
    }
    if (!j || !j->total || j->threads || atomic_load(&j->opened) < 0) {
        svc_set_err(err, err_len, "svc_job_run: NULL job, not an opened file job, or already running");
        return SVC_E_INVALID_ARG;
    }
    return svc_loop_start(j, err, err_len);
}

int64_t svc_job_memory(const svc_job *j) {
    if (!j) return -1;
    const double pixels = (double)j->geo[0] * j->geo[1];
    const double frame = (double)svc_frame_bytes(j->geo[0], j->geo[1], j->geo[2], j->geo[3]);
    /* Per worker: extractor and temporal states; a ladder's shared reference side grows with the
     * frame size and the workers, not the frames. */
    double worker = 256.0 * 1024;
    for (int e = 0; e < j->n_ex; e++) {
        const svc_registry_entry *row = svc_registry_of(j->ex[e]);
        worker += row->bytes_per_pixel * pixels + 256.0 * 1024;
        if (j->n_dis > 1 && j->ex[e]->ladder_prepare) worker += row->ladder_bytes_per_pixel * pixels;
    }
    for (int t = 0; t < j->n_tm; t++) worker += svc_registry_of_temporal(j->tm[t])->bytes_per_pixel * pixels;
    /* Frames in flight (threads + 1 slots, frame_loop.c): two pictures (rows padded) each, and the
     * bytes being decoded into them: a file job's read buffer (one picture at a time), a stream's
     * pushed frame (one reference and n_dis distorted pictures). */
    const double decoding = j->total ? 1 : 0;
    const double slots = (j->n_threads + 1) * ((2 + decoding) * frame + 6 * 32.0 * j->geo[1]);
    /* A stream's raw frames (one reference and n_dis distorted pictures each): its window of frames
     * not yet final (a ladder's keep theirs until scored) and the one being read or pushed. */
    const double queued = j->total ? 0 : (svc_stream_window(j) + 1.0) * (1 + (j->n_dis > 1 ? j->n_dis : 1)) * frame;
    const double ring = (j->n_tm || j->history ? 2 * pixels * (j->n_tm > 1 ? j->n_tm : 1) * (j->n_threads + 2) : 0) +
                        (j->shots ? 256.0 * (j->n_threads + 2) : 0);
    const int64_t scored = svc_scored_before(j, j->total);
    const int rows = j->n_dis > 1 ? j->n_dis : 1;
    const double records = (double)j->total * sizeof(svc_frame_rec) + (double)scored * (j->n_metrics * 8.0 * rows + 32);
    const double index = j->ref ? 8.0 * (double)(svc_video_frame_count(j->ref) + svc_video_frame_count(j->dis)) : 0;
    return (int64_t)(worker * j->n_threads + slots + queued + ring + records + index);
}

int svc_job_open_fd(const svc_model *m, int ref_fd, const char *ref_name, int dis_fd, const char *dis_name,
                    const int32_t *opts, int n_opts, svc_job **out, char *err, size_t err_len) {
    if (!m || ref_fd < 0 || dis_fd < 0 || !ref_name || !dis_name || !out) {
        svc_set_err(err, err_len, "svc_job_open_fd: NULL model, name or output, or a negative descriptor");
        return SVC_E_INVALID_ARG;
    }
    svc_job *j;
    int rc = job_new(m, opts, n_opts, &j, err, err_len);
    if (rc) return rc;
    /* The job's own duplicates and names: the caller may close and free its own at once. */
    j->fds[0] = fcntl(ref_fd, F_DUPFD_CLOEXEC, 0);
    j->fds[1] = fcntl(dis_fd, F_DUPFD_CLOEXEC, 0);
    j->names[0] = strdup(ref_name);
    j->names[1] = strdup(dis_name);
    if (j->fds[0] < 0 || j->fds[1] < 0) {
        svc_set_err(err, err_len, "%s: bad descriptor", j->fds[0] < 0 ? ref_name : dis_name);
        return fail_start(j, SVC_E_IO, err, err_len);
    }
    if (!j->names[0] || !j->names[1]) return fail_start(j, SVC_E_NOMEM, err, err_len);
    if (pthread_create(&j->opener, NULL, opener, j) != 0) {
        svc_set_err(err, err_len, "cannot start the thread that opens the inputs");
        return fail_start(j, SVC_E_INTERNAL, err, err_len);
    }
    j->opener_started = 1;
    *out = j;
    return SVC_OK;
}

int svc_job_opened(const svc_job *j) { return j ? atomic_load(&((svc_job *)j)->opened) : SVC_E_INVALID_ARG; }

int svc_job_start_fd(const svc_model *m, int ref_fd, const char *ref_name, int dis_fd, const char *dis_name,
                     const int32_t *opts, int n_opts, svc_job **out, char *err, size_t err_len) {
    svc_job *j;
    int rc = svc_job_open_fd(m, ref_fd, ref_name, dis_fd, dis_name, opts, n_opts, &j, err, err_len);
    if (rc) return rc;
    pthread_join(j->opener, NULL);
    j->opener_started = 0;
    if ((rc = atomic_load(&j->opened)) < 0) {
        svc_set_err(err, err_len, "%s", j->err_msg);
        return fail_start(j, rc, err, err_len);
    }
    if ((rc = svc_job_run(j, err, err_len))) return fail_start(j, rc, err, err_len);
    *out = j;
    return SVC_OK;
}

int svc_job_start(const svc_model *m, const char *ref_path, const char *dis_path, const int32_t *opts,
                  int n_opts, svc_job **out, char *err, size_t err_len) {
    if (!m || !ref_path || !dis_path || !out) {
        svc_set_err(err, err_len, "svc_job_start: NULL model, path or output");
        return SVC_E_INVALID_ARG;
    }
    svc_job *j;
    int rc = job_new(m, opts, n_opts, &j, err, err_len);
    if (rc) return rc;
    if ((rc = open_inputs(j, ref_path, dis_path, err, err_len)) || (rc = svc_job_run(j, err, err_len)))
        return fail_start(j, rc, err, err_len);
    *out = j;
    return SVC_OK;
}

/* ------------------------------------------------------------- queries ---- */

const char *svc_version(void) { return "0.1.0"; }
int svc_abi_minor(void) { return 16; } /* 1: svc_job_frame_values_from; 2: float_vif ... feature flags, model options and outputs, svc_model_check, svc_model_bundle; 3: SVC_CPU_AVX512; 4: jobs on descriptors; 5: the cambi flag (1 << 9); 6: ladders; 7: string model options (their number NaN), the vmaf_v1.0.16 models' features and options; 8: fed streams (svc_stream_feed, SVC_INPUT_PIPE, svc_pipe); 9: svc_ladder_reference_analyses; 10: SVC_OPT_SHOTS, svc_job_frame_cuts; 11: xpsnr, ssimulacra2, SVC_OPT_FRAME_RATE, SVC_OPT_COLOR_MATRIX; 12: segments (SVC_OPT_SEGMENT_*, svc_job_input_frames); 13: SVC_OPT_SEGMENT_LEAD, shots on segments; 14: the feature list (svc_feature_*); 15: svc_ladder_range; 16: svc_stream_feed_indexed */
int svc_abi_patch(void) { return 0; }

int64_t svc_job_input_frames(const svc_job *j) {
    return j && atomic_load(&((svc_job *)j)->opened) == 1 ? j->total : -1;
}

int svc_job_poll(svc_job *j) { return j ? atomic_load(&j->state) : SVC_E_INVALID_ARG; }

int svc_job_frames_done(const svc_job *j) { return j ? atomic_load(&((svc_job *)j)->done_out) : 0; }

void svc_job_cancel(svc_job *j) {
    if (j) svc_loop_cancel(j);
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

int svc_job_extractor_count(const svc_job *j) { return j ? j->n_ex + j->n_tm : 0; }

const char *svc_job_extractor_name(const svc_job *j, int i) {
    if (!j || i < 0 || i >= svc_job_extractor_count(j)) return NULL;
    if (i < j->n_ex) return j->ex_label[i] ? j->ex_label[i] : j->ex[i]->name;
    return j->tm[i - j->n_ex]->name;
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
    /* A fed stream's thread (or a file job's worker) may move the frame array meanwhile. */
    pthread_mutex_lock((pthread_mutex_t *)&j->mu);
    for (int k = 0; k < cnt; k++)
        out[k] = j->frames[svc_scored_index(j, first + k)].vals[j->vals_offset + metric];
    pthread_mutex_unlock((pthread_mutex_t *)&j->mu);
    return cnt;
}

int svc_job_frame_values(const svc_job *j, int metric, double *out, int n) {
    return svc_job_frame_values_from(j, metric, 0, out, n);
}

/* The mean of an extractor's output that pools its own way (xpsnr's filter summary) over the
 * scored frames' values. */
static int extractor_mean(const svc_job *j, const svc_extractor *ex, int output, int metric, int n, double *out) {
    double *values = malloc(sizeof *values * (size_t)n);
    if (!values) return SVC_E_NOMEM;
    svc_job_frame_values(j, metric, values, n);
    *out = ex->pooled_mean(values, n, output, j->geo[0], j->geo[1], j->geo[2], j->geo[3]);
    free(values);
    return SVC_OK;
}

int svc_job_pooled(const svc_job *j, int metric, int pool, double *out) {
    const int n = svc_job_frames_done(j);
    if (!j || !out || metric < 0 || metric >= j->n_metrics || pool < SVC_POOL_MEAN || pool > SVC_POOL_HARMONIC_MEAN || n == 0)
        return SVC_E_INVALID_ARG;
    double sum = 0.0, inv_sum = 0.0, mn = 0.0, mx = 0.0;
    pthread_mutex_lock((pthread_mutex_t *)&j->mu);
    for (int k = 0; k < n; k++) {
        const double v = j->frames[svc_scored_index(j, k)].vals[j->vals_offset + metric];
        sum += v;
        inv_sum += 1.0 / (v + 1.0);
        if (k == 0 || v < mn) mn = v;
        if (k == 0 || v > mx) mx = v;
    }
    pthread_mutex_unlock((pthread_mutex_t *)&j->mu);
    int output;
    const svc_extractor *ex = svc_loop_metric_extractor(j, metric, &output);
    if (pool == SVC_POOL_MEAN && ex && ex->pooled_mean) return extractor_mean(j, ex, output, metric, n, out);
    switch (pool) {
    case SVC_POOL_MEAN: *out = sum / n; break;
    case SVC_POOL_MIN: *out = mn; break;
    case SVC_POOL_MAX: *out = mx; break;
    default: *out = n / inv_sum - 1.0; break; /* libvmaf's harmonic mean */
    }
    return SVC_OK;
}

int svc_job_frame_cuts(const svc_job *j, int first, double *out, int n) {
    if (!j || !j->shots || !out || n < 0 || first < 0) return SVC_E_INVALID_ARG;
    const int done = svc_job_frames_done(j);
    if (first >= done) return 0;
    const int cnt = n < done - first ? n : done - first;
    const int sub = j->subsample;
    pthread_mutex_lock((pthread_mutex_t *)&j->mu);
    for (int k = 0; k < cnt; k++) {
        /* The largest move since the previous scored frame: over the frames read after it (a
         * segment read its subsample frames before its first one; the title's frame 0 has none). */
        const int at = svc_scored_index(j, first + k);
        double cut = 0.0;
        for (int i = at - sub + 1 > 1 ? at - sub + 1 : 1; i <= at; i++)
            if (j->frames[i].cut > cut) cut = j->frames[i].cut;
        out[k] = cut;
    }
    pthread_mutex_unlock((pthread_mutex_t *)&j->mu);
    return cnt;
}

void svc_job_free(svc_job *j) {
    if (!j) return;
    job_release(j);
    free(j);
}

/* ------------------------------------------------------------- streams ---- */

/* A stream of frames of n_dis distorted pictures each (1: a pair). */
static int stream_new(const svc_model *m, int n_dis, const int32_t *opts, int n_opts, svc_stream **out, char *err,
                      size_t err_len) {
    *out = NULL;
    svc_stream *s = calloc(1, sizeof *s);
    if (!s) return SVC_E_NOMEM;
    svc_job *j = &s->job;
    svc_loop_init(j, m);
    j->n_dis = n_dis;
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
    /* Threads start with the first push (or the finish), so svc_job_memory of the stream's job
     * view can be admitted against a budget before any picture is allocated. */
    if (rc) {
        if (rc == SVC_E_NOMEM) svc_set_err(err, err_len, "out of memory creating the stream");
        svc_loop_destroy(j);
        free(s);
        return rc;
    }
    *out = s;
    return SVC_OK;
}

int svc_stream_create(const svc_model *m, const int32_t *opts, int n_opts, svc_stream **out, char *err,
                      size_t err_len) {
    if (!m || !out) {
        svc_set_err(err, err_len, "svc_stream_create: NULL model or output");
        return SVC_E_INVALID_ARG;
    }
    return stream_new(m, 1, opts, n_opts, out, err, err_len);
}

int svc_ladder_create(const svc_model *m, int n_renditions, const int32_t *opts, int n_opts, svc_stream **out,
                      char *err, size_t err_len) {
    if (!m || !out || n_renditions < 1 || n_renditions > SVC_LADDER_MAX_RENDITIONS) {
        svc_set_err(err, err_len, "svc_ladder_create: NULL model or output, or not 1..%d renditions",
                    SVC_LADDER_MAX_RENDITIONS);
        return SVC_E_INVALID_ARG;
    }
    const int rc = stream_new(m, n_renditions, opts, n_opts, out, err, err_len);
    if (rc) return rc;
    if (!((*out)->views = calloc((size_t)n_renditions, sizeof *(*out)->views))) {
        svc_stream_free(*out);
        *out = NULL;
        svc_set_err(err, err_len, "out of memory creating the ladder");
        return SVC_E_NOMEM;
    }
    return SVC_OK;
}

int svc_ladder_range(svc_stream *s, int r, int64_t first, int64_t frames, char *err, size_t err_len) {
    if (!s || !s->views || r < 0 || r >= s->job.n_dis || first < 0 || frames < 1 || first + frames > INT_MAX) {
        svc_set_err(err, err_len, "svc_ladder_range: NULL ladder, no rendition %d, or not a range of frames", r);
        return SVC_E_INVALID_ARG;
    }
    if (s->feed || s->job.threads || s->job.n_frames || s->job.finished) {
        svc_set_err(err, err_len, "svc_ladder_range: frames were already pushed or fed");
        return SVC_E_INVALID_ARG;
    }
    s->job.rend_first[r] = (int)first;
    s->job.rend_end[r] = (int)(first + frames);
    svc_set_err(err, err_len, "%s", "");
    return SVC_OK;
}

const svc_job *svc_ladder_rendition(svc_stream *s, int r) {
    if (!s || !s->views || r < 0 || r >= s->job.n_dis || atomic_load(&s->job.state) != 1) return NULL;
    /* The threads are done: the view is the job's results read at the rendition's row, over the
     * frames it pairs. Its frames start at the first one read that it pairs (a context frame of a
     * segment, or its own first frame), so the job accessors number, pool and measure cuts over
     * its own frames as if it had been scored alone: its own frames are those it pairs among the
     * job's own, and its title index counts from its first frame. */
    const svc_job *j = &s->job;
    svc_job *view = &s->views[r];
    memcpy(view, j, sizeof *view);
    pthread_mutex_init(&view->mu, NULL); /* the view's own (a copied mutex is not usable) */
    view->vals_offset = r * j->n_metrics;
    const int64_t first_read = (int64_t)j->rend_first[r] - j->seg_first + j->seg_lead; /* frame read of its first */
    const int64_t own_end = j->seg_own ? j->seg_lead + j->seg_own : j->n_frames;
    const int64_t end_read = (int64_t)j->rend_end[r] - j->seg_first + j->seg_lead;
    const int64_t lo = first_read > j->seg_lead ? first_read : j->seg_lead;
    const int64_t hi = end_read < own_end ? end_read : own_end;
    const int64_t base = first_read > 0 ? first_read : 0;
    if (hi <= lo) {
        atomic_store(&view->done_out, 0); /* none of its frames is among the job's own */
        return view;
    }
    view->frames = j->frames + base;
    view->n_frames = (int)(hi - base);
    view->seg_lead = (int)(lo - base);
    view->seg_own = (int)(hi - lo);
    view->seg_first = (int)(lo - first_read);
    atomic_store(&view->done_out, svc_scored_before(view, view->n_frames));
    return view;
}

int64_t svc_ladder_reference_loads(const svc_stream *s) { return s ? atomic_load(&((svc_stream *)s)->job.ref_loads) : -1; }

int64_t svc_ladder_motion_diffs(const svc_stream *s) { return s ? atomic_load(&((svc_stream *)s)->job.motion_diffs) : -1; }

int64_t svc_ladder_reference_analyses(const svc_stream *s) {
    return s ? atomic_load(&((svc_stream *)s)->job.ref_analyses) : -1;
}

int64_t svc_stream_frame_bytes(const svc_stream *s) { return s ? s->job.frame_bytes : -1; }

int svc_stream_push(svc_stream *s, const uint8_t *ref, size_t ref_len, const uint8_t *dis, size_t dis_len, char *err,
                    size_t err_len) {
    if (!s || !ref || !dis) {
        svc_set_err(err, err_len, "svc_stream_push: NULL stream or frame");
        return SVC_E_INVALID_ARG;
    }
    svc_job *j = &s->job;
    if (s->feed) {
        svc_set_err(err, err_len, "svc_stream_push: the stream is fed from descriptors");
        return SVC_E_INVALID_ARG;
    }
    const size_t fb = (size_t)j->frame_bytes, n_dis = j->n_dis > 1 ? (size_t)j->n_dis : 1;
    if (ref_len != fb || dis_len != fb * n_dis) {
        svc_set_err(err, err_len, "frame sizes %zu and %zu bytes, expected %zu and %zu", ref_len, dis_len, fb, fb * n_dis);
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
    if (j->n_frames >= j->max_frames) {
        svc_set_err(err, err_len, "more than %lld frames pushed (the frame limit)", (long long)j->max_frames);
        return SVC_E_GEOMETRY;
    }
    if (!j->threads) {
        const int rc = svc_loop_start(j, err, err_len);
        if (rc) return rc;
    }
    uint8_t *raw = malloc((1 + n_dis) * fb);
    if (!raw) {
        svc_set_err(err, err_len, "out of memory queueing a frame");
        return SVC_E_NOMEM;
    }
    memcpy(raw, ref, fb);
    memcpy(raw + fb, dis, fb * n_dis);
    pthread_mutex_lock(&j->mu);
    int rc = svc_loop_add_frame(j, raw);
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
    if (!s || s->feed) return SVC_E_INVALID_ARG; /* a fed stream ends with its inputs */
    char err[SVC_ERR_LEN];
    if (!s->job.threads && svc_loop_start(&s->job, err, sizeof err)) {
        pthread_mutex_lock(&s->job.mu);
        s->job.err_code = SVC_E_INTERNAL;
        snprintf(s->job.err_msg, sizeof s->job.err_msg, "%s", err);
        pthread_mutex_unlock(&s->job.mu);
        atomic_store(&s->job.state, SVC_E_INTERNAL);
        return SVC_E_INTERNAL;
    }
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
    free(s->views);
    svc_feed_stop(s->feed); /* before the loop's memory goes: the thread queues into it */
    svc_loop_destroy(&s->job);
    free(s);
}

int svc_stream_feed_indexed(svc_stream *s, int n, const int32_t *fds, const int32_t *kinds, const int32_t *skips,
                            const int32_t *index_fds, const char *const *names, char *err, size_t err_len) {
    if (!s || s->feed || s->job.threads || s->job.n_frames || s->job.finished) {
        svc_set_err(err, err_len, "svc_stream_feed: NULL stream, or frames were already pushed or fed");
        return SVC_E_INVALID_ARG;
    }
    return svc_feed_start(&s->job, n, fds, kinds, skips, index_fds, names, &s->feed, err, err_len);
}

int svc_stream_feed(svc_stream *s, int n, const int32_t *fds, const int32_t *kinds, const int32_t *skips,
                    const char *const *names, char *err, size_t err_len) {
    return svc_stream_feed_indexed(s, n, fds, kinds, skips, NULL, names, err, err_len);
}

int64_t svc_stream_feed_end(const svc_stream *s, int side) { return s ? svc_feed_end(s->feed, side) : -1; }

int64_t svc_stream_frames_read(const svc_stream *s) { return s ? svc_feed_frames(s->feed) : 0; }

int svc_pipe(int32_t *out2, char *err, size_t err_len) { return svc_feed_pipe(out2, err, err_len); }
