/* Graph editing for rewrites (see edit.h). */
#include "edit.h"

#include <stdlib.h>
#include <string.h>

#include "passes.h"

struct gir_edit {
    gir_graph *g;
    size_t n0;           /* nodes before the edit */
    /* per node (grown as nodes are made) */
    bool *dead;
    int32_t *place;      /* a made node: the node whose place it takes (-1: none) */
    size_t cap_nodes;
    /* per value */
    bool *cand;          /* removed at commit if nobody reads it */
    size_t cap_values;
    bool sweep_all;
    size_t created, removed;
    int32_t placing;     /* the node being replaced, -1 outside a rewrite */
};

static bool fit(gir_edit *e)
{
    gir_graph *g = e->g;
    size_t old = e->cap_nodes;
    if (g->n_nodes > old) {
        size_t cap = old, c2 = old;
        if (!GIR_GROW(e->dead, cap, g->n_nodes) || !GIR_GROW(e->place, c2, g->n_nodes))
            return false;
        e->cap_nodes = cap < c2 ? cap : c2;
        for (size_t i = old; i < e->cap_nodes; i++) {
            e->dead[i] = false;
            e->place[i] = -1;
        }
    }
    old = e->cap_values;
    if (g->n_values > old) {
        if (!GIR_GROW(e->cand, e->cap_values, g->n_values))
            return false;
        for (size_t i = old; i < e->cap_values; i++)
            e->cand[i] = false;
    }
    return true;
}

gir_status gir_edit_begin(gir_graph *g, gir_edit **out, gir_error *err)
{
    gir_edit *e = calloc(1, sizeof *e);
    if (!e)
        return gir_nomem(err);
    e->g = g;
    e->n0 = g->n_nodes;
    e->placing = -1;
    if (!fit(e)) {
        gir_edit_free(e);
        return gir_nomem(err);
    }
    *out = e;
    return GIR_OK;
}

void gir_edit_sweep_all(gir_edit *e) { e->sweep_all = true; }
size_t gir_edit_created(const gir_edit *e) { return e->created; }
size_t gir_edit_removed(const gir_edit *e) { return e->removed; }

void gir_edit_free(gir_edit *e)
{
    if (!e)
        return;
    free(e->dead);
    free(e->place);
    free(e->cand);
    free(e);
}

void gir_edit_rewrite(gir_edit *e, int32_t node, gir_rw *rw)
{
    *rw = (gir_rw){ e, e->g, node, e->g->n_nodes };
    e->placing = node;
}

/* A fresh name "<node>_<what>" among nodes (node) or values; NULL with
 * err set when out of memory. */
static const char *fresh(gir_rw *rw, const char *what, bool node, gir_error *err)
{
    char *base = gir_strdupf("%s_%s", rw->g->nodes[rw->node]->name, what);
    const char *r = node ? gir_graph_unique_node_name(rw->g, base, err) : gir_graph_unique_value_name(rw->g, base, err);
    free(base);
    return r;
}

gir_status gir_rw_const(gir_rw *rw, gir_dtype dt, const gir_shape *shape, const void *data, int32_t *out,
                        gir_error *err)
{
    gir_tensor *t;
    TRY(gir_tensor_new(dt, shape, &t, err));
    if (data && t->nbytes)
        memcpy(t->data, data, t->nbytes);
    const char *name = fresh(rw, "const", false, err);
    gir_status st = name ? gir_graph_add_const(rw->g, name, t, out, err) : GIR_E_NOMEM;
    gir_tensor_unref(t);
    if (!st && !fit(rw->e))
        st = gir_nomem(err);
    if (!st)
        rw->e->cand[*out] = true;
    return st;
}

gir_status gir_rw_scalar(gir_rw *rw, gir_dtype dt, double v, int32_t *out, gir_error *err)
{
    gir_shape s = { .rank = 0 };
    union {
        float f32;
        double f64;
        int64_t i64;
        int32_t i32;
    } k;
    switch (dt) {
    case GIR_DT_F32: k.f32 = (float)v; break;
    case GIR_DT_F64: k.f64 = v; break;
    case GIR_DT_I64: k.i64 = (int64_t)v; break;
    case GIR_DT_I32: k.i32 = (int32_t)v; break;
    default:
        return gir_fail(err, GIR_E_INTERNAL, "a scalar constant of type %s", gir_dtype_name(dt));
    }
    return gir_rw_const(rw, dt, &s, &k, out, err);
}

gir_status gir_rw_ints(gir_rw *rw, const int64_t *v, size_t n, int32_t *out, gir_error *err)
{
    gir_shape s = { .rank = 1, .dims = { (int64_t)n } };
    return gir_rw_const(rw, GIR_DT_I64, &s, v, out, err);
}

gir_status gir_rw_node(gir_rw *rw, gir_op op, const int32_t *in, size_t n_in, size_t n_out, gir_node **out,
                       gir_error *err)
{
    gir_graph *g = rw->g;
    const char *name = fresh(rw, gir_op_name(op), true, err);
    if (!name)
        return GIR_E_NOMEM;
    gir_node *n;
    TRY(gir_graph_add_node(g, name, op, n_in, n_out, &n, err));
    for (size_t i = 0; i < n_in; i++)
        n->in[i] = in[i];
    for (size_t k = 0; k < n_out; k++) {
        const char *vn = gir_graph_unique_value_name(g, name, err);
        if (!vn)
            return GIR_E_NOMEM;
        TRY(gir_node_make_output(g, n, k, vn, err));
    }
    if (!fit(rw->e))
        return gir_nomem(err);
    rw->e->place[g->n_nodes - 1] = rw->node;
    rw->e->created++;
    *out = n;
    return GIR_OK;
}

gir_status gir_rw_unary(gir_rw *rw, gir_op op, int32_t in, gir_node **node, int32_t *out, gir_error *err)
{
    gir_node *n;
    TRY(gir_rw_node(rw, op, &in, 1, 1, &n, err));
    if (node)
        *node = n;
    *out = n->out[0];
    return GIR_OK;
}

gir_status gir_rw_binary(gir_rw *rw, gir_op op, int32_t a, int32_t b, gir_node **node, int32_t *out,
                         gir_error *err)
{
    gir_node *n;
    TRY(gir_rw_node(rw, op, (int32_t[]){ a, b }, 2, 1, &n, err));
    if (node)
        *node = n;
    *out = n->out[0];
    return GIR_OK;
}

gir_status gir_rw_reshape(gir_rw *rw, int32_t v, const int64_t *dims, size_t rank, int32_t *out, gir_error *err)
{
    gir_node *m;
    TRY(gir_rw_unary(rw, GIR_OP_Reshape, v, &m, out, err));
    return gir_attrs_set_ints(rw->g, &m->attrs, "shape", dims, rank, err);
}

gir_status gir_rw_copy(gir_rw *rw, const gir_node *n, const int32_t *in, size_t n_in, size_t n_out, gir_node **out,
                       gir_error *err)
{
    TRY(gir_rw_node(rw, n->op, in, n_in, n_out, out, err));
    return gir_attrs_copy(rw->g, &(*out)->attrs, &n->attrs, err);
}

static bool is_output(const gir_graph *g, int32_t v)
{
    for (size_t i = 0; i < g->n_outputs; i++)
        if (g->outputs[i] == v)
            return true;
    return false;
}

/* Every read of value from by a live node becomes a read of to. */
static void rewire(gir_edit *e, int32_t from, int32_t to)
{
    gir_graph *g = e->g;
    for (size_t i = 0; i < g->n_nodes; i++) {
        if (e->dead[i])
            continue;
        gir_node *n = g->nodes[i];
        for (size_t k = 0; k < n->n_in; k++)
            if (n->in[k] == from)
                n->in[k] = to;
    }
}

static void kill(gir_edit *e, int32_t node)
{
    gir_node *n = e->g->nodes[node];
    e->dead[node] = true;
    e->removed++;
    for (size_t k = 0; k < n->n_in; k++)
        if (n->in[k] >= 0)
            e->cand[n->in[k]] = true;
}

/* Output k of n, a node being removed: no longer made by it, and a
 * candidate for removal.  Its value, or NULL for an empty slot. */
static gir_value *detach_out(gir_edit *e, gir_node *n, size_t k)
{
    int32_t v = n->out[k];
    if (v < 0)
        return NULL;
    n->out[k] = -1;
    gir_value *V = e->g->values[v];
    V->producer = -1;
    V->producer_out = -1;
    e->cand[v] = true;
    return V;
}

gir_status gir_rw_done(gir_rw *rw, const int32_t *outs, gir_error *err)
{
    gir_edit *e = rw->e;
    gir_graph *g = rw->g;
    gir_node *old = g->nodes[rw->node];
    if (!fit(e))
        return gir_nomem(err);
    /* the node goes first, so that rewiring leaves its own reads alone */
    kill(e, rw->node);
    for (size_t k = 0; k < old->n_out; k++) {
        int32_t v = old->out[k], r = outs[k];
        gir_value *V = detach_out(e, old, k);
        if (!V)
            continue;
        if (r < 0)
            continue; /* unused output: nothing may read it (validation says so otherwise) */
        gir_value *R = g->values[r];
        if (R->producer >= (int32_t)rw->first_new) {
            /* made here: its producer makes v instead, and what read r reads v */
            gir_node *m = g->nodes[R->producer];
            int32_t j = R->producer_out;
            m->out[j] = v;
            V->producer = R->producer;
            V->producer_out = j;
            V->kind = GIR_VALUE_INTERMEDIATE;
            R->producer = -1;
            R->producer_out = -1;
            e->cand[r] = true;
            rewire(e, r, v);
        } else if (is_output(g, v)) {
            /* a graph output keeps its name: copied from r */
            gir_node *m;
            TRY(gir_rw_node(rw, GIR_OP_Identity, &r, 1, 1, &m, err));
            int32_t tmp = m->out[0];
            m->out[0] = v;
            V->producer = (int32_t)(g->n_nodes - 1);
            V->producer_out = 0;
            V->kind = GIR_VALUE_INTERMEDIATE;
            g->values[tmp]->producer = -1;
            e->cand[tmp] = true;
        } else {
            rewire(e, v, r);
        }
    }
    e->placing = -1;
    return GIR_OK;
}

gir_status gir_edit_fold(gir_edit *e, int32_t node, gir_tensor *const *outs, bool as_weight, gir_error *err)
{
    gir_graph *g = e->g;
    gir_node *n = g->nodes[node];
    if (!fit(e))
        return gir_nomem(err);
    kill(e, node);
    for (size_t k = 0; k < n->n_out; k++) {
        gir_value *V = detach_out(e, n, k);
        if (!V)
            continue;
        V->kind = as_weight ? GIR_VALUE_WEIGHT : GIR_VALUE_CONST;
        gir_value_set_data(V, outs[k]);
    }
    return GIR_OK;
}

static bool removable_op(const gir_node *n)
{
    if (n->op == GIR_OP_OPAQUE)
        return false;
    const char *cat = gir_op_get(n->op)->category;
    return strcmp(cat, "side-effect") != 0;
}

/* Removes, transitively, nodes all of whose outputs nobody reads (when one
 * is a candidate or sweeping everything), and marks the values to drop. */
static gir_status sweep(gir_edit *e, bool *drop, gir_error *err)
{
    gir_graph *g = e->g;
    size_t nv = g->n_values;
    uint32_t *uses = calloc(nv ? nv : 1, sizeof *uses);
    bool *pinned = calloc(nv ? nv : 1, sizeof *pinned);
    int32_t *work = malloc((nv ? nv : 1) * sizeof *work);
    bool *queued = calloc(nv ? nv : 1, sizeof *queued);
    if (!uses || !pinned || !work || !queued) {
        free(uses);
        free(pinned);
        free(work);
        free(queued);
        return gir_nomem(err);
    }
    for (size_t i = 0; i < g->n_nodes; i++) {
        if (e->dead[i])
            continue;
        const gir_node *n = g->nodes[i];
        for (size_t k = 0; k < n->n_in; k++)
            if (n->in[k] >= 0)
                uses[n->in[k]]++;
    }
    for (size_t i = 0; i < g->n_inputs; i++)
        pinned[g->inputs[i]] = true;
    for (size_t i = 0; i < g->n_outputs; i++)
        pinned[g->outputs[i]] = true;
    size_t nw = 0;
    for (size_t v = 0; v < nv; v++)
        if ((e->cand[v] || e->sweep_all) && !uses[v] && !pinned[v]) {
            work[nw++] = (int32_t)v;
            queued[v] = true;
        }
    while (nw) {
        int32_t v = work[--nw];
        gir_value *V = g->values[v];
        int32_t p = V->producer;
        if (p < 0 || e->dead[p]) {
            drop[v] = true;
            continue;
        }
        gir_node *n = g->nodes[p];
        bool all_unread = removable_op(n);
        for (size_t k = 0; all_unread && k < n->n_out; k++)
            if (n->out[k] >= 0 && (uses[n->out[k]] || pinned[n->out[k]]))
                all_unread = false;
        if (!all_unread)
            continue;
        e->dead[p] = true;
        e->removed++;
        for (size_t k = 0; k < n->n_out; k++)
            if (n->out[k] >= 0)
                drop[n->out[k]] = true;
        for (size_t k = 0; k < n->n_in; k++) {
            int32_t x = n->in[k];
            if (x >= 0 && --uses[x] == 0 && !pinned[x] && !queued[x]) {
                queued[x] = true;
                work[nw++] = x;
            }
        }
    }
    free(uses);
    free(pinned);
    free(work);
    free(queued);
    return GIR_OK;
}

gir_status gir_edit_commit(gir_edit *e, gir_error *err)
{
    gir_graph *g = e->g;
    gir_status st = GIR_OK;
    size_t nv = g->n_values, nn = g->n_nodes;
    bool *drop = calloc(nv ? nv : 1, sizeof *drop);
    int32_t *vmap = malloc((nv ? nv : 1) * sizeof *vmap);
    int32_t *nmap = malloc((nn ? nn : 1) * sizeof *nmap);
    gir_node **nodes = malloc((nn ? nn : 1) * sizeof *nodes);
    gir_value **values = malloc((nv ? nv : 1) * sizeof *values);
    int32_t *order = NULL;
    if (!drop || !vmap || !nmap || !nodes || !values || !fit(e)) {
        st = gir_nomem(err);
        goto out;
    }
    if ((st = sweep(e, drop, err)))
        goto out;
    /* nodes: the survivors in order, each replacement where its node was */
    size_t m = 0;
    for (size_t i = 0; i < nn; i++)
        nmap[i] = -1;
    for (size_t i = 0; i < e->n0; i++) {
        if (!e->dead[i]) {
            nmap[i] = (int32_t)m;
            nodes[m++] = g->nodes[i];
        }
        for (size_t j = e->n0; j < nn; j++)
            if (e->place[j] == (int32_t)i && !e->dead[j]) {
                nmap[j] = (int32_t)m;
                nodes[m++] = g->nodes[j];
            }
    }
    for (size_t j = e->n0; j < nn; j++)
        if (nmap[j] < 0 && !e->dead[j]) {
            nmap[j] = (int32_t)m;
            nodes[m++] = g->nodes[j];
        }
    size_t mv = 0;
    for (size_t v = 0; v < nv; v++) {
        vmap[v] = drop[v] ? -1 : (int32_t)mv;
        if (!drop[v])
            values[mv++] = g->values[v];
    }
    for (size_t i = 0; i < nn; i++) {
        gir_node *n = g->nodes[i];
        if (nmap[i] < 0) {
            gir_attrs_free(&n->attrs);
            gir_attrs_free(&n->meta);
            continue;
        }
        for (size_t k = 0; k < n->n_in; k++) {
            if (n->in[k] < 0)
                continue;
            if (vmap[n->in[k]] < 0) {
                st = gir_fail(err, GIR_E_INTERNAL, "node '%s' reads '%s', which the edit removed", n->name,
                              g->values[n->in[k]]->name);
                goto out;
            }
            n->in[k] = vmap[n->in[k]];
        }
        for (size_t k = 0; k < n->n_out; k++)
            if (n->out[k] >= 0)
                n->out[k] = vmap[n->out[k]];
    }
    for (size_t v = 0; v < nv; v++) {
        gir_value *V = g->values[v];
        if (drop[v]) {
            gir_tensor_unref(V->data);
            V->data = NULL;
            gir_attrs_free(&V->meta);
            continue;
        }
        if (V->producer >= 0) {
            V->producer = nmap[V->producer];
            if (V->producer < 0) {
                st = gir_fail(err, GIR_E_INTERNAL, "value '%s' lost its producer in an edit", V->name);
                goto out;
            }
        }
    }
    for (size_t i = 0; i < g->n_inputs; i++)
        g->inputs[i] = vmap[g->inputs[i]];
    for (size_t i = 0; i < g->n_outputs; i++)
        g->outputs[i] = vmap[g->outputs[i]];
    memcpy(g->nodes, nodes, m * sizeof *nodes);
    g->n_nodes = m;
    memcpy(g->values, values, mv * sizeof *values);
    g->n_values = mv;
    if ((st = gir_graph_reindex(g, err)))
        goto out;
    /* topological order, stable for what already was */
    if ((st = gir_topo_order(g, &order, err)))
        goto out;
    bool sorted = true;
    for (size_t i = 0; i < m; i++)
        if (order[i] != (int32_t)i)
            sorted = false;
    if (!sorted) {
        for (size_t i = 0; i < m; i++)
            nodes[i] = g->nodes[order[i]];
        for (size_t i = 0; i < m; i++)
            nmap[order[i]] = (int32_t)i;
        memcpy(g->nodes, nodes, m * sizeof *nodes);
        for (size_t v = 0; v < g->n_values; v++)
            if (g->values[v]->producer >= 0)
                g->values[v]->producer = nmap[g->values[v]->producer];
        if ((st = gir_graph_reindex(g, err)))
            goto out;
    }
    st = gir_graph_finish(g, err);
out:
    free(drop);
    free(vmap);
    free(nmap);
    free(nodes);
    free(values);
    free(order);
    gir_edit_free(e);
    return st;
}
