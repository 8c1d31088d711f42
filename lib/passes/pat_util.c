/* Helpers the legalization patterns share. */
#include "patterns.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>

gir_status gir_pat_skip(gir_error *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    gir_status st = gir_vfail(err, GIR_E_UNSUPPORTED, fmt, ap);
    va_end(ap);
    return st;
}

const gir_value *gir_pat_in(const gir_rw *rw, const gir_node *n, size_t i)
{
    return gir_in(rw->g, n, i);
}

gir_status gir_pat_float_dtype(const gir_value *v, gir_error *err)
{
    if (!v || (v->dtype != GIR_DT_F32 && v->dtype != GIR_DT_F64))
        return gir_pat_skip(err, "input of type %s", v ? gir_dtype_name(v->dtype) : "?");
    return GIR_OK;
}

gir_status gir_pat_float_in(const gir_rw *rw, const gir_node *n, const gir_value **x, gir_error *err)
{
    *x = gir_pat_in(rw, n, 0);
    return gir_pat_float_dtype(*x, err);
}

gir_status gir_pat_spatial_in(const gir_rw *rw, const gir_node *n, const gir_value **x, gir_error *err)
{
    TRY(gir_pat_float_in(rw, n, x, err));
    int r = (*x)->shape.rank;
    if (r < 0)
        return gir_pat_skip(err, "%s of a tensor of unknown rank", gir_op_name(n->op));
    if (r < 3)
        return gir_pat_skip(err, "%s of a rank-%d tensor", gir_op_name(n->op), r);
    return GIR_OK;
}

gir_status gir_pat_binary_k(gir_rw *rw, gir_op op, int32_t x, gir_dtype dt, double v, int32_t *out, gir_error *err)
{
    int32_t k;
    TRY(gir_rw_scalar(rw, dt, v, &k, err));
    return gir_rw_binary(rw, op, x, k, NULL, out, err);
}

const float *gir_pat_const_f32(const gir_value *v)
{
    const void *p = NULL;
    if (!v || !v->data || v->dtype != GIR_DT_F32 || v->producer >= 0 || gir_tensor_load(v->data, &p, NULL))
        return NULL;
    return p;
}

static bool const_non_negative(const gir_value *x, bool strict)
{
    const float *d = gir_pat_const_f32(x);
    if (!d || !gir_shape_is_known(&x->shape))
        return false;
    int64_t n = gir_shape_numel(&x->shape);
    for (int64_t i = 0; i < n; i++)
        if (d[i] < 0.0f || (strict && signbit(d[i])))
            return false;
    return true;
}

/* The constant v is, or that v copies (Reshape, Identity, Expand, nearest
 * Resize: the ways broadcasting is made explicit), or NULL. */
static const gir_value *copied_const(const gir_graph *g, int32_t v)
{
    for (int depth = 0; v >= 0 && depth < 8; depth++) {
        const gir_value *x = g->values[v];
        if (x->producer < 0)
            return x->data ? x : NULL;
        const gir_node *p = g->nodes[x->producer];
        bool nearest = p->op == GIR_OP_Resize && !strcmp(gir_attrs_get_string(&p->attrs, "mode", "nearest"), "nearest");
        if (p->n_in < 1 || !(nearest || p->op == GIR_OP_Reshape || p->op == GIR_OP_Identity || p->op == GIR_OP_Expand))
            return NULL;
        v = p->in[0];
    }
    return NULL;
}

/* Every element of the float32 constant v is an even integer. */
static bool even_powers(const gir_value *v)
{
    const float *d = gir_pat_const_f32(v);
    if (!d || !gir_shape_is_known(&v->shape))
        return false;
    int64_t n = gir_shape_numel(&v->shape);
    for (int64_t i = 0; i < n; i++)
        if (fmodf(d[i], 2.0f) != 0.0f)
            return false;
    return n > 0;
}

static bool non_negative(const gir_graph *g, int32_t v, bool strict, int depth);

/* The answer for p's first input: asked only where p's operator needs it
 * (asking it of every producer would walk whole cones through operators
 * that decide nothing, convolutions, at every level). */
static bool first(const gir_graph *g, const gir_node *p, bool strict, int depth)
{
    return p->n_in > 0 && non_negative(g, p->in[0], strict, depth + 1);
}

static bool non_negative(const gir_graph *g, int32_t v, bool strict, int depth)
{
    if (v < 0 || depth > 32)
        return false;
    const gir_value *x = g->values[v];
    if (x->producer < 0)
        return const_non_negative(x, strict);
    const gir_node *p = g->nodes[x->producer];
    switch (p->op) {
    case GIR_OP_Sigmoid: case GIR_OP_Abs: case GIR_OP_Exp: case GIR_OP_Softplus:
        return true; /* never below +0 */
    case GIR_OP_Relu: /* Relu(-0) is -0 */
        return !strict || first(g, p, strict, depth);
    case GIR_OP_Clip: {
        double lo = gir_node_float(p, "min", -INFINITY);
        return lo > 0.0 || (lo == 0.0 && (!strict || first(g, p, strict, depth)));
    }
    case GIR_OP_Mul:
        if (p->n_in == 2 && p->in[0] == p->in[1])
            return true; /* a square: +0 for -0 */
        return first(g, p, strict, depth) && non_negative(g, p->in[1], strict, depth + 1);
    case GIR_OP_Add: case GIR_OP_Max:
        return first(g, p, strict, depth) && non_negative(g, p->in[1], strict, depth + 1);
    case GIR_OP_Div: /* x / -0 is -infinity */
        return first(g, p, strict, depth) && non_negative(g, p->in[1], true, depth + 1);
    case GIR_OP_Pow:
        if (p->n_in == 2 && even_powers(copied_const(g, p->in[1])))
            return true; /* an even power */
        return p->n_in > 0 && non_negative(g, p->in[0], true, depth + 1); /* -0 to a negative power: -inf */
    case GIR_OP_Resize: /* nearest copies values; linear and cubic weigh them (cubic with negative weights) */
        return strcmp(gir_attrs_get_string(&p->attrs, "mode", "nearest"), "cubic") != 0 && first(g, p, strict, depth);
    case GIR_OP_Sqrt: /* sqrt(-0) is -0 */
        return first(g, p, strict, depth);
    case GIR_OP_Reshape: case GIR_OP_Transpose: case GIR_OP_Identity: case GIR_OP_Flatten: case GIR_OP_Squeeze:
    case GIR_OP_Unsqueeze: case GIR_OP_Slice: case GIR_OP_Expand: case GIR_OP_MaxPool: case GIR_OP_GlobalMaxPool:
    case GIR_OP_AveragePool: case GIR_OP_GlobalAveragePool: case GIR_OP_ReduceMean: case GIR_OP_ReduceSum:
    case GIR_OP_ReduceMax:
        return first(g, p, strict, depth); /* the same values, moved, or sums, means and maxima of them */
    case GIR_OP_Concat:
        for (size_t i = 0; i < p->n_in; i++)
            if (!non_negative(g, p->in[i], strict, depth + 1))
                return false;
        return p->n_in > 0;
    default:
        return false;
    }
}

bool gir_pat_non_negative(const gir_graph *g, int32_t v, bool strict)
{
    return non_negative(g, v, strict, 0);
}

gir_status gir_pat_reduced_axes(const gir_node *n, int rank, bool red[GIR_MAX_RANK], gir_error *err)
{
    const int64_t *axes;
    ptrdiff_t na = gir_attrs_get_ints(&n->attrs, "axes", &axes);
    for (int d = 0; d < rank; d++)
        red[d] = na < 0; /* no axes: every axis */
    for (ptrdiff_t i = 0; i < na; i++) {
        int64_t a = axes[i] < 0 ? axes[i] + rank : axes[i];
        if (a < 0 || a >= rank)
            return gir_pat_skip(err, "%s over axis %lld of a rank-%d tensor", gir_op_name(n->op), (long long)axes[i],
                                rank);
        red[a] = true;
    }
    return GIR_OK;
}
