/* Elementwise operators in other elementwise operators, for targets with
 * few of them (LightNet's elew has Sub and Max but no Abs). */
#include "patterns.h"

/* Abs(x) = Max(x, 0 - x): exact for every float, -0 (Max(-0, +0) = +0),
 * infinities and NaN (Max propagates it) included. */
static gir_status abs_max(gir_rw *rw, const gir_node *n, gir_error *err)
{
    const gir_value *x;
    TRY(gir_pat_float_in(rw, n, &x, err));
    int32_t z, neg, y;
    TRY(gir_rw_scalar(rw, x->dtype, 0.0, &z, err));
    TRY(gir_rw_binary(rw, GIR_OP_Sub, z, n->in[0], NULL, &neg, err));
    TRY(gir_rw_binary(rw, GIR_OP_Max, n->in[0], neg, NULL, &y, err));
    return gir_rw_done(rw, &y, err);
}

GIR_PATTERN(abs_max, "abs-as-max", GIR_OP_Abs, "Abs as Max(x, 0 - x)", abs_max);

/* Softmax/LogSoftmax over axis k (opset 13's meaning) = the same over the
 * last axis of x with k moved there, moved back after: for writers of
 * ONNX before opset 13, whose Softmax normalises over everything from its
 * axis on (the last axis means the same in both). */
static gir_status softmax_last_axis(gir_rw *rw, const gir_node *n, gir_error *err)
{
    const gir_value *x;
    TRY(gir_pat_float_in(rw, n, &x, err));
    int r = x->shape.rank;
    int64_t axis = gir_node_int(n, "axis", -1);
    if (r < 1)
        return gir_pat_skip(err, "%s of unknown rank", gir_op_name(n->op));
    if (axis < 0)
        axis += r;
    if (axis < 0 || axis >= r - 1)
        return gir_pat_skip(err, "%s over the last axis already", gir_op_name(n->op));
    int64_t perm[GIR_MAX_RANK], inv[GIR_MAX_RANK];
    int k = 0;
    for (int d = 0; d < r; d++)
        if (d != axis)
            perm[k++] = d;
    perm[r - 1] = axis;
    for (int d = 0; d < r; d++)
        inv[perm[d]] = d;
    gir_node *t1, *sm, *t2;
    int32_t v;
    TRY(gir_rw_unary(rw, GIR_OP_Transpose, n->in[0], &t1, &v, err));
    TRY(gir_attrs_set_ints(rw->g, &t1->attrs, "perm", perm, (size_t)r, err));
    TRY(gir_rw_unary(rw, n->op, v, &sm, &v, err));
    TRY(gir_attrs_set_int(rw->g, &sm->attrs, "axis", -1, err));
    TRY(gir_rw_unary(rw, GIR_OP_Transpose, v, &t2, &v, err));
    TRY(gir_attrs_set_ints(rw->g, &t2->attrs, "perm", inv, (size_t)r, err));
    return gir_rw_done(rw, &v, err);
}

GIR_PATTERN(softmax_last, "softmax-last-axis", GIR_OP_Softmax, "Softmax over its axis moved last (Transposes)", softmax_last_axis);
GIR_PATTERN(logsoftmax_last, "logsoftmax-last-axis", GIR_OP_LogSoftmax, "LogSoftmax over its axis moved last (Transposes)", softmax_last_axis);
