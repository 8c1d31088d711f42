/* Reading RelayViz JSON, step 1: every node of "nodes" parsed and checked
 * for its kind's fields (types, references in range and pointing back,
 * constants' data), then the kinds each reference may point at, cycles,
 * and the bindings of Let and Bind. */
#include "read.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


static const char *const kind_names[K_COUNT] = { "Var",   "Function", "Call", "Op", "Const",
                                                 "Bind",  "Tuple",    "Let",  "If", "TupleGetItem" };

static void at_node(rv_reader *r, int32_t id)
{
    char s[24];
    snprintf(s, sizeof s, "%d", (int)id);
    gir_err_node(r->err, s);
}

gir_status rvr_node_fail(rv_reader *r, gir_status code, int32_t id, const gir_json *v, const char *field,
                         const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *msg = gir_vstrdupf(fmt, ap);
    va_end(ap);
    if (!msg)
        return gir_nomem(r->err);
    gir_fail(r->err, code, "%s: %s", id >= 0 && (size_t)id < r->n ? kind_names[r->nodes[id].k] : "node", msg);
    free(msg);
    if (field)
        gir_json_err_at(r->err, r->doc, v ? v : r->nodes[id].j, "/nodes/%d/%s", (int)id, field);
    else
        gir_json_err_at(r->err, r->doc, v ? v : r->nodes[id].j, "/nodes/%d", (int)id);
    at_node(r, id);
    return code;
}

static gir_status field(rv_reader *r, int32_t id, const char *key, gir_json_type t, bool required,
                        const gir_json **out)
{
    const gir_json *v = gir_json_get(r->nodes[id].j, key);
    *out = NULL;
    if (!required && v && v->type == GIR_JSON_NULL)
        v = NULL; /* an optional field given as null is absent */
    if (!v) {
        if (required)
            return rvr_node_fail(r, GIR_E_SCHEMA, id, NULL, NULL, "the field \"%s\" is missing", key);
        return GIR_OK;
    }
    if (v->type != t) {
        char got[64];
        gir_json_describe(v, got, sizeof got);
        return rvr_node_fail(r, GIR_E_SCHEMA, id, v, key, "\"%s\" must be %s, not %s", key, gir_json_type_name(t), got);
    }
    *out = v;
    return GIR_OK;
}

/* A node id: an integer in range. */
static gir_status ref(rv_reader *r, int32_t id, const gir_json *v, const char *where, int32_t *out)
{
    int64_t x;
    if (!gir_json_get_i64(v, &x)) {
        char got[64];
        gir_json_describe(v, got, sizeof got);
        return rvr_node_fail(r, GIR_E_SCHEMA, id, v, where, "%s must be a node id (an integer), not %s", where, got);
    }
    if (x < 0 || (uint64_t)x >= r->n)
        return rvr_node_fail(r, GIR_E_REFERENCE, id, v, where, "%s refers to node %lld, but the ids go from 0 to %zu",
                             where, (long long)x, r->n - 1);
    *out = (int32_t)x;
    return GIR_OK;
}

static gir_status ref_field(rv_reader *r, int32_t id, const char *key, int32_t *out)
{
    const gir_json *v = gir_json_get(r->nodes[id].j, key);
    if (!v)
        return rvr_node_fail(r, GIR_E_SCHEMA, id, NULL, NULL, "the field \"%s\" is missing", key);
    return ref(r, id, v, key, out);
}

static gir_status ref_list(rv_reader *r, int32_t id, const char *key, bool required)
{
    const gir_json *v;
    gir_status st = field(r, id, key, GIR_JSON_ARRAY, required, &v);
    if (st || !v)
        return st;
    rnode *nd = &r->nodes[id];
    nd->list = gir_arena_alloc(&r->scratch, (v->len ? v->len : 1) * sizeof *nd->list);
    if (!nd->list)
        return gir_nomem(r->err);
    nd->n_list = v->len;
    for (size_t i = 0; i < v->len; i++) {
        char where[64];
        snprintf(where, sizeof where, "%s/%zu", key, i);
        if ((st = ref(r, id, gir_json_at(v, i), where, &nd->list[i])))
            return st;
    }
    return GIR_OK;
}

static gir_status dtype_field(rv_reader *r, int32_t id, bool required, gir_dtype *out)
{
    const gir_json *v = gir_json_get(r->nodes[id].j, "dtype");
    *out = GIR_DT_UNKNOWN;
    if (!required && v && v->type == GIR_JSON_NULL)
        return GIR_OK; /* an unknown element type */
    gir_status st = field(r, id, "dtype", GIR_JSON_STRING, required, &v);
    if (st)
        return st;
    *out = GIR_DT_UNKNOWN;
    if (!v)
        return GIR_OK;
    const char *s = gir_json_get_cstr(v);
    *out = s ? gir_dtype_from_name(s) : GIR_DT_UNKNOWN;
    if (*out == GIR_DT_UNKNOWN)
        return rvr_node_fail(r, GIR_E_DTYPE, id, v, "dtype", "dtype \"%s\" is not a known element type", s ? s : "");
    return GIR_OK;
}

/* A shape: a list of dimensions, each a non-negative integer, -1 (unknown)
 * or a string (a symbolic dimension).  null: unknown rank. */
gir_status rvr_shape_value(rv_reader *r, int32_t id, const gir_json *v, const char *where, gir_shape *s,
                           const char **dim_names)
{
    s->rank = -1;
    if (!v || v->type == GIR_JSON_NULL)
        return GIR_OK;
    if (v->type != GIR_JSON_ARRAY)
        return rvr_node_fail(r, GIR_E_SCHEMA, id, v, where, "%s must be a list of dimensions", where);
    if (v->len > GIR_MAX_RANK)
        return rvr_node_fail(r, GIR_E_LIMIT, id, v, where, "%s has %zu dimensions, more than %d", where, v->len,
                             GIR_MAX_RANK);
    for (size_t i = 0; i < v->len; i++) {
        const gir_json *d = gir_json_at(v, i);
        int64_t x;
        if (d->type == GIR_JSON_STRING && dim_names) {
            const char *nm = gir_json_get_cstr(d);
            if (!nm || !*nm)
                return rvr_node_fail(r, GIR_E_SCHEMA, id, d, where, "a symbolic dimension of %s is empty", where);
            dim_names[i] = gir_arena_strdup(&r->g->arena, nm);
            if (!dim_names[i])
                return gir_nomem(r->err);
            x = -1;
        } else if (!gir_json_get_i64(d, &x) || x < -1) {
            return rvr_node_fail(r, GIR_E_SCHEMA, id, d, where, "dimension %zu of %s must be a size, -1 or a name", i,
                                 where);
        }
        s->dims[i] = x;
    }
    s->rank = (int)v->len;
    return GIR_OK;
}

/* Converts one JSON number (or NaN/Infinity string) to an element. */
static bool element(const gir_json *v, gir_dtype dt, unsigned char *dst)
{
    if (dt == GIR_DT_BOOL) {
        bool b;
        if (!rv_json_bool(v, &b))
            return false;
        *dst = b;
        return true;
    }
    if (gir_dtype_is_float(dt)) {
        double d;
        float f;
        if (v->type == GIR_JSON_STRING) {
            const char *s = gir_json_get_cstr(v);
            if (!s)
                return false;
            if (!strcmp(s, "NaN"))
                d = NAN;
            else if (!strcmp(s, "Infinity"))
                d = INFINITY;
            else if (!strcmp(s, "-Infinity"))
                d = -INFINITY;
            else
                return false;
            f = (float)d;
        } else {
            size_t len;
            const char *txt = gir_json_number_text(v, &len);
            if (!txt)
                return false;
            char small[64], *buf = len < sizeof small ? small : malloc(len + 1);
            if (!buf)
                return false;
            memcpy(buf, txt, len);
            buf[len] = '\0';
            char *end;
            errno = 0;
            if (dt == GIR_DT_F32) {
                f = strtof(buf, &end);
                d = f;
            } else {
                d = strtod(buf, &end);
                f = (float)d;
            }
            bool bad = *end != '\0' || isinf(d);
            if (buf != small)
                free(buf);
            if (bad)
                return false;
        }
        if (dt == GIR_DT_F32)
            memcpy(dst, &f, 4);
        else if (dt == GIR_DT_F64)
            memcpy(dst, &d, 8);
        else
            return false;
        return true;
    }
    if (!gir_dtype_is_int(dt))
        return false;
    /* An integer in the type's range, stored in its width. */
    unsigned bits = 8 * (unsigned)gir_dtype_size(dt);
    uint64_t u;
    if (dt >= GIR_DT_I8 && dt <= GIR_DT_I64) {
        int64_t i;
        if (!gir_json_get_i64(v, &i) ||
            (bits < 64 && (i < -(INT64_C(1) << (bits - 1)) || i >= INT64_C(1) << (bits - 1))))
            return false;
        u = (uint64_t)i;
    } else if (!gir_json_get_u64(v, &u) || (bits < 64 && u >> bits)) {
        return false;
    }
    switch (bits) {
    case 8: *dst = (unsigned char)u; break;
    case 16: *(uint16_t *)dst = (uint16_t)u; break;
    case 32: *(uint32_t *)dst = (uint32_t)u; break;
    default: *(uint64_t *)dst = u; break;
    }
    return true;
}

static gir_status parse_const(rv_reader *r, int32_t id)
{
    rnode *nd = &r->nodes[id];
    gir_status st = dtype_field(r, id, true, &nd->dtype);
    if (st)
        return st;
    if (nd->dtype == GIR_DT_F16 || nd->dtype == GIR_DT_BF16)
        return rvr_node_fail(r, GIR_E_DTYPE, id, gir_json_get(nd->j, "dtype"), "dtype",
                             "Const values of %s are not supported", gir_dtype_name(nd->dtype));
    const gir_json *v = gir_json_get(nd->j, "value");
    if (!v)
        return rvr_node_fail(r, GIR_E_SCHEMA, id, NULL, NULL, "the field \"value\" is missing");
    const gir_json *items = v;
    const char *where = "value";
    gir_shape shape = { .rank = 0 };
    if (v->type == GIR_JSON_OBJECT) {
        const gir_json *arr = gir_json_get(v, "array_value"), *sh = gir_json_get(v, "array_shape");
        if (!gir_json_is(arr, GIR_JSON_ARRAY))
            return rvr_node_fail(r, GIR_E_SCHEMA, id, arr ? arr : v, arr ? "value/array_value" : "value",
                                 "a tensor value needs \"array_value\", a list of numbers");
        if (!gir_json_is(sh, GIR_JSON_ARRAY))
            return rvr_node_fail(r, GIR_E_SCHEMA, id, sh ? sh : v, sh ? "value/array_shape" : "value",
                                 "a tensor value needs \"array_shape\", a list of sizes");
        if ((st = rvr_shape_value(r, id, sh, "value/array_shape", &shape, NULL)))
            return st;
        for (int i = 0; i < shape.rank; i++)
            if (shape.dims[i] < 0)
                return rvr_node_fail(r, GIR_E_SHAPE, id, sh, "value/array_shape", "array_shape has an unknown size");
        int64_t numel = gir_shape_numel(&shape);
        if (numel < 0 || (uint64_t)numel != arr->len) {
            char s[96];
            return rvr_node_fail(r, GIR_E_SHAPE, id, arr, "value/array_value",
                                 "array_value has %zu numbers but array_shape %s needs %lld", arr->len,
                                 gir_shape_str(&shape, s, sizeof s), (long long)numel);
        }
        items = arr;
        where = "value/array_value";
    } else if (v->type != GIR_JSON_NUMBER && v->type != GIR_JSON_BOOL && v->type != GIR_JSON_STRING) {
        return rvr_node_fail(r, GIR_E_SCHEMA, id, v, "value", "value must be a number or {array_value, array_shape}");
    }
    if ((st = gir_tensor_new(nd->dtype, &shape, &nd->data, r->err))) {
        at_node(r, id);
        return st;
    }
    size_t esz = gir_dtype_size(nd->dtype);
    size_t count = items->type == GIR_JSON_ARRAY ? items->len : 1;
    unsigned char *p = nd->data->data;
    for (size_t i = 0; i < count; i++) {
        const gir_json *e = items->type == GIR_JSON_ARRAY ? gir_json_at(items, i) : items;
        if (!element(e, nd->dtype, p + i * esz)) {
            char got[64], w[80];
            gir_json_describe(e, got, sizeof got);
            if (items->type == GIR_JSON_ARRAY)
                snprintf(w, sizeof w, "%s/%zu", where, i);
            else
                snprintf(w, sizeof w, "%s", where);
            return rvr_node_fail(r, GIR_E_SCHEMA, id, e, w, "%s is not a %s value", got, gir_dtype_name(nd->dtype));
        }
    }
    return GIR_OK;
}

gir_status rvr_parse_node(rv_reader *r, int32_t id)
{
    rnode *nd = &r->nodes[id];
    const gir_json *v;
    gir_status st;
    if (nd->j->type != GIR_JSON_OBJECT) {
        char got[64];
        gir_json_describe(nd->j, got, sizeof got);
        gir_fail(r->err, GIR_E_SCHEMA, "a node must be an object, not %s", got);
        gir_json_err_at(r->err, r->doc, nd->j, "/nodes/%d", (int)id);
        at_node(r, id);
        return GIR_E_SCHEMA;
    }
    const gir_json *kv = gir_json_get(nd->j, "node_kind");
    const char *ks = kv ? gir_json_get_cstr(kv) : NULL;
    if (!ks) {
        gir_fail(r->err, GIR_E_SCHEMA, "the node has no \"node_kind\" string");
        gir_json_err_at(r->err, r->doc, kv ? kv : nd->j, kv ? "/nodes/%d/node_kind" : "/nodes/%d", (int)id);
        at_node(r, id);
        return GIR_E_SCHEMA;
    }
    int k = 0;
    while (k < K_COUNT && strcmp(kind_names[k], ks) != 0)
        k++;
    if (k == K_COUNT) {
        gir_fail(r->err, GIR_E_SCHEMA,
                 "unknown node_kind \"%s\" (known: Function, Var, Call, Op, Const, Bind, Tuple, Let, If, "
                 "TupleGetItem)",
                 ks);
        gir_json_err_at(r->err, r->doc, kv, "/nodes/%d/node_kind", (int)id);
        at_node(r, id);
        return GIR_E_SCHEMA;
    }
    nd->k = (kind)k;
    nd->a = nd->b = nd->c = -1;
    nd->bound_to = nd->bound_by = nd->value = -1;
    switch (nd->k) {
    case K_VAR: {
        if ((st = field(r, id, "name", GIR_JSON_STRING, true, &v)))
            return st;
        nd->name = gir_json_get_cstr(v);
        if (!nd->name || !*nd->name)
            return rvr_node_fail(r, GIR_E_SCHEMA, id, v, "name", "a Var needs a non-empty name");
        if ((st = dtype_field(r, id, false, &nd->dtype)))
            return st;
        const gir_json *sh = gir_json_get(nd->j, "shape");
        return rvr_shape_value(r, id, sh, "shape", &nd->shape, nd->dim_names);
    }
    case K_FUNCTION:
        if ((st = ref_field(r, id, "body", &nd->a)) || (st = ref_list(r, id, "params", false)))
            return st;
        return GIR_OK;
    case K_CALL:
        v = gir_json_get(nd->j, "op");
        if (!v)
            return rvr_node_fail(r, GIR_E_SCHEMA, id, NULL, NULL, "the field \"op\" is missing");
        if (v->type == GIR_JSON_STRING) {
            nd->name = gir_json_get_cstr(v);
            if (!nd->name || !*nd->name)
                return rvr_node_fail(r, GIR_E_SCHEMA, id, v, "op", "op must be an Op node id or an operator name");
        } else if ((st = ref(r, id, v, "op", &nd->b))) {
            return st;
        }
        if ((st = ref_list(r, id, "args", true)) || (st = field(r, id, "attrs", GIR_JSON_OBJECT, false, &nd->attrs)))
            return st;
        return GIR_OK;
    case K_OP:
        if ((st = field(r, id, "name", GIR_JSON_STRING, true, &v)))
            return st;
        nd->name = gir_json_get_cstr(v);
        if (!nd->name || !*nd->name)
            return rvr_node_fail(r, GIR_E_SCHEMA, id, v, "name", "an Op needs a non-empty name");
        return field(r, id, "attrs", GIR_JSON_OBJECT, false, &nd->attrs);
    case K_CONST: return parse_const(r, id);
    case K_BIND: {
        if ((st = ref_field(r, id, "expr", &nd->a)) || (st = field(r, id, "binds", GIR_JSON_OBJECT, true, &v)))
            return st;
        nd->n_list = v->len;
        nd->list = gir_arena_alloc(&r->scratch, (v->len ? v->len : 1) * sizeof *nd->list);
        nd->keys = gir_arena_alloc(&r->scratch, (v->len ? v->len : 1) * sizeof *nd->keys);
        if (!nd->list || !nd->keys)
            return gir_nomem(r->err);
        for (size_t i = 0; i < v->len; i++) {
            const gir_json_member *m = &v->u.members[i];
            char where[96];
            snprintf(where, sizeof where, "binds/%.80s", m->key);
            nd->keys[i] = m->key;
            if ((st = ref(r, id, &m->value, where, &nd->list[i])))
                return st;
        }
        return GIR_OK;
    }
    case K_TUPLE: return ref_list(r, id, "fields", true);
    case K_LET:
        if ((st = ref_field(r, id, "variable", &nd->a)) || (st = ref_field(r, id, "value", &nd->b)) ||
            (st = ref_field(r, id, "body", &nd->c)))
            return st;
        return GIR_OK;
    case K_IF:
        if ((st = ref_field(r, id, "cond", &nd->a)) || (st = ref_field(r, id, "true_branch", &nd->b)) ||
            (st = ref_field(r, id, "false_branch", &nd->c)))
            return st;
        return GIR_OK;
    case K_TGI:
        if ((st = ref_field(r, id, "tuple_value", &nd->a)) || (st = field(r, id, "index", GIR_JSON_NUMBER, true, &v)))
            return st;
        if (!gir_json_get_i64(v, &nd->index) || nd->index < 0)
            return rvr_node_fail(r, GIR_E_SCHEMA, id, v, "index", "index must be a non-negative integer");
        return GIR_OK;
    case K_COUNT: break;
    }
    return GIR_OK;
}

typedef enum slot_class { S_EXPR, S_VAR, S_OP } slot_class;

/* The i-th reference of node id: its target, JSON pointer suffix and the
 * class of node it must be.  Returns false past the last one. */
static bool nth_ref(const rv_reader *r, int32_t id, size_t i, int32_t *to, char *where, size_t wn, slot_class *cls)
{
    const rnode *nd = &r->nodes[id];
    const char *f = NULL;
    *cls = S_EXPR;
    switch (nd->k) {
    case K_FUNCTION:
        if (i == 0) {
            *to = nd->a;
            f = "body";
        } else if (i - 1 < nd->n_list) {
            *to = nd->list[i - 1];
            snprintf(where, wn, "params/%zu", i - 1);
            *cls = S_VAR;
            return true;
        }
        break;
    case K_CALL:
        if (nd->b >= 0) {
            if (i == 0) {
                *to = nd->b;
                *cls = S_OP;
                f = "op";
                break;
            }
            i--;
        }
        if (i < nd->n_list) {
            *to = nd->list[i];
            snprintf(where, wn, "args/%zu", i);
            return true;
        }
        break;
    case K_BIND:
        if (i == 0) {
            *to = nd->a;
            f = "expr";
        } else if (i - 1 < nd->n_list) {
            *to = nd->list[i - 1];
            snprintf(where, wn, "binds/%.60s", nd->keys[i - 1]);
            return true;
        }
        break;
    case K_TUPLE:
        if (i < nd->n_list) {
            *to = nd->list[i];
            snprintf(where, wn, "fields/%zu", i);
            return true;
        }
        break;
    case K_LET:
        if (i < 3) {
            static const char *const names[] = { "variable", "value", "body" };
            *to = i == 0 ? nd->a : i == 1 ? nd->b : nd->c;
            *cls = i == 0 ? S_VAR : S_EXPR;
            f = names[i];
        }
        break;
    case K_IF:
        if (i < 3) {
            static const char *const names[] = { "cond", "true_branch", "false_branch" };
            *to = i == 0 ? nd->a : i == 1 ? nd->b : nd->c;
            f = names[i];
        }
        break;
    case K_TGI:
        if (i == 0) {
            *to = nd->a;
            f = "tuple_value";
        }
        break;
    default: break;
    }
    if (!f)
        return false;
    snprintf(where, wn, "%s", f);
    return true;
}

gir_status rvr_check_kinds(rv_reader *r)
{
    for (size_t id = 0; id < r->n; id++) {
        int32_t to;
        char where[96];
        slot_class cls;
        for (size_t i = 0; nth_ref(r, (int32_t)id, i, &to, where, sizeof where, &cls); i++) {
            kind tk = r->nodes[to].k;
            const char *want = NULL;
            if (cls == S_VAR && tk != K_VAR)
                want = "a Var";
            else if (cls == S_OP && tk != K_OP)
                want = "an Op";
            else if (cls == S_EXPR && (tk == K_OP || tk == K_FUNCTION))
                want = tk == K_OP ? "an expression (an Op is only a Call's op)"
                                  : "an expression (a Function can only be the root; nested functions are not "
                                    "supported)";
            if (want) {
                const gir_json *at = gir_json_get(r->nodes[id].j, where);
                return rvr_node_fail(r, GIR_E_SCHEMA, (int32_t)id, at, where, "%s refers to node %d, a %s, which is not %s",
                                     where, (int)to, kind_names[tk], want);
            }
        }
    }
    return GIR_OK;
}

bool rv_dfs_init(rv_dfs *d, size_t n)
{
    d->state = calloc(n + 1, 1);
    d->stack = malloc((n + 1) * sizeof *d->stack);
    d->next = malloc((n + 1) * sizeof *d->next);
    return d->state && d->stack && d->next;
}

void rv_dfs_free(rv_dfs *d)
{
    free(d->state);
    free(d->stack);
    free(d->next);
}

gir_status rv_dfs_walk(rv_dfs *d, int32_t start)
{
    if (d->state[start])
        return GIR_OK;
    size_t sp = 0;
    d->stack[sp] = start;
    d->next[sp++] = 0;
    d->state[start] = 1;
    while (sp > 0) {
        int32_t id = d->stack[sp - 1], to;
        gir_status st = d->succ(d->ctx, id, d->next[sp - 1]++, &to);
        if (st)
            return st;
        if (to == RV_DFS_SKIP)
            continue;
        if (to < 0) {
            if (d->done && (st = d->done(d->ctx, id)))
                return st;
            d->state[id] = 2;
            sp--;
            continue;
        }
        if (d->state[to] == 2)
            continue;
        if (d->state[to] == 1)
            return d->cycle(d->ctx, d->stack, sp, to);
        d->state[to] = 1;
        d->stack[sp] = to;
        d->next[sp++] = 0;
    }
    return GIR_OK;
}

static gir_status ref_succ(void *ctx, int32_t id, size_t k, int32_t *to)
{
    char where[96];
    slot_class cls;
    if (!nth_ref(ctx, id, k, to, where, sizeof where, &cls))
        *to = -1;
    return GIR_OK;
}

static gir_status ref_cycle(void *ctx, const int32_t *path, size_t depth, int32_t to)
{
    gir_buf text = GIR_BUF_INIT;
    size_t from = depth;
    while (from > 0 && path[from - 1] != to)
        from--;
    for (size_t i = from - 1; i < depth; i++)
        gir_buf_printf(&text, "%d -> ", (int)path[i]);
    gir_buf_printf(&text, "%d", (int)to);
    char *p = gir_buf_take(&text);
    gir_status st = rvr_node_fail(ctx, GIR_E_CYCLE, to, NULL, NULL, "part of a cycle: %s", p ? p : "?");
    free(p);
    return st;
}

gir_status rvr_check_cycles(rv_reader *r)
{
    rv_dfs d = { ref_succ, NULL, ref_cycle, r, NULL, NULL, NULL };
    gir_status st = rv_dfs_init(&d, r->n) ? GIR_OK : gir_nomem(r->err);
    for (size_t start = 0; start < r->n && st == GIR_OK; start++)
        st = rv_dfs_walk(&d, (int32_t)start);
    rv_dfs_free(&d);
    return st;
}

static gir_status bind_var(rv_reader *r, int32_t var, int32_t expr, int32_t by, const char *where)
{
    rnode *v = &r->nodes[var];
    if (v->bound_by >= 0)
        return rvr_node_fail(r, GIR_E_SCHEMA, by, gir_json_get(r->nodes[by].j, where), where,
                             "Var %d ('%s') is bound twice: also by node %d", (int)var, v->name, (int)v->bound_by);
    v->bound_to = expr;
    v->bound_by = by;
    return GIR_OK;
}

gir_status rvr_collect_bindings(rv_reader *r)
{
    gir_status st;
    for (size_t id = 0; id < r->n; id++) {
        rnode *nd = &r->nodes[id];
        if (nd->k == K_LET && (st = bind_var(r, nd->a, nd->b, (int32_t)id, "variable")))
            return st;
        if (nd->k != K_BIND)
            continue;
        for (size_t i = 0; i < nd->n_list; i++) {
            const char *key = nd->keys[i];
            char where[96];
            snprintf(where, sizeof where, "binds/%.80s", key);
            int64_t vid;
            if (!strncmp(key, "node_", 5) && gir_parse_i64(key + 5, &vid) && key[5] != '-' && key[5] != '+') {
                if (vid < 0 || (uint64_t)vid >= r->n || r->nodes[vid].k != K_VAR)
                    return rvr_node_fail(r, GIR_E_REFERENCE, (int32_t)id, NULL, NULL,
                                         "binds \"%s\", but node %lld is not a Var", key, (long long)vid);
                if ((st = bind_var(r, (int32_t)vid, nd->list[i], (int32_t)id, where)))
                    return st;
                continue;
            }
            bool found = false;
            for (size_t v = 0; v < r->n; v++) {
                if (r->nodes[v].k == K_VAR && !strcmp(r->nodes[v].name, key)) {
                    found = true;
                    if ((st = bind_var(r, (int32_t)v, nd->list[i], (int32_t)id, where)))
                        return st;
                }
            }
            if (!found)
                return rvr_node_fail(r, GIR_E_REFERENCE, (int32_t)id, NULL, NULL, "binds \"%s\", but no Var has that name",
                                     key);
        }
    }
    return GIR_OK;
}
