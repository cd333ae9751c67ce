/*
 * Integer motion (integer_motion.c): temporal, so not a per-frame extractor.
 * The frame loop blurs each reference frame's luma (any thread), then takes the SAD of
 * consecutive blurred frames in frame order, and derives the outputs below from the SADs.
 */
#ifndef SVC_FEATURE_INTEGER_MOTION_H
#define SVC_FEATURE_INTEGER_MOTION_H

#include "../internal.h"

/* Motion outputs, named as libvmaf reports them by default (derivation: integer_motion.c). */
enum { SVC_MOTION2, SVC_MOTION3, SVC_MOTION_SAD, SVC_MOTION_OUTPUTS };
extern const char *const svc_motion_output_names[SVC_MOTION_OUTPUTS];

typedef struct svc_motion svc_motion;
svc_motion *svc_motion_create(int w, int h, int bpc, int cpu);
const char *svc_motion_backend(const svc_motion *m);
size_t svc_motion_blur_len(const svc_motion *m); /* elements of uint16_t per blurred frame */
int svc_motion_blur(svc_motion *m, const svc_picture *ref, uint16_t *blurred);
double svc_motion_sad(const svc_motion *m, const uint16_t *a, const uint16_t *b);
void svc_motion_destroy(svc_motion *m);

#endif
