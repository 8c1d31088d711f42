/* ONNX operators <-> canonical operators, reading side: the opset history
 * of every canonical operator and the conversion of a NodeProto of any
 * opset 1..18 into the canonical (opset 13, constant operands as
 * attributes) form. */
#include "onnx.h"

#include "core/elem.h"
#include "ops/rnn.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the opset history of the canonical operators ----------------------- */

#define OPD(a, p, s, k, o) { a, p, s, k, o }
#define END { NULL, 0, 0, 0, NULL }

static const onnx_rule rules[] = {
    { GIR_OP_Clip, 1, { OPD("min", 1, 11, ONNX_OPD_SCALAR, "min"), OPD("max", 2, 11, ONNX_OPD_SCALAR, "max"), END }, { { NULL, 0 } } },
    { GIR_OP_Reshape, 1, { OPD("shape", 1, 5, ONNX_OPD_INTS, "shape"), END }, { { "allowzero", 14 }, { NULL, 0 } } },
    { GIR_OP_Slice, 1,
      { OPD("starts", 1, 10, ONNX_OPD_INTS, "starts"), OPD("ends", 2, 10, ONNX_OPD_INTS, "ends"),
        OPD("axes", 3, 10, ONNX_OPD_INTS, "axes"), OPD("steps", 4, 10, ONNX_OPD_INTS, NULL) },
      { { NULL, 0 } } },
    { GIR_OP_Pad, 1,
      { OPD("pads", 1, 11, ONNX_OPD_INTS, "pads"), OPD("constant_value", 2, 11, ONNX_OPD_SCALAR, "value"), END },
      { { NULL, 0 } } },
    { GIR_OP_Split, 1, { OPD("split", 1, 13, ONNX_OPD_INTS, "split"), END }, { { NULL, 0 } } },
    { GIR_OP_Squeeze, 1, { OPD("axes", 1, 13, ONNX_OPD_INTS, "axes"), END }, { { NULL, 0 } } },
    { GIR_OP_Unsqueeze, 1, { OPD("axes", 1, 13, ONNX_OPD_INTS, "axes"), END }, { { NULL, 0 } } },
    { GIR_OP_ReduceSum, 1, { OPD("axes", 1, 13, ONNX_OPD_INTS, "axes"), END }, { { "noop_with_empty_axes", 13 }, { NULL, 0 } } },
    { GIR_OP_ReduceMean, 1, { OPD("axes", 1, 18, ONNX_OPD_INTS, "axes"), END }, { { "noop_with_empty_axes", 18 }, { NULL, 0 } } },
    { GIR_OP_ReduceMax, 1, { OPD("axes", 1, 18, ONNX_OPD_INTS, "axes"), END }, { { "noop_with_empty_axes", 18 }, { NULL, 0 } } },
    { GIR_OP_ReduceMin, 1, { OPD("axes", 1, 18, ONNX_OPD_INTS, "axes"), END }, { { "noop_with_empty_axes", 18 }, { NULL, 0 } } },
    { GIR_OP_ReduceProd, 1, { OPD("axes", 1, 18, ONNX_OPD_INTS, "axes"), END }, { { "noop_with_empty_axes", 18 }, { NULL, 0 } } },
    { GIR_OP_Resize, 10,
      { OPD("roi", 1, 11, ONNX_OPD_FLOATS, NULL), OPD("scales", 2, 11, ONNX_OPD_FLOATS, NULL),
        OPD("sizes", 3, 11, ONNX_OPD_INTS, NULL), END },
      { { "coordinate_transformation_mode", 11 }, { "cubic_coeff_a", 11 }, { "exclude_outside", 11 },
        { "extrapolation_value", 11 }, { "nearest_mode", 11 }, { NULL, 0 } } },
    { GIR_OP_Tile, 6, { OPD("repeats", 1, 6, ONNX_OPD_INTS, NULL), END }, { { NULL, 0 } } },
    { GIR_OP_Expand, 8, { OPD("shape", 1, 8, ONNX_OPD_INTS, NULL), END }, { { NULL, 0 } } },
    { GIR_OP_Dropout, 1, { OPD("ratio", 1, 12, ONNX_OPD_SCALAR, "ratio"), END },
      { { "seed", 12 }, { "training_mode", 12 }, { NULL, 0 } } },
    { GIR_OP_MaxPool, 1, { END }, { { "storage_order", 8 }, { "ceil_mode", 10 }, { "dilations", 10 }, { NULL, 0 } } },
    { GIR_OP_AveragePool, 1, { END }, { { "count_include_pad", 7 }, { "ceil_mode", 10 }, { NULL, 0 } } },
    { GIR_OP_ArgMax, 1, { END }, { { "select_last_index", 12 }, { NULL, 0 } } },
    { GIR_OP_ArgMin, 1, { END }, { { "select_last_index", 12 }, { NULL, 0 } } },
    { GIR_OP_DepthToSpace, 1, { END }, { { "mode", 11 }, { NULL, 0 } } },
    { GIR_OP_Mod, 10, { END }, { { NULL, 0 } } },
    { GIR_OP_Round, 11, { END }, { { NULL, 0 } } },
    { GIR_OP_Sign, 9, { END }, { { NULL, 0 } } },
    { GIR_OP_Erf, 9, { END }, { { NULL, 0 } } },
    { GIR_OP_Sin, 7, { END }, { { NULL, 0 } } },
    { GIR_OP_Cos, 7, { END }, { { NULL, 0 } } },
    { GIR_OP_Where, 9, { END }, { { NULL, 0 } } },
    { GIR_OP_GreaterOrEqual, 12, { END }, { { NULL, 0 } } },
    { GIR_OP_LessOrEqual, 12, { END }, { { NULL, 0 } } },
    { GIR_OP_LSTM, 1, { END }, { { "layout", 14 }, { NULL, 0 } } },
    { GIR_OP_GRU, 1, { END }, { { "linear_before_reset", 3 }, { "layout", 14 }, { NULL, 0 } } },
    { GIR_OP_RNN, 1, { END }, { { "layout", 14 }, { NULL, 0 } } },
};

const onnx_rule *onnx_rule_for(gir_op op)
{
    for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++)
        if (rules[i].op == op)
            return &rules[i];
    return NULL;
}

gir_op onnx_canonical_op(const char *op_type)
{
    for (const gir_op_map *m = onnx_ops; m->format_op; m++)
        if ((m->dir & GIR_MAP_READ) && m->op != GIR_OP_OPAQUE && strcmp(m->format_op, op_type) == 0)
            return m->op;
    return GIR_OP_OPAQUE;
}

bool onnx_op_has_form(gir_op op)
{
    for (const gir_op_map *m = onnx_ops; m->format_op; m++)
        if ((m->dir & GIR_MAP_WRITE) && m->op == op)
            return true;
    return false;
}

static const onnx_operand *operand_at(const onnx_rule *r, int64_t version, size_t pos)
{
    for (size_t k = 0; r && k < 4 && r->operands[k].attr; k++)
        if (r->operands[k].pos == pos && version >= r->operands[k].since)
            return &r->operands[k];
    return NULL;
}

bool onnx_is_operand_input(const char *op_type, int64_t version, size_t i)
{
    gir_op op = onnx_canonical_op(op_type);
    if (op == GIR_OP_OPAQUE)
        return false;
    if (strcmp(op_type, "Upsample") == 0 || (op == GIR_OP_Resize && version < 11))
        return i == 1 && version >= 9;
    if (op == GIR_OP_Dropout && version >= 12)
        return i == 1 || i == 2;
    if (op == GIR_OP_Pad && version >= 18 && i == 3)
        return true;
    return operand_at(onnx_rule_for(op), version, i) != NULL;
}

/* ---- attributes --------------------------------------------------------- */

int onnx_attr_type(const Onnx__AttributeProto *a)
{
    if (a->has_type && a->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__UNDEFINED)
        return (int)a->type;
    /* IR version 1 files carry no type: take the one filled field. */
    if (a->has_f)
        return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT;
    if (a->has_i)
        return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
    if (a->has_s)
        return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING;
    if (a->t)
        return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR;
    if (a->g)
        return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH;
    if (a->n_floats)
        return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS;
    if (a->n_ints)
        return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
    if (a->n_strings)
        return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS;
    if (a->n_tensors)
        return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSORS;
    if (a->n_graphs)
        return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPHS;
    return 0;
}

static bool has_nul(const ProtobufCBinaryData *b)
{
    return b->len && memchr(b->data, 0, b->len) != NULL;
}

static char *bin_str(gir_graph *g, const ProtobufCBinaryData *b)
{
    return gir_arena_strndup(&g->arena, b->len ? (const char *)b->data : "", b->len);
}

gir_status onnx_attr_to_ir(gir_graph *g, gir_attrs *dst, const char *name, Onnx__AttributeProto *a,
                           gir_error *err)
{
    const char *an = a->name ? a->name : "";
    gir_status st = GIR_OK;
    switch (onnx_attr_type(a)) {
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT:
        st = gir_attrs_set_float(g, dst, name, gir_float_widen(a->f), err);
        break;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT: st = gir_attrs_set_int(g, dst, name, a->i, err); break;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING: {
        if (has_nul(&a->s))
            return gir_fail(err, GIR_E_UNSUPPORTED, "attribute '%s' is a string with a NUL byte", an);
        char *s = bin_str(g, &a->s);
        st = s ? gir_attrs_set_string(g, dst, name, s, err) : GIR_E_NOMEM;
        break;
    }
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS: st = gir_attrs_set_ints(g, dst, name, a->ints, a->n_ints, err); break;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS: {
        double *v = gir_arena_alloc(&g->arena, (a->n_floats ? a->n_floats : 1) * sizeof *v);
        if (!v)
            return gir_nomem(err);
        for (size_t i = 0; i < a->n_floats; i++)
            v[i] = gir_float_widen(a->floats[i]);
        st = gir_attrs_set_floats(g, dst, name, v, a->n_floats, err);
        break;
    }
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS: {
        const char **v = gir_arena_alloc(&g->arena, (a->n_strings ? a->n_strings : 1) * sizeof *v);
        if (!v)
            return gir_nomem(err);
        for (size_t i = 0; i < a->n_strings; i++) {
            if (has_nul(&a->strings[i]))
                return gir_fail(err, GIR_E_UNSUPPORTED, "attribute '%s' has a string with a NUL byte", an);
            if (!(v[i] = bin_str(g, &a->strings[i])))
                return gir_nomem(err);
        }
        st = gir_attrs_set_strings(g, dst, name, v, a->n_strings, err);
        break;
    }
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR: {
        if (!a->t)
            return gir_fail(err, GIR_E_SCHEMA, "attribute '%s' is of type TENSOR but has no tensor", an);
        gir_tensor *t;
        static const onnx_source no_source = { NULL, NULL };
        if (a->t->has_data_location && a->t->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL)
            return gir_fail(err, GIR_E_UNSUPPORTED, "attribute '%s' holds a tensor with external data", an);
        st = onnx_tensor_read(a->t, &no_source, &t, err);
        if (st)
            return st;
        st = gir_attrs_set_tensor(g, dst, name, t, err);
        gir_tensor_unref(t);
        break;
    }
    case 0: return gir_fail(err, GIR_E_SCHEMA, "attribute '%s' has no value", an);
    default:
        return gir_fail(err, GIR_E_UNSUPPORTED, "attribute '%s' has a type graphconv keeps only verbatim (%d)", an,
                        onnx_attr_type(a));
    }
    return st ? gir_nomem(err) : GIR_OK;
}

/* ---- conversion helpers ------------------------------------------------- */

void onnx_conv_clear(onnx_conv *cv)
{
    gir_attrs_free(&cv->attrs);
    gir_attrs_free(&cv->meta);
    for (size_t i = 0; i < cv->n_new; i++)
        gir_tensor_unref(cv->new_const[i]);
    memset(cv, 0, sizeof *cv);
}

static const char *input_name(const Onnx__NodeProto *np, size_t i)
{
    return i < np->n_input && np->input[i] && np->input[i][0] ? np->input[i] : NULL;
}

static Onnx__AttributeProto *find_attr(const Onnx__NodeProto *np, const char *name)
{
    for (size_t i = 0; i < np->n_attribute; i++)
        if (np->attribute[i]->name && strcmp(np->attribute[i]->name, name) == 0)
            return np->attribute[i];
    return NULL;
}

static gir_status bad_attr(const Onnx__NodeProto *np, const char *name, const char *want, gir_error *err)
{
    return gir_fail(err, GIR_E_ATTRIBUTE, "attribute '%s' of %s must be %s", name, np->op_type, want);
}

/* Reads an INT attribute (or its default); fails on a wrong type. */
static gir_status attr_int(const Onnx__NodeProto *np, const char *name, int64_t dflt, int64_t *out, bool *present,
                           gir_error *err)
{
    Onnx__AttributeProto *a = find_attr(np, name);
    if (present)
        *present = a != NULL;
    if (!a) {
        *out = dflt;
        return GIR_OK;
    }
    if (onnx_attr_type(a) != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT)
        return bad_attr(np, name, "an integer", err);
    *out = a->i;
    return GIR_OK;
}

/* Copies every attribute except those in skip (NULL-terminated); renames
 * old names through ren (pairs, NULL-terminated). */
static gir_status copy_attrs(onnx_read_ctx *c, const Onnx__NodeProto *np, onnx_conv *cv, const char *const *skip,
                             const char *const *ren, gir_error *err)
{
    for (size_t i = 0; i < np->n_attribute; i++) {
        Onnx__AttributeProto *a = np->attribute[i];
        const char *name = a->name ? a->name : "";
        if (!*name)
            return gir_fail(err, GIR_E_SCHEMA, "an attribute of %s has no name", np->op_type);
        bool skipped = strcmp(name, "consumed_inputs") == 0;
        for (const char *const *s = skip; s && *s && !skipped; s++)
            skipped = strcmp(*s, name) == 0;
        if (skipped)
            continue;
        const char *to = name;
        for (const char *const *r = ren; r && *r; r += 2)
            if (strcmp(r[0], name) == 0)
                to = r[1];
        gir_status st = onnx_attr_to_ir(c->g, &cv->attrs, to, a, err);
        if (st == GIR_E_UNSUPPORTED) {
            gir_err_replace_message(err, "attribute '%s' of %s has a type %s does not have", name, np->op_type,
                                    np->op_type);
            if (err)
                err->code = GIR_E_ATTRIBUTE;
            return GIR_E_ATTRIBUTE;
        }
        if (st)
            return st;
    }
    return GIR_OK;
}

static gir_status nomem(gir_error *err)
{
    return gir_nomem(err);
}

/* Element i of a loaded tensor as int64 / double. */
static int64_t elem_i64(const gir_tensor *t, const void *d, size_t i)
{
    const unsigned char *p = d;
    switch (t->dtype) {
    case GIR_DT_I64: return (int64_t)gir_le64(p + 8 * i);
    case GIR_DT_I32: return (int32_t)gir_le32(p + 4 * i);
    default: return 0;
    }
}

static bool elem_f64(const gir_tensor *t, const void *d, size_t i, double *out)
{
    const unsigned char *p = d;
    switch (t->dtype) {
    case GIR_DT_F32: *out = gir_f32_from_bits(gir_le32(p + 4 * i)); return true;
    case GIR_DT_F64: {
        uint64_t u = gir_le64(p + 8 * i);
        memcpy(out, &u, 8);
        return true;
    }
    case GIR_DT_F16: *out = gir_half_to_float((uint16_t)(p[2 * i] | p[2 * i + 1] << 8)); return true;
    case GIR_DT_BF16: *out = gir_bf16_to_float((uint16_t)(p[2 * i] | p[2 * i + 1] << 8)); return true;
    case GIR_DT_I8: *out = (int8_t)p[i]; return true;
    case GIR_DT_U8:
    case GIR_DT_BOOL: *out = p[i]; return true;
    case GIR_DT_I16: *out = (int16_t)(p[2 * i] | p[2 * i + 1] << 8); return true;
    case GIR_DT_U16: *out = (uint16_t)(p[2 * i] | p[2 * i + 1] << 8); return true;
    case GIR_DT_I32: *out = (int32_t)gir_le32(p + 4 * i); return true;
    case GIR_DT_U32: *out = gir_le32(p + 4 * i); return true;
    case GIR_DT_I64: *out = (double)(int64_t)gir_le64(p + 8 * i); return true;
    case GIR_DT_U64: *out = (double)gir_le64(p + 8 * i); return true;
    default: return false;
    }
}

enum { OPD_ABSENT = 0, OPD_SET = 1, OPD_DYNAMIC = 2, OPD_BADTYPE = 3 };

/* Turns ONNX input pos (if given) into attribute attr of the given kind.
 * empty_is_absent: an empty list means the input was left out. */
static int take_operand(onnx_read_ctx *c, const Onnx__NodeProto *np, onnx_conv *cv, size_t pos, const char *attr,
                        int kind, bool empty_is_absent, gir_status *st, gir_error *err)
{
    *st = GIR_OK;
    const char *name = input_name(np, pos);
    if (!name)
        return OPD_ABSENT;
    gir_tensor *t = NULL;
    if ((*st = c->constant(c, name, &t, err)))
        return OPD_ABSENT;
    if (!t)
        return OPD_DYNAMIC;
    int64_t numel = gir_shape_numel(&t->shape);
    if (numel < 0 || t->shape.rank > 1)
        return OPD_BADTYPE;
    const void *d;
    if ((*st = gir_tensor_load(t, &d, err)))
        return OPD_ABSENT;
    if (numel == 0 && empty_is_absent)
        return OPD_ABSENT;
    gir_status s = GIR_OK;
    switch (kind) {
    case ONNX_OPD_INTS: {
        if (t->dtype != GIR_DT_I64 && t->dtype != GIR_DT_I32)
            return OPD_BADTYPE;
        int64_t *v = gir_arena_alloc(&c->g->arena, (size_t)(numel ? numel : 1) * sizeof *v);
        if (!v) {
            *st = nomem(err);
            return OPD_ABSENT;
        }
        for (int64_t i = 0; i < numel; i++)
            v[i] = elem_i64(t, d, (size_t)i);
        s = gir_attrs_set_ints(c->g, &cv->attrs, attr, v, (size_t)numel, err);
        break;
    }
    case ONNX_OPD_SCALAR: {
        double f;
        if (numel != 1 || !elem_f64(t, d, 0, &f))
            return OPD_BADTYPE;
        s = gir_attrs_set_float(c->g, &cv->attrs, attr, f, err);
        break;
    }
    case ONNX_OPD_FLOATS: {
        if (!gir_dtype_is_float(t->dtype))
            return OPD_BADTYPE;
        double *v = gir_arena_alloc(&c->g->arena, (size_t)(numel ? numel : 1) * sizeof *v);
        if (!v) {
            *st = nomem(err);
            return OPD_ABSENT;
        }
        for (int64_t i = 0; i < numel; i++)
            elem_f64(t, d, (size_t)i, &v[i]);
        s = gir_attrs_set_floats(c->g, &cv->attrs, attr, v, (size_t)numel, err);
        break;
    }
    case ONNX_OPD_BOOL: {
        double f;
        if (numel != 1 || t->dtype != GIR_DT_BOOL || !elem_f64(t, d, 0, &f))
            return OPD_BADTYPE;
        s = gir_attrs_set_int(c->g, &cv->attrs, attr, f != 0, err);
        break;
    }
    }
    if (s) {
        *st = nomem(err);
        return OPD_ABSENT;
    }
    char key[96];
    snprintf(key, sizeof key, "%s%s", ONNX_META_OPERAND, attr);
    if (gir_attrs_set_string(c->g, &cv->meta, key, name, err))
        *st = nomem(err);
    return OPD_SET;
}

static gir_status opaque(onnx_conv *cv, const char *why)
{
    gir_attrs_free(&cv->attrs);
    gir_attrs_free(&cv->meta);
    for (size_t i = 0; i < cv->n_new; i++)
        gir_tensor_unref(cv->new_const[i]);
    cv->n_new = 0;
    cv->op = GIR_OP_OPAQUE;
    cv->why = why;
    return GIR_OK;
}

/* The operand inputs of a rule at this version; sets *dynamic when one is
 * not a constant. */
static gir_status operands(onnx_read_ctx *c, const Onnx__NodeProto *np, int64_t v, const onnx_rule *r, onnx_conv *cv,
                           bool *dynamic, const char **dyn_attr, gir_error *err)
{
    *dynamic = false;
    for (size_t k = 0; r && k < 4 && r->operands[k].attr; k++) {
        const onnx_operand *o = &r->operands[k];
        if (v < o->since)
            continue;
        gir_status st;
        bool empty_absent = cv->op == GIR_OP_Resize || cv->op == GIR_OP_ReduceSum || cv->op == GIR_OP_ReduceMean ||
                            cv->op == GIR_OP_ReduceMax || cv->op == GIR_OP_ReduceMin || cv->op == GIR_OP_ReduceProd;
        int got = take_operand(c, np, cv, o->pos, o->attr, o->kind, empty_absent, &st, err);
        if (st)
            return st;
        if (got == OPD_DYNAMIC) {
            *dynamic = true;
            *dyn_attr = o->attr;
            return GIR_OK;
        }
        if (got == OPD_BADTYPE)
            return gir_fail(err, GIR_E_DTYPE, "input %u ('%s') of %s is not a valid '%s' operand", o->pos,
                            input_name(np, o->pos), np->op_type, o->attr);
    }
    return GIR_OK;
}

static const char *dynamic_why(const char *attr)
{
    static const struct {
        const char *attr, *why;
    } w[] = {
        { "shape", "its 'shape' input is not a constant" },   { "min", "its 'min' input is not a constant" },
        { "max", "its 'max' input is not a constant" },       { "starts", "its 'starts' input is not a constant" },
        { "ends", "its 'ends' input is not a constant" },     { "axes", "its 'axes' input is not a constant" },
        { "steps", "its 'steps' input is not a constant" },   { "pads", "its 'pads' input is not a constant" },
        { "constant_value", "its 'constant_value' input is not a constant" },
        { "split", "its 'split' input is not a constant" },   { "roi", "its 'roi' input is not a constant" },
        { "scales", "its 'scales' input is not a constant" }, { "sizes", "its 'sizes' input is not a constant" },
        { "repeats", "its 'repeats' input is not a constant" }, { "ratio", "its 'ratio' input is not a constant" },
    };
    for (size_t i = 0; i < sizeof w / sizeof w[0]; i++)
        if (strcmp(w[i].attr, attr) == 0)
            return w[i].why;
    return "a constant operand input is not a constant";
}

/* Number of outputs after dropping trailing unnamed ones. */
static size_t named_outputs(const Onnx__NodeProto *np)
{
    size_t n = np->n_output;
    while (n && (!np->output[n - 1] || !np->output[n - 1][0]))
        n--;
    return n;
}

static void data_inputs(const Onnx__NodeProto *np, onnx_conv *cv, size_t first_operand)
{
    size_t n = np->n_input < first_operand ? np->n_input : first_operand;
    for (size_t i = 0; i < n; i++)
        cv->in[i] = input_name(np, i) ? (int32_t)i : -1;
    while (n && cv->in[n - 1] < 0)
        n--;
    cv->n_in = n;
}

/* ---- operator-specific conversions -------------------------------------- */

static bool is_legacy_broadcast_op(gir_op op)
{
    switch (op) {
    case GIR_OP_Add: case GIR_OP_Sub: case GIR_OP_Mul: case GIR_OP_Div: case GIR_OP_Pow:
    case GIR_OP_And: case GIR_OP_Or: case GIR_OP_Xor: case GIR_OP_Equal: case GIR_OP_Greater: case GIR_OP_Less:
        return true;
    default: return false;
    }
}

/* Opset < 7 binary ops: broadcast=1 with axis aligns B's dimensions at
 * axis of A; numpy broadcasting aligns them at the end.  B is reshaped with
 * trailing ones (a new constant) when it is a constant. */
static gir_status legacy_broadcast(onnx_read_ctx *c, const Onnx__NodeProto *np, onnx_conv *cv, gir_error *err)
{
    int64_t bc, axis;
    bool has_axis;
    gir_status st = attr_int(np, "broadcast", 0, &bc, NULL, err);
    if (!st)
        st = attr_int(np, "axis", 0, &axis, &has_axis, err);
    if (st)
        return st;
    if (!bc || !has_axis)
        return GIR_OK; /* same shapes, or suffix alignment: numpy semantics */
    const char *a = input_name(np, 0), *b = input_name(np, 1);
    if (!a || !b)
        return GIR_OK;
    gir_dtype dt;
    gir_shape sa, sb;
    c->shape_of(c, a, &dt, &sa);
    c->shape_of(c, b, &dt, &sb);
    if (sa.rank < 0 || sb.rank < 0)
        return opaque(cv, "legacy broadcasting along 'axis' needs the ranks of both inputs");
    if (axis < 0)
        axis += sa.rank;
    if (axis < 0 || axis + sb.rank > sa.rank)
        return gir_fail(err, GIR_E_SHAPE, "broadcast axis %lld does not fit rank %d and %d of the inputs of %s",
                        (long long)axis, sa.rank, sb.rank, np->op_type);
    if (axis + sb.rank == sa.rank)
        return GIR_OK;
    gir_tensor *t = NULL;
    if ((st = c->constant(c, b, &t, err)))
        return st;
    if (!t)
        return opaque(cv, "legacy broadcasting along 'axis' of an input that is not a constant");
    const void *d;
    if ((st = gir_tensor_load(t, &d, err)))
        return st;
    gir_shape ns = t->shape;
    for (int i = sb.rank; i < sa.rank - (int)axis; i++)
        ns.dims[ns.rank++] = 1;
    void *copy = malloc(t->nbytes ? (size_t)t->nbytes : 1);
    if (!copy)
        return nomem(err);
    memcpy(copy, d, (size_t)t->nbytes);
    gir_tensor *nt;
    if ((st = gir_tensor_adopt(t->dtype, &ns, copy, &nt, err)))
        return st;
    if (c->replace_constant(c, b, nt)) {
        gir_tensor_unref(nt);
        return GIR_OK;
    }
    char *base = gir_strdupf("%s_bcast", b);
    const char *nm = base ? c->fresh_name(c, base) : NULL;
    free(base);
    if (!nm) {
        gir_tensor_unref(nt);
        return nomem(err);
    }
    cv->new_const[cv->n_new] = nt;
    cv->new_const_name[cv->n_new] = nm;
    cv->in[1] = -2 - (int32_t)cv->n_new;
    cv->n_new++;
    return GIR_OK;
}

/* Softmax and LogSoftmax before opset 13 flatten all axes from 'axis' on;
 * the canonical form normalises over one axis.  They agree when the axes
 * after 'axis' all have size 1. */
static gir_status old_softmax(onnx_read_ctx *c, const Onnx__NodeProto *np, onnx_conv *cv, gir_error *err)
{
    int64_t axis;
    gir_status st = attr_int(np, "axis", 1, &axis, NULL, err);
    if (st)
        return st;
    gir_dtype dt;
    gir_shape s;
    c->shape_of(c, input_name(np, 0), &dt, &s);
    if (s.rank < 0)
        return opaque(cv, "before opset 13 it normalises over all axes from 'axis' on; the input's shape is unknown");
    int64_t given = axis;
    if (axis < 0)
        axis += s.rank;
    if (axis < 0 || axis >= (s.rank ? s.rank : 1))
        return gir_fail(err, GIR_E_ATTRIBUTE, "axis %lld of %s is out of range for rank %d", (long long)axis,
                        np->op_type, s.rank);
    for (int i = (int)axis + 1; i < s.rank; i++)
        if (s.dims[i] != 1)
            return opaque(cv, "before opset 13 it normalises over all axes from 'axis' on, and those are "
                              "more than one axis");
    /* the axis as written (negative stays negative) */
    return gir_attrs_set_int(c->g, &cv->attrs, "axis", given, err) ? nomem(err) : GIR_OK;
}

/* Explicit spatial attributes for Conv, ConvTranspose and the pools:
 * kernel_shape (from the weight for convolutions), strides, dilations,
 * pads; auto_pad SAME_* / VALID becomes explicit pads when the input's
 * spatial size is known. */
static gir_status spatial_attrs(onnx_read_ctx *c, const Onnx__NodeProto *np, onnx_conv *cv, gir_error *err)
{
    gir_graph *g = c->g;
    static const char *const lists[] = { "kernel_shape", "strides", "dilations", "pads" };
    for (size_t i = 0; i < 4; i++) {
        const gir_attr *a = gir_attrs_find(&cv->attrs, lists[i]);
        if (a && a->type != GIR_ATTR_INTS)
            return bad_attr(np, lists[i], "a list of integers", err);
    }
    const gir_attr *apa = gir_attrs_find(&cv->attrs, "auto_pad");
    if (apa && apa->type != GIR_ATTR_STRING)
        return bad_attr(np, "auto_pad", "a string", err);
    const int64_t *ks = NULL;
    ptrdiff_t nk = gir_attrs_get_ints(&cv->attrs, "kernel_shape", &ks);
    gir_dtype dt;
    gir_shape xs, ws;
    c->shape_of(c, input_name(np, 0), &dt, &xs);
    bool conv = cv->op == GIR_OP_Conv || cv->op == GIR_OP_ConvTranspose;
    int64_t kbuf[GIR_MAX_RANK];
    if (nk < 0 && conv) {
        c->shape_of(c, input_name(np, 1), &dt, &ws);
        if (ws.rank > 2 && gir_shape_is_known(&ws)) {
            nk = ws.rank - 2;
            for (int i = 0; i < nk; i++)
                kbuf[i] = ws.dims[i + 2];
            ks = kbuf;
            if (gir_attrs_set_ints(g, &cv->attrs, "kernel_shape", ks, (size_t)nk, err))
                return nomem(err);
        }
    }
    if (nk < 0) {
        if (conv)
            return GIR_OK; /* left to shape inference: the weight's shape is unknown */
        return gir_fail(err, GIR_E_ATTRIBUTE, "%s has no kernel_shape", np->op_type);
    }
    if (nk > GIR_MAX_RANK)
        return gir_fail(err, GIR_E_ATTRIBUTE, "kernel_shape of %s has %td dimensions", np->op_type, nk);
    int64_t ones[GIR_MAX_RANK], zeros[2 * GIR_MAX_RANK];
    for (int i = 0; i < GIR_MAX_RANK; i++)
        ones[i] = 1;
    memset(zeros, 0, sizeof zeros);
    const int64_t *v;
    ptrdiff_t n = gir_attrs_get_ints(&cv->attrs, "strides", &v);
    if (n < 0 && gir_attrs_set_ints(g, &cv->attrs, "strides", ones, (size_t)nk, err))
        return nomem(err);
    if (n >= 0 && n != nk)
        return gir_fail(err, GIR_E_ATTRIBUTE, "strides of %s has %td values for %td spatial axes", np->op_type, n, nk);
    if (cv->op != GIR_OP_AveragePool) {
        n = gir_attrs_get_ints(&cv->attrs, "dilations", &v);
        if (n < 0 && gir_attrs_set_ints(g, &cv->attrs, "dilations", ones, (size_t)nk, err))
            return nomem(err);
        if (n >= 0 && n != nk)
            return gir_fail(err, GIR_E_ATTRIBUTE, "dilations of %s has %td values for %td spatial axes",
                            np->op_type, n, nk);
    }
    const char *ap = gir_attrs_get_string(&cv->attrs, "auto_pad", "NOTSET");
    n = gir_attrs_get_ints(&cv->attrs, "pads", &v);
    if (n >= 0 && n != 2 * nk)
        return gir_fail(err, GIR_E_ATTRIBUTE, "pads of %s has %td values for %td spatial axes", np->op_type, n, nk);
    if (strcmp(ap, "NOTSET") == 0) {
        if (n < 0 && gir_attrs_set_ints(g, &cv->attrs, "pads", zeros, 2 * (size_t)nk, err))
            return nomem(err);
        gir_attrs_remove(&cv->attrs, "auto_pad");
        return GIR_OK;
    }
    if (cv->op == GIR_OP_ConvTranspose)
        return GIR_OK; /* its SAME_* padding depends on output_shape; kept as it is */
    bool valid = strcmp(ap, "VALID") == 0, upper = strcmp(ap, "SAME_UPPER") == 0;
    if (!valid && !upper && strcmp(ap, "SAME_LOWER") != 0)
        return gir_fail(err, GIR_E_ATTRIBUTE, "auto_pad of %s is '%s', not NOTSET, SAME_UPPER, SAME_LOWER or VALID",
                        np->op_type, ap);
    int64_t pads[2 * GIR_MAX_RANK] = { 0 };
    if (!valid) {
        if (xs.rank != nk + 2)
            return GIR_OK; /* spatial size unknown: auto_pad stays */
        const int64_t *st_ = NULL, *dl = NULL;
        gir_attrs_get_ints(&cv->attrs, "strides", &st_);
        if (gir_attrs_get_ints(&cv->attrs, "dilations", &dl) < 0)
            dl = ones;
        for (int i = 0; i < nk; i++) {
            int64_t in = xs.dims[i + 2];
            if (in < 0)
                return GIR_OK;
            int64_t s = st_[i] > 0 ? st_[i] : 1;
            int64_t out = (in + s - 1) / s;
            int64_t total = (out - 1) * s + (ks[i] - 1) * dl[i] + 1 - in;
            if (total < 0)
                total = 0;
            pads[i] = upper ? total / 2 : total - total / 2;
            pads[i + nk] = total - pads[i];
        }
    }
    if (gir_attrs_set_ints(g, &cv->attrs, "pads", pads, 2 * (size_t)nk, err))
        return nomem(err);
    gir_attrs_remove(&cv->attrs, "auto_pad");
    return GIR_OK;
}

/* Cast's 'to' is a TensorProto type code (a type name before opset 6); the
 * canonical attribute names the type ("float32"). */
static gir_status cast_to(onnx_read_ctx *c, const Onnx__NodeProto *np, int64_t v, onnx_conv *cv, gir_error *err)
{
    Onnx__AttributeProto *a = find_attr(np, "to");
    int32_t code = 0;
    if (v < 6) {
        if (!a || onnx_attr_type(a) != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING)
            return bad_attr(np, "to", "a type name before opset 6", err);
        for (int32_t t = 1; t <= 16 && !code; t++) {
            const char *n = onnx_dtype_name(t);
            if (n && a->s.len == strlen(n) && memcmp(a->s.data, n, a->s.len) == 0)
                code = t;
        }
        if (!code)
            return bad_attr(np, "to", "a known type name", err);
    } else {
        if (!a || onnx_attr_type(a) != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT)
            return bad_attr(np, "to", "a type code", err);
        if (!onnx_dtype_name((int32_t)a->i) || a->i != (int32_t)a->i)
            return gir_fail(err, GIR_E_ATTRIBUTE, "attribute 'to' of Cast is %lld, not a known type code",
                            (long long)a->i);
        code = (int32_t)a->i;
    }
    gir_dtype dt = onnx_dtype_to_gir(code);
    if (dt == GIR_DT_UNKNOWN)
        return opaque(cv, "it casts to a type graphconv cannot hold");
    return gir_attrs_set_string(c->g, &cv->attrs, "to", gir_dtype_name(dt), err) ? nomem(err) : GIR_OK;
}

/* ---- the conversion ----------------------------------------------------- */

/* LSTM, GRU, RNN: hidden_size is optional in ONNX (R's last dimension);
 * the attributes are checked as the canonical operator reads them. */
static gir_status recurrent(onnx_read_ctx *c, const Onnx__NodeProto *np, onnx_conv *cv, gir_error *err)
{
    if (!gir_attrs_find(&cv->attrs, "hidden_size")) {
        const char *rn = input_name(np, 2);
        gir_dtype dt;
        gir_shape rs = { -1, { 0 } };
        if (rn)
            c->shape_of(c, rn, &dt, &rs);
        if (rs.rank != 3 || rs.dims[2] < 1)
            return opaque(cv, "hidden_size is absent and the shape of R is unknown");
        if (gir_attrs_set_int(c->g, &cv->attrs, "hidden_size", rs.dims[2], err))
            return nomem(err);
    }
    gir_node tmp = { .op = cv->op, .attrs = cv->attrs };
    gir_rnn_desc d;
    return gir_rnn_desc_read(&tmp, &d, err);
}

gir_status onnx_convert_node(onnx_read_ctx *c, const Onnx__NodeProto *np, int64_t v, onnx_conv *cv, gir_error *err)
{
    memset(cv, 0, sizeof *cv);
    const char *type = np->op_type;
    gir_op op = onnx_canonical_op(type);
    cv->op = op;
    if (op == GIR_OP_OPAQUE)
        return GIR_OK;
    if (np->n_input > ONNX_MAX_IO || np->n_output > ONNX_MAX_IO)
        return gir_fail(err, GIR_E_LIMIT, "%s has more than %d inputs or outputs", type, ONNX_MAX_IO);
    bool upsample = strcmp(type, "Upsample") == 0;
    const onnx_rule *r = onnx_rule_for(op);
    int since = upsample ? 7 : r ? r->since : 1;
    if (v < since)
        return gir_fail(err, GIR_E_SCHEMA, "operator %s does not exist in opset %lld (it appeared in opset %d)", type,
                        (long long)v, since);
    if (upsample && v >= 10)
        return opaque(cv, "Upsample is deprecated from opset 10");

    /* Which attributes are not copied verbatim. */
    static const char *const skip_none[] = { NULL };
    static const char *const skip_bcast[] = { "broadcast", "axis", NULL };
    static const char *const skip_gemm[] = { "broadcast", NULL };
    static const char *const skip_bn[] = { "is_test", "spatial", "training_mode", NULL };
    static const char *const skip_dropout[] = { "is_test", NULL };
    static const char *const skip_split[] = { "num_outputs", NULL };
    static const char *const skip_reduce[] = { "noop_with_empty_axes", NULL };
    static const char *const skip_resize[] = { "antialias", "keep_aspect_ratio_policy", "axes", NULL };
    static const char *const skip_cast[] = { "to", NULL };
    static const char *const skip_shape[] = { "start", "end", NULL };
    static const char *const skip_rnn[] = { "output_sequence", NULL };
    static const char *const ren_pad[] = { "paddings", "pads", "value", "constant_value", NULL };
    const char *const *skip = skip_none, *const *ren = NULL;
    if (is_legacy_broadcast_op(op) && v < 7)
        skip = skip_bcast;
    else if (op == GIR_OP_Gemm && v < 7)
        skip = skip_gemm;
    else if (op == GIR_OP_BatchNormalization)
        skip = skip_bn;
    else if (op == GIR_OP_Dropout)
        skip = skip_dropout;
    else if (op == GIR_OP_Split)
        skip = skip_split;
    else if ((op == GIR_OP_ReduceSum && v >= 13) ||
             (op >= GIR_OP_ReduceMean && op <= GIR_OP_ReduceProd && v >= 18))
        skip = op == GIR_OP_ReduceSum ? skip_none : skip_reduce;
    else if (op == GIR_OP_Resize)
        skip = skip_resize;
    else if (op == GIR_OP_Cast)
        skip = skip_cast;
    else if (op == GIR_OP_Shape)
        skip = skip_shape;
    else if ((op == GIR_OP_LSTM || op == GIR_OP_GRU || op == GIR_OP_RNN) && v < 7)
        skip = skip_rnn; /* Y is there when it is named, whatever output_sequence says */
    if (op == GIR_OP_Pad && v < 11)
        ren = ren_pad;
    gir_status st = copy_attrs(c, np, cv, skip, ren, err);
    if (st)
        return st;

    /* Inputs: data inputs first, then operands. */
    size_t first_operand = np->n_input;
    for (size_t k = 0; r && k < 4 && r->operands[k].attr; k++)
        if (v >= r->operands[k].since && r->operands[k].pos < first_operand)
            first_operand = r->operands[k].pos;
    if (op == GIR_OP_Dropout && v >= 12)
        first_operand = 1;
    if (op == GIR_OP_Resize && (upsample || v < 11))
        first_operand = 1;
    data_inputs(np, cv, first_operand);
    cv->n_out = named_outputs(np);

    bool dynamic = false;
    const char *dyn_attr = NULL;
    if (op == GIR_OP_Resize && (upsample || v < 11)) {
        /* Resize-10 and Upsample: X, scales; asymmetric coordinates, and
         * nearest rounds down. */
        if (upsample && v < 9) {
            if (!gir_attrs_find(&cv->attrs, "scales"))
                return gir_fail(err, GIR_E_ATTRIBUTE, "Upsample has no scales attribute");
        } else {
            int got = take_operand(c, np, cv, 1, "scales", ONNX_OPD_FLOATS, false, &st, err);
            if (st)
                return st;
            if (got == OPD_DYNAMIC)
                return opaque(cv, dynamic_why("scales"));
            if (got != OPD_SET)
                return gir_fail(err, GIR_E_DTYPE, "the scales input of %s is missing or not a float list", type);
        }
        const char *mode = gir_attrs_get_string(&cv->attrs, "mode", "nearest");
        if (strcmp(mode, "bilinear") == 0 || strcmp(mode, "trilinear") == 0)
            mode = "linear";
        if (strcmp(mode, "nearest") != 0 && strcmp(mode, "linear") != 0)
            return gir_fail(err, GIR_E_ATTRIBUTE, "mode of %s is '%s', not nearest or linear", type, mode);
        if (gir_attrs_set_string(c->g, &cv->attrs, "mode", mode, err) ||
            gir_attrs_set_string(c->g, &cv->attrs, "coordinate_transformation_mode", "asymmetric", err) ||
            (strcmp(mode, "nearest") == 0 && gir_attrs_set_string(c->g, &cv->attrs, "nearest_mode", "floor", err)))
            return nomem(err);
    } else if (r) {
        if ((st = operands(c, np, v, r, cv, &dynamic, &dyn_attr, err)))
            return st;
        if (dynamic)
            return opaque(cv, dynamic_why(dyn_attr));
    }

    switch (op) {
    case GIR_OP_Softmax:
    case GIR_OP_LogSoftmax:
        if (v < 13 && (st = old_softmax(c, np, cv, err)))
            return st;
        break;
    case GIR_OP_Concat:
        if (v < 4 && !gir_attrs_find(&cv->attrs, "axis") && gir_attrs_set_int(c->g, &cv->attrs, "axis", 1, err))
            return nomem(err);
        break;
    case GIR_OP_Cast:
        if ((st = cast_to(c, np, v, cv, err)))
            return st;
        break;
    case GIR_OP_BatchNormalization: {
        int64_t spatial, is_test, training;
        bool has_test;
        if ((st = attr_int(np, "spatial", 1, &spatial, NULL, err)) ||
            (st = attr_int(np, "is_test", 0, &is_test, &has_test, err)) ||
            (st = attr_int(np, "training_mode", 0, &training, NULL, err)))
            return st;
        if (spatial == 0)
            return opaque(cv, "spatial=0 (statistics per activation) has no canonical form");
        if (training || (v < 7 && has_test && !is_test) || (v < 7 && !has_test))
            return opaque(cv, "training mode (batch statistics) has no canonical form");
        if (cv->n_out > 1)
            return opaque(cv, "its running-statistics outputs are training-mode outputs");
        break;
    }
    case GIR_OP_Dropout: {
        if (v < 7) {
            int64_t is_test;
            if ((st = attr_int(np, "is_test", 0, &is_test, NULL, err)))
                return st;
            if (!is_test && gir_attrs_set_int(c->g, &cv->attrs, "training_mode", 1, err))
                return nomem(err);
        }
        if (v >= 12) {
            int got = take_operand(c, np, cv, 2, "training_mode", ONNX_OPD_BOOL, false, &st, err);
            if (st)
                return st;
            if (got == OPD_DYNAMIC)
                return opaque(cv, "its 'training_mode' input is not a constant");
            if (got == OPD_BADTYPE)
                return gir_fail(err, GIR_E_DTYPE, "the training_mode input of Dropout is not a bool scalar");
        }
        break;
    }
    case GIR_OP_Reshape:
        if (!gir_attrs_find(&cv->attrs, "shape"))
            return gir_fail(err, GIR_E_ATTRIBUTE, "Reshape has no shape");
        break;
    case GIR_OP_Split: {
        int64_t num;
        bool has_num;
        if ((st = attr_int(np, "num_outputs", 0, &num, &has_num, err)))
            return st;
        if (has_num && !gir_attrs_find(&cv->attrs, "split")) {
            if (num != (int64_t)np->n_output || num < 1)
                return gir_fail(err, GIR_E_ATTRIBUTE, "num_outputs of Split is %lld but it has %zu outputs",
                                (long long)num, np->n_output);
            int64_t axis;
            if ((st = attr_int(np, "axis", 0, &axis, NULL, err)))
                return st;
            gir_dtype dt;
            gir_shape s;
            c->shape_of(c, input_name(np, 0), &dt, &s);
            if (axis < 0)
                axis += s.rank;
            if (s.rank < 0 || axis < 0 || axis >= s.rank || s.dims[axis] < 0)
                return opaque(cv, "num_outputs with an unknown size of the split axis");
            int64_t d = s.dims[axis];
            if (gir_attrs_set_int(c->g, &cv->meta, "onnx.num_outputs", num, err))
                return nomem(err);
            if (d % num) {
                int64_t part = (d + num - 1) / num;
                int64_t *sp = gir_arena_alloc(&c->g->arena, (size_t)num * sizeof *sp);
                if (!sp)
                    return nomem(err);
                for (int64_t i = 0; i < num; i++)
                    sp[i] = i + 1 < num ? part : d - part * (num - 1);
                if (gir_attrs_set_ints(c->g, &cv->attrs, "split", sp, (size_t)num, err))
                    return nomem(err);
            }
        }
        break;
    }
    case GIR_OP_ReduceMean:
    case GIR_OP_ReduceMax:
    case GIR_OP_ReduceMin:
    case GIR_OP_ReduceProd:
        if (v >= 18) {
            int64_t noop;
            if ((st = attr_int(np, "noop_with_empty_axes", 0, &noop, NULL, err)))
                return st;
            if (noop && !gir_attrs_find(&cv->attrs, "axes"))
                return opaque(cv, "noop_with_empty_axes=1 without axes (an identity) has no canonical form");
        }
        break;
    case GIR_OP_Resize:
        if (v >= 18) {
            int64_t aa;
            if ((st = attr_int(np, "antialias", 0, &aa, NULL, err)))
                return st;
            Onnx__AttributeProto *k = find_attr(np, "keep_aspect_ratio_policy");
            if (aa)
                return opaque(cv, "antialias=1 has no canonical form");
            if (find_attr(np, "axes"))
                return opaque(cv, "the axes attribute (opset 18) has no canonical form");
            if (k && !(k->s.len == 7 && memcmp(k->s.data, "stretch", 7) == 0))
                return opaque(cv, "keep_aspect_ratio_policy other than stretch has no canonical form");
        }
        break;
    case GIR_OP_Pad:
        if (v >= 18 && input_name(np, 3)) {
            onnx_conv probe;
            memset(&probe, 0, sizeof probe);
            int got = take_operand(c, np, &probe, 3, "axes", ONNX_OPD_INTS, false, &st, err);
            const int64_t *ax = NULL, *pads = NULL;
            ptrdiff_t na = gir_attrs_get_ints(&probe.attrs, "axes", &ax);
            ptrdiff_t np_ = gir_attrs_get_ints(&cv->attrs, "pads", &pads);
            gir_dtype dt;
            gir_shape s;
            c->shape_of(c, input_name(np, 0), &dt, &s);
            if (st || got != OPD_SET || np_ != 2 * na || s.rank < 0) {
                onnx_conv_clear(&probe);
                if (st)
                    return st;
                if (got == OPD_BADTYPE || (got == OPD_SET && np_ != 2 * na))
                    return gir_fail(err, GIR_E_ATTRIBUTE, "the axes and pads inputs of Pad disagree");
                return opaque(cv, "its 'axes' input needs a constant and a known input rank");
            }
            int64_t full[2 * GIR_MAX_RANK] = { 0 };
            for (ptrdiff_t i = 0; i < na; i++) {
                int64_t a = ax[i] < 0 ? ax[i] + s.rank : ax[i];
                if (a < 0 || a >= s.rank) {
                    onnx_conv_clear(&probe);
                    return gir_fail(err, GIR_E_ATTRIBUTE, "Pad axis %lld is out of range", (long long)ax[i]);
                }
                full[a] = pads[i];
                full[a + s.rank] = pads[i + na];
            }
            onnx_conv_clear(&probe);
            if (gir_attrs_set_ints(c->g, &cv->attrs, "pads", full, 2 * (size_t)s.rank, err))
                return nomem(err);
        }
        break;
    case GIR_OP_Shape: {
        int64_t start, end;
        bool has_end;
        if ((st = attr_int(np, "start", 0, &start, NULL, err)) || (st = attr_int(np, "end", 0, &end, &has_end, err)))
            return st;
        if (start != 0 || has_end)
            return opaque(cv, "start and end (opset 15) have no canonical form");
        break;
    }
    case GIR_OP_Conv:
    case GIR_OP_ConvTranspose:
    case GIR_OP_MaxPool:
    case GIR_OP_AveragePool:
        if ((st = spatial_attrs(c, np, cv, err)))
            return st;
        break;
    case GIR_OP_LSTM:
    case GIR_OP_GRU:
    case GIR_OP_RNN:
        if ((st = recurrent(c, np, cv, err)))
            return st;
        break;
    default: break;
    }
    if (is_legacy_broadcast_op(op) && v < 7 && (st = legacy_broadcast(c, np, cv, err)))
        return st;
    if (op == GIR_OP_Slice && v < 10 && !gir_attrs_find(&cv->attrs, "starts"))
        return gir_fail(err, GIR_E_ATTRIBUTE, "Slice has no starts");
    return GIR_OK;
}
