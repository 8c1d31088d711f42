/* Legalization patterns for matrix products: MatMul of any rank as
 * Reshape+Gemm+Reshape, Gemm's transA/alpha/beta in plain forms. */
#include "patterns.h"

/* Gemm(A, B, C) with alpha, beta or transA as a Gemm with alpha = beta = 1
 * and transA = 0: Transpose(A), Mul(C, beta) and Mul(product, alpha) (then
 * Add C) around it. */
static gir_status gemm_plain(gir_rw *rw, const gir_node *n, gir_error *err)
{
    double alpha = gir_node_float(n, "alpha", 1.0), beta = gir_node_float(n, "beta", 1.0);
    int64_t ta = gir_node_int(n, "transA", 0), tb = gir_node_int(n, "transB", 0);
    const gir_value *a = gir_pat_in(rw, n, 0), *c = gir_pat_in(rw, n, 2);
    if (alpha == 1.0 && (beta == 1.0 || !c) && !ta)
        return gir_pat_skip(err, "Gemm with alpha, beta and transA already plain");
    TRY(gir_pat_float_dtype(a, err));
    gir_dtype dt = a->dtype;
    int32_t A = n->in[0], C = c ? n->in[2] : -1, y;
    if (ta) {
        gir_node *t;
        TRY(gir_rw_unary(rw, GIR_OP_Transpose, A, &t, &A, err));
        TRY(gir_attrs_set_ints(rw->g, &t->attrs, "perm", (const int64_t[]){ 1, 0 }, 2, err));
    }
    if (C >= 0 && beta != 1.0) {
        int32_t k;
        TRY(gir_rw_scalar(rw, dt, beta, &k, err));
        TRY(gir_rw_binary(rw, GIR_OP_Mul, C, k, NULL, &C, err));
    }
    gir_node *g2;
    bool late_c = alpha != 1.0 && C >= 0; /* C is added after the product is scaled */
    TRY(gir_rw_node(rw, GIR_OP_Gemm, (int32_t[]){ A, n->in[1], late_c ? -1 : C }, late_c || C < 0 ? 2 : 3, 1, &g2,
                    err));
    TRY(gir_attrs_set_int(rw->g, &g2->attrs, "transB", tb, err));
    y = g2->out[0];
    if (alpha != 1.0) {
        int32_t k;
        TRY(gir_rw_scalar(rw, dt, alpha, &k, err));
        TRY(gir_rw_binary(rw, GIR_OP_Mul, y, k, NULL, &y, err));
    }
    if (late_c)
        TRY(gir_rw_binary(rw, GIR_OP_Add, y, C, NULL, &y, err));
    return gir_rw_done(rw, &y, err);
}

GIR_PATTERN(gemm_plain, "gemm-plain", GIR_OP_Gemm, "Gemm with alpha, beta or transA as Gemm with Transpose and Mul", gemm_plain);

/* Gemm with transB = 0 as Gemm with transB = 1 reading Transpose(B) (a
 * constant B folds when the target has no Transpose). */
static gir_status gemm_transb(gir_rw *rw, const gir_node *n, gir_error *err)
{
    if (gir_node_int(n, "transB", 0))
        return gir_pat_skip(err, "Gemm with transB=1 already");
    int32_t bt;
    gir_node *t, *g2;
    TRY(gir_rw_unary(rw, GIR_OP_Transpose, n->in[1], &t, &bt, err));
    TRY(gir_attrs_set_ints(rw->g, &t->attrs, "perm", (const int64_t[]){ 1, 0 }, 2, err));
    TRY(gir_rw_copy(rw, n, (int32_t[]){ n->in[0], bt, n->n_in > 2 ? n->in[2] : -1 }, n->n_in, 1, &g2, err));
    TRY(gir_attrs_set_int(rw->g, &g2->attrs, "transB", 1, err));
    return gir_rw_done(rw, &g2->out[0], err);
}

GIR_PATTERN(gemm_transb, "gemm-transb", GIR_OP_Gemm, "Gemm with transB=0 as Gemm of Transpose(B) with transB=1", gemm_transb);

/* MatMul(A, B) with B 2-D and A of rank >= 2: Gemm on A flattened to rows
 * (Reshape to [-1, K]), reshaped back to A's leading dimensions. */
static gir_status matmul_gemm(gir_rw *rw, const gir_node *n, gir_error *err)
{
    const gir_value *a = gir_pat_in(rw, n, 0), *b = gir_pat_in(rw, n, 1);
    TRY(gir_pat_float_dtype(a, err));
    if (b->shape.rank != 2 || a->shape.rank < 2)
        return gir_pat_skip(err, "MatMul of ranks %d and %d (Gemm needs B 2-D)", a->shape.rank, b->shape.rank);
    int64_t k = b->shape.dims[0], nn = b->shape.dims[1];
    if (k < 0 || nn < 0)
        return gir_pat_skip(err, "MatMul with B of unknown shape");
    int unknown = 0;
    for (int i = 0; i < a->shape.rank - 1; i++)
        unknown += a->shape.dims[i] < 0;
    if (unknown > 1)
        return gir_pat_skip(err, "MatMul with more than one unknown leading dimension");
    int32_t x = n->in[0], y;
    if (a->shape.rank > 2)
        TRY(gir_rw_reshape(rw, x, (const int64_t[]){ -1, k }, 2, &x, err));
    TRY(gir_rw_binary(rw, GIR_OP_Gemm, x, n->in[1], NULL, &y, err));
    if (a->shape.rank > 2) {
        int64_t shape[GIR_MAX_RANK];
        for (int i = 0; i < a->shape.rank - 1; i++)
            shape[i] = a->shape.dims[i] < 0 ? -1 : a->shape.dims[i];
        shape[a->shape.rank - 1] = nn;
        TRY(gir_rw_reshape(rw, y, shape, (size_t)a->shape.rank, &y, err));
    }
    return gir_rw_done(rw, &y, err);
}

GIR_PATTERN(matmul_gemm, "matmul-as-gemm", GIR_OP_MatMul, "MatMul as Reshape+Gemm+Reshape", matmul_gemm);
