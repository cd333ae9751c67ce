/* Frame buffers and the raw planar layout shared by the file reader and streams. */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#if defined(__x86_64__)
#include <emmintrin.h>
#endif

static void chroma_size(int w, int h, int pix_fmt, int *cw, int *ch) {
    switch (pix_fmt) {
    case SVC_PIX_420: *cw = (w + 1) / 2; *ch = (h + 1) / 2; break;
    case SVC_PIX_422: *cw = (w + 1) / 2; *ch = h; break;
    default: *cw = w; *ch = h; break;
    }
}

static int valid_geometry(int w, int h, int pix_fmt, int bpc) {
    if (w <= 0 || h <= 0 || w > 16384 || h > 16384) return 0;
    if (pix_fmt != SVC_PIX_420 && pix_fmt != SVC_PIX_422 && pix_fmt != SVC_PIX_444) return 0;
    return bpc == 8 || bpc == 10 || bpc == 12 || bpc == 16;
}

int64_t svc_frame_bytes(int w, int h, int pix_fmt, int bpc) {
    if (!valid_geometry(w, h, pix_fmt, bpc)) return -1;
    int cw, ch;
    chroma_size(w, h, pix_fmt, &cw, &ch);
    int64_t samples = (int64_t)w * h + 2 * (int64_t)cw * ch;
    return samples * (bpc > 8 ? 2 : 1);
}

int svc_picture_alloc(svc_picture *pic, int w, int h, int pix_fmt, int bpc) {
    memset(pic, 0, sizeof *pic);
    if (!valid_geometry(w, h, pix_fmt, bpc)) return SVC_E_GEOMETRY;
    int cw, ch;
    chroma_size(w, h, pix_fmt, &cw, &ch);
    const int bytes = bpc > 8 ? 2 : 1;
    for (int p = 0; p < 3; p++) {
        const int pw = p ? cw : w, ph = p ? ch : h;
        /* Rows padded to 32 bytes so SIMD kernels may load whole vectors. */
        const ptrdiff_t stride = (((ptrdiff_t)pw * bytes) + 31) & ~(ptrdiff_t)31;
        void *data = NULL;
        if (posix_memalign(&data, 32, (size_t)stride * (size_t)ph) != 0) {
            svc_picture_free(pic);
            return SVC_E_NOMEM;
        }
        memset(data, 0, (size_t)stride * (size_t)ph);
        pic->plane[p] = (svc_plane){ .data = data, .stride = stride, .w = pw, .h = ph };
    }
    pic->bpc = bpc;
    pic->pix_fmt = pix_fmt;
    return SVC_OK;
}

void svc_picture_free(svc_picture *pic) {
    for (int p = 0; p < 3; p++) {
        free(pic->plane[p].data);
        pic->plane[p].data = NULL;
    }
}

int svc_picture_from_raw(svc_picture *pic, const uint8_t *buf, size_t len) {
    const int64_t need = svc_frame_bytes(pic->plane[0].w, pic->plane[0].h, pic->pix_fmt, pic->bpc);
    if (need < 0 || (int64_t)len != need) return SVC_E_GEOMETRY;
    const uint8_t *src = buf;
    for (int p = 0; p < 3; p++) {
        const svc_plane *pl = &pic->plane[p];
        for (int y = 0; y < pl->h; y++) {
            uint8_t *row = (uint8_t *)pl->data + y * pl->stride;
            if (pic->bpc == 8) {
                memcpy(row, src, (size_t)pl->w);
                src += pl->w;
            } else {
                uint16_t *r16 = (uint16_t *)row;
                for (int x = 0; x < pl->w; x++) r16[x] = (uint16_t)(src[2 * x] | (src[2 * x + 1] << 8));
                src += 2 * (size_t)pl->w;
            }
        }
    }
    return SVC_OK;
}

void svc_widen_u8(const uint8_t *src, uint16_t *dst, int n) {
    int i = 0;
#if defined(__x86_64__)
    const __m128i zero = _mm_setzero_si128();
    for (; i + 16 <= n; i += 16) {
        const __m128i v = _mm_loadu_si128((const __m128i *)(src + i));
        _mm_storeu_si128((__m128i *)(dst + i), _mm_unpacklo_epi8(v, zero));
        _mm_storeu_si128((__m128i *)(dst + i + 8), _mm_unpackhi_epi8(v, zero));
    }
#endif
    for (; i < n; i++) dst[i] = src[i];
}

void svc_set_err(char *err, size_t err_len, const char *fmt, ...) {
    if (!err || err_len == 0) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, err_len, fmt, ap);
    va_end(ap);
}

void svc_plane_to_float(const svc_plane *p, int bpc, float offset, float *dst) {
    if (bpc == 8) {
        for (int y = 0; y < p->h; y++) {
            const uint8_t *row = (const uint8_t *)p->data + y * p->stride;
            for (int x = 0; x < p->w; x++) dst[(size_t)y * p->w + x] = (float)row[x] + offset;
        }
        return;
    }
    const float div = (float)(1 << (bpc - 8));
    for (int y = 0; y < p->h; y++) {
        const uint16_t *row = (const uint16_t *)((const uint8_t *)p->data + y * p->stride);
        for (int x = 0; x < p->w; x++) dst[(size_t)y * p->w + x] = (float)row[x] / div + offset;
    }
}

void svc_luma_u16(const svc_picture *pic, uint16_t *dst) {
    const svc_plane *p = &pic->plane[0];
    for (int y = 0; y < p->h; y++) {
        const uint8_t *row = (const uint8_t *)p->data + y * p->stride;
        uint16_t *out = dst + (size_t)y * p->w;
        if (pic->bpc == 8) {
            svc_widen_u8(row, out, p->w);
        } else {
            memcpy(out, row, (size_t)p->w * sizeof(uint16_t));
        }
    }
}
