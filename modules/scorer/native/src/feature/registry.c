/*
 * The registered extractors (registry.h) and the public list of them (svc_feature_*). A new
 * extractor is one file under feature/ and one row here.
 */
#include <string.h>

#include "registry.h"

#define LIBVMAF "libvmaf 3.2.0"
#define NO_MIN { SVC_MIN_NONE, 0, 0 }
#define EACH_SIDE(w, h) { SVC_MIN_EACH_SIDE, w, h }
/* An extractor whose memory was not measured: a generous guess. */
#define UNMEASURED 40

/* A request flag: bit n of SVC_OPT_FEATURES (svc_feature_flag lists them; a bit, once given, keeps
 * its meaning, so a new extractor takes the next unused one). */
#define FLAG(n) (1 << (n))

/* Per-frame extractors, in the order their outputs become metrics: one row each, naming the
 * extractor's descriptor (svc_extractor_<name>, defined in its own file) and its facts. */
#define FRAME_ROWS(ROW) \
    /* Four scales, each halving the previous: scale 3 keeps more samples than its kernel radius. VIF's \
     * ladder side: a1 and sigma1^2 per pixel of every scale (8 bytes x 4/3, rows rounded up to 32). */ \
    ROW(integer_vif, .implementation = LIBVMAF, .min = EACH_SIDE(16, 16), .bytes_per_pixel = 6, \
        .ladder_bytes_per_pixel = 11) \
    /* Four DWT levels, each level's 4-tap mirror needs 5 samples at the last one. Memory: 4 whole \
     * planes of a quarter of the pixels (the A bands) and 16 rings of 16 half-width rows, 4 bytes a \
     * sample: 4 + 512 / h bytes per pixel, about 4.5 at 1080p but just under 20 at 33 rows, hence \
     * 21. Ladder side: the H/V/D bands of every scale as whole planes (3 x 4 bytes x 1/2 x the 4 \
     * scales' rows of the half stride: 15/16 of the height, up to 34/33 of it at 33 rows), so 7. */ \
    ROW(integer_adm, .implementation = LIBVMAF, .min = EACH_SIDE(33, 33), .bytes_per_pixel = 21, \
        .ladder_bytes_per_pixel = 7) \
    ROW(psnr, .flag = FLAG(0), .implementation = LIBVMAF, .min = NO_MIN, .bytes_per_pixel = 0.1) \
    /* The 11x11 window (at scale 1; larger frames decimate to a size still above it). */ \
    ROW(float_ssim, .flag = FLAG(1), .implementation = LIBVMAF, .min = EACH_SIDE(11, 11), .bytes_per_pixel = 10) \
    /* The 11x11 window at the fifth scale: 11 << 4. */ \
    ROW(float_ms_ssim, .flag = FLAG(2), .implementation = LIBVMAF, .min = EACH_SIDE(176, 176), \
        .bytes_per_pixel = 36) \
    ROW(float_vif, .flag = FLAG(3), .implementation = LIBVMAF, .min = EACH_SIDE(16, 16), \
        .bytes_per_pixel = UNMEASURED) \
    ROW(float_psnr, .flag = FLAG(6), .implementation = LIBVMAF, .min = NO_MIN, .bytes_per_pixel = UNMEASURED) \
    ROW(float_adm, .flag = FLAG(4), .implementation = LIBVMAF, .min = EACH_SIDE(33, 33), \
        .bytes_per_pixel = UNMEASURED) \
    ROW(ciede, .flag = FLAG(7), .implementation = LIBVMAF, .min = NO_MIN, .bytes_per_pixel = UNMEASURED) \
    /* 8x8 blocks of every plane. */ \
    ROW(psnr_hvs, .flag = FLAG(8), .implementation = LIBVMAF, .min = { SVC_MIN_EACH_PLANE, 8, 8 }, \
        .bytes_per_pixel = UNMEASURED) \
    /* The longer side, as the reference. */ \
    ROW(cambi, .flag = FLAG(9), .implementation = LIBVMAF, .min = { SVC_MIN_LONGER_SIDE, 216, 0 }, \
        .bytes_per_pixel = UNMEASURED) \
    /* Its minimum depends on its options (speed_prescale): its too_small says. */ \
    ROW(speed_chroma, .implementation = LIBVMAF, .min = NO_MIN, .bytes_per_pixel = UNMEASURED) \
    /* The pair packed to 16 bits (a luma and a chroma plane each). */ \
    ROW(xpsnr, .flag = FLAG(10), .implementation = "FFmpeg 7.1 xpsnr filter", .min = NO_MIN, .bytes_per_pixel = 9) \
    /* Linear RGB and XYB pictures of both sides and the blurred planes of a channel, the first scale's. */ \
    ROW(ssimulacra2, .flag = FLAG(11), .implementation = "SSIMULACRA 2.1", .min = NO_MIN, .bytes_per_pixel = 140)

/* Temporal extractors (consecutive reference lumas), after the per-frame ones in metric order:
 * svc_temporal_<name>. The 5-tap blur's mirror; 8 bytes a pixel per worker for its rows. */
#define TEMPORAL_ROWS(ROW) \
    ROW(integer_motion, .implementation = LIBVMAF, .min = EACH_SIDE(3, 3), .bytes_per_pixel = 8) \
    ROW(float_motion, .flag = FLAG(5), .implementation = LIBVMAF, .min = EACH_SIDE(3, 3), .bytes_per_pixel = 8)

/* A row declares its descriptor, so the table is the only place that names an extractor. */
#define DECLARE_FRAME(name, ...) extern const svc_extractor svc_extractor_##name;
#define DECLARE_TEMPORAL(name, ...) extern const svc_temporal svc_temporal_##name;
FRAME_ROWS(DECLARE_FRAME)
TEMPORAL_ROWS(DECLARE_TEMPORAL)

#define FRAME_ROW(name, ...) { .ex = &svc_extractor_##name, __VA_ARGS__ },
#define TEMPORAL_ROW(name, ...) { .tm = &svc_temporal_##name, __VA_ARGS__ },
static const svc_registry_entry frame_rows[] = { FRAME_ROWS(FRAME_ROW) };
#define N_FRAME ((int)(sizeof frame_rows / sizeof frame_rows[0]))
_Static_assert(N_FRAME <= SVC_REGISTRY_MAX, "raise SVC_REGISTRY_MAX");

static const svc_registry_entry temporal_rows[] = { TEMPORAL_ROWS(TEMPORAL_ROW) };
#define N_TEMPORAL ((int)(sizeof temporal_rows / sizeof temporal_rows[0]))
_Static_assert(N_TEMPORAL <= SVC_TEMPORAL_MAX, "raise SVC_TEMPORAL_MAX");
#define N_ROWS (N_FRAME + N_TEMPORAL)

int svc_registry_size(void) { return N_ROWS; }

const svc_registry_entry *svc_registry_row(int i) {
    return i < 0 || i >= N_ROWS ? NULL : i < N_FRAME ? &frame_rows[i] : &temporal_rows[i - N_FRAME];
}

const char *svc_registry_name(const svc_registry_entry *row) { return row->ex ? row->ex->name : row->tm->name; }

int svc_registry_count(void) { return N_FRAME; }

const svc_registry_entry *svc_registry_at(int i) { return i >= 0 && i < N_FRAME ? &frame_rows[i] : NULL; }

const svc_registry_entry *svc_registry_of(const svc_extractor *ex) {
    for (int r = 0; r < N_FRAME; r++)
        if (frame_rows[r].ex == ex) return &frame_rows[r];
    return NULL;
}

int svc_registry_temporal_count(void) { return N_TEMPORAL; }

const svc_registry_entry *svc_registry_temporal_at(int i) { return i >= 0 && i < N_TEMPORAL ? &temporal_rows[i] : NULL; }

const svc_registry_entry *svc_registry_of_temporal(const svc_temporal *tm) {
    for (int t = 0; t < N_TEMPORAL; t++)
        if (temporal_rows[t].tm == tm) return &temporal_rows[t];
    return NULL;
}

int svc_registry_temporal_of(const char *name) {
    for (int t = 0; t < svc_registry_temporal_count(); t++) {
        const svc_temporal *tm = svc_registry_temporal_at(t)->tm;
        for (int k = 0; k < tm->n_outputs; k++)
            if (strcmp(tm->output_names[k], name) == 0) return t;
    }
    return -1;
}

int svc_registry_flags(void) {
    int flags = 0;
    for (int r = 0; r < N_ROWS; r++) flags |= svc_registry_row(r)->flag;
    return flags;
}

int svc_feature_source(const char *name, const svc_extractor **ex, int *output) {
    for (int e = 0; e < svc_registry_count(); e++) {
        const svc_extractor *x = svc_registry_at(e)->ex;
        for (int k = 0; k < x->n_outputs; k++)
            if (strcmp(x->output_names[k], name) == 0) {
                *ex = x;
                *output = k;
                return SVC_FEATURE_FRAME;
            }
    }
    const int t = svc_registry_temporal_of(name);
    if (t >= 0) {
        const svc_temporal *tm = svc_registry_temporal_at(t)->tm;
        for (int k = 0; k < tm->n_outputs; k++)
            if (strcmp(tm->output_names[k], name) == 0) {
                *ex = NULL;
                *output = k;
                return SVC_FEATURE_MOTION;
            }
    }
    return SVC_FEATURE_UNKNOWN;
}

/* ------------------------------------------------- public list (ABI 14) ---- */

int svc_feature_count(void) { return N_ROWS; }

/* Row i, or NULL past the end. */
#define ROW(i) svc_registry_row(i)

const char *svc_feature_name(int i) { return ROW(i) ? svc_registry_name(ROW(i)) : NULL; }

int svc_feature_flag(int i) { return ROW(i) ? ROW(i)->flag : 0; }

const char *svc_feature_implementation(int i) { return ROW(i) ? ROW(i)->implementation : NULL; }

int svc_feature_output_count(int i) {
    if (!ROW(i)) return 0;
    return ROW(i)->ex ? ROW(i)->ex->n_outputs : ROW(i)->tm->n_outputs;
}

const char *svc_feature_output_name(int i, int k) {
    if (k < 0 || k >= svc_feature_output_count(i)) return NULL;
    return ROW(i)->ex ? ROW(i)->ex->output_names[k] : ROW(i)->tm->output_names[k];
}

int svc_feature_temporal(int i) {
    if (!ROW(i)) return 0;
    return ROW(i)->tm ? 1 : ROW(i)->ex->history;
}

int svc_feature_min_frame(int i, int32_t *out3) {
    if (!ROW(i) || !out3) return SVC_E_INVALID_ARG;
    out3[0] = ROW(i)->min.rule;
    out3[1] = ROW(i)->min.w;
    out3[2] = ROW(i)->min.h;
    return SVC_OK;
}

int svc_feature_option_count(int i) {
    if (!ROW(i)) return 0;
    return ROW(i)->ex ? ROW(i)->ex->n_options : ROW(i)->tm->n_options;
}

const char *svc_feature_option_name(int i, int k) {
    if (k < 0 || k >= svc_feature_option_count(i)) return NULL;
    return ROW(i)->ex ? ROW(i)->ex->options[k].name : ROW(i)->tm->options[k].name;
}
