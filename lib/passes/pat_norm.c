/* BatchNormalization's epsilon raised to the smallest normal float where
 * that changes nothing: for targets that read epsilon as a normal float32
 * (LightNet clamps it to [FLT_MIN, FLT_MAX]). */
#include "patterns.h"

#include <float.h>
#include <math.h>

/* With every variance v >= 2^-60 (constant), v + eps and v + FLT_MIN
 * differ by less than 2^-66 of v: far below float32's precision, so the
 * normalisation computes the same float32 values. */
static gir_status bn_epsilon_min(gir_rw *rw, const gir_node *n, gir_error *err)
{
    double eps = gir_node_float(n, "epsilon", 1e-5);
    if (eps >= FLT_MIN || eps < 0 || isnan(eps))
        return gir_pat_skip(err, "BatchNormalization with epsilon %g", eps);
    const gir_value *var = gir_pat_in(rw, n, 4);
    const void *p = NULL;
    if (!var || !var->data || var->producer >= 0 || var->dtype != GIR_DT_F32 ||
        gir_tensor_load(var->data, &p, NULL))
        return gir_pat_skip(err, "BatchNormalization whose variance is not a float32 constant");
    const float *v = p;
    int64_t count = gir_shape_numel(&var->shape);
    for (int64_t i = 0; i < count; i++)
        if (!(v[i] >= 0x1p-60f))
            return gir_pat_skip(err, "BatchNormalization with a variance below 2^-60 (%g): epsilon %g matters",
                                (double)v[i], eps);
    gir_node *m;
    TRY(gir_rw_copy(rw, n, n->in, n->n_in, 1, &m, err));
    TRY(gir_attrs_set_float(rw->g, &m->attrs, "epsilon", FLT_MIN, err));
    return gir_rw_done(rw, &m->out[0], err);
}

GIR_PATTERN(bn_epsilon_min, "batchnorm-epsilon-min", GIR_OP_BatchNormalization, "BatchNormalization epsilon below FLT_MIN written as FLT_MIN (same values: every variance >= 2^-60)", bn_epsilon_min);
