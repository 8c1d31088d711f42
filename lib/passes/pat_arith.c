/* Elementwise operators in other elementwise operators, for targets with
 * few of them (LightNet's elew has Sub and Max but no Abs). */
#include "patterns.h"

/* Abs(x) = Max(x, 0 - x): exact for every float, -0 (Max(-0, +0) = +0),
 * infinities and NaN (Max propagates it) included. */
static gir_status abs_max(gir_rw *rw, const gir_node *n, gir_error *err)
{
    const gir_value *x = gir_pat_in(rw, n, 0);
    TRY(gir_pat_float_dtype(x, err));
    int32_t z, neg, y;
    TRY(gir_rw_scalar(rw, x->dtype, 0.0, &z, err));
    TRY(gir_rw_binary(rw, GIR_OP_Sub, z, n->in[0], NULL, &neg, err));
    TRY(gir_rw_binary(rw, GIR_OP_Max, n->in[0], neg, NULL, &y, err));
    return gir_rw_done(rw, &y, err);
}

const gir_pattern gir_pat_abs_max = {
    "abs-as-max", GIR_OP_Abs, "Abs as Max(x, 0 - x)", abs_max,
};
