/* NNabla functions with no single canonical operator, decomposed into
 * several canonical nodes (swish, mish, GELU, CELU, the normalizations,
 * interpolate, arange, one-hot, stack, ...). */
#include "read.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* x op f(x), f's value named after it (suffix). */
static gir_status x_op_fx(mctx *m, bool *mapped, const char *suffix, gir_op f, gir_op op)
{
    if (!nnbr_unary(m))
        return GIR_OK;
    *mapped = true;
    int32_t fx;
    TRY(nnbr_step1(m, suffix, f, m->in[0], -1, &fx));
    return nnbr_step2(m, NULL, op, m->in[0], fx, m->out[0], NULL);
}

/* Swish: x * sigmoid(x) */
gir_status nnbr_map_swish(mctx *m, bool *mapped)
{
    return x_op_fx(m, mapped, "sigmoid", GIR_OP_Sigmoid, GIR_OP_Mul);
}

/* TanhShrink: x - tanh(x) */
gir_status nnbr_map_tanh_shrink(mctx *m, bool *mapped)
{
    return x_op_fx(m, mapped, "tanh", GIR_OP_Tanh, GIR_OP_Sub);
}

/* Mish: x * tanh(log(1 + exp(x))) */
gir_status nnbr_map_mish(mctx *m, bool *mapped)
{
    if (!nnbr_unary(m))
        return GIR_OK;
    *mapped = true;
    int32_t sp, t;
    TRY(nnbr_step1(m, "softplus", GIR_OP_Softplus, m->in[0], -1, &sp));
    TRY(nnbr_step1(m, "tanh", GIR_OP_Tanh, sp, -1, &t));
    return nnbr_step2(m, NULL, GIR_OP_Mul, m->in[0], t, m->out[0], NULL);
}

/* LogSigmoid: log(1 / (1 + exp(-x))) = -softplus(-x) */
gir_status nnbr_map_log_sigmoid(mctx *m, bool *mapped)
{
    if (!nnbr_unary(m))
        return GIR_OK;
    *mapped = true;
    int32_t nx, sp;
    TRY(nnbr_step_neg(m, "neg", m->in[0], -1, &nx));
    TRY(nnbr_step1(m, "softplus", GIR_OP_Softplus, nx, -1, &sp));
    return nnbr_step_neg(m, NULL, sp, m->out[0], NULL);
}

/* GELU as nnabla computes it (the tanh form):
 * 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) */
gir_status nnbr_map_gelu(mctx *m, bool *mapped)
{
    if (!nnbr_unary(m))
        return GIR_OK;
    *mapped = true;
    int32_t x = m->in[0], x2, x3, a, b, c, t, u, v;
    TRY(nnbr_step2(m, "square", GIR_OP_Mul, x, x, -1, &x2));
    TRY(nnbr_step2(m, "cube", GIR_OP_Mul, x2, x, -1, &x3));
    TRY(nnbr_step_scalar(m, "cube_scaled", GIR_OP_Mul, x3, 0.044715, -1, &a));
    TRY(nnbr_step2(m, "inner", GIR_OP_Add, x, a, -1, &b));
    TRY(nnbr_step_scalar(m, "inner_scaled", GIR_OP_Mul, b, 0.79788456080286535588, -1, &c));
    TRY(nnbr_step1(m, "tanh", GIR_OP_Tanh, c, -1, &t));
    TRY(nnbr_step_scalar(m, "one_plus", GIR_OP_Add, t, 1.0, -1, &u));
    TRY(nnbr_step2(m, "times_x", GIR_OP_Mul, x, u, -1, &v));
    return nnbr_step_scalar(m, "half", GIR_OP_Mul, v, 0.5, m->out[0], NULL);
}

/* CReLU / CELU: f(x) and f(-x) concatenated along axis */
static gir_status map_concat_pair(mctx *m, bool *mapped, gir_op op, double alpha, int64_t axis)
{
    int r = nnbr_unary_rank(m);
    if (r < 0 || axis < -r || axis >= r)
        return GIR_OK;
    *mapped = true;
    int32_t nx, pos, neg;
    gir_node *n;
    TRY(nnbr_step(m, "positive", op, &m->in[0], 1, -1, &n, &pos));
    if (op == GIR_OP_Elu)
        TRY(nnbr_set_float(m, n, "alpha", alpha));
    TRY(nnbr_infer(m, n));
    TRY(nnbr_step_neg(m, "neg", m->in[0], -1, &nx));
    TRY(nnbr_step(m, "negative", op, &nx, 1, -1, &n, &neg));
    if (op == GIR_OP_Elu)
        TRY(nnbr_set_float(m, n, "alpha", alpha));
    TRY(nnbr_infer(m, n));
    int32_t ins[2] = { pos, neg };
    TRY(nnbr_step(m, NULL, GIR_OP_Concat, ins, 2, m->out[0], &n, NULL));
    TRY(nnbr_set_int(m, n, "axis", axis));
    return nnbr_infer(m, n);
}

gir_status nnbr_map_crelu(mctx *m, bool *mapped)
{
    static const Nnabla__CReLUParameter zero = NNABLA__CRE_LUPARAMETER__INIT;
    const Nnabla__CReLUParameter *p = PARAM(m, CRELU_PARAM, crelu_param, zero);
    return map_concat_pair(m, mapped, GIR_OP_Relu, 0, p->axis);
}

gir_status nnbr_map_celu(mctx *m, bool *mapped)
{
    static const Nnabla__CELUParameter zero = NNABLA__CELUPARAMETER__INIT;
    const Nnabla__CELUParameter *p = PARAM(m, CELU_PARAM, celu_param, zero);
    return map_concat_pair(m, mapped, GIR_OP_Elu, p->alpha, p->axis);
}

/* (x - mean) / sqrt(var + eps) [* gamma] [+ beta], the statistics (biased
 * variance) taken over every axis of x but the kept ones; the inputs are
 * x, then beta unless no_bias, then gamma unless no_scale.  groups > 1:
 * the channel axis 1 is split into (groups, C / groups) for the
 * statistics (GroupNormalization), x of known shape. */
static gir_status map_norm_common(mctx *m, bool *mapped, const int64_t *keep_axes, size_t n_keep, float eps,
                                  bool no_scale, bool no_bias, int64_t groups)
{
    size_t want_in = 1 + !no_bias + !no_scale;
    int r = nnbr_rank_of(m, m->in[0]);
    if (m->n_in != want_in || m->n_out != 1 || r < 1 || (groups > 1 && r + 1 > GIR_MAX_RANK))
        return GIR_OK;
    const gir_value *x = nnbr_val(m, m->in[0]);
    bool keep[GIR_MAX_RANK + 1] = { false };
    for (size_t i = 0; i < n_keep; i++) {
        int64_t a = keep_axes[i] < 0 ? keep_axes[i] + r : keep_axes[i];
        if (a < 0 || a >= r)
            return GIR_OK;
        keep[a] = true;
    }
    int64_t gshape[GIR_MAX_RANK];
    int sr = r; /* rank the statistics are taken at */
    if (groups > 1) {
        /* (B, C, ...) -> (B, G, C / G, ...), statistics per (B, G) */
        if (r < 2 || !keep[0] || !keep[1] || n_keep != 2)
            return GIR_OK;
        for (int i = 0; i < r; i++)
            if (x->shape.dims[i] < 0)
                return GIR_OK;
        if (x->shape.dims[1] % groups != 0)
            return GIR_OK;
        gshape[0] = x->shape.dims[0];
        gshape[1] = groups;
        gshape[2] = x->shape.dims[1] / groups;
        for (int i = 2; i < r; i++)
            gshape[i + 1] = x->shape.dims[i];
        sr = r + 1;
        memset(keep, 0, sizeof keep);
        keep[0] = keep[1] = true;
    }
    int64_t axes[GIR_MAX_RANK + 1];
    size_t na = 0;
    for (int i = 0; i < sr; i++)
        if (!keep[i])
            axes[na++] = i;
    if (na == 0)
        return GIR_OK;
    *mapped = true;
    int32_t xs = m->in[0], mean, d, sq, var, ve, sd, nrm;
    gir_node *n;
    if (groups > 1) {
        TRY(nnbr_step(m, "group", GIR_OP_Reshape, &xs, 1, -1, &n, &xs));
        TRY(nnbr_set_ints(m, n, "shape", gshape, (size_t)sr));
        TRY(nnbr_meta_int(m, n, NNB_META_INPLACE, 1)); /* as nnabla's Reshape reads back */
        TRY(nnbr_infer(m, n));
    }
    TRY(nnbr_step(m, "mean", GIR_OP_ReduceMean, &xs, 1, -1, &n, &mean));
    TRY(nnbr_set_ints(m, n, "axes", axes, na));
    TRY(nnbr_set_int(m, n, "keepdims", 1));
    TRY(nnbr_infer(m, n));
    TRY(nnbr_step2(m, "centered", GIR_OP_Sub, xs, mean, -1, &d));
    TRY(nnbr_step2(m, "squared", GIR_OP_Mul, d, d, -1, &sq));
    TRY(nnbr_step(m, "variance", GIR_OP_ReduceMean, &sq, 1, -1, &n, &var));
    TRY(nnbr_set_ints(m, n, "axes", axes, na));
    TRY(nnbr_set_int(m, n, "keepdims", 1));
    TRY(nnbr_infer(m, n));
    TRY(nnbr_step_scalar(m, "variance_eps", GIR_OP_Add, var, (double)eps, -1, &ve));
    TRY(nnbr_step_val(m, "std", GIR_OP_Sqrt, ve, 0.5, -1, &sd));
    bool last = no_scale && no_bias && groups <= 1;
    TRY(nnbr_step2(m, last ? NULL : "normalized", GIR_OP_Div, d, sd, last ? m->out[0] : -1, &nrm));
    if (groups > 1) {
        int32_t back;
        last = no_scale && no_bias;
        TRY(nnbr_step(m, last ? NULL : "ungroup", GIR_OP_Reshape, &nrm, 1, last ? m->out[0] : -1, &n, &back));
        TRY(nnbr_set_ints(m, n, "shape", x->shape.dims, (size_t)r));
        TRY(nnbr_meta_int(m, n, NNB_META_INPLACE, 1));
        TRY(nnbr_infer(m, n));
        nrm = back;
    }
    int32_t beta = no_bias ? -1 : m->in[1], gamma = no_scale ? -1 : m->in[no_bias ? 1 : 2];
    if (gamma >= 0)
        TRY(nnbr_step2(m, no_bias ? NULL : "scaled", GIR_OP_Mul, nrm, gamma, no_bias ? m->out[0] : -1, &nrm));
    if (beta >= 0)
        TRY(nnbr_step2(m, NULL, GIR_OP_Add, nrm, beta, m->out[0], NULL));
    return GIR_OK;
}

gir_status nnbr_map_layer_normalization(mctx *m, bool *mapped)
{
    static const Nnabla__LayerNormalizationParameter zero = NNABLA__LAYER_NORMALIZATION_PARAMETER__INIT;
    const Nnabla__LayerNormalizationParameter *p =
        PARAM(m, LAYER_NORMALIZATION_PARAM, layer_normalization_param, zero);
    return map_norm_common(m, mapped, p->batch_axis, p->n_batch_axis, p->eps, p->no_scale, p->no_bias, 1);
}

gir_status nnbr_map_tensor_normalization(mctx *m, bool *mapped)
{
    static const Nnabla__TensorNormalizationParameter zero = NNABLA__TENSOR_NORMALIZATION_PARAMETER__INIT;
    const Nnabla__TensorNormalizationParameter *p =
        PARAM(m, TENSOR_NORMALIZATION_PARAM, tensor_normalization_param, zero);
    return map_norm_common(m, mapped, p->axes, p->n_axes, p->eps, p->no_scale, p->no_bias, 1);
}

gir_status nnbr_map_instance_normalization(mctx *m, bool *mapped)
{
    static const Nnabla__InstanceNormalizationParameter zero = NNABLA__INSTANCE_NORMALIZATION_PARAMETER__INIT;
    const Nnabla__InstanceNormalizationParameter *p =
        PARAM(m, INSTANCE_NORMALIZATION_PARAM, instance_normalization_param, zero);
    int64_t keep[GIR_MAX_RANK + 1];
    if (p->n_batch_axis + 1 > GIR_MAX_RANK)
        return GIR_OK;
    memcpy(keep, p->batch_axis, p->n_batch_axis * sizeof *keep);
    keep[p->n_batch_axis] = p->channel_axis;
    return map_norm_common(m, mapped, keep, p->n_batch_axis + 1, p->eps, p->no_scale, p->no_bias, 1);
}

gir_status nnbr_map_group_normalization(mctx *m, bool *mapped)
{
    static const Nnabla__GroupNormalizationParameter zero = NNABLA__GROUP_NORMALIZATION_PARAMETER__INIT;
    const Nnabla__GroupNormalizationParameter *p =
        PARAM(m, GROUP_NORMALIZATION_PARAM, group_normalization_param, zero);
    int r = nnbr_rank_of(m, m->in[0]);
    int64_t ca = p->channel_axis < 0 && r >= 0 ? p->channel_axis + r : p->channel_axis;
    /* the layout nnabla's own networks use: (B, C, ...) */
    if (ca != 1 || p->n_batch_axis != 1 || (p->batch_axis[0] != 0 && p->batch_axis[0] != -r) || p->num_groups < 1)
        return GIR_OK;
    int64_t keep[2] = { 0, 1 };
    if (p->num_groups == 1)
        return map_norm_common(m, mapped, keep, 1, p->eps, p->no_scale, p->no_bias, 1);
    return map_norm_common(m, mapped, keep, 2, p->eps, p->no_scale, p->no_bias, p->num_groups);
}

/* Interpolate: Resize of the last len(output_size) axes.  nnabla's source
 * coordinate is scale * dst (align_corners: scale (L - 1) / (L' - 1), else
 * L / L'), or with half_pixel max(0, scale (dst + 0.5) - 0.5), linear
 * between floor and the next cell, nearest the floor; half_pixel_for_nn:
 * floor(L / L' (dst + 0.5)).  Those are ONNX's align_corners, asymmetric,
 * half_pixel and tf_half_pixel_for_nn modes with nearest_mode floor. */
gir_status nnbr_map_interpolate(mctx *m, bool *mapped)
{
    static const Nnabla__InterpolateParameter zero = NNABLA__INTERPOLATE_PARAMETER__INIT;
    const Nnabla__InterpolateParameter *p = PARAM(m, INTERPOLATE_PARAM, interpolate_param, zero);
    int r = nnbr_unary_rank(m);
    size_t k = p->n_output_size;
    if (p->channel_last || r < 1 || k < 1 || k > (size_t)r)
        return GIR_OK;
    bool nearest = strcmp(p->mode, "nearest") == 0, linear = strcmp(p->mode, "linear") == 0;
    const char *coord;
    if (nearest && p->half_pixel_for_nn)
        coord = "tf_half_pixel_for_nn";
    else if (p->align_corners && p->half_pixel)
        return GIR_OK; /* half-pixel offsets with the corner-aligned scale: no ONNX mode */
    else if (p->align_corners)
        coord = "align_corners";
    else if (p->half_pixel)
        coord = "half_pixel";
    else
        coord = "asymmetric";
    if (!nearest && !linear)
        return GIR_OK;
    const gir_value *x = nnbr_val(m, m->in[0]);
    int64_t sizes[GIR_MAX_RANK];
    for (int i = 0; i < r; i++) {
        sizes[i] = i < r - (int)k ? x->shape.dims[i] : p->output_size[i - (r - (int)k)];
        if (sizes[i] < 0 || (i >= r - (int)k && (sizes[i] < 1 || x->shape.dims[i] < 1)))
            return GIR_OK; /* unknown sizes (a symbolic batch) */
    }
    gir_node *n;
    TRY(nnbr_map_to(m, mapped, GIR_OP_Resize, &n));
    TRY(nnbr_set_ints(m, n, "sizes", sizes, (size_t)r));
    TRY(nnbr_set_string(m, n, "mode", nearest ? "nearest" : "linear"));
    TRY(nnbr_set_string(m, n, "coordinate_transformation_mode", coord));
    if (nearest)
        TRY(nnbr_set_string(m, n, "nearest_mode", "floor"));
    return nnbr_infer(m, n);
}

/* A float32 constant "<function>/<suffix>" of shape dims holding data
 * (adopted). */
static gir_status const_value(mctx *m, const char *suffix, const int64_t *dims, int rank, float *data, int32_t *ci)
{
    gir_shape sh = { rank, { 0 } };
    memcpy(sh.dims, dims, (size_t)rank * sizeof *dims);
    gir_tensor *t;
    TRY(gir_tensor_adopt(GIR_DT_F32, &sh, data, &t, m->err));
    return gir_graph_add_const_named(m->g, t, ci, m->err, "%s%s%s", m->name, suffix ? "/" : "", suffix ? suffix : "");
}

/* A generator function whose output is known at read time becomes that
 * constant: the function's output variable, now a constant value. */
static gir_status become_constant(mctx *m, const int64_t *dims, int rank, float *data)
{
    gir_shape sh = { rank, { 0 } };
    memcpy(sh.dims, dims, (size_t)rank * sizeof *dims);
    gir_tensor *t;
    TRY(gir_tensor_adopt(GIR_DT_F32, &sh, data, &t, m->err));
    /* an Identity of the constant keeps the function's output variable */
    int32_t ci;
    TRY(gir_graph_add_const_named(m->g, t, &ci, m->err, "%s/value", m->name));
    return nnbr_step1(m, NULL, GIR_OP_Identity, ci, m->out[0], NULL);
}

/* Arange: start + i * step (float32 arithmetic, as nnabla's kernel),
 * ceil((stop - start) / step) values, known when the file is read */
gir_status nnbr_map_arange(mctx *m, bool *mapped)
{
    static const Nnabla__ArangeParameter zero = NNABLA__ARANGE_PARAMETER__INIT;
    const Nnabla__ArangeParameter *p = PARAM(m, ARANGE_PARAM, arange_param, zero);
    if (m->n_in != 0 || m->n_out != 1 || p->step == 0.0f || !isfinite(p->start) || !isfinite(p->stop) ||
        !isfinite(p->step))
        return GIR_OK;
    double len = ceil(((double)p->stop - (double)p->start) / (double)p->step);
    if (len < 0)
        len = 0;
    if (len > 1e8)
        return GIR_OK;
    size_t n = (size_t)len;
    float *data = malloc(n ? n * sizeof *data : 1);
    if (!data)
        return gir_nomem(m->err);
    for (size_t i = 0; i < n; i++)
        data[i] = p->start + (float)i * p->step;
    *mapped = true;
    int64_t d = (int64_t)n;
    return become_constant(m, &d, 1, data);
}

/* Constant: shape filled with val */
gir_status nnbr_map_constant(mctx *m, bool *mapped)
{
    static const Nnabla__ConstantParameter zero = NNABLA__CONSTANT_PARAMETER__INIT;
    const Nnabla__ConstantParameter *p = PARAM(m, CONSTANT_PARAM, constant_param, zero);
    size_t r = p->shape ? p->shape->n_dim : 0;
    if (m->n_in != 0 || m->n_out != 1 || r > GIR_MAX_RANK)
        return GIR_OK;
    int64_t dims[GIR_MAX_RANK];
    uint64_t n = 1;
    for (size_t i = 0; i < r; i++) {
        dims[i] = p->shape->dim[i];
        if (dims[i] < 0 || !gir_mul_u64(n, (uint64_t)dims[i], &n) || n > 100000000)
            return GIR_OK; /* a batch placeholder or too big to hold */
    }
    float *data = malloc(n ? n * sizeof *data : 1);
    if (!data)
        return gir_nomem(m->err);
    for (uint64_t i = 0; i < n; i++)
        data[i] = p->val;
    *mapped = true;
    return become_constant(m, dims, (int)r, data);
}

/* OneHot of one index axis: (x[..., 0:1] == 0..n-1) as float */
gir_status nnbr_map_one_hot(mctx *m, bool *mapped)
{
    static const Nnabla__OneHotParameter zero = NNABLA__ONE_HOT_PARAMETER__INIT;
    const Nnabla__OneHotParameter *p = PARAM(m, ONE_HOT_PARAM, one_hot_param, zero);
    int r = nnbr_unary_rank(m);
    if (!p->shape || p->shape->n_dim != 1 || r < 1 || nnbr_val(m, m->in[0])->shape.dims[r - 1] != 1 ||
        p->shape->dim[0] < 1 || p->shape->dim[0] > 100000000)
        return GIR_OK;
    *mapped = true;
    int64_t n = p->shape->dim[0];
    float *classes = malloc((size_t)n * sizeof *classes);
    if (!classes)
        return gir_nomem(m->err);
    for (int64_t i = 0; i < n; i++)
        classes[i] = (float)i;
    int32_t c, eq;
    TRY(const_value(m, "classes", &n, 1, classes, &c));
    TRY(nnbr_step2(m, "equal", GIR_OP_Equal, m->in[0], c, -1, &eq));
    gir_node *cast;
    TRY(nnbr_step(m, NULL, GIR_OP_Cast, &eq, 1, m->out[0], &cast, NULL));
    TRY(nnbr_set_string(m, cast, "to", "float32"));
    return nnbr_infer(m, cast);
}

/* BatchMatmul with transpose_a / transpose_b: the last two axes swapped
 * first */
gir_status nnbr_map_batch_matmul_t(mctx *m, bool *mapped, bool ta, bool tb)
{
    int ra = nnbr_rank_of(m, m->in[0]), rb = nnbr_rank_of(m, m->in[1]);
    int32_t a = m->in[0], b = m->in[1];
    *mapped = true;
    for (int k = 0; k < 2; k++) {
        if (!(k ? tb : ta))
            continue;
        int r = k ? rb : ra;
        int64_t perm[GIR_MAX_RANK];
        for (int i = 0; i < r; i++)
            perm[i] = i;
        perm[r - 2] = r - 1;
        perm[r - 1] = r - 2;
        gir_node *t;
        int32_t *v = k ? &b : &a;
        TRY(nnbr_step(m, k ? "transpose_b" : "transpose_a", GIR_OP_Transpose, v, 1, -1, &t, v));
        TRY(nnbr_set_ints(m, t, "perm", perm, (size_t)r));
        TRY(nnbr_infer(m, t));
    }
    return nnbr_step2(m, NULL, GIR_OP_MatMul, a, b, m->out[0], NULL);
}

/* WeightStandardization: (w - mean) / sqrt(var + eps) over every axis
 * but channel_axis */
gir_status nnbr_map_weight_standardization(mctx *m, bool *mapped)
{
    static const Nnabla__WeightStandardizationParameter zero = NNABLA__WEIGHT_STANDARDIZATION_PARAMETER__INIT;
    const Nnabla__WeightStandardizationParameter *p =
        PARAM(m, WEIGHT_STANDARDIZATION_PARAM, weight_standardization_param, zero);
    return map_norm_common(m, mapped, &p->channel_axis, 1, p->eps, true, true, 1);
}

/* WeightNormalization: g * w / sqrt(sum(w^2) + eps), the sum over every
 * axis but dim, g (one value per index of dim) reshaped to (1.., C, 1..) */
gir_status nnbr_map_weight_normalization(mctx *m, bool *mapped)
{
    static const Nnabla__WeightNormalizationParameter zero = NNABLA__WEIGHT_NORMALIZATION_PARAMETER__INIT;
    const Nnabla__WeightNormalizationParameter *p =
        PARAM(m, WEIGHT_NORMALIZATION_PARAM, weight_normalization_param, zero);
    bool ok = nnbr_arity(m, 2, 2, 1, 1);
    int r = nnbr_rank_of(m, m->in[0]);
    int64_t dim = p->dim < 0 && r >= 0 ? p->dim + r : p->dim;
    if (!ok || r < 1 || dim < 0 || dim >= r || nnbr_rank_of(m, m->in[1]) != 1 ||
        nnbr_numel_of(m, m->in[1]) != nnbr_val(m, m->in[0])->shape.dims[dim])
        return GIR_OK;
    *mapped = true;
    int64_t gshape[GIR_MAX_RANK], axes[GIR_MAX_RANK];
    size_t na = 0;
    for (int i = 0; i < r; i++)
        gshape[i] = i == dim ? nnbr_numel_of(m, m->in[1]) : 1; /* the rank of w: nnabla's Mul2 needs equal ranks */
    gir_node *n;
    int32_t g;
    TRY(nnbr_step(m, "g", GIR_OP_Reshape, &m->in[1], 1, -1, &n, &g));
    TRY(nnbr_set_ints(m, n, "shape", gshape, (size_t)r));
    TRY(nnbr_meta_int(m, n, NNB_META_INPLACE, 1));
    TRY(nnbr_infer(m, n));
    for (int i = 0; i < r; i++)
        if (i != dim)
            axes[na++] = i;
    int32_t sq, sum, se, nrm, q;
    TRY(nnbr_step2(m, "squared", GIR_OP_Mul, m->in[0], m->in[0], -1, &sq));
    TRY(nnbr_step(m, "sum", GIR_OP_ReduceSum, &sq, 1, -1, &n, &sum));
    if (na)
        TRY(nnbr_set_ints(m, n, "axes", axes, na));
    else
        TRY(nnbr_set_int(m, n, "noop_with_empty_axes", 1));
    TRY(nnbr_set_int(m, n, "keepdims", 1));
    TRY(nnbr_infer(m, n));
    TRY(nnbr_step_scalar(m, "sum_eps", GIR_OP_Add, sum, (double)p->eps, -1, &se));
    TRY(nnbr_step_val(m, "norm", GIR_OP_Sqrt, se, 0.5, -1, &nrm));
    TRY(nnbr_step2(m, "normalized", GIR_OP_Div, m->in[0], nrm, -1, &q));
    return nnbr_step2(m, NULL, GIR_OP_Mul, q, g, m->out[0], NULL);
}

/* Max / Min with with_index or only_index over one axis: ArgMax / ArgMin
 * (the first index of ties, as nnabla's kernel keeps the first extreme);
 * with_index also gives the values (ReduceMax / ReduceMin). */
gir_status nnbr_map_arg(mctx *m, bool *mapped, gir_op reduce, gir_op arg, const int64_t *axes, size_t n_axes,
                        bool keep, bool with_index, bool only_index)
{
    int r = nnbr_rank_of(m, m->in[0]);
    size_t want_out = only_index ? 1 : 2;
    if (m->n_in != 1 || m->n_out != want_out || r < 0)
        return GIR_OK;
    int64_t axis;
    if (n_axes == 1)
        axis = axes[0] < 0 ? axes[0] + r : axes[0];
    else if (n_axes == 0 && r == 1)
        axis = 0;
    else
        return GIR_OK; /* nnabla's index into several flattened axes: no canonical form */
    if (axis < 0 || axis >= r)
        return GIR_OK;
    (void)with_index;
    *mapped = true;
    gir_node *n;
    if (!only_index) {
        const char *nm = gir_arena_printf(&m->g->arena, "%s/values", m->name);
        if (!nm)
            return gir_nomem(m->err);
        TRY(nnbr_add_node(m, gir_graph_unique_node_name(m->g, nm, m->err), reduce, 1, 1, &n));
        n->in[0] = m->in[0];
        TRY(gir_node_set_output(m->g, n, 0, m->out[0], m->err));
        TRY(nnbr_set_ints(m, n, "axes", &axis, 1));
        TRY(nnbr_set_int(m, n, "keepdims", keep));
        TRY(nnbr_infer(m, n));
    }
    int32_t idx_out = m->out[only_index ? 0 : 1];
    m->g->values[idx_out]->dtype = GIR_DT_I64; /* indices */
    TRY(nnbr_step(m, NULL, arg, &m->in[0], 1, idx_out, &n, NULL));
    TRY(nnbr_set_int(m, n, "axis", axis));
    TRY(nnbr_set_int(m, n, "keepdims", keep));
    return nnbr_infer(m, n);
}
