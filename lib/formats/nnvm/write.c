/* Writing the IR as NNVM, MXNet or TVM graph JSON in dmlc::JSONWriter's
 * layout, plus the companion .params (TVM list beside nnvm/tvm, MXNet V2
 * list beside mxnet), streamed one tensor at a time. */
#include "ops.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { IT_FN = 0, IT_VAR, IT_XV };

typedef struct item {
    int kind;
    int32_t id;
} item;

typedef struct emit {
    nn_writer *w;
    item *order; /* JSON nodes in order */
    size_t n_order;
    int32_t *jid_fn, *jid_val, *jid_xv; /* JSON node id, -1 not yet, -2 on the stack */
    bool *need_var;
    uint32_t *row; /* node_row_ptr */
    bool relay;
} emit;

static const char *meta_s(const gir_attrs *m, const char *key)
{
    const gir_attr *a = gir_attrs_find(m, key);
    return a && a->type == GIR_ATTR_STRING ? a->u.s : NULL;
}

/* ---- order ---------------------------------------------------------------- */

/* The item a reference leads to. */
static item ref_item(const nn_writer *w, const nn_fref *r)
{
    if (r->xvar >= 0)
        return (item){ IT_XV, r->xvar };
    if (w->vprod[r->value] >= 0)
        return (item){ IT_FN, w->vprod[r->value] };
    return (item){ IT_VAR, r->value };
}

static int32_t *jid(emit *e, item it)
{
    return it.kind == IT_FN ? &e->jid_fn[it.id] : it.kind == IT_VAR ? &e->jid_val[it.id] : &e->jid_xv[it.id];
}

typedef struct keyed {
    int64_t key;
    item it;
} keyed;

/* Sorts ks[0..n) by key (each key < range), stable: a counting sort, linear
 * in n + range, whose order of equal keys is fixed (qsort's is not). */
static gir_status sort_keyed(keyed *ks, size_t n, size_t range, gir_error *err)
{
    size_t *pos = calloc(range + 1, sizeof *pos);
    keyed *out = malloc((n ? n : 1) * sizeof *out);
    if (!pos || !out) {
        free(pos);
        free(out);
        return gir_nomem(err);
    }
    for (size_t i = 0; i < n; i++)
        pos[(size_t)ks[i].key + 1]++;
    for (size_t k = 0; k < range; k++)
        pos[k + 1] += pos[k];
    for (size_t i = 0; i < n; i++)
        out[pos[(size_t)ks[i].key]++] = ks[i];
    memcpy(ks, out, n * sizeof *ks);
    free(pos);
    free(out);
    return GIR_OK;
}

/* Post-order from each item in value order: a graph read from a file comes
 * back in the file's node order. */
static gir_status order_items(emit *e, gir_error *err)
{
    nn_writer *w = e->w;
    const gir_graph *g = w->g;
    size_t n_items = w->n_fn + g->n_values;
    keyed *ks = malloc((n_items ? n_items : 1) * sizeof *ks);
    struct frame {
        item it;
        size_t next;
    } *stack = malloc((n_items + w->n_xv + 1) * sizeof *stack);
    e->order = malloc((n_items + w->n_xv + 1) * sizeof *e->order);
    if (!ks || !stack || !e->order) {
        free(ks);
        free(stack);
        return gir_nomem(err);
    }
    size_t nk = 0;
    for (size_t f = 0; f < w->n_fn; f++) {
        const gir_node *n = g->nodes[w->fn[f].node];
        int64_t key = INT64_MAX;
        for (size_t k = 0; k < n->n_out; k++)
            if (n->out[k] >= 0 && n->out[k] < key)
                key = n->out[k];
        ks[nk++] = (keyed){ key == INT64_MAX ? (int64_t)g->n_values + (int64_t)f : key, { IT_FN, (int32_t)f } };
    }
    for (size_t v = 0; v < g->n_values; v++)
        if (e->need_var[v])
            ks[nk++] = (keyed){ (int64_t)v, { IT_VAR, (int32_t)v } };
    gir_status st = sort_keyed(ks, nk, g->n_values + w->n_fn, err);
    for (size_t s = 0; s < nk && !st; s++) {
        if (*jid(e, ks[s].it) != -1)
            continue;
        size_t sp = 0;
        stack[sp++] = (struct frame){ ks[s].it, 0 };
        *jid(e, ks[s].it) = -2;
        while (sp && !st) {
            struct frame *fr = &stack[sp - 1];
            if (fr->it.kind == IT_FN && fr->next < w->fn[fr->it.id].n_in) {
                item in = ref_item(w, &w->fn[fr->it.id].in[fr->next++]);
                int32_t *j = jid(e, in);
                if (*j == -2) {
                    st = gir_fail(err, GIR_E_CYCLE, "the graph has a cycle through node '%s'",
                                  w->fn[fr->it.id].name);
                    break;
                }
                if (*j == -1) {
                    *j = -2;
                    stack[sp++] = (struct frame){ in, 0 };
                }
                continue;
            }
            *jid(e, fr->it) = (int32_t)e->n_order;
            e->order[e->n_order++] = fr->it;
            sp--;
        }
    }
    free(ks);
    free(stack);
    return st;
}

/* ---- JSON ------------------------------------------------------------------- */

typedef struct kvp {
    const char *k, *v;
} kvp;

static int cmp_kvp(const void *a, const void *b)
{
    return strcmp(((const kvp *)a)->k, ((const kvp *)b)->k);
}

static gir_status write_attrs(gir_json_writer *jw, const char **keys, const char **vals, size_t n, bool keep_order,
                              gir_error *err)
{
    if (!n)
        return GIR_OK;
    kvp *p = malloc(n * sizeof *p);
    if (!p)
        return gir_nomem(err);
    for (size_t i = 0; i < n; i++)
        p[i] = (kvp){ keys[i], vals[i] };
    bool sorted = true;
    for (size_t i = 1; i < n && sorted && !keep_order; i++)
        sorted = strcmp(p[i - 1].k, p[i].k) <= 0;
    if (!sorted) /* keys of a graph read from such a file come sorted */
        qsort(p, n, sizeof *p, cmp_kvp);
    gir_jw_key(jw, "attrs");
    gir_jw_begin_object(jw, n > 1);
    for (size_t i = 0; i < n; i++) {
        gir_jw_key(jw, p[i].k);
        gir_jw_string(jw, p[i].v);
    }
    gir_jw_end_object(jw);
    free(p);
    return GIR_OK;
}

static void write_entry(gir_json_writer *jw, uint32_t node, uint32_t index, int64_t version, bool multi)
{
    gir_jw_begin_array(jw, multi);
    gir_jw_uint(jw, node);
    gir_jw_uint(jw, index);
    gir_jw_int(jw, version);
    gir_jw_end_array(jw);
}

static void entry_of(const emit *e, const nn_fref *r, uint32_t *node, uint32_t *index)
{
    const nn_writer *w = e->w;
    if (r->xvar >= 0) {
        *node = (uint32_t)e->jid_xv[r->xvar];
        *index = 0;
    } else if (w->vprod[r->value] >= 0) {
        *node = (uint32_t)e->jid_fn[w->vprod[r->value]];
        *index = w->vidx[r->value];
    } else {
        *node = (uint32_t)e->jid_val[r->value];
        *index = 0;
    }
}

/* A variable's attributes: its value's "<pfx>.attrs" meta. */
static gir_status var_attrs(const emit *e, const gir_value *v, const char ***keys, const char ***vals, size_t *n,
                            gir_error *err)
{
    nn_writer *w = e->w;
    size_t np;
    const char *const *pairs = nn_meta_pairs(&v->meta, nn_meta_key(w->fl, NN_MK_ATTRS), &np);
    *n = 0;
    *keys = *vals = NULL;
    if (!np)
        return GIR_OK;
    *keys = gir_arena_alloc(&w->arena, np / 2 * sizeof **keys);
    *vals = gir_arena_alloc(&w->arena, np / 2 * sizeof **vals);
    if (!*keys || !*vals)
        return gir_nomem(err);
    for (size_t i = 0; i + 1 < np; i += 2) {
        (*keys)[*n] = pairs[i];
        (*vals)[(*n)++] = pairs[i + 1];
    }
    return GIR_OK;
}

/* MXNet and NNVM symbol files record no shapes but for the __shape__ hint
 * of a variable (0 = unknown, as their legacy shapes say): a graph input
 * whose rank is known gets one, unless it already carries its own, so its
 * shape survives the trip.  The reader takes it back.  A graph read from
 * the same flavour keeps exactly the variable attributes it had (same-format
 * round trips stay exact); executor JSON has its own shape table. */
static gir_status input_shape_hint(const emit *e, const gir_value *v, const char ***keys, const char ***vals,
                                   size_t *n, gir_error *err)
{
    nn_writer *w = e->w;
    if ((w->fl != NN_MXNET && w->fl != NN_NNVM) || v->kind != GIR_VALUE_INPUT || v->shape.rank < 1)
        return GIR_OK;
    const char *src = meta_s(&w->g->meta, "source.format");
    if (src && strcmp(src, w->fl == NN_MXNET ? "mxnet" : "nnvm") == 0)
        return GIR_OK;
    for (size_t i = 0; i < *n; i++)
        if (strcmp((*keys)[i], "__shape__") == 0)
            return GIR_OK;
    int64_t dims[GIR_MAX_RANK];
    for (int d = 0; d < v->shape.rank; d++)
        dims[d] = v->shape.dims[d] < 0 ? 0 : v->shape.dims[d];
    gir_buf text = GIR_BUF_INIT;
    nn_fmt_tuple(&text, dims, (size_t)v->shape.rank);
    const char *val = text.failed ? NULL : gir_arena_strndup(&w->arena, text.data, text.len);
    gir_buf_free(&text);
    const char **nk = gir_arena_alloc(&w->arena, (*n + 1) * sizeof *nk);
    const char **nv = gir_arena_alloc(&w->arena, (*n + 1) * sizeof *nv);
    if (!nk || !nv || !val)
        return gir_nomem(err);
    for (size_t i = 0; i < *n; i++) {
        nk[i] = (*keys)[i];
        nv[i] = (*vals)[i];
    }
    nk[*n] = "__shape__";
    nv[*n] = val;
    (*n)++;
    *keys = nk;
    *vals = nv;
    return GIR_OK;
}

static gir_status write_node(emit *e, gir_json_writer *jw, item it, gir_error *err)
{
    nn_writer *w = e->w;
    gir_jw_begin_object(jw, true);
    if (it.kind == IT_FN) {
        const nn_fnode *f = &w->fn[it.id];
        gir_jw_key(jw, "op");
        gir_jw_string(jw, f->op);
        gir_jw_key(jw, "name");
        gir_jw_string(jw, f->name);
        TRY(write_attrs(jw, f->keys, f->vals, f->n_attrs, f->keep_order, err));
        gir_jw_key(jw, "inputs");
        gir_jw_begin_array(jw, e->relay || f->n_in > 10);
        for (size_t i = 0; i < f->n_in; i++) {
            uint32_t node, index;
            entry_of(e, &f->in[i], &node, &index);
            write_entry(jw, node, index, f->versions ? f->versions[i] : 0, e->relay);
        }
        gir_jw_end_array(jw);
    } else {
        const char *name;
        const char **keys = NULL, **vals = NULL;
        size_t n = 0;
        if (it.kind == IT_VAR) {
            const gir_value *v = w->g->values[it.id];
            name = v->name;
            TRY(var_attrs(e, v, &keys, &vals, &n, err));
            TRY(input_shape_hint(e, v, &keys, &vals, &n, err));
        } else {
            const nn_xvar *x = &w->xv[it.id];
            name = x->name;
            keys = x->keys;
            vals = x->vals;
            n = x->n_attrs;
        }
        gir_jw_key(jw, "op");
        gir_jw_string(jw, "null");
        gir_jw_key(jw, "name");
        gir_jw_string(jw, name);
        TRY(write_attrs(jw, keys, vals, n, false, err));
        gir_jw_key(jw, "inputs");
        gir_jw_begin_array(jw, false);
        gir_jw_end_array(jw);
    }
    gir_jw_end_object(jw);
    return GIR_OK;
}

static void write_u32_array(gir_json_writer *jw, const uint32_t *v, size_t n)
{
    gir_jw_begin_array(jw, n > 10);
    for (size_t i = 0; i < n; i++)
        gir_jw_uint(jw, v[i]);
    gir_jw_end_array(jw);
}

/* A graph attribute kept verbatim by the reader ("<pfx>.graph_attr.K"). */
static gir_status write_kept_gattr(emit *e, gir_json_writer *jw, const char *key, gir_error *err)
{
    char *mk = gir_strdupf("%s.graph_attr.%s", e->w->pfx, key);
    if (!mk)
        return gir_nomem(err);
    const char *text = meta_s(&e->w->g->meta, mk);
    free(mk);
    if (!text)
        return GIR_OK;
    gir_json_doc *d;
    TRY(gir_json_parse(text, strlen(text), NULL, &d, err));
    const gir_json *v = gir_json_root(d);
    gir_jw_key(jw, key);
    if (v->type == GIR_JSON_ARRAY && v->len == 2) {
        gir_jw_begin_array(jw, e->relay);
        nn_emit_json(jw, &v->u.items[0]);
        nn_emit_json(jw, &v->u.items[1]);
        gir_jw_end_array(jw);
    } else {
        nn_emit_json(jw, v);
    }
    gir_json_doc_free(d);
    return GIR_OK;
}

/* ---- TVM per-entry attributes ---------------------------------------------------- */

typedef struct tvm_entry {
    const gir_value *v;
} tvm_entry;

static gir_status tvm_collect(emit *e, tvm_entry **out, size_t *n_out, gir_error *err)
{
    nn_writer *w = e->w;
    size_t n = e->row[e->n_order];
    tvm_entry *t = calloc(n ? n : 1, sizeof *t);
    if (!t)
        return gir_nomem(err);
    gir_unsupported *u = gir_unsupported_new();
    if (!u) {
        free(t);
        return gir_nomem(err);
    }
    for (size_t j = 0; j < e->n_order; j++) {
        item it = e->order[j];
        size_t base = e->row[j];
        if (it.kind == IT_VAR) {
            t[base].v = w->g->values[it.id];
        } else if (it.kind == IT_FN) {
            const gir_node *nd = w->g->nodes[w->fn[it.id].node];
            for (size_t k = 0; k < e->row[j + 1] - base; k++)
                t[base + k].v = k < nd->n_out && nd->out[k] >= 0 ? w->g->values[nd->out[k]] : NULL;
        }
    }
    for (size_t i = 0; i < n; i++) {
        const gir_value *v = t[i].v;
        if (!v) {
            gir_unsupported_add(u, GIR_E_UNSUPPORTED, "an output without a value (the executor needs its shape)", NULL);
            continue;
        }
        if (v->shape.rank < 0 || !gir_shape_is_known(&v->shape))
            gir_unsupported_add_value(u, GIR_E_UNSUPPORTED,
                                "a tensor of unknown shape (the graph executor needs every shape)", v->name);
        if (!gir_dltype_name(v->dtype) && !meta_s(&v->meta, "tvm.dltype"))
            gir_unsupported_add_value(u, GIR_E_UNSUPPORTED, "a tensor of unknown element type", v->name);
    }
    gir_status st = gir_unsupported_count(u) ? gir_unsupported_fail(u, "tvm", err) : GIR_OK;
    gir_unsupported_free(u);
    if (st) {
        free(t);
        return st;
    }
    *out = t;
    *n_out = n;
    return GIR_OK;
}

static bool any_meta(const tvm_entry *t, size_t n, const char *key)
{
    for (size_t i = 0; i < n; i++)
        if (gir_attrs_find(&t[i].v->meta, key))
            return true;
    return false;
}

static gir_status write_tvm_gattr(emit *e, gir_json_writer *jw, const char *key, const tvm_entry *t, size_t n,
                                  gir_error *err)
{
    bool relay = e->relay;
    if (strcmp(key, "shape") == 0) {
        gir_jw_key(jw, key);
        gir_jw_begin_array(jw, relay);
        gir_jw_string(jw, "list_shape");
        gir_jw_begin_array(jw, true);
        for (size_t i = 0; i < n; i++) {
            const gir_shape *s = &t[i].v->shape;
            gir_jw_begin_array(jw, s->rank > 10);
            for (int d = 0; d < s->rank; d++)
                gir_jw_int(jw, s->dims[d]);
            gir_jw_end_array(jw);
        }
        gir_jw_end_array(jw);
        gir_jw_end_array(jw);
    } else if (strcmp(key, "dltype") == 0 || strcmp(key, "storage_scope") == 0) {
        bool dl = key[1] == 'l';
        gir_jw_key(jw, key);
        gir_jw_begin_array(jw, relay);
        gir_jw_string(jw, "list_str");
        gir_jw_begin_array(jw, true);
        for (size_t i = 0; i < n; i++) {
            const gir_value *v = t[i].v;
            const char *s = dl ? meta_s(&v->meta, "tvm.dltype") : meta_s(&v->meta, "tvm.storage_scope");
            if (!s)
                s = dl ? gir_dltype_name(v->dtype) : "global";
            gir_jw_string(jw, s);
        }
        gir_jw_end_array(jw);
        gir_jw_end_array(jw);
    } else if (strcmp(key, "storage_id") == 0 || strcmp(key, "device_index") == 0 || strcmp(key, "dtype") == 0) {
        int64_t *vals = malloc((n ? n : 1) * sizeof *vals);
        if (!vals)
            return gir_nomem(err);
        int64_t next = 0;
        if (key[1] == 't' && key[2] == 'o') { /* storage_id: keep the plan, number new entries after it */
            for (size_t i = 0; i < n; i++) {
                int64_t x = gir_attrs_get_int(&t[i].v->meta, "tvm.storage_id", -1);
                if (x >= next)
                    next = x + 1;
            }
        }
        for (size_t i = 0; i < n; i++) {
            const gir_value *v = t[i].v;
            if (key[1] == 't' && key[2] == 'o') {
                const gir_attr *a = gir_attrs_find(&v->meta, "tvm.storage_id");
                vals[i] = a && a->type == GIR_ATTR_INT ? a->u.i : next++;
            } else if (key[1] == 'e') {
                vals[i] = gir_attrs_get_int(&v->meta, "tvm.device_index", 1);
            } else {
                const gir_attr *a = gir_attrs_find(&v->meta, "tvm.dtype");
                vals[i] = a && a->type == GIR_ATTR_INT ? a->u.i : gir_nnvm_dtype_code(v->dtype);
            }
        }
        gir_jw_key(jw, key);
        gir_jw_begin_array(jw, relay);
        gir_jw_string(jw, "list_int");
        gir_jw_begin_array(jw, n > 10);
        for (size_t i = 0; i < n; i++)
            gir_jw_int(jw, vals[i]);
        gir_jw_end_array(jw);
        gir_jw_end_array(jw);
        free(vals);
    } else {
        return write_kept_gattr(e, jw, key, err);
    }
    return GIR_OK;
}

/* ---- NNVM per-entry shapes and types ---------------------------------------------- */

/* The shape of every entry, when all are known: outputs the IR has, and
 * the hidden ones NNVM counts (batch_norm's mean and variance, dropout's
 * mask) derived from them. */
static bool nnvm_entry_shapes(emit *e, gir_shape **out, gir_dtype **types)
{
    nn_writer *w = e->w;
    size_t n = e->row[e->n_order];
    gir_shape *s = calloc(n ? n : 1, sizeof *s);
    gir_dtype *t = calloc(n ? n : 1, sizeof *t);
    if (!s || !t) {
        free(s);
        free(t);
        return false;
    }
    bool ok = true;
    for (size_t j = 0; j < e->n_order && ok; j++) {
        item it = e->order[j];
        size_t base = e->row[j], cnt = e->row[j + 1] - base;
        if (it.kind == IT_XV) {
            ok = false;
            break;
        }
        if (it.kind == IT_VAR) {
            s[base] = w->g->values[it.id]->shape;
            t[base] = w->g->values[it.id]->dtype;
            continue;
        }
        const nn_fnode *f = &w->fn[it.id];
        const gir_node *nd = w->g->nodes[f->node];
        for (size_t k = 0; k < cnt; k++) {
            const gir_value *v = k < nd->n_out && nd->out[k] >= 0 ? w->g->values[nd->out[k]] : NULL;
            if (v) {
                s[base + k] = v->shape;
                t[base + k] = v->dtype;
            } else if (nd->op == GIR_OP_BatchNormalization && nd->n_in > 1 && nd->in[1] >= 0) {
                s[base + k] = w->g->values[nd->in[1]]->shape;
                t[base + k] = t[base];
            } else if (nd->op == GIR_OP_Dropout) {
                s[base + k] = s[base];
                t[base + k] = t[base];
            } else {
                s[base + k].rank = -1;
            }
        }
    }
    for (size_t i = 0; i < n && ok; i++) {
        ok = s[i].rank > 0 && gir_shape_is_known(&s[i]) && gir_nnvm_dtype_code(t[i]) >= 0;
        for (int d = 0; ok && d < s[i].rank; d++)
            ok = s[i].dims[d] > 0;
    }
    if (!ok) {
        free(s);
        free(t);
        return false;
    }
    *out = s;
    *types = t;
    return true;
}

static void write_nnvm_shapes(emit *e, gir_json_writer *jw, const gir_shape *s, const gir_dtype *t)
{
    size_t n = e->row[e->n_order];
    gir_jw_key(jw, "shape");
    gir_jw_begin_array(jw, false);
    gir_jw_string(jw, "list_shape");
    gir_jw_begin_array(jw, true);
    for (size_t i = 0; i < n; i++) {
        gir_jw_begin_array(jw, s[i].rank > 10);
        for (int d = 0; d < s[i].rank; d++)
            gir_jw_int(jw, s[i].dims[d]);
        gir_jw_end_array(jw);
    }
    gir_jw_end_array(jw);
    gir_jw_end_array(jw);
    gir_jw_key(jw, "dtype");
    gir_jw_begin_array(jw, false);
    gir_jw_string(jw, "list_int");
    gir_jw_begin_array(jw, n > 10);
    for (size_t i = 0; i < n; i++)
        gir_jw_int(jw, gir_nnvm_dtype_code(t[i]));
    gir_jw_end_array(jw);
    gir_jw_end_array(jw);
}

/* The graph attributes to write, in order (keys live in the graph or are
 * literals). */
static gir_status gattr_keys(emit *e, const tvm_entry *t, size_t nt, bool shapes, const char ***out, size_t *n,
                             gir_error *err)
{
    nn_writer *w = e->w;
    const gir_graph *g = w->g;
    const gir_attr *order = gir_attrs_find(&g->meta, nn_meta_key(w->fl, NN_MK_GRAPH_ATTRS));
    static const char *const tvm_default[] = { "shape", "dltype", "storage_id" };
    size_t cap = (order && order->type == GIR_ATTR_STRINGS ? order->u.strs.n : 0) + 8;
    const char **k = gir_arena_alloc(&w->arena, cap * sizeof *k);
    if (!k)
        return gir_nomem(err);
    *n = 0;
    if (order && order->type == GIR_ATTR_STRINGS) {
        for (size_t i = 0; i < order->u.strs.n; i++) {
            const char *ok = order->u.strs.v[i];
            /* An NNVM graph's shapes are written only when all are known. */
            if (w->fl == NN_NNVM && !shapes && (strcmp(ok, "shape") == 0 || strcmp(ok, "dtype") == 0))
                continue;
            k[(*n)++] = ok;
        }
    }
    if (w->fl == NN_NNVM && shapes) {
        bool have = false;
        for (size_t j = 0; j < *n; j++)
            have = have || strcmp(k[j], "shape") == 0;
        if (!have) {
            k[(*n)++] = "shape";
            k[(*n)++] = "dtype";
        }
    }
    if (w->fl == NN_TVM) {
        /* The executor requires these three; device_index when the plan has it. */
        for (size_t i = 0; i < 3; i++) {
            bool have = false;
            for (size_t j = 0; j < *n; j++)
                have = have || strcmp(k[j], tvm_default[i]) == 0;
            if (!have)
                k[(*n)++] = tvm_default[i];
        }
        bool have = false;
        for (size_t j = 0; j < *n; j++)
            have = have || strcmp(k[j], "device_index") == 0;
        if (!have && any_meta(t, nt, "tvm.device_index"))
            k[(*n)++] = "device_index";
    } else if (w->fl == NN_MXNET) {
        bool have = false;
        for (size_t j = 0; j < *n; j++)
            have = have || strcmp(k[j], "mxnet_version") == 0;
        const char *src = meta_s(&g->meta, "source.format");
        bool legacy = src && strcmp(src, "mxnet") == 0 && !gir_attrs_find(&g->meta, "mxnet.version");
        if (!have && !legacy)
            k[(*n)++] = "mxnet_version";
    }
    *out = k;
    return GIR_OK;
}

/* ---- params ---------------------------------------------------------------------------- */

static gir_status collect_params(emit *e, gir_param_out **out, size_t *n_out, gir_error *err)
{
    nn_writer *w = e->w;
    const gir_graph *g = w->g;
    gir_param_out *p = malloc((e->n_order ? e->n_order : 1) * sizeof *p);
    bool *aux = calloc(g->n_values ? g->n_values : 1, 1);
    if (!p || !aux) {
        free(p);
        free(aux);
        return gir_nomem(err);
    }
    for (size_t f = 0; f < w->n_fn && w->fl == NN_MXNET; f++) {
        const nn_fnode *fn = &w->fn[f];
        if (strcmp(fn->op, "BatchNorm") == 0)
            for (size_t i = 3; i < fn->n_in && i < 5; i++)
                if (fn->in[i].value >= 0)
                    aux[fn->in[i].value] = true;
    }
    size_t n = 0;
    gir_status st = GIR_OK;
    for (size_t j = 0; j < e->n_order && !st; j++) {
        if (e->order[j].kind == IT_XV && w->xv[e->order[j].id].t) {
            /* data the writer made (MXNet RNN's packed parameters) */
            const nn_xvar *x = &w->xv[e->order[j].id];
            p[n].name = gir_arena_printf(&w->arena, "arg:%s", x->name);
            p[n].t = x->t;
            if (!p[n].name)
                st = gir_nomem(err);
            n++;
            continue;
        }
        if (e->order[j].kind != IT_VAR)
            continue;
        const gir_value *v = g->values[e->order[j].id];
        if (!v->data || (v->kind != GIR_VALUE_WEIGHT && v->kind != GIR_VALUE_CONST))
            continue;
        const char *name = v->name;
        if (w->fl == NN_MXNET) {
            const char *pf = meta_s(&v->meta, "mxnet.param_prefix");
            if (!pf)
                pf = aux[e->order[j].id] ? "aux" : "arg";
            name = *pf ? gir_arena_printf(&w->arena, "%s:%s", pf, v->name) : v->name;
            if (!name)
                st = gir_nomem(err);
        }
        p[n].name = name;
        p[n].t = v->data;
        n++;
    }
    free(aux);
    if (st) {
        free(p);
        return st;
    }
    /* A graph read with its params file of this flavour: that file's order. */
    const char *src = meta_s(&g->meta, "source.format");
    const gir_attr *oa = src && strcmp(src, w->pfx) == 0 ? gir_attrs_find(&g->meta, "nnvm.param_order") : NULL;
    const char *const *ord = oa && oa->type == GIR_ATTR_STRINGS ? oa->u.strs.v : NULL;
    ptrdiff_t no = ord ? (ptrdiff_t)oa->u.strs.n : -1;
    if (no > 0 && n > 1) {
        size_t *rank = malloc(n * sizeof *rank);
        gir_param_out *q = malloc(n * sizeof *q);
        if (!rank || !q) {
            free(rank);
            free(q);
            free(p);
            return gir_nomem(err);
        }
        for (size_t i = 0; i < n; i++) {
            rank[i] = (size_t)no + i; /* not in the file: after, as they were */
            for (ptrdiff_t k = 0; k < no; k++)
                if (strcmp(ord[k], p[i].name) == 0) {
                    rank[i] = (size_t)k;
                    break;
                }
        }
        /* stable selection by rank (parameter counts are small) */
        bool *done = calloc(n, 1);
        if (!done) {
            free(rank);
            free(q);
            free(p);
            return gir_nomem(err);
        }
        for (size_t j = 0; j < n; j++) {
            size_t best = n;
            for (size_t i = 0; i < n; i++)
                if (!done[i] && (best == n || rank[i] < rank[best]))
                    best = i;
            done[best] = true;
            q[j] = p[best];
        }
        memcpy(p, q, n * sizeof *p);
        free(done);
        free(rank);
        free(q);
    }
    *out = p;
    *n_out = n;
    return GIR_OK;
}

/* ---- the write ------------------------------------------------------------------------------ */

static gir_status flush(gir_buf *b, gir_outfile *f, gir_error *err)
{
    if (b->failed)
        return gir_nomem(err);
    gir_status st = gir_outfile_write(f, b->data, b->len, err);
    b->len = 0;
    return st;
}

static gir_status write_json(emit *e, gir_outfile *out, gir_error *err)
{
    nn_writer *w = e->w;
    const gir_graph *g = w->g;
    tvm_entry *t = NULL;
    size_t nt = 0;
    if (w->fl == NN_TVM)
        TRY(tvm_collect(e, &t, &nt, err));
    gir_shape *shp = NULL;
    gir_dtype *typ = NULL;
    bool shapes = w->fl == NN_NNVM && nnvm_entry_shapes(e, &shp, &typ);
    const char **gkeys = NULL;
    size_t ng = 0;
    gir_status st = gattr_keys(e, t, nt, shapes, &gkeys, &ng, err);
    gir_buf b = GIR_BUF_INIT;
    gir_json_writer jw;
    gir_jw_init(&jw, &b, GIR_JSON_DMLC);
    gir_jw_begin_object(&jw, true);
    gir_jw_key(&jw, "nodes");
    gir_jw_begin_array(&jw, true);
    for (size_t j = 0; j < e->n_order && !st; j++) {
        st = write_node(e, &jw, e->order[j], err);
        if (!st && b.len > (1u << 20))
            st = flush(&b, out, err);
    }
    gir_jw_end_array(&jw);
    uint32_t *args = malloc((e->n_order ? e->n_order : 1) * sizeof *args);
    size_t na = 0;
    if (!args && !st)
        st = gir_nomem(err);
    for (size_t j = 0; j < e->n_order && !st; j++)
        if (e->order[j].kind != IT_FN)
            args[na++] = (uint32_t)j;
    if (!st) {
        gir_jw_key(&jw, "arg_nodes");
        write_u32_array(&jw, args, na);
        if (!e->relay) {
            gir_jw_key(&jw, "node_row_ptr");
            write_u32_array(&jw, e->row, e->n_order + 1);
        }
        const int64_t *hv;
        ptrdiff_t nhv = gir_attrs_get_ints(&g->meta, nn_meta_key(w->fl, NN_MK_HEAD_VERSIONS), &hv);
        gir_jw_key(&jw, "heads");
        gir_jw_begin_array(&jw, e->relay || g->n_outputs > 10);
        for (size_t i = 0; i < g->n_outputs; i++) {
            nn_fref r = { g->outputs[i], -1 };
            uint32_t node, index;
            entry_of(e, &r, &node, &index);
            write_entry(&jw, node, index, nhv == (ptrdiff_t)g->n_outputs ? hv[i] : 0, e->relay);
        }
        gir_jw_end_array(&jw);
    }
    if (!st && ng) {
        gir_jw_key(&jw, "attrs");
        gir_jw_begin_object(&jw, ng > 1);
        for (size_t i = 0; i < ng && !st; i++) {
            const char *k = gkeys[i];
            if (w->fl == NN_TVM) {
                st = write_tvm_gattr(e, &jw, k, t, nt, err);
            } else if (shapes && strcmp(k, "shape") == 0) {
                write_nnvm_shapes(e, &jw, shp, typ);
            } else if (shapes && strcmp(k, "dtype") == 0) {
                /* written with the shapes */
            } else if (w->fl == NN_MXNET && strcmp(k, "mxnet_version") == 0) {
                gir_jw_key(&jw, k);
                gir_jw_begin_array(&jw, false);
                gir_jw_string(&jw, "int");
                gir_jw_int(&jw, gir_attrs_get_int(&g->meta, "mxnet.version", 10901));
                gir_jw_end_array(&jw);
            } else {
                st = write_kept_gattr(e, &jw, k, err);
            }
        }
        gir_jw_end_object(&jw);
    }
    if (!st && e->relay) {
        gir_jw_key(&jw, "node_row_ptr");
        write_u32_array(&jw, e->row, e->n_order + 1);
    }
    gir_jw_end_object(&jw);
    /* dmlc writes no final newline; a source that had one gets it back */
    const char *nl = meta_s(&g->meta, "nnvm.final_newline");
    const char *src = meta_s(&g->meta, "source.format");
    if (nl && src && strcmp(src, w->pfx) == 0)
        gir_buf_putc(&b, '\n');
    if (!st && !gir_jw_ok(&jw))
        st = b.failed ? gir_nomem(err) : gir_fail(err, GIR_E_INTERNAL, "unbalanced JSON output");
    if (!st)
        st = flush(&b, out, err);
    gir_jw_free(&jw);
    gir_buf_free(&b);
    free(args);
    free(t);
    free(shp);
    free(typ);
    return st;
}

static void writer_free(nn_writer *w, emit *e)
{
    free(w->fn);
    for (size_t i = 0; i < w->n_xv; i++)
        gir_tensor_unref(w->xv[i].t);
    free(w->xv);
    gir_arena_free(&w->arena); /* with the per-node and per-value tables */
    free(e->order);
    free(e->row);
}

/* Lowers every node, collecting what the flavour cannot express into u:
 * the planning both nn_plan and nn_write do. */
static gir_status lower_all(nn_writer *w, gir_unsupported *u, gir_error *err)
{
    const gir_graph *g = w->g;
    for (size_t i = 0; i < g->n_nodes; i++)
        for (size_t k = 0; k < g->nodes[i]->n_in; k++)
            if (g->nodes[i]->in[k] >= 0)
                w->uses[g->nodes[i]->in[k]]++;
    if (w->fl == NN_MXNET)
        for (size_t i = 0; i < g->n_nodes; i++) {
            int32_t f = nn_fc_flatten_of(w, g->nodes[i]);
            if (f >= 0)
                w->absorbed[f] = true;
        }
    for (size_t i = 0; w->fl != NN_TVM && i < g->n_nodes; i++) {
        int32_t a = nn_prelu_slope_of(w, g->nodes[i]);
        if (a >= 0)
            w->absorbed[a] = true;
        a = w->fl == NN_MXNET ? nn_where_cast_of(w, g->nodes[i]) : -1;
        if (a >= 0)
            w->absorbed[a] = true;
        a = nn_argmax_of(w, g->nodes[i]);
        if (a >= 0)
            w->absorbed[a] = true;
    }
    if (w->fl == NN_MXNET)
        nn_rnn_absorb(w);
    gir_status st = GIR_OK;
    for (size_t i = 0; i < g->n_nodes && !st; i++) {
        gir_error e2 = GIR_ERROR_INIT;
        gir_status s = nn_lower_node(w, i, &e2);
        if (s == GIR_E_UNSUPPORTED_OP || s == GIR_E_UNSUPPORTED_ATTR || s == GIR_E_UNSUPPORTED) {
            gir_unsupported_add(u, s, e2.message ? e2.message : gir_status_name(s), g->nodes[i]->name);
        } else if (s) {
            st = s;
            if (err && !err->code) {
                *err = e2;
                e2 = (gir_error)GIR_ERROR_INIT;
            }
            gir_err_node(err, g->nodes[i]->name);
        }
        gir_error_clear(&e2);
    }
    return st;
}

/* A compiled executor graph is an NNVM graph: written as nnvm it keeps
 * its tvm_op nodes and the executor's attributes. */
static nn_flavour flavour_for(const gir_graph *g, nn_flavour fl)
{
    if (fl == NN_NNVM) {
        for (size_t i = 0; i < g->n_nodes; i++) {
            const gir_node *n = g->nodes[i];
            if (n->op == GIR_OP_OPAQUE && n->opaque_format && strcmp(n->opaque_format, "tvm") == 0) {
                fl = NN_TVM;
                break;
            }
        }
    }
    return fl;
}

/* The writer's tables for g (every array sized and initialised). */
static gir_status writer_init(nn_writer *w, emit *e, const gir_graph *g, const gir_options *opts, nn_flavour fl,
                              gir_error *err)
{
    w->g = g;
    w->fl = fl;
    w->pfx = nn_flavour_name(fl);
    w->allow_opaque = gir_options_flag(opts, "allow-opaque");
    size_t nv = g->n_values, nn = g->n_nodes;
    gir_arena *a = &w->arena;
    w->vprod = nn_arena_array(a, nv, sizeof *w->vprod);
    w->vidx = nn_arena_array(a, nv, sizeof *w->vidx);
    w->uses = nn_arena_array(a, nv, sizeof *w->uses);
    w->absorbed = nn_arena_array(a, nn, sizeof *w->absorbed);
    w->node_fn = nn_arena_array(a, nn, sizeof *w->node_fn);
    e->w = w;
    e->need_var = nn_arena_array(a, nv, sizeof *e->need_var);
    w->uses_fn = nn_arena_array(a, nv, sizeof *w->uses_fn);
    e->jid_val = nn_arena_array(a, nv, sizeof *e->jid_val);
    gir_status st = GIR_OK;
    if (!w->vprod || !w->vidx || !w->uses || !w->absorbed || !w->node_fn || !e->need_var || !e->jid_val || !w->uses_fn)
        st = gir_nomem(err);
    for (size_t i = 0; !st && i < g->n_values; i++) {
        w->vprod[i] = -1;
        e->jid_val[i] = -1;
    }
    for (size_t i = 0; !st && i < g->n_nodes; i++)
        w->node_fn[i] = -1;
    return st;
}

gir_status nn_plan(const gir_graph *g, const gir_options *opts, nn_flavour fl, gir_unsupported *u, gir_error *err)
{
    nn_writer w = { 0 };
    emit e = { 0 };
    gir_status st = writer_init(&w, &e, g, opts, flavour_for(g, fl), err);
    if (!st)
        st = lower_all(&w, u, err);
    writer_free(&w, &e);
    return st;
}

gir_status nn_write(const gir_graph *g, const char *path, const gir_options *opts, nn_flavour fl, gir_error *err)
{
    fl = flavour_for(g, fl);
    nn_writer w = { 0 };
    emit e = { 0 };
    gir_status st = writer_init(&w, &e, g, opts, fl, err);
    if (!st) {
        gir_unsupported *u = gir_unsupported_new();
        st = u ? lower_all(&w, u, err) : gir_nomem(err);
        if (!st && gir_unsupported_count(u))
            st = gir_unsupported_fail(u, w.pfx, err);
        gir_unsupported_free(u);
    }
    if (!st) {
        e.relay = fl == NN_TVM && meta_s(&g->meta, "tvm.layout") && strcmp(meta_s(&g->meta, "tvm.layout"), "relay") == 0;
        e.jid_fn = nn_arena_array(&w.arena, w.n_fn, sizeof *e.jid_fn);
        e.jid_xv = nn_arena_array(&w.arena, w.n_xv, sizeof *e.jid_xv);
        if (!e.jid_fn || !e.jid_xv)
            st = gir_nomem(err);
        for (size_t i = 0; !st && i < w.n_fn; i++)
            e.jid_fn[i] = -1;
        for (size_t i = 0; !st && i < w.n_xv; i++)
            e.jid_xv[i] = -1;
    }
    /* Variables: every value without a producer that an operator reads,
     * plus the graph's inputs and outputs. */
    for (size_t f = 0; !st && f < w.n_fn; f++) {
        for (size_t i = 0; i < w.fn[f].n_in; i++) {
            int32_t v = w.fn[f].in[i].value;
            if (v < 0 || w.vprod[v] >= 0)
                continue;
            if (g->values[v]->producer >= 0) {
                st = gir_fail(err, GIR_E_INTERNAL, "node '%s' reads '%s', whose producer was not written",
                              w.fn[f].name, g->values[v]->name);
                break;
            }
            e.need_var[v] = true;
            w.uses_fn[v] = true;
        }
    }
    /* (An MXNet 0.8 BatchNorm's synthesised auxiliary inputs stay out when
     * the file is written for the loader that makes them.) */
    for (size_t i = 0; !st && i < g->n_inputs; i++) {
        const gir_value *v = g->values[g->inputs[i]];
        if (!(fl == NN_MXNET && meta_s(&v->meta, "mxnet.synthesized") && !w.uses_fn[g->inputs[i]]))
            e.need_var[g->inputs[i]] = true;
    }
    for (size_t i = 0; !st && i < g->n_outputs; i++) {
        int32_t v = g->outputs[i];
        if (w.vprod[v] < 0) {
            if (g->values[v]->producer >= 0)
                st = gir_fail(err, GIR_E_INTERNAL, "graph output '%s' lost its producer", g->values[v]->name);
            else
                e.need_var[v] = true;
        }
    }
    if (!st)
        st = order_items(&e, err);
    if (!st) {
        e.row = malloc((e.n_order + 1) * sizeof *e.row);
        if (!e.row)
            st = gir_nomem(err);
        for (size_t j = 0; !st && j < e.n_order; j++) {
            size_t k = e.order[j].kind == IT_FN ? w.fn[e.order[j].id].n_out : 1;
            e.row[0] = 0;
            if ((uint64_t)e.row[j] + k > UINT32_MAX) {
                st = gir_fail(err, GIR_E_LIMIT, "more than 4294967295 node outputs");
                break;
            }
            e.row[j + 1] = e.row[j] + (uint32_t)k;
        }
        if (!st && e.n_order == 0)
            e.row[0] = 0;
    }
    /* Files: the graph, and the parameters beside it. */
    gir_param_out *params = NULL;
    size_t np = 0;
    if (!st)
        st = collect_params(&e, &params, &np, err);
    const char *given = gir_options_get(opts, "params");
    char *ppath = NULL;
    if (!st && (np || given)) {
        ppath = given ? gir_strdupf("%s", given) : nn_params_path_for(path, fl);
        if (!ppath)
            st = gir_nomem(err);
        else if (strcmp(ppath, path) == 0)
            st = gir_fail(err, GIR_E_ARGUMENT, "the parameters would overwrite the graph file (%s); give params=PATH",
                          path);
    }
    bool force = gir_options_flag(opts, "force");
    gir_outfile *jf = NULL, *pf = NULL;
    if (!st)
        st = gir_outfile_open(path, force, &jf, err);
    if (!st && ppath)
        st = gir_outfile_open(ppath, force, &pf, err);
    if (!st)
        st = write_json(&e, jf, err);
    if (!st && pf) {
        st = gir_params_write(pf, fl == NN_MXNET ? GIR_PARAMS_MXNET : GIR_PARAMS_TVM, params, np, gir_progress_add, err);
        if (st)
            gir_err_file(err, ppath);
    }
    if (!st) {
        /* params, then the graph, as one unit */
        gir_outfile *both[2] = { pf, jf };
        st = pf ? gir_outfile_commit_all(both, 2, err) : gir_outfile_commit(jf, err);
        pf = jf = NULL;
    }
    if (pf)
        gir_outfile_abort(pf);
    if (jf)
        gir_outfile_abort(jf);
    free(params);
    free(ppath);
    writer_free(&w, &e);
    return st;
}
