/* LightNet operators -> canonical nodes (reading): each op's pre_run checks
 * as LightNet makes them (argument binding, params and their types, shapes)
 * and the canonical node with the output shapes LightNet infers; what has
 * no canonical counterpart is kept verbatim (read.c: lnr_op_opaque). */
#include "read.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

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

static char *shape_s(const gir_shape *s, char buf[128])
{
    return gir_shape_str(s, buf, 128);
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
    const char *tname = lnr_jstr(lnr_jget(te, "name"));
    lnr_setptr(r, "/ops/%zu/tensors_in/%zu/name", i, idx);
    int32_t v = gir_graph_value_index(r->g, tname);
    if (v < 0)
        return lnr_rfail(r, lnr_jget(te, "name"), GIR_E_REFERENCE,
                     "input `%s` reads tensor '%s', which no earlier op writes (ops must be in execution order)",
                     a->in_arg[k], tname);
    if (r->t[v].stale_by >= 0)
        return lnr_rfail(r, lnr_jget(te, "name"), GIR_E_UNSUPPORTED,
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
        lnr_setptr(r, "/ops/%zu/tensors_in", i);
        if (a->n_in == 0)
            return lnr_rfail(r, op->tin, GIR_E_SCHEMA, "%s needs at least one input tensor (src1, src2, ...)",
                         op->optype);
    } else {
        a->n_in = ln_schema_n_ins(s);
        lnr_setptr(r, "/ops/%zu/tensors_in", i);
        if (op->tin->len != a->n_in)
            return lnr_rfail(r, op->tin, GIR_E_SCHEMA, "%s needs %zu input tensor%s (%s), but gets %zu", op->optype,
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
            a->in_arg[k] = lnr_jstr(lnr_jget(te, "arg_name"));
            lnr_setptr(r, "/ops/%zu/tensors_in/%zu/arg_name", i, k);
            if (strncmp(a->in_arg[k], "src", 3) != 0)
                return lnr_rfail(r, lnr_jget(te, "arg_name"), GIR_E_SCHEMA,
                             "%s's input arg_names must start with \"src\", not \"%s\"", op->optype, a->in_arg[k]);
            TRY(bind_input(r, a, k, te, k));
        }
    } else {
        for (size_t k = 0; k < a->n_in; k++) {
            size_t idx;
            a->in_arg[k] = s->ins[k];
            const gir_json *te = lnr_find_arg(op->tin, s->ins[k], &idx);
            lnr_setptr(r, "/ops/%zu/tensors_in", i);
            if (!te)
                return lnr_rfail(r, op->tin, GIR_E_SCHEMA, "%s needs a `%s` input tensor", op->optype, s->ins[k]);
            TRY(bind_input(r, a, k, te, idx));
        }
    }
    /* outputs */
    lnr_setptr(r, "/ops/%zu/tensors_out", i);
    if (!(s->flags & LN_OP_VARIADIC_OUT) && op->tout->len != a->n_out)
        return lnr_rfail(r, op->tout, GIR_E_SCHEMA, "%s needs %zu output tensor%s%s%s%s, but gets %zu", op->optype,
                     a->n_out, a->n_out == 1 ? "" : "s", a->n_out ? " (" : "",
                     names_list(s->outs, list, sizeof list), a->n_out ? ")" : "", op->tout->len);
    for (size_t k = 0; k < a->n_out; k++) {
        size_t idx = k;
        const gir_json *te;
        if (s->flags & LN_OP_VARIADIC_OUT) {
            te = &op->tout->u.items[k];
            a->out_arg[k] = lnr_jstr(lnr_jget(te, "arg_name"));
            lnr_setptr(r, "/ops/%zu/tensors_out/%zu/arg_name", i, k);
            if (strncmp(a->out_arg[k], "dst", 3) != 0)
                return lnr_rfail(r, lnr_jget(te, "arg_name"), GIR_E_SCHEMA,
                             "%s's output arg_names must start with \"dst\", not \"%s\"", op->optype, a->out_arg[k]);
        } else {
            a->out_arg[k] = s->outs[k];
            te = lnr_find_arg(op->tout, s->outs[k], &idx);
            if (!te)
                return lnr_rfail(r, op->tout, GIR_E_SCHEMA, "%s needs a `%s` output tensor", op->optype, s->outs[k]);
        }
        const char *tname = lnr_jstr(lnr_jget(te, "name"));
        lnr_setptr(r, "/ops/%zu/tensors_out/%zu/name", i, idx);
        int32_t v = gir_graph_value_index(r->g, tname);
        bool twice = false;
        for (size_t j = 0; j < k; j++)
            if (strcmp(a->out_name[j], tname) == 0)
                twice = true;
        if (v >= 0 || twice)
            return lnr_rfail(r, lnr_jget(te, "name"), GIR_E_DUPLICATE, "output `%s` writes tensor '%s', which %s%s%s already "
                         "writes (each tensor is written once)", a->out_arg[k], tname, twice ? "this op" : "op '",
                         twice ? "" : r->ops[r->t[v].op].name, twice ? "" : "'");
        if (!*tname)
            return lnr_rfail(r, lnr_jget(te, "name"), GIR_E_SCHEMA, "output `%s` has an empty tensor name", a->out_arg[k]);
        a->out_j[k] = te;
        a->out_name[k] = tname;
    }
    /* params */
    lnr_setptr(r, "/ops/%zu/params", i);
    if (!(s->flags & LN_OP_ANY_PARAMS) && op->params->len != a->n_pv) {
        size_t o = 0;
        list[0] = '\0';
        for (size_t q = 0; q < a->n_pv && o + 1 < sizeof list; q++)
            o += (size_t)snprintf(list + o, sizeof list - o, "%s%s", q ? ", " : "", s->params[q].name);
        return lnr_rfail(r, op->params, GIR_E_SCHEMA, "%s needs %zu param%s%s%s%s, but gets %zu", op->optype, a->n_pv,
                     a->n_pv == 1 ? "" : "s", a->n_pv ? " (" : "", list, a->n_pv ? ")" : "", op->params->len);
    }
    for (size_t k = 0; k < a->n_pv; k++) {
        const ln_param_schema *ps = &s->params[k];
        size_t idx;
        const gir_json *pe = lnr_find_arg(op->params, ps->name, &idx);
        if (!pe)
            return lnr_rfail(r, op->params, GIR_E_SCHEMA, "%s needs a `%s` param", op->optype, ps->name);
        const gir_json *v = lnr_jget(pe, "value");
        lnr_setptr(r, "/ops/%zu/params/%zu/value", i, idx);
        ln_ptype t;
        TRY(lnr_classify(r, v, ps->name, &t));
        if (t != ps->type)
            return lnr_rfail(r, v, GIR_E_ATTRIBUTE, "param `%s` should be %s, but is %s", ps->name,
                         ptype_name(ps->type), ptype_name(t));
        a->pv[k] = v;
    }
    return GIR_OK;
}

/* Locates r->ptr at schema param k of the current op. */
static const gir_json *at_param(rd *r, opargs *a, size_t k)
{
    size_t idx = 0;
    lnr_find_arg(a->op->params, a->op->schema->params[k].name, &idx);
    lnr_setptr(r, "/ops/%zu/params/%zu/value", r->cur, idx);
    return a->pv[k];
}

static gir_status p_int(rd *r, opargs *a, size_t k, int64_t *out)
{
    const gir_json *v = at_param(r, a, k);
    double d;
    TRY(lnr_num(r, v, a->op->schema->params[k].name, &d));
    *out = ln_int_slot(d);
    return GIR_OK;
}

static gir_status p_double(rd *r, opargs *a, size_t k, double *out)
{
    const gir_json *v = at_param(r, a, k);
    return lnr_num(r, v, a->op->schema->params[k].name, out);
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
        return lnr_rfail(r, v, GIR_E_ATTRIBUTE, "param `%s` needs %zu elements, but gets %zu elements", pn, len, v->len);
    if (v->len > cap)
        return lnr_rfail(r, v, GIR_E_ATTRIBUTE, "param `%s` has %zu elements, more than %zu", pn, v->len, cap);
    for (size_t j = 0; j < v->len; j++) {
        double d;
        TRY(lnr_num(r, &v->u.items[j], pn, &d));
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
            return lnr_rfail(r, &pv->u.items[j], GIR_E_ATTRIBUTE, "param `%s`[%zu] should be >= %lld, but gets %lld", pn, j,
                         (long long)lo, (long long)v[j]);
        return lnr_rfail(r, pv, GIR_E_ATTRIBUTE, "param `%s` should be >= %lld, but gets %lld", pn, (long long)lo,
                     (long long)v[j]);
    }
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

static gir_status need_rank(rd *r, opargs *a, size_t k, int rank)
{
    gir_value *v = lnr_val(r, a->in[k]);
    if (v->shape.rank != rank) {
        char b[128];
        lnr_setptr(r, "/ops/%zu/tensors_in", r->cur);
        return lnr_rfail(r, a->in_j[k], GIR_E_SHAPE, "input `%s` ('%s', %s) should be %d-D", a->in_arg[k], v->name,
                     shape_s(&v->shape, b), rank);
    }
    return GIR_OK;
}

static gir_status need_dtype(rd *r, opargs *a, size_t k, gir_dtype dt)
{
    gir_value *v = lnr_val(r, a->in[k]);
    if (v->dtype != dt) {
        lnr_setptr(r, "/ops/%zu/tensors_in", r->cur);
        return lnr_rfail(r, a->in_j[k], GIR_E_DTYPE, "input `%s` ('%s') should be %s, but is %s", a->in_arg[k], v->name,
                     ln_dtype_name(dt), ln_dtype_name(v->dtype) ? ln_dtype_name(v->dtype) : gir_dtype_name(v->dtype));
    }
    return GIR_OK;
}

static gir_status need_same(rd *r, opargs *a, size_t k, size_t ref, bool shape)
{
    gir_value *v = lnr_val(r, a->in[k]), *w = lnr_val(r, a->in[ref]);
    char b1[128], b2[128];
    lnr_setptr(r, "/ops/%zu/tensors_in", r->cur);
    if (v->dtype != w->dtype)
        return lnr_rfail(r, a->in_j[k], GIR_E_DTYPE, "tensor `%s` (%s) and tensor `%s` (%s) should have the same dtype",
                     a->in_arg[ref], ln_dtype_name(w->dtype), a->in_arg[k], ln_dtype_name(v->dtype));
    if (shape && !gir_shape_equal(&v->shape, &w->shape))
        return lnr_rfail(r, a->in_j[k], GIR_E_SHAPE, "tensor `%s`(%s) and tensor `%s`(%s) should have the same shape",
                     a->in_arg[ref], shape_s(&w->shape, b1), a->in_arg[k], shape_s(&v->shape, b2));
    return GIR_OK;
}

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
        lnr_setptr(r, "/ops/%zu/params", r->cur);
        return lnr_rfail(r, a->op->params, GIR_E_SHAPE,
                     "the %s window spans %lld but the padded input is only %lld", what, (long long)span,
                     (long long)(in + pad));
    }
    *out = (in + pad - span) / s + 1;
    return GIR_OK;
}

/* The start, stop and step params of arange and rearange (params k, k + 1
 * and k + 2); step must not be 0. */
static gir_status range_params(rd *r, opargs *a, size_t k, double *start, double *stop, double *step)
{
    TRY(p_double(r, a, k, start));
    TRY(p_double(r, a, k + 1, stop));
    TRY(p_double(r, a, k + 2, step));
    at_param(r, a, k + 2);
    if (*step == 0)
        return lnr_rfail(r, a->pv[k + 2], GIR_E_ATTRIBUTE, "param `step` is 0");
    return GIR_OK;
}

static gir_status op_create(rd *r, opargs *a, int kind)
{
    const ln_opref *op = a->op;
    gir_dtype dt;
    const char *dtn = p_str(r, a, 0);
    dt = ln_dtype_from_name(dtn);
    if (dt == GIR_DT_UNKNOWN)
        return lnr_rfail(r, a->pv[0], GIR_E_DTYPE, "param `dtype` is \"%s\", not a TensorLight dtype (TL_FLOAT, "
                     "TL_DOUBLE, TL_INT8/16/32/64, TL_UINT8/16/32/64, TL_BOOL)", dtn);
    gir_shape s;
    int64_t dims[GIR_MAX_RANK + 1];
    size_t nd = 0;
    double start = 0, stop = 0, step = 0, ran[2] = { 0, 0 };
    bool from_file = false;
    if (kind == CR_ARANGE) {
        TRY(range_params(r, a, 1, &start, &stop, &step));
        if (!(stop > start))
            return lnr_rfail(r, a->pv[2], GIR_E_ATTRIBUTE, "param `stop` (%g) should be > `start` (%g)", stop, start);
        double len = ceil((stop - start) / step);
        if (!(len >= 1) || len > INT32_MAX)
            return lnr_rfail(r, a->pv[3], GIR_E_ATTRIBUTE, "arange(%g, %g, %g) has %g elements", start, stop, step, len);
        dims[0] = (int64_t)len;
        nd = 1;
        lnr_setptr(r, "/ops/%zu", r->cur);
        TRY(lnr_make_shape(r, op->obj, dims, nd, &s));
    } else {
        const gir_json *dv = at_param(r, a, 1);
        if (dv->len > GIR_MAX_RANK)
            return lnr_rfail(r, dv, GIR_E_SHAPE, "param `dims` has %zu elements; TensorLight allows at most 8", dv->len);
        TRY(p_ints(r, a, 1, 0, dims, GIR_MAX_RANK, &nd));
        TRY(need_ge(r, a, 1, dims, nd, 1));
        TRY(lnr_make_shape(r, dv, dims, nd, &s));
    }
    if (kind == CR_CREATE) {
        const gir_json *rv = at_param(r, a, 2);
        if (rv->len != 2)
            return lnr_rfail(r, rv, GIR_E_ATTRIBUTE, "param `ran` needs 2 elements, but gets %zu elements", rv->len);
        TRY(lnr_num(r, &rv->u.items[0], "ran[0]", &ran[0]));
        TRY(lnr_num(r, &rv->u.items[1], "ran[1]", &ran[1]));
        if (!(ran[0] <= ran[1]))
            return lnr_rfail(r, rv, GIR_E_ATTRIBUTE, "param `ran` should satisfy ran[0] <= ran[1], but is [%g, %g]", ran[0],
                         ran[1]);
        const gir_json *dv = at_param(r, a, 3);
        for (size_t j = 0; j < dv->len; j++) {
            double d;
            TRY(lnr_num(r, &dv->u.items[j], "data", &d));
        }
        at_param(r, a, 4);
        from_file = a->pv[4]->b;
        bool uses_data = !from_file && ran[0] == 0 && ran[1] == 0;
        if (uses_data && (int64_t)dv->len > lnr_numel(&s))
            return lnr_rfail(r, dv, GIR_E_ATTRIBUTE,
                         "param `data` has %zu values but the tensor has only %lld elements (LightNet would overflow "
                         "its buffer)", dv->len, (long long)lnr_numel(&s));
    }
    /* The value itself; its kind and data are settled once the whole model
     * and the weight file are known. */
    int32_t v;
    lnr_setptr(r, "/ops/%zu/tensors_out", r->cur);
    gir_status st = gir_graph_add_value(r->g, a->out_name[0], GIR_VALUE_CONST, &v, r->err);
    if (st) {
        gir_err_node(r->err, op->name);
        return st;
    }
    TRY(lnr_grow_t(r));
    gir_value *gv = lnr_val(r, v);
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
    gir_value *src = lnr_val(r, a->in[0]);
    int64_t axis, start, len;
    TRY(p_int(r, a, 0, &axis));
    if (axis < 0 || axis >= src->shape.rank)
        return lnr_rfail(r, a->pv[0], GIR_E_ATTRIBUTE, "param `axis` should be >= 0 and < %d (the rank of `src`), but "
                     "gets %lld", src->shape.rank, (long long)axis);
    int64_t d = src->shape.dims[axis];
    TRY(p_int(r, a, 1, &start));
    if (start < 0 || start >= d)
        return lnr_rfail(r, a->pv[1], GIR_E_ATTRIBUTE, "param `start` should be >= 0 and < %lld, but gets %lld",
                     (long long)d, (long long)start);
    TRY(p_int(r, a, 2, &len));
    if (len < 1 || len > d || start + len > d)
        return lnr_rfail(r, a->pv[2], GIR_E_ATTRIBUTE, "param `len` should be > 0 and start + len <= %lld, but gets %lld "
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
    TRY(lnr_new_output(r, n, 0, a->out_name[0], src->dtype, &s));
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
    gir_value *src = lnr_val(r, a->in[0]);
    TRY(need_rank(r, a, 0, 4));
    int64_t group = 1, size[2], stride[2], dil[2] = { 1, 1 }, pad[4], out_pad[2] = { 0, 0 }, out_dims[4] = { 0 };
    const char *autopad;
    gir_value *w = NULL, *b = NULL;
    char b1[128], b2[128];
    if (!pool) {
        TRY(need_rank(r, a, 1, 4));
        TRY(need_rank(r, a, 2, 1));
        w = lnr_val(r, a->in[1]);
        b = lnr_val(r, a->in[2]);
        if (conv && b->shape.dims[0] != w->shape.dims[0]) {
            lnr_setptr(r, "/ops/%zu/tensors_in", r->cur);
            return lnr_rfail(r, a->in_j[2], GIR_E_SHAPE, "'bias' (%s) should have the size of dims[0] of 'weight' (%s)",
                         shape_s(&b->shape, b1), shape_s(&w->shape, b2));
        }
        TRY(need_same(r, a, 1, 0, false));
        TRY(need_same(r, a, 2, 0, false));
        TRY(p_int(r, a, 0, &group));
        TRY(need_ge(r, a, 0, &group, 1, 1));
        if (conv && w->shape.dims[1] * group != src->shape.dims[1])
            return lnr_rfail(r, a->pv[0], GIR_E_SHAPE, "'weight' (%s)'s dims[1] times group (%lld) should equal dims[1] "
                         "of 'src' (%s)", shape_s(&w->shape, b1), (long long)group, shape_s(&src->shape, b2));
        if (deconv && w->shape.dims[1] * group != b->shape.dims[0])
            return lnr_rfail(r, a->pv[0], GIR_E_SHAPE, "'weight' (%s)'s dims[1] times group (%lld) should equal 'bias' "
                         "(%s)'s dims[0]", shape_s(&w->shape, b1), (long long)group, shape_s(&b->shape, b2));
        if (deconv && w->shape.dims[0] != src->shape.dims[1]) {
            lnr_setptr(r, "/ops/%zu/tensors_in", r->cur);
            return lnr_rfail(r, a->in_j[1], GIR_E_SHAPE, "'weight' (%s)'s dims[0] should equal the channels of 'src' (%s) "
                         "for a transposed convolution", shape_s(&w->shape, b1), shape_s(&src->shape, b2));
        }
        if (deconv && group != 1 && src->shape.dims[1] % group != 0)
            return lnr_rfail(r, a->pv[0], GIR_E_SHAPE, "group %lld does not divide the %lld input channels", (long long)group,
                         (long long)src->shape.dims[1]);
    }
    /* param indices differ per op */
    size_t i_size = pool ? 0 : 1, i_stride = pool ? 1 : 2;
    size_t i_dil = conv ? 3 : deconv ? 6 : 0, i_pad = conv ? 4 : deconv ? 4 : 2;
    size_t i_auto = conv ? 5 : deconv ? 7 : 3;
    TRY(p_ints(r, a, i_size, 2, size, 2, NULL));
    TRY(need_ge(r, a, i_size, size, 2, 1));
    if (!pool && (size[0] != w->shape.dims[2] || size[1] != w->shape.dims[3]))
        return lnr_rfail(r, at_param(r, a, i_size), GIR_E_SHAPE, "'size' ([%lld,%lld]) should be equal to the last two "
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
                return lnr_rfail(r, autopad_j, GIR_E_ATTRIBUTE, "'autopad' cannot be '%s' when 'output_dims' "
                             "([%lld,%lld,%lld,%lld]) is not valid", autopad, (long long)out_dims[0],
                             (long long)out_dims[1], (long long)out_dims[2], (long long)out_dims[3]);
            for (int ax = 0; ax < 2; ax++) {
                int64_t total = stride[ax] * (src->shape.dims[2 + ax] - 1) + out_pad[ax] +
                                (size[ax] - 1) * dil[ax] + 1 - out_dims[2 + ax];
                if (total < 0)
                    return lnr_rfail(r, autopad_j, GIR_E_ATTRIBUTE, "'output_dims' is larger than %s padding can reach",
                                 autopad);
                int64_t hi = total / 2, lo = total - hi;
                bool upper = strcmp(autopad, "SAME_UPPER") == 0;
                pad[ax] = upper ? hi : lo;
                pad[2 + ax] = upper ? lo : hi;
            }
            recomputed = true;
        } else if (strcmp(autopad, "NOTSET") != 0) {
            return lnr_rfail(r, autopad_j, GIR_E_ATTRIBUTE, "unsupported 'autopad' %s (NOTSET, VALID, SAME_UPPER or "
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
                return lnr_rfail(r, at_param(r, a, i_pad), GIR_E_SHAPE, "the padding leaves output dimension %d at %lld",
                             2 + ax, (long long)o);
            s.dims[2 + ax] = o;
        }
        bool od_valid = out_dims[0] > 0 && out_dims[1] > 0 && out_dims[2] > 0 && out_dims[3] > 0;
        if (od_valid)
            for (int d = 0; d < 4; d++)
                if (out_dims[d] != s.dims[d])
                    return lnr_rfail(r, at_param(r, a, 3), GIR_E_SHAPE, "'output_dims' ([%lld,%lld,%lld,%lld]) does not "
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
    return lnr_new_output(r, n, 0, a->out_name[0], src->dtype, &s);
}

static gir_status op_unary(rd *r, opargs *a, gir_op gop, gir_node **np)
{
    gir_value *src = lnr_val(r, a->in[0]);
    gir_node *n;
    TRY(make_node(r, a->op->name, gop, a, 1, a->in, 1, &n));
    TRY(lnr_new_output(r, n, 0, a->out_name[0], src->dtype, &src->shape));
    *np = n;
    return GIR_OK;
}

static gir_status op_axis(rd *r, opargs *a, size_t k, int rank, int64_t *axis)
{
    TRY(p_int(r, a, k, axis));
    if (*axis < 0 || *axis >= rank)
        return lnr_rfail(r, a->pv[k], GIR_E_ATTRIBUTE, "param `axis` should be >= 0 and < %d, but gets %lld", rank,
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
        gir_value *src = lnr_val(r, a->in[0]);
        return lnr_new_output(r, n, 0, a->out_name[0], src->dtype, &src->shape);
    }
    return lnr_rfail(r, a->pv[0], GIR_E_ATTRIBUTE, "param `elew_op` is \"%s\"; it should be TL_MUL, TL_DIV, TL_SUM, TL_SUB, "
                 "TL_MAX, TL_MIN or TL_POW", e);
}

static gir_status op_reshape(rd *r, opargs *a)
{
    gir_value *src = lnr_val(r, a->in[0]);
    int64_t dims[GIR_MAX_RANK];
    size_t nd;
    const gir_json *dv = at_param(r, a, 0);
    if (dv->len > GIR_MAX_RANK)
        return lnr_rfail(r, dv, GIR_E_SHAPE, "param `dims` has %zu elements; TensorLight allows at most 8", dv->len);
    TRY(p_ints(r, a, 0, 0, dims, GIR_MAX_RANK, &nd));
    TRY(need_ge(r, a, 0, dims, nd, 1));
    gir_shape s;
    TRY(lnr_make_shape(r, dv, dims, nd, &s));
    if (lnr_numel(&s) != lnr_numel(&src->shape)) {
        char b1[128], b2[128];
        return lnr_rfail(r, dv, GIR_E_SHAPE, "`dims` %s has %lld elements but `src` %s has %lld", shape_s(&s, b1),
                     (long long)lnr_numel(&s), shape_s(&src->shape, b2), (long long)lnr_numel(&src->shape));
    }
    gir_node *n;
    TRY(make_node(r, a->op->name, GIR_OP_Reshape, a, 1, a->in, 1, &n));
    SET_INTS(n, "shape", dims, nd);
    TRY(lnr_new_output(r, n, 0, a->out_name[0], src->dtype, &s));
    r->t[n->out[0]].root = r->t[a->in[0]].root;
    return GIR_OK;
}

static gir_status op_transpose(rd *r, opargs *a)
{
    gir_value *src = lnr_val(r, a->in[0]);
    int64_t axes[GIR_MAX_RANK];
    size_t n_ax;
    const gir_json *av = at_param(r, a, 0);
    if (av->len != (size_t)src->shape.rank)
        return lnr_rfail(r, av, GIR_E_ATTRIBUTE, "param `axes` has %zu elements but `src` has %d dimensions", av->len,
                     src->shape.rank);
    TRY(p_ints(r, a, 0, 0, axes, GIR_MAX_RANK, &n_ax));
    bool seen[GIR_MAX_RANK] = { false };
    gir_shape s = src->shape;
    for (size_t i = 0; i < n_ax; i++) {
        if (axes[i] < 0 || axes[i] >= src->shape.rank || seen[axes[i]])
            return lnr_rfail(r, &av->u.items[i], GIR_E_ATTRIBUTE, "param `axes` should be a permutation of 0..%d, but "
                         "axes[%zu] is %lld", src->shape.rank - 1, i, (long long)axes[i]);
        seen[axes[i]] = true;
        s.dims[i] = src->shape.dims[axes[i]];
    }
    gir_node *n;
    TRY(make_node(r, a->op->name, GIR_OP_Transpose, a, 1, a->in, 1, &n));
    SET_INTS(n, "perm", axes, n_ax);
    return lnr_new_output(r, n, 0, a->out_name[0], src->dtype, &s);
}

static gir_status op_concat(rd *r, opargs *a)
{
    gir_value *x = lnr_val(r, a->in[0]), *y = lnr_val(r, a->in[1]);
    TRY(need_same(r, a, 1, 0, false));
    int64_t axis;
    TRY(op_axis(r, a, 0, x->shape.rank, &axis));
    char b1[128], b2[128];
    bool ok = x->shape.rank == y->shape.rank;
    for (int i = 0; ok && i < x->shape.rank; i++)
        if (i != axis && x->shape.dims[i] != y->shape.dims[i])
            ok = false;
    if (!ok) {
        lnr_setptr(r, "/ops/%zu/tensors_in", r->cur);
        return lnr_rfail(r, a->in_j[1], GIR_E_SHAPE, "`src1` %s and `src2` %s should have the same shape except on axis "
                     "%lld", shape_s(&x->shape, b1), shape_s(&y->shape, b2), (long long)axis);
    }
    gir_shape s = x->shape;
    s.dims[axis] += y->shape.dims[axis];
    if (s.dims[axis] > INT32_MAX)
        return lnr_rfail(r, a->in_j[1], GIR_E_LIMIT, "the concatenation is too large");
    gir_node *n;
    TRY(make_node(r, a->op->name, GIR_OP_Concat, a, 2, a->in, 1, &n));
    SET_INT(n, "axis", axis);
    return lnr_new_output(r, n, 0, a->out_name[0], x->dtype, &s);
}

static gir_status resize_node(rd *r, opargs *a, const gir_shape *s, gir_node **np)
{
    gir_value *src = lnr_val(r, a->in[0]);
    gir_node *n;
    TRY(make_node(r, a->op->name, GIR_OP_Resize, a, 1, a->in, 1, &n));
    SET_STR(n, "mode", "nearest");
    SET_STR(n, "coordinate_transformation_mode", "half_pixel");
    SET_STR(n, "nearest_mode", "round_prefer_ceil");
    SET_INTS(n, "sizes", s->dims, (size_t)s->rank);
    TRY(lnr_new_output(r, n, 0, a->out_name[0], src->dtype, s));
    *np = n;
    return GIR_OK;
}

static gir_status check_mode(rd *r, opargs *a)
{
    const char *mode = p_str(r, a, 0);
    if (strcmp(mode, "TL_LINEAR") == 0)
        return lnr_rfail(r, a->pv[0], GIR_E_UNSUPPORTED, "mode TL_LINEAR passes LightNet's checks but TensorLight has no "
                     "linear resize (it asserts at run time)");
    if (strcmp(mode, "TL_NEAREST") != 0)
        return lnr_rfail(r, a->pv[0], GIR_E_ATTRIBUTE, "'mode' should be 'TL_NEAREST' or 'TL_LINEAR', not \"%s\"", mode);
    return GIR_OK;
}

static gir_status op_upsample(rd *r, opargs *a)
{
    gir_value *src = lnr_val(r, a->in[0]);
    TRY(check_mode(r, a));
    const gir_json *sv = at_param(r, a, 1);
    if (sv->len != (size_t)src->shape.rank)
        return lnr_rfail(r, sv, GIR_E_ATTRIBUTE, "the length of 'scales' (%zu) should be the rank of input 'src' (%d)",
                     sv->len, src->shape.rank);
    double orig[GIR_MAX_RANK];
    gir_shape s = src->shape;
    for (size_t i = 0; i < sv->len; i++) {
        TRY(lnr_num(r, &sv->u.items[i], "scales", &orig[i]));
        float f = ln_float_slot(orig[i]);
        float prod = f * (float)src->shape.dims[i];
        double d = floor((double)prod);
        if (d < 1 || d > INT32_MAX)
            return lnr_rfail(r, &sv->u.items[i], GIR_E_SHAPE, "scales[%zu] (%g) makes dimension %zu %.0f", i, (double)f, i,
                         d);
        s.dims[i] = (int64_t)d;
    }
    TRY(lnr_make_shape(r, sv, s.dims, (size_t)s.rank, &s));
    gir_node *n;
    TRY(resize_node(r, a, &s, &n));
    META_FLOATS(n, "lightnet.scales", orig, sv->len);
    return GIR_OK;
}

static gir_status op_resize(rd *r, opargs *a)
{
    gir_value *src = lnr_val(r, a->in[0]);
    TRY(check_mode(r, a));
    int64_t dims[GIR_MAX_RANK];
    size_t nd;
    const gir_json *dv = at_param(r, a, 1);
    if (dv->len != (size_t)src->shape.rank)
        return lnr_rfail(r, dv, GIR_E_ATTRIBUTE, "the length of 'dims' (%zu) should be the rank of input 'src' (%d)",
                     dv->len, src->shape.rank);
    TRY(p_ints(r, a, 1, 0, dims, GIR_MAX_RANK, &nd));
    TRY(need_ge(r, a, 1, dims, nd, 1));
    gir_shape s;
    TRY(lnr_make_shape(r, dv, dims, nd, &s));
    gir_node *n;
    return resize_node(r, a, &s, &n);
}

static gir_status op_maxreduce(rd *r, opargs *a)
{
    bool with_arg = strcmp(a->op->schema->optype, "maxreduce_arg") == 0;
    gir_value *src = lnr_val(r, a->in[0]);
    int64_t axis;
    TRY(op_axis(r, a, 0, src->shape.rank, &axis));
    gir_shape s = src->shape;
    s.dims[axis] = 1;
    gir_node *n;
    TRY(make_node(r, a->op->name, GIR_OP_ReduceMax, a, 1, a->in, 1, &n));
    SET_INTS(n, "axes", &axis, 1);
    SET_INT(n, "keepdims", 1);
    TRY(lnr_new_output(r, n, 0, a->out_name[0], src->dtype, &s));
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
    TRY(lnr_new_output(r, am, 0, iv, GIR_DT_I64, &s));
    snprintf(base, sizeof base, "%.500s/cast", a->op->name);
    const char *cn = fresh_name(r, base, true);
    if (!cn)
        return gir_nomem(r->err);
    gir_node *c;
    TRY(make_node(r, cn, GIR_OP_Cast, a, 1, &am->out[0], 1, &c));
    SET_STR(c, "to", gir_dtype_name(GIR_DT_I32));
    META_STR(c, "lightnet.op", a->op->name);
    META_STR(n, "lightnet.op", a->op->name);
    return lnr_new_output(r, c, 0, a->out_name[1], GIR_DT_I32, &s);
}

static gir_status op_sort(rd *r, opargs *a)
{
    bool by_key = strcmp(a->op->schema->optype, "sort1d_by_key") == 0;
    TRY(need_rank(r, a, 0, 1));
    gir_value *key = lnr_val(r, a->in[0]);
    if (by_key) {
        TRY(need_rank(r, a, 1, 1));
        TRY(need_dtype(r, a, 1, GIR_DT_I32));
        gir_value *v = lnr_val(r, a->in[1]);
        if (v->shape.dims[0] != key->shape.dims[0]) {
            lnr_setptr(r, "/ops/%zu/tensors_in", r->cur);
            return lnr_rfail(r, a->in_j[1], GIR_E_SHAPE, "`src_val` has %lld elements but `src_key` %lld",
                         (long long)v->shape.dims[0], (long long)key->shape.dims[0]);
        }
    }
    const char *dir = p_str(r, a, 0);
    bool desc = strcmp(dir, "TL_SORT_DIR_DESCENDING") == 0;
    if (!desc && strcmp(dir, "TL_SORT_DIR_ASCENDING") != 0)
        return lnr_rfail(r, a->pv[0], GIR_E_ATTRIBUTE, "'dir' should be TL_SORT_DIR_ASCENDING or "
                     "TL_SORT_DIR_DESCENDING, not \"%s\"", dir);
    size_t n_io = by_key ? 2 : 1;
    gir_node *n;
    TRY(make_node(r, a->op->name, GIR_OP_Sort, a, n_io, a->in, n_io, &n));
    SET_INT(n, "descending", desc);
    for (size_t k = 0; k < n_io; k++) {
        gir_value *s = lnr_val(r, a->in[k]);
        TRY(lnr_new_output(r, n, k, a->out_name[k], s->dtype, &s->shape));
        r->t[n->out[k]].root = r->t[a->in[k]].root;
    }
    return GIR_OK;
}

static gir_status op_pick1d(rd *r, opargs *a)
{
    TRY(need_rank(r, a, 0, 1));
    TRY(need_rank(r, a, 1, 1));
    TRY(need_dtype(r, a, 1, GIR_DT_I32));
    gir_value *src = lnr_val(r, a->in[0]), *idx = lnr_val(r, a->in[1]);
    int64_t len, stride;
    TRY(p_int(r, a, 0, &len));
    if (len > idx->shape.dims[0])
        return lnr_rfail(r, a->pv[0], GIR_E_ATTRIBUTE, "param `len` should be <= %lld (the length of `src_index`), but "
                     "gets %lld", (long long)idx->shape.dims[0], (long long)len);
    TRY(need_ge(r, a, 0, &len, 1, 1));
    TRY(p_int(r, a, 1, &stride));
    TRY(need_ge(r, a, 1, &stride, 1, 1));
    gir_shape s = { 1, { len * stride } };
    TRY(lnr_make_shape(r, a->pv[1], s.dims, 1, &s));
    gir_node *n;
    TRY(make_node(r, a->op->name, GIR_OP_GatherBlocks, a, 2, a->in, 1, &n));
    SET_INT(n, "count", len);
    SET_INT(n, "block_size", stride);
    return lnr_new_output(r, n, 0, a->out_name[0], src->dtype, &s);
}

static gir_status op_rearange(rd *r, opargs *a)
{
    TRY(need_rank(r, a, 0, 1));
    gir_value *src = lnr_val(r, a->in[0]);
    double start, stop, step;
    TRY(range_params(r, a, 0, &start, &stop, &step));
    double len = ceil((stop - start) / step);
    if (len != (double)src->shape.dims[0])
        return lnr_rfail(r, a->pv[2], GIR_E_SHAPE, "rearange(%g, %g, %g) has %g elements but `src` has %lld", start, stop,
                     step, len, (long long)src->shape.dims[0]);
    gir_node *n;
    TRY(make_node(r, a->op->name, GIR_OP_RangeFill, a, 1, a->in, 1, &n));
    SET_FLOAT(n, "start", start);
    SET_FLOAT(n, "limit", stop);
    SET_FLOAT(n, "delta", step);
    TRY(lnr_new_output(r, n, 0, a->out_name[0], src->dtype, &src->shape));
    r->t[n->out[0]].root = r->t[a->in[0]].root;
    return GIR_OK;
}

static gir_status op_bbox(rd *r, opargs *a)
{
    TRY(need_rank(r, a, 0, 5));
    TRY(need_dtype(r, a, 0, GIR_DT_F32));
    gir_value *d = lnr_val(r, a->in[0]);
    if (d->shape.dims[4] != 4) {
        lnr_setptr(r, "/ops/%zu/tensors_in", r->cur);
        return lnr_rfail(r, a->in_j[0], GIR_E_SHAPE, "`src_delta`'s last dimension should be 4, not %lld",
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
    return lnr_new_output(r, n, 0, a->out_name[0], d->dtype, &d->shape);
}

static gir_status op_yolo(rd *r, opargs *a)
{
    TRY(need_rank(r, a, 0, 4));
    TRY(need_dtype(r, a, 0, GIR_DT_F32));
    TRY(need_rank(r, a, 1, 2));
    TRY(need_same(r, a, 1, 0, false));
    gir_value *f = lnr_val(r, a->in[0]), *an = lnr_val(r, a->in[1]);
    lnr_setptr(r, "/ops/%zu/tensors_in", r->cur);
    if (f->shape.dims[0] != 1)
        return lnr_rfail(r, a->in_j[0], GIR_E_SHAPE, "`feature`'s batch dimension should be 1, not %lld",
                     (long long)f->shape.dims[0]);
    if (an->shape.dims[1] != 2)
        return lnr_rfail(r, a->in_j[1], GIR_E_SHAPE, "`anchors` should be [anchors, 2] (width, height), not [%lld, %lld]",
                     (long long)an->shape.dims[0], (long long)an->shape.dims[1]);
    int64_t A = an->shape.dims[0], C = f->shape.dims[1];
    if (C % A != 0 || C / A - 5 < 1)
        return lnr_rfail(r, a->in_j[1], GIR_E_SHAPE, "`feature` has %lld channels, not a multiple of %lld anchors times "
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
        TRY(lnr_new_output(r, n, k, a->out_name[k], GIR_DT_F32, &s));
    }
    return GIR_OK;
}

static gir_status op_submean(rd *r, opargs *a)
{
    TRY(need_rank(r, a, 0, 3));
    gir_value *src = lnr_val(r, a->in[0]);
    lnr_setptr(r, "/ops/%zu/tensors_in", r->cur);
    if (src->dtype == GIR_DT_BOOL)
        return lnr_rfail(r, a->in_j[0], GIR_E_DTYPE, "`src` should not be TL_BOOL");
    if (src->shape.dims[2] != 3)
        return lnr_rfail(r, a->in_j[0], GIR_E_SHAPE, "`src` should be an HWC image with 3 channels (the `mean` has 3 "
                     "values), not %lld", (long long)src->shape.dims[2]);
    const gir_json *mv = at_param(r, a, 0);
    if (mv->len != 3)
        return lnr_rfail(r, mv, GIR_E_ATTRIBUTE, "param `mean` needs 3 elements, but gets %zu elements", mv->len);
    double mean[3];
    for (int i = 0; i < 3; i++)
        TRY(lnr_num(r, &mv->u.items[i], "mean", &mean[i]));
    const char *dtn = p_str(r, a, 1);
    gir_dtype dt = ln_dtype_from_name(dtn);
    if (dt == GIR_DT_UNKNOWN || dt == GIR_DT_BOOL)
        return lnr_rfail(r, a->pv[1], GIR_E_DTYPE, "param `dtype` \"%s\" should name a TensorLight dtype other than "
                     "TL_BOOL", dtn);
    gir_shape s = { 3, { src->shape.dims[2], src->shape.dims[0], src->shape.dims[1] } };
    gir_node *n;
    TRY(make_node(r, a->op->name, GIR_OP_SubMean, a, 1, a->in, 1, &n));
    TRYM(gir_attrs_set_floats(r->g, &n->attrs, "mean", mean, 3, r->err));
    SET_STR(n, "to", gir_dtype_name(dt));
    return lnr_new_output(r, n, 0, a->out_name[0], dt, &s);
}

static gir_status op_dot(rd *r, opargs *a)
{
    TRY(need_same(r, a, 1, 0, true));
    gir_value *x = lnr_val(r, a->in[0]);
    gir_node *n;
    TRY(make_node(r, a->op->name, GIR_OP_DotProduct, a, 2, a->in, 1, &n));
    gir_shape s = { 1, { 1 } };
    return lnr_new_output(r, n, 0, a->out_name[0], x->dtype, &s);
}

static gir_status op_gather(rd *r, opargs *a)
{
    for (size_t k = 1; k < a->n_in; k++)
        TRY(need_same(r, a, k, 0, true));
    gir_value *x = lnr_val(r, a->in[0]);
    if (x->shape.rank + 1 > GIR_MAX_RANK) {
        lnr_setptr(r, "/ops/%zu/tensors_in", r->cur);
        return lnr_rfail(r, a->in_j[0], GIR_E_SHAPE, "stacking %d-D tensors gives more than 8 dimensions", x->shape.rank);
    }
    gir_shape s;
    s.rank = x->shape.rank + 1;
    s.dims[0] = (int64_t)a->n_in;
    for (int i = 0; i < x->shape.rank; i++)
        s.dims[i + 1] = x->shape.dims[i];
    lnr_setptr(r, "/ops/%zu/tensors_in", r->cur);
    TRY(lnr_make_shape(r, a->op->tin, s.dims, (size_t)s.rank, &s));
    gir_node *n;
    TRY(make_node(r, a->op->name, GIR_OP_Stack, a, a->n_in, a->in, 1, &n));
    SET_INT(n, "axis", 0);
    const char **args = (const char **)a->in_arg;
    TRYM(gir_attrs_set_strings(r->g, &n->meta, "lightnet.ins", args, a->n_in, r->err));
    return lnr_new_output(r, n, 0, a->out_name[0], x->dtype, &s);
}

static gir_status op_scatter(rd *r, opargs *a)
{
    gir_value *x = lnr_val(r, a->in[0]);
    lnr_setptr(r, "/ops/%zu/tensors_out", r->cur);
    if (x->shape.rank < 2)
        return lnr_rfail(r, a->in_j[0], GIR_E_SHAPE, "`src` should have more than one dimension");
    if ((int64_t)a->n_out != x->shape.dims[0])
        return lnr_rfail(r, a->op->tout, GIR_E_SHAPE, "scatter of %lld slices needs %lld output tensors, but gets %zu",
                     (long long)x->shape.dims[0], (long long)x->shape.dims[0], a->n_out);
    gir_node *n;
    TRY(make_node(r, a->op->name, GIR_OP_Unstack, a, 1, a->in, a->n_out, &n));
    SET_INT(n, "axis", 0);
    gir_shape s;
    s.rank = x->shape.rank - 1;
    for (int i = 1; i < x->shape.rank; i++)
        s.dims[i - 1] = x->shape.dims[i];
    for (size_t k = 0; k < a->n_out; k++)
        TRY(lnr_new_output(r, n, k, a->out_name[k], x->dtype, &s));
    const char **args = (const char **)a->out_arg;
    TRYM(gir_attrs_set_strings(r->g, &n->meta, "lightnet.outs", args, a->n_out, r->err));
    return GIR_OK;
}

/* The ops read by a function of their own. */
static const struct {
    const char *optype;
    gir_status (*fn)(rd *r, opargs *a);
} op_fns[] = {
    { "elew", op_elew },
    { "reshape", op_reshape },
    { "transpose", op_transpose },
    { "concat", op_concat },
    { "upsample", op_upsample },
    { "resize", op_resize },
    { "maxreduce", op_maxreduce },
    { "maxreduce_arg", op_maxreduce },
    { "sort1d", op_sort },
    { "sort1d_by_key", op_sort },
    { "pick1d", op_pick1d },
    { "rearange", op_rearange },
    { "transform_bboxSQD", op_bbox },
    { "detect_yolov3", op_yolo },
    { "submean", op_submean },
    { "dot_product", op_dot },
    { "gather", op_gather },
    { "scatter", op_scatter },
};

gir_status lnr_check_op(rd *r, size_t i)
{
    r->cur = i;
    const ln_opref *op = &r->ops[i];
    if (!op->schema)
        return lnr_op_opaque(r, op);
    const ln_op_schema *s = op->schema;
    const gir_op_map *plain;
    opargs a;
    memset(&a, 0, sizeof a);
    a.op = op;
    gir_status st = bind_args(r, s, &a);
    const char *t = s->optype;
    gir_node *n = NULL;
    if (st)
        goto out;
    for (size_t k = 0; k < a.n_in; k++)
        if (!lnr_is_param_arg(t, a.in_arg[k]))
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
    else if ((plain = gir_map_read_row(ln_ops, t)) != NULL)
        st = op_unary(r, &a, plain->op, &n);
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
        gir_value *x = lnr_val(r, a.in[0]);
        st = op_axis(r, &a, 0, x->shape.rank, &axis);
        if (!st)
            st = op_unary(r, &a, GIR_OP_Softmax, &n);
        if (!st && gir_attrs_set_int(r->g, &n->attrs, "axis", axis, r->err))
            st = gir_nomem(r->err);
    } else if (!strcmp(t, "batchnorm")) {
        st = need_rank(r, &a, 0, 4);
        gir_value *x = lnr_val(r, a.in[0]);
        for (size_t k = 1; k < 5 && !st; k++) {
            st = need_rank(r, &a, k, 1);
            if (!st)
                st = need_same(r, &a, k, 0, false);
            if (!st && lnr_val(r, a.in[k])->shape.dims[0] != x->shape.dims[1]) {
                lnr_setptr(r, "/ops/%zu/tensors_in", r->cur);
                st = lnr_rfail(r, a.in_j[k], GIR_E_SHAPE, "`%s` has %lld elements but `src` has %lld channels", a.in_arg[k],
                           (long long)lnr_val(r, a.in[k])->shape.dims[0], (long long)x->shape.dims[1]);
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
    } else {
        size_t k = 0;
        while (k < sizeof op_fns / sizeof *op_fns && strcmp(op_fns[k].optype, t) != 0)
            k++;
        st = k < sizeof op_fns / sizeof *op_fns ? op_fns[k].fn(r, &a) : lnr_op_opaque(r, op); /* ldmr, svmr */
    }
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
