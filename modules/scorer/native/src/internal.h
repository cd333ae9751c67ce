/*
 * Internal interface between the scorer's parts. Each feature extractor lives in its own
 * file (feature_<name>.c, and feature_<name>_avx2.c for its AVX2 kernels, compiled with
 * -mavx2) and exposes one svc_extractor descriptor. The driver (scorer.c) owns reading,
 * threading, the model and pooling; extractors only turn one frame pair into numbers.
 */
#ifndef SVC_INTERNAL_H
#define SVC_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "../include/svc_scorer.h"

/* One plane. bpc == 8: uint8_t samples; bpc > 8: uint16_t samples (host order, already
 * decoded from little-endian). stride is in bytes. */
typedef struct svc_plane {
    void *data;
    ptrdiff_t stride;
    int w, h;
} svc_plane;

/* One decoded frame: planes Y, Cb, Cr. */
typedef struct svc_picture {
    svc_plane plane[3];
    int bpc;     /* 8, 10, 12 or 16 */
    int pix_fmt; /* 420, 422, 444 */
} svc_picture;

/* Allocates planes for the geometry (32-byte aligned rows); frees them. */
int svc_picture_alloc(svc_picture *pic, int w, int h, int pix_fmt, int bpc);
void svc_picture_free(svc_picture *pic);
/* Size in bytes of one frame in the raw planar file layout (16-bit words above 8 bits). */
int64_t svc_frame_bytes(int w, int h, int pix_fmt, int bpc);
/* Decodes one raw planar frame (file layout) into pic. */
int svc_picture_from_raw(svc_picture *pic, const uint8_t *buf, size_t len);

/* ---- video readers (reader.c) ---- */
typedef struct svc_video svc_video;
/* kind: SVC_INPUT_RAW (geometry required) or SVC_INPUT_Y4M (geometry from header; the
 * w/h/pix_fmt/bpc arguments are ignored). */
int svc_video_open(const char *path, int kind, int w, int h, int pix_fmt, int bpc,
                   svc_video **out, char *err, size_t err_len);
void svc_video_geometry(const svc_video *v, int *w, int *h, int *pix_fmt, int *bpc);
int64_t svc_video_frame_count(const svc_video *v);
/* Reads frame idx into pic (allocated for the video's geometry). Thread-safe (pread). */
int svc_video_read(svc_video *v, int64_t idx, svc_picture *pic, char *err, size_t err_len);
void svc_video_close(svc_video *v);

/* ---- per-frame extractors ---- */

/* An option a model file may set for an extractor's features (feature_opts_dicts). A value
 * other than the default is named in the outputs as the reference names them:
 * "<output>_<alias>_<%g value>", e.g. integer_adm2_egl_1. */
typedef struct svc_extractor_option {
    const char *name;  /* e.g. "adm_enhn_gain_limit" */
    const char *alias; /* e.g. "egl" */
    double def, min, max;
} svc_extractor_option;

typedef struct svc_extractor {
    const char *name;                 /* "integer_vif", "integer_adm", "psnr", "float_ssim", ... */
    int n_outputs;
    const char *const *output_names;  /* reference feature names, e.g. "integer_vif_scale0" */
    /* Creates per-thread state for the geometry. cpu is SVC_CPU_SCALAR or SVC_CPU_AVX2 (already
     * resolved and supported); an extractor without AVX2 kernels runs scalar and reports it. */
    void *(*create)(int w, int h, int pix_fmt, int bpc, int cpu);
    /* Backend the state actually uses: "scalar" or "avx2". */
    const char *(*backend)(const void *state);
    /* Computes the outputs for one frame pair into out[0..n_outputs). */
    int (*compute)(void *state, const svc_picture *ref, const svc_picture *dis, double *out);
    void (*destroy)(void *state);
    /* Options (n_options of them); an extractor with options creates its state with their
     * values, in this order, through create_with. */
    int n_options;
    const svc_extractor_option *options;
    void *(*create_with)(int w, int h, int pix_fmt, int bpc, int cpu, const double *options);
} svc_extractor;

extern const svc_extractor svc_extractor_integer_vif;   /* integer_vif_scale0..3 */
extern const svc_extractor svc_extractor_integer_adm;   /* integer_adm2, integer_adm_scale0..3, ... */
extern const svc_extractor svc_extractor_psnr;          /* psnr_y, psnr_cb, psnr_cr */
extern const svc_extractor svc_extractor_float_ssim;    /* float_ssim */
extern const svc_extractor svc_extractor_float_ms_ssim; /* float_ms_ssim */

/* ---- motion (temporal, so not a per-frame extractor) ----
 * The driver blurs each reference frame's luma (any thread), then takes the SAD of
 * consecutive blurred frames in frame order, and derives integer_motion / integer_motion2. */
typedef struct svc_motion svc_motion;
svc_motion *svc_motion_create(int w, int h, int bpc, int cpu);
const char *svc_motion_backend(const svc_motion *m);
size_t svc_motion_blur_len(const svc_motion *m); /* elements of uint16_t per blurred frame */
int svc_motion_blur(svc_motion *m, const svc_picture *ref, uint16_t *blurred);
double svc_motion_sad(const svc_motion *m, const uint16_t *a, const uint16_t *b);
void svc_motion_destroy(svc_motion *m);

/* ---- CPU dispatch (cpu.c) ---- */
int svc_cpu_has_avx2(void);
/* Resolves a request (AUTO/SCALAR/AVX2) to a supported backend, honouring SVC_SCORER_CPU. */
int svc_cpu_resolve(int requested);

/* ---- errors ---- */
void svc_set_err(char *err, size_t err_len, const char *fmt, ...);

#endif
