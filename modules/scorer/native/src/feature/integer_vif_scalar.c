/*
 * Scalar kernels of the integer VIF (contracts in integer_vif.h): the per-CPU scalar
 * variant beside x86/integer_vif_avx2.c. Both the extractor (integer_vif.c) and
 * the AVX2 kernels, which hand their leftover columns here, call these.
 */
#include "integer_vif.h"

static inline uint64_t round_shift64(uint64_t v, int s) {
    return s ? (v + ((uint64_t)1 << (s - 1))) >> s : v;
}

void svc_vif_stat_vert_c(const uint16_t *const *rref, const uint16_t *const *rdis,
                         const uint16_t *filt, int fw, int j0, int j1, int mu_shift, int sq_shift,
                         uint32_t *mu1, uint32_t *mu2, uint32_t *xx, uint32_t *yy, uint32_t *xy) {
    for (int j = j0; j < j1; j++) {
        uint32_t a1 = 0, a2 = 0;
        uint64_t a11 = 0, a22 = 0, a12 = 0;
        for (int k = 0; k < fw; k++) {
            const uint32_t r = rref[k][j], d = rdis[k][j];
            const uint32_t fr = filt[k] * r, fd = filt[k] * d;
            a1 += fr;
            a2 += fd;
            a11 += (uint64_t)fr * r;
            a22 += (uint64_t)fd * d;
            a12 += (uint64_t)fr * d;
        }
        mu1[j] = (uint32_t)round_shift64(a1, mu_shift);
        mu2[j] = (uint32_t)round_shift64(a2, mu_shift);
        xx[j] = (uint32_t)round_shift64(a11, sq_shift);
        yy[j] = (uint32_t)round_shift64(a22, sq_shift);
        xy[j] = (uint32_t)round_shift64(a12, sq_shift);
    }
}

/* Squared 32-bit mean in the same Q as the filtered squares: (a*b) >> 32, rounded. */
static inline uint32_t mul_q32(uint32_t a, uint32_t b) {
    return (uint32_t)(((uint64_t)a * b + 0x80000000u) >> 32);
}

void svc_vif_stat_horz_c(const uint32_t *mu1, const uint32_t *mu2, const uint32_t *xx,
                         const uint32_t *yy, const uint32_t *xy, const uint16_t *filt, int fw,
                         int j0, int j1, int32_t *s11, int32_t *s22, int32_t *s12) {
    const int r = fw / 2;
    for (int j = j0; j < j1; j++) {
        uint32_t a1 = 0, a2 = 0;
        uint64_t a11 = 0, a22 = 0, a12 = 0;
        for (int k = 0; k < fw; k++) {
            const int x = j - r + k;
            a1 += filt[k] * mu1[x];
            a2 += filt[k] * mu2[x];
            a11 += (uint64_t)filt[k] * xx[x];
            a22 += (uint64_t)filt[k] * yy[x];
            a12 += (uint64_t)filt[k] * xy[x];
        }
        /* Unsigned wrap then signed view, as the reference (negative variances possible). */
        s11[j] = (int32_t)((uint32_t)round_shift64(a11, 16) - mul_q32(a1, a1));
        s22[j] = (int32_t)((uint32_t)round_shift64(a22, 16) - mul_q32(a2, a2));
        s12[j] = (int32_t)((uint32_t)round_shift64(a12, 16) - mul_q32(a1, a2));
    }
}

void svc_vif_down_vert_c(const uint16_t *const *rref, const uint16_t *const *rdis,
                         const uint16_t *filt, int fw, int j0, int j1, int shift, uint32_t *tref,
                         uint32_t *tdis) {
    for (int j = j0; j < j1; j++) {
        uint32_t ar = 0, ad = 0;
        for (int k = 0; k < fw; k++) {
            ar += filt[k] * (uint32_t)rref[k][j];
            ad += filt[k] * (uint32_t)rdis[k][j];
        }
        tref[j] = (uint32_t)round_shift64(ar, shift);
        tdis[j] = (uint32_t)round_shift64(ad, shift);
    }
}

void svc_vif_down_horz_c(const uint32_t *tref, const uint32_t *tdis, const uint16_t *filt, int fw,
                         int j0, int j1, uint16_t *oref, uint16_t *odis) {
    const int r = fw / 2;
    for (int j = j0; j < j1; j++) {
        uint32_t ar = 0, ad = 0;
        for (int k = 0; k < fw; k++) {
            ar += filt[k] * tref[2 * j - r + k];
            ad += filt[k] * tdis[2 * j - r + k];
        }
        oref[j] = (uint16_t)round_shift64(ar, 16);
        odis[j] = (uint16_t)round_shift64(ad, 16);
    }
}

/* ---- ladders: the passes above split into the reference's side and the distorted side ---- */

void svc_vif_ref_vert_c(const uint16_t *const *rref, const uint16_t *filt, int fw, int j0, int j1, int mu_shift,
                        int sq_shift, uint32_t *mu1, uint32_t *xx) {
    for (int j = j0; j < j1; j++) {
        uint32_t a1 = 0;
        uint64_t a11 = 0;
        for (int k = 0; k < fw; k++) {
            const uint32_t r = rref[k][j];
            const uint32_t fr = filt[k] * r;
            a1 += fr;
            a11 += (uint64_t)fr * r;
        }
        mu1[j] = (uint32_t)round_shift64(a1, mu_shift);
        xx[j] = (uint32_t)round_shift64(a11, sq_shift);
    }
}

void svc_vif_ref_horz_c(const uint32_t *mu1, const uint32_t *xx, const uint16_t *filt, int fw, int j0, int j1,
                        uint32_t *a1, int32_t *s11) {
    const int r = fw / 2;
    for (int j = j0; j < j1; j++) {
        uint32_t m = 0;
        uint64_t a11 = 0;
        for (int k = 0; k < fw; k++) {
            const int x = j - r + k;
            m += filt[k] * mu1[x];
            a11 += (uint64_t)filt[k] * xx[x];
        }
        a1[j] = m;
        s11[j] = (int32_t)((uint32_t)round_shift64(a11, 16) - mul_q32(m, m));
    }
}

void svc_vif_dis_vert_c(const uint16_t *const *rref, const uint16_t *const *rdis, const uint16_t *filt, int fw,
                        int j0, int j1, int mu_shift, int sq_shift, uint32_t *mu2, uint32_t *yy, uint32_t *xy) {
    for (int j = j0; j < j1; j++) {
        uint32_t a2 = 0;
        uint64_t a22 = 0, a12 = 0;
        for (int k = 0; k < fw; k++) {
            const uint32_t r = rref[k][j], d = rdis[k][j];
            const uint32_t fr = filt[k] * r, fd = filt[k] * d;
            a2 += fd;
            a22 += (uint64_t)fd * d;
            a12 += (uint64_t)fr * d;
        }
        mu2[j] = (uint32_t)round_shift64(a2, mu_shift);
        yy[j] = (uint32_t)round_shift64(a22, sq_shift);
        xy[j] = (uint32_t)round_shift64(a12, sq_shift);
    }
}

void svc_vif_dis_horz_c(const uint32_t *a1, const uint32_t *mu2, const uint32_t *yy, const uint32_t *xy,
                        const uint16_t *filt, int fw, int j0, int j1, int32_t *s22, int32_t *s12) {
    const int r = fw / 2;
    for (int j = j0; j < j1; j++) {
        uint32_t a2 = 0;
        uint64_t a22 = 0, a12 = 0;
        for (int k = 0; k < fw; k++) {
            const int x = j - r + k;
            a2 += filt[k] * mu2[x];
            a22 += (uint64_t)filt[k] * yy[x];
            a12 += (uint64_t)filt[k] * xy[x];
        }
        s22[j] = (int32_t)((uint32_t)round_shift64(a22, 16) - mul_q32(a2, a2));
        s12[j] = (int32_t)((uint32_t)round_shift64(a12, 16) - mul_q32(a1[j], a2));
    }
}
