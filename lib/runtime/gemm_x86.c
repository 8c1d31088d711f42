/* x86-64 GEMM micro-kernels: AVX2+FMA (6 x 16) and AVX-512F (8 x 32).
 * Compiled for the baseline ISA; each kernel is a target-attributed
 * function that gemm.c calls only after checking the CPU at run time. */
#include "gemm_impl.h"
#include "simd512.h"

#ifdef GIR_GEMM_X86

#include <immintrin.h>
#include <stdint.h>

/* ---- AVX-512F ------------------------------------------------------------ */

#define A512_MR 8
#define A512_NR 32
#define TGT512 __attribute__((target("avx512f")))

TGT512 static inline __m512 ep512(__m512 v, float *c, __mmask16 mk, const gemm_ep *ep, __m512 vbeta, __m512 bn,
                                  size_t r)
{
    if (ep->alpha != 1.0f)
        v = _mm512_mul_ps(v, _mm512_set1_ps(ep->alpha));
    if (ep->beta == 1.0f)
        v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(mk, c));
    else if (ep->beta != 0.0f)
        v = _mm512_fmadd_ps(vbeta, _mm512_maskz_loadu_ps(mk, c), v);
    if (ep->bias_m)
        v = _mm512_add_ps(v, _mm512_set1_ps(ep->bias_m[r]));
    if (ep->bias_n)
        v = _mm512_add_ps(v, bn);
    if (ep->clamp) /* max/min return the second operand on NaN: NaN stays */
        v = _mm512_min_ps(_mm512_set1_ps(ep->hi), _mm512_max_ps(_mm512_set1_ps(ep->lo), v));
    return v;
}

/* store512 with ep->cw: the tile's columns q0 + l (lanes l < n) in runs
 * that stay within one row of cw; each run's first ck - col columns are
 * stored, at their place in that row of ck.  A run is one masked store per
 * half, from a pointer moved back by the run's first lane (masked lanes are
 * not touched). */
TGT512 static void store512_rows(__m512 acc[A512_MR][2], float *c, size_t ldc, size_t m, size_t n,
                                 const gemm_ep *ep)
{
    __m512 vbeta = _mm512_set1_ps(ep->beta), none = _mm512_setzero_ps();
    for (size_t lane = 0, q = ep->q0; lane < n;) {
        size_t row = q / ep->cw, col = q % ep->cw, len = ep->cw - col;
        if (len > n - lane)
            len = n - lane;
        if (col < ep->ck) {
            size_t keep = ep->ck - col < len ? ep->ck - col : len;
            uint64_t bits = ((((uint64_t)1) << keep) - 1) << lane;
            __mmask16 m0 = (__mmask16)bits, m1 = (__mmask16)(bits >> 16);
            ptrdiff_t at = (ptrdiff_t)(row * ep->ck + col) - (ptrdiff_t)lane;
            for (size_t r = 0; r < m; r++) {
                float *cr = c + r * ldc + at;
                if (m0)
                    _mm512_mask_storeu_ps(cr, m0, ep512(acc[r][0], cr, m0, ep, vbeta, none, r));
                if (m1)
                    _mm512_mask_storeu_ps(cr + 16, m1, ep512(acc[r][1], cr + 16, m1, ep, vbeta, none, r));
            }
        }
        lane += len;
        q += len;
    }
}

/* Stores the top-left m x n corner of an 8 x 32 tile as ep says (every
 * AVX-512 kernel entry ends here). */
TGT512 static inline void store512(__m512 acc[A512_MR][2], float *c, size_t ldc, size_t m, size_t n,
                                   const gemm_ep *ep)
{
    if (ep->cw) {
        store512_rows(acc, c, ldc, m, n, ep);
        return;
    }
    __mmask16 m0 = rt_mask16(n), m1 = n > 16 ? rt_mask16(n - 16) : 0;
    __m512 vbeta = _mm512_set1_ps(ep->beta);
    __m512 bn0 = _mm512_setzero_ps(), bn1 = _mm512_setzero_ps();
    if (ep->bias_n) {
        bn0 = _mm512_maskz_loadu_ps(m0, ep->bias_n);
        if (m1)
            bn1 = _mm512_maskz_loadu_ps(m1, ep->bias_n + 16);
    }
    for (size_t r = 0; r < m; r++) {
        float *cr = c + r * ldc;
        _mm512_mask_storeu_ps(cr, m0, ep512(acc[r][0], cr, m0, ep, vbeta, bn0, r));
        if (m1)
            _mm512_mask_storeu_ps(cr + 16, m1, ep512(acc[r][1], cr + 16, m1, ep, vbeta, bn1, r));
    }
}

/* Fetches the packed A panel after this one (the next 8 rows, same k), a
 * line every other k, so that it arrives while this one is summed: in a
 * model the weights come from memory, not from cache (ResNet-50, RegNetX
 * and GoogLeNet 4-5% faster).  The address is formed as an integer: the
 * last panel's successor lies past the array, and a prefetch never
 * faults. */
#define A512_PREFETCH_NEXT(a, kc, k)                                                                       \
    do {                                                                                                  \
        if (((k) & 1) == 0)                                                                               \
            _mm_prefetch((const char *)((uintptr_t)(a) + (kc) * A512_MR * sizeof(float)), _MM_HINT_T0); \
    } while (0)

/* Fetches the tile of C that the store will add to (a fused residual,
 * beta != 0) while the sums run: its rows are a plane apart, too many
 * streams for the hardware to follow, and in a model they come from
 * memory (ResNet-50 and ResNeXt-50 2.7-2.9% faster, one thread, in one
 * process alternating with and without). */
TGT512 static inline void c_prefetch(const float *c, size_t ldc, size_t m, size_t n, const gemm_ep *ep)
{
    if (ep->beta == 0.0f || ep->cw)
        return;
    for (size_t r = 0; r < m; r++) {
        _mm_prefetch((const char *)(c + r * ldc), _MM_HINT_T0);
        if (n > 16)
            _mm_prefetch((const char *)(c + r * ldc + 16), _MM_HINT_T0);
    }
}

TGT512 static void kernel_avx512(size_t kc, const float *a, const float *b, float *c, size_t ldc, size_t m,
                                 size_t n, const gemm_ep *ep)
{
    __m512 acc[A512_MR][2];
#pragma GCC unroll 8
    for (int r = 0; r < A512_MR; r++)
        acc[r][0] = acc[r][1] = _mm512_setzero_ps();
    c_prefetch(c, ldc, m, n, ep);
    for (size_t k = 0; k < kc; k++) {
        __m512 b0 = _mm512_loadu_ps(b), b1 = _mm512_loadu_ps(b + 16); /* packed_b may come from the caller */
        A512_PREFETCH_NEXT(a, kc, k);
#pragma GCC unroll 8
        for (int r = 0; r < A512_MR; r++) {
            __m512 ar = _mm512_set1_ps(a[r]);
            acc[r][0] = _mm512_fmadd_ps(ar, b0, acc[r][0]);
            acc[r][1] = _mm512_fmadd_ps(ar, b1, acc[r][1]);
        }
        a += A512_MR;
        b += A512_NR;
    }
    store512(acc, c, ldc, m, n, ep);
}

/* The same product and summation order, A read in place (rows past m
 * read row 0 and are not stored). */
TGT512 static void kernel_avx512_ua(size_t kc, const float *a, size_t lda, const float *b, float *c, size_t ldc,
                                    size_t m, size_t n, const gemm_ep *ep)
{
    const float *r0 = a, *r1 = m > 1 ? a + lda : a, *r2 = m > 2 ? a + 2 * lda : a, *r3 = m > 3 ? a + 3 * lda : a,
                *r4 = m > 4 ? a + 4 * lda : a, *r5 = m > 5 ? a + 5 * lda : a, *r6 = m > 6 ? a + 6 * lda : a,
                *r7 = m > 7 ? a + 7 * lda : a;
    __m512 c00 = _mm512_setzero_ps(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00, c30 = c00, c31 = c00,
           c40 = c00, c41 = c00, c50 = c00, c51 = c00, c60 = c00, c61 = c00, c70 = c00, c71 = c00;
    for (size_t k = 0; k < kc; k++) {
        __m512 b0 = _mm512_loadu_ps(b), b1 = _mm512_loadu_ps(b + 16), ar;
#define A512_ROW(p, x0, x1)                   \
        ar = _mm512_set1_ps(p[k]);            \
        x0 = _mm512_fmadd_ps(ar, b0, x0);     \
        x1 = _mm512_fmadd_ps(ar, b1, x1);
        A512_ROW(r0, c00, c01)
        A512_ROW(r1, c10, c11)
        A512_ROW(r2, c20, c21)
        A512_ROW(r3, c30, c31)
        A512_ROW(r4, c40, c41)
        A512_ROW(r5, c50, c51)
        A512_ROW(r6, c60, c61)
        A512_ROW(r7, c70, c71)
#undef A512_ROW
        b += A512_NR;
    }
    __m512 acc[A512_MR][2] = { { c00, c01 }, { c10, c11 }, { c20, c21 }, { c30, c31 },
                               { c40, c41 }, { c50, c51 }, { c60, c61 }, { c70, c71 } };
    store512(acc, c, ldc, m, n, ep);
}

/* The same with B read in place (columns past n masked off, never read). */
TGT512 static void kernel_avx512_ub(size_t kc, const float *a, const float *b, size_t ldb, const ptrdiff_t *rows,
                                    float *c, size_t ldc, size_t m, size_t n, const gemm_ep *ep)
{
    __m512 c00 = _mm512_setzero_ps(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00, c30 = c00, c31 = c00,
           c40 = c00, c41 = c00, c50 = c00, c51 = c00, c60 = c00, c61 = c00, c70 = c00, c71 = c00;
    __mmask16 m0 = rt_mask16(n), m1 = n > 16 ? rt_mask16(n - 16) : 0;
    c_prefetch(c, ldc, m, n, ep);
    for (size_t k = 0; k < kc; k++) {
        const float *bk = rows ? b + rows[k] : b + k * ldb;
        __m512 b0 = _mm512_maskz_loadu_ps(m0, bk), b1 = _mm512_maskz_loadu_ps(m1, bk + 16), ar;
        A512_PREFETCH_NEXT(a, kc, k);
#define A512_ROW(r, x0, x1)                   \
        ar = _mm512_set1_ps(a[r]);            \
        x0 = _mm512_fmadd_ps(ar, b0, x0);     \
        x1 = _mm512_fmadd_ps(ar, b1, x1);
        A512_ROW(0, c00, c01)
        A512_ROW(1, c10, c11)
        A512_ROW(2, c20, c21)
        A512_ROW(3, c30, c31)
        A512_ROW(4, c40, c41)
        A512_ROW(5, c50, c51)
        A512_ROW(6, c60, c61)
        A512_ROW(7, c70, c71)
#undef A512_ROW
        a += A512_MR;
    }
    __m512 acc[A512_MR][2] = { { c00, c01 }, { c10, c11 }, { c20, c21 }, { c30, c31 },
                               { c40, c41 }, { c50, c51 }, { c60, c61 }, { c70, c71 } };
    store512(acc, c, ldc, m, n, ep);
}

/* One column: 8 rows per k in a 256-bit register, four k at a time in
 * separate sums. */
__attribute__((target("avx512f,fma"))) static void gemv_avx512(size_t kc, const float *a, const float *x, size_t incx, float *acc)
{
    __m256 s0 = _mm256_loadu_ps(acc), s1 = _mm256_setzero_ps(), s2 = s1, s3 = s1;
    size_t k = 0;
    for (; k + 4 <= kc; k += 4, a += 4 * A512_MR) {
        s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a), _mm256_set1_ps(x[k * incx]), s0);
        s1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + 8), _mm256_set1_ps(x[(k + 1) * incx]), s1);
        s2 = _mm256_fmadd_ps(_mm256_loadu_ps(a + 16), _mm256_set1_ps(x[(k + 2) * incx]), s2);
        s3 = _mm256_fmadd_ps(_mm256_loadu_ps(a + 24), _mm256_set1_ps(x[(k + 3) * incx]), s3);
    }
    for (; k < kc; k++, a += A512_MR)
        s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a), _mm256_set1_ps(x[k * incx]), s0);
    _mm256_storeu_ps(acc, _mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3)));
}

const gemm_impl gir_gemm_impl_avx512 = {
    GIR_GEMM_AVX512, A512_MR, A512_NR, 128, 256, 512, kernel_avx512, kernel_avx512_ua, kernel_avx512_ub, gemv_avx512,
};

/* ---- AVX2 + FMA ------------------------------------------------------------ */

#define A2_MR 6
#define A2_NR 16
#define TGT2 __attribute__((target("avx2,fma")))

TGT2 static inline __m256i mask8(size_t n)
{
    __m256i iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    return _mm256_cmpgt_epi32(_mm256_set1_epi32((int)(n > 8 ? 8 : n)), iota);
}

TGT2 static inline __m256 ep256(__m256 v, float *c, __m256i mk, const gemm_ep *ep, __m256 vbeta, __m256 bn,
                                size_t r)
{
    if (ep->alpha != 1.0f)
        v = _mm256_mul_ps(v, _mm256_set1_ps(ep->alpha));
    if (ep->beta == 1.0f)
        v = _mm256_add_ps(v, _mm256_maskload_ps(c, mk));
    else if (ep->beta != 0.0f)
        v = _mm256_fmadd_ps(vbeta, _mm256_maskload_ps(c, mk), v);
    if (ep->bias_m)
        v = _mm256_add_ps(v, _mm256_set1_ps(ep->bias_m[r]));
    if (ep->bias_n)
        v = _mm256_add_ps(v, bn);
    if (ep->clamp)
        v = _mm256_min_ps(_mm256_set1_ps(ep->hi), _mm256_max_ps(_mm256_set1_ps(ep->lo), v));
    return v;
}

TGT2 static void kernel_avx2(size_t kc, const float *a, const float *b, float *c, size_t ldc, size_t m, size_t n,
                             const gemm_ep *ep)
{
    /* named accumulators: an array indexed after the loop would be kept in
     * memory on every iteration */
    __m256 c00 = _mm256_setzero_ps(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00, c30 = c00, c31 = c00,
           c40 = c00, c41 = c00, c50 = c00, c51 = c00;
    for (size_t k = 0; k < kc; k++) {
        __m256 b0 = _mm256_loadu_ps(b), b1 = _mm256_loadu_ps(b + 8), ar;
#define A2_ROW(r, x0, x1)                        \
        ar = _mm256_broadcast_ss(a + r);         \
        x0 = _mm256_fmadd_ps(ar, b0, x0);        \
        x1 = _mm256_fmadd_ps(ar, b1, x1);
        A2_ROW(0, c00, c01)
        A2_ROW(1, c10, c11)
        A2_ROW(2, c20, c21)
        A2_ROW(3, c30, c31)
        A2_ROW(4, c40, c41)
        A2_ROW(5, c50, c51)
#undef A2_ROW
        a += A2_MR;
        b += A2_NR;
    }
    __m256 acc[A2_MR][2] = { { c00, c01 }, { c10, c11 }, { c20, c21 }, { c30, c31 }, { c40, c41 }, { c50, c51 } };
    __m256i m0 = mask8(n), m1 = mask8(n > 8 ? n - 8 : 0);
    bool has1 = n > 8;
    __m256 vbeta = _mm256_set1_ps(ep->beta);
    __m256 bn0 = _mm256_setzero_ps(), bn1 = _mm256_setzero_ps();
    if (ep->bias_n) {
        bn0 = _mm256_maskload_ps(ep->bias_n, m0);
        if (has1)
            bn1 = _mm256_maskload_ps(ep->bias_n + 8, m1);
    }
    for (size_t r = 0; r < m; r++) {
        float *cr = c + r * ldc;
        _mm256_maskstore_ps(cr, m0, ep256(acc[r][0], cr, m0, ep, vbeta, bn0, r));
        if (has1)
            _mm256_maskstore_ps(cr + 8, m1, ep256(acc[r][1], cr + 8, m1, ep, vbeta, bn1, r));
    }
}

/* One column: the 6 rows of each k in the low lanes of a masked load. */
TGT2 static void gemv_avx2(size_t kc, const float *a, const float *x, size_t incx, float *acc)
{
    const __m256i m = mask8(A2_MR);
    __m256 s0 = _mm256_maskload_ps(acc, m), s1 = _mm256_setzero_ps(), s2 = s1, s3 = s1;
    size_t k = 0;
    for (; k + 4 <= kc; k += 4, a += 4 * A2_MR) {
        s0 = _mm256_fmadd_ps(_mm256_maskload_ps(a, m), _mm256_set1_ps(x[k * incx]), s0);
        s1 = _mm256_fmadd_ps(_mm256_maskload_ps(a + A2_MR, m), _mm256_set1_ps(x[(k + 1) * incx]), s1);
        s2 = _mm256_fmadd_ps(_mm256_maskload_ps(a + 2 * A2_MR, m), _mm256_set1_ps(x[(k + 2) * incx]), s2);
        s3 = _mm256_fmadd_ps(_mm256_maskload_ps(a + 3 * A2_MR, m), _mm256_set1_ps(x[(k + 3) * incx]), s3);
    }
    for (; k < kc; k++, a += A2_MR)
        s0 = _mm256_fmadd_ps(_mm256_maskload_ps(a, m), _mm256_set1_ps(x[k * incx]), s0);
    _mm256_maskstore_ps(acc, m, _mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3)));
}

const gemm_impl gir_gemm_impl_avx2 = {
    GIR_GEMM_AVX2, A2_MR, A2_NR, 120, 256, 2048, kernel_avx2, NULL, NULL, gemv_avx2,
};

#endif
