/* Canonical operators -> NNabla functions (writing): the function
 * messages, element-wise and arithmetic, convolution, Affine, reshape,
 * softmax, batch normalization, pooling, reductions, and the dispatch of
 * every node (nnbw_emit_node). */
#include "write.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Starts a function of the given type; its name is the node's (or what the
 * file it came from said), or "<node>/<type>" for additional functions. */
Nnabla__Function *nnbw_fn_new(wctx *w, const gir_node *n, const char *type, bool primary)
{
    Nnabla__Function *f = nnbw_pb_new(w, &nnabla__function__descriptor);
    if (!f)
        return NULL;
    const char *name = n->name;
    char *own = NULL;
    if (primary) {
        const char *orig = gir_attrs_get_string(&n->meta, NNB_META_NAME, NULL);
        if (orig)
            name = orig;
        else if (gir_attrs_find(&n->meta, NNB_META_NO_NAME))
            name = "";
    } else {
        own = gir_strdupf("%s/%s", n->name, type);
        name = own;
    }
    f->name = nnbw_sdup(w, name);
    free(own);
    f->type = nnbw_sdup(w, type);
    if (!f->name || !f->type || !nnbw_push_ptr((void ***)&w->net->function, &w->net->n_function, f)) {
        w->failed_alloc = true;
        gir_pb_free(&f->base);
        return NULL;
    }
    if (primary) {
        f->context = (Nnabla__Context *)nnbw_meta_msg(&n->meta, NNB_META_CONTEXT, &nnabla__context__descriptor);
        nnbw_meta_repeat_ids(w, &n->meta, &f->repeat_id, &f->n_repeat_id);
    }
    return f;
}

/* Onto f's inputs (out: its outputs): the variable name, else value v
 * (none when negative), whose root is needed from then on. */
static void fn_push(wctx *w, Nnabla__Function *f, bool out, const char *name, int32_t v)
{
    if (!f || (!name && v < 0))
        return;
    if (!name) {
        w->needed[nnbw_root(w, v)] = 1;
        name = nnbw_vname(w, v);
    }
    if (out)
        nnbw_push_str(w, &f->output, &f->n_output, name);
    else
        nnbw_push_str(w, &f->input, &f->n_input, name);
}

void nnbw_fn_in(wctx *w, Nnabla__Function *f, int32_t v)
{
    fn_push(w, f, false, NULL, v);
}

void nnbw_fn_out(wctx *w, Nnabla__Function *f, int32_t v)
{
    fn_push(w, f, true, NULL, v);
}

void nnbw_fn_in_name(wctx *w, Nnabla__Function *f, const char *name, int32_t v)
{
    fn_push(w, f, false, name, v);
}

void nnbw_fn_out_name(wctx *w, Nnabla__Function *f, const char *name, int32_t v)
{
    fn_push(w, f, true, name, v);
}

/* Sets f's parameter message (by oneof field name); frees msg if f is NULL. */
void nnbw_fn_param(wctx *w, Nnabla__Function *f, const char *field, void *msg)
{
    if (!msg)
        return;
    const ProtobufCFieldDescriptor *fd = nnb_param_field_by_name(field);
    if (w->cur && gir_attrs_find(&w->cur->meta, NNB_META_NO_PARAM)) {
        /* the file this node came from had no parameter message */
        gir_pb_free(msg);
        return;
    }
    if (!f || !fd) {
        if (!fd)
            w->failed_alloc = true;
        gir_pb_free(msg);
        return;
    }
    nnb_set_param(f, fd, msg);
}

void nnbw_fn_param_int(wctx *w, Nnabla__Function *f, const char *field, const char *key, int64_t v)
{
    ProtobufCMessage *p = nnbw_pb_new(w, nnb_param_field_by_name(field)->descriptor);
    if (p)
        nnb_field_set(p, key, v, (double)v);
    nnbw_fn_param(w, f, field, p);
}

/* The node's parameter message is written unless the file it came from had
 * none. */
static bool want_param(const gir_node *n)
{
    return !gir_attrs_find(&n->meta, NNB_META_NO_PARAM);
}

static bool inplace_of(const gir_node *n)
{
    return gir_attrs_get_int(&n->meta, NNB_META_INPLACE, 0) != 0;
}

/* A variable the writer adds; returns its (stable) name. */
const char *nnbw_extra_variable(wctx *w, const gir_node *n, const char *suffix, const gir_shape *shape,
                                const char *const *dim_names)
{
    if (!GIR_GROW(w->extras, w->cap_extras, w->n_extras + 1)) {
        w->failed_alloc = true;
        return NULL;
    }
    char *name = gir_strdupf("%s/%s", n->name, suffix);
    if (!name) {
        w->failed_alloc = true;
        return NULL;
    }
    extra_var *e = &w->extras[w->n_extras++];
    e->name = name;
    if (shape)
        e->shape = *shape;
    else
        e->shape.rank = -1;
    e->dim_names = dim_names;
    return name;
}

/* The double argument of a *Scalar function: the exact value the file had
 * when it still agrees with the graph's constant. */
static double scalar_val(const gir_node *n, double c)
{
    const gir_attr *a = gir_attrs_find(&n->meta, NNB_META_VAL);
    if (a && a->type == GIR_ATTR_FLOAT && ((float)a->u.f == (float)c || a->u.f == c))
        return a->u.f;
    return c;
}

int nnbw_rank(const wctx *w, int32_t v)
{
    const gir_value *x = nnbw_V(w, v);
    return x ? x->shape.rank : -1;
}

/* Dimensions for a Reshape target: unknown ones become -1 (one at most). */
static bool reshape_dims(const gir_shape *s, int64_t *out)
{
    if (s->rank < 0)
        return false;
    int unknown = 0;
    for (int i = 0; i < s->rank; i++) {
        out[i] = s->dims[i] < 0 ? -1 : s->dims[i];
        unknown += s->dims[i] < 0;
    }
    return unknown <= 1;
}

Nnabla__Function *nnbw_simple_fn(wctx *w, const gir_node *n, const char *type)
{
    Nnabla__Function *f = nnbw_fn_new(w, n, type, true);
    for (size_t i = 0; i < n->n_in; i++)
        nnbw_fn_in(w, f, n->in[i]);
    for (size_t i = 0; i < n->n_out; i++)
        nnbw_fn_out(w, f, n->out[i]);
    return f;
}

Nnabla__Function *nnbw_unary_fn(wctx *w, const gir_node *n, const char *type)
{
    Nnabla__Function *f = nnbw_fn_new(w, n, type, true);
    nnbw_fn_in(w, f, n->in[0]);
    nnbw_fn_out(w, f, n->out[0]);
    return f;
}

/* The parameter message of nnabla's *Scalar function `type` (AddScalar,
 * RSubScalar, EqualScalar, ...): its val, and its inplace where the message
 * has one; *field is the message's field of Function.  NULL when out of
 * memory (failed_alloc set) or when `type` has no such message. */
ProtobufCMessage *nnbw_scalar_msg(wctx *w, const char *type, double val, bool inplace, const char **field)
{
    char want[64];
    snprintf(want, sizeof want, "%sParameter", type);
    const ProtobufCMessageDescriptor *fn = &nnabla__function__descriptor;
    for (unsigned i = 0; i < fn->n_fields; i++) {
        const ProtobufCFieldDescriptor *fd = &fn->fields[i];
        const ProtobufCMessageDescriptor *md = fd->descriptor;
        if (fd->type != PROTOBUF_C_TYPE_MESSAGE || strcmp(md->short_name, want) != 0)
            continue;
        ProtobufCMessage *m = nnbw_pb_new(w, md);
        if (!m)
            return NULL;
        const ProtobufCFieldDescriptor *vf = protobuf_c_message_descriptor_get_field_by_name(md, "val");
        const ProtobufCFieldDescriptor *ip = protobuf_c_message_descriptor_get_field_by_name(md, "inplace");
        if (vf && vf->type == PROTOBUF_C_TYPE_DOUBLE)
            *(double *)((char *)m + vf->offset) = val;
        if (ip && ip->type == PROTOBUF_C_TYPE_BOOL)
            *(protobuf_c_boolean *)((char *)m + ip->offset) = inplace;
        *field = fd->name;
        return m;
    }
    return NULL;
}

/* A *Scalar function of input x with val v (the exact double the file had,
 * when it had one); inplace as the node had it where inplace_ok. */
void nnbw_emit_scalar(wctx *w, const gir_node *n, const char *type, int32_t x, double v, bool inplace_ok)
{
    Nnabla__Function *f = nnbw_fn_new(w, n, type, true);
    nnbw_fn_in(w, f, x);
    nnbw_fn_out(w, f, n->out[0]);
    if (!f)
        return;
    const char *field = NULL;
    ProtobufCMessage *pm = nnbw_scalar_msg(w, type, scalar_val(n, v), inplace_of(n) && inplace_ok, &field);
    nnbw_fn_param(w, f, field, pm);
}

/* Makes operand v usable by an equal-rank nnabla binary function: a
 * Reshape adds leading 1s when its rank is lower than the other's. */
static const char *align_rank(wctx *w, const gir_node *n, int32_t v, int other_rank, const char *suffix)
{
    const gir_value *x = nnbw_V(w, v);
    if (!x || x->shape.rank < 0 || other_rank < 0 || x->shape.rank >= other_rank)
        return NULL;
    int64_t dims[GIR_MAX_RANK];
    gir_shape s = { other_rank, { 0 } };
    int lead = other_rank - x->shape.rank;
    for (int i = 0; i < other_rank; i++)
        s.dims[i] = i < lead ? 1 : x->shape.dims[i - lead];
    if (!reshape_dims(&s, dims))
        return NULL;
    const char *name = nnbw_extra_variable(w, n, suffix, &s, NULL);
    /* Named NODE/Reshape_K (fn_new names a helper after its type), but of
     * type Reshape. */
    Nnabla__Function *f = nnbw_fn_new(w, n, suffix, false);
    if (f) {
        nnbw_str_free(f->type);
        f->type = nnbw_sdup(w, "Reshape");
        if (!f->type)
            w->failed_alloc = true;
    }
    nnbw_fn_in(w, f, v);
    nnbw_fn_out_name(w, f, name, -1);
    Nnabla__ReshapeParameter *p = nnbw_pb_new(w, &nnabla__reshape_parameter__descriptor);
    if (p) {
        p->shape = nnbw_shape_msg(w, dims, (size_t)other_rank);
        p->inplace = true;
    }
    nnbw_fn_param(w, f, "reshape_param", p);
    return name;
}

static void emit_binary(wctx *w, const gir_node *n, const char *type, const char *field,
                        const ProtobufCMessageDescriptor *pd)
{
    int32_t a = n->in[0], b = n->in[1];
    int ra = nnbw_rank(w, a), rb = nnbw_rank(w, b);
    if (ra >= 0 && rb >= 0 && ra != rb) {
        const gir_value *lo = nnbw_V(w, ra < rb ? a : b);
        int64_t dims[GIR_MAX_RANK];
        if (!reshape_dims(&lo->shape, dims)) {
            nnbw_refuse(w, n, GIR_E_UNSUPPORTED_ATTR, "%s of ranks %d and %d with unknown dimensions", gir_op_name(n->op),
                        ra, rb);
            return;
        }
    }
    const char *ga = align_rank(w, n, a, rb, "Reshape_0");
    const char *gb = align_rank(w, n, b, ra, "Reshape_1");
    const char *t = type;
    if (n->op == GIR_OP_Add && strcmp(gir_attrs_get_string(&n->meta, NNB_META_TYPE, ""), "BcAdd2") == 0) {
        t = "BcAdd2";
        field = "bc_add2_param";
        pd = &nnabla__bc_add2_parameter__descriptor;
    }
    Nnabla__Function *f = nnbw_fn_new(w, n, t, true);
    nnbw_fn_in_name(w, f, ga, a);
    nnbw_fn_in_name(w, f, gb, b);
    nnbw_fn_out(w, f, n->out[0]);
    if (!want_param(n) || !field)
        return;
    /* every X2 parameter message is { bool inplace = 1; } */
    ProtobufCMessage *p = nnbw_pb_new(w, pd);
    if (p && inplace_of(n))
        *(protobuf_c_boolean *)((char *)p + pd->fields[0].offset) = 1;
    nnbw_fn_param(w, f, field, p);
}

/* The arithmetic functions: with a constant scalar operand b (X op c) or
 * a (c op X) nnabla has a *Scalar function (scalar_b NULL: none; X - c
 * is AddScalar of -c), in place as the node was where the operand order
 * does not matter; otherwise the binary function. */
static const struct arith_fn {
    gir_op op;
    const char *scalar_b, *scalar_a;
    bool negate_b, commutes;
    const char *type, *field;
    const ProtobufCMessageDescriptor *pd;
} arith_fns[] = {
    { GIR_OP_Add, "AddScalar", "AddScalar", false, true, "Add2", "add2_param", &nnabla__add2_parameter__descriptor },
    { GIR_OP_Sub, "AddScalar", "RSubScalar", true, false, "Sub2", "sub2_param", &nnabla__sub2_parameter__descriptor },
    { GIR_OP_Mul, "MulScalar", "MulScalar", false, true, "Mul2", "mul2_param", &nnabla__mul2_parameter__descriptor },
    { GIR_OP_Div, NULL, "RDivScalar", false, false, "Div2", "div2_param", &nnabla__div2_parameter__descriptor },
    { GIR_OP_Pow, "PowScalar", "RPowScalar", false, false, "Pow2", "pow2_param", &nnabla__pow2_parameter__descriptor },
};

static void emit_arith(wctx *w, const gir_node *n)
{
    for (size_t i = 0; i < sizeof arith_fns / sizeof *arith_fns; i++) {
        const struct arith_fn *t = &arith_fns[i];
        if (t->op != n->op)
            continue;
        double c;
        int32_t a = n->in[0], b = n->in[1];
        bool cb = nnbw_scalar_const(w, b, &c), ca = !cb && nnbw_scalar_const(w, a, &c);
        if (cb && t->scalar_b)
            nnbw_emit_scalar(w, n, t->scalar_b, a, t->negate_b ? -c : c, true);
        else if (ca)
            nnbw_emit_scalar(w, n, t->scalar_a, b, c, t->commutes);
        else
            emit_binary(w, n, t->type, t->field, t->pd);
        return;
    }
}

static void emit_clip(wctx *w, const gir_node *n)
{
    const gir_attr *lo = gir_attrs_find(&n->attrs, "min"), *hi = gir_attrs_find(&n->attrs, "max");
    const char *type = gir_attrs_get_string(&n->meta, NNB_META_TYPE, "");
    double l = lo ? lo->u.f : -INFINITY, h = hi ? hi->u.f : INFINITY;
    if (lo && hi && l == 0.0 && h == 6.0 && strcmp(type, "HardTanh") != 0) {
        nnbw_simple_fn(w, n, "ReLU6");
        return;
    }
    if (lo && hi && l == -1.0 && h == 1.0) {
        nnbw_simple_fn(w, n, "HardTanh");
        return;
    }
    if (!lo && !hi) {
        nnbw_simple_fn(w, n, "Identity");
        return;
    }
    if (!lo) {
        nnbw_emit_scalar(w, n, "MinimumScalar", n->in[0], h, false);
        return;
    }
    if (!hi) {
        nnbw_emit_scalar(w, n, "MaximumScalar", n->in[0], l, false);
        return;
    }
    /* both bounds: MaximumScalar then MinimumScalar */
    const gir_value *y = nnbw_V(w, n->out[0]);
    const char *mid = nnbw_extra_variable(w, n, "MaximumScalar_out", y ? &y->shape : NULL, y ? y->dim_names : NULL);
    Nnabla__Function *f = nnbw_fn_new(w, n, "MaximumScalar", false);
    nnbw_fn_in(w, f, n->in[0]);
    nnbw_fn_out_name(w, f, mid, -1);
    Nnabla__MaximumScalarParameter *p = nnbw_pb_new(w, &nnabla__maximum_scalar_parameter__descriptor);
    if (p)
        p->val = l;
    nnbw_fn_param(w, f, "maximum_scalar_param", p);
    Nnabla__Function *g = nnbw_fn_new(w, n, "MinimumScalar", true);
    nnbw_fn_in_name(w, g, mid, -1);
    nnbw_fn_out(w, g, n->out[0]);
    Nnabla__MinimumScalarParameter *q = nnbw_pb_new(w, &nnabla__minimum_scalar_parameter__descriptor);
    if (q)
        q->val = h;
    nnbw_fn_param(w, g, "minimum_scalar_param", q);
}

/* Chains a variadic Max/Min/Sum pairwise. */
static void emit_chain(wctx *w, const gir_node *n, const char *type)
{
    const char *prev = NULL;
    const gir_value *y = nnbw_V(w, n->out[0]);
    for (size_t i = 1; i < n->n_in; i++) {
        bool last = i + 1 == n->n_in;
        char suffix[64];
        snprintf(suffix, sizeof suffix, "%s_%zu", type, i);
        Nnabla__Function *f = nnbw_fn_new(w, n, last ? type : suffix, last);
        if (f && !last) {
            nnbw_str_free(f->type);
            f->type = nnbw_sdup(w, type);
        }
        nnbw_fn_in_name(w, f, prev, n->in[0]);
        nnbw_fn_in(w, f, n->in[i]);
        if (last) {
            nnbw_fn_out(w, f, n->out[0]);
        } else {
            snprintf(suffix, sizeof suffix, "%s_%zu_out", type, i);
            prev = nnbw_extra_variable(w, n, suffix, y ? &y->shape : NULL, y ? y->dim_names : NULL);
            nnbw_fn_out_name(w, f, prev, -1);
        }
    }
}

static void emit_variadic(wctx *w, const gir_node *n)
{
    if (n->n_in == 1) {
        nnbw_simple_fn(w, n, "Identity");
        return;
    }
    switch (n->op) {
    case GIR_OP_Sum:
        nnbw_simple_fn(w, n, "AddN");
        return;
    case GIR_OP_Max:
        emit_chain(w, n, "Maximum2");
        return;
    case GIR_OP_Min:
        emit_chain(w, n, "Minimum2");
        return;
    default:
        nnbw_refuse(w, n, GIR_E_UNSUPPORTED_OP, "Mean of %zu inputs", n->n_in);
        return;
    }
}

/* Spatial list attribute with a default fill. */
static bool spatial_attr(const gir_node *n, const char *name, size_t ns, int64_t dflt, int64_t *out)
{
    const int64_t *v;
    ptrdiff_t k = gir_attrs_get_ints(&n->attrs, name, &v);
    if (k < 0) {
        for (size_t i = 0; i < ns; i++)
            out[i] = dflt;
        return true;
    }
    if ((size_t)k != ns)
        return false;
    memcpy(out, v, ns * sizeof *out);
    return true;
}

static bool auto_pad_ok(const gir_node *n)
{
    const char *ap = gir_node_string(n, "auto_pad", "NOTSET");
    return strcmp(ap, "NOTSET") == 0 || strcmp(ap, "") == 0;
}

static void emit_conv(wctx *w, const gir_node *n)
{
    bool tr = n->op == GIR_OP_ConvTranspose;
    const gir_value *wt = nnbw_V(w, n->in[1]);
    if (!wt || wt->shape.rank < 3) {
        nnbw_refuse(w, n, GIR_E_UNSUPPORTED_ATTR, "%s whose weight rank is unknown", gir_op_name(n->op));
        return;
    }
    size_t ns = (size_t)wt->shape.rank - 2;
    int64_t k[GIR_MAX_RANK], s[GIR_MAX_RANK], d[GIR_MAX_RANK], p[2 * GIR_MAX_RANK], op[GIR_MAX_RANK];
    if (!auto_pad_ok(n)) {
        nnbw_refuse(w, n, GIR_E_UNSUPPORTED_ATTR, "%s with auto_pad=%s", gir_op_name(n->op),
                    gir_node_string(n, "auto_pad", ""));
        return;
    }
    if (!spatial_attr(n, "kernel_shape", ns, -1, k) || !spatial_attr(n, "strides", ns, 1, s) ||
        !spatial_attr(n, "dilations", ns, 1, d) || !spatial_attr(n, "pads", 2 * ns, 0, p) ||
        !spatial_attr(n, "output_padding", ns, 0, op)) {
        nnbw_refuse(w, n, GIR_E_UNSUPPORTED_ATTR, "%s with spatial attributes of the wrong length", gir_op_name(n->op));
        return;
    }
    for (size_t i = 0; i < ns; i++) {
        if (k[i] >= 0 && wt->shape.dims[2 + i] >= 0 && k[i] != wt->shape.dims[2 + i]) {
            nnbw_refuse(w, n, GIR_E_UNSUPPORTED_ATTR, "%s with kernel_shape other than the weight's", gir_op_name(n->op));
            return;
        }
        if (p[i] != p[ns + i]) {
            nnbw_refuse(w, n, GIR_E_UNSUPPORTED_ATTR, "%s with asymmetric pads", gir_op_name(n->op));
            return;
        }
    }
    if (tr && gir_attrs_find(&n->attrs, "output_shape")) {
        nnbw_refuse(w, n, GIR_E_UNSUPPORTED_ATTR, "ConvTranspose with output_shape");
        return;
    }
    int64_t group = gir_node_int(n, "group", 1);
    /* the fields every convolution parameter message q has alike */
#define CONV_GEOMETRY(q)                                                                                            \
    ((q)->base_axis = 1, (q)->pad = nnbw_shape_msg(w, p, ns), (q)->stride = nnbw_shape_msg(w, s, ns),             \
     (q)->dilation = nnbw_shape_msg(w, d, ns))
    /* a weight declared (C', K...) (read from a depthwise function) */
    const int64_t *decl;
    ptrdiff_t kd = gir_attrs_get_ints(&wt->meta, NNB_META_SHAPE, &decl);
    if (kd == wt->shape.rank - 1 && wt->shape.dims[1] == 1) {
        const gir_value *x = nnbw_V(w, n->in[0]);
        int64_t c = x && x->shape.rank >= 2 ? x->shape.dims[1] : -1;
        if (c != group || (tr && wt->shape.dims[0] != c) || (!tr && wt->shape.dims[0] % c != 0)) {
            nnbw_refuse(w, n, GIR_E_UNSUPPORTED_ATTR, "%s whose weight is declared without its channel axis but is not "
                        "depthwise", gir_op_name(n->op));
            return;
        }
        bool opad_zero = true;
        for (size_t i = 0; i < ns; i++)
            opad_zero &= op[i] == 0;
        if (tr && !opad_zero) {
            nnbw_refuse(w, n, GIR_E_UNSUPPORTED_ATTR, "a depthwise ConvTranspose with output_padding");
            return;
        }
        Nnabla__Function *f = nnbw_simple_fn(w, n, tr ? "DepthwiseDeconvolution" : "DepthwiseConvolution");
        if (tr) {
            Nnabla__DepthwiseDeconvolutionParameter *q =
                nnbw_pb_new(w, &nnabla__depthwise_deconvolution_parameter__descriptor);
            if (q) {
                CONV_GEOMETRY(q);
                q->divisor = 1;
            }
            nnbw_fn_param(w, f, "depthwise_deconvolution_param", q);
        } else {
            Nnabla__DepthwiseConvolutionParameter *q = nnbw_pb_new(w, &nnabla__depthwise_convolution_parameter__descriptor);
            if (q) {
                CONV_GEOMETRY(q);
                q->multiplier = wt->shape.dims[0] / c;
            }
            nnbw_fn_param(w, f, "depthwise_convolution_param", q);
        }
        return;
    }
    Nnabla__Function *f = nnbw_simple_fn(w, n, tr ? "Deconvolution" : "Convolution");
    if (tr) {
        Nnabla__DeconvolutionParameter *q = nnbw_pb_new(w, &nnabla__deconvolution_parameter__descriptor);
        if (q) {
            CONV_GEOMETRY(q);
            q->group = group;
            q->output_padding = nnbw_shape_msg(w, op, ns);
        }
        nnbw_fn_param(w, f, "deconvolution_param", q);
    } else {
        Nnabla__ConvolutionParameter *q = nnbw_pb_new(w, &nnabla__convolution_parameter__descriptor);
        if (q) {
            CONV_GEOMETRY(q);
            q->group = group;
        }
        nnbw_fn_param(w, f, "convolution_param", q);
    }
}
#undef CONV_GEOMETRY

/* Gemm -> Affine (weight in x out); a Flatten feeding only this Gemm is
 * absorbed as Affine's base_axis. */
bool nnbw_gemm_fusable_flatten(const wctx *w, const gir_node *gemm, int32_t *flatten_node, int64_t *axis)
{
    int32_t a = gemm->in[0];
    const gir_value *x = nnbw_V(w, a);
    if (!x || x->producer < 0 || !nnbw_single_use(w, a))
        return false;
    const gir_node *fl = w->g->nodes[x->producer];
    if (fl->op != GIR_OP_Flatten)
        return false;
    int64_t ax = gir_node_int(fl, "axis", 1);
    int r = nnbw_rank(w, fl->in[0]);
    /* The Flatten an nnabla Affine implied is absorbed again; another
     * Flatten stays a function (a Reshape) unless its shape is unknown,
     * when Affine's own flattening is the only way to write it. */
    if (!gir_attrs_find(&fl->meta, NNB_META_FUSED)) {
        const gir_value *in = nnbw_V(w, fl->in[0]);
        if (in && in->shape.rank >= 0) {
            int64_t cut = ax < 0 ? ax + in->shape.rank : ax;
            bool ua = false, ub = false;
            for (int i = 0; i < in->shape.rank; i++)
                if (in->shape.dims[i] < 0)
                    *(i < cut ? &ua : &ub) = true;
            if (!(ua && ub))
                return false; /* a Reshape can say it */
        }
    }
    if (ax < 0 && r >= 0)
        ax += r;
    if (ax != 1) /* Affine's output keeps base_axis leading dimensions */
        return false;
    *flatten_node = x->producer;
    *axis = ax;
    return true;
}

bool nnbw_gemm_check(wctx *w, const gir_node *n, bool report)
{
    const char *why = NULL;
    if (gir_node_float(n, "alpha", 1.0) != 1.0)
        why = "Gemm with alpha other than 1";
    else if (n->n_in == 3 && n->in[2] >= 0 && gir_node_float(n, "beta", 1.0) != 1.0)
        why = "Gemm with beta other than 1";
    else if (gir_node_int(n, "transA", 0))
        why = "Gemm with transA=1";
    else if (nnbw_rank(w, n->in[1]) != 2)
        why = "Gemm whose B is not a matrix of known rank";
    else if (n->n_in == 3 && n->in[2] >= 0 && nnbw_rank(w, n->in[2]) != 1)
        why = "Gemm whose bias C is not a vector";
    if (why && report)
        nnbw_refuse(w, n, GIR_E_UNSUPPORTED_ATTR, "%s", why);
    return why == NULL;
}

static void emit_gemm(wctx *w, const gir_node *n, int32_t self)
{
    if (!nnbw_gemm_check(w, n, true))
        return;
    int32_t b = n->in[1];
    const char *bname = NULL;
    if (gir_node_int(n, "transB", 0)) {
        const gir_value *bv0 = nnbw_V(w, b);
        if (bv0->kind == GIR_VALUE_WEIGHT || bv0->kind == GIR_VALUE_CONST) {
            /* written transposed: every user reads it so (see plan) */
        } else {
            const gir_value *bv = nnbw_V(w, b);
            gir_shape ts = { 2, { bv->shape.dims[1], bv->shape.dims[0] } };
            bname = nnbw_extra_variable(w, n, "Transpose_out", &ts, NULL);
            Nnabla__Function *t = nnbw_fn_new(w, n, "Transpose", false);
            nnbw_fn_in(w, t, b);
            nnbw_fn_out_name(w, t, bname, -1);
            Nnabla__TransposeParameter *tp = nnbw_pb_new(w, &nnabla__transpose_parameter__descriptor);
            if (tp) {
                static const int64_t swap[2] = { 1, 0 };
                tp->n_axes = nnbw_set_ints(w, &tp->axes, swap, 2);
            }
            nnbw_fn_param(w, t, "transpose_param", tp);
        }
    }
    int32_t a = n->in[0];
    int64_t base_axis = 1;
    int32_t src = w->fuse_src[self];
    if (src >= 0) {
        a = w->g->nodes[src]->in[0];
    } else if (nnbw_rank(w, a) != 2 && nnbw_rank(w, a) >= 0) {
        nnbw_refuse(w, n, GIR_E_UNSUPPORTED_ATTR, "Gemm whose A is not a matrix");
        return;
    }
    Nnabla__Function *f = nnbw_fn_new(w, n, "Affine", true);
    nnbw_fn_in(w, f, a);
    nnbw_fn_in_name(w, f, bname, b);
    if (n->n_in == 3 && n->in[2] >= 0)
        nnbw_fn_in(w, f, n->in[2]);
    nnbw_fn_out(w, f, n->out[0]);
    nnbw_fn_param_int(w, f, "affine_param", "base_axis", base_axis);
}

static void emit_reshape_to(wctx *w, const gir_node *n, const int64_t *dims, size_t k)
{
    Nnabla__Function *f = nnbw_unary_fn(w, n, "Reshape");
    if (!want_param(n))
        return;
    Nnabla__ReshapeParameter *p = nnbw_pb_new(w, &nnabla__reshape_parameter__descriptor);
    if (p) {
        p->shape = nnbw_shape_msg(w, dims, k);
        p->inplace = gir_attrs_find(&n->meta, NNB_META_INPLACE) ? inplace_of(n) : true;
    }
    nnbw_fn_param(w, f, "reshape_param", p);
}

static void emit_reshape(wctx *w, const gir_node *n)
{
    int64_t dims[GIR_MAX_RANK];
    size_t k = 0;
    if (n->op == GIR_OP_Reshape) {
        const int64_t *s;
        ptrdiff_t ks = gir_attrs_get_ints(&n->attrs, "shape", &s);
        if (ks < 0 || ks > GIR_MAX_RANK) {
            nnbw_refuse(w, n, GIR_E_UNSUPPORTED_ATTR, "Reshape without a shape attribute");
            return;
        }
        bool allowzero = gir_node_int(n, "allowzero", 0) != 0;
        const gir_value *x = nnbw_V(w, n->in[0]);
        for (ptrdiff_t i = 0; i < ks; i++) {
            dims[i] = s[i];
            if (s[i] == 0 && !allowzero) {
                /* ONNX's "copy this dimension": nnabla has none */
                if (!x || x->shape.rank <= i || x->shape.dims[i] < 0) {
                    nnbw_refuse(w, n, GIR_E_UNSUPPORTED_ATTR, "Reshape copying an unknown dimension (0 in shape)");
                    return;
                }
                dims[i] = x->shape.dims[i];
            }
        }
        k = (size_t)ks;
    } else {
        /* Flatten, Squeeze, Unsqueeze: the output's shape */
        const gir_value *y = nnbw_V(w, n->out[0]);
        const gir_value *x = nnbw_V(w, n->in[0]);
        if (n->op == GIR_OP_Flatten && x && x->shape.rank >= 0) {
            int64_t ax = gir_node_int(n, "axis", 1);
            if (ax < 0)
                ax += x->shape.rank;
            int64_t a = 1, b = 1;
            bool ua = false, ub = false;
            for (int i = 0; i < x->shape.rank; i++) {
                int64_t d = x->shape.dims[i];
                bool *u = i < ax ? &ua : &ub;
                int64_t *acc = i < ax ? &a : &b;
                if (d < 0)
                    *u = true;
                else
                    *acc *= d;
            }
            if (ua && ub) {
                nnbw_refuse(w, n, GIR_E_UNSUPPORTED_ATTR, "Flatten of a shape with unknown dimensions on both sides");
                return;
            }
            dims[0] = ua ? -1 : a;
            dims[1] = ub ? -1 : b;
            k = 2;
        } else if (!y || !reshape_dims(&y->shape, dims)) {
            nnbw_refuse(w, n, GIR_E_UNSUPPORTED_ATTR, "%s whose output shape is not known", gir_op_name(n->op));
            return;
        } else {
            k = (size_t)y->shape.rank;
        }
    }
    emit_reshape_to(w, n, dims, k);
}

static void emit_transpose(wctx *w, const gir_node *n)
{
    const int64_t *perm;
    ptrdiff_t k = gir_attrs_get_ints(&n->attrs, "perm", &perm);
    int64_t rev[GIR_MAX_RANK];
    if (k < 0) {
        int r = nnbw_rank(w, n->in[0]);
        if (r < 0) {
            nnbw_refuse(w, n, GIR_E_UNSUPPORTED_ATTR, "Transpose without perm of an input of unknown rank");
            return;
        }
        for (int i = 0; i < r; i++)
            rev[i] = r - 1 - i;
        perm = rev;
        k = r;
    }
    Nnabla__Function *f = nnbw_simple_fn(w, n, "Transpose");
    Nnabla__TransposeParameter *p = nnbw_pb_new(w, &nnabla__transpose_parameter__descriptor);
    if (p)
        p->n_axes = nnbw_set_ints(w, &p->axes, perm, (size_t)k);
    nnbw_fn_param(w, f, "transpose_param", p);
}

static void emit_batchnorm(wctx *w, const gir_node *n)
{
    int r = nnbw_rank(w, n->in[0]);
    const gir_value *x = nnbw_V(w, n->in[0]);
    for (size_t i = 1; i < 5; i++) {
        int32_t v = n->in[i];
        const gir_value *pv = nnbw_V(w, v);
        if (!pv || (pv->kind != GIR_VALUE_WEIGHT && pv->kind != GIR_VALUE_CONST)) {
            nnbw_refuse(w, n, GIR_E_UNSUPPORTED_ATTR, "BatchNormalization whose statistics or scale are computed");
            return;
        }
        int64_t c = gir_shape_numel(&pv->shape);
        /* nnabla declares BN parameters with x's rank: (1, C, 1, 1) */
        gir_shape s = { 0, { 0 } };
        const int64_t *decl;
        ptrdiff_t kd = gir_attrs_get_ints(&pv->meta, NNB_META_SHAPE, &decl);
        if (kd >= 0 && kd <= GIR_MAX_RANK) {
            s.rank = (int)kd;
            memcpy(s.dims, decl, (size_t)kd * sizeof *decl);
        }
        if (kd < 0 || gir_shape_numel(&s) != c) {
            if (r < 2 || c < 0) {
                nnbw_refuse(w, n, GIR_E_UNSUPPORTED_ATTR, "BatchNormalization of an input of unknown rank");
                return;
            }
            s.rank = r;
            for (int d = 0; d < r; d++)
                s.dims[d] = d == 1 ? c : 1;
        }
        if (w->wshape[v].rank != -2 && !gir_shape_equal(&w->wshape[v], &s)) {
            nnbw_refuse(w, n, GIR_E_UNSUPPORTED_ATTR, "BatchNormalization parameter '%s' shared with another shape",
                        pv->name);
            return;
        }
        w->wshape[v] = s;
        if (i >= 3)
            w->bn_stat[v] = 1;
    }
    (void)x;
    Nnabla__Function *f = nnbw_fn_new(w, n, "BatchNormalization", true);
    nnbw_fn_in(w, f, n->in[0]);
    nnbw_fn_in(w, f, n->in[2]); /* beta */
    nnbw_fn_in(w, f, n->in[1]); /* gamma */
    nnbw_fn_in(w, f, n->in[3]);
    nnbw_fn_in(w, f, n->in[4]);
    nnbw_fn_out(w, f, n->out[0]);
    Nnabla__BatchNormalizationParameter *p = nnbw_pb_new(w, &nnabla__batch_normalization_parameter__descriptor);
    if (p) {
        static const int64_t one = 1;
        p->n_axes = nnbw_set_ints(w, &p->axes, &one, 1);
        p->decay_rate = (float)gir_node_float(n, "momentum", 0.9);
        p->eps = (float)gir_node_float(n, "epsilon", 1e-5);
        p->batch_stat = false;
    }
    nnbw_fn_param(w, f, "batch_normalization_param", p);
}

static void emit_pool(wctx *w, const gir_node *n)
{
    bool avg = n->op == GIR_OP_AveragePool;
    const gir_value *x = nnbw_V(w, n->in[0]);
    const int64_t *kv;
    ptrdiff_t ks = gir_attrs_get_ints(&n->attrs, "kernel_shape", &kv);
    if (ks <= 0 || ks > GIR_MAX_RANK - 2 || !x || (x->shape.rank >= 0 && x->shape.rank != (int)ks + 2)) {
        nnbw_refuse(w, n, GIR_E_UNSUPPORTED_ATTR, "%s over other than the axes after (N, C)", gir_op_name(n->op));
        return;
    }
    size_t ns = (size_t)ks;
    int64_t k[GIR_MAX_RANK], s[GIR_MAX_RANK], d[GIR_MAX_RANK], p[2 * GIR_MAX_RANK];
    memcpy(k, kv, ns * sizeof *k);
    if (!auto_pad_ok(n) || !spatial_attr(n, "strides", ns, 1, s) || !spatial_attr(n, "pads", 2 * ns, 0, p) ||
        !spatial_attr(n, "dilations", ns, 1, d)) {
        nnbw_refuse(w, n, GIR_E_UNSUPPORTED_ATTR, "%s with auto_pad or malformed spatial attributes", gir_op_name(n->op));
        return;
    }
    for (size_t i = 0; i < ns; i++)
        if (d[i] != 1) {
            nnbw_refuse(w, n, GIR_E_UNSUPPORTED_ATTR, "%s with dilations", gir_op_name(n->op));
            return;
        }
    if (!avg && n->n_out > 1 && n->out[1] >= 0 && (w->uses[n->out[1]] || w->is_output[n->out[1]])) {
        nnbw_refuse(w, n, GIR_E_UNSUPPORTED_ATTR, "MaxPool with its Indices output used");
        return;
    }
    bool ceil_mode = gir_node_int(n, "ceil_mode", 0) != 0;
    bool incl = avg && gir_node_int(n, "count_include_pad", 0) != 0;
    /* plan() folded the product by the window size: nnabla's SumPooling */
    bool sum = avg && nnbw_root(w, n->out[0]) != n->out[0];
    /* ignore_border=true: floor mode with symmetric pads */
    bool as_true = true, as_false = true;
    for (size_t i = 0; i < ns; i++) {
        int64_t L = x->shape.rank >= 0 ? x->shape.dims[2 + i] : -1, pb = p[i], pe = p[ns + i];
        if (pb != pe)
            as_true = false;
        if (L < 0) {
            if (ceil_mode)
                as_true = false;
            /* whatever L: ceil((L + 2p - k) / s) + 1 = floor((L + p - 1) / s) + 1
             * exactly when p = k - s (no padding, k = s: the usual case) */
            if (!ceil_mode || pb != pe || pb != k[i] - s[i] || (incl && !sum))
                as_false = false;
            continue;
        }
        int64_t want = nnb_onnx_pool_len(L, k[i], s[i], pb, pe, ceil_mode);
        if (want != nnb_onnx_pool_len(L, k[i], s[i], pb, pb, false))
            as_true = false;
        int64_t nnb_false = (L + pb - 1) / s[i] + 1;
        if (want != nnb_false)
            as_false = false;
        /* averaging with padding counted: windows must end within both
         * frameworks' padded extents so the divisor stays k */
        if (incl && !sum && (want - 1) * s[i] - pb + k[i] > L + (pe < pb ? pe : pb))
            as_false = false;
    }
    if (as_true && as_false)
        as_true = gir_attrs_find(&n->meta, NNB_META_IGNORE_BORDER)
                      ? gir_attrs_get_int(&n->meta, NNB_META_IGNORE_BORDER, 1) != 0
                      : !ceil_mode;
    if (!as_true && !as_false) {
        nnbw_refuse(w, n, GIR_E_UNSUPPORTED_ATTR, "%s whose padding and rounding nnabla cannot reproduce",
                    gir_op_name(n->op));
        return;
    }
    Nnabla__Function *f = nnbw_fn_new(w, n, sum ? "SumPooling" : avg ? "AveragePooling" : "MaxPooling", true);
    /* the fields every pooling parameter message q has alike */
#define POOL_WINDOW(q)                                                                                              \
    ((q)->kernel = nnbw_shape_msg(w, k, ns), (q)->stride = nnbw_shape_msg(w, s, ns), (q)->ignore_border = as_true, \
     (q)->pad = nnbw_shape_msg(w, p, ns))
    nnbw_fn_in(w, f, n->in[0]);
    nnbw_fn_out(w, f, n->out[0]);
    if (sum) {
        Nnabla__SumPoolingParameter *q = nnbw_pb_new(w, &nnabla__sum_pooling_parameter__descriptor);
        if (q)
            POOL_WINDOW(q);
        nnbw_fn_param(w, f, "sum_pooling_param", q);
    } else if (avg) {
        Nnabla__AveragePoolingParameter *q = nnbw_pb_new(w, &nnabla__average_pooling_parameter__descriptor);
        if (q) {
            POOL_WINDOW(q);
            q->including_pad = incl;
        }
        nnbw_fn_param(w, f, "average_pooling_param", q);
    } else {
        Nnabla__MaxPoolingParameter *q = nnbw_pb_new(w, &nnabla__max_pooling_parameter__descriptor);
        if (q)
            POOL_WINDOW(q);
        nnbw_fn_param(w, f, "max_pooling_param", q);
    }
}
#undef POOL_WINDOW

/* A reduction function: Sum, Mean, Prod, Max and Min have parameter
 * messages of their own that all hold axes and keep_dims, set here
 * through the messages' descriptors. */
static void emit_reduce_fn(wctx *w, const gir_node *n, const char *type, const int64_t *axes, size_t na, bool keep)
{
    static const struct {
        const char *type, *field;
        const ProtobufCMessageDescriptor *desc;
    } params[] = {
        { "Sum", "sum_param", &nnabla__sum_parameter__descriptor },
        { "Mean", "mean_param", &nnabla__mean_parameter__descriptor },
        { "Prod", "prod_param", &nnabla__prod_parameter__descriptor },
        { "Max", "max_param", &nnabla__max_parameter__descriptor },
        { "Min", "min_param", &nnabla__min_parameter__descriptor },
    };
    Nnabla__Function *f = nnbw_unary_fn(w, n, type);
    for (size_t i = 0; i < sizeof params / sizeof *params; i++) {
        if (strcmp(type, params[i].type) != 0)
            continue;
        const ProtobufCMessageDescriptor *d = params[i].desc;
        ProtobufCMessage *pm = nnbw_pb_new(w, d);
        if (!pm)
            return;
        const ProtobufCFieldDescriptor *fa = protobuf_c_message_descriptor_get_field_by_name(d, "axes");
        const ProtobufCFieldDescriptor *fk = protobuf_c_message_descriptor_get_field_by_name(d, "keep_dims");
        int64_t *ax = na ? nnbw_dup_ints(w, axes, na) : NULL;
        *(int64_t **)(void *)((char *)pm + fa->offset) = ax;
        *(size_t *)(void *)((char *)pm + fa->quantifier_offset) = ax ? na : 0;
        *(protobuf_c_boolean *)(void *)((char *)pm + fk->offset) = keep;
        nnbw_fn_param(w, f, params[i].field, pm);
    }
}

static void emit_reduce(wctx *w, const gir_node *n)
{
    const int64_t *axes;
    ptrdiff_t na = gir_attrs_get_ints(&n->attrs, "axes", &axes);
    bool keep = gir_node_int(n, "keepdims", 1) != 0;
    if (na <= 0 && n->op == GIR_OP_ReduceSum && gir_node_int(n, "noop_with_empty_axes", 0)) {
        nnbw_simple_fn(w, n, "Identity");
        return;
    }
    const char *meta_type = gir_attrs_get_string(&n->meta, NNB_META_TYPE, NULL);
    if (meta_type && na <= 0 && !keep &&
        ((n->op == GIR_OP_ReduceSum && strcmp(meta_type, "ReduceSum") == 0) ||
         (n->op == GIR_OP_ReduceMean && strcmp(meta_type, "ReduceMean") == 0))) {
        nnbw_simple_fn(w, n, meta_type);
        return;
    }
    const char *type = n->op == GIR_OP_ReduceSum    ? "Sum"
                       : n->op == GIR_OP_ReduceMean ? "Mean"
                       : n->op == GIR_OP_ReduceProd ? "Prod"
                       : n->op == GIR_OP_ReduceMax  ? "Max"
                                                    : "Min";
    emit_reduce_fn(w, n, type, axes, na > 0 ? (size_t)na : 0, keep);
}

static void emit_global_pool(wctx *w, const gir_node *n)
{
    int r = nnbw_rank(w, n->in[0]);
    if (n->op == GIR_OP_GlobalAveragePool && r == 4) {
        nnbw_simple_fn(w, n, "GlobalAveragePooling");
        return;
    }
    if (r < 3) {
        nnbw_refuse(w, n, GIR_E_UNSUPPORTED_ATTR, "%s of an input of unknown rank", gir_op_name(n->op));
        return;
    }
    int64_t axes[GIR_MAX_RANK];
    for (int i = 2; i < r; i++)
        axes[i - 2] = i;
    emit_reduce_fn(w, n, n->op == GIR_OP_GlobalAveragePool ? "Mean" : "Max", axes, (size_t)r - 2, true);
}

/* The engine's access to a parameter message being written (gir_attr_io). */
static gir_status param_put(void *ctx, const char *key, gir_attr_conv conv, int64_t i, double f, bool is_default,
                            gir_error *err)
{
    (void)conv;
    (void)is_default;
    (void)err;
    nnb_field_set(ctx, key, i, f);
    return GIR_OK;
}

/* A plain row of nnb_ops: the function, and its parameter message, where
 * the function has one, with the row's attributes; one without attributes
 * is written where the file had it.  A message's inplace (ReLU's,
 * LeakyReLU's) is the node's hint. */
static void emit_plain(wctx *w, const gir_node *n, const gir_op_map *pm)
{
    Nnabla__Function *f = nnbw_simple_fn(w, n, pm->format_op);
    const ProtobufCFieldDescriptor *fd = nnb_param_field_of_type(pm->format_op);
    if (!fd || (!pm->attrs && !want_param(n)))
        return;
    ProtobufCMessage *msg = nnbw_pb_new(w, fd->descriptor);
    if (!msg)
        return;
    gir_attr_io io = { msg, NULL, param_put };
    gir_map_write_attrs(pm, &io, n, NULL);
    nnb_field_set(msg, "inplace", inplace_of(n), 0);
    nnbw_fn_param(w, f, fd->name, msg);
}

static void emit_hard_sigmoid(wctx *w, const gir_node *n)
{
    if ((float)gir_node_float(n, "alpha", 0.2) != 0.2f || (float)gir_node_float(n, "beta", 0.5) != 0.5f)
        nnbw_refuse(w, n, GIR_E_UNSUPPORTED_ATTR, "HardSigmoid with alpha/beta other than 0.2/0.5");
    else
        nnbw_simple_fn(w, n, "HardSigmoid");
}

static void emit_softplus(wctx *w, const gir_node *n)
{
    Nnabla__Function *f = nnbw_simple_fn(w, n, "SoftPlus");
    Nnabla__SoftPlusParameter *p = nnbw_pb_new(w, &nnabla__soft_plus_parameter__descriptor);
    if (p)
        p->beta = 1.0;
    nnbw_fn_param(w, f, "softplus_param", p);
}

/* The ops one emitter of their own writes; nnbw_emit_node writes the
 * others, and the plain rows of nnb_ops. */
static const struct {
    gir_op op;
    void (*emit)(wctx *w, const gir_node *n);
} emitters[] = {
    { GIR_OP_OPAQUE, nnbw_emit_opaque },
    { GIR_OP_Cast, nnbw_emit_cast },
    { GIR_OP_LRN, nnbw_emit_lrn },
    { GIR_OP_HardSigmoid, emit_hard_sigmoid },
    { GIR_OP_Softplus, emit_softplus },
    { GIR_OP_PRelu, nnbw_emit_prelu },
    { GIR_OP_Clip, emit_clip },
    { GIR_OP_Add, emit_arith },
    { GIR_OP_Sub, emit_arith },
    { GIR_OP_Mul, emit_arith },
    { GIR_OP_Div, emit_arith },
    { GIR_OP_Pow, emit_arith },
    { GIR_OP_Max, emit_variadic },
    { GIR_OP_Min, emit_variadic },
    { GIR_OP_Sum, emit_variadic },
    { GIR_OP_Mean, emit_variadic },
    { GIR_OP_Conv, emit_conv },
    { GIR_OP_ConvTranspose, emit_conv },
    { GIR_OP_MatMul, nnbw_emit_matmul },
    { GIR_OP_BatchNormalization, emit_batchnorm },
    { GIR_OP_MaxPool, emit_pool },
    { GIR_OP_AveragePool, emit_pool },
    { GIR_OP_GlobalAveragePool, emit_global_pool },
    { GIR_OP_GlobalMaxPool, emit_global_pool },
    { GIR_OP_Dropout, nnbw_emit_dropout },
    { GIR_OP_ReduceSum, emit_reduce },
    { GIR_OP_ReduceMean, emit_reduce },
    { GIR_OP_ReduceMax, emit_reduce },
    { GIR_OP_ReduceMin, emit_reduce },
    { GIR_OP_ReduceProd, emit_reduce },
    { GIR_OP_Reshape, emit_reshape },
    { GIR_OP_Flatten, emit_reshape },
    { GIR_OP_Squeeze, emit_reshape },
    { GIR_OP_Unsqueeze, emit_reshape },
    { GIR_OP_Transpose, emit_transpose },
    { GIR_OP_Concat, nnbw_emit_concat },
    { GIR_OP_Split, nnbw_emit_split },
    { GIR_OP_Slice, nnbw_emit_slice },
    { GIR_OP_Pad, nnbw_emit_pad },
    { GIR_OP_Tile, nnbw_emit_tile },
    { GIR_OP_Gather, nnbw_emit_gather },
    { GIR_OP_Resize, nnbw_emit_resize },
    { GIR_OP_ArgMax, nnbw_emit_arg },
    { GIR_OP_ArgMin, nnbw_emit_arg },
    { GIR_OP_Stack, nnbw_emit_stack },
};

void nnbw_emit_node(wctx *w, size_t ni)
{
    const gir_node *n = w->g->nodes[ni];
    w->cur = n;
    for (size_t i = 0; i < sizeof emitters / sizeof *emitters; i++)
        if (emitters[i].op == n->op) {
            emitters[i].emit(w, n);
            return;
        }
    switch (n->op) {
    case GIR_OP_Equal: nnbw_emit_compare(w, n, "Equal"); return;
    case GIR_OP_Greater: nnbw_emit_compare(w, n, "Greater"); return;
    case GIR_OP_Less: nnbw_emit_compare(w, n, "Less"); return;
    case GIR_OP_GreaterOrEqual: nnbw_emit_compare(w, n, "GreaterEqual"); return;
    case GIR_OP_LessOrEqual: nnbw_emit_compare(w, n, "LessEqual"); return;
    case GIR_OP_Neg: nnbw_emit_scalar(w, n, "MulScalar", n->in[0], -1.0, true); return;
    case GIR_OP_Sqrt: nnbw_emit_scalar(w, n, "PowScalar", n->in[0], 0.5, true); return;
    case GIR_OP_Reciprocal: nnbw_emit_scalar(w, n, "RDivScalar", n->in[0], 1.0, false); return;
    case GIR_OP_Gemm: emit_gemm(w, n, (int32_t)ni); return;
    case GIR_OP_Expand: nnbw_emit_expand(w, n, ni); return;
    default: {
        const gir_op_map *pm = gir_map_write_row(nnb_ops, n->op, NULL);
        if (pm && pm->n_in == n->n_in)
            emit_plain(w, n, pm);
        else
            nnbw_refuse(w, n, GIR_E_UNSUPPORTED_OP, "%s", gir_op_name(n->op));
        return;
    }
    }
}
