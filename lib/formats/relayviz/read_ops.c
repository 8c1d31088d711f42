/* Relay operators -> canonical operators (reading RelayViz).
 *
 * Each Relay operator has a function that checks its arguments and
 * attributes (Relay's names and defaults, TVM v0.16 attrs/nn.h and
 * transform.h) and fills an rv_mapped.  Malformed attributes are errors
 * naming the node; well-formed values the canonical operator cannot express
 * (another layout, a mode it lacks) make the call an opaque node instead. */
#include "relayviz.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- attribute access ------------------------------------------------------ */

/* The value of key (JSON null counts as absent) and the node it is on. */
static const gir_json *find_attr(const rv_attrs *a, const char *key, int32_t *owner)
{
    const gir_json *v = a->call ? gir_json_get(a->call, key) : NULL;
    if (v) {
        *owner = a->call_node;
    } else {
        v = a->op ? gir_json_get(a->op, key) : NULL;
        *owner = a->op_node;
    }
    return v && v->type != GIR_JSON_NULL ? v : NULL;
}

const gir_json *rv_attr(const rv_attrs *a, const char *key)
{
    int32_t owner = 0;
    return find_attr(a, key, &owner);
}

/* ---- the reader's context ---------------------------------------------------- */

typedef struct rd {
    gir_graph *g;
    const rv_call_view *c;
    rv_mapped *m;
    gir_error *err;
    const struct rd_def *def; /* the call's row of rd_defs */
} rd;

/* The operators mapped by code: the argument count (lo 0: one Tuple) and
 * the attribute keys are checked first. */
typedef struct rd_def {
    const char *op_name;
    gir_status (*read)(rd *r);
    gir_op op;
    size_t lo, hi;
    const char *const *keys;
} rd_def;

/* ---- failures, located ------------------------------------------------------- */

/* Names the call's node in the failure in r->err; returns code. */
static gir_status name_node(const rd *r, gir_status code)
{
    char id[24];
    snprintf(id, sizeof id, "%d", (int)r->c->attrs.call_node);
    gir_err_node(r->err, id);
    return code;
}

/* Locates the failure in r->err at the call's node (JSON pointer
 * /nodes/<id><field>) and names the node. */
static gir_status call_at(const rd *r, const char *field, gir_status code)
{
    gir_json_err_at(r->err, r->c->attrs.doc, NULL, "/nodes/%d%s", (int)r->c->attrs.call_node, field);
    return name_node(r, code);
}

/* Locates the failure in r->err at the call's attribute key and names the
 * node. */
static gir_status attr_at(const rd *r, const char *key, gir_status code)
{
    int32_t owner = 0;
    const gir_json *v = find_attr(&r->c->attrs, key, &owner);
    gir_json_err_at(r->err, r->c->attrs.doc, v, "/nodes/%d/attrs/%s", (int)owner, key);
    return name_node(r, code);
}

static gir_status attr_fail(const rd *r, const char *key, const char *want)
{
    char got[64];
    gir_json_describe(rv_attr(&r->c->attrs, key), got, sizeof got);
    gir_fail(r->err, GIR_E_ATTRIBUTE, "attribute %s of %s must be %s, not %s", key, r->c->op, want, got);
    return attr_at(r, key, GIR_E_ATTRIBUTE);
}

/* ---- attribute getters ---------------------------------------------------------- */

/* An integer or a list of 1..max integers.  *n = 0 when absent. */
static gir_status get_ints(const rd *r, const char *key, int64_t *out, size_t max, size_t *n)
{
    const gir_json *v = rv_attr(&r->c->attrs, key);
    *n = 0;
    if (!v)
        return GIR_OK;
    if (v->type == GIR_JSON_NUMBER) {
        if (!gir_json_get_i64(v, &out[0]))
            return attr_fail(r, key, "an integer or a list of integers");
        *n = 1;
        return GIR_OK;
    }
    if (v->type != GIR_JSON_ARRAY || v->len > max)
        return attr_fail(r, key, max == 1 ? "an integer" : "a list of integers");
    for (size_t i = 0; i < v->len; i++)
        if (!gir_json_get_i64(gir_json_at(v, i), &out[i]))
            return attr_fail(r, key, "a list of integers");
    *n = v->len;
    return GIR_OK;
}

/* A list of at most max integers that must be given as a list. */
static gir_status get_int_list(const rd *r, const char *key, int64_t *out, size_t max, size_t *n)
{
    if (!gir_json_is(rv_attr(&r->c->attrs, key), GIR_JSON_ARRAY))
        return attr_fail(r, key, "a list of integers");
    return get_ints(r, key, out, max, n);
}

bool rv_json_bool(const gir_json *v, bool *out)
{
    int64_t i;
    if (v->type == GIR_JSON_BOOL)
        *out = v->b;
    else if (gir_json_get_i64(v, &i) && (i == 0 || i == 1))
        *out = i == 1;
    else
        return false;
    return true;
}

static bool json_string(const gir_json *v, const char **out)
{
    return (*out = gir_json_get_cstr(v)) != NULL;
}

/* get_int, get_double, get_bool, get_string: the attribute key as read by
 * the JSON accessor, or dflt when absent; another value fails saying what
 * it must be. */
#define RV_GETTER(name, type, accessor, want)                                                    \
    static gir_status name(const rd *r, const char *key, type dflt, type *out)                   \
    {                                                                                            \
        const gir_json *v = rv_attr(&r->c->attrs, key);                                          \
        *out = dflt;                                                                             \
        return v && !accessor(v, out) ? attr_fail(r, key, want) : GIR_OK;                        \
    }
RV_GETTER(get_int, int64_t, gir_json_get_i64, "an integer")
RV_GETTER(get_double, double, gir_json_get_double, "a finite number")
RV_GETTER(get_bool, bool, rv_json_bool, "a boolean")
RV_GETTER(get_string, const char *, json_string, "a string")

bool rv_attr_axis(const rv_attrs *a, int64_t dflt, int64_t *axis)
{
    const gir_json *v = rv_attr(a, "axis");
    *axis = dflt;
    return !v || gir_json_get_i64(v, axis);
}

/* The first attribute key not in keys (NULL-terminated), or NULL. */
static const char *unknown_key(const rv_attrs *a, const char *const *keys)
{
    const gir_json *objs[2] = { a->call, a->op };
    for (int o = 0; o < 2; o++) {
        const gir_json *obj = objs[o];
        for (size_t i = 0; obj && i < obj->len; i++) {
            const char *k = obj->u.members[i].key;
            const char *const *p = keys;
            while (*p && strcmp(*p, k) != 0)
                p++;
            if (!*p)
                return k;
        }
    }
    return NULL;
}

/* ---- helpers ---------------------------------------------------------------- */

static gir_status nomem(rd *r)
{
    return gir_nomem(r->err);
}

static gir_status set_ints(rd *r, const char *name, const int64_t *v, size_t n)
{
    return gir_attrs_set_ints(r->g, &r->m->attrs, name, v, n, r->err) ? nomem(r) : GIR_OK;
}

static gir_status set_int(rd *r, const char *name, int64_t v)
{
    return gir_attrs_set_int(r->g, &r->m->attrs, name, v, r->err) ? nomem(r) : GIR_OK;
}

static gir_status set_float(rd *r, const char *name, double v)
{
    return gir_attrs_set_float(r->g, &r->m->attrs, name, v, r->err) ? nomem(r) : GIR_OK;
}

static gir_status set_string(rd *r, const char *name, const char *v)
{
    return gir_attrs_set_string(r->g, &r->m->attrs, name, v, r->err) ? nomem(r) : GIR_OK;
}

static gir_status arity(rd *r, size_t lo, size_t hi)
{
    const rv_call_view *c = r->c;
    size_t n = c->n_args - (c->bias_arg >= 0 ? 1 : 0);
    if (c->tuple_arg || n < lo || n > hi) {
        if (c->tuple_arg)
            gir_fail(r->err, GIR_E_SCHEMA, "%s does not take a Tuple argument", c->op);
        else if (lo == hi)
            gir_fail(r->err, GIR_E_SCHEMA, "%s takes %zu argument%s, not %zu", c->op, lo, lo == 1 ? "" : "s", n);
        else
            gir_fail(r->err, GIR_E_SCHEMA, "%s takes %zu to %zu arguments, not %zu", c->op, lo, hi, n);
        return call_at(r, "/args", GIR_E_SCHEMA);
    }
    return GIR_OK;
}

/* Inputs 0..n-1 are arguments 0..n-1. */
static void inputs_in_order(rv_mapped *m, size_t n)
{
    for (size_t i = 0; i < n; i++)
        m->in[i] = (int32_t)i;
    m->n_in = n;
}

/* The call becomes its row's canonical op of arguments 0..n-1. */
static void map_args(rd *r, size_t n)
{
    r->m->op = r->def->op;
    inputs_in_order(r->m, n);
}

static gir_status opaque(rd *r, const char *why)
{
    r->m->why_opaque = why;
    return GIR_OK;
}

/* Checks the keys against the op's list; an unknown one makes it opaque. */
static bool keys_ok(rd *r, const char *const *keys)
{
    const char *k = unknown_key(&r->c->attrs, keys);
    if (!k)
        return true;
    char *why = gir_arena_printf(&r->g->arena, "attribute %s is not one of Relay's %s attributes", k, r->c->op);
    r->m->why_opaque = why ? why : "an attribute is unknown";
    return false;
}

/* A 2-D spatial list given as 1 or 2 values ([a] means [a, a]). */
static gir_status pair(rd *r, const char *key, int64_t dflt, int64_t min, int64_t out[2], bool *present)
{
    int64_t v[2];
    size_t n;
    gir_status st = get_ints(r, key, v, 2, &n);
    if (st)
        return st;
    if (present)
        *present = n > 0;
    if (n == 0) {
        out[0] = out[1] = dflt;
    } else {
        out[0] = v[0];
        out[1] = n == 2 ? v[1] : v[0];
    }
    if (out[0] < min || out[1] < min)
        return attr_fail(r, key, min ? "positive" : "non-negative");
    return GIR_OK;
}

/* Relay padding: 1 value (all sides), 2 (top/bottom, left/right) or 4
 * (top, left, bottom, right) -> canonical pads [top, left, bottom, right]. */
static gir_status padding4(rd *r, int64_t pads[4])
{
    int64_t v[4];
    size_t n;
    gir_status st = get_ints(r, "padding", v, 4, &n);
    if (st)
        return st;
    if (n == 3)
        return attr_fail(r, "padding", "1, 2 or 4 integers");
    switch (n) {
    case 0: pads[0] = pads[1] = pads[2] = pads[3] = 0; break;
    case 1: pads[0] = pads[1] = pads[2] = pads[3] = v[0]; break;
    case 2:
        pads[0] = pads[2] = v[0];
        pads[1] = pads[3] = v[1];
        break;
    default: memcpy(pads, v, sizeof v); break;
    }
    for (int i = 0; i < 4; i++)
        if (pads[i] < 0)
            return attr_fail(r, "padding", "non-negative");
    return GIR_OK;
}

/* A layout attribute must be absent, empty (for out_layout) or want. */
static gir_status layout_is(rd *r, const char *key, const char *want, bool empty_ok, bool *ok)
{
    const char *s;
    gir_status st = get_string(r, key, want, &s);
    if (st)
        return st;
    *ok = strcmp(s, want) == 0 || (empty_ok && !*s);
    if (!*ok)
        r->m->why_opaque = gir_arena_printf(&r->g->arena, "%s %s (only %s maps to a canonical op)", key, s, want);
    return GIR_OK;
}

/* out_dtype must be absent, empty or the input's dtype. */
static gir_status out_dtype_ok(rd *r, bool *ok)
{
    const char *s;
    gir_status st = get_string(r, "out_dtype", "", &s);
    if (st)
        return st;
    gir_dtype in = r->c->n_args ? r->c->args[0].dtype : GIR_DT_UNKNOWN;
    *ok = !*s || (in != GIR_DT_UNKNOWN && gir_dtype_from_name(s) == in);
    if (!*ok)
        r->m->why_opaque = gir_arena_printf(&r->g->arena, "out_dtype %s differs from the input's", s);
    return GIR_OK;
}

static int rank_of(const rv_call_view *c, size_t arg)
{
    return arg < c->n_args ? c->args[arg].shape.rank : -1;
}

/* ---- convolution, dense, normalisation ---------------------------------------- */

static gir_status rd_conv(rd *r)
{
    const rv_call_view *c = r->c;
    bool transpose = r->def->op == GIR_OP_ConvTranspose;
    gir_status st;
    if (!transpose && rv_attr(&c->attrs, "output_padding"))
        return opaque(r, "nn.conv2d has no output_padding");
    bool ok;
    if ((st = layout_is(r, "data_layout", "NCHW", false, &ok)) || !ok)
        return st;
    if ((st = layout_is(r, "kernel_layout", transpose ? "IOHW" : "OIHW", false, &ok)) || !ok)
        return st;
    if ((st = layout_is(r, "out_layout", "NCHW", true, &ok)) || !ok)
        return st;
    if ((st = out_dtype_ok(r, &ok)) || !ok)
        return st;
    const char *rewritten;
    if ((st = get_string(r, "auto_scheduler_rewritten_layout", "", &rewritten)))
        return st;
    if (*rewritten || rv_attr(&c->attrs, "meta_schedule_original_shape"))
        return opaque(r, "the kernel layout was rewritten by a tuner");
    int64_t strides[2], dil[2], pads[4], outpad[2], ks[2], groups;
    bool has_ks;
    if ((st = pair(r, "strides", 1, 1, strides, NULL)) || (st = pair(r, "dilation", 1, 1, dil, NULL)) ||
        (st = padding4(r, pads)) || (st = pair(r, "kernel_size", 1, 1, ks, &has_ks)) ||
        (st = get_int(r, "groups", 1, &groups)))
        return st;
    if (transpose && (st = pair(r, "output_padding", 0, 0, outpad, NULL)))
        return st;
    if (groups < 1)
        return attr_fail(r, "groups", "positive");
    const gir_shape *w = &c->args[1].shape;
    if (w->rank >= 0 && w->rank != 4)
        return opaque(r, "the weight is not 4-D");
    if (w->rank == 4 && w->dims[2] >= 0 && w->dims[3] >= 0) {
        if (has_ks && (ks[0] != w->dims[2] || ks[1] != w->dims[3])) {
            char sh[96];
            gir_fail(r->err, GIR_E_ATTRIBUTE, "kernel_size [%lld, %lld] of %s disagrees with its weight's shape %s",
                     (long long)ks[0], (long long)ks[1], c->op, gir_shape_str(w, sh, sizeof sh));
            return attr_at(r, "kernel_size", GIR_E_ATTRIBUTE);
        }
        ks[0] = w->dims[2];
        ks[1] = w->dims[3];
        has_ks = true;
    }
    map_args(r, 2);
    if (c->bias_arg >= 0) {
        r->m->in[2] = c->bias_arg;
        r->m->n_in = 3;
    }
    if ((st = set_ints(r, "dilations", dil, 2)) || (st = set_int(r, "group", groups)))
        return st;
    if (has_ks && (st = set_ints(r, "kernel_shape", ks, 2)))
        return st;
    if (transpose && (st = set_ints(r, "output_padding", outpad, 2)))
        return st;
    if ((st = set_ints(r, "pads", pads, 4)) || (st = set_ints(r, "strides", strides, 2)))
        return st;
    return GIR_OK;
}

static gir_status rd_dense(rd *r)
{
    gir_status st;
    bool ok;
    if ((st = out_dtype_ok(r, &ok)) || !ok)
        return st;
    int rank = rank_of(r->c, 0);
    if (rank >= 0 && rank != 2)
        return opaque(r, "nn.dense of a tensor that is not 2-D");
    map_args(r, 2);
    if (r->c->bias_arg >= 0) {
        r->m->in[2] = r->c->bias_arg;
        r->m->n_in = 3;
    }
    /* dense(transpose(A), W) is Gemm with transA; dense(A, transpose(B))
     * Gemm without transB. */
    if ((st = set_float(r, "alpha", 1.0)) || (st = set_float(r, "beta", 1.0)) ||
        (st = set_int(r, "transA", r->c->trans[0])) || (st = set_int(r, "transB", !r->c->trans[1])))
        return st;
    return GIR_OK;
}

/* Normalises an axis against a rank; false if out of range or unknown. */
static bool norm_axis(int64_t axis, int rank, int64_t *out)
{
    if (rank < 0)
        return false;
    if (axis < 0)
        axis += rank;
    if (axis < 0 || axis >= rank)
        return false;
    *out = axis;
    return true;
}

static gir_status rd_batch_norm(rd *r)
{
    gir_status st;
    int64_t axis;
    double eps, momentum;
    bool center, scale;
    if ((st = get_double(r, "momentum", 0.9, &momentum)) ||
        (st = get_int(r, "axis", 1, &axis)) ||
        (st = get_double(r, "epsilon", 1e-5, &eps)) ||
        (st = get_bool(r, "center", true, &center)) ||
        (st = get_bool(r, "scale", true, &scale)))
        return st;
    int64_t na;
    if (axis != 1 && !(norm_axis(axis, rank_of(r->c, 0), &na) && na == 1))
        return opaque(r, "nn.batch_norm on an axis other than 1");
    if (!center || !scale)
        return opaque(r, "nn.batch_norm with center or scale off");
    if (r->c->n_out > 1)
        return opaque(r, "the running mean and variance results of nn.batch_norm are used");
    map_args(r, 5);
    if ((st = set_float(r, "epsilon", eps)) || (st = set_float(r, "momentum", momentum)))
        return st;
    return GIR_OK;
}

static gir_status rd_dropout(rd *r)
{
    gir_status st;
    double rate;
    if ((st = get_double(r, "rate", 0.5, &rate)))
        return st;
    if (rate < 0 || rate >= 1)
        return attr_fail(r, "rate", "in [0, 1)");
    map_args(r, 1);
    r->m->n_out = r->c->n_out > 1 ? 2 : 1;
    return set_float(r, "ratio", rate);
}

static gir_status rd_lrn(rd *r)
{
    gir_status st;
    int64_t size, axis, na;
    double bias, alpha, beta;
    if ((st = get_int(r, "size", 5, &size)) ||
        (st = get_int(r, "axis", 1, &axis)) ||
        (st = get_double(r, "bias", 2.0, &bias)) ||
        (st = get_double(r, "alpha", 1e-4, &alpha)) ||
        (st = get_double(r, "beta", 0.75, &beta)))
        return st;
    if (size < 1)
        return attr_fail(r, "size", "positive");
    if (axis != 1 && !(norm_axis(axis, rank_of(r->c, 0), &na) && na == 1))
        return opaque(r, "nn.lrn across an axis other than 1");
    map_args(r, 1);
    if ((st = set_float(r, "alpha", alpha)) || (st = set_float(r, "beta", beta)) || (st = set_float(r, "bias", bias)) ||
        (st = set_int(r, "size", size)))
        return st;
    return GIR_OK;
}

/* ---- pooling ---------------------------------------------------------------------- */

static gir_status rd_pool(rd *r)
{
    const rv_call_view *c = r->c;
    bool avg = r->def->op == GIR_OP_AveragePool;
    gir_status st;
    if (!avg && rv_attr(&c->attrs, "count_include_pad"))
        return opaque(r, "nn.max_pool2d has no count_include_pad");
    bool ok, has_ks, ceil_mode, cip;
    if ((st = layout_is(r, "layout", "NCHW", false, &ok)) || !ok)
        return st;
    if ((st = layout_is(r, "out_layout", "NCHW", true, &ok)) || !ok)
        return st;
    int64_t ks[2], strides[2], dil[2], pads[4];
    if ((st = pair(r, "pool_size", 1, 1, ks, &has_ks)) || (st = pair(r, "strides", 1, 1, strides, NULL)) ||
        (st = pair(r, "dilation", 1, 1, dil, NULL)) || (st = padding4(r, pads)) ||
        (st = get_bool(r, "ceil_mode", false, &ceil_mode)) ||
        (st = get_bool(r, "count_include_pad", false, &cip)))
        return st;
    if (!has_ks) {
        gir_fail(r->err, GIR_E_ATTRIBUTE, "%s needs the attribute pool_size", c->op);
        return call_at(r, "", GIR_E_ATTRIBUTE);
    }
    if (avg && (dil[0] != 1 || dil[1] != 1))
        return opaque(r, "nn.avg_pool2d with dilation");
    map_args(r, 1);
    if ((st = set_int(r, "ceil_mode", ceil_mode)))
        return st;
    if (avg && (st = set_int(r, "count_include_pad", cip)))
        return st;
    if (!avg && (st = set_ints(r, "dilations", dil, 2)))
        return st;
    if ((st = set_ints(r, "kernel_shape", ks, 2)) || (st = set_ints(r, "pads", pads, 4)) ||
        (st = set_ints(r, "strides", strides, 2)))
        return st;
    return GIR_OK;
}

static gir_status rd_global_pool(rd *r)
{
    gir_status st;
    bool ok;
    if ((st = layout_is(r, "layout", "NCHW", false, &ok)) || !ok)
        return st;
    if ((st = layout_is(r, "out_layout", "NCHW", true, &ok)) || !ok)
        return st;
    map_args(r, 1);
    return GIR_OK;
}

/* ---- activations -------------------------------------------------------------------- */

/* x and a 1-D operand per element of x's axis `axis` (nn.prelu's slope,
 * nn.bias_add's bias) as canonical op, whose operand broadcasts from the
 * last axis: for an axis a < rank-1 it gets rank-1-a trailing unit axes. */
static gir_status rd_per_axis(rd *r)
{
    gir_op op = r->def->op;
    const char *operand = op == GIR_OP_PRelu ? "slope" : "bias";
    gir_status st;
    int64_t axis, na;
    if ((st = get_int(r, "axis", 1, &axis)))
        return st;
    int rank = rank_of(r->c, 0);
    const char *why;
    if (rank < 0) {
        why = gir_arena_printf(&r->g->arena, "%s of a tensor of unknown rank", r->c->op);
        return why ? opaque(r, why) : nomem(r);
    }
    if (!norm_axis(axis, rank, &na))
        return attr_fail(r, "axis", "an axis of its input");
    if (rank_of(r->c, 1) >= 0 && rank_of(r->c, 1) != 1) {
        why = gir_arena_printf(&r->g->arena, "%s with a %s that is not 1-D", r->c->op, operand);
        return why ? opaque(r, why) : nomem(r);
    }
    map_args(r, 2);
    if (na < rank - 1) {
        r->m->expand_in = 1;
        r->m->expand_n = rank - 1 - na;
    }
    return GIR_OK;
}

static gir_status rd_clip(rd *r)
{
    gir_status st;
    double lo, hi;
    if ((st = get_double(r, "a_min", NAN, &lo)) ||
        (st = get_double(r, "a_max", NAN, &hi)))
        return st;
    if (isnan(lo))
        return attr_fail(r, "a_min", "present");
    if (isnan(hi))
        return attr_fail(r, "a_max", "present");
    map_args(r, 1);
    if ((st = set_float(r, "max", hi)) || (st = set_float(r, "min", lo)))
        return st;
    return GIR_OK;
}

/* nn.bias_add that was not folded into a convolution or dense: an Add,
 * with the bias given trailing unit axes for a non-last axis. */
static gir_status rd_bias_add(rd *r)
{
    gir_status st = rd_per_axis(r);
    if (!st && r->m->op == GIR_OP_Add)
        r->m->meta_op = "nn.bias_add";
    return st;
}

/* ---- data movement -------------------------------------------------------------------- */

static gir_status rd_batch_flatten(rd *r)
{
    map_args(r, 1);
    return set_int(r, "axis", 1);
}

static gir_status rd_pad(rd *r)
{
    const rv_call_view *c = r->c;
    gir_status st;
    int32_t owner = 0;
    const gir_json *pw = find_attr(&c->attrs, "pad_width", &owner);
    if (!pw || pw->type != GIR_JSON_ARRAY || pw->len > GIR_MAX_RANK)
        return attr_fail(r, "pad_width", "a list of [before, after] pairs");
    size_t rank = pw->len;
    int64_t pads[2 * GIR_MAX_RANK];
    for (size_t i = 0; i < rank; i++) {
        const gir_json *p = gir_json_at(pw, i);
        if (!gir_json_is(p, GIR_JSON_ARRAY) || p->len != 2 || !gir_json_get_i64(gir_json_at(p, 0), &pads[i]) ||
            !gir_json_get_i64(gir_json_at(p, 1), &pads[rank + i]))
            return attr_fail(r, "pad_width", "a list of [before, after] pairs");
    }
    if (c->args[0].shape.rank >= 0 && (size_t)c->args[0].shape.rank != rank)
        return attr_fail(r, "pad_width", "one pair per axis of its input");
    const char *mode;
    if ((st = get_string(r, "pad_mode", "constant", &mode)))
        return st;
    if (strcmp(mode, "constant") && strcmp(mode, "edge") && strcmp(mode, "reflect"))
        return attr_fail(r, "pad_mode", "constant, edge or reflect");
    double value = 0;
    if (c->n_args == 2) {
        if (!c->args[1].is_scalar_const)
            return opaque(r, "the pad value of nn.pad is not a constant");
        value = c->args[1].scalar;
        if (rv_attr(&c->attrs, "pad_value"))
            return attr_fail(r, "pad_value", "absent when the pad value is an argument");
    } else if ((st = get_double(r, "pad_value", 0.0, &value))) {
        return st;
    }
    map_args(r, 1);
    if ((st = set_float(r, "constant_value", value)) || (st = set_string(r, "mode", mode)) ||
        (st = set_ints(r, "pads", pads, 2 * rank)))
        return st;
    return GIR_OK;
}

static gir_status rd_upsampling(rd *r)
{
    gir_status st;
    bool ok, align;
    double sh, sw;
    const char *method;
    if ((st = layout_is(r, "layout", "NCHW", false, &ok)) || !ok)
        return st;
    if ((st = get_double(r, "scale_h", 1.0, &sh)) ||
        (st = get_double(r, "scale_w", 1.0, &sw)) ||
        (st = get_string(r, "method", "nearest_neighbor", &method)) ||
        (st = get_bool(r, "align_corners", false, &align)))
        return st;
    if (sh <= 0)
        return attr_fail(r, "scale_h", "positive");
    if (sw <= 0)
        return attr_fail(r, "scale_w", "positive");
    if (strcmp(method, "nearest_neighbor") != 0)
        return opaque(r, "nn.upsampling methods other than nearest_neighbor");
    map_args(r, 1);
    double scales[4] = { 1.0, 1.0, sh, sw };
    if ((st = set_string(r, "coordinate_transformation_mode", "asymmetric")) || (st = set_string(r, "mode", "nearest")) ||
        (st = set_string(r, "nearest_mode", "floor")))
        return st;
    return gir_attrs_set_floats(r->g, &r->m->attrs, "scales", scales, 4, r->err) ? nomem(r) : GIR_OK;
}

static gir_status rd_concatenate(rd *r)
{
    const rv_call_view *c = r->c;
    int64_t axis;
    gir_status st = get_int(r, "axis", 0, &axis);
    if (st)
        return st;
    if (c->n_args == 0)
        return attr_fail(r, "axis", "applied to a non-empty Tuple");
    r->m->op = GIR_OP_Concat;
    r->m->n_in = SIZE_MAX;
    return set_int(r, "axis", axis);
}

bool rv_op_returns_tuple(const char *op, const rv_attrs *a, int64_t *n)
{
    if (strcmp(op, "nn.batch_norm") == 0) {
        *n = 3;
        return true;
    }
    if (strcmp(op, "nn.dropout") == 0) {
        *n = 2;
        return true;
    }
    if (strcmp(op, "split") == 0) {
        const gir_json *v = rv_attr(a, "indices_or_sections");
        int64_t k;
        *n = -1;
        if (gir_json_get_i64(v, &k)) {
            if (k >= 1 && k <= 65535)
                *n = k;
        } else if (gir_json_is(v, GIR_JSON_ARRAY) && v->len < 65535) {
            *n = (int64_t)v->len + 1;
        }
        return true;
    }
    return false;
}

static gir_status rd_split(rd *r)
{
    const rv_call_view *c = r->c;
    gir_status st;
    int64_t n_out = -1, axis, na;
    rv_op_returns_tuple(c->op, &c->attrs, &n_out);
    if (n_out < 1)
        return attr_fail(r, "indices_or_sections", "a positive integer or a list of indices");
    if ((st = get_int(r, "axis", 0, &axis)))
        return st;
    map_args(r, 1);
    r->m->n_out = (size_t)n_out;
    if ((st = set_int(r, "axis", axis)))
        return st;
    const gir_json *v = rv_attr(&c->attrs, "indices_or_sections");
    if (v->type != GIR_JSON_ARRAY)
        return GIR_OK; /* equal parts: no split sizes */
    const gir_shape *s = &c->args[0].shape;
    if (!norm_axis(axis, s->rank, &na) || s->dims[na] < 0)
        return opaque(r, "split at indices along an axis of unknown size");
    int64_t *sizes = gir_arena_alloc(&r->g->arena, (size_t)n_out * sizeof *sizes);
    if (!sizes)
        return nomem(r);
    int64_t prev = 0;
    for (size_t i = 0; i <= v->len; i++) {
        int64_t at = s->dims[na];
        if (i < v->len && !gir_json_get_i64(gir_json_at(v, i), &at))
            return attr_fail(r, "indices_or_sections", "a list of integers");
        if (at < prev || at > s->dims[na])
            return attr_fail(r, "indices_or_sections", "increasing indices within the axis");
        sizes[i] = at - prev;
        prev = at;
    }
    return set_ints(r, "split", sizes, (size_t)n_out);
}

static gir_status rd_reshape(rd *r)
{
    gir_status st;
    int64_t shape[GIR_MAX_RANK];
    size_t n;
    bool allowzero;
    if ((st = get_int_list(r, "newshape", shape, GIR_MAX_RANK, &n)) ||
        (st = get_bool(r, "allowzero", false, &allowzero)))
        return st;
    for (size_t i = 0; i < n; i++)
        if (shape[i] < -1)
            return opaque(r, "reshape with Relay's special values -2, -3 or -4");
    map_args(r, 1);
    if ((st = set_int(r, "allowzero", allowzero)) || (st = set_ints(r, "shape", shape, n)))
        return st;
    return GIR_OK;
}

/* broadcast_to(data, shape): numpy's broadcast_to, the canonical Expand. */
static gir_status rd_broadcast_to(rd *r)
{
    gir_status st;
    int64_t shape[GIR_MAX_RANK];
    size_t n;
    if ((st = get_int_list(r, "shape", shape, GIR_MAX_RANK, &n)))
        return st;
    for (size_t i = 0; i < n; i++)
        if (shape[i] < 0)
            return attr_fail(r, "shape", "a list of sizes (no negative values)");
    map_args(r, 1);
    return set_ints(r, "shape", shape, n);
}

/* transpose(axes) and squeeze(axis): an optional list attribute. */
static gir_status rd_list_op(rd *r)
{
    const char *key = r->def->keys[0];
    gir_op op = r->def->op;
    const char *canon = op == GIR_OP_Transpose ? "perm" : "axes";
    gir_status st;
    int64_t v[GIR_MAX_RANK];
    size_t n;
    const gir_json *j = rv_attr(&r->c->attrs, key);
    if (j && j->type != GIR_JSON_ARRAY)
        return attr_fail(r, key, "a list of integers or null");
    if ((st = get_ints(r, key, v, GIR_MAX_RANK, &n)))
        return st;
    map_args(r, 1);
    return j ? set_ints(r, canon, v, n) : GIR_OK;
}

static gir_status rd_expand_dims(rd *r)
{
    const rv_call_view *c = r->c;
    gir_status st;
    int64_t axis, num;
    if (!rv_attr(&c->attrs, "axis"))
        return attr_fail(r, "axis", "present");
    if ((st = get_int(r, "axis", 0, &axis)) ||
        (st = get_int(r, "num_newaxis", 1, &num)))
        return st;
    if (num < 1 || num > GIR_MAX_RANK)
        return num == 0 ? opaque(r, "expand_dims with num_newaxis 0")
                        : attr_fail(r, "num_newaxis", "between 0 and 8");
    int64_t axes[GIR_MAX_RANK];
    if (num > 1 && axis < 0) {
        int rank = rank_of(c, 0);
        if (rank < 0)
            return opaque(r, "expand_dims of several axes at a negative axis of a tensor of unknown rank");
        axis += rank + 1;
        if (axis < 0)
            return attr_fail(r, "axis", "an axis of its input");
    }
    for (int64_t i = 0; i < num; i++)
        axes[i] = axis + i;
    map_args(r, 1);
    return set_ints(r, "axes", axes, (size_t)num);
}

static gir_status rd_strided_slice(rd *r)
{
    const rv_call_view *c = r->c;
    gir_status st;
    int64_t begin[GIR_MAX_RANK], end[GIR_MAX_RANK], strides[GIR_MAX_RANK], axes[GIR_MAX_RANK];
    size_t nb, ne, ns, na;
    const char *mode;
    if ((st = get_ints(r, "begin", begin, GIR_MAX_RANK, &nb)) ||
        (st = get_ints(r, "end", end, GIR_MAX_RANK, &ne)) ||
        (st = get_ints(r, "strides", strides, GIR_MAX_RANK, &ns)) ||
        (st = get_ints(r, "axes", axes, GIR_MAX_RANK, &na)) ||
        (st = get_string(r, "slice_mode", "end", &mode)))
        return st;
    if (nb == 0)
        return attr_fail(r, "begin", "a non-empty list of integers");
    if (ne != nb)
        return attr_fail(r, "end", "as long as begin");
    if (ns > nb)
        return attr_fail(r, "strides", "no longer than begin");
    if (rv_attr(&c->attrs, "axes") && na != nb)
        return attr_fail(r, "axes", "as long as begin");
    if (strcmp(mode, "end") != 0)
        return strcmp(mode, "size") == 0 ? opaque(r, "strided_slice with slice_mode size")
                                         : attr_fail(r, "slice_mode", "end or size");
    for (size_t i = 0; i < ns; i++)
        if (strides[i] == 0)
            return attr_fail(r, "strides", "non-zero");
    map_args(r, 1);
    if (na && (st = set_ints(r, "axes", axes, na)))
        return st;
    if ((st = set_ints(r, "ends", end, ne)) || (st = set_ints(r, "starts", begin, nb)))
        return st;
    if (ns) {
        for (size_t i = ns; i < nb; i++)
            strides[i] = 1;
        if ((st = set_ints(r, "steps", strides, nb)))
            return st;
    }
    return GIR_OK;
}

static gir_status rd_cast(rd *r)
{
    gir_status st;
    const char *s;
    if ((st = get_string(r, "dtype", "", &s)))
        return st;
    gir_dtype dt = gir_dtype_from_name(s);
    if (dt == GIR_DT_UNKNOWN)
        return attr_fail(r, "dtype", "an element type");
    map_args(r, 1);
    return set_string(r, "to", gir_dtype_name(dt));
}

/* ---- reductions ---------------------------------------------------------------------- */

static gir_status rd_reduce(rd *r)
{
    const rv_call_view *c = r->c;
    gir_status st;
    int64_t axes[GIR_MAX_RANK];
    size_t n;
    bool keep, exclude;
    if ((st = get_ints(r, "axis", axes, GIR_MAX_RANK, &n)) ||
        (st = get_bool(r, "keepdims", false, &keep)) ||
        (st = get_bool(r, "exclude", false, &exclude)))
        return st;
    if (exclude)
        return opaque(r, "a reduction with exclude");
    const gir_json *j = rv_attr(&c->attrs, "axis");
    if (j && j->type == GIR_JSON_ARRAY && j->len == 0)
        return opaque(r, "a reduction over an empty axis list");
    map_args(r, 1);
    if (n && (st = set_ints(r, "axes", axes, n)))
        return st;
    return set_int(r, "keepdims", keep);
}

static gir_status rd_argreduce(rd *r)
{
    gir_status st;
    int64_t axes[GIR_MAX_RANK];
    size_t n;
    bool keep, exclude, last;
    if ((st = get_ints(r, "axis", axes, GIR_MAX_RANK, &n)) ||
        (st = get_bool(r, "keepdims", false, &keep)) ||
        (st = get_bool(r, "exclude", false, &exclude)) ||
        (st = get_bool(r, "select_last_index", false, &last)))
        return st;
    if (exclude || n != 1)
        return opaque(r, "an arg-reduction over other than one axis");
    map_args(r, 1);
    if ((st = set_int(r, "axis", axes[0])) || (st = set_int(r, "keepdims", keep)) ||
        (st = set_int(r, "select_last_index", last)))
        return st;
    return GIR_OK;
}

/* ---- the table ------------------------------------------------------------------------ */

/* The attributes Relay defines for each operator (TVM v0.16); another
 * makes the call opaque. */
static const char *const k_conv[] = { "strides", "padding", "dilation", "groups", "channels", "kernel_size",
                                      "data_layout", "kernel_layout", "out_layout", "out_dtype", "output_padding",
                                      "auto_scheduler_rewritten_layout", "meta_schedule_original_shape", NULL };
static const char *const k_pool[] = { "pool_size", "strides", "dilation", "padding", "layout", "out_layout",
                                      "ceil_mode", "count_include_pad", NULL };
static const char *const k_reduce[] = { "axis", "keepdims", "exclude", NULL };
static const char *const k_argreduce[] = { "axis", "keepdims", "exclude", "select_last_index", NULL };
static const char *const k_axis[] = { "axis", NULL };
#define KEYS(...) ((const char *const[]){ __VA_ARGS__, NULL })

static const rd_def rd_defs[] = {
    { "nn.conv2d", rd_conv, GIR_OP_Conv, 2, 2, k_conv },
    { "nn.conv2d_transpose", rd_conv, GIR_OP_ConvTranspose, 2, 2, k_conv },
    { "nn.dense", rd_dense, GIR_OP_Gemm, 2, 2, KEYS("units", "out_dtype") },
    { "nn.bias_add", rd_bias_add, GIR_OP_Add, 2, 2, k_axis },
    { "nn.batch_norm", rd_batch_norm, GIR_OP_BatchNormalization, 5, 5,
      KEYS("axis", "epsilon", "center", "scale", "momentum") },
    { "nn.dropout", rd_dropout, GIR_OP_Dropout, 1, 1, KEYS("rate") },
    { "nn.lrn", rd_lrn, GIR_OP_LRN, 1, 1, KEYS("size", "axis", "bias", "alpha", "beta") },
    { "nn.max_pool2d", rd_pool, GIR_OP_MaxPool, 1, 1, k_pool },
    { "nn.avg_pool2d", rd_pool, GIR_OP_AveragePool, 1, 1, k_pool },
    { "nn.global_avg_pool2d", rd_global_pool, GIR_OP_GlobalAveragePool, 1, 1, KEYS("layout", "out_layout") },
    { "nn.global_max_pool2d", rd_global_pool, GIR_OP_GlobalMaxPool, 1, 1, KEYS("layout", "out_layout") },
    { "nn.prelu", rd_per_axis, GIR_OP_PRelu, 2, 2, k_axis },
    { "clip", rd_clip, GIR_OP_Clip, 1, 1, KEYS("a_min", "a_max") },
    { "nn.batch_flatten", rd_batch_flatten, GIR_OP_Flatten, 1, 1, KEYS(NULL) },
    { "nn.pad", rd_pad, GIR_OP_Pad, 1, 2, KEYS("pad_width", "pad_mode", "pad_value") },
    { "nn.upsampling", rd_upsampling, GIR_OP_Resize, 1, 1,
      KEYS("scale_h", "scale_w", "layout", "method", "align_corners") },
    { "concatenate", rd_concatenate, GIR_OP_Concat, 0, 0, k_axis },
    { "split", rd_split, GIR_OP_Split, 1, 1, KEYS("indices_or_sections", "axis") },
    { "reshape", rd_reshape, GIR_OP_Reshape, 1, 1, KEYS("newshape", "allowzero") },
    { "transpose", rd_list_op, GIR_OP_Transpose, 1, 1, KEYS("axes") },
    { "squeeze", rd_list_op, GIR_OP_Squeeze, 1, 1, k_axis },
    { "expand_dims", rd_expand_dims, GIR_OP_Unsqueeze, 1, 1, KEYS("axis", "num_newaxis") },
    { "broadcast_to", rd_broadcast_to, GIR_OP_Expand, 1, 1, KEYS("shape") },
    { "strided_slice", rd_strided_slice, GIR_OP_Slice, 1, 1, KEYS("begin", "end", "strides", "axes", "slice_mode") },
    { "cast", rd_cast, GIR_OP_Cast, 1, 1, KEYS("dtype") },
    { "sum", rd_reduce, GIR_OP_ReduceSum, 1, 1, k_reduce },
    { "mean", rd_reduce, GIR_OP_ReduceMean, 1, 1, k_reduce },
    { "max", rd_reduce, GIR_OP_ReduceMax, 1, 1, k_reduce },
    { "min", rd_reduce, GIR_OP_ReduceMin, 1, 1, k_reduce },
    { "prod", rd_reduce, GIR_OP_ReduceProd, 1, 1, k_reduce },
    { "argmax", rd_argreduce, GIR_OP_ArgMax, 1, 1, k_argreduce },
    { "argmin", rd_argreduce, GIR_OP_ArgMin, 1, 1, k_argreduce },
    { NULL, NULL, GIR_OP_OPAQUE, 0, 0, NULL },
};

/* The row for op, or the final one (op_name NULL). */
static const rd_def *rd_find(const char *op)
{
    const rd_def *d = rd_defs;
    while (d->op_name && strcmp(d->op_name, op) != 0)
        d++;
    return d;
}

/* The engine's access to a call's attributes (gir_attr_io). */
static gir_status attr_get(void *ctx, const char *key, gir_attr_conv conv, double dflt, int64_t *i, double *f,
                           gir_error *err)
{
    const rd *r = ctx;
    if (conv == GIR_CONV_INT)
        return get_int(r, key, (int64_t)dflt, i);
    return get_double(r, key, dflt, f);
}

gir_status rv_map_call(gir_graph *g, const rv_call_view *c, rv_mapped *m, gir_error *err)
{
    memset(m, 0, sizeof *m);
    m->op = GIR_OP_OPAQUE;
    m->n_out = 1;
    m->expand_in = -1;
    for (size_t i = 0; i < sizeof m->in / sizeof m->in[0]; i++)
        m->in[i] = -1;
    rd r = { g, c, m, err, NULL };
    const char *op = c->op;
    const gir_op_map *s = gir_map_read_row(gir_relayviz_ops, op);
    gir_status st;
    if (s) {
        const char *keys[8];
        if (!gir_map_keys(s, keys, 8))
            return gir_fail(err, GIR_E_INTERNAL, "%s has more attributes than the reader expects", op);
        if ((st = arity(&r, s->n_in, s->n_in)) || !keys_ok(&r, keys))
            return st;
        m->op = s->op;
        inputs_in_order(m, s->n_in);
        gir_attr_io io = { &r, attr_get, NULL };
        return gir_map_read_attrs(s, &io, g, &m->attrs, err);
    }
    const rd_def *d = r.def = rd_find(op);
    if (!d->op_name)
        return opaque(&r, "not an operator graphconv maps");
    if (d->lo) {
        st = arity(&r, d->lo, d->hi);
    } else if (!c->tuple_arg) {
        gir_fail(err, GIR_E_SCHEMA, "%s takes one Tuple argument", op);
        st = call_at(&r, "/args", GIR_E_SCHEMA);
    } else {
        st = GIR_OK;
    }
    if (!st && keys_ok(&r, d->keys))
        st = d->read(&r);
    if (st == GIR_OK && m->why_opaque) {
        gir_attrs_free(&m->attrs);
        m->op = GIR_OP_OPAQUE;
    }
    return st;
}

bool rv_bias_fuses(const char *producer_op, int64_t axis)
{
    if (!strcmp(producer_op, "nn.conv2d") || !strcmp(producer_op, "nn.conv2d_transpose"))
        return axis == 1 || axis == -3;
    if (!strcmp(producer_op, "nn.dense"))
        return axis == 1 || axis == -1;
    return false;
}
