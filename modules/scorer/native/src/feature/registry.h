/*
 * The feature registry: every extractor svc can run, the public option flag that asks for it,
 * and the lookup from a reference feature name to the computation that produces it. The frame
 * loop picks its extractors here; the registry knows nothing of jobs, threads or models.
 */
#ifndef SVC_REGISTRY_H
#define SVC_REGISTRY_H

#include "extractor.h"

#define SVC_REGISTRY_MAX 16 /* upper bound on registered per-frame extractors */
#define SVC_TEMPORAL_MAX 2  /* upper bound on registered temporal extractors */

typedef struct svc_registry_entry {
    const svc_extractor *ex;
    int flag; /* svc_feature_flag that asks for it; 0: runs only when a model reads it */
} svc_registry_entry;

/* Registered per-frame extractors, in the order their outputs become metrics. */
int svc_registry_count(void);
const svc_registry_entry *svc_registry_at(int i);
/* Registered temporal extractors (motion), after the per-frame ones in metric order. */
typedef struct svc_registry_temporal {
    const svc_temporal *tm;
    int flag; /* as above */
} svc_registry_temporal;
int svc_registry_temporal_count(void);
const svc_registry_temporal *svc_registry_temporal_at(int i);
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
