/* Depthwise convolution on a zero-padded copy of each input plane, for
 * horizontal stride 1 or 2 and no dilation (MobileNet's case): every tap
 * is a plain vector load (at stride 2 from the plane stored as its even
 * and odd columns), the taps of 16 (AVX-512) or 8 (AVX2) outputs of two
 * rows accumulate in two registers, and row tails use masks.  3x3, 5x5 and
 * 7x7 windows at strides 1 and 2 have their own unrolled copies.  Max
 * pooling uses the same padded plane (columns in order). */
#include "gemm.h"
#include "rt.h"

/* sh rows past prows: the second row of a block reads them when the
 * plane has an odd number of output rows */
void rt_dwpad_from_geom(rt_dwpad *a, const rt_geom *g)
{
    memset(a, 0, sizeof *a);
    RT_WINDOW_FROM_GEOM(a, g);
    a->prows = (a->oh - 1) * a->sh + a->kh;
}

size_t rt_dwpad_floats(const rt_dwpad *a)
{
    return (a->prows + a->sh) * a->pstride + 64;
}

static void fill_value(float *p, size_t n, float v)
{
    for (size_t i = 0; i < n; i++)
        p[i] = v;
}

/* Row r of the plane (already padded: pw zeros, then x's w columns) split
 * into its even columns, then its odd ones, half each: columns j of phase q
 * whose padded column 2j + q lies in [pw, pw + w) come from x, from jlo
 * to jhi. */
static inline void split_span(size_t w, size_t pw, size_t half, size_t q, size_t *jlo, size_t *jhi)
{
    size_t lo = pw > q ? (pw - q + 1) / 2 : 0, hi = (pw + w - q + 1) / 2;
    if (hi > half)
        hi = half;
    if (lo > hi)
        lo = hi;
    *jlo = lo;
    *jhi = hi;
}

static void split_row_generic(const float *xr, size_t w, size_t pw, size_t half, float pad, float *d)
{
    for (size_t q = 0; q < 2; q++, d += half) {
        size_t lo, hi;
        split_span(w, pw, half, q, &lo, &hi);
        fill_value(d, lo, pad);
        for (size_t j = lo; j < hi; j++)
            d[j] = xr[2 * j + q - pw];
        fill_value(d + hi, half - hi, pad);
    }
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

__attribute__((target("avx512f"))) static void split_row_avx512(const float *xr, size_t w, size_t pw, size_t half,
                                                                float pad, float *d)
{
    const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    for (size_t q = 0; q < 2; q++, d += half) {
        size_t lo, hi, j;
        split_span(w, pw, half, q, &lo, &hi);
        fill_value(d, lo, pad);
        /* 16 columns from 32 inputs, while all 32 are inside x */
        for (j = lo; j + 16 <= hi && 2 * (j + 16) + q - pw <= w; j += 16) {
            const float *src = xr + 2 * j + q - pw;
            _mm512_storeu_ps(d + j, _mm512_permutex2var_ps(_mm512_loadu_ps(src), even, _mm512_loadu_ps(src + 16)));
        }
        for (; j < hi; j++)
            d[j] = xr[2 * j + q - pw];
        fill_value(d + hi, half - hi, pad);
    }
}

__attribute__((target("avx2,fma"))) static void split_row_avx2(const float *xr, size_t w, size_t pw, size_t half,
                                                               float pad, float *d)
{
    for (size_t q = 0; q < 2; q++, d += half) {
        size_t lo, hi, j;
        split_span(w, pw, half, q, &lo, &hi);
        fill_value(d, lo, pad);
        for (j = lo; j + 8 <= hi && 2 * (j + 8) + q - pw <= w; j += 8) {
            const float *src = xr + 2 * j + q - pw;
            __m256 e = _mm256_shuffle_ps(_mm256_loadu_ps(src), _mm256_loadu_ps(src + 8), _MM_SHUFFLE(2, 0, 2, 0));
            e = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(e), _MM_SHUFFLE(3, 1, 2, 0)));
            _mm256_storeu_ps(d + j, e);
        }
        for (; j < hi; j++)
            d[j] = xr[2 * j + q - pw];
        fill_value(d + hi, half - hi, pad);
    }
}
#endif

typedef void (*split_row_fn)(const float *xr, size_t w, size_t pw, size_t half, float pad, float *d);

static split_row_fn split_row_select(void)
{
    static split_row_fn fn;
    split_row_fn f = __atomic_load_n(&fn, __ATOMIC_RELAXED);
    if (!f) {
        f = RT_ISA_PICK(GIR_GEMM_AUTO, split_row_generic, split_row_avx2, split_row_avx512);
        __atomic_store_n(&fn, f, __ATOMIC_RELAXED);
    }
    return f;
}

void rt_dwpad_fill(const rt_dwpad *a, const float *x, float *p, float pad)
{
    split_row_fn split = a->split ? split_row_select() : NULL;
    for (size_t r = 0; r < a->prows; r++) {
        float *pr = p + r * a->pstride;
        size_t ir = r - a->ph; /* wraps when r < ph: then >= h */
        if (r < a->ph || ir >= a->h) {
            fill_value(pr, a->pstride, pad);
            continue;
        }
        const float *xr = x + ir * a->w;
        if (split) {
            split(xr, a->w, a->pw, a->pstride / 2, pad, pr);
            continue;
        }
        size_t left = a->pw < a->pstride ? a->pw : a->pstride;
        fill_value(pr, left, pad);
        size_t n = a->w;
        if (left + n > a->pstride)
            n = a->pstride - left;
        memcpy(pr + left, xr, n * sizeof(float));
        fill_value(pr + left + n, a->pstride - left - n, pad);
    }
    fill_value(p + a->prows * a->pstride, a->sh * a->pstride + 64, pad);
}

#if defined(__x86_64__) && defined(__GNUC__)

__attribute__((target("avx512f"))) static inline __mmask16 range16(ptrdiff_t lo, ptrdiff_t hi)
{
    lo = lo < 0 ? 0 : lo;
    hi = hi > 16 ? 16 : hi;
    return hi <= lo ? 0 : (__mmask16)(((1u << hi) - 1u) & ~((1u << lo) - 1u));
}
#define VF __m512
#define VL 16
#define VMASK __mmask16
#define VMASK_N(n) ((__mmask16)((1u << (n)) - 1u))
#define VLOAD(p) _mm512_loadu_ps(p)
#define VMLOAD(m, p) _mm512_maskz_loadu_ps(m, p)
#define VMSTORE(p, m, v) _mm512_mask_storeu_ps(p, m, v)
#define VSET1(x) _mm512_set1_ps(x)
#define VFMA(a, b, c) _mm512_fmadd_ps(a, b, c)
#define VADD(a, b) _mm512_add_ps(a, b)
/* max/min give the second operand on NaN: NaN stays */
#define VCLAMP(v, lo, hi) _mm512_min_ps(_mm512_set1_ps(hi), _mm512_max_ps(_mm512_set1_ps(lo), v))
#define DWR_NAME dw_rows_avx512
#define DWD_NAME dw_direct_avx512
#define VMASK_RANGE(lo, hi) range16(lo, hi)
#define DWR_ATTR __attribute__((target("avx512f")))
#include "k_dw_rows.h"

__attribute__((target("avx2,fma"))) static inline __m256i mask8(size_t n)
{
    return _mm256_cmpgt_epi32(_mm256_set1_epi32((int)n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
__attribute__((target("avx2,fma"))) static inline __m256i range8(ptrdiff_t lo, ptrdiff_t hi)
{
    lo = lo < 0 ? 0 : lo > 8 ? 8 : lo;
    hi = hi < 0 ? 0 : hi > 8 ? 8 : hi;
    const __m256i iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    return _mm256_andnot_si256(_mm256_cmpgt_epi32(_mm256_set1_epi32((int)lo), iota),
                               _mm256_cmpgt_epi32(_mm256_set1_epi32((int)hi), iota));
}
#define VF __m256
#define VL 8
#define VMASK __m256i
#define VMASK_N(n) mask8(n)
#define VLOAD(p) _mm256_loadu_ps(p)
#define VMLOAD(m, p) _mm256_maskload_ps(p, m)
#define VMSTORE(p, m, v) _mm256_maskstore_ps(p, m, v)
#define VSET1(x) _mm256_set1_ps(x)
#define VFMA(a, b, c) _mm256_fmadd_ps(a, b, c)
#define VADD(a, b) _mm256_add_ps(a, b)
#define VCLAMP(v, lo, hi) _mm256_min_ps(_mm256_set1_ps(hi), _mm256_max_ps(_mm256_set1_ps(lo), v))
#define DWR_NAME dw_rows_avx2
#define DWD_NAME dw_direct_avx2
#define VMASK_RANGE(lo, hi) range8(lo, hi)
#define DWR_ATTR __attribute__((target("avx2,fma")))
#include "k_dw_rows.h"

/* One entry per ISA: the square 3, 5, 7 windows at equal strides 1 or 2
 * get copies with those constants, the rest the general loops. */
#define DW_ENTRY(ISA, ATTR)                                                                                     \
    ATTR static void dw_##ISA(const rt_dwpad *a, const float *p, const float *w, float bias, float *y)           \
    {                                                                                                          \
        size_t k = a->kh, s = a->sh;                                                                           \
        if (k == a->kw && s == a->sw && (k == 3 || k == 5 || k == 7) && (s == 1 || s == 2)) {                  \
            switch (k * 10 + s) {                                                                              \
            case 31: dw_rows_##ISA(a, p, w, bias, y, 3, 3, 1, 1); return;                                      \
            case 32: dw_rows_##ISA(a, p, w, bias, y, 3, 3, 2, 2); return;                                      \
            case 51: dw_rows_##ISA(a, p, w, bias, y, 5, 5, 1, 1); return;                                      \
            case 52: dw_rows_##ISA(a, p, w, bias, y, 5, 5, 2, 2); return;                                      \
            case 71: dw_rows_##ISA(a, p, w, bias, y, 7, 7, 1, 1); return;                                      \
            default: dw_rows_##ISA(a, p, w, bias, y, 7, 7, 2, 2); return;                                      \
            }                                                                                                  \
        }                                                                                                      \
        dw_rows_##ISA(a, p, w, bias, y, a->kh, a->kw, a->sh, a->sw);                                           \
    }
DW_ENTRY(avx512, __attribute__((target("avx512f"))))
DW_ENTRY(avx2, __attribute__((target("avx2,fma"))))

#define DWD_ENTRY(ISA, ATTR)                                                                                    \
    ATTR static void dwd_##ISA(const rt_dwpad *a, const float *x, const float *w, float bias, float *y)          \
    {                                                                                                          \
        if (a->kh == 3)                                                                                        \
            dw_direct_##ISA(a, x, w, bias, y, 3, 3);                                                           \
        else                                                                                                   \
            dw_direct_##ISA(a, x, w, bias, y, 5, 5);                                                           \
    }
DWD_ENTRY(avx512, __attribute__((target("avx512f"))))
DWD_ENTRY(avx2, __attribute__((target("avx2,fma"))))

/* Max pooling, separably, from the plane itself: per output row, the
 * column maxima over the window's rows inside the plane go into row t
 * (-inf in the padding around them: pstride floats), then the output is the
 * maximum over each window's columns of t.  A NaN anywhere in a window gives
 * NaN, as the scalar path does: max_ps drops a NaN operand, so NaNs are
 * found by comparison and put back.  (AVX2 only: AVX-512 machines pool by
 * channel blocks, conv_dwc.h.) */
__attribute__((target("avx2,fma"))) static inline __m256 mp_pick(const float *p, size_t sw)
{
    if (sw == 1)
        return _mm256_loadu_ps(p);
    /* the even floats of p[0..16) */
    __m256 ev = _mm256_shuffle_ps(_mm256_loadu_ps(p), _mm256_loadu_ps(p + 8), _MM_SHUFFLE(2, 0, 2, 0));
    return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(ev), _MM_SHUFFLE(3, 1, 2, 0)));
}

__attribute__((target("avx2,fma"))) static void maxpool_avx2(const rt_dwpad *a, const float *x, float *t, float *y)
{
    const __m256 qnan = _mm256_set1_ps(NAN), ninf = _mm256_set1_ps(-INFINITY);
    const __m256i iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
#define MP_MASK_N(n) _mm256_cmpgt_epi32(_mm256_set1_epi32((int)(n)), iota)
#define MP_NAN(v) _mm256_castps_si256(_mm256_cmp_ps(v, v, _CMP_UNORD_Q))
    const size_t OH = a->oh, OW = a->ow, KH = a->kh, KW = a->kw, sh = a->sh, sw = a->sw, ps = a->pstride;
    /* W: the columns copied into t (those that fit in it); rows are a->w apart */
    const size_t H = a->h, ph = a->ph, pw = a->pw, W = pw >= ps ? 0 : a->w < ps - pw ? a->w : ps - pw;
    for (size_t oh = 0; oh < OH; oh++) {
        size_t r0 = oh * sh, k0 = r0 < ph ? ph - r0 : 0, k1 = KH;
        if (r0 + KH > ph + H)
            k1 = ph + H > r0 ? ph + H - r0 : 0;
        for (size_t j = 0; j < ps; j++)
            t[j] = -INFINITY;
        for (size_t i = 0; i < W && k0 < k1; i += 8) {
            __m256i m = MP_MASK_N(W - i < 8 ? W - i : 8), nan = _mm256_setzero_si256();
            __m256 acc = ninf;
            for (size_t kh = k0; kh < k1; kh++) {
                __m256 v = _mm256_maskload_ps(x + (r0 + kh - ph) * a->w + i, m);
                nan = _mm256_or_si256(nan, MP_NAN(v));
                acc = _mm256_max_ps(acc, v);
            }
            _mm256_maskstore_ps(t + pw + i, m, _mm256_blendv_ps(acc, qnan, _mm256_castsi256_ps(nan)));
        }
        float *yr = y + oh * OW;
        for (size_t ow = 0; ow < OW; ow += 8) {
            __m256i nan = _mm256_setzero_si256();
            __m256 acc = ninf;
            for (size_t kw = 0; kw < KW; kw++) {
                __m256 v = mp_pick(t + ow * sw + kw, sw);
                nan = _mm256_or_si256(nan, MP_NAN(v));
                acc = _mm256_max_ps(acc, v);
            }
            _mm256_maskstore_ps(yr + ow, MP_MASK_N(OW - ow < 8 ? OW - ow : 8),
                                _mm256_blendv_ps(acc, qnan, _mm256_castsi256_ps(nan)));
        }
    }
#undef MP_MASK_N
#undef MP_NAN
}
#endif

/* AVX-512 machines pool 2-D planes by channel blocks (k_pool.c,
 * conv_dwc.h); the AVX2 kernel serves them only where those tiles do not
 * fit. */
rt_maxpool_fn rt_maxpool_select(int isa)
{
    return RT_ISA_PICK(isa, NULL, maxpool_avx2, maxpool_avx2);
}

rt_dwpad_fn rt_dwdirect_select(int isa, const rt_dwpad *a)
{
    /* 7x7 is faster on the padded copy (its weights do not fit in registers
     * next to the masks) */
    if (a->kh != a->kw || (a->kh != 3 && a->kh != 5) || a->sh != 1 || a->sw != 1)
        return NULL;
    return RT_ISA_PICK(isa, NULL, dwd_avx2, dwd_avx512);
}

rt_dwpad_fn rt_dwpad_select(int isa)
{
    return RT_ISA_PICK(isa, NULL, dw_avx2, dw_avx512);
}
