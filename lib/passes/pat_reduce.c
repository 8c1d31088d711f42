/* Legalization patterns between reductions over the spatial axes and
 * global pooling: ReduceMean/ReduceMax over axes 2.. of an N-C-spatial
 * tensor <-> GlobalAveragePool/GlobalMaxPool (with a Reshape when the
 * reduction drops the axes).  The same mean or maximum; only the order in
 * which a mean is summed differs between the runtime's kernels. */
#include "patterns.h"

#include <stdlib.h>

/* ReduceMean/ReduceMax over exactly the axes 2..rank-1 (rank >= 3) as
 * GlobalAveragePool/GlobalMaxPool, then a Reshape to [N, C] when keepdims
 * is 0 (an unknown N or C is copied with 0). */
static gir_status reduce_global(gir_rw *rw, const gir_node *n, gir_error *err)
{
    const gir_value *x;
    TRY(gir_pat_float_in(rw, n, &x, err));
    int r = x->shape.rank;
    const int64_t *axes;
    ptrdiff_t na = gir_attrs_get_ints(&n->attrs, "axes", &axes);
    if (r < 3 || na != r - 2)
        return gir_pat_skip(err, "%s over %td axes of a rank-%d tensor (global pooling reduces axes 2..)",
                            gir_op_name(n->op), na, r);
    unsigned seen = 0;
    for (ptrdiff_t i = 0; i < na; i++) {
        int64_t a = axes[i] < 0 ? axes[i] + r : axes[i];
        if (a < 2 || a >= r || (seen >> a & 1u))
            return gir_pat_skip(err, "%s over axis %lld (global pooling reduces the axes after N and C)",
                                gir_op_name(n->op), (long long)axes[i]);
        seen |= 1u << a;
    }
    int32_t y;
    TRY(gir_rw_unary(rw, n->op == GIR_OP_ReduceMean ? GIR_OP_GlobalAveragePool : GIR_OP_GlobalMaxPool, n->in[0], NULL,
                     &y, err));
    if (!gir_node_int(n, "keepdims", 1)) {
        int64_t shape[2];
        for (int i = 0; i < 2; i++)
            shape[i] = x->shape.dims[i] >= 0 ? x->shape.dims[i] : 0;
        if (shape[0] == 0 && x->shape.dims[0] == 0)
            return gir_pat_skip(err, "%s of an empty tensor", gir_op_name(n->op));
        TRY(gir_rw_reshape(rw, y, shape, 2, &y, err));
    }
    return gir_rw_done(rw, &y, err);
}

GIR_PATTERN(reducemean_global, "reducemean-as-globalpool", GIR_OP_ReduceMean, "ReduceMean over the spatial axes as GlobalAveragePool", reduce_global);
GIR_PATTERN(reducemax_global, "reducemax-as-globalpool", GIR_OP_ReduceMax, "ReduceMax over the spatial axes as GlobalMaxPool", reduce_global);

/* GlobalAveragePool/GlobalMaxPool as ReduceMean/ReduceMax over axes
 * 2..rank-1 with keepdims. */
static gir_status global_reduce(gir_rw *rw, const gir_node *n, gir_error *err)
{
    const gir_value *x;
    TRY(gir_pat_spatial_in(rw, n, &x, err));
    int r = x->shape.rank;
    int64_t axes[GIR_MAX_RANK];
    for (int i = 2; i < r; i++)
        axes[i - 2] = i;
    gir_node *m;
    int32_t y;
    TRY(gir_rw_unary(rw, n->op == GIR_OP_GlobalAveragePool ? GIR_OP_ReduceMean : GIR_OP_ReduceMax, n->in[0], &m, &y,
                     err));
    TRY(gir_attrs_set_ints(rw->g, &m->attrs, "axes", axes, (size_t)(r - 2), err));
    TRY(gir_attrs_set_int(rw->g, &m->attrs, "keepdims", 1, err));
    return gir_rw_done(rw, &y, err);
}

GIR_PATTERN(globalavg_reduce, "globalavgpool-as-reducemean", GIR_OP_GlobalAveragePool, "GlobalAveragePool as ReduceMean over the spatial axes", global_reduce);
GIR_PATTERN(globalmax_reduce, "globalmaxpool-as-reducemax", GIR_OP_GlobalMaxPool, "GlobalMaxPool as ReduceMax over the spatial axes", global_reduce);
