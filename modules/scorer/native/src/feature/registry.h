/*
 * The feature registry: every extractor svc can run, one row each with its facts (the public
 * option flag that asks for it, whose numbers it reproduces, the smallest frame it accepts, the
 * memory one worker's state takes), and the lookup from a reference feature name to the
 * computation that produces it. The frame loop picks its extractors here, the scorer sizes jobs
 * from the rows, and the public ABI lists them (svc_feature_*, svc_scorer.h); the registry knows
 * nothing of jobs, threads or models.
 */
#ifndef SVC_REGISTRY_H
#define SVC_REGISTRY_H

#include "extractor.h"

#define SVC_REGISTRY_MAX 16 /* upper bound on registered per-frame extractors */
#define SVC_TEMPORAL_MAX 2  /* upper bound on registered temporal extractors */

/* The smallest frame an extractor's create accepts (enum svc_min_rule, svc_scorer.h). */
typedef struct svc_min_frame {
    int rule; /* SVC_MIN_NONE, SVC_MIN_EACH_SIDE, SVC_MIN_LONGER_SIDE or SVC_MIN_EACH_PLANE */
    int w, h; /* SVC_MIN_LONGER_SIDE: w only */
} svc_min_frame;

/* One extractor and its facts. Exactly one of ex and tm is set. */
typedef struct svc_registry_entry {
    const svc_extractor *ex; /* a per-frame extractor */
    const svc_temporal *tm;  /* a temporal one (consecutive reference lumas: motion) */
    int flag;                /* svc_feature_flag that asks for it; 0: runs only when a model reads it */
    const char *implementation; /* whose numbers its outputs reproduce, with the version */
    svc_min_frame min;
    /* Working bytes per pixel of one worker's state, measured at 1080p and 2160p and rounded up
     * (a fixed 256 KiB per state is added by the scorer); and, for an extractor with a ladder path,
     * the bytes per pixel its state keeps for the shared reference side (ladder_prepare). */
    double bytes_per_pixel, ladder_bytes_per_pixel;
} svc_registry_entry;

/* Every row, in the order the public ABI lists them (per-frame rows, then temporal rows). */
int svc_registry_size(void);
const svc_registry_entry *svc_registry_row(int i);
/* The row's extractor name ("integer_vif", "float_motion", ...). */
const char *svc_registry_name(const svc_registry_entry *row);

/* Registered per-frame extractors, in the order their outputs become metrics. */
int svc_registry_count(void);
const svc_registry_entry *svc_registry_at(int i);
/* The row of a per-frame extractor. */
const svc_registry_entry *svc_registry_of(const svc_extractor *ex);
/* Registered temporal extractors (motion), after the per-frame ones in metric order. */
int svc_registry_temporal_count(void);
const svc_registry_entry *svc_registry_temporal_at(int i);
const svc_registry_entry *svc_registry_of_temporal(const svc_temporal *tm);
/* Index of the temporal extractor with an output of that name, or -1. */
int svc_registry_temporal_of(const char *name);

/* Every svc_feature_flag some extractor answers to, OR-ed. */
int svc_registry_flags(void);

/* What produces a feature of that name. */
enum svc_feature_kind {
    SVC_FEATURE_UNKNOWN = 0, /* svc does not compute it */
    SVC_FEATURE_FRAME = 1,   /* output *output of the per-frame extractor *ex */
    SVC_FEATURE_MOTION = 2   /* output *output of a temporal extractor (svc_registry_temporal_of), *ex = NULL */
};
int svc_feature_source(const char *name, const svc_extractor **ex, int *output);

#endif
