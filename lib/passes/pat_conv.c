/* Forms of Gemm for targets whose matrix product is limited: as a 1x1
 * convolution where there is none (LightNet): rows of A are images of K
 * channels and 1x1 pixels, B's rows the M filters, C the bias; with C
 * added after the product where only a vector bias is taken. */
#include "patterns.h"

#include <stdlib.h>
#include <string.h>

/* Gemm(A[N,K], B, C?) with alpha = beta = 1 and transA = 0, B and C
 * constant: Reshape(A, [N,K,1,1]) -> Conv(W[M,K,1,1], bias[M]) ->
 * Reshape([N,M]).  W is B (transB = 1) or B transposed; C of M elements (or
 * one, repeated) is the bias.  The sums are the same dot products. */
static gir_status gemm_conv(gir_rw *rw, const gir_node *n, gir_error *err)
{
    if (gir_node_float(n, "alpha", 1.0) != 1.0 || gir_node_float(n, "beta", 1.0) != 1.0 ||
        gir_node_int(n, "transA", 0))
        return gir_pat_skip(err, "Gemm with alpha, beta or transA (made plain first)");
    const gir_value *a = gir_pat_in(rw, n, 0), *b = gir_pat_in(rw, n, 1), *c = gir_pat_in(rw, n, 2);
    TRY(gir_pat_float_dtype(a, err));
    if (a->dtype != GIR_DT_F32 || a->shape.rank != 2 || !b || b->shape.rank != 2)
        return gir_pat_skip(err, "Gemm that is not float32 A[N,K] by B 2-D");
    bool tb = gir_node_int(n, "transB", 0) != 0;
    const gir_node *bt = b->producer >= 0 ? rw->g->nodes[b->producer] : NULL;
    if (bt && bt->op == GIR_OP_Transpose && gir_in(rw->g, bt, 0) && gir_in(rw->g, bt, 0)->shape.rank == 2) {
        /* a transposed constant (nnabla's Affine weights read as Gemm's B) */
        const int64_t *perm;
        if (gir_attrs_get_ints(&bt->attrs, "perm", &perm) == 2 && perm[0] == 1 && perm[1] == 0 &&
            gir_pat_const_f32(gir_in(rw->g, bt, 0))) {
            b = gir_in(rw->g, bt, 0);
            tb = !tb;
        }
    }
    const float *bd = gir_pat_const_f32(b);
    if (!bd)
        return gir_pat_skip(err, "Gemm whose B is not a float32 constant");
    int64_t K = tb ? b->shape.dims[1] : b->shape.dims[0], M = tb ? b->shape.dims[0] : b->shape.dims[1];
    if (K < 1 || M < 1)
        return gir_pat_skip(err, "Gemm with an empty B");
    const float *cd = NULL;
    int64_t cn = 0;
    if (c) {
        cd = gir_pat_const_f32(c);
        cn = c->shape.rank >= 0 ? gir_shape_numel(&c->shape) : -1;
        bool row = c->shape.rank <= 1 || (c->shape.rank == 2 && c->shape.dims[0] == 1);
        if (!cd || !row || (cn != M && cn != 1))
            return gir_pat_skip(err, "Gemm whose C is not a constant of M or 1 elements (a bias)");
    }
    float *w = malloc((size_t)(M * K) * sizeof *w), *bias = malloc((size_t)M * sizeof *bias);
    if (!w || !bias) {
        free(w);
        free(bias);
        return gir_nomem(err);
    }
    for (int64_t m = 0; m < M; m++) {
        for (int64_t k = 0; k < K; k++)
            w[m * K + k] = tb ? bd[m * K + k] : bd[k * M + m];
        bias[m] = cd ? cd[cn == 1 ? 0 : m] : 0.0f;
    }
    int32_t W, B = -1, x, y;
    gir_shape ws = { .rank = 4, .dims = { M, K, 1, 1 } }, bs = { .rank = 1, .dims = { M } };
    gir_status st = gir_rw_const(rw, GIR_DT_F32, &ws, w, &W, err);
    if (!st && c)
        st = gir_rw_const(rw, GIR_DT_F32, &bs, bias, &B, err);
    free(w);
    free(bias);
    TRY(st);
    gir_node *conv;
    TRY(gir_rw_reshape(rw, n->in[0], (const int64_t[]){ -1, K, 1, 1 }, 4, &x, err));
    TRY(gir_rw_node(rw, GIR_OP_Conv, (int32_t[]){ x, W, B }, B >= 0 ? 3 : 2, 1, &conv, err));
    TRY(gir_attrs_set_ints(rw->g, &conv->attrs, "kernel_shape", (const int64_t[]){ 1, 1 }, 2, err));
    TRY(gir_rw_reshape(rw, conv->out[0], (const int64_t[]){ -1, M }, 2, &y, err));
    return gir_rw_done(rw, &y, err);
}

GIR_PATTERN(gemm_conv, "gemm-as-conv", GIR_OP_Gemm, "Gemm as a 1x1 Conv between Reshapes", gemm_conv);

/* Gemm(A, B, C) with alpha = beta = 1 = Add(Gemm(A, B), C): for targets
 * whose matrix product takes only a vector bias (nnabla's Affine, NNVM's
 * dense) when C is a matrix or broadcast otherwise. */
static gir_status gemm_bias_add(gir_rw *rw, const gir_node *n, gir_error *err)
{
    const gir_value *c = gir_pat_in(rw, n, 2);
    if (!c)
        return gir_pat_skip(err, "Gemm without C");
    if (gir_node_float(n, "alpha", 1.0) != 1.0 || gir_node_float(n, "beta", 1.0) != 1.0)
        return gir_pat_skip(err, "Gemm with alpha or beta (made plain first)");
    TRY(gir_pat_float_dtype(gir_pat_in(rw, n, 0), err));
    gir_node *g2;
    TRY(gir_rw_copy(rw, n, n->in, 2, 1, &g2, err));
    int32_t y;
    TRY(gir_rw_binary(rw, GIR_OP_Add, g2->out[0], n->in[2], NULL, &y, err));
    return gir_rw_done(rw, &y, err);
}

GIR_PATTERN(gemm_bias_add, "gemm-bias-as-add", GIR_OP_Gemm, "Gemm's C added after the product (Gemm + Add)", gemm_bias_add);
