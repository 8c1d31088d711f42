/* Structural validation of a graph. */
#include "passes.h"

#include <stdlib.h>
#include <string.h>

static const char *kind_name(gir_value_kind k)
{
    switch (k) {
    case GIR_VALUE_INPUT: return "graph input";
    case GIR_VALUE_WEIGHT: return "weight";
    case GIR_VALUE_CONST: return "constant";
    case GIR_VALUE_INTERMEDIATE: return "intermediate value";
    }
    return "value";
}

/* Fails with code and the message, naming the node or value `where`. */
#define FAIL_AT(where, code, ...) (gir_fail(err, (code), __VA_ARGS__), gir_err_node(err, (where)), (code))

static gir_status check_values(const gir_graph *g, gir_error *err)
{
    for (size_t i = 0; i < g->n_values; i++) {
        const gir_value *v = g->values[i];
        if (!v || !v->name || !*v->name)
            return gir_fail(err, GIR_E_SCHEMA, "value %zu has no name", i);
        if (v->kind > GIR_VALUE_INTERMEDIATE)
            return FAIL_AT(v->name, GIR_E_INTERNAL, "value '%s' has an invalid kind", v->name);
        if ((unsigned)v->dtype >= GIR_DT_COUNT_)
            return FAIL_AT(v->name, GIR_E_DTYPE, "value '%s' has an invalid data type", v->name);
        if (v->shape.rank < -1 || v->shape.rank > GIR_MAX_RANK)
            return FAIL_AT(v->name, GIR_E_SHAPE, "value '%s' has rank %d; ranks are 0 to %d, or -1 for unknown",
                           v->name, v->shape.rank, GIR_MAX_RANK);
        for (int d = 0; d < v->shape.rank; d++) {
            if (v->shape.dims[d] < -1)
                return FAIL_AT(v->name, GIR_E_SHAPE, "value '%s' has dimension %lld on axis %d", v->name,
                               (long long)v->shape.dims[d], d);
        }
    }
    return GIR_OK;
}

/* Names are unique: the graph's name index must lead every name back to
 * its own value or node (a second holder of a name, or a name changed
 * behind the index's back, shows up here).  O(n), no sorting. */
static gir_status check_names(const gir_graph *g, gir_error *err)
{
    for (size_t i = 0; i < g->n_values; i++) {
        int32_t j = gir_graph_value_index(g, g->values[i]->name);
        if (j == (int32_t)i)
            continue;
        if (j >= 0)
            return FAIL_AT(g->values[i]->name, GIR_E_DUPLICATE, "two values are named '%s' (values %d and %zu)",
                           g->values[i]->name, (int)j, i);
        return FAIL_AT(g->values[i]->name, GIR_E_INTERNAL, "value '%s' is missing from the graph's name index",
                       g->values[i]->name);
    }
    for (size_t i = 0; i < g->n_nodes; i++) {
        const gir_node *nd = g->nodes[i];
        if (!nd || !nd->name || !*nd->name)
            return gir_fail(err, GIR_E_SCHEMA, "node %zu has no name", i);
        int32_t j = gir_graph_node_index(g, nd->name);
        if (j == (int32_t)i)
            continue;
        if (j >= 0)
            return FAIL_AT(nd->name, GIR_E_DUPLICATE, "two nodes are named '%s' (nodes %d and %zu)", nd->name,
                           (int)j, i);
        return FAIL_AT(nd->name, GIR_E_INTERNAL, "node '%s' is missing from the graph's name index", nd->name);
    }
    return GIR_OK;
}

static gir_status check_nodes(const gir_graph *g, gir_error *err)
{
    for (size_t i = 0; i < g->n_nodes; i++) {
        const gir_node *n = g->nodes[i];
        if (n->op == GIR_OP_OPAQUE && (!n->opaque_op || !*n->opaque_op))
            return FAIL_AT(n->name, GIR_E_SCHEMA, "opaque node '%s' has no operator name", n->name);
        TRY(gir_err_in_node(gir_op_check_node(g, n, err), err, n->name));
    }
    return GIR_OK;
}

/* Producers: each value has at most one, intermediates exactly one, and the
 * value's own record agrees with the node lists. */
static gir_status check_producers(const gir_graph *g, int32_t *prod, gir_error *err)
{
    for (size_t v = 0; v < g->n_values; v++)
        prod[v] = -1;
    for (size_t i = 0; i < g->n_nodes; i++) {
        const gir_node *n = g->nodes[i];
        for (size_t k = 0; k < n->n_out; k++) {
            int32_t v = n->out[k];
            if (v < 0)
                continue;
            const gir_value *val = g->values[v];
            if (prod[v] >= 0)
                return FAIL_AT(n->name, GIR_E_DUPLICATE, "value '%s' is produced by nodes '%s' and '%s'",
                               val->name, g->nodes[prod[v]]->name, n->name);
            prod[v] = (int32_t)i;
            if (val->kind != GIR_VALUE_INTERMEDIATE)
                return FAIL_AT(n->name, GIR_E_REFERENCE, "value '%s' is a %s but node '%s' produces it", val->name,
                               kind_name(val->kind), n->name);
            if (val->producer != (int32_t)i || val->producer_out != (int32_t)k)
                return FAIL_AT(n->name, GIR_E_REFERENCE, "value '%s' is output %zu of node '%s' but records "
                               "producer %d output %d", val->name, k, n->name, (int)val->producer,
                               (int)val->producer_out);
        }
    }
    for (size_t v = 0; v < g->n_values; v++) {
        const gir_value *val = g->values[v];
        if (val->kind == GIR_VALUE_INTERMEDIATE && prod[v] < 0)
            return FAIL_AT(val->name, GIR_E_REFERENCE, "value '%s' is intermediate but no node produces it",
                           val->name);
        if (prod[v] < 0 && val->producer >= 0)
            return FAIL_AT(val->name, GIR_E_REFERENCE, "value '%s' records producer %d, which does not output it",
                           val->name, (int)val->producer);
    }
    return GIR_OK;
}

/* Graph inputs and outputs exist; inputs are listed once and not produced
 * by a node.  seen has one zeroed byte per value. */
static gir_status check_graph_io(const gir_graph *g, const int32_t *prod, unsigned char *seen, gir_error *err)
{
    for (size_t i = 0; i < g->n_inputs; i++) {
        int32_t v = g->inputs[i];
        if (v < 0 || (size_t)v >= g->n_values)
            return gir_fail(err, GIR_E_REFERENCE, "graph input %zu refers to value %d of %zu", i, (int)v,
                            g->n_values);
        const char *name = g->values[v]->name;
        if (prod[v] >= 0)
            return FAIL_AT(name, GIR_E_REFERENCE, "graph input '%s' is produced by node '%s'", name,
                           g->nodes[prod[v]]->name);
        if (seen[v]++)
            return FAIL_AT(name, GIR_E_DUPLICATE, "value '%s' is listed twice among the graph inputs", name);
    }
    for (size_t i = 0; i < g->n_outputs; i++) {
        int32_t v = g->outputs[i];
        if (v < 0 || (size_t)v >= g->n_values)
            return gir_fail(err, GIR_E_REFERENCE, "graph output %zu refers to value %d of %zu", i, (int)v,
                            g->n_values);
    }
    return GIR_OK;
}

gir_status gir_validate_order(const gir_graph *g, int32_t **order, gir_error *err)
{
    gir_status st;
    *order = NULL;
    if ((st = check_values(g, err)) != GIR_OK || (st = check_names(g, err)) != GIR_OK ||
        (st = check_nodes(g, err)) != GIR_OK)
        return st;
    int32_t *prod = malloc((g->n_values ? g->n_values : 1) * sizeof *prod);
    unsigned char *seen = calloc(g->n_values ? g->n_values : 1, 1);
    st = prod && seen ? check_producers(g, prod, err) : gir_nomem(err);
    if (st == GIR_OK)
        st = check_graph_io(g, prod, seen, err);
    if (st == GIR_OK) /* the indices are checked: order from the producers found */
        st = gir_topo_order_prod(g, prod, order, err);
    free(prod);
    free(seen);
    return st;
}

gir_status gir_validate(const gir_graph *g, gir_error *err)
{
    int32_t *order;
    gir_status st = gir_validate_order(g, &order, err);
    free(order);
    return st;
}
