/* Building and editing graphs (graphir/edit.h), and the shape overrides
 * every reader gets through gir_load (input-shape, batch-size). */
#include "api.h"

#include <stdlib.h>
#include <string.h>

#include "passes/passes.h"

GIR_API gir_status gir_graph_create(const char *name, gir_graph **out, gir_error *err)
{
    *out = NULL;
    gir_graph *g;
    TRY(gir_graph_new(&g, err));
    if (name && !(g->name = gir_arena_strdup(&g->arena, name))) {
        gir_graph_free(g);
        return gir_nomem(err);
    }
    *out = g;
    return GIR_OK;
}

GIR_API gir_status gir_graph_set_name(gir_graph *g, const char *name, gir_error *err)
{
    const char *copy = gir_arena_strdup(&g->arena, name ? name : "");
    if (!copy)
        return gir_nomem(err);
    g->name = copy;
    return GIR_OK;
}

GIR_API gir_status gir_graph_add_input_value(gir_graph *g, const char *name, gir_dtype dtype,
                                             const gir_shape *shape, gir_error *err)
{
    if (shape && (shape->rank < -1 || shape->rank > GIR_MAX_RANK))
        return gir_fail(err, GIR_E_ARGUMENT, "input '%s': rank %d is out of range", name ? name : "",
                        shape->rank);
    int32_t idx;
    TRY(gir_graph_add_value(g, name, GIR_VALUE_INPUT, &idx, err));
    gir_value *v = g->values[idx];
    v->dtype = dtype;
    if (shape)
        v->shape = *shape;
    return gir_graph_add_input(g, idx, err);
}

GIR_API gir_status gir_graph_add_weight(gir_graph *g, const char *name, gir_tensor *t, gir_error *err)
{
    if (!t)
        return gir_fail(err, GIR_E_ARGUMENT, "weight '%s' has no tensor", name ? name : "");
    int32_t idx;
    TRY(gir_graph_add_value(g, name, GIR_VALUE_WEIGHT, &idx, err));
    gir_value_set_data(g->values[idx], t);
    return GIR_OK;
}

GIR_API gir_status gir_graph_add_op(gir_graph *g, const char *op, const char *name, const char *const *inputs,
                                    size_t n_inputs, const char *const *outputs, size_t n_outputs, gir_node **out,
                                    gir_error *err)
{
    if (out)
        *out = NULL;
    gir_op code = op ? gir_op_from_name(op) : GIR_OP_OPAQUE;
    if (code == GIR_OP_OPAQUE)
        return gir_fail(err, GIR_E_UNSUPPORTED_OP, "'%s' is not a canonical operator (see 'graphconv ops')",
                        op ? op : "");
    /* Check everything before the graph changes. */
    for (size_t i = 0; i < n_inputs; i++)
        if (inputs[i] && gir_graph_value_index(g, inputs[i]) < 0) {
            gir_fail(err, GIR_E_ARGUMENT, "input %zu names '%s', which is no value of the graph", i, inputs[i]);
            gir_err_node(err, name);
            return GIR_E_ARGUMENT;
        }
    for (size_t i = 0; i < n_outputs; i++)
        if (!outputs[i] || gir_graph_value_index(g, outputs[i]) >= 0) {
            gir_fail(err, GIR_E_DUPLICATE, "output %zu: '%s' is %s", i, outputs[i] ? outputs[i] : "",
                     outputs[i] ? "taken by another value" : "not a name");
            gir_err_node(err, name);
            return GIR_E_DUPLICATE;
        }
    gir_node *n;
    TRY(gir_graph_add_node(g, name, code, n_inputs, n_outputs, &n, err));
    for (size_t i = 0; i < n_inputs; i++)
        n->in[i] = inputs[i] ? gir_graph_value_index(g, inputs[i]) : -1;
    for (size_t i = 0; i < n_outputs; i++)
        TRY(gir_node_make_output(g, n, i, outputs[i], err));
    if (out)
        *out = n;
    return GIR_OK;
}

GIR_API gir_status gir_graph_mark_output(gir_graph *g, const char *name, gir_error *err)
{
    int32_t idx = gir_graph_value_index(g, name);
    if (idx < 0)
        return gir_fail(err, GIR_E_ARGUMENT, "no value is named '%s'", name ? name : "");
    return gir_graph_add_output(g, idx, err);
}

GIR_API gir_node *gir_graph_find_node_edit(gir_graph *g, const char *name)
{
    int32_t i = gir_graph_node_index(g, name);
    return i >= 0 ? g->nodes[i] : NULL;
}

static gir_status attr_done(gir_status st, gir_error *err)
{
    return st ? gir_nomem(err) : GIR_OK;
}

GIR_API gir_status gir_node_set_int(gir_node *n, const char *attr, int64_t v, gir_error *err)
{
    return attr_done(gir_attrs_set_int(n->graph, &n->attrs, attr, v, err), err);
}

GIR_API gir_status gir_node_set_float(gir_node *n, const char *attr, double v, gir_error *err)
{
    return attr_done(gir_attrs_set_float(n->graph, &n->attrs, attr, v, err), err);
}

GIR_API gir_status gir_node_set_string(gir_node *n, const char *attr, const char *v, gir_error *err)
{
    return attr_done(gir_attrs_set_string(n->graph, &n->attrs, attr, v, err), err);
}

GIR_API gir_status gir_node_set_ints(gir_node *n, const char *attr, const int64_t *v, size_t len, gir_error *err)
{
    return attr_done(gir_attrs_set_ints(n->graph, &n->attrs, attr, v, len, err), err);
}

GIR_API gir_status gir_node_set_floats(gir_node *n, const char *attr, const double *v, size_t len, gir_error *err)
{
    return attr_done(gir_attrs_set_floats(n->graph, &n->attrs, attr, v, len, err), err);
}

GIR_API gir_status gir_graph_rename_value(gir_graph *g, const char *old_name, const char *new_name, gir_error *err)
{
    int32_t i = gir_graph_value_index(g, old_name);
    if (i < 0)
        return gir_fail(err, GIR_E_ARGUMENT, "no value is named '%s'", old_name ? old_name : "");
    return gir_graph_rename(g, false, i, new_name, err);
}

GIR_API gir_status gir_graph_rename_node(gir_graph *g, const char *old_name, const char *new_name, gir_error *err)
{
    int32_t i = gir_graph_node_index(g, old_name);
    if (i < 0)
        return gir_fail(err, GIR_E_ARGUMENT, "no node is named '%s'", old_name ? old_name : "");
    return gir_graph_rename(g, true, i, new_name, err);
}

GIR_API gir_status gir_graph_set_value_shape(gir_graph *g, const char *name, gir_dtype dtype, const gir_shape *shape,
                                             gir_error *err)
{
    int32_t i = gir_graph_value_index(g, name);
    if (i < 0)
        return gir_fail(err, GIR_E_ARGUMENT, "no value is named '%s'", name ? name : "");
    if (shape && (shape->rank < -1 || shape->rank > GIR_MAX_RANK))
        return gir_fail(err, GIR_E_ARGUMENT, "value '%s': rank %d is out of range", name, shape->rank);
    gir_value *v = g->values[i];
    if (v->data && shape && !gir_shape_equal(shape, &v->data->shape))
        return gir_fail(err, GIR_E_SHAPE, "value '%s' holds data of another shape", name);
    if (dtype != GIR_DT_UNKNOWN)
        v->dtype = dtype;
    if (shape) {
        v->shape = *shape;
        memset(v->dim_names, 0, sizeof v->dim_names);
    }
    return GIR_OK;
}

GIR_API gir_status gir_graph_finalize(gir_graph *g, gir_error *err)
{
    return gir_graph_finish(g, err);
}

/* ---- shape overrides ------------------------------------------------------------ */

/* The shapes and dtypes of every value, to restore after a refused change. */
typedef struct shape_snapshot {
    gir_shape *shapes;
    const char **names; /* dim_names, GIR_MAX_RANK per value */
    gir_dtype *dtypes;
    size_t n;
} shape_snapshot;

static gir_status snapshot_take(const gir_graph *g, shape_snapshot *s, gir_error *err)
{
    s->n = g->n_values;
    s->shapes = malloc((s->n ? s->n : 1) * sizeof *s->shapes);
    s->dtypes = malloc((s->n ? s->n : 1) * sizeof *s->dtypes);
    s->names = malloc((s->n ? s->n : 1) * GIR_MAX_RANK * sizeof *s->names);
    if (!s->shapes || !s->dtypes || !s->names)
        return gir_nomem(err);
    for (size_t i = 0; i < s->n; i++) {
        s->shapes[i] = g->values[i]->shape;
        s->dtypes[i] = g->values[i]->dtype;
        memcpy(&s->names[i * GIR_MAX_RANK], g->values[i]->dim_names, sizeof g->values[i]->dim_names);
    }
    return GIR_OK;
}

static void snapshot_restore(gir_graph *g, const shape_snapshot *s)
{
    for (size_t i = 0; i < s->n && i < g->n_values; i++) {
        g->values[i]->shape = s->shapes[i];
        g->values[i]->dtype = s->dtypes[i];
        memcpy(g->values[i]->dim_names, &s->names[i * GIR_MAX_RANK], sizeof g->values[i]->dim_names);
    }
}

static void snapshot_free(shape_snapshot *s)
{
    free(s->shapes);
    free(s->dtypes);
    free(s->names);
}

/* Forgets every shape a node produces and infers them again. */
static gir_status reinfer(gir_graph *g, gir_error *err)
{
    for (size_t i = 0; i < g->n_values; i++) {
        gir_value *v = g->values[i];
        if (v->producer < 0)
            continue;
        v->shape.rank = -1;
        memset(v->dim_names, 0, sizeof v->dim_names);
    }
    return gir_infer_shapes(g, err);
}

static bool fed_input(const gir_value *v)
{
    return v->kind == GIR_VALUE_INPUT && !v->data;
}

GIR_API gir_status gir_graph_set_input_shape(gir_graph *g, const char *name, const gir_shape *s, gir_error *err)
{
    int32_t idx = gir_graph_value_index(g, name);
    size_t k = 0;
    while (idx >= 0 && k < g->n_inputs && g->inputs[k] != idx)
        k++;
    if (idx < 0 || k == g->n_inputs || !fed_input(g->values[idx])) {
        gir_fail(err, GIR_E_ARGUMENT, "the model has no input named '%s'%s", name ? name : "",
                 g->n_inputs ? " (see 'graphconv info' for its inputs)" : "");
        return GIR_E_ARGUMENT;
    }
    if (!s || s->rank < 0 || s->rank > GIR_MAX_RANK)
        return gir_fail(err, GIR_E_ARGUMENT, "input '%s': a shape of rank 0..%d is needed", name, GIR_MAX_RANK);
    gir_value *v = g->values[idx];
    if (v->shape.rank >= 0 && v->shape.rank != s->rank) {
        char a[96], b[96];
        gir_fail(err, GIR_E_SHAPE, "input '%s' is %s in the model; the shape given, %s, has another rank", name,
                 gir_shape_str(&v->shape, a, sizeof a), gir_shape_str(s, b, sizeof b));
        return GIR_E_SHAPE;
    }
    shape_snapshot snap = { 0 };
    gir_status st = snapshot_take(g, &snap, err);
    if (st == GIR_OK) {
        v->shape = *s;
        memset(v->dim_names, 0, sizeof v->dim_names);
        st = reinfer(g, err);
        if (st)
            snapshot_restore(g, &snap);
    }
    snapshot_free(&snap);
    return st;
}

/* After the batch changed from old to n: the first node (in topological
 * order) that takes a value carrying the batch and reshapes it to a first
 * dimension that is not n, or produces a graph output that carried the
 * batch and no longer does. */
static gir_status find_pinned(const gir_graph *g, const shape_snapshot *before, int64_t n, gir_error *err)
{
    int32_t *order;
    TRY(gir_topo_order(g, &order, err));
    bool *carries = calloc(g->n_values ? g->n_values : 1, sizeof *carries);
    if (!carries) {
        free(order);
        return gir_nomem(err);
    }
    for (size_t k = 0; k < g->n_inputs; k++) {
        const gir_value *v = g->values[g->inputs[k]];
        carries[g->inputs[k]] = fed_input(v) && v->shape.rank >= 1 && v->shape.dims[0] == n;
    }
    gir_status st = GIR_OK;
    for (size_t oi = 0; st == GIR_OK && oi < g->n_nodes; oi++) {
        const gir_node *nd = g->nodes[order[oi]];
        bool in_carries = false;
        for (size_t i = 0; i < nd->n_in; i++)
            if (nd->in[i] >= 0 && carries[nd->in[i]])
                in_carries = true;
        if (!in_carries)
            continue;
        for (size_t k = 0; k < nd->n_out; k++) {
            int32_t o = nd->out[k];
            if (o < 0)
                continue;
            const gir_value *v = g->values[o];
            bool keeps = v->shape.rank >= 1 && v->shape.dims[0] == n;
            carries[o] = keeps;
            bool was_output = false;
            for (size_t j = 0; j < g->n_outputs; j++)
                if (g->outputs[j] == o)
                    was_output = true;
            bool had_batch = (size_t)o < before->n && before->shapes[o].rank >= 1 &&
                             before->shapes[o].dims[0] != n && v->shape.rank >= 1;
            if (!keeps && v->shape.rank >= 1 && v->shape.dims[0] >= 0 &&
                ((nd->op == GIR_OP_Reshape && k == 0) || (was_output && had_batch))) {
                char sh[96];
                st = gir_fail(err, GIR_E_SHAPE,
                              "the model's constants pin the batch: %s gives '%s' the shape %s, not a first "
                              "dimension of %lld",
                              gir_node_op(nd), v->name, gir_shape_str(&v->shape, sh, sizeof sh), (long long)n);
                gir_err_node(err, nd->name);
                break;
            }
        }
    }
    free(carries);
    free(order);
    return st;
}

GIR_API gir_status gir_graph_set_batch_size(gir_graph *g, int64_t n, gir_error *err)
{
    if (n < 1)
        return gir_fail(err, GIR_E_ARGUMENT, "a batch size must be positive, not %lld", (long long)n);
    bool change = false;
    for (size_t k = 0; k < g->n_inputs; k++) {
        const gir_value *v = g->values[g->inputs[k]];
        if (fed_input(v) && v->shape.rank >= 1 && v->shape.dims[0] != n)
            change = true;
    }
    if (!change)
        return GIR_OK;
    shape_snapshot snap = { 0 };
    gir_status st = snapshot_take(g, &snap, err);
    if (st == GIR_OK) {
        for (size_t k = 0; k < g->n_inputs; k++) {
            gir_value *v = g->values[g->inputs[k]];
            if (fed_input(v) && v->shape.rank >= 1) {
                v->shape.dims[0] = n;
                v->dim_names[0] = NULL;
            }
        }
        st = reinfer(g, err);
        if (st == GIR_OK)
            st = find_pinned(g, &snap, n, err);
        if (st)
            snapshot_restore(g, &snap);
    }
    snapshot_free(&snap);
    return st;
}

GIR_API gir_status gir_graph_apply_input_shapes(gir_graph *g, const char *spec, gir_error *err)
{
    gir_input_shape *v = NULL;
    size_t n = 0;
    gir_status pst = gir_input_shapes_parse(spec ? spec : "", &g->arena, &v, &n, err);
    if (pst) {
        free(v);
        return pst;
    }
    shape_snapshot snap = { 0 };
    gir_status st = snapshot_take(g, &snap, err);
    for (size_t i = 0; st == GIR_OK && i < n; i++)
        st = gir_graph_set_input_shape(g, v[i].name, &v[i].shape, err);
    if (st)
        snapshot_restore(g, &snap);
    snapshot_free(&snap);
    free(v);
    return st;
}

gir_status gir_apply_shape_options(gir_graph *g, const gir_options *opts, bool reader_took_shapes, gir_error *err)
{
    const char *spec = gir_options_get(opts, "input-shape");
    if (spec && !reader_took_shapes)
        TRY(gir_graph_apply_input_shapes(g, spec, err));
    const char *bs = gir_options_get(opts, "batch-size");
    if (bs) {
        int64_t n;
        if (!gir_parse_i64(bs, &n) || n < 1)
            return gir_fail(err, GIR_E_ARGUMENT, "option batch-size=%s is not a positive integer", bs);
        TRY(gir_graph_set_batch_size(g, n, err));
    }
    return GIR_OK;
}
