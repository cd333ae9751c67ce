/* Developer harness for motion.c: stores every reference frame, takes the SAD of
 * consecutive ones, then derives the reported values as the comment at the top of
 * motion.c tells the driver, and prints
 * "frame name value" lines for test/compare_golden.py.
 * Build: cc -O2 -std=c11 -Isrc test/motion_dev.c src/picture.c src/cpu.c src/feature/integer_motion*.c src/feature/x86/integer_motion*.c -o /tmp/motion_dev
 * Run:   /tmp/motion_dev REF W H PIXFMT BPC [scalar|avx2] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../src/feature/integer_motion.h"

int main(int argc, char **argv) {
    if (argc < 6) {
        fprintf(stderr, "usage: %s REF W H PIXFMT BPC [scalar|avx2]\n", argv[0]);
        return 2;
    }
    const int w = atoi(argv[2]), h = atoi(argv[3]), fmt = atoi(argv[4]), bpc = atoi(argv[5]);
    const int cpu = (argc > 6 && strcmp(argv[6], "avx2") == 0) ? SVC_CPU_AVX2 : SVC_CPU_SCALAR;
    FILE *fr = fopen(argv[1], "rb");
    if (!fr) { perror("open"); return 1; }
    const int64_t fb = svc_frame_bytes(w, h, fmt, bpc);
    svc_motion *m = svc_motion_create(w, h, bpc, cpu);
    svc_picture pic;
    if (fb < 0 || !m || svc_picture_alloc(&pic, w, h, fmt, bpc) != SVC_OK) {
        fprintf(stderr, "bad geometry\n");
        return 1;
    }
    uint8_t *buf = malloc((size_t)fb);
    const size_t bl = svc_motion_blur_len(m);
    uint16_t *blur[2] = { malloc(bl * sizeof(uint16_t)), malloc(bl * sizeof(uint16_t)) };
    double *sad = NULL;
    int n = 0;
    for (; fread(buf, 1, (size_t)fb, fr) == (size_t)fb; n++) {
        svc_picture_from_raw(&pic, buf, (size_t)fb);
        if (svc_motion_blur(m, &pic, blur[n & 1]) != SVC_OK) { fprintf(stderr, "blur failed\n"); return 1; }
        sad = realloc(sad, (size_t)(n + 1) * sizeof *sad);
        sad[n] = n ? svc_motion_sad(m, blur[(n - 1) & 1], blur[n & 1]) : 0.0;
    }
    for (int i = 0; i < n; i++) {
        const double m2 = i == 0 ? 0.0 : i == n - 1 ? sad[i] : (sad[i] < sad[i + 1] ? sad[i] : sad[i + 1]);
        const double m3 = i == 0 ? (n >= 2 ? sad[1] : 0.0) : m2;
        printf("%d VMAF_integer_feature_motion_sad_score %.17g\n", i, sad[i]);
        printf("%d integer_motion2 %.17g\n", i, m2);
        printf("%d integer_motion3 %.17g\n", i, m3);
    }
    fprintf(stderr, "backend %s\n", svc_motion_backend(m));
    free(sad); free(blur[0]); free(blur[1]); free(buf);
    svc_picture_free(&pic);
    svc_motion_destroy(m);
    fclose(fr);
    return 0;
}
