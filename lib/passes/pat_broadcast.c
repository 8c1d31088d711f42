/* Broadcasting made explicit, for targets whose elementwise operators want
 * equal shapes (LightNet's elew): each operand smaller than the output is
 * reshaped to the output's rank and resized (nearest) to the output shape.
 * Nearest resizing of a dimension of size 1 copies its one element, so the
 * operands hold exactly the values broadcasting reads. */
#include "patterns.h"

static bool broadcasting_op(gir_op op)
{
    switch (op) {
    case GIR_OP_Add:
    case GIR_OP_Sub:
    case GIR_OP_Mul:
    case GIR_OP_Div:
    case GIR_OP_Pow:
    case GIR_OP_Max:
    case GIR_OP_Min: return true;
    default: return false;
    }
}

/* Operand v (value index x) made of shape s: Reshape to s's rank (leading
 * 1s), then Resize to s where a dimension differs. */
static gir_status expand_operand(gir_rw *rw, int32_t x, const gir_value *v, const gir_shape *s, int32_t *out,
                                 gir_error *err)
{
    int r = s->rank, k = v->shape.rank;
    int64_t dims[GIR_MAX_RANK];
    bool differs = false;
    for (int d = 0; d < r; d++) {
        dims[d] = d < r - k ? 1 : v->shape.dims[d - (r - k)];
        differs = differs || dims[d] != s->dims[d];
    }
    const void *data = NULL;
    if (k != r && v->data && v->producer < 0 && !gir_tensor_load(v->data, &data, NULL)) {
        /* a constant is given the rank itself (a target may refuse the
         * 0-D constant a Reshape would read) */
        gir_shape cs = { .rank = r };
        for (int d = 0; d < r; d++)
            cs.dims[d] = dims[d];
        TRY(gir_rw_const(rw, v->dtype, &cs, data, &x, err));
    } else if (k != r) {
        TRY(gir_rw_reshape(rw, x, dims, (size_t)r, &x, err));
    }
    if (differs) {
        gir_node *rs;
        TRY(gir_rw_unary(rw, GIR_OP_Resize, x, &rs, &x, err));
        TRY(gir_attrs_set_ints(rw->g, &rs->attrs, "sizes", s->dims, (size_t)r, err));
        TRY(gir_attrs_set_string(rw->g, &rs->attrs, "mode", "nearest", err));
        TRY(gir_attrs_set_string(rw->g, &rs->attrs, "coordinate_transformation_mode", "half_pixel", err));
        TRY(gir_attrs_set_string(rw->g, &rs->attrs, "nearest_mode", "round_prefer_ceil", err));
    }
    *out = x;
    return GIR_OK;
}

static gir_status broadcast_resize(gir_rw *rw, const gir_node *n, gir_error *err)
{
    if (!broadcasting_op(n->op) || n->n_in != 2 || n->n_out != 1)
        return gir_pat_skip(err, "not a binary elementwise operator");
    const gir_value *y = gir_out(rw->g, n, 0), *a = gir_pat_in(rw, n, 0), *b = gir_pat_in(rw, n, 1);
    if (!y || !a || !b || y->shape.rank < 1 || a->shape.rank < 0 || b->shape.rank < 0)
        return gir_pat_skip(err, "operands of unknown rank");
    for (int d = 0; d < y->shape.rank; d++)
        if (y->shape.dims[d] < 0)
            return gir_pat_skip(err, "an output of unknown shape");
    bool same_a = gir_shape_equal(&a->shape, &y->shape), same_b = gir_shape_equal(&b->shape, &y->shape);
    if (same_a && same_b)
        return gir_pat_skip(err, "no broadcasting");
    int32_t in[2] = { n->in[0], n->in[1] };
    if (!same_a)
        TRY(expand_operand(rw, in[0], a, &y->shape, &in[0], err));
    if (!same_b)
        TRY(expand_operand(rw, in[1], b, &y->shape, &in[1], err));
    gir_node *m;
    TRY(gir_rw_copy(rw, n, in, 2, 1, &m, err));
    return gir_rw_done(rw, &m->out[0], err);
}

GIR_PATTERN(broadcast_resize, "broadcast-as-resize", GIR_OP_COUNT_, "broadcasting as Reshape+Resize(nearest) to the output shape", broadcast_resize);

/* Expand(x, shape) = x reshaped to the output's rank and resized (nearest)
 * to the output shape: the same copies of x's elements. */
static gir_status expand_resize(gir_rw *rw, const gir_node *n, gir_error *err)
{
    const gir_value *y = gir_out(rw->g, n, 0), *x = gir_pat_in(rw, n, 0);
    if (!y || !x || y->shape.rank < 1 || x->shape.rank < 0 || x->shape.rank > y->shape.rank)
        return gir_pat_skip(err, "Expand of unknown rank");
    for (int d = 0; d < y->shape.rank; d++)
        if (y->shape.dims[d] < 0)
            return gir_pat_skip(err, "Expand to an unknown shape");
    int32_t v = n->in[0];
    if (gir_shape_equal(&x->shape, &y->shape)) {
        gir_node *id;
        TRY(gir_rw_unary(rw, GIR_OP_Identity, v, &id, &v, err));
    } else {
        TRY(expand_operand(rw, v, x, &y->shape, &v, err));
    }
    return gir_rw_done(rw, &v, err);
}

GIR_PATTERN(expand_resize, "expand-as-resize", GIR_OP_Expand, "Expand as Reshape+Resize(nearest)", expand_resize);
