/* Legalization patterns for the ops that only change a shape: Flatten,
 * Squeeze and Unsqueeze as one Reshape to the output shape inference
 * resolved.  A dimension still unknown is copied (0) when it is one of the
 * leading dimensions the op keeps in place, or inferred (-1) when it is the
 * only other unknown one.  The same elements in the same order: bit-exact. */
#include "patterns.h"

/* Leading dimensions of the input that n keeps at the same position. */
static int kept_prefix(const gir_node *n, int in_rank, int out_rank)
{
    const int64_t *axes;
    ptrdiff_t na;
    int p;
    switch (n->op) {
    case GIR_OP_Flatten: {
        int64_t a = gir_node_int(n, "axis", 1);
        return (a < 0 ? a + in_rank : a) == 1 ? 1 : 0;
    }
    case GIR_OP_Squeeze:
    case GIR_OP_Unsqueeze:
        na = gir_attrs_get_ints(&n->attrs, "axes", &axes);
        if (na <= 0)
            return 0;
        p = n->op == GIR_OP_Squeeze ? in_rank : out_rank;
        for (ptrdiff_t i = 0; i < na; i++) {
            int64_t a = axes[i] < 0 ? axes[i] + (n->op == GIR_OP_Squeeze ? in_rank : out_rank) : axes[i];
            if (a < p)
                p = (int)a;
        }
        return p < 0 ? 0 : p;
    default: return 0;
    }
}

static gir_status shape_as_reshape(gir_rw *rw, const gir_node *n, gir_error *err)
{
    const gir_value *x = gir_pat_in(rw, n, 0), *y = rw->g->values[n->out[0]];
    if (!x || x->shape.rank < 0 || y->shape.rank < 0)
        return gir_pat_skip(err, "%s of unknown rank", gir_op_name(n->op));
    int p = kept_prefix(n, x->shape.rank, y->shape.rank);
    int64_t shape[GIR_MAX_RANK];
    int infer = 0;
    for (int i = 0; i < y->shape.rank; i++) {
        int64_t d = y->shape.dims[i];
        if (d == 0)
            return gir_pat_skip(err, "%s to a shape with a zero-size dimension", gir_op_name(n->op));
        if (d > 0) {
            shape[i] = d;
        } else if (i < p && i < x->shape.rank) {
            shape[i] = 0;
        } else {
            shape[i] = -1;
            if (++infer > 1)
                return gir_pat_skip(err, "%s to a shape with more than one unknown dimension it moves",
                                    gir_op_name(n->op));
        }
    }
    int32_t out;
    TRY(gir_rw_reshape(rw, n->in[0], shape, (size_t)y->shape.rank, &out, err));
    return gir_rw_done(rw, &out, err);
}

GIR_PATTERN(flatten_reshape, "flatten-as-reshape", GIR_OP_Flatten, "Flatten as Reshape", shape_as_reshape);
GIR_PATTERN(squeeze_reshape, "squeeze-as-reshape", GIR_OP_Squeeze, "Squeeze as Reshape", shape_as_reshape);
GIR_PATTERN(unsqueeze_reshape, "unsqueeze-as-reshape", GIR_OP_Unsqueeze, "Unsqueeze as Reshape", shape_as_reshape);
