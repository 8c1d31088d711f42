/* Writing the graph IR as RelayViz JSON, to the letter of the seed:
 *   {"format": "relayviz", "version": [1, 0], "nodes": [...]}
 * with nodes in post order (every reference points back), the root
 * Function last: its params are the graph inputs followed by the weights
 * (unless they are embedded), its body the output or a Tuple of outputs.
 * Op nodes carry their call's Relay attributes; identical ones are shared.
 * Weights go to a companion TVM .params file, or inline as Const nodes with
 * the option embed-weights=1.  Floats are written in their shortest text
 * that reads back to the same bits. */
#include "relayviz.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/elem.h"

typedef struct writer {
    const gir_graph *g;
    gir_json_writer jw;
    gir_buf buf;          /* JSON text not yet written to the file */
    gir_outfile *file;
    int32_t next_id;
    int32_t *vid;         /* value -> node id of its expression (-1: none yet) */
    bool embed;
    bool nonfinite_strings;
    /* Op nodes already written: their compact text and id. */
    char **op_text;
    int32_t *op_id;
    size_t op_cap, op_n;
    gir_error *err;
    gir_status st;
} writer;

/* ---- output ------------------------------------------------------------------ */

static void drain(writer *w)
{
    if (w->st || w->buf.len < 65536)
        return;
    if (w->buf.failed) {
        w->st = gir_nomem(w->err);
        return;
    }
    w->st = gir_outfile_write(w->file, w->buf.data, w->buf.len, w->err);
    w->buf.len = 0;
}

/* Starts node object number w->next_id (one line in the file). */
static int32_t begin_node(writer *w, const char *kind)
{
    gir_jw_begin_object(&w->jw, false);
    gir_jw_key(&w->jw, "node_kind");
    gir_jw_string(&w->jw, kind);
    return w->next_id++;
}

static void end_node(writer *w)
{
    gir_jw_end_object(&w->jw);
    drain(w);
}

static void shape_json(gir_json_writer *jw, const gir_value *v)
{
    if (v->shape.rank < 0) {
        gir_jw_null(jw);
        return;
    }
    gir_jw_begin_array(jw, false);
    for (int i = 0; i < v->shape.rank; i++) {
        if (v->dim_names[i])
            gir_jw_string(jw, v->dim_names[i]);
        else
            gir_jw_int(jw, v->shape.dims[i] < 0 ? -1 : v->shape.dims[i]);
    }
    gir_jw_end_array(jw);
}

static void dtype_json(gir_json_writer *jw, gir_dtype dt)
{
    if (dt == GIR_DT_UNKNOWN)
        gir_jw_null(jw);
    else
        gir_jw_string(jw, gir_dtype_name(dt));
}

static int32_t write_var(writer *w, int32_t vi)
{
    const gir_value *v = w->g->values[vi];
    int32_t id = begin_node(w, "Var");
    gir_jw_key(&w->jw, "name");
    gir_jw_string(&w->jw, v->name);
    gir_jw_key(&w->jw, "dtype");
    dtype_json(&w->jw, v->dtype);
    gir_jw_key(&w->jw, "shape");
    shape_json(&w->jw, v);
    end_node(w);
    w->vid[vi] = id;
    return id;
}

/* One element of tensor data as a JSON number (or NaN string). */
static void element_json(writer *w, gir_dtype dt, const unsigned char *p)
{
    char num[48];
    double d;
    switch (dt) {
    case GIR_DT_F32:
    case GIR_DT_F64:
        d = gir_elem_as_double(p, dt, 0);
        if (!isfinite(d))
            break;
        if (dt == GIR_DT_F32)
            gir_fmt_float(num, (float)d, false);
        else
            gir_fmt_double(num, d, false);
        gir_jw_number_raw(&w->jw, num, strlen(num));
        return;
    case GIR_DT_BOOL: gir_jw_bool(&w->jw, *p != 0); return;
    case GIR_DT_I8: gir_jw_int(&w->jw, *(const int8_t *)p); return;
    case GIR_DT_I16: gir_jw_int(&w->jw, *(const int16_t *)p); return;
    case GIR_DT_I32: gir_jw_int(&w->jw, *(const int32_t *)p); return;
    case GIR_DT_I64: gir_jw_int(&w->jw, *(const int64_t *)p); return;
    case GIR_DT_U8: gir_jw_uint(&w->jw, *p); return;
    case GIR_DT_U16: gir_jw_uint(&w->jw, *(const uint16_t *)p); return;
    case GIR_DT_U32: gir_jw_uint(&w->jw, *(const uint32_t *)p); return;
    case GIR_DT_U64: gir_jw_uint(&w->jw, *(const uint64_t *)p); return;
    default: gir_jw_null(&w->jw); return;
    }
    /* Non-finite: checked before writing; only reached with the option. */
    gir_jw_string(&w->jw, isnan(d) ? "NaN" : d > 0 ? "Infinity" : "-Infinity");
}

static int32_t write_const(writer *w, int32_t vi)
{
    const gir_value *v = w->g->values[vi];
    gir_tensor *t = v->data;
    bool was_loaded = t->data != NULL;
    const void *data;
    gir_status st = gir_tensor_load(t, &data, w->err);
    if (st) {
        gir_err_node(w->err, v->name);
        w->st = st;
        return -1;
    }
    int32_t id = begin_node(w, "Const");
    gir_jw_key(&w->jw, "value");
    size_t esz = gir_dtype_size(t->dtype), n = esz ? (size_t)(t->nbytes / esz) : 0;
    if (t->shape.rank == 0) {
        element_json(w, t->dtype, data);
    } else {
        gir_jw_begin_object(&w->jw, false);
        gir_jw_key(&w->jw, "array_value");
        gir_jw_begin_array(&w->jw, false);
        for (size_t i = 0; i < n; i++) {
            element_json(w, t->dtype, (const unsigned char *)data + i * esz);
            if ((i & 4095) == 4095)
                drain(w);
        }
        gir_jw_end_array(&w->jw);
        gir_jw_key(&w->jw, "array_shape");
        gir_jw_begin_array(&w->jw, false);
        for (int i = 0; i < t->shape.rank; i++)
            gir_jw_int(&w->jw, t->shape.dims[i]);
        gir_jw_end_array(&w->jw);
        gir_jw_end_object(&w->jw);
    }
    gir_jw_key(&w->jw, "dtype");
    gir_jw_string(&w->jw, gir_dtype_name(t->dtype));
    end_node(w);
    if (!was_loaded)
        gir_tensor_unload(t);
    gir_progress_add(t->nbytes);
    w->vid[vi] = id;
    return id;
}

static int32_t write_scalar(writer *w, gir_dtype dt, double d)
{
    int32_t id = begin_node(w, "Const");
    gir_jw_key(&w->jw, "value");
    char num[48];
    if (dt == GIR_DT_F32) {
        gir_fmt_float(num, (float)d, false);
        gir_jw_number_raw(&w->jw, num, strlen(num));
    } else if (gir_dtype_is_float(dt)) {
        gir_fmt_double(num, d, false);
        gir_jw_number_raw(&w->jw, num, strlen(num));
    } else if (dt == GIR_DT_BOOL) {
        gir_jw_bool(&w->jw, d != 0);
    } else {
        gir_jw_int(&w->jw, (int64_t)d);
    }
    gir_jw_key(&w->jw, "dtype");
    gir_jw_string(&w->jw, gir_dtype_name(dt == GIR_DT_UNKNOWN ? GIR_DT_F32 : dt));
    end_node(w);
    return id;
}

/* The id of value vi's expression, writing its Const first if needed. */
static int32_t value_id(writer *w, int32_t vi)
{
    if (w->vid[vi] >= 0)
        return w->vid[vi];
    const gir_value *v = w->g->values[vi];
    if (v->data && (v->kind == GIR_VALUE_CONST || v->kind == GIR_VALUE_WEIGHT))
        return write_const(w, vi);
    w->st = gir_fail(w->err, GIR_E_INTERNAL, "value '%s' is used before it is computed", v->name);
    return -1;
}

/* ---- Op nodes ------------------------------------------------------------------- */

static void attrs_json(gir_json_writer *jw, const rv_wcall *c)
{
    gir_jw_begin_object(jw, false);
    for (size_t i = 0; i < c->n_attrs; i++) {
        const rv_wattr *a = &c->attrs[i];
        gir_jw_key(jw, a->key);
        switch (a->kind) {
        case RV_W_INT: gir_jw_int(jw, a->i); break;
        case RV_W_BOOL: gir_jw_bool(jw, a->i != 0); break;
        case RV_W_DOUBLE: gir_jw_double(jw, a->d); break;
        case RV_W_STRING: gir_jw_string(jw, a->s); break;
        case RV_W_NULL: gir_jw_null(jw); break;
        case RV_W_INTS:
            gir_jw_begin_array(jw, false);
            for (size_t k = 0; k < a->n; k++)
                gir_jw_int(jw, a->iv[k]);
            gir_jw_end_array(jw);
            break;
        case RV_W_PAIRS:
            gir_jw_begin_array(jw, false);
            for (size_t k = 0; k < a->n; k++) {
                gir_jw_begin_array(jw, false);
                gir_jw_int(jw, a->iv[2 * k]);
                gir_jw_int(jw, a->iv[2 * k + 1]);
                gir_jw_end_array(jw);
            }
            gir_jw_end_array(jw);
            break;
        case RV_W_JSON: {
            /* The verbatim JSON text of an opaque attribute. */
            gir_json_doc *d = NULL;
            if (gir_json_parse(a->s, strlen(a->s), NULL, &d, NULL) == GIR_OK)
                rv_json_emit(jw, gir_json_root(d));
            else
                gir_jw_string(jw, a->s);
            gir_json_doc_free(d);
            break;
        }
        }
    }
    gir_jw_end_object(jw);
}

/* The id of an Op node with c's name and attributes, writing it once. */
static int32_t op_node(writer *w, const rv_wcall *c)
{
    gir_buf key = GIR_BUF_INIT;
    gir_json_writer kw;
    gir_jw_init(&kw, &key, GIR_JSON_COMPACT);
    gir_jw_begin_array(&kw, false);
    gir_jw_string(&kw, c->op);
    attrs_json(&kw, c);
    gir_jw_end_array(&kw);
    bool ok = gir_jw_ok(&kw);
    gir_jw_free(&kw);
    char *text = ok ? gir_buf_take(&key) : NULL;
    gir_buf_free(&key);
    if (!text) {
        w->st = gir_nomem(w->err);
        return -1;
    }
    /* Distinct (operator, attributes) pairs are few: a linear search. */
    for (size_t i = 0; i < w->op_n; i++) {
        if (!strcmp(w->op_text[i], text)) {
            free(text);
            return w->op_id[i];
        }
    }
    size_t cap = w->op_cap, cap2 = w->op_cap;
    if (!GIR_GROW(w->op_text, cap, w->op_n + 1) || !GIR_GROW(w->op_id, cap2, w->op_n + 1)) {
        free(text);
        w->st = gir_nomem(w->err);
        return -1;
    }
    w->op_cap = cap < cap2 ? cap : cap2;
    int32_t id = begin_node(w, "Op");
    gir_jw_key(&w->jw, "name");
    gir_jw_string(&w->jw, c->op);
    gir_jw_key(&w->jw, "attrs");
    attrs_json(&w->jw, c);
    end_node(w);
    w->op_text[w->op_n] = text;
    w->op_id[w->op_n++] = id;
    return id;
}

/* ---- calls ---------------------------------------------------------------------- */

static int32_t tuple_node(writer *w, const int32_t *ids, size_t n)
{
    int32_t id = begin_node(w, "Tuple");
    gir_jw_key(&w->jw, "fields");
    gir_jw_begin_array(&w->jw, false);
    for (size_t i = 0; i < n; i++)
        gir_jw_int(&w->jw, ids[i]);
    gir_jw_end_array(&w->jw);
    end_node(w);
    return id;
}

static int32_t tgi_node(writer *w, int32_t tuple, size_t index)
{
    int32_t id = begin_node(w, "TupleGetItem");
    gir_jw_key(&w->jw, "tuple_value");
    gir_jw_int(&w->jw, tuple);
    gir_jw_key(&w->jw, "index");
    gir_jw_int(&w->jw, (int64_t)index);
    end_node(w);
    return id;
}

/* Writes the calls of node n (plan p); used[k] says which outputs are read. */
static void write_plan(writer *w, const gir_node *n, const rv_wplan *p, const bool *used)
{
    int32_t call_ids[4] = { -1, -1, -1, -1 };
    for (size_t ci = 0; ci < p->n_calls && !w->st; ci++) {
        const rv_wcall *c = &p->calls[ci];
        int32_t *args = malloc((c->n_args ? c->n_args : 1) * sizeof *args);
        if (!args) {
            w->st = gir_nomem(w->err);
            return;
        }
        for (size_t i = 0; i < c->n_args && !w->st; i++) {
            const rv_warg *a = &c->args[i];
            switch (a->kind) {
            case RV_ARG_INPUT: args[i] = value_id(w, n->in[a->k]); break;
            case RV_ARG_PREV: args[i] = call_ids[a->k]; break;
            case RV_ARG_PRODUCER_IN: {
                const gir_node *pn = w->g->nodes[w->g->values[n->in[a->k]]->producer];
                args[i] = value_id(w, pn->in[0]);
                break;
            }
            case RV_ARG_SCALAR: {
                const gir_value *x = gir_in(w->g, n, 0);
                args[i] = write_scalar(w, x ? x->dtype : GIR_DT_F32, a->d);
                break;
            }
            case RV_ARG_TUPLE: {
                int32_t *f = malloc(((size_t)a->n ? (size_t)a->n : 1) * sizeof *f);
                if (!f) {
                    w->st = gir_nomem(w->err);
                    break;
                }
                for (int k = 0; k < a->n && !w->st; k++)
                    f[k] = value_id(w, n->in[a->k + k]);
                if (!w->st)
                    args[i] = tuple_node(w, f, (size_t)a->n);
                free(f);
                break;
            }
            }
        }
        int32_t op = w->st ? -1 : op_node(w, c);
        if (!w->st) {
            call_ids[ci] = begin_node(w, "Call");
            gir_jw_key(&w->jw, "op");
            gir_jw_int(&w->jw, op);
            gir_jw_key(&w->jw, "args");
            gir_jw_begin_array(&w->jw, false);
            for (size_t i = 0; i < c->n_args; i++)
                gir_jw_int(&w->jw, args[i]);
            gir_jw_end_array(&w->jw);
            end_node(w);
        }
        free(args);
    }
    if (w->st)
        return;
    const rv_wcall *last = &p->calls[p->n_calls - 1];
    int32_t result = call_ids[p->n_calls - 1];
    if (!last->tuple_result) {
        w->vid[n->out[0]] = result;
        return;
    }
    for (size_t k = 0; k < n->n_out; k++)
        if (n->out[k] >= 0 && used[n->out[k]])
            w->vid[n->out[k]] = tgi_node(w, result, k);
}

/* ---- checks and order ----------------------------------------------------------------- */

typedef struct order_ctx {
    const gir_graph *g;
    size_t *order, count;
    gir_error *err;
} order_ctx;

/* Input k's producer. */
static gir_status producer_succ(void *ctx, int32_t id, size_t k, int32_t *to)
{
    const order_ctx *o = ctx;
    const gir_node *nd = o->g->nodes[id];
    const gir_value *v = k < nd->n_in ? gir_in(o->g, nd, k) : NULL;
    if (k >= nd->n_in)
        *to = -1;
    else
        *to = v && v->producer >= 0 ? v->producer : RV_DFS_SKIP;
    return GIR_OK;
}

static gir_status order_done(void *ctx, int32_t id)
{
    order_ctx *o = ctx;
    o->order[o->count++] = (size_t)id;
    return GIR_OK;
}

static gir_status order_cycle(void *ctx, const int32_t *path, size_t depth, int32_t to)
{
    const order_ctx *o = ctx;
    (void)path;
    (void)depth;
    return gir_fail(o->err, GIR_E_CYCLE, "the graph has a cycle through node '%s'", o->g->nodes[to]->name);
}

/* The nodes the outputs depend on, in post order: a depth-first walk from
 * each output in turn, inputs in order (so the order follows the graph's
 * structure, not the order its nodes happen to be stored in).  *n_order
 * is how many nodes are reached. */
static gir_status post_order(const gir_graph *g, size_t *order, size_t *n_order, gir_error *err)
{
    order_ctx o = { g, order, 0, err };
    rv_dfs d = { producer_succ, order_done, order_cycle, &o, NULL, NULL, NULL };
    gir_status st = rv_dfs_init(&d, g->n_nodes) ? GIR_OK : gir_nomem(err);
    for (size_t i = 0; i < g->n_outputs && !st; i++) {
        int32_t p = g->values[g->outputs[i]]->producer;
        if (p >= 0)
            st = rv_dfs_walk(&d, p);
    }
    rv_dfs_free(&d);
    *n_order = o.count;
    return st;
}

/* Values the program needs: from the outputs back through the plans. */
static void mark_needed(const gir_graph *g, const size_t *order, size_t n_order, const rv_wplan *plans,
                        bool *node_needed, bool *value_needed)
{
    for (size_t i = 0; i < g->n_outputs; i++)
        value_needed[g->outputs[i]] = true;
    for (size_t oi = n_order; oi-- > 0;) {
        size_t i = order[oi];
        const gir_node *n = g->nodes[i];
        bool need = false;
        for (size_t k = 0; k < n->n_out; k++)
            need |= n->out[k] >= 0 && value_needed[n->out[k]];
        node_needed[i] = need;
        if (!need)
            continue;
        const rv_wplan *p = &plans[i];
        for (size_t ci = 0; ci < p->n_calls; ci++) {
            const rv_wcall *c = &p->calls[ci];
            for (size_t a = 0; a < c->n_args; a++) {
                const rv_warg *x = &c->args[a];
                if (x->kind == RV_ARG_INPUT)
                    value_needed[n->in[x->k]] = true;
                else if (x->kind == RV_ARG_TUPLE)
                    for (int k = 0; k < x->n; k++)
                        value_needed[n->in[x->k + k]] = true;
                else if (x->kind == RV_ARG_PRODUCER_IN)
                    value_needed[g->nodes[g->values[n->in[x->k]]->producer]->in[0]] = true;
            }
        }
    }
}

/* What the file cannot carry in values: unknown dtypes of parameters,
 * float16 constants, non-finite numbers without the string option. */
static void check_values(const gir_graph *g, const bool *needed, bool embed, bool nonfinite_strings, gir_unsupported *u,
                         gir_error *err, gir_status *st)
{
    for (size_t i = 0; i < g->n_values && !*st; i++) {
        const gir_value *v = g->values[i];
        if (!needed[i] || v->producer >= 0)
            continue;
        bool as_const = v->data && (v->kind == GIR_VALUE_CONST || (v->kind == GIR_VALUE_WEIGHT && embed));
        if (!v->data && v->kind != GIR_VALUE_INPUT) {
            gir_unsupported_add_value(u, GIR_E_UNSUPPORTED, "a weight without data (read its params file)", v->name);
            continue;
        }
        if (!as_const)
            continue;
        gir_dtype dt = v->data->dtype;
        if (dt == GIR_DT_F16 || dt == GIR_DT_BF16) {
            char what[64];
            snprintf(what, sizeof what, "a %s constant (RelayViz Consts hold float32/64 and integers)",
                     gir_dtype_name(dt));
            gir_unsupported_add_value(u, GIR_E_UNSUPPORTED, what, v->name);
            continue;
        }
        if (nonfinite_strings || (dt != GIR_DT_F32 && dt != GIR_DT_F64))
            continue;
        bool loaded = v->data->data != NULL;
        const void *p;
        if ((*st = gir_tensor_load(v->data, &p, err)) != GIR_OK) {
            gir_err_node(err, v->name);
            return;
        }
        size_t esz = gir_dtype_size(dt), n = (size_t)(v->data->nbytes / esz);
        for (size_t k = 0; k < n; k++) {
            double d;
            if (dt == GIR_DT_F32) {
                float f;
                memcpy(&f, (const char *)p + 4 * k, 4);
                d = f;
            } else {
                memcpy(&d, (const char *)p + 8 * k, 8);
            }
            if (!isfinite(d)) {
                gir_unsupported_add_value(u, GIR_E_UNSUPPORTED,
                                    "a constant holding NaN or infinity (JSON has no such numbers; use the option "
                                    "nonfinite=string)",
                                    v->name);
                break;
            }
        }
        if (!loaded)
            gir_tensor_unload(v->data);
    }
}

/* ---- the whole write ---------------------------------------------------------------- */

static void ret_type_json(writer *w)
{
    const gir_graph *g = w->g;
    if (g->n_outputs > 1)
        gir_jw_begin_array(&w->jw, false);
    for (size_t i = 0; i < g->n_outputs; i++) {
        const gir_value *v = g->values[g->outputs[i]];
        gir_jw_begin_object(&w->jw, false);
        gir_jw_key(&w->jw, "dtype");
        dtype_json(&w->jw, v->dtype);
        gir_jw_key(&w->jw, "shape");
        shape_json(&w->jw, v);
        gir_jw_end_object(&w->jw);
    }
    if (g->n_outputs > 1)
        gir_jw_end_array(&w->jw);
}

/* Plans every node and checks the values the file needs, collecting what
 * cannot be written into u: what both gir_relayviz_plan and the write do.
 * order (n_order entries), plans, node_needed and value_needed are sized
 * for g by the caller. */
static gir_status check_all(const gir_graph *g, bool allow_opaque, bool embed, bool nonfinite_strings, size_t *order,
                            size_t *n_order, rv_wplan *plans, bool *node_needed, bool *value_needed, gir_unsupported *u,
                            gir_error *err)
{
    gir_status st = post_order(g, order, n_order, err);
    if (st)
        return st;
    for (size_t i = 0; i < g->n_nodes; i++)
        rv_plan_node(g, g->nodes[i], allow_opaque, &plans[i], u);
    if (gir_unsupported_count(u)) {
        /* Values are checked too, so that one error lists everything. */
        for (size_t i = 0; i < g->n_values; i++)
            value_needed[i] = true;
    } else {
        mark_needed(g, order, *n_order, plans, node_needed, value_needed);
    }
    check_values(g, value_needed, embed, nonfinite_strings, u, err, &st);
    return st;
}

gir_status gir_relayviz_plan(const gir_graph *g, const gir_options *opts, gir_unsupported *u, gir_error *err)
{
    const char *nf = gir_options_get(opts, "nonfinite");
    size_t n = g->n_nodes ? g->n_nodes : 1, n_order = 0;
    size_t *order = malloc(n * sizeof *order);
    rv_wplan *plans = calloc(n, sizeof *plans);
    bool *node_needed = calloc(n, sizeof *node_needed);
    bool *value_needed = calloc(g->n_values + 1, sizeof *value_needed);
    gir_status st = GIR_OK;
    if (!order || !plans || !node_needed || !value_needed)
        st = gir_nomem(err);
    else
        st = check_all(g, gir_options_flag(opts, "allow-opaque"), gir_options_flag(opts, "embed-weights"),
                       nf && !strcmp(nf, "string"), order, &n_order, plans, node_needed, value_needed, u, err);
    free(order);
    free(plans);
    free(node_needed);
    free(value_needed);
    return st;
}

gir_status gir_relayviz_write(const gir_graph *g, const char *path, const gir_options *opts, gir_error *err)
{
    writer w = { .g = g, .err = err, .buf = GIR_BUF_INIT };
    w.embed = gir_options_flag(opts, "embed-weights");
    const char *nf = gir_options_get(opts, "nonfinite");
    if (nf && strcmp(nf, "string") != 0 && strcmp(nf, "error") != 0)
        return gir_fail(err, GIR_E_ARGUMENT, "option nonfinite=%s: expected error or string", nf);
    w.nonfinite_strings = nf && !strcmp(nf, "string");
    bool allow_opaque = gir_options_flag(opts, "allow-opaque"), force = gir_options_flag(opts, "force");
    if (g->n_outputs == 0)
        return gir_fail(err, GIR_E_UNSUPPORTED, "the graph has no outputs: a RelayViz Function needs a body");

    size_t n = g->n_nodes;
    size_t *order = malloc((n ? n : 1) * sizeof *order);
    rv_wplan *plans = calloc(n ? n : 1, sizeof *plans);
    bool *node_needed = calloc(n ? n : 1, sizeof *node_needed);
    bool *value_needed = calloc(g->n_values + 1, sizeof *value_needed);
    bool *is_param = calloc(g->n_values + 1, sizeof *is_param);
    int32_t *params = malloc((g->n_values + 1) * sizeof *params);
    w.vid = malloc((g->n_values + 1) * sizeof *w.vid);
    gir_unsupported *u = gir_unsupported_new();
    gir_outfile *pfile = NULL;
    char *ppath = NULL;
    size_t n_params = 0, n_weights = 0, n_order = 0;
    gir_status st = GIR_OK;
    if (!order || !plans || !node_needed || !value_needed || !is_param || !params || !w.vid || !u) {
        st = gir_nomem(err);
        goto out;
    }
    memset(w.vid, 0xff, (g->n_values + 1) * sizeof *w.vid);
    st = check_all(g, allow_opaque, w.embed, w.nonfinite_strings, order, &n_order, plans, node_needed, value_needed, u,
                   err);
    if (st)
        goto out;
    if (gir_unsupported_count(u)) {
        st = gir_unsupported_fail(u, "relayviz", err);
        goto out;
    }

    /* Function params: the inputs, then (not embedded) weights by first use. */
    for (size_t i = 0; i < g->n_inputs; i++) {
        if (!is_param[g->inputs[i]]) {
            is_param[g->inputs[i]] = true;
            params[n_params++] = g->inputs[i];
        }
    }
    if (!w.embed) {
        for (size_t oi = 0; oi < n_order; oi++) {
            const gir_node *nd = g->nodes[order[oi]];
            if (!node_needed[order[oi]])
                continue;
            for (size_t k = 0; k < nd->n_in; k++) {
                int32_t vi = nd->in[k];
                /* Inputs a plan skips (an absorbed Unsqueeze) are not read. */
                if (vi < 0 || !value_needed[vi] || is_param[vi])
                    continue;
                const gir_value *v = g->values[vi];
                if (v->kind == GIR_VALUE_WEIGHT && v->producer < 0) {
                    is_param[vi] = true;
                    params[n_params++] = vi;
                    n_weights++;
                }
            }
        }
        for (size_t i = 0; i < g->n_outputs; i++) {
            int32_t vi = g->outputs[i];
            if (!is_param[vi] && g->values[vi]->kind == GIR_VALUE_WEIGHT && g->values[vi]->producer < 0) {
                is_param[vi] = true;
                params[n_params++] = vi;
                n_weights++;
            }
        }
    }

    /* Both outputs are opened first: an existing one stops everything. */
    if ((st = gir_outfile_open(path, force, &w.file, err)))
        goto out;
    if (n_weights) {
        const char *popt = gir_options_get(opts, "params");
        ppath = popt ? gir_strdupf("%s", popt) : gir_relayviz_params_path(path);
        if (!ppath) {
            st = gir_nomem(err);
            goto out;
        }
        if (!strcmp(ppath, path)) {
            st = gir_fail(err, GIR_E_ARGUMENT, "the params file would overwrite the model (%s)", path);
            goto out;
        }
        if ((st = gir_outfile_open(ppath, force, &pfile, err)))
            goto out;
    }

    gir_jw_init(&w.jw, &w.buf, GIR_JSON_PRETTY);
    gir_jw_begin_object(&w.jw, true);
    gir_jw_key(&w.jw, "format");
    gir_jw_string(&w.jw, "relayviz");
    gir_jw_key(&w.jw, "version");
    gir_jw_begin_array(&w.jw, false);
    gir_jw_int(&w.jw, 1);
    gir_jw_int(&w.jw, 0);
    gir_jw_end_array(&w.jw);
    gir_jw_key(&w.jw, "nodes");
    gir_jw_begin_array(&w.jw, true);
    int32_t *param_ids = malloc((n_params ? n_params : 1) * sizeof *param_ids);
    if (!param_ids) {
        st = gir_nomem(err);
        goto out_json;
    }
    for (size_t i = 0; i < n_params; i++)
        param_ids[i] = write_var(&w, params[i]);
    for (size_t oi = 0; oi < n_order && !w.st; oi++)
        if (node_needed[order[oi]])
            write_plan(&w, g->nodes[order[oi]], &plans[order[oi]], value_needed);
    int32_t body = -1;
    if (!w.st) {
        if (g->n_outputs == 1) {
            body = value_id(&w, g->outputs[0]);
        } else {
            int32_t *f = malloc(g->n_outputs * sizeof *f);
            if (!f) {
                w.st = gir_nomem(err);
            } else {
                for (size_t i = 0; i < g->n_outputs && !w.st; i++)
                    f[i] = value_id(&w, g->outputs[i]);
                if (!w.st)
                    body = tuple_node(&w, f, g->n_outputs);
                free(f);
            }
        }
    }
    if (!w.st) {
        begin_node(&w, "Function");
        gir_jw_key(&w.jw, "body");
        gir_jw_int(&w.jw, body);
        gir_jw_key(&w.jw, "params");
        gir_jw_begin_array(&w.jw, false);
        for (size_t i = 0; i < n_params; i++)
            gir_jw_int(&w.jw, param_ids[i]);
        gir_jw_end_array(&w.jw);
        gir_jw_key(&w.jw, "ret_type");
        ret_type_json(&w);
        gir_jw_end_object(&w.jw);
        gir_jw_end_array(&w.jw);
        gir_jw_end_object(&w.jw);
        gir_buf_putc(&w.buf, '\n');
    }
    free(param_ids);
    st = w.st;
    if (!st && !gir_jw_ok(&w.jw))
        st = gir_fail(err, w.buf.failed ? GIR_E_NOMEM : GIR_E_INTERNAL, "the JSON writer failed");
    if (!st)
        st = gir_outfile_write(w.file, w.buf.data, w.buf.len, err);
    if (!st && pfile) {
        const char **names = malloc(n_weights * sizeof *names);
        gir_tensor **tensors = malloc(n_weights * sizeof *tensors);
        if (!names || !tensors) {
            st = gir_nomem(err);
        } else {
            for (size_t i = 0, k = 0; i < n_params; i++) {
                const gir_value *v = g->values[params[i]];
                if (v->kind == GIR_VALUE_WEIGHT && v->data && k < n_weights) {
                    names[k] = v->name;
                    tensors[k++] = v->data;
                }
            }
            st = rv_params_write(pfile, names, tensors, n_weights, err);
        }
        free(names);
        free(tensors);
    }
out_json:
    gir_jw_free(&w.jw);
    if (!st) {
        /* params, then the model, as one unit */
        gir_outfile *both[2] = { pfile, w.file };
        st = pfile ? gir_outfile_commit_all(both, 2, err) : gir_outfile_commit(w.file, err);
        pfile = w.file = NULL;
    }
out:
    if (pfile)
        gir_outfile_abort(pfile);
    if (w.file)
        gir_outfile_abort(w.file);
    for (size_t i = 0; plans && i < n; i++)
        rv_plan_free(&plans[i]);
    for (size_t i = 0; i < w.op_n; i++)
        free(w.op_text[i]);
    free(w.op_text);
    free(w.op_id);
    gir_buf_free(&w.buf);
    gir_unsupported_free(u);
    free(order);
    free(plans);
    free(node_needed);
    free(value_needed);
    free(is_param);
    free(params);
    free(w.vid);
    free(ppath);
    return st;
}
