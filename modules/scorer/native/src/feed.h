/*
 * A stream fed from descriptors (feed.c): a library thread reads one reference and n_dis
 * distorted sides frame by frame (regular files with pread through reader.c, pipes of raw frames
 * with read) and queues each frame into the job as svc_stream_push would, at most a window of
 * frames ahead of the finalised ones. The frame loop never learns where frames came from.
 */
#ifndef SVC_FEED_H
#define SVC_FEED_H

#include "job.h"

typedef struct svc_feed svc_feed;

/* Starts the job's workers and the feeding thread on duplicates of fds[0..n) (the caller may close
 * its own at once). j is a stream (frame_bytes set) with no frame yet; n = 1 + its renditions.
 * index_fds (NULL: none) gives a file side an index pipe naming its frames (-1: read in order). */
int svc_feed_start(svc_job *j, int n, const int32_t *fds, const int32_t *kinds, const int32_t *skips,
                   const int32_t *index_fds, const char *const *names, svc_feed **out, char *err, size_t err_len);
/* Asks the feeding thread to stop (through the job's cancel), joins it and frees the feed. */
void svc_feed_stop(svc_feed *f);
/* Side k's end: -1 while it has not been read to its end, else the bytes of the partial frame it
 * ended inside (0: it ended on a frame boundary). */
int64_t svc_feed_end(const svc_feed *f, int side);
/* Frames read from every side and queued (skipped frames excluded). */
int64_t svc_feed_frames(const svc_feed *f);
/* A pipe: out[0] the read end, out[1] the write end, both close-on-exec; capacity raised to 1 MiB
 * where the system allows. */
int svc_feed_pipe(int32_t out[2], char *err, size_t err_len);

#endif
