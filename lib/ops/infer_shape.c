/* Shape and dtype inference: reductions, shape and data movement. */
#include "opinfer.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* An inference whose output 0 has the dtype of input 0 and a shape made
 * from the shape xs of input 0 alone: SHAPE_INFER(op) { body } defines
 * infer_op over the body, which sets *o or fails. */
typedef gir_status (*shape_fn)(const gir_node *n, const ish *xs, ish *o, gir_error *err);

static gir_status infer_by_shape(gir_graph *g, gir_node *n, shape_fn f, gir_error *err)
{
    const gir_value *x;
    ish xs, o;
    TRY(oi_input_shape(g, n, 0, &x, &xs, err));
    TRY(f(n, &xs, &o, err));
    return oi_set_out(g, n, 0, x->dtype, &o, err);
}

#define SHAPE_INFER(op)                                                                     \
    static gir_status shape_##op(const gir_node *n, const ish *xs, ish *o, gir_error *err); \
    gir_status infer_##op(gir_graph *g, gir_node *n, gir_error *err)                       \
    {                                                                                       \
        return infer_by_shape(g, n, shape_##op, err);                                       \
    }                                                                                       \
    static gir_status shape_##op(const gir_node *n, const ish *xs, ish *o, gir_error *err)

/* The result where the input's shape does not tell the output's. */
static gir_status unknown_shape(ish *o)
{
    ish_unknown(o);
    return GIR_OK;
}

/* ==== reductions ============================================================ */

/* xs without the marked axes, or with size 1 there where keep. */
static void reduced_shape(const ish *xs, const bool *mark, bool keep, ish *o)
{
    ish_rank(o, 0);
    for (int i = 0; i < xs->s.rank; i++) {
        if (!mark[i])
            ish_push(o, xs->s.dims[i], xs->nm[i]);
        else if (keep)
            ish_push(o, 1, NULL);
    }
}

SHAPE_INFER(reduce)
{
    const int64_t *axes;
    ptrdiff_t na = gir_attrs_get_ints(&n->attrs, "axes", &axes);
    bool keep = gir_node_int(n, "keepdims", 1) != 0;
    bool noop = n->op == GIR_OP_ReduceSum && gir_node_int(n, "noop_with_empty_axes", 0) != 0;
    if (na <= 0 && noop) {
        *o = *xs;
        return GIR_OK;
    }
    if (xs->s.rank < 0)
        return unknown_shape(o);
    bool mark[GIR_MAX_RANK];
    if (na <= 0)
        for (int i = 0; i < GIR_MAX_RANK; i++)
            mark[i] = true;
    else
        TRY(oi_axes_mask(n, "axes", axes, na, xs->s.rank, mark, err));
    reduced_shape(xs, mark, keep, o);
    return GIR_OK;
}

gir_status infer_arg(gir_graph *g, gir_node *n, gir_error *err)
{
    const gir_value *x;
    ish xs, o;
    TRY(oi_input_shape(g, n, 0, &x, &xs, err));
    if (xs.s.rank < 0)
        return oi_set_unknown(g, n, 0, GIR_DT_I64, err);
    int a = 0;
    TRY(oi_norm_axis(n, "axis", gir_node_int(n, "axis", 0), xs.s.rank, false, &a, err));
    bool mark[GIR_MAX_RANK] = { false };
    mark[a] = true;
    reduced_shape(&xs, mark, gir_node_int(n, "keepdims", 1) != 0, &o);
    return oi_set_out(g, n, 0, GIR_DT_I64, &o, err);
}

/* ==== shape and data movement =============================================== */

SHAPE_INFER(Reshape)
{
    const int64_t *v;
    ptrdiff_t len;
    TRY(oi_need_ints(n, "shape", &v, &len, err));
    TRY(oi_rank_limit(n, len, err));
    bool allowzero = gir_node_int(n, "allowzero", 0) != 0, has_zero = false;
    int neg = -1;
    for (int i = 0; i < (int)len; i++) {
        if (v[i] == -1) {
            if (neg >= 0)
                return gir_fail(err, GIR_E_ATTRIBUTE, "Reshape shape has more than one -1");
            neg = i;
        } else if (v[i] < -1) {
            return gir_fail(err, GIR_E_ATTRIBUTE, "Reshape shape has value %lld; dimensions are -1, 0 or positive",
                            (ll)v[i]);
        } else if (v[i] == 0) {
            has_zero = true;
        }
    }
    if (allowzero && has_zero && neg >= 0)
        return gir_fail(err, GIR_E_ATTRIBUTE, "Reshape shape has both 0 and -1 while allowzero is 1");
    ish_rank(o, (int)len);
    for (int i = 0; i < (int)len; i++) {
        if (v[i] == 0 && !allowzero) {
            if (xs->s.rank >= 0 && i >= xs->s.rank)
                return gir_fail(err, GIR_E_ATTRIBUTE, "Reshape shape[%d] is 0 (copy the input dimension) but input %s "
                                "has rank %d", i, SHP(&xs->s), xs->s.rank);
            if (xs->s.rank >= 0) {
                o->s.dims[i] = xs->s.dims[i];
                o->nm[i] = xs->nm[i];
            }
        } else if (v[i] >= 0) {
            o->s.dims[i] = v[i];
        }
    }
    /* Element counts with the copied dimensions cancelled out on both sides. */
    bool copied[GIR_MAX_RANK] = { false }, in_ok = xs->s.rank >= 0, out_ok = true;
    for (int i = 0; i < (int)len && i < xs->s.rank; i++)
        copied[i] = v[i] == 0 && !allowzero;
    int64_t in_k = 1, out_k = 1;
    int unknown = 0, unknown_at = -1;
    for (int j = 0; in_ok && j < xs->s.rank; j++) {
        if (copied[j])
            continue;
        if (xs->s.dims[j] < 0) {
            unknown++;
            unknown_at = j;
        } else if (!mul_ok(in_k, xs->s.dims[j], &in_k)) {
            in_ok = false;
        }
    }
    for (int i = 0; i < (int)len; i++)
        if (i != neg && !(i < GIR_MAX_RANK && copied[i]) && !mul_ok(out_k, v[i], &out_k))
            out_ok = false;
    if (in_ok && out_ok && unknown == 0 && neg < 0 && in_k != out_k) {
        int64_t in_n = oi_dims_product(&xs->s, 0, xs->s.rank), out_n = oi_dims_product(&o->s, 0, o->s.rank);
        if (in_n >= 0 && out_n >= 0)
            return gir_fail(err, GIR_E_SHAPE, "Reshape cannot reshape %s (%lld elements) to %s (%lld elements)",
                            SHP(&xs->s), (ll)in_n, SHP(&o->s), (ll)out_n);
        return gir_fail(err, GIR_E_SHAPE, "Reshape cannot reshape %s to %s", SHP(&xs->s), SHP(&o->s));
    }
    if (in_ok && out_ok && unknown == 0 && neg >= 0) {
        if (out_k == 0 || in_k % out_k != 0) {
            int64_t in_n = oi_dims_product(&xs->s, 0, xs->s.rank);
            if (in_n >= 0)
                return gir_fail(err, GIR_E_SHAPE, "Reshape cannot reshape %s (%lld elements) to %s", SHP(&xs->s),
                                (ll)in_n, SHP(&o->s));
            return gir_fail(err, GIR_E_SHAPE, "Reshape cannot reshape %s to %s", SHP(&xs->s), SHP(&o->s));
        }
        o->s.dims[neg] = in_k / out_k;
    } else if (in_ok && out_ok && unknown == 1 && neg >= 0 && out_k > 0 && in_k == out_k) {
        /* The -1 is the one unknown input dimension: it passes through with its name. */
        o->nm[neg] = xs->nm[unknown_at];
    }
    return GIR_OK;
}

/* The product of dims [from, to) as one dimension; a single dimension keeps its name. */
static gir_status merged_dim(const gir_node *n, const ish *xs, int from, int to, ish *o, gir_error *err)
{
    int64_t p = oi_dims_product(&xs->s, from, to);
    if (p == -2)
        return oi_too_large(n, err);
    ish_push(o, p, to - from == 1 ? xs->nm[from] : NULL);
    return GIR_OK;
}

SHAPE_INFER(Flatten)
{
    ish_rank(o, 2);
    if (xs->s.rank >= 0) {
        int a = 0;
        TRY(oi_norm_axis(n, "axis", gir_node_int(n, "axis", 1), xs->s.rank, true, &a, err));
        ish_rank(o, 0);
        TRY(merged_dim(n, xs, 0, a, o, err));
        TRY(merged_dim(n, xs, a, xs->s.rank, o, err));
    }
    return GIR_OK;
}

SHAPE_INFER(Transpose)
{
    const int64_t *perm;
    ptrdiff_t len = gir_attrs_get_ints(&n->attrs, "perm", &perm);
    int r = xs->s.rank;
    if (len < 0) {
        if (r < 0) {
            ish_unknown(o);
        } else {
            ish_rank(o, 0);
            for (int i = r - 1; i >= 0; i--)
                ish_push(o, xs->s.dims[i], xs->nm[i]);
        }
        return GIR_OK;
    }
    if (r >= 0)
        TRY(oi_list_len(n, "perm", len, r, "one per input axis", err));
    TRY(oi_rank_limit(n, len, err));
    bool seen[GIR_MAX_RANK] = { false };
    for (ptrdiff_t i = 0; i < len; i++) {
        if (perm[i] < 0 || perm[i] >= len || seen[perm[i]])
            return gir_fail(err, GIR_E_ATTRIBUTE, "Transpose perm is not a permutation of 0..%td (value %lld at %td)",
                            len - 1, (ll)perm[i], i);
        seen[perm[i]] = true;
    }
    ish_rank(o, (int)len);
    if (r >= 0)
        for (int i = 0; i < r; i++) {
            o->s.dims[i] = xs->s.dims[perm[i]];
            o->nm[i] = xs->nm[perm[i]];
        }
    return GIR_OK;
}

SHAPE_INFER(Squeeze)
{
    const int64_t *axes;
    ptrdiff_t na = gir_attrs_get_ints(&n->attrs, "axes", &axes);
    if (xs->s.rank < 0 || (na < 0 && !gir_shape_is_known(&xs->s)))
        return unknown_shape(o); /* which axes go depends on unknown sizes */
    bool mark[GIR_MAX_RANK];
    if (na < 0) {
        for (int i = 0; i < xs->s.rank; i++)
            mark[i] = xs->s.dims[i] == 1;
    } else {
        TRY(oi_axes_mask(n, "axes", axes, na, xs->s.rank, mark, err));
        for (int i = 0; i < xs->s.rank; i++)
            if (mark[i] && xs->s.dims[i] >= 0 && xs->s.dims[i] != 1)
                return gir_fail(err, GIR_E_SHAPE, "Squeeze axis %d of %s has size %lld, not 1", i, SHP(&xs->s),
                                (ll)xs->s.dims[i]);
    }
    ish_rank(o, 0);
    for (int i = 0; i < xs->s.rank; i++)
        if (!mark[i])
            ish_push(o, xs->s.dims[i], xs->nm[i]);
    return GIR_OK;
}

SHAPE_INFER(Unsqueeze)
{
    const int64_t *axes;
    ptrdiff_t na;
    TRY(oi_need_ints(n, "axes", &axes, &na, err));
    if (xs->s.rank < 0)
        return unknown_shape(o);
    TRY(oi_rank_limit(n, (ll)xs->s.rank + na, err));
    int r = xs->s.rank + (int)na;
    bool mark[GIR_MAX_RANK];
    TRY(oi_axes_mask(n, "axes", axes, na, r, mark, err));
    ish_rank(o, 0);
    for (int i = 0, j = 0; i < r; i++) {
        if (mark[i]) {
            ish_push(o, 1, NULL);
        } else {
            ish_push(o, xs->s.dims[j], xs->nm[j]);
            j++;
        }
    }
    return GIR_OK;
}

gir_status infer_Concat(gir_graph *g, gir_node *n, gir_error *err)
{
    gir_dtype dt;
    TRY(oi_same_dtype(g, n, 0, n->n_in, &dt, err));
    ish o;
    int r = -1;
    for (size_t i = 0; i < n->n_in; i++) {
        const gir_value *v;
        TRY(oi_input(g, n, i, &v, err));
        if (r < 0 && v->shape.rank >= 0) {
            oi_ish_of(v, &o);
            r = o.s.rank;
        }
    }
    if (r < 0)
        return oi_set_unknown(g, n, 0, dt, err);
    int a = 0;
    TRY(oi_norm_axis(n, "axis", gir_node_int(n, "axis", 0), r, false, &a, err));
    int64_t sum = 0;
    for (size_t i = 0; i < n->n_in; i++) {
        ish s;
        oi_ish_of(gir_in(g, n, i), &s);
        if (s.s.rank < 0) {
            sum = -1;
            continue;
        }
        if (s.s.rank != r)
            return gir_fail(err, GIR_E_SHAPE, "Concat inputs have different ranks: %s and %s", SHP(&o.s), SHP(&s.s));
        for (int k = 0; k < r; k++) {
            if (k == a)
                continue;
            if (o.s.dims[k] >= 0 && s.s.dims[k] >= 0 && o.s.dims[k] != s.s.dims[k])
                return gir_fail(err, GIR_E_SHAPE, "Concat input %zu %s differs from %s outside axis %d", i,
                                SHP(&s.s), SHP(&o.s), a);
            if (o.s.dims[k] < 0 && s.s.dims[k] >= 0)
                o.s.dims[k] = s.s.dims[k];
            if (!o.nm[k])
                o.nm[k] = s.nm[k];
        }
        if (sum >= 0 && (s.s.dims[a] < 0 || !add_ok(sum, s.s.dims[a], &sum)))
            sum = s.s.dims[a] < 0 ? -1 : -2;
    }
    if (sum == -2)
        return oi_too_large(n, err);
    o.s.dims[a] = sum;
    if (n->n_in > 1)
        o.nm[a] = NULL;
    return oi_set_out(g, n, 0, dt, &o, err);
}

gir_status infer_Split(gir_graph *g, gir_node *n, gir_error *err)
{
    const gir_value *x;
    ish xs;
    TRY(oi_input_shape(g, n, 0, &x, &xs, err));
    const int64_t *split;
    ptrdiff_t ns = gir_attrs_get_ints(&n->attrs, "split", &split);
    if (ns >= 0)
        TRY(oi_list_len(n, "split", ns, (ll)n->n_out, "one per output", err));
    if (n->n_out == 0)
        return gir_fail(err, GIR_E_REFERENCE, "Split has no outputs");
    if (xs.s.rank < 0) {
        for (size_t k = 0; k < n->n_out; k++)
            TRY(oi_set_out(g, n, k, x->dtype, &xs, err));
        return GIR_OK;
    }
    int a = 0;
    TRY(oi_norm_axis(n, "axis", gir_node_int(n, "axis", 0), xs.s.rank, false, &a, err));
    int64_t dim = xs.s.dims[a];
    if (ns >= 0) {
        int64_t sum = 0;
        for (ptrdiff_t k = 0; k < ns; k++) {
            if (split[k] < 0)
                return gir_fail(err, GIR_E_ATTRIBUTE, "Split size %lld is negative", (ll)split[k]);
            if (!add_ok(sum, split[k], &sum))
                return oi_too_large(n, err);
        }
        if (dim >= 0 && sum != dim)
            return gir_fail(err, GIR_E_SHAPE, "Split sizes sum to %lld but axis %d of %s has %lld", (ll)sum, a,
                            SHP(&xs.s), (ll)dim);
    } else if (dim >= 0 && dim % (int64_t)n->n_out != 0) {
        return gir_fail(err, GIR_E_SHAPE, "Split cannot divide axis %d of %s (%lld) into %zu equal parts", a,
                        SHP(&xs.s), (ll)dim, n->n_out);
    }
    for (size_t k = 0; k < n->n_out; k++) {
        ish o = xs;
        o.s.dims[a] = ns >= 0 ? split[k] : dim >= 0 ? dim / (int64_t)n->n_out : -1;
        if (n->n_out > 1)
            o.nm[a] = NULL;
        TRY(oi_set_out(g, n, k, x->dtype, &o, err));
    }
    return GIR_OK;
}

/* Extent of a slice of an axis of size dim (ONNX clamping rules). */
static int64_t slice_len(int64_t dim, int64_t start, int64_t end, int64_t step)
{
    if (dim == 0)
        return 0;
    if (start < 0)
        start += dim;
    if (end < 0)
        end += dim;
    if (step > 0) {
        start = start < 0 ? 0 : start > dim ? dim : start;
        end = end < 0 ? 0 : end > dim ? dim : end;
        return end > start ? (end - start - 1) / step + 1 : 0;
    }
    start = start < 0 ? 0 : start > dim - 1 ? dim - 1 : start;
    end = end < -1 ? -1 : end > dim - 1 ? dim - 1 : end;
    if (start <= end)
        return 0;
    return step == INT64_MIN ? 1 : (start - end - 1) / -step + 1;
}

SHAPE_INFER(Slice)
{
    const int64_t *starts, *ends, *axes = NULL, *steps = NULL;
    ptrdiff_t ns, ne;
    TRY(oi_need_ints(n, "starts", &starts, &ns, err));
    TRY(oi_need_ints(n, "ends", &ends, &ne, err));
    TRY(oi_list_len(n, "ends", ne, ns, "one per start", err));
    ptrdiff_t na = gir_attrs_get_ints(&n->attrs, "axes", &axes);
    ptrdiff_t nt = gir_attrs_get_ints(&n->attrs, "steps", &steps);
    if (na >= 0)
        TRY(oi_list_len(n, "axes", na, ns, "one per start", err));
    if (nt >= 0)
        TRY(oi_list_len(n, "steps", nt, ns, "one per start", err));
    for (ptrdiff_t i = 0; i < nt; i++)
        if (steps[i] == 0)
            return gir_fail(err, GIR_E_ATTRIBUTE, "Slice steps[%td] is 0, expected a non-zero step", i);
    if (xs->s.rank < 0) {
        *o = *xs;
        return GIR_OK;
    }
    if (na < 0 && ns > xs->s.rank)
        return gir_fail(err, GIR_E_ATTRIBUTE, "Slice has %td starts for input %s of rank %d", ns, SHP(&xs->s),
                        xs->s.rank);
    int64_t ax[GIR_MAX_RANK];
    bool mark[GIR_MAX_RANK];
    if (na < 0)
        for (int i = 0; i < (int)ns; i++)
            ax[i] = i;
    TRY(oi_axes_mask(n, "axes", na >= 0 ? axes : ax, ns, xs->s.rank, mark, err));
    *o = *xs;
    for (ptrdiff_t i = 0; i < ns; i++) {
        int64_t axv = na >= 0 ? axes[i] : ax[i];
        int a = (int)(axv < 0 ? axv + xs->s.rank : axv);
        int64_t step = nt >= 0 ? steps[i] : 1, dim = xs->s.dims[a];
        /* 0:INT32_MAX or more (exporters' "to the end") keeps an unknown dimension whole */
        bool whole = step == 1 && starts[i] == 0 && ends[i] >= INT32_MAX;
        if (dim < 0) {
            o->s.dims[a] = -1;
            if (!whole)
                o->nm[a] = NULL;
            continue;
        }
        o->s.dims[a] = slice_len(dim, starts[i], ends[i], step);
        if (o->s.dims[a] != dim)
            o->nm[a] = NULL;
    }
    return GIR_OK;
}

SHAPE_INFER(Pad)
{
    const int64_t *pads;
    ptrdiff_t np;
    TRY(oi_need_ints(n, "pads", &pads, &np, err));
    if (xs->s.rank < 0) {
        if (np % 2 != 0)
            return gir_fail(err, GIR_E_ATTRIBUTE, "Pad attribute 'pads' has %td values, expected an even number "
                            "(begins then ends of each axis)", np);
        TRY(oi_rank_limit(n, np / 2, err));
        ish_rank(o, (int)(np / 2));
        return GIR_OK;
    }
    int r = xs->s.rank;
    TRY(oi_list_len(n, "pads", np, 2 * (ll)r, "begins then ends of each axis", err));
    *o = *xs;
    for (int i = 0; i < r; i++) {
        int64_t d = xs->s.dims[i], pb = pads[i], pe = pads[r + i];
        if (pb || pe)
            o->nm[i] = NULL;
        if (d < 0)
            continue;
        if (!add_ok(d, pb, &d) || !add_ok(d, pe, &d))
            return oi_too_large(n, err);
        if (d < 0)
            return gir_fail(err, GIR_E_ATTRIBUTE, "Pad pads %lld and %lld remove more than the %lld cells of axis %d "
                            "of %s", (ll)pb, (ll)pe, (ll)xs->s.dims[i], i, SHP(&xs->s));
        o->s.dims[i] = d;
    }
    return GIR_OK;
}

SHAPE_INFER(Tile)
{
    const int64_t *rep;
    ptrdiff_t nr;
    TRY(oi_need_ints(n, "repeats", &rep, &nr, err));
    if (xs->s.rank >= 0)
        TRY(oi_list_len(n, "repeats", nr, xs->s.rank, "one per input axis", err));
    TRY(oi_rank_limit(n, nr, err));
    ish_rank(o, (int)nr);
    for (int i = 0; i < (int)nr; i++) {
        if (rep[i] < 0)
            return gir_fail(err, GIR_E_ATTRIBUTE, "Tile repeats has negative value %lld", (ll)rep[i]);
        if (xs->s.rank < 0)
            continue;
        if (rep[i] == 1) {
            o->s.dims[i] = xs->s.dims[i];
            o->nm[i] = xs->nm[i];
        } else if (xs->s.dims[i] >= 0 && !mul_ok(xs->s.dims[i], rep[i], &o->s.dims[i])) {
            return oi_too_large(n, err);
        } else if (rep[i] == 0) {
            o->s.dims[i] = 0;
        }
    }
    return GIR_OK;
}

SHAPE_INFER(Expand)
{
    const int64_t *v;
    ptrdiff_t len;
    TRY(oi_need_ints(n, "shape", &v, &len, err));
    TRY(oi_rank_limit(n, len, err));
    ish ss;
    ish_rank(&ss, (int)len);
    for (int i = 0; i < (int)len; i++) {
        if (v[i] < 0)
            return gir_fail(err, GIR_E_ATTRIBUTE, "Expand shape has negative value %lld", (ll)v[i]);
        ss.s.dims[i] = v[i];
    }
    TRY(oi_bcast(n, xs, &ss, o, err));
    return GIR_OK;
}

gir_status infer_Gather(gir_graph *g, gir_node *n, gir_error *err)
{
    const gir_value *x, *idx;
    TRY(oi_input(g, n, 0, &x, err));
    TRY(oi_input(g, n, 1, &idx, err));
    TRY(oi_need_dtype(n, idx, 1, idx->dtype == GIR_DT_I32 || idx->dtype == GIR_DT_I64, "int32 or int64", err));
    ish xs, is, o;
    oi_ish_of(x, &xs);
    oi_ish_of(idx, &is);
    if (xs.s.rank == 0)
        return gir_fail(err, GIR_E_SHAPE, "Gather input data must have rank 1 or more, found %s", SHP(&xs.s));
    if (xs.s.rank < 0 || is.s.rank < 0)
        return oi_set_unknown(g, n, 0, x->dtype, err);
    int a = 0;
    TRY(oi_norm_axis(n, "axis", gir_node_int(n, "axis", 0), xs.s.rank, false, &a, err));
    TRY(oi_rank_limit(n, (ll)xs.s.rank + is.s.rank - 1, err));
    ish_rank(&o, 0);
    for (int i = 0; i < a; i++)
        ish_push(&o, xs.s.dims[i], xs.nm[i]);
    for (int i = 0; i < is.s.rank; i++)
        ish_push(&o, is.s.dims[i], is.nm[i]);
    for (int i = a + 1; i < xs.s.rank; i++)
        ish_push(&o, xs.s.dims[i], xs.nm[i]);
    return oi_set_out(g, n, 0, x->dtype, &o, err);
}

SHAPE_INFER(Resize)
{
    const double *scales, *roi;
    const int64_t *sizes;
    ptrdiff_t nsc = gir_attrs_get_floats(&n->attrs, "scales", &scales);
    ptrdiff_t nsz = gir_attrs_get_ints(&n->attrs, "sizes", &sizes);
    ptrdiff_t nroi = gir_attrs_get_floats(&n->attrs, "roi", &roi);
    if (nsc <= 0 && nsz <= 0)
        return gir_fail(err, GIR_E_ATTRIBUTE, "Resize needs attribute 'scales' or 'sizes'");
    if (nsc > 0 && nsz > 0)
        return gir_fail(err, GIR_E_ATTRIBUTE, "Resize takes attribute 'scales' or 'sizes', not both");
    ptrdiff_t len = nsc > 0 ? nsc : nsz;
    if (xs->s.rank >= 0)
        TRY(oi_list_len(n, nsc > 0 ? "scales" : "sizes", len, xs->s.rank, "one per input axis", err));
    TRY(oi_rank_limit(n, len, err));
    if (nroi > 0)
        TRY(oi_list_len(n, "roi", nroi, 2 * (ll)len, "starts then ends of each axis", err));
    ish_rank(o, (int)len);
    for (int i = 0; i < (int)len; i++) {
        if (nsz > 0) {
            if (sizes[i] < 0)
                return gir_fail(err, GIR_E_ATTRIBUTE, "Resize sizes has negative value %lld", (ll)sizes[i]);
            o->s.dims[i] = sizes[i];
            if (xs->s.rank >= 0 && sizes[i] == xs->s.dims[i])
                o->nm[i] = xs->nm[i];
            continue;
        }
        if (!(scales[i] > 0.0) || !isfinite(scales[i]))
            return gir_fail(err, GIR_E_ATTRIBUTE, "Resize scale %g on axis %d is not a positive number", scales[i], i);
        if (xs->s.rank < 0)
            continue;
        if (scales[i] == 1.0) {
            o->s.dims[i] = xs->s.dims[i];
            o->nm[i] = xs->nm[i];
        } else if (xs->s.dims[i] >= 0) {
            /* float32 arithmetic, as ONNX scales are float32 */
            float d = floorf((float)xs->s.dims[i] * (float)scales[i]);
            if (!(d < 9.0e18f))
                return oi_too_large(n, err);
            o->s.dims[i] = (int64_t)d;
        }
    }
    return GIR_OK;
}

SHAPE_INFER(space_depth)
{
    int64_t b = gir_node_int(n, "blocksize", 0), bb;
    if (b < 1)
        return gir_fail(err, GIR_E_ATTRIBUTE, "%s attribute 'blocksize' is %lld, expected 1 or more", OPN(n), (ll)b);
    if (!mul_ok(b, b, &bb))
        return oi_too_large(n, err);
    if (xs->s.rank < 0) {
        ish_rank(o, 4);
        return GIR_OK;
    }
    if (xs->s.rank != 4)
        return gir_fail(err, GIR_E_SHAPE, "%s input must have rank 4 (N, C, H, W), found %s", OPN(n), SHP(&xs->s));
    ish_rank(o, 4);
    o->s.dims[0] = xs->s.dims[0];
    o->nm[0] = xs->nm[0];
    int64_t c = xs->s.dims[1], h = xs->s.dims[2], w = xs->s.dims[3];
    if (n->op == GIR_OP_DepthToSpace) {
        if (c >= 0 && c % bb != 0)
            return gir_fail(err, GIR_E_SHAPE, "DepthToSpace input %s has %lld channels, not a multiple of "
                            "blocksize^2 = %lld", SHP(&xs->s), (ll)c, (ll)bb);
        o->s.dims[1] = c >= 0 ? c / bb : -1;
        if ((h >= 0 && !mul_ok(h, b, &o->s.dims[2])) || (w >= 0 && !mul_ok(w, b, &o->s.dims[3])))
            return oi_too_large(n, err);
    } else {
        if ((h >= 0 && h % b != 0) || (w >= 0 && w % b != 0))
            return gir_fail(err, GIR_E_SHAPE, "SpaceToDepth input %s has height or width not a multiple of "
                            "blocksize %lld", SHP(&xs->s), (ll)b);
        if (c >= 0 && !mul_ok(c, bb, &o->s.dims[1]))
            return oi_too_large(n, err);
        o->s.dims[2] = h >= 0 ? h / b : -1;
        o->s.dims[3] = w >= 0 ? w / b : -1;
    }
    return GIR_OK;
}

gir_status infer_Shape(gir_graph *g, gir_node *n, gir_error *err)
{
    const gir_value *x;
    TRY(oi_input(g, n, 0, &x, err));
    ish o;
    ish_rank(&o, 1);
    o.s.dims[0] = x->shape.rank; /* -1 when unknown */
    return oi_set_out(g, n, 0, GIR_DT_I64, &o, err);
}
