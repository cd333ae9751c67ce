/*
 * The scratch lines and sides of the integer VIF's fused row kernels, shared by the AVX2 and
 * AVX-512 files (x86/integer_vif_avx2.c, x86/integer_vif_avx512.c): N_LINES offset
 * 16-bit lines of the vertical pass (mu1, mu2, then low and high halves of xx, yy, xy), each with
 * LINE_MARGIN words of mirrored padding room on both sides.
 */
#ifndef SVC_FEATURE_INTEGER_VIF_ROWS_H
#define SVC_FEATURE_INTEGER_VIF_ROWS_H

#include <stddef.h>
#include <stdint.h>

#define N_LINES 8
#define LINE_MARGIN 32 /* words before and after each scratch line */
#define SIGMA_NSQ (2 << 16)

static inline size_t line_len(int w) { return (size_t)w + 3 * LINE_MARGIN; }

/* Mirrors r words on both sides of a w-word line (no edge repeat). */
static inline void pad_words(uint16_t *l, int w, int r) {
    for (int f = 1; f <= r; f++) {
        l[-f] = l[f];
        l[w - 1 + f] = l[w - 1 - f];
    }
}

/* Which side's quantities a row kernel computes: the pair kernels both, the ladder kernels the
 * reference's (mu1, xx: lines 0, 2, 3) or the distorted side's (mu2, yy, xy: lines 1, 4..7).
 * The shared passes of each backend are always_inline and every caller passes a constant, so
 * each kernel is compiled with only its side's accumulators, as if written out by hand. */
#define SIDE_REF 1
#define SIDE_DIS 2
#define SIDE_BOTH (SIDE_REF | SIDE_DIS)
#define ALWAYS_INLINE inline __attribute__((always_inline))

static inline int line_side(int q) { return q == 0 || q == 2 || q == 3 ? SIDE_REF : SIDE_DIS; }

/* The N_LINES scratch lines of a row. */
static inline void scratch_lines(uint16_t *scratch, int w, uint16_t **line) {
    for (int q = 0; q < N_LINES; q++) line[q] = scratch + (size_t)q * line_len(w) + LINE_MARGIN;
}

/* Mirrored padding of the lines of the given sides. */
static inline void pad_lines(uint16_t *const *line, int w, int r, int sides) {
    for (int q = 0; q < N_LINES; q++)
        if (sides & line_side(q)) pad_words(line[q], w, r);
}

#endif
