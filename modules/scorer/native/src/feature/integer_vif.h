/*
 * Private interface between the integer VIF's scalar kernels (integer_vif_scalar.c, built
 * without -mavx2) and its AVX2 kernels (x86/integer_vif_avx2.c). Every kernel fills
 * output columns [j0, j1); an AVX2 kernel runs whole vectors and hands the columns left
 * over to the scalar kernel, so the per-column arithmetic is written once.
 * Row pointers are the fw mirrored source rows of one output row; line inputs are padded
 * by fw/2 mirrored samples on both sides.
 */
#ifndef SVC_FEATURE_INTEGER_VIF_H
#define SVC_FEATURE_INTEGER_VIF_H

#include <stddef.h>
#include <stdint.h>

/* Vertical pass of the statistics: means >> mu_shift, squares >> sq_shift, rounded. */
void svc_vif_stat_vert_c(const uint16_t *const *rref, const uint16_t *const *rdis,
                         const uint16_t *filt, int fw, int j0, int j1, int mu_shift, int sq_shift,
                         uint32_t *mu1, uint32_t *mu2, uint32_t *xx, uint32_t *yy, uint32_t *xy);
/* Horizontal pass of the statistics, giving sigma1^2, sigma2^2 and sigma12. */
void svc_vif_stat_horz_c(const uint32_t *mu1, const uint32_t *mu2, const uint32_t *xx,
                         const uint32_t *yy, const uint32_t *xy, const uint16_t *filt, int fw,
                         int j0, int j1, int32_t *s11, int32_t *s22, int32_t *s12);
/* Vertical pass of the decimation filter, >> shift rounded. */
void svc_vif_down_vert_c(const uint16_t *const *rref, const uint16_t *const *rdis,
                         const uint16_t *filt, int fw, int j0, int j1, int shift, uint32_t *tref,
                         uint32_t *tdis);
/* Horizontal pass of the decimation filter at even source columns, >> 16 rounded. */
void svc_vif_down_horz_c(const uint32_t *tref, const uint32_t *tdis, const uint16_t *filt, int fw,
                         int j0, int j1, uint16_t *oref, uint16_t *odis);

/* Ladders (one reference, several distorted pictures): the same passes split by side. The
 * reference side gives per column a1 (the horizontally filtered mean, before the square
 * stat_horz takes of it) and sigma1^2; the distorted side then gives sigma2^2 and sigma12 from
 * them, so that sigma1^2, sigma2^2 and sigma12 are the integers stat_horz gives. */
void svc_vif_ref_vert_c(const uint16_t *const *rref, const uint16_t *filt, int fw, int j0, int j1, int mu_shift,
                        int sq_shift, uint32_t *mu1, uint32_t *xx);
void svc_vif_ref_horz_c(const uint32_t *mu1, const uint32_t *xx, const uint16_t *filt, int fw, int j0, int j1,
                        uint32_t *a1, int32_t *s11);
void svc_vif_dis_vert_c(const uint16_t *const *rref, const uint16_t *const *rdis, const uint16_t *filt, int fw,
                        int j0, int j1, int mu_shift, int sq_shift, uint32_t *mu2, uint32_t *yy, uint32_t *xy);
void svc_vif_dis_horz_c(const uint32_t *a1, const uint32_t *mu2, const uint32_t *yy, const uint32_t *xy,
                        const uint16_t *filt, int fw, int j0, int j1, int32_t *s22, int32_t *s12);

#if defined(__x86_64__) || defined(__i386__)
/* The same kernels in AVX2, bit-identical. */
void svc_vif_stat_vert_avx2(const uint16_t *const *rref, const uint16_t *const *rdis,
                            const uint16_t *filt, int fw, int j0, int j1, int mu_shift,
                            int sq_shift, uint32_t *mu1, uint32_t *mu2, uint32_t *xx,
                            uint32_t *yy, uint32_t *xy);
void svc_vif_stat_horz_avx2(const uint32_t *mu1, const uint32_t *mu2, const uint32_t *xx,
                            const uint32_t *yy, const uint32_t *xy, const uint16_t *filt, int fw,
                            int j0, int j1, int32_t *s11, int32_t *s22, int32_t *s12);
void svc_vif_down_vert_avx2(const uint16_t *const *rref, const uint16_t *const *rdis,
                            const uint16_t *filt, int fw, int j0, int j1, int shift,
                            uint32_t *tref, uint32_t *tdis);
void svc_vif_down_horz_avx2(const uint32_t *tref, const uint32_t *tdis, const uint16_t *filt,
                            int fw, int j0, int j1, uint16_t *oref, uint16_t *odis);

/* Fused row kernels (AVX-512 in x86/integer_vif_avx512.c, AVX2 in x86/integer_vif_avx2.c):
 * a whole output row fused, private scratch of svc_vif_avx512_scratch_len(w) /
 * svc_vif_avx2_scratch_len(w) words. Only for kernels whose coefficients are all below 32768
 * (they run on signed 16-bit words); the AVX2 ones also need w >= 16. The statistic needs the
 * log2 table padded by one entry (AVX-512 gathers read 32 bits) with entry 0 equal to 0 (the AVX2
 * statistic points the lanes that do not count there) and caps the gain at gain_limit
 * (vif_enhn_gain_limit). Source
 * rows are 16-bit samples, or with u8 set (8-bit input at scale 0 only) the picture's own 8-bit
 * rows, read without a widened copy. sums: num_log, den_log, num_lin, den_lin, added to. */
size_t svc_vif_avx2_scratch_len(int w);
void svc_vif_stat_row_avx2(const void *const *rref, const void *const *rdis, int u8, const uint16_t *filt,
                           int fw, int w, int mu_shift, int sq_shift, const uint16_t *log2_lut,
                           double gain_limit, uint16_t *scratch, int64_t sums[4]);
void svc_vif_down_row_avx2(const void *const *rref, const void *const *rdis, int u8, const uint16_t *filt,
                           int fw, int w, int shift, uint16_t *scratch, int wo, uint16_t *oref,
                           uint16_t *odis);
size_t svc_vif_avx512_scratch_len(int w);
void svc_vif_stat_row_avx512(const void *const *rref, const void *const *rdis, int u8,
                             const uint16_t *filt, int fw, int w, int mu_shift, int sq_shift,
                             const uint16_t *log2_lut, double gain_limit, uint16_t *scratch,
                             int64_t sums[4]);
void svc_vif_down_row_avx512(const void *const *rref, const void *const *rdis, int u8,
                             const uint16_t *filt, int fw, int w, int shift, uint16_t *scratch,
                             int wo, uint16_t *oref, uint16_t *odis);
/* Ladder variants of the fused statistic row: the reference side stores one output row's a1 and
 * sigma1^2 (in the kernel's own column order, svc_vif_ladder_row_len(w) words of each) and adds
 * the row's denominators (den_log, den_lin: sigma1^2 alone decides them) to sums; the distorted
 * side reads them back and adds the numerators (num_log, num_lin): together, what stat_row adds. */
size_t svc_vif_ladder_row_len(int w);
/* svc_vif_down_row_* of one side (the ladders' pyramids). */
void svc_vif_down1_row_avx2(const void *const *rows, int u8, const uint16_t *filt, int fw, int w, int shift,
                            uint16_t *scratch, int wo, uint16_t *out);
void svc_vif_down1_row_avx512(const void *const *rows, int u8, const uint16_t *filt, int fw, int w, int shift,
                              uint16_t *scratch, int wo, uint16_t *out);
void svc_vif_down1_row_avx512_vnni(const void *const *rows, int u8, const uint16_t *filt, int fw, int w, int shift,
                                   uint16_t *scratch, int wo, uint16_t *out);
void svc_vif_ref_row_avx2(const void *const *rref, int u8, const uint16_t *filt, int fw, int w, int mu_shift,
    int sq_shift, const uint16_t *log2_lut, uint16_t *scratch, uint32_t *a1, int32_t *s11, int64_t sums[4]);
void svc_vif_dis_row_avx2(const void *const *rref, const void *const *rdis, int u8, const uint16_t *filt, int fw,
                          int w, int mu_shift, int sq_shift, const uint32_t *a1, const int32_t *s11,
                          const uint16_t *log2_lut, double gain_limit, uint16_t *scratch, int64_t sums[4]);
void svc_vif_ref_row_avx512(const void *const *rref, int u8, const uint16_t *filt, int fw, int w, int mu_shift,
    int sq_shift, const uint16_t *log2_lut, uint16_t *scratch, uint32_t *a1, int32_t *s11, int64_t sums[4]);
void svc_vif_dis_row_avx512(const void *const *rref, const void *const *rdis, int u8, const uint16_t *filt, int fw,
                            int w, int mu_shift, int sq_shift, const uint32_t *a1, const int32_t *s11,
                            const uint16_t *log2_lut, double gain_limit, uint16_t *scratch, int64_t sums[4]);
void svc_vif_ref_row_avx512_vnni(const void *const *rref, int u8, const uint16_t *filt, int fw, int w, int mu_shift,
    int sq_shift, const uint16_t *log2_lut, uint16_t *scratch, uint32_t *a1, int32_t *s11, int64_t sums[4]);
void svc_vif_dis_row_avx512_vnni(const void *const *rref, const void *const *rdis, int u8, const uint16_t *filt,
                                 int fw, int w, int mu_shift, int sq_shift, const uint32_t *a1, const int32_t *s11,
                                 const uint16_t *log2_lut, double gain_limit, uint16_t *scratch, int64_t sums[4]);
/* The same built for AVX512-VNNI (vpdpwssd). */
void svc_vif_stat_row_avx512_vnni(const void *const *rref, const void *const *rdis, int u8,
                                  const uint16_t *filt, int fw, int w, int mu_shift, int sq_shift,
                                  const uint16_t *log2_lut, double gain_limit, uint16_t *scratch,
                             int64_t sums[4]);
void svc_vif_down_row_avx512_vnni(const void *const *rref, const void *const *rdis, int u8,
                                  const uint16_t *filt, int fw, int w, int shift,
                                  uint16_t *scratch, int wo, uint16_t *oref, uint16_t *odis);
#endif

#endif
