/*
 * The model module (model.c): the reference's model JSON, plain or bootstrap, and prediction.
 * It knows nothing of extractors or the frame loop: a model lists the features it reads (svc
 * names, each with the option values its file sets) and turns their values into its outputs.
 * Whoever runs the model resolves those features (the scorer's registry, svc_model_check).
 */
#ifndef SVC_MODEL_H
#define SVC_MODEL_H

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

/* Feature options and output names: public (svc_scorer.h). */

/* Every output of one frame from the raw feature values in model order (svc_model_feature_name):
 * per member normalise, nu-SVR with RBF kernel, denormalise, optional transform, clip. */
/* The string value of option k of feature i (e.g. "bilinear"), or NULL for a number. */
const char *svc_model_feature_option_text(const svc_model *m, int i, int k);

void svc_model_predict(const svc_model *m, const double *features, double *out);

#endif
