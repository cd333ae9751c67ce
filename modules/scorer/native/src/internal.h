/*
 * What every part of the native scorer shares: pictures (picture.c), video readers
 * (reader.c), CPU dispatch (cpu.c) and error messages. The parts, each depending only on
 * those below it:
 *   scorer.c       public ABI (svc_scorer.h): options, job start, results, pooling, streams
 *   frame_loop.c   worker threads, frame order, motion ring, prediction (job.h)
 *   feature/registry.c  which extractor produces which feature, and each one's facts (registry.h)
 *   feature/<name>.c    one extractor per file (feature/extractor.h), its SIMD kernels in
 *                       feature/x86/<name>_avx2.c and _avx512.c (built with -mavx2, -mavx512*)
 *   model.c        the model: features it reads, options, outputs (model.h)
 *   predict.c      a frame's outputs from its feature values (model.h)
 *   json.c         the JSON reader model.c reads model files with (json.h)
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
/* dst[i] = src[i] for n samples: 8-bit rows widened for the 16-bit kernels (SSE2, the x86-64
 * baseline, 16 samples a step; plain C elsewhere). */
void svc_widen_u8(const uint8_t *src, uint16_t *dst, int n);
/* Decodes one raw planar frame (file layout) into pic. */
int svc_picture_from_raw(svc_picture *pic, const uint8_t *buf, size_t len);
/* One plane as floats on the 8-bit scale plus offset, as the reference's float extractors
 * copy pictures: v + offset at 8 bits, v / 2^(bpc-8) + offset above. dst has stride p->w. */
void svc_plane_to_float(const svc_plane *p, int bpc, float offset, float *dst);
/* The luma plane as packed 16-bit samples (w * h), what temporal extractors compare. */
void svc_luma_u16(const svc_picture *pic, uint16_t *dst);

/* ---- video readers (reader.c) ---- */
typedef struct svc_video svc_video;
/* kind: SVC_INPUT_RAW (geometry required) or SVC_INPUT_Y4M (geometry from header; the
 * w/h/pix_fmt/bpc arguments are ignored). */
int svc_video_open(const char *path, int kind, int w, int h, int pix_fmt, int bpc,
                   svc_video **out, char *err, size_t err_len);
/* The same from a descriptor the caller opened: the video reads its own duplicate (the caller may
 * close its own at once); name is for messages only. kind AUTO: by the Y4M signature. */
int svc_video_open_fd(int fd, const char *name, int kind, int w, int h, int pix_fmt, int bpc, int64_t max_frames,
                      svc_video **out, char *err, size_t err_len);
void svc_video_geometry(const svc_video *v, int *w, int *h, int *pix_fmt, int *bpc);
int64_t svc_video_frame_count(const svc_video *v);
/* Whole frames per second from a Y4M header's F tag (num / den); 0 for raw input or no tag. */
int svc_video_frame_rate(const svc_video *v);
/* Bytes of one frame in the file layout. */
int64_t svc_video_frame_bytes(const svc_video *v);
/* Reads frame idx's bytes (file layout, svc_video_frame_bytes of them) into buf. Thread-safe (pread). */
int svc_video_read_raw(svc_video *v, int64_t idx, uint8_t *buf, char *err, size_t err_len);
/* Reads frame idx into pic (allocated for the video's geometry). Thread-safe (pread). */
int svc_video_read(svc_video *v, int64_t idx, svc_picture *pic, char *err, size_t err_len);
void svc_video_close(svc_video *v);

/* ---- CPU dispatch (cpu.c) ---- */
int svc_cpu_has_avx2(void);
int svc_cpu_has_avx512(void);
/* AVX512-VNNI on top of svc_cpu_has_avx512: the AVX-512 kernels' vpdpwssd builds. */
int svc_cpu_has_avx512_vnni(void);
/* Resolves a request (AUTO/SCALAR/AVX2/AVX512) to a supported backend, honouring SVC_SCORER_CPU. */
int svc_cpu_resolve(int requested);

/* ---- errors ---- */
void svc_set_err(char *err, size_t err_len, const char *fmt, ...);

#endif
