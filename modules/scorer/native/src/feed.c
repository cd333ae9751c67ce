/*
 * Streams fed from descriptors (feed.h): one library thread reads every side of a stream or ladder
 * and queues whole frames into the job, so no frame byte passes through the caller.
 *
 * Behaviour decisions:
 *  - A regular file (raw YUV or Y4M) is read by reader.c with pread, from frame `skip` on; it is
 *    validated completely when the thread starts (on the thread, never on the caller's).
 *  - A pipe carries raw frames of the stream's geometry and is read in order with read(); its
 *    first `skip` frames are read and discarded. Every pipe of a frame is read as its data comes
 *    (poll over all of them), so one slow writer never holds the others' frames back. poll wakes
 *    at least every POLL_MS to notice a cancel while a writer is silent.
 *  - At most `window` frames are queued and not yet final (the same window the caller used when it
 *    pushed frames), so memory is a few frames whatever the clip's length and a writer waits on
 *    its full pipe instead.
 *  - A frame is queued only when every side gave one (a ladder's rendition gives one only within
 *    its range, svc_ladder_range, and is not read elsewhere). When some sides of a frame end and
 *    others do not, the stream fails with the caller's "lengths differ" message; a pipe ending inside a frame is an
 *    error. Each side's end is recorded (svc_feed_end), so a caller whose pipes are written by
 *    child processes can hold the end against the child's exit status.
 *  - An indexed side (svc_stream_feed_indexed) is a regular file read with pread as above, but
 *    the frame it gives next is named by its index pipe: little-endian uint32 values, one a frame,
 *    each the frame's index after the side's skip (frame skip + index of the file). The index pipe
 *    is polled with the other pipes and its end is the side's end, so the caller decides which
 *    frames are read (an alignment's pairs with gaps) and no frame byte passes through it. The
 *    indices must increase (a frame is read once, forward) and name a frame of the file; either
 *    mistake, or a pipe ending inside an index, fails the stream with a message naming the side.
 *  - The thread closes its descriptors as soon as it stops reading (a writer then sees EPIPE).
 */
#define _GNU_SOURCE /* pipe2, F_SETPIPE_SZ */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "feed.h"

#define PIPE_BYTES (1 << 20)
#define POLL_MS 20

#define INDEX_BYTES 4 /* an indexed side's index: little-endian uint32 */

typedef struct {
    int fd;            /* a pipe's duplicate (an indexed side's index pipe); -1 for a file or once closed */
    int kind;          /* svc_input_kind */
    int src_fd;        /* a file's duplicate until reader.c opens it on the thread */
    svc_video *video;  /* a regular file, once opened */
    int64_t next;      /* file: the next frame index; indexed: the skip the indices count from */
    int indexed;       /* a file whose frames are named by the index pipe fd */
    int64_t last;      /* indexed: the last index read, -1 before the first */
    uint8_t index[INDEX_BYTES]; /* indexed: the bytes of the index being read */
    int64_t skip_left; /* pipe: frames still to discard */
    size_t got;        /* pipe: bytes of the current frame read so far */
    int wanted;        /* its frame of the current frame is read (a rendition outside its range is not) */
    int ended;
    atomic_llong end; /* -1, or the bytes of the partial frame it ended inside */
    char *name;
} feed_side;

struct svc_feed {
    svc_job *j;
    int n;
    feed_side *sides;
    pthread_t thread;
    int started;
    atomic_llong frames;
};

static int halted(svc_job *j) { return j->err_code || atomic_load(&j->cancel); }

/* Fails the job with the first error (workers then stop and publish it). */
static void fail(svc_job *j, int rc, const char *msg) {
    pthread_mutex_lock(&j->mu);
    if (!j->err_code) {
        j->err_code = rc;
        snprintf(j->err_msg, sizeof j->err_msg, "%s", msg);
    }
    pthread_cond_broadcast(&j->cv);
    pthread_mutex_unlock(&j->mu);
}

static void close_sides(svc_feed *f) {
    for (int k = 0; k < f->n; k++) {
        feed_side *s = &f->sides[k];
        if (s->fd >= 0) close(s->fd);
        if (s->src_fd >= 0) close(s->src_fd);
        if (s->video) svc_video_close(s->video);
        s->fd = s->src_fd = -1;
        s->video = NULL;
    }
}

/* Opens the file sides with reader.c (a Y4M is walked frame by frame) and checks their geometry. */
static int open_files(svc_feed *f, char *err) {
    const int *g = f->j->geo;
    for (int k = 0; k < f->n; k++) {
        feed_side *s = &f->sides[k];
        if (s->src_fd < 0) continue;
        char why[SVC_ERR_LEN];
        int rc = svc_video_open_fd(s->src_fd, s->name, s->kind, g[0], g[1], g[2], g[3], f->j->max_frames, &s->video,
                                   why, sizeof why);
        close(s->src_fd);
        s->src_fd = -1;
        if (rc) {
            svc_set_err(err, SVC_ERR_LEN, "%s", why);
            return rc;
        }
        int v[4];
        svc_video_geometry(s->video, &v[0], &v[1], &v[2], &v[3]);
        if (memcmp(v, g, sizeof v) != 0) {
            svc_set_err(err, SVC_ERR_LEN, "geometry differs: the stream is %dx%d %d %d-bit, %s is %dx%d %d %d-bit", g[0],
                     g[1], g[2], g[3], s->name, v[0], v[1], v[2], v[3]);
            return SVC_E_GEOMETRY;
        }
    }
    return SVC_OK;
}

static void side_ended(feed_side *s, size_t partial) {
    s->ended = 1;
    atomic_store(&s->end, (long long)partial);
}

/* An indexed side's index is complete: checks it and preads the frame it names into frame. */
static int read_indexed(feed_side *s, uint8_t *frame, char *err) {
    const int64_t index = (int64_t)((uint32_t)s->index[0] | (uint32_t)s->index[1] << 8 | (uint32_t)s->index[2] << 16 |
                                    (uint32_t)s->index[3] << 24);
    const int64_t frames = svc_video_frame_count(s->video) - s->next;
    if (index <= s->last) {
        svc_set_err(err, SVC_ERR_LEN, "%s: frame index %lld after %lld: the indices must increase", s->name,
                    (long long)index, (long long)s->last);
        return SVC_E_INVALID_ARG;
    }
    if (index >= frames) {
        svc_set_err(err, SVC_ERR_LEN, "%s: frame index %lld is beyond the file's %lld frames after skipping", s->name,
                    (long long)index, (long long)(frames > 0 ? frames : 0));
        return SVC_E_INVALID_ARG;
    }
    s->last = index;
    char why[SVC_ERR_LEN];
    const int rc = svc_video_read_raw(s->video, s->next + index, frame, why, sizeof why);
    if (rc) svc_set_err(err, SVC_ERR_LEN, "%s: %s", s->name, why);
    return rc;
}

/* Reads frame i of every side that pairs it (a ladder's rendition only over its range,
 * svc_ladder_range) into raw (side k at k * fb), or marks the sides that ended. */
static int read_frame(svc_feed *f, int i, uint8_t *raw, size_t fb, char *err) {
    svc_job *j = f->j;
    int pipes = 0;
    for (int k = 0; k < f->n; k++) {
        feed_side *s = &f->sides[k];
        s->wanted = k == 0 || svc_rendition_pairs(j, k - 1, i);
        if (!s->wanted || s->ended) continue;
        if (s->fd >= 0) { /* a pipe, or an indexed side's index pipe */
            s->got = 0;
            pipes++;
            continue;
        }
        if (s->next >= svc_video_frame_count(s->video)) {
            side_ended(s, 0);
            continue;
        }
        char why[SVC_ERR_LEN];
        const int rc = svc_video_read_raw(s->video, s->next++, raw + (size_t)k * fb, why, sizeof why);
        if (rc) {
            svc_set_err(err, SVC_ERR_LEN, "%s: %s", s->name, why);
            return rc;
        }
    }
    while (pipes > 0) {
        struct pollfd pfd[SVC_LADDER_MAX_RENDITIONS + 1];
        int side_of[SVC_LADDER_MAX_RENDITIONS + 1], np = 0;
        for (int k = 0; k < f->n; k++) {
            const feed_side *s = &f->sides[k];
            if (s->fd < 0 || !s->wanted || s->ended || s->got == (s->indexed ? INDEX_BYTES : fb)) continue;
            pfd[np] = (struct pollfd){ .fd = s->fd, .events = POLLIN };
            side_of[np++] = k;
        }
        pthread_mutex_lock(&j->mu);
        const int halt = halted(j);
        pthread_mutex_unlock(&j->mu);
        if (halt) return SVC_E_CANCELLED; /* cancelled, or the job failed: stop reading (fail() is not called) */
        const int ready = poll(pfd, (nfds_t)np, POLL_MS);
        if (ready < 0 && errno != EINTR) {
            svc_set_err(err, SVC_ERR_LEN, "waiting for input: %s", strerror(errno));
            return SVC_E_IO;
        }
        for (int p = 0; ready > 0 && p < np; p++) {
            if (!pfd[p].revents) continue;
            feed_side *s = &f->sides[side_of[p]];
            uint8_t *frame = raw + (size_t)side_of[p] * fb;
            const size_t unit = s->indexed ? INDEX_BYTES : fb;
            const ssize_t r = read(s->fd, (s->indexed ? s->index : frame) + s->got, unit - s->got);
            if (r < 0) {
                if (errno == EINTR || errno == EAGAIN) continue;
                svc_set_err(err, SVC_ERR_LEN, "%s: read error: %s", s->name, strerror(errno));
                return SVC_E_IO;
            }
            if (r == 0) {
                side_ended(s, s->got);
                pipes--;
                if (s->got) {
                    svc_set_err(err, SVC_ERR_LEN, "%s: the input ends inside %s (%zu of %zu bytes)", s->name,
                                s->indexed ? "a frame index" : "a frame", s->got, unit);
                    return SVC_E_GEOMETRY;
                }
                continue;
            }
            s->got += (size_t)r;
            if (s->got < unit) continue;
            if (s->indexed) {
                const int rc = read_indexed(s, frame, err);
                if (rc) return rc;
                pipes--;
            } else if (s->skip_left > 0) {
                s->skip_left--; /* a skipped frame: read again into the same place */
                s->got = 0;
            } else {
                pipes--;
            }
        }
    }
    return SVC_OK;
}

/* Some sides of the frame ended and others did not: named as the caller named them when it paired
 * frames (a rendition outside its range takes no part). */
static void lengths_differ(const svc_feed *f, int count, char *err) {
    int first_ended = -1, first_present = -1;
    for (int k = 1; k < f->n; k++) {
        if (!f->sides[k].wanted) continue;
        if (f->sides[k].ended && first_ended < 0) first_ended = k;
        if (!f->sides[k].ended && first_present < 0) first_present = k;
    }
    int shorter, longer;
    if (!f->sides[0].ended) shorter = first_ended, longer = 0;
    else if (first_ended < 0) shorter = 0, longer = 1;
    else shorter = first_ended, longer = first_present;
    svc_set_err(err, SVC_ERR_LEN, "%s has %d frames after skipping, %s has more: lengths differ", f->sides[shorter].name,
             count, f->sides[longer].name);
}

static void *feed_thread(void *arg) {
    svc_feed *f = arg;
    svc_job *j = f->j;
    const size_t fb = (size_t)j->frame_bytes;
    /* As the caller's push windows: a ladder's frame takes a worker n_dis times longer than a pair's. */
    const int window = svc_stream_window(j);
    char err[SVC_ERR_LEN] = "";
    int rc = open_files(f, err), finished = 0;
    while (!rc) {
        pthread_mutex_lock(&j->mu);
        while (!halted(j) && j->n_frames - j->final_next >= window) pthread_cond_wait(&j->cv, &j->mu);
        const int halt = halted(j), count = j->n_frames, capped = j->frame_cap && count >= j->frame_cap;
        pthread_mutex_unlock(&j->mu);
        if (halt) break;
        if (capped) {
            finished = 1;
            break;
        }
        uint8_t *raw = malloc((size_t)f->n * fb);
        if (!raw) {
            rc = SVC_E_NOMEM;
            svc_set_err(err, sizeof err, "out of memory queueing a frame");
            break;
        }
        if ((rc = read_frame(f, count, raw, fb, err))) {
            free(raw);
            break;
        }
        /* The sides of this frame (a ladder's rendition only within its range) end together. */
        int ended = 0, wanted = 0;
        for (int k = 0; k < f->n; k++) {
            wanted += f->sides[k].wanted;
            ended += f->sides[k].wanted && f->sides[k].ended;
        }
        if (ended) {
            free(raw);
            if (ended < wanted) lengths_differ(f, count, err), rc = SVC_E_GEOMETRY;
            else if (count == 0) svc_set_err(err, sizeof err, "no frames to score after the skips"), rc = SVC_E_GEOMETRY;
            else finished = 1;
            break;
        }
        if (count >= j->max_frames) {
            free(raw);
            /* svc_stream_push's words: the message callers saw when these frames were pushed. */
            svc_set_err(err, sizeof err, "more than %lld frames pushed (the frame limit)", (long long)j->max_frames);
            rc = SVC_E_GEOMETRY;
            break;
        }
        pthread_mutex_lock(&j->mu);
        rc = svc_loop_add_frame(j, raw);
        if (rc == SVC_OK) {
            j->n_frames++;
            pthread_cond_broadcast(&j->cv);
        }
        pthread_mutex_unlock(&j->mu);
        if (rc) {
            free(raw);
            svc_set_err(err, sizeof err, "out of memory queueing a frame");
            break;
        }
        atomic_fetch_add(&f->frames, 1);
    }
    close_sides(f); /* writers see EPIPE at once, not when the stream is freed */
    if (rc && rc != SVC_E_CANCELLED) fail(j, rc, err);
    if (finished) {
        pthread_mutex_lock(&j->mu);
        j->finished = 1;
        pthread_cond_broadcast(&j->cv);
        pthread_mutex_unlock(&j->mu);
    }
    return NULL;
}

static void feed_free(svc_feed *f) {
    close_sides(f);
    for (int k = 0; k < f->n; k++) free(f->sides[k].name);
    free(f->sides);
    free(f);
}

int svc_feed_start(svc_job *j, int n, const int32_t *fds, const int32_t *kinds, const int32_t *skips,
                   const int32_t *index_fds, const char *const *names, svc_feed **out, char *err, size_t err_len) {
    const int want = 1 + (j->n_dis > 1 ? j->n_dis : 1);
    if (n != want || !fds || !kinds || !skips || !names || !out) {
        svc_set_err(err, err_len, "svc_stream_feed: need %d sides (the reference, then each distorted input) with "
                    "descriptors, kinds, skips and names", want);
        return SVC_E_INVALID_ARG;
    }
    *out = NULL;
    svc_feed *f = calloc(1, sizeof *f);
    if (!f || !(f->sides = calloc((size_t)n, sizeof *f->sides))) {
        free(f);
        svc_set_err(err, err_len, "out of memory starting the feed");
        return SVC_E_NOMEM;
    }
    f->j = j;
    f->n = n;
    for (int k = 0; k < n; k++) f->sides[k].fd = f->sides[k].src_fd = -1;
    int rc = SVC_OK;
    for (int k = 0; k < n && !rc; k++) {
        feed_side *s = &f->sides[k];
        atomic_init(&s->end, -1);
        s->kind = kinds[k];
        const int pipe = kinds[k] == SVC_INPUT_PIPE;
        if (!names[k] || skips[k] < 0 || (!pipe && kinds[k] != SVC_INPUT_AUTO && kinds[k] != SVC_INPUT_RAW &&
                                          kinds[k] != SVC_INPUT_Y4M)) {
            svc_set_err(err, err_len, "svc_stream_feed: side %d has no name, a negative skip or an unknown kind %d", k,
                        kinds[k]);
            rc = SVC_E_INVALID_ARG;
        } else if (!(s->name = strdup(names[k]))) {
            svc_set_err(err, err_len, "out of memory starting the feed");
            rc = SVC_E_NOMEM;
        } else if (index_fds && index_fds[k] >= 0 && pipe) {
            svc_set_err(err, err_len, "svc_stream_feed: %s is a pipe; only a file side takes an index pipe",
                        names[k]);
            rc = SVC_E_INVALID_ARG;
        } else if (fds[k] < 0 || (*(pipe ? &s->fd : &s->src_fd) = fcntl(fds[k], F_DUPFD_CLOEXEC, 0)) < 0) {
            svc_set_err(err, err_len, "%s: bad descriptor", names[k]);
            rc = SVC_E_IO;
        } else if (index_fds && index_fds[k] >= 0 && (s->fd = fcntl(index_fds[k], F_DUPFD_CLOEXEC, 0)) < 0) {
            svc_set_err(err, err_len, "%s: bad index descriptor", names[k]);
            rc = SVC_E_IO;
        } else if (pipe) {
            s->skip_left = skips[k];
        } else {
            s->next = skips[k];
            s->indexed = s->fd >= 0;
            s->last = -1;
        }
    }
    if (!rc) rc = svc_loop_start(j, err, err_len);
    if (!rc && pthread_create(&f->thread, NULL, feed_thread, f) != 0) {
        svc_set_err(err, err_len, "cannot start the thread that reads the inputs");
        rc = SVC_E_INTERNAL;
    }
    if (rc) {
        feed_free(f);
        return rc;
    }
    f->started = 1;
    *out = f;
    return SVC_OK;
}

void svc_feed_stop(svc_feed *f) {
    if (!f) return;
    svc_loop_cancel(f->j);
    if (f->started) pthread_join(f->thread, NULL);
    feed_free(f);
}

int64_t svc_feed_end(const svc_feed *f, int side) {
    return f && side >= 0 && side < f->n ? atomic_load(&((svc_feed *)f)->sides[side].end) : -1;
}

int64_t svc_feed_frames(const svc_feed *f) { return f ? atomic_load(&((svc_feed *)f)->frames) : 0; }

int svc_feed_pipe(int32_t out[2], char *err, size_t err_len) {
    int fds[2];
    if (!out || pipe2(fds, O_CLOEXEC) != 0) {
        svc_set_err(err, err_len, "cannot create a pipe: %s", out ? strerror(errno) : "NULL output");
        return out ? SVC_E_IO : SVC_E_INVALID_ARG;
    }
    /* A larger pipe lets the writer run ahead by a third of a 1080p frame; refused above the
     * system's limit for unprivileged processes, which is fine. */
    (void)fcntl(fds[1], F_SETPIPE_SZ, PIPE_BYTES);
    out[0] = fds[0];
    out[1] = fds[1];
    return SVC_OK;
}
