/*
 * ADM's scalar decoupling of one coefficient pair: the restored part of a distorted coefficient
 * and the 1-degree angle test. Shared by the scalar path (integer_adm.c) and, as the
 * oracle of the AVX-512 decoupling kernel, by simd_test.
 */
#ifndef SVC_FEATURE_INTEGER_ADM_DECOUPLE_H
#define SVC_FEATURE_INTEGER_ADM_DECOUPLE_H

#include <stdint.h>

/* Restored part of distorted coefficient t given reference o: o * clamp(t / o, 0, 1), with
 * the division done through a Q30 reciprocal of o reduced to 15 significant bits. */
static inline int64_t restored(int32_t o, int32_t t, int angle_ok, const int32_t *recip, double gain) {
    int64_t k = 32768;
    if (o != 0) {
        uint32_t m = o < 0 ? 0u - (uint32_t)o : (uint32_t)o;
        int sh = 0;
        if (m >= 32768) {
            sh = 17 - __builtin_clz(m);
            m = (m + (1u << (sh - 1))) >> sh;
        }
        int64_t q = (int64_t)recip[m] * t;
        if (o < 0) q = -q;
        k = (q + ((int64_t)1 << (14 + sh))) >> (15 + sh);
        k = k < 0 ? 0 : (k > 32768 ? 32768 : k);
    }
    int64_t r = (k * o + 16384) >> 15;
    /* Same direction: let the restored part follow t up to `gain` times the gain, in double
     * then truncated as the reference (exact for whole-number limits). */
    if (angle_ok && k > 0 && o > 0) {
        const double g = (double)r * gain;
        r = (int64_t)(g > t ? t : g);
    } else if (angle_ok && k > 0 && o < 0) {
        const double g = (double)r * gain;
        r = (int64_t)(g < t ? t : g);
    }
    return r;
}

/* Angle between (oh, ov) and (th, tv) below 1 degree: dot >= 0 and
 * dot^2 >= cos^2(1deg) |o|^2 |t|^2, evaluated in floating point from float-rounded
 * products like the reference. */
static inline int same_direction(int32_t oh, int32_t ov, int32_t th, int32_t tv, float cos1_sq) {
    const int64_t dot = (int64_t)oh * th + (int64_t)ov * tv;
    const int64_t omag = (int64_t)oh * oh + (int64_t)ov * ov;
    const int64_t tmag = (int64_t)th * th + (int64_t)tv * tv;
    const double fdot = (double)(float)dot / 4096.0;
    return fdot >= 0.0 && fdot * fdot >= cos1_sq * ((double)(float)omag / 4096.0) *
                                             ((double)(float)tmag / 4096.0);
}

#endif
