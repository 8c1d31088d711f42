/* Elementwise functions a target lacks, in arithmetic it has.
 *
 * Erf as a rational function in Clip/Mul/Add/Div, for targets without an
 * erf primitive (NNVM; LightNet), so that GELU (x/2 * (1 + erf(x/sqrt 2)))
 * converts.
 *
 *   c = Clip(x, -R, R)            R = 3.925: |erf(x)| rounds to 1 in float
 *   t = c * c                         from there on
 *   erf(x) ~ Clip(c * P(t) / Q(t), -1, 1)
 *
 * P (degree 5) and Q (degree 5, Q(0) = 1) have positive coefficients, so
 * Horner's scheme adds no cancellation and Q >= 1 never vanishes.  They
 * were fitted for this project by iteratively reweighted least squares on
 * the relative error of erf over [0, R] (Lawson's method, 200 rounds, in
 * double) and rounded to float32: in double the fit is within 2e-8 of
 * erf; evaluated in float32 exactly as written here, within 4.2e-7
 * relative of erf over [-R, R] (checked on 400,001 points and on 1e-30 ..
 * 1e-3), which is a few float ulps: the accuracy of a float erf, not its
 * bits.  NaN passes through (Clip keeps NaN), +-infinity gives +-1.  The
 * form is for float32 only: in float64 it would be far less accurate than
 * erf, so the pattern refuses other types.
 *
 * Sqrt as Pow(x, 0.5), for targets without sqrt (LightNet's elew has
 * TL_POW): for x >= +0 both are within an ulp of the root (sqrt is
 * correctly rounded, pow within one ulp), NaN stays NaN; they differ only
 * at -0 (sqrt keeps the sign, pow gives +0) and -infinity (NaN, +inf), so
 * the pattern applies only where the graph shows x is never negative nor
 * -0 (a variance plus epsilon, as in LayerNorm). */
#include "patterns.h"

#define ERF_RANGE 3.925f

static const float erf_p[6] = { 1.12837911f, 0.190594107f, 0.0527692176f,
                                0.00377253420f, 0.000284837850f, 2.04595340e-06f };
static const float erf_q[6] = { 1.0f, 0.502242386f, 0.114182755f, 0.0149831660f, 0.00116384425f, 3.80467136e-05f };

static gir_status clip(gir_rw *rw, int32_t a, float lo, float hi, int32_t *out, gir_error *err)
{
    gir_node *m;
    TRY(gir_rw_unary(rw, GIR_OP_Clip, a, &m, out, err));
    TRY(gir_attrs_set_float(rw->g, &m->attrs, "min", lo, err));
    TRY(gir_attrs_set_float(rw->g, &m->attrs, "max", hi, err));
    return GIR_OK;
}

/* k[5] t^5 + ... + k[0] by Horner's scheme: ((k5 t + k4) t + k3) ... + k0. */
static gir_status horner(gir_rw *rw, int32_t t, const float k[6], int32_t *out, gir_error *err)
{
    int32_t acc;
    TRY(gir_pat_binary_k(rw, GIR_OP_Mul, t, GIR_DT_F32, k[5], &acc, err));
    for (int i = 4; i >= 0; i--) {
        TRY(gir_pat_binary_k(rw, GIR_OP_Add, acc, GIR_DT_F32, k[i], &acc, err));
        if (i > 0)
            TRY(gir_rw_binary(rw, GIR_OP_Mul, acc, t, NULL, &acc, err));
    }
    *out = acc;
    return GIR_OK;
}

static gir_status erf_rational(gir_rw *rw, const gir_node *n, gir_error *err)
{
    const gir_value *x = gir_pat_in(rw, n, 0);
    if (!x || x->dtype != GIR_DT_F32)
        return gir_pat_skip(err, "Erf of type %s (the rational form is accurate to float32 only)",
                            x ? gir_dtype_name(x->dtype) : "?");
    int32_t c, t, p, px, q, r, y;
    TRY(clip(rw, n->in[0], -ERF_RANGE, ERF_RANGE, &c, err));
    TRY(gir_rw_binary(rw, GIR_OP_Mul, c, c, NULL, &t, err));
    TRY(horner(rw, t, erf_p, &p, err));
    TRY(gir_rw_binary(rw, GIR_OP_Mul, p, c, NULL, &px, err));
    TRY(horner(rw, t, erf_q, &q, err));
    TRY(gir_rw_binary(rw, GIR_OP_Div, px, q, NULL, &r, err));
    TRY(clip(rw, r, -1.0f, 1.0f, &y, err));
    return gir_rw_done(rw, &y, err);
}

GIR_PATTERN(erf_rational, "erf-as-rational", GIR_OP_Erf, "Erf as a float32 rational function (Clip+Mul+Add+Div, within 4.2e-7)", erf_rational);

static gir_status sqrt_pow(gir_rw *rw, const gir_node *n, gir_error *err)
{
    const gir_value *x;
    TRY(gir_pat_float_in(rw, n, &x, err));
    if (!gir_pat_non_negative(rw->g, n->in[0], true))
        return gir_pat_skip(err, "Sqrt of a value not shown to be >= +0 (Pow differs at -0 and -infinity)");
    int32_t y;
    TRY(gir_pat_binary_k(rw, GIR_OP_Pow, n->in[0], x->dtype, 0.5, &y, err));
    return gir_rw_done(rw, &y, err);
}

GIR_PATTERN(sqrt_pow, "sqrt-as-pow", GIR_OP_Sqrt, "Sqrt of a non-negative value as Pow(x, 0.5)", sqrt_pow);
