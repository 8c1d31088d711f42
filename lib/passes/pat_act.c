/* Legalization patterns for activations: exact forms in elementwise
 * arithmetic and Clip. */
#include "patterns.h"

/* HardSigmoid(x) = Clip(x * alpha + beta, 0, 1). */
static gir_status hardsigmoid_clip(gir_rw *rw, const gir_node *n, gir_error *err)
{
    const gir_value *x;
    TRY(gir_pat_float_in(rw, n, &x, err));
    gir_dtype dt = x->dtype;
    int32_t a, b, t, u, y;
    gir_node *clip;
    TRY(gir_rw_scalar(rw, dt, gir_node_float(n, "alpha", 0.2), &a, err));
    TRY(gir_rw_scalar(rw, dt, gir_node_float(n, "beta", 0.5), &b, err));
    TRY(gir_rw_binary(rw, GIR_OP_Mul, n->in[0], a, NULL, &t, err));
    TRY(gir_rw_binary(rw, GIR_OP_Add, t, b, NULL, &u, err));
    TRY(gir_rw_unary(rw, GIR_OP_Clip, u, &clip, &y, err));
    TRY(gir_attrs_set_float(rw->g, &clip->attrs, "min", 0.0, err));
    TRY(gir_attrs_set_float(rw->g, &clip->attrs, "max", 1.0, err));
    return gir_rw_done(rw, &y, err);
}

GIR_PATTERN(hardsigmoid_clip, "hardsigmoid-as-clip", GIR_OP_HardSigmoid, "HardSigmoid as Mul+Add+Clip", hardsigmoid_clip);

/* Clip with one bound (or none) = Max(x, min) or Min(x, max) (or x). */
static gir_status clip_one_bound(gir_rw *rw, const gir_node *n, gir_error *err)
{
    const gir_attr *lo = gir_attrs_find(&n->attrs, "min"), *hi = gir_attrs_find(&n->attrs, "max");
    if (lo && hi)
        return gir_pat_skip(err, "Clip with both bounds");
    const gir_value *x;
    TRY(gir_pat_float_in(rw, n, &x, err));
    int32_t y = n->in[0];
    if (lo || hi) {
        int32_t c;
        TRY(gir_rw_scalar(rw, x->dtype, gir_node_float(n, lo ? "min" : "max", 0.0), &c, err));
        TRY(gir_rw_binary(rw, lo ? GIR_OP_Max : GIR_OP_Min, n->in[0], c, NULL, &y, err));
    }
    return gir_rw_done(rw, &y, err);
}

GIR_PATTERN(clip_one_bound, "clip-one-bound", GIR_OP_Clip, "Clip with one bound as Max or Min", clip_one_bound);

/* Clip with both bounds = Min(Max(x, min), max); with min 0, Min(Relu(x),
 * max) (Relu keeps -0 as Clip does).  NaN passes through all of them. */
static gir_status clip_max_min(gir_rw *rw, const gir_node *n, gir_error *err)
{
    const gir_attr *lo = gir_attrs_find(&n->attrs, "min"), *hi = gir_attrs_find(&n->attrs, "max");
    if (!lo || !hi)
        return gir_pat_skip(err, "Clip without both bounds");
    const gir_value *x;
    TRY(gir_pat_float_in(rw, n, &x, err));
    double l = gir_node_float(n, "min", 0.0), h = gir_node_float(n, "max", 0.0);
    int32_t y, c;
    if (l == 0.0) {
        TRY(gir_rw_unary(rw, GIR_OP_Relu, n->in[0], NULL, &y, err));
    } else {
        TRY(gir_rw_scalar(rw, x->dtype, l, &c, err));
        TRY(gir_rw_binary(rw, GIR_OP_Max, n->in[0], c, NULL, &y, err));
    }
    TRY(gir_rw_scalar(rw, x->dtype, h, &c, err));
    TRY(gir_rw_binary(rw, GIR_OP_Min, y, c, NULL, &y, err));
    return gir_rw_done(rw, &y, err);
}

GIR_PATTERN(clip_max_min, "clip-as-max-min", GIR_OP_Clip, "Clip as Max (or Relu) and Min", clip_max_min);
