/* Topological order (Kahn's algorithm with a min-heap on node index) and
 * cycle reporting; iterative, linear in the graph's size up to the heap. */
#include "passes.h"

#include <stdlib.h>
#include <string.h>

/* ---- a binary min-heap of node indices ---- */

static void heap_push(int32_t *h, size_t *n, int32_t v)
{
    size_t i = (*n)++;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (h[p] <= v)
            break;
        h[i] = h[p];
        i = p;
    }
    h[i] = v;
}

static int32_t heap_pop(int32_t *h, size_t *n)
{
    int32_t top = h[0], v = h[--*n];
    size_t i = 0, len = *n;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= len)
            break;
        if (c + 1 < len && h[c + 1] < h[c])
            c++;
        if (v <= h[c])
            break;
        h[i] = h[c];
        i = c;
    }
    if (len)
        h[i] = v;
    return top;
}

/* Producer node of each value according to the nodes' output lists (the
 * first one, if several claim it), -1 for none.  Fails on indices out of
 * range. */
static gir_status find_producers(const gir_graph *g, int32_t *prod, gir_error *err)
{
    for (size_t v = 0; v < g->n_values; v++)
        prod[v] = -1;
    for (size_t i = 0; i < g->n_nodes; i++) {
        const gir_node *n = g->nodes[i];
        TRY(gir_err_in_node(gir_node_check_refs(g, n, err), err, n->name));
        for (size_t k = 0; k < n->n_out; k++) {
            int32_t v = n->out[k];
            if (v >= 0 && prod[v] < 0)
                prod[v] = (int32_t)i;
        }
    }
    return GIR_OK;
}

/* Among the nodes never emitted (left[i]), walks producer links backwards
 * until a node repeats: every such node has a predecessor that is also left,
 * so the walk finds a cycle.  Reports it producer-first. */
static gir_status report_cycle(const gir_graph *g, const int32_t *prod, const int32_t *left, gir_error *err)
{
    size_t nn = g->n_nodes;
    int32_t *step = malloc(nn * sizeof *step), *path = malloc(nn * sizeof *path);
    if (!step || !path) {
        free(step);
        free(path);
        return gir_nomem(err);
    }
    for (size_t i = 0; i < nn; i++)
        step[i] = -1;
    int32_t u = -1;
    for (size_t i = 0; i < nn && u < 0; i++)
        if (left[i] > 0)
            u = (int32_t)i;
    size_t len = 0;
    while (u >= 0 && step[u] < 0) {
        step[u] = (int32_t)len;
        path[len++] = u;
        const gir_node *n = g->nodes[u];
        int32_t p = -1;
        for (size_t k = 0; k < n->n_in && p < 0; k++)
            if (n->in[k] >= 0 && prod[n->in[k]] >= 0 && left[prod[n->in[k]]] > 0)
                p = prod[n->in[k]];
        u = p;
    }
    if (u < 0) {
        free(step);
        free(path);
        return gir_fail(err, GIR_E_INTERNAL, "cycle detection lost its way");
    }
    /* path[j + 1] feeds path[j]; path[s] feeds path[len - 1]. */
    size_t s = (size_t)step[u], cyc = len - s;
    gir_buf b = GIR_BUF_INIT;
    gir_buf_printf(&b, "the graph has a cycle: '%s'", g->nodes[path[s]]->name);
    for (size_t j = 0; j < cyc; j++) {
        if (j == 12 && cyc > 13) {
            gir_buf_printf(&b, " -> ... (%zu nodes in the cycle)", cyc);
            break;
        }
        size_t at = j + 1 < cyc ? len - 1 - j : s;
        gir_buf_printf(&b, " -> '%s'", g->nodes[path[at]]->name);
    }
    char *msg = gir_buf_take(&b);
    gir_fail(err, GIR_E_CYCLE, "%s", msg ? msg : "the graph has a cycle");
    gir_err_node(err, g->nodes[path[s]]->name);
    free(msg);
    free(step);
    free(path);
    return GIR_E_CYCLE;
}

gir_status gir_topo_order(const gir_graph *g, int32_t **order, gir_error *err)
{
    *order = NULL;
    int32_t *prod = malloc((g->n_values ? g->n_values : 1) * sizeof *prod);
    if (!prod)
        return gir_nomem(err);
    gir_status st = find_producers(g, prod, err);
    if (st == GIR_OK)
        st = gir_topo_order_prod(g, prod, order, err);
    free(prod);
    return st;
}

/* Every node's producers come before it: the nodes' own order is the
 * topological one, and the one Kahn's algorithm with the lowest ready index
 * first finds (node k is then always the lowest ready one). */
static bool already_sorted(const gir_graph *g, const int32_t *prod)
{
    for (size_t i = 0; i < g->n_nodes; i++) {
        const gir_node *n = g->nodes[i];
        for (size_t k = 0; k < n->n_in; k++)
            if (n->in[k] >= 0 && prod[n->in[k]] >= (int32_t)i)
                return false;
    }
    return true;
}

gir_status gir_topo_order_prod(const gir_graph *g, const int32_t *prod, int32_t **order, gir_error *err)
{
    *order = NULL;
    size_t nn = g->n_nodes;
    if (already_sorted(g, prod)) { /* readers mostly list nodes in order */
        int32_t *out = malloc((nn ? nn : 1) * sizeof *out);
        if (!out)
            return gir_nomem(err);
        for (size_t i = 0; i < nn; i++)
            out[i] = (int32_t)i;
        *order = out;
        return GIR_OK;
    }
    int32_t *indeg = calloc(nn ? nn : 1, sizeof *indeg);
    size_t *start = calloc(nn + 1, sizeof *start);
    int32_t *heap = malloc((nn ? nn : 1) * sizeof *heap);
    int32_t *out = malloc((nn ? nn : 1) * sizeof *out);
    int32_t *succ = NULL;
    size_t *pos = NULL;
    gir_status st = GIR_OK;
    if (!indeg || !start || !heap || !out) {
        st = gir_nomem(err);
        goto done;
    }
    /* Edges producer -> consumer, one per consuming input slot (CSR). */
    size_t ne = 0;
    for (size_t i = 0; i < nn; i++) {
        const gir_node *n = g->nodes[i];
        for (size_t k = 0; k < n->n_in; k++) {
            if (n->in[k] < 0 || prod[n->in[k]] < 0)
                continue;
            start[prod[n->in[k]] + 1]++;
            indeg[i]++;
            ne++;
        }
    }
    for (size_t i = 0; i < nn; i++)
        start[i + 1] += start[i];
    succ = malloc((ne ? ne : 1) * sizeof *succ);
    pos = malloc((nn ? nn : 1) * sizeof *pos);
    if (!succ || !pos) {
        st = gir_nomem(err);
        goto done;
    }
    memcpy(pos, start, nn * sizeof *pos);
    for (size_t i = 0; i < nn; i++) {
        const gir_node *n = g->nodes[i];
        for (size_t k = 0; k < n->n_in; k++)
            if (n->in[k] >= 0 && prod[n->in[k]] >= 0)
                succ[pos[prod[n->in[k]]]++] = (int32_t)i;
    }
    size_t nh = 0, emitted = 0;
    for (size_t i = 0; i < nn; i++)
        if (indeg[i] == 0)
            heap_push(heap, &nh, (int32_t)i);
    while (nh) {
        int32_t u = heap_pop(heap, &nh);
        out[emitted++] = u;
        for (size_t e = start[u]; e < start[u + 1]; e++)
            if (--indeg[succ[e]] == 0)
                heap_push(heap, &nh, succ[e]);
    }
    if (emitted < nn) {
        st = report_cycle(g, prod, indeg, err);
        goto done;
    }
    *order = out;
    out = NULL;
done:
    free(indeg);
    free(start);
    free(heap);
    free(out);
    free(succ);
    free(pos);
    return st;
}
