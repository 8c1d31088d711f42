/* Writing ONNX: gir_graph -> ModelProto at opset 6..18.
 *
 * The whole graph is checked first and every construct that cannot be
 * written is reported at once.  The model is then streamed: small messages
 * are packed by protobuf-c straight into the output, and each
 * initializer's bytes go from the (lazily loaded) tensor to the file one
 * tensor at a time, into the model or into the external data file. */
#include "onnx.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gir_config.h"

/* An initializer to write. */
typedef struct winit {
    const char *name;
    gir_tensor *t;   /* reference owned by the writer */
    bool external;
    uint64_t offset; /* in the external data file */
} winit;

typedef struct writer {
    const gir_graph *g;
    const gir_options *opts;
    int64_t opset;
    int64_t fallback_opset; /* the opset to use when no option asks for one (0: the source's) */
    int64_t ir_version;
    gir_arena a;
    bool oom;
    gir_unsupported *u;
    onnx_map names; /* value names in the output; initializers map to index + 1 */
    Onnx__NodeProto **nodes;
    size_t n_nodes, cap_nodes;
    winit *inits;
    size_t n_inits, cap_inits;
    size_t n_value_inits; /* the first inits come from values, the rest are operands */
    Onnx__ValueInfoProto **inputs, **outputs, **vinfo;
    size_t n_inputs, n_outputs, n_vinfo;
    bool *const_done; /* per value: its Constant node was emitted */
    bool allow_opaque;
    const char *bad_meta; /* a value or node whose onnx.* blob does not decode */
    const char **xdom;    /* extra opset imports for other domains */
    int64_t *xver;
    size_t n_xdom;
} writer;

static void *aalloc(writer *w, size_t n)
{
    void *p = gir_arena_alloc(&w->a, n ? n : 1);
    if (!p)
        w->oom = true;
    return p;
}

static char *astr(writer *w, const char *s)
{
    char *p = gir_arena_strdup(&w->a, s ? s : "");
    if (!p)
        w->oom = true;
    return p;
}

static const char *meta_s(const gir_attrs *m, const char *key)
{
    const gir_attr *a = gir_attrs_find(m, key);
    return a && a->type == GIR_ATTR_STRING ? a->u.s : NULL;
}

static void unsupported(writer *w, const gir_node *n, gir_status code, const char *fmt, ...) GIR_PRINTF(4, 5);
static void unsupported(writer *w, const gir_node *n, gir_status code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = gir_vstrdupf(fmt, ap);
    va_end(ap);
    if (!s) {
        w->oom = true;
        return;
    }
    gir_unsupported_add(w->u, code, s, n ? n->name : "");
    free(s);
}

/* protobuf-c allocations in the writer's arena (freed with it). */
static void *arena_pb_alloc(void *data, size_t size)
{
    return gir_arena_alloc(data, size ? size : 1);
}

static void arena_pb_free(void *data, void *p)
{
    (void)data;
    (void)p;
}

/* Unpacks a base64 metadata blob into the arena. */
static ProtobufCMessage *unpack_blob(writer *w, const ProtobufCMessageDescriptor *desc, const char *blob)
{
    uint8_t *buf;
    size_t n;
    if (!onnx_base64_decode(blob, &buf, &n))
        return NULL;
    ProtobufCAllocator al = { arena_pb_alloc, arena_pb_free, &w->a };
    ProtobufCMessage *m = protobuf_c_message_unpack(desc, &al, n, buf);
    free(buf);
    return m;
}

/* ---- names and initializers ------------------------------------------------ */

static bool name_free(writer *w, const char *s)
{
    return !onnx_map_has(&w->names, s) && gir_graph_value_index(w->g, s) < 0;
}

static const char *fresh_name(writer *w, const char *base)
{
    char *s = NULL;
    for (unsigned long k = 0; !w->oom; k++) {
        s = k ? gir_arena_printf(&w->a, "%s_%lu", base, k) : astr(w, base);
        if (!s) {
            w->oom = true;
            return NULL;
        }
        if (name_free(w, s))
            break;
    }
    if (s && !onnx_map_put(&w->names, s, 0))
        w->oom = true;
    return s;
}

static bool add_init(writer *w, const char *name, gir_tensor *t)
{
    if (!GIR_GROW(w->inits, w->cap_inits, w->n_inits + 1) ||
        !onnx_map_put(&w->names, name, (int32_t)w->n_inits + 1)) {
        w->oom = true;
        return false;
    }
    w->inits[w->n_inits++] = (winit){ name, gir_tensor_ref(t), false, 0 };
    return true;
}

/* ---- messages --------------------------------------------------------------- */

static Onnx__TensorProto *tensor_proto(writer *w, gir_tensor *t, const char *name, gir_error *err)
{
    Onnx__TensorProto *tp = aalloc(w, sizeof *tp);
    if (!tp)
        return NULL;
    onnx__tensor_proto__init(tp);
    tp->has_data_type = 1;
    tp->data_type = onnx_dtype_from_gir(t->dtype);
    tp->n_dims = (size_t)t->shape.rank;
    tp->dims = aalloc(w, (size_t)(t->shape.rank ? t->shape.rank : 1) * sizeof *tp->dims);
    if (!tp->dims)
        return NULL;
    for (int i = 0; i < t->shape.rank; i++)
        tp->dims[i] = t->shape.dims[i];
    if (name)
        tp->name = astr(w, name);
    bool was_loaded = t->data != NULL;
    const void *d;
    if (gir_tensor_load(t, &d, err))
        return NULL;
    tp->has_raw_data = 1;
    tp->raw_data.len = (size_t)t->nbytes;
    tp->raw_data.data = gir_arena_memdup(&w->a, d, (size_t)t->nbytes);
    if (!was_loaded)
        gir_tensor_unload(t);
    if (!tp->raw_data.data) {
        w->oom = true;
        return NULL;
    }
    return tp;
}

static Onnx__ValueInfoProto *value_info(writer *w, const gir_value *v)
{
    Onnx__ValueInfoProto *vi = aalloc(w, sizeof *vi);
    if (!vi)
        return NULL;
    onnx__value_info_proto__init(vi);
    vi->name = astr(w, v->name);
    const char *doc = meta_s(&v->meta, ONNX_META_DOC);
    if (doc)
        vi->doc_string = astr(w, doc);
    const char *blob = meta_s(&v->meta, ONNX_META_TYPE);
    if (blob) {
        vi->type = (Onnx__TypeProto *)unpack_blob(w, &onnx__type_proto__descriptor, blob);
        if (!vi->type)
            w->bad_meta = v->name;
        return vi;
    }
    if (v->dtype == GIR_DT_UNKNOWN && v->shape.rank < 0)
        return vi;
    Onnx__TypeProto *tp = aalloc(w, sizeof *tp);
    Onnx__TypeProto__Tensor *tt = aalloc(w, sizeof *tt);
    if (!tp || !tt)
        return NULL;
    onnx__type_proto__init(tp);
    onnx__type_proto__tensor__init(tt);
    tp->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
    tp->tensor_type = tt;
    if (v->dtype != GIR_DT_UNKNOWN) {
        tt->has_elem_type = 1;
        tt->elem_type = onnx_dtype_from_gir(v->dtype);
    }
    if (v->shape.rank >= 0) {
        Onnx__TensorShapeProto *sp = aalloc(w, sizeof *sp);
        if (!sp)
            return NULL;
        onnx__tensor_shape_proto__init(sp);
        sp->n_dim = (size_t)v->shape.rank;
        sp->dim = aalloc(w, (size_t)(v->shape.rank ? v->shape.rank : 1) * sizeof *sp->dim);
        if (!sp->dim)
            return NULL;
        for (int i = 0; i < v->shape.rank; i++) {
            Onnx__TensorShapeProto__Dimension *d = aalloc(w, sizeof *d);
            if (!d)
                return NULL;
            onnx__tensor_shape_proto__dimension__init(d);
            if (v->shape.dims[i] >= 0) {
                d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
                d->dim_value = v->shape.dims[i];
            } else if (v->dim_names[i]) {
                d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
                d->dim_param = astr(w, v->dim_names[i]);
            }
            sp->dim[i] = d;
        }
        tt->shape = sp;
    }
    vi->type = tp;
    return vi;
}

/* ---- attributes -------------------------------------------------------------- */

static Onnx__AttributeProto *attr_new(writer *w, const char *name, Onnx__AttributeProto__AttributeType type)
{
    Onnx__AttributeProto *a = aalloc(w, sizeof *a);
    if (!a)
        return NULL;
    onnx__attribute_proto__init(a);
    a->name = astr(w, name);
    a->has_type = 1;
    a->type = type;
    return a;
}

static Onnx__AttributeProto *attr_ints(writer *w, const char *name, const int64_t *v, size_t n)
{
    Onnx__AttributeProto *a = attr_new(w, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS);
    if (!a)
        return NULL;
    a->n_ints = n;
    a->ints = aalloc(w, (n ? n : 1) * sizeof *a->ints);
    if (a->ints && n)
        memcpy(a->ints, v, n * sizeof *v);
    return a->ints ? a : NULL;
}

static Onnx__AttributeProto *attr_int(writer *w, const char *name, int64_t v)
{
    Onnx__AttributeProto *a = attr_new(w, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT);
    if (a) {
        a->has_i = 1;
        a->i = v;
    }
    return a;
}

static Onnx__AttributeProto *attr_float(writer *w, const char *name, double v)
{
    Onnx__AttributeProto *a = attr_new(w, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT);
    if (a) {
        a->has_f = 1;
        a->f = (float)v;
    }
    return a;
}

static Onnx__AttributeProto *attr_floats(writer *w, const char *name, const double *v, size_t n)
{
    Onnx__AttributeProto *a = attr_new(w, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS);
    if (!a)
        return NULL;
    a->n_floats = n;
    a->floats = aalloc(w, (n ? n : 1) * sizeof *a->floats);
    for (size_t i = 0; a->floats && i < n; i++)
        a->floats[i] = (float)v[i];
    return a->floats ? a : NULL;
}

static Onnx__AttributeProto *attr_string(writer *w, const char *name, const char *s)
{
    Onnx__AttributeProto *a = attr_new(w, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING);
    if (!a)
        return NULL;
    a->has_s = 1;
    a->s.len = strlen(s);
    a->s.data = (uint8_t *)astr(w, s);
    return a->s.data ? a : NULL;
}

static Onnx__AttributeProto *attr_from_ir(writer *w, const gir_attr *x, const char *name, gir_error *err)
{
    switch (x->type) {
    case GIR_ATTR_INT:
    case GIR_ATTR_BOOL: return attr_int(w, name, x->u.i);
    case GIR_ATTR_FLOAT: return attr_float(w, name, x->u.f);
    case GIR_ATTR_STRING: return attr_string(w, name, x->u.s);
    case GIR_ATTR_INTS: return attr_ints(w, name, x->u.ints.v, x->u.ints.n);
    case GIR_ATTR_FLOATS: return attr_floats(w, name, x->u.floats.v, x->u.floats.n);
    case GIR_ATTR_STRINGS: {
        Onnx__AttributeProto *a = attr_new(w, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS);
        if (!a)
            return NULL;
        a->n_strings = x->u.strs.n;
        a->strings = aalloc(w, (x->u.strs.n ? x->u.strs.n : 1) * sizeof *a->strings);
        if (!a->strings)
            return NULL;
        for (size_t i = 0; i < x->u.strs.n; i++) {
            a->strings[i].len = strlen(x->u.strs.v[i]);
            a->strings[i].data = (uint8_t *)astr(w, x->u.strs.v[i]);
        }
        return a;
    }
    case GIR_ATTR_TENSOR: {
        Onnx__AttributeProto *a = attr_new(w, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR);
        if (!a || !(a->t = tensor_proto(w, x->u.t, NULL, err)))
            return NULL;
        return a;
    }
    }
    return NULL;
}

/* ---- nodes -------------------------------------------------------------------- */

typedef struct nb {
    Onnx__NodeProto *np;
    size_t cap_attr, cap_in;
} nb;

static void nb_attr(writer *w, nb *b, Onnx__AttributeProto *a)
{
    if (!a) {
        w->oom = true;
        return;
    }
    if (b->np->n_attribute == b->cap_attr) {
        size_t nc = b->cap_attr ? 2 * b->cap_attr : 8;
        Onnx__AttributeProto **na = aalloc(w, nc * sizeof *na);
        if (!na)
            return;
        if (b->np->n_attribute)
            memcpy(na, b->np->attribute, b->np->n_attribute * sizeof *na);
        b->np->attribute = na;
        b->cap_attr = nc;
    }
    b->np->attribute[b->np->n_attribute++] = a;
}

static void nb_input(writer *w, nb *b, size_t pos, const char *name)
{
    if (!name) {
        w->oom = true;
        return;
    }
    if (pos >= b->cap_in) {
        size_t nc = pos + 8;
        char **ni = aalloc(w, nc * sizeof *ni);
        if (!ni)
            return;
        if (b->np->n_input)
            memcpy(ni, b->np->input, b->np->n_input * sizeof *ni);
        b->np->input = ni;
        b->cap_in = nc;
    }
    while (b->np->n_input <= pos)
        b->np->input[b->np->n_input++] = (char *)"";
    b->np->input[pos] = (char *)name;
}

static void nb_outputs(writer *w, nb *b, const gir_node *n)
{
    b->np->n_output = n->n_out;
    b->np->output = aalloc(w, (n->n_out ? n->n_out : 1) * sizeof *b->np->output);
    for (size_t o = 0; b->np->output && o < n->n_out; o++)
        b->np->output[o] = (char *)(n->out[o] >= 0 ? w->g->values[n->out[o]]->name : "");
}

static const char *value_name(const gir_graph *g, int32_t v)
{
    return v >= 0 ? g->values[v]->name : "";
}

static void constant_node(writer *w, int32_t vi, gir_error *err);
static bool is_constant_node_value(const gir_value *v);
static void add_domain(writer *w, const char *domain, int64_t version);

/* A constant operand becomes an initializer named after the input it was
 * read from; identical ones are shared. */
static const char *operand_init(writer *w, const gir_node *n, const char *attr, gir_tensor *t, gir_error *err)
{
    char key[96];
    snprintf(key, sizeof key, "%s%s", ONNX_META_OPERAND, attr);
    const char *want = meta_s(&n->meta, key);
    if (want) {
        /* The constant it was read from may still be a value (also used as
         * data) or an operand of another node: share it when equal. */
        int32_t vi = gir_graph_value_index(w->g, want);
        const gir_value *v = vi >= 0 ? w->g->values[vi] : NULL;
        bool eq = false;
        if (v && v->data && (v->kind == GIR_VALUE_CONST || v->kind == GIR_VALUE_WEIGHT) &&
            gir_tensor_equal(v->data, t, &eq, err) == GIR_OK && eq) {
            if (is_constant_node_value(v) && !w->const_done[vi])
                constant_node(w, vi, err);
            return v->name;
        }
        /* a value the reader folded (Shape -> ... -> operand) that the graph
         * still computes: the node reads it again */
        if (v && v->kind == GIR_VALUE_INTERMEDIATE && v->producer >= 0 && v->producer < (int32_t)w->g->n_nodes &&
            (v->dtype == GIR_DT_I64 || v->dtype == GIR_DT_UNKNOWN) && gir_shape_equal(&v->shape, &t->shape))
            return v->name;
        int32_t i = onnx_map_get(&w->names, want);
        if (i > (int32_t)w->n_value_inits && gir_tensor_equal(w->inits[i - 1].t, t, &eq, err) == GIR_OK && eq)
            return w->inits[i - 1].name;
    }
    const char *name;
    if (want && name_free(w, want)) {
        name = astr(w, want);
    } else {
        char *base = gir_strdupf("%s_%s", n->name, attr);
        if (!base) {
            w->oom = true;
            return NULL;
        }
        name = fresh_name(w, base);
        free(base);
    }
    if (!name || !add_init(w, name, t))
        return NULL;
    return name;
}

static uint16_t float_to_half(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    uint32_t sign = (u >> 16) & 0x8000, mant = u & 0x7fffff;
    int e = (int)((u >> 23) & 0xff) - 127 + 15;
    if (((u >> 23) & 0xff) == 0xff)
        return (uint16_t)(sign | 0x7c00 | (mant ? 0x200 : 0));
    if (e >= 31)
        return (uint16_t)(sign | 0x7c00);
    if (e <= 0) {
        if (e < -10)
            return (uint16_t)sign;
        mant |= 0x800000;
        int shift = 14 - e;
        uint32_t r = mant >> shift, rem = mant & ((1u << shift) - 1), half = 1u << (shift - 1);
        if (rem > half || (rem == half && (r & 1)))
            r++;
        return (uint16_t)(sign | r);
    }
    uint32_t r = (uint32_t)e << 10 | mant >> 13, rem = mant & 0x1fff;
    if (rem > 0x1000 || (rem == 0x1000 && (r & 1)))
        r++;
    return (uint16_t)(sign | r);
}

/* The tensor an operand attribute becomes. */
static gir_status operand_tensor(int kind, const gir_attr *x, gir_dtype elem, gir_tensor **out, gir_error *err)
{
    gir_shape s = { 1, { 0 } };
    gir_status st;
    if (kind == ONNX_OPD_INTS) {
        s.dims[0] = (int64_t)x->u.ints.n;
        if ((st = gir_tensor_new(GIR_DT_I64, &s, out, err)))
            return st;
        for (size_t i = 0; i < x->u.ints.n; i++)
            gir_put_le64((unsigned char *)(*out)->data + 8 * i, (uint64_t)x->u.ints.v[i]);
        return GIR_OK;
    }
    if (kind == ONNX_OPD_FLOATS) {
        s.dims[0] = (int64_t)x->u.floats.n;
        if ((st = gir_tensor_new(GIR_DT_F32, &s, out, err)))
            return st;
        for (size_t i = 0; i < x->u.floats.n; i++) {
            float f = (float)x->u.floats.v[i];
            memcpy((unsigned char *)(*out)->data + 4 * i, &f, 4);
        }
        return GIR_OK;
    }
    /* A scalar of the data input's type. */
    s.rank = 0;
    double v = x->type == GIR_ATTR_FLOAT ? x->u.f : (double)x->u.i;
    if (elem == GIR_DT_UNKNOWN)
        elem = GIR_DT_F32;
    if ((st = gir_tensor_new(elem, &s, out, err)))
        return st;
    unsigned char *p = (*out)->data;
    switch (elem) {
    case GIR_DT_F32: {
        float f = (float)v;
        memcpy(p, &f, 4);
        break;
    }
    case GIR_DT_F64: memcpy(p, &v, 8); break;
    case GIR_DT_F16: {
        uint16_t h = float_to_half((float)v);
        p[0] = (unsigned char)h;
        p[1] = (unsigned char)(h >> 8);
        break;
    }
    case GIR_DT_BF16: {
        float f = (float)v;
        uint32_t u;
        memcpy(&u, &f, 4);
        uint16_t h = (uint16_t)((u + 0x7fff + ((u >> 16) & 1)) >> 16);
        p[0] = (unsigned char)h;
        p[1] = (unsigned char)(h >> 8);
        break;
    }
    case GIR_DT_I8:
    case GIR_DT_U8:
    case GIR_DT_BOOL: p[0] = (unsigned char)(int64_t)v; break;
    case GIR_DT_I16:
    case GIR_DT_U16: {
        int64_t i = (int64_t)v;
        p[0] = (unsigned char)i;
        p[1] = (unsigned char)(i >> 8);
        break;
    }
    case GIR_DT_I32:
    case GIR_DT_U32: gir_put_le32(p, (uint32_t)(int64_t)v); break;
    case GIR_DT_I64: gir_put_le64(p, (uint64_t)(int64_t)v); break;
    case GIR_DT_U64: gir_put_le64(p, (uint64_t)v); break;
    default: break;
    }
    return GIR_OK;
}

/* Whether an attribute added in a later opset has its default value (then
 * it can be left out at an older opset). */
static bool is_default_of(const char *attr, const gir_attr *x)
{
    if (x->type == GIR_ATTR_INT || x->type == GIR_ATTR_BOOL)
        return x->u.i == 0;
    if (x->type == GIR_ATTR_INTS) {
        if (strcmp(attr, "dilations") != 0)
            return false;
        for (size_t i = 0; i < x->u.ints.n; i++)
            if (x->u.ints.v[i] != 1)
                return false;
        return true;
    }
    if (x->type == GIR_ATTR_STRING)
        return (strcmp(attr, "mode") == 0 && strcmp(x->u.s, "DCR") == 0);
    return false;
}

static int rank_of(const gir_value *v)
{
    return v ? v->shape.rank : -1;
}

/* Before opset 11, axes are 0..rank-1: negative ones are rewritten when
 * the rank is known.  Returns false (and records why) when impossible. */
static bool write_axes(writer *w, const gir_node *n, nb *b, const gir_attr *x, const char *name, int rank)
{
    bool neg = false;
    if (x->type == GIR_ATTR_INT)
        neg = x->u.i < 0;
    else if (x->type == GIR_ATTR_INTS)
        for (size_t i = 0; i < x->u.ints.n; i++)
            neg |= x->u.ints.v[i] < 0;
    if (!neg || w->opset >= 11) {
        nb_attr(w, b, attr_from_ir(w, x, name, NULL));
        return true;
    }
    if (rank < 0) {
        unsupported(w, n, GIR_E_UNSUPPORTED_ATTR, "%s with a negative %s at opset %lld (the rank is unknown)",
                    gir_op_name(n->op), x->name, (long long)w->opset);
        return false;
    }
    if (x->type == GIR_ATTR_INT) {
        nb_attr(w, b, attr_int(w, name, x->u.i + rank));
        return true;
    }
    int64_t *v = aalloc(w, (x->u.ints.n ? x->u.ints.n : 1) * sizeof *v);
    if (!v)
        return false;
    for (size_t i = 0; i < x->u.ints.n; i++)
        v[i] = x->u.ints.v[i] < 0 ? x->u.ints.v[i] + rank : x->u.ints.v[i];
    nb_attr(w, b, attr_ints(w, name, v, x->u.ints.n));
    return true;
}

/* An operand attribute holding the schema's default that was not read from
 * an ONNX input (the normalisation filled it in): ONNX's input is optional
 * and means the same when left out. */
static bool unsourced_default(const gir_node *n, const char *attr, const gir_attr *x)
{
    char key[96];
    snprintf(key, sizeof key, "%s%s", ONNX_META_OPERAND, attr);
    if (gir_attrs_find(&n->meta, key))
        return false;
    const gir_attr_schema *s = gir_op_attr_schema(n->op, attr);
    return s && s->presence == GIR_ATTR_DEFAULTED && x->type == GIR_ATTR_FLOAT && s->type == GIR_ATTR_FLOAT &&
           x->u.f == s->f;
}

static const onnx_operand *operand_of(const onnx_rule *r, const char *attr)
{
    for (size_t k = 0; r && k < 4 && r->operands[k].attr; k++)
        if (strcmp(r->operands[k].attr, attr) == 0)
            return &r->operands[k];
    return NULL;
}

/* Resize before opset 11: Resize-10 (X, scales) or Upsample (7: scales
 * attribute, 9: scales input), asymmetric coordinates, nearest rounding
 * down. */
static void old_resize(writer *w, const gir_node *n, nb *b, gir_error *err)
{
    int64_t W = w->opset;
    const char *mode = gir_node_string(n, "mode", "nearest");
    const double *sc = NULL;
    ptrdiff_t ns = gir_attrs_get_floats(&n->attrs, "scales", &sc);
    b->np->op_type = (char *)(W >= 10 ? "Resize" : "Upsample");
    for (size_t i = 0; i < n->attrs.n; i++) {
        const gir_attr *x = &n->attrs.items[i];
        const char *an = x->name;
        bool ok = true;
        if (strcmp(an, "scales") == 0 || strcmp(an, "mode") == 0)
            continue;
        if (strcmp(an, "coordinate_transformation_mode") == 0)
            ok = x->type == GIR_ATTR_STRING && strcmp(x->u.s, "asymmetric") == 0;
        else if (strcmp(an, "nearest_mode") == 0)
            ok = strcmp(mode, "nearest") != 0 || (x->type == GIR_ATTR_STRING && strcmp(x->u.s, "floor") == 0);
        else if (strcmp(an, "cubic_coeff_a") == 0 || strcmp(an, "exclude_outside") == 0 ||
                 strcmp(an, "extrapolation_value") == 0)
            ok = true; /* used only by cubic mode and tf_crop_and_resize */
        else
            ok = false;
        if (!ok) {
            unsupported(w, n, GIR_E_UNSUPPORTED_ATTR, "Resize with %s at opset %lld (only asymmetric coordinates, "
                        "nearest rounding down, scales)", an, (long long)W);
            return;
        }
    }
    if (strcmp(mode, "nearest") != 0 && strcmp(mode, "linear") != 0) {
        unsupported(w, n, GIR_E_UNSUPPORTED_ATTR, "Resize mode=%s at opset %lld", mode, (long long)W);
        return;
    }
    if (!gir_attrs_find(&n->attrs, "coordinate_transformation_mode") ||
        (strcmp(mode, "nearest") == 0 && !gir_attrs_find(&n->attrs, "nearest_mode"))) {
        unsupported(w, n, GIR_E_UNSUPPORTED_ATTR, "Resize with half_pixel coordinates at opset %lld (only asymmetric)",
                    (long long)W);
        return;
    }
    if (ns < 0) {
        unsupported(w, n, GIR_E_UNSUPPORTED_ATTR, "Resize without scales at opset %lld", (long long)W);
        return;
    }
    for (ptrdiff_t i = 0; W < 10 && i < ns; i++)
        if (sc[i] < 1) {
            unsupported(w, n, GIR_E_UNSUPPORTED_ATTR,
                        "Resize with scales below 1 at opset %lld (Upsample only enlarges)", (long long)W);
            return;
        }
    nb_input(w, b, 0, value_name(w->g, n->in[0]));
    nb_attr(w, b, attr_string(w, "mode", mode));
    if (W < 9) {
        nb_attr(w, b, attr_floats(w, "scales", sc, (size_t)ns));
    } else {
        gir_tensor *t;
        if (operand_tensor(ONNX_OPD_FLOATS, gir_attrs_find(&n->attrs, "scales"), GIR_DT_F32, &t, err)) {
            w->oom = true;
            return;
        }
        nb_input(w, b, 1, operand_init(w, n, "scales", t, err));
        gir_tensor_unref(t);
    }
    nb_outputs(w, b, n);
}

/* Before opset 7, binary operators broadcast only B over A and only when
 * told (broadcast=1: B's shape is A's trailing dimensions); Gemm
 * broadcasts C when told; BatchNormalization and Dropout compute the
 * inference form with is_test=1; PRelu takes a slope of one element or of
 * X's shape; the recurrent operators write Y only with output_sequence=1.
 * Adds those attributes, or records why the node has no opset-6 form. */
static bool opset6_form(writer *w, const gir_node *n, nb *b)
{
    const gir_graph *g = w->g;
    const gir_value *a = gir_in(g, n, 0), *bv = gir_in(g, n, 1), *y = gir_out(g, n, 0);
    char sa[96], sb[96];
    switch (n->op) {
    case GIR_OP_Add: case GIR_OP_Sub: case GIR_OP_Mul: case GIR_OP_Div: case GIR_OP_Pow:
    case GIR_OP_And: case GIR_OP_Or: case GIR_OP_Xor: case GIR_OP_Equal: case GIR_OP_Greater: case GIR_OP_Less: {
        /* shapes must be known to be equal: an unknown dimension may differ */
        bool same = a && bv && a->shape.rank >= 0 && gir_shape_equal(&a->shape, &bv->shape) &&
                    gir_shape_is_known(&a->shape);
        bool known = same;
        if (!same && a && bv && y && a->shape.rank >= 0 && bv->shape.rank >= 0 && bv->shape.rank <= a->shape.rank &&
            gir_shape_equal(&a->shape, &y->shape)) {
            known = true; /* B's dimensions are A's last ones */
            for (int i = 0; i < bv->shape.rank; i++) {
                int64_t da = a->shape.dims[a->shape.rank - bv->shape.rank + i];
                known &= da >= 0 && da == bv->shape.dims[i];
            }
        }
        if (!known) {
            unsupported(w, n, GIR_E_UNSUPPORTED_OP, "%s of %s and %s at opset %lld (before opset 7 only B broadcasts, "
                        "over A's trailing dimensions)", gir_op_name(n->op),
                        a ? gir_shape_str(&a->shape, sa, sizeof sa) : "?",
                        bv ? gir_shape_str(&bv->shape, sb, sizeof sb) : "?", (long long)w->opset);
            return false;
        }
        if (!same)
            nb_attr(w, b, attr_int(w, "broadcast", 1));
        return true;
    }
    case GIR_OP_Gemm:
        if (n->n_in > 2 && n->in[2] >= 0)
            nb_attr(w, b, attr_int(w, "broadcast", 1));
        return true;
    case GIR_OP_BatchNormalization:
    case GIR_OP_Dropout:
        if (n->op == GIR_OP_Dropout && gir_node_int(n, "training_mode", 0)) {
            unsupported(w, n, GIR_E_UNSUPPORTED_ATTR, "Dropout in training mode at opset %lld", (long long)w->opset);
            return false;
        }
        nb_attr(w, b, attr_int(w, "is_test", 1));
        return true;
    case GIR_OP_PRelu: {
        bool ok = a && bv && a->shape.rank >= 0 && bv->shape.rank >= 0 &&
                  (gir_shape_equal(&a->shape, &bv->shape) || gir_shape_numel(&bv->shape) == 1);
        if (!ok) {
            unsupported(w, n, GIR_E_UNSUPPORTED_OP, "PRelu with a slope of shape %s at opset %lld (before opset 7 the "
                        "slope has one element or X's shape)", bv ? gir_shape_str(&bv->shape, sb, sizeof sb) : "?",
                        (long long)w->opset);
            return false;
        }
        return true;
    }
    case GIR_OP_LSTM:
    case GIR_OP_GRU:
    case GIR_OP_RNN:
        if (y)
            nb_attr(w, b, attr_int(w, "output_sequence", 1));
        return true;
    default: return true;
    }
}

/* Writes a canonical node at the target opset, or records why it cannot. */
static void canonical_node(writer *w, const gir_node *n, nb *b, gir_error *err)
{
    const gir_graph *g = w->g;
    gir_op op = n->op;
    const onnx_rule *r = onnx_rule_for(op);
    int64_t W = w->opset;
    const char *type = gir_op_name(op);
    int since = r ? r->since : 1;
    if (!onnx_op_has_form(op)) {
        if (!w->allow_opaque) {
            unsupported(w, n, GIR_E_UNSUPPORTED_OP, "%s (no ONNX operator computes it)", type);
            return;
        }
        /* kept under graphconv's own domain, attributes verbatim */
        b->np->op_type = (char *)type;
        b->np->domain = (char *)"ai.graphconv";
        add_domain(w, b->np->domain, 1);
        for (size_t i = 0; i < n->n_in; i++)
            nb_input(w, b, i, value_name(g, n->in[i]));
        for (size_t i = 0; i < n->attrs.n; i++)
            nb_attr(w, b, attr_from_ir(w, &n->attrs.items[i], n->attrs.items[i].name, err));
        nb_outputs(w, b, n);
        return;
    }
    if (op == GIR_OP_Resize && W < 7) {
        unsupported(w, n, GIR_E_UNSUPPORTED_OP, "Resize needs opset 7 or later (writing opset %lld)", (long long)W);
        return;
    }
    if (W < 7 && !opset6_form(w, n, b))
        return;
    if (op == GIR_OP_Resize && W < 11) {
        old_resize(w, n, b, err);
        return;
    }
    if (W < since) {
        unsupported(w, n, GIR_E_UNSUPPORTED_OP, "%s needs opset %d or later (writing opset %lld)", type, since,
                    (long long)W);
        return;
    }
    b->np->op_type = (char *)type;
    size_t n_data = n->n_in;
    while (n_data && n->in[n_data - 1] < 0)
        n_data--;
    for (size_t i = 0; i < n_data; i++)
        nb_input(w, b, i, value_name(g, n->in[i]));
    const gir_value *x0 = gir_in(g, n, 0);
    gir_dtype elem = x0 ? x0->dtype : GIR_DT_UNKNOWN;
    int rank = rank_of(x0);
    if (op == GIR_OP_Unsqueeze)
        rank = rank_of(gir_out(g, n, 0));

    for (size_t i = 0; i < n->attrs.n; i++) {
        const gir_attr *x = &n->attrs.items[i];
        const char *an = x->name;
        const onnx_operand *o = operand_of(r, an);
        if (o && unsourced_default(n, an, x))
            continue;
        if (op == GIR_OP_Split && strcmp(an, "split") == 0 && W >= 18 &&
            gir_attrs_get_int(&n->meta, "onnx.num_outputs", 0) == (int64_t)n->n_out && x->type == GIR_ATTR_INTS &&
            x->u.ints.n == n->n_out) {
            /* read from num_outputs: written back as it was when the parts
             * are ceil-sized with the remainder last */
            int64_t total = 0;
            for (size_t k = 0; k < x->u.ints.n; k++)
                total += x->u.ints.v[k];
            int64_t part = (total + (int64_t)n->n_out - 1) / (int64_t)n->n_out;
            bool same = true;
            for (size_t k = 0; k + 1 < x->u.ints.n; k++)
                same &= x->u.ints.v[k] == part;
            if (same) {
                nb_attr(w, b, attr_int(w, "num_outputs", (int64_t)n->n_out));
                continue;
            }
        }
        if (o) {
            bool axes = strcmp(an, "axes") == 0;
            if (W >= o->since) {
                if ((o->kind == ONNX_OPD_INTS && x->type != GIR_ATTR_INTS) ||
                    (o->kind == ONNX_OPD_FLOATS && x->type != GIR_ATTR_FLOATS) ||
                    (o->kind == ONNX_OPD_SCALAR && x->type != GIR_ATTR_FLOAT && x->type != GIR_ATTR_INT)) {
                    unsupported(w, n, GIR_E_UNSUPPORTED_ATTR, "%s attribute %s of the wrong type", type, an);
                    return;
                }
                gir_tensor *t;
                if (operand_tensor(o->kind, x, op == GIR_OP_Dropout ? GIR_DT_F32 : elem, &t, err)) {
                    w->oom = true;
                    return;
                }
                nb_input(w, b, o->pos, operand_init(w, n, an, t, err));
                gir_tensor_unref(t);
            } else if (o->old) {
                if (axes) {
                    if (!write_axes(w, n, b, x, o->old, rank))
                        return;
                } else if (o->kind == ONNX_OPD_SCALAR) {
                    nb_attr(w, b, attr_float(w, o->old, gir_attrs_get_float(&n->attrs, an, 0)));
                } else {
                    nb_attr(w, b, attr_from_ir(w, x, o->old, err));
                }
            } else if (op == GIR_OP_Slice && strcmp(an, "steps") == 0 && x->type == GIR_ATTR_INTS) {
                for (size_t k = 0; k < x->u.ints.n; k++)
                    if (x->u.ints.v[k] != 1) {
                        unsupported(w, n, GIR_E_UNSUPPORTED_ATTR,
                                    "Slice with steps other than 1 needs opset 10 (writing opset %lld)", (long long)W);
                        return;
                    }
            } else {
                unsupported(w, n, GIR_E_UNSUPPORTED_ATTR, "%s with %s needs opset %d (writing opset %lld)", type, an,
                            o->since, (long long)W);
                return;
            }
            continue;
        }
        if (op == GIR_OP_Cast && strcmp(an, "to") == 0 && x->type == GIR_ATTR_STRING) {
            int32_t code = onnx_dtype_from_gir(gir_dtype_from_name(x->u.s));
            if (!code) {
                unsupported(w, n, GIR_E_UNSUPPORTED_ATTR, "Cast to '%s'", x->u.s);
                return;
            }
            nb_attr(w, b, attr_int(w, "to", code));
            continue;
        }
        if (op == GIR_OP_Dropout && strcmp(an, "training_mode") == 0 && W >= 12) {
            if (x->type == GIR_ATTR_INT && (x->u.i || gir_attrs_find(&n->meta, ONNX_META_OPERAND "training_mode"))) {
                gir_tensor *t;
                if (operand_tensor(ONNX_OPD_BOOL, x, GIR_DT_BOOL, &t, err)) {
                    w->oom = true;
                    return;
                }
                nb_input(w, b, 2, operand_init(w, n, an, t, err));
                gir_tensor_unref(t);
            }
            continue;
        }
        if (op == GIR_OP_Reshape && strcmp(an, "allowzero") == 0 && W < 14 && x->type == GIR_ATTR_INT && x->u.i) {
            const int64_t *sv = NULL;
            ptrdiff_t ns = gir_attrs_get_ints(&n->attrs, "shape", &sv);
            bool zero = false;
            for (ptrdiff_t k = 0; k < ns; k++)
                zero |= sv[k] == 0;
            if (!zero)
                continue; /* no zero in the shape: allowzero changes nothing */
        }
        int attr_since = 0;
        for (size_t k = 0; r && k < 6 && r->newer[k].attr; k++)
            if (strcmp(r->newer[k].attr, an) == 0)
                attr_since = r->newer[k].since;
        if (W < attr_since) {
            if (strcmp(an, "seed") == 0 || is_default_of(an, x))
                continue;
            unsupported(w, n, GIR_E_UNSUPPORTED_ATTR, "%s attribute %s needs opset %d (writing opset %lld)", type, an,
                        attr_since, (long long)W);
            return;
        }
        if ((op == GIR_OP_Softmax || op == GIR_OP_LogSoftmax) && strcmp(an, "axis") == 0 && W < 13)
            continue; /* written below */
        if (W < 11 && strcmp(an, "axis") == 0) {
            if (!write_axes(w, n, b, x, an, rank))
                return;
            continue;
        }
        nb_attr(w, b, attr_from_ir(w, x, an, err));
    }

    switch (op) {
    case GIR_OP_Softmax:
    case GIR_OP_LogSoftmax:
        if (W < 13) {
            int64_t axis = gir_node_int(n, "axis", -1);
            if (axis == -1 && W >= 11) { /* the last axis: the same at every opset */
                nb_attr(w, b, attr_int(w, "axis", -1));
                break;
            }
            if (rank < 0) {
                unsupported(w, n, GIR_E_UNSUPPORTED_ATTR, "%s before opset 13 needs the input's rank (writing opset "
                            "%lld)", type, (long long)W);
                return;
            }
            int64_t given = axis;
            if (axis < 0)
                axis += rank;
            for (int i = (int)axis + 1; i < rank; i++)
                if (x0->shape.dims[i] != 1) {
                    unsupported(w, n, GIR_E_UNSUPPORTED_ATTR,
                                "%s over axis %lld of a rank-%d input needs opset 13 (writing opset %lld)", type,
                                (long long)axis, rank, (long long)W);
                    return;
                }
            nb_attr(w, b, attr_int(w, "axis", given < 0 && W >= 11 ? given : axis));
        }
        break;
    case GIR_OP_Split:
        if (W >= 18 && !gir_attrs_find(&n->attrs, "split"))
            nb_attr(w, b, attr_int(w, "num_outputs", (int64_t)n->n_out));
        break;
    case GIR_OP_Resize:
        if (W < 13) {
            /* roi and scales are required inputs at opsets 11 and 12. */
            gir_shape empty = { 1, { 0 } };
            for (size_t pos = 1; pos <= 2; pos++) {
                if (pos < b->np->n_input && b->np->input[pos][0])
                    continue;
                gir_tensor *t;
                if (gir_tensor_new(GIR_DT_F32, &empty, &t, err)) {
                    w->oom = true;
                    return;
                }
                nb_input(w, b, pos, operand_init(w, n, pos == 1 ? "roi" : "scales", t, err));
                gir_tensor_unref(t);
            }
        }
        break;
    case GIR_OP_Gemm:
        if (W < 11 && n_data < 3) {
            unsupported(w, n, GIR_E_UNSUPPORTED_OP, "Gemm without C needs opset 11 (writing opset %lld)", (long long)W);
            return;
        }
        break;
    default: break;
    }
    nb_outputs(w, b, n);
}

static void add_domain(writer *w, const char *domain, int64_t version)
{
    for (size_t i = 0; i < w->n_xdom; i++)
        if (strcmp(w->xdom[i], domain) == 0)
            return;
    const char **nd = aalloc(w, (w->n_xdom + 1) * sizeof *nd);
    int64_t *nv = aalloc(w, (w->n_xdom + 1) * sizeof *nv);
    if (!nd || !nv)
        return;
    if (w->n_xdom) {
        memcpy(nd, w->xdom, w->n_xdom * sizeof *nd);
        memcpy(nv, w->xver, w->n_xdom * sizeof *nv);
    }
    nd[w->n_xdom] = domain;
    nv[w->n_xdom] = version;
    w->xdom = nd;
    w->xver = nv;
    w->n_xdom++;
}

static void opaque_node(writer *w, const gir_node *n, nb *b, gir_error *err)
{
    const gir_graph *g = w->g;
    bool onnx = n->opaque_format && strcmp(n->opaque_format, "onnx") == 0;
    const char *domain = meta_s(&n->meta, ONNX_META_DOMAIN);
    if (!onnx && !w->allow_opaque) {
        const char *why = gir_node_opaque_why(n);
        unsupported(w, n, GIR_E_UNSUPPORTED_OP, "%s (an operator of %s kept verbatim%s%s)",
                    n->opaque_op ? n->opaque_op : "?", n->opaque_format ? n->opaque_format : "another format",
                    why ? ": " : "", why ? why : "");
        return;
    }
    if (onnx && (!domain || strcmp(domain, "ai.onnx") == 0)) {
        int64_t v = gir_attrs_get_int(&n->meta, ONNX_META_OPSET, 0);
        if (v != w->opset) {
            const char *why = meta_s(&n->meta, "onnx.why");
            unsupported(w, n, GIR_E_UNSUPPORTED_OP, "%s (kept verbatim from opset %lld%s%s) at opset %lld",
                        n->opaque_op, (long long)v, why ? ": " : "", why ? why : "", (long long)w->opset);
            return;
        }
    }
    if (!onnx) {
        domain = gir_arena_printf(&w->a, "ai.graphconv.%s", n->opaque_format ? n->opaque_format : "opaque");
        if (!domain) {
            w->oom = true;
            return;
        }
    }
    b->np->op_type = astr(w, n->opaque_op ? n->opaque_op : "?");
    if (domain) {
        b->np->domain = astr(w, domain);
        if (strcmp(domain, "ai.onnx") != 0)
            add_domain(w, b->np->domain, onnx ? gir_attrs_get_int(&n->meta, ONNX_META_OPSET, 1) : 1);
    }
    for (size_t i = 0; i < n->n_in; i++)
        nb_input(w, b, i, value_name(g, n->in[i]));
    for (size_t i = 0; i < n->attrs.n; i++)
        nb_attr(w, b, attr_from_ir(w, &n->attrs.items[i], n->attrs.items[i].name, err));
    const char *extra = meta_s(&n->meta, ONNX_META_EXTRA);
    if (extra) {
        Onnx__NodeProto *xp = (Onnx__NodeProto *)unpack_blob(w, &onnx__node_proto__descriptor, extra);
        if (!xp) {
            w->bad_meta = n->name;
            return;
        }
        for (size_t i = 0; i < xp->n_attribute; i++)
            nb_attr(w, b, xp->attribute[i]);
    }
    nb_outputs(w, b, n);
}

static void push_node(writer *w, Onnx__NodeProto *np)
{
    if (!GIR_GROW(w->nodes, w->cap_nodes, w->n_nodes + 1)) {
        w->oom = true;
        return;
    }
    w->nodes[w->n_nodes++] = np;
}

/* A CONST value that came from a Constant node goes back to one. */
static void constant_node(writer *w, int32_t vi, gir_error *err)
{
    const gir_value *v = w->g->values[vi];
    w->const_done[vi] = true;
    Onnx__NodeProto *np = aalloc(w, sizeof *np);
    if (!np)
        return;
    onnx__node_proto__init(np);
    np->op_type = (char *)"Constant";
    np->name = astr(w, meta_s(&v->meta, ONNX_META_CONSTANT));
    np->n_output = 1;
    np->output = aalloc(w, sizeof *np->output);
    if (!np->output)
        return;
    np->output[0] = (char *)v->name;
    const char *attr = meta_s(&v->meta, ONNX_META_CONSTANT_ATTR);
    gir_tensor *t = v->data;
    Onnx__AttributeProto *a = NULL;
    int64_t numel = gir_shape_numel(&t->shape);
    bool scalar = t->shape.rank == 0, list = t->shape.rank == 1;
    const void *d = NULL;
    bool loaded = t->data != NULL;
    if (attr && strcmp(attr, "value") != 0 && w->opset >= 12 && gir_tensor_load(t, &d, err) == GIR_OK) {
        const unsigned char *p = d;
        if (strcmp(attr, "value_float") == 0 && scalar && t->dtype == GIR_DT_F32) {
            float f;
            memcpy(&f, p, 4);
            a = attr_float(w, attr, f);
        } else if (strcmp(attr, "value_int") == 0 && scalar && t->dtype == GIR_DT_I64) {
            a = attr_int(w, attr, (int64_t)gir_le64(p));
        } else if (strcmp(attr, "value_floats") == 0 && list && t->dtype == GIR_DT_F32) {
            a = attr_new(w, attr, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS);
            if (a && (a->floats = aalloc(w, (size_t)(numel ? numel : 1) * 4))) {
                a->n_floats = (size_t)numel;
                memcpy(a->floats, p, (size_t)numel * 4);
            }
        } else if (strcmp(attr, "value_ints") == 0 && list && t->dtype == GIR_DT_I64) {
            a = attr_new(w, attr, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS);
            if (a && (a->ints = aalloc(w, (size_t)(numel ? numel : 1) * 8))) {
                a->n_ints = (size_t)numel;
                for (int64_t i = 0; i < numel; i++)
                    a->ints[i] = (int64_t)gir_le64(p + 8 * i);
            }
        }
        if (!loaded)
            gir_tensor_unload(t);
    }
    if (!a) {
        a = attr_new(w, "value", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR);
        if (a && !(a->t = tensor_proto(w, t, NULL, err)))
            a = NULL;
    }
    if (!a) {
        w->oom = true;
        return;
    }
    np->n_attribute = 1;
    np->attribute = aalloc(w, sizeof *np->attribute);
    if (np->attribute)
        np->attribute[0] = a;
    push_node(w, np);
}

static bool is_constant_node_value(const gir_value *v)
{
    return v->kind == GIR_VALUE_CONST && v->data && meta_s(&v->meta, ONNX_META_CONSTANT);
}

static void write_node(writer *w, const gir_node *n, gir_error *err)
{
    const gir_graph *g = w->g;
    for (size_t i = 0; i < n->n_in; i++) {
        int32_t vi = n->in[i];
        if (vi >= 0 && !w->const_done[vi] && is_constant_node_value(g->values[vi]))
            constant_node(w, vi, err);
    }
    nb b = { NULL, 0, 0 };
    b.np = aalloc(w, sizeof *b.np);
    if (!b.np)
        return;
    onnx__node_proto__init(b.np);
    const gir_attr *nm = gir_attrs_find(&n->meta, "onnx.name");
    b.np->name = astr(w, nm && nm->type == GIR_ATTR_STRING ? nm->u.s : n->name);
    const char *doc = meta_s(&n->meta, ONNX_META_DOC);
    if (doc)
        b.np->doc_string = astr(w, doc);
    size_t before = gir_unsupported_count(w->u);
    if (n->op == GIR_OP_OPAQUE) {
        opaque_node(w, n, &b, err);
    } else {
        const char *domain = meta_s(&n->meta, ONNX_META_DOMAIN);
        if (domain && strcmp(domain, "ai.onnx") == 0)
            b.np->domain = astr(w, domain);
        canonical_node(w, n, &b, err);
    }
    if (gir_unsupported_count(w->u) == before)
        push_node(w, b.np);
}

/* ---- the graph ------------------------------------------------------------ */

static int64_t ir_for_opset(int64_t opset)
{
    static const int64_t ir[] = { 3, 3, 3, 4, 5, 6, 7, 7, 7, 8, 8, 8, 8 }; /* opsets 6..18 */
    return opset >= 6 && opset <= 18 ? ir[opset - 6] : 8;
}

static int64_t source_opset(const gir_graph *g)
{
    const char *src = meta_s(&g->meta, "source.format");
    const gir_attr *d = gir_attrs_find(&g->meta, ONNX_META_OPSET_DOMAINS);
    const gir_attr *v = gir_attrs_find(&g->meta, ONNX_META_OPSET_VERSIONS);
    if (!src || strcmp(src, "onnx") != 0 || !d || !v || d->type != GIR_ATTR_STRINGS || v->type != GIR_ATTR_INTS ||
        d->u.strs.n != v->u.ints.n)
        return 0;
    for (size_t i = 0; i < d->u.strs.n; i++)
        if (!*d->u.strs.v[i] || strcmp(d->u.strs.v[i], "ai.onnx") == 0)
            return v->u.ints.v[i];
    return 0;
}

static gir_status setup(writer *w, gir_error *err)
{
    const gir_graph *g = w->g;
    int64_t src = source_opset(g);
    int64_t dflt = src >= ONNX_WRITE_OPSET_MIN && src <= ONNX_WRITE_OPSET_MAX ? src : ONNX_DEFAULT_OPSET;
    if (w->fallback_opset)
        dflt = w->fallback_opset;
    gir_status st = gir_options_int(w->opts, "opset", dflt, &w->opset, err);
    if (st)
        return st;
    if (w->opset < ONNX_WRITE_OPSET_MIN || w->opset > ONNX_WRITE_OPSET_MAX)
        return gir_fail(err, GIR_E_ARGUMENT, "option opset=%lld is outside the opsets graphconv writes (%d..%d)",
                        (long long)w->opset, ONNX_WRITE_OPSET_MIN, ONNX_WRITE_OPSET_MAX);
    w->ir_version = ir_for_opset(w->opset);
    if (src == w->opset) {
        int64_t iv = gir_attrs_get_int(&g->meta, ONNX_META_IR_VERSION, 0);
        if (iv >= 3)
            w->ir_version = iv;
    }
    w->allow_opaque = gir_options_flag(w->opts, "allow-opaque");
    if (!w->u)
        w->u = gir_unsupported_new();
    w->const_done = calloc(g->n_values ? g->n_values : 1, sizeof *w->const_done);
    if (!w->u || !w->const_done)
        return gir_nomem(err);
    for (size_t i = 0; i < g->n_values; i++)
        if (!onnx_map_put(&w->names, g->values[i]->name, 0))
            return gir_nomem(err);
    return GIR_OK;
}

static void push_vi(writer *w, Onnx__ValueInfoProto ***arr, size_t *n, Onnx__ValueInfoProto *vi)
{
    if (!vi) {
        w->oom = true;
        return;
    }
    Onnx__ValueInfoProto **na = aalloc(w, (*n + 1) * sizeof *na);
    if (!na)
        return;
    if (*n)
        memcpy(na, *arr, *n * sizeof *na);
    na[(*n)++] = vi;
    *arr = na;
}

static bool is_initializer(const gir_value *v)
{
    return (v->kind == GIR_VALUE_WEIGHT || v->kind == GIR_VALUE_CONST) && v->data && !is_constant_node_value(v);
}

static void build_graph(writer *w, gir_error *err)
{
    const gir_graph *g = w->g;
    /* Initializers from weights and constants, in value order. */
    for (size_t i = 0; i < g->n_values; i++) {
        const gir_value *v = g->values[i];
        if (!is_initializer(v))
            continue;
        if (!onnx_dtype_from_gir(v->data->dtype)) {
            gir_unsupported_add_value(w->u, GIR_E_UNSUPPORTED, "a weight of unknown element type", v->name);
            continue;
        }
        add_init(w, v->name, v->data);
    }
    w->n_value_inits = w->n_inits;
    /* Graph inputs: the graph's, then weights the file listed as inputs at
     * their places, and weights without data (the caller must feed them). */
    bool *listed = calloc(g->n_values ? g->n_values : 1, sizeof *listed);
    if (!listed) {
        w->oom = true;
        return;
    }
    size_t n_extra = 0;
    for (size_t i = 0; i < g->n_values; i++) {
        const gir_value *v = g->values[i];
        if (gir_attrs_find(&v->meta, ONNX_META_INPUT_INDEX) || (w->ir_version < 4 && is_initializer(v)) ||
            (v->kind == GIR_VALUE_WEIGHT && !v->data))
            n_extra++;
    }
    size_t total = g->n_inputs + n_extra;
    const gir_value **slots = calloc(total ? total : 1, sizeof *slots);
    if (!slots) {
        free(listed);
        w->oom = true;
        return;
    }
    for (size_t i = 0; i < g->n_inputs; i++)
        listed[g->inputs[i]] = true;
    for (size_t i = 0; i < g->n_values; i++) {
        const gir_value *v = g->values[i];
        int64_t at = gir_attrs_get_int(&v->meta, ONNX_META_INPUT_INDEX, -1);
        if (!listed[i] && at >= 0 && (size_t)at < total && !slots[at]) {
            slots[at] = v;
            listed[i] = true;
        }
    }
    size_t next = 0;
    for (size_t i = 0; i < g->n_inputs; i++) {
        while (slots[next])
            next++;
        slots[next] = g->values[g->inputs[i]];
    }
    for (size_t i = 0; i < g->n_values; i++) {
        const gir_value *v = g->values[i];
        if (listed[i] || !(gir_attrs_find(&v->meta, ONNX_META_INPUT_INDEX) || (w->ir_version < 4 && is_initializer(v)) ||
                           (v->kind == GIR_VALUE_WEIGHT && !v->data)))
            continue;
        while (next < total && slots[next])
            next++;
        if (next < total)
            slots[next] = v;
        listed[i] = true;
    }
    for (size_t i = 0; i < total; i++) {
        if (!slots[i])
            continue;
        /* onnx.checker requires a shape on every graph input */
        if (slots[i]->shape.rank < 0 && !slots[i]->data && !meta_s(&slots[i]->meta, ONNX_META_TYPE))
            unsupported(w, NULL, GIR_E_UNSUPPORTED, "graph input '%s' of unknown rank (an ONNX graph input needs a "
                        "shape; give its shape with --input-shape)", slots[i]->name);
        push_vi(w, &w->inputs, &w->n_inputs, value_info(w, slots[i]));
    }
    free(slots);
    free(listed);
    /* Nodes, with Constant nodes just before their first consumer. */
    for (size_t i = 0; i < g->n_nodes; i++)
        write_node(w, g->nodes[i], err);
    for (size_t i = 0; i < g->n_values; i++)
        if (!w->const_done[i] && is_constant_node_value(g->values[i]))
            constant_node(w, (int32_t)i, err);
    /* Outputs and the types of intermediate values. */
    bool *is_out = calloc(g->n_values ? g->n_values : 1, sizeof *is_out);
    if (!is_out) {
        w->oom = true;
        return;
    }
    for (size_t i = 0; i < g->n_outputs; i++) {
        push_vi(w, &w->outputs, &w->n_outputs, value_info(w, g->values[g->outputs[i]]));
        is_out[g->outputs[i]] = true;
    }
    for (size_t i = 0; i < g->n_values; i++) {
        const gir_value *v = g->values[i];
        if (v->kind == GIR_VALUE_INTERMEDIATE && !is_out[i] &&
            (v->dtype != GIR_DT_UNKNOWN || gir_attrs_find(&v->meta, ONNX_META_TYPE)))
            push_vi(w, &w->vinfo, &w->n_vinfo, value_info(w, v));
    }
    free(is_out);
}

/* ---- streaming output -------------------------------------------------------- */

typedef struct sink {
    ProtobufCBuffer base;
    gir_outfile *f;
    gir_error *err;
    gir_status st;
    uint64_t written;
} sink;

static void sink_append(ProtobufCBuffer *b, size_t len, const uint8_t *data)
{
    sink *s = (sink *)b;
    if (s->st == GIR_OK)
        s->st = gir_outfile_write(s->f, data, len, s->err);
    s->written += len;
}

static void put(sink *s, const void *p, size_t n)
{
    sink_append(&s->base, n, p);
}

static size_t varint_len(uint64_t v)
{
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

static void put_varint(sink *s, uint64_t v)
{
    uint8_t b[10];
    size_t n = 0;
    while (v >= 0x80) {
        b[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    b[n++] = (uint8_t)v;
    put(s, b, n);
}

static void put_tag(sink *s, uint32_t field, uint32_t wt)
{
    put_varint(s, (uint64_t)field << 3 | wt);
}

static size_t tag_len(uint32_t field)
{
    return varint_len((uint64_t)field << 3);
}

static size_t bytes_field_len(uint32_t field, uint64_t n)
{
    return tag_len(field) + varint_len(n) + (size_t)n;
}

typedef struct ext_layout {
    const char *location;
    char offset[24], length[24];
} ext_layout;

static void ext_layout_of(const winit *in, const char *location, ext_layout *x)
{
    x->location = location;
    snprintf(x->offset, sizeof x->offset, "%llu", (unsigned long long)in->offset);
    snprintf(x->length, sizeof x->length, "%llu", (unsigned long long)in->t->nbytes);
}

static size_t entry_len(const char *k, const char *v)
{
    return bytes_field_len(1, strlen(k)) + bytes_field_len(2, strlen(v));
}

/* Size of a TensorProto for an initializer: dims, data_type, name, then
 * raw_data or the external data entries. */
static uint64_t init_len(const winit *in, const char *location)
{
    uint64_t n = 0;
    for (int i = 0; i < in->t->shape.rank; i++)
        n += tag_len(1) + varint_len((uint64_t)in->t->shape.dims[i]);
    n += tag_len(2) + varint_len((uint64_t)onnx_dtype_from_gir(in->t->dtype));
    n += bytes_field_len(8, strlen(in->name));
    if (in->external) {
        ext_layout x;
        ext_layout_of(in, location, &x);
        n += bytes_field_len(13, entry_len("location", x.location));
        n += bytes_field_len(13, entry_len("offset", x.offset));
        n += bytes_field_len(13, entry_len("length", x.length));
        n += tag_len(14) + 1;
    } else {
        n += tag_len(9) + varint_len(in->t->nbytes) + in->t->nbytes;
    }
    return n;
}

static void put_bytes_field(sink *s, uint32_t field, const char *p, size_t n)
{
    put_tag(s, field, 2);
    put_varint(s, n);
    put(s, p, n);
}

static void put_entry(sink *s, const char *k, const char *v)
{
    put_tag(s, 13, 2);
    put_varint(s, entry_len(k, v));
    put_bytes_field(s, 1, k, strlen(k));
    put_bytes_field(s, 2, v, strlen(v));
}

/* Streams one tensor's bytes, loading it only for the copy. */
static gir_status put_tensor_data(sink *s, gir_tensor *t, gir_error *err)
{
    bool loaded = t->data != NULL;
    const void *d;
    gir_status st = gir_tensor_load(t, &d, err);
    if (st)
        return st;
    put(s, d, (size_t)t->nbytes);
    if (!loaded)
        gir_tensor_unload(t);
    if (!s->st)
        gir_progress_add(t->nbytes);
    return s->st;
}

static gir_status put_init(sink *s, sink *data, const winit *in, const char *location, gir_error *err)
{
    put_tag(s, 5, 2);
    put_varint(s, init_len(in, location));
    for (int i = 0; i < in->t->shape.rank; i++) {
        put_tag(s, 1, 0);
        put_varint(s, (uint64_t)in->t->shape.dims[i]);
    }
    put_tag(s, 2, 0);
    put_varint(s, (uint64_t)onnx_dtype_from_gir(in->t->dtype));
    put_bytes_field(s, 8, in->name, strlen(in->name));
    if (in->external) {
        ext_layout x;
        ext_layout_of(in, location, &x);
        put_entry(s, "location", x.location);
        put_entry(s, "offset", x.offset);
        put_entry(s, "length", x.length);
        put_tag(s, 14, 0);
        put_varint(s, 1);
        return put_tensor_data(data, in->t, err);
    }
    put_tag(s, 9, 2);
    put_varint(s, in->t->nbytes);
    return put_tensor_data(s, in->t, err);
}

/* The default domain is imported unless a model read from ONNX did not
 * import it and has no node of it. */
static bool needs_default_domain(const writer *w, const gir_attr *src_domains)
{
    if (!src_domains)
        return true;
    for (size_t i = 0; i < src_domains->u.strs.n; i++)
        if (!*src_domains->u.strs.v[i] || strcmp(src_domains->u.strs.v[i], "ai.onnx") == 0)
            return true;
    for (size_t i = 0; i < w->n_nodes; i++) {
        const char *d = w->nodes[i]->domain;
        if (!d || !*d || strcmp(d, "ai.onnx") == 0)
            return true;
    }
    return false;
}

/* The model in three parts around the graph, the graph in three parts
 * around the initializers, so that fields come in field-number order. */
typedef struct parts {
    Onnx__ModelProto m1, m2;
    Onnx__GraphProto g1, g2;
} parts;

static void model_parts(writer *w, parts *p)
{
    const gir_graph *g = w->g;
    onnx__model_proto__init(&p->m1);
    onnx__model_proto__init(&p->m2);
    onnx__graph_proto__init(&p->g1);
    onnx__graph_proto__init(&p->g2);
    Onnx__ModelProto *extra = NULL;
    const char *blob = meta_s(&g->meta, ONNX_META_EXTRA);
    if (blob && !(extra = (Onnx__ModelProto *)unpack_blob(w, &onnx__model_proto__descriptor, blob)))
        w->bad_meta = "(graph)";
    /* m1: ir_version .. doc_string */
    p->m1.has_ir_version = 1;
    p->m1.ir_version = w->ir_version;
    const char *pn = meta_s(&g->meta, ONNX_META_PRODUCER_NAME), *pv = meta_s(&g->meta, ONNX_META_PRODUCER_VERSION);
    p->m1.producer_name = astr(w, pn ? pn : "graphconv");
    if (pn ? pv != NULL : true)
        p->m1.producer_version = astr(w, pn ? pv : GIR_VERSION);
    const char *dom = meta_s(&g->meta, ONNX_META_DOMAIN), *doc = meta_s(&g->meta, ONNX_META_DOC);
    if (dom)
        p->m1.domain = astr(w, dom);
    const gir_attr *mv = gir_attrs_find(&g->meta, ONNX_META_MODEL_VERSION);
    if (mv && mv->type == GIR_ATTR_INT) {
        p->m1.has_model_version = 1;
        p->m1.model_version = mv->u.i;
    }
    if (doc)
        p->m1.doc_string = astr(w, doc);
    /* g1: nodes, name; g2: doc, inputs, outputs, value_info, extras */
    p->g1.n_node = w->n_nodes;
    p->g1.node = w->nodes;
    p->g1.name = astr(w, g->name && *g->name ? g->name : "graphconv");
    const char *gdoc = meta_s(&g->meta, ONNX_META_GRAPH_DOC);
    if (gdoc)
        p->g2.doc_string = astr(w, gdoc);
    p->g2.n_input = w->n_inputs;
    p->g2.input = w->inputs;
    p->g2.n_output = w->n_outputs;
    p->g2.output = w->outputs;
    p->g2.n_value_info = w->n_vinfo;
    p->g2.value_info = w->vinfo;
    if (extra && extra->graph) {
        p->g2.n_sparse_initializer = extra->graph->n_sparse_initializer;
        p->g2.sparse_initializer = extra->graph->sparse_initializer;
        p->g2.n_quantization_annotation = extra->graph->n_quantization_annotation;
        p->g2.quantization_annotation = extra->graph->quantization_annotation;
    }
    /* m2: opset_import, metadata_props, training_info, functions */
    const gir_attr *doms = gir_attrs_find(&g->meta, ONNX_META_OPSET_DOMAINS);
    const gir_attr *vers = gir_attrs_find(&g->meta, ONNX_META_OPSET_VERSIONS);
    bool src_onnx = doms && vers && doms->type == GIR_ATTR_STRINGS && vers->type == GIR_ATTR_INTS &&
                    doms->u.strs.n == vers->u.ints.n;
    size_t nsrc = src_onnx ? doms->u.strs.n : 0;
    size_t cap = 1 + nsrc + w->n_xdom;
    p->m2.opset_import = aalloc(w, cap * sizeof *p->m2.opset_import);
    if (!p->m2.opset_import)
        return;
    Onnx__OperatorSetIdProto *os = aalloc(w, cap * sizeof *os);
    if (!os)
        return;
    size_t no = 0;
    if (needs_default_domain(w, src_onnx ? doms : NULL)) {
        onnx__operator_set_id_proto__init(&os[no]);
        os[no].domain = NULL;
        os[no].has_version = 1;
        os[no].version = w->opset;
        /* keep the source's spelling of the default domain */
        for (size_t i = 0; i < nsrc; i++)
            if (strcmp(doms->u.strs.v[i], "ai.onnx") == 0 && w->opset == vers->u.ints.v[i])
                os[no].domain = (char *)"ai.onnx";
        p->m2.opset_import[no] = &os[no];
        no++;
    }
    for (size_t i = 0; i < nsrc; i++) {
        const char *d = doms->u.strs.v[i];
        if (!*d || strcmp(d, "ai.onnx") == 0)
            continue;
        onnx__operator_set_id_proto__init(&os[no]);
        os[no].domain = astr(w, d);
        os[no].has_version = 1;
        os[no].version = vers->u.ints.v[i];
        p->m2.opset_import[no] = &os[no];
        no++;
    }
    for (size_t i = 0; i < w->n_xdom; i++) {
        bool seen = false;
        for (size_t k = 0; k < no; k++)
            seen |= os[k].domain && strcmp(os[k].domain, w->xdom[i]) == 0;
        if (seen)
            continue;
        onnx__operator_set_id_proto__init(&os[no]);
        os[no].domain = (char *)w->xdom[i];
        os[no].has_version = 1;
        os[no].version = w->xver[i];
        p->m2.opset_import[no] = &os[no];
        no++;
    }
    p->m2.n_opset_import = no;
    const gir_attr *ks = gir_attrs_find(&g->meta, ONNX_META_PROPS_KEYS);
    const gir_attr *vs = gir_attrs_find(&g->meta, ONNX_META_PROPS_VALUES);
    if (ks && vs && ks->type == GIR_ATTR_STRINGS && vs->type == GIR_ATTR_STRINGS && ks->u.strs.n == vs->u.strs.n &&
        ks->u.strs.n) {
        size_t n = ks->u.strs.n;
        p->m2.metadata_props = aalloc(w, n * sizeof *p->m2.metadata_props);
        Onnx__StringStringEntryProto *e = aalloc(w, n * sizeof *e);
        if (!p->m2.metadata_props || !e)
            return;
        for (size_t i = 0; i < n; i++) {
            onnx__string_string_entry_proto__init(&e[i]);
            e[i].key = (char *)ks->u.strs.v[i];
            e[i].value = (char *)vs->u.strs.v[i];
            p->m2.metadata_props[i] = &e[i];
        }
        p->m2.n_metadata_props = n;
    }
    if (extra) {
        p->m2.n_training_info = extra->n_training_info;
        p->m2.training_info = extra->training_info;
        p->m2.n_functions = extra->n_functions;
        p->m2.functions = extra->functions;
    }
}

static gir_status stream(writer *w, const char *path, gir_error *err)
{
    bool force = gir_options_flag(w->opts, "force");
    bool external = gir_options_flag(w->opts, "external-data");
    int64_t threshold;
    gir_status st = gir_options_int(w->opts, "external-threshold", 1024, &threshold, err);
    if (st)
        return st;
    if (threshold < 0)
        return gir_fail(err, GIR_E_ARGUMENT, "option external-threshold must not be negative");
    parts p;
    model_parts(w, &p);
    if (w->oom)
        return gir_nomem(err);
    if (w->bad_meta)
        return gir_fail(err, GIR_E_SCHEMA, "the onnx metadata of '%s' is corrupt", w->bad_meta);
    /* Layout: which tensors go to the side file, and the sizes. */
    char *data_path = NULL;
    const char *location = NULL;
    uint64_t off = 0;
    if (external) {
        data_path = gir_strdupf("%s.data", path);
        if (!data_path)
            return gir_nomem(err);
        location = gir_path_basename(data_path);
    }
    for (size_t i = 0; i < w->n_inits; i++) {
        winit *in = &w->inits[i];
        in->external = external && in->t->nbytes >= (uint64_t)threshold;
        if (in->external) {
            in->offset = off;
            off += in->t->nbytes;
        }
    }
    uint64_t glen = protobuf_c_message_get_packed_size(&p.g1.base) + protobuf_c_message_get_packed_size(&p.g2.base);
    for (size_t i = 0; i < w->n_inits; i++) {
        uint64_t l = init_len(&w->inits[i], location);
        glen += tag_len(5) + varint_len(l) + l;
    }
    uint64_t total = protobuf_c_message_get_packed_size(&p.m1.base) + tag_len(7) + varint_len(glen) + glen +
                     protobuf_c_message_get_packed_size(&p.m2.base);
    if (total > (uint64_t)INT32_MAX) {
        free(data_path);
        return gir_fail(err, GIR_E_LIMIT,
                        "the model would be %llu bytes, more than protobuf's 2 GiB limit; write the weights as "
                        "external data (--external-data, or -O external-data=1)",
                        (unsigned long long)total);
    }
    gir_outfile *mf = NULL, *df = NULL;
    if ((st = gir_outfile_open(path, force, &mf, err))) {
        free(data_path);
        return st;
    }
    if (external && (st = gir_outfile_open(data_path, force, &df, err))) {
        gir_outfile_abort(mf);
        free(data_path);
        return st;
    }
    sink s = { { sink_append }, mf, err, GIR_OK, 0 };
    sink ds = { { sink_append }, df, err, GIR_OK, 0 };
    protobuf_c_message_pack_to_buffer(&p.m1.base, &s.base);
    put_tag(&s, 7, 2);
    put_varint(&s, glen);
    protobuf_c_message_pack_to_buffer(&p.g1.base, &s.base);
    for (size_t i = 0; i < w->n_inits && !st && !s.st && !ds.st; i++)
        st = put_init(&s, &ds, &w->inits[i], location, err);
    protobuf_c_message_pack_to_buffer(&p.g2.base, &s.base);
    protobuf_c_message_pack_to_buffer(&p.m2.base, &s.base);
    if (!st)
        st = s.st ? s.st : ds.st;
    if (!st && s.written != total)
        st = gir_fail(err, GIR_E_INTERNAL, "wrote %llu bytes of a %llu-byte model", (unsigned long long)s.written,
                      (unsigned long long)total);
    if (st) {
        gir_outfile_abort(mf);
        gir_outfile_abort(df);
        free(data_path);
        return st;
    }
    /* the external data, then the model, as one unit */
    gir_outfile *both[2] = { df, mf };
    st = df ? gir_outfile_commit_all(both, 2, err) : gir_outfile_commit(mf, err);
    free(data_path);
    return st;
}

/* Builds every node's protobuf message and collects what cannot be
 * written into w->u: the planning both onnx_plan and onnx_write do.
 * fallback: the opset when no option asks for one (0: the source's). */
static gir_status prepare(writer *w, int64_t fallback, gir_error *err)
{
    w->fallback_opset = fallback;
    gir_status st = setup(w, err);
    if (st)
        return st;
    build_graph(w, err);
    if (err && err->code)
        return err->code;
    return w->oom ? gir_nomem(err) : GIR_OK;
}

static void writer_free(writer *w, bool own_u)
{
    for (size_t i = 0; i < w->n_inits; i++)
        gir_tensor_unref(w->inits[i].t);
    free(w->inits);
    free(w->nodes);
    free(w->const_done);
    onnx_map_free(&w->names);
    if (own_u)
        gir_unsupported_free(w->u);
    gir_arena_free(&w->a);
}

/* A model read at an opset before 7 is written back at that opset; when
 * that old opset cannot express the graph and no opset was asked for, the
 * default opset is used instead. */
static bool may_fall_back(const writer *w, const gir_options *opts)
{
    return w->opset < 7 && gir_unsupported_count(w->u) && !gir_options_get(opts, "opset");
}

gir_status onnx_plan(const gir_graph *g, const gir_options *opts, gir_unsupported *u, gir_error *err)
{
    writer w;
    memset(&w, 0, sizeof w);
    w.g = g;
    w.opts = opts;
    w.u = u;
    gir_status st = prepare(&w, 0, err);
    bool again = st == GIR_OK && may_fall_back(&w, opts);
    writer_free(&w, false);
    if (!again)
        return st;
    gir_unsupported_reset(u);
    memset(&w, 0, sizeof w);
    w.g = g;
    w.opts = opts;
    w.u = u;
    st = prepare(&w, ONNX_DEFAULT_OPSET, err);
    writer_free(&w, false);
    return st;
}

/* One attempt at opset `fallback` (0: the option's or the source's). */
static gir_status write_once(const gir_graph *g, const char *path, const gir_options *opts, int64_t fallback,
                             bool *fall_back, int64_t *opset, gir_error *err)
{
    writer w;
    memset(&w, 0, sizeof w);
    w.g = g;
    w.opts = opts;
    gir_status st = prepare(&w, fallback, err);
    *opset = w.opset;
    *fall_back = st == GIR_OK && fallback == 0 && may_fall_back(&w, opts);
    if (!st && !*fall_back) {
        if (gir_unsupported_count(w.u))
            st = gir_unsupported_fail(w.u, "onnx", err);
        else
            st = stream(&w, path, err);
    }
    writer_free(&w, true);
    return st;
}

gir_status onnx_write(const gir_graph *g, const char *path, const gir_options *opts, gir_error *err)
{
    int64_t opset = 0;
    bool fall_back = false;
    gir_status st = write_once(g, path, opts, 0, &fall_back, &opset, err);
    if (st || !fall_back)
        return st;
    int64_t old = opset;
    st = write_once(g, path, opts, ONNX_DEFAULT_OPSET, &fall_back, &opset, err);
    if (!st)
        gir_write_note(opts, "written at opset %lld: the source's opset %lld cannot express it",
                       (long long)opset, (long long)old);
    return st;
}
