/* AVX-512 helpers shared by the kernels compiled with target("avx512f"):
 * the mask of a vector's first n lanes, a 16 x 16 transpose of floats in
 * registers, and the store of a channel-block tile into NCHW rows. */
#ifndef GIR_RUNTIME_SIMD512_H
#define GIR_RUNTIME_SIMD512_H

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#include <stdbool.h>
#include <stddef.h>

/* Lanes [0, n) (all 16 from n = 16 on). */
__attribute__((target("avx512f"), always_inline)) static inline __mmask16 rt_mask16(size_t n)
{
    return n >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << n) - 1u);
}

/* r[i][j] -> r[j][i], in 64 shuffles: pairs within 128-bit lanes, then
 * pairs of pairs, then a 4 x 4 transpose of the lanes. */
__attribute__((target("avx512f"), always_inline)) static inline void rt_tr16(__m512 r[16])
{
    __m512 t[16];
    for (int i = 0; i < 8; i++) { /* pairs of rows, within 128-bit lanes */
        t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
        t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
    }
    for (int i = 0; i < 4; i++) { /* r[4i + c], lane L: rows 4i..4i+3 at column 4L + c */
        __m512d a0 = _mm512_castps_pd(t[4 * i]), a1 = _mm512_castps_pd(t[4 * i + 1]);
        __m512d a2 = _mm512_castps_pd(t[4 * i + 2]), a3 = _mm512_castps_pd(t[4 * i + 3]);
        r[4 * i] = _mm512_castpd_ps(_mm512_unpacklo_pd(a0, a2));
        r[4 * i + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a0, a2));
        r[4 * i + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(a1, a3));
        r[4 * i + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(a1, a3));
    }
    for (int c = 0; c < 4; c++) { /* a 4 x 4 transpose of the 128-bit lanes of r[c], r[4 + c], r[8 + c], r[12 + c] */
        __m512 v0 = _mm512_shuffle_f32x4(r[c], r[4 + c], 0x44), v1 = _mm512_shuffle_f32x4(r[c], r[4 + c], 0xEE);
        __m512 v2 = _mm512_shuffle_f32x4(r[8 + c], r[12 + c], 0x44), v3 = _mm512_shuffle_f32x4(r[8 + c], r[12 + c], 0xEE);
        t[c] = _mm512_shuffle_f32x4(v0, v2, 0x88);
        t[4 + c] = _mm512_shuffle_f32x4(v0, v2, 0xDD);
        t[8 + c] = _mm512_shuffle_f32x4(v1, v3, 0x88);
        t[12 + c] = _mm512_shuffle_f32x4(v1, v3, 0xDD);
    }
    for (int i = 0; i < 16; i++)
        r[i] = t[i];
}

/* Pixels [0, q) of a tile in channel-block order (pixel i's 16 channels at
 * t + 16 i) into nc channel rows of NCHW data (channel c's pixel i at
 * y[c * stride + i]), 16 pixels at a time transposed in registers; added
 * to what y holds when accumulate. */
__attribute__((target("avx512f"), always_inline)) static inline void rt_tile_to_rows(const float *t, size_t q,
                                                                                    float *y, size_t stride,
                                                                                    size_t nc, bool accumulate)
{
    for (size_t q0 = 0; q0 < q; q0 += 16) {
        size_t m = q - q0 < 16 ? q - q0 : 16;
        __mmask16 mk = rt_mask16(m);
        __m512 r[16];
        for (size_t i = 0; i < 16; i++)
            r[i] = i < m ? _mm512_loadu_ps(t + (q0 + i) * 16) : _mm512_setzero_ps();
        rt_tr16(r);
        for (size_t c = 0; c < nc; c++) {
            float *yc = y + c * stride + q0;
            __m512 v = r[c];
            if (accumulate)
                v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(mk, yc));
            _mm512_mask_storeu_ps(yc, mk, v);
        }
    }
}

#endif
#endif
