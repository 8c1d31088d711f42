/* Reading LightNet JSON IR the way LightNet itself does: the comment
 * pre-pass, cJSON's leniency (case-insensitive keys, first duplicate wins,
 * trailing text ignored), the parse checks of ln_json.c for every op, then
 * each op's pre_run checks in list order (exact argument and param counts,
 * tensors written before they are read and written once), with the output
 * shapes LightNet infers. */
#include "lightnet.h"

#include "io/json.h"
#include "passes/passes.h"

#include <float.h>
#include <stdio.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define LN_MAX_DEPTH 1000 /* cJSON's nesting limit */
#define LN_DEFAULT_SEED 20180101u

/* Per-value bookkeeping (indexed by value index). */
typedef struct tinfo {
    int32_t op;        /* op (file index) that wrote it */
    int32_t root;      /* value whose memory it aliases (itself if none) */
    int32_t stale_by;  /* op that overwrote its memory in place, or -1 */
    uint8_t create;    /* 0, or the creating optype: 1 create, 2 zeros, 3 arange */
    bool from_file;
    bool data_use;     /* read through a data argument */
    bool any_use;
} tinfo;

enum { CR_NONE = 0, CR_CREATE, CR_ZEROS, CR_ARANGE };

typedef struct ln_opref {
    const gir_json *obj;
    const char *name;
    const char *optype;
    const gir_json *tin, *tout, *params;
    const ln_op_schema *schema; /* NULL for tensorrt / opaque helpers */
    const char *variant;
} ln_opref;

typedef struct named {
    const char *name;
    size_t idx;
} named;

static int cmp_named(const void *a, const void *b)
{
    const named *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    return c ? c : (x->idx > y->idx) - (x->idx < y->idx);
}

static bool has_name(const named *v, size_t n, const char *name)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(v[mid].name, name);
        if (c == 0)
            return true;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return false;
}

typedef struct rd {
    const char *path;
    const gir_options *opts;
    gir_json_doc *doc;
    gir_graph *g;
    gir_error *err;
    ln_opref *ops;
    size_t n_ops;
    tinfo *t;
    size_t t_cap;
    uint64_t seed;
    size_t cur; /* op being checked */
    named *opnames, *tnames; /* sorted: every op name, every tensor written */
    size_t n_opnames, n_tnames;
    char ptr[128];
} rd;

/* ---- small helpers ----------------------------------------------------- */

/* cJSON_GetObjectItem: first member whose key matches case-insensitively. */
static const gir_json *jget(const gir_json *obj, const char *key)
{
    if (!obj || obj->type != GIR_JSON_OBJECT)
        return NULL;
    for (size_t i = 0; i < obj->len; i++)
        if (strcasecmp(obj->u.members[i].key, key) == 0)
            return &obj->u.members[i].value;
    return NULL;
}

static const char *jstr(const gir_json *v)
{
    return v && v->type == GIR_JSON_STRING ? v->u.str : NULL;
}

static gir_status rfail(rd *r, const gir_json *at, gir_status code, const char *fmt, ...) GIR_PRINTF(4, 5);

/* Fails with the message, the location r->ptr (JSON pointer + line:col of
 * `at`) and, while checking an op, its name. */
static gir_status rfail(rd *r, const gir_json *at, gir_status code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *msg = gir_vstrdupf(fmt, ap);
    va_end(ap);
    if (!msg)
        return gir_nomem(r->err);
    gir_fail(r->err, code, "%s", msg);
    free(msg);
    gir_json_err_at(r->err, r->doc, at, "%s", r->ptr);
    if (r->cur < r->n_ops && r->ops[r->cur].name)
        gir_err_node(r->err, r->ops[r->cur].name);
    return code;
}

static const char *setptr(rd *r, const char *fmt, ...) GIR_PRINTF(2, 3);
static const char *setptr(rd *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->ptr, sizeof r->ptr, fmt, ap);
    va_end(ap);
    return r->ptr;
}

#define TRYM(x)                                                                                                  \
    do {                                                                                                         \
        if ((x) != GIR_OK)                                                                                       \
            return gir_nomem(r->err);                                                                            \
    } while (0)

static const char *ptype_name(ln_ptype t)
{
    static const char *n[] = { "a number", "a string", "a bool", "an array of numbers", "null",
                               "an array of strings", "an array of bools" };
    return n[t];
}

/* The LightNet param type of a JSON value (ln_json.c's rules). */
static gir_status classify(rd *r, const gir_json *v, const char *pname, ln_ptype *out)
{
    switch (v->type) {
    case GIR_JSON_NUMBER: *out = LN_PT_NUMBER; return GIR_OK;
    case GIR_JSON_STRING: *out = LN_PT_STRING; return GIR_OK;
    case GIR_JSON_BOOL: *out = LN_PT_BOOL; return GIR_OK;
    case GIR_JSON_NULL: *out = LN_PT_NULL; return GIR_OK;
    case GIR_JSON_OBJECT:
        return rfail(r, v, GIR_E_SCHEMA, "param `%s`'s value is an object; LightNet takes numbers, strings, bools "
                     "or arrays of one of them", pname);
    case GIR_JSON_ARRAY: break;
    }
    if (v->len == 0)
        return rfail(r, v, GIR_E_SCHEMA, "param `%s`'s value is an empty array", pname);
    gir_json_type t0 = v->u.items[0].type;
    for (size_t i = 0; i < v->len; i++) {
        gir_json_type t = v->u.items[i].type;
        if (t != GIR_JSON_NUMBER && t != GIR_JSON_STRING && t != GIR_JSON_BOOL)
            return rfail(r, &v->u.items[i], GIR_E_SCHEMA,
                         "param `%s`'s value holds %s at element index %zu; arrays may hold only numbers, strings "
                         "or bools", pname, gir_json_type_name(t), i);
        if (t != t0)
            return rfail(r, &v->u.items[i], GIR_E_SCHEMA,
                         "param `%s`'s value mixes JSON types: element index %zu is %s, element 0 %s", pname, i,
                         gir_json_type_name(t), gir_json_type_name(t0));
    }
    *out = t0 == GIR_JSON_NUMBER ? LN_PT_NUMBERS : t0 == GIR_JSON_STRING ? LN_PT_STRINGS : LN_PT_BOOLS;
    return GIR_OK;
}

/* A JSON number as LightNet keeps it: a double (cJSON's strtod). */
static gir_status num(rd *r, const gir_json *v, const char *what, double *out)
{
    if (!gir_json_get_double(v, out))
        return rfail(r, v, GIR_E_ATTRIBUTE, "%s is not a finite number", what);
    return GIR_OK;
}

/* ---- pass 1: the parse checks of ln_json.c ----------------------------- */

static gir_status check_tensor_list(rd *r, size_t i, const char *key, const gir_json *list, const char *which)
{
    const char *opn = r->ops[i].name;
    for (size_t k = 0; k < list->len; k++) {
        const gir_json *te = &list->u.items[k];
        setptr(r, "/ops/%zu/%s/%zu", i, key, k);
        const gir_json *an = jget(te, "arg_name");
        if (!an)
            return rfail(r, te, GIR_E_SCHEMA, "one of op %s's %s tensors has no \"arg_name\" key (tensor index %zu)",
                         opn, which, k);
        if (!jstr(an))
            return rfail(r, an, GIR_E_SCHEMA, "the \"arg_name\" of op %s's %s tensor %zu is not a string", opn,
                         which, k);
        const gir_json *nm = jget(te, "name");
        if (!nm)
            return rfail(r, te, GIR_E_SCHEMA, "op %s's tensor `%s` has no \"name\" key", opn, an->u.str);
        if (!jstr(nm))
            return rfail(r, nm, GIR_E_SCHEMA, "the \"name\" of op %s's tensor `%s` is not a string", opn,
                         an->u.str);
        const gir_json *oh = jget(te, "offset_h"), *ol = jget(te, "offset_l");
        if (oh && ol) {
            double d;
            if (oh->type != GIR_JSON_NUMBER || ol->type != GIR_JSON_NUMBER)
                return rfail(r, oh->type != GIR_JSON_NUMBER ? oh : ol, GIR_E_SCHEMA,
                             "op %s's tensor `%s`: 'offset_h' and 'offset_l' must both be numbers", opn, an->u.str);
            TRY(num(r, oh, "offset_h", &d));
            TRY(num(r, ol, "offset_l", &d));
        }
    }
    return GIR_OK;
}

static gir_status parse_ops(rd *r, const gir_json *ops)
{
    for (size_t i = 0; i < ops->len; i++) {
        const gir_json *o = &ops->u.items[i];
        ln_opref *op = &r->ops[i];
        op->obj = o;
        setptr(r, "/ops/%zu", i);
        const gir_json *nm = jget(o, "name");
        if (!nm)
            return rfail(r, o, GIR_E_SCHEMA, "ops[%zu] has no \"name\" key%s", i,
                         o->type == GIR_JSON_OBJECT ? "" : " (it is not an object)");
        if (!jstr(nm))
            return rfail(r, nm, GIR_E_SCHEMA, "ops[%zu]'s \"name\" is not a string", i);
        op->name = nm->u.str;
        r->cur = i;
        static const char *const lists[] = { "optype", "tensors_in", "tensors_out", "params" };
        const gir_json *v[4];
        for (int k = 0; k < 4; k++) {
            v[k] = jget(o, lists[k]);
            if (!v[k])
                return rfail(r, o, GIR_E_SCHEMA, "op %s has no \"%s\" key", op->name, lists[k]);
            setptr(r, "/ops/%zu/%s", i, lists[k]);
            if (k == 0 && !jstr(v[k]))
                return rfail(r, v[k], GIR_E_SCHEMA, "op %s's \"optype\" is not a string", op->name);
            if (k > 0 && v[k]->type != GIR_JSON_ARRAY)
                return rfail(r, v[k], GIR_E_SCHEMA, "op %s's \"%s\" is not an array", op->name, lists[k]);
        }
        op->optype = v[0]->u.str;
        op->tin = v[1];
        op->tout = v[2];
        op->params = v[3];
        TRY(check_tensor_list(r, i, "tensors_in", op->tin, "input"));
        TRY(check_tensor_list(r, i, "tensors_out", op->tout, "output"));
        for (size_t k = 0; k < op->params->len; k++) {
            const gir_json *p = &op->params->u.items[k];
            setptr(r, "/ops/%zu/params/%zu", i, k);
            const gir_json *an = jget(p, "arg_name");
            if (!an)
                return rfail(r, p, GIR_E_SCHEMA, "one of op %s's params has no \"arg_name\" key (param index %zu)",
                             op->name, k);
            if (!jstr(an))
                return rfail(r, an, GIR_E_SCHEMA, "the \"arg_name\" of op %s's param %zu is not a string", op->name,
                             k);
            const gir_json *val = jget(p, "value");
            if (!val)
                return rfail(r, p, GIR_E_SCHEMA, "op %s's param `%s` has no \"value\" key", op->name, an->u.str);
            setptr(r, "/ops/%zu/params/%zu/value", i, k);
            ln_ptype t;
            TRY(classify(r, val, an->u.str, &t));
        }
        setptr(r, "/ops/%zu/optype", i);
        op->schema = ln_schema_resolve(op->optype, &op->variant);
        if (!op->schema && strcmp(op->optype, "tensorrt") != 0 && strcmp(op->optype, "bn2scale_wts_cpu") != 0 &&
            strcmp(op->optype, "dot_product_cuda") != 0)
            return rfail(r, v[0], GIR_E_SCHEMA, "op %s's optype %s is not registered in LightNet", op->name,
                         op->optype);
        if (op->schema && strcmp(op->optype, "dot_product_cuda") == 0)
            op->schema = NULL; /* its workspaces make it a different op: kept opaque */
    }
    /* Op names are unique (LightNet asserts on a duplicate); tensor names
     * written anywhere are collected so names graphconv makes up for its
     * own helper nodes and values never take one a later op uses. */
    r->opnames = calloc(ops->len + 1, sizeof *r->opnames);
    size_t n_t = 0;
    for (size_t i = 0; i < ops->len; i++)
        n_t += r->ops[i].tout->len;
    r->tnames = calloc(n_t + 1, sizeof *r->tnames);
    if (!r->opnames || !r->tnames)
        return gir_nomem(r->err);
    for (size_t i = 0; i < ops->len; i++) {
        r->opnames[i] = (named){ r->ops[i].name, i };
        for (size_t k = 0; k < r->ops[i].tout->len; k++)
            r->tnames[r->n_tnames++] = (named){ jstr(jget(&r->ops[i].tout->u.items[k], "name")), i };
    }
    r->n_opnames = ops->len;
    qsort(r->opnames, r->n_opnames, sizeof *r->opnames, cmp_named);
    qsort(r->tnames, r->n_tnames, sizeof *r->tnames, cmp_named);
    for (size_t k = 1; k < r->n_opnames; k++) {
        if (strcmp(r->opnames[k - 1].name, r->opnames[k].name) != 0)
            continue;
        size_t i = r->opnames[k - 1].idx > r->opnames[k].idx ? r->opnames[k - 1].idx : r->opnames[k].idx;
        size_t j = r->opnames[k - 1].idx + r->opnames[k].idx - i;
        r->cur = i;
        setptr(r, "/ops/%zu/name", i);
        return rfail(r, jget(r->ops[i].obj, "name"), GIR_E_DUPLICATE,
                     "two ops are named '%s' (ops %zu and %zu; LightNet aborts on this)", r->ops[i].name, j, i);
    }
    return GIR_OK;
}

/* ---- pass 2: pre_run checks and the graph --------------------------------- */

typedef struct opargs {
    const ln_opref *op;
    size_t n_in, n_out;
    const char **in_arg, **out_arg;
    const gir_json **in_j, **out_j; /* the tensor objects */
    int32_t *in;                    /* value indices */
    const char **out_name;
    const gir_json **pv;            /* schema param values (schema order) */
    size_t n_pv;
} opargs;

static void opargs_free(opargs *a)
{
    free(a->in_arg);
    free(a->out_arg);
    free(a->in_j);
    free(a->out_j);
    free(a->in);
    free(a->out_name);
    free(a->pv);
}

static gir_status grow_t(rd *r)
{
    size_t need = r->g->n_values;
    if (need <= r->t_cap)
        return GIR_OK;
    size_t old = r->t_cap;
    if (!GIR_GROW(r->t, r->t_cap, need))
        return gir_nomem(r->err);
    for (size_t i = old; i < r->t_cap; i++)
        r->t[i] = (tinfo){ -1, (int32_t)i, -1, 0, false, false, false };
    return GIR_OK;
}

static gir_value *val(rd *r, int32_t v)
{
    return r->g->values[v];
}

static char *shape_s(const gir_shape *s, char buf[128])
{
    return gir_shape_str(s, buf, 128);
}

/* The first entry of list whose arg_name equals arg (LightNet looks args
 * up by name with strcmp; keys were matched case-insensitively). */
static const gir_json *find_arg(const gir_json *list, const char *arg, size_t *idx)
{
    for (size_t k = 0; k < list->len; k++) {
        const char *a = jstr(jget(&list->u.items[k], "arg_name"));
        if (a && strcmp(a, arg) == 0) {
            *idx = k;
            return &list->u.items[k];
        }
    }
    return NULL;
}

static const char *names_list(const char *const *v, char *buf, size_t n)
{
    size_t o = 0;
    buf[0] = '\0';
    for (size_t i = 0; v[i] && o + 1 < n; i++)
        o += (size_t)snprintf(buf + o, n - o, "%s%s", i ? ", " : "", v[i]);
    return buf;
}

static gir_status bind_input(rd *r, opargs *a, size_t k, const gir_json *te, size_t idx)
{
    size_t i = r->cur;
    const char *tname = jstr(jget(te, "name"));
    setptr(r, "/ops/%zu/tensors_in/%zu/name", i, idx);
    int32_t v = gir_graph_value_index(r->g, tname);
    if (v < 0)
        return rfail(r, jget(te, "name"), GIR_E_REFERENCE,
                     "input `%s` reads tensor '%s', which no earlier op writes (ops must be in execution order)",
                     a->in_arg[k], tname);
    if (r->t[v].stale_by >= 0)
        return rfail(r, jget(te, "name"), GIR_E_UNSUPPORTED,
                     "input `%s` reads tensor '%s' after op '%s' (%s) overwrote its memory in place; graphconv "
                     "cannot express LightNet's in-place aliasing", a->in_arg[k], tname,
                     r->ops[r->t[v].stale_by].name, r->ops[r->t[v].stale_by].optype);
    a->in_j[k] = te;
    a->in[k] = v;
    r->t[v].any_use = true;
    return GIR_OK;
}

/* Checks tensors and params against a schema (counts, names, types) and
 * resolves inputs.  Outputs are checked for single assignment. */
static gir_status bind_args(rd *r, const ln_op_schema *s, opargs *a)
{
    const ln_opref *op = a->op;
    size_t i = r->cur;
    char list[256];
    /* inputs */
    if (s->flags & LN_OP_VARIADIC_IN) {
        a->n_in = op->tin->len;
        setptr(r, "/ops/%zu/tensors_in", i);
        if (a->n_in == 0)
            return rfail(r, op->tin, GIR_E_SCHEMA, "%s needs at least one input tensor (src1, src2, ...)",
                         op->optype);
    } else {
        a->n_in = ln_schema_n_ins(s);
        setptr(r, "/ops/%zu/tensors_in", i);
        if (op->tin->len != a->n_in)
            return rfail(r, op->tin, GIR_E_SCHEMA, "%s needs %zu input tensor%s (%s), but gets %zu", op->optype,
                         a->n_in, a->n_in == 1 ? "" : "s", names_list(s->ins, list, sizeof list), op->tin->len);
    }
    if (s->flags & LN_OP_VARIADIC_OUT)
        a->n_out = op->tout->len;
    else
        a->n_out = ln_schema_n_outs(s);
    a->n_pv = ln_schema_n_params(s);
    a->in_arg = calloc(a->n_in + 1, sizeof *a->in_arg);
    a->in_j = calloc(a->n_in + 1, sizeof *a->in_j);
    a->in = calloc(a->n_in + 1, sizeof *a->in);
    a->out_arg = calloc(a->n_out + 1, sizeof *a->out_arg);
    a->out_j = calloc(a->n_out + 1, sizeof *a->out_j);
    a->out_name = calloc(a->n_out + 1, sizeof *a->out_name);
    a->pv = calloc(a->n_pv + 1, sizeof *a->pv);
    if (!a->in_arg || !a->in_j || !a->in || !a->out_arg || !a->out_j || !a->out_name || !a->pv)
        return gir_nomem(r->err);
    if (s->flags & LN_OP_VARIADIC_IN) {
        for (size_t k = 0; k < a->n_in; k++) {
            const gir_json *te = &op->tin->u.items[k];
            a->in_arg[k] = jstr(jget(te, "arg_name"));
            setptr(r, "/ops/%zu/tensors_in/%zu/arg_name", i, k);
            if (strncmp(a->in_arg[k], "src", 3) != 0)
                return rfail(r, jget(te, "arg_name"), GIR_E_SCHEMA,
                             "%s's input arg_names must start with \"src\", not \"%s\"", op->optype, a->in_arg[k]);
            TRY(bind_input(r, a, k, te, k));
        }
    } else {
        for (size_t k = 0; k < a->n_in; k++) {
            size_t idx;
            a->in_arg[k] = s->ins[k];
            const gir_json *te = find_arg(op->tin, s->ins[k], &idx);
            setptr(r, "/ops/%zu/tensors_in", i);
            if (!te)
                return rfail(r, op->tin, GIR_E_SCHEMA, "%s needs a `%s` input tensor", op->optype, s->ins[k]);
            TRY(bind_input(r, a, k, te, idx));
        }
    }
    /* outputs */
    setptr(r, "/ops/%zu/tensors_out", i);
    if (!(s->flags & LN_OP_VARIADIC_OUT) && op->tout->len != a->n_out)
        return rfail(r, op->tout, GIR_E_SCHEMA, "%s needs %zu output tensor%s%s%s%s, but gets %zu", op->optype,
                     a->n_out, a->n_out == 1 ? "" : "s", a->n_out ? " (" : "",
                     names_list(s->outs, list, sizeof list), a->n_out ? ")" : "", op->tout->len);
    for (size_t k = 0; k < a->n_out; k++) {
        size_t idx = k;
        const gir_json *te;
        if (s->flags & LN_OP_VARIADIC_OUT) {
            te = &op->tout->u.items[k];
            a->out_arg[k] = jstr(jget(te, "arg_name"));
            setptr(r, "/ops/%zu/tensors_out/%zu/arg_name", i, k);
            if (strncmp(a->out_arg[k], "dst", 3) != 0)
                return rfail(r, jget(te, "arg_name"), GIR_E_SCHEMA,
                             "%s's output arg_names must start with \"dst\", not \"%s\"", op->optype, a->out_arg[k]);
        } else {
            a->out_arg[k] = s->outs[k];
            te = find_arg(op->tout, s->outs[k], &idx);
            if (!te)
                return rfail(r, op->tout, GIR_E_SCHEMA, "%s needs a `%s` output tensor", op->optype, s->outs[k]);
        }
        const char *tname = jstr(jget(te, "name"));
        setptr(r, "/ops/%zu/tensors_out/%zu/name", i, idx);
        int32_t v = gir_graph_value_index(r->g, tname);
        bool twice = false;
        for (size_t j = 0; j < k; j++)
            if (strcmp(a->out_name[j], tname) == 0)
                twice = true;
        if (v >= 0 || twice)
            return rfail(r, jget(te, "name"), GIR_E_DUPLICATE, "output `%s` writes tensor '%s', which %s%s%s already "
                         "writes (each tensor is written once)", a->out_arg[k], tname, twice ? "this op" : "op '",
                         twice ? "" : r->ops[r->t[v].op].name, twice ? "" : "'");
        if (!*tname)
            return rfail(r, jget(te, "name"), GIR_E_SCHEMA, "output `%s` has an empty tensor name", a->out_arg[k]);
        a->out_j[k] = te;
        a->out_name[k] = tname;
    }
    /* params */
    setptr(r, "/ops/%zu/params", i);
    if (!(s->flags & LN_OP_ANY_PARAMS) && op->params->len != a->n_pv) {
        size_t o = 0;
        list[0] = '\0';
        for (size_t q = 0; q < a->n_pv && o + 1 < sizeof list; q++)
            o += (size_t)snprintf(list + o, sizeof list - o, "%s%s", q ? ", " : "", s->params[q].name);
        return rfail(r, op->params, GIR_E_SCHEMA, "%s needs %zu param%s%s%s%s, but gets %zu", op->optype, a->n_pv,
                     a->n_pv == 1 ? "" : "s", a->n_pv ? " (" : "", list, a->n_pv ? ")" : "", op->params->len);
    }
    for (size_t k = 0; k < a->n_pv; k++) {
        const ln_param_schema *ps = &s->params[k];
        size_t idx;
        const gir_json *pe = find_arg(op->params, ps->name, &idx);
        if (!pe)
            return rfail(r, op->params, GIR_E_SCHEMA, "%s needs a `%s` param", op->optype, ps->name);
        const gir_json *v = jget(pe, "value");
        setptr(r, "/ops/%zu/params/%zu/value", i, idx);
        ln_ptype t;
        TRY(classify(r, v, ps->name, &t));
        if (t != ps->type)
            return rfail(r, v, GIR_E_ATTRIBUTE, "param `%s` should be %s, but is %s", ps->name,
                         ptype_name(ps->type), ptype_name(t));
        a->pv[k] = v;
    }
    return GIR_OK;
}

/* Locates r->ptr at schema param k of the current op. */
static const gir_json *at_param(rd *r, opargs *a, size_t k)
{
    size_t idx = 0;
    find_arg(a->op->params, a->op->schema->params[k].name, &idx);
    setptr(r, "/ops/%zu/params/%zu/value", r->cur, idx);
    return a->pv[k];
}

static gir_status p_int(rd *r, opargs *a, size_t k, int64_t *out)
{
    const gir_json *v = at_param(r, a, k);
    double d;
    TRY(num(r, v, a->op->schema->params[k].name, &d));
    *out = ln_int_slot(d);
    return GIR_OK;
}

static gir_status p_double(rd *r, opargs *a, size_t k, double *out)
{
    const gir_json *v = at_param(r, a, k);
    return num(r, v, a->op->schema->params[k].name, out);
}

static const char *p_str(rd *r, opargs *a, size_t k)
{
    at_param(r, a, k);
    return a->pv[k]->u.str;
}

/* An int array param of exactly `len` elements (len 0: any length). */
static gir_status p_ints(rd *r, opargs *a, size_t k, size_t len, int64_t *out, size_t cap, size_t *n)
{
    const gir_json *v = at_param(r, a, k);
    const char *pn = a->op->schema->params[k].name;
    if (len && v->len != len)
        return rfail(r, v, GIR_E_ATTRIBUTE, "param `%s` needs %zu elements, but gets %zu elements", pn, len, v->len);
    if (v->len > cap)
        return rfail(r, v, GIR_E_ATTRIBUTE, "param `%s` has %zu elements, more than %zu", pn, v->len, cap);
    for (size_t j = 0; j < v->len; j++) {
        double d;
        TRY(num(r, &v->u.items[j], pn, &d));
        out[j] = ln_int_slot(d);
    }
    if (n)
        *n = v->len;
    return GIR_OK;
}

/* Checks that each element is >= lo (ge) or > lo-1 (gt). */
static gir_status need_ge(rd *r, opargs *a, size_t k, const int64_t *v, size_t n, int64_t lo)
{
    for (size_t j = 0; j < n; j++) {
        if (v[j] >= lo)
            continue;
        const gir_json *pv = at_param(r, a, k);
        const char *pn = a->op->schema->params[k].name;
        if (pv->type == GIR_JSON_ARRAY)
            return rfail(r, &pv->u.items[j], GIR_E_ATTRIBUTE, "param `%s`[%zu] should be >= %lld, but gets %lld", pn, j,
                         (long long)lo, (long long)v[j]);
        return rfail(r, pv, GIR_E_ATTRIBUTE, "param `%s` should be >= %lld, but gets %lld", pn, (long long)lo,
                     (long long)v[j]);
    }
    return GIR_OK;
}

/* ---- values and nodes ------------------------------------------------------ */

static gir_status new_output(rd *r, gir_node *n, size_t k, const char *name, gir_dtype dt, const gir_shape *s)
{
    gir_status st = gir_node_make_output(r->g, n, k, name, r->err);
    if (st)
        return st;
    TRY(grow_t(r));
    int32_t v = n->out[k];
    gir_value *gv = val(r, v);
    gv->dtype = dt;
    gv->shape = *s;
    r->t[v].op = (int32_t)r->cur;
    r->t[v].root = v;
    return GIR_OK;
}

static gir_status set_variant_meta(rd *r, gir_node *n, const ln_opref *op)
{
    TRYM(gir_attrs_set_string(r->g, &n->meta, "lightnet.optype", op->optype, r->err));
    if (op->variant)
        TRYM(gir_attrs_set_string(r->g, &n->meta, "lightnet.variant", op->variant, r->err));
    return GIR_OK;
}

static gir_status make_node(rd *r, const char *name, gir_op gop, opargs *a, size_t n_in, const int32_t *ins,
                            size_t n_out, gir_node **out)
{
    gir_node *n;
    gir_status st = gir_graph_add_node(r->g, name, gop, n_in, n_out, &n, r->err);
    if (st)
        return st;
    for (size_t k = 0; k < n_in; k++)
        n->in[k] = ins[k];
    TRY(set_variant_meta(r, n, a->op));
    *out = n;
    return GIR_OK;
}

#define SET_INTS(n, key, v, cnt) TRYM(gir_attrs_set_ints(r->g, &(n)->attrs, key, v, cnt, r->err))
#define SET_INT(n, key, v) TRYM(gir_attrs_set_int(r->g, &(n)->attrs, key, v, r->err))
#define SET_FLOAT(n, key, v) TRYM(gir_attrs_set_float(r->g, &(n)->attrs, key, v, r->err))
#define SET_STR(n, key, v) TRYM(gir_attrs_set_string(r->g, &(n)->attrs, key, v, r->err))
#define META_STR(n, key, v) TRYM(gir_attrs_set_string(r->g, &(n)->meta, key, v, r->err))
#define META_FLOATS(n, key, v, cnt) TRYM(gir_attrs_set_floats(r->g, &(n)->meta, key, v, cnt, r->err))
#define META_INTS(n, key, v, cnt) TRYM(gir_attrs_set_ints(r->g, &(n)->meta, key, v, cnt, r->err))

/* A name for a helper node (or value) graphconv adds, taken by no op (or
 * tensor) of the file and not yet in the graph. */
static const char *fresh_name(rd *r, const char *base, bool node)
{
    for (unsigned long k = 0;; k++) {
        char *c = k ? gir_strdupf("%s_%lu", base, k) : gir_strdupf("%s", base);
        if (!c)
            return NULL;
        bool taken = node ? (gir_graph_node_index(r->g, c) >= 0 || has_name(r->opnames, r->n_opnames, c))
                          : (gir_graph_value_index(r->g, c) >= 0 || has_name(r->tnames, r->n_tnames, c));
        if (!taken) {
            const char *s = gir_arena_strdup(&r->g->arena, c);
            free(c);
            return s;
        }
        free(c);
    }
}

/* ---- shape checks ----------------------------------------------------------- */

static gir_status need_rank(rd *r, opargs *a, size_t k, int rank)
{
    gir_value *v = val(r, a->in[k]);
    if (v->shape.rank != rank) {
        char b[128];
        setptr(r, "/ops/%zu/tensors_in", r->cur);
        return rfail(r, a->in_j[k], GIR_E_SHAPE, "input `%s` ('%s', %s) should be %d-D", a->in_arg[k], v->name,
                     shape_s(&v->shape, b), rank);
    }
    return GIR_OK;
}

static gir_status need_dtype(rd *r, opargs *a, size_t k, gir_dtype dt)
{
    gir_value *v = val(r, a->in[k]);
    if (v->dtype != dt) {
        setptr(r, "/ops/%zu/tensors_in", r->cur);
        return rfail(r, a->in_j[k], GIR_E_DTYPE, "input `%s` ('%s') should be %s, but is %s", a->in_arg[k], v->name,
                     ln_dtype_name(dt), ln_dtype_name(v->dtype) ? ln_dtype_name(v->dtype) : gir_dtype_name(v->dtype));
    }
    return GIR_OK;
}

static gir_status need_same(rd *r, opargs *a, size_t k, size_t ref, bool shape)
{
    gir_value *v = val(r, a->in[k]), *w = val(r, a->in[ref]);
    char b1[128], b2[128];
    setptr(r, "/ops/%zu/tensors_in", r->cur);
    if (v->dtype != w->dtype)
        return rfail(r, a->in_j[k], GIR_E_DTYPE, "tensor `%s` (%s) and tensor `%s` (%s) should have the same dtype",
                     a->in_arg[ref], ln_dtype_name(w->dtype), a->in_arg[k], ln_dtype_name(v->dtype));
    if (shape && !gir_shape_equal(&v->shape, &w->shape))
        return rfail(r, a->in_j[k], GIR_E_SHAPE, "tensor `%s`(%s) and tensor `%s`(%s) should have the same shape",
                     a->in_arg[ref], shape_s(&w->shape, b1), a->in_arg[k], shape_s(&v->shape, b2));
    return GIR_OK;
}

static int64_t numel(const gir_shape *s)
{
    int64_t n = 1;
    for (int i = 0; i < s->rank; i++)
        n *= s->dims[i];
    return n;
}

/* A shape from dims (each >= 1), at most 8 axes and 2^31-1 elements
 * (TensorLight counts elements in an int). */
static gir_status make_shape(rd *r, const gir_json *at, const int64_t *dims, size_t n, gir_shape *s)
{
    if (n < 1 || n > GIR_MAX_RANK)
        return rfail(r, at, GIR_E_SHAPE, "a tensor of %zu dimensions; TensorLight allows 1 to 8", n);
    uint64_t total = 1;
    s->rank = (int)n;
    for (size_t i = 0; i < n; i++) {
        if (dims[i] < 1)
            return rfail(r, at, GIR_E_SHAPE, "dimension %zu is %lld; dimensions must be > 0", i, (long long)dims[i]);
        if (!gir_mul_u64(total, (uint64_t)dims[i], &total) || total > INT32_MAX)
            return rfail(r, at, GIR_E_LIMIT, "a tensor of more than 2^31-1 elements (TensorLight counts them in an int)");
        s->dims[i] = dims[i];
    }
    return GIR_OK;
}

/* ---- autopad ---------------------------------------------------------------- */

static bool is_autopad(const char *m)
{
    return strcmp(m, "VALID") == 0 || strcmp(m, "SAME_UPPER") == 0 || strcmp(m, "SAME_LOWER") == 0;
}

/* Output size of a convolution or pooling window, as LightNet computes it
 * (C division), refusing a window larger than the padded input. */
static gir_status conv_out(rd *r, opargs *a, const char *what, int64_t in, int64_t pad, int64_t k, int64_t s,
                           int64_t d, int64_t *out)
{
    int64_t span = (k - 1) * d + 1;
    if (in + pad < span) {
        setptr(r, "/ops/%zu/params", r->cur);
        return rfail(r, a->op->params, GIR_E_SHAPE,
                     "the %s window spans %lld but the padded input is only %lld", what, (long long)span,
                     (long long)(in + pad));
    }
    *out = (in + pad - span) / s + 1;
    return GIR_OK;
}

/* ---- the operators ------------------------------------------------------------ */

static gir_status op_create(rd *r, opargs *a, int kind)
{
    const ln_opref *op = a->op;
    gir_dtype dt;
    const char *dtn = p_str(r, a, 0);
    dt = ln_dtype_from_name(dtn);
    if (dt == GIR_DT_UNKNOWN)
        return rfail(r, a->pv[0], GIR_E_DTYPE, "param `dtype` is \"%s\", not a TensorLight dtype (TL_FLOAT, "
                     "TL_DOUBLE, TL_INT8/16/32/64, TL_UINT8/16/32/64, TL_BOOL)", dtn);
    gir_shape s;
    int64_t dims[GIR_MAX_RANK + 1];
    size_t nd = 0;
    double start = 0, stop = 0, step = 0, ran[2] = { 0, 0 };
    bool from_file = false;
    if (kind == CR_ARANGE) {
        TRY(p_double(r, a, 1, &start));
        TRY(p_double(r, a, 2, &stop));
        TRY(p_double(r, a, 3, &step));
        at_param(r, a, 3);
        if (step == 0)
            return rfail(r, a->pv[3], GIR_E_ATTRIBUTE, "param `step` is 0");
        if (!(stop > start))
            return rfail(r, a->pv[2], GIR_E_ATTRIBUTE, "param `stop` (%g) should be > `start` (%g)", stop, start);
        double len = ceil((stop - start) / step);
        if (!(len >= 1) || len > INT32_MAX)
            return rfail(r, a->pv[3], GIR_E_ATTRIBUTE, "arange(%g, %g, %g) has %g elements", start, stop, step, len);
        dims[0] = (int64_t)len;
        nd = 1;
        setptr(r, "/ops/%zu", r->cur);
        TRY(make_shape(r, op->obj, dims, nd, &s));
    } else {
        const gir_json *dv = at_param(r, a, 1);
        if (dv->len > GIR_MAX_RANK)
            return rfail(r, dv, GIR_E_SHAPE, "param `dims` has %zu elements; TensorLight allows at most 8", dv->len);
        TRY(p_ints(r, a, 1, 0, dims, GIR_MAX_RANK, &nd));
        TRY(need_ge(r, a, 1, dims, nd, 1));
        TRY(make_shape(r, dv, dims, nd, &s));
    }
    if (kind == CR_CREATE) {
        const gir_json *rv = at_param(r, a, 2);
        if (rv->len != 2)
            return rfail(r, rv, GIR_E_ATTRIBUTE, "param `ran` needs 2 elements, but gets %zu elements", rv->len);
        TRY(num(r, &rv->u.items[0], "ran[0]", &ran[0]));
        TRY(num(r, &rv->u.items[1], "ran[1]", &ran[1]));
        if (!(ran[0] <= ran[1]))
            return rfail(r, rv, GIR_E_ATTRIBUTE, "param `ran` should satisfy ran[0] <= ran[1], but is [%g, %g]", ran[0],
                         ran[1]);
        const gir_json *dv = at_param(r, a, 3);
        for (size_t j = 0; j < dv->len; j++) {
            double d;
            TRY(num(r, &dv->u.items[j], "data", &d));
        }
        at_param(r, a, 4);
        from_file = a->pv[4]->b;
        bool uses_data = !from_file && ran[0] == 0 && ran[1] == 0;
        if (uses_data && (int64_t)dv->len > numel(&s))
            return rfail(r, dv, GIR_E_ATTRIBUTE,
                         "param `data` has %zu values but the tensor has only %lld elements (LightNet would overflow "
                         "its buffer)", dv->len, (long long)numel(&s));
    }
    /* The value itself; its kind and data are settled once the whole model
     * and the weight file are known. */
    int32_t v;
    setptr(r, "/ops/%zu/tensors_out", r->cur);
    gir_status st = gir_graph_add_value(r->g, a->out_name[0], GIR_VALUE_CONST, &v, r->err);
    if (st) {
        gir_err_node(r->err, op->name);
        return st;
    }
    TRY(grow_t(r));
    gir_value *gv = val(r, v);
    gv->dtype = dt;
    gv->shape = s;
    r->t[v].op = (int32_t)r->cur;
    r->t[v].root = v;
    r->t[v].create = (uint8_t)kind;
    r->t[v].from_file = from_file;
    TRYM(gir_attrs_set_string(r->g, &gv->meta, "lightnet.op", op->name, r->err));
    TRYM(gir_attrs_set_string(r->g, &gv->meta, "lightnet.optype", op->optype, r->err));
    if (kind == CR_ARANGE) {
        double p3[3] = { start, stop, step };
        TRYM(gir_attrs_set_floats(r->g, &gv->meta, "lightnet.arange", p3, 3, r->err));
    }
    if (kind == CR_CREATE) {
        TRYM(gir_attrs_set_floats(r->g, &gv->meta, "lightnet.ran", ran, 2, r->err));
        TRYM(gir_attrs_set_bool(r->g, &gv->meta, "lightnet.from_file", from_file, r->err));
    }
    return GIR_OK;
}

static gir_status op_slice(rd *r, opargs *a, gir_node **np)
{
    gir_value *src = val(r, a->in[0]);
    int64_t axis, start, len;
    TRY(p_int(r, a, 0, &axis));
    if (axis < 0 || axis >= src->shape.rank)
        return rfail(r, a->pv[0], GIR_E_ATTRIBUTE, "param `axis` should be >= 0 and < %d (the rank of `src`), but "
                     "gets %lld", src->shape.rank, (long long)axis);
    int64_t d = src->shape.dims[axis];
    TRY(p_int(r, a, 1, &start));
    if (start < 0 || start >= d)
        return rfail(r, a->pv[1], GIR_E_ATTRIBUTE, "param `start` should be >= 0 and < %lld, but gets %lld",
                     (long long)d, (long long)start);
    TRY(p_int(r, a, 2, &len));
    if (len < 1 || len > d || start + len > d)
        return rfail(r, a->pv[2], GIR_E_ATTRIBUTE, "param `len` should be > 0 and start + len <= %lld, but gets %lld "
                     "(start %lld)", (long long)d, (long long)len, (long long)start);
    gir_shape s = src->shape;
    s.dims[axis] = len;
    gir_node *n;
    TRY(make_node(r, a->op->name, GIR_OP_Slice, a, 1, a->in, 1, &n));
    int64_t st[1] = { start }, en[1] = { start + len }, ax[1] = { axis }, sp[1] = { 1 };
    SET_INTS(n, "starts", st, 1);
    SET_INTS(n, "ends", en, 1);
    SET_INTS(n, "axes", ax, 1);
    SET_INTS(n, "steps", sp, 1);
    TRY(new_output(r, n, 0, a->out_name[0], src->dtype, &s));
    *np = n;
    return GIR_OK;
}

static gir_status op_print(rd *r, opargs *a, bool to_file)
{
    gir_node *n;
    TRY(make_node(r, a->op->name, GIR_OP_Print, a, 1, a->in, 0, &n));
    SET_STR(n, "message", p_str(r, a, 0));
    if (to_file)
        SET_STR(n, "file", p_str(r, a, 1));
    return GIR_OK;
}

/* conv2d, deconv2d, maxpool2d, avgpool2d */
static gir_status op_window(rd *r, opargs *a, const char *optype)
{
    bool conv = strcmp(optype, "conv2d") == 0, deconv = strcmp(optype, "deconv2d") == 0;
    bool pool = !conv && !deconv;
    gir_value *src = val(r, a->in[0]);
    TRY(need_rank(r, a, 0, 4));
    int64_t group = 1, size[2], stride[2], dil[2] = { 1, 1 }, pad[4], out_pad[2] = { 0, 0 }, out_dims[4] = { 0 };
    const char *autopad;
    gir_value *w = NULL, *b = NULL;
    char b1[128], b2[128];
    if (!pool) {
        TRY(need_rank(r, a, 1, 4));
        TRY(need_rank(r, a, 2, 1));
        w = val(r, a->in[1]);
        b = val(r, a->in[2]);
        if (conv && b->shape.dims[0] != w->shape.dims[0]) {
            setptr(r, "/ops/%zu/tensors_in", r->cur);
            return rfail(r, a->in_j[2], GIR_E_SHAPE, "'bias' (%s) should have the size of dims[0] of 'weight' (%s)",
                         shape_s(&b->shape, b1), shape_s(&w->shape, b2));
        }
        TRY(need_same(r, a, 1, 0, false));
        TRY(need_same(r, a, 2, 0, false));
        TRY(p_int(r, a, 0, &group));
        TRY(need_ge(r, a, 0, &group, 1, 1));
        if (conv && w->shape.dims[1] * group != src->shape.dims[1])
            return rfail(r, a->pv[0], GIR_E_SHAPE, "'weight' (%s)'s dims[1] times group (%lld) should equal dims[1] "
                         "of 'src' (%s)", shape_s(&w->shape, b1), (long long)group, shape_s(&src->shape, b2));
        if (deconv && w->shape.dims[1] * group != b->shape.dims[0])
            return rfail(r, a->pv[0], GIR_E_SHAPE, "'weight' (%s)'s dims[1] times group (%lld) should equal 'bias' "
                         "(%s)'s dims[0]", shape_s(&w->shape, b1), (long long)group, shape_s(&b->shape, b2));
        if (deconv && w->shape.dims[0] != src->shape.dims[1]) {
            setptr(r, "/ops/%zu/tensors_in", r->cur);
            return rfail(r, a->in_j[1], GIR_E_SHAPE, "'weight' (%s)'s dims[0] should equal the channels of 'src' (%s) "
                         "for a transposed convolution", shape_s(&w->shape, b1), shape_s(&src->shape, b2));
        }
        if (deconv && group != 1 && src->shape.dims[1] % group != 0)
            return rfail(r, a->pv[0], GIR_E_SHAPE, "group %lld does not divide the %lld input channels", (long long)group,
                         (long long)src->shape.dims[1]);
    }
    /* param indices differ per op */
    size_t i_size = pool ? 0 : 1, i_stride = pool ? 1 : 2;
    size_t i_dil = conv ? 3 : deconv ? 6 : 0, i_pad = conv ? 4 : deconv ? 4 : 2;
    size_t i_auto = conv ? 5 : deconv ? 7 : 3;
    TRY(p_ints(r, a, i_size, 2, size, 2, NULL));
    TRY(need_ge(r, a, i_size, size, 2, 1));
    if (!pool && (size[0] != w->shape.dims[2] || size[1] != w->shape.dims[3]))
        return rfail(r, at_param(r, a, i_size), GIR_E_SHAPE, "'size' ([%lld,%lld]) should be equal to the last two "
                     "dimensions of 'weight' (%s)", (long long)size[0], (long long)size[1], shape_s(&w->shape, b1));
    TRY(p_ints(r, a, i_stride, 2, stride, 2, NULL));
    TRY(need_ge(r, a, i_stride, stride, 2, 1));
    if (deconv) {
        TRY(p_ints(r, a, 3, 4, out_dims, 4, NULL));
        TRY(need_ge(r, a, 3, out_dims, 4, 0));
        TRY(p_ints(r, a, 5, 2, out_pad, 2, NULL));
        TRY(need_ge(r, a, 5, out_pad, 2, 0));
    }
    if (!pool) {
        TRY(p_ints(r, a, i_dil, 2, dil, 2, NULL));
        TRY(need_ge(r, a, i_dil, dil, 2, 1));
    }
    TRY(p_ints(r, a, i_pad, 4, pad, 4, NULL));
    TRY(need_ge(r, a, i_pad, pad, 4, 0));
    int64_t orig_pad[4] = { pad[0], pad[1], pad[2], pad[3] };
    autopad = p_str(r, a, i_auto);
    const gir_json *autopad_j = a->pv[i_auto];
    bool recomputed = false;
    if (deconv) {
        bool od_valid = out_dims[0] > 0 && out_dims[1] > 0 && out_dims[2] > 0 && out_dims[3] > 0;
        if (strcmp(autopad, "VALID") == 0) {
            pad[0] = pad[1] = pad[2] = pad[3] = 0;
            recomputed = true;
        } else if (strcmp(autopad, "SAME_UPPER") == 0 || strcmp(autopad, "SAME_LOWER") == 0) {
            if (!od_valid)
                return rfail(r, autopad_j, GIR_E_ATTRIBUTE, "'autopad' cannot be '%s' when 'output_dims' "
                             "([%lld,%lld,%lld,%lld]) is not valid", autopad, (long long)out_dims[0],
                             (long long)out_dims[1], (long long)out_dims[2], (long long)out_dims[3]);
            for (int ax = 0; ax < 2; ax++) {
                int64_t total = stride[ax] * (src->shape.dims[2 + ax] - 1) + out_pad[ax] +
                                (size[ax] - 1) * dil[ax] + 1 - out_dims[2 + ax];
                if (total < 0)
                    return rfail(r, autopad_j, GIR_E_ATTRIBUTE, "'output_dims' is larger than %s padding can reach",
                                 autopad);
                int64_t hi = total / 2, lo = total - hi;
                bool upper = strcmp(autopad, "SAME_UPPER") == 0;
                pad[ax] = upper ? hi : lo;
                pad[2 + ax] = upper ? lo : hi;
            }
            recomputed = true;
        } else if (strcmp(autopad, "NOTSET") != 0) {
            return rfail(r, autopad_j, GIR_E_ATTRIBUTE, "unsupported 'autopad' %s (NOTSET, VALID, SAME_UPPER or "
                         "SAME_LOWER)", autopad);
        }
    } else if (is_autopad(autopad)) {
        for (int ax = 0; ax < 2; ax++) {
            /* LightNet's pooling hands the helper the N and C dims instead of
             * H and W; the padding it computes is reproduced as is. */
            int64_t in = pool ? src->shape.dims[ax] : src->shape.dims[2 + ax];
            ln_autopad_conv(autopad, in, size[ax], stride[ax], dil[ax], &pad[ax], &pad[2 + ax]);
        }
        recomputed = true;
    } else if (strcmp(autopad, "NOTSET") != 0) {
        TRY(gir_graph_note(r->g, r->err, "op %s: 'autopad' %s is not supported; LightNet only warns and uses the given padding",
                    a->op->name, autopad));
    }
    gir_shape s = src->shape;
    if (deconv) {
        s.dims[1] = w->shape.dims[1] * group;
        for (int ax = 0; ax < 2; ax++) {
            int64_t o = stride[ax] * (src->shape.dims[2 + ax] - 1) + out_pad[ax] + (size[ax] - 1) * dil[ax] + 1 -
                        (pad[ax] + pad[2 + ax]);
            if (o < 1)
                return rfail(r, at_param(r, a, i_pad), GIR_E_SHAPE, "the padding leaves output dimension %d at %lld",
                             2 + ax, (long long)o);
            s.dims[2 + ax] = o;
        }
        bool od_valid = out_dims[0] > 0 && out_dims[1] > 0 && out_dims[2] > 0 && out_dims[3] > 0;
        if (od_valid)
            for (int d = 0; d < 4; d++)
                if (out_dims[d] != s.dims[d])
                    return rfail(r, at_param(r, a, 3), GIR_E_SHAPE, "'output_dims' ([%lld,%lld,%lld,%lld]) does not "
                                 "match the output shape %s", (long long)out_dims[0], (long long)out_dims[1],
                                 (long long)out_dims[2], (long long)out_dims[3], shape_s(&s, b1));
    } else {
        if (conv)
            s.dims[1] = w->shape.dims[0];
        for (int ax = 0; ax < 2; ax++)
            TRY(conv_out(r, a, conv ? "convolution" : "pooling", src->shape.dims[2 + ax], pad[ax] + pad[2 + ax],
                         size[ax], stride[ax], dil[ax], &s.dims[2 + ax]));
    }
    gir_op gop = conv ? GIR_OP_Conv : deconv ? GIR_OP_ConvTranspose
                                             : strcmp(optype, "maxpool2d") == 0 ? GIR_OP_MaxPool : GIR_OP_AveragePool;
    gir_node *n;
    TRY(make_node(r, a->op->name, gop, a, pool ? 1 : 3, a->in, 1, &n));
    SET_INTS(n, "kernel_shape", size, 2);
    SET_INTS(n, "strides", stride, 2);
    SET_INTS(n, "pads", pad, 4);
    if (gop != GIR_OP_AveragePool)
        SET_INTS(n, "dilations", dil, 2);
    if (!pool)
        SET_INT(n, "group", group);
    if (deconv)
        SET_INTS(n, "output_padding", out_pad, 2);
    META_STR(n, "lightnet.autopad", autopad);
    if (recomputed)
        META_INTS(n, "lightnet.padding", orig_pad, 4);
    if (deconv)
        META_INTS(n, "lightnet.output_dims", out_dims, 4);
    return new_output(r, n, 0, a->out_name[0], src->dtype, &s);
}

static gir_status op_unary(rd *r, opargs *a, gir_op gop, gir_node **np)
{
    gir_value *src = val(r, a->in[0]);
    gir_node *n;
    TRY(make_node(r, a->op->name, gop, a, 1, a->in, 1, &n));
    TRY(new_output(r, n, 0, a->out_name[0], src->dtype, &src->shape));
    *np = n;
    return GIR_OK;
}

static gir_status op_axis(rd *r, opargs *a, size_t k, int rank, int64_t *axis)
{
    TRY(p_int(r, a, k, axis));
    if (*axis < 0 || *axis >= rank)
        return rfail(r, a->pv[k], GIR_E_ATTRIBUTE, "param `axis` should be >= 0 and < %d, but gets %lld", rank,
                     (long long)*axis);
    return GIR_OK;
}

static gir_status op_float_param(rd *r, opargs *a, gir_node *n, const char *canon, const char *meta)
{
    double d;
    TRY(p_double(r, a, 0, &d));
    float f = ln_float_slot(d);
    if (!(d > FLT_MIN) || d >= FLT_MAX)
        TRY(gir_graph_note(r->g, r->err, "op %s: `%s` %.17g is read by LightNet as the float %.9g", a->op->name,
                    a->op->schema->params[0].name, d, (double)f));
    SET_FLOAT(n, canon, (double)f);
    TRYM(gir_attrs_set_float(r->g, &n->meta, meta, d, r->err));
    return GIR_OK;
}

static gir_status op_elew(rd *r, opargs *a)
{
    static const struct {
        const char *name;
        gir_op op;
    } ops[] = { { "TL_MUL", GIR_OP_Mul }, { "TL_DIV", GIR_OP_Div }, { "TL_SUM", GIR_OP_Add },
                { "TL_SUB", GIR_OP_Sub }, { "TL_MAX", GIR_OP_Max }, { "TL_MIN", GIR_OP_Min },
                { "TL_POW", GIR_OP_Pow } };
    TRY(need_same(r, a, 1, 0, true));
    const char *e = p_str(r, a, 0);
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
        if (strcmp(ops[i].name, e) != 0)
            continue;
        gir_node *n;
        TRY(make_node(r, a->op->name, ops[i].op, a, 2, a->in, 1, &n));
        gir_value *src = val(r, a->in[0]);
        return new_output(r, n, 0, a->out_name[0], src->dtype, &src->shape);
    }
    return rfail(r, a->pv[0], GIR_E_ATTRIBUTE, "param `elew_op` is \"%s\"; it should be TL_MUL, TL_DIV, TL_SUM, TL_SUB, "
                 "TL_MAX, TL_MIN or TL_POW", e);
}

static gir_status op_reshape(rd *r, opargs *a)
{
    gir_value *src = val(r, a->in[0]);
    int64_t dims[GIR_MAX_RANK];
    size_t nd;
    const gir_json *dv = at_param(r, a, 0);
    if (dv->len > GIR_MAX_RANK)
        return rfail(r, dv, GIR_E_SHAPE, "param `dims` has %zu elements; TensorLight allows at most 8", dv->len);
    TRY(p_ints(r, a, 0, 0, dims, GIR_MAX_RANK, &nd));
    TRY(need_ge(r, a, 0, dims, nd, 1));
    gir_shape s;
    TRY(make_shape(r, dv, dims, nd, &s));
    if (numel(&s) != numel(&src->shape)) {
        char b1[128], b2[128];
        return rfail(r, dv, GIR_E_SHAPE, "`dims` %s has %lld elements but `src` %s has %lld", shape_s(&s, b1),
                     (long long)numel(&s), shape_s(&src->shape, b2), (long long)numel(&src->shape));
    }
    gir_node *n;
    TRY(make_node(r, a->op->name, GIR_OP_Reshape, a, 1, a->in, 1, &n));
    SET_INTS(n, "shape", dims, nd);
    TRY(new_output(r, n, 0, a->out_name[0], src->dtype, &s));
    r->t[n->out[0]].root = r->t[a->in[0]].root;
    return GIR_OK;
}

static gir_status op_transpose(rd *r, opargs *a)
{
    gir_value *src = val(r, a->in[0]);
    int64_t axes[GIR_MAX_RANK];
    size_t n_ax;
    const gir_json *av = at_param(r, a, 0);
    if (av->len != (size_t)src->shape.rank)
        return rfail(r, av, GIR_E_ATTRIBUTE, "param `axes` has %zu elements but `src` has %d dimensions", av->len,
                     src->shape.rank);
    TRY(p_ints(r, a, 0, 0, axes, GIR_MAX_RANK, &n_ax));
    bool seen[GIR_MAX_RANK] = { false };
    gir_shape s = src->shape;
    for (size_t i = 0; i < n_ax; i++) {
        if (axes[i] < 0 || axes[i] >= src->shape.rank || seen[axes[i]])
            return rfail(r, &av->u.items[i], GIR_E_ATTRIBUTE, "param `axes` should be a permutation of 0..%d, but "
                         "axes[%zu] is %lld", src->shape.rank - 1, i, (long long)axes[i]);
        seen[axes[i]] = true;
        s.dims[i] = src->shape.dims[axes[i]];
    }
    gir_node *n;
    TRY(make_node(r, a->op->name, GIR_OP_Transpose, a, 1, a->in, 1, &n));
    SET_INTS(n, "perm", axes, n_ax);
    return new_output(r, n, 0, a->out_name[0], src->dtype, &s);
}

static gir_status op_concat(rd *r, opargs *a)
{
    gir_value *x = val(r, a->in[0]), *y = val(r, a->in[1]);
    TRY(need_same(r, a, 1, 0, false));
    int64_t axis;
    TRY(op_axis(r, a, 0, x->shape.rank, &axis));
    char b1[128], b2[128];
    bool ok = x->shape.rank == y->shape.rank;
    for (int i = 0; ok && i < x->shape.rank; i++)
        if (i != axis && x->shape.dims[i] != y->shape.dims[i])
            ok = false;
    if (!ok) {
        setptr(r, "/ops/%zu/tensors_in", r->cur);
        return rfail(r, a->in_j[1], GIR_E_SHAPE, "`src1` %s and `src2` %s should have the same shape except on axis "
                     "%lld", shape_s(&x->shape, b1), shape_s(&y->shape, b2), (long long)axis);
    }
    gir_shape s = x->shape;
    s.dims[axis] += y->shape.dims[axis];
    if (s.dims[axis] > INT32_MAX)
        return rfail(r, a->in_j[1], GIR_E_LIMIT, "the concatenation is too large");
    gir_node *n;
    TRY(make_node(r, a->op->name, GIR_OP_Concat, a, 2, a->in, 1, &n));
    SET_INT(n, "axis", axis);
    return new_output(r, n, 0, a->out_name[0], x->dtype, &s);
}

static gir_status resize_node(rd *r, opargs *a, const gir_shape *s, gir_node **np)
{
    gir_value *src = val(r, a->in[0]);
    gir_node *n;
    TRY(make_node(r, a->op->name, GIR_OP_Resize, a, 1, a->in, 1, &n));
    SET_STR(n, "mode", "nearest");
    SET_STR(n, "coordinate_transformation_mode", "half_pixel");
    SET_STR(n, "nearest_mode", "round_prefer_ceil");
    SET_INTS(n, "sizes", s->dims, (size_t)s->rank);
    TRY(new_output(r, n, 0, a->out_name[0], src->dtype, s));
    *np = n;
    return GIR_OK;
}

static gir_status check_mode(rd *r, opargs *a)
{
    const char *mode = p_str(r, a, 0);
    if (strcmp(mode, "TL_LINEAR") == 0)
        return rfail(r, a->pv[0], GIR_E_UNSUPPORTED, "mode TL_LINEAR passes LightNet's checks but TensorLight has no "
                     "linear resize (it asserts at run time)");
    if (strcmp(mode, "TL_NEAREST") != 0)
        return rfail(r, a->pv[0], GIR_E_ATTRIBUTE, "'mode' should be 'TL_NEAREST' or 'TL_LINEAR', not \"%s\"", mode);
    return GIR_OK;
}

static gir_status op_upsample(rd *r, opargs *a)
{
    gir_value *src = val(r, a->in[0]);
    TRY(check_mode(r, a));
    const gir_json *sv = at_param(r, a, 1);
    if (sv->len != (size_t)src->shape.rank)
        return rfail(r, sv, GIR_E_ATTRIBUTE, "the length of 'scales' (%zu) should be the rank of input 'src' (%d)",
                     sv->len, src->shape.rank);
    double orig[GIR_MAX_RANK];
    gir_shape s = src->shape;
    for (size_t i = 0; i < sv->len; i++) {
        TRY(num(r, &sv->u.items[i], "scales", &orig[i]));
        float f = ln_float_slot(orig[i]);
        float prod = f * (float)src->shape.dims[i];
        double d = floor((double)prod);
        if (d < 1 || d > INT32_MAX)
            return rfail(r, &sv->u.items[i], GIR_E_SHAPE, "scales[%zu] (%g) makes dimension %zu %.0f", i, (double)f, i,
                         d);
        s.dims[i] = (int64_t)d;
    }
    TRY(make_shape(r, sv, s.dims, (size_t)s.rank, &s));
    gir_node *n;
    TRY(resize_node(r, a, &s, &n));
    META_FLOATS(n, "lightnet.scales", orig, sv->len);
    return GIR_OK;
}

static gir_status op_resize(rd *r, opargs *a)
{
    gir_value *src = val(r, a->in[0]);
    TRY(check_mode(r, a));
    int64_t dims[GIR_MAX_RANK];
    size_t nd;
    const gir_json *dv = at_param(r, a, 1);
    if (dv->len != (size_t)src->shape.rank)
        return rfail(r, dv, GIR_E_ATTRIBUTE, "the length of 'dims' (%zu) should be the rank of input 'src' (%d)",
                     dv->len, src->shape.rank);
    TRY(p_ints(r, a, 1, 0, dims, GIR_MAX_RANK, &nd));
    TRY(need_ge(r, a, 1, dims, nd, 1));
    gir_shape s;
    TRY(make_shape(r, dv, dims, nd, &s));
    gir_node *n;
    return resize_node(r, a, &s, &n);
}

static gir_status op_maxreduce(rd *r, opargs *a, bool with_arg)
{
    gir_value *src = val(r, a->in[0]);
    int64_t axis;
    TRY(op_axis(r, a, 0, src->shape.rank, &axis));
    gir_shape s = src->shape;
    s.dims[axis] = 1;
    gir_node *n;
    TRY(make_node(r, a->op->name, GIR_OP_ReduceMax, a, 1, a->in, 1, &n));
    SET_INTS(n, "axes", &axis, 1);
    SET_INT(n, "keepdims", 1);
    TRY(new_output(r, n, 0, a->out_name[0], src->dtype, &s));
    if (!with_arg)
        return GIR_OK;
    /* maxreduce_arg = ReduceMax + ArgMax (first index of the maximum, as
     * TensorLight's strict comparison gives) + Cast to int32. */
    char base[600];
    snprintf(base, sizeof base, "%.500s/argmax", a->op->name);
    const char *an = fresh_name(r, base, true);
    if (!an)
        return gir_nomem(r->err);
    gir_node *am;
    TRY(make_node(r, an, GIR_OP_ArgMax, a, 1, a->in, 1, &am));
    SET_INT(am, "axis", axis);
    SET_INT(am, "keepdims", 1);
    SET_INT(am, "select_last_index", 0);
    META_STR(am, "lightnet.op", a->op->name);
    snprintf(base, sizeof base, "%.500s/int64", a->out_name[1]);
    const char *iv = fresh_name(r, base, false);
    if (!iv)
        return gir_nomem(r->err);
    TRY(new_output(r, am, 0, iv, GIR_DT_I64, &s));
    snprintf(base, sizeof base, "%.500s/cast", a->op->name);
    const char *cn = fresh_name(r, base, true);
    if (!cn)
        return gir_nomem(r->err);
    gir_node *c;
    TRY(make_node(r, cn, GIR_OP_Cast, a, 1, &am->out[0], 1, &c));
    SET_STR(c, "to", gir_dtype_name(GIR_DT_I32));
    META_STR(c, "lightnet.op", a->op->name);
    META_STR(n, "lightnet.op", a->op->name);
    return new_output(r, c, 0, a->out_name[1], GIR_DT_I32, &s);
}

static gir_status op_sort(rd *r, opargs *a, bool by_key)
{
    TRY(need_rank(r, a, 0, 1));
    gir_value *key = val(r, a->in[0]);
    if (by_key) {
        TRY(need_rank(r, a, 1, 1));
        TRY(need_dtype(r, a, 1, GIR_DT_I32));
        gir_value *v = val(r, a->in[1]);
        if (v->shape.dims[0] != key->shape.dims[0]) {
            setptr(r, "/ops/%zu/tensors_in", r->cur);
            return rfail(r, a->in_j[1], GIR_E_SHAPE, "`src_val` has %lld elements but `src_key` %lld",
                         (long long)v->shape.dims[0], (long long)key->shape.dims[0]);
        }
    }
    const char *dir = p_str(r, a, 0);
    bool desc = strcmp(dir, "TL_SORT_DIR_DESCENDING") == 0;
    if (!desc && strcmp(dir, "TL_SORT_DIR_ASCENDING") != 0)
        return rfail(r, a->pv[0], GIR_E_ATTRIBUTE, "'dir' should be TL_SORT_DIR_ASCENDING or "
                     "TL_SORT_DIR_DESCENDING, not \"%s\"", dir);
    size_t n_io = by_key ? 2 : 1;
    gir_node *n;
    TRY(make_node(r, a->op->name, GIR_OP_Sort, a, n_io, a->in, n_io, &n));
    SET_INT(n, "descending", desc);
    for (size_t k = 0; k < n_io; k++) {
        gir_value *s = val(r, a->in[k]);
        TRY(new_output(r, n, k, a->out_name[k], s->dtype, &s->shape));
        r->t[n->out[k]].root = r->t[a->in[k]].root;
    }
    return GIR_OK;
}

static gir_status op_pick1d(rd *r, opargs *a)
{
    TRY(need_rank(r, a, 0, 1));
    TRY(need_rank(r, a, 1, 1));
    TRY(need_dtype(r, a, 1, GIR_DT_I32));
    gir_value *src = val(r, a->in[0]), *idx = val(r, a->in[1]);
    int64_t len, stride;
    TRY(p_int(r, a, 0, &len));
    if (len > idx->shape.dims[0])
        return rfail(r, a->pv[0], GIR_E_ATTRIBUTE, "param `len` should be <= %lld (the length of `src_index`), but "
                     "gets %lld", (long long)idx->shape.dims[0], (long long)len);
    TRY(need_ge(r, a, 0, &len, 1, 1));
    TRY(p_int(r, a, 1, &stride));
    TRY(need_ge(r, a, 1, &stride, 1, 1));
    gir_shape s = { 1, { len * stride } };
    TRY(make_shape(r, a->pv[1], s.dims, 1, &s));
    gir_node *n;
    TRY(make_node(r, a->op->name, GIR_OP_GatherBlocks, a, 2, a->in, 1, &n));
    SET_INT(n, "count", len);
    SET_INT(n, "block_size", stride);
    return new_output(r, n, 0, a->out_name[0], src->dtype, &s);
}

static gir_status op_rearange(rd *r, opargs *a)
{
    TRY(need_rank(r, a, 0, 1));
    gir_value *src = val(r, a->in[0]);
    double start, stop, step;
    TRY(p_double(r, a, 0, &start));
    TRY(p_double(r, a, 1, &stop));
    TRY(p_double(r, a, 2, &step));
    at_param(r, a, 2);
    if (step == 0)
        return rfail(r, a->pv[2], GIR_E_ATTRIBUTE, "param `step` is 0");
    double len = ceil((stop - start) / step);
    if (len != (double)src->shape.dims[0])
        return rfail(r, a->pv[2], GIR_E_SHAPE, "rearange(%g, %g, %g) has %g elements but `src` has %lld", start, stop,
                     step, len, (long long)src->shape.dims[0]);
    gir_node *n;
    TRY(make_node(r, a->op->name, GIR_OP_RangeFill, a, 1, a->in, 1, &n));
    SET_FLOAT(n, "start", start);
    SET_FLOAT(n, "limit", stop);
    SET_FLOAT(n, "delta", step);
    TRY(new_output(r, n, 0, a->out_name[0], src->dtype, &src->shape));
    r->t[n->out[0]].root = r->t[a->in[0]].root;
    return GIR_OK;
}

static gir_status op_bbox(rd *r, opargs *a)
{
    TRY(need_rank(r, a, 0, 5));
    TRY(need_dtype(r, a, 0, GIR_DT_F32));
    gir_value *d = val(r, a->in[0]);
    if (d->shape.dims[4] != 4) {
        setptr(r, "/ops/%zu/tensors_in", r->cur);
        return rfail(r, a->in_j[0], GIR_E_SHAPE, "`src_delta`'s last dimension should be 4, not %lld",
                     (long long)d->shape.dims[4]);
    }
    TRY(need_same(r, a, 1, 0, true));
    static const char *const names[] = { "width", "height", "img_width", "img_height", "x_shift", "y_shift" };
    int64_t v[6];
    for (size_t k = 0; k < 6; k++) {
        TRY(p_int(r, a, k, &v[k]));
        if (k < 4)
            TRY(need_ge(r, a, k, &v[k], 1, 1));
    }
    gir_node *n;
    TRY(make_node(r, a->op->name, GIR_OP_SqueezeDetBoxDecode, a, 2, a->in, 1, &n));
    for (size_t k = 0; k < 6; k++)
        SET_INT(n, names[k], v[k]);
    return new_output(r, n, 0, a->out_name[0], d->dtype, &d->shape);
}

static gir_status op_yolo(rd *r, opargs *a)
{
    TRY(need_rank(r, a, 0, 4));
    TRY(need_dtype(r, a, 0, GIR_DT_F32));
    TRY(need_rank(r, a, 1, 2));
    TRY(need_same(r, a, 1, 0, false));
    gir_value *f = val(r, a->in[0]), *an = val(r, a->in[1]);
    setptr(r, "/ops/%zu/tensors_in", r->cur);
    if (f->shape.dims[0] != 1)
        return rfail(r, a->in_j[0], GIR_E_SHAPE, "`feature`'s batch dimension should be 1, not %lld",
                     (long long)f->shape.dims[0]);
    if (an->shape.dims[1] != 2)
        return rfail(r, a->in_j[1], GIR_E_SHAPE, "`anchors` should be [anchors, 2] (width, height), not [%lld, %lld]",
                     (long long)an->shape.dims[0], (long long)an->shape.dims[1]);
    int64_t A = an->shape.dims[0], C = f->shape.dims[1];
    if (C % A != 0 || C / A - 5 < 1)
        return rfail(r, a->in_j[1], GIR_E_SHAPE, "`feature` has %lld channels, not a multiple of %lld anchors times "
                     "(5 + classes)", (long long)C, (long long)A);
    int64_t iw, ih;
    TRY(p_int(r, a, 0, &iw));
    TRY(need_ge(r, a, 0, &iw, 1, 1));
    TRY(p_int(r, a, 1, &ih));
    TRY(need_ge(r, a, 1, &ih, 1, 1));
    gir_node *n;
    TRY(make_node(r, a->op->name, GIR_OP_YoloV3Decode, a, 2, a->in, 5, &n));
    SET_INT(n, "img_width", iw);
    SET_INT(n, "img_height", ih);
    int64_t third[5] = { 2, 2, 4, 1, C / A - 5 };
    for (size_t k = 0; k < 5; k++) {
        gir_shape s = { 5, { 1, A, third[k], f->shape.dims[2], f->shape.dims[3] } };
        TRY(new_output(r, n, k, a->out_name[k], GIR_DT_F32, &s));
    }
    return GIR_OK;
}

static gir_status op_submean(rd *r, opargs *a)
{
    TRY(need_rank(r, a, 0, 3));
    gir_value *src = val(r, a->in[0]);
    setptr(r, "/ops/%zu/tensors_in", r->cur);
    if (src->dtype == GIR_DT_BOOL)
        return rfail(r, a->in_j[0], GIR_E_DTYPE, "`src` should not be TL_BOOL");
    if (src->shape.dims[2] != 3)
        return rfail(r, a->in_j[0], GIR_E_SHAPE, "`src` should be an HWC image with 3 channels (the `mean` has 3 "
                     "values), not %lld", (long long)src->shape.dims[2]);
    const gir_json *mv = at_param(r, a, 0);
    if (mv->len != 3)
        return rfail(r, mv, GIR_E_ATTRIBUTE, "param `mean` needs 3 elements, but gets %zu elements", mv->len);
    double mean[3];
    for (int i = 0; i < 3; i++)
        TRY(num(r, &mv->u.items[i], "mean", &mean[i]));
    const char *dtn = p_str(r, a, 1);
    gir_dtype dt = ln_dtype_from_name(dtn);
    if (dt == GIR_DT_UNKNOWN || dt == GIR_DT_BOOL)
        return rfail(r, a->pv[1], GIR_E_DTYPE, "param `dtype` \"%s\" should name a TensorLight dtype other than "
                     "TL_BOOL", dtn);
    gir_shape s = { 3, { src->shape.dims[2], src->shape.dims[0], src->shape.dims[1] } };
    gir_node *n;
    TRY(make_node(r, a->op->name, GIR_OP_SubMean, a, 1, a->in, 1, &n));
    TRYM(gir_attrs_set_floats(r->g, &n->attrs, "mean", mean, 3, r->err));
    SET_STR(n, "to", gir_dtype_name(dt));
    return new_output(r, n, 0, a->out_name[0], dt, &s);
}

static gir_status op_dot(rd *r, opargs *a)
{
    TRY(need_same(r, a, 1, 0, true));
    gir_value *x = val(r, a->in[0]);
    gir_node *n;
    TRY(make_node(r, a->op->name, GIR_OP_DotProduct, a, 2, a->in, 1, &n));
    gir_shape s = { 1, { 1 } };
    return new_output(r, n, 0, a->out_name[0], x->dtype, &s);
}

static gir_status op_gather(rd *r, opargs *a)
{
    for (size_t k = 1; k < a->n_in; k++)
        TRY(need_same(r, a, k, 0, true));
    gir_value *x = val(r, a->in[0]);
    if (x->shape.rank + 1 > GIR_MAX_RANK) {
        setptr(r, "/ops/%zu/tensors_in", r->cur);
        return rfail(r, a->in_j[0], GIR_E_SHAPE, "stacking %d-D tensors gives more than 8 dimensions", x->shape.rank);
    }
    gir_shape s;
    s.rank = x->shape.rank + 1;
    s.dims[0] = (int64_t)a->n_in;
    for (int i = 0; i < x->shape.rank; i++)
        s.dims[i + 1] = x->shape.dims[i];
    setptr(r, "/ops/%zu/tensors_in", r->cur);
    TRY(make_shape(r, a->op->tin, s.dims, (size_t)s.rank, &s));
    gir_node *n;
    TRY(make_node(r, a->op->name, GIR_OP_Stack, a, a->n_in, a->in, 1, &n));
    SET_INT(n, "axis", 0);
    const char **args = (const char **)a->in_arg;
    TRYM(gir_attrs_set_strings(r->g, &n->meta, "lightnet.ins", args, a->n_in, r->err));
    return new_output(r, n, 0, a->out_name[0], x->dtype, &s);
}

static gir_status op_scatter(rd *r, opargs *a)
{
    gir_value *x = val(r, a->in[0]);
    setptr(r, "/ops/%zu/tensors_out", r->cur);
    if (x->shape.rank < 2)
        return rfail(r, a->in_j[0], GIR_E_SHAPE, "`src` should have more than one dimension");
    if ((int64_t)a->n_out != x->shape.dims[0])
        return rfail(r, a->op->tout, GIR_E_SHAPE, "scatter of %lld slices needs %lld output tensors, but gets %zu",
                     (long long)x->shape.dims[0], (long long)x->shape.dims[0], a->n_out);
    gir_node *n;
    TRY(make_node(r, a->op->name, GIR_OP_Unstack, a, 1, a->in, a->n_out, &n));
    SET_INT(n, "axis", 0);
    gir_shape s;
    s.rank = x->shape.rank - 1;
    for (int i = 1; i < x->shape.rank; i++)
        s.dims[i - 1] = x->shape.dims[i];
    for (size_t k = 0; k < a->n_out; k++)
        TRY(new_output(r, n, k, a->out_name[k], x->dtype, &s));
    const char **args = (const char **)a->out_arg;
    TRYM(gir_attrs_set_strings(r->g, &n->meta, "lightnet.outs", args, a->n_out, r->err));
    return GIR_OK;
}

/* ---- opaque operators (kept verbatim) ------------------------------------ */

/* Copies every param of the op as an attribute: numbers as FLOAT(S),
 * strings as STRING(S), bools as INT(S) listed in meta "lightnet.bools". */
static gir_status copy_params(rd *r, gir_node *n, const ln_opref *op)
{
    const char **bools = calloc(op->params->len + 1, sizeof *bools);
    size_t n_b = 0;
    if (!bools)
        return gir_nomem(r->err);
    gir_status st = GIR_OK;
    for (size_t k = 0; k < op->params->len && st == GIR_OK; k++) {
        const gir_json *pe = &op->params->u.items[k];
        const char *an = jstr(jget(pe, "arg_name"));
        const gir_json *v = jget(pe, "value");
        setptr(r, "/ops/%zu/params/%zu/value", r->cur, k);
        ln_ptype t;
        st = classify(r, v, an, &t);
        if (st)
            break;
        switch (t) {
        case LN_PT_NUMBER: {
            double d;
            st = num(r, v, an, &d);
            if (!st && gir_attrs_set_float(r->g, &n->attrs, an, d, r->err))
                st = gir_nomem(r->err);
            break;
        }
        case LN_PT_STRING:
            if (gir_attrs_set_string(r->g, &n->attrs, an, v->u.str, r->err))
                st = gir_nomem(r->err);
            break;
        case LN_PT_BOOL:
            if (gir_attrs_set_int(r->g, &n->attrs, an, v->b, r->err))
                st = gir_nomem(r->err);
            bools[n_b++] = an;
            break;
        case LN_PT_NULL:
            st = rfail(r, v, GIR_E_ATTRIBUTE, "param `%s` is null, which every LightNet op rejects", an);
            break;
        case LN_PT_NUMBERS: {
            double *d = malloc(v->len * sizeof *d);
            if (!d) {
                st = gir_nomem(r->err);
                break;
            }
            for (size_t j = 0; j < v->len && !st; j++)
                st = num(r, &v->u.items[j], an, &d[j]);
            if (!st && gir_attrs_set_floats(r->g, &n->attrs, an, d, v->len, r->err))
                st = gir_nomem(r->err);
            free(d);
            break;
        }
        case LN_PT_STRINGS:
        case LN_PT_BOOLS: {
            const char **s = malloc(v->len * sizeof *s);
            int64_t *b = malloc(v->len * sizeof *b);
            if (!s || !b) {
                free(s);
                free(b);
                st = gir_nomem(r->err);
                break;
            }
            for (size_t j = 0; j < v->len; j++) {
                s[j] = v->u.items[j].u.str;
                b[j] = v->u.items[j].b;
            }
            if (t == LN_PT_STRINGS ? gir_attrs_set_strings(r->g, &n->attrs, an, s, v->len, r->err)
                                   : gir_attrs_set_ints(r->g, &n->attrs, an, b, v->len, r->err))
                st = gir_nomem(r->err);
            if (t == LN_PT_BOOLS)
                bools[n_b++] = an;
            free(s);
            free(b);
            break;
        }
        }
    }
    if (!st && n_b && gir_attrs_set_strings(r->g, &n->meta, "lightnet.bools", bools, n_b, r->err))
        st = gir_nomem(r->err);
    free(bools);
    return st;
}

/* The shape a LightNet op gives an opaque op's output: from the param
 * dst<k>_shape / dst<k>_dtype (tensorrt), or by rule. */
static gir_status op_opaque(rd *r, const ln_opref *op)
{
    size_t n_in = op->tin->len, n_out = op->tout->len;
    int32_t *ins = calloc(n_in + 1, sizeof *ins);
    const char **in_args = calloc(n_in + 1, sizeof *in_args), **out_args = calloc(n_out + 1, sizeof *out_args);
    gir_status st = GIR_OK;
    if (!ins || !in_args || !out_args) {
        st = gir_nomem(r->err);
        goto out;
    }
    for (size_t k = 0; k < n_in && !st; k++) {
        const gir_json *te = &op->tin->u.items[k];
        in_args[k] = jstr(jget(te, "arg_name"));
        const char *tname = jstr(jget(te, "name"));
        setptr(r, "/ops/%zu/tensors_in/%zu/name", r->cur, k);
        ins[k] = gir_graph_value_index(r->g, tname);
        if (ins[k] < 0)
            st = rfail(r, jget(te, "name"), GIR_E_REFERENCE, "input `%s` reads tensor '%s', which no earlier op writes",
                       in_args[k], tname);
        else {
            r->t[ins[k]].any_use = true;
            /* tensorrt's weight<k> inputs are parameters, not data */
            if (strncmp(in_args[k], "weight", 6) != 0)
                r->t[ins[k]].data_use = true;
        }
    }
    if (st)
        goto out;
    gir_node *n;
    st = gir_graph_add_node(r->g, op->name, GIR_OP_OPAQUE, n_in, n_out, &n, r->err);
    if (st)
        goto out;
    n->opaque_format = "lightnet";
    n->opaque_op = gir_arena_strdup(&r->g->arena, op->optype);
    if (!n->opaque_op) {
        st = gir_nomem(r->err);
        goto out;
    }
    memcpy(n->in, ins, n_in * sizeof *ins);
    st = copy_params(r, n, op);
    for (size_t k = 0; k < n_out && !st; k++) {
        const gir_json *te = &op->tout->u.items[k];
        out_args[k] = jstr(jget(te, "arg_name"));
        const char *tname = jstr(jget(te, "name"));
        gir_dtype dt = GIR_DT_UNKNOWN;
        gir_shape s = { -1, { 0 } };
        setptr(r, "/ops/%zu/tensors_out/%zu", r->cur, k);
        if (strcmp(op->optype, "tensorrt") == 0) {
            char key[96];
            snprintf(key, sizeof key, "%s_shape", out_args[k]);
            size_t idx;
            const gir_json *pe = find_arg(op->params, key, &idx);
            const gir_json *sv = pe ? jget(pe, "value") : NULL;
            snprintf(key, sizeof key, "%s_dtype", out_args[k]);
            const gir_json *pd = find_arg(op->params, key, &idx);
            const char *dn = pd ? jstr(jget(pd, "value")) : NULL;
            if (!sv || sv->type != GIR_JSON_ARRAY || !dn) {
                st = rfail(r, te, GIR_E_SCHEMA, "tensorrt output `%s` needs params %s_shape (numbers) and %s_dtype "
                           "(a dtype name)", out_args[k], out_args[k], out_args[k]);
                break;
            }
            int64_t dims[GIR_MAX_RANK];
            if (sv->len > GIR_MAX_RANK) {
                st = rfail(r, sv, GIR_E_SHAPE, "%s_shape has more than 8 dimensions", out_args[k]);
                break;
            }
            for (size_t j = 0; j < sv->len && !st; j++) {
                double d;
                st = num(r, &sv->u.items[j], key, &d);
                dims[j] = ln_int_slot(d);
            }
            if (!st)
                st = make_shape(r, sv, dims, sv->len, &s);
            dt = ln_dtype_from_name(dn);
            if (!st && dt == GIR_DT_UNKNOWN)
                st = rfail(r, jget(pd, "value"), GIR_E_DTYPE, "%s is not a TensorLight dtype", dn);
        } else if (n_in >= 1) {
            /* ldmr, svmr, bn2scale_wts_cpu, dot_product_cuda */
            gir_value *x = val(r, ins[0]);
            dt = x->dtype;
            s = x->shape;
            if (strcmp(op->optype, "ldmr") == 0 || strcmp(op->optype, "ldmr_dpu") == 0) {
                if (s.rank != 2) {
                    st = rfail(r, te, GIR_E_SHAPE, "ldmr's `src` should be 2-D");
                    break;
                }
                s.dims[1] = (s.dims[1] + 7) / 8 * 8;
            } else if (strcmp(op->optype, "svmr") == 0 || strcmp(op->optype, "svmr_dpu") == 0) {
                if (s.rank != 2 || s.dims[1] % 8 != 0) {
                    st = rfail(r, te, GIR_E_SHAPE, "svmr's `src` should be 2-D with dims[1] a multiple of 8");
                    break;
                }
            } else if (strncmp(op->optype, "dot_product", 11) == 0) {
                s.rank = 1;
                s.dims[0] = 1;
            }
        }
        if (!st)
            st = new_output(r, n, k, tname, dt, &s);
    }
    if (!st && gir_attrs_set_strings(r->g, &n->meta, "lightnet.ins", in_args, n_in, r->err))
        st = gir_nomem(r->err);
    if (!st && gir_attrs_set_strings(r->g, &n->meta, "lightnet.outs", out_args, n_out, r->err))
        st = gir_nomem(r->err);
    if (!st && strcmp(op->optype, "tensorrt") != 0)
        st = gir_graph_note(r->g, r->err, "op %s: %s is kept opaque (no canonical operator)", op->name, op->optype);
out:
    free(ins);
    free(in_args);
    free(out_args);
    return st;
}

/* Argument roles: which inputs hold parameters (so a from_file create read
 * only through them is a weight, not a graph input). */
static bool is_param_arg(const char *optype, const char *arg)
{
    static const struct {
        const char *op, *arg;
    } p[] = {
        { "conv2d", "weight" },      { "conv2d", "bias" },        { "deconv2d", "weight" },
        { "deconv2d", "bias" },      { "batchnorm", "scale" },    { "batchnorm", "offset" },
        { "batchnorm", "mean" },     { "batchnorm", "var" },      { "transform_bboxSQD", "src_anchor" },
        { "detect_yolov3", "anchors" }, { "rearange", "src" },
    };
    for (size_t i = 0; i < sizeof p / sizeof p[0]; i++)
        if (strcmp(p[i].op, optype) == 0 && strcmp(p[i].arg, arg) == 0)
            return true;
    return false;
}

static gir_status check_op(rd *r, size_t i)
{
    r->cur = i;
    const ln_opref *op = &r->ops[i];
    if (!op->schema)
        return op_opaque(r, op);
    const ln_op_schema *s = op->schema;
    opargs a;
    memset(&a, 0, sizeof a);
    a.op = op;
    gir_status st = bind_args(r, s, &a);
    const char *t = s->optype;
    gir_node *n = NULL;
    if (st)
        goto out;
    for (size_t k = 0; k < a.n_in; k++)
        if (!is_param_arg(t, a.in_arg[k]))
            r->t[a.in[k]].data_use = true;
    if (!strcmp(t, "create"))
        st = op_create(r, &a, CR_CREATE);
    else if (!strcmp(t, "zeros"))
        st = op_create(r, &a, CR_ZEROS);
    else if (!strcmp(t, "arange"))
        st = op_create(r, &a, CR_ARANGE);
    else if (!strcmp(t, "slice"))
        st = op_slice(r, &a, &n);
    else if (!strcmp(t, "print") || !strcmp(t, "fprint"))
        st = op_print(r, &a, t[0] == 'f');
    else if (!strcmp(t, "conv2d") || !strcmp(t, "deconv2d") || !strcmp(t, "maxpool2d") || !strcmp(t, "avgpool2d"))
        st = op_window(r, &a, t);
    else if (!strcmp(t, "relu"))
        st = op_unary(r, &a, GIR_OP_Relu, &n);
    else if (!strcmp(t, "sigmoid"))
        st = op_unary(r, &a, GIR_OP_Sigmoid, &n);
    else if (!strcmp(t, "forward")) {
        st = op_unary(r, &a, GIR_OP_Identity, &n);
        if (!st)
            r->t[n->out[0]].root = r->t[a.in[0]].root;
    } else if (!strcmp(t, "lrelu")) {
        st = op_unary(r, &a, GIR_OP_LeakyRelu, &n);
        if (!st)
            st = op_float_param(r, &a, n, "alpha", "lightnet.negslope");
    } else if (!strcmp(t, "softmax")) {
        int64_t axis;
        gir_value *x = val(r, a.in[0]);
        st = op_axis(r, &a, 0, x->shape.rank, &axis);
        if (!st)
            st = op_unary(r, &a, GIR_OP_Softmax, &n);
        if (!st && gir_attrs_set_int(r->g, &n->attrs, "axis", axis, r->err))
            st = gir_nomem(r->err);
    } else if (!strcmp(t, "batchnorm")) {
        st = need_rank(r, &a, 0, 4);
        gir_value *x = val(r, a.in[0]);
        for (size_t k = 1; k < 5 && !st; k++) {
            st = need_rank(r, &a, k, 1);
            if (!st)
                st = need_same(r, &a, k, 0, false);
            if (!st && val(r, a.in[k])->shape.dims[0] != x->shape.dims[1]) {
                setptr(r, "/ops/%zu/tensors_in", r->cur);
                st = rfail(r, a.in_j[k], GIR_E_SHAPE, "`%s` has %lld elements but `src` has %lld channels", a.in_arg[k],
                           (long long)val(r, a.in[k])->shape.dims[0], (long long)x->shape.dims[1]);
            }
        }
        if (!st)
            st = op_unary(r, &a, GIR_OP_BatchNormalization, &n);
        if (!st) {
            gir_status st2 = gir_node_resize_inputs(r->g, n, 5, r->err);
            if (st2)
                st = st2;
            else
                for (size_t k = 0; k < 5; k++)
                    n->in[k] = a.in[k];
        }
        if (!st)
            st = op_float_param(r, &a, n, "epsilon", "lightnet.epsilon");
    } else if (!strcmp(t, "elew"))
        st = op_elew(r, &a);
    else if (!strcmp(t, "reshape"))
        st = op_reshape(r, &a);
    else if (!strcmp(t, "transpose"))
        st = op_transpose(r, &a);
    else if (!strcmp(t, "concat"))
        st = op_concat(r, &a);
    else if (!strcmp(t, "upsample"))
        st = op_upsample(r, &a);
    else if (!strcmp(t, "resize"))
        st = op_resize(r, &a);
    else if (!strcmp(t, "maxreduce"))
        st = op_maxreduce(r, &a, false);
    else if (!strcmp(t, "maxreduce_arg"))
        st = op_maxreduce(r, &a, true);
    else if (!strcmp(t, "sort1d"))
        st = op_sort(r, &a, false);
    else if (!strcmp(t, "sort1d_by_key"))
        st = op_sort(r, &a, true);
    else if (!strcmp(t, "pick1d"))
        st = op_pick1d(r, &a);
    else if (!strcmp(t, "rearange"))
        st = op_rearange(r, &a);
    else if (!strcmp(t, "transform_bboxSQD"))
        st = op_bbox(r, &a);
    else if (!strcmp(t, "detect_yolov3"))
        st = op_yolo(r, &a);
    else if (!strcmp(t, "submean"))
        st = op_submean(r, &a);
    else if (!strcmp(t, "dot_product"))
        st = op_dot(r, &a);
    else if (!strcmp(t, "gather"))
        st = op_gather(r, &a);
    else if (!strcmp(t, "scatter"))
        st = op_scatter(r, &a);
    else /* ldmr, svmr */
        st = op_opaque(r, op);
    if (st)
        goto out;
    /* In-place writers: everything sharing the overwritten memory that
     * existed before this op is stale from now on. */
    if (!strcmp(t, "sort1d") || !strcmp(t, "sort1d_by_key") || !strcmp(t, "rearange")) {
        for (size_t k = 0; k < a.n_in; k++) {
            int32_t root = r->t[a.in[k]].root;
            for (size_t v = 0; v < r->g->n_values; v++)
                if (r->t[v].root == root && r->t[v].op < (int32_t)i && r->t[v].stale_by < 0)
                    r->t[v].stale_by = (int32_t)i;
        }
    }
out:
    opargs_free(&a);
    return st;
}

/* ---- pass 3: creates, weights, inputs and outputs ---------------------------- */

static bool wts_lookup(void *ctx, const char *name, int64_t *n, gir_dtype *dt, const char **op)
{
    rd *r = ctx;
    int32_t v = gir_graph_value_index(r->g, name);
    if (v < 0 || val(r, v)->shape.rank < 0)
        return false;
    *op = r->t[v].op >= 0 ? r->ops[r->t[v].op].name : NULL;
    *n = numel(&val(r, v)->shape);
    *dt = val(r, v)->dtype;
    return true;
}

/* Uniform random fill standing in for LightNet's rand() seeded by the
 * clock: splitmix64 from (seed, tensor name), u in [0, 1], lo + u (hi - lo),
 * converted like tl_convert. */
typedef struct ran_ctx {
    double lo, hi;
    uint64_t state;
    gir_dtype dt;
} ran_ctx;

static uint64_t splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static gir_status ran_load(void *vctx, void *dst, uint64_t nbytes, gir_error *err)
{
    (void)err;
    ran_ctx *c = vctx;
    uint64_t st = c->state;
    size_t es = gir_dtype_size(c->dt);
    for (uint64_t i = 0; i < nbytes / es; i++) {
        double u = (double)(splitmix64(&st) >> 11) / 9007199254740991.0; /* [0, 1] */
        ln_convert_from_double((unsigned char *)dst + i * es, c->dt, c->lo + u * (c->hi - c->lo));
    }
    return GIR_OK;
}

static const gir_loader ran_loader = { ran_load, free };

bool ln_ran_info(const gir_tensor *t, double *lo, double *hi)
{
    if (!t || t->loader != &ran_loader)
        return false;
    const ran_ctx *c = t->loader_ctx;
    *lo = c->lo;
    *hi = c->hi;
    return true;
}

static uint64_t fnv(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

/* Keeps a create's `data` param that does not make the tensor's values
 * (from_file, ran) so it is written back as it was. */
static gir_status keep_data(rd *r, gir_value *gv, const gir_json *dv)
{
    double *d = malloc((dv->len + 1) * sizeof *d);
    if (!d)
        return gir_nomem(r->err);
    for (size_t j = 0; j < dv->len; j++)
        gir_json_get_double(&dv->u.items[j], &d[j]);
    gir_status st = gir_attrs_set_floats(r->g, &gv->meta, "lightnet.data", d, dv->len, r->err) ? gir_nomem(r->err) : GIR_OK;
    free(d);
    return st;
}

static gir_status settle_create(rd *r, int32_t v, const ln_wts *wts)
{
    gir_value *gv = val(r, v);
    tinfo *t = &r->t[v];
    const ln_opref *op = &r->ops[t->op];
    r->cur = (size_t)t->op;
    gir_tensor *tensor = NULL;
    gir_status st = GIR_OK;
    if (t->create == CR_CREATE && t->from_file) {
        /* `data` (and `ran`) do not count here; data is kept for writing back */
        size_t di;
        const gir_json *dv = jget(find_arg(op->params, "data", &di), "value");
        if (!(dv->len == 1 && dv->u.items[0].type == GIR_JSON_NUMBER && dv->u.items[0].len == 1 &&
              dv->u.items[0].u.num[0] == '0'))
            TRY(keep_data(r, gv, dv));
        const ln_wts_record *rec = ln_wts_find(wts, gv->name);
        if (rec) {
            st = ln_wts_tensor(wts, rec, &gv->shape, &tensor, r->err);
            if (st)
                return st;
            gv->kind = GIR_VALUE_WEIGHT;
        } else if (t->data_use) {
            gv->kind = GIR_VALUE_INPUT;
            TRY(gir_graph_add_input(r->g, v, r->err));
            return GIR_OK;
        } else {
            gv->kind = GIR_VALUE_WEIGHT; /* its data lives in a weight file not given */
            return GIR_OK;
        }
    } else if (t->create == CR_CREATE) {
        const ln_wts_record *rec = ln_wts_find(wts, gv->name);
        if (rec)
            TRY(gir_graph_note(r->g, r->err, "tensor %s: its weight-file record is loaded, then overwritten by op %s (from_file is "
                        "false)", gv->name, op->name));
        const gir_attr *ra = gir_attrs_find(&gv->meta, "lightnet.ran");
        double lo = ra->u.floats.v[0], hi = ra->u.floats.v[1];
        size_t idx;
        const gir_json *dv = jget(find_arg(op->params, "data", &idx), "value");
        if (!(lo == 0 && hi == 0)) {
            ran_ctx *c = malloc(sizeof *c);
            if (!c)
                return gir_nomem(r->err);
            c->lo = lo;
            c->hi = hi;
            c->dt = gv->dtype;
            c->state = r->seed ^ fnv(gv->name);
            TRY(gir_tensor_lazy(gv->dtype, &gv->shape, &ran_loader, c, &tensor, r->err));
            TRY(gir_graph_note(r->g, r->err, "tensor %s (op %s): uniform random values in [%g, %g] from seed %llu; LightNet draws "
                        "them from rand() seeded by the clock", gv->name, op->name, lo, hi,
                        (unsigned long long)r->seed));
            st = keep_data(r, gv, dv);
        } else {
            st = gir_tensor_new(gv->dtype, &gv->shape, &tensor, r->err);
            if (st)
                return st;
            size_t es = gir_dtype_size(gv->dtype);
            unsigned char *p = tensor->data;
            double d0 = 1;
            bool zero = dv->len == 1 && gir_json_get_double(&dv->u.items[0], &d0) && d0 == 0;
            for (size_t j = 0; !zero && j < dv->len; j++) {
                double d;
                gir_json_get_double(&dv->u.items[j], &d);
                ln_convert_from_double(p + j * es, gv->dtype, d);
            }
        }
        gv->kind = GIR_VALUE_CONST;
    } else {
        st = gir_tensor_new(gv->dtype, &gv->shape, &tensor, r->err);
        if (st)
            return st;
        if (t->create == CR_ARANGE) {
            const gir_attr *aa = gir_attrs_find(&gv->meta, "lightnet.arange");
            size_t es = gir_dtype_size(gv->dtype);
            for (int64_t i = 0; i < gv->shape.dims[0]; i++)
                ln_convert_from_double((unsigned char *)tensor->data + i * es, gv->dtype,
                                       aa->u.floats.v[0] + aa->u.floats.v[2] * (double)i);
        }
        gv->kind = GIR_VALUE_CONST;
    }
    if (!st) {
        gir_tensor_unref(gv->data);
        gv->data = tensor;
        tensor = NULL;
    }
    gir_tensor_unref(tensor);
    return st;
}

static gir_status finish(rd *r)
{
    /* weight file: --params, else STEM.wts beside the model if present */
    const char *wp = gir_options_get(r->opts, "params");
    char *auto_path = NULL;
    if (!wp) {
        auto_path = gir_path_with_ext(r->path, ".wts");
        if (!auto_path)
            return gir_nomem(r->err);
        if (gir_path_exists(auto_path))
            wp = auto_path;
    }
    ln_wts *wts = NULL;
    gir_status st = GIR_OK;
    int64_t max_bytes = 0;
    st = gir_options_int(r->opts, "max-bytes", 0, &max_bytes, r->err);
    if (!st && wp) {
        r->cur = r->n_ops; /* no op context for weight-file errors */
        st = ln_wts_scan(wp, wts_lookup, r, max_bytes > 0 ? (size_t)max_bytes : 0, &wts, r->err);
    }
    /* which weights file was read (graphconv info shows it) */
    if (!st && wts && gir_attrs_set_string(r->g, &r->g->meta, "source.params", wp, r->err))
        st = gir_nomem(r->err);
    if (!st && wts) {
        if (wts->n_skipped)
            st = gir_graph_note(r->g, r->err, "%s: %zu record%s name%s no tensor of the model and %s skipped like LightNet does "
                         "(first: %s)", wp, wts->n_skipped, wts->n_skipped == 1 ? "" : "s",
                         wts->n_skipped == 1 ? "s" : "", wts->n_skipped == 1 ? "is" : "are", wts->skipped[0]);
    }
    for (size_t v = 0; !st && v < r->g->n_values; v++)
        if (r->t[v].create)
            st = settle_create(r, (int32_t)v, wts);
    /* record order of the weight file, for writing it back alike */
    for (size_t k = 0; !st && wts && k < wts->n; k++) {
        int32_t v = gir_graph_value_index(r->g, wts->recs[k].name);
        if (v >= 0 && gir_attrs_set_int(r->g, &val(r, v)->meta, "lightnet.wts_index", (int64_t)k, r->err))
            st = gir_nomem(r->err);
    }
    ln_wts_free(wts);
    free(auto_path);
    if (st)
        return st;
    /* outputs: tensors written by an op and read by none, in order */
    bool *read = calloc(r->g->n_values + 1, 1);
    if (!read)
        return gir_nomem(r->err);
    for (size_t i = 0; i < r->g->n_nodes; i++)
        for (size_t k = 0; k < r->g->nodes[i]->n_in; k++)
            if (r->g->nodes[i]->in[k] >= 0)
                read[r->g->nodes[i]->in[k]] = true;
    for (size_t i = 0; !st && i < r->g->n_nodes; i++)
        for (size_t k = 0; !st && k < r->g->nodes[i]->n_out; k++) {
            int32_t v = r->g->nodes[i]->out[k];
            if (!read[v])
                st = gir_graph_add_output(r->g, v, r->err);
        }
    free(read);
    return st;
}

static gir_status check_mem_sizes(rd *r, const gir_json *root)
{
    const gir_json *h = jget(root, "mem_sizes_h"), *l = jget(root, "mem_sizes_l");
    if (!h && !l)
        return GIR_OK;
    setptr(r, "/mem_sizes_h");
    if (!h || !l || h->type != GIR_JSON_ARRAY || l->type != GIR_JSON_ARRAY)
        return rfail(r, h ? h : l, GIR_E_SCHEMA, "'mem_sizes_h' and 'mem_sizes_l' should both be arrays");
    if (h->len != l->len)
        return rfail(r, l, GIR_E_SCHEMA, "the length of 'mem_sizes_h' (%zu) is not equal to that of 'mem_sizes_l' (%zu)",
                     h->len, l->len);
    if (h->len < 2 || h->len > 4)
        return rfail(r, h, GIR_E_SCHEMA, "'mem_sizes_h' has %zu entries; LightNet builds have 2 to 4 memory types",
                     h->len);
    for (size_t i = 0; i < h->len; i++)
        if (h->u.items[i].type != GIR_JSON_NUMBER || l->u.items[i].type != GIR_JSON_NUMBER)
            return rfail(r, &h->u.items[i], GIR_E_SCHEMA, "the %zuth element of 'mem_sizes_h' or 'mem_sizes_l' is not "
                         "a number", i);
    return gir_graph_note(r->g, r->err, "the memory plan (mem_sizes_h/_l, tensor offsets) is ignored; the IR reads as plain IR");
}

gir_status ln_read(const char *path, const gir_options *opts, gir_graph **out, gir_error *err)
{
    *out = NULL;
    rd r;
    memset(&r, 0, sizeof r);
    r.path = path;
    r.opts = opts;
    r.err = err;
    r.cur = (size_t)-1;
    int64_t seed = LN_DEFAULT_SEED, max_bytes = 0;
    gir_status st = gir_options_int(opts, "seed", LN_DEFAULT_SEED, &seed, err);
    if (!st)
        st = gir_options_int(opts, "max-bytes", 0, &max_bytes, err);
    if (st)
        return st;
    r.seed = (uint64_t)seed;
    char *text;
    size_t len;
    st = gir_read_file(path, max_bytes > 0 ? (size_t)max_bytes : 0, &text, &len, err);
    if (st)
        return st;
    if (len == 0) {
        free(text);
        gir_fail(err, GIR_E_SYNTAX, "the file is empty (LightNet aborts on it)");
        gir_err_file(err, path);
        return GIR_E_SYNTAX;
    }
    if (len >= 3 && (unsigned char)text[0] == 0xef && (unsigned char)text[1] == 0xbb && (unsigned char)text[2] == 0xbf)
        text[0] = text[1] = text[2] = ' ';
    size_t bad;
    if (!ln_strip_comments(text, len, &bad)) {
        unsigned line = 1, col = 1;
        for (size_t i = 0; i < bad; i++) {
            if (text[i] == '\n') {
                line++;
                col = 1;
            } else {
                col++;
            }
        }
        free(text);
        gir_fail(err, GIR_E_SYNTAX, "unterminated comment");
        gir_err_loc(err, "line %u:%u", line, col);
        gir_err_file(err, path);
        return GIR_E_SYNTAX;
    }
    gir_json_options jo = { .max_depth = (unsigned)(gir_limit(GIR_LIM_DEPTH) < LN_MAX_DEPTH ? gir_limit(GIR_LIM_DEPTH)
                                                                                          : LN_MAX_DEPTH), .allow_duplicate_keys = true, .allow_comments = false,
                            .no_utf8_check = true, .allow_trailing_garbage = true };
    st = gir_json_parse(text, len, &jo, &r.doc, err);
    if (st) {
        free(text);
        gir_err_file(err, path);
        return st;
    }
    st = gir_graph_new(&r.g, err);
    if (st)
        goto out;
    const gir_json *root = gir_json_root(r.doc);
    st = check_mem_sizes(&r, root);
    if (st)
        goto out;
    const gir_json *ops = jget(root, "ops");
    setptr(&r, "/ops");
    if (!ops) {
        st = rfail(&r, root, GIR_E_SCHEMA, "the top level should be an object with an \"ops\" item");
        goto out;
    }
    if (ops->type != GIR_JSON_ARRAY) {
        st = rfail(&r, ops, GIR_E_SCHEMA, "item \"ops\" has to be an array, not %s", gir_json_type_name(ops->type));
        goto out;
    }
    r.n_ops = ops->len;
    r.ops = calloc(ops->len + 1, sizeof *r.ops);
    if (!r.ops) {
        st = gir_nomem(err);
        goto out;
    }
    st = parse_ops(&r, ops);
    for (size_t i = 0; !st && i < r.n_ops; i++)
        st = check_op(&r, i);
    if (!st)
        st = finish(&r);
    if (!st)
        st = gir_graph_finish(r.g, err);
    if (!st && gir_attrs_set_string(r.g, &r.g->meta, "source.format", "lightnet", err))
        st = gir_nomem(err);
out:
    if (st) {
        gir_err_file(err, path);
        gir_graph_free(r.g);
        r.g = NULL;
    }
    *out = r.g;
    gir_json_doc_free(r.doc);
    free(text);
    free(r.ops);
    free(r.t);
    free(r.opnames);
    free(r.tnames);
    return st;
}
