/* ReduceMean/ReduceMax over any axes as global pooling, for targets whose
 * only reductions are pools (LightNet's avgpool2d/maxpool2d): the kept
 * axes are moved first and the reduced ones last (Transpose), viewed as
 * [1, kept, reduced, 1] (Reshape), pooled globally, and given the output
 * shape (Reshape).  The same mean or maximum over the same elements; a
 * mean is summed in another order. */
#include "patterns.h"

static gir_status reduce_pool(gir_rw *rw, const gir_node *n, gir_error *err)
{
    const gir_value *x = gir_pat_in(rw, n, 0), *y = gir_out(rw->g, n, 0);
    TRY(gir_pat_float_dtype(x, err));
    int r = x->shape.rank;
    if (r < 1 || !gir_shape_is_known(&x->shape) || !y || !gir_shape_is_known(&y->shape))
        return gir_pat_skip(err, "%s of an unknown shape", gir_op_name(n->op));
    bool red[GIR_MAX_RANK];
    TRY(gir_pat_reduced_axes(n, r, red, err));
    int64_t perm[GIR_MAX_RANK], kept = 1, reduced = 1;
    int k = 0;
    for (int d = 0; d < r; d++)
        if (!red[d]) {
            perm[k++] = d;
            kept *= x->shape.dims[d];
        }
    int first_red = k;
    for (int d = 0; d < r; d++)
        if (red[d]) {
            perm[k++] = d;
            reduced *= x->shape.dims[d];
        }
    if (reduced < 1 || first_red == r)
        return gir_pat_skip(err, "%s that reduces nothing", gir_op_name(n->op));
    bool identity = true;
    for (int d = 0; d < r; d++)
        identity = identity && perm[d] == d;
    int32_t v = n->in[0];
    gir_node *m;
    if (!identity) {
        TRY(gir_rw_unary(rw, GIR_OP_Transpose, v, &m, &v, err));
        TRY(gir_attrs_set_ints(rw->g, &m->attrs, "perm", perm, (size_t)r, err));
    }
    TRY(gir_rw_reshape(rw, v, (const int64_t[]){ 1, kept, reduced, 1 }, 4, &v, err));
    TRY(gir_rw_unary(rw, n->op == GIR_OP_ReduceMean ? GIR_OP_GlobalAveragePool : GIR_OP_GlobalMaxPool, v, NULL, &v,
                     err));
    TRY(gir_rw_reshape(rw, v, y->shape.dims, (size_t)y->shape.rank, &v, err));
    return gir_rw_done(rw, &v, err);
}

GIR_PATTERN(reducemean_pool, "reducemean-as-pool", GIR_OP_ReduceMean, "ReduceMean as Transpose+Reshape+GlobalAveragePool+Reshape", reduce_pool);
GIR_PATTERN(reducemax_pool, "reducemax-as-pool", GIR_OP_ReduceMax, "ReduceMax as Transpose+Reshape+GlobalMaxPool+Reshape", reduce_pool);
