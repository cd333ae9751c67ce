/*
 * psnr_hvs: PSNR-HVS-M (Ponomarenko et al. 2007) in the Daala/Xiph formulation the reference's
 * "psnr_hvs" uses: per plane, 8x8 blocks every 7 samples; each block's integer DCT (Daala's
 * lifting fDCT, below) is compared coefficient by coefficient, the AC differences reduced by a
 * contrast-masking threshold (the larger of the two blocks' masking energies, from their DCT
 * energy weighted by the squared CSF table times 0.3885746225901003 and their variance
 * structure) and weighted by the plane's CSF table. Plane score: mean squared weighted error
 * over samplemax^2; psnr_hvs_{y,cb,cr} = -10 log10(score), psnr_hvs = -10 log10(0.8 y + 0.1 (cb + cr)).
 * Arithmetic in float where the reference uses float (statistics, masks, the error sum).
 */
#include <math.h>
#include <stdlib.h>

#include "extractor.h"

static const char *const names[4] = { "psnr_hvs_y", "psnr_hvs_cb", "psnr_hvs_cr", "psnr_hvs" };

/* Contrast sensitivity per DCT coefficient, for Y, Cb and Cr (Xiph's tables, as floats). */
static const float csf[3][8][8] = {
    { { 1.6193873005f, 2.2901594831f, 2.08509755623f, 1.48366094411f, 1.00227514334f, 0.678296995242f, 0.466224900598f, 0.3265091542f },
      { 2.2901594831f, 1.94321815382f, 2.04793073064f, 1.68731108984f, 1.2305666963f, 0.868920337363f, 0.61280991668f, 0.436405793551f },
      { 2.08509755623f, 2.04793073064f, 1.34329019223f, 1.09205635862f, 0.875748795257f, 0.670882927016f, 0.501731932449f, 0.372504254596f },
      { 1.48366094411f, 1.68731108984f, 1.09205635862f, 0.772819797575f, 0.605636379554f, 0.48309405692f, 0.380429446972f, 0.295774038565f },
      { 1.00227514334f, 1.2305666963f, 0.875748795257f, 0.605636379554f, 0.448996256676f, 0.352889268808f, 0.283006984131f, 0.226951348204f },
      { 0.678296995242f, 0.868920337363f, 0.670882927016f, 0.48309405692f, 0.352889268808f, 0.27032073436f, 0.215017739696f, 0.17408067321f },
      { 0.466224900598f, 0.61280991668f, 0.501731932449f, 0.380429446972f, 0.283006984131f, 0.215017739696f, 0.168869545842f, 0.136153931001f },
      { 0.3265091542f, 0.436405793551f, 0.372504254596f, 0.295774038565f, 0.226951348204f, 0.17408067321f, 0.136153931001f, 0.109083846276f } },
    { { 1.91113096927f, 2.46074210438f, 1.18284184739f, 1.14982565193f, 1.05017074788f, 0.898018824055f, 0.74725392039f, 0.615105596242f },
      { 2.46074210438f, 1.58529308355f, 1.21363250036f, 1.38190029285f, 1.33100189972f, 1.17428548929f, 0.996404342439f, 0.830890433625f },
      { 1.18284184739f, 1.21363250036f, 0.978712413627f, 1.02624506078f, 1.03145147362f, 0.960060382087f, 0.849823426169f, 0.731221236837f },
      { 1.14982565193f, 1.38190029285f, 1.02624506078f, 0.861317501629f, 0.801821139099f, 0.751437590932f, 0.685398513368f, 0.608694761374f },
      { 1.05017074788f, 1.33100189972f, 1.03145147362f, 0.801821139099f, 0.676555426187f, 0.605503172737f, 0.55002013668f, 0.495804539034f },
      { 0.898018824055f, 1.17428548929f, 0.960060382087f, 0.751437590932f, 0.605503172737f, 0.514674450957f, 0.454353482512f, 0.407050308965f },
      { 0.74725392039f, 0.996404342439f, 0.849823426169f, 0.685398513368f, 0.55002013668f, 0.454353482512f, 0.389234902883f, 0.342353999733f },
      { 0.615105596242f, 0.830890433625f, 0.731221236837f, 0.608694761374f, 0.495804539034f, 0.407050308965f, 0.342353999733f, 0.295530605237f } },
    { { 2.03871978502f, 2.62502345193f, 1.26180942886f, 1.11019789803f, 1.01397751469f, 0.867069376285f, 0.721500455585f, 0.593906509971f },
      { 2.62502345193f, 1.69112867013f, 1.17180569821f, 1.3342742857f, 1.28513006198f, 1.13381474809f, 0.962064122248f, 0.802254508198f },
      { 1.26180942886f, 1.17180569821f, 0.944981930573f, 0.990876405848f, 0.995903384143f, 0.926972725286f, 0.820534991409f, 0.706020324706f },
      { 1.11019789803f, 1.3342742857f, 0.990876405848f, 0.831632933426f, 0.77418706195f, 0.725539939514f, 0.661776842059f, 0.587716619023f },
      { 1.01397751469f, 1.28513006198f, 0.995903384143f, 0.77418706195f, 0.653238524286f, 0.584635025748f, 0.531064164893f, 0.478717061273f },
      { 0.867069376285f, 1.13381474809f, 0.926972725286f, 0.725539939514f, 0.584635025748f, 0.496936637883f, 0.438694579826f, 0.393021669543f },
      { 0.721500455585f, 0.962064122248f, 0.820534991409f, 0.661776842059f, 0.531064164893f, 0.438694579826f, 0.375820256136f, 0.330555063063f },
      { 0.593906509971f, 0.802254508198f, 0.706020324706f, 0.587716619023f, 0.478717061273f, 0.393021669543f, 0.330555063063f, 0.285345396658f } },
};

typedef struct hvs_state {
    int w, h, pix_fmt, bpc;
    float mask[3][8][8];
} hvs_state;

static void *hvs_create(int w, int h, int pix_fmt, int bpc, int cpu) {
    (void)cpu;
    if (svc_frame_bytes(w, h, pix_fmt, bpc) < 0 || bpc > 12) return NULL;
    hvs_state *s = malloc(sizeof *s);
    if (!s) return NULL;
    *s = (hvs_state){ .w = w, .h = h, .pix_fmt = pix_fmt, .bpc = bpc };
    for (int p = 0; p < 3; p++)
        for (int i = 0; i < 8; i++)
            for (int j = 0; j < 8; j++)
                s->mask[p][i][j] = (csf[p][i][j] * 0.3885746225901003) * (csf[p][i][j] * 0.3885746225901003);
    return s;
}

static const char *hvs_backend(const void *state) {
    (void)state;
    return "scalar";
}

static void hvs_destroy(void *state) { free(state); }

/* a >> b rounding toward zero (Daala's unbiased shift). */
static inline int32_t rshift_unbiased(int32_t a, int b) {
    return (int32_t)(((uint32_t)a >> (32 - b)) + (uint32_t)a) >> b;
}

/* Daala's 8-point integer type-II DCT by lifting: x[k * stride] -> y[0..7]. */
static void fdct8(int32_t *y, const int32_t *x, int stride) {
    int32_t t0 = x[0], t4 = x[stride], t2 = x[2 * stride], t6 = x[3 * stride];
    int32_t t7 = x[4 * stride], t3 = x[5 * stride], t5 = x[6 * stride], t1 = x[7 * stride];
    t1 = t0 - t1;
    const int32_t t1h = rshift_unbiased(t1, 1);
    t0 -= t1h;
    t4 += t5;
    const int32_t t4h = rshift_unbiased(t4, 1);
    t5 -= t4h;
    t3 = t2 - t3;
    t2 -= rshift_unbiased(t3, 1);
    t6 += t7;
    const int32_t t6h = rshift_unbiased(t6, 1);
    t7 = t6h - t7;
    t0 += t6h;
    t6 = t0 - t6;
    t2 = t4h - t2;
    t4 = t2 - t4;
    t0 -= (t4 * 13573 + 16384) >> 15;
    t4 += (t0 * 11585 + 8192) >> 14;
    t0 -= (t4 * 13573 + 16384) >> 15;
    t6 -= (t2 * 21895 + 16384) >> 15;
    t2 += (t6 * 15137 + 8192) >> 14;
    t6 -= (t2 * 21895 + 16384) >> 15;
    t3 += (t5 * 19195 + 16384) >> 15;
    t5 += (t3 * 11585 + 8192) >> 14;
    t3 -= (t5 * 7489 + 4096) >> 13;
    t7 = rshift_unbiased(t5, 1) - t7;
    t5 -= t7;
    t3 = t1h - t3;
    t1 -= t3;
    t7 += (t1 * 3227 + 16384) >> 15;
    t1 -= (t7 * 6393 + 16384) >> 15;
    t7 += (t1 * 3227 + 16384) >> 15;
    t5 += (t3 * 2485 + 4096) >> 13;
    t3 -= (t5 * 18205 + 16384) >> 15;
    t5 += (t3 * 2485 + 4096) >> 13;
    y[0] = t0;
    y[1] = t1;
    y[2] = t2;
    y[3] = t3;
    y[4] = t4;
    y[5] = t5;
    y[6] = t6;
    y[7] = t7;
}

/* 2-D DCT of an 8x8 block in place: columns into rows of a temporary, then its columns. */
static void fdct8x8(int32_t *blk) {
    int32_t z[64];
    for (int i = 0; i < 8; i++) fdct8(z + 8 * i, blk + i, 8);
    for (int i = 0; i < 8; i++) fdct8(blk + 8 * i, z + i, 8);
}

/* Variance structure of a block: the sum of its four 4x4 quadrants' variances over its own. */
static float block_stats(const int32_t *b) {
    float gmean = 0, means[4] = { 0, 0, 0, 0 }, gvar = 0, vars[4] = { 0, 0, 0, 0 };
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 8; j++) {
            const int sub = ((i & 12) >> 2) + ((j & 12) >> 1);
            gmean += b[i * 8 + j];
            means[sub] += b[i * 8 + j];
        }
    gmean /= 64.f;
    for (int k = 0; k < 4; k++) means[k] /= 16.f;
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 8; j++) {
            const int sub = ((i & 12) >> 2) + ((j & 12) >> 1);
            gvar += (b[i * 8 + j] - gmean) * (b[i * 8 + j] - gmean);
            vars[sub] += (b[i * 8 + j] - means[sub]) * (b[i * 8 + j] - means[sub]);
        }
    gvar *= 1 / 63.f * 64;
    for (int k = 0; k < 4; k++) vars[k] *= 1 / 15.f * 16;
    if (gvar > 0) gvar = (vars[0] + vars[1] + vars[2] + vars[3]) / gvar;
    return gvar;
}

static float masking(const int32_t *coef, const float mask[8][8], float gvar) {
    float m = 0;
    for (int i = 0; i < 8; i++)
        for (int j = (i == 0); j < 8; j++) m += coef[i * 8 + j] * coef[i * 8 + j] * mask[i][j];
    return sqrt(m * gvar) / 32.f;
}

static double plane_score(const hvs_state *s, const svc_plane *pa, const svc_plane *pb, int p) {
    const float(*mask)[8] = s->mask[p];
    const float(*weights)[8] = csf[p];
    float ret = 0;
    int pixels = 0;
    int32_t bs[64], bd[64];
    for (int y = 0; y < pa->h - 7; y += 7)
        for (int x = 0; x < pa->w - 7; x += 7) {
            for (int i = 0; i < 8; i++) {
                const uint8_t *ra = (const uint8_t *)pa->data + (y + i) * pa->stride;
                const uint8_t *rb = (const uint8_t *)pb->data + (y + i) * pb->stride;
                for (int j = 0; j < 8; j++) {
                    bs[i * 8 + j] = s->bpc == 8 ? ra[x + j] : ((const uint16_t *)ra)[x + j];
                    bd[i * 8 + j] = s->bpc == 8 ? rb[x + j] : ((const uint16_t *)rb)[x + j];
                }
            }
            const float s_gvar = block_stats(bs), d_gvar = block_stats(bd);
            fdct8x8(bs);
            fdct8x8(bd);
            float m = masking(bs, mask, s_gvar);
            const float dm = masking(bd, mask, d_gvar);
            if (dm > m) m = dm;
            for (int i = 0; i < 8; i++)
                for (int j = 0; j < 8; j++) {
                    float err = abs(bs[i * 8 + j] - bd[i * 8 + j]);
                    if (i != 0 || j != 0) err = err < m / mask[i][j] ? 0 : err - m / mask[i][j];
                    ret += (err * weights[i][j]) * (err * weights[i][j]);
                    pixels++;
                }
        }
    ret /= pixels;
    const int32_t samplemax = (1 << s->bpc) - 1;
    ret /= samplemax * samplemax;
    return ret;
}

static int hvs_compute(void *state, const svc_picture *ref, const svc_picture *dis, double *out) {
    const hvs_state *s = state;
    if (ref->plane[0].w != s->w || ref->plane[0].h != s->h || dis->plane[0].w != s->w || dis->plane[0].h != s->h)
        return SVC_E_GEOMETRY;
    double score[3];
    for (int p = 0; p < 3; p++) {
        score[p] = plane_score(s, &ref->plane[p], &dis->plane[p], p);
        out[p] = 10 * (-1 * log10(score[p]));
    }
    out[3] = 10 * (-1 * log10(score[0] * .8 + .1 * (score[1] + score[2])));
    return SVC_OK;
}

const svc_extractor svc_extractor_psnr_hvs = {
    .name = "psnr_hvs",
    .n_outputs = 4,
    .output_names = names,
    .create = hvs_create,
    .backend = hvs_backend,
    .compute = hvs_compute,
    .destroy = hvs_destroy,
};
