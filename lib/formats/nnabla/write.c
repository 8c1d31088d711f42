/* Writing .nnp archives (and standalone .nntxt with a parameter file).
 *
 * The graph becomes one Network and its Executor; everything else a .nnp
 * read before carried (other networks, executors, datasets, optimizers,
 * monitors, configs, unused parameters) is put back from the graph's meta.
 * Canonical operators become NNabla functions (see the table in plugin.c);
 * the whole graph is checked first and every operator or attribute that
 * NNabla cannot express is reported at once. */
#include "nnabla.h"

#include "io/h5.h"
#include "io/zip.h"
#include "passes/passes.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NNB_NONE_SENTINEL 0x7fffffff

/* A variable the writer adds (between two functions made from one node). */
typedef struct extra_var {
    char *name;
    gir_shape shape;
    const char *const *dim_names;
} extra_var;

typedef struct wctx {
    const gir_graph *g;
    gir_error *err;
    gir_unsupported *uns;
    Nnabla__Network *net;
    size_t fn_cap;
    int32_t *uses;        /* value -> consumer slots */
    uint8_t *is_output;   /* value -> graph output */
    uint8_t *needed;      /* value -> written as a variable */
    uint8_t *transpose;   /* value -> parameter written transposed */
    uint8_t *bn_stat;     /* value -> a BatchNormalization mean or variance */
    gir_shape *wshape;    /* value -> shape to declare (rank -2: the value's own) */
    uint8_t *node_done;   /* node -> emitted with another node */
    uint8_t *emitted;     /* node -> its functions are written */
    int32_t *fuse_src;    /* node -> the node it absorbs (Gemm: Flatten; BroadcastTo's Expand: Reshape), or -1 */
    int32_t *alias;       /* value -> the value whose variable stands for it (itself unless a Cast is folded) */
    size_t *use_at;       /* value v's consumers are use_node/use_slot[use_at[v] .. use_at[v + 1]) */
    int32_t *use_node;
    uint32_t *use_slot;
    gir_tensor **owned;   /* parameter data the writer converted (bool -> float32) */
    size_t n_owned, cap_owned;
    const gir_options *opts;
    extra_var *extras;
    size_t n_extras, cap_extras;
    const gir_node *cur; /* the node being written */
    bool failed_alloc;
} wctx;

/* ---- message building -------------------------------------------------- */

/* Frees a string field unless it is protobuf-c's shared empty default. */
static void str_free(char *s)
{
    if (s && s != protobuf_c_empty_string)
        free(s);
}

static char *sdup(wctx *w, const char *s)
{
    char *r = gir_strdupf("%s", s ? s : "");
    if (!r)
        w->failed_alloc = true;
    return r;
}

static void *pb_new(wctx *w, const ProtobufCMessageDescriptor *d)
{
    void *m = gir_pb_new(d);
    if (!m)
        w->failed_alloc = true;
    return m;
}

/* Appends p to a repeated field array (size_t *n, T **arr). */
static bool push_ptr(void ***arr, size_t *n, void *p)
{
    void **na = realloc(*arr, (*n + 1) * sizeof *na);
    if (!na)
        return false;
    na[(*n)++] = p;
    *arr = na;
    return true;
}

static bool push_str(wctx *w, char ***arr, size_t *n, const char *s)
{
    char *d = sdup(w, s);
    if (!d)
        return false;
    if (!push_ptr((void ***)arr, n, d)) {
        free(d);
        w->failed_alloc = true;
        return false;
    }
    return true;
}

static int64_t *dup_ints(wctx *w, const int64_t *v, size_t n)
{
    int64_t *r = malloc((n ? n : 1) * sizeof *r);
    if (!r) {
        w->failed_alloc = true;
        return NULL;
    }
    if (n)
        memcpy(r, v, n * sizeof *r);
    return r;
}

static Nnabla__Shape *shape_msg(wctx *w, const int64_t *d, size_t n)
{
    Nnabla__Shape *s = pb_new(w, &nnabla__shape__descriptor);
    if (!s)
        return NULL;
    if (n) {
        s->dim = dup_ints(w, d, n);
        if (!s->dim) {
            gir_pb_free(&s->base);
            return NULL;
        }
        s->n_dim = n;
    }
    return s;
}

/* The value whose variable stands for v: a folded Cast makes two values
 * one variable (aliases point one way, so the walk ends). */
static int32_t root(const wctx *w, int32_t v)
{
    for (size_t hops = 0; v >= 0 && w->alias && w->alias[v] != v && hops <= w->g->n_values; hops++)
        v = w->alias[v];
    return v;
}

static const char *vname(const wctx *w, int32_t idx)
{
    return w->g->values[root(w, idx)]->name;
}

static const gir_value *V(const wctx *w, int32_t idx)
{
    return idx >= 0 ? w->g->values[idx] : NULL;
}

/* Starts a function of the given type; its name is the node's (or what the
 * file it came from said), or "<node>/<type>" for additional functions. */
static Nnabla__Function *fn_new(wctx *w, const gir_node *n, const char *type, bool primary)
{
    Nnabla__Function *f = pb_new(w, &nnabla__function__descriptor);
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
    f->name = sdup(w, name);
    free(own);
    f->type = sdup(w, type);
    if (!f->name || !f->type || !push_ptr((void ***)&w->net->function, &w->net->n_function, f)) {
        w->failed_alloc = true;
        gir_pb_free(&f->base);
        return NULL;
    }
    if (primary) {
        const char *ctx = gir_attrs_get_string(&n->meta, NNB_META_CONTEXT, NULL);
        if (ctx) {
            gir_error e = GIR_ERROR_INIT;
            ProtobufCMessage *c = NULL;
            if (gir_pbtext_parse(&nnabla__context__descriptor, ctx, strlen(ctx), &c, &e) == GIR_OK)
                f->context = (Nnabla__Context *)c;
            gir_error_clear(&e);
        }
        const gir_attr *rid = gir_attrs_find(&n->meta, NNB_META_REPEAT_ID);
        if (rid && rid->type == GIR_ATTR_STRINGS)
            for (size_t i = 0; i < rid->u.strs.n; i++)
                push_str(w, &f->repeat_id, &f->n_repeat_id, rid->u.strs.v[i]);
    }
    return f;
}

static void fn_in(wctx *w, Nnabla__Function *f, int32_t v)
{
    if (!f || v < 0)
        return;
    w->needed[root(w, v)] = 1;
    push_str(w, &f->input, &f->n_input, vname(w, v));
}

static void fn_in_name(wctx *w, Nnabla__Function *f, const char *name)
{
    if (f)
        push_str(w, &f->input, &f->n_input, name);
}

static void fn_out(wctx *w, Nnabla__Function *f, int32_t v)
{
    if (!f || v < 0)
        return;
    w->needed[root(w, v)] = 1;
    push_str(w, &f->output, &f->n_output, vname(w, v));
}

static void fn_out_name(wctx *w, Nnabla__Function *f, const char *name)
{
    if (f)
        push_str(w, &f->output, &f->n_output, name);
}

/* Sets f's parameter message (by oneof field name); frees msg if f is NULL. */
static void fn_param(wctx *w, Nnabla__Function *f, const char *field, void *msg)
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
static const char *extra_variable(wctx *w, const gir_node *n, const char *suffix, const gir_shape *shape,
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

/* ---- reporting -------------------------------------------------------- */

static void refuse(wctx *w, const gir_node *n, gir_status code, const char *fmt, ...) GIR_PRINTF(4, 5);
static void refuse(wctx *w, const gir_node *n, gir_status code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *what = gir_vstrdupf(fmt, ap);
    va_end(ap);
    gir_unsupported_add(w->uns, code, what ? what : gir_op_name(n->op), n->name);
    free(what);
}

/* ---- value facts ------------------------------------------------------ */

static bool single_use(const wctx *w, int32_t v)
{
    return v >= 0 && w->uses[v] == 1 && !w->is_output[v];
}

/* A constant holding one number. */
static bool scalar_const(const wctx *w, int32_t v, double *out)
{
    const gir_value *x = V(w, v);
    if (!x || x->kind != GIR_VALUE_CONST || !x->data || gir_shape_numel(&x->data->shape) != 1)
        return false;
    gir_tensor *t = x->data;
    bool loaded = t->data != NULL;
    const void *p;
    gir_error e = GIR_ERROR_INIT;
    if (gir_tensor_load(t, &p, &e)) {
        gir_error_clear(&e);
        return false;
    }
    bool ok = true;
    switch (t->dtype) {
    case GIR_DT_F32: {
        float f;
        memcpy(&f, p, 4);
        *out = f;
        break;
    }
    case GIR_DT_F64:
        memcpy(out, p, 8);
        break;
    default:
        ok = false;
    }
    if (!loaded)
        gir_tensor_unload(t);
    return ok;
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

static int rank(const wctx *w, int32_t v)
{
    const gir_value *x = V(w, v);
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

/* ---- functions per operator ---------------------------------------------- */

static Nnabla__Function *simple_fn(wctx *w, const gir_node *n, const char *type)
{
    Nnabla__Function *f = fn_new(w, n, type, true);
    for (size_t i = 0; i < n->n_in; i++)
        fn_in(w, f, n->in[i]);
    for (size_t i = 0; i < n->n_out; i++)
        fn_out(w, f, n->out[i]);
    return f;
}

static void emit_relu(wctx *w, const gir_node *n)
{
    Nnabla__Function *f = simple_fn(w, n, "ReLU");
    if (!want_param(n))
        return;
    Nnabla__ReLUParameter *p = pb_new(w, &nnabla__re_luparameter__descriptor);
    if (p)
        p->inplace = inplace_of(n);
    fn_param(w, f, "relu_param", p);
}

/* The parameter message of nnabla's *Scalar function `type` (AddScalar,
 * RSubScalar, EqualScalar, ...): its val, and its inplace where the message
 * has one; *field is the message's field of Function.  NULL when out of
 * memory (failed_alloc set) or when `type` has no such message. */
static ProtobufCMessage *scalar_msg(wctx *w, const char *type, double val, bool inplace, const char **field)
{
    char want[64];
    snprintf(want, sizeof want, "%sParameter", type);
    const ProtobufCMessageDescriptor *fn = &nnabla__function__descriptor;
    for (unsigned i = 0; i < fn->n_fields; i++) {
        const ProtobufCFieldDescriptor *fd = &fn->fields[i];
        const ProtobufCMessageDescriptor *md = fd->descriptor;
        if (fd->type != PROTOBUF_C_TYPE_MESSAGE || strcmp(md->short_name, want) != 0)
            continue;
        ProtobufCMessage *m = pb_new(w, md);
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
static void emit_scalar(wctx *w, const gir_node *n, const char *type, int32_t x, double v, bool inplace_ok)
{
    Nnabla__Function *f = fn_new(w, n, type, true);
    fn_in(w, f, x);
    fn_out(w, f, n->out[0]);
    if (!f)
        return;
    const char *field = NULL;
    ProtobufCMessage *pm = scalar_msg(w, type, scalar_val(n, v), inplace_of(n) && inplace_ok, &field);
    fn_param(w, f, field, pm);
}

/* Makes operand v usable by an equal-rank nnabla binary function: a
 * Reshape adds leading 1s when its rank is lower than the other's. */
static const char *align_rank(wctx *w, const gir_node *n, int32_t v, int other_rank, const char *suffix)
{
    const gir_value *x = V(w, v);
    if (!x || x->shape.rank < 0 || other_rank < 0 || x->shape.rank >= other_rank)
        return NULL;
    int64_t dims[GIR_MAX_RANK];
    gir_shape s = { other_rank, { 0 } };
    int lead = other_rank - x->shape.rank;
    for (int i = 0; i < other_rank; i++)
        s.dims[i] = i < lead ? 1 : x->shape.dims[i - lead];
    if (!reshape_dims(&s, dims))
        return NULL;
    const char *name = extra_variable(w, n, suffix, &s, NULL);
    /* Named NODE/Reshape_K (fn_new names a helper after its type), but of
     * type Reshape. */
    Nnabla__Function *f = fn_new(w, n, suffix, false);
    if (f) {
        str_free(f->type);
        f->type = sdup(w, "Reshape");
        if (!f->type)
            w->failed_alloc = true;
    }
    fn_in(w, f, v);
    fn_out_name(w, f, name);
    Nnabla__ReshapeParameter *p = pb_new(w, &nnabla__reshape_parameter__descriptor);
    if (p) {
        p->shape = shape_msg(w, dims, (size_t)other_rank);
        p->inplace = true;
    }
    fn_param(w, f, "reshape_param", p);
    return name;
}

static void emit_binary(wctx *w, const gir_node *n, const char *type, const char *field,
                        const ProtobufCMessageDescriptor *pd)
{
    int32_t a = n->in[0], b = n->in[1];
    int ra = rank(w, a), rb = rank(w, b);
    if (ra >= 0 && rb >= 0 && ra != rb) {
        const gir_value *lo = V(w, ra < rb ? a : b);
        int64_t dims[GIR_MAX_RANK];
        if (!reshape_dims(&lo->shape, dims)) {
            refuse(w, n, GIR_E_UNSUPPORTED_ATTR, "%s of ranks %d and %d with unknown dimensions", gir_op_name(n->op),
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
    Nnabla__Function *f = fn_new(w, n, t, true);
    if (ga)
        fn_in_name(w, f, ga);
    else
        fn_in(w, f, a);
    if (gb)
        fn_in_name(w, f, gb);
    else
        fn_in(w, f, b);
    fn_out(w, f, n->out[0]);
    if (!want_param(n) || !field)
        return;
    /* every X2 parameter message is { bool inplace = 1; } */
    ProtobufCMessage *p = pb_new(w, pd);
    if (p && inplace_of(n))
        *(protobuf_c_boolean *)((char *)p + pd->fields[0].offset) = 1;
    fn_param(w, f, field, p);
}

static void emit_arith(wctx *w, const gir_node *n)
{
    double c;
    int32_t a = n->in[0], b = n->in[1];
    bool cb = scalar_const(w, b, &c), ca = !cb && scalar_const(w, a, &c);
    switch (n->op) {
    case GIR_OP_Add:
        if (cb || ca) {
            emit_scalar(w, n, "AddScalar", cb ? a : b, c, true);
            return;
        }
        emit_binary(w, n, "Add2", "add2_param", &nnabla__add2_parameter__descriptor);
        return;
    case GIR_OP_Sub:
        if (cb) {
            emit_scalar(w, n, "AddScalar", a, -c, true);
            return;
        }
        if (ca) {
            emit_scalar(w, n, "RSubScalar", b, c, false);
            return;
        }
        emit_binary(w, n, "Sub2", "sub2_param", &nnabla__sub2_parameter__descriptor);
        return;
    case GIR_OP_Mul:
        if (cb || ca) {
            emit_scalar(w, n, "MulScalar", cb ? a : b, c, true);
            return;
        }
        emit_binary(w, n, "Mul2", "mul2_param", &nnabla__mul2_parameter__descriptor);
        return;
    case GIR_OP_Div:
        if (ca) {
            emit_scalar(w, n, "RDivScalar", b, c, false);
            return;
        }
        emit_binary(w, n, "Div2", "div2_param", &nnabla__div2_parameter__descriptor);
        return;
    case GIR_OP_Pow:
        if (cb) {
            emit_scalar(w, n, "PowScalar", a, c, true);
            return;
        }
        if (ca) {
            emit_scalar(w, n, "RPowScalar", b, c, false);
            return;
        }
        emit_binary(w, n, "Pow2", "pow2_param", &nnabla__pow2_parameter__descriptor);
        return;
    default:
        return;
    }
}

static void emit_clip(wctx *w, const gir_node *n)
{
    const gir_attr *lo = gir_attrs_find(&n->attrs, "min"), *hi = gir_attrs_find(&n->attrs, "max");
    const char *type = gir_attrs_get_string(&n->meta, NNB_META_TYPE, "");
    double l = lo ? lo->u.f : -INFINITY, h = hi ? hi->u.f : INFINITY;
    if (lo && hi && l == 0.0 && h == 6.0 && strcmp(type, "HardTanh") != 0) {
        simple_fn(w, n, "ReLU6");
        return;
    }
    if (lo && hi && l == -1.0 && h == 1.0) {
        simple_fn(w, n, "HardTanh");
        return;
    }
    if (!lo && !hi) {
        simple_fn(w, n, "Identity");
        return;
    }
    if (!lo) {
        emit_scalar(w, n, "MinimumScalar", n->in[0], h, false);
        return;
    }
    if (!hi) {
        emit_scalar(w, n, "MaximumScalar", n->in[0], l, false);
        return;
    }
    /* both bounds: MaximumScalar then MinimumScalar */
    const gir_value *y = V(w, n->out[0]);
    const char *mid = extra_variable(w, n, "MaximumScalar_out", y ? &y->shape : NULL, y ? y->dim_names : NULL);
    Nnabla__Function *f = fn_new(w, n, "MaximumScalar", false);
    fn_in(w, f, n->in[0]);
    fn_out_name(w, f, mid);
    Nnabla__MaximumScalarParameter *p = pb_new(w, &nnabla__maximum_scalar_parameter__descriptor);
    if (p)
        p->val = l;
    fn_param(w, f, "maximum_scalar_param", p);
    Nnabla__Function *g = fn_new(w, n, "MinimumScalar", true);
    fn_in_name(w, g, mid);
    fn_out(w, g, n->out[0]);
    Nnabla__MinimumScalarParameter *q = pb_new(w, &nnabla__minimum_scalar_parameter__descriptor);
    if (q)
        q->val = h;
    fn_param(w, g, "minimum_scalar_param", q);
}

/* Chains a variadic Max/Min/Sum pairwise. */
static void emit_chain(wctx *w, const gir_node *n, const char *type)
{
    const char *prev = NULL;
    const gir_value *y = V(w, n->out[0]);
    for (size_t i = 1; i < n->n_in; i++) {
        bool last = i + 1 == n->n_in;
        char suffix[64];
        snprintf(suffix, sizeof suffix, "%s_%zu", type, i);
        Nnabla__Function *f = fn_new(w, n, last ? type : suffix, last);
        if (f && !last) {
            str_free(f->type);
            f->type = sdup(w, type);
        }
        if (prev)
            fn_in_name(w, f, prev);
        else
            fn_in(w, f, n->in[0]);
        fn_in(w, f, n->in[i]);
        if (last) {
            fn_out(w, f, n->out[0]);
        } else {
            snprintf(suffix, sizeof suffix, "%s_%zu_out", type, i);
            prev = extra_variable(w, n, suffix, y ? &y->shape : NULL, y ? y->dim_names : NULL);
            fn_out_name(w, f, prev);
        }
    }
}

static void emit_variadic(wctx *w, const gir_node *n)
{
    if (n->n_in == 1) {
        simple_fn(w, n, "Identity");
        return;
    }
    switch (n->op) {
    case GIR_OP_Sum:
        simple_fn(w, n, "AddN");
        return;
    case GIR_OP_Max:
        emit_chain(w, n, "Maximum2");
        return;
    case GIR_OP_Min:
        emit_chain(w, n, "Minimum2");
        return;
    default:
        refuse(w, n, GIR_E_UNSUPPORTED_OP, "Mean of %zu inputs", n->n_in);
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
    const gir_value *wt = V(w, n->in[1]);
    if (!wt || wt->shape.rank < 3) {
        refuse(w, n, GIR_E_UNSUPPORTED_ATTR, "%s whose weight rank is unknown", gir_op_name(n->op));
        return;
    }
    size_t ns = (size_t)wt->shape.rank - 2;
    int64_t k[GIR_MAX_RANK], s[GIR_MAX_RANK], d[GIR_MAX_RANK], p[2 * GIR_MAX_RANK], op[GIR_MAX_RANK];
    if (!auto_pad_ok(n)) {
        refuse(w, n, GIR_E_UNSUPPORTED_ATTR, "%s with auto_pad=%s", gir_op_name(n->op),
               gir_node_string(n, "auto_pad", ""));
        return;
    }
    if (!spatial_attr(n, "kernel_shape", ns, -1, k) || !spatial_attr(n, "strides", ns, 1, s) ||
        !spatial_attr(n, "dilations", ns, 1, d) || !spatial_attr(n, "pads", 2 * ns, 0, p) ||
        !spatial_attr(n, "output_padding", ns, 0, op)) {
        refuse(w, n, GIR_E_UNSUPPORTED_ATTR, "%s with spatial attributes of the wrong length", gir_op_name(n->op));
        return;
    }
    for (size_t i = 0; i < ns; i++) {
        if (k[i] >= 0 && wt->shape.dims[2 + i] >= 0 && k[i] != wt->shape.dims[2 + i]) {
            refuse(w, n, GIR_E_UNSUPPORTED_ATTR, "%s with kernel_shape other than the weight's", gir_op_name(n->op));
            return;
        }
        if (p[i] != p[ns + i]) {
            refuse(w, n, GIR_E_UNSUPPORTED_ATTR, "%s with asymmetric pads", gir_op_name(n->op));
            return;
        }
    }
    if (tr && gir_attrs_find(&n->attrs, "output_shape")) {
        refuse(w, n, GIR_E_UNSUPPORTED_ATTR, "ConvTranspose with output_shape");
        return;
    }
    int64_t group = gir_node_int(n, "group", 1);
    /* a weight declared (C', K...) (read from a depthwise function) */
    const int64_t *decl;
    ptrdiff_t kd = gir_attrs_get_ints(&wt->meta, NNB_META_SHAPE, &decl);
    if (kd == wt->shape.rank - 1 && wt->shape.dims[1] == 1) {
        const gir_value *x = V(w, n->in[0]);
        int64_t c = x && x->shape.rank >= 2 ? x->shape.dims[1] : -1;
        if (c != group || (tr && wt->shape.dims[0] != c) || (!tr && wt->shape.dims[0] % c != 0)) {
            refuse(w, n, GIR_E_UNSUPPORTED_ATTR, "%s whose weight is declared without its channel axis but is not "
                   "depthwise", gir_op_name(n->op));
            return;
        }
        bool opad_zero = true;
        for (size_t i = 0; i < ns; i++)
            opad_zero &= op[i] == 0;
        if (tr && !opad_zero) {
            refuse(w, n, GIR_E_UNSUPPORTED_ATTR, "a depthwise ConvTranspose with output_padding");
            return;
        }
        Nnabla__Function *f = simple_fn(w, n, tr ? "DepthwiseDeconvolution" : "DepthwiseConvolution");
        if (tr) {
            Nnabla__DepthwiseDeconvolutionParameter *q =
                pb_new(w, &nnabla__depthwise_deconvolution_parameter__descriptor);
            if (q) {
                q->base_axis = 1;
                q->pad = shape_msg(w, p, ns);
                q->stride = shape_msg(w, s, ns);
                q->dilation = shape_msg(w, d, ns);
                q->divisor = 1;
            }
            fn_param(w, f, "depthwise_deconvolution_param", q);
        } else {
            Nnabla__DepthwiseConvolutionParameter *q = pb_new(w, &nnabla__depthwise_convolution_parameter__descriptor);
            if (q) {
                q->base_axis = 1;
                q->pad = shape_msg(w, p, ns);
                q->stride = shape_msg(w, s, ns);
                q->dilation = shape_msg(w, d, ns);
                q->multiplier = wt->shape.dims[0] / c;
            }
            fn_param(w, f, "depthwise_convolution_param", q);
        }
        return;
    }
    Nnabla__Function *f = simple_fn(w, n, tr ? "Deconvolution" : "Convolution");
    if (tr) {
        Nnabla__DeconvolutionParameter *q = pb_new(w, &nnabla__deconvolution_parameter__descriptor);
        if (q) {
            q->base_axis = 1;
            q->pad = shape_msg(w, p, ns);
            q->stride = shape_msg(w, s, ns);
            q->dilation = shape_msg(w, d, ns);
            q->group = group;
            q->output_padding = shape_msg(w, op, ns);
        }
        fn_param(w, f, "deconvolution_param", q);
    } else {
        Nnabla__ConvolutionParameter *q = pb_new(w, &nnabla__convolution_parameter__descriptor);
        if (q) {
            q->base_axis = 1;
            q->pad = shape_msg(w, p, ns);
            q->stride = shape_msg(w, s, ns);
            q->dilation = shape_msg(w, d, ns);
            q->group = group;
        }
        fn_param(w, f, "convolution_param", q);
    }
}

/* Gemm -> Affine (weight in x out); a Flatten feeding only this Gemm is
 * absorbed as Affine's base_axis. */
static bool gemm_fusable_flatten(const wctx *w, const gir_node *gemm, int32_t *flatten_node, int64_t *axis)
{
    int32_t a = gemm->in[0];
    const gir_value *x = V(w, a);
    if (!x || x->producer < 0 || !single_use(w, a))
        return false;
    const gir_node *fl = w->g->nodes[x->producer];
    if (fl->op != GIR_OP_Flatten)
        return false;
    int64_t ax = gir_node_int(fl, "axis", 1);
    int r = rank(w, fl->in[0]);
    /* The Flatten an nnabla Affine implied is absorbed again; another
     * Flatten stays a function (a Reshape) unless its shape is unknown,
     * when Affine's own flattening is the only way to write it. */
    if (!gir_attrs_find(&fl->meta, NNB_META_FUSED)) {
        const gir_value *in = V(w, fl->in[0]);
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

static bool gemm_check(wctx *w, const gir_node *n, bool report)
{
    const char *why = NULL;
    if (gir_node_float(n, "alpha", 1.0) != 1.0)
        why = "Gemm with alpha other than 1";
    else if (n->n_in == 3 && n->in[2] >= 0 && gir_node_float(n, "beta", 1.0) != 1.0)
        why = "Gemm with beta other than 1";
    else if (gir_node_int(n, "transA", 0))
        why = "Gemm with transA=1";
    else if (rank(w, n->in[1]) != 2)
        why = "Gemm whose B is not a matrix of known rank";
    else if (n->n_in == 3 && n->in[2] >= 0 && rank(w, n->in[2]) != 1)
        why = "Gemm whose bias C is not a vector";
    if (why && report)
        refuse(w, n, GIR_E_UNSUPPORTED_ATTR, "%s", why);
    return why == NULL;
}

static void emit_gemm(wctx *w, const gir_node *n, int32_t self)
{
    if (!gemm_check(w, n, true))
        return;
    int32_t b = n->in[1];
    const char *bname = NULL;
    if (gir_node_int(n, "transB", 0)) {
        const gir_value *bv0 = V(w, b);
        if (bv0->kind == GIR_VALUE_WEIGHT || bv0->kind == GIR_VALUE_CONST) {
            /* written transposed: every user reads it so (see plan) */
        } else {
            const gir_value *bv = V(w, b);
            gir_shape ts = { 2, { bv->shape.dims[1], bv->shape.dims[0] } };
            bname = extra_variable(w, n, "Transpose_out", &ts, NULL);
            Nnabla__Function *t = fn_new(w, n, "Transpose", false);
            fn_in(w, t, b);
            fn_out_name(w, t, bname);
            Nnabla__TransposeParameter *tp = pb_new(w, &nnabla__transpose_parameter__descriptor);
            if (tp) {
                static const int64_t swap[2] = { 1, 0 };
                tp->axes = dup_ints(w, swap, 2);
                tp->n_axes = tp->axes ? 2 : 0;
            }
            fn_param(w, t, "transpose_param", tp);
        }
    }
    int32_t a = n->in[0];
    int64_t base_axis = 1;
    int32_t src = w->fuse_src[self];
    if (src >= 0) {
        a = w->g->nodes[src]->in[0];
    } else if (rank(w, a) != 2 && rank(w, a) >= 0) {
        refuse(w, n, GIR_E_UNSUPPORTED_ATTR, "Gemm whose A is not a matrix");
        return;
    }
    Nnabla__Function *f = fn_new(w, n, "Affine", true);
    fn_in(w, f, a);
    if (bname)
        fn_in_name(w, f, bname);
    else
        fn_in(w, f, b);
    if (n->n_in == 3 && n->in[2] >= 0)
        fn_in(w, f, n->in[2]);
    fn_out(w, f, n->out[0]);
    Nnabla__AffineParameter *p = pb_new(w, &nnabla__affine_parameter__descriptor);
    if (p)
        p->base_axis = base_axis;
    fn_param(w, f, "affine_param", p);
}

static void emit_reshape_to(wctx *w, const gir_node *n, const int64_t *dims, size_t k)
{
    Nnabla__Function *f = fn_new(w, n, "Reshape", true);
    fn_in(w, f, n->in[0]);
    fn_out(w, f, n->out[0]);
    if (!want_param(n))
        return;
    Nnabla__ReshapeParameter *p = pb_new(w, &nnabla__reshape_parameter__descriptor);
    if (p) {
        p->shape = shape_msg(w, dims, k);
        p->inplace = gir_attrs_find(&n->meta, NNB_META_INPLACE) ? inplace_of(n) : true;
    }
    fn_param(w, f, "reshape_param", p);
}

static void emit_reshape(wctx *w, const gir_node *n)
{
    int64_t dims[GIR_MAX_RANK];
    size_t k = 0;
    if (n->op == GIR_OP_Reshape) {
        const int64_t *s;
        ptrdiff_t ks = gir_attrs_get_ints(&n->attrs, "shape", &s);
        if (ks < 0 || ks > GIR_MAX_RANK) {
            refuse(w, n, GIR_E_UNSUPPORTED_ATTR, "Reshape without a shape attribute");
            return;
        }
        bool allowzero = gir_node_int(n, "allowzero", 0) != 0;
        const gir_value *x = V(w, n->in[0]);
        for (ptrdiff_t i = 0; i < ks; i++) {
            dims[i] = s[i];
            if (s[i] == 0 && !allowzero) {
                /* ONNX's "copy this dimension": nnabla has none */
                if (!x || x->shape.rank <= i || x->shape.dims[i] < 0) {
                    refuse(w, n, GIR_E_UNSUPPORTED_ATTR, "Reshape copying an unknown dimension (0 in shape)");
                    return;
                }
                dims[i] = x->shape.dims[i];
            }
        }
        k = (size_t)ks;
    } else {
        /* Flatten, Squeeze, Unsqueeze: the output's shape */
        const gir_value *y = V(w, n->out[0]);
        const gir_value *x = V(w, n->in[0]);
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
                refuse(w, n, GIR_E_UNSUPPORTED_ATTR, "Flatten of a shape with unknown dimensions on both sides");
                return;
            }
            dims[0] = ua ? -1 : a;
            dims[1] = ub ? -1 : b;
            k = 2;
        } else if (!y || !reshape_dims(&y->shape, dims)) {
            refuse(w, n, GIR_E_UNSUPPORTED_ATTR, "%s whose output shape is not known", gir_op_name(n->op));
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
        int r = rank(w, n->in[0]);
        if (r < 0) {
            refuse(w, n, GIR_E_UNSUPPORTED_ATTR, "Transpose without perm of an input of unknown rank");
            return;
        }
        for (int i = 0; i < r; i++)
            rev[i] = r - 1 - i;
        perm = rev;
        k = r;
    }
    Nnabla__Function *f = simple_fn(w, n, "Transpose");
    Nnabla__TransposeParameter *p = pb_new(w, &nnabla__transpose_parameter__descriptor);
    if (p) {
        p->axes = dup_ints(w, perm, (size_t)k);
        p->n_axes = p->axes ? (size_t)k : 0;
    }
    fn_param(w, f, "transpose_param", p);
}

static void emit_softmax(wctx *w, const gir_node *n)
{
    bool log = n->op == GIR_OP_LogSoftmax;
    Nnabla__Function *f = simple_fn(w, n, log ? "LogSoftmax" : "Softmax");
    int64_t axis = gir_node_int(n, "axis", -1);
    if (log) {
        Nnabla__LogSoftmaxParameter *p = pb_new(w, &nnabla__log_softmax_parameter__descriptor);
        if (p)
            p->axis = axis;
        fn_param(w, f, "log_softmax_param", p);
    } else {
        Nnabla__SoftmaxParameter *p = pb_new(w, &nnabla__softmax_parameter__descriptor);
        if (p)
            p->axis = axis;
        fn_param(w, f, "softmax_param", p);
    }
}

static void emit_batchnorm(wctx *w, const gir_node *n)
{
    int r = rank(w, n->in[0]);
    const gir_value *x = V(w, n->in[0]);
    for (size_t i = 1; i < 5; i++) {
        int32_t v = n->in[i];
        const gir_value *pv = V(w, v);
        if (!pv || (pv->kind != GIR_VALUE_WEIGHT && pv->kind != GIR_VALUE_CONST)) {
            refuse(w, n, GIR_E_UNSUPPORTED_ATTR, "BatchNormalization whose statistics or scale are computed");
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
                refuse(w, n, GIR_E_UNSUPPORTED_ATTR, "BatchNormalization of an input of unknown rank");
                return;
            }
            s.rank = r;
            for (int d = 0; d < r; d++)
                s.dims[d] = d == 1 ? c : 1;
        }
        if (w->wshape[v].rank != -2 && !gir_shape_equal(&w->wshape[v], &s)) {
            refuse(w, n, GIR_E_UNSUPPORTED_ATTR, "BatchNormalization parameter '%s' shared with another shape",
                   pv->name);
            return;
        }
        w->wshape[v] = s;
        if (i >= 3)
            w->bn_stat[v] = 1;
    }
    (void)x;
    Nnabla__Function *f = fn_new(w, n, "BatchNormalization", true);
    fn_in(w, f, n->in[0]);
    fn_in(w, f, n->in[2]); /* beta */
    fn_in(w, f, n->in[1]); /* gamma */
    fn_in(w, f, n->in[3]);
    fn_in(w, f, n->in[4]);
    fn_out(w, f, n->out[0]);
    Nnabla__BatchNormalizationParameter *p = pb_new(w, &nnabla__batch_normalization_parameter__descriptor);
    if (p) {
        static const int64_t one = 1;
        p->axes = dup_ints(w, &one, 1);
        p->n_axes = p->axes ? 1 : 0;
        p->decay_rate = (float)gir_node_float(n, "momentum", 0.9);
        p->eps = (float)gir_node_float(n, "epsilon", 1e-5);
        p->batch_stat = false;
    }
    fn_param(w, f, "batch_normalization_param", p);
}

static void emit_pool(wctx *w, const gir_node *n)
{
    bool avg = n->op == GIR_OP_AveragePool;
    const gir_value *x = V(w, n->in[0]);
    const int64_t *kv;
    ptrdiff_t ks = gir_attrs_get_ints(&n->attrs, "kernel_shape", &kv);
    if (ks <= 0 || ks > GIR_MAX_RANK - 2 || !x || (x->shape.rank >= 0 && x->shape.rank != (int)ks + 2)) {
        refuse(w, n, GIR_E_UNSUPPORTED_ATTR, "%s over other than the axes after (N, C)", gir_op_name(n->op));
        return;
    }
    size_t ns = (size_t)ks;
    int64_t k[GIR_MAX_RANK], s[GIR_MAX_RANK], d[GIR_MAX_RANK], p[2 * GIR_MAX_RANK];
    memcpy(k, kv, ns * sizeof *k);
    if (!auto_pad_ok(n) || !spatial_attr(n, "strides", ns, 1, s) || !spatial_attr(n, "pads", 2 * ns, 0, p) ||
        !spatial_attr(n, "dilations", ns, 1, d)) {
        refuse(w, n, GIR_E_UNSUPPORTED_ATTR, "%s with auto_pad or malformed spatial attributes", gir_op_name(n->op));
        return;
    }
    for (size_t i = 0; i < ns; i++)
        if (d[i] != 1) {
            refuse(w, n, GIR_E_UNSUPPORTED_ATTR, "%s with dilations", gir_op_name(n->op));
            return;
        }
    if (!avg && n->n_out > 1 && n->out[1] >= 0 && (w->uses[n->out[1]] || w->is_output[n->out[1]])) {
        refuse(w, n, GIR_E_UNSUPPORTED_ATTR, "MaxPool with its Indices output used");
        return;
    }
    bool ceil_mode = gir_node_int(n, "ceil_mode", 0) != 0;
    bool incl = avg && gir_node_int(n, "count_include_pad", 0) != 0;
    /* plan() folded the product by the window size: nnabla's SumPooling */
    bool sum = avg && root(w, n->out[0]) != n->out[0];
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
        refuse(w, n, GIR_E_UNSUPPORTED_ATTR, "%s whose padding and rounding nnabla cannot reproduce",
               gir_op_name(n->op));
        return;
    }
    Nnabla__Function *f = fn_new(w, n, sum ? "SumPooling" : avg ? "AveragePooling" : "MaxPooling", true);
    fn_in(w, f, n->in[0]);
    fn_out(w, f, n->out[0]);
    if (sum) {
        Nnabla__SumPoolingParameter *q = pb_new(w, &nnabla__sum_pooling_parameter__descriptor);
        if (q) {
            q->kernel = shape_msg(w, k, ns);
            q->stride = shape_msg(w, s, ns);
            q->ignore_border = as_true;
            q->pad = shape_msg(w, p, ns);
        }
        fn_param(w, f, "sum_pooling_param", q);
    } else if (avg) {
        Nnabla__AveragePoolingParameter *q = pb_new(w, &nnabla__average_pooling_parameter__descriptor);
        if (q) {
            q->kernel = shape_msg(w, k, ns);
            q->stride = shape_msg(w, s, ns);
            q->ignore_border = as_true;
            q->pad = shape_msg(w, p, ns);
            q->including_pad = incl;
        }
        fn_param(w, f, "average_pooling_param", q);
    } else {
        Nnabla__MaxPoolingParameter *q = pb_new(w, &nnabla__max_pooling_parameter__descriptor);
        if (q) {
            q->kernel = shape_msg(w, k, ns);
            q->stride = shape_msg(w, s, ns);
            q->ignore_border = as_true;
            q->pad = shape_msg(w, p, ns);
        }
        fn_param(w, f, "max_pooling_param", q);
    }
}

static void emit_reduce_fn(wctx *w, const gir_node *n, const char *type, const int64_t *axes, size_t na, bool keep)
{
    Nnabla__Function *f = fn_new(w, n, type, true);
    fn_in(w, f, n->in[0]);
    fn_out(w, f, n->out[0]);
    ProtobufCMessage *pm = NULL;
    const char *field = NULL;
    int64_t *ax = na ? dup_ints(w, axes, na) : NULL;
    if (strcmp(type, "Sum") == 0) {
        Nnabla__SumParameter *p = pb_new(w, &nnabla__sum_parameter__descriptor);
        if (p) {
            p->axes = ax, p->n_axes = ax ? na : 0, p->keep_dims = keep;
            ax = NULL;
        }
        pm = &p->base, field = "sum_param";
    } else if (strcmp(type, "Mean") == 0) {
        Nnabla__MeanParameter *p = pb_new(w, &nnabla__mean_parameter__descriptor);
        if (p) {
            p->axes = ax, p->n_axes = ax ? na : 0, p->keep_dims = keep;
            ax = NULL;
        }
        pm = &p->base, field = "mean_param";
    } else if (strcmp(type, "Prod") == 0) {
        Nnabla__ProdParameter *p = pb_new(w, &nnabla__prod_parameter__descriptor);
        if (p) {
            p->axes = ax, p->n_axes = ax ? na : 0, p->keep_dims = keep;
            ax = NULL;
        }
        pm = &p->base, field = "prod_param";
    } else if (strcmp(type, "Max") == 0) {
        Nnabla__MaxParameter *p = pb_new(w, &nnabla__max_parameter__descriptor);
        if (p) {
            p->axes = ax, p->n_axes = ax ? na : 0, p->keep_dims = keep;
            ax = NULL;
        }
        pm = &p->base, field = "max_param";
    } else if (strcmp(type, "Min") == 0) {
        Nnabla__MinParameter *p = pb_new(w, &nnabla__min_parameter__descriptor);
        if (p) {
            p->axes = ax, p->n_axes = ax ? na : 0, p->keep_dims = keep;
            ax = NULL;
        }
        pm = &p->base, field = "min_param";
    }
    free(ax);
    if (field && pm)
        fn_param(w, f, field, pm);
}

static void emit_reduce(wctx *w, const gir_node *n)
{
    const int64_t *axes;
    ptrdiff_t na = gir_attrs_get_ints(&n->attrs, "axes", &axes);
    bool keep = gir_node_int(n, "keepdims", 1) != 0;
    if (na <= 0 && n->op == GIR_OP_ReduceSum && gir_node_int(n, "noop_with_empty_axes", 0)) {
        simple_fn(w, n, "Identity");
        return;
    }
    const char *meta_type = gir_attrs_get_string(&n->meta, NNB_META_TYPE, NULL);
    if (meta_type && na <= 0 && !keep &&
        ((n->op == GIR_OP_ReduceSum && strcmp(meta_type, "ReduceSum") == 0) ||
         (n->op == GIR_OP_ReduceMean && strcmp(meta_type, "ReduceMean") == 0))) {
        simple_fn(w, n, meta_type);
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
    int r = rank(w, n->in[0]);
    if (n->op == GIR_OP_GlobalAveragePool && r == 4) {
        simple_fn(w, n, "GlobalAveragePooling");
        return;
    }
    if (r < 3) {
        refuse(w, n, GIR_E_UNSUPPORTED_ATTR, "%s of an input of unknown rank", gir_op_name(n->op));
        return;
    }
    int64_t axes[GIR_MAX_RANK];
    for (int i = 2; i < r; i++)
        axes[i - 2] = i;
    emit_reduce_fn(w, n, n->op == GIR_OP_GlobalAveragePool ? "Mean" : "Max", axes, (size_t)r - 2, true);
}

static void emit_concat(wctx *w, const gir_node *n)
{
    Nnabla__Function *f = simple_fn(w, n, "Concatenate");
    Nnabla__ConcatenateParameter *p = pb_new(w, &nnabla__concatenate_parameter__descriptor);
    if (p)
        p->axis = gir_node_int(n, "axis", 0);
    fn_param(w, f, "concatenate_param", p);
}

static Nnabla__Function *chain_fn(wctx *w, const gir_node *n, const char *type, const char *name, int32_t in,
                                  const char *in_name, const char *out_name);

/* PRelu: one shared slope, or a slope (C, 1, ..., 1) per channel of axis
 * rank(x) - rank(slope), which nnabla takes as (C,) with that base_axis
 * (a Reshape of the slope first). */
static void emit_prelu(wctx *w, const gir_node *n)
{
    const gir_value *s = V(w, n->in[1]);
    const gir_value *x = V(w, n->in[0]);
    int64_t c = s ? gir_shape_numel(&s->shape) : -1;
    int64_t base_axis = 1;
    const char *slope = NULL;
    int32_t sr = root(w, n->in[1]);
    if (sr != n->in[1] && V(w, sr) && V(w, sr)->shape.rank == 1) {
        /* the slope is an absorbed Unsqueeze (axes 1..k) of a (C,) slope:
         * PReLU of channel axis 1 takes the (C,) itself */
        c = gir_shape_numel(&V(w, sr)->shape);
    } else if (c != 1) {
        int rs = s ? s->shape.rank : -1, rx = x ? x->shape.rank : -1;
        bool ok = rs >= 1 && rx >= rs && c == s->shape.dims[0] && c >= 1;
        for (int i = 1; ok && i < rs; i++)
            ok = s->shape.dims[i] == 1;
        if (!ok || x->shape.dims[rx - rs] != c) {
            refuse(w, n, GIR_E_UNSUPPORTED_ATTR, "PRelu with a slope that is neither one value nor one per channel");
            return;
        }
        base_axis = rx - rs;
        const int64_t *decl;
        bool declared_c = gir_attrs_get_ints(&s->meta, NNB_META_SHAPE, &decl) == 1 && decl[0] == c;
        if (rs != 1 && !declared_c) {
            gir_shape cs = { 1, { c } };
            slope = extra_variable(w, n, "slope_channels", &cs, NULL);
            Nnabla__Function *rf = chain_fn(w, n, "Reshape", "slope_reshape", n->in[1], NULL, slope);
            Nnabla__ReshapeParameter *rp = pb_new(w, &nnabla__reshape_parameter__descriptor);
            if (rp) {
                rp->shape = pb_new(w, &nnabla__shape__descriptor);
                if (rp->shape) {
                    rp->shape->dim = dup_ints(w, &c, 1);
                    rp->shape->n_dim = rp->shape->dim ? 1 : 0;
                }
                rp->inplace = 1;
            }
            fn_param(w, rf, "reshape_param", rp);
        }
    }
    Nnabla__Function *f = fn_new(w, n, "PReLU", true);
    fn_in(w, f, n->in[0]);
    if (slope)
        fn_in_name(w, f, slope);
    else
        fn_in(w, f, n->in[1]);
    fn_out(w, f, n->out[0]);
    Nnabla__PReLUParameter *p = pb_new(w, &nnabla__pre_luparameter__descriptor);
    if (p)
        p->base_axis = base_axis;
    fn_param(w, f, "prelu_param", p);
}

/* ArgMax / ArgMin: Max / Min with only_index over the one axis (nnabla
 * keeps the first of equal extremes, as select_last_index=0 does). */
static void emit_arg(wctx *w, const gir_node *n)
{
    if (gir_node_int(n, "select_last_index", 0)) {
        refuse(w, n, GIR_E_UNSUPPORTED_ATTR, "%s with select_last_index=1 (nnabla gives the first index of ties)",
               gir_op_name(n->op));
        return;
    }
    int64_t axis = gir_node_int(n, "axis", 0);
    int r = rank(w, n->in[0]);
    if (axis < 0 && r >= 0)
        axis += r;
    if (axis < 0) {
        refuse(w, n, GIR_E_UNSUPPORTED_ATTR, "%s of a negative axis on an input of unknown rank", gir_op_name(n->op));
        return;
    }
    bool max = n->op == GIR_OP_ArgMax;
    Nnabla__Function *f = simple_fn(w, n, max ? "Max" : "Min");
    int64_t *ax = dup_ints(w, &axis, 1);
    bool keep = gir_node_int(n, "keepdims", 1) != 0;
    if (max) {
        Nnabla__MaxParameter *p = pb_new(w, &nnabla__max_parameter__descriptor);
        if (p) {
            p->axes = ax, p->n_axes = ax ? 1 : 0, p->keep_dims = keep, p->only_index = 1;
            ax = NULL;
        }
        fn_param(w, f, "max_param", p);
    } else {
        Nnabla__MinParameter *p = pb_new(w, &nnabla__min_parameter__descriptor);
        if (p) {
            p->axes = ax, p->n_axes = ax ? 1 : 0, p->keep_dims = keep, p->only_index = 1;
            ax = NULL;
        }
        fn_param(w, f, "min_param", p);
    }
    free(ax);
}

static void emit_stack(wctx *w, const gir_node *n)
{
    Nnabla__Function *f = simple_fn(w, n, "Stack");
    Nnabla__StackParameter *p = pb_new(w, &nnabla__stack_parameter__descriptor);
    int64_t axis = gir_node_int(n, "axis", 0);
    int r = rank(w, n->in[0]);
    if (axis < 0 && r >= 0)
        axis += r + 1;
    if (p)
        p->axis = axis;
    fn_param(w, f, "stack_param", p);
}

/* Is this Split an unstack (parts of 1, each squeezed by a Squeeze)? */
static bool split_is_unstack(const wctx *w, const gir_node *n, int64_t *axis_out)
{
    int r = rank(w, n->in[0]);
    int64_t axis = gir_node_int(n, "axis", 0);
    if (axis < 0 && r >= 0)
        axis += r;
    if (axis < 0)
        return false;
    const int64_t *split;
    ptrdiff_t ks = gir_attrs_get_ints(&n->attrs, "split", &split);
    for (ptrdiff_t i = 0; i < ks; i++)
        if (split[i] != 1)
            return false;
    if (ks < 0 && r >= 0 && (r <= axis || V(w, n->in[0])->shape.dims[axis] != (int64_t)n->n_out))
        return false;
    for (size_t i = 0; i < n->n_out; i++) {
        int32_t o = n->out[i];
        if (!single_use(w, o))
            return false;
        /* the consumer */
        const gir_node *c = NULL;
        for (size_t j = 0; j < w->g->n_nodes && !c; j++) {
            const gir_node *m = w->g->nodes[j];
            for (size_t k = 0; k < m->n_in; k++)
                if (m->in[k] == o)
                    c = m;
        }
        if (!c || c->op != GIR_OP_Squeeze)
            return false;
        const int64_t *ax;
        ptrdiff_t ka = gir_attrs_get_ints(&c->attrs, "axes", &ax);
        if (ka != 1 || !(ax[0] == axis || (r >= 0 && ax[0] + r == axis)))
            return false;
    }
    *axis_out = axis;
    return true;
}

static void emit_slices(wctx *w, const gir_node *n, int64_t axis)
{
    const gir_value *x = V(w, n->in[0]);
    int r = x ? x->shape.rank : -1;
    if (axis < 0 && r >= 0)
        axis += r;
    if (r < 0 || axis < 0 || axis >= r) {
        refuse(w, n, GIR_E_UNSUPPORTED_ATTR, "Split of an input of unknown rank");
        return;
    }
    const int64_t *split;
    ptrdiff_t ks = gir_attrs_get_ints(&n->attrs, "split", &split);
    int64_t dim = x->shape.dims[axis];
    if (ks < 0 && (dim < 0 || dim % (int64_t)n->n_out)) {
        refuse(w, n, GIR_E_UNSUPPORTED_ATTR, "Split into equal parts of an unknown or uneven dimension");
        return;
    }
    int64_t at = 0;
    size_t k = (size_t)(r - axis);
    for (size_t i = 0; i < n->n_out; i++) {
        int64_t size = ks >= 0 ? split[i] : dim / (int64_t)n->n_out;
        char suffix[48];
        snprintf(suffix, sizeof suffix, "Slice_%zu", i);
        Nnabla__Function *f = fn_new(w, n, suffix, i == 0);
        if (f) {
            str_free(f->type);
            f->type = sdup(w, "Slice");
        }
        fn_in(w, f, n->in[0]);
        fn_out(w, f, n->out[i]);
        Nnabla__SliceParameter *p = pb_new(w, &nnabla__slice_parameter__descriptor);
        if (p) {
            int64_t st[GIR_MAX_RANK], sp[GIR_MAX_RANK], se[GIR_MAX_RANK];
            for (size_t j = 0; j < k; j++) {
                st[j] = j == 0 ? at : 0;
                sp[j] = j == 0 ? at + size : NNB_NONE_SENTINEL;
                se[j] = 1;
            }
            p->start = dup_ints(w, st, k), p->n_start = p->start ? k : 0;
            p->stop = dup_ints(w, sp, k), p->n_stop = p->stop ? k : 0;
            p->step = dup_ints(w, se, k), p->n_step = p->step ? k : 0;
        }
        fn_param(w, f, "slice_param", p);
        at += size;
    }
}

static void emit_split(wctx *w, const gir_node *n)
{
    int64_t axis;
    if (!split_is_unstack(w, n, &axis)) {
        emit_slices(w, n, gir_node_int(n, "axis", 0));
        return;
    }
    Nnabla__Function *f = fn_new(w, n, "Split", true);
    fn_in(w, f, n->in[0]);
    for (size_t i = 0; i < n->n_out; i++) {
        /* the Squeeze after each part writes the function's output */
        for (size_t j = 0; j < w->g->n_nodes; j++) {
            const gir_node *m = w->g->nodes[j];
            if (m->op == GIR_OP_Squeeze && m->n_in == 1 && m->in[0] == n->out[i]) {
                fn_out(w, f, m->out[0]);
                w->node_done[j] = 1;
                break;
            }
        }
    }
    Nnabla__SplitParameter *p = pb_new(w, &nnabla__split_parameter__descriptor);
    if (p)
        p->axis = axis;
    fn_param(w, f, "split_param", p);
}

static void emit_slice(wctx *w, const gir_node *n)
{
    int r = rank(w, n->in[0]);
    const int64_t *starts, *ends, *axes, *steps;
    ptrdiff_t ns = gir_attrs_get_ints(&n->attrs, "starts", &starts);
    ptrdiff_t ne = gir_attrs_get_ints(&n->attrs, "ends", &ends);
    ptrdiff_t na = gir_attrs_get_ints(&n->attrs, "axes", &axes);
    ptrdiff_t nt = gir_attrs_get_ints(&n->attrs, "steps", &steps);
    if (r < 0 || ns < 0 || ne != ns || (na >= 0 && na != ns) || (nt >= 0 && nt != ns)) {
        refuse(w, n, GIR_E_UNSUPPORTED_ATTR, "Slice of an input of unknown rank or with mismatched lists");
        return;
    }
    /* every sliced axis walked whole, backwards: Flip */
    bool flip = nt == ns && ns > 0;
    int64_t faxes[GIR_MAX_RANK];
    for (ptrdiff_t i = 0; flip && i < ns; i++) {
        int64_t a = na >= 0 ? axes[i] : i;
        if (a < 0)
            a += r;
        int64_t dim = a >= 0 && a < r ? V(w, n->in[0])->shape.dims[a] : -1;
        flip = a >= 0 && a < r && steps[i] == -1 && (starts[i] == -1 || (dim >= 0 && starts[i] >= dim - 1)) &&
               (ends[i] <= -(int64_t)NNB_NONE_SENTINEL || (dim >= 0 && ends[i] < -dim));
        faxes[i] = a;
    }
    if (flip) {
        Nnabla__Function *f = simple_fn(w, n, "Flip");
        Nnabla__FlipParameter *p = pb_new(w, &nnabla__flip_parameter__descriptor);
        if (p) {
            p->axes = dup_ints(w, faxes, (size_t)ns);
            p->n_axes = p->axes ? (size_t)ns : 0;
        }
        fn_param(w, f, "flip_param", p);
        return;
    }
    int64_t st[GIR_MAX_RANK], sp[GIR_MAX_RANK], se[GIR_MAX_RANK];
    bool set[GIR_MAX_RANK] = { false };
    int first = r;
    for (int i = 0; i < r; i++) {
        st[i] = 0;
        sp[i] = NNB_NONE_SENTINEL;
        se[i] = 1;
    }
    for (ptrdiff_t i = 0; i < ns; i++) {
        int64_t a = na >= 0 ? axes[i] : i;
        if (a < 0)
            a += r;
        int64_t step = nt >= 0 ? steps[i] : 1;
        if (a < 0 || a >= r || set[a] || step == 0) {
            refuse(w, n, GIR_E_UNSUPPORTED_ATTR, "Slice with invalid axes or steps");
            return;
        }
        set[a] = true;
        int64_t dim = V(w, n->in[0])->shape.dims[a];
        int64_t e = ends[i];
        if (step > 0 && (e >= NNB_NONE_SENTINEL || (dim >= 0 && e >= dim)))
            e = NNB_NONE_SENTINEL;
        else if (e >= NNB_NONE_SENTINEL || e <= -(int64_t)NNB_NONE_SENTINEL || (dim >= 0 && step < 0 && e < -dim)) {
            refuse(w, n, GIR_E_UNSUPPORTED_ATTR, "Slice walking backwards past the first element");
            return;
        }
        int64_t s0 = starts[i];
        if (dim >= 0 && s0 >= dim)
            s0 = step > 0 ? dim : dim - 1;
        if (dim >= 0 && s0 < -dim)
            s0 = 0;
        if (s0 >= NNB_NONE_SENTINEL || s0 <= -(int64_t)NNB_NONE_SENTINEL) {
            refuse(w, n, GIR_E_UNSUPPORTED_ATTR, "Slice start outside the range nnabla stores");
            return;
        }
        st[a] = s0;
        sp[a] = e;
        se[a] = step;
        if (a < first)
            first = (int)a;
    }
    if (first == r)
        first = r - 1;
    if (first < 0) {
        simple_fn(w, n, "Identity");
        return;
    }
    size_t k = (size_t)(r - first);
    Nnabla__Function *f = simple_fn(w, n, "Slice");
    Nnabla__SliceParameter *p = pb_new(w, &nnabla__slice_parameter__descriptor);
    if (p) {
        p->start = dup_ints(w, st + first, k), p->n_start = p->start ? k : 0;
        p->stop = dup_ints(w, sp + first, k), p->n_stop = p->stop ? k : 0;
        p->step = dup_ints(w, se + first, k), p->n_step = p->step ? k : 0;
    }
    fn_param(w, f, "slice_param", p);
}

static void emit_pad(wctx *w, const gir_node *n)
{
    int r = rank(w, n->in[0]);
    const int64_t *pads;
    ptrdiff_t np = gir_attrs_get_ints(&n->attrs, "pads", &pads);
    const char *mode = gir_node_string(n, "mode", "constant");
    const char *nm = strcmp(mode, "constant") == 0 ? "constant"
                     : strcmp(mode, "reflect") == 0 ? "reflect"
                     : strcmp(mode, "edge") == 0    ? "repeat"
                                                    : NULL;
    if (r < 0 || np != 2 * r || !nm) {
        refuse(w, n, GIR_E_UNSUPPORTED_ATTR, "Pad with mode %s or pads of the wrong length", mode);
        return;
    }
    int first = r;
    for (int i = 0; i < r; i++) {
        if (pads[i] < 0 || pads[r + i] < 0) {
            refuse(w, n, GIR_E_UNSUPPORTED_ATTR, "Pad with negative pads");
            return;
        }
        if ((pads[i] || pads[r + i]) && i < first)
            first = i;
    }
    if (first == r)
        first = r > 0 ? r - 1 : 0;
    size_t k = (size_t)(r - first);
    int64_t pw[2 * GIR_MAX_RANK];
    for (size_t i = 0; i < k; i++) {
        pw[2 * i] = pads[(size_t)first + i];
        pw[2 * i + 1] = pads[(size_t)r + (size_t)first + i];
    }
    Nnabla__Function *f = simple_fn(w, n, "Pad");
    Nnabla__PadParameter *p = pb_new(w, &nnabla__pad_parameter__descriptor);
    if (p) {
        p->pad_width = dup_ints(w, pw, 2 * k);
        p->n_pad_width = p->pad_width ? 2 * k : 0;
        str_free(p->mode);
        p->mode = sdup(w, nm);
        p->constant_value = (float)gir_node_float(n, "constant_value", 0.0);
    }
    fn_param(w, f, "pad_param", p);
}

static void emit_tile(wctx *w, const gir_node *n)
{
    const int64_t *reps;
    ptrdiff_t k = gir_attrs_get_ints(&n->attrs, "repeats", &reps);
    if (k < 0) {
        refuse(w, n, GIR_E_UNSUPPORTED_ATTR, "Tile without repeats");
        return;
    }
    Nnabla__Function *f = simple_fn(w, n, "Tile");
    Nnabla__TileParameter *p = pb_new(w, &nnabla__tile_parameter__descriptor);
    if (p) {
        p->reps = dup_ints(w, reps, (size_t)k);
        p->n_reps = p->reps ? (size_t)k : 0;
    }
    fn_param(w, f, "tile_param", p);
}

static void emit_node(wctx *w, size_t ni);

static void emit_expand(wctx *w, const gir_node *n, size_t ni)
{
    int32_t rs = w->fuse_src[ni];
    if (rs >= 0) {
        /* nnabla's BroadcastTo(x, y, axis), when x is written before it */
        const gir_node *r = w->g->nodes[rs];
        int32_t xi = gir_graph_value_index(w->g, gir_attrs_get_string(&n->meta, NNB_META_BROADCAST_X, ""));
        int32_t xp = xi >= 0 ? w->g->values[xi]->producer : -1;
        if (xi >= 0 && (xp < 0 || w->emitted[xp])) {
            Nnabla__Function *f = fn_new(w, n, "BroadcastTo", true);
            fn_in(w, f, xi);
            fn_in(w, f, r->in[0]);
            fn_out(w, f, n->out[0]);
            Nnabla__BroadcastToParameter *p = pb_new(w, &nnabla__broadcast_to_parameter__descriptor);
            if (p)
                p->axis = gir_attrs_get_int(&n->meta, NNB_META_AXIS, -1);
            fn_param(w, f, "broadcast_to_param", p);
            return;
        }
        emit_node(w, (size_t)rs);
        w->emitted[rs] = 1;
        w->cur = n;
    }
    const gir_value *x = V(w, n->in[0]);
    const int64_t *shape;
    ptrdiff_t k = gir_attrs_get_ints(&n->attrs, "shape", &shape);
    if (!x || x->shape.rank < 0 || k != x->shape.rank) {
        refuse(w, n, GIR_E_UNSUPPORTED_ATTR, "Expand that changes the rank");
        return;
    }
    int64_t t[GIR_MAX_RANK];
    for (ptrdiff_t i = 0; i < k; i++) {
        int64_t d = x->shape.dims[i];
        if (shape[i] == 1 || shape[i] == d)
            t[i] = d < 0 ? -1 : d;
        else if (d == 1)
            t[i] = shape[i];
        else {
            refuse(w, n, GIR_E_UNSUPPORTED_ATTR, "Expand of a dimension that is not 1");
            return;
        }
    }
    Nnabla__Function *f = simple_fn(w, n, "Broadcast");
    Nnabla__BroadcastParameter *p = pb_new(w, &nnabla__broadcast_parameter__descriptor);
    if (p)
        p->shape = shape_msg(w, t, (size_t)k);
    fn_param(w, f, "broadcast_param", p);
}

static void emit_gather(wctx *w, const gir_node *n)
{
    int64_t axis = gir_node_int(n, "axis", 0);
    if (axis == 0 && strcmp(gir_attrs_get_string(&n->meta, NNB_META_TYPE, ""), "Embed") == 0) {
        Nnabla__Function *f = fn_new(w, n, "Embed", true);
        fn_in(w, f, n->in[1]);
        fn_in(w, f, n->in[0]);
        fn_out(w, f, n->out[0]);
        return;
    }
    Nnabla__Function *f = simple_fn(w, n, "Gather");
    Nnabla__GatherParameter *p = pb_new(w, &nnabla__gather_parameter__descriptor);
    if (p)
        p->axis = axis;
    fn_param(w, f, "gather_param", p);
}

static void emit_dropout(wctx *w, const gir_node *n)
{
    if (gir_node_int(n, "training_mode", 0)) {
        refuse(w, n, GIR_E_UNSUPPORTED_ATTR, "Dropout in training mode");
        return;
    }
    if (n->n_out > 1 && n->out[1] >= 0 && (w->uses[n->out[1]] || w->is_output[n->out[1]])) {
        refuse(w, n, GIR_E_UNSUPPORTED_ATTR, "Dropout with its mask output used");
        return;
    }
    Nnabla__Function *f = fn_new(w, n, "Dropout", true);
    fn_in(w, f, n->in[0]);
    fn_out(w, f, n->out[0]);
    Nnabla__DropoutParameter *p = pb_new(w, &nnabla__dropout_parameter__descriptor);
    if (p) {
        p->p = gir_node_float(n, "ratio", 0.5);
        p->seed = gir_node_int(n, "seed", -1);
    }
    fn_param(w, f, "dropout_param", p);
}

/* Resize of trailing axes -> Interpolate (see map_interpolate for the
 * coordinate modes nnabla has). */
static void emit_interpolate(wctx *w, const gir_node *n)
{
    const gir_value *x = V(w, n->in[0]), *y = V(w, n->out[0]);
    const char *mode = gir_node_string(n, "mode", "nearest");
    const char *coord = gir_node_string(n, "coordinate_transformation_mode", "half_pixel");
    const char *nmode = gir_node_string(n, "nearest_mode", "round_prefer_floor");
    bool nearest = strcmp(mode, "nearest") == 0, linear = strcmp(mode, "linear") == 0;
    bool ac = false, hp = false, hpnn = false, ok = nearest || linear;
    if (ok && nearest && strcmp(nmode, "floor") != 0)
        ok = false;
    if (ok && strcmp(coord, "align_corners") == 0)
        ac = true;
    else if (ok && (strcmp(coord, "half_pixel") == 0 || (linear && strcmp(coord, "pytorch_half_pixel") == 0)))
        hp = true;
    else if (ok && nearest && strcmp(coord, "tf_half_pixel_for_nn") == 0)
        hpnn = true;
    else if (!ok || strcmp(coord, "asymmetric") != 0)
        ok = false;
    int r = x ? x->shape.rank : -1;
    if (ok && (!y || y->shape.rank != r || r < 1))
        ok = false;
    /* the leading axes keep their size; the rest are resized */
    int first = 0;
    while (ok && first < r - 1 && x->shape.dims[first] >= 0 && x->shape.dims[first] == y->shape.dims[first])
        first++;
    for (int i = first; ok && i < r; i++)
        ok = y->shape.dims[i] >= 1;
    /* pytorch_half_pixel equals half_pixel only where no output size is 1 */
    for (int i = first; ok && strcmp(coord, "pytorch_half_pixel") == 0 && i < r; i++)
        ok = y->shape.dims[i] > 1;
    if (!ok) {
        refuse(w, n, GIR_E_UNSUPPORTED_ATTR,
               "Resize of mode %s, coordinates %s%s%s (nnabla interpolates linearly or by the floor of the "
               "align_corners, asymmetric, half_pixel or tf_half_pixel_for_nn coordinate, trailing axes of known "
               "output size)",
               mode, coord, nearest ? ", nearest_mode " : "", nearest ? nmode : "");
        return;
    }
    Nnabla__Function *f = fn_new(w, n, "Interpolate", true);
    fn_in(w, f, n->in[0]);
    fn_out(w, f, n->out[0]);
    Nnabla__InterpolateParameter *p = pb_new(w, &nnabla__interpolate_parameter__descriptor);
    if (p) {
        p->output_size = dup_ints(w, y->shape.dims + first, (size_t)(r - first));
        p->n_output_size = p->output_size ? (size_t)(r - first) : 0;
        str_free(p->mode);
        p->mode = gir_strdupf("%s", nearest ? "nearest" : "linear");
        if (!p->mode)
            w->failed_alloc = true;
        p->align_corners = ac;
        p->half_pixel = hp;
        p->half_pixel_for_nn = hpnn;
    }
    fn_param(w, f, "interpolate_param", p);
}

static void emit_resize(wctx *w, const gir_node *n)
{
    const gir_value *x = V(w, n->in[0]), *y = V(w, n->out[0]);
    int r = x ? x->shape.rank : -1;
    const double *scales;
    ptrdiff_t nsc = gir_attrs_get_floats(&n->attrs, "scales", &scales);
    int64_t k[GIR_MAX_RANK];
    bool ok = r > 0 && strcmp(gir_node_string(n, "mode", "nearest"), "nearest") == 0 &&
              strcmp(gir_node_string(n, "coordinate_transformation_mode", "half_pixel"), "asymmetric") == 0 &&
              strcmp(gir_node_string(n, "nearest_mode", "round_prefer_floor"), "floor") == 0;
    for (int i = 0; ok && i < r; i++) {
        double sc;
        if (nsc == r)
            sc = scales[i];
        else if (y && y->shape.rank == r && x->shape.dims[i] > 0 && y->shape.dims[i] >= 0 &&
                 y->shape.dims[i] % x->shape.dims[i] == 0)
            sc = (double)(y->shape.dims[i] / x->shape.dims[i]);
        else
            sc = -1;
        ok = sc >= 1 && sc == floor(sc) && sc < 1e9;
        k[i] = ok ? (int64_t)sc : 0;
    }
    if (!ok) {
        emit_interpolate(w, n);
        return;
    }
    int first = 0;
    while (first < r - 1 && k[first] == 1)
        first++;
    Nnabla__Function *f = fn_new(w, n, "Unpooling", true);
    fn_in(w, f, n->in[0]);
    fn_out(w, f, n->out[0]);
    Nnabla__UnpoolingParameter *p = pb_new(w, &nnabla__unpooling_parameter__descriptor);
    if (p)
        p->kernel = shape_msg(w, k + first, (size_t)(r - first));
    fn_param(w, f, "unpooling_param", p);
}

static void emit_matmul(wctx *w, const gir_node *n)
{
    int ra = rank(w, n->in[0]), rb = rank(w, n->in[1]);
    if (ra < 2 || ra != rb) {
        refuse(w, n, GIR_E_UNSUPPORTED_ATTR, "MatMul of inputs with ranks %d and %d", ra, rb);
        return;
    }
    Nnabla__Function *f = simple_fn(w, n, "BatchMatmul");
    fn_param(w, f, "batch_matmul_param", pb_new(w, &nnabla__batch_matmul_parameter__descriptor));
}

static void emit_opaque(wctx *w, const gir_node *n)
{
    if (!n->opaque_format || strcmp(n->opaque_format, "nnabla") != 0) {
        const char *why = gir_node_opaque_why(n);
        refuse(w, n, GIR_E_UNSUPPORTED_OP, "%s (an operator of format %s%s%s)", n->opaque_op ? n->opaque_op : "?",
               n->opaque_format ? n->opaque_format : "?", why ? ": " : "", why ? why : "");
        return;
    }
    /* the parameter message, kept as text under its field name */
    const ProtobufCFieldDescriptor *fd = NULL;
    const char *text = NULL;
    for (size_t i = 0; i < n->attrs.n; i++) {
        const gir_attr *a = &n->attrs.items[i];
        fd = nnb_param_field_by_name(a->name);
        if (fd && a->type == GIR_ATTR_STRING) {
            text = a->u.s;
            break;
        }
        fd = NULL;
    }
    ProtobufCMessage *pm = NULL;
    if (fd) {
        gir_error e = GIR_ERROR_INIT;
        if (gir_pbtext_parse(fd->descriptor, text, strlen(text), &pm, &e)) {
            refuse(w, n, GIR_E_UNSUPPORTED_ATTR, "%s with a malformed %s (%s)", n->opaque_op, fd->name,
                   e.message ? e.message : "?");
            gir_error_clear(&e);
            return;
        }
    }
    Nnabla__Function *f = simple_fn(w, n, n->opaque_op);
    if (pm)
        fn_param(w, f, fd->name, pm);
    /* the function's fields of a newer schema, as the text they were */
    const gir_attr *u = gir_attrs_find(&n->attrs, NNB_ATTR_UNKNOWN);
    if (f && u && u->type == GIR_ATTR_STRING) {
        gir_error e = GIR_ERROR_INIT;
        if (gir_pbtext_merge(u->u.s, strlen(u->u.s), &f->base, &e)) {
            refuse(w, n, GIR_E_UNSUPPORTED_ATTR, "%s with malformed fields of a newer schema (%s)", n->opaque_op,
                   e.message ? e.message : "?");
            gir_error_clear(&e);
        }
    }
}

/* One function of a chain a node becomes: "<node>/<name>", input `in`
 * (a value, or when in < 0 the variable in_name), output the new variable
 * out_name (or the node's output when out_name is NULL). */
static Nnabla__Function *chain_fn(wctx *w, const gir_node *n, const char *type, const char *name, int32_t in,
                                  const char *in_name, const char *out_name)
{
    Nnabla__Function *f = fn_new(w, n, type, false);
    if (f && name) {
        char *own = gir_strdupf("%s/%s", n->name, name);
        if (!own) {
            w->failed_alloc = true;
        } else {
            str_free(f->name);
            f->name = own;
        }
    }
    if (in >= 0)
        fn_in(w, f, in);
    else
        fn_in_name(w, f, in_name);
    if (out_name)
        fn_out_name(w, f, out_name);
    else
        fn_out(w, f, n->out[0]);
    return f;
}

static void chain_scalar(wctx *w, const gir_node *n, const char *type, const char *name, int32_t in,
                         const char *in_name, const char *out_name, double v)
{
    Nnabla__Function *f = chain_fn(w, n, type, name, in, in_name, out_name);
    const char *field = NULL;
    ProtobufCMessage *pm = scalar_msg(w, type, v, false, &field);
    fn_param(w, f, field, pm);
}

static void chain_transpose(wctx *w, const gir_node *n, const char *name, const char *in_name,
                            const char *out_name, const int64_t *perm)
{
    Nnabla__Function *f = chain_fn(w, n, "Transpose", name, -1, in_name, out_name);
    Nnabla__TransposeParameter *p = pb_new(w, &nnabla__transpose_parameter__descriptor);
    if (p) {
        p->axes = dup_ints(w, perm, 4);
        p->n_axes = p->axes ? 4 : 0;
    }
    fn_param(w, f, "transpose_param", p);
}

/* LRN over the channels of (N, C, H, W), spelled as nnabla's own converter
 * does: x / (bias + alpha / size * sum of x^2 over the size channels around
 * each)^beta, the sum a SumPooling over (W, C) of the channel-last square.
 * nnabla pads symmetrically, so size must be odd (ONNX pads an even size
 * one more at the end). */
static void emit_lrn(wctx *w, const gir_node *n)
{
    const gir_value *x = V(w, n->in[0]);
    int64_t size = gir_node_int(n, "size", 0);
    if (size < 1 || size % 2 == 0) {
        refuse(w, n, GIR_E_UNSUPPORTED_ATTR, "LRN with an even size (%lld): nnabla pads symmetrically",
               (long long)size);
        return;
    }
    if (!x || x->shape.rank < 0) {
        refuse(w, n, GIR_E_UNSUPPORTED_ATTR, "LRN of an input of unknown rank: nnabla's form needs (N, C, H, W)");
        return;
    }
    if (x->shape.rank != 4) {
        refuse(w, n, GIR_E_UNSUPPORTED_ATTR, "LRN of a %d-D input: nnabla's form needs (N, C, H, W)", x->shape.rank);
        return;
    }
    /* nnabla's converter computes the factors in float32 */
    float alpha = (float)gir_node_float(n, "alpha", 1e-4), beta = (float)gir_node_float(n, "beta", 0.75);
    float bias = (float)gir_node_float(n, "bias", 1.0);
    const int64_t *d = x->shape.dims;
    gir_shape nchw = x->shape, nhwc = { 4, { d[0], d[2], d[3], d[1] } };
    const char *sq = extra_variable(w, n, "square", &nchw, NULL);
    const char *t0 = extra_variable(w, n, "channel_last", &nhwc, NULL);
    const char *sum = extra_variable(w, n, "window_sum", &nhwc, NULL);
    const char *t1 = extra_variable(w, n, "channel_first", &nchw, NULL);
    const char *sc = extra_variable(w, n, "scaled", &nchw, NULL);
    const char *bi = extra_variable(w, n, "biased", &nchw, NULL);
    const char *dn = extra_variable(w, n, "denominator", &nchw, NULL);
    if (!sq || !t0 || !sum || !t1 || !sc || !bi || !dn)
        return;
    static const int64_t to_last[4] = { 0, 2, 3, 1 }, to_first[4] = { 0, 3, 1, 2 };
    chain_scalar(w, n, "PowScalar", NULL, n->in[0], NULL, sq, 2.0);
    chain_transpose(w, n, NULL, sq, t0, to_last);
    Nnabla__Function *f = chain_fn(w, n, "SumPooling", NULL, -1, t0, sum);
    Nnabla__SumPoolingParameter *sp = pb_new(w, &nnabla__sum_pooling_parameter__descriptor);
    if (sp) {
        const int64_t k[2] = { 1, size }, s1[2] = { 1, 1 }, pad[2] = { 0, (size - 1) / 2 };
        sp->kernel = shape_msg(w, k, 2);
        sp->stride = shape_msg(w, s1, 2);
        sp->ignore_border = true;
        sp->pad = shape_msg(w, pad, 2);
    }
    fn_param(w, f, "sum_pooling_param", sp);
    chain_transpose(w, n, "Transpose_1", sum, t1, to_first);
    chain_scalar(w, n, "MulScalar", NULL, -1, t1, sc, (double)(alpha / (float)size));
    chain_scalar(w, n, "AddScalar", NULL, -1, sc, bi, (double)bias);
    chain_scalar(w, n, "PowScalar", "PowScalar_1", -1, bi, dn, (double)beta);
    f = fn_new(w, n, "Div2", true);
    fn_in(w, f, n->in[0]);
    fn_in_name(w, f, dn);
    fn_out(w, f, n->out[0]);
}

/* A comparison; with a float32 scalar constant as its second operand, the
 * *Scalar function (val: the exact double the file had, when it had one). */
static void emit_compare(wctx *w, const gir_node *n, const char *type)
{
    double c;
    const gir_value *x = V(w, n->in[0]);
    if (n->n_in != 2 || !x || x->dtype != GIR_DT_F32 || !scalar_const(w, n->in[1], &c) ||
        V(w, n->in[1])->dtype != GIR_DT_F32) {
        simple_fn(w, n, type);
        return;
    }
    char stype[32];
    snprintf(stype, sizeof stype, "%sScalar", type);
    emit_scalar(w, n, stype, n->in[0], c, false);
}

/* nnabla has no bool: a bool value is a float variable holding 0/1, so a
 * Cast between bool and float32 is the identity (folded into a neighbour
 * by plan(), else an Identity function), and a Cast of floats to bool is
 * NotEqualScalar(0). */
static void emit_cast(wctx *w, const gir_node *n)
{
    const gir_value *x = V(w, n->in[0]), *y = V(w, n->out[0]);
    gir_dtype from = x ? x->dtype : GIR_DT_UNKNOWN, to = y ? y->dtype : GIR_DT_UNKNOWN;
    /* integers are float32 variables holding them: a widening, or a
     * narrowing of an index (ArgMax/ArgMin: below the axis length), keeps
     * every value */
    const gir_node *px = x && x->producer >= 0 ? w->g->nodes[x->producer] : NULL;
    bool index = px && (px->op == GIR_OP_ArgMax || px->op == GIR_OP_ArgMin);
    bool int_same = (from == GIR_DT_I32 && to == GIR_DT_I64) || (from == GIR_DT_I64 && to == GIR_DT_I32 && index);
    if (from == to || (from == GIR_DT_BOOL && to == GIR_DT_F32) || int_same) {
        simple_fn(w, n, "Identity");
        return;
    }
    if (from == GIR_DT_F32 && to == GIR_DT_BOOL) {
        emit_scalar(w, n, "NotEqualScalar", n->in[0], 0.0, false);
        return;
    }
    refuse(w, n, GIR_E_UNSUPPORTED_ATTR, "Cast from %s to %s (nnabla computes in float32)", gir_dtype_name(from),
           gir_dtype_name(to));
}

static void emit_node(wctx *w, size_t ni)
{
    const gir_node *n = w->g->nodes[ni];
    w->cur = n;
    switch (n->op) {
    case GIR_OP_OPAQUE: emit_opaque(w, n); return;
    case GIR_OP_Identity: simple_fn(w, n, "Identity"); return;
    case GIR_OP_Relu: emit_relu(w, n); return;
    case GIR_OP_Sigmoid: simple_fn(w, n, "Sigmoid"); return;
    case GIR_OP_Tanh: simple_fn(w, n, "Tanh"); return;
    case GIR_OP_Softsign: simple_fn(w, n, "SoftSign"); return;
    case GIR_OP_Exp: simple_fn(w, n, "Exp"); return;
    case GIR_OP_Log: simple_fn(w, n, "Log"); return;
    case GIR_OP_Abs: simple_fn(w, n, "Abs"); return;
    case GIR_OP_Sin: simple_fn(w, n, "Sin"); return;
    case GIR_OP_Cos: simple_fn(w, n, "Cos"); return;
    case GIR_OP_Erf: simple_fn(w, n, "Erf"); return;
    case GIR_OP_Not: simple_fn(w, n, "LogicalNot"); return;
    case GIR_OP_And: simple_fn(w, n, "LogicalAnd"); return;
    case GIR_OP_Or: simple_fn(w, n, "LogicalOr"); return;
    case GIR_OP_Xor: simple_fn(w, n, "LogicalXor"); return;
    case GIR_OP_Equal: emit_compare(w, n, "Equal"); return;
    case GIR_OP_Greater: emit_compare(w, n, "Greater"); return;
    case GIR_OP_Less: emit_compare(w, n, "Less"); return;
    case GIR_OP_GreaterOrEqual: emit_compare(w, n, "GreaterEqual"); return;
    case GIR_OP_LessOrEqual: emit_compare(w, n, "LessEqual"); return;
    case GIR_OP_Where: simple_fn(w, n, "Where"); return;
    case GIR_OP_Cast: emit_cast(w, n); return;
    case GIR_OP_LRN: emit_lrn(w, n); return;
    case GIR_OP_Ceil:
    case GIR_OP_Floor: {
        bool ceil = n->op == GIR_OP_Ceil;
        Nnabla__Function *f = simple_fn(w, n, ceil ? "Ceil" : "Floor");
        if (want_param(n))
            fn_param(w, f, ceil ? "ceil_param" : "floor_param",
                     pb_new(w, ceil ? &nnabla__ceil_parameter__descriptor : &nnabla__floor_parameter__descriptor));
        return;
    }
    case GIR_OP_Sign: {
        Nnabla__Function *f = simple_fn(w, n, "Sign");
        if (want_param(n))
            fn_param(w, f, "sign_param", pb_new(w, &nnabla__sign_parameter__descriptor));
        return;
    }
    case GIR_OP_Neg: emit_scalar(w, n, "MulScalar", n->in[0], -1.0, true); return;
    case GIR_OP_Sqrt: emit_scalar(w, n, "PowScalar", n->in[0], 0.5, true); return;
    case GIR_OP_Reciprocal: emit_scalar(w, n, "RDivScalar", n->in[0], 1.0, false); return;
    case GIR_OP_LeakyRelu: {
        Nnabla__Function *f = simple_fn(w, n, "LeakyReLU");
        Nnabla__LeakyReLUParameter *p = pb_new(w, &nnabla__leaky_re_luparameter__descriptor);
        if (p) {
            p->alpha = (float)gir_node_float(n, "alpha", 0.01);
            p->inplace = inplace_of(n);
        }
        fn_param(w, f, "leaky_relu_param", p);
        return;
    }
    case GIR_OP_Elu: {
        Nnabla__Function *f = simple_fn(w, n, "ELU");
        Nnabla__ELUParameter *p = pb_new(w, &nnabla__eluparameter__descriptor);
        if (p)
            p->alpha = gir_node_float(n, "alpha", 1.0);
        fn_param(w, f, "elu_param", p);
        return;
    }
    case GIR_OP_Selu: {
        Nnabla__Function *f = simple_fn(w, n, "SELU");
        Nnabla__SELUParameter *p = pb_new(w, &nnabla__seluparameter__descriptor);
        if (p) {
            p->scale = gir_node_float(n, "gamma", 1.05070102214813232421875);
            p->alpha = gir_node_float(n, "alpha", 1.67326319217681884765625);
        }
        fn_param(w, f, "selu_param", p);
        return;
    }
    case GIR_OP_HardSigmoid:
        if ((float)gir_node_float(n, "alpha", 0.2) != 0.2f || (float)gir_node_float(n, "beta", 0.5) != 0.5f) {
            refuse(w, n, GIR_E_UNSUPPORTED_ATTR, "HardSigmoid with alpha/beta other than 0.2/0.5");
            return;
        }
        simple_fn(w, n, "HardSigmoid");
        return;
    case GIR_OP_Softplus: {
        Nnabla__Function *f = simple_fn(w, n, "SoftPlus");
        Nnabla__SoftPlusParameter *p = pb_new(w, &nnabla__soft_plus_parameter__descriptor);
        if (p)
            p->beta = 1.0;
        fn_param(w, f, "softplus_param", p);
        return;
    }
    case GIR_OP_PRelu: emit_prelu(w, n); return;
    case GIR_OP_Clip: emit_clip(w, n); return;
    case GIR_OP_Add:
    case GIR_OP_Sub:
    case GIR_OP_Mul:
    case GIR_OP_Div:
    case GIR_OP_Pow: emit_arith(w, n); return;
    case GIR_OP_Max:
    case GIR_OP_Min:
    case GIR_OP_Sum:
    case GIR_OP_Mean: emit_variadic(w, n); return;
    case GIR_OP_Conv:
    case GIR_OP_ConvTranspose: emit_conv(w, n); return;
    case GIR_OP_Gemm: emit_gemm(w, n, (int32_t)ni); return;
    case GIR_OP_MatMul: emit_matmul(w, n); return;
    case GIR_OP_BatchNormalization: emit_batchnorm(w, n); return;
    case GIR_OP_MaxPool:
    case GIR_OP_AveragePool: emit_pool(w, n); return;
    case GIR_OP_GlobalAveragePool:
    case GIR_OP_GlobalMaxPool: emit_global_pool(w, n); return;
    case GIR_OP_Softmax:
    case GIR_OP_LogSoftmax: emit_softmax(w, n); return;
    case GIR_OP_Dropout: emit_dropout(w, n); return;
    case GIR_OP_ReduceSum:
    case GIR_OP_ReduceMean:
    case GIR_OP_ReduceMax:
    case GIR_OP_ReduceMin:
    case GIR_OP_ReduceProd: emit_reduce(w, n); return;
    case GIR_OP_Reshape:
    case GIR_OP_Flatten:
    case GIR_OP_Squeeze:
    case GIR_OP_Unsqueeze: emit_reshape(w, n); return;
    case GIR_OP_Transpose: emit_transpose(w, n); return;
    case GIR_OP_Concat: emit_concat(w, n); return;
    case GIR_OP_Split: emit_split(w, n); return;
    case GIR_OP_Slice: emit_slice(w, n); return;
    case GIR_OP_Pad: emit_pad(w, n); return;
    case GIR_OP_Tile: emit_tile(w, n); return;
    case GIR_OP_Expand: emit_expand(w, n, ni); return;
    case GIR_OP_Gather: emit_gather(w, n); return;
    case GIR_OP_Resize: emit_resize(w, n); return;
    case GIR_OP_ArgMax:
    case GIR_OP_ArgMin: emit_arg(w, n); return;
    case GIR_OP_Stack: emit_stack(w, n); return;
    case GIR_OP_Mod: {
        Nnabla__Function *f = simple_fn(w, n, "Mod2");
        Nnabla__Mod2Parameter *p = pb_new(w, &nnabla__mod2_parameter__descriptor);
        if (p)
            p->fmod = gir_node_int(n, "fmod", 0) != 0;
        fn_param(w, f, "mod2_param", p);
        return;
    }
    default:
        refuse(w, n, GIR_E_UNSUPPORTED_OP, "%s", gir_op_name(n->op));
        return;
    }
}

/* ---- planning ---------------------------------------------------------- */

/* Ops whose nnabla function gives 0/1 floats for the canonical bool. */
static bool gives_bool(gir_op op)
{
    switch (op) {
    case GIR_OP_Equal:
    case GIR_OP_Greater:
    case GIR_OP_Less:
    case GIR_OP_GreaterOrEqual:
    case GIR_OP_LessOrEqual:
    case GIR_OP_And:
    case GIR_OP_Or:
    case GIR_OP_Xor:
    case GIR_OP_Not: return true;
    default: return false;
    }
}

/* Does the nnabla function of node n read operand k as "nonzero is true"? */
static bool reads_truth(const gir_node *n, size_t k)
{
    switch (n->op) {
    case GIR_OP_And:
    case GIR_OP_Or:
    case GIR_OP_Xor:
    case GIR_OP_Not: return true;
    case GIR_OP_Where: return k == 0;
    default: return false;
    }
}

/* The index of the only node reading value v (and in *slot which input),
 * or -1. */
static int32_t sole_consumer(const wctx *w, int32_t v, size_t *slot)
{
    if (!single_use(w, v))
        return -1;
    *slot = w->use_slot[w->use_at[v]];
    return w->use_node[w->use_at[v]];
}

/* Every consumer of every value (CSR over w->uses), for the folds. */
static gir_status index_uses(wctx *w)
{
    const gir_graph *g = w->g;
    size_t nv = g->n_values, total = 0;
    w->use_at = malloc((nv + 1) * sizeof *w->use_at);
    if (!w->use_at)
        return gir_nomem(w->err);
    for (size_t v = 0; v < nv; v++) {
        w->use_at[v] = total;
        total += (size_t)w->uses[v];
    }
    w->use_at[nv] = total;
    w->use_node = malloc((total ? total : 1) * sizeof *w->use_node);
    w->use_slot = malloc((total ? total : 1) * sizeof *w->use_slot);
    size_t *fill = calloc(nv ? nv : 1, sizeof *fill);
    if (!w->use_node || !w->use_slot || !fill) {
        free(fill);
        return gir_nomem(w->err);
    }
    for (size_t j = 0; j < g->n_nodes; j++)
        for (size_t k = 0; k < g->nodes[j]->n_in; k++) {
            int32_t v = g->nodes[j]->in[k];
            if (v < 0)
                continue;
            size_t at = w->use_at[v] + fill[v]++;
            w->use_node[at] = (int32_t)j;
            w->use_slot[at] = (uint32_t)k;
        }
    free(fill);
    return GIR_OK;
}

/* The pairs the reader makes of one function become one function again:
 * - BroadcastTo: Reshape (fused) + Expand naming its x;
 * - SumPooling: AveragePool counting the padding, times the window size. */
static void fold_pairs(wctx *w)
{
    const gir_graph *g = w->g;
    for (size_t i = 0; i < g->n_nodes; i++) {
        const gir_node *n = g->nodes[i];
        const char *type = gir_attrs_get_string(&n->meta, NNB_META_TYPE, "");
        if (n->op == GIR_OP_Expand && strcmp(type, "BroadcastTo") == 0 && n->in[0] >= 0) {
            const gir_value *r = g->values[n->in[0]];
            const char *xname = gir_attrs_get_string(&n->meta, NNB_META_BROADCAST_X, NULL);
            int32_t xi = xname ? gir_graph_value_index(g, xname) : -1;
            if (r->producer < 0 || !single_use(w, n->in[0]) || xi < 0 ||
                !gir_shape_equal(&g->values[xi]->shape, &g->values[n->out[0]]->shape))
                continue;
            const gir_node *rs = g->nodes[r->producer];
            if (rs->op == GIR_OP_Reshape && gir_attrs_find(&rs->meta, NNB_META_FUSED)) {
                w->fuse_src[i] = r->producer;
                w->node_done[r->producer] = 1;
            }
        } else if (n->op == GIR_OP_PRelu && n->in[1] >= 0 && single_use(w, n->in[1]) &&
                   g->values[n->in[1]]->producer >= 0) {
            /* a slope per channel, unsqueezed to [C,1,..] for canonical
             * broadcasting: PReLU(base_axis=1) takes the [C] itself */
            int32_t ui = g->values[n->in[1]]->producer;
            const gir_node *u = g->nodes[ui];
            const int64_t *ax;
            ptrdiff_t k = u->op == GIR_OP_Unsqueeze ? gir_attrs_get_ints(&u->attrs, "axes", &ax) : -1;
            const gir_value *x = V(w, n->in[0]), *sl = u->n_in == 1 ? V(w, u->in[0]) : NULL;
            bool ok = k >= 1 && x && x->shape.rank == k + 2 && sl && sl->shape.rank == 1;
            for (ptrdiff_t j = 0; ok && j < k; j++)
                ok = ax[j] == j + 1;
            if (ok) {
                w->alias[n->in[1]] = u->in[0];
                w->node_done[ui] = 1;
            }
        } else if (n->op == GIR_OP_AveragePool && strcmp(type, "SumPooling") == 0 &&
                   gir_node_int(n, "count_include_pad", 0) && !gir_node_int(n, "ceil_mode", 0)) {
            const int64_t *k;
            ptrdiff_t nk = gir_attrs_get_ints(&n->attrs, "kernel_shape", &k);
            double area = 1, c;
            for (ptrdiff_t j = 0; j < nk; j++)
                area *= (double)k[j];
            size_t slot;
            int32_t mi = sole_consumer(w, n->out[0], &slot);
            const gir_node *mul = mi >= 0 ? g->nodes[mi] : NULL;
            if (mul && mul->op == GIR_OP_Mul && mul->n_in == 2 && scalar_const(w, mul->in[1 - slot], &c) &&
                c == area) {
                w->alias[n->out[0]] = mul->out[0];
                w->node_done[mi] = 1;
            }
        }
    }
}

/* The casts the reader adds around nnabla's logical functions vanish again:
 * - bool -> float32 after a function that gives 0/1 floats: that function
 *   writes the cast's output variable;
 * - float32 -> bool read only by functions that take nonzero as true: they
 *   read the cast's input variable. */
static void fold_casts(wctx *w)
{
    const gir_graph *g = w->g;
    for (size_t i = 0; i < g->n_nodes; i++) {
        const gir_node *c = g->nodes[i];
        if (c->op != GIR_OP_Cast || c->n_in != 1 || c->n_out != 1 || c->in[0] < 0 || c->out[0] < 0)
            continue;
        const gir_value *x = g->values[c->in[0]], *y = g->values[c->out[0]];
        const gir_node *px = x->producer >= 0 ? g->nodes[x->producer] : NULL;
        /* a float -> bool cast is NotEqualScalar(0), which gives 0/1 floats */
        bool nonzero = px && px->op == GIR_OP_Cast && px->in[0] >= 0 && g->values[px->in[0]]->dtype == GIR_DT_F32;
        if (x->dtype == GIR_DT_BOOL && y->dtype == GIR_DT_F32 && px && (gives_bool(px->op) || nonzero) &&
            single_use(w, c->in[0])) {
            w->alias[c->in[0]] = c->out[0];
            w->node_done[i] = 1;
        } else if (x->dtype == GIR_DT_F32 && y->dtype == GIR_DT_BOOL && !w->is_output[c->out[0]] &&
                   w->uses[c->out[0]] > 0) {
            bool all = true;
            for (size_t u = w->use_at[c->out[0]]; all && u < w->use_at[c->out[0] + 1]; u++)
                all = reads_truth(g->nodes[w->use_node[u]], w->use_slot[u]);
            if (all) {
                w->alias[c->out[0]] = c->in[0];
                w->node_done[i] = 1;
            }
        }
    }
}

static gir_status plan(wctx *w)
{
    const gir_graph *g = w->g;
    size_t nv = g->n_values, nn = g->n_nodes;
    w->uses = calloc(nv ? nv : 1, sizeof *w->uses);
    w->is_output = calloc(nv ? nv : 1, 1);
    w->needed = calloc(nv ? nv : 1, 1);
    w->transpose = calloc(nv ? nv : 1, 1);
    w->bn_stat = calloc(nv ? nv : 1, 1);
    w->wshape = malloc((nv ? nv : 1) * sizeof *w->wshape);
    w->node_done = calloc(nn ? nn : 1, 1);
    w->fuse_src = malloc((nn ? nn : 1) * sizeof *w->fuse_src);
    w->alias = malloc((nv ? nv : 1) * sizeof *w->alias);
    w->emitted = calloc(nn ? nn : 1, 1);
    if (!w->uses || !w->is_output || !w->needed || !w->transpose || !w->bn_stat || !w->wshape || !w->node_done ||
        !w->fuse_src || !w->alias || !w->emitted)
        return gir_nomem(w->err);
    for (size_t i = 0; i < nv; i++) {
        w->wshape[i].rank = -2;
        w->alias[i] = (int32_t)i;
    }
    for (size_t i = 0; i < nn; i++) {
        w->fuse_src[i] = -1;
        for (size_t k = 0; k < g->nodes[i]->n_in; k++)
            if (g->nodes[i]->in[k] >= 0)
                w->uses[g->nodes[i]->in[k]]++;
    }
    for (size_t i = 0; i < g->n_outputs; i++)
        w->is_output[g->outputs[i]] = 1;
    /* Flatten + Gemm -> one Affine */
    for (size_t i = 0; i < nn; i++) {
        const gir_node *n = g->nodes[i];
        int32_t src;
        int64_t axis;
        if (n->op == GIR_OP_Gemm && gemm_check(w, n, false) && gemm_fusable_flatten(w, n, &src, &axis)) {
            w->fuse_src[i] = src;
            w->node_done[src] = 1;
        }
    }
    TRY(index_uses(w));
    fold_casts(w);
    fold_pairs(w);
    /* a weight read transposed (Gemm transB=1, or an nnabla Affine weight)
     * is written transposed: every canonical user must read it so */
    for (size_t v = 0; v < nv; v++) {
        const gir_value *x = g->values[v];
        if (x->kind != GIR_VALUE_WEIGHT && x->kind != GIR_VALUE_CONST)
            continue;
        bool want = gir_attrs_find(&x->meta, NNB_META_TRANSPOSED) != NULL;
        const gir_node *bad = NULL;
        for (size_t u = w->use_at[v]; u < w->use_at[v + 1]; u++) {
            const gir_node *m = g->nodes[w->use_node[u]];
            bool t_user = m->op == GIR_OP_Gemm && w->use_slot[u] == 1 && gir_node_int(m, "transB", 0);
            want |= t_user;
            if (!t_user && m->op != GIR_OP_OPAQUE && !bad)
                bad = m;
        }
        if (!want)
            continue;
        if (x->shape.rank != 2) {
            refuse(w, bad ? bad : g->nodes[0], GIR_E_UNSUPPORTED_ATTR, "Gemm with transB=1 on a weight of rank %d",
                   x->shape.rank);
            continue;
        }
        if (bad)
            refuse(w, bad, GIR_E_UNSUPPORTED_ATTR,
                   "weight '%s' read transposed by Gemm and untransposed by %s (nnabla stores one layout)", x->name,
                   gir_op_name(bad->op));
        else if (w->is_output[v])
            refuse(w, g->nodes[0], GIR_E_UNSUPPORTED_ATTR, "weight '%s' read transposed is also a graph output",
                   x->name);
        w->transpose[v] = 1;
    }
    return GIR_OK;
}

/* ---- variables, executor, file -------------------------------------------- */

static Nnabla__Variable *variable_msg(wctx *w, const char *name, const char *type, const gir_shape *s,
                                      const char *const *dim_names, bool with_shape)
{
    Nnabla__Variable *v = pb_new(w, &nnabla__variable__descriptor);
    if (!v)
        return NULL;
    v->name = sdup(w, name);
    v->type = sdup(w, type);
    if (with_shape && s && s->rank >= 0) {
        int64_t d[GIR_MAX_RANK];
        for (int i = 0; i < s->rank; i++)
            d[i] = s->dims[i] < 0 || (dim_names && dim_names[i]) ? -1 : s->dims[i];
        v->shape = shape_msg(w, d, (size_t)s->rank);
    }
    if (!push_ptr((void ***)&w->net->variable, &w->net->n_variable, v)) {
        w->failed_alloc = true;
        gir_pb_free(&v->base);
        return NULL;
    }
    return v;
}

/* Is value i written as a variable? */
static bool value_written(const wctx *w, size_t i)
{
    const gir_value *v = w->g->values[i];
    if (w->needed[i])
        return true;
    /* declared but unused variables (nothing reads or writes them) */
    return v->producer < 0 && w->uses[i] == 0 && !w->is_output[i];
}

/* A bool parameter as nnabla holds it: float32 0/1 (kept for the write). */
static gir_status bool_as_float(wctx *w, gir_tensor *t, gir_tensor **out)
{
    gir_tensor *f;
    TRY(gir_tensor_bool_as_float(t, GIR_DT_F32, &f, w->err));
    if (!GIR_GROW(w->owned, w->cap_owned, w->n_owned + 1)) {
        gir_tensor_unref(f);
        return gir_nomem(w->err);
    }
    w->owned[w->n_owned++] = f;
    *out = f;
    return GIR_OK;
}

static gir_status make_variables(wctx *w, nnb_wparam **params, size_t *n_params)
{
    const gir_graph *g = w->g;
    size_t cap = 0;
    *params = NULL;
    *n_params = 0;
    for (size_t i = 0; i < g->n_inputs; i++)
        w->needed[g->inputs[i]] = 1;
    for (size_t i = 0; i < g->n_outputs; i++)
        w->needed[g->outputs[i]] = 1;
    for (size_t i = 0; i < g->n_values; i++) {
        const gir_value *v = g->values[i];
        bool io = v->kind == GIR_VALUE_INPUT || w->is_output[i];
        if (v->dtype == GIR_DT_BOOL && (io || (v->data && w->needed[i])))
            gir_write_note(w->opts, "%s '%s' is bool: written as float32 0/1, nnabla has no bool",
                           v->kind == GIR_VALUE_INPUT ? "input" : w->is_output[i] ? "output" : "parameter",
                           v->name);
    }
    size_t extra_at = 0;
    for (size_t i = 0; i < g->n_values; i++) {
        const gir_value *v = g->values[i];
        if (!value_written(w, i))
            continue;
        bool param = v->kind == GIR_VALUE_WEIGHT || v->kind == GIR_VALUE_CONST;
        const char *type = param ? "Parameter" : gir_attrs_get_string(&v->meta, "nnabla.variable_type", "Buffer");
        gir_shape s = v->shape;
        if (param) {
            if (w->wshape[i].rank != -2) {
                s = w->wshape[i];
            } else {
                const int64_t *decl;
                ptrdiff_t kd = gir_attrs_get_ints(&v->meta, NNB_META_SHAPE, &decl);
                gir_shape ds = { 0, { 0 } };
                if (kd >= 0 && kd <= GIR_MAX_RANK) {
                    ds.rank = (int)kd;
                    memcpy(ds.dims, decl, (size_t)kd * sizeof *decl);
                    if (gir_shape_numel(&ds) == gir_shape_numel(&v->shape))
                        s = ds;
                }
            }
            if (w->transpose[i]) {
                int64_t t = s.dims[0];
                s.dims[0] = s.dims[1];
                s.dims[1] = t;
            }
        }
        bool with_shape = !gir_attrs_find(&v->meta, NNB_META_NO_SHAPE) || v->shape.rank >= 0;
        if (gir_attrs_find(&v->meta, NNB_META_NO_SHAPE) && !param)
            with_shape = false;
        Nnabla__Variable *var = variable_msg(w, v->name, type, &s, param ? NULL : v->dim_names, with_shape);
        if (!var)
            continue;
        const char *init = gir_attrs_get_string(&v->meta, NNB_META_INITIALIZER, NULL);
        if (init) {
            gir_error e = GIR_ERROR_INIT;
            ProtobufCMessage *m = NULL;
            if (gir_pbtext_parse(&nnabla__initializer__descriptor, init, strlen(init), &m, &e) == GIR_OK)
                var->initializer = (Nnabla__Initializer *)m;
            gir_error_clear(&e);
        }
        const gir_attr *rid = gir_attrs_find(&v->meta, NNB_META_REPEAT_ID);
        if (rid && rid->type == GIR_ATTR_STRINGS)
            for (size_t k = 0; k < rid->u.strs.n; k++)
                push_str(w, &var->repeat_id, &var->n_repeat_id, rid->u.strs.v[k]);
        if (param && v->data) {
            if (!GIR_GROW(*params, cap, *n_params + 1))
                return gir_nomem(w->err);
            bool ng = gir_attrs_find(&v->meta, NNB_META_NEED_GRAD)
                          ? gir_attrs_get_int(&v->meta, NNB_META_NEED_GRAD, 0) != 0
                          : v->kind == GIR_VALUE_WEIGHT && !w->bn_stat[i];
            gir_tensor *data = v->data;
            if (data->dtype == GIR_DT_BOOL)
                TRY(bool_as_float(w, data, &data));
            (*params)[(*n_params)++] = (nnb_wparam){ v->name, data, s, ng, w->transpose[i] != 0 };
        } else if (param) {
            (*n_params)++; /* counted, without data: checked by the caller */
            if (!GIR_GROW(*params, cap, *n_params))
                return gir_nomem(w->err);
            (*params)[*n_params - 1] = (nnb_wparam){ v->name, NULL, s, false, false };
        }
        /* variables the writer made for this value's producer follow it */
        (void)extra_at;
    }
    for (size_t k = 0; k < w->n_extras; k++)
        variable_msg(w, w->extras[k].name, "Buffer", &w->extras[k].shape, w->extras[k].dim_names, true);
    return w->failed_alloc ? gir_nomem(w->err) : GIR_OK;
}

/* The executor: the one the file had (names, data names, evaluation
 * settings) with its lists brought in line with the graph. */
static Nnabla__Executor *make_executor(wctx *w, const char *net_name)
{
    const gir_graph *g = w->g;
    Nnabla__Executor *orig = NULL;
    const char *text = gir_attrs_get_string(&g->meta, NNB_META_EXECUTOR, NULL);
    if (text) {
        gir_error e = GIR_ERROR_INIT;
        ProtobufCMessage *m = NULL;
        if (gir_pbtext_parse(&nnabla__executor__descriptor, text, strlen(text), &m, &e) == GIR_OK)
            orig = (Nnabla__Executor *)m;
        gir_error_clear(&e);
    }
    Nnabla__Executor *x = pb_new(w, &nnabla__executor__descriptor);
    if (!x) {
        gir_pb_free(orig ? &orig->base : NULL);
        return NULL;
    }
    if (orig) {
        str_free(x->name);
        x->name = orig->name;
        orig->name = NULL;
        x->num_evaluations = orig->num_evaluations;
        str_free(x->repeat_evaluation_type);
        x->repeat_evaluation_type = orig->repeat_evaluation_type;
        orig->repeat_evaluation_type = NULL;
        x->need_back_propagation = orig->need_back_propagation;
        x->no_image_normalization = orig->no_image_normalization;
        x->loss_variable = orig->loss_variable;
        x->n_loss_variable = orig->n_loss_variable;
        orig->loss_variable = NULL;
        orig->n_loss_variable = 0;
    } else {
        str_free(x->name);
        x->name = sdup(w, "runtime");
    }
    str_free(x->network_name);
    x->network_name = sdup(w, net_name);
    for (size_t i = 0; i < g->n_inputs; i++) {
        const char *name = vname(w, g->inputs[i]);
        bool done = false;
        for (size_t k = 0; orig && k < orig->n_generator_variable && !done; k++)
            if (orig->generator_variable[k] && strcmp(orig->generator_variable[k]->variable_name, name) == 0) {
                push_ptr((void ***)&x->generator_variable, &x->n_generator_variable, orig->generator_variable[k]);
                orig->generator_variable[k] = NULL;
                done = true;
            }
        for (size_t k = 0; orig && k < orig->n_data_variable && !done; k++)
            if (orig->data_variable[k] && strcmp(orig->data_variable[k]->variable_name, name) == 0) {
                push_ptr((void ***)&x->data_variable, &x->n_data_variable, orig->data_variable[k]);
                orig->data_variable[k] = NULL;
                done = true;
            }
        if (!done) {
            Nnabla__DataVariable *d = pb_new(w, &nnabla__data_variable__descriptor);
            if (d) {
                str_free(d->variable_name);
                str_free(d->data_name);
                d->variable_name = sdup(w, name);
                d->data_name = sdup(w, name);
                if (!push_ptr((void ***)&x->data_variable, &x->n_data_variable, d))
                    gir_pb_free(&d->base);
            }
        }
    }
    for (size_t i = 0; i < g->n_outputs; i++) {
        const char *name = vname(w, g->outputs[i]);
        bool done = false;
        for (size_t k = 0; orig && k < orig->n_output_variable && !done; k++)
            if (orig->output_variable[k] && strcmp(orig->output_variable[k]->variable_name, name) == 0) {
                push_ptr((void ***)&x->output_variable, &x->n_output_variable, orig->output_variable[k]);
                orig->output_variable[k] = NULL;
                done = true;
            }
        if (!done) {
            Nnabla__OutputVariable *o = pb_new(w, &nnabla__output_variable__descriptor);
            if (o) {
                str_free(o->variable_name);
                str_free(o->data_name);
                o->variable_name = sdup(w, name);
                o->data_name = sdup(w, name);
                if (!push_ptr((void ***)&x->output_variable, &x->n_output_variable, o))
                    gir_pb_free(&o->base);
            }
        }
    }
    /* parameters: the original list (those still parameters), then new ones */
    const Nnabla__Network *net = w->net;
    uint8_t *listed = calloc(net->n_variable ? net->n_variable : 1, 1);
    if (!listed)
        w->failed_alloc = true;
    for (size_t k = 0; orig && listed && k < orig->n_parameter_variable; k++) {
        Nnabla__ParameterVariable *pv = orig->parameter_variable[k];
        for (size_t j = 0; j < net->n_variable; j++)
            if (!listed[j] && strcmp(net->variable[j]->type, "Parameter") == 0 &&
                strcmp(net->variable[j]->name, pv->variable_name) == 0) {
                listed[j] = 1;
                push_ptr((void ***)&x->parameter_variable, &x->n_parameter_variable, pv);
                orig->parameter_variable[k] = NULL;
                break;
            }
    }
    for (size_t j = 0; listed && j < net->n_variable; j++) {
        if (listed[j] || strcmp(net->variable[j]->type, "Parameter") != 0)
            continue;
        Nnabla__ParameterVariable *pv = pb_new(w, &nnabla__parameter_variable__descriptor);
        if (pv) {
            str_free(pv->variable_name);
            pv->variable_name = sdup(w, net->variable[j]->name);
            if (!push_ptr((void ***)&x->parameter_variable, &x->n_parameter_variable, pv))
                gir_pb_free(&pv->base);
        }
    }
    free(listed);
    if (orig) {
        /* entries moved out are NULL now: drop them before freeing */
        size_t kd = 0, kg = 0, ko = 0, kp = 0;
        for (size_t k = 0; k < orig->n_data_variable; k++)
            if (orig->data_variable[k])
                orig->data_variable[kd++] = orig->data_variable[k];
        orig->n_data_variable = kd;
        for (size_t k = 0; k < orig->n_generator_variable; k++)
            if (orig->generator_variable[k])
                orig->generator_variable[kg++] = orig->generator_variable[k];
        orig->n_generator_variable = kg;
        for (size_t k = 0; k < orig->n_output_variable; k++)
            if (orig->output_variable[k])
                orig->output_variable[ko++] = orig->output_variable[k];
        orig->n_output_variable = ko;
        for (size_t k = 0; k < orig->n_parameter_variable; k++)
            if (orig->parameter_variable[k])
                orig->parameter_variable[kp++] = orig->parameter_variable[k];
        orig->n_parameter_variable = kp;
        gir_pb_free(&orig->base);
    }
    return x;
}

static ProtobufCMessage *parse_meta(const gir_graph *g, const char *key, const ProtobufCMessageDescriptor *d)
{
    const char *text = gir_attrs_get_string(&g->meta, key, NULL);
    if (!text)
        return NULL;
    gir_error e = GIR_ERROR_INIT;
    ProtobufCMessage *m = NULL;
    if (gir_pbtext_parse(d, text, strlen(text), &m, &e) != GIR_OK)
        m = NULL;
    gir_error_clear(&e);
    return m;
}

static bool insert_at(void ***arr, size_t *n, size_t at, void *p)
{
    if (!push_ptr(arr, n, p))
        return false;
    if (at >= *n)
        at = *n - 1;
    memmove(*arr + at + 1, *arr + at, (*n - 1 - at) * sizeof **arr);
    (*arr)[at] = p;
    return true;
}

/* The parameter list in the order the file had, unused parameters included. */
static gir_status order_params(wctx *w, nnb_wparam *gp, size_t n_gp, nnb_wparam **out, size_t *n_out)
{
    const gir_graph *g = w->g;
    const gir_attr *order = gir_attrs_find(&g->meta, NNB_META_PARAM_ORDER);
    const gir_attr *extra = gir_attrs_find(&g->meta, NNB_META_EXTRA_PARAMS);
    const int64_t *grads = NULL;
    ptrdiff_t ng = gir_attrs_get_ints(&g->meta, NNB_META_EXTRA_NEED_GRAD, &grads);
    size_t n_extra = extra && extra->type == GIR_ATTR_STRINGS ? extra->u.strs.n : 0;
    size_t total = n_gp + n_extra;
    nnb_wparam *r = calloc(total ? total : 1, sizeof *r);
    uint8_t *taken = calloc(total ? total : 1, 1);
    if (!r || !taken) {
        free(r);
        free(taken);
        return gir_nomem(w->err);
    }
    /* candidates: graph parameters, then extras */
    nnb_wparam *cand = calloc(total ? total : 1, sizeof *cand);
    if (!cand) {
        free(r);
        free(taken);
        return gir_nomem(w->err);
    }
    memcpy(cand, gp, n_gp * sizeof *gp);
    size_t nc = n_gp;
    for (size_t i = 0; i < n_extra; i++) {
        const char *name = extra->u.strs.v[i];
        char *key = gir_strdupf("%s%s", NNB_META_EXTRA_PREFIX, name);
        const gir_attr *t = key ? gir_attrs_find(&g->meta, key) : NULL;
        free(key);
        bool clash = false;
        for (size_t k = 0; k < n_gp; k++)
            clash |= strcmp(gp[k].name, name) == 0;
        if (!t || t->type != GIR_ATTR_TENSOR || !t->u.t || clash)
            continue;
        cand[nc++] = (nnb_wparam){ name, t->u.t, t->u.t->shape, ng > (ptrdiff_t)i && grads[i] != 0, false };
    }
    size_t k = 0;
    if (order && order->type == GIR_ATTR_STRINGS)
        for (size_t i = 0; i < order->u.strs.n; i++)
            for (size_t c = 0; c < nc; c++)
                if (!taken[c] && strcmp(cand[c].name, order->u.strs.v[i]) == 0) {
                    taken[c] = 1;
                    r[k++] = cand[c];
                    break;
                }
    for (size_t c = 0; c < nc; c++)
        if (!taken[c])
            r[k++] = cand[c];
    free(cand);
    free(taken);
    *out = r;
    *n_out = k;
    return GIR_OK;
}

static void wctx_free(wctx *w)
{
    free(w->uses);
    free(w->is_output);
    free(w->needed);
    free(w->transpose);
    free(w->bn_stat);
    free(w->wshape);
    free(w->node_done);
    free(w->fuse_src);
    free(w->alias);
    free(w->use_at);
    free(w->use_node);
    free(w->use_slot);
    free(w->emitted);
    for (size_t i = 0; i < w->n_owned; i++)
        gir_tensor_unref(w->owned[i]);
    free(w->owned);
    for (size_t i = 0; i < w->n_extras; i++)
        free(w->extras[i].name);
    free(w->extras);
}

/* Builds the whole NNablaProtoBuf (without parameters) and the parameter
 * list; fails with everything nnabla cannot express. */
static gir_status build_proto(wctx *w, Nnabla__NNablaProtoBuf **pb_out, nnb_wparam **params, size_t *n_params)
{
    const gir_graph *g = w->g;
    *pb_out = NULL;
    *params = NULL;
    *n_params = 0;
    Nnabla__Network *net = (Nnabla__Network *)parse_meta(g, NNB_META_NETWORK, &nnabla__network__descriptor);
    if (!net) {
        net = pb_new(w, &nnabla__network__descriptor);
        if (!net)
            return gir_nomem(w->err);
        str_free(net->name);
        net->name = sdup(w, g->name && g->name[0] ? g->name : "net");
        net->batch_size = 1;
        for (size_t i = 0; i < g->n_inputs; i++) {
            const gir_value *v = g->values[g->inputs[i]];
            if (v->shape.rank > 0 && v->shape.dims[0] > 0) {
                net->batch_size = v->shape.dims[0];
                break;
            }
        }
    } else if (g->name && g->name[0] && strcmp(g->name, net->name) != 0) {
        str_free(net->name);
        net->name = sdup(w, g->name);
    }
    w->net = net;
    gir_status st = plan(w);
    int32_t *order = NULL;
    if (!st)
        st = gir_topo_order(g, &order, w->err);
    for (size_t i = 0; !st && i < g->n_nodes; i++)
        if (!w->node_done[order[i]]) {
            emit_node(w, order[i]);
            w->emitted[order[i]] = 1;
        }
    free(order);
    nnb_wparam *gp = NULL;
    size_t n_gp = 0;
    if (!st && gir_unsupported_count(w->uns) == 0)
        st = make_variables(w, &gp, &n_gp);
    if (!st && gir_unsupported_count(w->uns))
        st = gir_unsupported_fail(w->uns, "nnabla", w->err);
    if (!st && w->failed_alloc)
        st = gir_nomem(w->err);
    /* parameters without data: all of them (structure only) or an error */
    size_t with_data = 0;
    for (size_t i = 0; !st && i < n_gp; i++)
        with_data += gp[i].tensor != NULL;
    if (!st && with_data && with_data < n_gp) {
        for (size_t i = 0; i < n_gp; i++)
            if (!gp[i].tensor) {
                st = gir_fail(w->err, GIR_E_PARAMS, "parameter '%s' has no data to write", gp[i].name);
                break;
            }
    }
    if (!st && with_data)
        st = order_params(w, gp, n_gp, params, n_params);
    free(gp);
    Nnabla__Executor *exec = NULL;
    /* a network read without an executor is written without one */
    bool want_exec = !gir_attrs_find(&g->meta, NNB_META_NETWORK) || gir_attrs_find(&g->meta, NNB_META_EXECUTOR);
    if (!st && want_exec) {
        exec = make_executor(w, net->name);
        if (!exec || w->failed_alloc)
            st = gir_nomem(w->err);
    }
    Nnabla__NNablaProtoBuf *pb = NULL;
    if (!st) {
        pb = (Nnabla__NNablaProtoBuf *)parse_meta(g, NNB_META_REST, &nnabla__nnabla_proto_buf__descriptor);
        if (!pb)
            pb = pb_new(w, &nnabla__nnabla_proto_buf__descriptor);
        if (!pb)
            st = gir_nomem(w->err);
    }
    if (!st) {
        size_t ni = (size_t)gir_attrs_get_int(&g->meta, NNB_META_NETWORK_INDEX, 0);
        size_t ei = (size_t)gir_attrs_get_int(&g->meta, NNB_META_EXECUTOR_INDEX, 0);
        if (!insert_at((void ***)&pb->network, &pb->n_network, ni, net))
            st = gir_nomem(w->err);
        else
            net = NULL;
        if (!st && exec && !insert_at((void ***)&pb->executor, &pb->n_executor, ei, exec))
            st = gir_nomem(w->err);
        else
            exec = NULL;
    }
    gir_pb_free(net ? &net->base : NULL);
    gir_pb_free(exec ? &exec->base : NULL);
    if (st) {
        gir_pb_free(pb ? &pb->base : NULL);
        free(*params);
        *params = NULL;
        *n_params = 0;
        return st;
    }
    *pb_out = pb;
    return GIR_OK;
}

/* The .nnp archive into tmp (a gir_outfile's temporary path), members
 * listed as nnabla writes them: nnp_version.txt, network.nntxt, then the
 * parameters, each written once.  parameter.protobuf is streamed into its
 * member; parameter.h5 is written by HDF5 in place, first in the file,
 * behind a user block that ends up holding its zip local header. */
#define NNP_H5_USERBLOCK 512

static gir_status write_nnp(const char *tmp, const gir_buf *text, const nnb_wparam *params, size_t n_params,
                            bool protobuf, gir_error *err)
{
    gir_zipw *z = NULL;
    gir_zip_extent *ext = NULL;
    size_t n_ext = 0;
    bool inplace = n_params && !protobuf;
    gir_status st = GIR_OK;
    if (inplace)
        st = nnb_write_h5_inplace(tmp, NNP_H5_USERBLOCK, params, n_params, &ext, &n_ext, err);
    if (!st)
        st = inplace ? gir_zipw_open_inplace(tmp, NNP_H5_USERBLOCK, &z, err) : gir_zipw_open(tmp, &z, err);
    if (!st)
        st = gir_zipw_add_buffer(z, "nnp_version.txt", "0.1\n", 4, false, err);
    if (!st)
        st = gir_zipw_add_buffer(z, "network.nntxt", text->data ? text->data : "", text->len, false, err);
    if (!st && inplace)
        st = gir_zipw_add_inplace(z, "parameter.h5", ext, n_ext, err);
    if (!st && n_params && protobuf)
        st = nnb_write_protobuf_member(z, "parameter.protobuf", params, n_params, err);
    free(ext);
    if (z) {
        if (st)
            gir_zipw_discard(z);
        else
            st = gir_zipw_close(z, err);
    }
    return st;
}

gir_status nnb_plan(const gir_graph *g, const gir_options *opts, gir_unsupported *u, gir_error *err)
{
    wctx w;
    memset(&w, 0, sizeof w);
    w.g = g;
    w.opts = opts;
    gir_error e2 = GIR_ERROR_INIT;
    w.err = &e2;
    w.uns = u;
    Nnabla__NNablaProtoBuf *pb = NULL;
    nnb_wparam *params = NULL;
    size_t n_params = 0;
    gir_status st = build_proto(&w, &pb, &params, &n_params);
    gir_pb_free(pb ? &pb->base : NULL);
    free(params);
    wctx_free(&w);
    /* a refusal is what u lists; anything else is the caller's error */
    if (st && !gir_unsupported_count(u)) {
        if (err && !err->code)
            *err = e2;
        else
            gir_error_clear(&e2);
        return st;
    }
    gir_error_clear(&e2);
    return GIR_OK;
}

/* nnabla names parameters by scope paths, which parameter.h5 holds as
 * HDF5 groups: names with empty, "." or ".." components (PyTorch's
 * "/block/Constant_output_0") cannot be stored.  Such parameters are
 * renamed in a copy of g (*own; NULL when no name needed it): empty
 * components dropped, "." and ".." as "_" and "__", made unique in value
 * order (so the same graph always gives the same names). */
static gir_status param_names(const gir_graph *g, const gir_options *opts, gir_graph **own, gir_error *err)
{
    *own = NULL;
    bool any = false;
    for (size_t i = 0; i < g->n_values && !any; i++) {
        const gir_value *v = g->values[i];
        any = (v->kind == GIR_VALUE_WEIGHT || v->kind == GIR_VALUE_CONST) && !gir_h5_name_ok(v->name);
    }
    if (!any)
        return GIR_OK;
    gir_graph *c;
    TRY(gir_graph_clone(g, &c, err));
    size_t renamed = 0;
    char *first_old = NULL, *first_new = NULL;
    gir_status st = GIR_OK;
    for (size_t i = 0; !st && i < c->n_values; i++) {
        const gir_value *v = c->values[i];
        if ((v->kind != GIR_VALUE_WEIGHT && v->kind != GIR_VALUE_CONST) || gir_h5_name_ok(v->name))
            continue;
        gir_buf b = GIR_BUF_INIT;
        for (const char *p = v->name; *p;) {
            const char *e = strchr(p, '/');
            size_t len = e ? (size_t)(e - p) : strlen(p);
            if (len) {
                bool dots = (len == 1 && p[0] == '.') || (len == 2 && p[0] == '.' && p[1] == '.');
                gir_buf_printf(&b, "%s%.*s", b.len ? "/" : "", (int)len, dots ? "__" : p);
            }
            p += len + (e != NULL);
        }
        char *base = gir_buf_take(&b);
        gir_buf_free(&b);
        const char *name = base ? gir_graph_unique_value_name(c, *base ? base : "parameter") : NULL;
        if (!renamed && name) {
            first_old = gir_strdupf("%s", v->name);
            first_new = gir_strdupf("%s", name);
        }
        st = !name || (!renamed && (!first_old || !first_new)) ? gir_nomem(err)
                                                               : gir_graph_rename(c, false, (int32_t)i, name, err);
        free(base);
        renamed++;
    }
    if (!st)
        gir_write_note(opts, "%zu parameter name%s with empty, '.' or '..' components (nnabla stores scope paths) "
                             "renamed, first '%s' as '%s'",
                       renamed, renamed == 1 ? "" : "s", first_old, first_new);
    free(first_old);
    free(first_new);
    if (st)
        gir_graph_free(c);
    else
        *own = c;
    return st;
}

gir_status nnb_write(const gir_graph *g, const char *path, const gir_options *opts, gir_error *err)
{
    const char *pf = gir_options_get(opts, "param-format");
    bool protobuf = false;
    if (pf && strcmp(pf, "protobuf") == 0)
        protobuf = true;
    else if (pf && strcmp(pf, "h5") != 0)
        return gir_fail(err, GIR_E_ARGUMENT, "param-format must be h5 or protobuf, not '%s'", pf);
    bool force = gir_options_flag(opts, "force");
    bool text_only = gir_str_ends_with(path, ".nntxt") || gir_str_ends_with(path, ".prototxt");

    gir_graph *renamed;
    TRY(param_names(g, opts, &renamed, err));
    if (renamed)
        g = renamed;
    wctx w;
    memset(&w, 0, sizeof w);
    w.g = g;
    w.opts = opts;
    w.err = err;
    w.uns = gir_unsupported_new();
    if (!w.uns) {
        gir_graph_free(renamed);
        return gir_nomem(err);
    }
    Nnabla__NNablaProtoBuf *pb = NULL;
    nnb_wparam *params = NULL;
    size_t n_params = 0;
    gir_status st = build_proto(&w, &pb, &params, &n_params);
    gir_buf text = GIR_BUF_INIT;
    if (!st)
        st = gir_pbtext_print(&pb->base, &text, err);
    gir_pb_free(pb ? &pb->base : NULL);

    gir_outfile *out = NULL;
    if (!st)
        st = gir_outfile_open(path, force, &out, err);
    if (!st && !text_only) {
        st = write_nnp(gir_outfile_temp_path(out), &text, params, n_params, protobuf, err);
    } else if (!st) {
        /* a standalone .nntxt: parameters go to a companion file */
        st = gir_outfile_write(out, text.data ? text.data : "", text.len, err);
        if (!st && n_params) {
            const char *pp = gir_options_get(opts, "params");
            char *own = pp ? NULL : gir_path_with_ext(path, protobuf ? ".protobuf" : ".h5");
            const char *target = pp ? pp : own;
            gir_outfile *po = NULL;
            if (!target)
                st = gir_nomem(err);
            if (!st)
                st = gir_outfile_open(target, force, &po, err);
            if (!st)
                st = protobuf ? nnb_write_protobuf(gir_outfile_temp_path(po), params, n_params, err)
                              : nnb_write_h5(gir_outfile_temp_path(po), params, n_params, err);
            if (!st) {
                /* the parameters, then the network, as one unit */
                gir_outfile *both[2] = { po, out };
                st = gir_outfile_commit_all(both, 2, err);
                out = NULL;
            } else {
                gir_outfile_abort(po);
            }
            free(own);
        }
    }
    if (out) {
        if (st)
            gir_outfile_abort(out);
        else
            st = gir_outfile_commit(out, err);
    }
    gir_buf_free(&text);
    free(params);
    wctx_free(&w);
    gir_unsupported_free(w.uns);
    gir_graph_free(renamed);
    return st;
}
