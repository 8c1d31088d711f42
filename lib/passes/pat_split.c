/* Legalization pattern for Split: each output as a Slice of the input
 * along the split axis (offsets from the split sizes, or from the outputs'
 * inferred sizes when equal parts were asked for).  Copies of the same
 * elements: bit-exact. */
#include "patterns.h"

/* Outputs a Split is rewritten for (more stay as they are). */
enum { GIR_MAX_SPLIT_SLICES = 64 };

static gir_status split_slices(gir_rw *rw, const gir_node *n, gir_error *err)
{
    const gir_value *x = gir_pat_in(rw, n, 0);
    int r = x ? x->shape.rank : -1;
    if (r < 1)
        return gir_pat_skip(err, "Split of a tensor of unknown rank");
    int64_t axis = gir_node_int(n, "axis", 0);
    if (axis < 0)
        axis += r;
    if (axis < 0 || axis >= r)
        return gir_pat_skip(err, "Split along axis %lld of a rank-%d tensor", (long long)gir_node_int(n, "axis", 0), r);
    const int64_t *split;
    ptrdiff_t ns = gir_attrs_get_ints(&n->attrs, "split", &split);
    if (n->n_out > GIR_MAX_SPLIT_SLICES)
        return gir_pat_skip(err, "Split into %zu outputs (at most %d as Slices)", n->n_out, GIR_MAX_SPLIT_SLICES);
    int64_t size[GIR_MAX_SPLIT_SLICES];
    for (size_t k = 0; k < n->n_out; k++) {
        const gir_value *o = rw->g->values[n->out[k]];
        size[k] = ns >= 0 ? split[k] : o->shape.rank == r ? o->shape.dims[axis] : -1;
        if (size[k] < 0)
            return gir_pat_skip(err, "Split into parts of unknown size");
    }
    int32_t outs[GIR_MAX_SPLIT_SLICES];
    int64_t off = 0;
    for (size_t k = 0; k < n->n_out; k++) {
        gir_node *s;
        TRY(gir_rw_unary(rw, GIR_OP_Slice, n->in[0], &s, &outs[k], err));
        int64_t end = off + size[k];
        TRY(gir_attrs_set_ints(rw->g, &s->attrs, "starts", &off, 1, err));
        TRY(gir_attrs_set_ints(rw->g, &s->attrs, "ends", &end, 1, err));
        TRY(gir_attrs_set_ints(rw->g, &s->attrs, "axes", &axis, 1, err));
        off = end;
    }
    return gir_rw_done(rw, outs, err);
}

GIR_PATTERN(split_slices, "split-as-slices", GIR_OP_Split, "Split as one Slice per output", split_slices);
