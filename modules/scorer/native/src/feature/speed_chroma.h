/*
 * Private interface between speed_chroma (speed_chroma.c) and its AVX2 kernels
 * (x86/speed_chroma_avx2.c): the covariance of the 5x5 neighbourhoods and the 25-deep
 * matrix products of the QR solve. Each output element is computed in every lane with the
 * scalar code's operations in the scalar code's order (no fused multiply-adds), so every
 * backend gives the same bits.
 */
#ifndef SVC_FEATURE_SPEED_CHROMA_H
#define SVC_FEATURE_SPEED_CHROMA_H

#include <stdint.h>

#define SVC_SPEED_BLOCK 5
#define SVC_SPEED_DIM (SVC_SPEED_BLOCK * SVC_SPEED_BLOCK)

/* dst (rows x cols) = a (rows x SVC_SPEED_DIM) * b (SVC_SPEED_DIM x cols): every element starts
 * at 0 and adds a[i][k] * b[k][j] in float for k = 0, 1, ... */
typedef void (*svc_speed_mat_mul)(float *dst, const float *a, const float *b, int rows, int cols);

/* The 25 x 25 covariance of the 5x5 neighbourhoods of f (rows of st floats) at the subw x subh
 * positions: for q <= p, cov[p][q] = cov[q][p] = (float)(acc / (subw * subh)), acc summing in
 * double, rows then columns, ((double)f_p - mean[p]) * ((double)f_q - mean[q]). */
typedef void (*svc_speed_covariance)(const float *f, int st, int subw, int subh, const float *mean, float *cov);

/* row[j] = row[j] + c * in[j] for j in [0, w) (the filters' tap step, in float). */
typedef void (*svc_speed_axpy)(float *row, float c, const float *in, int w);

/* out[x] = (float)in[x] + -128 for x in [0, w): an 8-bit chroma row as floats. */
typedef void (*svc_speed_load8)(const uint8_t *in, float *out, int w);

#if defined(__x86_64__) || defined(__i386__)
void svc_speed_axpy_avx2(float *row, float c, const float *in, int w);
void svc_speed_load8_avx2(const uint8_t *in, float *out, int w);
void svc_speed_mat_mul_avx2(float *dst, const float *a, const float *b, int rows, int cols);
void svc_speed_covariance_avx2(const float *f, int st, int subw, int subh, const float *mean, float *cov);
#endif

#endif
