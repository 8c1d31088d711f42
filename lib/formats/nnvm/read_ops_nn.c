/* Reading the network layers of MXNet and NNVM graphs: convolution,
 * dense / FullyConnected, batch normalisation, pooling, softmax and the
 * output layers, element-wise and scalar operators, dropout (the read
 * functions read_ops.c's tables point at). */
#include "ops.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Fills a spatial list: empty means every entry is fill; otherwise its length
 * must be rank. */
static gir_status spatial(const nn_reader *r, size_t idx, const char *key, const int64_t *v, size_t n, size_t rank,
                          int64_t fill, int64_t *out, gir_error *err)
{
    if (n == 0) {
        for (size_t i = 0; i < rank; i++)
            out[i] = fill;
        return GIR_OK;
    }
    if (n != rank) {
        char what[64];
        snprintf(what, sizeof what, "a tuple of %zu values like the kernel", rank);
        return nn_rd_bad_attr(r, idx, key, what, err);
    }
    for (size_t i = 0; i < rank; i++) {
        if (v[i] < 0 || (fill == 1 && v[i] < 1)) {
            return nn_rd_bad_attr(r, idx, key, fill == 1 ? "a tuple of positive values" : "a tuple of non-negative values",
                                  err);
        }
        out[i] = v[i];
    }
    return GIR_OK;
}

/* The optional tuple attribute key as rank spatial values (spatial). */
static gir_status spatial_attr(const nn_reader *r, size_t idx, const char *key, size_t rank, int64_t fill,
                               int64_t *out, gir_error *err)
{
    int64_t t[NN_MAX_TUPLE];
    size_t n;
    TRY(nnr_g_tuple(r, idx, key, false, t, &n, err));
    return spatial(r, idx, key, t, n, rank, fill, out, err);
}

/* MXNet's pad: one value per axis, the same before and after. */
static gir_status symmetric_pads(const nn_reader *r, size_t idx, const char *key, size_t rank, int64_t *pads,
                                 gir_error *err)
{
    TRY(spatial_attr(r, idx, key, rank, 0, pads, err));
    memcpy(pads + rank, pads, rank * sizeof *pads);
    return GIR_OK;
}

/* NNVM padding: 1 value (all sides), rank values (symmetric), or 2*rank
 * values (top, left, bottom, right = begins then ends). */
static gir_status nnvm_pads(const nn_reader *r, size_t idx, const char *key, const int64_t *v, size_t n,
                            size_t rank, int64_t *pads, gir_error *err)
{
    for (size_t i = 0; i < n; i++)
        if (v[i] < 0)
            return nn_rd_bad_attr(r, idx, key, "a tuple of non-negative values", err);
    if (n == 0 || n == 1) {
        for (size_t i = 0; i < 2 * rank; i++)
            pads[i] = n ? v[0] : 0;
    } else if (n == rank) {
        for (size_t i = 0; i < rank; i++)
            pads[i] = pads[i + rank] = v[i];
    } else if (n == 2 * rank) {
        for (size_t i = 0; i < 2 * rank; i++)
            pads[i] = v[i];
    } else {
        return nn_rd_bad_attr(r, idx, key, "a tuple of 1, 2 or 4 values", err);
    }
    return GIR_OK;
}

/* The canonical attributes, set at once; their names are literals (not
 * copied), their lists share one arena block. */
static gir_status set_conv_attrs(nn_reader *r, gir_node *n, const convp *c, bool transpose, gir_error *err)
{
    gir_graph *g = r->g;
    size_t k = c->rank;
    int64_t *v = gir_arena_alloc_uninit(&g->arena, (transpose ? 6 : 5) * k * sizeof *v);
    if (!v)
        return gir_nomem(err);
    memcpy(v, c->kernel, k * sizeof *v);
    memcpy(v + k, c->strides, k * sizeof *v);
    memcpy(v + 2 * k, c->pads, 2 * k * sizeof *v);
    memcpy(v + 4 * k, c->dil, k * sizeof *v);
    if (transpose)
        memcpy(v + 5 * k, c->adj, k * sizeof *v);
    /* In the schema's order, with its default auto_pad (MXNet and NNVM
     * have none): normalising then finds nothing to fill or reorder. */
    const gir_attr at[] = {
        { .name = "auto_pad", .type = GIR_ATTR_STRING, .u.s = "NOTSET" },
        { .name = "dilations", .type = GIR_ATTR_INTS, .u.ints = { k, v + 4 * k } },
        { .name = "group", .type = GIR_ATTR_INT, .u.i = c->group },
        { .name = "kernel_shape", .type = GIR_ATTR_INTS, .u.ints = { k, v } },
        { .name = "output_padding", .type = GIR_ATTR_INTS, .u.ints = { k, v + 5 * k } },
        { .name = "pads", .type = GIR_ATTR_INTS, .u.ints = { 2 * k, v + 2 * k } },
        { .name = "strides", .type = GIR_ATTR_INTS, .u.ints = { k, v + k } },
    };
    if (transpose)
        return gir_attrs_put_list(g, &n->attrs, at, 7, err) ? gir_nomem(err) : GIR_OK;
    const gir_attr conv[] = { at[0], at[1], at[2], at[3], at[5], at[6] };
    return gir_attrs_put_list(g, &n->attrs, conv, 6, err) ? gir_nomem(err) : GIR_OK;
}

gir_status nnr_conv_common(nn_reader *r, size_t idx, const int32_t *in, int32_t *out, const convp *c,
                           bool transpose, gir_error *err)
{
    gir_node *n;
    TRY(nn_rd_node(r, idx, transpose ? GIR_OP_ConvTranspose : GIR_OP_Conv, c->bias ? 3 : 2, 1, &n, err));
    for (size_t i = 0; i < (c->bias ? 3u : 2u); i++)
        nnr_set_in(n, i, in[i]);
    TRY(set_conv_attrs(r, n, c, transpose, err));
    int64_t w[5] = { transpose ? -1 : c->channels, transpose ? c->channels / (c->group ? c->group : 1) : -1,
                     c->kernel[0], c->kernel[1], c->kernel[2] };
    if (transpose && c->channels % c->group)
        w[1] = -1;
    TRY(nnr_hint_shape(r, idx, in[1], w, (int)c->rank + 2, err));
    if (c->bias)
        TRY(nnr_hint_shape(r, idx, in[2], &c->channels, 1, err));
    return nn_rd_out(r, n, 0, &out[0], err);
}

/* A convolution's output channels and groups (positive) and its bias
 * flag, under the flavour's names (flag_is_bias: the flag says there is a
 * bias, else that there is none); checks the input count against it. */
static gir_status conv_counts(nn_reader *r, size_t idx, const char *ch_key, const char *group_key, const char *flag,
                              bool flag_dflt, bool flag_is_bias, convp *c, gir_error *err)
{
    TRY(nn_rd_int(r, idx, ch_key, true, 0, &c->channels, err));
    if (c->channels < 1)
        return nn_rd_bad_attr(r, idx, ch_key, "a positive integer", err);
    TRY(nn_rd_int(r, idx, group_key, false, 1, &c->group, err));
    if (c->group < 1)
        return nn_rd_bad_attr(r, idx, group_key, "a positive integer", err);
    bool f;
    TRY(nn_rd_bool(r, idx, flag, flag_dflt, &f, err));
    c->bias = f == flag_is_bias;
    char why[32];
    snprintf(why, sizeof why, "%s=%s", flag, f ? "True" : "False");
    return nnr_want_inputs(r, idx, c->bias ? 3 : 2, why, err);
}

static bool layout_ok(const char *layout, size_t rank)
{
    if (!layout || nn_is_none(layout))
        return true;
    static const char *const ok[] = { "NCW", "NCHW", "NCDHW" };
    return rank >= 1 && rank <= 3 && strcmp(layout, ok[rank - 1]) == 0;
}

gir_status nn_rd_mx_conv(nn_reader *r, size_t idx, const int32_t *in, int32_t *out, nn_rres *res,
                         gir_error *err)
{
    bool transpose = strcmp(nn_rd_raw(r, idx)->op, "Deconvolution") == 0;
    convp c = { 0 };
    int64_t t[NN_MAX_TUPLE];
    size_t n;
    TRY(nnr_g_tuple(r, idx, "kernel", true, t, &n, err));
    if (n < 1 || n > 3)
        return nn_rd_bad_attr(r, idx, "kernel", "a tuple of 1 to 3 values", err);
    c.rank = n;
    TRY(spatial(r, idx, "kernel", t, n, c.rank, 1, c.kernel, err));
    TRY(spatial_attr(r, idx, "stride", c.rank, 1, c.strides, err));
    TRY(spatial_attr(r, idx, "dilate", c.rank, 1, c.dil, err));
    TRY(symmetric_pads(r, idx, "pad", c.rank, c.pads, err));
    if (transpose) {
        TRY(spatial_attr(r, idx, "adj", c.rank, 0, c.adj, err));
        TRY(nnr_g_tuple(r, idx, "target_shape", false, t, &n, err));
        bool any = false;
        for (size_t i = 0; i < n; i++)
            any = any || t[i] != 0;
        if (any) {
            /* The output size given instead of padding: MXNet derives
             * symmetric pads and adj from the input size. */
            if (n != c.rank)
                return nn_rd_bad_attr(r, idx, "target_shape", "a tuple as long as the kernel", err);
            const gir_shape *xs = nnr_full_shape(r, in[0]);
            if (!xs || xs->rank != (int)c.rank + 2)
                return nnr_keep(r, res, err, "target_shape=%s needs the input's shape (give --input-shape)",
                                nn_rd_attr(r, idx, "target_shape"));
            for (size_t i = 0; i < c.rank; i++) {
                int64_t full = c.strides[i] * (xs->dims[2 + i] - 1) + c.dil[i] * (c.kernel[i] - 1) + 1;
                if (full < t[i])
                    return nn_rd_bad_attr(r, idx, "target_shape", "at most the size the stride and kernel give", err);
                int64_t tot = full - t[i];
                c.adj[i] = tot % 2;
                c.pads[i] = c.pads[i + c.rank] = (tot + 1) / 2;
            }
        }
    }
    TRY(conv_counts(r, idx, "num_filter", "num_group", "no_bias", transpose, false, &c, err));
    if (!layout_ok(nn_rd_attr(r, idx, "layout"), c.rank))
        return nnr_opaque(res);
    return nnr_conv_common(r, idx, in, out, &c, transpose, err);
}

gir_status nn_rd_nnvm_conv(nn_reader *r, size_t idx, const int32_t *in, int32_t *out, nn_rres *res,
                           gir_error *err)
{
    bool transpose = strcmp(nn_rd_raw(r, idx)->op, "conv2d_transpose") == 0;
    convp c = { .rank = 2 };
    int64_t t[NN_MAX_TUPLE];
    size_t n;
    TRY(nnr_g_tuple(r, idx, "kernel_size", true, t, &n, err));
    TRY(spatial(r, idx, "kernel_size", t, n == 1 ? 0 : n, 2, 1, c.kernel, err));
    if (n == 1)
        c.kernel[0] = c.kernel[1] = t[0];
    if (n == 0 || c.kernel[0] < 1 || c.kernel[1] < 1)
        return nn_rd_bad_attr(r, idx, "kernel_size", "a tuple of 2 positive values", err);
    TRY(spatial_attr(r, idx, "strides", 2, 1, c.strides, err));
    TRY(spatial_attr(r, idx, "dilation", 2, 1, c.dil, err));
    TRY(nnr_g_tuple(r, idx, "padding", false, t, &n, err));
    TRY(nnvm_pads(r, idx, "padding", t, n, 2, c.pads, err));
    if (transpose) {
        TRY(spatial_attr(r, idx, "output_padding", 2, 0, c.adj, err));
    }
    TRY(conv_counts(r, idx, "channels", "groups", "use_bias", true, true, &c, err));
    const char *layout = nn_rd_str(r, idx, "layout", "NCHW");
    const char *kl = nn_rd_str(r, idx, "kernel_layout", "OIHW");
    const char *ol = nn_rd_str(r, idx, "out_layout", "__undef__");
    const char *od = nn_rd_str(r, idx, "out_dtype", "same");
    if (strcmp(layout, "NCHW") || strcmp(kl, "OIHW") || (strcmp(ol, "__undef__") && *ol && strcmp(ol, "NCHW")) ||
        (strcmp(od, "same") && *od))
        return nnr_opaque(res);
    return nnr_conv_common(r, idx, in, out, &c, transpose, err);
}

static gir_status gemm(nn_reader *r, size_t idx, int32_t a, const int32_t *in, bool bias, int64_t units,
                       int32_t *out, gir_error *err)
{
    gir_node *n;
    TRY(nn_rd_node(r, idx, GIR_OP_Gemm, bias ? 3 : 2, 1, &n, err));
    nnr_set_in(n, 0, a);
    nnr_set_in(n, 1, in[1]);
    if (bias)
        nnr_set_in(n, 2, in[2]);
    if (gir_attrs_set_float(r->g, &n->attrs, "alpha", 1.0, err) || gir_attrs_set_float(r->g, &n->attrs, "beta", 1.0, err) ||
        gir_attrs_set_int(r->g, &n->attrs, "transA", 0, err) || gir_attrs_set_int(r->g, &n->attrs, "transB", 1, err))
        return gir_nomem(err);
    int64_t w[2] = { units, -1 };
    TRY(nnr_hint_shape(r, idx, in[1], w, 2, err));
    if (bias)
        TRY(nnr_hint_shape(r, idx, in[2], &units, 1, err));
    return nn_rd_out(r, n, 0, &out[0], err);
}

gir_status nn_rd_fc(nn_reader *r, size_t idx, const int32_t *in, int32_t *out, nn_rres *res, gir_error *err)
{
    int64_t units;
    bool no_bias, flatten;
    TRY(nn_rd_int(r, idx, "num_hidden", true, 0, &units, err));
    if (units < 1)
        return nn_rd_bad_attr(r, idx, "num_hidden", "a positive integer", err);
    TRY(nn_rd_bool(r, idx, "no_bias", false, &no_bias, err));
    TRY(nn_rd_bool(r, idx, "flatten", true, &flatten, err));
    TRY(nnr_want_inputs(r, idx, no_bias ? 2 : 3, no_bias ? "no_bias=True" : "no_bias=False", err));
    int32_t a = in[0];
    if (flatten) {
        gir_node *f;
        TRY(nn_rd_part(r, idx, "flatten", GIR_OP_Flatten, 1, 1, &f, err));
        nnr_set_in(f, 0, in[0]);
        if (gir_attrs_set_int(r->g, &f->attrs, "axis", 1, err) ||
            gir_attrs_set_string(r->g, &f->meta, NN_META_FC_FLATTEN, "1", err))
            return gir_nomem(err);
        TRY(nn_rd_out(r, f, 0, &a, err));
    } else if (nnr_rank_of(r, in[0]) != 2) {
        return nnr_opaque(res); /* applied to the last axis of an N-d input: no Gemm */
    }
    return gemm(r, idx, a, in, !no_bias, units, out, err);
}

gir_status nn_rd_dense(nn_reader *r, size_t idx, const int32_t *in, int32_t *out, nn_rres *res,
                       gir_error *err)
{
    int64_t units;
    bool use_bias;
    TRY(nn_rd_int(r, idx, "units", true, 0, &units, err));
    if (units < 1)
        return nn_rd_bad_attr(r, idx, "units", "a positive integer", err);
    TRY(nn_rd_bool(r, idx, "use_bias", true, &use_bias, err));
    TRY(nnr_want_inputs(r, idx, use_bias ? 3 : 2, use_bias ? "use_bias=True" : "use_bias=False", err));
    if (nnr_rank_of(r, in[0]) != 2)
        return nnr_opaque(res);
    return gemm(r, idx, in[0], in, use_bias, units, out, err);
}

/* The channel count: from a 1-d operand's shape, or dimension 1 of the data. */
int64_t nnr_bn_channels(const nn_reader *r, const int32_t *in)
{
    for (size_t i = 1; i < 5; i++) {
        const gir_value *v = nn_rd_value(r, in[i]);
        if (v && v->shape.rank == 1 && v->shape.dims[0] > 0)
            return v->shape.dims[0];
    }
    const gir_value *x = nn_rd_value(r, in[0]);
    if (x && x->shape.rank >= 2 && x->shape.dims[1] > 0)
        return x->shape.dims[1];
    /* The output channels of the Conv or Gemm that makes the data. */
    if (x && x->producer >= 0) {
        const gir_node *p = r->g->nodes[x->producer];
        const gir_value *w = p->n_in > 1 ? nn_rd_value(r, p->in[1]) : NULL;
        bool ok = p->op == GIR_OP_Conv || (p->op == GIR_OP_Gemm && gir_attrs_get_int(&p->attrs, "transB", 0) == 1);
        if (ok && w && w->shape.rank >= 2 && w->shape.dims[0] > 0)
            return w->shape.dims[0];
    }
    return -1;
}

static gir_status bn_common(nn_reader *r, size_t idx, const int32_t *in, int32_t *out, nn_rres *res, double eps,
                            double momentum, bool use_gamma, bool use_beta, gir_error *err)
{
    int32_t ins[5] = { in[0], in[1], in[2], in[3], in[4] };
    int32_t ignored[2] = { -1, -1 };
    int64_t c = !use_gamma || !use_beta ? nnr_bn_channels(r, in) : 0;
    if (c < 0) {
        /* The constant needs the channel count: shape inference may give
         * it (nn_resolve_pending); gamma/beta stand in until then. */
        gir_node *n;
        TRY(nn_rd_node(r, idx, GIR_OP_BatchNormalization, 5, 1, &n, err));
        for (size_t i = 0; i < 5; i++)
            nnr_set_in(n, i, in[i]);
        if (gir_attrs_set_float(r->g, &n->attrs, "epsilon", eps, err) ||
            gir_attrs_set_float(r->g, &n->attrs, "momentum", momentum, err) ||
            gir_attrs_set_string(r->g, &n->meta, NN_META_PENDING,
                                 !use_gamma && !use_beta ? "gamma,beta" : !use_gamma ? "gamma" : "beta", err))
            return gir_nomem(err);
        return nn_rd_out(r, n, 0, &out[0], err);
    }
    if (!use_gamma || !use_beta) {
        const char *nm = nn_rd_raw(r, idx)->name;
        if (!use_gamma) {
            ignored[0] = in[1];
            TRY(nnr_const_fill(r, nm, "ones", c, 1.0f, &ins[1], err));
        }
        if (!use_beta) {
            ignored[1] = in[2];
            TRY(nnr_const_fill(r, nm, "zeros", c, 0.0f, &ins[2], err));
        }
    }
    gir_node *n;
    TRY(nn_rd_node(r, idx, GIR_OP_BatchNormalization, 5, 1, &n, err));
    for (size_t i = 0; i < 5; i++)
        nnr_set_in(n, i, ins[i]);
    if (gir_attrs_set_float(r->g, &n->attrs, "epsilon", eps, err) ||
        gir_attrs_set_float(r->g, &n->attrs, "momentum", momentum, err))
        return gir_nomem(err);
    if ((ignored[0] >= 0 && gir_attrs_set_string(r->g, &n->meta, NN_META_IGNORED_GAMMA, nn_rd_value(r, ignored[0])->name, err)) ||
        (ignored[1] >= 0 && gir_attrs_set_string(r->g, &n->meta, NN_META_IGNORED_BETA, nn_rd_value(r, ignored[1])->name, err)))
        return gir_nomem(err);
    return nn_rd_out(r, n, 0, &out[0], err);
}

gir_status nn_rd_bn(nn_reader *r, size_t idx, const int32_t *in, int32_t *out, nn_rres *res, gir_error *err)
{
    bool mx = r->fl == NN_MXNET;
    double eps, momentum;
    bool flag0, flag1; /* MXNet fix_gamma, output_mean_var; NNVM center, scale */
    int64_t axis;
    TRY(nnr_g_float(r, idx, mx ? "eps" : "epsilon", false, mx ? 1e-3 : 1e-5, &eps, err));
    TRY(nnr_g_float(r, idx, "momentum", false, 0.9, &momentum, err));
    TRY(nn_rd_bool(r, idx, mx ? "fix_gamma" : "center", true, &flag0, err));
    TRY(nn_rd_bool(r, idx, mx ? "output_mean_var" : "scale", !mx, &flag1, err));
    TRY(nn_rd_int(r, idx, "axis", false, 1, &axis, err));
    const nn_node *rn = nn_rd_raw(r, idx);
    if (axis != 1 || rn->max_index > 1 || (rn->n_in != 5 && !r->bn_synth[idx]))
        return nnr_opaque(res);
    return mx ? bn_common(r, idx, in, out, res, eps, momentum, !flag0, true, err)
              : bn_common(r, idx, in, out, res, eps, momentum, flag1, flag0, err);
}

typedef struct poolp {
    size_t rank;
    int64_t kernel[3], strides[3], pads[6];
    bool ceil, count_pad;
} poolp;

static gir_status pool_node(nn_reader *r, size_t idx, const int32_t *in, int32_t *out, gir_op op, const poolp *p,
                            gir_error *err)
{
    gir_node *n;
    TRY(nnr_node2(r, idx, NULL, op, in[0], -1, &n, &out[0], err));
    gir_graph *g = r->g;
    if (op == GIR_OP_MaxPool || op == GIR_OP_AveragePool) {
        int64_t ones[3] = { 1, 1, 1 };
        if (gir_attrs_set_ints(g, &n->attrs, "kernel_shape", p->kernel, p->rank, err) ||
            gir_attrs_set_ints(g, &n->attrs, "strides", p->strides, p->rank, err) ||
            gir_attrs_set_ints(g, &n->attrs, "pads", p->pads, 2 * p->rank, err) ||
            gir_attrs_set_int(g, &n->attrs, "ceil_mode", p->ceil, err) ||
            (op == GIR_OP_MaxPool && gir_attrs_set_ints(g, &n->attrs, "dilations", ones, p->rank, err)) ||
            (op == GIR_OP_AveragePool && gir_attrs_set_int(g, &n->attrs, "count_include_pad", p->count_pad, err)))
            return gir_nomem(err);
    }
    return GIR_OK;
}

gir_status nn_rd_mx_pool(nn_reader *r, size_t idx, const int32_t *in, int32_t *out, nn_rres *res,
                         gir_error *err)
{
    const char *type = nn_rd_str(r, idx, "pool_type", "max");
    const char *conv = nn_rd_str(r, idx, "pooling_convention", "valid");
    bool global, count_pad;
    TRY(nn_rd_bool(r, idx, "global_pool", false, &global, err));
    TRY(nn_rd_bool(r, idx, "count_include_pad", true, &count_pad, err));
    bool is_max = strcmp(type, "max") == 0, is_avg = strcmp(type, "avg") == 0;
    if ((!is_max && !is_avg) || (strcmp(conv, "valid") && strcmp(conv, "full")))
        return nnr_opaque(res);
    int64_t t[NN_MAX_TUPLE];
    size_t n;
    poolp p = { 0 };
    TRY(nnr_g_tuple(r, idx, "kernel", !global, t, &n, err));
    if (global) {
        if (!layout_ok(nn_rd_attr(r, idx, "layout"), n ? n : 2))
            return nnr_opaque(res);
        return pool_node(r, idx, in, out, is_max ? GIR_OP_GlobalMaxPool : GIR_OP_GlobalAveragePool, &p, err);
    }
    if (n < 1 || n > 3)
        return nn_rd_bad_attr(r, idx, "kernel", "a tuple of 1 to 3 values", err);
    p.rank = n;
    TRY(spatial(r, idx, "kernel", t, n, p.rank, 1, p.kernel, err));
    TRY(spatial_attr(r, idx, "stride", p.rank, 1, p.strides, err));
    TRY(symmetric_pads(r, idx, "pad", p.rank, p.pads, err));
    p.ceil = strcmp(conv, "full") == 0;
    p.count_pad = count_pad;
    if (!layout_ok(nn_rd_attr(r, idx, "layout"), p.rank))
        return nnr_opaque(res);
    return pool_node(r, idx, in, out, is_max ? GIR_OP_MaxPool : GIR_OP_AveragePool, &p, err);
}

gir_status nn_rd_nnvm_pool(nn_reader *r, size_t idx, const int32_t *in, int32_t *out, nn_rres *res,
                           gir_error *err)
{
    const char *op = nn_rd_raw(r, idx)->op;
    if (strcmp(nn_rd_str(r, idx, "layout", "NCHW"), "NCHW") != 0)
        return nnr_opaque(res);
    poolp p = { .rank = 2 };
    if (strncmp(op, "global_", 7) == 0)
        return pool_node(r, idx, in, out, strcmp(op, "global_max_pool2d") == 0 ? GIR_OP_GlobalMaxPool
                                                                              : GIR_OP_GlobalAveragePool,
                         &p, err);
    bool is_max = strcmp(op, "max_pool2d") == 0;
    int64_t t[NN_MAX_TUPLE];
    size_t n;
    TRY(nnr_g_tuple(r, idx, "pool_size", true, t, &n, err));
    if (n == 1)
        t[1] = t[0], n = 2;
    if (n != 2)
        return nn_rd_bad_attr(r, idx, "pool_size", "a tuple of 2 values", err);
    TRY(spatial(r, idx, "pool_size", t, n, 2, 1, p.kernel, err));
    TRY(spatial_attr(r, idx, "strides", 2, 1, p.strides, err));
    TRY(nnr_g_tuple(r, idx, "padding", false, t, &n, err));
    TRY(nnvm_pads(r, idx, "padding", t, n, 2, p.pads, err));
    TRY(nn_rd_bool(r, idx, "ceil_mode", false, &p.ceil, err));
    TRY(nn_rd_bool(r, idx, "count_include_pad", false, &p.count_pad, err));
    return pool_node(r, idx, in, out, is_max ? GIR_OP_MaxPool : GIR_OP_AveragePool, &p, err);
}

static gir_status softmax_node(nn_reader *r, size_t idx, int32_t x, int32_t *out, gir_op op, int64_t axis,
                               gir_node **pn, gir_error *err)
{
    gir_node *n;
    TRY(nnr_node2(r, idx, NULL, op, x, -1, &n, &out[0], err));
    if (pn)
        *pn = n;
    return gir_attrs_set_int(r->g, &n->attrs, "axis", axis, err) ? gir_nomem(err) : GIR_OK;
}

/* A softmax over all axes but the first (MXNet's instance mode, and
 * SoftmaxOutput without multi_output): a plain Softmax(axis 1) for a
 * matrix, else Flatten, Softmax and a Reshape back, which needs the shape. */
static gir_status softmax_instance(nn_reader *r, size_t idx, int32_t x, int32_t *out, nn_rres *res,
                                   gir_node **pn, gir_error *err)
{
    int rank = nnr_rank_of(r, x);
    if (rank == 2)
        return softmax_node(r, idx, x, out, GIR_OP_Softmax, 1, pn, err);
    const gir_shape *s = nnr_full_shape(r, x);
    if (!s)
        return nnr_keep(r, res, err, "a softmax over all axes but the first of data whose shape is unknown "
                                     "(give --input-shape)");
    int32_t f, sm;
    gir_node *n;
    TRY(nnr_node2(r, idx, "flatten", GIR_OP_Flatten, x, -1, &n, &f, err));
    if (gir_attrs_set_int(r->g, &n->attrs, "axis", 1, err))
        return gir_nomem(err);
    TRY(nnr_node2(r, idx, "softmax", GIR_OP_Softmax, f, -1, &n, &sm, err));
    if (gir_attrs_set_int(r->g, &n->attrs, "axis", 1, err))
        return gir_nomem(err);
    int64_t dims[GIR_MAX_RANK];
    dims[0] = 0;
    for (int i = 1; i < s->rank; i++)
        dims[i] = s->dims[i];
    TRY(nnr_node2(r, idx, NULL, GIR_OP_Reshape, sm, -1, &n, out, err));
    if (gir_attrs_set_ints(r->g, &n->attrs, "shape", dims, (size_t)s->rank, err))
        return gir_nomem(err);
    if (pn)
        *pn = n;
    return GIR_OK;
}

gir_status nn_rd_softmax(nn_reader *r, size_t idx, const int32_t *in, int32_t *out, nn_rres *res,
                         gir_error *err)
{
    int64_t axis;
    TRY(nn_rd_int(r, idx, "axis", false, -1, &axis, err));
    const char *temp = nn_rd_attr(r, idx, "temperature");
    double tv = 1.0;
    if (temp && !nn_is_none(temp) && (!nn_parse_float(temp, &tv) || !(tv > 0) || !isfinite(tv)))
        return nn_rd_bad_attr(r, idx, "temperature", "a positive number", err);
    bool use_length;
    TRY(nn_rd_bool(r, idx, "use_length", false, &use_length, err));
    const char *dt = nn_rd_attr(r, idx, "dtype");
    if (use_length)
        return nnr_keep(r, res, err, "use_length=True (a second input of lengths)");
    if (dt && !nn_is_none(dt))
        return nnr_keep(r, res, err, "dtype=%s", dt);
    if (nn_rd_raw(r, idx)->n_in != 1)
        return nnr_keep(r, res, err, "%zu inputs", nn_rd_raw(r, idx)->n_in);
    const char *op = nn_rd_raw(r, idx)->op;
    int32_t x = in[0];
    /* softmax(x / T) */
    if (tv != 1.0)
        TRY(nnr_scalar_op(r, idx, "temperature", GIR_OP_Div, x, tv, &x, err));
    return softmax_node(r, idx, x, out, strcmp(op, "log_softmax") == 0 ? GIR_OP_LogSoftmax : GIR_OP_Softmax,
                        axis, NULL, err);
}

bool nn_is_label_edge(const nn_node *n, size_t j)
{
    static const char *const layers[] = { "SoftmaxOutput", "Softmax", "LinearRegressionOutput",
                                          "LogisticRegressionOutput", "MAERegressionOutput", NULL };
    if (j != 1 || n->n_in != 2 || n->var)
        return false;
    for (size_t i = 0; layers[i]; i++)
        if (strcmp(n->op, layers[i]) == 0)
            return true;
    return false;
}

/* The dropped label of output layer n (raw node idx): its variable's name
 * and attributes in meta, for an MXNet writer to put back. */
static gir_status note_label(nn_reader *r, size_t idx, gir_node *n, gir_error *err)
{
    const nn_node *rn = nn_rd_raw(r, idx);
    if (rn->n_in != 2)
        return GIR_OK;
    const nn_node *lab = nn_rd_raw(r, rn->in[1].node);
    if (lab->var) {
        if (gir_attrs_set_string(r->g, &n->meta, "mxnet.label", lab->name, err))
            return gir_nomem(err);
        TRY(nnr_meta_pairs(r->g, &n->meta, "mxnet.label.attrs", lab->attrs, lab->n_attrs, NULL, err));
    } else {
        /* computed by operators that were dropped: a variable stands in */
        char *nm = gir_strdupf("%s_label", rn->name);
        gir_status st = nm && gir_attrs_set_string(r->g, &n->meta, "mxnet.label", nm, err) == GIR_OK ? GIR_OK
                                                                                                 : gir_nomem(err);
        free(nm);
        TRY(st);
    }
    r->n_labels++;
    return GIR_OK;
}

gir_status nn_rd_softmax_output(nn_reader *r, size_t idx, const int32_t *in, int32_t *out, nn_rres *res,
                                gir_error *err)
{
    bool multi, preserve;
    TRY(nn_rd_bool(r, idx, "multi_output", false, &multi, err));
    TRY(nn_rd_bool(r, idx, "preserve_shape", false, &preserve, err));
    gir_node *n = NULL;
    /* multi_output: over axis 1; preserve_shape: over the last axis;
     * neither: over all axes but the first. */
    if (multi || preserve)
        TRY(softmax_node(r, idx, in[0], out, GIR_OP_Softmax, preserve ? -1 : 1, &n, err));
    else
        TRY(softmax_instance(r, idx, in[0], out, res, &n, err));
    if (*res == NN_OPAQUE)
        return GIR_OK;
    return note_label(r, idx, n, err);
}

/* LinearRegressionOutput, MAERegressionOutput and MakeLoss are the
 * identity at inference, LogisticRegressionOutput the sigmoid. */
gir_status nn_rd_output_layer(nn_reader *r, size_t idx, const int32_t *in, int32_t *out, nn_rres *res,
                              gir_error *err)
{
    (void)res;
    gir_node *n;
    gir_op op = strcmp(nn_rd_raw(r, idx)->op, "LogisticRegressionOutput") == 0 ? GIR_OP_Sigmoid : GIR_OP_Identity;
    TRY(nnr_node2(r, idx, NULL, op, in[0], -1, &n, out, err));
    return note_label(r, idx, n, err);
}

gir_status nn_rd_softmax_act(nn_reader *r, size_t idx, const int32_t *in, int32_t *out, nn_rres *res,
                             gir_error *err)
{
    const char *mode = nn_rd_str(r, idx, "mode", "instance");
    if (strcmp(mode, "channel") == 0)
        return softmax_node(r, idx, in[0], out, GIR_OP_Softmax, 1, NULL, err);
    if (strcmp(mode, "instance") != 0)
        return nn_rd_bad_attr(r, idx, "mode", "instance or channel", err);
    return softmax_instance(r, idx, in[0], out, res, NULL, err);
}

/* x op scalar, or scalar op x for the r-variants. */
gir_status nn_rd_scalar(nn_reader *r, size_t idx, const int32_t *in, int32_t *out, nn_rres *res,
                        gir_error *err)
{
    const gir_op_map *d = nnr_cur_def(r, idx);
    const char *op = nn_rd_raw(r, idx)->op;
    double s;
    TRY(nnr_g_float(r, idx, "scalar", true, 0, &s, err));
    bool is_int = false;
    TRY(nn_rd_bool(r, idx, "is_int", false, &is_int, err));
    if (is_int)
        return nnr_opaque(res);
    bool rev = strstr(op, "_rminus") || strstr(op, "_rdiv") || strstr(op, "_rpower") || strstr(op, "__rsub") ||
               strstr(op, "__rdiv") || strstr(op, "__rpow");
    gir_node *n;
    TRY(nn_rd_node(r, idx, d->op, 2, 1, &n, err));
    int32_t c;
    const gir_value *x = nn_rd_value(r, in[0]);
    gir_dtype dt = x && x->dtype == GIR_DT_F64 ? GIR_DT_F64 : GIR_DT_F32;
    TRY(nnr_const_scalar(r, n, s, dt, &c, err));
    nnr_set_in(n, rev ? 1 : 0, in[0]);
    nnr_set_in(n, rev ? 0 : 1, c);
    return nn_rd_out(r, n, 0, &out[0], err);
}

gir_status nn_rd_variadic(nn_reader *r, size_t idx, const int32_t *in, int32_t *out, nn_rres *res,
                          gir_error *err)
{
    const gir_op_map *d = nnr_cur_def(r, idx);
    const nn_node *rn = nn_rd_raw(r, idx);
    const char *na = nn_rd_attr(r, idx, "num_args");
    int64_t k;
    if (na) {
        TRY(nn_rd_int(r, idx, "num_args", false, 0, &k, err));
        if (k != (int64_t)rn->n_in) {
            char what[64];
            snprintf(what, sizeof what, "the input count (%zu)", rn->n_in);
            return nn_rd_bad_attr(r, idx, "num_args", what, err);
        }
    }
    if (rn->n_in < 1)
        return nnr_opaque(res);
    int64_t axis = 0;
    if (d->op == GIR_OP_Concat)
        TRY(nn_rd_int(r, idx, r->fl == NN_MXNET ? "dim" : "axis", false, 1, &axis, err));
    gir_node *n;
    TRY(nn_rd_node(r, idx, d->op, rn->n_in, 1, &n, err));
    for (size_t i = 0; i < rn->n_in; i++)
        nnr_set_in(n, i, in[i]);
    if (d->op == GIR_OP_Concat && gir_attrs_set_int(r->g, &n->attrs, "axis", axis, err))
        return gir_nomem(err);
    return nn_rd_out(r, n, 0, &out[0], err);
}

gir_status nn_rd_dropout(nn_reader *r, size_t idx, const int32_t *in, int32_t *out, nn_rres *res,
                         gir_error *err)
{
    double p;
    bool mx = r->fl == NN_MXNET;
    TRY(nnr_g_float(r, idx, mx ? "p" : "rate", false, 0.5, &p, err));
    if (p < 0 || p >= 1)
        return nn_rd_bad_attr(r, idx, mx ? "p" : "rate", "a probability in [0, 1)", err);
    if ((mx && strcmp(nn_rd_str(r, idx, "mode", "training"), "training") != 0) || nn_rd_raw(r, idx)->max_index > 1)
        return nnr_opaque(res);
    gir_node *n;
    TRY(nnr_node2(r, idx, NULL, GIR_OP_Dropout, in[0], -1, &n, &out[0], err));
    return gir_attrs_set_float(r->g, &n->attrs, "ratio", p, err) ? gir_nomem(err) : GIR_OK;
}
