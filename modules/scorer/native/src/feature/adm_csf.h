/* The ADM contrast sensitivity weights shared by integer_adm and float_adm. */
#ifndef SVC_ADM_CSF_H
#define SVC_ADM_CSF_H

#include <math.h>
#include <stddef.h>

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

/* Watson et al. 1997 wavelet quantisation step (Y channel) at DWT level lambda, orientation theta
 * (1: H/V, 2: D), for a viewer at view_dist display heights from a display of display_height
 * lines (default 3H at 1080), evaluated with the same mix of float and double as the reference's
 * AVX2 build (k * temp * temp in float; its scalar code does that product in double, which moves
 * the weights by an ulp). */
static inline float svc_adm_quant_step_at(int lambda, int theta, double view_dist, int display_height) {
    static const float amp[4][4] = {{0.62171f, 0.67234f, 0.72709f, 0.67234f},
                                    {0.34537f, 0.41317f, 0.49428f, 0.41317f},
                                    {0.18004f, 0.22727f, 0.28688f, 0.22727f},
                                    {0.091401f, 0.11792f, 0.15214f, 0.11792f}};
    static const float g[4] = {1.501f, 1.0f, 0.534f, 1.0f};
    const float a = 0.495f, k = 0.466f, f0 = 0.401f;
    const float r = view_dist * display_height * M_PI / 180.0; /* display resolution, pixels/degree */
    const float temp = log10(pow(2.0, lambda + 1) * f0 * g[theta] / r);
    return 2.0 * a * pow(10.0, k * temp * temp) / amp[lambda][theta];
}

static inline float svc_adm_quant_step(int lambda, int theta) { return svc_adm_quant_step_at(lambda, theta, 3.0, 1080); }

/* CSF modes (adm_csf_mode): 0 the Watson quantisation steps above; 2 the reference's tabulated
 * blend of Barten's and Watson's CSFs (the vmaf_v1.0.16 models), known for these viewing
 * geometries only. Mode 1 (Barten) overflows the reference's fixed-point weights, so svc refuses
 * it rather than copy garbage. */
#define SVC_ADM_CSF_WATSON 0
#define SVC_ADM_CSF_BLEND 2

/* Blended CSF weight at scale 0..3 for orientation theta (0: H/V, 1: D), or a negative value for
 * a geometry the tables lack. Pairs with the same pixels per degree share a table. */
static inline float svc_adm_blend_csf(int scale, int theta, double view_dist, int display_height) {
    static const float t1080_3[2][4] = {{0.01183f, 0.025026f, 0.04295f, 0.058621f},
                                        {0.004302f, 0.011778f, 0.023918f, 0.035901f}};
    static const float t1080_5[2][4] = {{0.004212f, 0.014809f, 0.029642f, 0.047464f},
                                        {0.000984f, 0.005852f, 0.0146f, 0.027574f}};
    static const float t2160_3[2][4] = {{0.00226f, 0.01183f, 0.025026f, 0.04295f},
                                        {0.000479f, 0.004302f, 0.011778f, 0.023918f}};
    static const float t2160_5[2][4] = {{0.000092f, 0.004212f, 0.014809f, 0.029642f},
                                        {0.000050f, 0.000984f, 0.005852f, 0.0146f}};
    static const float t720_3[2][4] = {{0.018715f, 0.035637f, 0.052798f, 0.061509f},
                                       {0.007999f, 0.018396f, 0.031851f, 0.037718f}};
    static const float t720_5[2][4] = {{0.010144f, 0.022561f, 0.040309f, 0.05672f},
                                       {0.003463f, 0.010282f, 0.021839f, 0.034641f}};
    static const float t480_3[2][4] = {{0.027961f, 0.045875f, 0.060275f, 0.056234f},
                                       {0.013572f, 0.026277f, 0.036959f, 0.034511f}};
    static const float t480_5[2][4] = {{0.016781f, 0.032822f, 0.05032f, 0.061594f},
                                       {0.00691f, 0.016545f, 0.029917f, 0.037777f}};
    static const struct { int height; double dist; const float (*t)[4]; } known[] = {
        {1080, 3.0, t1080_3}, {1080, 5.0, t1080_5}, {2160, 1.5, t1080_3}, {2160, 3.0, t2160_3},
        {2160, 5.0, t2160_5}, {720, 3.0, t720_3},   {720, 5.0, t720_5},   {480, 3.0, t480_3},
        {480, 5.0, t480_5},
    };
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (known[i].height == display_height && known[i].dist == view_dist) return known[i].t[theta][scale];
    return -1.0f;
}

/* CSF weights of one scale: [0] H and V, [1] D. */
static inline void svc_adm_csf_weights(int scale, int mode, double view_dist, int display_height, float w[2]) {
    if (mode == SVC_ADM_CSF_BLEND) {
        w[0] = svc_adm_blend_csf(scale, 0, view_dist, display_height);
        w[1] = svc_adm_blend_csf(scale, 1, view_dist, display_height);
    } else {
        w[0] = 1.0f / svc_adm_quant_step_at(scale, 1, view_dist, display_height);
        w[1] = 1.0f / svc_adm_quant_step_at(scale, 2, view_dist, display_height);
    }
}

#endif
