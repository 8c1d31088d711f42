/* Legalization patterns for elementwise activations a target lacks:
 * Selu, Elu, Softplus, Softsign, PRelu and Reciprocal in the arithmetic
 * and Relu/Exp/Log/Abs/Min every target has more often.
 *
 * Where the form only reorders the same arithmetic the result is bit-exact
 * (Softsign, Reciprocal, PRelu as LeakyRelu); the others replace expm1 and
 * log1p by exp - 1 and log(1 + .), which differs by at most a rounding of
 * 1 in absolute terms (within 1e-6 of max(1, |y|)); the sign of a zero
 * result may differ. */
#include "patterns.h"

#include <string.h>


/* Selu(x; alpha, gamma) = gamma * Elu(x; alpha): both are gamma * x above
 * zero and gamma * alpha * (exp(x) - 1) below. */
static gir_status selu_elu(gir_rw *rw, const gir_node *n, gir_error *err)
{
    const gir_value *x;
    TRY(gir_pat_float_in(rw, n, &x, err));
    gir_node *elu;
    int32_t e, y;
    TRY(gir_rw_unary(rw, GIR_OP_Elu, n->in[0], &elu, &e, err));
    TRY(gir_attrs_set_float(rw->g, &elu->attrs, "alpha", gir_node_float(n, "alpha", 1.6732631921768188), err));
    TRY(gir_pat_binary_k(rw, GIR_OP_Mul, e, x->dtype, gir_node_float(n, "gamma", 1.0507010221481323), &y, err));
    return gir_rw_done(rw, &y, err);
}

GIR_PATTERN(selu_elu, "selu-as-elu", GIR_OP_Selu, "Selu as Elu+Mul", selu_elu);

/* Elu(x; alpha) = Relu(x) + alpha * (Exp(Min(x, 0)) - 1): the second term
 * is 0 for x >= 0, the first for x < 0; NaN passes through Relu. */
static gir_status elu_exp(gir_rw *rw, const gir_node *n, gir_error *err)
{
    const gir_value *x;
    TRY(gir_pat_float_in(rw, n, &x, err));
    gir_dtype dt = x->dtype;
    int32_t r, m, e, d, s, y;
    TRY(gir_rw_unary(rw, GIR_OP_Relu, n->in[0], NULL, &r, err));
    TRY(gir_pat_binary_k(rw, GIR_OP_Min, n->in[0], dt, 0.0, &m, err));
    TRY(gir_rw_unary(rw, GIR_OP_Exp, m, NULL, &e, err));
    TRY(gir_pat_binary_k(rw, GIR_OP_Sub, e, dt, 1.0, &d, err));
    TRY(gir_pat_binary_k(rw, GIR_OP_Mul, d, dt, gir_node_float(n, "alpha", 1.0), &s, err));
    TRY(gir_rw_binary(rw, GIR_OP_Add, r, s, NULL, &y, err));
    return gir_rw_done(rw, &y, err);
}

GIR_PATTERN(elu_exp, "elu-as-exp", GIR_OP_Elu, "Elu as Relu+Min+Exp+Sub+Mul+Add", elu_exp);

/* Softplus(x) = log(1 + exp(x)) = Relu(x) + Log(1 + Exp(-Abs(x))): the
 * form that neither overflows for large x nor loses the value for very
 * negative x beyond float precision of 1. */
static gir_status softplus_exp(gir_rw *rw, const gir_node *n, gir_error *err)
{
    const gir_value *x;
    TRY(gir_pat_float_in(rw, n, &x, err));
    int32_t r, a, g, e, p, l, y;
    TRY(gir_rw_unary(rw, GIR_OP_Relu, n->in[0], NULL, &r, err));
    TRY(gir_rw_unary(rw, GIR_OP_Abs, n->in[0], NULL, &a, err));
    TRY(gir_rw_unary(rw, GIR_OP_Neg, a, NULL, &g, err));
    TRY(gir_rw_unary(rw, GIR_OP_Exp, g, NULL, &e, err));
    TRY(gir_pat_binary_k(rw, GIR_OP_Add, e, x->dtype, 1.0, &p, err));
    TRY(gir_rw_unary(rw, GIR_OP_Log, p, NULL, &l, err));
    TRY(gir_rw_binary(rw, GIR_OP_Add, r, l, NULL, &y, err));
    return gir_rw_done(rw, &y, err);
}

GIR_PATTERN(softplus_exp, "softplus-as-exp", GIR_OP_Softplus, "Softplus as Relu+Abs+Neg+Exp+Add+Log+Add", softplus_exp);

/* Softsign(x) = x / (Abs(x) + 1). */
static gir_status softsign_div(gir_rw *rw, const gir_node *n, gir_error *err)
{
    const gir_value *x;
    TRY(gir_pat_float_in(rw, n, &x, err));
    int32_t a, p, y;
    TRY(gir_rw_unary(rw, GIR_OP_Abs, n->in[0], NULL, &a, err));
    TRY(gir_pat_binary_k(rw, GIR_OP_Add, a, x->dtype, 1.0, &p, err));
    TRY(gir_rw_binary(rw, GIR_OP_Div, n->in[0], p, NULL, &y, err));
    return gir_rw_done(rw, &y, err);
}

GIR_PATTERN(softsign_div, "softsign-as-div", GIR_OP_Softsign, "Softsign as Abs+Add+Div", softsign_div);

/* Reciprocal(x) = 1 / x. */
static gir_status reciprocal_div(gir_rw *rw, const gir_node *n, gir_error *err)
{
    const gir_value *x;
    TRY(gir_pat_float_in(rw, n, &x, err));
    int32_t k, y;
    TRY(gir_rw_scalar(rw, x->dtype, 1.0, &k, err));
    TRY(gir_rw_binary(rw, GIR_OP_Div, k, n->in[0], NULL, &y, err));
    return gir_rw_done(rw, &y, err);
}

GIR_PATTERN(reciprocal_div, "reciprocal-as-div", GIR_OP_Reciprocal, "Reciprocal as Div", reciprocal_div);

/* PRelu(x, slope) with a constant slope whose elements are all the same
 * (and that does not widen x by broadcasting) = LeakyRelu(x; alpha =
 * slope): both are x < 0 ? slope * x : x. */
static gir_status prelu_leaky(gir_rw *rw, const gir_node *n, gir_error *err)
{
    const gir_value *x = gir_pat_in(rw, n, 0), *s = gir_pat_in(rw, n, 1);
    const gir_value *y = rw->g->values[n->out[0]];
    if (!x || x->dtype != GIR_DT_F32 || !s || s->dtype != GIR_DT_F32)
        return gir_pat_skip(err, "PRelu of type %s (float32 only)", x ? gir_dtype_name(x->dtype) : "?");
    if (!s->data)
        return gir_pat_skip(err, "PRelu with a computed slope");
    if (!gir_shape_is_known(&x->shape) || !gir_shape_equal(&x->shape, &y->shape))
        return gir_pat_skip(err, "PRelu whose slope broadcasts x to a larger shape");
    const void *d;
    TRY(gir_tensor_load(s->data, &d, err));
    size_t cnt = (size_t)gir_shape_numel(&s->shape);
    const float *f = d;
    if (cnt == 0)
        return gir_pat_skip(err, "PRelu with an empty slope");
    for (size_t i = 1; i < cnt; i++)
        if (memcmp(&f[i], &f[0], sizeof *f) != 0)
            return gir_pat_skip(err, "PRelu with slopes that differ (%zu values)", cnt);
    gir_node *l;
    int32_t out;
    TRY(gir_rw_unary(rw, GIR_OP_LeakyRelu, n->in[0], &l, &out, err));
    TRY(gir_attrs_set_float(rw->g, &l->attrs, "alpha", (double)f[0], err));
    return gir_rw_done(rw, &out, err);
}

GIR_PATTERN(prelu_leaky, "prelu-as-leakyrelu", GIR_OP_PRelu, "PRelu with one shared constant slope as LeakyRelu", prelu_leaky);

/* PRelu(x, slope) = Relu(x) + Min(x, 0) * slope: the second term is (+-)0
 * for x >= 0 and slope * x for x < 0 (NaN passes through Relu). */
static gir_status prelu_relu(gir_rw *rw, const gir_node *n, gir_error *err)
{
    const gir_value *x;
    TRY(gir_pat_float_in(rw, n, &x, err));
    int32_t r, m, p, y;
    TRY(gir_rw_unary(rw, GIR_OP_Relu, n->in[0], NULL, &r, err));
    TRY(gir_pat_binary_k(rw, GIR_OP_Min, n->in[0], x->dtype, 0.0, &m, err));
    TRY(gir_rw_binary(rw, GIR_OP_Mul, m, n->in[1], NULL, &p, err));
    TRY(gir_rw_binary(rw, GIR_OP_Add, r, p, NULL, &y, err));
    return gir_rw_done(rw, &y, err);
}

GIR_PATTERN(prelu_relu, "prelu-as-relu", GIR_OP_PRelu, "PRelu as Relu+Min+Mul+Add", prelu_relu);
