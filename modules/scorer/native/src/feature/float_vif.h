/*
 * Private interface between float_vif (float_vif.c) and its AVX2 kernels
 * (x86/float_vif_avx2.c): acc[j] += c * P(x[j], y[j]) for j in [0, n), P one of the five
 * products the filters smooth. One multiply then one add per element, so every backend rounds
 * alike and the results are bit-identical.
 */
#ifndef SVC_FEATURE_FLOAT_VIF_H
#define SVC_FEATURE_FLOAT_VIF_H

enum { SVC_FVIF_X, SVC_FVIF_Y, SVC_FVIF_XX, SVC_FVIF_YY, SVC_FVIF_XY, SVC_FVIF_PRODUCTS };

typedef void (*svc_fvif_axpy)(float *acc, float c, const float *x, const float *y, int n);

#if defined(__x86_64__) || defined(__i386__)
extern const svc_fvif_axpy svc_fvif_axpy_avx2[SVC_FVIF_PRODUCTS];
#endif

#endif
