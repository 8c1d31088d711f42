/* NNabla layer functions -> canonical operators: convolution and
 * deconvolution (depthwise too), pooling, unpooling, embed, ReLU and
 * LeakyReLU, with their weights. */
#include "read.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Fills a spatial list of n values from a Shape (absent/empty: dflt each). */
static bool spatial(const Nnabla__Shape *s, size_t n, int64_t dflt, int64_t *out)
{
    if (!s || s->n_dim == 0) {
        for (size_t i = 0; i < n; i++)
            out[i] = dflt;
        return true;
    }
    if (s->n_dim != n)
        return false;
    memcpy(out, s->dim, n * sizeof *out);
    return true;
}

/* depthwise: the weight has no input-channel axis, (C', K...); it is
 * viewed as (C', 1, K...) and group is the input's channel count. */
static gir_status map_conv_common(mctx *m, bool *mapped, bool transposed, int64_t base_axis,
                                  const Nnabla__Shape *pad, const Nnabla__Shape *stride,
                                  const Nnabla__Shape *dilation, int64_t group, bool channel_last,
                                  const Nnabla__Shape *output_padding, bool depthwise)
{
    bool ok = nnbr_arity(m, 2, 3, 1, 1);
    const gir_value *wv = nnbr_val(m, m->in[1]);
    if (!ok || !wv || wv->shape.rank < 2)
        return GIR_OK;
    gir_value wview = *wv;
    const gir_value *w = &wview;
    if (depthwise) {
        /* (C', K...) -> (C', 1, K...) */
        int64_t c = nnbr_rank_of(m, m->in[0]) >= 2 ? nnbr_val(m, m->in[0])->shape.dims[1] : -1;
        if (wv->shape.rank + 1 > GIR_MAX_RANK || c < 1 || !nnbr_own_weight(m, m->in[1]))
            return GIR_OK;
        wview.shape.rank = wv->shape.rank + 1;
        wview.shape.dims[1] = 1;
        for (int i = 1; i < wv->shape.rank; i++)
            wview.shape.dims[i + 1] = wv->shape.dims[i];
        group = c;
        if (!transposed && wv->shape.dims[0] % c != 0)
            return GIR_OK;
        if (transposed && wv->shape.dims[0] != c)
            return GIR_OK;
    }
    if (channel_last || group < 1 || w->shape.rank < 3)
        return GIR_OK;
    size_t ns = (size_t)w->shape.rank - 2;
    int r = nnbr_rank_of(m, m->in[0]);
    if (base_axis < 0 && r >= 0)
        base_axis += r;
    if (base_axis != 1 || (r >= 0 && (size_t)r != ns + 2))
        return GIR_OK;
    int64_t pads[2 * GIR_MAX_RANK], strides[GIR_MAX_RANK], dil[GIR_MAX_RANK], opad[GIR_MAX_RANK], k[GIR_MAX_RANK];
    if (!spatial(pad, ns, 0, pads) || !spatial(stride, ns, 1, strides) || !spatial(dilation, ns, 1, dil) ||
        !spatial(output_padding, ns, 0, opad))
        return GIR_OK;
    for (size_t i = 0; i < ns; i++) {
        if (pads[i] < 0 || strides[i] < 1 || dil[i] < 1 || opad[i] < 0 || w->shape.dims[2 + i] < 1)
            return GIR_OK;
        pads[ns + i] = pads[i];
        k[i] = w->shape.dims[2 + i];
    }
    if (m->n_in == 3 && nnbr_rank_of(m, m->in[2]) != 1)
        return GIR_OK;
    *mapped = true;
    gir_node *n;
    if (depthwise)
        TRY(nnbr_view_weight(m, m->in[1], w->shape.dims, w->shape.rank));
    TRY(nnbr_simple(m, transposed ? GIR_OP_ConvTranspose : GIR_OP_Conv, &n));
    TRY(nnbr_set_ints(m, n, "kernel_shape", k, ns));
    TRY(nnbr_set_ints(m, n, "strides", strides, ns));
    TRY(nnbr_set_ints(m, n, "dilations", dil, ns));
    TRY(nnbr_set_ints(m, n, "pads", pads, 2 * ns));
    TRY(nnbr_set_int(m, n, "group", group));
    if (transposed)
        TRY(nnbr_set_ints(m, n, "output_padding", opad, ns));
    return nnbr_infer(m, n);
}

gir_status nnbr_map_convolution(mctx *m, bool *mapped)
{
    static const Nnabla__ConvolutionParameter zero = NNABLA__CONVOLUTION_PARAMETER__INIT;
    const Nnabla__ConvolutionParameter *p = PARAM(m, CONVOLUTION_PARAM, convolution_param, zero);
    return map_conv_common(m, mapped, false, p->base_axis, p->pad, p->stride, p->dilation, p->group,
                           p->channel_last, NULL, false);
}

gir_status nnbr_map_deconvolution(mctx *m, bool *mapped)
{
    static const Nnabla__DeconvolutionParameter zero = NNABLA__DECONVOLUTION_PARAMETER__INIT;
    const Nnabla__DeconvolutionParameter *p = PARAM(m, DECONVOLUTION_PARAM, deconvolution_param, zero);
    return map_conv_common(m, mapped, true, p->base_axis, p->pad, p->stride, p->dilation, p->group,
                           p->channel_last, p->output_padding, false);
}

/* DepthwiseConvolution: Conv with one group per input channel, the weight
 * (C * multiplier, K...) viewed as (C * multiplier, 1, K...). */
gir_status nnbr_map_depthwise_convolution(mctx *m, bool *mapped)
{
    static const Nnabla__DepthwiseConvolutionParameter zero = NNABLA__DEPTHWISE_CONVOLUTION_PARAMETER__INIT;
    const Nnabla__DepthwiseConvolutionParameter *p =
        PARAM(m, DEPTHWISE_CONVOLUTION_PARAM, depthwise_convolution_param, zero);
    const gir_value *w = nnbr_val(m, m->in[1]), *x = nnbr_val(m, m->in[0]);
    int64_t mult = p->multiplier ? p->multiplier : 1;
    if (m->n_in < 2 || !w || !x || x->shape.rank < 2 || w->shape.rank < 1 ||
        w->shape.dims[0] != x->shape.dims[1] * mult)
        return GIR_OK;
    return map_conv_common(m, mapped, false, p->base_axis, p->pad, p->stride, p->dilation, 1, false, NULL, true);
}

/* DepthwiseDeconvolution with divisor 1: ConvTranspose with one group per
 * channel, the weight (C, K...) viewed as (C, 1, K...). */
gir_status nnbr_map_depthwise_deconvolution(mctx *m, bool *mapped)
{
    static const Nnabla__DepthwiseDeconvolutionParameter zero = NNABLA__DEPTHWISE_DECONVOLUTION_PARAMETER__INIT;
    const Nnabla__DepthwiseDeconvolutionParameter *p =
        PARAM(m, DEPTHWISE_DECONVOLUTION_PARAM, depthwise_deconvolution_param, zero);
    if (p->divisor > 1)
        return GIR_OK; /* several input channels summed into one: nnabla's grouping is not ConvTranspose's */
    return map_conv_common(m, mapped, true, p->base_axis, p->pad, p->stride, p->dilation, 1, false, NULL, true);
}

int64_t nnb_onnx_pool_len(int64_t L, int64_t k, int64_t s, int64_t pb, int64_t pe, bool ceil_mode)
{
    int64_t span = L + pb + pe - k;
    if (span < 0)
        return 0;
    int64_t out = ceil_mode ? (span + s - 1) / s + 1 : span / s + 1;
    if (ceil_mode && (out - 1) * s >= L + pb)
        out--; /* the last window may not start in the end padding */
    return out;
}

/* Pooling: kernel over the last len(kernel) axes of an (N, C, ...) input.
 * including_pad: -1 max, 0/1 average without/with the padding counted, 2
 * a sum (averaged with the padding counted, every window whole).
 * ignore_border=true is ONNX's floor mode with symmetric pads; false is
 * floor((L + p - 1) / s) + 1 cells, which floor mode reproduces with extra
 * padding at the end of each axis (the windows start at the same places). */
static gir_status map_pool(mctx *m, bool *mapped, gir_op op, const Nnabla__Shape *kernel,
                           const Nnabla__Shape *stride, bool ignore_border, const Nnabla__Shape *pad,
                           bool channel_last, int including_pad)
{
    bool ok = nnbr_arity(m, 1, 1, 1, 1);
    const gir_value *x = nnbr_val(m, m->in[0]);
    if (!ok || channel_last || !kernel || kernel->n_dim == 0 || kernel->n_dim > GIR_MAX_RANK - 2 || !x ||
        x->shape.rank != (int)kernel->n_dim + 2)
        return GIR_OK;
    size_t ns = kernel->n_dim;
    int64_t k[GIR_MAX_RANK], s[GIR_MAX_RANK], pads[2 * GIR_MAX_RANK];
    memcpy(k, kernel->dim, ns * sizeof *k);
    if (!spatial(stride, ns, 0, s) || !spatial(pad, ns, 0, pads))
        return GIR_OK;
    for (size_t i = 0; i < ns; i++) {
        if (!stride || stride->n_dim == 0)
            s[i] = k[i];
        if (k[i] < 1 || s[i] < 1 || pads[i] < 0)
            return GIR_OK;
        pads[ns + i] = pads[i];
    }
    /* ignore_border=false: floor((L + p - 1) / s) + 1 cells; ONNX's ceil
     * mode with symmetric pads when that agrees (the usual k = s case), else
     * floor mode with more padding at the end (windows start alike). */
    bool ceil = false;
    if (!ignore_border) {
        ceil = including_pad == -1 || including_pad == 0;
        int64_t end[GIR_MAX_RANK];
        bool unknown = false;
        for (size_t i = 0; i < ns; i++) {
            int64_t L = x->shape.dims[2 + i];
            if (L < 0) {
                /* the padding would depend on the size, unless ceil mode
                 * gives the same cells for every size: p = k - s */
                if (!ceil || pads[i] != k[i] - s[i])
                    return GIR_OK;
                end[i] = pads[i];
                unknown = true;
                continue;
            }
            int64_t cells = (L + pads[i] - 1) / s[i] + 1;
            if (nnb_onnx_pool_len(L, k[i], s[i], pads[i], pads[i], true) != cells)
                ceil = false;
            end[i] = (cells - 1) * s[i] + k[i] - L - pads[i];
            if (end[i] < 0)
                end[i] = 0;
            /* averaging with the padding counted: the divisor nnabla uses
             * stops at L + p, so more end padding would change it */
            if (including_pad == 1 && end[i] > pads[i])
                return GIR_OK;
        }
        if (!ceil && unknown)
            return GIR_OK; /* an axis of unknown size needs ceil mode, another floor mode */
        if (!ceil)
            for (size_t i = 0; i < ns; i++)
                pads[ns + i] = end[i];
    }
    gir_node *n;
    TRY(nnbr_map_to(m, mapped, op, &n));
    TRY(nnbr_set_ints(m, n, "kernel_shape", k, ns));
    TRY(nnbr_set_ints(m, n, "strides", s, ns));
    TRY(nnbr_set_ints(m, n, "pads", pads, 2 * ns));
    TRY(nnbr_set_int(m, n, "ceil_mode", ceil));
    TRY(nnbr_meta_int(m, n, NNB_META_IGNORE_BORDER, ignore_border));
    if (op == GIR_OP_AveragePool)
        TRY(nnbr_set_int(m, n, "count_include_pad", including_pad >= 1));
    return nnbr_infer(m, n);
}

gir_status nnbr_map_max_pooling(mctx *m, bool *mapped)
{
    static const Nnabla__MaxPoolingParameter zero = NNABLA__MAX_POOLING_PARAMETER__INIT;
    const Nnabla__MaxPoolingParameter *p = PARAM(m, MAX_POOLING_PARAM, max_pooling_param, zero);
    return map_pool(m, mapped, GIR_OP_MaxPool, p->kernel, p->stride, p->ignore_border, p->pad, p->channel_last,
                    -1);
}

gir_status nnbr_map_average_pooling(mctx *m, bool *mapped)
{
    static const Nnabla__AveragePoolingParameter zero = NNABLA__AVERAGE_POOLING_PARAMETER__INIT;
    const Nnabla__AveragePoolingParameter *p = PARAM(m, AVERAGE_POOLING_PARAM, average_pooling_param, zero);
    return map_pool(m, mapped, GIR_OP_AveragePool, p->kernel, p->stride, p->ignore_border, p->pad,
                    p->channel_last, p->including_pad ? 1 : 0);
}

/* SumPooling: AveragePool with the padding counted, every window whole
 * (floor mode, more end padding for ignore_border=false), times the window
 * size; the writer folds the pair back. */
gir_status nnbr_map_sum_pooling(mctx *m, bool *mapped)
{
    static const Nnabla__SumPoolingParameter zero = NNABLA__SUM_POOLING_PARAMETER__INIT;
    const Nnabla__SumPoolingParameter *p = PARAM(m, SUM_POOLING_PARAM, sum_pooling_param, zero);
    if (m->n_in != 1 || m->n_out != 1 || !p->kernel)
        return GIR_OK;
    TRY(map_pool(m, mapped, GIR_OP_AveragePool, p->kernel, p->stride, p->ignore_border, p->pad, p->channel_last,
                 2));
    if (!*mapped)
        return GIR_OK;
    /* the average goes to a value of its own; the product to the output */
    gir_node *pool = m->first;
    int32_t y = pool->out[0];
    m->g->values[y]->producer = -1;
    const char *aname = gir_arena_printf(&m->g->arena, "%s/average", m->name);
    const char *mname = gir_arena_printf(&m->g->arena, "%s/window_sum", m->name);
    if (!aname || !mname)
        return gir_nomem(m->err);
    TRY(gir_node_make_output(m->g, pool, 0, gir_graph_unique_value_name(m->g, aname, m->err), m->err));
    TRY(nnbr_infer(m, pool));
    TRY(gir_attrs_set_string(m->g, &pool->meta, NNB_META_TYPE, "SumPooling", m->err));
    double area = 1;
    for (size_t i = 0; i < p->kernel->n_dim; i++)
        area *= (double)p->kernel->dim[i];
    int32_t k;
    TRY(nnbr_scalar_value(m, "window", area, &k));
    gir_node *n;
    TRY(gir_graph_add_node(m->g, gir_graph_unique_node_name(m->g, mname, m->err), GIR_OP_Mul, 2, 1, &n, m->err));
    n->in[0] = pool->out[0];
    n->in[1] = k;
    TRY(gir_node_set_output(m->g, n, 0, y, m->err));
    m->first = pool;
    return nnbr_infer(m, n);
}

gir_status nnbr_map_global_average_pooling(mctx *m, bool *mapped)
{
    if (nnbr_unary_rank(m) != 4) /* nnabla's output is (N, C, 1, 1) for any rank */
        return GIR_OK;
    gir_node *n;
    TRY(nnbr_map_to(m, mapped, GIR_OP_GlobalAveragePool, &n));
    return nnbr_infer(m, n);
}

gir_status nnbr_map_unpooling(mctx *m, bool *mapped)
{
    static const Nnabla__UnpoolingParameter zero = NNABLA__UNPOOLING_PARAMETER__INIT;
    const Nnabla__UnpoolingParameter *p = PARAM(m, UNPOOLING_PARAM, unpooling_param, zero);
    int r = nnbr_unary_rank(m);
    if (p->channel_last || !p->kernel || p->kernel->n_dim == 0 || r < (int)p->kernel->n_dim)
        return GIR_OK;
    double scales[GIR_MAX_RANK];
    size_t lead = (size_t)r - p->kernel->n_dim;
    for (int i = 0; i < r; i++) {
        int64_t kk = (size_t)i < lead ? 1 : p->kernel->dim[(size_t)i - lead];
        if (kk < 1)
            return GIR_OK;
        scales[i] = (double)kk;
    }
    gir_node *n;
    TRY(nnbr_map_to(m, mapped, GIR_OP_Resize, &n));
    TRY(gir_attrs_set_floats(m->g, &n->attrs, "scales", scales, (size_t)r, m->err));
    TRY(nnbr_set_string(m, n, "mode", "nearest"));
    TRY(nnbr_set_string(m, n, "coordinate_transformation_mode", "asymmetric"));
    TRY(nnbr_set_string(m, n, "nearest_mode", "floor"));
    return nnbr_infer(m, n);
}

gir_status nnbr_map_embed(mctx *m, bool *mapped)
{
    if (!nnbr_arity(m, 2, 2, 1, 1) || nnbr_foreign_param(m, NNABLA__FUNCTION__PARAMETER__NOT_SET))
        return GIR_OK;
    *mapped = true;
    gir_node *n;
    TRY(nnbr_add_node(m, m->name, GIR_OP_Gather, 2, 1, &n));
    n->in[0] = m->in[1]; /* Embed(x0 indices, w) is Gather(w, x0) */
    n->in[1] = m->in[0];
    TRY(gir_node_set_output(m->g, n, 0, m->out[0], m->err));
    TRY(nnbr_set_int(m, n, "axis", 0));
    TRY(gir_attrs_set_string(m->g, &n->meta, NNB_META_TYPE, "Embed", m->err));
    return nnbr_infer(m, n);
}

/* ---- activations ----------------------------------------------------------- */

gir_status nnbr_map_softplus(mctx *m, bool *mapped)
{
    static const Nnabla__SoftPlusParameter zero = NNABLA__SOFT_PLUS_PARAMETER__INIT;
    const Nnabla__SoftPlusParameter *p = PARAM(m, SOFTPLUS_PARAM, softplus_param, zero);
    if (!nnbr_arity(m, 1, 1, 1, 1) || p->beta != 1.0)
        return GIR_OK;
    gir_node *n;
    TRY(nnbr_map_to(m, mapped, GIR_OP_Softplus, &n));
    return nnbr_infer(m, n);
}

gir_status nnbr_map_hard_sigmoid(mctx *m, bool *mapped)
{
    if (!nnbr_arity(m, 1, 1, 1, 1))
        return GIR_OK;
    gir_node *n;
    TRY(nnbr_map_to(m, mapped, GIR_OP_HardSigmoid, &n));
    TRY(nnbr_set_float(m, n, "alpha", 0.2));
    TRY(nnbr_set_float(m, n, "beta", 0.5));
    return nnbr_infer(m, n);
}

/* HardTanh = Clip(-1, 1); ReLU6 = Clip(0, 6). */
static gir_status map_fixed_clip(mctx *m, bool *mapped, double lo, double hi)
{
    if (!nnbr_arity(m, 1, 1, 1, 1))
        return GIR_OK;
    gir_node *n;
    TRY(nnbr_map_to(m, mapped, GIR_OP_Clip, &n));
    TRY(nnbr_set_float(m, n, "min", lo));
    TRY(nnbr_set_float(m, n, "max", hi));
    TRY(gir_attrs_set_string(m->g, &n->meta, NNB_META_TYPE, m->f->type, m->err));
    return nnbr_infer(m, n);
}

gir_status nnbr_map_hard_tanh(mctx *m, bool *mapped)
{
    return map_fixed_clip(m, mapped, -1.0, 1.0);
}

gir_status nnbr_map_relu6(mctx *m, bool *mapped)
{
    return map_fixed_clip(m, mapped, 0.0, 6.0);
}

gir_status nnbr_map_prelu(mctx *m, bool *mapped)
{
    static const Nnabla__PReLUParameter zero = NNABLA__PRE_LUPARAMETER__INIT;
    const Nnabla__PReLUParameter *p = PARAM(m, PRELU_PARAM, prelu_param, zero);
    bool ok = nnbr_arity(m, 2, 2, 1, 1);
    int r = nnbr_rank_of(m, m->in[0]);
    int64_t axis = p->base_axis < 0 && r >= 0 ? p->base_axis + r : p->base_axis;
    if (!ok || nnbr_rank_of(m, m->in[1]) != 1)
        return GIR_OK;
    int64_t c = nnbr_numel_of(m, m->in[1]);
    if (c == 1) {
        /* one shared slope broadcasts the same in both */
        gir_node *n;
        TRY(nnbr_map_to(m, mapped, GIR_OP_PRelu, &n));
        return nnbr_infer(m, n);
    }
    /* a slope per channel of axis base_axis: viewed as (C, 1, ...) so that
     * it broadcasts over the axes after the channel */
    if (r < 1 || axis < 0 || axis >= r || c < 1 || nnbr_val(m, m->in[0])->shape.dims[axis] != c ||
        !nnbr_own_weight(m, m->in[1]))
        return GIR_OK;
    *mapped = true;
    int64_t shape[GIR_MAX_RANK];
    shape[0] = c;
    for (int i = 1; i < r - (int)axis; i++)
        shape[i] = 1;
    TRY(nnbr_view_weight(m, m->in[1], shape, r - (int)axis));
    gir_node *n;
    TRY(nnbr_simple(m, GIR_OP_PRelu, &n));
    return nnbr_infer(m, n);
}

gir_status nnbr_map_sign(mctx *m, bool *mapped)
{
    static const Nnabla__SignParameter zero = NNABLA__SIGN_PARAMETER__INIT;
    const Nnabla__SignParameter *p = PARAM(m, SIGN_PARAM, sign_param, zero);
    if (!nnbr_arity(m, 1, 1, 1, 1) || p->alpha != 0.0f) /* ONNX's Sign(0) is 0 */
        return GIR_OK;
    gir_node *n;
    TRY(nnbr_map_to(m, mapped, GIR_OP_Sign, &n));
    return nnbr_infer(m, n);
}

/* A parameter read only by this function, viewed in shape dims (the same
 * values), its declared shape remembered for the writer. */
bool nnbr_own_weight(const mctx *m, int32_t idx)
{
    const gir_value *v = nnbr_val(m, idx);
    return v && v->kind == GIR_VALUE_WEIGHT && m->r->uses && m->r->uses[idx] == 1;
}

gir_status nnbr_view_weight(mctx *m, int32_t idx, const int64_t *dims, int rank)
{
    gir_value *v = m->g->values[idx];
    if (!gir_attrs_find(&v->meta, NNB_META_SHAPE))
        TRY(gir_attrs_set_ints(m->g, &v->meta, NNB_META_SHAPE, v->shape.dims, (size_t)v->shape.rank, m->err));
    v->shape.rank = rank;
    memcpy(v->shape.dims, dims, (size_t)rank * sizeof *dims);
    memset(v->dim_names, 0, sizeof v->dim_names);
    if (v->data)
        v->data->shape = v->shape;
    return GIR_OK;
}
