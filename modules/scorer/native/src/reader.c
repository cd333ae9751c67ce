/*
 * Video readers: raw planar YUV (geometry given) and YUV4MPEG2 (geometry from its header).
 *
 * Behaviour decisions:
 *  - One fd per video, read with pread only, so any number of threads may read frames of the
 *    same video concurrently; the video is immutable after open. A video opened from a caller's
 *    descriptor reads its own duplicate of it and never opens a path: the file scored is the
 *    file the caller checked, whatever happens to the path meanwhile.
 *  - Only regular files are read; anything else is refused by kind before a byte is read.
 *  - Geometry is judged against the file size and the frame limit before anything per frame is
 *    allocated. Messages never state the size of the file (it may be any file of the host).
 *  - The file is validated completely at open: a raw file must be a non-empty whole number of
 *    frames; every Y4M frame marker is checked and the last frame must be complete, so frame
 *    counts are exact and a later read only fails if the file changes underneath.
 *  - Samples above the bit depth's maximum (e.g. 1023 < v in a 10-bit file) are passed through
 *    unchanged, as libvmaf does; nothing is masked or clamped.
 *  - Y4M: C420, C420jpeg, C420paldv, C420mpeg2, C422, C444, with optional p10/p12/p16 suffixes
 *    (little-endian 16-bit words); no C tag means 4:2:0 8-bit. Cmono and other colour spaces
 *    are refused. F gives the frame rate (xpsnr's temporal term); I, A, X and unknown tags are ignored (interlaced content is scored as
 *    frames). FRAME lines may carry parameters, which are ignored.
 */
#define _POSIX_C_SOURCE 200809L
#define _FILE_OFFSET_BITS 64
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

/* Longest header or FRAME line accepted, newline included. */
#define MAX_LINE 4096

struct svc_video {
    int fd;
    int w, h, pix_fmt, bpc;
    int64_t frame_bytes;
    int64_t nframes;
    int frame_rate; /* whole frames per second from a Y4M F tag (num / den), 0 when absent */
    /* Payload offset of each frame for Y4M (FRAME lines vary in length); NULL for raw. */
    int64_t *offsets;
};

static const char *fmt_name(int pix_fmt) {
    return pix_fmt == SVC_PIX_420 ? "420" : pix_fmt == SVC_PIX_422 ? "422" : "444";
}

/* Reads exactly len bytes at off. Returns bytes read (< len only at end of file) or -1. */
static ssize_t pread_full(int fd, void *buf, size_t len, int64_t off) {
    size_t got = 0;
    while (got < len) {
        const ssize_t r = pread(fd, (uint8_t *)buf + got, len - got, (off_t)(off + (int64_t)got));
        if (r < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        if (r == 0) break;
        got += (size_t)r;
    }
    return (ssize_t)got;
}

/* Reads the line starting at off into buf (NUL-terminated, newline stripped). Returns its
 * length including the newline, 0 if no newline within MAX_LINE bytes or before end of file,
 * -1 on I/O error. */
static int64_t read_line(int fd, int64_t off, int64_t file_size, char *buf) {
    int64_t avail = file_size - off;
    const size_t want = (size_t)(avail < MAX_LINE ? avail : MAX_LINE);
    const ssize_t got = pread_full(fd, buf, want, off);
    if (got < 0) return -1;
    const char *nl = memchr(buf, '\n', (size_t)got);
    if (!nl) return 0;
    const size_t len = (size_t)(nl - buf);
    buf[len] = '\0';
    return (int64_t)len + 1;
}

/* Strict decimal parse of a whole token; 0 on junk or values above limit. */
static int parse_uint(const char *s, int limit, int *out) {
    if (!*s) return 0;
    long v = 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9') return 0;
        v = v * 10 + (*s - '0');
        if (v > limit) return 0;
    }
    *out = (int)v;
    return 1;
}

/* Y4M colour space tag (after 'C') to pix_fmt and bit depth; 0 if unsupported. */
static int parse_colorspace(const char *c, int *pix_fmt, int *bpc) {
    static const struct { const char *name; int fmt; } bases[] = {
        { "420jpeg", SVC_PIX_420 }, { "420paldv", SVC_PIX_420 }, { "420mpeg2", SVC_PIX_420 },
        { "420", SVC_PIX_420 },     { "422", SVC_PIX_422 },      { "444", SVC_PIX_444 },
    };
    for (size_t i = 0; i < sizeof bases / sizeof bases[0]; i++) {
        const size_t n = strlen(bases[i].name);
        if (strncmp(c, bases[i].name, n) != 0) continue;
        const char *rest = c + n;
        if (*rest == '\0') *bpc = 8;
        /* Depth suffixes exist only on the plain names (C420p10, not C420jpegp10). */
        else if (n == 3 && strcmp(rest, "p10") == 0) *bpc = 10;
        else if (n == 3 && strcmp(rest, "p12") == 0) *bpc = 12;
        else if (n == 3 && strcmp(rest, "p16") == 0) *bpc = 16;
        else continue;
        *pix_fmt = bases[i].fmt;
        return 1;
    }
    return 0;
}

/* Parses the YUV4MPEG2 header line (newline stripped) into the geometry. */
static int parse_y4m_header(char *line, const char *path, svc_video *v, char *err, size_t err_len) {
    if (strncmp(line, "YUV4MPEG2", 9) != 0 || (line[9] != ' ' && line[9] != '\0')) {
        svc_set_err(err, err_len, "%s: not a Y4M file (header does not start with YUV4MPEG2)", path);
        return SVC_E_GEOMETRY;
    }
    int w = -1, h = -1;
    v->pix_fmt = SVC_PIX_420;
    v->bpc = 8;
    char *save = NULL;
    for (char *tok = strtok_r(line + 9, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
        switch (tok[0]) {
        case 'W':
        case 'H': {
            int *dim = tok[0] == 'W' ? &w : &h;
            if (!parse_uint(tok + 1, 16384, dim) || *dim == 0) {
                svc_set_err(err, err_len, "%s: invalid Y4M %s '%s' (need an integer in 1..16384)",
                            path, tok[0] == 'W' ? "width" : "height", tok + 1);
                return SVC_E_GEOMETRY;
            }
            break;
        }
        case 'C':
            if (strncmp(tok + 1, "mono", 4) == 0) {
                svc_set_err(err, err_len, "%s: monochrome Y4M (%s) is not supported: need 4:2:0, "
                            "4:2:2 or 4:4:4 with chroma planes", path, tok);
                return SVC_E_GEOMETRY;
            }
            if (!parse_colorspace(tok + 1, &v->pix_fmt, &v->bpc)) {
                svc_set_err(err, err_len, "%s: unsupported Y4M colour space %s (supported: C420, "
                            "C420jpeg, C420paldv, C420mpeg2, C422, C444, optionally p10/p12/p16)",
                            path, tok);
                return SVC_E_GEOMETRY;
            }
            break;
        case 'F': {
            /* F<num>:<den>; kept as FFmpeg's filters see it (integer num / den), junk ignored. */
            long num = 0, den = 0;
            char *colon = strchr(tok + 1, ':');
            if (colon) {
                num = strtol(tok + 1, NULL, 10);
                den = strtol(colon + 1, NULL, 10);
            }
            v->frame_rate = num > 0 && den > 0 && num / den < 100000 ? (int)(num / den) : 0;
            break;
        }
        default: break; /* I, A, X and unknown tags do not change the sample layout */
        }
    }
    if (w < 0 || h < 0) {
        svc_set_err(err, err_len, "%s: Y4M header lacks %s", path, w < 0 ? "the width (W)" : "the height (H)");
        return SVC_E_GEOMETRY;
    }
    v->w = w;
    v->h = h;
    return SVC_OK;
}

/* Walks every FRAME line of a Y4M file from off, recording payload offsets. */
static int index_y4m(svc_video *v, int64_t off, int64_t size, int64_t max_frames, const char *path,
                     char *line, char *err, size_t err_len) {
    int64_t cap = 0;
    while (off < size) {
        if (v->nframes == max_frames) {
            svc_set_err(err, err_len, "%s: more than %lld frames (the frame limit)", path, (long long)max_frames);
            return SVC_E_GEOMETRY;
        }
        const int64_t n = read_line(v->fd, off, size, line);
        if (n < 0) {
            svc_set_err(err, err_len, "%s: read error at offset %lld: %s", path, (long long)off, strerror(errno));
            return SVC_E_IO;
        }
        if (n == 0 || strncmp(line, "FRAME", 5) != 0 || (line[5] != ' ' && line[5] != '\0')) {
            svc_set_err(err, err_len, "%s: bad Y4M frame marker at offset %lld (frame %lld): "
                        "expected a FRAME line", path, (long long)off, (long long)v->nframes);
            return SVC_E_GEOMETRY;
        }
        const int64_t payload = off + n;
        if (size - payload < v->frame_bytes) {
            svc_set_err(err, err_len, "%s: the last Y4M frame (%lld) is truncated: it is shorter than a "
                        "%dx%d %s %d-bit frame", path, (long long)v->nframes, v->w, v->h,
                        fmt_name(v->pix_fmt), v->bpc);
            return SVC_E_GEOMETRY;
        }
        if (v->nframes == cap) {
            cap = cap ? 2 * cap : 64;
            int64_t *grown = realloc(v->offsets, (size_t)cap * sizeof *grown);
            if (!grown) {
                svc_set_err(err, err_len, "%s: out of memory indexing frames", path);
                return SVC_E_NOMEM;
            }
            v->offsets = grown;
        }
        v->offsets[v->nframes++] = payload;
        off = payload + v->frame_bytes;
    }
    if (v->nframes == 0) {
        svc_set_err(err, err_len, "%s: Y4M file has a header but no frames", path);
        return SVC_E_GEOMETRY;
    }
    return SVC_OK;
}

static const char *kind_name(mode_t mode) {
    return S_ISDIR(mode) ? "a directory" : S_ISFIFO(mode) ? "a FIFO" : S_ISSOCK(mode) ? "a socket"
         : S_ISCHR(mode) ? "a character device" : S_ISBLK(mode) ? "a block device" : "not a regular file";
}

/* The file behind v->fd (already the video's own descriptor). kind AUTO: Y4M when the file starts
 * with the Y4M signature. */
static int open_video(const char *path, int kind, int w, int h, int pix_fmt, int bpc, int64_t max_frames,
                      svc_video *v, char *err, size_t err_len) {
    if (kind != SVC_INPUT_AUTO && kind != SVC_INPUT_RAW && kind != SVC_INPUT_Y4M) {
        svc_set_err(err, err_len, "unknown input kind %d", kind);
        return SVC_E_INVALID_ARG;
    }
    struct stat st;
    if (fstat(v->fd, &st) != 0) {
        svc_set_err(err, err_len, "%s: cannot stat: %s", path, strerror(errno));
        return SVC_E_IO;
    }
    if (!S_ISREG(st.st_mode)) {
        svc_set_err(err, err_len, "%s: is %s; only regular files are scored", path, kind_name(st.st_mode));
        return SVC_E_IO;
    }
    const int64_t size = (int64_t)st.st_size;
    if (size == 0) {
        svc_set_err(err, err_len, "%s: file is empty", path);
        return SVC_E_GEOMETRY;
    }
    if (kind == SVC_INPUT_AUTO) {
        char magic[10];
        const ssize_t got = pread_full(v->fd, magic, sizeof magic, 0);
        kind = got == (ssize_t)sizeof magic && memcmp(magic, "YUV4MPEG2", 9) == 0 &&
                       (magic[9] == ' ' || magic[9] == '\n')
                   ? SVC_INPUT_Y4M
                   : SVC_INPUT_RAW;
    }
    if (kind == SVC_INPUT_RAW) {
        v->w = w;
        v->h = h;
        v->pix_fmt = pix_fmt;
        v->bpc = bpc;
        v->frame_bytes = svc_frame_bytes(w, h, pix_fmt, bpc);
        if (v->frame_bytes < 0) {
            svc_set_err(err, err_len, "%s: invalid raw geometry %dx%d pix_fmt %d bitdepth %d (need "
                        "1..16384 per side, 420/422/444, 8/10/12/16 bits)", path, w, h, pix_fmt, bpc);
            return SVC_E_GEOMETRY;
        }
        if (size % v->frame_bytes != 0) {
            svc_set_err(err, err_len, "%s: not a whole number of %dx%d %s %d-bit frames (%lld bytes each)",
                        path, w, h, fmt_name(pix_fmt), bpc, (long long)v->frame_bytes);
            return SVC_E_GEOMETRY;
        }
        v->nframes = size / v->frame_bytes;
        if (v->nframes > max_frames) {
            svc_set_err(err, err_len, "%s: more than %lld frames of %dx%d (the frame limit)", path,
                        (long long)max_frames, w, h);
            return SVC_E_GEOMETRY;
        }
        return SVC_OK;
    }

    char *line = malloc(MAX_LINE + 1);
    if (!line) {
        svc_set_err(err, err_len, "%s: out of memory", path);
        return SVC_E_NOMEM;
    }
    int rc = SVC_OK;
    const int64_t n = read_line(v->fd, 0, size, line);
    if (n < 0) {
        svc_set_err(err, err_len, "%s: read error: %s", path, strerror(errno));
        rc = SVC_E_IO;
    } else if (n == 0) {
        svc_set_err(err, err_len, "%s: bad Y4M header: no end of line (the file ends inside it or "
                    "it is longer than %d bytes)", path, MAX_LINE);
        rc = SVC_E_GEOMETRY;
    } else {
        rc = parse_y4m_header(line, path, v, err, err_len);
    }
    if (rc == SVC_OK) {
        v->frame_bytes = svc_frame_bytes(v->w, v->h, v->pix_fmt, v->bpc);
        rc = index_y4m(v, n, size, max_frames, path, line, err, err_len);
    }
    free(line);
    return rc;
}

static int has_y4m_suffix(const char *path) {
    const size_t n = strlen(path);
    if (n < 4) return 0;
    const char *s = path + n - 4;
    return s[0] == '.' && (s[1] | 0x20) == 'y' && s[2] == '4' && (s[3] | 0x20) == 'm';
}

static int video_new(const char *path, svc_video **out, svc_video **v, char *err, size_t err_len) {
    if (err && err_len) err[0] = '\0';
    if (!path || !out) {
        svc_set_err(err, err_len, "svc_video_open: NULL name or output");
        return SVC_E_INVALID_ARG;
    }
    *out = NULL;
    if (!(*v = calloc(1, sizeof **v))) {
        svc_set_err(err, err_len, "%s: out of memory", path);
        return SVC_E_NOMEM;
    }
    (*v)->fd = -1;
    return SVC_OK;
}

static int video_finish(svc_video *v, int rc, svc_video **out) {
    if (rc != SVC_OK) {
        svc_video_close(v);
        return rc;
    }
    *out = v;
    return SVC_OK;
}

int svc_video_open_fd(int fd, const char *name, int kind, int w, int h, int pix_fmt, int bpc, int64_t max_frames,
                      svc_video **out, char *err, size_t err_len) {
    svc_video *v;
    int rc = video_new(name, out, &v, err, err_len);
    if (rc) return rc;
    if (fd < 0 || (v->fd = fcntl(fd, F_DUPFD_CLOEXEC, 0)) < 0) {
        svc_set_err(err, err_len, "%s: bad descriptor: %s", name, fd < 0 ? "negative" : strerror(errno));
        return video_finish(v, SVC_E_IO, out);
    }
    return video_finish(v, open_video(name, kind, w, h, pix_fmt, bpc, max_frames, v, err, err_len), out);
}

int svc_video_open(const char *path, int kind, int w, int h, int pix_fmt, int bpc,
                   svc_video **out, char *err, size_t err_len) {
    svc_video *v;
    int rc = video_new(path, out, &v, err, err_len);
    if (rc) return rc;
    if (kind == SVC_INPUT_AUTO) kind = has_y4m_suffix(path) ? SVC_INPUT_Y4M : SVC_INPUT_RAW;
    /* Arguments are checked before the file so a bad geometry is reported as such. */
    if (kind == SVC_INPUT_RAW && svc_frame_bytes(w, h, pix_fmt, bpc) < 0) {
        svc_set_err(err, err_len, "%s: invalid raw geometry %dx%d pix_fmt %d bitdepth %d (need "
                    "1..16384 per side, 420/422/444, 8/10/12/16 bits)", path, w, h, pix_fmt, bpc);
        return video_finish(v, SVC_E_GEOMETRY, out);
    }
    /* Non-blocking, so a FIFO or device cannot hold the caller; only regular files are read. */
    v->fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (v->fd < 0) {
        svc_set_err(err, err_len, "%s: cannot open: %s", path, strerror(errno));
        return video_finish(v, SVC_E_IO, out);
    }
    return video_finish(v, open_video(path, kind, w, h, pix_fmt, bpc, SVC_MAX_FRAMES_DEFAULT, v, err, err_len), out);
}

int svc_video_frame_rate(const svc_video *v) { return v->frame_rate; }

void svc_video_geometry(const svc_video *v, int *w, int *h, int *pix_fmt, int *bpc) {
    if (w) *w = v->w;
    if (h) *h = v->h;
    if (pix_fmt) *pix_fmt = v->pix_fmt;
    if (bpc) *bpc = v->bpc;
}

int64_t svc_video_frame_count(const svc_video *v) { return v->nframes; }

int64_t svc_video_frame_bytes(const svc_video *v) { return v->frame_bytes; }

int svc_video_read_raw(svc_video *v, int64_t idx, uint8_t *buf, char *err, size_t err_len) {
    if (idx < 0 || idx >= v->nframes) {
        svc_set_err(err, err_len, "frame %lld out of range (video has %lld frames)", (long long)idx,
                    (long long)v->nframes);
        return SVC_E_INVALID_ARG;
    }
    const int64_t off = v->offsets ? v->offsets[idx] : idx * v->frame_bytes;
    const ssize_t got = pread_full(v->fd, buf, (size_t)v->frame_bytes, off);
    if (got < 0) {
        svc_set_err(err, err_len, "read error on frame %lld: %s", (long long)idx, strerror(errno));
        return SVC_E_IO;
    }
    if ((int64_t)got != v->frame_bytes) {
        /* Only possible if the file shrank after it was validated at open. */
        svc_set_err(err, err_len, "frame %lld: file ended after %lld of %lld bytes", (long long)idx,
                    (long long)got, (long long)v->frame_bytes);
        return SVC_E_IO;
    }
    return SVC_OK;
}

int svc_video_read(svc_video *v, int64_t idx, svc_picture *pic, char *err, size_t err_len) {
    if (!v || !pic) {
        svc_set_err(err, err_len, "svc_video_read: NULL video or picture");
        return SVC_E_INVALID_ARG;
    }
    if (pic->plane[0].w != v->w || pic->plane[0].h != v->h || pic->pix_fmt != v->pix_fmt ||
        pic->bpc != v->bpc) {
        svc_set_err(err, err_len, "picture %dx%d %d %d-bit does not match the video's %dx%d %s %d-bit",
                    pic->plane[0].w, pic->plane[0].h, pic->pix_fmt, pic->bpc, v->w, v->h,
                    fmt_name(v->pix_fmt), v->bpc);
        return SVC_E_INVALID_ARG;
    }
    uint8_t *buf = malloc((size_t)v->frame_bytes);
    if (!buf) {
        svc_set_err(err, err_len, "out of memory reading frame %lld", (long long)idx);
        return SVC_E_NOMEM;
    }
    int rc = svc_video_read_raw(v, idx, buf, err, err_len);
    if (rc == SVC_OK) rc = svc_picture_from_raw(pic, buf, (size_t)v->frame_bytes);
    free(buf);
    return rc;
}

void svc_video_close(svc_video *v) {
    if (!v) return;
    if (v->fd >= 0) close(v->fd);
    free(v->offsets);
    free(v);
}
