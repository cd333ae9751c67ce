/*
 * A job as the frame loop (frame_loop.c) runs it and the public ABI (scorer.c) reads it.
 * scorer.c fills the options and inputs, then svc_loop_* plan the extractors, queue frames and
 * run the worker threads; the loop never calls back into the ABI.
 */
#ifndef SVC_JOB_H
#define SVC_JOB_H

#include <pthread.h>
#include <stdatomic.h>

#include "model.h"
#include "feature/registry.h"

#define SVC_MAX_THREADS 256
/* Frames per second of raw input when the request gives none: FFmpeg's rawvideo default. */
#define SVC_DEFAULT_FRAME_RATE 25
#define SVC_ERR_LEN 512
/* Extractor instances of a job: each registered extractor, plus one per other set of option
 * values that the model's features ask for. */
#define SVC_LOOP_MAX_INSTANCES (SVC_REGISTRY_MAX + SVC_MODEL_MAX_FEATURES)
#define SVC_LOOP_MAX_TEMPORAL_SETS (SVC_TEMPORAL_MAX + SVC_MODEL_MAX_FEATURES)

typedef struct svc_frame_rec {
    double *vals;  /* metric values; scored frames only */
    uint8_t *raw;  /* stream: pushed ref then dis bytes until a worker decodes them */
    double sad[SVC_TEMPORAL_MAX]; /* diff with the previous frame, per temporal extractor */
    double cut;    /* shot detection: histogram distance of its reference from the previous one */
    unsigned char stored, sad_done, done;
} svc_frame_rec;

struct svc_job {
    const svc_model *model;
    int geo[4]; /* width, height, pix_fmt, bitdepth */
    int cpu, n_threads, subsample;
    /* Segments (SVC_OPT_SEGMENT_*): the title index of the first own frame, the context frames
     * read before (0/1) and after (0/1) the own frames, and the own frames (0: not a segment, every
     * frame read is the job's own). Frame i read is the title's frame seg_first + i - seg_lead. */
    int seg_first, seg_lead, seg_tail, seg_own;
    svc_video *ref, *dis; /* file jobs */
    int64_t skip_ref, skip_dis;
    int64_t frame_bytes;  /* streams: bytes of one picture */
    /* Ladders (since ABI minor 6): distorted pictures per frame, each scored against the one
     * reference picture; a frame's values hold n_dis rows of n_metrics (0 or 1: a pair). */
    int n_dis;
    /* A rendition's result view (svc_ladder_rendition): its row in every frame's values. */
    int vals_offset;
    /* Ladders (since ABI minor 15, svc_ladder_range): the title frames rendition r pairs,
     * [rend_first[r], rend_end[r]); every frame unless set. A rendition is read, scored and pooled
     * only there, its subsampling and motion's first/last counted from its own first frame. */
    int rend_first[SVC_LADDER_MAX_RENDITIONS], rend_end[SVC_LADDER_MAX_RENDITIONS];
    /* Reference pictures loaded and motion differences computed: once per frame, whatever n_dis. */
    atomic_llong ref_loads, motion_diffs;
    /* Ladders: reference-side analyses of extractors with a ladder path (ladder_prepare), one
     * per such extractor instance per frame, whatever n_dis. */
    atomic_llong ref_analyses;
    int frame_cap;        /* streams: frames scored at most (0 = no cap) */
    int shots;            /* SVC_OPT_SHOTS: each frame's cut measure (shot_cut.c) beside motion */
    int frame_rate, frame_rate_given; /* whole frames per second (xpsnr); given by the options */
    int color_matrix;     /* svc_color_matrix (ssimulacra2) */
    int history;          /* earlier reference lumas some extractor reads (svc_extractor.history) */
    int total;            /* file jobs: frames to read; their records are added as workers claim them */
    int64_t max_frames;   /* an input with more frames is refused */
    /* Descriptor jobs (scorer.c): the inputs are validated on this thread (a Y4M is walked frame
     * by frame), never on the caller's; opened is 0 while it runs, then 1 or a negative status. */
    pthread_t opener;
    int opener_started, kinds[2], g[4], fds[2];
    char *names[2];
    atomic_int opened;

    int n_ex, ex_col[SVC_LOOP_MAX_INSTANCES];
    const svc_extractor *ex[SVC_LOOP_MAX_INSTANCES];
    double ex_opts[SVC_LOOP_MAX_INSTANCES][SVC_MODEL_MAX_OPTIONS]; /* option values per instance */
    int ex_custom[SVC_LOOP_MAX_INSTANCES]; /* some option differs from its default */
    const char *ex_label[SVC_LOOP_MAX_INSTANCES]; /* provenance name of an optioned instance, e.g. integer_adm_egl_1 */
    int n_tm; /* temporal extractors (motion): one diff per frame pair each */
    const svc_temporal *tm[SVC_TEMPORAL_MAX];
    /* Their output sets: temporal extractor tmo_tm[s] (index into tm) under option values
     * tmo_opts[s], reported from column tmo_col[s]. */
    int n_tmo, tmo_tm[SVC_LOOP_MAX_TEMPORAL_SETS], tmo_col[SVC_LOOP_MAX_TEMPORAL_SETS],
        tmo_custom[SVC_LOOP_MAX_TEMPORAL_SETS];
    double tmo_opts[SVC_LOOP_MAX_TEMPORAL_SETS][SVC_MODEL_MAX_OPTIONS];
    const char *backend[SVC_LOOP_MAX_INSTANCES + SVC_TEMPORAL_MAX]; /* per extractor, then temporal; set by a worker */
    int n_metrics, n_outputs; /* metrics [0, n_outputs) are the model's outputs */
    const char **metric_names;
    char *names_buf; /* the metric names the job composed (model outputs, optioned features) */
    int model_col[SVC_MODEL_MAX_FEATURES];

    pthread_mutex_t mu;
    pthread_cond_t cv;
    svc_frame_rec *frames;
    int n_frames, cap, finished; /* frames known so far; no more will come */
    int next_claim, final_next, finalising, active;
    uint16_t *ring;
    uint32_t *shot_ring; /* with shots: each ring slot's luma histogram (SVC_SHOT_BINS) */
    size_t luma_len;
    int ring_len;
    /* Frames in flight (frame_loop.c): a frame's pictures, loaded once by the worker that claims
     * the frame and read by every worker that takes one of its units (an extractor); at most
     * n_slots of them, so memory does not grow with the frames queued. */
    struct svc_frame_slot *slots;
    int n_slots, loading, n_workers;
    /* Units run by a worker other than the one that loaded their frame (tests read it through
     * svc_loop_units_shared). */
    atomic_llong units_shared;
    pthread_t *threads;
    int n_started;
    int err_code;
    char err_msg[SVC_ERR_LEN];

    atomic_int state;     /* 0 running, 1 done, < 0 failed */
    atomic_int cancel;
    atomic_int done_out;  /* scored frames finalised */
};

/* Whether frame i read is one of the job's own frames (not a segment's context frame). */
static inline int svc_own_frame(const svc_job *j, int i) {
    return i >= j->seg_lead && (!j->seg_own || i < j->seg_lead + j->seg_own);
}

/* Frame i read is scored: an own frame whose title index is a multiple of the subsampling. */
static inline int svc_scored_frame(const svc_job *j, int i) {
    return svc_own_frame(j, i) && (j->seg_first + i - j->seg_lead) % j->subsample == 0;
}

/* The frame read that is the k-th scored frame. */
static inline int svc_scored_index(const svc_job *j, int k) {
    const int skip = (j->subsample - j->seg_first % j->subsample) % j->subsample;
    return j->seg_lead + skip + k * j->subsample;
}

/* Scored frames among the first n frames read. */
static inline int svc_scored_before(const svc_job *j, int n) {
    if (j->seg_own && n > j->seg_lead + j->seg_own) n = j->seg_lead + j->seg_own;
    const int first = svc_scored_index(j, 0);
    return n > first ? (n - first + j->subsample - 1) / j->subsample : 0;
}

/* The title index of frame i read. */
static inline int svc_title_frame(const svc_job *j, int i) { return j->seg_first + i - j->seg_lead; }

/* Whether rendition r (0 for a pair's distorted side) pairs frame i read. */
static inline int svc_rendition_pairs(const svc_job *j, int r, int i) {
    const int t = svc_title_frame(j, i);
    return t >= j->rend_first[r] && t < j->rend_end[r];
}

/* Frame i read is scored for rendition r: an own frame it pairs whose index among its own frames
 * is a multiple of the subsampling (svc_scored_frame for a rendition pairing every frame). */
static inline int svc_rendition_scored(const svc_job *j, int r, int i) {
    return svc_own_frame(j, i) && svc_rendition_pairs(j, r, i) &&
           (svc_title_frame(j, i) - j->rend_first[r]) % j->subsample == 0;
}

/* Frames a stream holds not yet final (feed.c's window, the same the caller's pushes keep): a ladder's
 * frame takes a worker n_dis times longer than a pair's. */
static inline int svc_stream_window(const svc_job *j) { return j->n_dis > 1 ? j->n_threads + 2 : 2 * j->n_threads + 4; }

/* j is zeroed memory: locks, and one reference to the model. */
void svc_loop_init(svc_job *j, const svc_model *m);
/* Extractors (those the svc_feature_flag mask asks for, then those the model reads, one instance
 * per set of option values), metric columns and names (the model's outputs first), motion ring
 * length. A model feature svc does not compute, or an option its extractor does not take, is
 * refused by name (SVC_E_MODEL). n_threads must be set. */
int svc_loop_plan(svc_job *j, int64_t feature_flags, char *err, size_t err_len);
/* A new frame record at index n_frames (not yet visible to workers; the caller holds the lock
 * once workers run, and increments n_frames). */
int svc_loop_add_frame(svc_job *j, uint8_t *raw);
/* Starts the worker threads; fewer than asked still give the same results, none is an error. */
int svc_loop_start(svc_job *j, char *err, size_t err_len);
/* Asks the workers to stop. */
void svc_loop_cancel(svc_job *j);
/* Cancels, joins the workers, frees everything the job holds (not j itself). */
void svc_loop_destroy(svc_job *j);
/* Units (a frame's extractor) run by a worker other than the one that loaded the frame, so far.
 * Not in the public ABI: the native tests declare it to show a frame's extractors spreading over
 * the threads. */
int64_t svc_loop_units_shared(const svc_job *j);
/* The per-frame extractor whose output *output metric holds, or NULL (a model's score, motion). */
const svc_extractor *svc_loop_metric_extractor(const svc_job *j, int metric, int *output);
/* Tests only, not in the public ABI: while on, a worker never runs the units of a frame it loaded
 * (another worker does), so a test sees a frame's extractors spread over the threads on any
 * scheduler. Needs 2 threads or more per job. */
void svc_loop_test_hand_off(int on);

#endif
