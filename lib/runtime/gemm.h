/* The runtime's single-precision matrix multiplication: every Conv, Gemm,
 * MatMul and ConvTranspose goes through gir_sgemm, so speed work happens
 * here and never in op code.
 *
 *   C = clamp(alpha * op(A) * op(B) + beta * C + bias_m[i] + bias_n[j])
 *
 * op(A) is m x k, op(B) is k x n, C is m x n; all row-major with leading
 * dimensions (elements between rows).  op(X) is X or X transposed.
 *
 * Implementation: cache blocking with packed panels of A and B and a
 * register-blocked micro-kernel; the kernel is chosen at run time from what
 * the CPU supports (AVX-512F, AVX2+FMA, or portable C with GCC vector
 * extensions).  Work is split over the pool's workers by rows or columns
 * of C; the summation order of every element is the same whatever the
 * thread count, so results are bit-identical for 1 or N threads. */
#ifndef GIR_RUNTIME_GEMM_H
#define GIR_RUNTIME_GEMM_H

#include <stdbool.h>
#include <stddef.h>

#include "graphir/status.h"
#include "threads.h"

typedef enum gir_gemm_isa {
    GIR_GEMM_AUTO = 0, /* the best the CPU supports */
    GIR_GEMM_GENERIC,  /* portable C (GCC vector extensions) */
    GIR_GEMM_AVX2,     /* x86-64 AVX2 + FMA */
    GIR_GEMM_AVX512,   /* x86-64 AVX-512F */
    GIR_GEMM_ISA_COUNT_
} gir_gemm_isa;

const char *gir_gemm_isa_name(gir_gemm_isa isa);
/* Whether this build and this CPU can run the kernel (AUTO: always). */
bool gir_gemm_isa_supported(gir_gemm_isa isa);
/* The kernel AUTO resolves to. */
gir_gemm_isa gir_gemm_isa_best(void);
/* isa (a gir_gemm_isa) when this build and CPU run it, else the best they
 * run (AUTO: the best). */
gir_gemm_isa gir_gemm_isa_resolve(int isa);

/* A matrix A packed ahead of time for one kernel (weights of Conv/Gemm):
 * saves packing it on every call.  Owned by the caller. */
typedef struct gir_gemm_packed {
    gir_gemm_isa isa; /* resolved, never AUTO */
    size_t m, k;
    float *data;
} gir_gemm_packed;

/* Packs op(A) (m x k) for kernel isa (AUTO: the best). */
gir_status gir_gemm_pack_a(gir_gemm_isa isa, bool trans_a, size_t m, size_t k, const float *a, size_t lda,
                           gir_gemm_packed *out, gir_error *err);
void gir_gemm_packed_free(gir_gemm_packed *p);

/* How a B operand is laid out when the caller packs it itself (im2col
 * straight into panels): for each block of kc rows starting at row pc, the
 * panels of nr columns follow one another, each k-major:
 *   element (k, j) is at pc * npad + (j / nr) * nr * kcb + (k - pc) * nr + j % nr
 * with pc = k / kc * kc, kcb = min(kc, K - pc), npad = n rounded up to nr.
 * Columns past n within the last panel must be zero. */
typedef struct gir_gemm_blayout {
    gir_gemm_isa isa; /* resolved */
    size_t nr, kc;
} gir_gemm_blayout;

gir_gemm_blayout gir_gemm_b_layout(gir_gemm_isa isa);
/* Floats of a packed B of k x n (overflow-checked: 0 when too large). */
size_t gir_gemm_packed_b_floats(const gir_gemm_blayout *l, size_t k, size_t n);

/* Packs op(B) (k x n) whole in layout l into dst (gir_gemm_packed_b_floats
 * floats): weights packed once for gir_gemm_args.packed_b. */
void gir_gemm_pack_b(const gir_gemm_blayout *l, bool trans_b, size_t k, size_t n, const float *b, size_t ldb,
                     float *dst);

typedef struct gir_gemm_args {
    size_t m, n, k;
    float alpha, beta;          /* beta == 0: C is not read (may hold NaN) */
    const float *a;             /* ignored when packed_a is given */
    size_t lda;
    bool trans_a;
    const gir_gemm_packed *packed_a; /* optional; must be m x k */
    const float *b;
    size_t ldb;
    bool trans_b;
    /* optional: op(B) already packed with gir_gemm_b_layout() of the kernel
     * in use (packed_a's, else isa's); b, ldb, trans_b are then ignored */
    const float *packed_b;
    /* optional, with packed_a and not trans_b, where gir_gemm_b_rows_ok():
     * row k of op(B) starts at b + b_rows[k] (ldb unused): a convolution
     * reads its input planes in place instead of through im2col */
    const ptrdiff_t *b_rows;
    float *c;
    size_t ldc;
    /* optional, with b_rows (and k > 0, no bias_n): C's columns are rows of
     * c_wide of which the first c_keep are stored: column j goes to
     * (j / c_wide) * c_keep + j % c_wide of its row of c, or nowhere when
     * j % c_wide >= c_keep (a direct convolution's padding columns, which
     * then need no buffer of their own and no copy) */
    size_t c_wide, c_keep;
    const float *bias_m;        /* optional, length m: added to row i */
    const float *bias_n;        /* optional, length n: added to column j */
    bool clamp;                 /* clamp every result to [lo, hi] */
    float lo, hi;
    gir_gemm_isa isa;           /* AUTO, or a supported kernel (tests, bench) */
} gir_gemm_args;

/* Computes the product described by g with the pool's workers (and their
 * scratch areas): never allocates, never fails.  With k == 0 the product
 * is zero and the rest of the formula still applies. */
void gir_sgemm(const gir_gemm_args *g, gir_threads *th);
/* The same on the calling thread alone, with workspace (of
 * gir_gemm_workspace_floats() floats, 64-byte aligned): for a caller that
 * splits independent products among the workers itself (one barrier for
 * all of them instead of one each). */
void gir_sgemm_serial(const gir_gemm_args *g, float *workspace);

/* Whether kernel isa (AUTO: the best) takes gir_gemm_args.b_rows. */
bool gir_gemm_b_rows_ok(gir_gemm_isa isa);

/* Floats of scratch each worker needs (the pool allocates it). */
size_t gir_gemm_workspace_floats(void);

#endif
