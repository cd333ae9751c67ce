/*
 * The per-frame extractor interface. Each extractor lives in its own file
 * (feature_<name>.c, its AVX2 and AVX-512 kernels in feature_<name>_avx2.c and
 * feature_<name>_avx512.c beside it) and exposes one
 * svc_extractor descriptor, listed in the registry (registry.c). Extractors only turn one
 * frame pair into numbers: reading, threads, models and pooling belong to the frame loop.
 */
#ifndef SVC_EXTRACTOR_H
#define SVC_EXTRACTOR_H

#include "../internal.h"

/* An option a model file may set for an extractor's features (feature_opts_dicts). A value
 * other than the default is named in the outputs as the reference names them:
 * "<output>_<alias>_<%g value>", e.g. integer_adm2_egl_1. */
typedef struct svc_extractor_option {
    const char *name;  /* e.g. "adm_enhn_gain_limit" */
    const char *alias; /* e.g. "egl" */
    double def, min, max;
    /* A string option: its values, NULL-terminated; the option's number is the index of the
     * value (def, min, max likewise) and outputs name the string ("_psm_bilinear"). */
    const char *const *choices;
} svc_extractor_option;

/* What an extractor with history (xpsnr's temporal term) reads besides the frame pair. */
typedef struct svc_history {
    /* Reference lumas of frames i-1 and i-2 as svc_luma_u16 packs them; NULL before the first frame. */
    const uint16_t *luma[2];
    int frame_rate; /* whole frames per second (num / den, as FFmpeg's filters see the rate) */
} svc_history;

/* Earlier reference lumas an extractor may ask for. */
#define SVC_HISTORY_MAX 2

typedef struct svc_extractor {
    const char *name;                 /* "integer_vif", "integer_adm", "psnr", "float_ssim", ... */
    int n_outputs;
    const char *const *output_names;  /* reference feature names, e.g. "integer_vif_scale0" */
    /* Creates per-thread state for the geometry. cpu is SVC_CPU_SCALAR, SVC_CPU_AVX2 or
     * SVC_CPU_AVX512 (already resolved and supported; an AVX-512 CPU also runs AVX2); an
     * extractor without kernels for that path runs the best one it has and reports it. */
    void *(*create)(int w, int h, int pix_fmt, int bpc, int cpu);
    /* Backend the state actually uses: "scalar", "avx2" or "avx512". */
    const char *(*backend)(const void *state);
    /* Computes the outputs for one frame pair into out[0..n_outputs). */
    int (*compute)(void *state, const svc_picture *ref, const svc_picture *dis, double *out);
    void (*destroy)(void *state);
    /* Options (n_options of them); an extractor with options creates its state with their
     * values, in this order, through create_with. */
    int n_options;
    const svc_extractor_option *options;
    void *(*create_with)(int w, int h, int pix_fmt, int bpc, int cpu, const double *options);
    /* Optional: why these option values (each within its range) cannot be computed, or NULL. */
    const char *(*check)(const double *options);
    /* Optional: why a frame of this geometry is too small under these options (NULL: it fits);
     * the message of a job create_with refuses. */
    const char *(*too_small)(int w, int h, int pix_fmt, const double *options);
    /* Optional, for ladders (one reference picture, several distorted pictures per frame):
     * ladder_prepare computes what depends on the reference alone and keeps it in the state;
     * ladder_compute then scores one distorted picture against it (ref: the picture prepared),
     * its outputs bit-identical to compute(ref, dis). ladder_prepare returns SVC_OK, or
     * SVC_LADDER_PER_PAIR when this state has no ladder path (the frame loop then calls compute
     * for each pair), or a negative status. */
    int (*ladder_prepare)(void *state, const svc_picture *ref);
    int (*ladder_compute)(void *state, const svc_picture *ref, const svc_picture *dis, double *out);
    /* Optional, instead of compute: an extractor that reads the previous `history` reference lumas
     * (at most SVC_HISTORY_MAX) and the frame rate. The frame loop keeps those lumas in its ring and
     * runs the unit once they are stored. */
    int history;
    int (*compute_history)(void *state, const svc_picture *ref, const svc_picture *dis, const svc_history *past,
                           double *out);
    /* Optional, instead of create: a state for inputs of that svc_color_matrix (ssimulacra2's RGB). */
    void *(*create_for_matrix)(int w, int h, int pix_fmt, int bpc, int cpu, int color_matrix);
    /* Optional: output k's pooled mean over n frames' values (SVC_POOL_MEAN) on frames of that
     * geometry, for outputs whose summary is not the arithmetic mean (xpsnr's is its filter's). */
    double (*pooled_mean)(const double *values, int n, int output, int w, int h, int pix_fmt, int bpc);
} svc_extractor;

/* ladder_prepare's answer when the state scores ladders pair by pair. */
#define SVC_LADDER_PER_PAIR 1

/* A temporal extractor compares consecutive reference lumas (motion). The frame loop stores
 * each reference luma as packed 16-bit samples (svc_luma_u16), calls diff on consecutive
 * pairs in any order and from any thread, and derives each frame's outputs in frame order. */
/* The most outputs a temporal extractor derives per frame. */
#define SVC_TEMPORAL_MAX_OUTPUTS 8

typedef struct svc_temporal {
    const char *name;                /* "integer_motion", "float_motion" */
    int n_outputs;                   /* at most SVC_TEMPORAL_MAX_OUTPUTS */
    const char *const *output_names;
    void *(*create)(int w, int h, int bpc, int cpu);
    const char *(*backend)(const void *state);
    /* Difference of frames a (earlier) and b; reads only its arguments and the state (whose
     * scratch rows it may write: each worker has its own state). */
    double (*diff)(const void *state, const uint16_t *a, const uint16_t *b);
    void (*destroy)(void *state);
    /* Outputs of frame f from d = diff(f-1, f) (0 for the first frame) and d_next = diff(f, f+1)
     * (0 for the last frame), under option values opts (n_options of them, in order). */
    void (*derive)(double d, double d_next, int first, int last, const double *opts, double *out);
    /* Options, as for per-frame extractors; they act on derive only, so every set of values
     * shares one diff per frame pair. */
    int n_options;
    const svc_extractor_option *options;
} svc_temporal;

/* The descriptors (svc_extractor_<name>, svc_temporal_<name>), one per file, are declared by their
 * rows in registry.c. */

#endif
