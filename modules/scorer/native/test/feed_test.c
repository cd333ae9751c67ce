/* Fed-stream tests (svc_stream_feed, ABI minor 8): a stream read by the library's own thread from
 * a raw file and from pipes written by test threads, against the same frames pushed with
 * svc_stream_push (bit for bit); pipe ends inside a frame, sides of different lengths, frame
 * skips on a pipe, a ladder of pipes, and cancel/free while a writer blocks on its full pipe or
 * the reader waits on a silent one; file sides whose frames an index pipe names (svc_stream_feed_indexed,
 * ABI minor 16), against the same frames pushed, and its mistakes.
 * Usage: feed_test [DATA_DIR]   (default .: the folder holding models/ and fixtures/)
 * Prints "N passed, M failed"; exit status 0 only when nothing failed. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../include/svc_scorer.h"
#include "check.h"
#include "support.h"

static char err[512];

/* v01: 320x240 4:2:0 8-bit, 30 frames. */
#define W 320
#define H 240
#define FB (W * H * 3 / 2)
#define NF 30

static uint8_t *ref_frames, *dis_frames;
static int ref_fd = -1;

static void options(int32_t *o, int threads, int frame_cnt) {
    memset(o, 0, sizeof(int32_t) * SVC_OPT_COUNT);
    o[SVC_OPT_WIDTH] = W;
    o[SVC_OPT_HEIGHT] = H;
    o[SVC_OPT_PIX_FMT] = 420;
    o[SVC_OPT_BITDEPTH] = 8;
    o[SVC_OPT_THREADS] = threads;
    o[SVC_OPT_FRAME_CNT] = frame_cnt;
}

static int wait_stream(svc_stream *s, int max_ms) {
    const struct timespec tick = { 0, 1000000 };
    int rc = 0;
    for (int t = 0; t < max_ms && (rc = svc_stream_poll(s)) == 0; t++) nanosleep(&tick, NULL);
    return rc;
}

/* vmaf of every frame of a finished stream (its job view), n at most 64. */
static int vmaf_of(const svc_job *j, double *out) {
    for (int m = 0; m < svc_job_metric_count(j); m++)
        if (strcmp(svc_job_metric_name(j, m), "vmaf") == 0) return svc_job_frame_values(j, m, out, 64);
    return -1;
}

/* A writer thread: frames [first, first + count) of dis_frames (cycling), then `tail` bytes of the
 * next one, then closes its end; endless when count < 0. */
typedef struct {
    int fd, first, count, tail, wrote_all, write_errno;
    pthread_t thread;
} writer;

static int write_all(int fd, const uint8_t *p, size_t n) {
    while (n > 0) {
        const ssize_t r = write(fd, p, n);
        if (r < 0) {
            if (errno == EINTR) continue;
            return errno;
        }
        p += r;
        n -= (size_t)r;
    }
    return 0;
}

static void *write_frames(void *arg) {
    writer *w = arg;
    for (int k = 0; w->count < 0 || k < w->count; k++)
        if ((w->write_errno = write_all(w->fd, dis_frames + (size_t)((w->first + k) % NF) * FB, FB))) break;
    if (!w->write_errno && w->tail) w->write_errno = write_all(w->fd, dis_frames, (size_t)w->tail);
    w->wrote_all = !w->write_errno;
    close(w->fd);
    return NULL;
}

/* A pipe from svc_pipe whose write end is written by a thread; returns the read end. */
static int start_writer(writer *w, int first, int count, int tail) {
    int32_t fds[2];
    if (svc_pipe(fds, err, sizeof err) != SVC_OK) return -1;
    *w = (writer){ .fd = fds[1], .first = first, .count = count, .tail = tail };
    pthread_create(&w->thread, NULL, write_frames, w);
    return fds[0];
}

/* The stream of the v01 pair, pushed from memory: the results a fed stream must equal. */
static int pushed_vmaf(const svc_model *m, int ref_skip, int dis_skip, int n, double *out) {
    int32_t o[SVC_OPT_COUNT];
    options(o, 2, 0);
    svc_stream *s;
    if (svc_stream_create(m, o, SVC_OPT_COUNT, &s, err, sizeof err)) return -1;
    for (int k = 0; k < n; k++)
        svc_stream_push(s, ref_frames + (size_t)(ref_skip + k) * FB, FB, dis_frames + (size_t)(dis_skip + k) * FB, FB,
                        err, sizeof err);
    svc_stream_finish(s);
    const int rc = wait_stream(s, 60000) == 1 ? vmaf_of(svc_stream_job(s), out) : -1;
    svc_stream_free(s);
    return rc;
}

/* A pair stream fed from the raw reference file and a pipe; returns the stream (the caller frees). */
static svc_stream *fed_pair(const svc_model *m, int pipe_fd, int ref_skip, int dis_skip, int frame_cnt) {
    int32_t o[SVC_OPT_COUNT];
    options(o, 2, frame_cnt);
    svc_stream *s;
    if (svc_stream_create(m, o, SVC_OPT_COUNT, &s, err, sizeof err)) return NULL;
    const int32_t fds[2] = { ref_fd, pipe_fd }, kinds[2] = { SVC_INPUT_RAW, SVC_INPUT_PIPE },
                  skips[2] = { ref_skip, dis_skip };
    const char *names[2] = { "ref.yuv", "dis.mp4" };
    const int rc = svc_stream_feed(s, 2, fds, kinds, skips, names, err, sizeof err);
    close(pipe_fd); /* the library has its own duplicate */
    if (rc) {
        svc_stream_free(s);
        return NULL;
    }
    return s;
}

static void test_pair(const svc_model *m) {
    double want[64], got[64];
    CHECK(pushed_vmaf(m, 0, 0, NF, want) == NF, "pushed stream: %s", err);
    writer w;
    svc_stream *s = fed_pair(m, start_writer(&w, 0, NF, 0), 0, 0, 0);
    CHECK(s != NULL, "feed: %s", err);
    if (!s) return;
    CHECK(wait_stream(s, 60000) == 1, "fed stream finishes");
    CHECK(vmaf_of(svc_stream_job(s), got) == NF && memcmp(want, got, sizeof(double) * NF) == 0,
          "fed results equal pushed ones bit for bit");
    CHECK(svc_stream_frames_read(s) == NF, "every frame read natively: %lld", (long long)svc_stream_frames_read(s));
    CHECK(svc_stream_feed_end(s, 0) == 0 && svc_stream_feed_end(s, 1) == 0, "both sides ended on a frame boundary");
    uint8_t one = 0;
    CHECK(svc_stream_push(s, &one, 1, &one, 1, err, sizeof err) == SVC_E_INVALID_ARG, "push refused on a fed stream");
    svc_stream_free(s);
    pthread_join(w.thread, NULL);
    CHECK(w.wrote_all, "the writer wrote everything");

    /* frame_cnt: reading stops at 10 frames; the writer sees its reader gone. */
    s = fed_pair(m, start_writer(&w, 0, NF, 0), 0, 0, 10);
    CHECK(s && wait_stream(s, 60000) == 1 && svc_job_frame_count(svc_stream_job(s)) == 10, "frame_cnt 10");
    CHECK(s && vmaf_of(svc_stream_job(s), got) == 10 && memcmp(want, got, sizeof(double) * 10) == 0,
          "frame_cnt: the first 10 frames' values");
    CHECK(s && svc_stream_feed_end(s, 1) == -1, "the pipe was not read to its end");
    svc_stream_free(s);
    pthread_join(w.thread, NULL);
    CHECK(!w.wrote_all && w.write_errno == EPIPE, "the writer got EPIPE once the reader stopped");
}

static void test_skips(const svc_model *m) {
    double want[64], got[64];
    /* Reference frames 3.. against pipe frames 5..: the pipe's first 5 are read and discarded. */
    CHECK(pushed_vmaf(m, 3, 5, NF - 5, want) == NF - 5, "pushed stream: %s", err);
    writer w;
    svc_stream *s = fed_pair(m, start_writer(&w, 0, NF, 0), 3, 5, NF - 5);
    CHECK(s && wait_stream(s, 60000) == 1, "fed stream with skips finishes: %s", err);
    CHECK(s && vmaf_of(svc_stream_job(s), got) == NF - 5 && memcmp(want, got, sizeof(double) * (NF - 5)) == 0,
          "skips: results equal the pushed frames");
    svc_stream_free(s);
    pthread_join(w.thread, NULL);

    /* Skipping past the end of both sides leaves nothing. */
    s = fed_pair(m, start_writer(&w, 0, 2, 0), NF, 4, 0);
    CHECK(s && wait_stream(s, 60000) == SVC_E_GEOMETRY, "nothing after the skips fails");
    svc_job_error(svc_stream_job(s), err, sizeof err);
    CHECK(strcmp(err, "no frames to score after the skips") == 0, "message: %s", err);
    svc_stream_free(s);
    pthread_join(w.thread, NULL);
}

static void test_ends(const svc_model *m) {
    writer w;
    /* A pipe ending inside its 4th frame. */
    svc_stream *s = fed_pair(m, start_writer(&w, 0, 3, 1000), 0, 0, 0);
    CHECK(s && wait_stream(s, 60000) == SVC_E_GEOMETRY, "a partial frame fails");
    svc_job_error(svc_stream_job(s), err, sizeof err);
    CHECK(strstr(err, "dis.mp4: the input ends inside a frame (1000 of 115200 bytes)") != NULL, "message: %s", err);
    CHECK(svc_stream_feed_end(s, 1) == 1000, "the partial frame's bytes: %lld", (long long)svc_stream_feed_end(s, 1));
    svc_stream_free(s);
    pthread_join(w.thread, NULL);

    /* The pipe shorter than the reference. */
    s = fed_pair(m, start_writer(&w, 0, 12, 0), 0, 0, 0);
    CHECK(s && wait_stream(s, 60000) == SVC_E_GEOMETRY, "a shorter pipe fails");
    svc_job_error(svc_stream_job(s), err, sizeof err);
    CHECK(strcmp(err, "dis.mp4 has 12 frames after skipping, ref.yuv has more: lengths differ") == 0, "message: %s",
          err);
    CHECK(svc_stream_feed_end(s, 1) == 0 && svc_stream_feed_end(s, 0) == -1, "the pipe ended, the file did not");
    svc_stream_free(s);
    pthread_join(w.thread, NULL);

    /* The pipe longer than the reference (skipped to 25 frames): an endless writer. */
    s = fed_pair(m, start_writer(&w, 0, -1, 0), 5, 0, 0);
    CHECK(s && wait_stream(s, 60000) == SVC_E_GEOMETRY, "a longer pipe fails");
    svc_job_error(svc_stream_job(s), err, sizeof err);
    CHECK(strcmp(err, "ref.yuv has 25 frames after skipping, dis.mp4 has more: lengths differ") == 0, "message: %s",
          err);
    CHECK(svc_stream_feed_end(s, 0) == 0 && svc_stream_feed_end(s, 1) == -1, "the file ended, the pipe did not");
    svc_stream_free(s);
    pthread_join(w.thread, NULL);
    CHECK(w.write_errno == EPIPE, "the longer writer got EPIPE");
}

static void test_limit(const svc_model *m) {
    /* Two pipes of 10 frames with a limit of 5: refused as pushed frames beyond the limit are. */
    int32_t o[SVC_OPT_COUNT];
    options(o, 1, 0);
    o[SVC_OPT_MAX_FRAMES] = 5;
    svc_stream *s;
    CHECK(svc_stream_create(m, o, SVC_OPT_COUNT, &s, err, sizeof err) == SVC_OK, "create: %s", err);
    writer a, b;
    const int32_t fds[2] = { start_writer(&a, 0, 10, 0), start_writer(&b, 0, 10, 0) };
    const int32_t kinds[2] = { SVC_INPUT_PIPE, SVC_INPUT_PIPE }, skips[2] = { 0, 0 };
    const char *names[2] = { "a", "b" };
    CHECK(svc_stream_feed(s, 2, fds, kinds, skips, names, err, sizeof err) == SVC_OK, "feed: %s", err);
    close(fds[0]);
    close(fds[1]);
    CHECK(wait_stream(s, 60000) == SVC_E_GEOMETRY, "beyond the frame limit fails");
    svc_job_error(svc_stream_job(s), err, sizeof err);
    CHECK(strcmp(err, "more than 5 frames pushed (the frame limit)") == 0, "message: %s", err);
    svc_stream_free(s);
    pthread_join(a.thread, NULL);
    pthread_join(b.thread, NULL);
}

static double elapsed_ms(const struct timespec *t0) {
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (double)(t1.tv_sec - t0->tv_sec) * 1e3 + (double)(t1.tv_nsec - t0->tv_nsec) / 1e6;
}

static void test_cancel(const svc_model *m) {
    /* An endless writer blocks on its full pipe while the window is full; cancel stops the reader,
     * which closes the pipe: the writer sees EPIPE and ends. */
    writer w;
    int32_t o[SVC_OPT_COUNT];
    options(o, 1, 0);
    svc_stream *s;
    CHECK(svc_stream_create(m, o, SVC_OPT_COUNT, &s, err, sizeof err) == SVC_OK, "create: %s", err);
    const int rd = start_writer(&w, 0, -1, 0);
    const int32_t fds[2] = { rd, rd }, kinds[2] = { SVC_INPUT_PIPE, SVC_INPUT_PIPE }, skips[2] = { 0, 0 };
    const char *names[2] = { "a", "b" };
    /* Both sides read from one endless pipe: frames alternate between them; it never ends. */
    CHECK(svc_stream_feed(s, 2, fds, kinds, skips, names, err, sizeof err) == SVC_OK, "feed: %s", err);
    close(rd);
    const struct timespec nap = { 0, 300 * 1000000 };
    nanosleep(&nap, NULL);
    CHECK(svc_stream_poll(s) == 0, "still running");
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    svc_job_cancel((svc_job *)svc_stream_job(s));
    CHECK(wait_stream(s, 10000) == SVC_E_CANCELLED, "cancelled");
    pthread_join(w.thread, NULL);
    CHECK(w.write_errno == EPIPE && elapsed_ms(&t0) < 5000, "the blocked writer was released by EPIPE (%.0f ms)",
          elapsed_ms(&t0));
    svc_stream_free(s);

    /* A silent writer: the reader waits in poll; free returns promptly and closes the read end. */
    int32_t p[2];
    CHECK(svc_pipe(p, err, sizeof err) == SVC_OK, "svc_pipe: %s", err);
    CHECK(svc_stream_create(m, o, SVC_OPT_COUNT, &s, err, sizeof err) == SVC_OK, "create: %s", err);
    const int32_t fds2[2] = { ref_fd, p[0] }, kinds2[2] = { SVC_INPUT_RAW, SVC_INPUT_PIPE };
    const char *names2[2] = { "ref.yuv", "silent" };
    CHECK(svc_stream_feed(s, 2, fds2, kinds2, skips, names2, err, sizeof err) == SVC_OK, "feed: %s", err);
    close(p[0]);
    nanosleep(&nap, NULL);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    svc_stream_free(s);
    CHECK(elapsed_ms(&t0) < 1000, "free while the reader waits: %.0f ms", elapsed_ms(&t0));
    uint8_t byte = 0;
    CHECK(write(p[1], &byte, 1) < 0 && errno == EPIPE, "the read end is closed after free");
    close(p[1]);
}

static void test_ladder(const svc_model *m) {
    /* Two renditions from pipes (the second one the distorted clip skipped by 2) against the file. */
    int32_t o[SVC_OPT_COUNT];
    options(o, 2, 0);
    const int n = NF - 2;
    svc_stream *pushed, *fed;
    CHECK(svc_ladder_create(m, 2, o, SVC_OPT_COUNT, &pushed, err, sizeof err) == SVC_OK, "create: %s", err);
    uint8_t *both = malloc(2 * FB);
    for (int k = 0; k < n; k++) {
        memcpy(both, dis_frames + (size_t)k * FB, FB);
        memcpy(both + FB, dis_frames + (size_t)(k + 2) * FB, FB);
        svc_stream_push(pushed, ref_frames + (size_t)k * FB, FB, both, 2 * FB, err, sizeof err);
    }
    free(both);
    svc_stream_finish(pushed);
    CHECK(svc_ladder_create(m, 2, o, SVC_OPT_COUNT, &fed, err, sizeof err) == SVC_OK, "create: %s", err);
    writer w1, w2;
    const int32_t fds[3] = { ref_fd, start_writer(&w1, 0, n, 0), start_writer(&w2, 0, NF, 0) };
    const int32_t kinds[3] = { SVC_INPUT_RAW, SVC_INPUT_PIPE, SVC_INPUT_PIPE }, skips[3] = { 0, 0, 2 };
    const char *names[3] = { "ref.yuv", "r1", "r2" };
    /* The reference has 30 frames, the renditions 28: frame_cnt keeps the pair of lengths apart. */
    CHECK(svc_stream_feed(fed, 3, fds, kinds, skips, names, err, sizeof err) == SVC_OK, "feed: %s", err);
    close(fds[1]);
    close(fds[2]);
    CHECK(wait_stream(pushed, 60000) == 1, "pushed ladder finishes");
    const int state = wait_stream(fed, 60000);
    svc_job_error(svc_stream_job(fed), err, sizeof err);
    /* Every rendition ended after 28 frames, the reference did not. */
    CHECK(state == SVC_E_GEOMETRY, "the ladder's lengths differ: %d", state);
    CHECK(strcmp(err, "r1 has 28 frames after skipping, ref.yuv has more: lengths differ") == 0, "message: %s", err);
    svc_stream_free(fed);
    pthread_join(w1.thread, NULL);
    pthread_join(w2.thread, NULL);

    /* With frame_cnt 28 it completes and equals the pushed ladder, rendition by rendition. */
    options(o, 2, n);
    CHECK(svc_ladder_create(m, 2, o, SVC_OPT_COUNT, &fed, err, sizeof err) == SVC_OK, "create: %s", err);
    const int32_t fds2[3] = { ref_fd, start_writer(&w1, 0, n, 0), start_writer(&w2, 0, NF, 0) };
    CHECK(svc_stream_feed(fed, 3, fds2, kinds, skips, names, err, sizeof err) == SVC_OK, "feed: %s", err);
    close(fds2[1]);
    close(fds2[2]);
    CHECK(wait_stream(fed, 60000) == 1, "fed ladder finishes");
    for (int r = 0; r < 2; r++) {
        double want[64], got[64];
        const int a = vmaf_of(svc_ladder_rendition(pushed, r), want), b = vmaf_of(svc_ladder_rendition(fed, r), got);
        CHECK(a == n && b == n && memcmp(want, got, sizeof(double) * (size_t)n) == 0, "rendition %d bit for bit", r);
    }
    CHECK(svc_ladder_reference_loads(fed) == n, "one reference load a frame");
    svc_stream_free(fed);
    svc_stream_free(pushed);
    pthread_join(w1.thread, NULL);
    pthread_join(w2.thread, NULL);
}

/* A fed ladder whose renditions pair their own ranges (svc_ladder_range): each pipe carries only
 * the frames its rendition pairs (one from frame 4, one ending after frame 19), so the sides do
 * not end together, yet the ladder ends with the reference and each rendition equals the pushed
 * ladder's, bit for bit. */
static void test_ladder_ranges(const svc_model *m) {
    int32_t o[SVC_OPT_COUNT];
    options(o, 2, 0);
    const int first[2] = { 4, 0 }, count[2] = { NF - 4, 20 };
    svc_stream *pushed, *fed;
    CHECK(svc_ladder_create(m, 2, o, SVC_OPT_COUNT, &pushed, err, sizeof err) == SVC_OK, "create: %s", err);
    CHECK(svc_ladder_create(m, 2, o, SVC_OPT_COUNT, &fed, err, sizeof err) == SVC_OK, "create: %s", err);
    for (int r = 0; r < 2; r++) {
        CHECK(svc_ladder_range(pushed, r, first[r], count[r], err, sizeof err) == SVC_OK, "range: %s", err);
        CHECK(svc_ladder_range(fed, r, first[r], count[r], err, sizeof err) == SVC_OK, "range: %s", err);
    }
    uint8_t *both = malloc(2 * FB);
    for (int k = 0; both && k < NF; k++) {
        for (int r = 0; r < 2; r++) memcpy(both + (size_t)r * FB, dis_frames + (size_t)k * FB, FB);
        svc_stream_push(pushed, ref_frames + (size_t)k * FB, FB, both, 2 * FB, err, sizeof err);
    }
    free(both);
    svc_stream_finish(pushed);
    writer w1, w2;
    const int32_t fds[3] = { ref_fd, start_writer(&w1, first[0], count[0], 0), start_writer(&w2, first[1], count[1], 0) };
    const int32_t kinds[3] = { SVC_INPUT_RAW, SVC_INPUT_PIPE, SVC_INPUT_PIPE }, skips[3] = { 0, 0, 0 };
    const char *names[3] = { "ref.yuv", "late", "short" };
    CHECK(svc_stream_feed(fed, 3, fds, kinds, skips, names, err, sizeof err) == SVC_OK, "feed: %s", err);
    close(fds[1]);
    close(fds[2]);
    CHECK(wait_stream(pushed, 60000) == 1, "pushed ladder finishes");
    const int state = wait_stream(fed, 60000);
    svc_job_error(svc_stream_job(fed), err, sizeof err);
    CHECK(state == 1, "fed ladder of ranges finishes: %s", err);
    for (int r = 0; r < 2; r++) {
        double want[64], got[64];
        const int a = vmaf_of(svc_ladder_rendition(pushed, r), want), b = vmaf_of(svc_ladder_rendition(fed, r), got);
        CHECK(a == count[r] && b == count[r] && memcmp(want, got, sizeof(double) * (size_t)count[r]) == 0,
              "rendition %d: its %d frames bit for bit (%d, %d)", r, count[r], a, b);
    }
    CHECK(svc_stream_feed_end(fed, 2) == -1, "the short rendition was not read past its range");
    svc_stream_free(fed);
    svc_stream_free(pushed);
    pthread_join(w1.thread, NULL);
    pthread_join(w2.thread, NULL);
}

/* An index pipe holding `count` indices (little-endian uint32), then `tail` bytes of one more;
 * written whole before the feed (a few bytes: the pipe holds them), its write end closed. */
static int index_pipe(const uint32_t *indices, int count, int tail) {
    int32_t fds[2];
    if (svc_pipe(fds, err, sizeof err) != SVC_OK) return -1;
    uint8_t bytes[4 * 32];
    for (int k = 0; k < count; k++)
        for (int b = 0; b < 4; b++) bytes[4 * k + b] = (uint8_t)(indices[k] >> (8 * b));
    memset(bytes + 4 * count, 0, (size_t)tail);
    const int rc = write_all(fds[1], bytes, (size_t)(4 * count + tail));
    close(fds[1]);
    if (rc) {
        close(fds[0]);
        return -1;
    }
    return fds[0];
}

/* A pair stream fed from the two raw files of v01, each indexed by its own pipe of indices. */
static svc_stream *indexed_pair(const svc_model *m, int dis_fd, int ref_skip, const uint32_t *ref_indices,
                                int ref_count, const uint32_t *dis_indices, int dis_count, int dis_tail) {
    int32_t o[SVC_OPT_COUNT];
    options(o, 2, 0);
    svc_stream *s;
    if (svc_stream_create(m, o, SVC_OPT_COUNT, &s, err, sizeof err)) return NULL;
    const int32_t fds[2] = { ref_fd, dis_fd }, kinds[2] = { SVC_INPUT_RAW, SVC_INPUT_RAW }, skips[2] = { ref_skip, 0 },
                  index_fds[2] = { index_pipe(ref_indices, ref_count, 0), index_pipe(dis_indices, dis_count, dis_tail) };
    const char *names[2] = { "ref.yuv", "dis.yuv" };
    const int rc = svc_stream_feed_indexed(s, 2, fds, kinds, skips, index_fds, names, err, sizeof err);
    close(index_fds[0]);
    close(index_fds[1]);
    if (rc) {
        svc_stream_free(s);
        return NULL;
    }
    return s;
}

static void test_indexed(const svc_model *m) {
    int dis_fd = open(path("fixtures/v01_testsrc2_420_8_x264.dis.yuv"), O_RDONLY | O_CLOEXEC);
    CHECK(dis_fd >= 0, "open the distorted file");
    if (dis_fd < 0) return;
    /* Frames with gaps (an alignment's pairs), the reference after a skip of 2: frames 2 + index. */
    enum { N = 10 };
    const uint32_t ref_indices[N] = { 0, 1, 3, 4, 5, 8, 9, 10, 12, 27 }, dis_indices[N] = { 1, 2, 3, 5, 6, 7, 9, 11, 12, 29 };
    int32_t o[SVC_OPT_COUNT];
    options(o, 2, 0);
    double want[64], got[64];
    svc_stream *s;
    CHECK(svc_stream_create(m, o, SVC_OPT_COUNT, &s, err, sizeof err) == SVC_OK, "create: %s", err);
    for (int k = 0; k < N; k++)
        svc_stream_push(s, ref_frames + (size_t)(2 + ref_indices[k]) * FB, FB, dis_frames + (size_t)dis_indices[k] * FB,
                        FB, err, sizeof err);
    svc_stream_finish(s);
    CHECK(wait_stream(s, 60000) == 1 && vmaf_of(svc_stream_job(s), want) == N, "pushed frames: %s", err);
    svc_stream_free(s);
    s = indexed_pair(m, dis_fd, 2, ref_indices, N, dis_indices, N, 0);
    CHECK(s && wait_stream(s, 60000) == 1, "indexed stream finishes: %s", err);
    CHECK(s && vmaf_of(svc_stream_job(s), got) == N && memcmp(want, got, sizeof(double) * N) == 0,
          "indexed frames equal the same frames pushed bit for bit");
    CHECK(s && svc_stream_frames_read(s) == N && svc_stream_feed_end(s, 0) == 0 && svc_stream_feed_end(s, 1) == 0,
          "every index read, both index pipes ended on a boundary");
    svc_stream_free(s);

    /* Mistakes: an index repeated, one beyond the file after the skip (28 frames), a partial index,
     * index pipes of different lengths. */
    const uint32_t repeated[3] = { 0, 3, 3 }, beyond[3] = { 0, 1, 28 }, plain[3] = { 0, 1, 2 };
    const struct {
        const uint32_t *ref;
        int ref_count;
        const uint32_t *dis;
        int dis_count, dis_tail, rc;
        const char *message;
    } bad[] = {
        { plain, 3, repeated, 3, 0, SVC_E_INVALID_ARG, "dis.yuv: frame index 3 after 3: the indices must increase" },
        { beyond, 3, plain, 3, 0, SVC_E_INVALID_ARG,
          "ref.yuv: frame index 28 is beyond the file's 28 frames after skipping" },
        { plain, 3, plain, 2, 3, SVC_E_GEOMETRY, "dis.yuv: the input ends inside a frame index (3 of 4 bytes)" },
        { plain, 3, plain, 2, 0, SVC_E_GEOMETRY, "dis.yuv has 2 frames after skipping, ref.yuv has more: lengths differ" },
    };
    for (size_t b = 0; b < sizeof bad / sizeof bad[0]; b++) {
        s = indexed_pair(m, dis_fd, 2, bad[b].ref, bad[b].ref_count, bad[b].dis, bad[b].dis_count, bad[b].dis_tail);
        CHECK(s && wait_stream(s, 60000) == bad[b].rc, "mistake %zu fails", b);
        if (s) svc_job_error(svc_stream_job(s), err, sizeof err);
        CHECK(s && strcmp(err, bad[b].message) == 0, "message: %s", err);
        svc_stream_free(s);
    }

    /* A pipe side takes no index pipe. */
    CHECK(svc_stream_create(m, o, SVC_OPT_COUNT, &s, err, sizeof err) == SVC_OK, "create: %s", err);
    const int32_t fds[2] = { ref_fd, dis_fd }, kinds[2] = { SVC_INPUT_RAW, SVC_INPUT_PIPE }, skips[2] = { 0, 0 },
                  index_fds[2] = { -1, dis_fd };
    const char *names[2] = { "ref.yuv", "dis.mp4" };
    CHECK(svc_stream_feed_indexed(s, 2, fds, kinds, skips, index_fds, names, err, sizeof err) == SVC_E_INVALID_ARG,
          "an index pipe on a pipe side is refused");
    svc_stream_free(s);
    close(dis_fd);
}

static void test_arguments(const svc_model *m) {
    int32_t o[SVC_OPT_COUNT];
    options(o, 1, 0);
    svc_stream *s;
    CHECK(svc_stream_create(m, o, SVC_OPT_COUNT, &s, err, sizeof err) == SVC_OK, "create: %s", err);
    const int32_t fds[2] = { ref_fd, ref_fd }, kinds[2] = { SVC_INPUT_RAW, 9 }, skips[2] = { 0, 0 };
    const char *names[2] = { "a", "b" };
    CHECK(svc_stream_feed(s, 3, fds, kinds, skips, names, err, sizeof err) == SVC_E_INVALID_ARG, "3 sides for a pair");
    CHECK(svc_stream_feed(s, 2, fds, kinds, skips, names, err, sizeof err) == SVC_E_INVALID_ARG, "unknown kind");
    const int32_t bad_fds[2] = { ref_fd, -1 }, raw_kinds[2] = { SVC_INPUT_RAW, SVC_INPUT_RAW };
    CHECK(svc_stream_feed(s, 2, bad_fds, raw_kinds, skips, names, err, sizeof err) == SVC_E_IO, "bad descriptor");
    /* Two regular files: the fed stream reads them like a file job. */
    CHECK(svc_stream_feed(s, 2, fds, raw_kinds, skips, names, err, sizeof err) == SVC_OK, "two files: %s", err);
    CHECK(wait_stream(s, 60000) == 1 && svc_stream_frames_read(s) == NF, "two files read");
    CHECK(svc_stream_feed(s, 2, fds, raw_kinds, skips, names, err, sizeof err) == SVC_E_INVALID_ARG, "fed twice");
    svc_stream_free(s);
}

int main(int argc, char **argv) {
    if (argc > 1) snprintf(data_dir, sizeof data_dir, "%s", argv[1]);
    signal(SIGPIPE, SIG_IGN); /* writers see EPIPE as an error code */
    size_t len, rl, dl;
    uint8_t *json = slurp(path("models/vmaf_v0.6.1.json"), &len);
    ref_frames = slurp(path("fixtures/v01_testsrc2_420_8_x264.ref.yuv"), &rl);
    dis_frames = slurp(path("fixtures/v01_testsrc2_420_8_x264.dis.yuv"), &dl);
    ref_fd = open(path("fixtures/v01_testsrc2_420_8_x264.ref.yuv"), O_RDONLY | O_CLOEXEC);
    int setup_passed = passed, setup_failed = failed;
    CHECK(json && ref_frames && dis_frames && ref_fd >= 0 && rl == (size_t)NF * FB && dl == (size_t)NF * FB,
          "read the model and the v01 fixture under %s", data_dir);
    svc_model *m = NULL;
    CHECK(json && svc_model_load((const char *)json, len, &m, err, sizeof err) == SVC_OK, "model: %s", err);
    report_case("setup", setup_passed, setup_failed);
    if (m && ref_frames && dis_frames && ref_fd >= 0) {
        RUN_CASE("pair", test_pair(m));
        RUN_CASE("skips", test_skips(m));
        RUN_CASE("ends", test_ends(m));
        RUN_CASE("limit", test_limit(m));
        RUN_CASE("cancel", test_cancel(m));
        RUN_CASE("ladder", test_ladder(m));
        RUN_CASE("ladder_ranges", test_ladder_ranges(m));
        RUN_CASE("arguments", test_arguments(m));
        RUN_CASE("indexed", test_indexed(m));
    }
    svc_model_free(m);
    free(json);
    free(ref_frames);
    free(dis_frames);
    if (ref_fd >= 0) close(ref_fd);
    return finish_checks();
}
