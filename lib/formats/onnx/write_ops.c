/* Canonical nodes -> ONNX NodeProto (writing): attributes, operands that
 * ONNX takes as inputs (initializers), the forms of older opsets, Constant
 * nodes, the domains used, and opaque nodes written back as they were read;
 * what cannot be written is collected (write.c: onnxw_unsupported). */
#include "write.h"
#include "core/elem.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


static bool name_free(writer *w, const char *s)
{
    return !onnx_map_has(&w->names, s) && gir_graph_value_index(w->g, s) < 0;
}

static const char *fresh_name(writer *w, const char *base)
{
    char *s = NULL;
    for (unsigned long k = 0; !w->oom; k++) {
        s = k ? gir_arena_printf(&w->a, "%s_%lu", base, k) : onnxw_astr(w, base);
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

static Onnx__TensorProto *tensor_proto(writer *w, gir_tensor *t, const char *name, gir_error *err)
{
    Onnx__TensorProto *tp = onnxw_aalloc(w, sizeof *tp);
    if (!tp)
        return NULL;
    onnx__tensor_proto__init(tp);
    tp->has_data_type = 1;
    tp->data_type = onnx_dtype_from_gir(t->dtype);
    tp->n_dims = (size_t)t->shape.rank;
    tp->dims = onnxw_aalloc(w, (size_t)(t->shape.rank ? t->shape.rank : 1) * sizeof *tp->dims);
    if (!tp->dims)
        return NULL;
    for (int i = 0; i < t->shape.rank; i++)
        tp->dims[i] = t->shape.dims[i];
    if (name)
        tp->name = onnxw_astr(w, name);
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

static Onnx__AttributeProto *attr_new(writer *w, const char *name, Onnx__AttributeProto__AttributeType type)
{
    Onnx__AttributeProto *a = onnxw_aalloc(w, sizeof *a);
    if (!a)
        return NULL;
    onnx__attribute_proto__init(a);
    a->name = onnxw_astr(w, name);
    a->has_type = 1;
    a->type = type;
    return a;
}

/* A new attribute *out of a list type (INTS, FLOATS, STRINGS) with n
 * elements of size bytes: their arena array, which the caller fills; NULL
 * when out of memory. */
static void *attr_list(writer *w, Onnx__AttributeProto **out, const char *name,
                       Onnx__AttributeProto__AttributeType type, size_t n, size_t size)
{
    Onnx__AttributeProto *a = attr_new(w, name, type);
    void *v = a ? onnxw_aalloc(w, (n ? n : 1) * size) : NULL;
    if (!v)
        return NULL;
    switch (type) {
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS: a->ints = v, a->n_ints = n; break;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS: a->floats = v, a->n_floats = n; break;
    default: a->strings = v, a->n_strings = n; break;
    }
    *out = a;
    return v;
}

static Onnx__AttributeProto *attr_ints(writer *w, const char *name, const int64_t *v, size_t n)
{
    Onnx__AttributeProto *a;
    int64_t *d = attr_list(w, &a, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS, n, sizeof *d);
    if (d && n)
        memcpy(d, v, n * sizeof *v);
    return d ? a : NULL;
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
    Onnx__AttributeProto *a;
    float *d = attr_list(w, &a, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS, n, sizeof *d);
    for (size_t i = 0; d && i < n; i++)
        d[i] = (float)v[i];
    return d ? a : NULL;
}

static Onnx__AttributeProto *attr_string(writer *w, const char *name, const char *s)
{
    Onnx__AttributeProto *a = attr_new(w, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING);
    if (!a)
        return NULL;
    a->has_s = 1;
    a->s.len = strlen(s);
    a->s.data = (uint8_t *)onnxw_astr(w, s);
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
        Onnx__AttributeProto *a;
        ProtobufCBinaryData *d = attr_list(w, &a, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS, x->u.strs.n, sizeof *d);
        if (!d)
            return NULL;
        for (size_t i = 0; i < x->u.strs.n; i++) {
            d[i].len = strlen(x->u.strs.v[i]);
            d[i].data = (uint8_t *)onnxw_astr(w, x->u.strs.v[i]);
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

typedef struct nb {
    Onnx__NodeProto *np;
    size_t cap_attr, cap_in;
} nb;

/* Moves an arena array of n pointers to a new one of room nc (> n); false
 * when out of memory. */
static bool grow_list(writer *w, void ***list, size_t n, size_t nc)
{
    void **nl = onnxw_aalloc(w, nc * sizeof *nl);
    if (!nl)
        return false;
    if (n)
        memcpy(nl, *list, n * sizeof *nl);
    *list = nl;
    return true;
}

static void nb_attr(writer *w, nb *b, Onnx__AttributeProto *a)
{
    if (!a) {
        w->oom = true;
        return;
    }
    if (b->np->n_attribute == b->cap_attr) {
        size_t nc = b->cap_attr ? 2 * b->cap_attr : 8;
        if (!grow_list(w, (void ***)&b->np->attribute, b->np->n_attribute, nc))
            return;
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
        if (!grow_list(w, (void ***)&b->np->input, b->np->n_input, nc))
            return;
        b->cap_in = nc;
    }
    while (b->np->n_input <= pos)
        b->np->input[b->np->n_input++] = (char *)"";
    b->np->input[pos] = (char *)name;
}

static void nb_outputs(writer *w, nb *b, const gir_node *n)
{
    b->np->n_output = n->n_out;
    b->np->output = onnxw_aalloc(w, (n->n_out ? n->n_out : 1) * sizeof *b->np->output);
    for (size_t o = 0; b->np->output && o < n->n_out; o++)
        b->np->output[o] = (char *)(n->out[o] >= 0 ? w->g->values[n->out[o]]->name : "");
}

static const char *value_name(const gir_graph *g, int32_t v)
{
    return v >= 0 ? g->values[v]->name : "";
}

static void add_domain(writer *w, const char *domain, int64_t version);

/* A constant operand becomes an initializer named after the input it was
 * read from; identical ones are shared. */
static const char *operand_init(writer *w, const gir_node *n, const char *attr, gir_tensor *t, gir_error *err)
{
    char key[96];
    snprintf(key, sizeof key, "%s%s", ONNX_META_OPERAND, attr);
    const char *want = onnxw_meta_s(&n->meta, key);
    if (want) {
        /* The constant it was read from may still be a value (also used as
         * data) or an operand of another node: share it when equal. */
        int32_t vi = gir_graph_value_index(w->g, want);
        const gir_value *v = vi >= 0 ? w->g->values[vi] : NULL;
        bool eq = false;
        if (v && v->data && (v->kind == GIR_VALUE_CONST || v->kind == GIR_VALUE_WEIGHT) &&
            gir_tensor_equal(v->data, t, &eq, err) == GIR_OK && eq) {
            if (onnxw_is_constant_node_value(v) && !w->const_done[vi])
                onnxw_constant_node(w, vi, err);
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
        name = onnxw_astr(w, want);
    } else {
        char *base = gir_strdupf("%s_%s", n->name, attr);
        if (!base) {
            w->oom = true;
            return NULL;
        }
        name = fresh_name(w, base);
        free(base);
    }
    if (!name || !onnxw_add_init(w, name, t))
        return NULL;
    return name;
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
        uint16_t h = gir_float_to_half((float)v);
        p[0] = (unsigned char)h;
        p[1] = (unsigned char)(h >> 8);
        break;
    }
    case GIR_DT_BF16: {
        uint32_t u = gir_f32_bits((float)v);
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
        onnxw_unsupported(w, n, GIR_E_UNSUPPORTED_ATTR, "%s with a negative %s at opset %lld (the rank is unknown)",
                          gir_op_name(n->op), x->name, (long long)w->opset);
        return false;
    }
    if (x->type == GIR_ATTR_INT) {
        nb_attr(w, b, attr_int(w, name, x->u.i + rank));
        return true;
    }
    int64_t *v = onnxw_aalloc(w, (x->u.ints.n ? x->u.ints.n : 1) * sizeof *v);
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
            onnxw_unsupported(w, n, GIR_E_UNSUPPORTED_ATTR, "Resize with %s at opset %lld (only asymmetric coordinates, "
                              "nearest rounding down, scales)", an, (long long)W);
            return;
        }
    }
    if (strcmp(mode, "nearest") != 0 && strcmp(mode, "linear") != 0) {
        onnxw_unsupported(w, n, GIR_E_UNSUPPORTED_ATTR, "Resize mode=%s at opset %lld", mode, (long long)W);
        return;
    }
    if (!gir_attrs_find(&n->attrs, "coordinate_transformation_mode") ||
        (strcmp(mode, "nearest") == 0 && !gir_attrs_find(&n->attrs, "nearest_mode"))) {
        onnxw_unsupported(w, n, GIR_E_UNSUPPORTED_ATTR, "Resize with half_pixel coordinates at opset %lld (only asymmetric)",
                          (long long)W);
        return;
    }
    if (ns < 0) {
        onnxw_unsupported(w, n, GIR_E_UNSUPPORTED_ATTR, "Resize without scales at opset %lld", (long long)W);
        return;
    }
    for (ptrdiff_t i = 0; W < 10 && i < ns; i++)
        if (sc[i] < 1) {
            onnxw_unsupported(w, n, GIR_E_UNSUPPORTED_ATTR,
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
            onnxw_unsupported(w, n, GIR_E_UNSUPPORTED_OP, "%s of %s and %s at opset %lld (before opset 7 only B broadcasts, "
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
            onnxw_unsupported(w, n, GIR_E_UNSUPPORTED_ATTR, "Dropout in training mode at opset %lld", (long long)w->opset);
            return false;
        }
        nb_attr(w, b, attr_int(w, "is_test", 1));
        return true;
    case GIR_OP_PRelu: {
        bool ok = a && bv && a->shape.rank >= 0 && bv->shape.rank >= 0 &&
                  (gir_shape_equal(&a->shape, &bv->shape) || gir_shape_numel(&bv->shape) == 1);
        if (!ok) {
            onnxw_unsupported(w, n, GIR_E_UNSUPPORTED_OP, "PRelu with a slope of shape %s at opset %lld (before opset 7 the "
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
            onnxw_unsupported(w, n, GIR_E_UNSUPPORTED_OP, "%s (no ONNX operator computes it)", type);
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
        onnxw_unsupported(w, n, GIR_E_UNSUPPORTED_OP, "Resize needs opset 7 or later (writing opset %lld)", (long long)W);
        return;
    }
    if (W < 7 && !opset6_form(w, n, b))
        return;
    if (op == GIR_OP_Resize && W < 11) {
        old_resize(w, n, b, err);
        return;
    }
    if (W < since) {
        onnxw_unsupported(w, n, GIR_E_UNSUPPORTED_OP, "%s needs opset %d or later (writing opset %lld)", type, since,
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
                    onnxw_unsupported(w, n, GIR_E_UNSUPPORTED_ATTR, "%s attribute %s of the wrong type", type, an);
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
                        onnxw_unsupported(w, n, GIR_E_UNSUPPORTED_ATTR,
                                          "Slice with steps other than 1 needs opset 10 (writing opset %lld)", (long long)W);
                        return;
                    }
            } else {
                onnxw_unsupported(w, n, GIR_E_UNSUPPORTED_ATTR, "%s with %s needs opset %d (writing opset %lld)", type, an,
                                  o->since, (long long)W);
                return;
            }
            continue;
        }
        if (op == GIR_OP_Cast && strcmp(an, "to") == 0 && x->type == GIR_ATTR_STRING) {
            int32_t code = onnx_dtype_from_gir(gir_dtype_from_name(x->u.s));
            if (!code) {
                onnxw_unsupported(w, n, GIR_E_UNSUPPORTED_ATTR, "Cast to '%s'", x->u.s);
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
            onnxw_unsupported(w, n, GIR_E_UNSUPPORTED_ATTR, "%s attribute %s needs opset %d (writing opset %lld)", type, an,
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
                onnxw_unsupported(w, n, GIR_E_UNSUPPORTED_ATTR, "%s before opset 13 needs the input's rank (writing opset "
                                  "%lld)", type, (long long)W);
                return;
            }
            int64_t given = axis;
            if (axis < 0)
                axis += rank;
            for (int i = (int)axis + 1; i < rank; i++)
                if (x0->shape.dims[i] != 1) {
                    onnxw_unsupported(w, n, GIR_E_UNSUPPORTED_ATTR,
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
            onnxw_unsupported(w, n, GIR_E_UNSUPPORTED_OP, "Gemm without C needs opset 11 (writing opset %lld)", (long long)W);
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
    const char **nd = onnxw_aalloc(w, (w->n_xdom + 1) * sizeof *nd);
    int64_t *nv = onnxw_aalloc(w, (w->n_xdom + 1) * sizeof *nv);
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
    gir_opaque_use use = gir_opaque_policy(n, "onnx", w->allow_opaque);
    bool onnx = use == GIR_OPAQUE_OURS;
    const char *domain = onnxw_meta_s(&n->meta, ONNX_META_DOMAIN);
    if (use == GIR_OPAQUE_REFUSE) {
        const char *why = gir_node_opaque_why(n);
        onnxw_unsupported(w, n, GIR_E_UNSUPPORTED_OP, "%s (an operator of %s kept verbatim%s%s)",
                          n->opaque_op ? n->opaque_op : "?", n->opaque_format ? n->opaque_format : "another format",
                          why ? ": " : "", why ? why : "");
        return;
    }
    if (onnx && (!domain || strcmp(domain, "ai.onnx") == 0)) {
        int64_t v = gir_attrs_get_int(&n->meta, ONNX_META_OPSET, 0);
        if (v != w->opset) {
            const char *why = onnxw_meta_s(&n->meta, "onnx.why");
            onnxw_unsupported(w, n, GIR_E_UNSUPPORTED_OP, "%s (kept verbatim from opset %lld%s%s) at opset %lld",
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
    b->np->op_type = onnxw_astr(w, n->opaque_op ? n->opaque_op : "?");
    if (domain) {
        b->np->domain = onnxw_astr(w, domain);
        if (strcmp(domain, "ai.onnx") != 0)
            add_domain(w, b->np->domain, onnx ? gir_attrs_get_int(&n->meta, ONNX_META_OPSET, 1) : 1);
    }
    for (size_t i = 0; i < n->n_in; i++)
        nb_input(w, b, i, value_name(g, n->in[i]));
    for (size_t i = 0; i < n->attrs.n; i++)
        nb_attr(w, b, attr_from_ir(w, &n->attrs.items[i], n->attrs.items[i].name, err));
    const char *extra = onnxw_meta_s(&n->meta, ONNX_META_EXTRA);
    if (extra) {
        Onnx__NodeProto *xp = (Onnx__NodeProto *)onnxw_unpack_blob(w, &onnx__node_proto__descriptor, extra);
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
void onnxw_constant_node(writer *w, int32_t vi, gir_error *err)
{
    const gir_value *v = w->g->values[vi];
    w->const_done[vi] = true;
    Onnx__NodeProto *np = onnxw_aalloc(w, sizeof *np);
    if (!np)
        return;
    onnx__node_proto__init(np);
    np->op_type = (char *)"Constant";
    np->name = onnxw_astr(w, onnxw_meta_s(&v->meta, ONNX_META_CONSTANT));
    np->n_output = 1;
    np->output = onnxw_aalloc(w, sizeof *np->output);
    if (!np->output)
        return;
    np->output[0] = (char *)v->name;
    const char *attr = onnxw_meta_s(&v->meta, ONNX_META_CONSTANT_ATTR);
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
            if (a && (a->floats = onnxw_aalloc(w, (size_t)(numel ? numel : 1) * 4))) {
                a->n_floats = (size_t)numel;
                memcpy(a->floats, p, (size_t)numel * 4);
            }
        } else if (strcmp(attr, "value_ints") == 0 && list && t->dtype == GIR_DT_I64) {
            a = attr_new(w, attr, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS);
            if (a && (a->ints = onnxw_aalloc(w, (size_t)(numel ? numel : 1) * 8))) {
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
    np->attribute = onnxw_aalloc(w, sizeof *np->attribute);
    if (np->attribute)
        np->attribute[0] = a;
    push_node(w, np);
}

bool onnxw_is_constant_node_value(const gir_value *v)
{
    return v->kind == GIR_VALUE_CONST && v->data && onnxw_meta_s(&v->meta, ONNX_META_CONSTANT);
}

void onnxw_write_node(writer *w, const gir_node *n, gir_error *err)
{
    const gir_graph *g = w->g;
    for (size_t i = 0; i < n->n_in; i++) {
        int32_t vi = n->in[i];
        if (vi >= 0 && !w->const_done[vi] && onnxw_is_constant_node_value(g->values[vi]))
            onnxw_constant_node(w, vi, err);
    }
    nb b = { NULL, 0, 0 };
    b.np = onnxw_aalloc(w, sizeof *b.np);
    if (!b.np)
        return;
    onnx__node_proto__init(b.np);
    const gir_attr *nm = gir_attrs_find(&n->meta, "onnx.name");
    b.np->name = onnxw_astr(w, nm && nm->type == GIR_ATTR_STRING ? nm->u.s : n->name);
    const char *doc = onnxw_meta_s(&n->meta, ONNX_META_DOC);
    if (doc)
        b.np->doc_string = onnxw_astr(w, doc);
    size_t before = gir_unsupported_count(w->u);
    if (n->op == GIR_OP_OPAQUE) {
        opaque_node(w, n, &b, err);
    } else {
        const char *domain = onnxw_meta_s(&n->meta, ONNX_META_DOMAIN);
        if (domain && strcmp(domain, "ai.onnx") == 0)
            b.np->domain = onnxw_astr(w, domain);
        canonical_node(w, n, &b, err);
    }
    if (gir_unsupported_count(w->u) == before)
        push_node(w, b.np);
}
