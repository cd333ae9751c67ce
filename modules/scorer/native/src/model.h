/*
 * The model (model.c reads it from the reference's JSON, plain or bootstrap; predict.c predicts).
 * It knows nothing of extractors or the frame loop: a model lists the features it reads (svc
 * names, each with the option values its file sets) and turns their values into its outputs.
 * Whoever runs the model resolves those features (the scorer's registry, svc_model_check).
 */
#ifndef SVC_MODEL_H
#define SVC_MODEL_H

#include <stdatomic.h>

#include "internal.h"

/* Upper bounds: features of a model (and libsvm vector indexes), options per feature, models
 * in a bundle, members of a bootstrap collection. */
#define SVC_MODEL_MAX_FEATURES 32
#define SVC_MODEL_MAX_OPTIONS 8
#define SVC_MODEL_MAX_PARTS 16
#define SVC_MODEL_MAX_MEMBERS 64

/* Takes one more reference: jobs and streams hold the model while their threads run, so the
 * caller may svc_model_free it at any time. svc_model_free drops one reference. */
const svc_model *svc_model_retain(const svc_model *m);

/* One nu-SVR model: normalisation, support vectors, transform and clip. */
typedef struct svm_member {
    int linear_rescale;
    double slopes[SVC_MODEL_MAX_FEATURES + 1]; /* [0] maps the prediction, [i+1] feature i */
    double intercepts[SVC_MODEL_MAX_FEATURES + 1];
    int clip;
    double clip_min, clip_max;
    struct {
        int enabled, has_p[3];
        double p[3];
    } transform;
    /* chroma_correction_parameter c (the vmaf_v1.0.16 models: 120): a speed_chroma value of
     * exactly 0 (flat or too small chroma) is replaced by c (1 - adm3) before prediction, as the
     * reference's "chroma from luma" does; guided/guiding are the features' indexes. */
    double chroma_correction;
    int chroma_guided, chroma_guiding;
    /* nu-SVR with RBF kernel; support vectors dense, dim values each (missing indexes are 0). */
    double gamma, rho;
    int n_sv, dim;
    double *coef, *sv;
} svm_member;

typedef struct model_feature {
    char *name; /* svc's name, e.g. "integer_adm2" */
    int n_opts;
    char *keys[SVC_MODEL_MAX_OPTIONS];
    double values[SVC_MODEL_MAX_OPTIONS]; /* NaN for a string */
    char *texts[SVC_MODEL_MAX_OPTIONS];   /* a string value (e.g. "bilinear"), else NULL */
} model_feature;

/* What one model file predicts: one member, or a bootstrap collection of several. */
typedef struct model_part {
    char *name;           /* output name prefix; NULL: "vmaf" */
    int n_members;
    svm_member *members;  /* owned unless the model is a bundle */
    int n_features;
    int col[SVC_MODEL_MAX_FEATURES]; /* the part's feature j is the model's feature col[j] */
} model_part;

struct svc_model {
    atomic_int refs;
    int n_features;
    model_feature feat[SVC_MODEL_MAX_FEATURES];
    int n_parts;
    model_part parts[SVC_MODEL_MAX_PARTS];
    const svc_model *sources[SVC_MODEL_MAX_PARTS]; /* a bundle borrows its parts' members */
};

/* Outputs of one part: its score, or each member's and the bootstrap statistics. */
int svc_model_part_outputs(const model_part *part);

/* Feature options and output names: public (svc_scorer.h). */

/* Every output of one frame from the raw feature values in model order (svc_model_feature_name):
 * per member normalise, nu-SVR with RBF kernel, denormalise, optional transform, clip. */
/* The string value of option k of feature i (e.g. "bilinear"), or NULL for a number. */
const char *svc_model_feature_option_text(const svc_model *m, int i, int k);

void svc_model_predict(const svc_model *m, const double *features, double *out);

#endif
