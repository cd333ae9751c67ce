/* Developer harness: runs one extractor over a raw pair and prints "frame name value" lines.
 * Build: cc -O2 -std=c11 -DEXTRACTOR=svc_extractor_integer_vif -Isrc test/extractor_dev.c \
 *          src/picture.c src/cpu.c src/feature/integer_vif*.c src/feature/x86/integer_vif*.c -lm -o /tmp/vif_dev
 * Run:   /tmp/vif_dev REF DIS W H PIXFMT BPC [scalar|avx2]
 * Compare with the golden values: python3 test/compare_golden.py OUTPUT NAME.libvmaf.json */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../src/feature/extractor.h"

extern const svc_extractor EXTRACTOR;

int main(int argc, char **argv) {
    if (argc < 7) {
        fprintf(stderr, "usage: %s REF DIS W H PIXFMT BPC [scalar|avx2]\n", argv[0]);
        return 2;
    }
    const int w = atoi(argv[3]), h = atoi(argv[4]), fmt = atoi(argv[5]), bpc = atoi(argv[6]);
    const int cpu = (argc > 7 && strcmp(argv[7], "avx2") == 0) ? SVC_CPU_AVX2 : SVC_CPU_SCALAR;
    FILE *fr = fopen(argv[1], "rb"), *fd = fopen(argv[2], "rb");
    if (!fr || !fd) { perror("open"); return 1; }
    const int64_t fb = svc_frame_bytes(w, h, fmt, bpc);
    uint8_t *br = malloc((size_t)fb), *bd = malloc((size_t)fb);
    svc_picture pr, pd;
    svc_picture_alloc(&pr, w, h, fmt, bpc);
    svc_picture_alloc(&pd, w, h, fmt, bpc);
    void *st = EXTRACTOR.create(w, h, fmt, bpc, cpu);
    if (!st) { fprintf(stderr, "create failed\n"); return 1; }
    double out[32];
    for (int i = 0; fread(br, 1, (size_t)fb, fr) == (size_t)fb && fread(bd, 1, (size_t)fb, fd) == (size_t)fb; i++) {
        svc_picture_from_raw(&pr, br, (size_t)fb);
        svc_picture_from_raw(&pd, bd, (size_t)fb);
        if (EXTRACTOR.compute(st, &pr, &pd, out) != SVC_OK) { fprintf(stderr, "compute failed\n"); return 1; }
        for (int k = 0; k < EXTRACTOR.n_outputs; k++) printf("%d %s %.17g\n", i, EXTRACTOR.output_names[k], out[k]);
    }
    fprintf(stderr, "backend %s\n", EXTRACTOR.backend(st));
    EXTRACTOR.destroy(st);
    return 0;
}
