/* Window arithmetic a target lacks, in operators every target has:
 *
 * - LRN as a convolution over the channel axis (LightNet has no LRN but
 *   has conv2d, elew and pow).  The squares are viewed as [N, 1, C, inner]
 *   and summed over each channel's window by a [1, 1, size, 1] kernel of
 *   ones whose zero padding stands for the channels past either end
 *   (before = (size - 1) / 2, after = size - 1 - before, as ONNX defines
 *   the window), so no channel outside a window is ever multiplied in (a
 *   C x C weight matrix with zeros would turn an infinite square elsewhere
 *   into NaN).  Then y = x / (bias + alpha / size * sum) ^ beta in
 *   Mul/Add/Pow/Div.  The runtime's LRN sums in double; the form sums the
 *   same squares in float, as a float LRN does (ONNX Runtime's), so they
 *   agree within float rounding wherever the squares fit in a float (|x|
 *   below 1.8e19; beyond, the float square is infinite and y is 0).
 *
 * - ReduceProd as Slices multiplied: along each reduced axis in turn, the
 *   product of the one-element slices in index order, then a Reshape when
 *   keepdims is 0.  The same factors in a fixed order, in float (the
 *   runtime multiplies in double); bounded to a few hundred slices.
 *
 * - ArgMax/ArgMin through the index type a target's argmax gives (below). */
#include "patterns.h"

#include <stdint.h>
#include <stdlib.h>

#define GIR_MAX_PROD_SLICES 256

static gir_status lrn_conv(gir_rw *rw, const gir_node *n, gir_error *err)
{
    const gir_value *x = gir_pat_in(rw, n, 0);
    if (!x || x->dtype != GIR_DT_F32)
        return gir_pat_skip(err, "LRN of type %s", x ? gir_dtype_name(x->dtype) : "?");
    if (x->shape.rank < 3 || !gir_shape_is_known(&x->shape))
        return gir_pat_skip(err, "LRN of an unknown shape or a rank below 3");
    int64_t size = gir_node_int(n, "size", 0);
    if (size < 1 || size > 4096)
        return gir_pat_skip(err, "LRN size %lld", (long long)size);
    int64_t N = x->shape.dims[0], C = x->shape.dims[1], inner = 1;
    for (int d = 2; d < x->shape.rank; d++)
        inner *= x->shape.dims[d];
    int64_t before = (size - 1) / 2, after = size - 1 - before;
    double alpha = gir_node_float(n, "alpha", 1e-4), beta = gir_node_float(n, "beta", 0.75);
    double bias = gir_node_float(n, "bias", 1.0);

    float *ones = malloc((size_t)size * sizeof *ones);
    if (!ones)
        return gir_nomem(err);
    for (int64_t i = 0; i < size; i++)
        ones[i] = 1.0f;
    int32_t W;
    gir_shape ws = { .rank = 4, .dims = { 1, 1, size, 1 } };
    gir_status st = gir_rw_const(rw, GIR_DT_F32, &ws, ones, &W, err);
    free(ones);
    TRY(st);

    int32_t sq, v, s, m, a, p, y;
    gir_node *conv;
    TRY(gir_rw_binary(rw, GIR_OP_Mul, n->in[0], n->in[0], NULL, &sq, err));
    TRY(gir_rw_reshape(rw, sq, (const int64_t[]){ N, 1, C, inner }, 4, &v, err));
    TRY(gir_rw_node(rw, GIR_OP_Conv, (int32_t[]){ v, W }, 2, 1, &conv, err));
    TRY(gir_attrs_set_ints(rw->g, &conv->attrs, "kernel_shape", (const int64_t[]){ size, 1 }, 2, err));
    TRY(gir_attrs_set_ints(rw->g, &conv->attrs, "pads", (const int64_t[]){ before, 0, after, 0 }, 4, err));
    TRY(gir_rw_reshape(rw, conv->out[0], x->shape.dims, (size_t)x->shape.rank, &s, err));
    TRY(gir_pat_binary_k(rw, GIR_OP_Mul, s, GIR_DT_F32, alpha / (double)size, &m, err));
    TRY(gir_pat_binary_k(rw, GIR_OP_Add, m, GIR_DT_F32, bias, &a, err));
    TRY(gir_pat_binary_k(rw, GIR_OP_Pow, a, GIR_DT_F32, beta, &p, err));
    TRY(gir_rw_binary(rw, GIR_OP_Div, n->in[0], p, NULL, &y, err));
    return gir_rw_done(rw, &y, err);
}

GIR_PATTERN(lrn_conv, "lrn-as-conv", GIR_OP_LRN, "LRN as Mul+Conv over channels+Mul+Add+Pow+Div", lrn_conv);

static gir_status reduceprod_mul(gir_rw *rw, const gir_node *n, gir_error *err)
{
    const gir_value *x = gir_pat_in(rw, n, 0), *yv = gir_out(rw->g, n, 0);
    TRY(gir_pat_float_dtype(x, err));
    int r = x->shape.rank;
    if (r < 1 || !gir_shape_is_known(&x->shape) || !yv || !gir_shape_is_known(&yv->shape))
        return gir_pat_skip(err, "ReduceProd of an unknown shape");
    if (n->n_in > 1 && n->in[1] >= 0)
        return gir_pat_skip(err, "ReduceProd with axes as an input");
    bool red[GIR_MAX_RANK];
    TRY(gir_pat_reduced_axes(n, r, red, err));
    int64_t slices = 0;
    for (int d = 0; d < r; d++)
        if (red[d]) {
            if (x->shape.dims[d] < 1)
                return gir_pat_skip(err, "ReduceProd over an empty axis");
            slices += x->shape.dims[d];
        }
    if (slices > GIR_MAX_PROD_SLICES)
        return gir_pat_skip(err, "ReduceProd over %lld elements per output (at most %d as Slices)",
                            (long long)slices, GIR_MAX_PROD_SLICES);
    int32_t v = n->in[0];
    for (int64_t d = 0; d < r; d++) {
        if (!red[d] || x->shape.dims[d] == 1)
            continue;
        int32_t acc = -1;
        for (int64_t i = 0; i < x->shape.dims[d]; i++) {
            gir_node *s;
            int32_t sv;
            int64_t end = i + 1;
            TRY(gir_rw_unary(rw, GIR_OP_Slice, v, &s, &sv, err));
            TRY(gir_attrs_set_ints(rw->g, &s->attrs, "starts", &i, 1, err));
            TRY(gir_attrs_set_ints(rw->g, &s->attrs, "ends", &end, 1, err));
            TRY(gir_attrs_set_ints(rw->g, &s->attrs, "axes", &d, 1, err));
            if (acc < 0)
                acc = sv;
            else
                TRY(gir_rw_binary(rw, GIR_OP_Mul, acc, sv, NULL, &acc, err));
        }
        v = acc;
    }
    if (gir_node_int(n, "keepdims", 1) == 0 || v == n->in[0])
        TRY(gir_rw_reshape(rw, v, yv->shape.dims, (size_t)yv->shape.rank, &v, err));
    return gir_rw_done(rw, &v, err);
}

GIR_PATTERN(reduceprod_mul, "reduceprod-as-mul", GIR_OP_ReduceProd, "ReduceProd as Slices multiplied", reduceprod_mul);

/* ArgMax/ArgMin(x) = Cast(Cast(ArgMax(x), T), int64) for a T that holds
 * every index of the axis exactly (float32: lengths up to 2^24; int32), so
 * that a target whose argmax gives T indices (MXNet float32, NNVM and
 * LightNet int32) writes the ArgMax with its first Cast as one operator. */
static gir_status index_via(gir_rw *rw, const gir_node *n, gir_dtype t, gir_error *err)
{
    const gir_value *x = gir_pat_in(rw, n, 0), *y = gir_out(rw->g, n, 0);
    if (!x || !y || y->dtype != GIR_DT_I64)
        return gir_pat_skip(err, "%s without int64 indices", gir_op_name(n->op));
    for (size_t i = 0; i < rw->g->n_nodes; i++) {
        const gir_node *c = rw->g->nodes[i];
        if (c && c->op == GIR_OP_Cast && c->n_in == 1 && c->in[0] == n->out[0])
            return gir_pat_skip(err, "%s whose indices are cast already", gir_op_name(n->op));
    }
    int r = x->shape.rank;
    int64_t axis = gir_node_int(n, "axis", 0);
    if (r < 1 || axis < -r || axis >= r || x->shape.dims[axis < 0 ? axis + r : axis] < 0)
        return gir_pat_skip(err, "%s over an axis of unknown length", gir_op_name(n->op));
    int64_t len = x->shape.dims[axis < 0 ? axis + r : axis];
    if (len > (t == GIR_DT_F32 ? (int64_t)1 << 24 : (int64_t)INT32_MAX))
        return gir_pat_skip(err, "%s over %lld elements (more than %s holds exactly)", gir_op_name(n->op),
                            (long long)len, gir_dtype_name(t));
    gir_node *m, *c1, *c2;
    int32_t a, b, z;
    TRY(gir_rw_copy(rw, n, n->in, n->n_in, 1, &m, err));
    a = m->out[0];
    TRY(gir_rw_unary(rw, GIR_OP_Cast, a, &c1, &b, err));
    TRY(gir_rw_unary(rw, GIR_OP_Cast, b, &c2, &z, err));
    TRY(gir_attrs_set_string(rw->g, &c1->attrs, "to", gir_dtype_name(t), err));
    TRY(gir_attrs_set_string(rw->g, &c2->attrs, "to", "int64", err));
    return gir_rw_done(rw, &z, err);
}

static gir_status index_f32(gir_rw *rw, const gir_node *n, gir_error *err)
{
    return index_via(rw, n, GIR_DT_F32, err);
}

static gir_status index_i32(gir_rw *rw, const gir_node *n, gir_error *err)
{
    return index_via(rw, n, GIR_DT_I32, err);
}

GIR_PATTERN(argmax_f32, "argmax-float-indices", GIR_OP_ArgMax, "ArgMax as float32 indices (Cast) cast to int64", index_f32);
GIR_PATTERN(argmax_i32, "argmax-int32-indices", GIR_OP_ArgMax, "ArgMax as int32 indices (Cast) cast to int64", index_i32);
GIR_PATTERN(argmin_f32, "argmin-float-indices", GIR_OP_ArgMin, "ArgMin as float32 indices (Cast) cast to int64", index_f32);
GIR_PATTERN(argmin_i32, "argmin-int32-indices", GIR_OP_ArgMin, "ArgMin as int32 indices (Cast) cast to int64", index_i32);
