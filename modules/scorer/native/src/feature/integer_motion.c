/*
 * Integer motion, bit-compatible with libvmaf 3.x's default "motion" extractor.
 *
 * The reference filters the DIFFERENCE of two consecutive reference lumas with the 5-tap
 * integer Gaussian {3571, 16004, 26386, 16004, 3571} (sum 65536): vertical pass,
 * rounded arithmetic >> bpc (8 for 8-bit input); horizontal pass, rounded >> 16; then
 * sums |value| over the frame. Borders mirror without repeating the edge sample
 * (-1 -> 1, n -> n-2). Score = sad / 256 / (w * h) (the 8.8 fixed point back to pixels).
 * Blurring each frame first and differencing after rounds differently (up to 2e-2 off
 * on the fixtures), so svc_motion_blur only keeps the frame's luma as 16-bit samples and
 * svc_motion_sad does the filtering. svc_motion_sad keeps no state besides its svc_motion's
 * scratch row (each worker owns its svc_motion): any thread may call
 * it once both frames are stored.
 *
 * How the driver derives the reported per-frame values (libvmaf defaults:
 * motion_force_zero=false, motion_fps_weight=1, motion_max_val=10000,
 * motion_blend_factor=1, motion_blend_offset=40, motion_five_frame_window=false,
 * motion_moving_average=false, debug=false). For the n frames scored, in order (after
 * frame skips; under SVC_OPT_SUBSAMPLE libvmaf runs temporal extractors on every frame,
 * so compare frame i with frame i-1 of the input - not checked against a golden):
 *     sad[0] = 0,  sad[i] = svc_motion_sad(m, frame[i-1], frame[i]) for i >= 1.
 * Then
 *   VMAF_integer_feature_motion_sad_score[i] = sad[i]     (frame 0 gets 0)
 *   integer_motion[i] = sad[i]   (libvmaf writes it only with debug=true; off by default)
 *   integer_motion2[0] = 0
 *   integer_motion2[i] = min(sad[i], sad[i+1])          for 0 < i < n-1
 *   integer_motion2[n-1] = sad[n-1]                      (last frame, n >= 2)
 *   integer_motion3[0] = sad[1] if n >= 2, else 0        (motion3 is on by default)
 *   integer_motion3[i] = integer_motion2[i]              for i >= 1
 * each capped at motion_max_val (the option the vmaf_v1.0.16 models set: 18, outputs named
 * integer_motion3_mmxv_18 and so on).
 * A one-frame input reports 0 for all of them. Frame i's motion2/motion3 are final once
 * frame i+1 is in (or input ended). The vmaf_v0.6.1 model reads integer_motion2.
 * With motion_force_zero=true (not the default) every value would be 0.
 */
#include <stdlib.h>
#include <string.h>

#include "extractor.h"
#include "integer_motion.h"

#define MOTION_TAPS 5
#define MOTION_RADIUS 2
#define MOTION_TILE 256 /* columns per stack tile of the vertical pass */

const char *const svc_motion_output_names[SVC_MOTION_OUTPUTS] = {
    "integer_motion2", "integer_motion3", "VMAF_integer_feature_motion_sad_score"
};

static const int32_t motion_kernel[MOTION_TAPS] = { 3571, 16004, 26386, 16004, 3571 };

#if defined(__x86_64__) || defined(__i386__)
/* x86/integer_motion_avx2.c, same contract as row_sad_c; the _words kernel for depths up to
 * 12 bits and w >= 16, with scratch of the given length. */
uint64_t svc_motion_row_sad_avx2(const uint16_t *const *ra, const uint16_t *const *rb, int w, int bpc);
size_t svc_motion_avx2_scratch_len(int w);
uint64_t svc_motion_row_sad_avx2_words(const uint16_t *const *ra, const uint16_t *const *rb, int w, int bpc,
                                       int16_t *scratch);
/* x86/integer_motion_avx512.c: the same for depths up to 12 bits, with scratch of the given length. */
size_t svc_motion_avx512_scratch_len(int w);
uint64_t svc_motion_row_sad_avx512(const uint16_t *const *ra, const uint16_t *const *rb, int w, int bpc,
                                   int16_t *scratch);
#endif

struct svc_motion {
    int w, h, bpc;
    uint64_t (*row_sad)(const uint16_t *const *ra, const uint16_t *const *rb, int w, int bpc);
    const char *backend;
    /* Row kernels on 16-bit words (AVX2 or AVX-512, depths up to 12 bits) and their lines; NULL
     * when the state runs row_sad. */
    uint64_t (*row_sad_words)(const uint16_t *const *ra, const uint16_t *const *rb, int w, int bpc,
                              int16_t *scratch);
    int16_t *scratch;
};

static inline int motion_mirror(int i, int n) {
    if (i < 0) return -i;
    if (i >= n) return 2 * n - i - 2;
    return i;
}

/* One output row: vertical pass of a - b over the 5 mirrored rows, horizontal pass,
 * sum of |value|. Tiled so the intermediate row stays on the stack. */
static uint64_t row_sad_c(const uint16_t *const *ra, const uint16_t *const *rb, int w, int bpc) {
    const int64_t round_v = (int64_t)1 << (bpc - 1);
    int64_t y[MOTION_TILE + 2 * MOTION_RADIUS];
    uint64_t sad = 0;
    for (int x0 = 0; x0 < w; x0 += MOTION_TILE) {
        const int x1 = x0 + MOTION_TILE < w ? x0 + MOTION_TILE : w;
        for (int c = x0 - MOTION_RADIUS; c < x1 + MOTION_RADIUS; c++) {
            const int cc = motion_mirror(c, w);
            int64_t acc = 0;
            for (int k = 0; k < MOTION_TAPS; k++) acc += motion_kernel[k] * ((int32_t)ra[k][cc] - rb[k][cc]);
            y[c - x0 + MOTION_RADIUS] = (acc + round_v) >> bpc; /* arithmetic shift, as the reference */
        }
        for (int x = x0; x < x1; x++) {
            int64_t acc = 0;
            for (int k = 0; k < MOTION_TAPS; k++) acc += motion_kernel[k] * y[x - x0 + k];
            const int64_t v = (acc + 32768) >> 16;
            sad += (uint64_t)(v < 0 ? -v : v);
        }
    }
    return sad;
}

svc_motion *svc_motion_create(int w, int h, int bpc, int cpu) {
    /* The 5-tap mirror needs 3 samples per direction. */
    if (w < MOTION_RADIUS + 1 || h < MOTION_RADIUS + 1 || w > 16384 || h > 16384) return NULL;
    if (bpc != 8 && bpc != 10 && bpc != 12 && bpc != 16) return NULL;
    svc_motion *m = calloc(1, sizeof *m);
    if (!m) return NULL;
    m->w = w;
    m->h = h;
    m->bpc = bpc;
    m->row_sad = row_sad_c;
    m->backend = "scalar";
#if defined(__x86_64__) || defined(__i386__)
    if (cpu == SVC_CPU_AVX2 || cpu == SVC_CPU_AVX512) {
        m->row_sad = svc_motion_row_sad_avx2;
        m->backend = "avx2";
    }
    if (cpu == SVC_CPU_AVX2 && bpc <= 12 && w >= 16) {
        m->row_sad_words = svc_motion_row_sad_avx2_words;
        m->scratch = calloc(svc_motion_avx2_scratch_len(w), sizeof(int16_t));
    }
    if (cpu == SVC_CPU_AVX512 && bpc <= 12) {
        m->row_sad_words = svc_motion_row_sad_avx512;
        m->scratch = calloc(svc_motion_avx512_scratch_len(w), sizeof(int16_t));
        m->backend = "avx512";
    }
    if (m->row_sad_words && !m->scratch) {
        free(m);
        return NULL;
    }
#else
    (void)cpu;
#endif
    return m;
}

const char *svc_motion_backend(const svc_motion *m) { return m->backend; }

size_t svc_motion_blur_len(const svc_motion *m) { return (size_t)m->w * (size_t)m->h; }

/* Keeps the luma as packed 16-bit samples; the filtering happens in svc_motion_sad. */
int svc_motion_blur(svc_motion *m, const svc_picture *ref, uint16_t *blurred) {
    if (!m || !ref || !blurred) return SVC_E_INVALID_ARG;
    const svc_plane *p = &ref->plane[0];
    if (p->w != m->w || p->h != m->h || ref->bpc != m->bpc) return SVC_E_GEOMETRY;
    svc_luma_u16(ref, blurred);
    return SVC_OK;
}

double svc_motion_sad(const svc_motion *m, const uint16_t *a, const uint16_t *b) {
    const int w = m->w, h = m->h;
    uint64_t sad = 0;
    for (int i = 0; i < h; i++) {
        const uint16_t *ra[MOTION_TAPS], *rb[MOTION_TAPS];
        for (int k = 0; k < MOTION_TAPS; k++) {
            const size_t off = (size_t)motion_mirror(i - MOTION_RADIUS + k, h) * (size_t)w;
            ra[k] = a + off;
            rb[k] = b + off;
        }
#if defined(__x86_64__) || defined(__i386__)
        if (m->row_sad_words) {
            sad += m->row_sad_words(ra, rb, w, m->bpc, m->scratch);
            continue;
        }
#endif
        sad += m->row_sad(ra, rb, w, m->bpc);
    }
    return (double)sad / 256.0 / (double)((unsigned)w * (unsigned)h);
}

void svc_motion_destroy(svc_motion *m) {
    if (!m) return;
    free(m->scratch);
    free(m);
}

/* ---- the temporal extractor (see the derivation at the top of this file) ---- */

static void *tm_create(int w, int h, int bpc, int cpu) { return svc_motion_create(w, h, bpc, cpu); }
static const char *tm_backend(const void *state) { return svc_motion_backend(state); }
static double tm_diff(const void *state, const uint16_t *a, const uint16_t *b) { return svc_motion_sad(state, a, b); }
static void tm_destroy(void *state) { svc_motion_destroy(state); }

enum { OPT_MAX_VAL, N_OPTIONS };
static const svc_extractor_option tm_options[N_OPTIONS] = {
    { .name = "motion_max_val", .alias = "mmxv", .def = 10000.0, .min = 0.0, .max = 10000.0 },
};

/* motion_max_val caps the SADs before motion2/motion3 take their minimum (and motion3 after its
 * blend, the identity by default), so capping every output gives the same values. */
static void tm_derive(double sad, double sad_next, int first, int last, const double *opts, double *out) {
    out[SVC_MOTION_SAD] = sad;
    out[SVC_MOTION2] = first || last ? sad : (sad < sad_next ? sad : sad_next);
    out[SVC_MOTION3] = first ? (last ? 0.0 : sad_next) : out[SVC_MOTION2];
    const double cap = opts[OPT_MAX_VAL];
    for (int k = 0; k < SVC_MOTION_OUTPUTS; k++) out[k] = out[k] < cap ? out[k] : cap;
}

const svc_temporal svc_temporal_integer_motion = {
    .name = "integer_motion",
    .n_outputs = SVC_MOTION_OUTPUTS,
    .output_names = svc_motion_output_names,
    .create = tm_create,
    .backend = tm_backend,
    .diff = tm_diff,
    .destroy = tm_destroy,
    .derive = tm_derive,
    .n_options = N_OPTIONS,
    .options = tm_options,
};
