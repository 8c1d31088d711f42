/* Reading LightNet JSON IR the way LightNet itself does: the comment
 * pre-pass, cJSON's leniency (case-insensitive keys, first duplicate wins,
 * trailing text ignored), the parse checks of ln_json.c for every op, then
 * each op's pre_run checks in list order (exact argument and param counts,
 * tensors written before they are read and written once), with the output
 * shapes LightNet infers. */
#include "read.h"

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

static int cmp_named(const void *a, const void *b)
{
    const named *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    return c ? c : (x->idx > y->idx) - (x->idx < y->idx);
}

/* ---- small helpers ----------------------------------------------------- */

/* cJSON_GetObjectItem: first member whose key matches case-insensitively. */
const gir_json *lnr_jget(const gir_json *obj, const char *key)
{
    if (!obj || obj->type != GIR_JSON_OBJECT)
        return NULL;
    for (size_t i = 0; i < obj->len; i++)
        if (strcasecmp(obj->u.members[i].key, key) == 0)
            return &obj->u.members[i].value;
    return NULL;
}

const char *lnr_jstr(const gir_json *v)
{
    return v && v->type == GIR_JSON_STRING ? v->u.str : NULL;
}

/* Fails with the message, the location r->ptr (JSON pointer + line:col of
 * `at`) and, while checking an op, its name. */
gir_status lnr_rfail(rd *r, const gir_json *at, gir_status code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    gir_status st = gir_vfail(r->err, code, fmt, ap);
    va_end(ap);
    gir_json_err_at(r->err, r->doc, at, "%s", r->ptr);
    if (r->cur < r->n_ops && r->ops[r->cur].name)
        gir_err_node(r->err, r->ops[r->cur].name);
    return st;
}

const char *lnr_setptr(rd *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->ptr, sizeof r->ptr, fmt, ap);
    va_end(ap);
    return r->ptr;
}

/* The LightNet param type of a JSON value (ln_json.c's rules). */
gir_status lnr_classify(rd *r, const gir_json *v, const char *pname, ln_ptype *out)
{
    switch (v->type) {
    case GIR_JSON_NUMBER: *out = LN_PT_NUMBER; return GIR_OK;
    case GIR_JSON_STRING: *out = LN_PT_STRING; return GIR_OK;
    case GIR_JSON_BOOL: *out = LN_PT_BOOL; return GIR_OK;
    case GIR_JSON_NULL: *out = LN_PT_NULL; return GIR_OK;
    case GIR_JSON_OBJECT:
        return lnr_rfail(r, v, GIR_E_SCHEMA, "param `%s`'s value is an object; LightNet takes numbers, strings, bools "
                     "or arrays of one of them", pname);
    case GIR_JSON_ARRAY: break;
    }
    if (v->len == 0)
        return lnr_rfail(r, v, GIR_E_SCHEMA, "param `%s`'s value is an empty array", pname);
    gir_json_type t0 = v->u.items[0].type;
    for (size_t i = 0; i < v->len; i++) {
        gir_json_type t = v->u.items[i].type;
        if (t != GIR_JSON_NUMBER && t != GIR_JSON_STRING && t != GIR_JSON_BOOL)
            return lnr_rfail(r, &v->u.items[i], GIR_E_SCHEMA,
                         "param `%s`'s value holds %s at element index %zu; arrays may hold only numbers, strings "
                         "or bools", pname, gir_json_type_name(t), i);
        if (t != t0)
            return lnr_rfail(r, &v->u.items[i], GIR_E_SCHEMA,
                         "param `%s`'s value mixes JSON types: element index %zu is %s, element 0 %s", pname, i,
                         gir_json_type_name(t), gir_json_type_name(t0));
    }
    *out = t0 == GIR_JSON_NUMBER ? LN_PT_NUMBERS : t0 == GIR_JSON_STRING ? LN_PT_STRINGS : LN_PT_BOOLS;
    return GIR_OK;
}

/* A JSON number as LightNet keeps it: a double (cJSON's strtod). */
gir_status lnr_num(rd *r, const gir_json *v, const char *what, double *out)
{
    if (!gir_json_get_double(v, out))
        return lnr_rfail(r, v, GIR_E_ATTRIBUTE, "%s is not a finite number", what);
    return GIR_OK;
}

/* ---- pass 1: the parse checks of ln_json.c ----------------------------- */

static gir_status check_tensor_list(rd *r, size_t i, const char *key, const gir_json *list, const char *which)
{
    const char *opn = r->ops[i].name;
    for (size_t k = 0; k < list->len; k++) {
        const gir_json *te = &list->u.items[k];
        lnr_setptr(r, "/ops/%zu/%s/%zu", i, key, k);
        const gir_json *an = lnr_jget(te, "arg_name");
        if (!an)
            return lnr_rfail(r, te, GIR_E_SCHEMA, "one of op %s's %s tensors has no \"arg_name\" key (tensor index %zu)",
                         opn, which, k);
        if (!lnr_jstr(an))
            return lnr_rfail(r, an, GIR_E_SCHEMA, "the \"arg_name\" of op %s's %s tensor %zu is not a string", opn,
                         which, k);
        const gir_json *nm = lnr_jget(te, "name");
        if (!nm)
            return lnr_rfail(r, te, GIR_E_SCHEMA, "op %s's tensor `%s` has no \"name\" key", opn, an->u.str);
        if (!lnr_jstr(nm))
            return lnr_rfail(r, nm, GIR_E_SCHEMA, "the \"name\" of op %s's tensor `%s` is not a string", opn,
                         an->u.str);
        const gir_json *oh = lnr_jget(te, "offset_h"), *ol = lnr_jget(te, "offset_l");
        if (oh && ol) {
            double d;
            if (oh->type != GIR_JSON_NUMBER || ol->type != GIR_JSON_NUMBER)
                return lnr_rfail(r, oh->type != GIR_JSON_NUMBER ? oh : ol, GIR_E_SCHEMA,
                             "op %s's tensor `%s`: 'offset_h' and 'offset_l' must both be numbers", opn, an->u.str);
            TRY(lnr_num(r, oh, "offset_h", &d));
            TRY(lnr_num(r, ol, "offset_l", &d));
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
        lnr_setptr(r, "/ops/%zu", i);
        const gir_json *nm = lnr_jget(o, "name");
        if (!nm)
            return lnr_rfail(r, o, GIR_E_SCHEMA, "ops[%zu] has no \"name\" key%s", i,
                         o->type == GIR_JSON_OBJECT ? "" : " (it is not an object)");
        if (!lnr_jstr(nm))
            return lnr_rfail(r, nm, GIR_E_SCHEMA, "ops[%zu]'s \"name\" is not a string", i);
        op->name = nm->u.str;
        r->cur = i;
        static const char *const lists[] = { "optype", "tensors_in", "tensors_out", "params" };
        const gir_json *v[4];
        for (int k = 0; k < 4; k++) {
            v[k] = lnr_jget(o, lists[k]);
            if (!v[k])
                return lnr_rfail(r, o, GIR_E_SCHEMA, "op %s has no \"%s\" key", op->name, lists[k]);
            lnr_setptr(r, "/ops/%zu/%s", i, lists[k]);
            if (k == 0 && !lnr_jstr(v[k]))
                return lnr_rfail(r, v[k], GIR_E_SCHEMA, "op %s's \"optype\" is not a string", op->name);
            if (k > 0 && v[k]->type != GIR_JSON_ARRAY)
                return lnr_rfail(r, v[k], GIR_E_SCHEMA, "op %s's \"%s\" is not an array", op->name, lists[k]);
        }
        op->optype = v[0]->u.str;
        op->tin = v[1];
        op->tout = v[2];
        op->params = v[3];
        TRY(check_tensor_list(r, i, "tensors_in", op->tin, "input"));
        TRY(check_tensor_list(r, i, "tensors_out", op->tout, "output"));
        for (size_t k = 0; k < op->params->len; k++) {
            const gir_json *p = &op->params->u.items[k];
            lnr_setptr(r, "/ops/%zu/params/%zu", i, k);
            const gir_json *an = lnr_jget(p, "arg_name");
            if (!an)
                return lnr_rfail(r, p, GIR_E_SCHEMA, "one of op %s's params has no \"arg_name\" key (param index %zu)",
                             op->name, k);
            if (!lnr_jstr(an))
                return lnr_rfail(r, an, GIR_E_SCHEMA, "the \"arg_name\" of op %s's param %zu is not a string", op->name,
                             k);
            const gir_json *lnr_val = lnr_jget(p, "value");
            if (!lnr_val)
                return lnr_rfail(r, p, GIR_E_SCHEMA, "op %s's param `%s` has no \"value\" key", op->name, an->u.str);
            lnr_setptr(r, "/ops/%zu/params/%zu/value", i, k);
            ln_ptype t;
            TRY(lnr_classify(r, lnr_val, an->u.str, &t));
        }
        lnr_setptr(r, "/ops/%zu/optype", i);
        op->schema = ln_schema_resolve(op->optype, &op->variant);
        if (!op->schema && strcmp(op->optype, "tensorrt") != 0 && strcmp(op->optype, "bn2scale_wts_cpu") != 0 &&
            strcmp(op->optype, "dot_product_cuda") != 0)
            return lnr_rfail(r, v[0], GIR_E_SCHEMA, "op %s's optype %s is not registered in LightNet", op->name,
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
            r->tnames[r->n_tnames++] = (named){ lnr_jstr(lnr_jget(&r->ops[i].tout->u.items[k], "name")), i };
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
        lnr_setptr(r, "/ops/%zu/name", i);
        return lnr_rfail(r, lnr_jget(r->ops[i].obj, "name"), GIR_E_DUPLICATE,
                     "two ops are named '%s' (ops %zu and %zu; LightNet aborts on this)", r->ops[i].name, j, i);
    }
    return GIR_OK;
}

/* ---- pass 2: pre_run checks and the graph --------------------------------- */

gir_status lnr_grow_t(rd *r)
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

gir_value *lnr_val(rd *r, int32_t v)
{
    return r->g->values[v];
}

/* The first entry of list whose arg_name equals arg (LightNet looks args
 * up by name with strcmp; keys were matched case-insensitively). */
const gir_json *lnr_find_arg(const gir_json *list, const char *arg, size_t *idx)
{
    for (size_t k = 0; k < list->len; k++) {
        const char *a = lnr_jstr(lnr_jget(&list->u.items[k], "arg_name"));
        if (a && strcmp(a, arg) == 0) {
            *idx = k;
            return &list->u.items[k];
        }
    }
    return NULL;
}

/* ---- values and nodes ------------------------------------------------------ */

gir_status lnr_new_output(rd *r, gir_node *n, size_t k, const char *name, gir_dtype dt, const gir_shape *s)
{
    gir_status st = gir_node_make_output(r->g, n, k, name, r->err);
    if (st)
        return st;
    TRY(lnr_grow_t(r));
    int32_t v = n->out[k];
    gir_value *gv = lnr_val(r, v);
    gv->dtype = dt;
    gv->shape = *s;
    r->t[v].op = (int32_t)r->cur;
    r->t[v].root = v;
    return GIR_OK;
}

/* ---- shape checks ----------------------------------------------------------- */

int64_t lnr_numel(const gir_shape *s)
{
    int64_t n = 1;
    for (int i = 0; i < s->rank; i++)
        n *= s->dims[i];
    return n;
}

/* A shape from dims (each >= 1), at most 8 axes and 2^31-1 elements
 * (TensorLight counts elements in an int). */
gir_status lnr_make_shape(rd *r, const gir_json *at, const int64_t *dims, size_t n, gir_shape *s)
{
    if (n < 1 || n > GIR_MAX_RANK)
        return lnr_rfail(r, at, GIR_E_SHAPE, "a tensor of %zu dimensions; TensorLight allows 1 to 8", n);
    uint64_t total = 1;
    s->rank = (int)n;
    for (size_t i = 0; i < n; i++) {
        if (dims[i] < 1)
            return lnr_rfail(r, at, GIR_E_SHAPE, "dimension %zu is %lld; dimensions must be > 0", i, (long long)dims[i]);
        if (!gir_mul_u64(total, (uint64_t)dims[i], &total) || total > INT32_MAX)
            return lnr_rfail(r, at, GIR_E_LIMIT, "a tensor of more than 2^31-1 elements (TensorLight counts them in an int)");
        s->dims[i] = dims[i];
    }
    return GIR_OK;
}

/* ---- autopad ---------------------------------------------------------------- */

/* ---- the operators ------------------------------------------------------------ */

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
        const char *an = lnr_jstr(lnr_jget(pe, "arg_name"));
        const gir_json *v = lnr_jget(pe, "value");
        lnr_setptr(r, "/ops/%zu/params/%zu/value", r->cur, k);
        ln_ptype t;
        st = lnr_classify(r, v, an, &t);
        if (st)
            break;
        switch (t) {
        case LN_PT_NUMBER: {
            double d;
            st = lnr_num(r, v, an, &d);
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
            st = lnr_rfail(r, v, GIR_E_ATTRIBUTE, "param `%s` is null, which every LightNet op rejects", an);
            break;
        case LN_PT_NUMBERS: {
            double *d = malloc(v->len * sizeof *d);
            if (!d) {
                st = gir_nomem(r->err);
                break;
            }
            for (size_t j = 0; j < v->len && !st; j++)
                st = lnr_num(r, &v->u.items[j], an, &d[j]);
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
gir_status lnr_op_opaque(rd *r, const ln_opref *op)
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
        in_args[k] = lnr_jstr(lnr_jget(te, "arg_name"));
        const char *tname = lnr_jstr(lnr_jget(te, "name"));
        lnr_setptr(r, "/ops/%zu/tensors_in/%zu/name", r->cur, k);
        ins[k] = gir_graph_value_index(r->g, tname);
        if (ins[k] < 0)
            st = lnr_rfail(r, lnr_jget(te, "name"), GIR_E_REFERENCE, "input `%s` reads tensor '%s', which no earlier op writes",
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
        out_args[k] = lnr_jstr(lnr_jget(te, "arg_name"));
        const char *tname = lnr_jstr(lnr_jget(te, "name"));
        gir_dtype dt = GIR_DT_UNKNOWN;
        gir_shape s = { -1, { 0 } };
        lnr_setptr(r, "/ops/%zu/tensors_out/%zu", r->cur, k);
        if (strcmp(op->optype, "tensorrt") == 0) {
            char key[96];
            snprintf(key, sizeof key, "%s_shape", out_args[k]);
            size_t idx;
            const gir_json *pe = lnr_find_arg(op->params, key, &idx);
            const gir_json *sv = pe ? lnr_jget(pe, "value") : NULL;
            snprintf(key, sizeof key, "%s_dtype", out_args[k]);
            const gir_json *pd = lnr_find_arg(op->params, key, &idx);
            const char *dn = pd ? lnr_jstr(lnr_jget(pd, "value")) : NULL;
            if (!sv || sv->type != GIR_JSON_ARRAY || !dn) {
                st = lnr_rfail(r, te, GIR_E_SCHEMA, "tensorrt output `%s` needs params %s_shape (numbers) and %s_dtype "
                           "(a dtype name)", out_args[k], out_args[k], out_args[k]);
                break;
            }
            int64_t dims[GIR_MAX_RANK];
            if (sv->len > GIR_MAX_RANK) {
                st = lnr_rfail(r, sv, GIR_E_SHAPE, "%s_shape has more than 8 dimensions", out_args[k]);
                break;
            }
            for (size_t j = 0; j < sv->len && !st; j++) {
                double d;
                st = lnr_num(r, &sv->u.items[j], key, &d);
                dims[j] = ln_int_slot(d);
            }
            if (!st)
                st = lnr_make_shape(r, sv, dims, sv->len, &s);
            dt = ln_dtype_from_name(dn);
            if (!st && dt == GIR_DT_UNKNOWN)
                st = lnr_rfail(r, lnr_jget(pd, "value"), GIR_E_DTYPE, "%s is not a TensorLight dtype", dn);
        } else if (n_in >= 1) {
            /* ldmr, svmr, bn2scale_wts_cpu, dot_product_cuda */
            gir_value *x = lnr_val(r, ins[0]);
            dt = x->dtype;
            s = x->shape;
            if (strcmp(op->optype, "ldmr") == 0 || strcmp(op->optype, "ldmr_dpu") == 0) {
                if (s.rank != 2) {
                    st = lnr_rfail(r, te, GIR_E_SHAPE, "ldmr's `src` should be 2-D");
                    break;
                }
                s.dims[1] = (s.dims[1] + 7) / 8 * 8;
            } else if (strcmp(op->optype, "svmr") == 0 || strcmp(op->optype, "svmr_dpu") == 0) {
                if (s.rank != 2 || s.dims[1] % 8 != 0) {
                    st = lnr_rfail(r, te, GIR_E_SHAPE, "svmr's `src` should be 2-D with dims[1] a multiple of 8");
                    break;
                }
            } else if (strncmp(op->optype, "dot_product", 11) == 0) {
                s.rank = 1;
                s.dims[0] = 1;
            }
        }
        if (!st)
            st = lnr_new_output(r, n, k, tname, dt, &s);
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
bool lnr_is_param_arg(const char *optype, const char *arg)
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

/* ---- pass 3: creates, weights, inputs and outputs ---------------------------- */

static bool wts_lookup(void *ctx, const char *name, int64_t *n, gir_dtype *dt, const char **op)
{
    rd *r = ctx;
    int32_t v = gir_graph_value_index(r->g, name);
    if (v < 0 || lnr_val(r, v)->shape.rank < 0)
        return false;
    *op = r->t[v].op >= 0 ? r->ops[r->t[v].op].name : NULL;
    *n = lnr_numel(&lnr_val(r, v)->shape);
    *dt = lnr_val(r, v)->dtype;
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
    gir_value *gv = lnr_val(r, v);
    tinfo *t = &r->t[v];
    const ln_opref *op = &r->ops[t->op];
    r->cur = (size_t)t->op;
    gir_tensor *tensor = NULL;
    gir_status st = GIR_OK;
    if (t->create == CR_CREATE && t->from_file) {
        /* `data` (and `ran`) do not count here; data is kept for writing back */
        size_t di;
        const gir_json *dv = lnr_jget(lnr_find_arg(op->params, "data", &di), "value");
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
        const gir_json *dv = lnr_jget(lnr_find_arg(op->params, "data", &idx), "value");
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
        if (v >= 0 && gir_attrs_set_int(r->g, &lnr_val(r, v)->meta, "lightnet.wts_index", (int64_t)k, r->err))
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
    const gir_json *h = lnr_jget(root, "mem_sizes_h"), *l = lnr_jget(root, "mem_sizes_l");
    if (!h && !l)
        return GIR_OK;
    lnr_setptr(r, "/mem_sizes_h");
    if (!h || !l || h->type != GIR_JSON_ARRAY || l->type != GIR_JSON_ARRAY)
        return lnr_rfail(r, h ? h : l, GIR_E_SCHEMA, "'mem_sizes_h' and 'mem_sizes_l' should both be arrays");
    if (h->len != l->len)
        return lnr_rfail(r, l, GIR_E_SCHEMA, "the length of 'mem_sizes_h' (%zu) is not equal to that of 'mem_sizes_l' (%zu)",
                     h->len, l->len);
    if (h->len < 2 || h->len > 4)
        return lnr_rfail(r, h, GIR_E_SCHEMA, "'mem_sizes_h' has %zu entries; LightNet builds have 2 to 4 memory types",
                     h->len);
    for (size_t i = 0; i < h->len; i++)
        if (h->u.items[i].type != GIR_JSON_NUMBER || l->u.items[i].type != GIR_JSON_NUMBER)
            return lnr_rfail(r, &h->u.items[i], GIR_E_SCHEMA, "the %zuth element of 'mem_sizes_h' or 'mem_sizes_l' is not "
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
    const gir_json *ops = lnr_jget(root, "ops");
    lnr_setptr(&r, "/ops");
    if (!ops) {
        st = lnr_rfail(&r, root, GIR_E_SCHEMA, "the top level should be an object with an \"ops\" item");
        goto out;
    }
    if (ops->type != GIR_JSON_ARRAY) {
        st = lnr_rfail(&r, ops, GIR_E_SCHEMA, "item \"ops\" has to be an array, not %s", gir_json_type_name(ops->type));
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
        st = lnr_check_op(&r, i);
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
