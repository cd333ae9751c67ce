/*
 * Per-frame prediction, computed in the reference's order and precision (as libvmaf's
 * predict.c / libsvm's svm_predict for nu_svr):
 *   x_j  = slope[j+1] * feature_j + intercept[j+1]          (linear_rescale; none: x_j = feature_j)
 *   k_s  = exp(-gamma * sum_j (x_j - sv_s,j)^2)               (sum in index order, missing = 0)
 *   y    = (sum_s coef_s * k_s) - rho                         (summed in support-vector order)
 *   y    = (y - intercept[0]) / slope[0]                      (linear_rescale)
 *   y    = score_transform(y)  only when score_transform.enabled is true (model.c)
 *   y    = clamp(y, score_clip)                               when score_clip is present
 * Missing libsvm indexes are stored as 0: (x - 0)^2 == x*x exactly, so the dense sum is
 * bit-identical to libsvm's sparse merge.
 */
#include <math.h>
#include <stdlib.h>

#include "model.h"

/* The reference's polynomial transform. Its rectification (out_lte_in / out_gte_in) compares
 * the piecewise-linear stage's output with that stage's input; without knots both are the
 * polynomial's output, so rectification never changes the score and is not modelled here. */
static double transform(const svm_member *m, double y) {
    if (!(m->transform.has_p[0] || m->transform.has_p[1] || m->transform.has_p[2])) return y;
    double out = 0.0;
    if (m->transform.has_p[0]) out += m->transform.p[0];
    if (m->transform.has_p[1]) out += m->transform.p[1] * y;
    if (m->transform.has_p[2]) out += m->transform.p[2] * y * y;
    return out;
}

static double finish(const svm_member *m, double y) {
    if (m->transform.enabled) y = transform(m, y);
    if (m->clip) y = y < m->clip_min ? m->clip_min : (y > m->clip_max ? m->clip_max : y);
    return y;
}

/* Normalise, nu-SVR with RBF kernel, denormalise: the score before transform and clip. */
static double predict_raw(const svm_member *m, int n_features, const double *features) {
    double x[SVC_MODEL_MAX_FEATURES] = { 0 };
    for (int j = 0; j < n_features; j++)
        x[j] = m->linear_rescale ? m->slopes[j + 1] * features[j] + m->intercepts[j + 1] : features[j];
    if (m->chroma_correction != 0.0) {
        /* On the normalised values, denormalised back as the reference does. */
        const int gd = m->chroma_guided, gg = m->chroma_guiding;
        const double guided = m->linear_rescale ? (x[gd] - m->intercepts[gd + 1]) / m->slopes[gd + 1] : x[gd];
        if (guided == 0.0) {
            const double guiding = m->linear_rescale ? (x[gg] - m->intercepts[gg + 1]) / m->slopes[gg + 1] : x[gg];
            const double corrected = -m->chroma_correction * guiding + m->chroma_correction;
            x[gd] = m->linear_rescale ? m->slopes[gd + 1] * corrected + m->intercepts[gd + 1] : corrected;
        }
    }
    double sum = 0.0;
    for (int s = 0; s < m->n_sv; s++) {
        const double *sv = m->sv + (size_t)s * SVC_MODEL_MAX_FEATURES;
        double dist = 0.0;
        for (int j = 0; j < m->dim; j++) {
            const double d = x[j] - sv[j];
            dist += d * d;
        }
        sum += m->coef[s] * exp(-m->gamma * dist);
    }
    double y = sum - m->rho;
    if (m->linear_rescale) y = (y - m->intercepts[0]) / m->slopes[0];
    return y;
}

static int by_value(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Linear interpolation between order statistics, as the reference's bootstrap percentile. */
static double percentile(const double *sorted, int n, double perc) {
    const double p = perc * (n - 1) / 100.0;
    const int lo = (int)floor(p), hi = (int)ceil(p);
    return lo == hi ? sorted[lo] : sorted[lo] * (hi - p) + sorted[hi] * (p - lo);
}

/* Members' scores (each transformed and clipped as its own file says), then the statistics
 * of the bootstrap members' raw scores (members 1.., as the reference: member 0 is the model
 * trained on all the data, whose score is the model's score): mean (bagging), standard
 * deviation scaled by the transform's slope at the mean, and the 2.5 / 97.5 percentiles, each
 * mapped like a member's score. */
static void predict_part(const model_part *part, const double *features, double *out) {
    double x[SVC_MODEL_MAX_FEATURES], raw[SVC_MODEL_MAX_MEMBERS];
    for (int j = 0; j < part->n_features; j++) x[j] = features[part->col[j]];
    for (int i = 0; i < part->n_members; i++) {
        raw[i] = predict_raw(&part->members[i], part->n_features, x);
        out[i] = finish(&part->members[i], raw[i]);
    }
    if (part->n_members == 1) return;
    double *boot = raw + 1;
    const int n = part->n_members - 1;
    double sum = 0.0, ssd = 0.0;
    for (int i = 0; i < n; i++) sum += boot[i];
    const double mean = sum / n;
    for (int i = 0; i < n; i++) ssd += pow(boot[i] - mean, 2);
    qsort(boot, (size_t)n, sizeof boot[0], by_value);
    const svm_member *first = &part->members[1];
    const double delta = 0.01;
    const double slope = (finish(first, mean + delta) - finish(first, mean - delta)) / (2.0 * delta);
    double *stats = out + part->n_members;
    stats[0] = finish(first, mean);
    stats[1] = sqrt(ssd / n) * slope;
    stats[2] = finish(first, percentile(boot, n, 2.5));
    stats[3] = finish(first, percentile(boot, n, 97.5));
}

void svc_model_predict(const svc_model *m, const double *features, double *out) {
    for (int p = 0; p < m->n_parts; p++) {
        predict_part(&m->parts[p], features, out);
        out += svc_model_part_outputs(&m->parts[p]);
    }
}
