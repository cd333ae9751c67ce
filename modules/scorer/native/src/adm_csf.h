/* The ADM contrast sensitivity weights shared by integer_adm and float_adm. */
#ifndef SVC_ADM_CSF_H
#define SVC_ADM_CSF_H

#include <math.h>

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

/* Watson et al. 1997 wavelet quantisation step (Y channel) at DWT level lambda, orientation theta
 * (1: H/V, 2: D), view distance 3H at 1080 lines, evaluated with the same mix of float and double
 * as the reference's AVX2 build (k * temp * temp in float; its scalar code does that product in
 * double, which moves the weights by an ulp). */
static inline float svc_adm_quant_step(int lambda, int theta) {
    static const float amp[4][4] = {{0.62171f, 0.67234f, 0.72709f, 0.67234f},
                                    {0.34537f, 0.41317f, 0.49428f, 0.41317f},
                                    {0.18004f, 0.22727f, 0.28688f, 0.22727f},
                                    {0.091401f, 0.11792f, 0.15214f, 0.11792f}};
    static const float g[4] = {1.501f, 1.0f, 0.534f, 1.0f};
    const float a = 0.495f, k = 0.466f, f0 = 0.401f;
    const float r = 3.0 * 1080 * M_PI / 180.0; /* display resolution, pixels/degree */
    const float temp = log10(pow(2.0, lambda + 1) * f0 * g[theta] / r);
    return 2.0 * a * pow(10.0, k * temp * temp) / amp[lambda][theta];
}

#endif
