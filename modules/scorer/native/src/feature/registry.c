/* The registered extractors (registry.h). A new extractor is one file and one line here. */
#include <string.h>

#include "registry.h"

static const svc_registry_entry entries[] = {
    { &svc_extractor_integer_vif, 0 },
    { &svc_extractor_integer_adm, 0 },
    { &svc_extractor_psnr, SVC_FEAT_PSNR },
    { &svc_extractor_float_ssim, SVC_FEAT_FLOAT_SSIM },
    { &svc_extractor_float_ms_ssim, SVC_FEAT_FLOAT_MS_SSIM },
    { &svc_extractor_float_vif, SVC_FEAT_FLOAT_VIF },
    { &svc_extractor_float_psnr, SVC_FEAT_FLOAT_PSNR },
    { &svc_extractor_float_adm, SVC_FEAT_FLOAT_ADM },
    { &svc_extractor_ciede, SVC_FEAT_CIEDE },
    { &svc_extractor_psnr_hvs, SVC_FEAT_PSNR_HVS },
    { &svc_extractor_cambi, SVC_FEAT_CAMBI },
    { &svc_extractor_speed_chroma, 0 },
    { &svc_extractor_xpsnr, SVC_FEAT_XPSNR },
    { &svc_extractor_ssimulacra2, SVC_FEAT_SSIMULACRA2 },
};
#define N_ENTRIES ((int)(sizeof entries / sizeof entries[0]))
_Static_assert(N_ENTRIES <= SVC_REGISTRY_MAX, "raise SVC_REGISTRY_MAX");

static const svc_registry_temporal temporals[] = {
    { &svc_temporal_integer_motion, 0 },
    { &svc_temporal_float_motion, SVC_FEAT_FLOAT_MOTION },
};
#define N_TEMPORALS ((int)(sizeof temporals / sizeof temporals[0]))
_Static_assert(N_TEMPORALS <= SVC_TEMPORAL_MAX, "raise SVC_TEMPORAL_MAX");

int svc_registry_count(void) { return N_ENTRIES; }

const svc_registry_entry *svc_registry_at(int i) { return i >= 0 && i < N_ENTRIES ? &entries[i] : NULL; }

int svc_registry_temporal_count(void) { return N_TEMPORALS; }

const svc_registry_temporal *svc_registry_temporal_at(int i) {
    return i >= 0 && i < N_TEMPORALS ? &temporals[i] : NULL;
}

int svc_registry_temporal_of(const char *name) {
    for (int t = 0; t < N_TEMPORALS; t++)
        for (int k = 0; k < temporals[t].tm->n_outputs; k++)
            if (strcmp(temporals[t].tm->output_names[k], name) == 0) return t;
    return -1;
}

int svc_registry_flags(void) {
    int flags = 0;
    for (int e = 0; e < N_ENTRIES; e++) flags |= entries[e].flag;
    for (int t = 0; t < N_TEMPORALS; t++) flags |= temporals[t].flag;
    return flags;
}

int svc_feature_source(const char *name, const svc_extractor **ex, int *output) {
    for (int e = 0; e < N_ENTRIES; e++)
        for (int k = 0; k < entries[e].ex->n_outputs; k++)
            if (strcmp(entries[e].ex->output_names[k], name) == 0) {
                *ex = entries[e].ex;
                *output = k;
                return SVC_FEATURE_FRAME;
            }
    const int t = svc_registry_temporal_of(name);
    if (t >= 0)
        for (int k = 0; k < temporals[t].tm->n_outputs; k++)
            if (strcmp(temporals[t].tm->output_names[k], name) == 0) {
                *ex = NULL;
                *output = k;
                return SVC_FEATURE_MOTION;
            }
    return SVC_FEATURE_UNKNOWN;
}
