/* Depthwise convolution on a zero-padded copy of each input plane, for
 * horizontal stride 1 or 2 and no dilation (MobileNet's case): every tap
 * is a plain vector load, the taps of 16 (AVX-512) or 8 (AVX2) outputs
 * accumulate in one register, and row tails use masks. */
#include "gemm.h"
#include "rt.h"

size_t rt_dwpad_floats(const rt_dwpad *a)
{
    return a->prows * a->pstride + 64;
}

static void fill_value(float *p, size_t n, float v)
{
    for (size_t i = 0; i < n; i++)
        p[i] = v;
}

void rt_dwpad_fill(const rt_dwpad *a, const float *x, float *p, float pad)
{
    for (size_t r = 0; r < a->prows; r++) {
        float *pr = p + r * a->pstride;
        size_t ir = r - a->ph; /* wraps when r < ph: then >= h */
        if (r < a->ph || ir >= a->h) {
            fill_value(pr, a->pstride, pad);
            continue;
        }
        size_t left = a->pw < a->pstride ? a->pw : a->pstride;
        fill_value(pr, left, pad);
        size_t n = a->w;
        if (left + n > a->pstride)
            n = a->pstride - left;
        memcpy(pr + left, x + ir * a->w, n * sizeof(float));
        fill_value(pr + left + n, a->pstride - left - n, pad);
    }
    fill_value(p + a->prows * a->pstride, 64, pad);
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

__attribute__((target("avx512f"))) static void dw_avx512(const rt_dwpad *a, const float *p, const float *w,
                                                         float bias, float *y)
{
    const size_t OH = a->oh, OW = a->ow, KH = a->kh, KW = a->kw, sh = a->sh, sw = a->sw, ps = a->pstride;
    const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    const __m512 vb = _mm512_set1_ps(bias), vlo = _mm512_set1_ps(a->lo), vhi = _mm512_set1_ps(a->hi);
    for (size_t oh = 0; oh < OH; oh++) {
        float *yr = y + oh * OW;
        const float *prow = p + oh * sh * ps;
        for (size_t ow = 0; ow < OW; ow += 16) {
            size_t n = OW - ow < 16 ? OW - ow : 16;
            __mmask16 m = (__mmask16)((1u << n) - 1u);
            __m512 acc = a->accumulate ? _mm512_add_ps(_mm512_maskz_loadu_ps(m, yr + ow), vb) : vb;
            for (size_t kh = 0; kh < KH; kh++) {
                const float *pr = prow + kh * ps + ow * sw;
                const float *wr = w + kh * KW;
                if (sw == 1) {
                    for (size_t kw = 0; kw < KW; kw++)
                        acc = _mm512_fmadd_ps(_mm512_set1_ps(wr[kw]), _mm512_loadu_ps(pr + kw), acc);
                } else {
                    for (size_t kw = 0; kw < KW; kw++) {
                        __m512 lo = _mm512_loadu_ps(pr + kw), hi = _mm512_loadu_ps(pr + kw + 16);
                        acc = _mm512_fmadd_ps(_mm512_set1_ps(wr[kw]), _mm512_permutex2var_ps(lo, even, hi), acc);
                    }
                }
            }
            if (a->act)
                acc = _mm512_min_ps(vhi, _mm512_max_ps(vlo, acc));
            _mm512_mask_storeu_ps(yr + ow, m, acc);
        }
    }
}

__attribute__((target("avx2,fma"))) static void dw_avx2(const rt_dwpad *a, const float *p, const float *w, float bias,
                                                        float *y)
{
    const size_t OH = a->oh, OW = a->ow, KH = a->kh, KW = a->kw, sh = a->sh, sw = a->sw, ps = a->pstride;
    const __m256 vb = _mm256_set1_ps(bias), vlo = _mm256_set1_ps(a->lo), vhi = _mm256_set1_ps(a->hi);
    const __m256i iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    for (size_t oh = 0; oh < OH; oh++) {
        float *yr = y + oh * OW;
        const float *prow = p + oh * sh * ps;
        for (size_t ow = 0; ow < OW; ow += 8) {
            size_t n = OW - ow < 8 ? OW - ow : 8;
            __m256i m = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)n), iota);
            __m256 acc = a->accumulate ? _mm256_add_ps(_mm256_maskload_ps(yr + ow, m), vb) : vb;
            for (size_t kh = 0; kh < KH; kh++) {
                const float *pr = prow + kh * ps + ow * sw;
                const float *wr = w + kh * KW;
                if (sw == 1) {
                    for (size_t kw = 0; kw < KW; kw++)
                        acc = _mm256_fmadd_ps(_mm256_set1_ps(wr[kw]), _mm256_loadu_ps(pr + kw), acc);
                } else {
                    for (size_t kw = 0; kw < KW; kw++) {
                        __m256 lo = _mm256_loadu_ps(pr + kw), hi = _mm256_loadu_ps(pr + kw + 8);
                        /* even lanes of lo:hi in order */
                        __m256 e = _mm256_shuffle_ps(lo, hi, _MM_SHUFFLE(2, 0, 2, 0));
                        e = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(e), _MM_SHUFFLE(3, 1, 2, 0)));
                        acc = _mm256_fmadd_ps(_mm256_set1_ps(wr[kw]), e, acc);
                    }
                }
            }
            if (a->act)
                acc = _mm256_min_ps(vhi, _mm256_max_ps(vlo, acc));
            _mm256_maskstore_ps(yr + ow, m, acc);
        }
    }
}
/* Max pooling on a plane padded with -infinity: a window holding a NaN
 * gives NaN, as the scalar path does. */
__attribute__((target("avx512f"))) static void maxpool_avx512(const rt_dwpad *a, const float *p, const float *w,
                                                              float bias, float *y)
{
    (void)w;
    (void)bias;
    const size_t OH = a->oh, OW = a->ow, KH = a->kh, KW = a->kw, sh = a->sh, sw = a->sw, ps = a->pstride;
    const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    const __m512 ninf = _mm512_set1_ps(-INFINITY), qnan = _mm512_set1_ps(NAN);
    for (size_t oh = 0; oh < OH; oh++) {
        float *yr = y + oh * OW;
        const float *prow = p + oh * sh * ps;
        for (size_t ow = 0; ow < OW; ow += 16) {
            size_t n = OW - ow < 16 ? OW - ow : 16;
            __mmask16 m = (__mmask16)((1u << n) - 1u), nan = 0;
            __m512 acc = ninf;
            for (size_t kh = 0; kh < KH; kh++) {
                const float *pr = prow + kh * ps + ow * sw;
                for (size_t kw = 0; kw < KW; kw++) {
                    __m512 v = sw == 1 ? _mm512_loadu_ps(pr + kw)
                                       : _mm512_permutex2var_ps(_mm512_loadu_ps(pr + kw), even,
                                                                _mm512_loadu_ps(pr + kw + 16));
                    nan |= _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
                    acc = _mm512_max_ps(acc, v);
                }
            }
            acc = _mm512_mask_mov_ps(acc, nan, qnan);
            _mm512_mask_storeu_ps(yr + ow, m, acc);
        }
    }
}

__attribute__((target("avx2,fma"))) static void maxpool_avx2(const rt_dwpad *a, const float *p, const float *w,
                                                             float bias, float *y)
{
    (void)w;
    (void)bias;
    const size_t OH = a->oh, OW = a->ow, KH = a->kh, KW = a->kw, sh = a->sh, sw = a->sw, ps = a->pstride;
    const __m256 ninf = _mm256_set1_ps(-INFINITY), qnan = _mm256_set1_ps(NAN);
    const __m256i iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    for (size_t oh = 0; oh < OH; oh++) {
        float *yr = y + oh * OW;
        const float *prow = p + oh * sh * ps;
        for (size_t ow = 0; ow < OW; ow += 8) {
            size_t n = OW - ow < 8 ? OW - ow : 8;
            __m256i m = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)n), iota);
            __m256 acc = ninf, nan = _mm256_setzero_ps();
            for (size_t kh = 0; kh < KH; kh++) {
                const float *pr = prow + kh * ps + ow * sw;
                for (size_t kw = 0; kw < KW; kw++) {
                    __m256 v;
                    if (sw == 1) {
                        v = _mm256_loadu_ps(pr + kw);
                    } else {
                        __m256 lo = _mm256_loadu_ps(pr + kw), hi = _mm256_loadu_ps(pr + kw + 8);
                        v = _mm256_shuffle_ps(lo, hi, _MM_SHUFFLE(2, 0, 2, 0));
                        v = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(v), _MM_SHUFFLE(3, 1, 2, 0)));
                    }
                    nan = _mm256_or_ps(nan, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
                    acc = _mm256_max_ps(acc, v);
                }
            }
            acc = _mm256_blendv_ps(acc, qnan, nan);
            _mm256_maskstore_ps(yr + ow, m, acc);
        }
    }
}
#endif

rt_dwpad_fn rt_maxpool_select(int isa)
{
    if (isa == GIR_GEMM_AUTO || !gir_gemm_isa_supported((gir_gemm_isa)isa))
        isa = gir_gemm_isa_best();
#if defined(__x86_64__) && defined(__GNUC__)
    if (isa == GIR_GEMM_AVX512)
        return maxpool_avx512;
    if (isa == GIR_GEMM_AVX2)
        return maxpool_avx2;
#endif
    return NULL;
}

rt_dwpad_fn rt_dwpad_select(int isa)
{
    if (isa == GIR_GEMM_AUTO || !gir_gemm_isa_supported((gir_gemm_isa)isa))
        isa = gir_gemm_isa_best();
#if defined(__x86_64__) && defined(__GNUC__)
    if (isa == GIR_GEMM_AVX512)
        return dw_avx512;
    if (isa == GIR_GEMM_AVX2)
        return dw_avx2;
#endif
    return NULL;
}
