/* Reader tests: writes raw and Y4M files of every supported layout (plus broken ones) into a
 * temporary directory and checks geometry, frame counts, decoded samples and error codes;
 * then reads concurrently from threads and fuzzes the parser with a fixed seed.
 * Build: cc -O2 -std=c11 -Wall -Wextra -pthread -Isrc test/reader_test.c src/reader.c \
 *          src/picture.c -o /tmp/reader_test
 * Prints "N passed, M failed"; exit status 0 only when nothing failed. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../src/internal.h"
#include "check.h"


static char dir[256];

static const char *tmp_path(const char *name) {
    static char p[512];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return p;
}

static void write_file(const char *path, const void *data, size_t len) {
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, len, f) != len) {
        perror(path);
        exit(2);
    }
    fclose(f);
}

static void chroma(int w, int h, int fmt, int *cw, int *ch) {
    *cw = fmt == 444 ? w : (w + 1) / 2;
    *ch = fmt == 420 ? (h + 1) / 2 : h;
}

/* Deterministic sample of (frame, plane, x, y) within the bit depth. */
static unsigned sample(int f, int p, int x, int y, int bpc) {
    const unsigned max = (1u << bpc) - 1;
    return (unsigned)(f * 131 + p * 71 + x * 7 + y * 13) & max;
}

/* Appends one frame of the file layout to buf; returns bytes written. */
static size_t put_frame(uint8_t *buf, int f, int w, int h, int fmt, int bpc) {
    int cw, ch;
    chroma(w, h, fmt, &cw, &ch);
    size_t n = 0;
    for (int p = 0; p < 3; p++) {
        const int pw = p ? cw : w, ph = p ? ch : h;
        for (int y = 0; y < ph; y++)
            for (int x = 0; x < pw; x++) {
                const unsigned v = sample(f, p, x, y, bpc);
                buf[n++] = (uint8_t)v;
                if (bpc > 8) buf[n++] = (uint8_t)(v >> 8);
            }
    }
    return n;
}

static int picture_matches(const svc_picture *pic, int f) {
    for (int p = 0; p < 3; p++) {
        const svc_plane *pl = &pic->plane[p];
        for (int y = 0; y < pl->h; y++)
            for (int x = 0; x < pl->w; x++) {
                const uint8_t *row = (const uint8_t *)pl->data + y * pl->stride;
                const unsigned got = pic->bpc == 8 ? row[x] : ((const uint16_t *)row)[x];
                if (got != sample(f, p, x, y, pic->bpc)) return 0;
            }
    }
    return 1;
}

/* Opens, checks geometry and count, reads every frame (last first) and checks samples. */
static void check_video(const char *path, int kind, int w, int h, int fmt, int bpc, int frames) {
    char err[256];
    svc_video *v = NULL;
    int rc = svc_video_open(path, kind, kind == SVC_INPUT_RAW ? w : 0, kind == SVC_INPUT_RAW ? h : 0,
                            kind == SVC_INPUT_RAW ? fmt : 0, kind == SVC_INPUT_RAW ? bpc : 0, &v,
                            err, sizeof err);
    CHECK(rc == SVC_OK, "%s: open rc %d: %s", path, rc, err);
    if (rc != SVC_OK) return;
    int gw, gh, gf, gb;
    svc_video_geometry(v, &gw, &gh, &gf, &gb);
    CHECK(gw == w && gh == h && gf == fmt && gb == bpc, "%s: geometry %dx%d %d %d", path, gw, gh, gf, gb);
    CHECK(svc_video_frame_count(v) == frames, "%s: %lld frames", path, (long long)svc_video_frame_count(v));
    svc_picture pic;
    if (svc_picture_alloc(&pic, w, h, fmt, bpc) == SVC_OK) {
        for (int f = frames - 1; f >= 0; f--) {
            rc = svc_video_read(v, f, &pic, err, sizeof err);
            CHECK(rc == SVC_OK && picture_matches(&pic, f), "%s: frame %d rc %d %s", path, f, rc, err);
        }
        rc = svc_video_read(v, frames, &pic, err, sizeof err);
        CHECK(rc == SVC_E_INVALID_ARG, "%s: read past end rc %d", path, rc);
        rc = svc_video_read(v, -1, &pic, err, sizeof err);
        CHECK(rc == SVC_E_INVALID_ARG, "%s: read -1 rc %d", path, rc);
        svc_picture_free(&pic);
    }
    /* A picture of another geometry is refused, not overrun. */
    if (svc_picture_alloc(&pic, w + 1, h, fmt, bpc) == SVC_OK) {
        rc = svc_video_read(v, 0, &pic, err, sizeof err);
        CHECK(rc == SVC_E_INVALID_ARG, "%s: mismatched picture rc %d", path, rc);
        svc_picture_free(&pic);
    }
    svc_video_close(v);
}

/* Expects open to fail with code and a message containing needle. */
static void check_fails(const char *path, int kind, int w, int h, int fmt, int bpc, int code,
                        const char *needle) {
    char err[256] = "";
    svc_video *v = (svc_video *)1;
    const int rc = svc_video_open(path, kind, w, h, fmt, bpc, &v, err, sizeof err);
    CHECK(rc == code && v == NULL, "%s: rc %d (want %d): %s", path, rc, code, err);
    CHECK(strstr(err, needle) != NULL, "%s: message '%s' lacks '%s'", path, err, needle);
    if (rc == SVC_OK) svc_video_close(v);
}

static uint8_t *big;
#define BIG (4 << 20)

static size_t make_raw(const char *name, int w, int h, int fmt, int bpc, int frames) {
    size_t n = 0;
    for (int f = 0; f < frames; f++) n += put_frame(big + n, f, w, h, fmt, bpc);
    write_file(tmp_path(name), big, n);
    return n;
}

/* Y4M with the given header tail and FRAME line; frames complete, then extra bytes appended. */
static size_t make_y4m(const char *name, const char *header, const char *frame_line, int w, int h,
                       int fmt, int bpc, int frames, const char *extra, size_t extra_len) {
    size_t n = (size_t)sprintf((char *)big, "%s\n", header);
    for (int f = 0; f < frames; f++) {
        n += (size_t)sprintf((char *)big + n, "%s\n", frame_line);
        n += put_frame(big + n, f, w, h, fmt, bpc);
    }
    memcpy(big + n, extra, extra_len);
    n += extra_len;
    write_file(tmp_path(name), big, n);
    return n;
}

static void test_raw(void) {
    static const struct { int w, h, fmt, bpc, frames; } cases[] = {
        { 16, 8, 420, 8, 3 },  { 15, 9, 420, 8, 2 },  { 16, 8, 422, 8, 2 },  { 7, 5, 444, 8, 2 },
        { 16, 8, 420, 10, 3 }, { 17, 3, 422, 10, 2 }, { 9, 9, 444, 12, 2 },  { 5, 7, 420, 12, 1 },
        { 8, 8, 420, 16, 2 },  { 3, 1, 444, 16, 2 },  { 1, 1, 420, 8, 4 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char name[64];
        snprintf(name, sizeof name, "raw_%zu.yuv", i);
        make_raw(name, cases[i].w, cases[i].h, cases[i].fmt, cases[i].bpc, cases[i].frames);
        check_video(tmp_path(name), SVC_INPUT_RAW, cases[i].w, cases[i].h, cases[i].fmt, cases[i].bpc,
                    cases[i].frames);
    }
    /* Wrong size: the message names both sizes and the geometry. */
    write_file(tmp_path("raw_1000.yuv"), big, 1000);
    check_fails(tmp_path("raw_1000.yuv"), SVC_INPUT_RAW, 320, 240, 420, 8, SVC_E_GEOMETRY,
                "not a whole number of 320x240 420 8-bit frames (115200 bytes each)");
    const size_t one = make_raw("raw_short.yuv", 16, 8, 420, 10, 1);
    write_file(tmp_path("raw_short.yuv"), big, one - 1);
    check_fails(tmp_path("raw_short.yuv"), SVC_INPUT_RAW, 16, 8, 420, 10, SVC_E_GEOMETRY, "not a whole number");
    write_file(tmp_path("empty.yuv"), big, 0);
    check_fails(tmp_path("empty.yuv"), SVC_INPUT_RAW, 16, 8, 420, 8, SVC_E_GEOMETRY, "empty");
    check_fails(tmp_path("missing.yuv"), SVC_INPUT_RAW, 16, 8, 420, 8, SVC_E_IO, "cannot open");
    check_fails(dir, SVC_INPUT_RAW, 16, 8, 420, 8, SVC_E_IO, "is a directory; only regular files are scored");
    /* Geometry out of range or unknown layout. */
    check_fails(tmp_path("raw_0.yuv"), SVC_INPUT_RAW, 0, 8, 420, 8, SVC_E_GEOMETRY, "invalid raw geometry");
    check_fails(tmp_path("raw_0.yuv"), SVC_INPUT_RAW, 16, 16385, 420, 8, SVC_E_GEOMETRY, "invalid raw geometry");
    check_fails(tmp_path("raw_0.yuv"), SVC_INPUT_RAW, 16, 8, 411, 8, SVC_E_GEOMETRY, "invalid raw geometry");
    check_fails(tmp_path("raw_0.yuv"), SVC_INPUT_RAW, 16, 8, 420, 9, SVC_E_GEOMETRY, "invalid raw geometry");
    check_fails(tmp_path("raw_0.yuv"), 7, 16, 8, 420, 8, SVC_E_INVALID_ARG, "input kind");

    /* Samples above the bit depth's maximum are passed through unchanged. */
    uint8_t over[16 * 8 * 3 / 2 * 2];
    memset(over, 0xff, sizeof over);
    write_file(tmp_path("raw_over.yuv"), over, sizeof over);
    char err[256];
    svc_video *v = NULL;
    svc_picture pic;
    if (svc_video_open(tmp_path("raw_over.yuv"), SVC_INPUT_RAW, 16, 8, 420, 10, &v, err, sizeof err) == SVC_OK &&
        svc_picture_alloc(&pic, 16, 8, 420, 10) == SVC_OK) {
        CHECK(svc_video_read(v, 0, &pic, err, sizeof err) == SVC_OK && ((uint16_t *)pic.plane[0].data)[0] == 0xffff,
              "over-range 10-bit sample not passed through");
        svc_picture_free(&pic);
    } else {
        CHECK(0, "raw_over open: %s", err);
    }
    svc_video_close(v);
    /* An error buffer of length 0 or NULL is never written. */
    char untouched[4] = "abc";
    v = NULL;
    CHECK(svc_video_open(tmp_path("missing.yuv"), SVC_INPUT_RAW, 16, 8, 420, 8, &v, untouched, 0) == SVC_E_IO &&
              strcmp(untouched, "abc") == 0, "err_len 0 written");
    CHECK(svc_video_open(tmp_path("missing.yuv"), SVC_INPUT_RAW, 16, 8, 420, 8, &v, NULL, 0) == SVC_E_IO, "NULL err");
}

static void test_y4m(void) {
    static const struct { const char *header, *frame; int w, h, fmt, bpc, frames; } cases[] = {
        { "YUV4MPEG2 W16 H8 F30:1 Ip A1:1 C420jpeg XYSCSS=420JPEG", "FRAME", 16, 8, 420, 8, 3 },
        { "YUV4MPEG2 W15 H9 C420paldv", "FRAME", 15, 9, 420, 8, 2 },
        { "YUV4MPEG2 W16 H8 C420mpeg2", "FRAME Ixyz Xa=b", 16, 8, 420, 8, 2 },
        { "YUV4MPEG2 C420 H8 W16", "FRAME", 16, 8, 420, 8, 2 },
        { "YUV4MPEG2 W16 H8 F25:1", "FRAME", 16, 8, 420, 8, 2 }, /* no C: 4:2:0 8-bit */
        { "YUV4MPEG2 W7 H5 C422", "FRAME", 7, 5, 422, 8, 2 },
        { "YUV4MPEG2 W7 H5 C444", "FRAME", 7, 5, 444, 8, 1 },
        { "YUV4MPEG2 W16 H8 C420p10 XYSCSS=420P10", "FRAME", 16, 8, 420, 10, 3 },
        { "YUV4MPEG2 W9 H3 C422p10", "FRAME", 9, 3, 422, 10, 2 },
        { "YUV4MPEG2 W9 H3 C420p12", "FRAME", 9, 3, 420, 12, 2 },
        { "YUV4MPEG2 W9 H4 C422p12", "FRAME", 9, 4, 422, 12, 2 },
        { "YUV4MPEG2 W6 H6 C444p12", "FRAME", 6, 6, 444, 12, 2 },
        { "YUV4MPEG2 W6 H6 C444p10", "FRAME", 6, 6, 444, 10, 2 },
        { "YUV4MPEG2 W6 H6 C444p16", "FRAME", 6, 6, 444, 16, 2 },
        { "YUV4MPEG2  W4   H2  ", "FRAME   ", 4, 2, 420, 8, 2 }, /* extra spaces */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char name[64];
        snprintf(name, sizeof name, "y4m_%zu.y4m", i);
        make_y4m(name, cases[i].header, cases[i].frame, cases[i].w, cases[i].h, cases[i].fmt, cases[i].bpc,
                 cases[i].frames, "", 0);
        check_video(tmp_path(name), SVC_INPUT_Y4M, cases[i].w, cases[i].h, cases[i].fmt, cases[i].bpc,
                    cases[i].frames);
    }
    /* FRAME lines of different lengths in one file. */
    size_t n = (size_t)sprintf((char *)big, "YUV4MPEG2 W4 H2 C444\n");
    for (int f = 0; f < 3; f++) {
        n += (size_t)sprintf((char *)big + n, f == 1 ? "FRAME Ib XFOO=bar\n" : "FRAME\n");
        n += put_frame(big + n, f, 4, 2, 444, 8);
    }
    write_file(tmp_path("mixed.y4m"), big, n);
    check_video(tmp_path("mixed.y4m"), SVC_INPUT_Y4M, 4, 2, 444, 8, 3);
    /* AUTO picks Y4M by suffix, raw otherwise. */
    check_video(tmp_path("mixed.y4m"), SVC_INPUT_AUTO, 4, 2, 444, 8, 3);

    const char *trunc_extra = "FRAME\nabc";
    make_y4m("trunc.y4m", "YUV4MPEG2 W16 H8 C420", "FRAME", 16, 8, 420, 8, 2, trunc_extra, strlen(trunc_extra));
    check_fails(tmp_path("trunc.y4m"), SVC_INPUT_Y4M, 0, 0, 0, 0, SVC_E_GEOMETRY, "the last Y4M frame (2) is truncated");
    make_y4m("trunc_line.y4m", "YUV4MPEG2 W16 H8 C420", "FRAME", 16, 8, 420, 8, 1, "FRA", 3);
    check_fails(tmp_path("trunc_line.y4m"), SVC_INPUT_Y4M, 0, 0, 0, 0, SVC_E_GEOMETRY, "bad Y4M frame marker");
    make_y4m("badmark.y4m", "YUV4MPEG2 W16 H8", "FRAMES", 16, 8, 420, 8, 1, "", 0);
    check_fails(tmp_path("badmark.y4m"), SVC_INPUT_Y4M, 0, 0, 0, 0, SVC_E_GEOMETRY, "bad Y4M frame marker");
    make_y4m("trailing.y4m", "YUV4MPEG2 W16 H8", "FRAME", 16, 8, 420, 8, 1, "\n", 1);
    check_fails(tmp_path("trailing.y4m"), SVC_INPUT_Y4M, 0, 0, 0, 0, SVC_E_GEOMETRY, "bad Y4M frame marker");
    make_y4m("noframes.y4m", "YUV4MPEG2 W16 H8", "FRAME", 16, 8, 420, 8, 0, "", 0);
    check_fails(tmp_path("noframes.y4m"), SVC_INPUT_Y4M, 0, 0, 0, 0, SVC_E_GEOMETRY, "no frames");
    write_file(tmp_path("empty.y4m"), big, 0);
    check_fails(tmp_path("empty.y4m"), SVC_INPUT_Y4M, 0, 0, 0, 0, SVC_E_GEOMETRY, "empty");
    check_fails(tmp_path("missing.y4m"), SVC_INPUT_Y4M, 0, 0, 0, 0, SVC_E_IO, "cannot open");

    static const struct { const char *header, *needle; } bad[] = {
        { "YUV4MPEG2 W16 H8 Cmono", "monochrome" },
        { "YUV4MPEG2 W16 H8 Cmono12", "monochrome" },
        { "YUV4MPEG2 W16 H8 C411", "unsupported Y4M colour space C411" },
        { "YUV4MPEG2 W16 H8 C444alpha", "unsupported Y4M colour space" },
        { "YUV4MPEG2 W16 H8 C420p9", "unsupported Y4M colour space" },
        { "YUV4MPEG2 W16 H8 C420jpegp10", "unsupported Y4M colour space" },
        { "YUV4MPEG2 H8 C420", "lacks the width" },
        { "YUV4MPEG2 W16", "lacks the height" },
        { "YUV4MPEG2 W0 H8", "invalid Y4M width '0'" },
        { "YUV4MPEG2 W16 H16385", "invalid Y4M height '16385'" },
        { "YUV4MPEG2 W99999999999999999999 H8", "invalid Y4M width" },
        { "YUV4MPEG2 W-16 H8", "invalid Y4M width '-16'" },
        { "YUV4MPEG2 W1x6 H8", "invalid Y4M width '1x6'" },
        { "YUV4MPEG W16 H8", "not a Y4M file" },
        { "YUV4MPEG2W16 H8", "not a Y4M file" },
        { "RIFF1234", "not a Y4M file" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char name[64];
        snprintf(name, sizeof name, "bad_%zu.y4m", i);
        make_y4m(name, bad[i].header, "FRAME", 16, 8, 420, 8, 1, "", 0);
        check_fails(tmp_path(name), SVC_INPUT_Y4M, 0, 0, 0, 0, SVC_E_GEOMETRY, bad[i].needle);
    }
    /* A header line with no newline in the first 4096 bytes. */
    memset(big, 'A', 8192);
    memcpy(big, "YUV4MPEG2 W16 H8 X", 18);
    write_file(tmp_path("longhdr.y4m"), big, 8192);
    check_fails(tmp_path("longhdr.y4m"), SVC_INPUT_Y4M, 0, 0, 0, 0, SVC_E_GEOMETRY, "bad Y4M header");
}

/* Several threads read all frames of one shared video in different orders. */
typedef struct { svc_video *v; int w, h, fmt, bpc, frames, seed, ok; } reader_arg;

static void *reader_thread(void *p) {
    reader_arg *a = p;
    svc_picture pic;
    char err[128];
    a->ok = svc_picture_alloc(&pic, a->w, a->h, a->fmt, a->bpc) == SVC_OK;
    for (int k = 0; a->ok && k < 4 * a->frames; k++) {
        const int f = (k * 7 + a->seed) % a->frames;
        a->ok = svc_video_read(a->v, f, &pic, err, sizeof err) == SVC_OK && picture_matches(&pic, f);
    }
    svc_picture_free(&pic);
    return NULL;
}

static void test_threads(void) {
    enum { T = 4, FRAMES = 24 };
    make_y4m("threads.y4m", "YUV4MPEG2 W33 H17 C420p10", "FRAME", 33, 17, 420, 10, FRAMES, "", 0);
    char err[256];
    svc_video *v = NULL;
    if (svc_video_open(tmp_path("threads.y4m"), SVC_INPUT_Y4M, 0, 0, 0, 0, &v, err, sizeof err) != SVC_OK) {
        CHECK(0, "threads.y4m: %s", err);
        return;
    }
    pthread_t th[T];
    reader_arg args[T];
    for (int i = 0; i < T; i++) {
        args[i] = (reader_arg){ v, 33, 17, 420, 10, FRAMES, i * 5, 0 };
        pthread_create(&th[i], NULL, reader_thread, &args[i]);
    }
    for (int i = 0; i < T; i++) {
        pthread_join(th[i], NULL);
        CHECK(args[i].ok, "thread %d read wrong data", i);
    }
    svc_video_close(v);
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint32_t rnd(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 16);
}

/* Random files: pure noise; Y4M headers of random tags with random payloads; and well-formed
 * Y4M or raw files whose payload is sometimes off by a byte. Opened as raw (random or matching
 * geometry) and as Y4M: any outcome but a crash is fine, a failure must have a message, and
 * when open succeeds every frame must read. */
static void test_fuzz(void) {
    static const char *const tags[] = {
        "W", "H", "C420", "C422", "C444", "C420p10", "C444p12", "Cmono", "C420jpeg", "F30:1",
        "Ip", "A1:1", "X", "W0", "H0", "W-1", "C", "FRAME", "\n", " ", "YUV4MPEG2",
    };
    static const struct { const char *tag; int fmt, bpc; } spaces[] = {
        { "C420", 420, 8 }, { "C422p10", 422, 10 }, { "C444p12", 444, 12 }, { "C420p16", 420, 16 },
    };
    const int iterations = 2500;
    int opened = 0;
    for (int it = 0; it < iterations; it++) {
        size_t n = 0;
        const int mode = (int)(rnd() % 4);
        int w = (int)(rnd() % 20) - 1, h = (int)(rnd() % 20) - 1, fmt = 420, bpc = 8;
        if (mode == 0) {
            n = rnd() % 512;
            for (size_t i = 0; i < n; i++) big[i] = (uint8_t)rnd();
        } else if (mode == 1) {
            n = (size_t)sprintf((char *)big, "YUV4MPEG2");
            const int ntags = (int)(rnd() % 6);
            for (int t = 0; t < ntags; t++) {
                const char *tag = tags[rnd() % (sizeof tags / sizeof tags[0])];
                n += (size_t)sprintf((char *)big + n, " %s", tag);
                if (tag[0] == 'W' || tag[0] == 'H') n += (size_t)sprintf((char *)big + n, "%u", rnd() % 40);
            }
            n += (size_t)sprintf((char *)big + n, "\n");
            const int frames = (int)(rnd() % 4);
            for (int f = 0; f < frames; f++) {
                n += (size_t)sprintf((char *)big + n, rnd() % 2 ? "FRAME\n" : "FRAME X%u\n", rnd());
                const size_t len = rnd() % 4000;
                for (size_t i = 0; i < len; i++) big[n + i] = (uint8_t)rnd();
                n += len;
            }
        } else {
            /* Well-formed layout, payload sometimes one byte short or long. */
            w = 1 + (int)(rnd() % 24);
            h = 1 + (int)(rnd() % 24);
            const int sp = (int)(rnd() % 4);
            fmt = spaces[sp].fmt;
            bpc = spaces[sp].bpc;
            const int64_t fb = svc_frame_bytes(w, h, fmt, bpc);
            const int frames = 1 + (int)(rnd() % 3);
            if (mode == 2)
                n = (size_t)sprintf((char *)big, "YUV4MPEG2 W%d H%d %s\n", w, h, spaces[sp].tag);
            for (int f = 0; f < frames; f++) {
                if (mode == 2) n += (size_t)sprintf((char *)big + n, "FRAME\n");
                for (int64_t i = 0; i < fb; i++) big[n + (size_t)i] = (uint8_t)rnd();
                n += (size_t)fb;
            }
            const int off = (int)(rnd() % 8) == 0 ? (int)(rnd() % 3) - 1 : 0;
            n = (size_t)((int64_t)n + off);
        }
        write_file(tmp_path("fuzz.bin"), big, n);
        for (int kind = SVC_INPUT_RAW; kind <= SVC_INPUT_Y4M; kind++) {
            char err[256];
            svc_video *v = NULL;
            if (svc_video_open(tmp_path("fuzz.bin"), kind, w, h, fmt, bpc, &v, err, sizeof err) != SVC_OK) {
                if (err[0] == '\0') CHECK(0, "fuzz %d: failure without a message", it);
                continue;
            }
            opened++;
            int gw, gh, gf, gb;
            svc_video_geometry(v, &gw, &gh, &gf, &gb);
            svc_picture pic;
            if (svc_picture_alloc(&pic, gw, gh, gf, gb) == SVC_OK) {
                for (int64_t f = 0; f < svc_video_frame_count(v); f++)
                    if (svc_video_read(v, f, &pic, err, sizeof err) != SVC_OK) CHECK(0, "fuzz %d: read: %s", it, err);
                svc_picture_free(&pic);
            }
            svc_video_close(v);
        }
    }
    CHECK(opened > iterations / 4, "fuzz produced few valid files (%d)", opened);
    printf("fuzz: %d iterations, %d opens succeeded, no crash\n", iterations, opened);
}

int main(void) {
    snprintf(dir, sizeof dir, "/tmp/svc_reader_test_XXXXXX");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 2;
    }
    big = malloc(BIG);
    if (!big) return 2;
    RUN_CASE("raw", test_raw());
    RUN_CASE("y4m", test_y4m());
    RUN_CASE("threads", test_threads());
    RUN_CASE("fuzz", test_fuzz());
    free(big);
    char cmd[320];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    return finish_checks();
}
