/* Model internals shared by model.c and the frame loop (frame_loop.c). */
#ifndef SVC_MODEL_H
#define SVC_MODEL_H

#include "internal.h"

/* Upper bound on model features and on libsvm vector indexes. */
#define SVC_MODEL_MAX_FEATURES 32

/* Takes one more reference: jobs and streams hold the model while their threads run, so the
 * caller may svc_model_free it at any time. svc_model_free drops one reference. */
const svc_model *svc_model_retain(const svc_model *m);

/* Score of one frame from the raw feature values in model order (svc_model_feature_name):
 * normalise, nu-SVR with RBF kernel, denormalise, optional transform, clip. */
double svc_model_predict(const svc_model *m, const double *features);

#endif
