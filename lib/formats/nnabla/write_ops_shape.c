/* Canonical operators -> NNabla functions (writing), continued: concat,
 * PReLU, arg-reductions, stack, split, slice, pad, tile, expand, gather,
 * dropout, interpolate, resize, matmul, LRN, comparisons, casts, and
 * opaque functions written back as they were read. */
#include "write.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NNB_NONE_SENTINEL 0x7fffffff

void nnbw_emit_concat(wctx *w, const gir_node *n)
{
    Nnabla__Function *f = nnbw_simple_fn(w, n, "Concatenate");
    nnbw_fn_param_int(w, f, "concatenate_param", "axis", gir_node_int(n, "axis", 0));
}

static Nnabla__Function *chain_fn(wctx *w, const gir_node *n, const char *type, const char *name, int32_t in,
                                  const char *in_name, const char *out_name);

/* PRelu: one shared slope, or a slope (C, 1, ..., 1) per channel of axis
 * rank(x) - rank(slope), which nnabla takes as (C,) with that base_axis
 * (a Reshape of the slope first). */
void nnbw_emit_prelu(wctx *w, const gir_node *n)
{
    const gir_value *s = nnbw_V(w, n->in[1]);
    const gir_value *x = nnbw_V(w, n->in[0]);
    int64_t c = s ? gir_shape_numel(&s->shape) : -1;
    int64_t base_axis = 1;
    const char *slope = NULL;
    int32_t sr = nnbw_root(w, n->in[1]);
    if (sr != n->in[1] && nnbw_V(w, sr) && nnbw_V(w, sr)->shape.rank == 1) {
        /* the slope is an absorbed Unsqueeze (axes 1..k) of a (C,) slope:
         * PReLU of channel axis 1 takes the (C,) itself */
        c = gir_shape_numel(&nnbw_V(w, sr)->shape);
    } else if (c != 1) {
        int rs = s ? s->shape.rank : -1, rx = x ? x->shape.rank : -1;
        bool ok = rs >= 1 && rx >= rs && c == s->shape.dims[0] && c >= 1;
        for (int i = 1; ok && i < rs; i++)
            ok = s->shape.dims[i] == 1;
        if (!ok || x->shape.dims[rx - rs] != c) {
            nnbw_refuse(w, n, GIR_E_UNSUPPORTED_ATTR, "PRelu with a slope that is neither one value nor one per channel");
            return;
        }
        base_axis = rx - rs;
        const int64_t *decl;
        bool declared_c = gir_attrs_get_ints(&s->meta, NNB_META_SHAPE, &decl) == 1 && decl[0] == c;
        if (rs != 1 && !declared_c) {
            gir_shape cs = { 1, { c } };
            slope = nnbw_extra_variable(w, n, "slope_channels", &cs, NULL);
            Nnabla__Function *rf = chain_fn(w, n, "Reshape", "slope_reshape", n->in[1], NULL, slope);
            Nnabla__ReshapeParameter *rp = nnbw_pb_new(w, &nnabla__reshape_parameter__descriptor);
            if (rp) {
                rp->shape = nnbw_pb_new(w, &nnabla__shape__descriptor);
                if (rp->shape)
                    rp->shape->n_dim = nnbw_set_ints(w, &rp->shape->dim, &c, 1);
                rp->inplace = 1;
            }
            nnbw_fn_param(w, rf, "reshape_param", rp);
        }
    }
    Nnabla__Function *f = nnbw_fn_new(w, n, "PReLU", true);
    nnbw_fn_in(w, f, n->in[0]);
    nnbw_fn_in_name(w, f, slope, n->in[1]);
    nnbw_fn_out(w, f, n->out[0]);
    nnbw_fn_param_int(w, f, "prelu_param", "base_axis", base_axis);
}

/* ArgMax / ArgMin: Max / Min with only_index over the one axis (nnabla
 * keeps the first of equal extremes, as select_last_index=0 does). */
void nnbw_emit_arg(wctx *w, const gir_node *n)
{
    if (gir_node_int(n, "select_last_index", 0)) {
        nnbw_refuse(w, n, GIR_E_UNSUPPORTED_ATTR, "%s with select_last_index=1 (nnabla gives the first index of ties)",
                    gir_op_name(n->op));
        return;
    }
    int64_t axis = gir_node_int(n, "axis", 0);
    int r = nnbw_rank(w, n->in[0]);
    if (axis < 0 && r >= 0)
        axis += r;
    if (axis < 0) {
        nnbw_refuse(w, n, GIR_E_UNSUPPORTED_ATTR, "%s of a negative axis on an input of unknown rank", gir_op_name(n->op));
        return;
    }
    bool max = n->op == GIR_OP_ArgMax;
    Nnabla__Function *f = nnbw_simple_fn(w, n, max ? "Max" : "Min");
    int64_t *ax = nnbw_dup_ints(w, &axis, 1);
    bool keep = gir_node_int(n, "keepdims", 1) != 0;
    if (max) {
        Nnabla__MaxParameter *p = nnbw_pb_new(w, &nnabla__max_parameter__descriptor);
        if (p) {
            p->axes = ax, p->n_axes = ax ? 1 : 0, p->keep_dims = keep, p->only_index = 1;
            ax = NULL;
        }
        nnbw_fn_param(w, f, "max_param", p);
    } else {
        Nnabla__MinParameter *p = nnbw_pb_new(w, &nnabla__min_parameter__descriptor);
        if (p) {
            p->axes = ax, p->n_axes = ax ? 1 : 0, p->keep_dims = keep, p->only_index = 1;
            ax = NULL;
        }
        nnbw_fn_param(w, f, "min_param", p);
    }
    free(ax);
}

void nnbw_emit_stack(wctx *w, const gir_node *n)
{
    Nnabla__Function *f = nnbw_simple_fn(w, n, "Stack");
    int64_t axis = gir_node_int(n, "axis", 0);
    int r = nnbw_rank(w, n->in[0]);
    if (axis < 0 && r >= 0)
        axis += r + 1;
    nnbw_fn_param_int(w, f, "stack_param", "axis", axis);
}

/* Is this Split an unstack (parts of 1, each squeezed by a Squeeze)? */
static bool split_is_unstack(const wctx *w, const gir_node *n, int64_t *axis_out)
{
    int r = nnbw_rank(w, n->in[0]);
    int64_t axis = gir_node_int(n, "axis", 0);
    if (axis < 0 && r >= 0)
        axis += r;
    if (axis < 0)
        return false;
    const int64_t *split;
    ptrdiff_t ks = gir_attrs_get_ints(&n->attrs, "split", &split);
    for (ptrdiff_t i = 0; i < ks; i++)
        if (split[i] != 1)
            return false;
    if (ks < 0 && r >= 0 && (r <= axis || nnbw_V(w, n->in[0])->shape.dims[axis] != (int64_t)n->n_out))
        return false;
    for (size_t i = 0; i < n->n_out; i++) {
        int32_t o = n->out[i];
        if (!nnbw_single_use(w, o))
            return false;
        /* the consumer */
        const gir_node *c = NULL;
        for (size_t j = 0; j < w->g->n_nodes && !c; j++) {
            const gir_node *m = w->g->nodes[j];
            for (size_t k = 0; k < m->n_in; k++)
                if (m->in[k] == o)
                    c = m;
        }
        if (!c || c->op != GIR_OP_Squeeze)
            return false;
        const int64_t *ax;
        ptrdiff_t ka = gir_attrs_get_ints(&c->attrs, "axes", &ax);
        if (ka != 1 || !(ax[0] == axis || (r >= 0 && ax[0] + r == axis)))
            return false;
    }
    *axis_out = axis;
    return true;
}

static void emit_slices(wctx *w, const gir_node *n, int64_t axis)
{
    const gir_value *x = nnbw_V(w, n->in[0]);
    int r = x ? x->shape.rank : -1;
    if (axis < 0 && r >= 0)
        axis += r;
    if (r < 0 || axis < 0 || axis >= r) {
        nnbw_refuse(w, n, GIR_E_UNSUPPORTED_ATTR, "Split of an input of unknown rank");
        return;
    }
    const int64_t *split;
    ptrdiff_t ks = gir_attrs_get_ints(&n->attrs, "split", &split);
    int64_t dim = x->shape.dims[axis];
    if (ks < 0 && (dim < 0 || dim % (int64_t)n->n_out)) {
        nnbw_refuse(w, n, GIR_E_UNSUPPORTED_ATTR, "Split into equal parts of an unknown or uneven dimension");
        return;
    }
    int64_t at = 0;
    size_t k = (size_t)(r - axis);
    for (size_t i = 0; i < n->n_out; i++) {
        int64_t size = ks >= 0 ? split[i] : dim / (int64_t)n->n_out;
        char suffix[48];
        snprintf(suffix, sizeof suffix, "Slice_%zu", i);
        Nnabla__Function *f = nnbw_fn_new(w, n, suffix, i == 0);
        if (f) {
            nnbw_str_free(f->type);
            f->type = nnbw_sdup(w, "Slice");
        }
        nnbw_fn_in(w, f, n->in[0]);
        nnbw_fn_out(w, f, n->out[i]);
        Nnabla__SliceParameter *p = nnbw_pb_new(w, &nnabla__slice_parameter__descriptor);
        if (p) {
            int64_t st[GIR_MAX_RANK], sp[GIR_MAX_RANK], se[GIR_MAX_RANK];
            for (size_t j = 0; j < k; j++) {
                st[j] = j == 0 ? at : 0;
                sp[j] = j == 0 ? at + size : NNB_NONE_SENTINEL;
                se[j] = 1;
            }
            p->n_start = nnbw_set_ints(w, &p->start, st, k);
            p->n_stop = nnbw_set_ints(w, &p->stop, sp, k);
            p->n_step = nnbw_set_ints(w, &p->step, se, k);
        }
        nnbw_fn_param(w, f, "slice_param", p);
        at += size;
    }
}

void nnbw_emit_split(wctx *w, const gir_node *n)
{
    int64_t axis;
    if (!split_is_unstack(w, n, &axis)) {
        emit_slices(w, n, gir_node_int(n, "axis", 0));
        return;
    }
    Nnabla__Function *f = nnbw_fn_new(w, n, "Split", true);
    nnbw_fn_in(w, f, n->in[0]);
    for (size_t i = 0; i < n->n_out; i++) {
        /* the Squeeze after each part writes the function's output */
        for (size_t j = 0; j < w->g->n_nodes; j++) {
            const gir_node *m = w->g->nodes[j];
            if (m->op == GIR_OP_Squeeze && m->n_in == 1 && m->in[0] == n->out[i]) {
                nnbw_fn_out(w, f, m->out[0]);
                w->node_done[j] = 1;
                break;
            }
        }
    }
    nnbw_fn_param_int(w, f, "split_param", "axis", axis);
}

void nnbw_emit_slice(wctx *w, const gir_node *n)
{
    int r = nnbw_rank(w, n->in[0]);
    const int64_t *starts, *ends, *axes, *steps;
    ptrdiff_t ns = gir_attrs_get_ints(&n->attrs, "starts", &starts);
    ptrdiff_t ne = gir_attrs_get_ints(&n->attrs, "ends", &ends);
    ptrdiff_t na = gir_attrs_get_ints(&n->attrs, "axes", &axes);
    ptrdiff_t nt = gir_attrs_get_ints(&n->attrs, "steps", &steps);
    if (r < 0 || ns < 0 || ne != ns || (na >= 0 && na != ns) || (nt >= 0 && nt != ns)) {
        nnbw_refuse(w, n, GIR_E_UNSUPPORTED_ATTR, "Slice of an input of unknown rank or with mismatched lists");
        return;
    }
    /* every sliced axis walked whole, backwards: Flip */
    bool flip = nt == ns && ns > 0;
    int64_t faxes[GIR_MAX_RANK];
    for (ptrdiff_t i = 0; flip && i < ns; i++) {
        int64_t a = na >= 0 ? axes[i] : i;
        if (a < 0)
            a += r;
        int64_t dim = a >= 0 && a < r ? nnbw_V(w, n->in[0])->shape.dims[a] : -1;
        flip = a >= 0 && a < r && steps[i] == -1 && (starts[i] == -1 || (dim >= 0 && starts[i] >= dim - 1)) &&
               (ends[i] <= -(int64_t)NNB_NONE_SENTINEL || (dim >= 0 && ends[i] < -dim));
        faxes[i] = a;
    }
    if (flip) {
        Nnabla__Function *f = nnbw_simple_fn(w, n, "Flip");
        Nnabla__FlipParameter *p = nnbw_pb_new(w, &nnabla__flip_parameter__descriptor);
        if (p)
            p->n_axes = nnbw_set_ints(w, &p->axes, faxes, (size_t)ns);
        nnbw_fn_param(w, f, "flip_param", p);
        return;
    }
    int64_t st[GIR_MAX_RANK], sp[GIR_MAX_RANK], se[GIR_MAX_RANK];
    bool set[GIR_MAX_RANK] = { false };
    int first = r;
    for (int i = 0; i < r; i++) {
        st[i] = 0;
        sp[i] = NNB_NONE_SENTINEL;
        se[i] = 1;
    }
    for (ptrdiff_t i = 0; i < ns; i++) {
        int64_t a = na >= 0 ? axes[i] : i;
        if (a < 0)
            a += r;
        int64_t step = nt >= 0 ? steps[i] : 1;
        if (a < 0 || a >= r || set[a] || step == 0) {
            nnbw_refuse(w, n, GIR_E_UNSUPPORTED_ATTR, "Slice with invalid axes or steps");
            return;
        }
        set[a] = true;
        int64_t dim = nnbw_V(w, n->in[0])->shape.dims[a];
        int64_t e = ends[i];
        if (step > 0 && (e >= NNB_NONE_SENTINEL || (dim >= 0 && e >= dim)))
            e = NNB_NONE_SENTINEL;
        else if (e >= NNB_NONE_SENTINEL || e <= -(int64_t)NNB_NONE_SENTINEL || (dim >= 0 && step < 0 && e < -dim)) {
            nnbw_refuse(w, n, GIR_E_UNSUPPORTED_ATTR, "Slice walking backwards past the first element");
            return;
        }
        int64_t s0 = starts[i];
        if (dim >= 0 && s0 >= dim)
            s0 = step > 0 ? dim : dim - 1;
        if (dim >= 0 && s0 < -dim)
            s0 = 0;
        if (s0 >= NNB_NONE_SENTINEL || s0 <= -(int64_t)NNB_NONE_SENTINEL) {
            nnbw_refuse(w, n, GIR_E_UNSUPPORTED_ATTR, "Slice start outside the range nnabla stores");
            return;
        }
        st[a] = s0;
        sp[a] = e;
        se[a] = step;
        if (a < first)
            first = (int)a;
    }
    if (first == r)
        first = r - 1;
    if (first < 0) {
        nnbw_simple_fn(w, n, "Identity");
        return;
    }
    size_t k = (size_t)(r - first);
    Nnabla__Function *f = nnbw_simple_fn(w, n, "Slice");
    Nnabla__SliceParameter *p = nnbw_pb_new(w, &nnabla__slice_parameter__descriptor);
    if (p) {
        p->n_start = nnbw_set_ints(w, &p->start, st + first, k);
        p->n_stop = nnbw_set_ints(w, &p->stop, sp + first, k);
        p->n_step = nnbw_set_ints(w, &p->step, se + first, k);
    }
    nnbw_fn_param(w, f, "slice_param", p);
}

void nnbw_emit_pad(wctx *w, const gir_node *n)
{
    int r = nnbw_rank(w, n->in[0]);
    const int64_t *pads;
    ptrdiff_t np = gir_attrs_get_ints(&n->attrs, "pads", &pads);
    const char *mode = gir_node_string(n, "mode", "constant");
    const char *nm = strcmp(mode, "constant") == 0 ? "constant"
                     : strcmp(mode, "reflect") == 0 ? "reflect"
                     : strcmp(mode, "edge") == 0    ? "repeat"
                                                    : NULL;
    if (r < 0 || np != 2 * r || !nm) {
        nnbw_refuse(w, n, GIR_E_UNSUPPORTED_ATTR, "Pad with mode %s or pads of the wrong length", mode);
        return;
    }
    int first = r;
    for (int i = 0; i < r; i++) {
        if (pads[i] < 0 || pads[r + i] < 0) {
            nnbw_refuse(w, n, GIR_E_UNSUPPORTED_ATTR, "Pad with negative pads");
            return;
        }
        if ((pads[i] || pads[r + i]) && i < first)
            first = i;
    }
    if (first == r)
        first = r > 0 ? r - 1 : 0;
    size_t k = (size_t)(r - first);
    int64_t pw[2 * GIR_MAX_RANK];
    for (size_t i = 0; i < k; i++) {
        pw[2 * i] = pads[(size_t)first + i];
        pw[2 * i + 1] = pads[(size_t)r + (size_t)first + i];
    }
    Nnabla__Function *f = nnbw_simple_fn(w, n, "Pad");
    Nnabla__PadParameter *p = nnbw_pb_new(w, &nnabla__pad_parameter__descriptor);
    if (p) {
        p->n_pad_width = nnbw_set_ints(w, &p->pad_width, pw, 2 * k);
        nnbw_str_free(p->mode);
        p->mode = nnbw_sdup(w, nm);
        p->constant_value = (float)gir_node_float(n, "constant_value", 0.0);
    }
    nnbw_fn_param(w, f, "pad_param", p);
}

void nnbw_emit_tile(wctx *w, const gir_node *n)
{
    const int64_t *reps;
    ptrdiff_t k = gir_attrs_get_ints(&n->attrs, "repeats", &reps);
    if (k < 0) {
        nnbw_refuse(w, n, GIR_E_UNSUPPORTED_ATTR, "Tile without repeats");
        return;
    }
    Nnabla__Function *f = nnbw_simple_fn(w, n, "Tile");
    Nnabla__TileParameter *p = nnbw_pb_new(w, &nnabla__tile_parameter__descriptor);
    if (p)
        p->n_reps = nnbw_set_ints(w, &p->reps, reps, (size_t)k);
    nnbw_fn_param(w, f, "tile_param", p);
}

void nnbw_emit_expand(wctx *w, const gir_node *n, size_t ni)
{
    int32_t rs = w->fuse_src[ni];
    if (rs >= 0) {
        /* nnabla's BroadcastTo(x, y, axis), when x is written before it */
        const gir_node *r = w->g->nodes[rs];
        int32_t xi = gir_graph_value_index(w->g, gir_attrs_get_string(&n->meta, NNB_META_BROADCAST_X, ""));
        int32_t xp = xi >= 0 ? w->g->values[xi]->producer : -1;
        if (xi >= 0 && (xp < 0 || w->emitted[xp])) {
            Nnabla__Function *f = nnbw_fn_new(w, n, "BroadcastTo", true);
            nnbw_fn_in(w, f, xi);
            nnbw_fn_in(w, f, r->in[0]);
            nnbw_fn_out(w, f, n->out[0]);
            nnbw_fn_param_int(w, f, "broadcast_to_param", "axis", gir_attrs_get_int(&n->meta, NNB_META_AXIS, -1));
            return;
        }
        nnbw_emit_node(w, (size_t)rs);
        w->emitted[rs] = 1;
        w->cur = n;
    }
    const gir_value *x = nnbw_V(w, n->in[0]);
    const int64_t *shape;
    ptrdiff_t k = gir_attrs_get_ints(&n->attrs, "shape", &shape);
    if (!x || x->shape.rank < 0 || k != x->shape.rank) {
        nnbw_refuse(w, n, GIR_E_UNSUPPORTED_ATTR, "Expand that changes the rank");
        return;
    }
    int64_t t[GIR_MAX_RANK];
    for (ptrdiff_t i = 0; i < k; i++) {
        int64_t d = x->shape.dims[i];
        if (shape[i] == 1 || shape[i] == d)
            t[i] = d < 0 ? -1 : d;
        else if (d == 1)
            t[i] = shape[i];
        else {
            nnbw_refuse(w, n, GIR_E_UNSUPPORTED_ATTR, "Expand of a dimension that is not 1");
            return;
        }
    }
    Nnabla__Function *f = nnbw_simple_fn(w, n, "Broadcast");
    Nnabla__BroadcastParameter *p = nnbw_pb_new(w, &nnabla__broadcast_parameter__descriptor);
    if (p)
        p->shape = nnbw_shape_msg(w, t, (size_t)k);
    nnbw_fn_param(w, f, "broadcast_param", p);
}

void nnbw_emit_gather(wctx *w, const gir_node *n)
{
    int64_t axis = gir_node_int(n, "axis", 0);
    if (axis == 0 && strcmp(gir_attrs_get_string(&n->meta, NNB_META_TYPE, ""), "Embed") == 0) {
        Nnabla__Function *f = nnbw_fn_new(w, n, "Embed", true);
        nnbw_fn_in(w, f, n->in[1]);
        nnbw_fn_in(w, f, n->in[0]);
        nnbw_fn_out(w, f, n->out[0]);
        return;
    }
    Nnabla__Function *f = nnbw_simple_fn(w, n, "Gather");
    nnbw_fn_param_int(w, f, "gather_param", "axis", axis);
}

void nnbw_emit_dropout(wctx *w, const gir_node *n)
{
    if (gir_node_int(n, "training_mode", 0)) {
        nnbw_refuse(w, n, GIR_E_UNSUPPORTED_ATTR, "Dropout in training mode");
        return;
    }
    if (n->n_out > 1 && n->out[1] >= 0 && (w->uses[n->out[1]] || w->is_output[n->out[1]])) {
        nnbw_refuse(w, n, GIR_E_UNSUPPORTED_ATTR, "Dropout with its mask output used");
        return;
    }
    Nnabla__Function *f = nnbw_unary_fn(w, n, "Dropout");
    Nnabla__DropoutParameter *p = nnbw_pb_new(w, &nnabla__dropout_parameter__descriptor);
    if (p) {
        p->p = gir_node_float(n, "ratio", 0.5);
        p->seed = gir_node_int(n, "seed", -1);
    }
    nnbw_fn_param(w, f, "dropout_param", p);
}

/* Resize of trailing axes -> Interpolate (see map_interpolate for the
 * coordinate modes nnabla has). */
static void emit_interpolate(wctx *w, const gir_node *n)
{
    const gir_value *x = nnbw_V(w, n->in[0]), *y = nnbw_V(w, n->out[0]);
    const char *mode = gir_node_string(n, "mode", "nearest");
    const char *coord = gir_node_string(n, "coordinate_transformation_mode", "half_pixel");
    const char *nmode = gir_node_string(n, "nearest_mode", "round_prefer_floor");
    bool nearest = strcmp(mode, "nearest") == 0, linear = strcmp(mode, "linear") == 0;
    bool ac = false, hp = false, hpnn = false, ok = nearest || linear;
    if (ok && nearest && strcmp(nmode, "floor") != 0)
        ok = false;
    if (ok && strcmp(coord, "align_corners") == 0)
        ac = true;
    else if (ok && (strcmp(coord, "half_pixel") == 0 || (linear && strcmp(coord, "pytorch_half_pixel") == 0)))
        hp = true;
    else if (ok && nearest && strcmp(coord, "tf_half_pixel_for_nn") == 0)
        hpnn = true;
    else if (!ok || strcmp(coord, "asymmetric") != 0)
        ok = false;
    int r = x ? x->shape.rank : -1;
    if (ok && (!y || y->shape.rank != r || r < 1))
        ok = false;
    /* the leading axes keep their size; the rest are resized */
    int first = 0;
    while (ok && first < r - 1 && x->shape.dims[first] >= 0 && x->shape.dims[first] == y->shape.dims[first])
        first++;
    for (int i = first; ok && i < r; i++)
        ok = y->shape.dims[i] >= 1;
    /* pytorch_half_pixel equals half_pixel only where no output size is 1 */
    for (int i = first; ok && strcmp(coord, "pytorch_half_pixel") == 0 && i < r; i++)
        ok = y->shape.dims[i] > 1;
    if (!ok) {
        nnbw_refuse(w, n, GIR_E_UNSUPPORTED_ATTR,
                    "Resize of mode %s, coordinates %s%s%s (nnabla interpolates linearly or by the floor of the "
                    "align_corners, asymmetric, half_pixel or tf_half_pixel_for_nn coordinate, trailing axes of known "
                    "output size)",
                    mode, coord, nearest ? ", nearest_mode " : "", nearest ? nmode : "");
        return;
    }
    Nnabla__Function *f = nnbw_unary_fn(w, n, "Interpolate");
    Nnabla__InterpolateParameter *p = nnbw_pb_new(w, &nnabla__interpolate_parameter__descriptor);
    if (p) {
        p->n_output_size = nnbw_set_ints(w, &p->output_size, y->shape.dims + first, (size_t)(r - first));
        nnbw_str_free(p->mode);
        p->mode = gir_strdupf("%s", nearest ? "nearest" : "linear");
        if (!p->mode)
            w->failed_alloc = true;
        p->align_corners = ac;
        p->half_pixel = hp;
        p->half_pixel_for_nn = hpnn;
    }
    nnbw_fn_param(w, f, "interpolate_param", p);
}

void nnbw_emit_resize(wctx *w, const gir_node *n)
{
    const gir_value *x = nnbw_V(w, n->in[0]), *y = nnbw_V(w, n->out[0]);
    int r = x ? x->shape.rank : -1;
    const double *scales;
    ptrdiff_t nsc = gir_attrs_get_floats(&n->attrs, "scales", &scales);
    int64_t k[GIR_MAX_RANK];
    bool ok = r > 0 && strcmp(gir_node_string(n, "mode", "nearest"), "nearest") == 0 &&
              strcmp(gir_node_string(n, "coordinate_transformation_mode", "half_pixel"), "asymmetric") == 0 &&
              strcmp(gir_node_string(n, "nearest_mode", "round_prefer_floor"), "floor") == 0;
    for (int i = 0; ok && i < r; i++) {
        double sc;
        if (nsc == r)
            sc = scales[i];
        else if (y && y->shape.rank == r && x->shape.dims[i] > 0 && y->shape.dims[i] >= 0 &&
                 y->shape.dims[i] % x->shape.dims[i] == 0)
            sc = (double)(y->shape.dims[i] / x->shape.dims[i]);
        else
            sc = -1;
        ok = sc >= 1 && sc == floor(sc) && sc < 1e9;
        k[i] = ok ? (int64_t)sc : 0;
    }
    if (!ok) {
        emit_interpolate(w, n);
        return;
    }
    int first = 0;
    while (first < r - 1 && k[first] == 1)
        first++;
    Nnabla__Function *f = nnbw_unary_fn(w, n, "Unpooling");
    Nnabla__UnpoolingParameter *p = nnbw_pb_new(w, &nnabla__unpooling_parameter__descriptor);
    if (p)
        p->kernel = nnbw_shape_msg(w, k + first, (size_t)(r - first));
    nnbw_fn_param(w, f, "unpooling_param", p);
}

void nnbw_emit_matmul(wctx *w, const gir_node *n)
{
    int ra = nnbw_rank(w, n->in[0]), rb = nnbw_rank(w, n->in[1]);
    if (ra < 2 || ra != rb) {
        nnbw_refuse(w, n, GIR_E_UNSUPPORTED_ATTR, "MatMul of inputs with ranks %d and %d", ra, rb);
        return;
    }
    Nnabla__Function *f = nnbw_simple_fn(w, n, "BatchMatmul");
    nnbw_fn_param(w, f, "batch_matmul_param", nnbw_pb_new(w, &nnabla__batch_matmul_parameter__descriptor));
}

void nnbw_emit_opaque(wctx *w, const gir_node *n)
{
    /* NNabla has no form for another format's operator (no allow-opaque). */
    if (gir_opaque_policy(n, "nnabla", false) == GIR_OPAQUE_REFUSE) {
        const char *why = gir_node_opaque_why(n);
        nnbw_refuse(w, n, GIR_E_UNSUPPORTED_OP, "%s (an operator of format %s%s%s)", n->opaque_op ? n->opaque_op : "?",
                    n->opaque_format ? n->opaque_format : "?", why ? ": " : "", why ? why : "");
        return;
    }
    /* the parameter message, kept as text under its field name */
    const ProtobufCFieldDescriptor *fd = NULL;
    const char *text = NULL;
    for (size_t i = 0; i < n->attrs.n; i++) {
        const gir_attr *a = &n->attrs.items[i];
        fd = nnb_param_field_by_name(a->name);
        if (fd && a->type == GIR_ATTR_STRING) {
            text = a->u.s;
            break;
        }
        fd = NULL;
    }
    ProtobufCMessage *pm = NULL;
    if (fd) {
        gir_error e = GIR_ERROR_INIT;
        if (gir_pbtext_parse(fd->descriptor, text, strlen(text), &pm, &e)) {
            nnbw_refuse(w, n, GIR_E_UNSUPPORTED_ATTR, "%s with a malformed %s (%s)", n->opaque_op, fd->name,
                        e.message ? e.message : "?");
            gir_error_clear(&e);
            return;
        }
    }
    Nnabla__Function *f = nnbw_simple_fn(w, n, n->opaque_op);
    if (pm)
        nnbw_fn_param(w, f, fd->name, pm);
    /* the function's fields of a newer schema, as the text they were */
    const gir_attr *u = gir_attrs_find(&n->attrs, NNB_ATTR_UNKNOWN);
    if (f && u && u->type == GIR_ATTR_STRING) {
        gir_error e = GIR_ERROR_INIT;
        if (gir_pbtext_merge(u->u.s, strlen(u->u.s), &f->base, &e)) {
            nnbw_refuse(w, n, GIR_E_UNSUPPORTED_ATTR, "%s with malformed fields of a newer schema (%s)", n->opaque_op,
                        e.message ? e.message : "?");
            gir_error_clear(&e);
        }
    }
}

/* One function of a chain a node becomes: "<node>/<name>", input `in`
 * (a value, or when in < 0 the variable in_name), output the new variable
 * out_name (or the node's output when out_name is NULL). */
static Nnabla__Function *chain_fn(wctx *w, const gir_node *n, const char *type, const char *name, int32_t in,
                                  const char *in_name, const char *out_name)
{
    Nnabla__Function *f = nnbw_fn_new(w, n, type, false);
    if (f && name) {
        char *own = gir_strdupf("%s/%s", n->name, name);
        if (!own) {
            w->failed_alloc = true;
        } else {
            nnbw_str_free(f->name);
            f->name = own;
        }
    }
    if (in >= 0)
        nnbw_fn_in(w, f, in);
    else
        nnbw_fn_in_name(w, f, in_name, -1);
    nnbw_fn_out_name(w, f, out_name, n->out[0]);
    return f;
}

static void chain_scalar(wctx *w, const gir_node *n, const char *type, const char *name, int32_t in,
                         const char *in_name, const char *out_name, double v)
{
    Nnabla__Function *f = chain_fn(w, n, type, name, in, in_name, out_name);
    const char *field = NULL;
    ProtobufCMessage *pm = nnbw_scalar_msg(w, type, v, false, &field);
    nnbw_fn_param(w, f, field, pm);
}

static void chain_transpose(wctx *w, const gir_node *n, const char *name, const char *in_name,
                            const char *out_name, const int64_t *perm)
{
    Nnabla__Function *f = chain_fn(w, n, "Transpose", name, -1, in_name, out_name);
    Nnabla__TransposeParameter *p = nnbw_pb_new(w, &nnabla__transpose_parameter__descriptor);
    if (p)
        p->n_axes = nnbw_set_ints(w, &p->axes, perm, 4);
    nnbw_fn_param(w, f, "transpose_param", p);
}

/* LRN over the channels of (N, C, H, W), spelled as nnabla's own converter
 * does: x / (bias + alpha / size * sum of x^2 over the size channels around
 * each)^beta, the sum a SumPooling over (W, C) of the channel-last square.
 * nnabla pads symmetrically, so size must be odd (ONNX pads an even size
 * one more at the end). */
void nnbw_emit_lrn(wctx *w, const gir_node *n)
{
    const gir_value *x = nnbw_V(w, n->in[0]);
    int64_t size = gir_node_int(n, "size", 0);
    if (size < 1 || size % 2 == 0) {
        nnbw_refuse(w, n, GIR_E_UNSUPPORTED_ATTR, "LRN with an even size (%lld): nnabla pads symmetrically",
                    (long long)size);
        return;
    }
    if (!x || x->shape.rank < 0) {
        nnbw_refuse(w, n, GIR_E_UNSUPPORTED_ATTR, "LRN of an input of unknown rank: nnabla's form needs (N, C, H, W)");
        return;
    }
    if (x->shape.rank != 4) {
        nnbw_refuse(w, n, GIR_E_UNSUPPORTED_ATTR, "LRN of a %d-D input: nnabla's form needs (N, C, H, W)", x->shape.rank);
        return;
    }
    /* nnabla's converter computes the factors in float32 */
    float alpha = (float)gir_node_float(n, "alpha", 1e-4), beta = (float)gir_node_float(n, "beta", 0.75);
    float bias = (float)gir_node_float(n, "bias", 1.0);
    const int64_t *d = x->shape.dims;
    gir_shape nchw = x->shape, nhwc = { 4, { d[0], d[2], d[3], d[1] } };
    const char *sq = nnbw_extra_variable(w, n, "square", &nchw, NULL);
    const char *t0 = nnbw_extra_variable(w, n, "channel_last", &nhwc, NULL);
    const char *sum = nnbw_extra_variable(w, n, "window_sum", &nhwc, NULL);
    const char *t1 = nnbw_extra_variable(w, n, "channel_first", &nchw, NULL);
    const char *sc = nnbw_extra_variable(w, n, "scaled", &nchw, NULL);
    const char *bi = nnbw_extra_variable(w, n, "biased", &nchw, NULL);
    const char *dn = nnbw_extra_variable(w, n, "denominator", &nchw, NULL);
    if (!sq || !t0 || !sum || !t1 || !sc || !bi || !dn)
        return;
    static const int64_t to_last[4] = { 0, 2, 3, 1 }, to_first[4] = { 0, 3, 1, 2 };
    chain_scalar(w, n, "PowScalar", NULL, n->in[0], NULL, sq, 2.0);
    chain_transpose(w, n, NULL, sq, t0, to_last);
    Nnabla__Function *f = chain_fn(w, n, "SumPooling", NULL, -1, t0, sum);
    Nnabla__SumPoolingParameter *sp = nnbw_pb_new(w, &nnabla__sum_pooling_parameter__descriptor);
    if (sp) {
        const int64_t k[2] = { 1, size }, s1[2] = { 1, 1 }, pad[2] = { 0, (size - 1) / 2 };
        sp->kernel = nnbw_shape_msg(w, k, 2);
        sp->stride = nnbw_shape_msg(w, s1, 2);
        sp->ignore_border = true;
        sp->pad = nnbw_shape_msg(w, pad, 2);
    }
    nnbw_fn_param(w, f, "sum_pooling_param", sp);
    chain_transpose(w, n, "Transpose_1", sum, t1, to_first);
    chain_scalar(w, n, "MulScalar", NULL, -1, t1, sc, (double)(alpha / (float)size));
    chain_scalar(w, n, "AddScalar", NULL, -1, sc, bi, (double)bias);
    chain_scalar(w, n, "PowScalar", "PowScalar_1", -1, bi, dn, (double)beta);
    f = nnbw_fn_new(w, n, "Div2", true);
    nnbw_fn_in(w, f, n->in[0]);
    nnbw_fn_in_name(w, f, dn, -1);
    nnbw_fn_out(w, f, n->out[0]);
}

/* A comparison; with a float32 scalar constant as its second operand, the
 * *Scalar function (val: the exact double the file had, when it had one). */
void nnbw_emit_compare(wctx *w, const gir_node *n, const char *type)
{
    double c;
    const gir_value *x = nnbw_V(w, n->in[0]);
    if (n->n_in != 2 || !x || x->dtype != GIR_DT_F32 || !nnbw_scalar_const(w, n->in[1], &c) ||
        nnbw_V(w, n->in[1])->dtype != GIR_DT_F32) {
        nnbw_simple_fn(w, n, type);
        return;
    }
    char stype[32];
    snprintf(stype, sizeof stype, "%sScalar", type);
    nnbw_emit_scalar(w, n, stype, n->in[0], c, false);
}

/* nnabla has no bool: a bool value is a float variable holding 0/1, so a
 * Cast between bool and float32 is the identity (folded into a neighbour
 * by plan(), else an Identity function), and a Cast of floats to bool is
 * NotEqualScalar(0). */
void nnbw_emit_cast(wctx *w, const gir_node *n)
{
    const gir_value *x = nnbw_V(w, n->in[0]), *y = nnbw_V(w, n->out[0]);
    gir_dtype from = x ? x->dtype : GIR_DT_UNKNOWN, to = y ? y->dtype : GIR_DT_UNKNOWN;
    /* integers are float32 variables holding them: a widening, or a
     * narrowing of an index (ArgMax/ArgMin: below the axis length), keeps
     * every value */
    const gir_node *px = x && x->producer >= 0 ? w->g->nodes[x->producer] : NULL;
    bool index = px && (px->op == GIR_OP_ArgMax || px->op == GIR_OP_ArgMin);
    bool int_same = (from == GIR_DT_I32 && to == GIR_DT_I64) || (from == GIR_DT_I64 && to == GIR_DT_I32 && index);
    if (from == to || (from == GIR_DT_BOOL && to == GIR_DT_F32) || int_same) {
        nnbw_simple_fn(w, n, "Identity");
        return;
    }
    if (from == GIR_DT_F32 && to == GIR_DT_BOOL) {
        nnbw_emit_scalar(w, n, "NotEqualScalar", n->in[0], 0.0, false);
        return;
    }
    nnbw_refuse(w, n, GIR_E_UNSUPPORTED_ATTR, "Cast from %s to %s (nnabla computes in float32)", gir_dtype_name(from),
                gir_dtype_name(to));
}
