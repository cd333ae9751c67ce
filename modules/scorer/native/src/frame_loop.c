/*
 * The frame loop behind a job (job.h): worker threads, frame order, motion, prediction.
 *
 * Frames are claimed in input order by `threads` workers. The claiming worker loads the frame's
 * pictures once into a frame slot (at most threads + 1 frames in flight) and runs its motion step;
 * the frame's units (one per extractor; a ladder's frame is one unit) are taken frame-major, the
 * oldest loaded frame's next unit first, by any worker, so a frame's extractors run in parallel
 * when fewer frames are in flight than threads, and with enough frames it is frame-level
 * threading. Each worker owns its extractor states, and each extractor writes its own columns of
 * the frame's row, so results do not depend on the thread count. Motion needs consecutive
 * reference lumas: the loader stores its frame's luma in a ring slot, and whichever of frames i-1
 * and i is stored second computes sad[i]; a ring slot is reused once the SAD that reads it is
 * done. Frames are then finalised in order (motion outputs, model prediction) by one worker at a
 * time, which is what svc_job_frames_done / svc_stream_frames_ready count.
 */
#define _POSIX_C_SOURCE 200809L
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job.h"
#include "shot_cut.h"

typedef struct {
    int id;
    void *state[SVC_LOOP_MAX_INSTANCES];
    void *tm_state[SVC_TEMPORAL_MAX];
} worker_ctx;

/* A frame in flight. The worker that claims the frame (its loader) reads the pictures while it
 * alone holds the slot, publishes them (loaded), then runs the motion step; the frame's units
 * (one per extractor, or a ladder's whole frame) are taken by any worker, oldest frame first, and
 * only read the pictures. The last of the loader's part and the units to finish marks the frame
 * done and frees the slot. Fields other than the pictures are guarded by j->mu. */
typedef struct svc_frame_slot {
    svc_picture ref, dis; /* allocated on the slot's first use */
    uint8_t *raw;         /* a ladder's pushed bytes: its unit decodes the renditions from them */
    double *vals;
    int frame;            /* -1: free */
    int loaded, loader;   /* pictures readable; the loader's worker id */
    int units, next_unit, pending; /* units; the next to claim; parts (units + the loader's) unfinished */
} svc_frame_slot;

/* Distorted pictures per frame: the renditions of a ladder, else one. */
static int renditions(const svc_job *j) { return j->n_dis > 1 ? j->n_dis : 1; }

/* Frame i read is scored for some rendition (a pair: for its distorted side). */
static int is_scored(const svc_job *j, int i) {
    for (int r = 0; r < renditions(j); r++)
        if (svc_rendition_scored(j, r, i)) return 1;
    return 0;
}

/* Frames need their neighbour's reference: for motion, and for the cut measure of shots. */
/* Frames keep their reference side in the rings: lumas for motion and history extractors, histograms for shots. */
static int uses_ring(const svc_job *j) { return j->n_tm || j->shots || j->history; }

static uint32_t *shot_slot(const svc_job *j, int i) {
    return j->shot_ring + (size_t)(i % j->ring_len) * SVC_SHOT_BINS;
}

static uint16_t *ring_slot(const svc_job *j, int i) {
    return j->ring + (size_t)(i % j->ring_len) * j->luma_len;
}

/* Records the first failure; workers stop claiming frames. Called with the lock held. */
static void fail_locked(svc_job *j, int code, const char *msg) {
    if (!j->err_code) {
        j->err_code = code;
        snprintf(j->err_msg, sizeof j->err_msg, "%s", msg);
    }
    pthread_cond_broadcast(&j->cv);
}

static int stopped(svc_job *j) { return j->err_code || atomic_load(&j->cancel); }

static void worker_free(svc_job *j, worker_ctx *w) {
    for (int e = 0; e < j->n_ex; e++)
        if (w->state[e]) j->ex[e]->destroy(w->state[e]);
    for (int t = 0; t < j->n_tm; t++)
        if (w->tm_state[t]) j->tm[t]->destroy(w->tm_state[t]);
}

static int worker_init(svc_job *j, worker_ctx *w, char *err) {
    const int wd = j->geo[0], ht = j->geo[1], fmt = j->geo[2], bpc = j->geo[3];
    memset(w, 0, sizeof *w);
    pthread_mutex_lock(&j->mu);
    w->id = j->n_workers++;
    pthread_mutex_unlock(&j->mu);
    for (int e = 0; e < j->n_ex; e++) {
        const svc_extractor *ex = j->ex[e];
        w->state[e] = j->ex_custom[e]        ? ex->create_with(wd, ht, fmt, bpc, j->cpu, j->ex_opts[e])
                      : ex->create_for_matrix ? ex->create_for_matrix(wd, ht, fmt, bpc, j->cpu, j->color_matrix)
                                              : ex->create(wd, ht, fmt, bpc, j->cpu);
        if (!w->state[e]) {
            const char *why = j->ex[e]->too_small ? j->ex[e]->too_small(wd, ht, fmt, j->ex_opts[e]) : NULL;
            if (why)
                snprintf(err, SVC_ERR_LEN, "extractor %s cannot run on %dx%d %d %d-bit input: %s", j->ex[e]->name, wd, ht,
                         fmt, bpc, why);
            else
                snprintf(err, SVC_ERR_LEN,
                         "extractor %s cannot run on %dx%d %d %d-bit input (unsupported size or out of memory)",
                         j->ex[e]->name, wd, ht, fmt, bpc);
            return SVC_E_GEOMETRY;
        }
    }
    for (int t = 0; t < j->n_tm; t++)
        if (!(w->tm_state[t] = j->tm[t]->create(wd, ht, bpc, j->cpu))) {
            snprintf(err, SVC_ERR_LEN, "%s cannot run on %dx%d %d-bit input (unsupported size or out of memory)",
                     j->tm[t]->name, wd, ht, bpc);
            return SVC_E_GEOMETRY;
        }
    pthread_mutex_lock(&j->mu);
    for (int e = 0; e < j->n_ex; e++) j->backend[e] = j->ex[e]->backend(w->state[e]);
    for (int t = 0; t < j->n_tm; t++) j->backend[j->n_ex + t] = j->tm[t]->backend(w->tm_state[t]);
    if ((j->n_tm || j->history) && !j->ring) {
        j->luma_len = (size_t)wd * (size_t)ht;
        j->ring = malloc(sizeof *j->ring * j->luma_len * (size_t)j->ring_len);
    }
    if (j->shots && !j->shot_ring) j->shot_ring = malloc(sizeof *j->shot_ring * SVC_SHOT_BINS * (size_t)j->ring_len);
    const int ok = (!(j->n_tm || j->history) || j->ring) && (!j->shots || j->shot_ring);
    pthread_mutex_unlock(&j->mu);
    if (!ok) {
        snprintf(err, SVC_ERR_LEN, "out of memory for the motion frame ring");
        return SVC_E_NOMEM;
    }
    return SVC_OK;
}

/* Temporal outputs and the prediction of scored frame f, whose inputs are all final, for each
 * rendition that scores it. Motion reads only the reference, so the SADs are every rendition's;
 * its first and last frames are the rendition's own (svc_ladder_range), as when it is scored alone. */
static void finalise_frame(svc_job *j, int f, double *v, const double *sad, const double *sad_next, int last) {
    double motion[SVC_LOOP_MAX_TEMPORAL_SETS][SVC_TEMPORAL_MAX_OUTPUTS];
    const int title = svc_title_frame(j, f);
    for (int r = 0; r < renditions(j); r++) {
        if (!svc_rendition_scored(j, r, f)) continue;
        /* The title's first frame, not the segment's: a segment after it read its context frame. */
        const int first = title == j->rend_first[r], own_last = last || title + 1 == j->rend_end[r];
        double *row = v + (size_t)r * (size_t)j->n_metrics;
        for (int s = 0; s < j->n_tmo; s++) {
            const int t = j->tmo_tm[s];
            /* Its first frame has no previous one: its difference is 0, as a first frame's is. */
            j->tm[t]->derive(first ? 0.0 : sad[t], sad_next[t], first, own_last, j->tmo_opts[s], motion[s]);
            memcpy(row + j->tmo_col[s], motion[s], sizeof(double) * (size_t)j->tm[t]->n_outputs);
        }
        double features[SVC_MODEL_MAX_FEATURES];
        for (int k = 0; k < svc_model_feature_count(j->model); k++) features[k] = row[j->model_col[k]];
        svc_model_predict(j->model, features, row);
    }
}

/* Finalises frames in order while their inputs are complete. One worker at a time does it;
 * the others leave, and the one in charge rechecks under the lock before it stops. */
static void advance(svc_job *j) {
    pthread_mutex_lock(&j->mu);
    if (j->finalising) {
        pthread_mutex_unlock(&j->mu);
        return;
    }
    j->finalising = 1;
    while (!stopped(j) && j->final_next < j->n_frames) {
        const int f = j->final_next;
        const svc_frame_rec *fr = &j->frames[f];
        const int has_next = f + 1 < j->n_frames;
        if (!fr->done || (uses_ring(j) && (!fr->sad_done || (has_next ? !j->frames[f + 1].sad_done : !j->finished))))
            break;
        if (is_scored(j, f)) {
            /* Copied under the lock: a push may move the frame array meanwhile. */
            double *vals = fr->vals;
            double sad[SVC_TEMPORAL_MAX], sad_next[SVC_TEMPORAL_MAX];
            for (int t = 0; t < j->n_tm; t++) {
                sad[t] = fr->sad[t];
                sad_next[t] = has_next ? j->frames[f + 1].sad[t] : 0.0;
            }
            pthread_mutex_unlock(&j->mu);
            finalise_frame(j, f, vals, sad, sad_next, !has_next);
            pthread_mutex_lock(&j->mu);
        }
        j->final_next++;
        atomic_store(&j->done_out, svc_scored_before(j, j->final_next));
    }
    j->finalising = 0;
    pthread_cond_broadcast(&j->cv); /* a feeding thread waits for room in its window (feed.c) */
    pthread_mutex_unlock(&j->mu);
}

/* Loads frame i into its slot's pictures (allocated on the slot's first use): the reference
 * always (motion needs it), the distorted when the frame is scored. The caller alone holds the
 * slot. */
static int load_frame(svc_job *j, svc_frame_slot *s, int i, const uint8_t *raw, char *err) {
    const int scored = is_scored(j, i);
    if (!s->ref.plane[0].data) {
        const int wd = j->geo[0], ht = j->geo[1], fmt = j->geo[2], bpc = j->geo[3];
        if (svc_picture_alloc(&s->ref, wd, ht, fmt, bpc) || svc_picture_alloc(&s->dis, wd, ht, fmt, bpc)) {
            svc_picture_free(&s->ref);
            snprintf(err, SVC_ERR_LEN, "out of memory for %dx%d pictures", wd, ht);
            return SVC_E_NOMEM;
        }
    }
    atomic_fetch_add(&j->ref_loads, 1);
    if (raw) {
        /* A ladder's distorted pictures are decoded one at a time by compute_frame. */
        if (svc_picture_from_raw(&s->ref, raw, (size_t)j->frame_bytes) ||
            (scored && j->n_dis <= 1 && svc_picture_from_raw(&s->dis, raw + j->frame_bytes, (size_t)j->frame_bytes))) {
            snprintf(err, SVC_ERR_LEN, "frame %d: cannot decode the pushed frame", i);
            return SVC_E_INTERNAL;
        }
        return SVC_OK;
    }
    int rc = svc_video_read(j->ref, j->skip_ref + i, &s->ref, err, SVC_ERR_LEN);
    if (!rc && scored) rc = svc_video_read(j->dis, j->skip_dis + i, &s->dis, err, SVC_ERR_LEN);
    return rc;
}

/* Stores frame i's luma (from its reference picture ref) and, with shots, its histogram, and
 * computes the SADs and cut measures that became computable. */
static int motion_step(svc_job *j, worker_ctx *w, const svc_picture *ref, int i, char *err) {
    if (ref->plane[0].w != j->geo[0] || ref->plane[0].h != j->geo[1]) {
        snprintf(err, SVC_ERR_LEN, "frame %d: motion failed", i);
        return SVC_E_INTERNAL;
    }
    if (j->n_tm || j->history) svc_luma_u16(ref, ring_slot(j, i));
    if (j->shots) svc_shot_histogram(ref, shot_slot(j, i));
    pthread_mutex_lock(&j->mu);
    j->frames[i].stored = 1;
    if (i == 0) j->frames[0].sad_done = 1; /* sad[0] = 0 */
    /* The second of two neighbours to be stored computes their SAD. */
    const int do_prev = i > 0 && j->frames[i - 1].stored;
    const int do_next = i + 1 < j->n_frames && j->frames[i + 1].stored;
    pthread_mutex_unlock(&j->mu);
    double sad_prev[SVC_TEMPORAL_MAX], sad_next[SVC_TEMPORAL_MAX];
    atomic_fetch_add(&j->motion_diffs, do_prev + do_next);
    for (int t = 0; t < j->n_tm; t++) {
        sad_prev[t] = do_prev ? j->tm[t]->diff(w->tm_state[t], ring_slot(j, i - 1), ring_slot(j, i)) : 0.0;
        sad_next[t] = do_next ? j->tm[t]->diff(w->tm_state[t], ring_slot(j, i), ring_slot(j, i + 1)) : 0.0;
    }
    const double cut_prev = j->shots && do_prev ? svc_shot_distance(shot_slot(j, i - 1), shot_slot(j, i)) : 0.0;
    const double cut_next = j->shots && do_next ? svc_shot_distance(shot_slot(j, i), shot_slot(j, i + 1)) : 0.0;
    pthread_mutex_lock(&j->mu);
    if (do_prev) {
        memcpy(j->frames[i].sad, sad_prev, sizeof sad_prev);
        j->frames[i].cut = cut_prev;
        j->frames[i].sad_done = 1;
    }
    if (do_next) {
        memcpy(j->frames[i + 1].sad, sad_next, sizeof sad_next);
        j->frames[i + 1].cut = cut_next;
        j->frames[i + 1].sad_done = 1;
    }
    pthread_cond_broadcast(&j->cv); /* ring slots may have been freed */
    pthread_mutex_unlock(&j->mu);
    return SVC_OK;
}

/* The reference lumas of the frames before frame i that ex reads for rendition r (those it pairs:
 * none before its first frame, as when it is scored alone), once their loaders stored them
 * (frames are claimed in order and a loader never waits on a unit, so they come). */
static int wait_history(svc_job *j, const svc_extractor *ex, int i, int r, svc_history *past) {
    memset(past, 0, sizeof *past);
    past->frame_rate = j->frame_rate;
    pthread_mutex_lock(&j->mu);
    for (int h = 1; h <= ex->history && i - h >= 0 && svc_rendition_pairs(j, r, i - h); h++) {
        while (!j->frames[i - h].stored && !stopped(j)) pthread_cond_wait(&j->cv, &j->mu);
        past->luma[h - 1] = ring_slot(j, i - h);
    }
    const int rc = stopped(j) ? SVC_E_CANCELLED : SVC_OK;
    pthread_mutex_unlock(&j->mu);
    return rc;
}

/* Extractor e of frame i for rendition r into its columns of the row v: its ladder path when
 * ladder is set (ladder_prepare saw ref on this worker's state), else its pair path. */
static int compute_one(svc_job *j, worker_ctx *w, int e, const svc_picture *ref, const svc_picture *dis, int i, int r,
                       int ladder, double *v, char *err) {
    if (atomic_load(&j->cancel)) return SVC_E_CANCELLED;
    const svc_extractor *ex = j->ex[e];
    if (ex->compute_history) {
        svc_history past;
        int rc = wait_history(j, ex, i, r, &past);
        if (rc) return rc;
        rc = ex->compute_history(w->state[e], ref, dis, &past, v + j->ex_col[e]);
        if (rc != SVC_OK) snprintf(err, SVC_ERR_LEN, "frame %d: extractor %s failed (status %d)", i, ex->name, rc);
        return rc;
    }
    const int rc = ladder ? ex->ladder_compute(w->state[e], ref, dis, v + j->ex_col[e])
                          : ex->compute(w->state[e], ref, dis, v + j->ex_col[e]);
    if (rc != SVC_OK) snprintf(err, SVC_ERR_LEN, "frame %d: extractor %s failed (status %d)", i, ex->name, rc);
    return rc;
}

/* Every extractor of frame i for rendition r; ladder[e] as compute_one's ladder (NULL: a pair). */
static int compute_pair(svc_job *j, worker_ctx *w, const svc_picture *ref, const svc_picture *dis, int i, int r,
                        const unsigned char *ladder, double *v, char *err) {
    for (int e = 0; e < j->n_ex; e++) {
        const int rc = compute_one(j, w, e, ref, dis, i, r, ladder && ladder[e], v, err);
        if (rc) return rc;
    }
    return SVC_OK;
}

/* Scores ladder frame i: each rendition that scores it (svc_ladder_range) against the same
 * reference picture (loaded once) into the rendition's row, the renditions decoded one at a time
 * into dis; another rendition's row stays empty. Extractors with a ladder
 * path analyse the reference once for all renditions (what they share is theirs to decide); the
 * frame is one unit, so every rendition runs on the worker state that analysed it. */
static int compute_frame(svc_job *j, worker_ctx *w, int i, const uint8_t *raw, const svc_picture *ref,
                         svc_picture *dis, double *v, char *err) {
    unsigned char ladder[SVC_LOOP_MAX_INSTANCES] = { 0 };
    for (int e = 0; e < j->n_ex; e++) {
        if (!j->ex[e]->ladder_prepare) continue;
        const int rc = j->ex[e]->ladder_prepare(w->state[e], ref);
        if (rc < 0) {
            snprintf(err, SVC_ERR_LEN, "frame %d: extractor %s failed on the reference (status %d)", i, j->ex[e]->name,
                     rc);
            return rc;
        }
        ladder[e] = rc == SVC_OK;
        if (ladder[e]) atomic_fetch_add(&j->ref_analyses, 1);
    }
    for (int r = 0; r < j->n_dis; r++) {
        if (!svc_rendition_scored(j, r, i)) continue;
        if (svc_picture_from_raw(dis, raw + (size_t)(r + 1) * (size_t)j->frame_bytes, (size_t)j->frame_bytes)) {
            snprintf(err, SVC_ERR_LEN, "frame %d: cannot decode rendition %d's pushed frame", i, r);
            return SVC_E_INTERNAL;
        }
        const int rc = compute_pair(j, w, ref, dis, i, r, ladder, v + (size_t)r * (size_t)j->n_metrics, err);
        if (rc) return rc;
    }
    return SVC_OK;
}

/* Frame i may use its ring slot once both SADs that read the slot's previous frame k are done, and
 * the frames whose history reads frame k. */
static int slot_free(const svc_job *j, int i) {
    const int k = i - j->ring_len;
    if (k < 0) return 1;
    if ((j->n_tm || j->shots) && !(j->frames[k].sad_done && j->frames[k + 1].sad_done)) return 0;
    for (int h = 1; h <= j->history; h++)
        if (!j->frames[k + h].done) return 0;
    return 1;
}

/* Units of frame i: one per extractor of a scored frame; a ladder's frame is one unit (its
 * renditions decoded one at a time into the slot's distorted picture); none for a frame that is
 * not scored. */
static int frame_units(const svc_job *j, int i) {
    if (!is_scored(j, i)) return 0;
    return j->n_dis > 1 ? 1 : j->n_ex;
}

/* Tests only (svc_loop_test_hand_off): loaders leave every unit of their frames to the other
 * workers, so which thread runs a unit no longer depends on the scheduler. */
static atomic_int loaders_hand_off;

void svc_loop_test_hand_off(int on) { atomic_store(&loaders_hand_off, on); }

/* The loaded frame with an unclaimed unit that worker id takes next, or NULL: the frame it loaded
 * itself, else the one that comes first in frame order. With as many frames in flight as workers,
 * each worker runs its own frame's units (frame-level threading, no waiting on another frame's
 * extractors) and helps the oldest frame only once its own is taken. Called with the lock held. */
static svc_frame_slot *open_slot(svc_job *j, int id) {
    svc_frame_slot *own = NULL, *oldest = NULL;
    const int hand_off = atomic_load(&loaders_hand_off);
    for (int k = 0; k < j->n_slots; k++) {
        svc_frame_slot *s = &j->slots[k];
        if (s->frame < 0 || !s->loaded || s->next_unit >= s->units) continue;
        if (hand_off && s->loader == id) continue;
        if (s->loader == id && (!own || s->frame < own->frame)) own = s;
        if (!oldest || s->frame < oldest->frame) oldest = s;
    }
    return own ? own : oldest;
}

static svc_frame_slot *free_slot(svc_job *j) {
    for (int k = 0; k < j->n_slots; k++)
        if (j->slots[k].frame < 0) return &j->slots[k];
    return NULL;
}

/* One part of slot s's frame (the loader's, or a unit) finished; the last one marks the frame
 * done, frees the slot and hands back the bytes the slot kept (to free outside the lock).
 * Returns whether the frame is done. Called with the lock held. */
static int part_done_locked(svc_job *j, svc_frame_slot *s, uint8_t **raw) {
    if (--s->pending > 0) return 0;
    j->frames[s->frame].done = 1;
    *raw = s->raw;
    s->raw = NULL;
    s->frame = -1;
    s->loaded = 0;
    pthread_cond_broadcast(&j->cv); /* a slot is free */
    return 1;
}

/* Runs unit u of slot s's frame i, whose fields the caller copied under the lock. */
static int run_unit(svc_job *j, worker_ctx *w, svc_frame_slot *s, int u, int i, const uint8_t *raw, double *vals,
                    char *err) {
    if (j->n_dis > 1) return compute_frame(j, w, i, raw, &s->ref, &s->dis, vals, err);
    return compute_one(j, w, u, &s->ref, &s->dis, i, 0, 0, vals, err);
}

/* Each pass takes a unit left in a loaded frame (its own frame's, else the oldest frame's: see
 * open_slot) before it starts a new frame; else claims the next frame (when a slot and its motion
 * ring slot are free), loads it and runs its motion step; else waits. With enough frames in flight
 * every worker runs the units of the frame it loaded, as frame-level threading did; with fewer,
 * the frame's extractors spread over the workers. Values never depend on who ran a unit: each
 * extractor writes its own columns of the frame's row, from per-worker state, and finalisation
 * stays in frame order (advance). */
static void *worker(void *arg) {
    svc_job *j = arg;
    worker_ctx w;
    char err[SVC_ERR_LEN] = "";
    int rc = worker_init(j, &w, err);
    pthread_mutex_lock(&j->mu);
    if (rc) fail_locked(j, rc, err);
    while (!stopped(j)) {
        svc_frame_slot *s = open_slot(j, w.id);
        uint8_t *done_raw = NULL;
        if (s) {
            const int u = s->next_unit++, i = s->frame;
            const uint8_t *raw = s->raw;
            double *vals = s->vals;
            if (s->loader != w.id) atomic_fetch_add(&j->units_shared, 1);
            pthread_mutex_unlock(&j->mu);
            rc = run_unit(j, &w, s, u, i, raw, vals, err);
            pthread_mutex_lock(&j->mu);
            if (rc) {
                if (rc != SVC_E_CANCELLED) fail_locked(j, rc, err);
                break;
            }
        } else {
            /* A file job's frame record is made when its frame is claimed, so memory follows the
             * frames in flight and scored, not the clip's length. */
            if (j->total && j->next_claim == j->n_frames && j->n_frames < j->total) {
                if (svc_loop_add_frame(j, NULL)) {
                    fail_locked(j, SVC_E_NOMEM, "out of memory for a frame record");
                    break;
                }
                if (++j->n_frames == j->total) j->finished = 1;
            }
            const int i = j->next_claim;
            if (i >= j->n_frames || !slot_free(j, i) || !(s = free_slot(j))) {
                /* Nothing to take: done once no frame can come and none is being loaded. */
                if (i >= j->n_frames && j->finished && !j->loading) break;
                pthread_cond_wait(&j->cv, &j->mu);
                continue;
            }
            j->next_claim++;
            s->frame = i;
            s->loaded = 0;
            s->loader = w.id;
            s->units = frame_units(j, i);
            s->next_unit = 0;
            s->pending = s->units + 1;
            s->vals = j->frames[i].vals;
            uint8_t *raw = j->frames[i].raw;
            j->frames[i].raw = NULL;
            j->loading++;
            pthread_mutex_unlock(&j->mu);

            rc = load_frame(j, s, i, raw, err);
            pthread_mutex_lock(&j->mu);
            j->loading--;
            if (j->n_dis > 1) {
                s->raw = raw; /* the ladder unit's renditions */
                raw = NULL;
            }
            s->loaded = !rc;
            pthread_cond_broadcast(&j->cv); /* its units can be taken */
            pthread_mutex_unlock(&j->mu);
            free(raw);
            if (!rc && uses_ring(j)) rc = motion_step(j, &w, &s->ref, i, err);
            pthread_mutex_lock(&j->mu);
            if (rc) {
                fail_locked(j, rc, err);
                break;
            }
        }
        if (part_done_locked(j, s, &done_raw)) {
            pthread_mutex_unlock(&j->mu);
            free(done_raw);
            advance(j);
            pthread_mutex_lock(&j->mu);
        }
    }
    pthread_mutex_unlock(&j->mu);
    advance(j); /* the input may have ended: the last frame can be final now */
    worker_free(j, &w);
    pthread_mutex_lock(&j->mu);
    if (--j->active == 0) {
        /* Complete unless a failure or a cancel stopped the work first. */
        const int complete = j->finished && j->final_next == j->n_frames;
        const int want = j->seg_lead + j->seg_own + j->seg_tail;
        if (complete && !j->err_code && j->seg_own && j->n_frames != want) {
            j->err_code = SVC_E_GEOMETRY;
            snprintf(j->err_msg, sizeof j->err_msg,
                     "segment of %d frames from frame %d: %d frames read, %d expected (with its context frames)",
                     j->seg_own, j->seg_first, j->n_frames, want);
        }
        atomic_store(&j->state, j->err_code ? j->err_code : complete ? 1 : SVC_E_CANCELLED);
    }
    pthread_mutex_unlock(&j->mu);
    return NULL;
}

int64_t svc_loop_units_shared(const svc_job *j) { return atomic_load(&((svc_job *)j)->units_shared); }

const svc_extractor *svc_loop_metric_extractor(const svc_job *j, int metric, int *output) {
    for (int e = 0; e < j->n_ex; e++)
        if (metric >= j->ex_col[e] && metric < j->ex_col[e] + j->ex[e]->n_outputs) {
            *output = metric - j->ex_col[e];
            return j->ex[e];
        }
    return NULL;
}

/* ------------------------------------------------------------- planning ---- */

/* How a model feature is computed: per-frame extractor and output with option values, or
 * temporal extractor tm (ex NULL) and output. */
typedef struct {
    const svc_extractor *ex;
    int tm, output;
    int custom; /* an option differs from its default: an instance of its own */
    double opts[SVC_MODEL_MAX_OPTIONS];
} feature_use;

/* Resolves model feature k through the extractor table, applying the options its file sets;
 * a feature svc does not compute, or an option its extractor does not take, is refused by name. */
static int resolve_feature(const svc_model *m, int k, feature_use *use, char *err, size_t err_len) {
    const char *name = svc_model_feature_name(m, k);
    memset(use, 0, sizeof *use);
    const int kind = svc_feature_source(name, &use->ex, &use->output);
    if (kind == SVC_FEATURE_MOTION) use->tm = svc_registry_temporal_of(name);
    if (!kind || use->tm < 0) {
        svc_set_err(err, err_len, "model: feature %s is not computed by this build of svc", name);
        return SVC_E_MODEL;
    }
    const svc_temporal *tm = use->ex ? NULL : svc_registry_temporal_at(use->tm)->tm;
    const int n_known = use->ex ? use->ex->n_options : tm->n_options;
    const svc_extractor_option *known = use->ex ? use->ex->options : tm->options;
    for (int o = 0; o < n_known; o++) use->opts[o] = known[o].def;
    for (int o = 0; o < svc_model_feature_option_count(m, k); o++) {
        double value;
        const char *key = svc_model_feature_option(m, k, o, &value);
        int at = 0;
        while (at < n_known && strcmp(known[at].name, key) != 0) at++;
        if (at == n_known) {
            svc_set_err(err, err_len, "model: feature option '%s' of %s is not supported%s%s", key, name,
                        n_known ? " (it takes " : "", n_known ? known[0].name : "");
            if (n_known) {
                const size_t len = strlen(err);
                for (int q = 1; q < n_known && len + 2 < err_len; q++)
                    snprintf(err + strlen(err), err_len - strlen(err), ", %s", known[q].name);
                snprintf(err + strlen(err), err_len - strlen(err), ")");
            }
            return SVC_E_MODEL;
        }
        const svc_extractor_option *opt = &known[at];
        const char *text = svc_model_feature_option_text(m, k, o);
        if (!opt->choices != !text) {
            svc_set_err(err, err_len, "model: feature option '%s' of %s must be a %s", key, name,
                        opt->choices ? "string" : "number");
            return SVC_E_MODEL;
        }
        if (text) {
            int c = 0;
            while (opt->choices[c] && strcmp(opt->choices[c], text) != 0) c++;
            if (!opt->choices[c]) {
                svc_set_err(err, err_len, "model: feature option '%s' of %s is \"%s\", not one of", key, name, text);
                for (int q = 0; opt->choices[q]; q++)
                    snprintf(err + strlen(err), err_len - strlen(err), "%s \"%s\"", q ? "," : "", opt->choices[q]);
                return SVC_E_MODEL;
            }
            value = c;
        }
        if (!(value >= opt->min && value <= opt->max)) {
            svc_set_err(err, err_len, "model: feature option '%s' of %s is %g, outside %g to %g", key, name, value,
                        opt->min, opt->max);
            return SVC_E_MODEL;
        }
        use->opts[at] = value;
        use->custom |= value != opt->def;
    }
    const char *why = use->ex && use->ex->check ? use->ex->check(use->opts) : NULL;
    if (why) {
        svc_set_err(err, err_len, "model: feature %s: %s", name, why);
        return SVC_E_MODEL;
    }
    return SVC_OK;
}

int svc_model_check(const svc_model *m, char *err, size_t err_len) {
    if (!m) {
        svc_set_err(err, err_len, "svc_model_check: NULL model");
        return SVC_E_INVALID_ARG;
    }
    feature_use use;
    for (int k = 0; k < svc_model_feature_count(m); k++) {
        const int rc = resolve_feature(m, k, &use, err, err_len);
        if (rc) return rc;
    }
    svc_set_err(err, err_len, "%s", "");
    return SVC_OK;
}

/* The job's instance of ex with these option values (NULL: defaults); -1 if none. */
static int instance_of(const svc_job *j, const svc_extractor *ex, const double *opts) {
    for (int e = 0; e < j->n_ex; e++) {
        if (j->ex[e] != ex) continue;
        int same = 1;
        for (int o = 0; o < ex->n_options; o++)
            same &= j->ex_opts[e][o] == (opts ? opts[o] : ex->options[o].def);
        if (same) return e;
    }
    return -1;
}

static void add_instance(svc_job *j, const svc_extractor *ex, const double *opts) {
    if (instance_of(j, ex, opts) >= 0) return;
    const int e = j->n_ex++;
    j->ex[e] = ex;
    for (int o = 0; o < ex->n_options; o++) {
        j->ex_opts[e][o] = opts ? opts[o] : ex->options[o].def;
        j->ex_custom[e] |= j->ex_opts[e][o] != ex->options[o].def;
    }
}

/* The job's output set of temporal extractor t (index into j->tm) with these option values
 * (NULL: defaults); -1 if none. */
static int temporal_set_of(const svc_job *j, int t, const double *opts) {
    const svc_temporal *tm = j->tm[t];
    for (int s = 0; s < j->n_tmo; s++) {
        if (j->tmo_tm[s] != t) continue;
        int same = 1;
        for (int o = 0; o < tm->n_options; o++) same &= j->tmo_opts[s][o] == (opts ? opts[o] : tm->options[o].def);
        if (same) return s;
    }
    return -1;
}

/* Adds that set, its columns after the metrics so far. */
static void add_temporal_set(svc_job *j, int t, const double *opts) {
    if (temporal_set_of(j, t, opts) >= 0) return;
    const svc_temporal *tm = j->tm[t];
    const int s = j->n_tmo++;
    j->tmo_tm[s] = t;
    j->tmo_col[s] = j->n_metrics;
    j->n_metrics += tm->n_outputs;
    for (int o = 0; o < tm->n_options; o++) {
        j->tmo_opts[s][o] = opts ? opts[o] : tm->options[o].def;
        j->tmo_custom[s] |= j->tmo_opts[s][o] != tm->options[o].def;
    }
}

/* "<base>_<alias>_<value>" for each of the n options whose value differs from its default. */
static void with_options(const svc_extractor_option *opts, int n, const double *values, const char *base, char *name,
                         size_t size) {
    int len = snprintf(name, size, "%s", base);
    for (int o = 0; o < n; o++)
        if (values[o] != opts[o].def && len < (int)size) {
            if (opts[o].choices)
                len += snprintf(name + len, size - (size_t)len, "_%s_%s", opts[o].alias, opts[o].choices[(int)values[o]]);
            else
                len += snprintf(name + len, size - (size_t)len, "_%s_%g", opts[o].alias, values[o]);
        }
}

/* Metric names: the model's outputs, then each instance's outputs with its non-default
 * options appended as the reference does ("integer_adm2_egl_1"), then the temporal ones';
 * optioned instances are named the same way in the provenance ("integer_adm_egl_1"). */
static int name_metrics(svc_job *j) {
    char name[256];
    size_t total = 0;
    for (int pass = 0; pass < 2; pass++) {
        char *at = j->names_buf;
        for (int k = 0; k < j->n_metrics + j->n_ex; k++) {
            const int is_output = k < j->n_outputs, is_label = k >= j->n_metrics;
            int e = is_label ? k - j->n_metrics : -1, t = -1;
            for (int q = 0; !is_label && q < j->n_ex; q++)
                if (k >= j->ex_col[q] && k < j->ex_col[q] + j->ex[q]->n_outputs) e = q;
            for (int q = 0; !is_label && q < j->n_tmo; q++)
                if (k >= j->tmo_col[q] && k < j->tmo_col[q] + j->tm[j->tmo_tm[q]]->n_outputs) t = q;
            const svc_temporal *tm = t >= 0 ? j->tm[j->tmo_tm[t]] : NULL;
            if (!is_output && (e >= 0 ? !j->ex_custom[e] : !j->tmo_custom[t])) {
                if (pass && !is_label)
                    j->metric_names[k] = e >= 0 ? j->ex[e]->output_names[k - j->ex_col[e]]
                                                : tm->output_names[k - j->tmo_col[t]];
                continue;
            }
            if (is_output) svc_model_output_name(j->model, k, name, sizeof name);
            else if (is_label)
                with_options(j->ex[e]->options, j->ex[e]->n_options, j->ex_opts[e], j->ex[e]->name, name, sizeof name);
            else if (e >= 0)
                with_options(j->ex[e]->options, j->ex[e]->n_options, j->ex_opts[e], j->ex[e]->output_names[k - j->ex_col[e]],
                             name, sizeof name);
            else
                with_options(tm->options, tm->n_options, j->tmo_opts[t], tm->output_names[k - j->tmo_col[t]], name,
                             sizeof name);
            const size_t n = strlen(name) + 1;
            if (pass) {
                memcpy(at, name, n);
                if (is_label) j->ex_label[e] = at;
                else j->metric_names[k] = at;
                at += n;
            } else {
                total += n;
            }
        }
        if (!pass && !(j->names_buf = malloc(total ? total : 1))) return SVC_E_NOMEM;
    }
    return SVC_OK;
}

int svc_loop_plan(svc_job *j, int64_t feats, char *err, size_t err_len) {
    /* Extractors: those asked for (default options), then those the model reads. */
    const int n_reg = svc_registry_count(), n_temporal = svc_registry_temporal_count();
    int need[SVC_REGISTRY_MAX] = { 0 }, need_tm[SVC_TEMPORAL_MAX] = { 0 }, need_tm_default[SVC_TEMPORAL_MAX] = { 0 };
    for (int e = 0; e < n_reg; e++) need[e] = (feats & svc_registry_at(e)->flag) != 0;
    for (int t = 0; t < n_temporal; t++) need_tm[t] = need_tm_default[t] = (feats & svc_registry_temporal_at(t)->flag) != 0;
    const int n_model = svc_model_feature_count(j->model);
    feature_use use[SVC_MODEL_MAX_FEATURES];
    for (int k = 0; k < n_model; k++) {
        int rc = resolve_feature(j->model, k, &use[k], err, err_len);
        if (rc) return rc;
        if (!use[k].ex) {
            need_tm[use[k].tm] = 1;
            need_tm_default[use[k].tm] |= !use[k].custom;
        }
        for (int e = 0; e < n_reg; e++) need[e] |= !use[k].custom && svc_registry_at(e)->ex == use[k].ex;
    }
    for (int e = 0; e < n_reg; e++)
        if (need[e]) add_instance(j, svc_registry_at(e)->ex, NULL);
    for (int k = 0; k < n_model; k++)
        if (use[k].custom && use[k].ex) add_instance(j, use[k].ex, use[k].opts);
    for (int e = 0; e < j->n_ex; e++)
        if (j->ex[e]->history > j->history) j->history = j->ex[e]->history;
    j->n_outputs = svc_model_output_count(j->model);
    j->n_metrics = j->n_outputs;
    for (int e = 0; e < j->n_ex; e++) {
        j->ex_col[e] = j->n_metrics;
        j->n_metrics += j->ex[e]->n_outputs;
    }
    int tm_pos[SVC_TEMPORAL_MAX];
    for (int t = 0; t < n_temporal; t++)
        if (need_tm[t]) {
            tm_pos[t] = j->n_tm;
            j->tm[j->n_tm++] = svc_registry_temporal_at(t)->tm;
            if (need_tm_default[t]) add_temporal_set(j, tm_pos[t], NULL);
        }
    for (int k = 0; k < n_model; k++)
        if (!use[k].ex && use[k].custom) add_temporal_set(j, tm_pos[use[k].tm], use[k].opts);
    if (!(j->metric_names = malloc(sizeof *j->metric_names * (size_t)j->n_metrics))) return SVC_E_NOMEM;
    if (name_metrics(j)) return SVC_E_NOMEM;
    for (int k = 0; k < n_model; k++)
        j->model_col[k] = use[k].ex ? j->ex_col[instance_of(j, use[k].ex, use[k].opts)] + use[k].output
                                    : j->tmo_col[temporal_set_of(j, tm_pos[use[k].tm], use[k].opts)] + use[k].output;
    return SVC_OK;
}

/* ------------------------------------------------------------- lifecycle ---- */

void svc_loop_init(svc_job *j, const svc_model *m) {
    pthread_mutex_init(&j->mu, NULL);
    pthread_cond_init(&j->cv, NULL);
    j->model = svc_model_retain(m);
    j->fds[0] = j->fds[1] = -1;
    for (int r = 0; r < SVC_LADDER_MAX_RENDITIONS; r++) j->rend_end[r] = INT_MAX; /* every frame */
}

/* Room for frames up to n (the caller holds the lock when workers run). */
static int reserve_frames(svc_job *j, int n) {
    if (n <= j->cap) return SVC_OK;
    int cap = j->cap ? j->cap : 64;
    while (cap < n) cap *= 2;
    svc_frame_rec *fr = realloc(j->frames, sizeof *fr * (size_t)cap);
    if (!fr) return SVC_E_NOMEM;
    memset(fr + j->cap, 0, sizeof *fr * (size_t)(cap - j->cap));
    j->frames = fr;
    j->cap = cap;
    return SVC_OK;
}

int svc_loop_add_frame(svc_job *j, uint8_t *raw) {
    const int i = j->n_frames;
    if (reserve_frames(j, i + 1)) return SVC_E_NOMEM;
    if (is_scored(j, i) &&
        !(j->frames[i].vals = calloc((size_t)j->n_metrics * (size_t)renditions(j), sizeof(double))))
        return SVC_E_NOMEM;
    j->frames[i].raw = raw;
    return SVC_OK;
}

int svc_loop_start(svc_job *j, char *err, size_t err_len) {
    j->ring_len = j->n_threads + 2; /* n_threads as open_inputs left it (a short file lowers it) */
    /* Frames in flight: one per worker, and one more so a worker that finished its part of a frame
     * can load the next while the others finish theirs. */
    if (!j->slots) {
        if (!(j->slots = calloc((size_t)j->n_threads + 1, sizeof *j->slots))) return SVC_E_NOMEM;
        j->n_slots = j->n_threads + 1;
        for (int k = 0; k < j->n_slots; k++) j->slots[k].frame = -1;
    }
    if (!(j->threads = calloc((size_t)j->n_threads, sizeof *j->threads))) return SVC_E_NOMEM;
    pthread_mutex_lock(&j->mu);
    for (int t = 0; t < j->n_threads; t++) {
        if (pthread_create(&j->threads[t], NULL, worker, j) != 0) break;
        j->n_started++;
        j->active++;
    }
    pthread_mutex_unlock(&j->mu);
    /* Fewer threads than asked still give the same results; none is an error. */
    if (j->n_started == 0) {
        svc_set_err(err, err_len, "cannot start worker threads");
        return SVC_E_INTERNAL;
    }
    return SVC_OK;
}

void svc_loop_cancel(svc_job *j) {
    atomic_store(&j->cancel, 1);
    pthread_mutex_lock(&j->mu);
    pthread_cond_broadcast(&j->cv);
    pthread_mutex_unlock(&j->mu);
}

void svc_loop_destroy(svc_job *j) {
    svc_loop_cancel(j);
    for (int t = 0; t < j->n_started; t++) pthread_join(j->threads[t], NULL);
    free(j->threads);
    for (int i = 0; i < j->n_frames; i++) {
        free(j->frames[i].vals);
        free(j->frames[i].raw);
    }
    free(j->frames);
    for (int k = 0; k < j->n_slots; k++) {
        svc_picture_free(&j->slots[k].ref);
        svc_picture_free(&j->slots[k].dis);
        free(j->slots[k].raw);
    }
    free(j->slots);
    free(j->ring);
    free(j->shot_ring);
    free(j->metric_names);
    free(j->names_buf);
    if (j->ref) svc_video_close(j->ref);
    if (j->dis) svc_video_close(j->dis);
    svc_model_free((svc_model *)j->model);
    pthread_cond_destroy(&j->cv);
    pthread_mutex_destroy(&j->mu);
}
