/* Private to gemm.c and its ISA-specific kernels. */
#ifndef GIR_RUNTIME_GEMM_IMPL_H
#define GIR_RUNTIME_GEMM_IMPL_H

#include "gemm.h"

/* What a micro-kernel does with its tile when it stores it. */
typedef struct gemm_ep {
    float alpha;
    float beta;           /* 0: C not read; 1: C added; else beta*C added */
    const float *bias_m;  /* at the tile's first row, or NULL */
    const float *bias_n;  /* at the tile's first column, or NULL */
    bool clamp;
    float lo, hi;
    size_t cw, ck; /* gir_gemm_args.c_wide, c_keep (0: plain columns) */
    size_t q0;     /* with cw: the tile's first column of C; c is its row's start */
} gemm_ep;

/* Multiplies a packed MR x kc panel of A (k-major: a[k*MR + r]) by a packed
 * kc x NR panel of B (b[k*NR + c]) and stores the top-left m x n corner of
 * the MR x NR result into c (row stride ldc) as ep says. */
typedef void (*gemm_kernel_fn)(size_t kc, const float *a, const float *b, float *c, size_t ldc, size_t m,
                               size_t n, const gemm_ep *ep);

/* The same with A read in place: row r of the panel is a + r*lda (k
 * contiguous), only rows r < m are read.  Saves packing an A that is used
 * once per panel of B (activations times weights in MatMul). */
typedef void (*gemm_kernel_ua_fn)(size_t kc, const float *a, size_t lda, const float *b, float *c, size_t ldc,
                                  size_t m, size_t n, const gemm_ep *ep);

/* The same with B read in place: row k of the panel is b + k*ldb, or
 * b + rows[k] when rows is given; only its first n columns are read (A
 * packed). */
typedef void (*gemm_kernel_ub_fn)(size_t kc, const float *a, const float *b, size_t ldb, const ptrdiff_t *rows,
                                  float *c, size_t ldc, size_t m, size_t n, const gemm_ep *ep);

/* acc[0..MR) += the packed MR x kc panel of A times x (x[k * incx]): a
 * product with one column (squeeze-excitation's 1x1 convolutions on a
 * pooled vector), where a tile of NR columns would waste all but one. */
typedef void (*gemm_gemv_fn)(size_t kc, const float *a, const float *x, size_t incx, float *acc);

typedef struct gemm_impl {
    gir_gemm_isa isa;
    size_t mr, nr;      /* register tile */
    size_t mc, kc, nc;  /* cache blocks: mc % mr == 0, nc % nr == 0 */
    gemm_kernel_fn kernel;
    gemm_kernel_ua_fn kernel_ua; /* optional */
    gemm_kernel_ub_fn kernel_ub; /* optional */
    gemm_gemv_fn gemv;           /* optional */
} gemm_impl;

#if defined(__x86_64__) && defined(__GNUC__)
#define GIR_GEMM_X86 1
extern const gemm_impl gir_gemm_impl_avx2;
extern const gemm_impl gir_gemm_impl_avx512;
#endif

/* Applies ep to one scalar result (shared by the kernels' edge paths). */
static inline float gemm_ep_apply(const gemm_ep *ep, float acc, float c, size_t i, size_t j)
{
    float v = ep->alpha * acc;
    if (ep->beta == 1.0f)
        v += c;
    else if (ep->beta != 0.0f)
        v += ep->beta * c;
    if (ep->bias_m)
        v += ep->bias_m[i];
    if (ep->bias_n)
        v += ep->bias_n[j];
    if (ep->clamp)
        v = v < ep->lo ? ep->lo : (v > ep->hi ? ep->hi : v);
    return v;
}

#endif
