/* Shapes for checking a model whose inputs have no known dimension (an
 * MXNet or NNVM graph that records none): concrete dimensions for which
 * shape inference of both models succeeds, so that the check runs them
 * instead of comparing their structure only. */
#include "api.h"

#include <stdlib.h>
#include <string.h>

/* Does the check need a shape for input v (nothing fed, no data, a rank
 * above 1 and not one dimension known: what gir_seeded_input refuses)? */
static bool needs_shape(const gir_value *v, const gir_check_options *o)
{
    if (v->data || v->shape.rank < 2)
        return false;
    for (int i = 0; i < v->shape.rank; i++)
        if (v->shape.dims[i] >= 0)
            return false;
    for (size_t k = 0; k < o->n_feeds; k++)
        if (o->feed_names && o->feed_names[k] && strcmp(o->feed_names[k], v->name) == 0)
            return false;
    return o->n_feeds == 0 || o->feed_names;
}

/* The channels the first consumer of value v fixes (a convolution's
 * weights [M, C/group, ...]: C), or -1. */
static int64_t channels_of(const gir_graph *g, int32_t v)
{
    for (size_t i = 0; i < g->n_nodes; i++) {
        const gir_node *n = g->nodes[i];
        if (n->n_in < 2 || n->in[0] != v)
            continue;
        if (n->op != GIR_OP_Conv && n->op != GIR_OP_ConvTranspose)
            return -1;
        const gir_value *w = gir_in(g, n, 1);
        if (!w || w->shape.rank < 3 || w->shape.dims[1] < 1 || w->shape.dims[0] < 1)
            return -1;
        int64_t group = gir_node_int(n, "group", 1);
        return n->op == GIR_OP_Conv ? w->shape.dims[1] * group : w->shape.dims[0];
    }
    return -1;
}

/* Every output shape known in g? */
static bool outputs_known(const gir_graph *g)
{
    for (size_t i = 0; i < g->n_outputs; i++)
        if (!gir_shape_is_known(&g->values[g->outputs[i]]->shape))
            return false;
    return true;
}

/* Clones g with the shapes given (names[k] gets shapes[k]) into *out;
 * *out is NULL when inference refuses them or leaves an output shape
 * unknown.  Fails only when out of memory. */
static gir_status with_shapes(const gir_graph *g, char *const *names, const gir_shape *shapes, size_t n,
                              gir_graph **out, gir_error *err)
{
    *out = NULL;
    gir_graph *c = NULL;
    TRY(gir_graph_clone(g, &c, err));
    gir_error e = GIR_ERROR_INIT;
    gir_status st = GIR_OK;
    for (size_t k = 0; !st && k < n; k++)
        if (gir_graph_find_value(c, names[k]))
            st = gir_graph_set_input_shape(c, names[k], &shapes[k], &e);
    gir_error_clear(&e);
    if (st || !outputs_known(c)) {
        gir_graph_free(c);
        return st == GIR_E_NOMEM ? gir_nomem(err) : GIR_OK;
    }
    *out = c;
    return GIR_OK;
}

/* The square spatial sizes tried, smallest first. */
static const int64_t larger[] = { 160, 192, 224, 227, 256, 299, 320, 384, 416, 448, 512 };
enum { SMALL = 128 };

gir_status gir_check_choose_shapes(const gir_graph *a, const gir_graph *b, const gir_check_options *o,
                                   gir_graph **a2, gir_graph **b2, char **chosen, gir_error *err)
{
    *a2 = *b2 = NULL;
    *chosen = NULL;
    size_t n = 0;
    char **names = calloc(a->n_inputs + 1, sizeof *names);
    gir_shape *shapes = calloc(a->n_inputs + 1, sizeof *shapes);
    bool *fixed1 = calloc(a->n_inputs + 1, sizeof *fixed1);
    if (!names || !shapes || !fixed1) {
        free(names);
        free(shapes);
        free(fixed1);
        return gir_nomem(err);
    }
    for (size_t i = 0; i < a->n_inputs; i++) {
        const gir_value *v = a->values[a->inputs[i]];
        const gir_value *vb = gir_graph_find_value(b, v->name);
        if (!needs_shape(v, o) || !vb || vb->kind != GIR_VALUE_INPUT || vb->shape.rank != v->shape.rank)
            continue;
        names[n] = (char *)v->name;
        shapes[n].rank = v->shape.rank;
        shapes[n].dims[0] = 1; /* batch */
        int64_t c = channels_of(a, a->inputs[i]);
        fixed1[n] = c > 0;
        if (c > 0)
            shapes[n].dims[1] = c;
        n++;
    }
    size_t total = SMALL + sizeof larger / sizeof *larger;
    gir_status st = GIR_OK;
    for (size_t t = 0; n && t < total && !*a2 && !st; t++) {
        int64_t s = t < SMALL ? (int64_t)t + 1 : larger[t - SMALL];
        for (size_t k = 0; k < n; k++)
            for (int d = fixed1[k] ? 2 : 1; d < shapes[k].rank; d++)
                shapes[k].dims[d] = s;
        gir_graph *ta = NULL, *tb = NULL;
        st = with_shapes(a, names, shapes, n, &ta, err);
        if (!st && ta)
            st = with_shapes(b, names, shapes, n, &tb, err);
        if (ta && tb) {
            *a2 = ta;
            *b2 = tb;
        } else {
            gir_graph_free(ta);
        }
    }
    if (*a2) {
        gir_buf m = GIR_BUF_INIT;
        for (size_t k = 0; k < n; k++) {
            char text[96];
            gir_buf_printf(&m, "%s%s %s", k ? ", " : "", names[k], gir_shape_str(&shapes[k], text, sizeof text));
        }
        if (m.failed)
            st = gir_nomem(err);
        else
            *chosen = gir_buf_take(&m);
        gir_buf_free(&m);
        if (st) {
            gir_graph_free(*a2);
            gir_graph_free(*b2);
            *a2 = *b2 = NULL;
        }
    }
    free(names);
    free(shapes);
    free(fixed1);
    return st;
}
