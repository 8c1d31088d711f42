/* Shape and dtype inference of the operators that come from LightNet
 * (their attribute schemas are in optable.c with every other op's). */
#include "opinfer.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Semantics (the runtime implements these; graphconv-formats(5) LIGHTNET):
 *
 * Print(input; message, file?): writes `message` and "\n", then the tensor
 *   the way TensorLight's tl_tensor_fprint does: for each element in
 *   row-major order it first writes "]" once for every axis whose block
 *   ends just before this element (innermost first), then if any "]" was
 *   written a "\n" and (rank - number of "]") spaces; then "[" once for
 *   every axis whose block starts at this element (outermost first), or a
 *   single " " if none starts; then the element: "%.3f" for float32/64,
 *   "%d" for int8/16/32 and bool (0/1), "%u" for uint8/16/32, "%lld" /
 *   "%llu" for 64-bit integers; after the last element rank times "]" and
 *   "\n".  A [2,3] tensor prints "[[2.000 3.000 4.000]\n [6.000 7.000 8.000]]\n".
 *   Without `file` to standard output; with it the file is truncated and
 *   written (a file that cannot be opened is skipped with a warning).  No
 *   outputs; runs in graph order among other Print nodes.
 * Sort(keys, values?; descending): stable sort of the 1-D keys ascending (or
 *   descending); values (1-D, same length) are reordered by the same
 *   permutation.  Outputs: sorted keys[, reordered values].
 * GatherBlocks(data, indices; count, block_size): 1-D data, 1-D integer
 *   indices; output[i*block_size + j] = data[indices[i]*block_size + j] for
 *   i < count, j < block_size.  An index outside the data is an error.
 * RangeFill(input; start, limit, delta): output[i] = start + i * delta
 *   computed in double and converted to the input's dtype (integers:
 *   truncation toward zero, saturated); the input only gives the dtype and
 *   the length, which must be ceil((limit - start) / delta).
 * SqueezeDetBoxDecode(deltas, anchors; width, height, img_width,
 *   img_height, x_shift, y_shift): float32 [..., 4] each; per box, in
 *   float32, with d = deltas, a = anchors, xs = img_width / width,
 *   ys = img_height / height, E = 2.718281828:
 *   cx = (a0 + d0*a2)*xs + x_shift, cy = (a1 + d1*a3)*ys + y_shift,
 *   w = a2 * (d2 < 1 ? exp(d2) : d2*E) * xs, h = a3 * (d3 < 1 ? exp(d3) : d3*E) * ys,
 *   out = [min(max(cx - w/2, 0), img_width - 1), min(max(cy - h/2, 0), img_height - 1),
 *          max(min(cx + w/2, img_width - 1), 0), max(min(cy + h/2, img_height - 1), 0)].
 * YoloV3Decode(feature [1, A*(5+C), H, W], anchors [A, 2]; img_width,
 *   img_height): per anchor a and cell (y, x), with f_k the k-th channel of
 *   anchor a and s(v) = 1/(1+exp(-v)): box_centers[0,a,:,y,x] =
 *   ((s(f0) + x) * img_width / W, (s(f1) + y) * img_height / H);
 *   box_sizes[0,a,:,y,x] = (anchors[a,0], anchors[a,1]) * clamp(exp(f2|f3),
 *   1e-9, 50); boxes = (cx - w/2, cy - h/2, cx + w/2, cy + h/2);
 *   confs[0,a,0,y,x] = s(f4); probs[0,a,c,y,x] = s(f_{5+c}).
 * SubMean(image [H, W, 3]; mean[3], to): output[c, h, w] =
 *   convert_to(double(image[h, w, c]) - mean[c]).
 * DotProduct(A, B): equal shapes; output [1] = sum of A*B, accumulated in
 *   the input type in element order.
 * Stack(inputs...; axis): equal shapes and dtypes; a new axis of size N.
 * Unstack(input; axis): one output per index of `axis`, that axis removed.
 */

static gir_status need_rank(const gir_node *n, const gir_value *v, size_t i, int r, gir_error *err)
{
    if (v->shape.rank < 0 || v->shape.rank == r)
        return GIR_OK;
    char nm[32];
    return gir_fail(err, GIR_E_SHAPE, "%s input %zu (%s) must be %d-D, found %s", OPN(n), i,
                    gir_op_operand_name(n->op, false, i, nm, sizeof nm), r, SHP(&v->shape));
}

/* Inputs 0 and 1 (oi_input), then their ranks r0 and r1 (need_rank) where
 * those are not -1. */
static gir_status two_inputs(const gir_graph *g, const gir_node *n, const gir_value **a, const gir_value **b, int r0,
                             int r1, gir_error *err)
{
    TRY(oi_input(g, n, 0, a, err));
    TRY(oi_input(g, n, 1, b, err));
    if (r0 >= 0)
        TRY(need_rank(n, *a, 0, r0, err));
    return r1 >= 0 ? need_rank(n, *b, 1, r1, err) : GIR_OK;
}

/* Inputs 0 and 1 are float32 where their dtypes are known. */
static gir_status two_f32(const gir_node *n, const gir_value *a, const gir_value *b, gir_error *err)
{
    TRY(oi_need_dtype(n, a, 0, a->dtype == GIR_DT_F32, "float32", err));
    return oi_need_dtype(n, b, 1, b->dtype == GIR_DT_F32, "float32", err);
}

gir_status infer_Print(gir_graph *g, gir_node *n, gir_error *err)
{
    const gir_value *x;
    return oi_input(g, n, 0, &x, err);
}

gir_status infer_Sort(gir_graph *g, gir_node *n, gir_error *err)
{
    const gir_value *k, *v = NULL;
    TRY(oi_input(g, n, 0, &k, err));
    TRY(need_rank(n, k, 0, 1, err));
    if (n->n_out != n->n_in)
        return gir_fail(err, GIR_E_SCHEMA, "Sort has %zu inputs but %zu outputs (one per input)", n->n_in, n->n_out);
    if (n->n_in > 1) {
        TRY(oi_input(g, n, 1, &v, err));
        TRY(need_rank(n, v, 1, 1, err));
        if (k->shape.rank == 1 && v->shape.rank == 1 && k->shape.dims[0] >= 0 && v->shape.dims[0] >= 0 &&
            k->shape.dims[0] != v->shape.dims[0])
            return gir_fail(err, GIR_E_SHAPE, "Sort values %s and keys %s differ in length", SHP(&v->shape),
                            SHP(&k->shape));
    }
    ish s;
    oi_ish_of(k, &s);
    TRY(oi_set_out(g, n, 0, k->dtype, &s, err));
    if (v) {
        oi_ish_of(v, &s);
        TRY(oi_set_out(g, n, 1, v->dtype, &s, err));
    }
    return GIR_OK;
}

gir_status infer_GatherBlocks(gir_graph *g, gir_node *n, gir_error *err)
{
    const gir_value *d, *ix;
    TRY(two_inputs(g, n, &d, &ix, 1, 1, err));
    TRY(oi_need_dtype(n, ix, 1, gir_dtype_is_int(ix->dtype), "an integer type", err));
    int64_t count = gir_node_int(n, "count", 0), bs = gir_node_int(n, "block_size", 1), len;
    if (ix->shape.rank == 1 && ix->shape.dims[0] >= 0 && count > ix->shape.dims[0])
        return gir_fail(err, GIR_E_ATTRIBUTE, "GatherBlocks count %lld is more than the %lld indices", (ll)count,
                        (ll)ix->shape.dims[0]);
    if (!mul_ok(count, bs, &len))
        return oi_too_large(n, err);
    ish o;
    ish_rank(&o, 1);
    o.s.dims[0] = len;
    return oi_set_out(g, n, 0, d->dtype, &o, err);
}

gir_status infer_RangeFill(gir_graph *g, gir_node *n, gir_error *err)
{
    const gir_value *x;
    TRY(oi_input(g, n, 0, &x, err));
    TRY(need_rank(n, x, 0, 1, err));
    double start = gir_node_float(n, "start", 0), limit = gir_node_float(n, "limit", 0),
           delta = gir_node_float(n, "delta", 0);
    if (delta == 0)
        return gir_fail(err, GIR_E_ATTRIBUTE, "RangeFill delta is 0");
    double len = ceil((limit - start) / delta);
    if (x->shape.rank == 1 && x->shape.dims[0] >= 0 && len != (double)x->shape.dims[0])
        return gir_fail(err, GIR_E_SHAPE, "RangeFill from %g to %g by %g has %g values but the input %s", start, limit,
                        delta, len, SHP(&x->shape));
    return infer_same(g, n, err);
}

gir_status infer_SqueezeDetBoxDecode(gir_graph *g, gir_node *n, gir_error *err)
{
    const gir_value *d, *a;
    TRY(two_inputs(g, n, &d, &a, -1, -1, err));
    TRY(two_f32(n, d, a, err));
    if (d->shape.rank >= 1 && d->shape.dims[d->shape.rank - 1] >= 0 && d->shape.dims[d->shape.rank - 1] != 4)
        return gir_fail(err, GIR_E_SHAPE, "SqueezeDetBoxDecode deltas %s must end in 4 (dx, dy, dw, dh)",
                        SHP(&d->shape));
    ish ds, as;
    oi_ish_of(d, &ds);
    oi_ish_of(a, &as);
    TRY(oi_bcast_to(n, &ds, &as, "anchors", err));
    return oi_set_out(g, n, 0, GIR_DT_F32, &ds, err);
}

gir_status infer_YoloV3Decode(gir_graph *g, gir_node *n, gir_error *err)
{
    const gir_value *f, *a;
    TRY(two_inputs(g, n, &f, &a, 4, 2, err));
    TRY(two_f32(n, f, a, err));
    int64_t A = a->shape.rank == 2 ? a->shape.dims[0] : -1, C = f->shape.rank == 4 ? f->shape.dims[1] : -1;
    if (a->shape.rank == 2 && a->shape.dims[1] >= 0 && a->shape.dims[1] != 2)
        return gir_fail(err, GIR_E_SHAPE, "YoloV3Decode anchors %s must be [anchors, 2]", SHP(&a->shape));
    if (f->shape.rank == 4 && f->shape.dims[0] >= 0 && f->shape.dims[0] != 1)
        return gir_fail(err, GIR_E_SHAPE, "YoloV3Decode feature %s must have batch 1", SHP(&f->shape));
    int64_t classes = -1;
    if (A > 0 && C >= 0) {
        if (C % A != 0 || C / A < 6)
            return gir_fail(err, GIR_E_SHAPE, "YoloV3Decode feature has %lld channels, not %lld anchors times "
                            "(5 + classes)", (ll)C, (ll)A);
        classes = C / A - 5;
    }
    int64_t third[5] = { 2, 2, 4, 1, classes };
    for (size_t k = 0; k < 5; k++) {
        ish o;
        ish_rank(&o, 5);
        o.s.dims[0] = 1;
        o.s.dims[1] = A;
        o.s.dims[2] = third[k];
        o.s.dims[3] = f->shape.rank == 4 ? f->shape.dims[2] : -1;
        o.s.dims[4] = f->shape.rank == 4 ? f->shape.dims[3] : -1;
        TRY(oi_set_out(g, n, k, GIR_DT_F32, &o, err));
    }
    return GIR_OK;
}

gir_status infer_SubMean(gir_graph *g, gir_node *n, gir_error *err)
{
    const gir_value *x;
    TRY(oi_input(g, n, 0, &x, err));
    TRY(need_rank(n, x, 0, 3, err));
    const double *m;
    ptrdiff_t nm = gir_attrs_get_floats(&n->attrs, "mean", &m);
    TRY(oi_list_len(n, "mean", nm, 3, "one per channel", err));
    if (x->shape.rank == 3 && x->shape.dims[2] >= 0 && x->shape.dims[2] != 3)
        return gir_fail(err, GIR_E_SHAPE, "SubMean image %s must have 3 channels (HWC)", SHP(&x->shape));
    const char *to = gir_node_string(n, "to", NULL);
    gir_dtype dt = to ? gir_dtype_from_name(to) : GIR_DT_UNKNOWN;
    if (dt == GIR_DT_UNKNOWN || dt == GIR_DT_BOOL)
        return gir_fail(err, GIR_E_ATTRIBUTE, "SubMean attribute 'to' is '%s', not a numeric type name", to ? to : "");
    ish o;
    ish_rank(&o, 3);
    if (x->shape.rank == 3) {
        o.s.dims[0] = x->shape.dims[2];
        o.s.dims[1] = x->shape.dims[0];
        o.s.dims[2] = x->shape.dims[1];
    }
    return oi_set_out(g, n, 0, dt, &o, err);
}

gir_status infer_DotProduct(gir_graph *g, gir_node *n, gir_error *err)
{
    const gir_value *a, *b;
    TRY(two_inputs(g, n, &a, &b, -1, -1, err));
    gir_dtype dt;
    TRY(oi_same_dtype(g, n, 0, 2, &dt, err));
    if (a->shape.rank >= 0 && b->shape.rank >= 0 && gir_shape_is_known(&a->shape) &&
        gir_shape_is_known(&b->shape) && !gir_shape_equal(&a->shape, &b->shape))
        return gir_fail(err, GIR_E_SHAPE, "DotProduct inputs %s and %s differ in shape", SHP(&a->shape),
                        SHP(&b->shape));
    ish o;
    ish_rank(&o, 1);
    o.s.dims[0] = 1;
    return oi_set_out(g, n, 0, dt, &o, err);
}

gir_status infer_Stack(gir_graph *g, gir_node *n, gir_error *err)
{
    gir_dtype dt;
    TRY(oi_same_dtype(g, n, 0, n->n_in, &dt, err));
    const gir_value *x;
    TRY(oi_input(g, n, 0, &x, err));
    for (size_t i = 1; i < n->n_in; i++) {
        const gir_value *v;
        TRY(oi_input(g, n, i, &v, err));
        if (gir_shape_is_known(&x->shape) && gir_shape_is_known(&v->shape) && !gir_shape_equal(&x->shape, &v->shape))
            return gir_fail(err, GIR_E_SHAPE, "Stack inputs 0 %s and %zu %s differ in shape", SHP(&x->shape), i,
                            SHP(&v->shape));
    }
    ish xs, o;
    oi_ish_of(x, &xs);
    if (xs.s.rank < 0)
        return oi_set_unknown(g, n, 0, dt, err);
    TRY(oi_rank_limit(n, (ll)xs.s.rank + 1, err));
    int a = 0;
    TRY(oi_norm_axis(n, "axis", gir_node_int(n, "axis", 0), xs.s.rank + 1, false, &a, err));
    ish_rank(&o, 0);
    for (int i = 0; i <= xs.s.rank; i++) {
        if (i == a)
            ish_push(&o, (int64_t)n->n_in, NULL);
        if (i < xs.s.rank)
            ish_push(&o, xs.s.dims[i], xs.nm[i]);
    }
    return oi_set_out(g, n, 0, dt, &o, err);
}

gir_status infer_Unstack(gir_graph *g, gir_node *n, gir_error *err)
{
    const gir_value *x;
    ish xs, o;
    TRY(oi_input_shape(g, n, 0, &x, &xs, err));
    if (xs.s.rank < 0) {
        ish_unknown(&o);
        for (size_t k = 0; k < n->n_out; k++)
            TRY(oi_set_out(g, n, k, x->dtype, &o, err));
        return GIR_OK;
    }
    int a = 0;
    TRY(oi_norm_axis(n, "axis", gir_node_int(n, "axis", 0), xs.s.rank, false, &a, err));
    if (xs.s.dims[a] >= 0 && (size_t)xs.s.dims[a] != n->n_out)
        return gir_fail(err, GIR_E_SCHEMA, "Unstack of %s along axis %d needs %lld outputs, found %zu", SHP(&xs.s), a,
                        (ll)xs.s.dims[a], n->n_out);
    ish_rank(&o, 0);
    for (int i = 0; i < xs.s.rank; i++)
        if (i != a)
            ish_push(&o, xs.s.dims[i], xs.nm[i]);
    for (size_t k = 0; k < n->n_out; k++)
        TRY(oi_set_out(g, n, k, x->dtype, &o, err));
    return GIR_OK;
}
