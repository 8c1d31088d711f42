/* NNabla array manipulation -> canonical operators: reshape, transpose,
 * slice, pad, tile, broadcast, gather, where, dropout and the plain maps
 * with arguments. */
#include "read.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

gir_status nnbr_slice(mctx *m, bool *mapped, const int64_t *starts, const int64_t *ends, const int64_t *axes,
                      const int64_t *steps, size_t k)
{
    gir_node *n;
    TRY(nnbr_map_to(m, mapped, GIR_OP_Slice, &n));
    TRY(nnbr_set_ints(m, n, "starts", starts, k));
    TRY(nnbr_set_ints(m, n, "ends", ends, k));
    TRY(nnbr_set_ints(m, n, "axes", axes, k));
    TRY(nnbr_set_ints(m, n, "steps", steps, k));
    return nnbr_infer(m, n);
}

#define NNB_NONE_SENTINEL 0x7fffffff

gir_status nnbr_map_slice(mctx *m, bool *mapped)
{
    static const Nnabla__SliceParameter zero = NNABLA__SLICE_PARAMETER__INIT;
    const Nnabla__SliceParameter *p = PARAM(m, SLICE_PARAM, slice_param, zero);
    int r = nnbr_unary_rank(m);
    size_t k = p->n_start;
    if (r < 0 || k == 0 || k > (size_t)r || p->n_stop != k || (p->n_step != k && p->n_step != 0))
        return GIR_OK;
    int64_t starts[GIR_MAX_RANK], ends[GIR_MAX_RANK], axes[GIR_MAX_RANK], steps[GIR_MAX_RANK];
    for (size_t i = 0; i < k; i++) {
        int64_t st = p->n_step ? p->step[i] : 1;
        if (st == 0 || p->start[i] == NNB_NONE_SENTINEL)
            return GIR_OK;
        if (p->stop[i] == NNB_NONE_SENTINEL && st < 0)
            return GIR_OK;
        starts[i] = p->start[i];
        ends[i] = p->stop[i] == NNB_NONE_SENTINEL ? INT64_MAX : p->stop[i];
        steps[i] = st;
        axes[i] = (int64_t)((size_t)r - k + i);
    }
    return nnbr_slice(m, mapped, starts, ends, axes, steps, k);
}

gir_status nnbr_map_pad(mctx *m, bool *mapped)
{
    static const Nnabla__PadParameter zero = NNABLA__PAD_PARAMETER__INIT;
    const Nnabla__PadParameter *p = PARAM(m, PAD_PARAM, pad_param, zero);
    int r = nnbr_unary_rank(m);
    size_t k = p->n_pad_width / 2;
    if (r < 0 || p->n_pad_width % 2 || k > (size_t)r)
        return GIR_OK;
    const char *mode;
    if (!p->mode[0] || strcmp(p->mode, "constant") == 0)
        mode = "constant";
    else if (strcmp(p->mode, "reflect") == 0)
        mode = "reflect";
    else if (strcmp(p->mode, "repeat") == 0)
        mode = "edge";
    else
        return GIR_OK;
    int64_t pads[2 * GIR_MAX_RANK] = { 0 };
    for (size_t i = 0; i < k; i++) {
        size_t axis = (size_t)r - k + i;
        pads[axis] = p->pad_width[2 * i];
        pads[(size_t)r + axis] = p->pad_width[2 * i + 1];
    }
    gir_node *n;
    TRY(nnbr_map_to(m, mapped, GIR_OP_Pad, &n));
    TRY(nnbr_set_ints(m, n, "pads", pads, 2 * (size_t)r));
    TRY(nnbr_set_string(m, n, "mode", mode));
    TRY(nnbr_set_float(m, n, "constant_value", p->constant_value));
    return nnbr_infer(m, n);
}

gir_status nnbr_map_transpose(mctx *m, bool *mapped)
{
    static const Nnabla__TransposeParameter zero = NNABLA__TRANSPOSE_PARAMETER__INIT;
    const Nnabla__TransposeParameter *p = PARAM(m, TRANSPOSE_PARAM, transpose_param, zero);
    if (!nnbr_arity(m, 1, 1, 1, 1) || p->n_axes == 0)
        return GIR_OK;
    return nnbr_map_ints(m, mapped, GIR_OP_Transpose, "perm", p->axes, p->n_axes);
}

/* The axis k >= 1 for which a Reshape to target is Flatten(axis=k): target
 * is (prod(x[:k]), prod(x[k:])), where a symbolic leading dimension may
 * appear as -1; 0 if none. */
static int64_t flatten_axis(const mctx *m, const int64_t *target, size_t n)
{
    const gir_value *x = nnbr_val(m, m->in[0]);
    if (n != 2 || !x || x->shape.rank < 2)
        return 0;
    int r = x->shape.rank;
    for (int k = 1; k < r; k++) {
        int64_t lead = 1, tail = 1;
        bool lead_unknown = false, tail_unknown = false;
        for (int i = 0; i < r; i++) {
            int64_t d = x->shape.dims[i];
            if (d < 0)
                *(i < k ? &lead_unknown : &tail_unknown) = true;
            else if (i < k)
                lead *= d;
            else
                tail *= d;
        }
        if (tail_unknown || target[1] != tail)
            continue;
        if (lead_unknown ? (target[0] == -1 && k == 1) : (target[0] == lead || target[0] == -1))
            return k;
    }
    return 0;
}

/* Reshape: one -1 is inferred in both; nnabla has no "0 copies" rule, so
 * a 0 is a literal zero (allowzero). */
gir_status nnbr_map_reshape(mctx *m, bool *mapped)
{
    static const Nnabla__ReshapeParameter zero = NNABLA__RESHAPE_PARAMETER__INIT;
    const Nnabla__ReshapeParameter *p = PARAM(m, RESHAPE_PARAM, reshape_param, zero);
    if (!nnbr_arity(m, 1, 1, 1, 1) || !p->shape || p->shape->n_dim > GIR_MAX_RANK)
        return GIR_OK;
    size_t n_dim = p->shape->n_dim;
    int minus = 0;
    bool has_zero = false;
    for (size_t i = 0; i < n_dim; i++) {
        if (p->shape->dim[i] < -1)
            return GIR_OK;
        minus += p->shape->dim[i] == -1;
        has_zero |= p->shape->dim[i] == 0;
    }
    if (minus > 1)
        return GIR_OK;
    *mapped = true;
    gir_node *n;
    int64_t axis = flatten_axis(m, p->shape->dim, n_dim);
    if (axis > 0) {
        TRY(nnbr_simple(m, GIR_OP_Flatten, &n));
        TRY(nnbr_set_int(m, n, "axis", axis));
        TRY(nnbr_meta_int(m, n, NNB_META_INPLACE, p->inplace));
        return nnbr_infer(m, n);
    }
    TRY(nnbr_simple(m, GIR_OP_Reshape, &n));
    TRY(nnbr_set_ints(m, n, "shape", p->shape->dim, n_dim));
    if (has_zero)
        TRY(nnbr_set_int(m, n, "allowzero", 1));
    /* nnabla's default is true, so false is recorded too */
    TRY(nnbr_meta_int(m, n, NNB_META_INPLACE, p->inplace));
    return nnbr_infer(m, n);
}

gir_status nnbr_map_broadcast(mctx *m, bool *mapped)
{
    static const Nnabla__BroadcastParameter zero = NNABLA__BROADCAST_PARAMETER__INIT;
    const Nnabla__BroadcastParameter *p = PARAM(m, BROADCAST_PARAM, broadcast_param, zero);
    int r = nnbr_unary_rank(m);
    if (!p->shape || r < 0 || p->shape->n_dim != (size_t)r)
        return GIR_OK;
    int64_t shape[GIR_MAX_RANK];
    for (int i = 0; i < r; i++)
        shape[i] = p->shape->dim[i] < 1 ? 1 : p->shape->dim[i]; /* the batch placeholder keeps x's size */
    return nnbr_map_ints(m, mapped, GIR_OP_Expand, "shape", shape, (size_t)r);
}

/* BroadcastTo(x, y, axis): y broadcast to x's shape, y's axes placed from
 * `axis` on (-1: the trailing axes).  Canonically Reshape(y) to x's rank
 * with 1s around, then Expand to x's shape, which must be known. */
gir_status nnbr_map_broadcast_to(mctx *m, bool *mapped)
{
    static const Nnabla__BroadcastToParameter zero = NNABLA__BROADCAST_TO_PARAMETER__INIT;
    const Nnabla__BroadcastToParameter *p = PARAM(m, BROADCAST_TO_PARAM, broadcast_to_param, zero);
    bool ok = nnbr_arity(m, 2, 2, 1, 1);
    const gir_value *x = nnbr_val(m, m->in[0]), *y = nnbr_val(m, m->in[1]);
    if (!ok || !x || !y || x->shape.rank < 0 || y->shape.rank < 0 || y->shape.rank > x->shape.rank)
        return GIR_OK;
    int rx = x->shape.rank, ry = y->shape.rank;
    int64_t axis = p->axis < 0 ? rx - ry : p->axis;
    if (axis < 0 || axis + ry > rx)
        return GIR_OK;
    int64_t dims[GIR_MAX_RANK], to[GIR_MAX_RANK];
    for (int i = 0; i < rx; i++) {
        to[i] = x->shape.dims[i];
        dims[i] = i >= axis && i < axis + ry ? y->shape.dims[i - axis] : 1;
        if (to[i] < 0 || dims[i] < 0 || (dims[i] != 1 && dims[i] != to[i]))
            return GIR_OK; /* sizes unknown, or y does not fit x */
    }
    *mapped = true;
    const char *rname = gir_arena_printf(&m->g->arena, "%s/reshape", m->name);
    if (!rname)
        return gir_nomem(m->err);
    gir_node *r;
    TRY(gir_graph_add_node(m->g, gir_graph_unique_node_name(m->g, rname, m->err), GIR_OP_Reshape, 1, 1, &r, m->err));
    r->in[0] = m->in[1];
    TRY(nnbr_set_ints(m, r, "shape", dims, (size_t)rx));
    TRY(nnbr_set_int(m, r, "allowzero", 0));
    TRY(nnbr_meta_int(m, r, NNB_META_FUSED, 1));
    TRY(gir_node_make_output(m->g, r, 0, gir_graph_unique_value_name(m->g, rname, m->err), m->err));
    TRY(nnbr_infer(m, r));
    gir_node *n;
    TRY(gir_graph_add_node(m->g, m->name, GIR_OP_Expand, 1, 1, &n, m->err));
    n->in[0] = r->out[0];
    TRY(nnbr_set_ints(m, n, "shape", to, (size_t)rx));
    /* what the writer needs to make the one function again */
    TRY(gir_attrs_set_string(m->g, &n->meta, NNB_META_TYPE, "BroadcastTo", m->err));
    TRY(gir_attrs_set_string(m->g, &n->meta, NNB_META_BROADCAST_X, x->name, m->err));
    TRY(nnbr_meta_int(m, n, NNB_META_AXIS, p->axis));
    TRY(gir_node_set_output(m->g, n, 0, m->out[0], m->err));
    m->first = n;
    return nnbr_infer(m, n);
}

gir_status nnbr_map_tile(mctx *m, bool *mapped)
{
    static const Nnabla__TileParameter zero = NNABLA__TILE_PARAMETER__INIT;
    const Nnabla__TileParameter *p = PARAM(m, TILE_PARAM, tile_param, zero);
    int r = nnbr_unary_rank(m);
    if (r < 0 || p->n_reps > (size_t)r || p->n_reps == 0)
        return GIR_OK;
    int64_t reps[GIR_MAX_RANK];
    size_t lead = (size_t)r - p->n_reps;
    for (int i = 0; i < r; i++)
        reps[i] = (size_t)i < lead ? 1 : p->reps[(size_t)i - lead];
    return nnbr_map_ints(m, mapped, GIR_OP_Tile, "repeats", reps, (size_t)r);
}

gir_status nnbr_map_gather(mctx *m, bool *mapped)
{
    static const Nnabla__GatherParameter zero = NNABLA__GATHER_PARAMETER__INIT;
    const Nnabla__GatherParameter *p = PARAM(m, GATHER_PARAM, gather_param, zero);
    if (!nnbr_arity(m, 2, 2, 1, 1) || p->batch_dims != 0)
        return GIR_OK;
    return nnbr_map_int(m, mapped, GIR_OP_Gather, "axis", p->axis);
}

/* nnabla's dropout is inverted (training scales by 1/(1-p)), so inference
 * is the identity, as for ONNX's. */
gir_status nnbr_map_dropout(mctx *m, bool *mapped)
{
    static const Nnabla__DropoutParameter zero = NNABLA__DROPOUT_PARAMETER__INIT;
    const Nnabla__DropoutParameter *p = PARAM(m, DROPOUT_PARAM, dropout_param, zero);
    if (!nnbr_arity(m, 1, 1, 1, 1) || !(p->p >= 0.0 && p->p < 1.0))
        return GIR_OK;
    gir_node *n;
    TRY(nnbr_map_to(m, mapped, GIR_OP_Dropout, &n));
    TRY(nnbr_set_float(m, n, "ratio", p->p));
    TRY(nnbr_set_int(m, n, "seed", p->seed));
    return nnbr_infer(m, n);
}

/* A Cast node "<function>/<suffix>" of value x to the type named `to`,
 * into value out (or, when out < 0, into a new value of the node's name);
 * returns the value written. */
gir_status nnbr_cast_to(mctx *m, const char *suffix, int32_t x, const char *to, int32_t out, int32_t *made)
{
    const char *nm = gir_arena_printf(&m->g->arena, "%s/%s", m->name, suffix);
    if (!nm)
        return gir_nomem(m->err);
    gir_node *c;
    TRY(gir_graph_add_node(m->g, gir_graph_unique_node_name(m->g, nm, m->err), GIR_OP_Cast, 1, 1, &c, m->err));
    c->in[0] = x;
    TRY(nnbr_set_string(m, c, "to", to));
    if (out >= 0)
        TRY(gir_node_set_output(m->g, c, 0, out, m->err));
    else
        TRY(gir_node_make_output(m->g, c, 0, gir_graph_unique_value_name(m->g, nm, m->err), m->err));
    TRY(nnbr_infer(m, c));
    *made = c->out[0];
    return GIR_OK;
}

/* Where(condition, x_true, x_false): nnabla's condition is a float array. */
gir_status nnbr_map_where(mctx *m, bool *mapped)
{
    if (m->n_in != 3 || m->n_out != 1)
        return GIR_OK;
    *mapped = true;
    int32_t cond;
    TRY(nnbr_cast_to(m, "condition_bool", m->in[0], "bool", -1, &cond));
    gir_node *n;
    TRY(gir_graph_add_node(m->g, m->name, GIR_OP_Where, 3, 1, &n, m->err));
    n->in[0] = cond;
    n->in[1] = m->in[1];
    n->in[2] = m->in[2];
    TRY(gir_node_set_output(m->g, n, 0, m->out[0], m->err));
    m->first = n;
    return nnbr_infer(m, n);
}

/* The engine's access to a function's parameter message (gir_attr_io):
 * an absent message or field reads as dflt. */
static gir_status param_get(void *ctx, const char *key, gir_attr_conv conv, double dflt, int64_t *i, double *f,
                            gir_error *err)
{
    const mctx *m = ctx;
    (void)err;
    *i = (int64_t)dflt;
    *f = dflt;
    const ProtobufCMessage *pm = nnbr_param_msg(m);
    if (pm)
        nnb_field_get(pm, key, i, f);
    /* nnabla computes in float32: a number means its float32 value, held
     * as the shortest double that prints it (as nnbr_set_float does) */
    if (conv == GIR_CONV_FLOAT)
        *f = gir_float_widen((float)*f);
    return GIR_OK;
}

gir_status nnbr_map_plain(mctx *m, bool *mapped, const gir_op_map *pm)
{
    if (m->n_in != pm->n_in || m->n_out != 1)
        return GIR_OK;
    /* a parameter message, when set, must be the one of the function's
     * type (<Type>Parameter) */
    const ProtobufCFieldDescriptor *fd = nnb_param_field(m->f);
    if (fd && fd != nnb_param_field_of_type(m->f->type))
        return GIR_OK;
    *mapped = true;
    /* an Identity keeps its variable's values: of an index (ArgMax's
     * int64, an integer parameter) it is that index, not a float32 */
    if (pm->op == GIR_OP_Identity && m->g->values[m->in[0]]->dtype != GIR_DT_UNKNOWN)
        m->g->values[m->out[0]]->dtype = m->g->values[m->in[0]]->dtype;
    gir_node *n;
    TRY(nnbr_simple(m, pm->op, &n));
    gir_attr_io io = { m, param_get, NULL };
    TRY(gir_map_read_attrs(pm, &io, m->g, &n->attrs, m->err));
    /* a message's inplace (LeakyReLU's) is a memory hint kept as meta */
    if (nnbr_param_int(m, "inplace"))
        TRY(nnbr_meta_int(m, n, NNB_META_INPLACE, 1));
    return nnbr_infer(m, n);
}

