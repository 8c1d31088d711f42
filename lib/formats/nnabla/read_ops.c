/* NNabla functions -> canonical operators.
 *
 * A function maps onto one canonical node when the semantics agree for the
 * arguments and shapes at hand, onto a fixed small group of nodes for
 * Affine (Flatten + Gemm) and Split (Split + Squeeze per output), and onto
 * an opaque node (type and parameter message kept as text) otherwise.  The
 * decision is taken before anything is added to the graph. */
#include "nnabla.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NNB_NONE_SENTINEL 0x7fffffff

typedef struct mctx {
    nnb_reader *r;
    gir_graph *g;
    const Nnabla__Function *f;
    const char *name;
    const int32_t *in;
    size_t n_in;
    const int32_t *out;
    size_t n_out;
    gir_error *err;
    gir_node *first; /* the node carrying the function's meta */
} mctx;

typedef gir_status (*map_fn)(mctx *m, bool *mapped);


/* ---- parameter access --------------------------------------------------- */

const ProtobufCFieldDescriptor *nnb_param_field(const Nnabla__Function *f)
{
    if (f->parameter_case == NNABLA__FUNCTION__PARAMETER__NOT_SET)
        return NULL;
    return protobuf_c_message_descriptor_get_field(&nnabla__function__descriptor, (unsigned)f->parameter_case);
}

const ProtobufCFieldDescriptor *nnb_param_field_by_name(const char *name)
{
    const ProtobufCFieldDescriptor *fd =
        protobuf_c_message_descriptor_get_field_by_name(&nnabla__function__descriptor, name);
    return fd && (fd->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) ? fd : NULL;
}

void nnb_set_param(Nnabla__Function *f, const ProtobufCFieldDescriptor *fd, ProtobufCMessage *msg)
{
    const ProtobufCFieldDescriptor *old = nnb_param_field(f);
    if (old)
        gir_pb_free(*(ProtobufCMessage **)((char *)f + old->offset));
    f->parameter_case = (Nnabla__Function__ParameterCase)fd->id;
    *(ProtobufCMessage **)((char *)f + fd->offset) = msg;
}

bool nnb_is_loop_function(const char *type)
{
    static const char *const loops[] = { "RepeatStart", "RepeatEnd", "RecurrentInput", "RecurrentOutput", "Delay",
                                         NULL };
    for (size_t i = 0; loops[i]; i++)
        if (strcmp(type, loops[i]) == 0)
            return true;
    return false;
}

void nnb_fmt_ints(char *out, size_t n, const int64_t *v, size_t k)
{
    size_t o = 0;
    o += (size_t)snprintf(out + o, n - o, "[");
    for (size_t i = 0; i < k && o < n; i++)
        o += (size_t)snprintf(out + o, n - o, "%s%lld", i ? ", " : "", (long long)v[i]);
    if (o < n)
        snprintf(out + o, n - o, "]");
}

/* The function's parameter message when it is of the expected case; a
 * proto3 all-default message otherwise (absent means every field zero). */
#define PARAM(m, CASE, member, INIT)                                                            \
    ((m)->f->parameter_case == NNABLA__FUNCTION__PARAMETER_##CASE ? (m)->f->member : &(INIT))

/* The function carries the parameter message of another function. */
static bool foreign_param(const mctx *m, Nnabla__Function__ParameterCase expected)
{
    return m->f->parameter_case != NNABLA__FUNCTION__PARAMETER__NOT_SET && m->f->parameter_case != expected;
}

/* ---- graph helpers ------------------------------------------------------ */

static gir_value *val(const mctx *m, int32_t idx)
{
    return idx >= 0 ? m->g->values[idx] : NULL;
}

static int rank_of(const mctx *m, int32_t idx)
{
    const gir_value *v = val(m, idx);
    return v ? v->shape.rank : -1;
}

static int64_t numel_of(const mctx *m, int32_t idx)
{
    const gir_value *v = val(m, idx);
    return v ? gir_shape_numel(&v->shape) : -1;
}

/* Adds a node; its meta is filled by the caller for the function's node. */
static gir_status add_node(mctx *m, const char *name, gir_op op, size_t n_in, size_t n_out, gir_node **out)
{
    gir_status st = gir_graph_add_node(m->g, name, op, n_in, n_out, out, m->err);
    if (st)
        return st;
    if (!m->first)
        m->first = *out;
    return GIR_OK;
}

/* Runs the op's shape inference; shapes the file declares win. */
static gir_status infer(mctx *m, gir_node *n)
{
    const gir_op_info *info = gir_op_get(n->op);
    if (!info || !info->infer)
        return GIR_OK;
    gir_shape saved[16];
    const char *names[16][GIR_MAX_RANK];
    size_t k = n->n_out < 16 ? n->n_out : 16;
    for (size_t i = 0; i < k; i++) {
        gir_value *v = gir_out(m->g, n, i);
        saved[i] = v ? v->shape : (gir_shape){ -1, { 0 } };
        if (v)
            memcpy(names[i], v->dim_names, sizeof names[i]);
    }
    gir_error ierr = GIR_ERROR_INIT;
    gir_status st = info->infer(m->g, n, &ierr);
    /* Inference failures are reported by validation at the end of the
     * read; here they only leave shapes as declared. */
    gir_error_clear(&ierr);
    (void)st;
    for (size_t i = 0; i < k; i++) {
        gir_value *v = gir_out(m->g, n, i);
        if (v && saved[i].rank >= 0) {
            v->shape = saved[i];
            memcpy(v->dim_names, names[i], sizeof names[i]);
        }
    }
    return GIR_OK;
}

/* A float32 scalar constant "<function>/<suffix>" holding v (rounded to
 * float32, out-of-range values to infinity). */
static gir_status scalar_value(mctx *m, const char *suffix, double v, int32_t *ci)
{
    gir_shape s0 = { 0, { 0 } };
    float fv = (float)v;
    if (isfinite(v) && fabs(v) > 3.4028234663852886e38)
        fv = v > 0 ? INFINITY : -INFINITY;
    void *data = malloc(sizeof fv);
    if (!data)
        return gir_nomem(m->err);
    memcpy(data, &fv, sizeof fv);
    gir_tensor *t;
    TRY(gir_tensor_adopt(GIR_DT_F32, &s0, data, &t, m->err));
    const char *cname = gir_arena_printf(&m->g->arena, "%s/%s", m->name, suffix);
    gir_status st = cname ? gir_graph_add_const(m->g, gir_graph_unique_value_name(m->g, cname), t, ci, m->err)
                          : gir_nomem(m->err);
    gir_tensor_unref(t);
    return st;
}

static gir_status link_all(mctx *m, gir_node *n)
{
    for (size_t i = 0; i < m->n_in && i < n->n_in; i++)
        n->in[i] = m->in[i];
    for (size_t i = 0; i < m->n_out && i < n->n_out; i++) {
        gir_status st = gir_node_set_output(m->g, n, i, m->out[i], m->err);
        if (st)
            return st;
    }
    return GIR_OK;
}

/* One node with the function's own inputs and outputs. */
static gir_status simple(mctx *m, gir_op op, gir_node **out)
{
    gir_node *n;
    gir_status st = add_node(m, m->name, op, m->n_in, m->n_out, &n);
    if (!st)
        st = link_all(m, n);
    if (st)
        return st;
    *out = n;
    return GIR_OK;
}

static gir_status set_int(mctx *m, gir_node *n, const char *k, int64_t v)
{
    return gir_attrs_set_int(m->g, &n->attrs, k, v, m->err);
}

/* NNabla's arguments are float32: widened through their shortest text, so
 * eps 1e-05 equals the 1e-05 a text or double format gives. */
static gir_status set_float(mctx *m, gir_node *n, const char *k, double v)
{
    return gir_attrs_set_float(m->g, &n->attrs, k, gir_float_widen((float)v), m->err);
}

static gir_status set_ints(mctx *m, gir_node *n, const char *k, const int64_t *v, size_t c)
{
    return gir_attrs_set_ints(m->g, &n->attrs, k, v, c, m->err);
}

static gir_status set_string(mctx *m, gir_node *n, const char *k, const char *v)
{
    return gir_attrs_set_string(m->g, &n->attrs, k, v, m->err);
}

static gir_status meta_int(mctx *m, gir_node *n, const char *k, int64_t v)
{
    return gir_attrs_set_int(m->g, &n->meta, k, v, m->err);
}

static gir_status check_arity(const mctx *m, size_t min_in, size_t max_in, size_t min_out, size_t max_out,
                              bool *ok)
{
    *ok = m->n_in >= min_in && m->n_in <= max_in && m->n_out >= min_out && m->n_out <= max_out;
    return GIR_OK;
}

/* ---- opaque --------------------------------------------------------------- */

/* The function's own fields of a newer schema (kept as text), one a line. */
static gir_status unknown_text(mctx *m, const char **out)
{
    *out = NULL;
    const ProtobufCMessage *b = &m->f->base;
    gir_buf t = GIR_BUF_INIT;
    for (unsigned i = 0; i < b->n_unknown_fields; i++) {
        if (b->unknown_fields[i].tag != 0)
            continue;
        if (t.len)
            gir_buf_putc(&t, '\n');
        gir_buf_append(&t, b->unknown_fields[i].data, b->unknown_fields[i].len);
    }
    if (t.failed) {
        gir_buf_free(&t);
        return gir_nomem(m->err);
    }
    if (t.len) {
        *out = gir_arena_strndup(&m->g->arena, t.data, t.len);
        gir_buf_free(&t);
        if (!*out)
            return gir_nomem(m->err);
    }
    gir_buf_free(&t);
    return GIR_OK;
}

static void first_unknown(void *ctx, const ProtobufCMessage *msg, const char *text, size_t len)
{
    char *name = ctx;
    (void)msg;
    if (!name[0])
        gir_pbtext_field_name(text, len, name, 64);
}

static gir_status map_opaque(mctx *m)
{
    gir_node *n;
    TRY(simple(m, GIR_OP_OPAQUE, &n));
    n->opaque_format = gir_arena_strdup(&m->g->arena, "nnabla");
    n->opaque_op = gir_arena_strdup(&m->g->arena, m->f->type);
    if (!n->opaque_format || !n->opaque_op)
        return gir_nomem(m->err);
    size_t unknown = gir_pbtext_unknown_count(&m->f->base);
    if (unknown) {
        const char *own;
        TRY(unknown_text(m, &own));
        if (own)
            TRY(set_string(m, n, NNB_ATTR_UNKNOWN, own));
        char first[64] = "";
        TRY(gir_pbtext_each_unknown(&m->f->base, first_unknown, first, m->err));
        TRY(gir_graph_note(m->g, m->err,
                           "function '%s' (%s) has %zu field%s this nnabla schema does not know (first '%s'): "
                           "kept verbatim for nnabla; another format refuses it",
                           m->name, m->f->type, unknown, unknown == 1 ? "" : "s", first));
    }
    const ProtobufCFieldDescriptor *fd = nnb_param_field(m->f);
    if (fd) {
        const ProtobufCMessage *pm = *(ProtobufCMessage *const *)((const char *)m->f + fd->offset);
        gir_buf b = GIR_BUF_INIT;
        gir_status st = gir_pbtext_print(pm, &b, m->err);
        if (!st)
            st = set_string(m, n, fd->name, b.data ? b.data : "");
        gir_buf_free(&b);
        if (st)
            return st;
    }
    return GIR_OK;
}

/* ---- one-to-one maps without arguments ------------------------------------ */

typedef struct plain_map {
    const char *type;
    gir_op op;
    unsigned n_in;
} plain_map;

static const plain_map plain[] = {
    { "Sigmoid", GIR_OP_Sigmoid, 1 },   { "Tanh", GIR_OP_Tanh, 1 },         { "SoftSign", GIR_OP_Softsign, 1 },
    { "Abs", GIR_OP_Abs, 1 },           { "Exp", GIR_OP_Exp, 1 },           { "Log", GIR_OP_Log, 1 },
    { "Identity", GIR_OP_Identity, 1 }, { "Sin", GIR_OP_Sin, 1 },           { "Cos", GIR_OP_Cos, 1 },
    { "Erf", GIR_OP_Erf, 1 },           { "Ceil", GIR_OP_Ceil, 1 },         { "Floor", GIR_OP_Floor, 1 },
    { "Minimum2", GIR_OP_Min, 2 },      { "Maximum2", GIR_OP_Max, 2 },      { NULL, GIR_OP_OPAQUE, 0 },
};

static gir_status step(mctx *m, const char *suffix, gir_op op, const int32_t *ins, size_t n_in, int32_t out,
                       gir_node **node, int32_t *made);
static gir_status step2(mctx *m, const char *suffix, gir_op op, int32_t a, int32_t b, int32_t out, int32_t *made);

static bool own_weight(const mctx *m, int32_t idx);
static gir_status map_batch_matmul_t(mctx *m, bool *mapped, bool ta, bool tb);
static gir_status view_weight(mctx *m, int32_t idx, const int64_t *dims, int rank);

/* ---- layers ---------------------------------------------------------------- */

static gir_status map_affine(mctx *m, bool *mapped)
{
    static const Nnabla__AffineParameter zero = NNABLA__AFFINE_PARAMETER__INIT;
    const Nnabla__AffineParameter *p = PARAM(m, AFFINE_PARAM, affine_param, zero);
    bool ok;
    check_arity(m, 2, 3, 1, 1, &ok);
    int r = rank_of(m, m->in[0]);
    int64_t b = p->base_axis;
    if (b < 0 && r >= 0)
        b += r;
    if (!ok || b != 1 || rank_of(m, m->in[1]) != 2 || (r >= 0 && r < 1) ||
        (m->n_in == 3 && rank_of(m, m->in[2]) != 1))
        return GIR_OK;
    *mapped = true;
    int32_t a = m->in[0];
    if (r != 2) {
        /* x is viewed as a matrix: Flatten(axis=1) then Gemm */
        gir_node *fl;
        const char *fname = gir_arena_printf(&m->g->arena, "%s/flatten", m->name);
        if (!fname)
            return gir_nomem(m->err);
        TRY(add_node(m, gir_graph_unique_node_name(m->g, fname), GIR_OP_Flatten, 1, 1, &fl));
        fl->in[0] = m->in[0];
        TRY(set_int(m, fl, "axis", 1));
        TRY(meta_int(m, fl, NNB_META_FUSED, 1));
        TRY(gir_node_make_output(m->g, fl, 0, gir_graph_unique_value_name(m->g, fname), m->err));
        TRY(infer(m, fl));
        a = fl->out[0];
    }
    /* A parameter used only as Affine weights is viewed as out x in, the
     * layout of ONNX Gemm(transB=1), MXNet FullyConnected and NNVM dense. */
    bool transposed = false;
    gir_value *wv = m->g->values[m->in[1]];
    if (wv->kind == GIR_VALUE_WEIGHT && m->r->affine_only && m->r->affine_only[m->in[1]]) {
        transposed = true;
        if (!gir_attrs_find(&wv->meta, NNB_META_TRANSPOSED)) {
            if (wv->data)
                TRY(nnb_transpose_view(wv->data, m->err));
            int64_t t = wv->shape.dims[0];
            wv->shape.dims[0] = wv->shape.dims[1];
            wv->shape.dims[1] = t;
            TRY(gir_attrs_set_int(m->g, &wv->meta, NNB_META_TRANSPOSED, 1, m->err));
        }
    }
    gir_node *n;
    TRY(gir_graph_add_node(m->g, m->name, GIR_OP_Gemm, m->n_in, 1, &n, m->err));
    n->in[0] = a;
    n->in[1] = m->in[1];
    if (m->n_in == 3)
        n->in[2] = m->in[2];
    TRY(gir_node_set_output(m->g, n, 0, m->out[0], m->err));
    TRY(set_float(m, n, "alpha", 1.0));
    TRY(set_float(m, n, "beta", 1.0));
    TRY(set_int(m, n, "transA", 0));
    TRY(set_int(m, n, "transB", transposed));
    m->first = n;
    return infer(m, n);
}

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
    bool ok;
    check_arity(m, 2, 3, 1, 1, &ok);
    const gir_value *wv = val(m, m->in[1]);
    if (!ok || !wv || wv->shape.rank < 2)
        return GIR_OK;
    gir_value wview = *wv;
    const gir_value *w = &wview;
    if (depthwise) {
        /* (C', K...) -> (C', 1, K...) */
        int64_t c = rank_of(m, m->in[0]) >= 2 ? val(m, m->in[0])->shape.dims[1] : -1;
        if (wv->shape.rank + 1 > GIR_MAX_RANK || c < 1 || !own_weight(m, m->in[1]))
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
    int r = rank_of(m, m->in[0]);
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
    if (m->n_in == 3 && rank_of(m, m->in[2]) != 1)
        return GIR_OK;
    *mapped = true;
    gir_node *n;
    if (depthwise)
        TRY(view_weight(m, m->in[1], w->shape.dims, w->shape.rank));
    TRY(simple(m, transposed ? GIR_OP_ConvTranspose : GIR_OP_Conv, &n));
    TRY(set_ints(m, n, "kernel_shape", k, ns));
    TRY(set_ints(m, n, "strides", strides, ns));
    TRY(set_ints(m, n, "dilations", dil, ns));
    TRY(set_ints(m, n, "pads", pads, 2 * ns));
    TRY(set_int(m, n, "group", group));
    if (transposed)
        TRY(set_ints(m, n, "output_padding", opad, ns));
    return infer(m, n);
}

static gir_status map_convolution(mctx *m, bool *mapped)
{
    static const Nnabla__ConvolutionParameter zero = NNABLA__CONVOLUTION_PARAMETER__INIT;
    const Nnabla__ConvolutionParameter *p = PARAM(m, CONVOLUTION_PARAM, convolution_param, zero);
    return map_conv_common(m, mapped, false, p->base_axis, p->pad, p->stride, p->dilation, p->group,
                           p->channel_last, NULL, false);
}

static gir_status map_deconvolution(mctx *m, bool *mapped)
{
    static const Nnabla__DeconvolutionParameter zero = NNABLA__DECONVOLUTION_PARAMETER__INIT;
    const Nnabla__DeconvolutionParameter *p = PARAM(m, DECONVOLUTION_PARAM, deconvolution_param, zero);
    return map_conv_common(m, mapped, true, p->base_axis, p->pad, p->stride, p->dilation, p->group,
                           p->channel_last, p->output_padding, false);
}

/* DepthwiseConvolution: Conv with one group per input channel, the weight
 * (C * multiplier, K...) viewed as (C * multiplier, 1, K...). */
static gir_status map_depthwise_convolution(mctx *m, bool *mapped)
{
    static const Nnabla__DepthwiseConvolutionParameter zero = NNABLA__DEPTHWISE_CONVOLUTION_PARAMETER__INIT;
    const Nnabla__DepthwiseConvolutionParameter *p =
        PARAM(m, DEPTHWISE_CONVOLUTION_PARAM, depthwise_convolution_param, zero);
    const gir_value *w = val(m, m->in[1]), *x = val(m, m->in[0]);
    int64_t mult = p->multiplier ? p->multiplier : 1;
    if (m->n_in < 2 || !w || !x || x->shape.rank < 2 || w->shape.rank < 1 ||
        w->shape.dims[0] != x->shape.dims[1] * mult)
        return GIR_OK;
    return map_conv_common(m, mapped, false, p->base_axis, p->pad, p->stride, p->dilation, 1, false, NULL, true);
}

/* DepthwiseDeconvolution with divisor 1: ConvTranspose with one group per
 * channel, the weight (C, K...) viewed as (C, 1, K...). */
static gir_status map_depthwise_deconvolution(mctx *m, bool *mapped)
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
    bool ok;
    check_arity(m, 1, 1, 1, 1, &ok);
    const gir_value *x = val(m, m->in[0]);
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
    *mapped = true;
    gir_node *n;
    TRY(simple(m, op, &n));
    TRY(set_ints(m, n, "kernel_shape", k, ns));
    TRY(set_ints(m, n, "strides", s, ns));
    TRY(set_ints(m, n, "pads", pads, 2 * ns));
    TRY(set_int(m, n, "ceil_mode", ceil));
    TRY(meta_int(m, n, NNB_META_IGNORE_BORDER, ignore_border));
    if (op == GIR_OP_AveragePool)
        TRY(set_int(m, n, "count_include_pad", including_pad >= 1));
    return infer(m, n);
}

static gir_status map_max_pooling(mctx *m, bool *mapped)
{
    static const Nnabla__MaxPoolingParameter zero = NNABLA__MAX_POOLING_PARAMETER__INIT;
    const Nnabla__MaxPoolingParameter *p = PARAM(m, MAX_POOLING_PARAM, max_pooling_param, zero);
    return map_pool(m, mapped, GIR_OP_MaxPool, p->kernel, p->stride, p->ignore_border, p->pad, p->channel_last,
                    -1);
}

static gir_status map_average_pooling(mctx *m, bool *mapped)
{
    static const Nnabla__AveragePoolingParameter zero = NNABLA__AVERAGE_POOLING_PARAMETER__INIT;
    const Nnabla__AveragePoolingParameter *p = PARAM(m, AVERAGE_POOLING_PARAM, average_pooling_param, zero);
    return map_pool(m, mapped, GIR_OP_AveragePool, p->kernel, p->stride, p->ignore_border, p->pad,
                    p->channel_last, p->including_pad ? 1 : 0);
}

/* SumPooling: AveragePool with the padding counted, every window whole
 * (floor mode, more end padding for ignore_border=false), times the window
 * size; the writer folds the pair back. */
static gir_status map_sum_pooling(mctx *m, bool *mapped)
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
    TRY(gir_node_make_output(m->g, pool, 0, gir_graph_unique_value_name(m->g, aname), m->err));
    TRY(infer(m, pool));
    TRY(gir_attrs_set_string(m->g, &pool->meta, NNB_META_TYPE, "SumPooling", m->err));
    double area = 1;
    for (size_t i = 0; i < p->kernel->n_dim; i++)
        area *= (double)p->kernel->dim[i];
    int32_t k;
    TRY(scalar_value(m, "window", area, &k));
    gir_node *n;
    TRY(gir_graph_add_node(m->g, gir_graph_unique_node_name(m->g, mname), GIR_OP_Mul, 2, 1, &n, m->err));
    n->in[0] = pool->out[0];
    n->in[1] = k;
    TRY(gir_node_set_output(m->g, n, 0, y, m->err));
    m->first = pool;
    return infer(m, n);
}

static gir_status map_global_average_pooling(mctx *m, bool *mapped)
{
    bool ok;
    check_arity(m, 1, 1, 1, 1, &ok);
    if (!ok || rank_of(m, m->in[0]) != 4) /* nnabla's output is (N, C, 1, 1) for any rank */
        return GIR_OK;
    *mapped = true;
    gir_node *n;
    TRY(simple(m, GIR_OP_GlobalAveragePool, &n));
    return infer(m, n);
}

static gir_status map_unpooling(mctx *m, bool *mapped)
{
    static const Nnabla__UnpoolingParameter zero = NNABLA__UNPOOLING_PARAMETER__INIT;
    const Nnabla__UnpoolingParameter *p = PARAM(m, UNPOOLING_PARAM, unpooling_param, zero);
    bool ok;
    check_arity(m, 1, 1, 1, 1, &ok);
    int r = rank_of(m, m->in[0]);
    if (!ok || p->channel_last || !p->kernel || p->kernel->n_dim == 0 || r < (int)p->kernel->n_dim)
        return GIR_OK;
    double scales[GIR_MAX_RANK];
    size_t lead = (size_t)r - p->kernel->n_dim;
    for (int i = 0; i < r; i++) {
        int64_t kk = (size_t)i < lead ? 1 : p->kernel->dim[(size_t)i - lead];
        if (kk < 1)
            return GIR_OK;
        scales[i] = (double)kk;
    }
    *mapped = true;
    gir_node *n;
    TRY(simple(m, GIR_OP_Resize, &n));
    TRY(gir_attrs_set_floats(m->g, &n->attrs, "scales", scales, (size_t)r, m->err));
    TRY(set_string(m, n, "mode", "nearest"));
    TRY(set_string(m, n, "coordinate_transformation_mode", "asymmetric"));
    TRY(set_string(m, n, "nearest_mode", "floor"));
    return infer(m, n);
}

static gir_status map_embed(mctx *m, bool *mapped)
{
    bool ok;
    check_arity(m, 2, 2, 1, 1, &ok);
    if (!ok || foreign_param(m, NNABLA__FUNCTION__PARAMETER__NOT_SET))
        return GIR_OK;
    *mapped = true;
    gir_node *n;
    TRY(add_node(m, m->name, GIR_OP_Gather, 2, 1, &n));
    n->in[0] = m->in[1]; /* Embed(x0 indices, w) is Gather(w, x0) */
    n->in[1] = m->in[0];
    TRY(gir_node_set_output(m->g, n, 0, m->out[0], m->err));
    TRY(set_int(m, n, "axis", 0));
    TRY(gir_attrs_set_string(m->g, &n->meta, NNB_META_TYPE, "Embed", m->err));
    return infer(m, n);
}

/* ---- activations ----------------------------------------------------------- */

static gir_status map_relu(mctx *m, bool *mapped)
{
    static const Nnabla__ReLUParameter zero = NNABLA__RE_LUPARAMETER__INIT;
    const Nnabla__ReLUParameter *p = PARAM(m, RELU_PARAM, relu_param, zero);
    bool ok;
    check_arity(m, 1, 1, 1, 1, &ok);
    if (!ok)
        return GIR_OK;
    *mapped = true;
    gir_node *n;
    TRY(simple(m, GIR_OP_Relu, &n));
    if (p->inplace)
        TRY(meta_int(m, n, NNB_META_INPLACE, 1));
    return infer(m, n);
}

static gir_status map_leaky_relu(mctx *m, bool *mapped)
{
    static const Nnabla__LeakyReLUParameter zero = NNABLA__LEAKY_RE_LUPARAMETER__INIT;
    const Nnabla__LeakyReLUParameter *p = PARAM(m, LEAKY_RELU_PARAM, leaky_relu_param, zero);
    bool ok;
    check_arity(m, 1, 1, 1, 1, &ok);
    if (!ok)
        return GIR_OK;
    *mapped = true;
    gir_node *n;
    TRY(simple(m, GIR_OP_LeakyRelu, &n));
    TRY(set_float(m, n, "alpha", p->alpha));
    if (p->inplace)
        TRY(meta_int(m, n, NNB_META_INPLACE, 1));
    return infer(m, n);
}

static gir_status map_softmax_like(mctx *m, bool *mapped, gir_op op, int64_t axis)
{
    bool ok;
    check_arity(m, 1, 1, 1, 1, &ok);
    if (!ok)
        return GIR_OK;
    *mapped = true;
    gir_node *n;
    TRY(simple(m, op, &n));
    TRY(set_int(m, n, "axis", axis));
    return infer(m, n);
}

static gir_status map_softmax(mctx *m, bool *mapped)
{
    static const Nnabla__SoftmaxParameter zero = NNABLA__SOFTMAX_PARAMETER__INIT;
    return map_softmax_like(m, mapped, GIR_OP_Softmax, PARAM(m, SOFTMAX_PARAM, softmax_param, zero)->axis);
}

static gir_status map_log_softmax(mctx *m, bool *mapped)
{
    static const Nnabla__LogSoftmaxParameter zero = NNABLA__LOG_SOFTMAX_PARAMETER__INIT;
    return map_softmax_like(m, mapped, GIR_OP_LogSoftmax,
                            PARAM(m, LOG_SOFTMAX_PARAM, log_softmax_param, zero)->axis);
}

static gir_status map_elu(mctx *m, bool *mapped)
{
    static const Nnabla__ELUParameter zero = NNABLA__ELUPARAMETER__INIT;
    const Nnabla__ELUParameter *p = PARAM(m, ELU_PARAM, elu_param, zero);
    bool ok;
    check_arity(m, 1, 1, 1, 1, &ok);
    if (!ok)
        return GIR_OK;
    *mapped = true;
    gir_node *n;
    TRY(simple(m, GIR_OP_Elu, &n));
    TRY(set_float(m, n, "alpha", p->alpha));
    return infer(m, n);
}

static gir_status map_selu(mctx *m, bool *mapped)
{
    static const Nnabla__SELUParameter zero = NNABLA__SELUPARAMETER__INIT;
    const Nnabla__SELUParameter *p = PARAM(m, SELU_PARAM, selu_param, zero);
    bool ok;
    check_arity(m, 1, 1, 1, 1, &ok);
    if (!ok)
        return GIR_OK;
    *mapped = true;
    gir_node *n;
    TRY(simple(m, GIR_OP_Selu, &n));
    TRY(set_float(m, n, "alpha", p->alpha));
    TRY(set_float(m, n, "gamma", p->scale));
    return infer(m, n);
}

static gir_status map_softplus(mctx *m, bool *mapped)
{
    static const Nnabla__SoftPlusParameter zero = NNABLA__SOFT_PLUS_PARAMETER__INIT;
    const Nnabla__SoftPlusParameter *p = PARAM(m, SOFTPLUS_PARAM, softplus_param, zero);
    bool ok;
    check_arity(m, 1, 1, 1, 1, &ok);
    if (!ok || p->beta != 1.0)
        return GIR_OK;
    *mapped = true;
    gir_node *n;
    TRY(simple(m, GIR_OP_Softplus, &n));
    return infer(m, n);
}

static gir_status map_hard_sigmoid(mctx *m, bool *mapped)
{
    bool ok;
    check_arity(m, 1, 1, 1, 1, &ok);
    if (!ok)
        return GIR_OK;
    *mapped = true;
    gir_node *n;
    TRY(simple(m, GIR_OP_HardSigmoid, &n));
    TRY(set_float(m, n, "alpha", 0.2));
    TRY(set_float(m, n, "beta", 0.5));
    return infer(m, n);
}

/* HardTanh = Clip(-1, 1); ReLU6 = Clip(0, 6). */
static gir_status map_fixed_clip(mctx *m, bool *mapped, double lo, double hi)
{
    bool ok;
    check_arity(m, 1, 1, 1, 1, &ok);
    if (!ok)
        return GIR_OK;
    *mapped = true;
    gir_node *n;
    TRY(simple(m, GIR_OP_Clip, &n));
    TRY(set_float(m, n, "min", lo));
    TRY(set_float(m, n, "max", hi));
    TRY(gir_attrs_set_string(m->g, &n->meta, NNB_META_TYPE, m->f->type, m->err));
    return infer(m, n);
}

static gir_status map_hard_tanh(mctx *m, bool *mapped)
{
    return map_fixed_clip(m, mapped, -1.0, 1.0);
}

static gir_status map_relu6(mctx *m, bool *mapped)
{
    return map_fixed_clip(m, mapped, 0.0, 6.0);
}

static gir_status map_prelu(mctx *m, bool *mapped)
{
    static const Nnabla__PReLUParameter zero = NNABLA__PRE_LUPARAMETER__INIT;
    const Nnabla__PReLUParameter *p = PARAM(m, PRELU_PARAM, prelu_param, zero);
    bool ok;
    check_arity(m, 2, 2, 1, 1, &ok);
    int r = rank_of(m, m->in[0]);
    int64_t axis = p->base_axis < 0 && r >= 0 ? p->base_axis + r : p->base_axis;
    if (!ok || rank_of(m, m->in[1]) != 1)
        return GIR_OK;
    int64_t c = numel_of(m, m->in[1]);
    if (c == 1) {
        /* one shared slope broadcasts the same in both */
        *mapped = true;
        gir_node *n;
        TRY(simple(m, GIR_OP_PRelu, &n));
        return infer(m, n);
    }
    /* a slope per channel of axis base_axis: viewed as (C, 1, ...) so that
     * it broadcasts over the axes after the channel */
    if (r < 1 || axis < 0 || axis >= r || c < 1 || val(m, m->in[0])->shape.dims[axis] != c ||
        !own_weight(m, m->in[1]))
        return GIR_OK;
    *mapped = true;
    int64_t shape[GIR_MAX_RANK];
    shape[0] = c;
    for (int i = 1; i < r - (int)axis; i++)
        shape[i] = 1;
    TRY(view_weight(m, m->in[1], shape, r - (int)axis));
    gir_node *n;
    TRY(simple(m, GIR_OP_PRelu, &n));
    return infer(m, n);
}

static gir_status map_sign(mctx *m, bool *mapped)
{
    static const Nnabla__SignParameter zero = NNABLA__SIGN_PARAMETER__INIT;
    const Nnabla__SignParameter *p = PARAM(m, SIGN_PARAM, sign_param, zero);
    bool ok;
    check_arity(m, 1, 1, 1, 1, &ok);
    if (!ok || p->alpha != 0.0f) /* ONNX's Sign(0) is 0 */
        return GIR_OK;
    *mapped = true;
    gir_node *n;
    TRY(simple(m, GIR_OP_Sign, &n));
    return infer(m, n);
}

/* ---- normalization ---------------------------------------------------------- */

/* A BN parameter input: a Parameter holding exactly C values laid out along
 * the channel axis, used by nothing but BatchNormalization. */
static bool bn_param_ok(const mctx *m, int32_t idx, int64_t c)
{
    const gir_value *v = val(m, idx);
    if (!v || v->kind != GIR_VALUE_WEIGHT || v->shape.rank < 1)
        return false;
    int64_t nonone = -1;
    for (int i = 0; i < v->shape.rank; i++) {
        if (v->shape.dims[i] < 0)
            return false;
        if (v->shape.dims[i] != 1) {
            if (nonone >= 0)
                return false;
            nonone = v->shape.dims[i];
        }
    }
    int64_t ch = nonone < 0 ? 1 : nonone;
    if (c >= 0 && ch != c)
        return false;
    return m->r->bn_only && m->r->bn_only[idx];
}

/* A parameter read only by this function, viewed in shape dims (the same
 * values), its declared shape remembered for the writer. */
static bool own_weight(const mctx *m, int32_t idx)
{
    const gir_value *v = val(m, idx);
    return v && v->kind == GIR_VALUE_WEIGHT && m->r->uses && m->r->uses[idx] == 1;
}

static gir_status view_weight(mctx *m, int32_t idx, const int64_t *dims, int rank)
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

/* Gives a BN parameter its canonical shape (C), remembering the declared one. */
static gir_status bn_param_reshape(mctx *m, int32_t idx)
{
    gir_value *v = m->g->values[idx];
    int64_t n = gir_shape_numel(&v->shape);
    if (v->shape.rank == 1)
        return GIR_OK;
    TRY(gir_attrs_set_ints(m->g, &v->meta, NNB_META_SHAPE, v->shape.dims, (size_t)v->shape.rank, m->err));
    v->shape.rank = 1;
    v->shape.dims[0] = n;
    memset(v->dim_names, 0, sizeof v->dim_names);
    if (v->data)
        v->data->shape = v->shape; /* the same bytes, viewed as (C) */
    return GIR_OK;
}

static gir_status map_batch_normalization(mctx *m, bool *mapped)
{
    static const Nnabla__BatchNormalizationParameter zero = NNABLA__BATCH_NORMALIZATION_PARAMETER__INIT;
    const Nnabla__BatchNormalizationParameter *p =
        PARAM(m, BATCH_NORMALIZATION_PARAM, batch_normalization_param, zero);
    bool ok;
    check_arity(m, 5, 5, 1, 1, &ok);
    if (!ok || p->batch_stat || p->no_scale || p->no_bias || p->n_axes != 1)
        return GIR_OK;
    int r = rank_of(m, m->in[0]);
    int64_t axis = p->axes[0];
    if (axis < 0 && r >= 0)
        axis += r;
    if (axis != 1 || r == 0 || r == 1)
        return GIR_OK;
    int64_t c = -1;
    if (r >= 2)
        c = val(m, m->in[0])->shape.dims[1];
    if (c < 0)
        c = numel_of(m, m->in[3]);
    for (size_t i = 1; i < 5; i++)
        if (!bn_param_ok(m, m->in[i], c))
            return GIR_OK;
    *mapped = true;
    for (size_t i = 1; i < 5; i++)
        TRY(bn_param_reshape(m, m->in[i]));
    gir_node *n;
    TRY(add_node(m, m->name, GIR_OP_BatchNormalization, 5, 1, &n));
    n->in[0] = m->in[0];
    n->in[1] = m->in[2]; /* scale = gamma */
    n->in[2] = m->in[1]; /* B = beta */
    n->in[3] = m->in[3];
    n->in[4] = m->in[4];
    TRY(gir_node_set_output(m->g, n, 0, m->out[0], m->err));
    TRY(set_float(m, n, "epsilon", p->eps));
    TRY(set_float(m, n, "momentum", p->decay_rate));
    return infer(m, n);
}

/* ---- reductions ---------------------------------------------------------------- */

static gir_status map_reduce(mctx *m, bool *mapped, gir_op op, const int64_t *axes, size_t n_axes, bool keep)
{
    bool ok;
    check_arity(m, 1, 1, 1, 1, &ok);
    if (!ok)
        return GIR_OK;
    *mapped = true;
    gir_node *n;
    TRY(simple(m, op, &n));
    if (n_axes)
        TRY(set_ints(m, n, "axes", axes, n_axes));
    TRY(set_int(m, n, "keepdims", keep));
    return infer(m, n);
}

static gir_status map_sum(mctx *m, bool *mapped)
{
    static const Nnabla__SumParameter zero = NNABLA__SUM_PARAMETER__INIT;
    const Nnabla__SumParameter *p = PARAM(m, SUM_PARAM, sum_param, zero);
    return map_reduce(m, mapped, GIR_OP_ReduceSum, p->axes, p->n_axes, p->keep_dims);
}

static gir_status map_mean(mctx *m, bool *mapped)
{
    static const Nnabla__MeanParameter zero = NNABLA__MEAN_PARAMETER__INIT;
    const Nnabla__MeanParameter *p = PARAM(m, MEAN_PARAM, mean_param, zero);
    return map_reduce(m, mapped, GIR_OP_ReduceMean, p->axes, p->n_axes, p->keep_dims);
}

static gir_status map_prod(mctx *m, bool *mapped)
{
    static const Nnabla__ProdParameter zero = NNABLA__PROD_PARAMETER__INIT;
    const Nnabla__ProdParameter *p = PARAM(m, PROD_PARAM, prod_param, zero);
    return map_reduce(m, mapped, GIR_OP_ReduceProd, p->axes, p->n_axes, p->keep_dims);
}

static gir_status map_arg(mctx *m, bool *mapped, gir_op reduce, gir_op arg, const int64_t *axes, size_t n_axes,
                          bool keep, bool with_index, bool only_index);

static gir_status map_max(mctx *m, bool *mapped)
{
    static const Nnabla__MaxParameter zero = NNABLA__MAX_PARAMETER__INIT;
    const Nnabla__MaxParameter *p = PARAM(m, MAX_PARAM, max_param, zero);
    if (p->with_index || p->only_index)
        return map_arg(m, mapped, GIR_OP_ReduceMax, GIR_OP_ArgMax, p->axes, p->n_axes, p->keep_dims, p->with_index,
                       p->only_index);
    return map_reduce(m, mapped, GIR_OP_ReduceMax, p->axes, p->n_axes, p->keep_dims);
}

static gir_status map_min(mctx *m, bool *mapped)
{
    static const Nnabla__MinParameter zero = NNABLA__MIN_PARAMETER__INIT;
    const Nnabla__MinParameter *p = PARAM(m, MIN_PARAM, min_param, zero);
    if (p->with_index || p->only_index)
        return map_arg(m, mapped, GIR_OP_ReduceMin, GIR_OP_ArgMin, p->axes, p->n_axes, p->keep_dims, p->with_index,
                       p->only_index);
    return map_reduce(m, mapped, GIR_OP_ReduceMin, p->axes, p->n_axes, p->keep_dims);
}

static gir_status map_reduce_all(mctx *m, bool *mapped, gir_op op)
{
    if (m->f->parameter_case != NNABLA__FUNCTION__PARAMETER__NOT_SET)
        return GIR_OK;
    TRY(map_reduce(m, mapped, op, NULL, 0, false));
    if (*mapped)
        TRY(gir_attrs_set_string(m->g, &m->first->meta, NNB_META_TYPE, m->f->type, m->err));
    return GIR_OK;
}

static gir_status map_reduce_sum_all(mctx *m, bool *mapped)
{
    return map_reduce_all(m, mapped, GIR_OP_ReduceSum);
}

static gir_status map_reduce_mean_all(mctx *m, bool *mapped)
{
    return map_reduce_all(m, mapped, GIR_OP_ReduceMean);
}

/* ---- arithmetic ------------------------------------------------------------------ */

/* Add2, Sub2, ...: nnabla broadcasts only between equal ranks, a subset of
 * numpy's rules; the inplace argument is a memory hint kept as meta. */
static gir_status map_binary(mctx *m, bool *mapped, gir_op op, bool inplace)
{
    bool ok;
    check_arity(m, 2, 2, 1, 1, &ok);
    if (!ok)
        return GIR_OK;
    *mapped = true;
    gir_node *n;
    TRY(simple(m, op, &n));
    if (inplace)
        TRY(meta_int(m, n, NNB_META_INPLACE, 1));
    if (strcmp(m->f->type, "BcAdd2") == 0)
        TRY(gir_attrs_set_string(m->g, &n->meta, NNB_META_TYPE, "BcAdd2", m->err));
    return infer(m, n);
}

#define BINARY(fn, CASE, member, INIT_MACRO, TYPE, OP)                                  \
    static gir_status fn(mctx *m, bool *mapped)                                          \
    {                                                                                    \
        static const TYPE zero = INIT_MACRO;                                             \
        return map_binary(m, mapped, OP, PARAM(m, CASE, member, zero)->inplace);         \
    }
BINARY(map_add2, ADD2_PARAM, add2_param, NNABLA__ADD2_PARAMETER__INIT, Nnabla__Add2Parameter, GIR_OP_Add)
BINARY(map_bc_add2, BC_ADD2_PARAM, bc_add2_param, NNABLA__BC_ADD2_PARAMETER__INIT, Nnabla__BcAdd2Parameter,
       GIR_OP_Add)
BINARY(map_sub2, SUB2_PARAM, sub2_param, NNABLA__SUB2_PARAMETER__INIT, Nnabla__Sub2Parameter, GIR_OP_Sub)
BINARY(map_mul2, MUL2_PARAM, mul2_param, NNABLA__MUL2_PARAMETER__INIT, Nnabla__Mul2Parameter, GIR_OP_Mul)
BINARY(map_div2, DIV2_PARAM, div2_param, NNABLA__DIV2_PARAMETER__INIT, Nnabla__Div2Parameter, GIR_OP_Div)
BINARY(map_pow2, POW2_PARAM, pow2_param, NNABLA__POW2_PARAMETER__INIT, Nnabla__Pow2Parameter, GIR_OP_Pow)

static gir_status map_add_n(mctx *m, bool *mapped)
{
    if (m->n_in < 1 || m->n_out != 1 || foreign_param(m, NNABLA__FUNCTION__PARAMETER__NOT_SET))
        return GIR_OK;
    *mapped = true;
    gir_node *n;
    TRY(simple(m, GIR_OP_Sum, &n));
    return infer(m, n);
}

typedef enum scalar_form {
    SC_X_OP_C, /* op(x, c) */
    SC_C_OP_X, /* op(c, x) */
    SC_CLIP_MAX,
    SC_CLIP_MIN,
} scalar_form;

/* AddScalar etc.: a canonical binary op with a scalar constant operand
 * (named "<function>/val"); the exact double value rides in meta.  A few
 * values have a dedicated op: MulScalar(-1) is Neg, PowScalar(0.5) Sqrt,
 * RDivScalar(1) Reciprocal. */
static gir_status map_scalar(mctx *m, bool *mapped, gir_op op, scalar_form form, double v, bool inplace,
                             gir_op special, double special_val)
{
    bool ok;
    check_arity(m, 1, 1, 1, 1, &ok);
    if (!ok)
        return GIR_OK;
    *mapped = true;
    gir_node *n;
    if (special != GIR_OP_OPAQUE && v == special_val) {
        TRY(simple(m, special, &n));
    } else if (form == SC_CLIP_MAX || form == SC_CLIP_MIN) {
        TRY(simple(m, GIR_OP_Clip, &n));
        TRY(set_float(m, n, form == SC_CLIP_MAX ? "max" : "min", (double)(float)v));
    } else {
        int32_t ci;
        TRY(scalar_value(m, "val", v, &ci));
        TRY(add_node(m, m->name, op, 2, 1, &n));
        n->in[form == SC_X_OP_C ? 0 : 1] = m->in[0];
        n->in[form == SC_X_OP_C ? 1 : 0] = ci;
        TRY(gir_node_set_output(m->g, n, 0, m->out[0], m->err));
    }
    TRY(gir_attrs_set_float(m->g, &n->meta, NNB_META_VAL, v, m->err));
    if (inplace)
        TRY(meta_int(m, n, NNB_META_INPLACE, 1));
    return infer(m, n);
}

static gir_status map_add_scalar(mctx *m, bool *mapped)
{
    static const Nnabla__AddScalarParameter zero = NNABLA__ADD_SCALAR_PARAMETER__INIT;
    const Nnabla__AddScalarParameter *p = PARAM(m, ADD_SCALAR_PARAM, add_scalar_param, zero);
    return map_scalar(m, mapped, GIR_OP_Add, SC_X_OP_C, p->val, p->inplace, GIR_OP_OPAQUE, 0);
}

static gir_status map_mul_scalar(mctx *m, bool *mapped)
{
    static const Nnabla__MulScalarParameter zero = NNABLA__MUL_SCALAR_PARAMETER__INIT;
    const Nnabla__MulScalarParameter *p = PARAM(m, MUL_SCALAR_PARAM, mul_scalar_param, zero);
    return map_scalar(m, mapped, GIR_OP_Mul, SC_X_OP_C, p->val, p->inplace, GIR_OP_Neg, -1.0);
}

static gir_status map_pow_scalar(mctx *m, bool *mapped)
{
    static const Nnabla__PowScalarParameter zero = NNABLA__POW_SCALAR_PARAMETER__INIT;
    const Nnabla__PowScalarParameter *p = PARAM(m, POW_SCALAR_PARAM, pow_scalar_param, zero);
    return map_scalar(m, mapped, GIR_OP_Pow, SC_X_OP_C, p->val, p->inplace, GIR_OP_Sqrt, 0.5);
}

static gir_status map_r_sub_scalar(mctx *m, bool *mapped)
{
    static const Nnabla__RSubScalarParameter zero = NNABLA__RSUB_SCALAR_PARAMETER__INIT;
    const Nnabla__RSubScalarParameter *p = PARAM(m, R_SUB_SCALAR_PARAM, r_sub_scalar_param, zero);
    return map_scalar(m, mapped, GIR_OP_Sub, SC_C_OP_X, p->val, false, GIR_OP_OPAQUE, 0);
}

static gir_status map_r_div_scalar(mctx *m, bool *mapped)
{
    static const Nnabla__RDivScalarParameter zero = NNABLA__RDIV_SCALAR_PARAMETER__INIT;
    const Nnabla__RDivScalarParameter *p = PARAM(m, R_DIV_SCALAR_PARAM, r_div_scalar_param, zero);
    return map_scalar(m, mapped, GIR_OP_Div, SC_C_OP_X, p->val, false, GIR_OP_Reciprocal, 1.0);
}

static gir_status map_r_pow_scalar(mctx *m, bool *mapped)
{
    static const Nnabla__RPowScalarParameter zero = NNABLA__RPOW_SCALAR_PARAMETER__INIT;
    const Nnabla__RPowScalarParameter *p = PARAM(m, R_POW_SCALAR_PARAM, r_pow_scalar_param, zero);
    return map_scalar(m, mapped, GIR_OP_Pow, SC_C_OP_X, p->val, false, GIR_OP_OPAQUE, 0);
}

static gir_status map_minimum_scalar(mctx *m, bool *mapped)
{
    static const Nnabla__MinimumScalarParameter zero = NNABLA__MINIMUM_SCALAR_PARAMETER__INIT;
    const Nnabla__MinimumScalarParameter *p = PARAM(m, MINIMUM_SCALAR_PARAM, minimum_scalar_param, zero);
    return map_scalar(m, mapped, GIR_OP_Clip, SC_CLIP_MAX, p->val, false, GIR_OP_OPAQUE, 0);
}

static gir_status map_maximum_scalar(mctx *m, bool *mapped)
{
    static const Nnabla__MaximumScalarParameter zero = NNABLA__MAXIMUM_SCALAR_PARAMETER__INIT;
    const Nnabla__MaximumScalarParameter *p = PARAM(m, MAXIMUM_SCALAR_PARAM, maximum_scalar_param, zero);
    return map_scalar(m, mapped, GIR_OP_Clip, SC_CLIP_MIN, p->val, false, GIR_OP_OPAQUE, 0);
}

static gir_status map_batch_matmul(mctx *m, bool *mapped)
{
    static const Nnabla__BatchMatmulParameter zero = NNABLA__BATCH_MATMUL_PARAMETER__INIT;
    const Nnabla__BatchMatmulParameter *p = PARAM(m, BATCH_MATMUL_PARAM, batch_matmul_param, zero);
    bool ok;
    check_arity(m, 2, 2, 1, 1, &ok);
    int ra = rank_of(m, m->in[0]), rb = rank_of(m, m->in[1]);
    if (!ok || ra < 2 || ra != rb)
        return GIR_OK;
    if (p->transpose_a || p->transpose_b)
        return map_batch_matmul_t(m, mapped, p->transpose_a, p->transpose_b);
    *mapped = true;
    gir_node *n;
    TRY(simple(m, GIR_OP_MatMul, &n));
    return infer(m, n);
}

/* ---- array manipulation -------------------------------------------------------- */

static gir_status map_concatenate(mctx *m, bool *mapped)
{
    static const Nnabla__ConcatenateParameter zero = NNABLA__CONCATENATE_PARAMETER__INIT;
    const Nnabla__ConcatenateParameter *p = PARAM(m, CONCATENATE_PARAM, concatenate_param, zero);
    if (m->n_in < 1 || m->n_out != 1)
        return GIR_OK;
    *mapped = true;
    gir_node *n;
    TRY(simple(m, GIR_OP_Concat, &n));
    TRY(set_int(m, n, "axis", p->axis));
    return infer(m, n);
}

/* Split is an unstack: x.shape[axis] outputs, each without that axis.
 * Canonically: Split into parts of 1, then Squeeze(axis) per part. */
static gir_status map_split(mctx *m, bool *mapped)
{
    static const Nnabla__SplitParameter zero = NNABLA__SPLIT_PARAMETER__INIT;
    const Nnabla__SplitParameter *p = PARAM(m, SPLIT_PARAM, split_param, zero);
    int r = rank_of(m, m->in[0]);
    int64_t axis = p->axis;
    if (axis < 0 && r >= 0)
        axis += r;
    if (m->n_in != 1 || m->n_out < 1 || axis < 0 || (r >= 0 && axis >= r))
        return GIR_OK;
    if (r >= 0) {
        int64_t d = val(m, m->in[0])->shape.dims[axis];
        if (d >= 0 && (size_t)d != m->n_out)
            return GIR_OK;
    }
    *mapped = true;
    gir_node *sp;
    TRY(add_node(m, m->name, GIR_OP_Split, 1, m->n_out, &sp));
    sp->in[0] = m->in[0];
    TRY(set_int(m, sp, "axis", axis));
    int64_t *ones = gir_arena_alloc(&m->g->arena, m->n_out * sizeof *ones);
    if (!ones)
        return gir_nomem(m->err);
    for (size_t i = 0; i < m->n_out; i++)
        ones[i] = 1;
    TRY(set_ints(m, sp, "split", ones, m->n_out));
    for (size_t i = 0; i < m->n_out; i++) {
        const char *base = gir_arena_printf(&m->g->arena, "%s/part_%zu", m->name, i);
        if (!base)
            return gir_nomem(m->err);
        TRY(gir_node_make_output(m->g, sp, i, gir_graph_unique_value_name(m->g, base), m->err));
    }
    TRY(infer(m, sp));
    for (size_t i = 0; i < m->n_out; i++) {
        const char *base = gir_arena_printf(&m->g->arena, "%s/squeeze_%zu", m->name, i);
        if (!base)
            return gir_nomem(m->err);
        gir_node *sq;
        TRY(gir_graph_add_node(m->g, gir_graph_unique_node_name(m->g, base), GIR_OP_Squeeze, 1, 1, &sq, m->err));
        sq->in[0] = sp->out[i];
        TRY(set_ints(m, sq, "axes", &axis, 1));
        TRY(gir_node_set_output(m->g, sq, 0, m->out[i], m->err));
        TRY(infer(m, sq));
    }
    return GIR_OK;
}

static gir_status map_slice(mctx *m, bool *mapped)
{
    static const Nnabla__SliceParameter zero = NNABLA__SLICE_PARAMETER__INIT;
    const Nnabla__SliceParameter *p = PARAM(m, SLICE_PARAM, slice_param, zero);
    bool ok;
    check_arity(m, 1, 1, 1, 1, &ok);
    int r = rank_of(m, m->in[0]);
    size_t k = p->n_start;
    if (!ok || r < 0 || k == 0 || k > (size_t)r || p->n_stop != k || (p->n_step != k && p->n_step != 0))
        return GIR_OK;
    int64_t starts[GIR_MAX_RANK], ends[GIR_MAX_RANK], axes[GIR_MAX_RANK], steps[GIR_MAX_RANK];
    for (size_t i = 0; i < k; i++) {
        int64_t st = p->n_step ? p->step[i] : 1;
        if (st == 0 || p->start[i] == NNB_NONE_SENTINEL)
            return GIR_OK;
        if (p->stop[i] == NNB_NONE_SENTINEL && st < 0)
            return GIR_OK;
        starts[i] = p->start[i];
        ends[i] = p->stop[i] == NNB_NONE_SENTINEL ? INT64_MAX : p->stop[i];
        steps[i] = st;
        axes[i] = (int64_t)((size_t)r - k + i);
    }
    *mapped = true;
    gir_node *n;
    TRY(simple(m, GIR_OP_Slice, &n));
    TRY(set_ints(m, n, "starts", starts, k));
    TRY(set_ints(m, n, "ends", ends, k));
    TRY(set_ints(m, n, "axes", axes, k));
    TRY(set_ints(m, n, "steps", steps, k));
    return infer(m, n);
}

static gir_status map_pad(mctx *m, bool *mapped)
{
    static const Nnabla__PadParameter zero = NNABLA__PAD_PARAMETER__INIT;
    const Nnabla__PadParameter *p = PARAM(m, PAD_PARAM, pad_param, zero);
    bool ok;
    check_arity(m, 1, 1, 1, 1, &ok);
    int r = rank_of(m, m->in[0]);
    size_t k = p->n_pad_width / 2;
    if (!ok || r < 0 || p->n_pad_width % 2 || k > (size_t)r)
        return GIR_OK;
    const char *mode;
    if (!p->mode[0] || strcmp(p->mode, "constant") == 0)
        mode = "constant";
    else if (strcmp(p->mode, "reflect") == 0)
        mode = "reflect";
    else if (strcmp(p->mode, "repeat") == 0)
        mode = "edge";
    else
        return GIR_OK;
    int64_t pads[2 * GIR_MAX_RANK] = { 0 };
    for (size_t i = 0; i < k; i++) {
        size_t axis = (size_t)r - k + i;
        pads[axis] = p->pad_width[2 * i];
        pads[(size_t)r + axis] = p->pad_width[2 * i + 1];
    }
    *mapped = true;
    gir_node *n;
    TRY(simple(m, GIR_OP_Pad, &n));
    TRY(set_ints(m, n, "pads", pads, 2 * (size_t)r));
    TRY(set_string(m, n, "mode", mode));
    TRY(set_float(m, n, "constant_value", p->constant_value));
    return infer(m, n);
}

static gir_status map_transpose(mctx *m, bool *mapped)
{
    static const Nnabla__TransposeParameter zero = NNABLA__TRANSPOSE_PARAMETER__INIT;
    const Nnabla__TransposeParameter *p = PARAM(m, TRANSPOSE_PARAM, transpose_param, zero);
    bool ok;
    check_arity(m, 1, 1, 1, 1, &ok);
    if (!ok || p->n_axes == 0)
        return GIR_OK;
    *mapped = true;
    gir_node *n;
    TRY(simple(m, GIR_OP_Transpose, &n));
    TRY(set_ints(m, n, "perm", p->axes, p->n_axes));
    return infer(m, n);
}

/* The axis k >= 1 for which a Reshape to target is Flatten(axis=k): target
 * is (prod(x[:k]), prod(x[k:])), where a symbolic leading dimension may
 * appear as -1; 0 if none. */
static int64_t flatten_axis(const mctx *m, const int64_t *target, size_t n)
{
    const gir_value *x = val(m, m->in[0]);
    if (n != 2 || !x || x->shape.rank < 2)
        return 0;
    int r = x->shape.rank;
    for (int k = 1; k < r; k++) {
        int64_t lead = 1, tail = 1;
        bool lead_unknown = false, tail_unknown = false;
        for (int i = 0; i < r; i++) {
            int64_t d = x->shape.dims[i];
            if (d < 0)
                *(i < k ? &lead_unknown : &tail_unknown) = true;
            else if (i < k)
                lead *= d;
            else
                tail *= d;
        }
        if (tail_unknown || target[1] != tail)
            continue;
        if (lead_unknown ? (target[0] == -1 && k == 1) : (target[0] == lead || target[0] == -1))
            return k;
    }
    return 0;
}

/* Reshape: one -1 is inferred in both; nnabla has no "0 copies" rule, so
 * a 0 is a literal zero (allowzero). */
static gir_status map_reshape(mctx *m, bool *mapped)
{
    static const Nnabla__ReshapeParameter zero = NNABLA__RESHAPE_PARAMETER__INIT;
    const Nnabla__ReshapeParameter *p = PARAM(m, RESHAPE_PARAM, reshape_param, zero);
    bool ok;
    check_arity(m, 1, 1, 1, 1, &ok);
    if (!ok || !p->shape || p->shape->n_dim > GIR_MAX_RANK)
        return GIR_OK;
    size_t n_dim = p->shape->n_dim;
    int minus = 0;
    bool has_zero = false;
    for (size_t i = 0; i < n_dim; i++) {
        if (p->shape->dim[i] < -1)
            return GIR_OK;
        minus += p->shape->dim[i] == -1;
        has_zero |= p->shape->dim[i] == 0;
    }
    if (minus > 1)
        return GIR_OK;
    *mapped = true;
    gir_node *n;
    int64_t axis = flatten_axis(m, p->shape->dim, n_dim);
    if (axis > 0) {
        TRY(simple(m, GIR_OP_Flatten, &n));
        TRY(set_int(m, n, "axis", axis));
        TRY(meta_int(m, n, NNB_META_INPLACE, p->inplace));
        return infer(m, n);
    }
    TRY(simple(m, GIR_OP_Reshape, &n));
    TRY(set_ints(m, n, "shape", p->shape->dim, n_dim));
    if (has_zero)
        TRY(set_int(m, n, "allowzero", 1));
    /* nnabla's default is true, so false is recorded too */
    TRY(meta_int(m, n, NNB_META_INPLACE, p->inplace));
    return infer(m, n);
}

static gir_status map_broadcast(mctx *m, bool *mapped)
{
    static const Nnabla__BroadcastParameter zero = NNABLA__BROADCAST_PARAMETER__INIT;
    const Nnabla__BroadcastParameter *p = PARAM(m, BROADCAST_PARAM, broadcast_param, zero);
    bool ok;
    check_arity(m, 1, 1, 1, 1, &ok);
    int r = rank_of(m, m->in[0]);
    if (!ok || !p->shape || r < 0 || p->shape->n_dim != (size_t)r)
        return GIR_OK;
    int64_t shape[GIR_MAX_RANK];
    for (int i = 0; i < r; i++)
        shape[i] = p->shape->dim[i] < 1 ? 1 : p->shape->dim[i]; /* the batch placeholder keeps x's size */
    *mapped = true;
    gir_node *n;
    TRY(simple(m, GIR_OP_Expand, &n));
    TRY(set_ints(m, n, "shape", shape, (size_t)r));
    return infer(m, n);
}

/* BroadcastTo(x, y, axis): y broadcast to x's shape, y's axes placed from
 * `axis` on (-1: the trailing axes).  Canonically Reshape(y) to x's rank
 * with 1s around, then Expand to x's shape, which must be known. */
static gir_status map_broadcast_to(mctx *m, bool *mapped)
{
    static const Nnabla__BroadcastToParameter zero = NNABLA__BROADCAST_TO_PARAMETER__INIT;
    const Nnabla__BroadcastToParameter *p = PARAM(m, BROADCAST_TO_PARAM, broadcast_to_param, zero);
    bool ok;
    check_arity(m, 2, 2, 1, 1, &ok);
    const gir_value *x = val(m, m->in[0]), *y = val(m, m->in[1]);
    if (!ok || !x || !y || x->shape.rank < 0 || y->shape.rank < 0 || y->shape.rank > x->shape.rank)
        return GIR_OK;
    int rx = x->shape.rank, ry = y->shape.rank;
    int64_t axis = p->axis < 0 ? rx - ry : p->axis;
    if (axis < 0 || axis + ry > rx)
        return GIR_OK;
    int64_t dims[GIR_MAX_RANK], to[GIR_MAX_RANK];
    for (int i = 0; i < rx; i++) {
        to[i] = x->shape.dims[i];
        dims[i] = i >= axis && i < axis + ry ? y->shape.dims[i - axis] : 1;
        if (to[i] < 0 || dims[i] < 0 || (dims[i] != 1 && dims[i] != to[i]))
            return GIR_OK; /* sizes unknown, or y does not fit x */
    }
    *mapped = true;
    const char *rname = gir_arena_printf(&m->g->arena, "%s/reshape", m->name);
    if (!rname)
        return gir_nomem(m->err);
    gir_node *r;
    TRY(gir_graph_add_node(m->g, gir_graph_unique_node_name(m->g, rname), GIR_OP_Reshape, 1, 1, &r, m->err));
    r->in[0] = m->in[1];
    TRY(set_ints(m, r, "shape", dims, (size_t)rx));
    TRY(set_int(m, r, "allowzero", 0));
    TRY(meta_int(m, r, NNB_META_FUSED, 1));
    TRY(gir_node_make_output(m->g, r, 0, gir_graph_unique_value_name(m->g, rname), m->err));
    TRY(infer(m, r));
    gir_node *n;
    TRY(gir_graph_add_node(m->g, m->name, GIR_OP_Expand, 1, 1, &n, m->err));
    n->in[0] = r->out[0];
    TRY(set_ints(m, n, "shape", to, (size_t)rx));
    /* what the writer needs to make the one function again */
    TRY(gir_attrs_set_string(m->g, &n->meta, NNB_META_TYPE, "BroadcastTo", m->err));
    TRY(gir_attrs_set_string(m->g, &n->meta, NNB_META_BROADCAST_X, x->name, m->err));
    TRY(meta_int(m, n, NNB_META_AXIS, p->axis));
    TRY(gir_node_set_output(m->g, n, 0, m->out[0], m->err));
    m->first = n;
    return infer(m, n);
}

static gir_status map_tile(mctx *m, bool *mapped)
{
    static const Nnabla__TileParameter zero = NNABLA__TILE_PARAMETER__INIT;
    const Nnabla__TileParameter *p = PARAM(m, TILE_PARAM, tile_param, zero);
    bool ok;
    check_arity(m, 1, 1, 1, 1, &ok);
    int r = rank_of(m, m->in[0]);
    if (!ok || r < 0 || p->n_reps > (size_t)r || p->n_reps == 0)
        return GIR_OK;
    int64_t reps[GIR_MAX_RANK];
    size_t lead = (size_t)r - p->n_reps;
    for (int i = 0; i < r; i++)
        reps[i] = (size_t)i < lead ? 1 : p->reps[(size_t)i - lead];
    *mapped = true;
    gir_node *n;
    TRY(simple(m, GIR_OP_Tile, &n));
    TRY(set_ints(m, n, "repeats", reps, (size_t)r));
    return infer(m, n);
}

static gir_status map_gather(mctx *m, bool *mapped)
{
    static const Nnabla__GatherParameter zero = NNABLA__GATHER_PARAMETER__INIT;
    const Nnabla__GatherParameter *p = PARAM(m, GATHER_PARAM, gather_param, zero);
    bool ok;
    check_arity(m, 2, 2, 1, 1, &ok);
    if (!ok || p->batch_dims != 0)
        return GIR_OK;
    *mapped = true;
    gir_node *n;
    TRY(simple(m, GIR_OP_Gather, &n));
    TRY(set_int(m, n, "axis", p->axis));
    return infer(m, n);
}

/* nnabla's dropout is inverted (training scales by 1/(1-p)), so inference
 * is the identity, as for ONNX's. */
static gir_status map_dropout(mctx *m, bool *mapped)
{
    static const Nnabla__DropoutParameter zero = NNABLA__DROPOUT_PARAMETER__INIT;
    const Nnabla__DropoutParameter *p = PARAM(m, DROPOUT_PARAM, dropout_param, zero);
    bool ok;
    check_arity(m, 1, 1, 1, 1, &ok);
    if (!ok || !(p->p >= 0.0 && p->p < 1.0))
        return GIR_OK;
    *mapped = true;
    gir_node *n;
    TRY(simple(m, GIR_OP_Dropout, &n));
    TRY(set_float(m, n, "ratio", p->p));
    TRY(set_int(m, n, "seed", p->seed));
    return infer(m, n);
}

/* ---- comparison and logic ----------------------------------------------------- */

/* A Cast node "<function>/<suffix>" of value x to the type named `to`,
 * into value out (or, when out < 0, into a new value of the node's name);
 * returns the value written. */
static gir_status cast_to(mctx *m, const char *suffix, int32_t x, const char *to, int32_t out, int32_t *made)
{
    const char *nm = gir_arena_printf(&m->g->arena, "%s/%s", m->name, suffix);
    if (!nm)
        return gir_nomem(m->err);
    gir_node *c;
    TRY(gir_graph_add_node(m->g, gir_graph_unique_node_name(m->g, nm), GIR_OP_Cast, 1, 1, &c, m->err));
    c->in[0] = x;
    TRY(set_string(m, c, "to", to));
    if (out >= 0)
        TRY(gir_node_set_output(m->g, c, 0, out, m->err));
    else
        TRY(gir_node_make_output(m->g, c, 0, gir_graph_unique_value_name(m->g, nm), m->err));
    TRY(infer(m, c));
    *made = c->out[0];
    return GIR_OK;
}

/* The node of a logical function: op under the function's name, reading
 * ins (its attributes, if any, are the caller's to set). */
static gir_status logic_node(mctx *m, gir_op op, const int32_t *ins, size_t n_in, gir_node **out)
{
    TRY(gir_graph_add_node(m->g, m->name, op, n_in, 1, out, m->err));
    for (size_t i = 0; i < n_in; i++)
        (*out)->in[i] = ins[i];
    m->first = *out;
    return GIR_OK;
}

/* Gives logical node n a bool result "<function>/bool" and casts it to
 * float32 into the function's own output, nnabla's 0/1. */
static gir_status logic_result(mctx *m, gir_node *n)
{
    const char *bname = gir_arena_printf(&m->g->arena, "%s/bool", m->name);
    if (!bname)
        return gir_nomem(m->err);
    TRY(gir_node_make_output(m->g, n, 0, gir_graph_unique_value_name(m->g, bname), m->err));
    TRY(infer(m, n));
    int32_t y;
    return cast_to(m, "float", n->out[0], "float32", m->out[0], &y);
}

/* NNabla has no bool type: Equal, Greater, Less, LogicalAnd/Or/Xor/Not take
 * float arrays (nonzero is true) and give 0/1 floats.  The canonical ops
 * take and give bools, so the function becomes a Cast(to=bool) of each
 * operand (logical functions only), the canonical op under the function's
 * name, and a Cast(to=float32) into the function's own output.  The writer
 * folds the casts back into the one function. */
static gir_status map_logic(mctx *m, bool *mapped, gir_op op, size_t arity, bool bool_operands)
{
    if (m->n_in != arity || m->n_out != 1)
        return GIR_OK;
    *mapped = true;
    int32_t ins[2] = { m->in[0], arity > 1 ? m->in[1] : -1 };
    for (size_t i = 0; bool_operands && i < arity; i++) {
        char suffix[16];
        snprintf(suffix, sizeof suffix, arity == 1 ? "x_bool" : "x%zu_bool", i);
        TRY(cast_to(m, suffix, m->in[i], "bool", -1, &ins[i]));
    }
    gir_node *n;
    TRY(logic_node(m, op, ins, arity, &n));
    return logic_result(m, n);
}

/* EqualScalar, GreaterScalar ...: the comparison with a scalar constant
 * ("<function>/val"; the exact double rides in meta), as map_logic. */
static gir_status map_compare_scalar(mctx *m, bool *mapped, gir_op op, double v)
{
    if (m->n_in != 1 || m->n_out != 1)
        return GIR_OK;
    *mapped = true;
    int32_t ins[2] = { m->in[0], -1 };
    TRY(scalar_value(m, "val", v, &ins[1]));
    gir_node *n;
    TRY(logic_node(m, op, ins, 2, &n));
    TRY(gir_attrs_set_float(m->g, &n->meta, NNB_META_VAL, v, m->err));
    return logic_result(m, n);
}

#define COMPARE_SCALAR(fn, CASE, member, INIT_MACRO, TYPE, OP)                   \
    static gir_status fn(mctx *m, bool *mapped)                                   \
    {                                                                             \
        static const TYPE zero = INIT_MACRO;                                      \
        return map_compare_scalar(m, mapped, OP, PARAM(m, CASE, member, zero)->val); \
    }
COMPARE_SCALAR(map_equal_scalar, EQUAL_SCALAR_PARAM, equal_scalar_param, NNABLA__EQUAL_SCALAR_PARAMETER__INIT,
               Nnabla__EqualScalarParameter, GIR_OP_Equal)
COMPARE_SCALAR(map_greater_scalar, GREATER_SCALAR_PARAM, greater_scalar_param,
               NNABLA__GREATER_SCALAR_PARAMETER__INIT, Nnabla__GreaterScalarParameter, GIR_OP_Greater)
COMPARE_SCALAR(map_greater_equal_scalar, GREATER_EQUAL_SCALAR_PARAM, greater_equal_scalar_param,
               NNABLA__GREATER_EQUAL_SCALAR_PARAMETER__INIT, Nnabla__GreaterEqualScalarParameter,
               GIR_OP_GreaterOrEqual)
COMPARE_SCALAR(map_less_scalar, LESS_SCALAR_PARAM, less_scalar_param, NNABLA__LESS_SCALAR_PARAMETER__INIT,
               Nnabla__LessScalarParameter, GIR_OP_Less)
COMPARE_SCALAR(map_less_equal_scalar, LESS_EQUAL_SCALAR_PARAM, less_equal_scalar_param,
               NNABLA__LESS_EQUAL_SCALAR_PARAMETER__INIT, Nnabla__LessEqualScalarParameter, GIR_OP_LessOrEqual)
#undef COMPARE_SCALAR

#define LOGIC(fn, OP, ARITY, BOOLS)                        \
    static gir_status fn(mctx *m, bool *mapped)            \
    {                                                      \
        return map_logic(m, mapped, OP, ARITY, BOOLS);     \
    }
LOGIC(map_equal, GIR_OP_Equal, 2, false)
LOGIC(map_greater, GIR_OP_Greater, 2, false)
LOGIC(map_greater_equal, GIR_OP_GreaterOrEqual, 2, false)
LOGIC(map_less, GIR_OP_Less, 2, false)
LOGIC(map_less_equal, GIR_OP_LessOrEqual, 2, false)
LOGIC(map_logical_and, GIR_OP_And, 2, true)
LOGIC(map_logical_or, GIR_OP_Or, 2, true)
LOGIC(map_logical_xor, GIR_OP_Xor, 2, true)
LOGIC(map_logical_not, GIR_OP_Not, 1, true)
#undef LOGIC

/* NotEqualScalar(0) is x != 0: Cast(to=bool) then Cast(to=float32); other
 * values stay opaque. */
static gir_status map_not_equal_scalar(mctx *m, bool *mapped)
{
    static const Nnabla__NotEqualScalarParameter zero = NNABLA__NOT_EQUAL_SCALAR_PARAMETER__INIT;
    const Nnabla__NotEqualScalarParameter *p = PARAM(m, NOT_EQUAL_SCALAR_PARAM, not_equal_scalar_param, zero);
    if (m->n_in != 1 || m->n_out != 1 || p->val != 0.0)
        return GIR_OK;
    *mapped = true;
    gir_node *n;
    TRY(logic_node(m, GIR_OP_Cast, m->in, 1, &n));
    TRY(set_string(m, n, "to", "bool"));
    return logic_result(m, n);
}

/* Where(condition, x_true, x_false): nnabla's condition is a float array. */
static gir_status map_where(mctx *m, bool *mapped)
{
    if (m->n_in != 3 || m->n_out != 1)
        return GIR_OK;
    *mapped = true;
    int32_t cond;
    TRY(cast_to(m, "condition_bool", m->in[0], "bool", -1, &cond));
    gir_node *n;
    TRY(gir_graph_add_node(m->g, m->name, GIR_OP_Where, 3, 1, &n, m->err));
    n->in[0] = cond;
    n->in[1] = m->in[1];
    n->in[2] = m->in[2];
    TRY(gir_node_set_output(m->g, n, 0, m->out[0], m->err));
    m->first = n;
    return infer(m, n);
}

static gir_status map_plain(mctx *m, bool *mapped, const plain_map *pm)
{
    if (m->n_in != pm->n_in || m->n_out != 1)
        return GIR_OK;
    /* Ceil and Floor have (empty) parameter messages; others have none */
    const ProtobufCFieldDescriptor *fd = nnb_param_field(m->f);
    if (fd) {
        char want[64];
        snprintf(want, sizeof want, "%s_param", m->f->type);
        for (char *c = want; *c; c++)
            if (*c >= 'A' && *c <= 'Z')
                *c = (char)(*c - 'A' + 'a');
        if (strcmp(fd->name, want) != 0)
            return GIR_OK;
    }
    *mapped = true;
    /* an Identity keeps its variable's values: of an index (ArgMax's
     * int64, an integer parameter) it is that index, not a float32 */
    if (pm->op == GIR_OP_Identity && m->g->values[m->in[0]]->dtype != GIR_DT_UNKNOWN)
        m->g->values[m->out[0]]->dtype = m->g->values[m->in[0]]->dtype;
    gir_node *n;
    TRY(simple(m, pm->op, &n));
    return infer(m, n);
}

/* ---- decompositions into canonical operators ------------------------------------ */

/* One step of a decomposition: a node "<function>/<suffix>" (or the
 * function's own name for its last step, out >= 0) of op reading ins,
 * writing out or a new value; *made is the value written. */
static gir_status step(mctx *m, const char *suffix, gir_op op, const int32_t *ins, size_t n_in, int32_t out,
                       gir_node **node, int32_t *made)
{
    const char *nm = out >= 0 ? m->name : gir_arena_printf(&m->g->arena, "%s/%s", m->name, suffix ? suffix : "");
    if (!nm)
        return gir_nomem(m->err);
    if (out < 0)
        nm = gir_graph_unique_node_name(m->g, nm);
    gir_node *n;
    TRY(add_node(m, nm, op, n_in, 1, &n));
    for (size_t i = 0; i < n_in; i++)
        n->in[i] = ins[i];
    if (out >= 0)
        TRY(gir_node_set_output(m->g, n, 0, out, m->err));
    else
        TRY(gir_node_make_output(m->g, n, 0, gir_graph_unique_value_name(m->g, nm), m->err));
    if (node)
        *node = n;
    if (made)
        *made = n->out[0];
    return GIR_OK;
}

/* The same with the node's shape inferred (its attributes set by then). */
static gir_status step1(mctx *m, const char *suffix, gir_op op, int32_t a, int32_t out, int32_t *made)
{
    gir_node *n;
    TRY(step(m, suffix, op, &a, 1, out, &n, made));
    return infer(m, n);
}

static gir_status step2(mctx *m, const char *suffix, gir_op op, int32_t a, int32_t b, int32_t out, int32_t *made)
{
    gir_node *n;
    int32_t ins[2] = { a, b };
    TRY(step(m, suffix, op, ins, 2, out, &n, made));
    return infer(m, n);
}

/* op(x, scalar v), named as the *Scalar function nnabla writes for it
 * reads back (the constant "<node>/val", the node's nnabla.val) */
static gir_status step_scalar(mctx *m, const char *suffix, gir_op op, int32_t a, double v, int32_t out,
                              int32_t *made)
{
    int32_t ins[2] = { a, -1 };
    gir_node *n;
    TRY(step(m, suffix, op, ins, 2, out, &n, made));
    const char *saved = m->name;
    m->name = n->name;
    gir_status st = scalar_value(m, "val", v, &n->in[1]);
    m->name = saved;
    TRY(st);
    TRY(gir_attrs_set_float(m->g, &n->meta, NNB_META_VAL, v, m->err));
    return infer(m, n);
}

/* A unary op nnabla writes as a *Scalar function of v (Neg: MulScalar -1,
 * Sqrt: PowScalar 0.5), with the nnabla.val that function reads back. */
static gir_status step_val(mctx *m, const char *suffix, gir_op op, int32_t a, double v, int32_t out, int32_t *made)
{
    gir_node *n;
    TRY(step(m, suffix, op, &a, 1, out, &n, made));
    TRY(gir_attrs_set_float(m->g, &n->meta, NNB_META_VAL, v, m->err));
    return infer(m, n);
}

static gir_status step_neg(mctx *m, const char *suffix, int32_t a, int32_t out, int32_t *made)
{
    return step_val(m, suffix, GIR_OP_Neg, a, -1.0, out, made);
}

static bool unary(const mctx *m)
{
    return m->n_in == 1 && m->n_out == 1 && m->f->parameter_case == NNABLA__FUNCTION__PARAMETER__NOT_SET;
}

/* Swish: x * sigmoid(x) */
static gir_status map_swish(mctx *m, bool *mapped)
{
    if (!unary(m))
        return GIR_OK;
    *mapped = true;
    int32_t s;
    TRY(step1(m, "sigmoid", GIR_OP_Sigmoid, m->in[0], -1, &s));
    return step2(m, NULL, GIR_OP_Mul, m->in[0], s, m->out[0], NULL);
}

/* TanhShrink: x - tanh(x) */
static gir_status map_tanh_shrink(mctx *m, bool *mapped)
{
    if (!unary(m))
        return GIR_OK;
    *mapped = true;
    int32_t t;
    TRY(step1(m, "tanh", GIR_OP_Tanh, m->in[0], -1, &t));
    return step2(m, NULL, GIR_OP_Sub, m->in[0], t, m->out[0], NULL);
}

/* Mish: x * tanh(log(1 + exp(x))) */
static gir_status map_mish(mctx *m, bool *mapped)
{
    if (!unary(m))
        return GIR_OK;
    *mapped = true;
    int32_t sp, t;
    TRY(step1(m, "softplus", GIR_OP_Softplus, m->in[0], -1, &sp));
    TRY(step1(m, "tanh", GIR_OP_Tanh, sp, -1, &t));
    return step2(m, NULL, GIR_OP_Mul, m->in[0], t, m->out[0], NULL);
}

/* LogSigmoid: log(1 / (1 + exp(-x))) = -softplus(-x) */
static gir_status map_log_sigmoid(mctx *m, bool *mapped)
{
    if (!unary(m))
        return GIR_OK;
    *mapped = true;
    int32_t nx, sp;
    TRY(step_neg(m, "neg", m->in[0], -1, &nx));
    TRY(step1(m, "softplus", GIR_OP_Softplus, nx, -1, &sp));
    return step_neg(m, NULL, sp, m->out[0], NULL);
}

/* GELU as nnabla computes it (the tanh form):
 * 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) */
static gir_status map_gelu(mctx *m, bool *mapped)
{
    if (!unary(m))
        return GIR_OK;
    *mapped = true;
    int32_t x = m->in[0], x2, x3, a, b, c, t, u, v;
    TRY(step2(m, "square", GIR_OP_Mul, x, x, -1, &x2));
    TRY(step2(m, "cube", GIR_OP_Mul, x2, x, -1, &x3));
    TRY(step_scalar(m, "cube_scaled", GIR_OP_Mul, x3, 0.044715, -1, &a));
    TRY(step2(m, "inner", GIR_OP_Add, x, a, -1, &b));
    TRY(step_scalar(m, "inner_scaled", GIR_OP_Mul, b, 0.79788456080286535588, -1, &c));
    TRY(step1(m, "tanh", GIR_OP_Tanh, c, -1, &t));
    TRY(step_scalar(m, "one_plus", GIR_OP_Add, t, 1.0, -1, &u));
    TRY(step2(m, "times_x", GIR_OP_Mul, x, u, -1, &v));
    return step_scalar(m, "half", GIR_OP_Mul, v, 0.5, m->out[0], NULL);
}

/* CReLU / CELU: f(x) and f(-x) concatenated along axis */
static gir_status map_concat_pair(mctx *m, bool *mapped, gir_op op, double alpha, int64_t axis)
{
    bool ok;
    check_arity(m, 1, 1, 1, 1, &ok);
    int r = rank_of(m, m->in[0]);
    if (!ok || r < 0 || axis < -r || axis >= r)
        return GIR_OK;
    *mapped = true;
    int32_t nx, pos, neg;
    gir_node *n;
    TRY(step(m, "positive", op, &m->in[0], 1, -1, &n, &pos));
    if (op == GIR_OP_Elu)
        TRY(set_float(m, n, "alpha", alpha));
    TRY(infer(m, n));
    TRY(step_neg(m, "neg", m->in[0], -1, &nx));
    TRY(step(m, "negative", op, &nx, 1, -1, &n, &neg));
    if (op == GIR_OP_Elu)
        TRY(set_float(m, n, "alpha", alpha));
    TRY(infer(m, n));
    int32_t ins[2] = { pos, neg };
    TRY(step(m, NULL, GIR_OP_Concat, ins, 2, m->out[0], &n, NULL));
    TRY(set_int(m, n, "axis", axis));
    return infer(m, n);
}

static gir_status map_crelu(mctx *m, bool *mapped)
{
    static const Nnabla__CReLUParameter zero = NNABLA__CRE_LUPARAMETER__INIT;
    const Nnabla__CReLUParameter *p = PARAM(m, CRELU_PARAM, crelu_param, zero);
    return map_concat_pair(m, mapped, GIR_OP_Relu, 0, p->axis);
}

static gir_status map_celu(mctx *m, bool *mapped)
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
    int r = rank_of(m, m->in[0]);
    if (m->n_in != want_in || m->n_out != 1 || r < 1 || (groups > 1 && r + 1 > GIR_MAX_RANK))
        return GIR_OK;
    const gir_value *x = val(m, m->in[0]);
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
        TRY(step(m, "group", GIR_OP_Reshape, &xs, 1, -1, &n, &xs));
        TRY(set_ints(m, n, "shape", gshape, (size_t)sr));
        TRY(meta_int(m, n, NNB_META_INPLACE, 1)); /* as nnabla's Reshape reads back */
        TRY(infer(m, n));
    }
    TRY(step(m, "mean", GIR_OP_ReduceMean, &xs, 1, -1, &n, &mean));
    TRY(set_ints(m, n, "axes", axes, na));
    TRY(set_int(m, n, "keepdims", 1));
    TRY(infer(m, n));
    TRY(step2(m, "centered", GIR_OP_Sub, xs, mean, -1, &d));
    TRY(step2(m, "squared", GIR_OP_Mul, d, d, -1, &sq));
    TRY(step(m, "variance", GIR_OP_ReduceMean, &sq, 1, -1, &n, &var));
    TRY(set_ints(m, n, "axes", axes, na));
    TRY(set_int(m, n, "keepdims", 1));
    TRY(infer(m, n));
    TRY(step_scalar(m, "variance_eps", GIR_OP_Add, var, (double)eps, -1, &ve));
    TRY(step_val(m, "std", GIR_OP_Sqrt, ve, 0.5, -1, &sd));
    bool last = no_scale && no_bias && groups <= 1;
    TRY(step2(m, last ? NULL : "normalized", GIR_OP_Div, d, sd, last ? m->out[0] : -1, &nrm));
    if (groups > 1) {
        int32_t back;
        last = no_scale && no_bias;
        TRY(step(m, last ? NULL : "ungroup", GIR_OP_Reshape, &nrm, 1, last ? m->out[0] : -1, &n, &back));
        TRY(set_ints(m, n, "shape", x->shape.dims, (size_t)r));
        TRY(meta_int(m, n, NNB_META_INPLACE, 1));
        TRY(infer(m, n));
        nrm = back;
    }
    int32_t beta = no_bias ? -1 : m->in[1], gamma = no_scale ? -1 : m->in[no_bias ? 1 : 2];
    if (gamma >= 0)
        TRY(step2(m, no_bias ? NULL : "scaled", GIR_OP_Mul, nrm, gamma, no_bias ? m->out[0] : -1, &nrm));
    if (beta >= 0)
        TRY(step2(m, NULL, GIR_OP_Add, nrm, beta, m->out[0], NULL));
    return GIR_OK;
}

static gir_status map_layer_normalization(mctx *m, bool *mapped)
{
    static const Nnabla__LayerNormalizationParameter zero = NNABLA__LAYER_NORMALIZATION_PARAMETER__INIT;
    const Nnabla__LayerNormalizationParameter *p =
        PARAM(m, LAYER_NORMALIZATION_PARAM, layer_normalization_param, zero);
    return map_norm_common(m, mapped, p->batch_axis, p->n_batch_axis, p->eps, p->no_scale, p->no_bias, 1);
}

static gir_status map_tensor_normalization(mctx *m, bool *mapped)
{
    static const Nnabla__TensorNormalizationParameter zero = NNABLA__TENSOR_NORMALIZATION_PARAMETER__INIT;
    const Nnabla__TensorNormalizationParameter *p =
        PARAM(m, TENSOR_NORMALIZATION_PARAM, tensor_normalization_param, zero);
    return map_norm_common(m, mapped, p->axes, p->n_axes, p->eps, p->no_scale, p->no_bias, 1);
}

static gir_status map_instance_normalization(mctx *m, bool *mapped)
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

static gir_status map_group_normalization(mctx *m, bool *mapped)
{
    static const Nnabla__GroupNormalizationParameter zero = NNABLA__GROUP_NORMALIZATION_PARAMETER__INIT;
    const Nnabla__GroupNormalizationParameter *p =
        PARAM(m, GROUP_NORMALIZATION_PARAM, group_normalization_param, zero);
    int r = rank_of(m, m->in[0]);
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
static gir_status map_interpolate(mctx *m, bool *mapped)
{
    static const Nnabla__InterpolateParameter zero = NNABLA__INTERPOLATE_PARAMETER__INIT;
    const Nnabla__InterpolateParameter *p = PARAM(m, INTERPOLATE_PARAM, interpolate_param, zero);
    bool ok;
    check_arity(m, 1, 1, 1, 1, &ok);
    int r = rank_of(m, m->in[0]);
    size_t k = p->n_output_size;
    if (!ok || p->channel_last || r < 1 || k < 1 || k > (size_t)r)
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
    const gir_value *x = val(m, m->in[0]);
    int64_t sizes[GIR_MAX_RANK];
    for (int i = 0; i < r; i++) {
        sizes[i] = i < r - (int)k ? x->shape.dims[i] : p->output_size[i - (r - (int)k)];
        if (sizes[i] < 0 || (i >= r - (int)k && (sizes[i] < 1 || x->shape.dims[i] < 1)))
            return GIR_OK; /* unknown sizes (a symbolic batch) */
    }
    *mapped = true;
    gir_node *n;
    TRY(simple(m, GIR_OP_Resize, &n));
    TRY(set_ints(m, n, "sizes", sizes, (size_t)r));
    TRY(set_string(m, n, "mode", nearest ? "nearest" : "linear"));
    TRY(set_string(m, n, "coordinate_transformation_mode", coord));
    if (nearest)
        TRY(set_string(m, n, "nearest_mode", "floor"));
    return infer(m, n);
}

/* A float32 constant "<function>/<suffix>" of shape dims holding data
 * (adopted). */
static gir_status const_value(mctx *m, const char *suffix, const int64_t *dims, int rank, float *data, int32_t *ci)
{
    gir_shape sh = { rank, { 0 } };
    memcpy(sh.dims, dims, (size_t)rank * sizeof *dims);
    gir_tensor *t;
    TRY(gir_tensor_adopt(GIR_DT_F32, &sh, data, &t, m->err));
    const char *cname = suffix ? gir_arena_printf(&m->g->arena, "%s/%s", m->name, suffix) : m->name;
    gir_status st = cname ? gir_graph_add_const(m->g, gir_graph_unique_value_name(m->g, cname), t, ci, m->err)
                          : gir_nomem(m->err);
    gir_tensor_unref(t);
    return st;
}

/* A generator function whose output is known at read time becomes that
 * constant: the function's output variable, now a constant value. */
static gir_status become_constant(mctx *m, const int64_t *dims, int rank, float *data)
{
    gir_value *out = m->g->values[m->out[0]];
    gir_shape sh = { rank, { 0 } };
    memcpy(sh.dims, dims, (size_t)rank * sizeof *dims);
    gir_tensor *t;
    TRY(gir_tensor_adopt(GIR_DT_F32, &sh, data, &t, m->err));
    /* an Identity of the constant keeps the function's output variable */
    int32_t ci;
    gir_status st = gir_graph_add_const(m->g, gir_graph_unique_value_name(m->g, gir_arena_printf(&m->g->arena,
                                                                                                "%s/value", m->name)),
                                        t, &ci, m->err);
    gir_tensor_unref(t);
    TRY(st);
    (void)out;
    return step1(m, NULL, GIR_OP_Identity, ci, m->out[0], NULL);
}

/* Arange: start + i * step (float32 arithmetic, as nnabla's kernel),
 * ceil((stop - start) / step) values, known when the file is read */
static gir_status map_arange(mctx *m, bool *mapped)
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
static gir_status map_constant(mctx *m, bool *mapped)
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
static gir_status map_one_hot(mctx *m, bool *mapped)
{
    static const Nnabla__OneHotParameter zero = NNABLA__ONE_HOT_PARAMETER__INIT;
    const Nnabla__OneHotParameter *p = PARAM(m, ONE_HOT_PARAM, one_hot_param, zero);
    bool ok;
    check_arity(m, 1, 1, 1, 1, &ok);
    int r = rank_of(m, m->in[0]);
    if (!ok || !p->shape || p->shape->n_dim != 1 || r < 1 || val(m, m->in[0])->shape.dims[r - 1] != 1 ||
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
    TRY(step2(m, "equal", GIR_OP_Equal, m->in[0], c, -1, &eq));
    gir_node *cast;
    TRY(step(m, NULL, GIR_OP_Cast, &eq, 1, m->out[0], &cast, NULL));
    TRY(set_string(m, cast, "to", "float32"));
    return infer(m, cast);
}

/* BatchMatmul with transpose_a / transpose_b: the last two axes swapped
 * first */
static gir_status map_batch_matmul_t(mctx *m, bool *mapped, bool ta, bool tb)
{
    int ra = rank_of(m, m->in[0]), rb = rank_of(m, m->in[1]);
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
        TRY(step(m, k ? "transpose_b" : "transpose_a", GIR_OP_Transpose, v, 1, -1, &t, v));
        TRY(set_ints(m, t, "perm", perm, (size_t)r));
        TRY(infer(m, t));
    }
    return step2(m, NULL, GIR_OP_MatMul, a, b, m->out[0], NULL);
}

/* WeightStandardization: (w - mean) / sqrt(var + eps) over every axis
 * but channel_axis */
static gir_status map_weight_standardization(mctx *m, bool *mapped)
{
    static const Nnabla__WeightStandardizationParameter zero = NNABLA__WEIGHT_STANDARDIZATION_PARAMETER__INIT;
    const Nnabla__WeightStandardizationParameter *p =
        PARAM(m, WEIGHT_STANDARDIZATION_PARAM, weight_standardization_param, zero);
    return map_norm_common(m, mapped, &p->channel_axis, 1, p->eps, true, true, 1);
}

/* WeightNormalization: g * w / sqrt(sum(w^2) + eps), the sum over every
 * axis but dim, g (one value per index of dim) reshaped to (1.., C, 1..) */
static gir_status map_weight_normalization(mctx *m, bool *mapped)
{
    static const Nnabla__WeightNormalizationParameter zero = NNABLA__WEIGHT_NORMALIZATION_PARAMETER__INIT;
    const Nnabla__WeightNormalizationParameter *p =
        PARAM(m, WEIGHT_NORMALIZATION_PARAM, weight_normalization_param, zero);
    bool ok;
    check_arity(m, 2, 2, 1, 1, &ok);
    int r = rank_of(m, m->in[0]);
    int64_t dim = p->dim < 0 && r >= 0 ? p->dim + r : p->dim;
    if (!ok || r < 1 || dim < 0 || dim >= r || rank_of(m, m->in[1]) != 1 ||
        numel_of(m, m->in[1]) != val(m, m->in[0])->shape.dims[dim])
        return GIR_OK;
    *mapped = true;
    int64_t gshape[GIR_MAX_RANK], axes[GIR_MAX_RANK];
    size_t na = 0;
    for (int i = 0; i < r; i++)
        gshape[i] = i == dim ? numel_of(m, m->in[1]) : 1; /* the rank of w: nnabla's Mul2 needs equal ranks */
    gir_node *n;
    int32_t g;
    TRY(step(m, "g", GIR_OP_Reshape, &m->in[1], 1, -1, &n, &g));
    TRY(set_ints(m, n, "shape", gshape, (size_t)r));
    TRY(meta_int(m, n, NNB_META_INPLACE, 1));
    TRY(infer(m, n));
    for (int i = 0; i < r; i++)
        if (i != dim)
            axes[na++] = i;
    int32_t sq, sum, se, nrm, q;
    TRY(step2(m, "squared", GIR_OP_Mul, m->in[0], m->in[0], -1, &sq));
    TRY(step(m, "sum", GIR_OP_ReduceSum, &sq, 1, -1, &n, &sum));
    if (na)
        TRY(set_ints(m, n, "axes", axes, na));
    else
        TRY(set_int(m, n, "noop_with_empty_axes", 1));
    TRY(set_int(m, n, "keepdims", 1));
    TRY(infer(m, n));
    TRY(step_scalar(m, "sum_eps", GIR_OP_Add, sum, (double)p->eps, -1, &se));
    TRY(step_val(m, "norm", GIR_OP_Sqrt, se, 0.5, -1, &nrm));
    TRY(step2(m, "normalized", GIR_OP_Div, m->in[0], nrm, -1, &q));
    return step2(m, NULL, GIR_OP_Mul, q, g, m->out[0], NULL);
}

/* Stack: the inputs joined along a new axis */
static gir_status map_stack(mctx *m, bool *mapped)
{
    static const Nnabla__StackParameter zero = NNABLA__STACK_PARAMETER__INIT;
    const Nnabla__StackParameter *p = PARAM(m, STACK_PARAM, stack_param, zero);
    if (m->n_in < 1 || m->n_out != 1)
        return GIR_OK;
    *mapped = true;
    gir_node *n;
    TRY(simple(m, GIR_OP_Stack, &n));
    TRY(set_int(m, n, "axis", p->axis));
    return infer(m, n);
}

/* Max / Min with with_index or only_index over one axis: ArgMax / ArgMin
 * (the first index of ties, as nnabla's kernel keeps the first extreme);
 * with_index also gives the values (ReduceMax / ReduceMin). */
static gir_status map_arg(mctx *m, bool *mapped, gir_op reduce, gir_op arg, const int64_t *axes, size_t n_axes,
                          bool keep, bool with_index, bool only_index)
{
    int r = rank_of(m, m->in[0]);
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
        TRY(add_node(m, gir_graph_unique_node_name(m->g, nm), reduce, 1, 1, &n));
        n->in[0] = m->in[0];
        TRY(gir_node_set_output(m->g, n, 0, m->out[0], m->err));
        TRY(set_ints(m, n, "axes", &axis, 1));
        TRY(set_int(m, n, "keepdims", keep));
        TRY(infer(m, n));
    }
    int32_t idx_out = m->out[only_index ? 0 : 1];
    m->g->values[idx_out]->dtype = GIR_DT_I64; /* indices */
    TRY(step(m, NULL, arg, &m->in[0], 1, idx_out, &n, NULL));
    TRY(set_int(m, n, "axis", axis));
    TRY(set_int(m, n, "keepdims", keep));
    return infer(m, n);
}

/* ---- more functions with an exact canonical form ----------------------------------- */

/* Unlink, ClipGradByValue, ClipGradByNorm: the identity on the forward pass
 * (they only act on gradients) */
static gir_status map_forward_identity(mctx *m, bool *mapped)
{
    if (m->n_in < 1 || m->n_out != 1)
        return GIR_OK;
    *mapped = true;
    return step1(m, NULL, GIR_OP_Identity, m->in[0], m->out[0], NULL);
}

/* MulN: a chain of Mul */
static gir_status map_mul_n(mctx *m, bool *mapped)
{
    if (m->n_in < 2 || m->n_out != 1 || foreign_param(m, NNABLA__FUNCTION__PARAMETER__NOT_SET))
        return GIR_OK;
    *mapped = true;
    int32_t acc = m->in[0];
    for (size_t i = 1; i < m->n_in; i++) {
        char suffix[32];
        snprintf(suffix, sizeof suffix, "mul_%zu", i);
        bool last = i + 1 == m->n_in;
        TRY(step2(m, last ? NULL : suffix, GIR_OP_Mul, acc, m->in[i], last ? m->out[0] : -1, &acc));
    }
    return GIR_OK;
}

/* Tan = sin / cos; Sinh, Cosh = (exp(x) -/+ exp(-x)) / 2 */
static gir_status map_tan(mctx *m, bool *mapped)
{
    if (!unary(m))
        return GIR_OK;
    *mapped = true;
    int32_t sn, cs;
    TRY(step1(m, "sin", GIR_OP_Sin, m->in[0], -1, &sn));
    TRY(step1(m, "cos", GIR_OP_Cos, m->in[0], -1, &cs));
    return step2(m, NULL, GIR_OP_Div, sn, cs, m->out[0], NULL);
}

static gir_status map_hyperbolic(mctx *m, bool *mapped, gir_op combine)
{
    if (!unary(m))
        return GIR_OK;
    *mapped = true;
    int32_t e, nx, en, c;
    TRY(step1(m, "exp", GIR_OP_Exp, m->in[0], -1, &e));
    TRY(step_neg(m, "neg", m->in[0], -1, &nx));
    TRY(step1(m, "exp_neg", GIR_OP_Exp, nx, -1, &en));
    TRY(step2(m, "combined", combine, e, en, -1, &c));
    return step_scalar(m, NULL, GIR_OP_Mul, c, 0.5, m->out[0], NULL);
}

static gir_status map_sinh(mctx *m, bool *mapped)
{
    return map_hyperbolic(m, mapped, GIR_OP_Sub);
}

static gir_status map_cosh(mctx *m, bool *mapped)
{
    return map_hyperbolic(m, mapped, GIR_OP_Add);
}

/* A bool result as nnabla carries it between functions (0/1 floats), and
 * back to bool for the function reading it: the form these decompositions
 * take again when the written functions are read back. */
static gir_status via_float(mctx *m, const char *suffix, int32_t b, int32_t *out)
{
    char s1[64];
    snprintf(s1, sizeof s1, "%s_float", suffix);
    int32_t f;
    TRY(cast_to(m, s1, b, "float32", -1, &f));
    snprintf(s1, sizeof s1, "%s_bool", suffix);
    return cast_to(m, s1, f, "bool", -1, out);
}

/* x == x is false only for NaN; |x| == inf only for infinities (bool) */
static gir_status nan_test(mctx *m, int32_t *isnan_bool)
{
    int32_t eq;
    TRY(step2(m, "equal_self", GIR_OP_Equal, m->in[0], m->in[0], -1, &eq));
    TRY(via_float(m, "equal_self", eq, &eq));
    return step1(m, "nan", GIR_OP_Not, eq, -1, isnan_bool);
}

static gir_status inf_test(mctx *m, int32_t *isinf_bool)
{
    int32_t a, inf;
    TRY(step1(m, "abs", GIR_OP_Abs, m->in[0], -1, &a));
    TRY(scalar_value(m, "inf", INFINITY, &inf));
    return step2(m, "inf_test", GIR_OP_Equal, a, inf, -1, isinf_bool);
}

/* IsNaN / IsInf: 0/1 floats, as nnabla gives */
static gir_status map_is_special(mctx *m, bool *mapped, bool nan)
{
    if (!unary(m))
        return GIR_OK;
    *mapped = true;
    int32_t b, y;
    TRY(nan ? nan_test(m, &b) : inf_test(m, &b));
    return cast_to(m, "float", b, "float32", m->out[0], &y);
}

static gir_status map_is_nan(mctx *m, bool *mapped)
{
    return map_is_special(m, mapped, true);
}

static gir_status map_is_inf(mctx *m, bool *mapped)
{
    return map_is_special(m, mapped, false);
}

/* ResetNaN / ResetInf: Where(test, val, x) */
static gir_status map_reset_special(mctx *m, bool *mapped, bool nan, double v)
{
    if (m->n_in != 1 || m->n_out != 1)
        return GIR_OK;
    *mapped = true;
    int32_t b, c;
    TRY(nan ? nan_test(m, &b) : inf_test(m, &b));
    TRY(via_float(m, "test", b, &b));
    TRY(scalar_value(m, "val", v, &c));
    int32_t ins[3] = { b, c, m->in[0] };
    gir_node *n;
    TRY(step(m, NULL, GIR_OP_Where, ins, 3, m->out[0], &n, NULL));
    return infer(m, n);
}

static gir_status map_reset_nan(mctx *m, bool *mapped)
{
    static const Nnabla__ResetNaNParameter zero = NNABLA__RESET_NA_NPARAMETER__INIT;
    const Nnabla__ResetNaNParameter *p = PARAM(m, RESET_NAN_PARAM, reset_nan_param, zero);
    return map_reset_special(m, mapped, true, p->val);
}

static gir_status map_reset_inf(mctx *m, bool *mapped)
{
    static const Nnabla__ResetInfParameter zero = NNABLA__RESET_INF_PARAMETER__INIT;
    const Nnabla__ResetInfParameter *p = PARAM(m, RESET_INF_PARAM, reset_inf_param, zero);
    return map_reset_special(m, mapped, false, p->val);
}

/* Sinc: 1 at 0, sin(x) / x elsewhere */
static gir_status map_sinc(mctx *m, bool *mapped)
{
    if (!unary(m))
        return GIR_OK;
    *mapped = true;
    int32_t z, is0, sn, q, one;
    TRY(scalar_value(m, "zero", 0.0, &z));
    TRY(step2(m, "is_zero", GIR_OP_Equal, m->in[0], z, -1, &is0));
    TRY(via_float(m, "is_zero", is0, &is0));
    TRY(step1(m, "sin", GIR_OP_Sin, m->in[0], -1, &sn));
    TRY(step2(m, "ratio", GIR_OP_Div, sn, m->in[0], -1, &q));
    TRY(scalar_value(m, "one", 1.0, &one));
    int32_t ins[3] = { is0, one, q };
    gir_node *n;
    TRY(step(m, NULL, GIR_OP_Where, ins, 3, m->out[0], &n, NULL));
    return infer(m, n);
}

/* BinarySigmoid: x > 0 ? 1 : 0; BinaryTanh: x > 0 ? 1 : -1 */
static gir_status map_binary_act(mctx *m, bool *mapped, double low)
{
    if (!unary(m))
        return GIR_OK;
    *mapped = true;
    int32_t z, gt, hi, lo;
    TRY(scalar_value(m, "zero", 0.0, &z));
    TRY(step2(m, "positive", GIR_OP_Greater, m->in[0], z, -1, &gt));
    TRY(via_float(m, "positive", gt, &gt));
    TRY(scalar_value(m, "high", 1.0, &hi));
    TRY(scalar_value(m, "low", low, &lo));
    int32_t ins[3] = { gt, hi, lo };
    gir_node *n;
    TRY(step(m, NULL, GIR_OP_Where, ins, 3, m->out[0], &n, NULL));
    return infer(m, n);
}

static gir_status map_binary_sigmoid(mctx *m, bool *mapped)
{
    return map_binary_act(m, mapped, 0.0);
}

static gir_status map_binary_tanh(mctx *m, bool *mapped)
{
    return map_binary_act(m, mapped, -1.0);
}

/* Round: halves away from zero (std::round), exactly:
 * sign(x) * (t + (|x| - t >= 0.5)), t = floor(|x|) (|x| - t is exact) */
static gir_status map_round(mctx *m, bool *mapped)
{
    if (m->n_in != 1 || m->n_out != 1 ||
        (m->f->parameter_case != NNABLA__FUNCTION__PARAMETER__NOT_SET &&
         m->f->parameter_case != NNABLA__FUNCTION__PARAMETER_ROUND_PARAM))
        return GIR_OK;
    *mapped = true;
    int32_t a, t, fr, half, ge, t1, r, sg;
    TRY(step1(m, "abs", GIR_OP_Abs, m->in[0], -1, &a));
    TRY(step1(m, "floor", GIR_OP_Floor, a, -1, &t));
    TRY(step2(m, "fraction", GIR_OP_Sub, a, t, -1, &fr));
    TRY(scalar_value(m, "half", 0.5, &half));
    TRY(step2(m, "round_up", GIR_OP_GreaterOrEqual, fr, half, -1, &ge));
    TRY(via_float(m, "round_up", ge, &ge));
    TRY(step_scalar(m, "up", GIR_OP_Add, t, 1.0, -1, &t1));
    int32_t ins[3] = { ge, t1, t };
    gir_node *n;
    TRY(step(m, "magnitude", GIR_OP_Where, ins, 3, -1, &n, &r));
    TRY(infer(m, n));
    TRY(step1(m, "sign", GIR_OP_Sign, m->in[0], -1, &sg));
    return step2(m, NULL, GIR_OP_Mul, sg, r, m->out[0], NULL);
}

/* Flip: a Slice walking the flipped axes backwards */
static gir_status map_flip(mctx *m, bool *mapped)
{
    static const Nnabla__FlipParameter zero = NNABLA__FLIP_PARAMETER__INIT;
    const Nnabla__FlipParameter *p = PARAM(m, FLIP_PARAM, flip_param, zero);
    bool ok;
    check_arity(m, 1, 1, 1, 1, &ok);
    int r = rank_of(m, m->in[0]);
    if (!ok || r < 1 || p->n_axes > (size_t)r)
        return GIR_OK;
    int64_t starts[GIR_MAX_RANK], ends[GIR_MAX_RANK], axes[GIR_MAX_RANK], steps[GIR_MAX_RANK];
    bool seen[GIR_MAX_RANK] = { false };
    size_t k = p->n_axes;
    for (size_t i = 0; i < k; i++) {
        int64_t a = p->axes[i] < 0 ? p->axes[i] + r : p->axes[i];
        if (a < 0 || a >= r || seen[a])
            return GIR_OK;
        seen[a] = true;
        starts[i] = -1;
        ends[i] = INT64_MIN;
        axes[i] = a;
        steps[i] = -1;
    }
    if (k == 0) { /* absent axes: proto3 gives an empty list, nothing flipped */
        *mapped = true;
        return step1(m, NULL, GIR_OP_Identity, m->in[0], m->out[0], NULL);
    }
    *mapped = true;
    gir_node *n;
    TRY(simple(m, GIR_OP_Slice, &n));
    TRY(set_ints(m, n, "starts", starts, k));
    TRY(set_ints(m, n, "ends", ends, k));
    TRY(set_ints(m, n, "axes", axes, k));
    TRY(set_ints(m, n, "steps", steps, k));
    return infer(m, n);
}

/* Mod2: fmod=false has the divisor's sign (numpy), true the dividend's */
static gir_status map_mod2(mctx *m, bool *mapped)
{
    static const Nnabla__Mod2Parameter zero = NNABLA__MOD2_PARAMETER__INIT;
    const Nnabla__Mod2Parameter *p = PARAM(m, MOD2_PARAM, mod2_param, zero);
    bool ok;
    check_arity(m, 2, 2, 1, 1, &ok);
    if (!ok)
        return GIR_OK;
    *mapped = true;
    gir_node *n;
    TRY(simple(m, GIR_OP_Mod, &n));
    TRY(set_int(m, n, "fmod", p->fmod));
    return infer(m, n);
}

/* ---- the table ----------------------------------------------------------------- */

typedef struct fn_map {
    const char *type;
    map_fn fn;
    Nnabla__Function__ParameterCase param; /* the function's own message (NOT_SET: none) */
} fn_map;

#define P(x) NNABLA__FUNCTION__PARAMETER_##x
#define NONE NNABLA__FUNCTION__PARAMETER__NOT_SET
static const fn_map fns[] = {
    { "Affine", map_affine, P(AFFINE_PARAM) },
    { "Convolution", map_convolution, P(CONVOLUTION_PARAM) },
    { "Deconvolution", map_deconvolution, P(DECONVOLUTION_PARAM) },
    { "DepthwiseConvolution", map_depthwise_convolution, P(DEPTHWISE_CONVOLUTION_PARAM) },
    { "DepthwiseDeconvolution", map_depthwise_deconvolution, P(DEPTHWISE_DECONVOLUTION_PARAM) },
    { "MaxPooling", map_max_pooling, P(MAX_POOLING_PARAM) },
    { "AveragePooling", map_average_pooling, P(AVERAGE_POOLING_PARAM) },
    { "SumPooling", map_sum_pooling, P(SUM_POOLING_PARAM) },
    { "GlobalAveragePooling", map_global_average_pooling, NONE },
    { "Unpooling", map_unpooling, P(UNPOOLING_PARAM) },
    { "Embed", map_embed, NONE },
    { "Swish", map_swish, NONE },
    { "GELU", map_gelu, NONE },
    { "Mish", map_mish, NONE },
    { "LogSigmoid", map_log_sigmoid, NONE },
    { "TanhShrink", map_tanh_shrink, NONE },
    { "CReLU", map_crelu, P(CRELU_PARAM) },
    { "CELU", map_celu, P(CELU_PARAM) },
    { "Stack", map_stack, P(STACK_PARAM) },
    { "Unlink", map_forward_identity, NONE },
    { "ClipGradByValue", map_forward_identity, NONE },
    { "ClipGradByNorm", map_forward_identity, P(CLIP_GRAD_BY_NORM_PARAM) },
    { "MulN", map_mul_n, NONE },
    { "Tan", map_tan, NONE },
    { "Sinh", map_sinh, NONE },
    { "Cosh", map_cosh, NONE },
    { "Sinc", map_sinc, NONE },
    { "IsNaN", map_is_nan, NONE },
    { "IsInf", map_is_inf, NONE },
    { "ResetNaN", map_reset_nan, P(RESET_NAN_PARAM) },
    { "ResetInf", map_reset_inf, P(RESET_INF_PARAM) },
    { "BinarySigmoid", map_binary_sigmoid, NONE },
    { "BinaryTanh", map_binary_tanh, NONE },
    { "Mod2", map_mod2, P(MOD2_PARAM) },
    { "Round", map_round, P(ROUND_PARAM) },
    { "Flip", map_flip, P(FLIP_PARAM) },
    { "Arange", map_arange, P(ARANGE_PARAM) },
    { "Constant", map_constant, P(CONSTANT_PARAM) },
    { "OneHot", map_one_hot, P(ONE_HOT_PARAM) },
    { "WeightStandardization", map_weight_standardization, P(WEIGHT_STANDARDIZATION_PARAM) },
    { "WeightNormalization", map_weight_normalization, P(WEIGHT_NORMALIZATION_PARAM) },
    { "Interpolate", map_interpolate, P(INTERPOLATE_PARAM) },
    { "LayerNormalization", map_layer_normalization, P(LAYER_NORMALIZATION_PARAM) },
    { "TensorNormalization", map_tensor_normalization, P(TENSOR_NORMALIZATION_PARAM) },
    { "InstanceNormalization", map_instance_normalization, P(INSTANCE_NORMALIZATION_PARAM) },
    { "GroupNormalization", map_group_normalization, P(GROUP_NORMALIZATION_PARAM) },
    { "ReLU", map_relu, P(RELU_PARAM) },
    { "LeakyReLU", map_leaky_relu, P(LEAKY_RELU_PARAM) },
    { "Softmax", map_softmax, P(SOFTMAX_PARAM) },
    { "LogSoftmax", map_log_softmax, P(LOG_SOFTMAX_PARAM) },
    { "ELU", map_elu, P(ELU_PARAM) },
    { "SELU", map_selu, P(SELU_PARAM) },
    { "PReLU", map_prelu, P(PRELU_PARAM) },
    { "SoftPlus", map_softplus, P(SOFTPLUS_PARAM) },
    { "HardSigmoid", map_hard_sigmoid, NONE },
    { "HardTanh", map_hard_tanh, NONE },
    { "ReLU6", map_relu6, NONE },
    { "BatchNormalization", map_batch_normalization, P(BATCH_NORMALIZATION_PARAM) },
    { "Sum", map_sum, P(SUM_PARAM) },
    { "Mean", map_mean, P(MEAN_PARAM) },
    { "Prod", map_prod, P(PROD_PARAM) },
    { "Max", map_max, P(MAX_PARAM) },
    { "Min", map_min, P(MIN_PARAM) },
    { "ReduceSum", map_reduce_sum_all, NONE },
    { "ReduceMean", map_reduce_mean_all, NONE },
    { "Add2", map_add2, P(ADD2_PARAM) },
    { "BcAdd2", map_bc_add2, P(BC_ADD2_PARAM) },
    { "Sub2", map_sub2, P(SUB2_PARAM) },
    { "Mul2", map_mul2, P(MUL2_PARAM) },
    { "Div2", map_div2, P(DIV2_PARAM) },
    { "Pow2", map_pow2, P(POW2_PARAM) },
    { "AddN", map_add_n, NONE },
    { "AddScalar", map_add_scalar, P(ADD_SCALAR_PARAM) },
    { "MulScalar", map_mul_scalar, P(MUL_SCALAR_PARAM) },
    { "PowScalar", map_pow_scalar, P(POW_SCALAR_PARAM) },
    { "RSubScalar", map_r_sub_scalar, P(R_SUB_SCALAR_PARAM) },
    { "RDivScalar", map_r_div_scalar, P(R_DIV_SCALAR_PARAM) },
    { "RPowScalar", map_r_pow_scalar, P(R_POW_SCALAR_PARAM) },
    { "MinimumScalar", map_minimum_scalar, P(MINIMUM_SCALAR_PARAM) },
    { "MaximumScalar", map_maximum_scalar, P(MAXIMUM_SCALAR_PARAM) },
    { "Sign", map_sign, P(SIGN_PARAM) },
    { "BatchMatmul", map_batch_matmul, P(BATCH_MATMUL_PARAM) },
    { "Concatenate", map_concatenate, P(CONCATENATE_PARAM) },
    { "Split", map_split, P(SPLIT_PARAM) },
    { "Slice", map_slice, P(SLICE_PARAM) },
    { "Pad", map_pad, P(PAD_PARAM) },
    { "Transpose", map_transpose, P(TRANSPOSE_PARAM) },
    { "Reshape", map_reshape, P(RESHAPE_PARAM) },
    { "Broadcast", map_broadcast, P(BROADCAST_PARAM) },
    { "BroadcastTo", map_broadcast_to, P(BROADCAST_TO_PARAM) },
    { "Tile", map_tile, P(TILE_PARAM) },
    { "Gather", map_gather, P(GATHER_PARAM) },
    { "Dropout", map_dropout, P(DROPOUT_PARAM) },
    { "Equal", map_equal, NONE },
    { "Greater", map_greater, NONE },
    { "GreaterEqual", map_greater_equal, NONE },
    { "Less", map_less, NONE },
    { "LessEqual", map_less_equal, NONE },
    { "LogicalAnd", map_logical_and, NONE },
    { "LogicalOr", map_logical_or, NONE },
    { "LogicalXor", map_logical_xor, NONE },
    { "LogicalNot", map_logical_not, NONE },
    { "Where", map_where, NONE },
    { "NotEqualScalar", map_not_equal_scalar, P(NOT_EQUAL_SCALAR_PARAM) },
    { "EqualScalar", map_equal_scalar, P(EQUAL_SCALAR_PARAM) },
    { "GreaterScalar", map_greater_scalar, P(GREATER_SCALAR_PARAM) },
    { "GreaterEqualScalar", map_greater_equal_scalar, P(GREATER_EQUAL_SCALAR_PARAM) },
    { "LessScalar", map_less_scalar, P(LESS_SCALAR_PARAM) },
    { "LessEqualScalar", map_less_equal_scalar, P(LESS_EQUAL_SCALAR_PARAM) },
    { NULL, NULL, NONE },
};
#undef P
#undef NONE

gir_status nnb_map_function(nnb_reader *r, const Nnabla__Function *f, const char *node_name, const int32_t *in,
                           size_t n_in, const int32_t *out, size_t n_out, gir_node **first, gir_error *err)
{
    mctx m = { r, r->g, f, node_name, in, n_in, out, n_out, err, NULL };
    bool mapped = false;
    gir_status st = GIR_OK;
    /* a function with fields of a newer schema is kept as it is: mapping
     * it would drop what those fields say */
    bool newer = gir_pbtext_unknown_count(&f->base) > 0;
    for (const fn_map *e = fns; e->type && !newer; e++) {
        if (strcmp(e->type, f->type) != 0)
            continue;
        if (!foreign_param(&m, e->param))
            st = e->fn(&m, &mapped);
        break;
    }
    for (const plain_map *pm = plain; !newer && !mapped && !st && pm->type; pm++)
        if (strcmp(pm->type, f->type) == 0)
            st = map_plain(&m, &mapped, pm);
    if (!st && !mapped) {
        m.first = NULL;
        st = map_opaque(&m);
    }
    if (st)
        return st;
    if (!mapped && m.first == NULL)
        return gir_fail(err, GIR_E_INTERNAL, "function '%s' made no node", node_name);
    /* the function's parameter message was absent: remember it for the writer */
    if (mapped && f->parameter_case == NNABLA__FUNCTION__PARAMETER__NOT_SET) {
        bool has_message = false;
        for (const fn_map *e = fns; e->type; e++)
            if (strcmp(e->type, f->type) == 0)
                has_message = e->param != NNABLA__FUNCTION__PARAMETER__NOT_SET;
        if (!has_message && (strcmp(f->type, "Ceil") == 0 || strcmp(f->type, "Floor") == 0))
            has_message = true;
        if (has_message)
            TRY(gir_attrs_set_int(r->g, &m.first->meta, NNB_META_NO_PARAM, 1, err));
    }
    *first = m.first;
    return GIR_OK;
}
