/*
 * svc_scorer: public C ABI of the native scorer, designed for bun:ffi.
 *
 * Rules of the ABI:
 *  - Opaque handles; every buffer passed with an explicit length.
 *  - Functions return an int status (SVC_OK or a negative SVC_E_*); on failure a
 *    human-readable message is written to the caller's (err, err_len) buffer,
 *    always NUL-terminated when err_len > 0.
 *  - No callbacks. Long work runs on native threads owned by the library: the caller
 *    starts a job, polls it, then reads results, so the JavaScript thread never blocks.
 *  - Thread-safe for distinct handles; one handle is used by one caller thread.
 */
#ifndef SVC_SCORER_H
#define SVC_SCORER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SVC_ABI_MAJOR 1

enum svc_status {
    SVC_OK = 0,
    SVC_E_INVALID_ARG = -1, /* bad option value, NULL handle, unknown enum */
    SVC_E_IO = -2,          /* input cannot be opened or read */
    SVC_E_GEOMETRY = -3,    /* truncated file, size not a multiple of the frame, mismatched pair */
    SVC_E_MODEL = -4,       /* model JSON invalid or unsupported */
    SVC_E_NOMEM = -5,
    SVC_E_INTERNAL = -6,
    SVC_E_CANCELLED = -7
};

/* CPU backend request (SVC_SCORER_CPU / options.backend). */
/* SVC_CPU_AVX512 (since ABI minor 3): AVX-512 F/BW/VL/DQ/CD kernels where an extractor has them,
 * AVX2 for the others. */
enum svc_cpu { SVC_CPU_AUTO = 0, SVC_CPU_SCALAR = 1, SVC_CPU_AVX2 = 2, SVC_CPU_AVX512 = 3 };

/* Extra feature extractors, OR-ed into SVC_OPT_FEATURES; the model's own features always run. Each
 * extractor's bit is svc_feature_flag(i) of the feature list below (0: not asked for by a flag); a
 * bit keeps its meaning across versions (psnr 1 << 0, float_ssim 1 << 1, float_ms_ssim 1 << 2, ...). */

enum svc_pix_fmt { SVC_PIX_420 = 420, SVC_PIX_422 = 422, SVC_PIX_444 = 444 };

/* Input container. RAW needs width/height/pix_fmt/bitdepth; Y4M carries its own geometry.
 * SVC_INPUT_PIPE (since ABI minor 8, svc_stream_feed only): raw frames of the stream's geometry
 * read in order from a pipe (a decoder's stdout). */
enum svc_input_kind { SVC_INPUT_AUTO = 0, SVC_INPUT_RAW = 1, SVC_INPUT_Y4M = 2, SVC_INPUT_PIPE = 3 };

/* Indexes of the int32 options array given to svc_job_start / svc_stream_create.
 * Unused entries are 0; an array shorter than SVC_OPT_COUNT means the rest are 0. */
enum svc_opt {
    SVC_OPT_INPUT_KIND = 0,  /* svc_input_kind; AUTO = by ".y4m" suffix */
    SVC_OPT_WIDTH = 1,
    SVC_OPT_HEIGHT = 2,
    SVC_OPT_PIX_FMT = 3,     /* 420, 422, 444 */
    SVC_OPT_BITDEPTH = 4,    /* 8, 10, 12, 16 */
    SVC_OPT_THREADS = 5,     /* 0 = 1 thread */
    SVC_OPT_CPU = 6,         /* svc_cpu */
    SVC_OPT_FEATURES = 7,    /* svc_feature_flag bits (below) */
    SVC_OPT_SUBSAMPLE = 8,   /* score every Nth frame; 0/1 = every frame */
    SVC_OPT_FRAME_CNT = 9,   /* max frames to score; 0 = all */
    SVC_OPT_FRAME_SKIP_REF = 10,  /* frames skipped at the start of the reference */
    SVC_OPT_FRAME_SKIP_DIST = 11, /* frames skipped at the start of the distorted */
    /* Since ABI minor 4: */
    SVC_OPT_REF_KIND = 12,   /* svc_input_kind of the reference alone; 0 = SVC_OPT_INPUT_KIND */
    SVC_OPT_DIS_KIND = 13,   /* svc_input_kind of the distorted alone; 0 = SVC_OPT_INPUT_KIND */
    SVC_OPT_MAX_FRAMES = 14, /* an input with more frames is refused up front; 0 = SVC_MAX_FRAMES_DEFAULT */
    /* Since ABI minor 10: */
    SVC_OPT_SHOTS = 15,      /* 1: measure each reference frame's cut from the previous one (svc_job_frame_cuts) */
    /* Since ABI minor 11: */
    SVC_OPT_FRAME_RATE = 16, /* whole frames per second (xpsnr's temporal term); 0 = the reference Y4M's F tag, else 25 */
    SVC_OPT_COLOR_MATRIX = 17, /* svc_color_matrix of the inputs (ssimulacra2's RGB conversion) */
    /* Since ABI minor 12: one segment of a longer title, whose per-frame values equal, bit for bit,
     * the same frames of one pass over the title (see "Segments" below). */
    SVC_OPT_SEGMENT_FIRST = 18,   /* the title's index of the segment's first own frame */
    SVC_OPT_SEGMENT_FRAMES = 19,  /* the segment's own frames; 0 = not a segment */
    SVC_OPT_SEGMENT_CONTEXT = 20, /* svc_segment_context bits: which context frames are read */
    /* Since ABI minor 13: */
    SVC_OPT_SEGMENT_LEAD = 21, /* context frames before the segment (0 = one with SVC_SEGMENT_CONTEXT_BEFORE) */
    SVC_OPT_COUNT = 22
};

/* Segments (since ABI minor 12). Motion at frame i compares reference frames i-1 and i, and its
 * motion2/motion3 also read frame i+1, so a segment [first, first + frames) of a title reads one
 * reference context frame on each side: the frame before it (unless first is 0, the title's first
 * frame) and the frame after it (unless the segment ends the title). Since ABI minor 13,
 * SVC_OPT_SEGMENT_LEAD reads more frames before it (at most the title's frames before it), for
 * the extractors that read earlier reference frames (xpsnr: two) and for shots with subsampling
 * (a cut measure spans the subsample frames since the previous scored frame). The inputs given (after the
 * frame skips) start at the context frame before, or at the first own frame when there is none.
 * Context frames are read (their reference only) and never scored or reported; "first" and "last"
 * in libvmaf's motion rules are the title's; subsampling follows the title's frame index (a
 * segment scores its frames whose title index is a multiple of SVC_OPT_SUBSAMPLE). The job reads
 * exactly the context and own frames (SVC_OPT_FRAME_CNT must be 0) and fails with SVC_E_GEOMETRY
 * when the inputs hold fewer. Results (frame values, pooling, frames done) cover the scored own
 * frames; concatenated in segment order they are the one pass's. */
enum svc_segment_context { SVC_SEGMENT_CONTEXT_BEFORE = 1, SVC_SEGMENT_CONTEXT_AFTER = 2 };

/* Y'CbCr matrix of the inputs (SVC_OPT_COLOR_MATRIX): how ssimulacra2 turns frames into RGB. */
enum svc_color_matrix { SVC_MATRIX_BT709 = 0, SVC_MATRIX_BT601 = 1, SVC_MATRIX_BT2020 = 2 };

/* Frames an input may hold when SVC_OPT_MAX_FRAMES is 0. */
#define SVC_MAX_FRAMES_DEFAULT 1000000

/* Pooling methods for svc_job_pooled. */
/* SVC_POOL_MEAN of xpsnr's outputs is the filter's own summary (its pooled_mean in feature/xpsnr.c), since ABI minor 11. */
enum svc_pool { SVC_POOL_MEAN = 0, SVC_POOL_MIN = 1, SVC_POOL_MAX = 2, SVC_POOL_HARMONIC_MEAN = 3 };

/* ---- library identity ---- */
const char *svc_version(void);          /* semantic version of the library, e.g. "0.1.0" */
int svc_abi_minor(void);

/* Since ABI minor 14: the extractors this library runs, one per registry row (per-frame ones in
 * the order their outputs become metrics, then the temporal ones), and each one's facts, so
 * callers take the feature list from the library. i runs over 0..svc_feature_count()-1; past the
 * end names are NULL and counts 0. */
int svc_feature_count(void);
const char *svc_feature_name(int i);           /* "integer_vif", "psnr", "float_motion", ... */
int svc_feature_flag(int i);                   /* its SVC_OPT_FEATURES bit; 0: runs only when a model reads it */
const char *svc_feature_implementation(int i); /* whose numbers it reproduces, e.g. "libvmaf 3.2.0" */
int svc_feature_output_count(int i);
const char *svc_feature_output_name(int i, int k); /* reference names, e.g. "psnr_y" */
/* Reference frames before each frame its outputs read: 0 the pair alone, 1 motion (which also
 * reads the frame after), 2 xpsnr. */
int svc_feature_temporal(int i);
/* The smallest frame it accepts: out3 = { enum svc_min_rule, width, height }. */
enum svc_min_rule {
    SVC_MIN_NONE = 0,        /* any frame */
    SVC_MIN_EACH_SIDE = 1,   /* width and height each at least (luma samples) */
    SVC_MIN_LONGER_SIDE = 2, /* the longer side at least width */
    SVC_MIN_EACH_PLANE = 3   /* every plane, chroma included, at least width x height */
};
int svc_feature_min_frame(int i, int32_t *out3);
/* Options a model file may set for it (feature_opts_dicts keys). */
int svc_feature_option_count(int i);
const char *svc_feature_option_name(int i, int k);
int svc_abi_patch(void);
/* Backend that SVC_CPU_AUTO resolves to on this CPU: "avx512", "avx2" or "scalar". */
const char *svc_cpu_best(void);
/* 1 when the CPU can run the given backend. */
int svc_cpu_supported(int cpu);

/* ---- models (reference JSON model format, e.g. vmaf_v0.6.1.json) ---- */
typedef struct svc_model svc_model;
int svc_model_load(const char *json, size_t json_len, svc_model **out, char *err, size_t err_len);
void svc_model_free(svc_model *m);
int svc_model_feature_count(const svc_model *m);
const char *svc_model_feature_name(const svc_model *m, int i); /* reference names, e.g. "integer_adm2" */
/* Since ABI minor 2. Options the model file sets for feature i (feature_opts_dicts): key k
 * and its value (true/false as 1/0; since ABI minor 7 a string value, such as
 * speed_prescale_method's "bilinear", reads as NaN). */
int svc_model_feature_option_count(const svc_model *m, int i);
const char *svc_model_feature_option(const svc_model *m, int i, int k, double *value);
/* Since ABI minor 2. The model's outputs, in order: per model of a bundle (one model: "vmaf"),
 * its score, then for a bootstrap collection each other member's score and the four
 * statistics, named as the reference names them ("vmaf_0001", ..., "vmaf_bagging",
 * "vmaf_stddev", "vmaf_ci_p95_lo", "vmaf_ci_p95_hi"). Jobs report them first among their metrics. */
int svc_model_output_count(const svc_model *m);
int svc_model_output_name(const svc_model *m, int k, char *buf, size_t len);
/* Since ABI minor 2. 0 when this library computes every feature the model reads with the
 * options its file sets; otherwise SVC_E_MODEL naming the feature or option it lacks. */
int svc_model_check(const svc_model *m, char *err, size_t err_len);
/* Since ABI minor 2. Several models scored over one extraction of the union of their features
 * (the reference CLI's repeated --model): outputs are named by names[i] instead of "vmaf".
 * The bundle holds its own references: the models may be freed at once. */
int svc_model_bundle(const svc_model *const *models, const char *const *names, int n, svc_model **out,
                     char *err, size_t err_len);

/* ---- file jobs: score two files on library threads ---- */
typedef struct svc_job svc_job;
int svc_job_start(const svc_model *m, const char *ref_path, const char *dis_path,
                  const int32_t *opts, int n_opts, svc_job **out, char *err, size_t err_len);
/* Since ABI minor 4: jobs on descriptors the caller opened (and checked). The library reads its own
 * duplicates with pread and never opens a path, so the caller may close its descriptors once the
 * call returns. ref_name/dis_name appear in messages only. An input kind AUTO means: Y4M when the
 * file starts with the Y4M signature, raw otherwise. Only regular files are accepted.
 *
 * svc_job_open_fd checks the options and returns at once; a library thread then validates both
 * inputs, the geometry and the frame counts (reading a Y4M's frame markers), allocating nothing per
 * frame and no picture. svc_job_opened says when it is done (0 still validating, 1 valid, negative:
 * failed, the message from svc_job_error). svc_job_memory then tells what running it will need at
 * most, so a caller can admit it against a budget before svc_job_run starts the threads.
 * svc_job_start_fd is open + wait + run. A job opened but never run is released with svc_job_free. */
int svc_job_open_fd(const svc_model *m, int ref_fd, const char *ref_name, int dis_fd, const char *dis_name,
                    const int32_t *opts, int n_opts, svc_job **out, char *err, size_t err_len);
int svc_job_opened(const svc_job *j);
/* Since ABI minor 12: frames the opened job reads (after the skips and frame_cnt; a segment's
 * with its context frames), once svc_job_opened returned 1; -1 before. A segment job's plan counts
 * a title with it. */
int64_t svc_job_input_frames(const svc_job *j);
int64_t svc_job_memory(const svc_job *j); /* bytes, an upper estimate; < 0 on a NULL job */
int svc_job_run(svc_job *j, char *err, size_t err_len);
int svc_job_start_fd(const svc_model *m, int ref_fd, const char *ref_name, int dis_fd, const char *dis_name,
                     const int32_t *opts, int n_opts, svc_job **out, char *err, size_t err_len);
/* 0 = still running, 1 = finished OK, negative = failed (status code). Never blocks. */
int svc_job_poll(svc_job *j);
int svc_job_frames_done(const svc_job *j);
void svc_job_cancel(svc_job *j);          /* asks the threads to stop; poll then returns SVC_E_CANCELLED */
int svc_job_error(const svc_job *j, char *err, size_t err_len); /* message of a failed job */
/* Geometry actually used (from options or the Y4M header). */
int svc_job_geometry(const svc_job *j, int32_t *out4); /* width, height, pix_fmt, bitdepth */
/* Results, valid once poll returned 1. */
int svc_job_frame_count(const svc_job *j);
int svc_job_metric_count(const svc_job *j);
const char *svc_job_metric_name(const svc_job *j, int metric); /* "vmaf", "integer_vif_scale0", ... */
/* Extractor names and the backend each ran on, for provenance. */
int svc_job_extractor_count(const svc_job *j);
const char *svc_job_extractor_name(const svc_job *j, int i);    /* "integer_vif", "psnr", ... */
const char *svc_job_extractor_backend(const svc_job *j, int i); /* "scalar", "avx2" or "avx512" */
/* Copies per-frame values of one metric into out[0..n) ; returns values written. */
int svc_job_frame_values(const svc_job *j, int metric, double *out, int n);
/* The same from the first-th scored frame on: out[k] is frame first+k (streams read only new frames).
 * Since ABI minor 1. */
int svc_job_frame_values_from(const svc_job *j, int metric, int first, double *out, int n);
int svc_job_pooled(const svc_job *j, int metric, int pool, double *out);
/* Since ABI minor 10, with SVC_OPT_SHOTS: the hard-cut measure of scored frames first..first+n-1,
 * out[k] for scored frame first+k: the largest histogram distance (0..1) of consecutive reference
 * frames between the previous scored frame (excluded) and this one (included), so a cut inside a
 * subsampled gap opens the first scored frame after it; 0 for the title's frame 0. Since ABI
 * minor 13 also on a segment, given SVC_OPT_SEGMENT_LEAD of min(subsample, its first frame). Each distance
 * needs only the reference frame before, as motion does. Returns values written; SVC_E_INVALID_ARG
 * when the job measured no cuts. */
int svc_job_frame_cuts(const svc_job *j, int first, double *out, int n);
void svc_job_free(svc_job *j); /* cancels and joins if still running */

/* ---- streams: frames pushed from memory (gRPC ScoreStream) ---- */
typedef struct svc_stream svc_stream;
/* opts as above; WIDTH/HEIGHT/PIX_FMT/BITDEPTH are required. Since ABI minor 4 the threads start
 * with the first push (or the finish): svc_job_memory(svc_stream_job(s)) tells what the stream
 * needs before any picture exists; a push beyond SVC_OPT_MAX_FRAMES frames is refused. */
int svc_stream_create(const svc_model *m, const int32_t *opts, int n_opts, svc_stream **out,
                      char *err, size_t err_len);
/* Bytes of one frame (all planes) for the stream's geometry. */
int64_t svc_stream_frame_bytes(const svc_stream *s);
/* Queues one frame pair (copied); scoring happens on library threads. */
int svc_stream_push(svc_stream *s, const uint8_t *ref, size_t ref_len, const uint8_t *dis,
                    size_t dis_len, char *err, size_t err_len);
/* Ends input. After this, poll reaches 1 once every frame is scored. */
int svc_stream_finish(svc_stream *s);
/* Number of leading frames whose values are final (motion needs the next frame). */
int svc_stream_frames_ready(const svc_stream *s);
int svc_stream_poll(svc_stream *s); /* as svc_job_poll */
/* The result accessors of a stream: the stream exposes its underlying job view. */
const svc_job *svc_stream_job(const svc_stream *s);
void svc_stream_free(svc_stream *s);

/* ---- ladders (since ABI minor 6): one reference, several renditions, one pass ----
 * A ladder is a stream whose every frame is one reference picture and n_renditions distorted
 * pictures (svc_stream_push's dis holds them back to back, n_renditions x frame bytes). Each
 * reference picture is loaded once, its motion computed once and (since ABI minor 9) VIF's and
 * ADM's reference-side statistics computed once; every rendition is scored
 * against it into its own results, which equal, frame by frame, a stream of that pair alone.
 * The stream functions apply (push, finish, poll, frames_ready, free; svc_stream_job's view is
 * the first rendition's results until done, svc_job_memory of it covers the whole ladder). */
#define SVC_LADDER_MAX_RENDITIONS 64
int svc_ladder_create(const svc_model *m, int n_renditions, const int32_t *opts, int n_opts, svc_stream **out,
                      char *err, size_t err_len);
/* Rendition r's results (the job accessors), once svc_stream_poll returned 1; NULL before. Valid
 * until the ladder is freed. */
const svc_job *svc_ladder_rendition(svc_stream *s, int r);
/* Reference pictures loaded and motion differences computed so far: the proof of one pass. */
int64_t svc_ladder_reference_loads(const svc_stream *s);
int64_t svc_ladder_motion_diffs(const svc_stream *s);
/* Reference-side analyses so far (since ABI minor 9): VIF's and ADM's statistics of the reference
 * picture, computed once per frame for all renditions; one per frame per extractor that shares
 * them (integer_vif, integer_adm), whatever the number of renditions. */
int64_t svc_ladder_reference_analyses(const svc_stream *s);
/* Rendition r pairs only the title frames [first, first + frames) of the ladder (since ABI minor
 * 15; every frame unless set), before any frame is pushed or fed: renditions aligned at different
 * offsets share one reference pass, each over its own overlap. A rendition is scored only on its
 * frames: its distorted picture of another frame is not read (a fed ladder reads its side only
 * there; a push still carries every rendition's picture, the others' bytes ignored), its results
 * (svc_ladder_rendition) hold its frames alone, numbered from its first, and subsampling, motion's
 * first and last frames and the frames earlier extractors read (xpsnr) count from its own first
 * frame, as when it is scored alone. A segment ladder's range is in title frames too: its result
 * holds the frames of its range among the segment's own. */
int svc_ladder_range(svc_stream *s, int r, int64_t first, int64_t frames, char *err, size_t err_len);

/* ---- fed streams (since ABI minor 8): frames read from descriptors by a library thread ----
 * Instead of svc_stream_push, a stream or ladder (before its first push) is fed from n = 1 +
 * renditions descriptors: fds[0] the reference, then the distorted input (a pair) or each
 * rendition. kinds[k] is SVC_INPUT_RAW, SVC_INPUT_Y4M or SVC_INPUT_AUTO for a regular file
 * (read with pread from frame skips[k] on, validated like a file job's input; its geometry must
 * be the stream's), or SVC_INPUT_PIPE for a pipe of raw frames of the stream's geometry (read in
 * order; its first skips[k] frames are read and discarded). names[k] appear in messages only.
 * The library reads its own duplicates (the caller may close its descriptors once the call
 * returns; the writer's end of a pipe must be closed by everyone but the writer, or its end is
 * never seen) on a thread of its own, never the caller's, and closes them when it stops reading.
 *
 * The thread queues a frame once every side gave one, at most a small window of frames ahead of
 * the finalised ones (memory is a few frames whatever the clip's length; a writer waits on its
 * full pipe). It ends the stream when every side ends together (or at SVC_OPT_FRAME_CNT frames;
 * a ladder's rendition with a range, svc_ladder_range, is read only within it and takes no part)
 * and fails it with SVC_E_GEOMETRY when sides end at different frames ("A has N frames after
 * skipping, B has more: lengths differ"), when a pipe ends inside a frame, or when nothing is left
 * after the skips. Poll, frames_ready, the results and svc_job_cancel work as for pushed streams;
 * svc_stream_push and svc_stream_finish are refused on a fed stream. */
int svc_stream_feed(svc_stream *s, int n, const int32_t *fds, const int32_t *kinds, const int32_t *skips,
                    const char *const *names, char *err, size_t err_len);
/* svc_stream_feed whose file sides may be indexed (since ABI minor 16): index_fds[k] >= 0 (a
 * pipe; NULL or -1 elsewhere: none) names the frames file side k gives, in place of reading it in
 * order. Each index is a little-endian uint32, the frame's index after skips[k] (frame
 * skips[k] + index of the file); the indices must increase and name a frame of the file. The
 * index pipe is read as it comes (polled with the other pipes) and its end is the side's end, as
 * for a pipe side (svc_stream_feed_end: 0 on an index boundary, else the bytes of the partial
 * index); an index not increasing or beyond the file fails the stream (SVC_E_INVALID_ARG), an
 * index pipe ending inside an index too (SVC_E_GEOMETRY). A caller choosing the frames (an
 * alignment's pairs, with gaps) so passes none of a file's bytes itself. A pipe side takes no
 * index pipe. */
int svc_stream_feed_indexed(svc_stream *s, int n, const int32_t *fds, const int32_t *kinds, const int32_t *skips,
                            const int32_t *index_fds, const char *const *names, char *err, size_t err_len);
/* Side k's end as the thread saw it: -1 while it was not read to its end (it had more, or the
 * stream stopped first), else the bytes of the partial frame it ended inside (0: on a frame
 * boundary). A caller whose pipe is written by a child process accepts the end of a side as the
 * end of the clip only once the child exited cleanly. */
int64_t svc_stream_feed_end(const svc_stream *s, int side);
/* Frames the feeding thread read from every side and queued (skipped frames excluded). */
int64_t svc_stream_frames_read(const svc_stream *s);
/* A pipe for a fed stream: out[0] the read end, out[1] the write end, both close-on-exec, its
 * capacity raised to 1 MiB where the system allows. */
int svc_pipe(int32_t *out2, char *err, size_t err_len);

#ifdef __cplusplus
}
#endif
#endif
